# The learned value of a round boundary: each seat's chance of winning the game, and its
# expected final points, from the tallies after a finished round when more rounds are to
# come. The chance is a softmax over the seats of a linear score of a few features of each
# seat's tallies, the points a line from the same features, with one weight row per player
# count and rounds left (benchmarks/fit_value_model.py fits them to finished games of
# sensible players; SearchConfig.value_weights and value_points_weights hold them). Where
# SearchConfig.value_horizon is set, a playout stops at the end of a round once at most that
# many rounds remain and the value stands for them, which the playout rules would
# otherwise deal and play out at random. Included by _core.pyx after search.pxi: outcome()
# there calls value_estimate.
#
# Features of a seat, in order (VALUE_FEATURES), points in tens:
#   points      its total if the game ended now
#   leopard_1, leopard_2, spider_1, spider_2, candy_1, candy_2, star_1: what one or two more
#               elements of that kind would add to its total, the others' tallies as they
#               are (the scoring rules themselves: sides, star mode and candy ranking alike)
#   star_open   star_1 when no other seat holds a face-up star (three stars are in reach)
#   star_outright  1 when one more star wins outright (side B, two stars, no other holds one)

VALUE_FEATURES = (
    "points", "leopard_1", "leopard_2", "spider_1", "spider_2", "candy_1", "candy_2",
    "star_1", "star_open", "star_outright",
)

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
