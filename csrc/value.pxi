# The learned value of a round boundary: each seat's chance of winning the game, and its
# expected final points, from the tallies after a finished round and the sky cards still
# to come, when more rounds are. The chance is a softmax over the seats of a linear score
# of a few features of each seat, the points a line from the same features, with one
# weight row per player count and rounds left (benchmarks/fit_value_model.py fits them to finished games of
# sensible players; SearchConfig.value_weights and value_points_weights hold them). Where
# SearchConfig.value_horizon is set, a playout stops at the end of a round once at most that
# many rounds remain and the value stands for them, which the playout rules would
# otherwise deal and play out at random. Included by _core.pyx after the search files: outcome()
# there calls value_estimate.
#
# Features of a seat, in order (VALUE_FEATURES), points in tens:
#   points      its total if the game ended now
#   leopard_1, leopard_2, spider_1, spider_2, candy_1, candy_2, star_1: what one or two more
#               elements of that kind would add to its total, the others' tallies as they
#               are (the scoring rules themselves: sides, star mode and candy ranking alike)
#   star_open   star_1 when no other seat holds a face-up star (three stars are in reach)
#   star_outright  1 when one more star wins outright (side B, two stars, no other holds one)
#   split_candy, split_spider, split_leopard, split_star: what the seat's points of that
#               kind would gain on average if the sky cards still to come (the deck is
#               known, only its order is not) went each to a seat drawn at random, every
#               seat's count independent of the others' (candy B ranked as if every seat
#               above counted once)
#   split_three the chance that the seat ends with all three stars in that random split

VALUE_FEATURES = (
    "points", "leopard_1", "leopard_2", "spider_1", "spider_2", "candy_1", "candy_2",
    "star_1", "star_open", "star_outright",
    "split_candy", "split_spider", "split_leopard", "split_star", "split_three",
)

cdef enum:
    MAX_SPLIT_GAIN = 2 * MAX_SKY + 1

cdef double SPLIT_BINOM[MAX_PLAYERS + 1][MAX_SKY + 1][MAX_SKY + 1]


def _fill_split_binom():
    from math import comb
    for n in range(2, MAX_PLAYERS + 1):
        for total in range(MAX_SKY + 1):
            for x in range(total + 1):
                SPLIT_BINOM[n][total][x] = comb(total, x) * (1.0 / n) ** x * (1.0 - 1.0 / n) ** (total - x)


_fill_split_binom()


cdef int _split_gain_pmf(int n, int singles, int doubles, double* pmf) noexcept nogil:
    """pmf[g]: the chance that a seat gains g elements of a kind when each of its cards
    still to come (singles x1, doubles x2) goes to one of n seats at random; returns the
    number of entries (the largest gain + 1)."""
    cdef int size = singles + 2 * doubles + 1, g, x1, x2
    for g in range(size):
        pmf[g] = 0.0
    for x2 in range(doubles + 1):
        for x1 in range(singles + 1):
            pmf[x1 + 2 * x2] += SPLIT_BINOM[n][singles][x1] * SPLIT_BINOM[n][doubles][x2]
    return size


cdef inline double _split_table_mean(const double* pmf, int size, int have, const int32_t* table, int cap) noexcept nogil:
    """The mean of table[min(have + g, cap)] over the gain pmf."""
    cdef double total = 0.0
    cdef int g, c
    for g in range(size):
        c = have + g
        total += pmf[g] * table[c if c < cap else cap]
    return total


cdef void value_split_features(const State* st, double (*f)[N_VALUE_FEATURES]) noexcept nogil:
    """Fill the split_* features (VALUE_FEATURES from index 10) of every seat."""
    cdef int n = st.cfg.n_players
    cdef int singles[N_KINDS]
    cdef int doubles[N_KINDS]
    cdef double pmf[N_KINDS][MAX_SPLIT_GAIN]
    cdef int size[N_KINDS]
    cdef double below[MAX_PLAYERS][MAX_SPLIT_GAIN + 1]   # below[o][j]: sum over gains < j of pmf * count
    cdef double under[MAX_PLAYERS][MAX_SPLIT_GAIN + 1]   # under[o][j]: pmf mass of gains < j
    cdef double rank_pmf[MAX_PLAYERS + 1]
    cdef double mean_candy[MAX_PLAYERS]
    cdef double mean_spider, mean_leopard, mean_base, mean_star, q, total, three, two
    cdef int32_t row[N_SCORE_COLS]
    cdef int k, i, s, o, g, j, a, c, kk, card, end = st.cfg.n_rounds * st.cfg.line_size
    cdef int side_c = st.cfg.side[KIND_CANDY]
    for k in range(N_KINDS):
        singles[k] = 0
        doubles[k] = 0
    for i in range(st.sky_pos, end):
        card = st.sky_order[i]
        if st.cfg.sky_count[card] == 2:
            doubles[st.cfg.sky_kind[card]] += 1
        else:
            singles[st.cfg.sky_kind[card]] += 1
    for k in range(N_KINDS):
        size[k] = _split_gain_pmf(n, singles[k], doubles[k], pmf[k])
    for o in range(n):
        c = st.elems[o][KIND_CANDY]
        below[o][0] = 0.0
        under[o][0] = 0.0
        for g in range(size[KIND_CANDY]):
            below[o][g + 1] = below[o][g] + pmf[KIND_CANDY][g] * (c + g)
            under[o][g + 1] = under[o][g] + pmf[KIND_CANDY][g]
    for s in range(n):
        total = 0.0
        for g in range(size[KIND_CANDY]):
            a = st.elems[s][KIND_CANDY] + g
            if side_c == SIDE_A:
                q = 0.0
                for o in range(n):
                    if o != s:
                        j = a - st.elems[o][KIND_CANDY]      # the other's gains below j keep it under a
                        if j > 0:
                            q += below[o][j if j < size[KIND_CANDY] else size[KIND_CANDY]]
                total += pmf[KIND_CANDY][g] * q
            else:
                rank_pmf[0] = 1.0
                for kk in range(1, n):
                    rank_pmf[kk] = 0.0
                i = 0
                for o in range(n):
                    if o == s:
                        continue
                    j = a - st.elems[o][KIND_CANDY] + 1      # gains >= j put the other above a
                    if j <= 0:
                        q = 1.0
                    elif j >= size[KIND_CANDY]:
                        q = 0.0
                    else:
                        q = 1.0 - under[o][j]
                    i += 1
                    for kk in range(i, 0, -1):
                        rank_pmf[kk] = rank_pmf[kk] * (1.0 - q) + rank_pmf[kk - 1] * q
                    rank_pmf[0] *= 1.0 - q
                q = 0.0
                for kk in range(n):
                    q += rank_pmf[kk] * CANDY_B_POINTS[kk]
                total += pmf[KIND_CANDY][g] * q
        mean_candy[s] = total
    for s in range(n):
        seat_points(st, s, row)
        mean_spider = _split_table_mean(pmf[KIND_SPIDER], size[KIND_SPIDER], st.elems[s][KIND_SPIDER],
                                        SPIDER_POINTS[st.cfg.side[KIND_SPIDER]], 6)
        mean_leopard = _split_table_mean(pmf[KIND_LEOPARD], size[KIND_LEOPARD], st.elems[s][KIND_LEOPARD],
                                         LEOPARD_POINTS[st.cfg.side[KIND_LEOPARD]], 7)
        mean_base = mean_candy[s] + mean_spider + mean_leopard
        two = 0.0
        three = 0.0
        for g in range(size[KIND_STAR]):
            c = st.elems[s][KIND_STAR] + g
            if c == 2:
                two += pmf[KIND_STAR][g]
            elif c >= 3:
                three += pmf[KIND_STAR][g]
        if st.cfg.side[KIND_STAR] == SIDE_A:
            mean_star = -5.0 * two + three * (2.0 if st.cfg.star_a_mode == STAR_A_TWICE else 1.0) * mean_base
        else:
            mean_star = -10.0 * two
        f[s][10] = (mean_candy[s] - row[COL_CANDY]) / 10.0
        f[s][11] = (mean_spider - row[COL_SPIDER]) / 10.0
        f[s][12] = (mean_leopard - row[COL_LEOPARD]) / 10.0
        f[s][13] = (mean_star - row[COL_STAR]) / 10.0
        f[s][14] = three

cdef inline double _gain(State* scratch, int s, int kind, int more, int32_t total) noexcept nogil:
    """Points (in tens) that `more` elements of kind would add to seat s's total."""
    cdef int32_t row[N_SCORE_COLS]
    cdef uint8_t had = scratch.elems[s][kind]
    scratch.elems[s][kind] = had + more
    seat_points(scratch, s, row)
    scratch.elems[s][kind] = had
    return (row[COL_TOTAL] - total) / 10.0


cdef void value_features(const State* st, double (*f)[N_VALUE_FEATURES]) noexcept nogil:
    """The features of every seat (f[seat]) from the face-up tallies, weather and face-down
    cards of a round boundary."""
    cdef State scratch = st[0]
    cdef int32_t row[N_SCORE_COLS]
    cdef int s, o, n = st.cfg.n_players
    cdef bint others_star
    for s in range(n):
        seat_points(st, s, row)
        f[s][0] = row[COL_TOTAL] / 10.0
        f[s][1] = _gain(&scratch, s, KIND_LEOPARD, 1, row[COL_TOTAL])
        f[s][2] = _gain(&scratch, s, KIND_LEOPARD, 2, row[COL_TOTAL])
        f[s][3] = _gain(&scratch, s, KIND_SPIDER, 1, row[COL_TOTAL])
        f[s][4] = _gain(&scratch, s, KIND_SPIDER, 2, row[COL_TOTAL])
        f[s][5] = _gain(&scratch, s, KIND_CANDY, 1, row[COL_TOTAL])
        f[s][6] = _gain(&scratch, s, KIND_CANDY, 2, row[COL_TOTAL])
        f[s][7] = _gain(&scratch, s, KIND_STAR, 1, row[COL_TOTAL])
        others_star = False
        for o in range(n):
            if o != s and st.elems[o][KIND_STAR] > 0:
                others_star = True
        f[s][8] = 0.0 if others_star else f[s][7]
        f[s][9] = 1.0 if (st.cfg.side[KIND_STAR] == SIDE_B and st.elems[s][KIND_STAR] == 2
                          and not others_star) else 0.0
    value_split_features(st, f)


cdef void value_estimate(const double (*w)[N_VALUE_FEATURES], const double (*pw)[N_VALUE_FEATURES + 1],
                         const State* st, double* share, double* pts) noexcept nogil:
    """Each seat's chance of winning and expected final points from a round boundary
    (st.round rounds finished, more to come), under the weights w and points weights pw
    (intercept first), both by rounds left - 1; a seat already holding an outright win has it."""
    cdef double f[MAX_PLAYERS][N_VALUE_FEATURES]
    cdef double z[MAX_PLAYERS]
    cdef int s, i, n = st.cfg.n_players, left = st.cfg.n_rounds - st.round, outright
    cdef double top = -1e300, total = 0.0
    if left < 1:
        left = 1
    elif left > MAX_VALUE_ROUNDS:
        left = MAX_VALUE_ROUNDS
    value_features(st, f)
    for s in range(n):
        z[s] = 0.0
        pts[s] = pw[left - 1][0]
        for i in range(N_VALUE_FEATURES):
            z[s] += w[left - 1][i] * f[s][i]
            pts[s] += pw[left - 1][i + 1] * f[s][i]
        if z[s] > top:
            top = z[s]
    outright = star_b_outright(st)
    if outright >= 0:
        for s in range(n):
            share[s] = 1.0 if s == outright else 0.0
        return
    for s in range(n):
        z[s] = exp(z[s] - top)
        total += z[s]
    for s in range(n):
        share[s] = z[s] / total


def boundary_features(CoreState state):
    """The value features of every seat (one list per seat, VALUE_FEATURES order) from the
    state's tallies."""
    cdef double f[MAX_PLAYERS][N_VALUE_FEATURES]
    value_features(&state.st, f)
    return [[f[s][i] for i in range(N_VALUE_FEATURES)] for s in range(state.st.cfg.n_players)]


def boundary_value(CoreState state, weights, points_weights):
    """(each seat's chance of winning, each seat's expected final points) by the learned
    value with these weights (rows of N_VALUE_FEATURES, and of 1 + N_VALUE_FEATURES with the
    intercept first, by rounds left, 1 first), as the search reads it at a round boundary."""
    cdef double w[MAX_VALUE_ROUNDS][N_VALUE_FEATURES]
    cdef double pw[MAX_VALUE_ROUNDS][N_VALUE_FEATURES + 1]
    cdef double share[MAX_PLAYERS]
    cdef double pts[MAX_PLAYERS]
    _value_table(weights, N_VALUE_FEATURES, &w[0][0])
    _value_table(points_weights, N_VALUE_FEATURES + 1, &pw[0][0])
    value_estimate(w, pw, &state.st, share, pts)
    n = state.st.cfg.n_players
    return [share[s] for s in range(n)], [pts[s] for s in range(n)]


cdef _value_table(weights, int width, double* out):
    """Copy per-rounds-left weight rows of `width` into out (MAX_VALUE_ROUNDS rows); rows
    past the last repeat it."""
    rows = [[float(v) for v in row] for row in weights]
    if not rows or len(rows) > MAX_VALUE_ROUNDS or any(len(r) != width for r in rows):
        raise ValueError(f"the value needs 1 to {MAX_VALUE_ROUNDS} rows of {width} weights")
    if not all(v == v and abs(v) < 1e6 for r in rows for v in r):
        raise ValueError("the value's weights must be finite")
    for r in range(MAX_VALUE_ROUNDS):
        row = rows[r if r < len(rows) else len(rows) - 1]
        for i in range(width):
            out[r * width + i] = row[i]
