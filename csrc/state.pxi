# The rules of Candy Spiders Leopards on the C state (RULES.md is the ruling).
# Included by _core.pyx; every function here is C-level, nogil, and free of Python objects.
from libc.string cimport memset, memcpy

cdef enum:  # error codes
    OK = 0
    ERR_PHASE = 1
    ERR_SEAT = 2
    ERR_DONE_ALREADY = 3
    ERR_BAD_PILES = 4
    ERR_NOT_IN_HAND = 5
    ERR_MUST_FOLLOW = 6
    ERR_BAD_DEAL = 7
    ERR_NOT_IN_PILE = 8

cdef int32_t SPIDER_POINTS[2][7]
SPIDER_POINTS[0][:] = [0, 3, 10, 4, 2, 10, 1]
SPIDER_POINTS[1][:] = [0, 10, 3, 2, 1, 10, 1]
cdef int32_t LEOPARD_POINTS[2][8]
LEOPARD_POINTS[0][:] = [0, 0, 10, 0, 20, 0, 30, 0]
LEOPARD_POINTS[1][:] = [0, 0, 0, 15, 0, 0, 30, 0]
cdef int32_t CANDY_B_POINTS[5]
CANDY_B_POINTS[:] = [3, 10, 6, 0, 0]

DEF GOOD_WEATHER_POINTS = 7
DEF FACEDOWN_POINTS = -2


cdef int config_set_players(Config* c, int n_players) noexcept nogil:
    """Fill the player-count table of RULES.md section 2; returns ERR_SEAT for an unknown count."""
    c.n_players = n_players
    if n_players == 2:
        c.ranks = 6; c.hand_size = 9; c.n_groups = 3; c.n_rounds = 4
        c.group_size[0] = 3; c.group_size[1] = 3; c.group_size[2] = 3
    elif n_players == 3:
        c.ranks = 6; c.hand_size = 6; c.n_groups = 2; c.n_rounds = 6
        c.group_size[0] = 3; c.group_size[1] = 3; c.group_size[2] = 0
    elif n_players == 4:
        c.ranks = 12; c.hand_size = 9; c.n_groups = 3; c.n_rounds = 4
        c.group_size[0] = 3; c.group_size[1] = 3; c.group_size[2] = 3
    elif n_players == 5:
        c.ranks = 12; c.hand_size = 7; c.n_groups = 2; c.n_rounds = 5
        c.group_size[0] = 3; c.group_size[1] = 4; c.group_size[2] = 0
    else:
        return ERR_SEAT
    c.line_size = c.hand_size
    c.group_start[0] = 0
    c.group_start[1] = c.group_size[0]
    c.group_start[2] = c.group_size[0] + c.group_size[1]
    c.rain_in_use = rain_in_use_mask(c.ranks)
    c.n_sky = c.line_size * c.n_rounds
    return OK


cdef void state_init(State* st, const Config* cfg, const uint8_t* sky_order) noexcept nogil:
    """A new game waiting for the first round's deal; sky_order is the whole sky deck, top first."""
    memset(st, 0, sizeof(State))
    st.cfg = cfg[0]
    memcpy(st.sky_order, sky_order, cfg.n_sky)
    st.phase = PHASE_DEAL
    st.first_player = cfg.first_seat
    st.leader = cfg.first_seat
    st.to_move = -1
    st.last_winner = -1
    st.led_colour = -1
    memset(st.trick_card, -1, MAX_PLAYERS)


cdef void _start_round(State* st) noexcept nogil:
    cdef int s
    st.phase = PHASE_ALLOCATE
    st.allocated_mask = 0
    st.declared_mask = 0
    st.weather_done_mask = 0
    st.played = 0
    st.group = 0
    st.trick_in_group = 0
    st.line_pos = 0
    st.leader = st.first_player
    st.n_in_trick = 0
    st.trick_mask = 0
    st.led_colour = -1
    st.to_move = 0
    for s in range(MAX_PLAYERS):
        st.trick_card[s] = -1
        st.round_won[s] = 0
        st.round_elems[s][0] = 0
        st.round_elems[s][1] = 0
        st.round_elems[s][2] = 0
        st.round_elems[s][3] = 0
        st.pile[s][0] = 0
        st.pile[s][1] = 0
        st.pile[s][2] = 0


cdef int state_deal(State* st, const uint64_t* hands, uint64_t set_aside) noexcept nogil:
    """Deal the round: hands[seat] for every seat, and the 5-player set-aside card."""
    cdef int s, n = st.cfg.n_players
    cdef uint64_t seen = set_aside
    if st.phase != PHASE_DEAL:
        return ERR_PHASE
    for s in range(n):
        if popcount(hands[s]) != st.cfg.hand_size or (hands[s] & seen) != 0:
            return ERR_BAD_DEAL
        seen |= hands[s]
    if seen != st.cfg.rain_in_use:
        return ERR_BAD_DEAL
    if popcount(set_aside) != popcount(st.cfg.rain_in_use) - n * st.cfg.hand_size:
        return ERR_BAD_DEAL
    for s in range(n):
        st.hand[s] = hands[s]
    for s in range(n, MAX_PLAYERS):
        st.hand[s] = 0
    st.set_aside = set_aside
    _start_round(st)
    return OK


cdef inline int _cards_of(uint64_t mask, int* out) noexcept nogil:
    cdef int k = 0
    while mask:
        out[k] = lowest_card(mask)
        mask &= mask - 1
        k += 1
    return k


cdef void state_deal_random(State* st, Rng* rng) noexcept nogil:
    """Shuffle the rain cards in use and deal them (must be in PHASE_DEAL)."""
    cdef int cards[N_RAIN]
    cdef int total = _cards_of(st.cfg.rain_in_use, cards)
    cdef int i, j, t, s, k, n = st.cfg.n_players, h = st.cfg.hand_size
    cdef uint64_t hand
    for i in range(total - 1, 0, -1):
        j = rng_below(rng, i + 1)
        t = cards[i]; cards[i] = cards[j]; cards[j] = t
    k = 0
    for s in range(n):
        hand = 0
        for i in range(h):
            hand |= bit(cards[k])
            k += 1
        st.hand[s] = hand
    for s in range(n, MAX_PLAYERS):
        st.hand[s] = 0
    st.set_aside = 0
    while k < total:
        st.set_aside |= bit(cards[k])
        k += 1
    _start_round(st)


cdef inline void _next_to_allocate(State* st) noexcept nogil:
    cdef int s
    for s in range(st.cfg.n_players):
        if not (st.allocated_mask >> s) & 1:
            st.to_move = s
            return
    st.phase = PHASE_WEATHER
    st.to_move = 0


cdef int state_allocate(State* st, int seat, const uint64_t* piles) noexcept nogil:
    """Seat splits its hand into piles (piles[g] for group g)."""
    cdef int g
    cdef uint64_t seen = 0
    if st.phase != PHASE_ALLOCATE:
        return ERR_PHASE
    if seat < 0 or seat >= st.cfg.n_players:
        return ERR_SEAT
    if (st.allocated_mask >> seat) & 1:
        return ERR_DONE_ALREADY
    for g in range(st.cfg.n_groups):
        if popcount(piles[g]) != st.cfg.group_size[g] or (piles[g] & seen) != 0:
            return ERR_BAD_PILES
        seen |= piles[g]
    if seen != st.hand[seat]:
        return ERR_NOT_IN_HAND
    for g in range(st.cfg.n_groups):
        st.pile[seat][g] = piles[g]
    st.allocated_mask |= 1 << seat
    _next_to_allocate(st)
    return OK


cdef void random_allocation(const Config* cfg, uint64_t hand, Rng* rng, uint64_t* piles) noexcept nogil:
    """A uniformly random split of hand into the group piles."""
    cdef int cards[N_RAIN]
    cdef int k = _cards_of(hand, cards)
    cdef int i, j, t, g, pos = 0
    for i in range(k - 1, 0, -1):
        j = rng_below(rng, i + 1)
        t = cards[i]; cards[i] = cards[j]; cards[j] = t
    for g in range(cfg.n_groups):
        piles[g] = 0
        for i in range(cfg.group_size[g]):
            piles[g] |= bit(cards[pos])
            pos += 1


cdef int enumerate_allocations(const Config* cfg, uint64_t hand, uint64_t* out) noexcept nogil:
    """Write every split of hand into group piles (n_groups masks each); return the count.

    out must hold 1680 * 3 masks. Order: the first pile's cards by increasing index mask,
    then the second's; the same hand always gives the same order.
    """
    cdef int cards[N_RAIN]
    cdef int h = _cards_of(hand, cards)
    cdef int count = 0, i
    cdef uint32_t full = (1u << h) - 1
    cdef uint32_t a, b, rest
    cdef uint64_t ma, mb, mr
    for a in range(full + 1):
        if __builtin_popcountll(a) != cfg.group_size[0]:
            continue
        rest = full & ~a
        ma = 0
        for i in range(h):
            if (a >> i) & 1:
                ma |= bit(cards[i])
        if cfg.n_groups == 2:
            out[count * 3] = ma
            out[count * 3 + 1] = hand & ~ma
            out[count * 3 + 2] = 0
            count += 1
            continue
        b = rest
        while True:
            if __builtin_popcountll(b) == cfg.group_size[1]:
                mb = 0
                for i in range(h):
                    if (b >> i) & 1:
                        mb |= bit(cards[i])
                out[count * 3] = ma
                out[count * 3 + 1] = mb
                out[count * 3 + 2] = hand & ~ma & ~mb
                count += 1
            if b == 0:
                break
            b = (b - 1) & rest
    return count


cdef inline void _next_to_declare(State* st) noexcept nogil:
    cdef int s
    for s in range(st.cfg.n_players):
        if not (st.weather_done_mask >> s) & 1:
            st.to_move = s
            return
    st.phase = PHASE_PLAY
    st.to_move = st.leader


cdef int state_declare(State* st, int seat, int good_weather) noexcept nogil:
    """Seat declares good weather (1) or not (0)."""
    if st.phase != PHASE_WEATHER:
        return ERR_PHASE
    if seat < 0 or seat >= st.cfg.n_players:
        return ERR_SEAT
    if (st.weather_done_mask >> seat) & 1:
        return ERR_DONE_ALREADY
    st.weather_done_mask |= 1 << seat
    if good_weather:
        st.declared_mask |= 1 << seat
    _next_to_declare(st)
    return OK


cdef inline uint64_t legal_plays(const State* st) noexcept nogil:
    """Cards the player to move may play now (0 outside the trick phase)."""
    if st.phase != PHASE_PLAY:
        return 0
    cdef uint64_t pile = st.pile[st.to_move][st.group]
    cdef uint64_t follow
    if st.n_in_trick == 0:
        return pile
    follow = pile & colour_mask(st.led_colour)
    return follow if follow else pile


cdef inline int trick_winning_card(uint64_t trick_mask, int led_colour) noexcept nogil:
    """The weather rule: the highest blue if any blue was played, else the highest of the led colour."""
    cdef uint64_t blues = trick_mask & colour_mask(BLUE)
    if blues:
        return highest_card(blues)
    return highest_card(trick_mask & colour_mask(led_colour))


cdef void _end_round(State* st) noexcept nogil:
    cdef int s, k, n = st.cfg.n_players
    cdef uint8_t won, declared, keep
    for s in range(n):
        # Branch-free: whether a seat bet good weather is a coin flip in random playouts.
        won = st.round_won[s]
        declared = (st.declared_mask >> s) & 1
        keep = declared - 1
        st.good_weather[s] += declared & <uint8_t>(won == 0)
        st.facedown_cards[s] += won & ~keep
        st.faceup_cards[s] += won & keep
        for k in range(N_KINDS):
            st.elems[s][k] += st.round_elems[s][k] & keep
    st.round += 1
    st.sky_pos += st.cfg.line_size
    st.first_player = (st.first_player + 1) % n
    st.leader = st.first_player
    st.to_move = -1
    if st.round >= st.cfg.n_rounds:
        st.phase = PHASE_OVER
    else:
        st.phase = PHASE_DEAL


cdef inline void _finish_trick(State* st) noexcept nogil:
    cdef int n = st.cfg.n_players
    cdef int card = trick_winning_card(st.trick_mask, st.led_colour)
    cdef int s, winner = 0
    cdef int sky
    for s in range(n):
        if st.trick_card[s] == card:
            winner = s
        st.trick_card[s] = -1
    sky = st.sky_order[st.sky_pos + st.line_pos]
    st.round_won[winner] += 1
    st.round_elems[winner][st.cfg.sky_kind[sky]] += st.cfg.sky_count[sky]
    st.last_winner = winner
    st.leader = winner
    st.to_move = winner
    st.n_in_trick = 0
    st.trick_mask = 0
    st.led_colour = -1
    st.line_pos += 1
    st.trick_in_group += 1
    if st.trick_in_group >= st.cfg.group_size[st.group]:
        st.trick_in_group = 0
        st.group += 1
        if st.group >= st.cfg.n_groups:
            _end_round(st)


cdef inline void state_play_unchecked(State* st, int card) noexcept nogil:
    """Play a card known to be legal for the player to move."""
    cdef int seat = st.to_move
    st.pile[seat][st.group] &= ~bit(card)
    st.played |= bit(card)
    st.trick_card[seat] = card
    st.trick_mask |= bit(card)
    if st.n_in_trick == 0:
        st.led_colour = card_colour(card)
    st.n_in_trick += 1
    if st.n_in_trick == st.cfg.n_players:
        _finish_trick(st)
    else:
        st.to_move = seat + 1 if seat + 1 < st.cfg.n_players else 0


cdef int state_play(State* st, int card) noexcept nogil:
    """Play a card for the player to move, checking that it is legal."""
    cdef uint64_t legal
    if st.phase != PHASE_PLAY:
        return ERR_PHASE
    if card < 0 or card >= N_RAIN or not (st.pile[st.to_move][st.group] & bit(card)):
        return ERR_NOT_IN_PILE
    legal = legal_plays(st)
    if not (legal & bit(card)):
        return ERR_MUST_FOLLOW
    state_play_unchecked(st, card)
    return OK


cdef void state_scores(const State* st, int32_t* out) noexcept nogil:
    """Per-seat score breakdown: out[seat * N_SCORE_COLS + column] (see ScoreColumn)."""
    cdef int s
    for s in range(st.cfg.n_players):
        seat_points(st, s, out + s * N_SCORE_COLS)


cdef void seat_points(const State* st, int s, int32_t* row) noexcept nogil:
    """One seat's score breakdown (N_SCORE_COLS columns) from the tallies as they stand."""
    cdef int n = st.cfg.n_players
    cdef int o, c, sp, le, t, base, rank
    c = st.elems[s][KIND_CANDY]
    if st.cfg.side[KIND_CANDY] == SIDE_A:
        row[COL_CANDY] = 0
        for o in range(n):
            if st.elems[o][KIND_CANDY] < c:
                row[COL_CANDY] += st.elems[o][KIND_CANDY]
    else:
        rank = 0
        for o in range(n):
            if st.elems[o][KIND_CANDY] > c and not _candy_seen_before(st, o, n):
                rank += 1
        row[COL_CANDY] = CANDY_B_POINTS[rank]
    sp = st.elems[s][KIND_SPIDER]
    row[COL_SPIDER] = SPIDER_POINTS[st.cfg.side[KIND_SPIDER]][sp if sp < 6 else 6]
    le = st.elems[s][KIND_LEOPARD]
    row[COL_LEOPARD] = LEOPARD_POINTS[st.cfg.side[KIND_LEOPARD]][le if le < 7 else 7]
    t = st.elems[s][KIND_STAR]
    base = row[COL_CANDY] + row[COL_SPIDER] + row[COL_LEOPARD]
    row[COL_STAR] = 0
    if st.cfg.side[KIND_STAR] == SIDE_A:
        if t == 2:
            row[COL_STAR] = -5
        elif t >= 3:
            row[COL_STAR] = 2 * base if st.cfg.star_a_mode == STAR_A_TWICE else base
    else:
        if t == 2:
            row[COL_STAR] = -10
    row[COL_WEATHER] = GOOD_WEATHER_POINTS * st.good_weather[s]
    row[COL_FACEDOWN] = FACEDOWN_POINTS * st.facedown_cards[s]
    row[COL_TOTAL] = (row[COL_CANDY] + row[COL_SPIDER] + row[COL_LEOPARD] + row[COL_STAR]
                      + row[COL_WEATHER] + row[COL_FACEDOWN])


cdef inline bint _candy_seen_before(const State* st, int o, int n) noexcept nogil:
    """True when a seat before o has the same candy count (dense ranking counts each count once)."""
    cdef int p
    for p in range(o):
        if st.elems[p][KIND_CANDY] == st.elems[o][KIND_CANDY]:
            return True
    return False


cdef int star_b_outright(const State* st) noexcept nogil:
    """The seat that wins outright by holding 3 face-up shooting stars on side B, or -1."""
    cdef int s
    if st.cfg.side[KIND_STAR] != SIDE_B:
        return -1
    for s in range(st.cfg.n_players):
        if st.elems[s][KIND_STAR] >= 3:
            return s
    return -1


cdef int state_winners(const State* st, const int32_t* scores) noexcept nogil:
    """Bitmask of the winning seats: total, then fewest sky cards, then most good weather."""
    cdef int n = st.cfg.n_players
    cdef int s, mask = 0
    cdef int best_total = -1000000, best_cards = 1000000, best_weather = -1
    cdef int total, cards, weather
    s = star_b_outright(st)
    if s >= 0:
        return 1 << s
    for s in range(n):
        total = scores[s * N_SCORE_COLS + COL_TOTAL]
        cards = st.faceup_cards[s] + st.facedown_cards[s]
        weather = st.good_weather[s]
        if (total > best_total or (total == best_total and (cards < best_cards or
                (cards == best_cards and weather > best_weather)))):
            best_total = total; best_cards = cards; best_weather = weather
            mask = 1 << s
        elif total == best_total and cards == best_cards and weather == best_weather:
            mask |= 1 << s
    return mask


cdef inline uint64_t _trick_key_bit(uint64_t b, uint64_t led_mask) noexcept nogil:
    """The weather rule as one unsigned key per played card (one-bit mask b): blues move to the
    top 12 bits, led-colour cards keep their bit, others are 0; the highest key wins the trick."""
    return ((b & colour_mask(BLUE)) << 52) | (b & led_mask)


cdef inline uint64_t _pick_bit(Rng* rng, uint64_t legal, uint64_t x12) noexcept nogil:
    """A uniformly random card of a non-empty mask, as a one-bit mask, from 12 random bits."""
    return nth_bit(legal, rng_below_bits12(rng, <uint32_t>x12, popcount(legal)))


cdef inline void _follow_random(uint64_t* p, int seat, uint64_t led_mask, uint64_t x12, Rng* rng,
                                uint64_t* best_key, int* winner) noexcept nogil:
    """Seat plays a random legal card to a trick led in led_mask; track the winning key."""
    cdef uint64_t pile = p[seat]
    cdef uint64_t follow = pile & led_mask
    cdef uint64_t b = _pick_bit(rng, follow if follow else pile, x12 & 0xFFF)
    cdef uint64_t key = _trick_key_bit(b, led_mask)
    p[seat] = pile ^ b
    winner[0] = seat if key > best_key[0] else winner[0]
    best_key[0] = key if key > best_key[0] else best_key[0]


cdef inline int _next_seat(int seat, int n) noexcept nogil:
    """seat + 1 round the table, without a branch (which one wraps depends on the leader)."""
    seat += 1
    return seat & -(<int>(seat != n))


cdef inline uint64_t _pick_of_two(uint64_t legal, uint64_t coin) noexcept nogil:
    """A uniformly random card of a mask of one or two cards, as a one-bit mask, from one random
    bit (coin & 1): the low card, or the high one when there is one and the coin says so."""
    cdef uint64_t low = legal & (0 - legal)
    cdef uint64_t high = legal ^ low
    cdef uint64_t take_high = 0 - (coin & <uint64_t>(high != 0))
    return low ^ ((low ^ high) & take_high)


cdef inline void _follow_two(uint64_t* p, int seat, uint64_t led_mask, uint64_t coin,
                             uint64_t* best_key, int* winner) noexcept nogil:
    """_follow_random for piles of at most two cards (one random bit, no multiply or pdep)."""
    cdef uint64_t pile = p[seat]
    cdef uint64_t follow = pile & led_mask
    cdef uint64_t b = _pick_of_two(follow if follow else pile, coin)
    cdef uint64_t key = _trick_key_bit(b, led_mask)
    p[seat] = pile ^ b
    winner[0] = seat if key > best_key[0] else winner[0]
    best_key[0] = key if key > best_key[0] else best_key[0]


cdef inline void _follow_forced(uint64_t* p, int seat, uint64_t led_mask,
                                uint64_t* best_key, int* winner) noexcept nogil:
    """A seat's last card of the group goes to the trick: no choice, no random number."""
    cdef uint64_t key = _trick_key_bit(p[seat], led_mask)
    p[seat] = 0
    winner[0] = seat if key > best_key[0] else winner[0]
    best_key[0] = key if key > best_key[0] else best_key[0]


cdef inline void _credit_trick(State* st, int winner, int pos) noexcept nogil:
    """The trick winner takes the sky card at line position pos."""
    cdef int sky = st.sky_order[st.sky_pos + pos]
    st.round_won[winner] += 1
    st.round_elems[winner][st.cfg.sky_kind[sky]] += st.cfg.sky_count[sky]


cdef inline int _trick_random(State* st, Rng* rng, uint64_t* p, int n, int leader, int pos) noexcept nogil:
    """One trick of uniformly random legal cards from piles of any size; returns the winner.

    One 64-bit draw gives each seat of a trick its own 12 random bits; cards are one-bit
    masks and the winner is tracked branch-free with _trick_key_bit. The seats are unrolled
    by hand; the tests on n always go the same way, so they cost next to nothing."""
    cdef int seat = leader, winner = leader
    cdef uint64_t r = rng_next(rng)
    cdef uint64_t b = _pick_bit(rng, p[seat], r & 0xFFF)
    cdef uint64_t led_mask = colour_mask_of_bit(b)
    cdef uint64_t best_key = _trick_key_bit(b, led_mask)
    p[seat] ^= b
    seat = _next_seat(seat, n)
    _follow_random(p, seat, led_mask, r >> 12, rng, &best_key, &winner)
    if n > 2:
        seat = _next_seat(seat, n)
        _follow_random(p, seat, led_mask, r >> 24, rng, &best_key, &winner)
    if n > 3:
        seat = _next_seat(seat, n)
        _follow_random(p, seat, led_mask, r >> 36, rng, &best_key, &winner)
    if n > 4:
        seat = _next_seat(seat, n)
        _follow_random(p, seat, led_mask, r >> 48, rng, &best_key, &winner)
    _credit_trick(st, winner, pos)
    return winner


cdef inline int _trick_two(State* st, Rng* rng, uint64_t* p, int n, int leader, int pos) noexcept nogil:
    """The group's next-to-last trick: every pile holds two cards, so a legal choice is among
    at most two and one random bit per seat decides it (exactly uniform, as _trick_random)."""
    cdef int seat = leader, winner = leader
    cdef uint64_t r = rng_next(rng)
    cdef uint64_t b = _pick_of_two(p[seat], r)
    cdef uint64_t led_mask = colour_mask_of_bit(b)
    cdef uint64_t best_key = _trick_key_bit(b, led_mask)
    p[seat] ^= b
    seat = _next_seat(seat, n)
    _follow_two(p, seat, led_mask, r >> 1, &best_key, &winner)
    if n > 2:
        seat = _next_seat(seat, n)
        _follow_two(p, seat, led_mask, r >> 2, &best_key, &winner)
    if n > 3:
        seat = _next_seat(seat, n)
        _follow_two(p, seat, led_mask, r >> 3, &best_key, &winner)
    if n > 4:
        seat = _next_seat(seat, n)
        _follow_two(p, seat, led_mask, r >> 4, &best_key, &winner)
    _credit_trick(st, winner, pos)
    return winner


cdef inline int _trick_forced(State* st, uint64_t* p, int n, int leader, int pos) noexcept nogil:
    """The group's last trick: every seat plays its one remaining card."""
    cdef int seat = leader, winner = leader
    cdef uint64_t b = p[seat]
    cdef uint64_t led_mask = colour_mask_of_bit(b)
    cdef uint64_t best_key = _trick_key_bit(b, led_mask)
    p[seat] = 0
    seat = _next_seat(seat, n)
    _follow_forced(p, seat, led_mask, &best_key, &winner)
    if n > 2:
        seat = _next_seat(seat, n)
        _follow_forced(p, seat, led_mask, &best_key, &winner)
    if n > 3:
        seat = _next_seat(seat, n)
        _follow_forced(p, seat, led_mask, &best_key, &winner)
    if n > 4:
        seat = _next_seat(seat, n)
        _follow_forced(p, seat, led_mask, &best_key, &winner)
    _credit_trick(st, winner, pos)
    return winner


cdef inline int _group_tricks(State* st, Rng* rng, uint64_t* p, int n, int leader, int pos,
                              int end) noexcept nogil:
    """Play the tricks pos..end-1 of one group from the piles p[seat]; returns the last winner.

    At a trick boundary every pile of the group holds end - pos cards, so the last two
    tricks take the cheap paths: two cards left is one coin per seat, one card is no choice."""
    while end - pos > 2:
        leader = _trick_random(st, rng, p, n, leader, pos)
        pos += 1
    if end - pos == 2:
        leader = _trick_two(st, rng, p, n, leader, pos)
        pos += 1
    if end - pos == 1:
        leader = _trick_forced(st, p, n, leader, pos)
    return leader


cdef void finish_round_random(State* st, Rng* rng) noexcept nogil:
    """Play the rest of the current round with uniformly random legal cards.

    The playout hot path: after finishing a trick in progress, each group's tricks run on
    local copies of its piles and of the generator (_group_tricks)."""
    cdef int n = st.cfg.n_players
    cdef int n_groups = st.cfg.n_groups
    cdef int seat, group, pos, end, leader
    cdef uint64_t played
    cdef uint64_t p[MAX_PLAYERS]
    cdef Rng lr
    while st.phase == PHASE_PLAY and st.n_in_trick != 0:
        state_play_unchecked(st, rng_pick_card(rng, legal_plays(st)))
    if st.phase != PHASE_PLAY:
        return
    lr = rng[0]
    group = st.group
    pos = st.line_pos
    leader = st.leader
    played = st.played
    while group < n_groups:
        for seat in range(n):
            p[seat] = st.pile[seat][group]
            played |= p[seat]
            st.pile[seat][group] = 0
        end = st.cfg.group_start[group] + st.cfg.group_size[group]
        leader = _group_tricks(st, &lr, p, n, leader, pos, end)
        pos = end
        group += 1
    rng[0] = lr
    st.played = played
    st.last_winner = leader
    st.leader = leader
    st.line_pos = pos
    st.group = group
    st.trick_in_group = 0
    _end_round(st)


ctypedef struct PickBits:
    uint64_t bits       # unused 16-bit slices of the last 64-bit draw
    int32_t slices      # how many are left


cdef inline uint64_t draw_subset(uint64_t left, int remaining, int size, Rng* rng, PickBits* pb) noexcept nogil:
    """A uniformly random size-subset of left (remaining = popcount(left)): each card drawn
    as a position among those not yet taken (exactly uniform, four to a 64-bit draw:
    rng_below_bits16), then all taken at once with nth_bits."""
    cdef uint64_t taken = 0
    cdef int i
    for i in range(size):
        if pb.slices == 0:
            pb.bits = rng_next(rng)
            pb.slices = 4
        taken |= nth_bit(~taken, rng_below_bits16(rng, <uint32_t>(pb.bits & 0xFFFF), remaining - i))
        pb.bits >>= 16
        pb.slices -= 1
    return nth_bits(left, taken)


cdef void deal_and_allocate_random(State* st, Rng* rng) noexcept nogil:
    """Deal the round and split every hand into random piles in one pass.

    Fills seat 0's piles, then seat 1's, ..., each pile a uniformly random subset of the
    cards left (draw_subset): so a uniform deal and, within each hand, a uniform allocation.
    Only a pile's last step (nth_bits) waits for the previous pile, so the draws overlap.
    The generator runs in a local copy: st's stores could alias *rng, so the compiler would
    store and reload its state around every draw."""
    cdef Rng local = rng[0]
    cdef uint64_t left = st.cfg.rain_in_use
    cdef int remaining = popcount(left)
    cdef int n = st.cfg.n_players
    cdef int n_groups = st.cfg.n_groups
    cdef int s, g, size
    cdef uint64_t pile, hand
    cdef PickBits pb
    pb.bits = 0
    pb.slices = 0
    _start_round(st)
    for s in range(n):
        hand = 0
        for g in range(n_groups):
            size = st.cfg.group_size[g]
            pile = draw_subset(left, remaining, size, &local, &pb)
            left ^= pile
            remaining -= size
            st.pile[s][g] = pile
            hand |= pile
        st.hand[s] = hand
    for s in range(n, MAX_PLAYERS):
        st.hand[s] = 0
    st.set_aside = left
    st.allocated_mask = (1 << n) - 1
    st.phase = PHASE_WEATHER
    st.to_move = 0
    rng[0] = local


cdef void _declare_all_random(State* st, Rng* rng) noexcept nogil:
    """Every seat still to declare bets good weather or not: bit seat of one draw, a fair coin
    each, applied without a branch (a coin flip branch is mispredicted half the time)."""
    cdef uint32_t pending = ((1u << st.cfg.n_players) - 1) & ~(<uint32_t>st.weather_done_mask)
    st.declared_mask |= <uint8_t>(<uint32_t>rng_next(rng) & pending)
    st.weather_done_mask |= <uint8_t>pending
    st.phase = PHASE_PLAY
    st.to_move = st.leader


cdef void state_play_random(State* st, Rng* rng) noexcept nogil:
    """Play to the end of the game with uniformly random legal moves (and random deals)."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef int g
    while st.phase != PHASE_OVER:
        if st.phase == PHASE_PLAY:
            finish_round_random(st, rng)
        elif st.phase == PHASE_DEAL:
            deal_and_allocate_random(st, rng)
        elif st.phase == PHASE_ALLOCATE:
            random_allocation(&st.cfg, st.hand[st.to_move], rng, piles)
            state_allocate(st, st.to_move, piles)
        else:
            _declare_all_random(st, rng)
