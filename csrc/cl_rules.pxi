# Candy Lab's rules in C: the port of csl_ai/candylab/core.py, the same moves in the same
# order and the same chance draws (tests/test_candylab_core_c.py replays random games in
# both). Included by cl_core.pyx.

cdef extern from *:
    """
    static inline unsigned long long cl_mulhi(unsigned long long a, unsigned long long b) {
        return (unsigned long long)(((unsigned __int128)a * b) >> 64);
    }
    """
    uint64_t cl_mulhi(uint64_t a, uint64_t b) nogil


cdef inline uint64_t cl_splitmix(uint64_t* x) noexcept nogil:
    """One splitmix64 step of the state's chance stream (state.splitmix)."""
    x[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline int cl_below(ClState* s, int n) noexcept nogil:
    """A uniform chance draw in 0..n-1 (State.below)."""
    return <int>cl_mulhi(cl_splitmix(&s.rng), <uint64_t>n)


cdef inline int cl_lowest(uint64_t x) noexcept nogil:
    return lowest_card(x)


cdef inline int cl_popcount(uint64_t x) noexcept nogil:
    return popcount(x)


# --- questions -----------------------------------------------------------------------------
cdef inline int cl_bar_points(const ClState* s, int seat) noexcept nogil:
    cdef uint64_t m = s.bars[seat]
    cdef int total = 0
    while m:
        total += s.cat.bar_value[cl_lowest(m)]
        m &= m - 1
    return total


cdef inline int cl_order_points(const ClState* s, int seat) noexcept nogil:
    cdef int total = 0, i
    for i in range(s.stack_len[seat]):
        total += s.cat.order_points[s.stacks[seat][i]]
    return total


cdef inline void cl_scores(const ClState* s, int* out) noexcept nogil:
    """Each seat's points now: bars + orders + Golden Sugar."""
    cdef int p
    for p in range(s.players):
        out[p] = cl_bar_points(s, p) + cl_order_points(s, p) + (CL_GOLDEN_SUGAR if s.golden == p else 0)


cdef void cl_returns(const ClState* s, double* out) noexcept nogil:
    """Each seat's share of the win: most points, ties by most bar points, then shared."""
    cdef int totals[CL_MAX_SEATS]
    cdef int bar_pts[CL_MAX_SEATS]
    cdef int p, best_t = -1, best_b = -1, count = 0
    for p in range(s.players):
        bar_pts[p] = cl_bar_points(s, p)
        totals[p] = bar_pts[p] + cl_order_points(s, p) + (CL_GOLDEN_SUGAR if s.golden == p else 0)
        if totals[p] > best_t or (totals[p] == best_t and bar_pts[p] > best_b):
            best_t = totals[p]
            best_b = bar_pts[p]
    for p in range(s.players):
        if totals[p] == best_t and bar_pts[p] == best_b:
            count += 1
    for p in range(s.players):
        out[p] = 1.0 / count if totals[p] == best_t and bar_pts[p] == best_b else 0.0


# --- move generation -------------------------------------------------------------------------
cdef inline bint cl_matches(const int8_t* pattern, int k, const int8_t* colours, int start) noexcept nogil:
    """Whether the run at start reads as pattern in either direction (CL-7, CL-8)."""
    cdef int i, want, got
    cdef bint forward = True
    for i in range(k):
        want = pattern[i]
        got = colours[start + i]
        if want != got and want != CL_WILD and got != CL_WILD:
            forward = False
            break
    if forward:
        return True
    for i in range(k):
        want = pattern[k - 1 - i]
        got = colours[start + i]
        if want != got and want != CL_WILD and got != CL_WILD:
            return False
    return True


cdef inline void cl_colours(const ClState* s, int8_t* colours) noexcept nogil:
    cdef int i
    for i in range(s.belt_len):
        colours[i] = s.cat.bar_colour[s.belt[i]]


cdef void cl_fill_codes(ClCat* cat) noexcept nogil:
    """order_codes from the patterns (cl_matches on every colour code of the order's size)."""
    cdef int order, k, code, i
    cdef int8_t colours[3]
    for order in range(CL_ORDERS):
        k = cat.order_len[order]
        cat.order_codes[order] = 0
        for code in range(1 << (2 * k)):
            for i in range(k):
                colours[i] = (code >> (2 * i)) & 3
            if cl_matches(cat.order_pattern[order], k, colours, 0):
                cat.order_codes[order] |= (<uint64_t>1) << code


cdef inline void cl_run_codes(const int8_t* colours, int length, int8_t* codes) noexcept nogil:
    """The colour code of the run of 1, 2 and 3 bars at every start of a belt: codes[start],
    codes[32 + start], codes[64 + start] (a start only where the run fits)."""
    cdef int i
    for i in range(length):
        codes[i] = colours[i]
    for i in range(length - 1):
        codes[32 + i] = colours[i] | colours[i + 1] << 2
    for i in range(length - 2):
        codes[64 + i] = colours[i] | colours[i + 1] << 2 | colours[i + 2] << 4


cdef inline bint cl_codes_fit(uint64_t mask, int k, const int8_t* codes, int length) noexcept nogil:
    """Whether a run of k bars reads as one of the codes in mask somewhere on the belt."""
    cdef const int8_t* row = codes + 32 * (k - 1)
    cdef int start
    for start in range(length - k + 1):
        if mask >> row[start] & 1:
            return True
    return False


cdef inline bint cl_order_fits(const ClCat* cat, int order, const int8_t* codes, int length) noexcept nogil:
    """Whether order's combination reads somewhere on a belt of these run codes."""
    return cl_codes_fit(cat.order_codes[order], cat.order_len[order], codes, length)


cdef int cl_play_moves(const ClState* s, int seat, const int8_t* codes, int* out, int n) noexcept nogil:
    """Append every action A open to seat: each kind of card in hand, each matching run."""
    cdef const ClCat* cat = s.cat
    cdef uint64_t hand = s.hands[seat], seen = 0, t, mask
    cdef const int8_t* row
    cdef int c, k, start
    while hand:
        c = cl_lowest(hand)
        hand &= hand - 1
        t = (<uint64_t>1) << cat.order_type[c]
        if seen & t:
            continue
        seen |= t
        k = cat.order_len[c]
        mask = cat.order_codes[c]
        row = codes + 32 * (k - 1)
        for start in range(s.belt_len - k + 1):
            if mask >> row[start] & 1:
                out[n] = MV_PLAY | c << 4 | start << 12
                n += 1
    return n


cdef int cl_give_back_moves(const ClState* s, int seat, int* out, int n) noexcept nogil:
    cdef uint64_t m = s.bars[seat]
    cdef uint32_t seen = 0, t
    cdef int b
    while m:
        b = cl_lowest(m)
        m &= m - 1
        t = (<uint32_t>1) << s.cat.bar_type[b]
        if seen & t:
            continue
        seen |= t
        out[n] = MV_GIVE_BACK | b << 4 | MV_LEFT << 12
        out[n + 1] = MV_GIVE_BACK | b << 4 | MV_RIGHT << 12
        n += 2
    return n


cdef int cl_sources(const ClState* s, int* out) noexcept nogil:
    """Draw sources with a card: face-up slots (one per kind of card) and FACE_DOWN."""
    cdef uint64_t seen = 0, t
    cdef int slot, c, n = 0
    for slot in range(CL_FACE_UP):
        c = s.face_up[slot]
        if c >= 0:
            t = (<uint64_t>1) << s.cat.order_type[c]
            if not seen & t:
                seen |= t
                out[n] = slot
                n += 1
    if s.pile_len:
        out[n] = MV_FACE_DOWN
        n += 1
    return n


cdef inline bint cl_has_source(const ClState* s) noexcept nogil:
    return s.pile_len > 0 or s.face_up[0] >= 0 or s.face_up[1] >= 0 or s.face_up[2] >= 0


cdef inline bint cl_swap_changes(const ClState* s, int seat, int target) noexcept nogil:
    """Whether a swap with target moves any card (CL-18)."""
    cdef uint64_t mine = s.hands[seat], theirs = s.hands[target]
    if target == s.players or mine:
        return (mine | theirs) != 0
    return cl_popcount(theirs) >= 2


cdef int cl_effect_moves(const ClState* s, int* out, int n) noexcept nogil:
    """One EFFECT move per way of carrying out a pending effect; NONE when it cannot be."""
    cdef const ClCat* cat = s.cat
    cdef int p = s.current, players = s.players
    cdef uint64_t pending = s.pending, key, seen_keys = 0, m
    cdef uint32_t seen
    cdef int b, e, before, head, t, x, i, want, targets, n_src
    cdef int src[4]
    while pending:
        b = cl_lowest(pending)
        pending &= pending - 1
        e = cat.bar_effect[b]
        if e == EFF_RETURN_BAR:
            key = (<uint64_t>1) << (e * 4 + cat.bar_colour[b])
        else:
            key = (<uint64_t>1) << (e * 4)
        if seen_keys & key:
            continue
        seen_keys |= key
        before = n
        head = MV_EFFECT | b << 4
        if e == EFF_DRAW:
            n_src = cl_sources(s, src)
            for i in range(n_src):
                out[n] = head | src[i] << 12
                n += 1
        elif e == EFF_DISCARD_HAND:
            for t in range(players):
                if t != p and s.hands[t]:
                    out[n] = head | t << 12
                    n += 1
        elif e == EFF_RETURN_BAR:
            want = cat.bar_colour[b]
            for t in range(players):
                if t == p:
                    continue
                seen = 0
                m = s.bars[t]
                while m:
                    x = cl_lowest(m)
                    m &= m - 1
                    if cat.bar_colour[x] != want or seen & ((<uint32_t>1) << cat.bar_type[x]):
                        continue
                    seen |= (<uint32_t>1) << cat.bar_type[x]
                    out[n] = head | x << 12 | MV_LEFT << 20
                    out[n + 1] = head | x << 12 | MV_RIGHT << 20
                    n += 2
        elif e == EFF_DISCARD_PLAYED:
            for t in range(players):
                if t != p and s.stack_len[t]:
                    out[n] = head | t << 12
                    n += 1
        elif e == EFF_SWAP_HANDS:
            targets = players + 1 if players == 2 else players
            for t in range(targets):
                if t != p and cl_swap_changes(s, p, t):
                    out[n] = head | t << 12
                    n += 1
        if n == before:
            out[n] = head | MV_NONE << 12
            n += 1
    return n


cdef int cl_legal_moves(const ClState* s, int* out) noexcept nogil:
    """Every legal move of the current player, equivalent ones once (CL-32), in the order
    of core.legal_moves; 0 when the game is over."""
    cdef int n = 0, p = s.current, n_src, i
    cdef int src[4]
    cdef int8_t colours[CL_BARS]
    cdef int8_t codes[96]
    cdef int phase = s.phase
    if phase == PH_MAIN:
        cl_colours(s, colours)
        cl_run_codes(colours, s.belt_len, codes)
        n = cl_play_moves(s, p, codes, out, 0)
        if s.bars[p]:
            n = cl_give_back_moves(s, p, out, n)
        if n == 0:
            n_src = cl_sources(s, src)
            for i in range(n_src):
                out[i] = MV_DRAW | src[i] << 4
            n = n_src
    elif phase == PH_EFFECTS:
        n = cl_effect_moves(s, out, 0)
    elif phase == PH_RETURNING:
        n = cl_give_back_moves(s, p, out, 0)
        out[n] = MV_STOP
        n += 1
    elif phase == PH_DRAWING:
        n_src = cl_sources(s, src)
        for i in range(n_src):
            out[i] = MV_DRAW | src[i] << 4
        n = n_src
    return n


# --- applying a move ------------------------------------------------------------------------
cdef inline void cl_finish(ClState* s, int why) noexcept nogil:
    s.phase = PH_OVER
    s.end = why
    s.pending = 0
    s.draws_left = 0


cdef inline void cl_end_turn(ClState* s) noexcept nogil:
    s.pending = 0
    s.returned = 0
    s.draws_left = 0
    s.current = (s.current + 1) % s.players
    s.phase = PH_MAIN
    s.turn += 1


cdef inline int cl_draw(ClState* s, int seat, int source) noexcept nogil:
    """Seat draws from source; the card drawn face down, or the card turned face up to
    refill the slot. The last face-down card leaving the pile ends the game (CL-25)."""
    cdef int c, refill
    if source == MV_FACE_DOWN:
        s.pile_len -= 1
        c = s.pile[s.pile_len]
        s.hands[seat] |= (<uint64_t>1) << c
        if s.pile_len == 0:
            cl_finish(s, END_LAST_CARD)
        return c
    c = s.face_up[source]
    s.hands[seat] |= (<uint64_t>1) << c
    s.pile_len -= 1
    refill = s.pile[s.pile_len]
    s.face_up[source] = refill
    if s.pile_len == 0:
        cl_finish(s, END_LAST_CARD)
    return refill


cdef inline int cl_random_card(ClState* s, uint64_t hand) noexcept nogil:
    cdef int k = cl_below(s, cl_popcount(hand))
    while k > 0:
        hand &= hand - 1
        k -= 1
    return cl_lowest(hand)


cdef inline void cl_start_draws(ClState* s) noexcept nogil:
    if s.draws_left > 0 and cl_has_source(s):
        s.phase = PH_DRAWING
    else:
        cl_end_turn(s)


cdef inline void cl_belt_insert(ClState* s, int bar, int end) noexcept nogil:
    cdef int i
    if end == MV_LEFT:
        i = s.belt_len
        while i > 0:
            s.belt[i] = s.belt[i - 1]
            i -= 1
        s.belt[0] = bar
    else:
        s.belt[s.belt_len] = bar
    s.belt_len += 1


cdef inline int cl_owner(const ClState* s, int bar) noexcept nogil:
    cdef int t
    for t in range(s.players):
        if s.bars[t] >> bar & 1:
            return t
    return -1


cdef int cl_apply_effect(ClState* s, int p, int bar, int target, int end) noexcept nogil:
    cdef int e = s.cat.bar_effect[bar], c, owner, keep
    cdef uint64_t mine, theirs
    if e == EFF_DRAW:
        return cl_draw(s, p, target)
    if e == EFF_DISCARD_HAND:
        c = cl_random_card(s, s.hands[target])
        s.hands[target] &= ~((<uint64_t>1) << c)
        s.box |= (<uint64_t>1) << c
        return c
    if e == EFF_RETURN_BAR:
        owner = cl_owner(s, target)
        s.bars[owner] &= ~((<uint32_t>1) << target)
        cl_belt_insert(s, target, end)
        return -1
    if e == EFF_DISCARD_PLAYED:
        s.stack_len[target] -= 1
        c = s.stacks[target][s.stack_len[target]]
        s.box |= (<uint64_t>1) << c
        s.box_public |= (<uint64_t>1) << c
        return c
    if e == EFF_SWAP_HANDS:
        mine = s.hands[p]
        theirs = s.hands[target]
        if mine or target == s.players:
            s.hands[p] = theirs
            s.hands[target] = mine
            return -1
        keep = cl_random_card(s, theirs)
        s.hands[p] = theirs & ~((<uint64_t>1) << keep)
        s.hands[target] = (<uint64_t>1) << keep
        return keep
    return -1


cdef int cl_apply(ClState* s, int move) noexcept nogil:
    """Play a legal move for the current player in place (core.apply); the card the move
    showed to someone, else -1."""
    cdef const ClCat* cat = s.cat
    cdef int p = s.current
    cdef int k = move & 15, a = (move >> 4) & 255, b = (move >> 12) & 255
    cdef int outcome = -1, size, i, bar
    cdef uint32_t pending
    if k == MV_PLAY:
        size = cat.order_len[a]
        s.hands[p] &= ~((<uint64_t>1) << a)
        s.stacks[p][s.stack_len[p]] = a
        s.stack_len[p] += 1
        pending = 0
        for i in range(b, b + size):
            bar = s.belt[i]
            s.bars[p] |= (<uint32_t>1) << bar
            if cat.bar_effect[bar]:
                pending |= (<uint32_t>1) << bar
        for i in range(b, s.belt_len - size):
            s.belt[i] = s.belt[i + size]
        s.belt_len -= size
        if s.belt_len == 0:
            s.golden = p
            cl_finish(s, END_LAST_BAR)
        elif pending:
            s.phase = PH_EFFECTS
            s.pending = pending
        else:
            cl_end_turn(s)
    elif k == MV_GIVE_BACK:
        s.bars[p] &= ~((<uint32_t>1) << a)
        cl_belt_insert(s, a, b)
        s.returned += 1
        s.draws_left += cat.bar_value[a]
        if s.returned >= CL_MAX_RETURNED or not s.bars[p]:
            cl_start_draws(s)
        else:
            s.phase = PH_RETURNING
    elif k == MV_STOP:
        cl_start_draws(s)
    elif k == MV_DRAW:
        outcome = cl_draw(s, p, a)
        if s.phase == PH_MAIN:
            cl_end_turn(s)
        elif s.phase == PH_DRAWING:
            s.draws_left -= 1
            if s.draws_left == 0 or not cl_has_source(s):
                cl_end_turn(s)
    elif k == MV_EFFECT:
        s.pending &= ~((<uint32_t>1) << a)
        if b != MV_NONE:
            outcome = cl_apply_effect(s, p, a, b, (move >> 20) & 1)
        if s.phase == PH_EFFECTS and not s.pending:
            cl_end_turn(s)
    return outcome
