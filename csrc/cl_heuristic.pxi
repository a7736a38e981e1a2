# Candy Lab's heuristic player in C: the port of HeuristicAgent (csl_ai/candylab/agents.py),
# the same worths in the same float arithmetic and the same first-best move, read from a
# full state for its current seat. The search's playout policy and prior. Included by
# cl_core.pyx.

cdef enum:
    EFFECT_RANK_NONE = -1

cdef double CARD_IN_HAND = 1.2
cdef double PLAYABLE_NOW = 1.5
cdef double FACE_DOWN_WORTH = 1.6
cdef double SIZE_BONUS = 0.3
cdef double EFFECT_WORTH_DRAW = 1.2
cdef double EFFECT_WORTH_DISCARD_HAND = 0.5


cdef inline int cl_effect_rank(int e) noexcept nogil:
    """Swap first, then discard a played card, return a bar, discard from a hand, draw last
    (agents.EFFECT_ORDER, highest first)."""
    if e == EFF_SWAP_HANDS:
        return 5
    if e == EFF_DISCARD_PLAYED:
        return 4
    if e == EFF_RETURN_BAR:
        return 3
    if e == EFF_DISCARD_HAND:
        return 2
    return 1


cdef double cl_effect_worth(const ClState* s, int bar) noexcept nogil:
    cdef const ClCat* cat = s.cat
    cdef int e = cat.bar_effect[bar], seat = s.current, p, best, x, size, mine
    cdef uint64_t m
    cdef bint any_cards
    if e == EFF_RETURN_BAR:
        best = 0
        for p in range(s.players):
            if p == seat:
                continue
            m = s.bars[p]
            while m:
                x = cl_lowest(m)
                m &= m - 1
                if cat.bar_colour[x] == cat.bar_colour[bar] and cat.bar_value[x] > best:
                    best = cat.bar_value[x]
        return 0.8 * best
    if e == EFF_DISCARD_PLAYED:
        best = 0
        for p in range(s.players):
            if p != seat and s.stack_len[p]:
                x = cat.order_points[s.stacks[p][s.stack_len[p] - 1]]
                if x > best:
                    best = x
        return 0.8 * best
    if e == EFF_SWAP_HANDS:
        mine = cl_popcount(s.hands[seat]) - 1
        best = -1
        for p in range(s.players):
            if p != seat:
                size = cl_popcount(s.hands[p])
                if size > best:
                    best = size
        if s.players == 2:
            size = cl_popcount(s.hands[2])
            if size > best:
                best = size
        return 0.5 * CARD_IN_HAND * (best - mine)
    if e == EFF_DISCARD_HAND:
        any_cards = False
        for p in range(s.players):
            if p != seat and s.hands[p]:
                any_cards = True
        if not any_cards:
            return 0.0
        return EFFECT_WORTH_DISCARD_HAND
    if e == EFF_DRAW:
        return EFFECT_WORTH_DRAW
    return 0.0


cdef double cl_play_worth(const ClState* s, int move, const int* scores) noexcept nogil:
    """Points the play brings now, with a price on each effect (play_worth)."""
    cdef const ClCat* cat = s.cat
    cdef int order = (move >> 4) & 255, start = (move >> 12) & 255
    cdef int size = cat.order_len[order], i, total, p, best_other
    cdef double worth, mine
    total = cat.order_points[order]
    for i in range(start, start + size):
        total += cat.bar_value[s.belt[i]]
    worth = total
    worth += SIZE_BONUS * (size - 1)
    if size == s.belt_len:
        mine = scores[s.current] + worth - SIZE_BONUS * (size - 1) + CL_GOLDEN_SUGAR
        best_other = -1000000
        for p in range(s.players):
            if p != s.current and scores[p] > best_other:
                best_other = scores[p]
        return worth + CL_GOLDEN_SUGAR + (100.0 if mine > best_other else -100.0)
    for i in range(start, start + size):
        worth += cl_effect_worth(s, s.belt[i])
    return worth


cdef inline void cl_belt_codes(const ClState* s, int8_t* codes) noexcept nogil:
    cdef int8_t colours[CL_BARS]
    cl_colours(s, colours)
    cl_run_codes(colours, s.belt_len, codes)


cdef double cl_source_worth(const ClState* s, int source, const int8_t* codes) noexcept nogil:
    """A draw source's worth: the face-down card's, or the face-up card's points and
    whether it can be played at once (codes: the belt's, cl_belt_codes)."""
    cdef int card
    cdef double worth
    if source == MV_FACE_DOWN:
        return FACE_DOWN_WORTH
    card = s.face_up[source]
    worth = s.cat.order_points[card]
    if cl_order_fits(s.cat, card, codes, s.belt_len):
        worth += PLAYABLE_NOW
    return worth


cdef double cl_give_back_worth(const ClState* s, int move) noexcept nogil:
    """Cards brought less points lost; a bar without effect feeds the others least; an end
    where it completes a run for a card in hand is better (_give_back_worth)."""
    cdef const ClCat* cat = s.cat
    cdef int bar = (move >> 4) & 255, end = (move >> 12) & 255, i, length
    cdef double worth = cat.bar_value[bar] * (CARD_IN_HAND - 1.0) - 0.4 * (cat.bar_effect[bar] != EFF_NONE)
    cdef int8_t colours[CL_BARS + 1]
    cdef int8_t codes[96]
    cdef uint64_t hand = s.hands[s.current]
    cdef uint64_t wants[3]
    length = s.belt_len + 1
    if end == MV_LEFT:
        colours[0] = cat.bar_colour[bar]
        for i in range(s.belt_len):
            colours[i + 1] = cat.bar_colour[s.belt[i]]
    else:
        for i in range(s.belt_len):
            colours[i] = cat.bar_colour[s.belt[i]]
        colours[s.belt_len] = cat.bar_colour[bar]
    wants[0] = wants[1] = wants[2] = 0
    while hand:
        i = cl_lowest(hand)
        wants[cat.order_len[i] - 1] |= cat.order_codes[i]
        hand &= hand - 1
    cl_run_codes(colours, length, codes)
    for i in range(3):
        if wants[i] and cl_codes_fit(wants[i], i + 1, codes, length):
            worth += 1.0
            break
    return worth


cdef double cl_target_worth(const ClState* s, int e, int move, const int* scores,
                            const int8_t* codes) noexcept nogil:
    cdef int target = (move >> 12) & 255, owner
    cdef double end_bonus
    if e == EFF_DRAW:
        return cl_source_worth(s, target, codes)
    if e == EFF_RETURN_BAR:
        owner = cl_owner(s, target)
        end_bonus = 0.01 if ((move >> 20) & 1) == 0 else 0.0
        return s.cat.bar_value[target] + 0.1 * scores[owner] + end_bonus
    if e == EFF_DISCARD_PLAYED:
        return s.cat.order_points[s.stacks[target][s.stack_len[target] - 1]] + 0.1 * scores[target]
    if e == EFF_SWAP_HANDS:
        if target == s.players:
            return cl_popcount(s.hands[s.players])
        return cl_popcount(s.hands[target])
    return scores[target] + 0.1 * cl_popcount(s.hands[target])


cdef int cl_best_draw(const ClState* s, const int* moves, int n) noexcept nogil:
    cdef int i, best = -1
    cdef double w, best_w = 0.0
    cdef int8_t codes[96]
    cl_belt_codes(s, codes)
    for i in range(n):
        if moves[i] & 15 != MV_DRAW:
            continue
        w = cl_source_worth(s, (moves[i] >> 4) & 255, codes)
        if best < 0 or w > best_w:
            best, best_w = moves[i], w
    return best


cdef int cl_heuristic_move(const ClState* s, const int* moves, int n) noexcept nogil:
    """The heuristic agent's move among the legal ones of the current seat."""
    cdef int i, best = -1, rank, best_rank = 0, e, m
    cdef double w, best_w = 0.0
    cdef int scores[CL_MAX_SEATS]
    cdef int8_t codes[96]
    cdef bint have_scores = False
    if n == 1:
        return moves[0]
    if s.phase == PH_EFFECTS:
        cl_scores(s, scores)
        cl_belt_codes(s, codes)
        for i in range(n):
            m = moves[i]
            if (m >> 12) & 255 == MV_NONE:
                rank, w = EFFECT_RANK_NONE, 0.0
            else:
                e = s.cat.bar_effect[(m >> 4) & 255]
                rank, w = cl_effect_rank(e), cl_target_worth(s, e, m, scores, codes)
            if best < 0 or rank > best_rank or (rank == best_rank and w > best_w):
                best, best_rank, best_w = m, rank, w
        return best
    if s.phase == PH_RETURNING:
        if not s.hands[s.current] and s.draws_left < 2:
            for i in range(n):
                m = moves[i]
                if m & 15 != MV_GIVE_BACK:
                    continue
                w = cl_give_back_worth(s, m)
                if best < 0 or w > best_w:
                    best, best_w = m, w
            if best >= 0:
                return best
        return MV_STOP
    if s.phase == PH_DRAWING:
        return cl_best_draw(s, moves, n)
    for i in range(n):
        m = moves[i]
        if m & 15 != MV_PLAY:
            continue
        if not have_scores:
            cl_scores(s, scores)
            have_scores = True
        w = cl_play_worth(s, m, scores)
        if best < 0 or w > best_w:
            best, best_w = m, w
    if best >= 0:
        return best
    for i in range(n):
        m = moves[i]
        if m & 15 != MV_GIVE_BACK:
            continue
        w = cl_give_back_worth(s, m)
        if best < 0 or w > best_w:
            best, best_w = m, w
    if best >= 0:
        return best
    return cl_best_draw(s, moves, n)
