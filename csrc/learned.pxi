# The learned card policy: a softmax over the legal cards of a linear score of a few
# features each, read from the acting seat's own cards and public facts only (as the
# rules are). Its weights are learned from search visit counts in self-play
# (csl_ai/policy.py trains them; csl_ai/data/card_policy.json ships them). Included by
# _core.pyx after the search files: it reads the Policy of search_types.pxi, and the playouts call learned_pos.
#
# Features of a candidate card (strength position p, bit b), in order (CARD_FEATURES):
#   rule      the card the rules would play (choose_pos)
#   wins      it beats the trick so far (following only)
#   wins_want, wins_declared, wins_last: wins, when the seat wants the sky card / has bet on
#             good weather / plays last
#   wins_value  wins times the sky card's worth to the seat (rules' table, / 10, clamped)
#   blue, lead_blue: a trump; a trump led
#   rank      its place among the legal cards, 0 (weakest) to 1 (strongest)
#   lead_rank the same when leading
#   wins_blue wins with a trump
#   master    no card of its colour above it is still unseen by the seat
#   lead_master a master card led
#   wins_star, wins_leopard, wins_spider: wins, by the kind of the sky card

CARD_FEATURES = (
    "rule", "wins", "wins_want", "wins_declared", "wins_last", "wins_value", "blue",
    "lead_blue", "rank", "lead_rank", "wins_blue", "master", "lead_master", "wins_star",
    "wins_leopard", "wins_spider",
)


cdef inline double _clamp(double x, double lo, double hi) noexcept nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef int card_feature_rows(uint64_t legal, bint lead, uint64_t led_s, int best_p, bint last,
                           bint want, bint declared, double value, int kind, uint64_t unseen_s,
                           int* pos, double (*f)[N_CARD_FEATURES]) noexcept nogil:
    """The features of every legal card (strength masks), weakest first; returns how many.
    pos[i] is card i's strength position, f[i] its features."""
    cdef int rule = choose_pos(legal, lead, led_s, best_p, last, want)
    cdef int n = popcount(legal), i = 0, p, k
    cdef uint64_t b, rest = legal
    cdef double wins, blue, master, rank, v = _clamp(value / 10.0, -2.0, 2.0)
    while rest:
        p = lowest_card(rest)
        rest &= rest - 1
        b = bit(p)
        wins = 1.0 if (not lead and (b & (CSL_S_BLUE | led_s)) and p > best_p) else 0.0
        blue = 1.0 if p >= 24 else 0.0
        master = 1.0 if (unseen_s & pos_colour_mask(p) & above(p)) == 0 else 0.0
        rank = i / <double>(n - 1) if n > 1 else 1.0
        pos[i] = p
        f[i][0] = 1.0 if p == rule else 0.0
        f[i][1] = wins
        f[i][2] = wins if want else 0.0
        f[i][3] = wins if declared else 0.0
        f[i][4] = wins if last else 0.0
        f[i][5] = wins * v
        f[i][6] = blue
        f[i][7] = blue if lead else 0.0
        f[i][8] = rank
        f[i][9] = rank if lead else 0.0
        f[i][10] = wins * blue
        f[i][11] = master
        f[i][12] = master if lead else 0.0
        f[i][13] = wins if kind == KIND_STAR else 0.0
        f[i][14] = wins if kind == KIND_LEOPARD else 0.0
        f[i][15] = wins if kind == KIND_SPIDER else 0.0
        i += 1
    return n


cdef int learned_scores(const double* w, uint64_t legal, bint lead, uint64_t led_s, int best_p,
                        bint last, bint want, bint declared, double value, int kind,
                        uint64_t unseen_s, int* pos, double* score) noexcept nogil:
    """Each legal card's score, the weights' dot product with its features (as
    card_feature_rows lays them out), with the per-decision terms summed once; returns how
    many cards (weakest first)."""
    cdef int rule = choose_pos(legal, lead, led_s, best_p, last, want)
    cdef int n = popcount(legal), i = 0, p
    cdef uint64_t b, rest = legal
    cdef double win_c, blue_c, rank_c, master_c, rank_step, wins, blue
    win_c = w[1] + (w[2] if want else 0.0) + (w[3] if declared else 0.0) + (w[4] if last else 0.0)
    win_c += w[5] * _clamp(value / 10.0, -2.0, 2.0)
    if kind == KIND_STAR:
        win_c += w[13]
    elif kind == KIND_LEOPARD:
        win_c += w[14]
    elif kind == KIND_SPIDER:
        win_c += w[15]
    blue_c = w[6] + (w[7] if lead else 0.0)
    rank_c = w[8] + (w[9] if lead else 0.0)
    master_c = w[11] + (w[12] if lead else 0.0)
    rank_step = rank_c / (n - 1) if n > 1 else 0.0
    while rest:
        p = lowest_card(rest)
        rest &= rest - 1
        b = bit(p)
        blue = 1.0 if p >= 24 else 0.0
        score[i] = (w[0] if p == rule else 0.0) + blue * blue_c + i * rank_step
        if n <= 1:
            score[i] += rank_c
        if not lead and (b & (CSL_S_BLUE | led_s)) and p > best_p:
            score[i] += win_c + blue * w[10]
        if (unseen_s & pos_colour_mask(p) & above(p)) == 0:
            score[i] += master_c
        pos[i] = p
        i += 1
    return n


cdef int learned_pos(const Policy* pp, uint64_t legal, bint lead, uint64_t led_s, int best_p,
                     bint last, bint want, bint declared, double value, int kind,
                     uint64_t unseen_s, Rng* rng) noexcept nogil:
    """A card drawn from the learned softmax (strength positions)."""
    cdef int pos[MAX_LEGAL]
    cdef double s[MAX_LEGAL]
    cdef double top = -1e300, total = 0.0, u
    cdef int n, i
    n = learned_scores(pp.card_w, legal, lead, led_s, best_p, last, want, declared, value, kind,
                       unseen_s, pos, s)
    for i in range(n):
        if s[i] > top:
            top = s[i]
    for i in range(n):
        s[i] = exp(s[i] - top)
        total += s[i]
    u = rng_unit(rng) * total
    for i in range(n - 1):
        u -= s[i]
        if u < 0.0:
            return pos[i]
    return pos[n - 1]


cdef inline uint64_t unseen_by(const State* st, int seat) noexcept nogil:
    """Rain cards in use that seat has not seen (not played, not its own), strength order."""
    return to_strength(st.cfg.rain_in_use & ~st.played & ~st.hand[seat])


def card_features(CoreState view, int seat, *, double epsilon, double weather_threshold,
                  double weather_blue, double weather_power, double candy_value,
                  double star_three_value, double potential_decay, weights=None):
    """(cards, rows): the learned policy's features of each legal card of seat, the seat to
    move in the trick phase, read from a view (its own cards and public facts only). With
    weights, (cards, scores): the scores the playouts compute for them (for tests)."""
    cdef Policy pp
    cdef const State* st = &view.st
    cdef int pos[MAX_LEGAL]
    cdef double f[MAX_LEGAL][N_CARD_FEATURES]
    cdef double score[MAX_LEGAL]
    cdef uint64_t legal, led_s = 0, tb
    cdef int best_p = 0, best, n, i, k, sky
    if st.phase != PHASE_PLAY or st.to_move != seat:
        raise ValueError(f"seat {seat} has no card to play in this position")
    policy_init(&pp, &st.cfg, 1, epsilon, weather_threshold, weather_blue, weather_power,
                candy_value, star_three_value, potential_decay, 0.0)
    legal = to_strength(legal_plays(st))
    if st.n_in_trick != 0:
        led_s = colour_mask_s(st.led_colour)
        tb = st.trick_mask & colour_mask(BLUE)
        best = highest_card(tb) if tb else highest_card(st.trick_mask & colour_mask(st.led_colour))
        best_p = pos_of_card(best)
    sky = st.sky_order[st.sky_pos + st.line_pos]
    if weights is not None:
        values = [float(x) for x in weights]
        if len(values) != N_CARD_FEATURES:
            raise ValueError(f"weights: need {N_CARD_FEATURES}")
        for k in range(N_CARD_FEATURES):
            pp.card_w[k] = values[k]
        n = learned_scores(pp.card_w, legal, st.n_in_trick == 0, led_s, best_p,
                           st.n_in_trick == st.cfg.n_players - 1, wants_trick(st, &pp, seat),
                           (st.declared_mask >> seat) & 1, sky_value_for(st, &pp, seat, sky),
                           st.cfg.sky_kind[sky], unseen_by(st, seat), pos, score)
        return ([card_of_pos(pos[i]) for i in range(n)], [score[i] for i in range(n)])
    n = card_feature_rows(legal, st.n_in_trick == 0, led_s, best_p,
                          st.n_in_trick == st.cfg.n_players - 1, wants_trick(st, &pp, seat),
                          (st.declared_mask >> seat) & 1, sky_value_for(st, &pp, seat, sky),
                          st.cfg.sky_kind[sky], unseen_by(st, seat), pos, f)
    return ([card_of_pos(pos[i]) for i in range(n)],
            [[f[i][k] for k in range(N_CARD_FEATURES)] for i in range(n)])
