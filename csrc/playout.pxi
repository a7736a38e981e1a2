# The playouts: the strength order, the no-peek playout rules (which read only the
# acting seat's own cards and public facts), the allocation model's split features, and
# the playout to the end of the game (or to the learned value's horizon).

# --- strength order ------------------------------------------------------------------------

cdef inline uint64_t to_strength(uint64_t m) noexcept nogil:
    return (((m & 0xFFF) << 24) | csl_pdep((m >> 12) & 0xFFF, CSL_S_RED)
            | csl_pdep((m >> 24) & 0xFFF, CSL_S_GREEN))


cdef inline uint64_t from_strength(uint64_t s) noexcept nogil:
    return ((s >> 24) & 0xFFF) | (csl_pext(s, CSL_S_RED) << 12) | (csl_pext(s, CSL_S_GREEN) << 24)


cdef inline int card_of_pos(int p) noexcept nogil:
    if p >= 24:
        return p - 24
    return ((p & 1) + 1) * 12 + (p >> 1)


cdef inline int pos_of_card(int c) noexcept nogil:
    cdef int colour = card_colour(c), r = c % 12
    if colour == BLUE:
        return 24 + r
    return 2 * r + (colour - 1)


cdef inline uint64_t colour_mask_s(int colour) noexcept nogil:
    if colour == BLUE:
        return CSL_S_BLUE
    return CSL_S_RED if colour == RED else CSL_S_GREEN


cdef inline uint64_t pos_colour_mask(int p) noexcept nogil:
    if p >= 24:
        return CSL_S_BLUE
    return CSL_S_GREEN if p & 1 else CSL_S_RED


cdef inline uint64_t above(int p) noexcept nogil:
    return ~((bit(p) << 1) - 1)


cdef inline void trace_put(Trace* tr, uint64_t v) noexcept nogil:
    if tr.len < tr.cap:
        tr.buf[tr.len] = v
    tr.len += 1


# --- the playout rules (read only the acting seat's own cards and public facts) ---------

cdef inline uint64_t chance_threshold(double p) noexcept nogil:
    """The threshold t with P(rng_next < t) = p (all ones from p >= 1)."""
    if p >= 1.0:
        return CSL_ALL_ONES
    if p <= 0.0:
        return 0
    return <uint64_t>(p * 18446744073709551616.0)


cdef void policy_set_randomness(Policy* pp, int seat, double p) noexcept nogil:
    """Model seat as a uniformly random player with chance p (else the rules with their
    epsilon): each of its moves is random with chance p + (1 - p) epsilon, and its weather
    bet a coin toss with chance p."""
    if not pp.rules:
        return
    pp.eps_threshold[seat] = chance_threshold(p + (1.0 - p) * pp.epsilon)
    pp.coin_threshold[seat] = chance_threshold(p)


cdef void policy_init(Policy* pp, const Config* cfg, int rules, double epsilon,
                      double weather_threshold, double weather_blue, double weather_power,
                      double candy_value, double star_three_value, double potential_decay,
                      double void_bonus) noexcept nogil:
    """Fill the rule tables. sky_value[kind][have][count] is the gain, by a look-ahead of two
    elements (pot(h) = max(T[h], d T[h+1], d^2 T[h+2])), of taking count more elements of
    kind when holding have; T comes from the scoring rules themselves (state_scores)."""
    cdef State probe
    cdef int32_t out[MAX_PLAYERS * N_SCORE_COLS]
    cdef double table[SCORE_TABLE]
    cdef double pot[SCORE_TABLE]
    cdef int kind, h, cnt, c, col, top
    cdef double r, best
    pp.rules = rules
    pp.epsilon = epsilon
    pp.learned = 0
    pp.value_horizon = 0
    for c in range(N_CARD_FEATURES):
        pp.card_w[c] = 0.0
    for c in range(MAX_PLAYERS):
        pp.eps_threshold[c] = chance_threshold(epsilon if rules else 1.0)
        pp.coin_threshold[c] = 0
    pp.weather_threshold = weather_threshold
    pp.void_bonus = void_bonus
    for c in range(64):
        pp.danger_s[c] = 0.0
    for c in range(N_RAIN):
        r = card_rank(c) / <double>cfg.ranks
        if card_colour(c) == BLUE:
            pp.danger[c] = weather_blue + r
        else:
            pp.danger[c] = pow(r, weather_power)
        pp.danger_s[pos_of_card(c)] = pp.danger[c]
    pp.deck_s = to_strength(cfg.rain_in_use)
    for kind in range(N_KINDS):
        for h in range(SCORE_TABLE):
            if kind == KIND_CANDY:
                table[h] = candy_value * h
                continue
            if kind == KIND_STAR and h >= 3:
                table[h] = star_three_value
                continue
            memset(&probe, 0, sizeof(State))
            probe.cfg = cfg[0]
            probe.phase = PHASE_OVER
            probe.elems[0][kind] = h
            state_scores(&probe, out)
            col = COL_SPIDER if kind == KIND_SPIDER else (COL_LEOPARD if kind == KIND_LEOPARD else COL_STAR)
            table[h] = out[col]
        for h in range(SCORE_TABLE):
            best = table[h]
            if h + 1 < SCORE_TABLE and potential_decay * table[h + 1] > best:
                best = potential_decay * table[h + 1]
            if h + 2 < SCORE_TABLE and potential_decay * potential_decay * table[h + 2] > best:
                best = potential_decay * potential_decay * table[h + 2]
            pot[h] = best
        for h in range(VALUE_HAVE):
            pp.sky_value[kind][h][0] = 0.0
            for cnt in range(1, 3):
                top = h + cnt if h + cnt < SCORE_TABLE else SCORE_TABLE - 1
                pp.sky_value[kind][h][cnt] = pot[top] - pot[h]


cdef inline double sky_worth(const Policy* pp, int kind, int have, int count) noexcept nogil:
    """The rules' worth of count more elements of kind to a seat holding have of them."""
    return pp.sky_value[kind][have if have < VALUE_HAVE else VALUE_HAVE - 1][count]


cdef inline double sky_value_for(const State* st, const Policy* pp, int seat, int sky) noexcept nogil:
    cdef int kind = st.cfg.sky_kind[sky]
    return sky_worth(pp, kind, st.elems[seat][kind] + st.round_elems[seat][kind], st.cfg.sky_count[sky])


cdef inline bint wants_trick(const State* st, const Policy* pp, int seat) noexcept nogil:
    """A declarer never wants a trick; others want it when its sky card is worth taking."""
    if (st.declared_mask >> seat) & 1:
        return False
    return sky_value_for(st, pp, seat, st.sky_order[st.sky_pos + st.line_pos]) >= 0.0


cdef inline uint64_t trick_winners(uint64_t legal_s, uint64_t led_s, int best_p) noexcept nogil:
    """The cards of legal_s (strength order) that would take the trick from best_p."""
    return legal_s & (CSL_S_BLUE | led_s) & above(best_p)


cdef inline int choose_pos(uint64_t legal, bint lead, uint64_t led_s, int best_p, bint last,
                           bint want) noexcept nogil:
    """The rule for one card, in strength order. Leading: the strongest card when the trick's
    sky card is wanted, else the weakest. Following: when wanted, the cheapest card that beats
    the trick so far (a led-colour card before a trump), else the weakest; when not wanted
    (declarers always), the strongest card that still loses, else (forced to beat it) the
    strongest when last to play and the weakest otherwise, leaving later seats the chance
    to take it."""
    cdef uint64_t winners, losers
    if lead:
        return highest_card(legal) if want else lowest_card(legal)
    winners = trick_winners(legal, led_s, best_p)
    if want:
        return lowest_card(winners) if winners else lowest_card(legal)
    losers = legal & ~winners
    if losers:
        return highest_card(losers)
    return highest_card(legal) if last else lowest_card(legal)


cdef int policy_card(const State* st, const Policy* pp, Rng* rng) noexcept nogil:
    """The card the rules (or the learned policy) play for the seat to move (see choose_pos)."""
    cdef uint64_t legal = legal_plays(st), tb
    cdef uint64_t led_s = 0
    cdef int best_p = 0, best, sky
    if (legal & (legal - 1)) == 0:
        return lowest_card(legal)
    if rng_next(rng) < pp.eps_threshold[st.to_move]:
        return rng_pick_card(rng, legal)
    if st.n_in_trick != 0:
        led_s = colour_mask_s(st.led_colour)
        tb = st.trick_mask & colour_mask(BLUE)
        best = highest_card(tb) if tb else highest_card(st.trick_mask & colour_mask(st.led_colour))
        best_p = pos_of_card(best)
    if pp.learned:
        sky = st.sky_order[st.sky_pos + st.line_pos]
        return card_of_pos(learned_pos(pp, to_strength(legal), st.n_in_trick == 0, led_s, best_p,
                                       st.n_in_trick == st.cfg.n_players - 1,
                                       wants_trick(st, pp, st.to_move),
                                       (st.declared_mask >> st.to_move) & 1,
                                       sky_value_for(st, pp, st.to_move, sky), st.cfg.sky_kind[sky],
                                       unseen_by(st, st.to_move), rng))
    return card_of_pos(choose_pos(to_strength(legal), st.n_in_trick == 0, led_s, best_p,
                                  st.n_in_trick == st.cfg.n_players - 1,
                                  wants_trick(st, pp, st.to_move)))


cdef inline double hand_danger_s(const Policy* pp, uint64_t hand_s) noexcept nogil:
    cdef double d = 0.0
    while hand_s:
        d += pp.danger_s[lowest_card(hand_s)]
        hand_s &= hand_s - 1
    return d


cdef inline bint declare_rule(const Policy* pp, int seat, uint64_t hand_s, Rng* rng) noexcept nogil:
    """Declare good weather when the hand's danger (a rough count of the tricks it could win)
    is under the threshold; random playouts, and a seat modelled as random, toss a coin."""
    if not pp.rules:
        return <bint>(rng_next(rng) >> 63)
    if pp.coin_threshold[seat] and rng_next(rng) < pp.coin_threshold[seat]:
        return <bint>(rng_next(rng) >> 63)
    return hand_danger_s(pp, hand_s) < pp.weather_threshold


cdef inline bint policy_declare(const State* st, const Policy* pp, int seat, Rng* rng) noexcept nogil:
    return declare_rule(pp, seat, to_strength(st.hand[seat]), rng)


cdef void group_order(const State* st, const Policy* pp, int seat, const uint8_t* line, int* order) noexcept nogil:
    """Groups from the most to the least valuable to seat (line = the round's sky card ids)."""
    cdef double v[MAX_GROUPS]
    cdef int kind, g, i, j, t, sky, pos = 0
    for g in range(st.cfg.n_groups):
        v[g] = 0.0
        order[g] = g
        for i in range(st.cfg.group_size[g]):
            sky = line[pos]
            pos += 1
            kind = st.cfg.sky_kind[sky]
            v[g] += sky_worth(pp, kind, st.elems[seat][kind], st.cfg.sky_count[sky])
    for i in range(1, st.cfg.n_groups):
        j = i
        while j > 0 and v[order[j - 1]] < v[order[j]]:
            t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
            j -= 1


cdef inline void split_strongest(const Config* cfg, uint64_t hand_s, const int* order, uint64_t* piles_s) noexcept nogil:
    """The strongest cards to the first group of order, the next to the second, and so on."""
    cdef int i, g, t, p
    for i in range(cfg.n_groups):
        g = order[i]
        piles_s[g] = 0
        for t in range(cfg.group_size[g]):
            p = highest_card(hand_s)
            hand_s &= ~bit(p)
            piles_s[g] |= bit(p)


cdef void policy_allocate(const State* st, const Policy* pp, int seat, Rng* rng, uint64_t* piles) noexcept nogil:
    """The rules' split, or a random one with the seat's playout epsilon."""
    if rng_next(rng) < pp.eps_threshold[seat]:
        random_allocation(&st.cfg, st.hand[seat], rng, piles)
        return
    rules_allocate(st, pp, seat, piles)


cdef void rules_allocate(const State* st, const Policy* pp, int seat, uint64_t* piles) noexcept nogil:
    """The rules' split: the strongest cards to the group whose sky cards are worth most."""
    cdef int order[MAX_GROUPS]
    cdef uint64_t piles_s[MAX_GROUPS]
    cdef int g
    group_order(st, pp, seat, &st.sky_order[st.sky_pos], order)
    split_strongest(&st.cfg, to_strength(st.hand[seat]), order, piles_s)
    for g in range(st.cfg.n_groups):
        piles[g] = from_strength(piles_s[g])


cdef double allocation_prior(const State* st, const Policy* pp, int seat, const uint64_t* piles) noexcept nogil:
    """Order for progressive widening: danger placed where the sky cards are worth most,
    plus a bonus per colour missing from a pile that holds a trump."""
    cdef double score = 0.0, v
    cdef int g, c, i, missing, sky, pos = 0
    for g in range(st.cfg.n_groups):
        v = 0.0
        for i in range(st.cfg.group_size[g]):
            sky = st.sky_order[st.sky_pos + pos]
            pos += 1
            v += sky_value_for(st, pp, seat, sky)
        score += v * hand_danger_s(pp, to_strength(piles[g]))
        if piles[g] & colour_mask(BLUE):
            missing = 0
            for c in range(1, N_COLOURS):
                if not (piles[g] & colour_mask(c)):
                    missing += 1
            score += pp.void_bonus * missing
    return score


cdef inline double group_sky_worth(const State* st, const Policy* pp, int seat, int g) noexcept nogil:
    """The summed worth to seat of group g's sky cards this round (its elements before it)."""
    cdef double v = 0.0
    cdef int i, sky, kind
    for i in range(st.cfg.group_size[g]):
        sky = st.sky_order[st.sky_pos + st.cfg.group_start[g] + i]
        kind = st.cfg.sky_kind[sky]
        v += sky_worth(pp, kind, st.elems[seat][kind], st.cfg.sky_count[sky])
    return v


cdef inline void pile_features_of(const Policy* pp, uint64_t pile, double v, double* f) noexcept nogil:
    """Add one whole pile's part of the split features to f, its group's sky cards worth v
    (group_sky_worth)."""
    cdef uint64_t ps = to_strength(pile)
    cdef int c
    if ps:
        f[0] += v * hand_danger_s(pp, ps)
        f[1] += v * pp.danger_s[highest_card(ps)]
    if pile & colour_mask(BLUE):
        f[3] += 1.0
        for c in range(1, N_COLOURS):
            if not (pile & colour_mask(c)):
                f[2] += 1.0


cdef void pile_features(const State* st, const Policy* pp, int seat, int g, uint64_t pile,
                        double* f) noexcept nogil:
    """Add one whole pile's part of the split features to f (each feature is a sum over the
    piles; see split_features)."""
    pile_features_of(pp, pile, group_sky_worth(st, pp, seat, g), f)


cdef void split_features(const State* st, const Policy* pp, int seat, const uint64_t* piles,
                         double* f) noexcept nogil:
    """What a sensible split looks like, as numbers (the allocation model's features): the
    rules' danger placed where the round's sky cards are worth most to seat (summed and by
    each pile's top card), the colours missing beside a trump, the piles holding a trump.
    piles are the round's whole piles; values use the seat's elements before the round."""
    cdef int g, i
    for i in range(N_SPLIT_FEATURES):
        f[i] = 0.0
    for g in range(st.cfg.n_groups):
        pile_features(st, pp, seat, g, piles[g], f)


# --- the playout ----------------------------------------------------------------------------

cdef void rollout_end_round(State* st, int last_winner) noexcept nogil:
    """RULES.md 3.5-3.6 on the tallies (the same as the rules core's end of round; the
    playout equivalence test replays playouts through the core to keep them in step)."""
    cdef int s, k, n = st.cfg.n_players
    for s in range(n):
        if (st.declared_mask >> s) & 1:
            if st.round_won[s] == 0:
                st.good_weather[s] += 1
            else:
                st.facedown_cards[s] += st.round_won[s]
        else:
            st.faceup_cards[s] += st.round_won[s]
            for k in range(N_KINDS):
                st.elems[s][k] += st.round_elems[s][k]
        st.round_won[s] = 0
        for k in range(N_KINDS):
            st.round_elems[s][k] = 0
    st.round += 1
    st.sky_pos += st.cfg.line_size
    st.first_player = (st.first_player + 1) % n
    st.leader = st.first_player
    st.last_winner = last_winner
    st.to_move = -1
    st.group = 0
    st.line_pos = 0
    st.trick_in_group = 0
    st.n_in_trick = 0
    st.trick_mask = 0
    st.led_colour = -1
    st.phase = PHASE_OVER if st.round >= st.cfg.n_rounds else PHASE_DEAL


cdef void fast_tricks(const Policy* pp, State* st, uint64_t (*P)[MAX_GROUPS], int group,
                      int pos, int leader, Rng* rng, Trace* tr) noexcept nogil:
    """Play the round's remaining tricks from a trick boundary on strength-order piles P."""
    cdef int n = st.cfg.n_players, ng = st.cfg.n_groups
    cdef int i, seat, p, best_p, winner, sky, kind, cnt, end, s2, g2
    cdef double worth
    cdef uint64_t pile, legal, f, led_s, b, unseen_s
    cdef bint want
    cdef uint8_t declared = st.declared_mask
    end = st.cfg.group_start[group] + st.cfg.group_size[group]
    while group < ng:
        sky = st.sky_order[st.sky_pos + pos]
        kind = st.cfg.sky_kind[sky]
        cnt = st.cfg.sky_count[sky]
        seat = leader
        best_p = 0
        led_s = 0
        winner = leader
        for i in range(n):
            pile = P[seat][group]
            if i == 0:
                legal = pile
            else:
                f = pile & led_s
                legal = f if f else pile
            if (legal & (legal - 1)) == 0:
                p = lowest_card(legal)
            elif rng_next(rng) < pp.eps_threshold[seat]:
                p = rng_pick_card(rng, legal)
            else:
                worth = sky_worth(pp, kind, st.elems[seat][kind] + st.round_elems[seat][kind], cnt)
                want = not (declared >> seat) & 1 and worth >= 0.0
                if pp.learned:
                    unseen_s = to_strength(st.set_aside)
                    for s2 in range(n):
                        if s2 != seat:
                            for g2 in range(ng):
                                unseen_s |= P[s2][g2]
                    p = learned_pos(pp, legal, i == 0, led_s, best_p, i == n - 1, want,
                                    (declared >> seat) & 1, worth, kind,
                                    unseen_s, rng)
                else:
                    p = choose_pos(legal, i == 0, led_s, best_p, i == n - 1, want)
            b = bit(p)
            P[seat][group] = pile & ~b
            if i == 0:
                led_s = pos_colour_mask(p)
                best_p = p
            elif (b & (CSL_S_BLUE | led_s)) and p > best_p:
                best_p = p
                winner = seat
            if tr != NULL:
                trace_put(tr, (<uint64_t>TRACE_PLAY << 56) | card_of_pos(p))
            seat = seat + 1 if seat + 1 < n else 0
        st.round_won[winner] += 1
        st.round_elems[winner][kind] += cnt
        leader = winner
        pos += 1
        if pos == end:
            group += 1
            if group < ng:
                end += st.cfg.group_size[group]
    rollout_end_round(st, leader)


cdef void fast_round(const Policy* pp, State* st, uint64_t (*P)[MAX_GROUPS], Rng* rng, Trace* tr) noexcept nogil:
    """Deal, allocate, declare and play one whole round by the playout rules.

    The deal draws every pile as a uniformly random subset of the cards left (draw_subset,
    as the core's random deal): a uniform deal and, within each hand, a uniform split,
    which a seat playing by the rules then replaces."""
    cdef int order[MAX_GROUPS]
    cdef uint64_t hands_s[MAX_PLAYERS]
    cdef int n = st.cfg.n_players, ng = st.cfg.n_groups
    cdef int s, g, size, remaining
    cdef uint64_t left = pp.deck_s
    cdef uint8_t declared = 0
    cdef PickBits pb
    pb.bits = 0
    pb.slices = 0
    remaining = popcount(left)
    for s in range(n):
        hands_s[s] = 0
        for g in range(ng):
            size = st.cfg.group_size[g]
            P[s][g] = draw_subset(left, remaining, size, rng, &pb)
            left ^= P[s][g]
            remaining -= size
            hands_s[s] |= P[s][g]
    if tr != NULL:
        trace_put(tr, <uint64_t>TRACE_DEAL << 56)
        for s in range(n):
            trace_put(tr, from_strength(hands_s[s]))
        trace_put(tr, from_strength(left))
    for s in range(n):
        if rng_next(rng) >= pp.eps_threshold[s]:
            group_order(st, pp, s, &st.sky_order[st.sky_pos], order)
            split_strongest(&st.cfg, hands_s[s], order, P[s])
        if declare_rule(pp, s, hands_s[s], rng):
            declared |= 1 << s
        if tr != NULL:
            trace_put(tr, (<uint64_t>TRACE_ALLOCATE << 56) | s)
            for g in range(ng):
                trace_put(tr, from_strength(P[s][g]))
    if tr != NULL:
        for s in range(n):
            trace_put(tr, (<uint64_t>TRACE_DECLARE << 56) | (s << 8) | ((declared >> s) & 1))
    st.declared_mask = declared
    st.weather_done_mask = (1 << n) - 1
    st.allocated_mask = (1 << n) - 1
    for s in range(n):
        st.round_won[s] = 0
        for g in range(N_KINDS):
            st.round_elems[s][g] = 0
    fast_tricks(pp, st, P, 0, 0, st.first_player, rng, tr)


cdef void rollout(const Policy* pp, State* st, Rng* rng, Trace* tr) noexcept nogil:
    """Play to the end of the game by the playout rules: pending simultaneous choices and the
    trick in progress through the rules core, the rest in strength order."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef uint64_t P[MAX_PLAYERS][MAX_GROUPS]
    cdef int s, g, c, d, n = st.cfg.n_players
    while True:
        if st.phase == PHASE_ALLOCATE:
            for s in range(n):
                if not (st.allocated_mask >> s) & 1:
                    policy_allocate(st, pp, s, rng, piles)
                    if tr != NULL:
                        trace_put(tr, (<uint64_t>TRACE_ALLOCATE << 56) | s)
                        for g in range(st.cfg.n_groups):
                            trace_put(tr, piles[g])
                    state_allocate(st, s, piles)
        elif st.phase == PHASE_WEATHER:
            for s in range(n):
                if not (st.weather_done_mask >> s) & 1:
                    d = policy_declare(st, pp, s, rng)
                    if tr != NULL:
                        trace_put(tr, (<uint64_t>TRACE_DECLARE << 56) | (s << 8) | d)
                    state_declare(st, s, d)
        elif st.phase == PHASE_PLAY and st.n_in_trick != 0:
            c = policy_card(st, pp, rng)
            if tr != NULL:
                trace_put(tr, (<uint64_t>TRACE_PLAY << 56) | c)
            state_play_unchecked(st, c)
        else:
            break
    if st.phase == PHASE_PLAY:
        for s in range(n):
            for g in range(st.cfg.n_groups):
                P[s][g] = to_strength(st.pile[s][g]) if g >= st.group else 0
        fast_tricks(pp, st, P, st.group, st.line_pos, st.leader, rng, tr)
    while st.phase == PHASE_DEAL:
        if st.cfg.n_rounds - st.round <= pp.value_horizon:
            return
        fast_round(pp, st, P, rng, tr)


cdef inline void playout(const SearchSpec* sp, State* st, Rng* rng) noexcept nogil:
    rollout(&sp.policy, st, rng, NULL)


cdef void outcome(const SearchSpec* sp, ValueTables* vt, const State* st, double* u, double* share,
                  double* pts) noexcept nogil:
    """Utility per seat: win share (1/k for a k-way shared win) plus a small clamped margin
    over the best other seat, or points / points_scale. A playout stopped at a round's end
    (Policy.value_horizon) takes the learned value's shares and expected final points (vt:
    the worker's tables for it)."""
    cdef int32_t sc[MAX_PLAYERS * N_SCORE_COLS]
    cdef int s, o, n = st.cfg.n_players, winners, k
    cdef double best, d
    if st.phase == PHASE_OVER:
        state_scores(st, sc)
        winners = state_winners(st, sc)
        k = popcount(winners)
        for s in range(n):
            share[s] = ((winners >> s) & 1) / <double>k
            pts[s] = sc[s * N_SCORE_COLS + COL_TOTAL]
    else:
        value_estimate(vt, sp.value_w, sp.value_pts_w, st, share, pts)
    for s in range(n):
        if sp.utility == UTIL_POINTS:
            u[s] = pts[s] / sp.points_scale
            continue
        best = -1e9
        for o in range(n):
            if o != s and pts[o] > best:
                best = pts[o]
        d = (pts[s] - best) / sp.margin_scale
        if d > 1.0:
            d = 1.0
        elif d < -1.0:
            d = -1.0
        u[s] = share[s] + sp.margin_weight * d
