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
#
# The cost: a search evaluates the value once an iteration, always at the same round boundary
# with the same sky cards to come (only the tallies differ), so each worker keeps the
# split features' tables of those cards (ValueTables, search_types.pxi: the gain pmfs, the
# mean spider and leopard points and star chances by the seat's count, the candy rows by
# count, and the mean candy points of the candy tallies last seen) and makes them again only
# for other cards. Every number is made by the same floating-point operations in the same
# order as computing it afresh (tests/test_value.py holds them equal, the bench signature
# the searches), and the gains are seat_points' integer arithmetic taken by the column.

VALUE_FEATURES = (
    "points", "leopard_1", "leopard_2", "spider_1", "spider_2", "candy_1", "candy_2",
    "star_1", "star_open", "star_outright",
    "split_candy", "split_spider", "split_leopard", "split_star", "split_three",
)

from libc.string cimport memcmp, memset

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


cdef enum:
    VALUE_KEY_RULES = 0xFF  # the bits of a tables key that _rules_key sets


cdef inline uint64_t _rules_key(const State* st) noexcept nogil:
    """The player count, star option and sides in the low 8 bits of a tables key."""
    return (<uint64_t>st.cfg.n_players | (<uint64_t>st.cfg.star_a_mode << 3)
            | (<uint64_t>st.cfg.side[0] << 4) | (<uint64_t>st.cfg.side[1] << 5)
            | (<uint64_t>st.cfg.side[2] << 6) | (<uint64_t>st.cfg.side[3] << 7))


cdef uint64_t value_tables_key(const State* st) noexcept nogil:
    """What the split features take of a round boundary besides its tallies, in one number:
    the player count, the sides, the star option, and the singles and doubles of each kind
    among the sky cards still to come (6 bits each: at most MAX_SKY)."""
    cdef int singles[N_KINDS]
    cdef int doubles[N_KINDS]
    cdef int i, k, card, end = st.cfg.n_rounds * st.cfg.line_size
    cdef uint64_t key
    for k in range(N_KINDS):
        singles[k] = 0
        doubles[k] = 0
    for i in range(st.sky_pos, end):
        card = st.sky_order[i]
        if st.cfg.sky_count[card] == 2:
            doubles[st.cfg.sky_kind[card]] += 1
        else:
            singles[st.cfg.sky_kind[card]] += 1
    key = _rules_key(st)
    for k in range(N_KINDS):
        key |= (<uint64_t>singles[k] << (8 + 12 * k)) | (<uint64_t>doubles[k] << (14 + 12 * k))
    return key


cdef inline void value_tables_ready(ValueTables* vt, const State* st) noexcept nogil:
    """Make vt the tables of st's sky cards still to come, unless it holds them: the same
    card ids of the same deck (sky_order is a permutation of the deck's card ids 0 ..
    n_sky - 1, so those to come are those not dealt), or the same key."""
    cdef uint64_t remaining = 0, key
    cdef int i, end = st.cfg.n_rounds * st.cfg.line_size
    if st.sky_pos < end - st.sky_pos:   # fewer dealt than to come: all the others
        for i in range(st.sky_pos):
            remaining |= (<uint64_t>1) << st.sky_order[i]
        remaining = ~remaining & (((<uint64_t>1) << end) - 1)
    else:
        for i in range(st.sky_pos, end):
            remaining |= (<uint64_t>1) << st.sky_order[i]
    if (vt.valid and remaining == vt.remaining
            and memcmp(vt.deck_kind, st.cfg.sky_kind, MAX_SKY) == 0
            and memcmp(vt.deck_count, st.cfg.sky_count, MAX_SKY) == 0
            and vt.key & VALUE_KEY_RULES == _rules_key(st)):
        return
    key = value_tables_key(st)
    if not vt.valid or vt.key != key:
        value_tables_make(vt, st, key)
    vt.remaining = remaining
    memcpy(vt.deck_kind, st.cfg.sky_kind, MAX_SKY)
    memcpy(vt.deck_count, st.cfg.sky_count, MAX_SKY)


cdef void value_tables_make(ValueTables* vt, const State* st, uint64_t key) noexcept nogil:
    """Fill vt for the sky cards still to come of st (key: value_tables_key(st))."""
    cdef int n = st.cfg.n_players
    cdef double pmf[N_KINDS][MAX_SPLIT_GAIN]
    cdef int size[N_KINDS]
    cdef int k, g, c, t
    cdef double two, three, under
    for k in range(N_KINDS):
        size[k] = _split_gain_pmf(n, (key >> (8 + 12 * k)) & 63, (key >> (14 + 12 * k)) & 63, pmf[k])
    vt.key = key
    vt.valid = 1
    vt.size = size[KIND_CANDY]
    under = 0.0
    vt.candy_above[0] = 1.0
    for g in range(size[KIND_CANDY]):
        vt.candy_pmf[g] = pmf[KIND_CANDY][g]
        if g > 0:
            vt.candy_above[g] = 1.0 - under
        under += pmf[KIND_CANDY][g]
    vt.candy_above[size[KIND_CANDY]] = 0.0
    for g in range(size[KIND_CANDY] + 1):
        vt.candy_not_above[g] = 1.0 - vt.candy_above[g]
    for c in range(7):
        vt.spider_mean[c] = _split_table_mean(pmf[KIND_SPIDER], size[KIND_SPIDER], c,
                                              SPIDER_POINTS[st.cfg.side[KIND_SPIDER]], 6)
    for c in range(8):
        vt.leopard_mean[c] = _split_table_mean(pmf[KIND_LEOPARD], size[KIND_LEOPARD], c,
                                               LEOPARD_POINTS[st.cfg.side[KIND_LEOPARD]], 7)
    for t in range(4):
        two = 0.0
        three = 0.0
        for g in range(size[KIND_STAR]):
            c = t + g
            if c == 2:
                two += pmf[KIND_STAR][g]
            elif c >= 3:
                three += pmf[KIND_STAR][g]
        vt.star_two[t] = two
        vt.star_three[t] = three
    vt.below_ready = 0
    memset(vt.candy_key, 0, sizeof(vt.candy_key))


cdef inline const double* _candy_row(ValueTables* vt, int c, double* spare) noexcept nogil:
    """The side-A candy row of a seat holding c candies, indexed by j + size for j = 1 - size
    .. 2 * size - 1: below[j], the sum over gains g < j of pmf[g] * (c + g), for 0 < j <
    size (made in order of g), 0.0 for j <= 0 and below[size] for j >= size; kept in vt for
    small c, else made in spare."""
    cdef double* row = spare
    cdef double below = 0.0
    cdef int g, size = vt.size
    if c < VALUE_BELOW_ROWS:
        row = &vt.below[c][0]
        if (vt.below_ready >> c) & 1:
            return row
    for g in range(size + 1):
        row[g] = 0.0
    for g in range(size):
        below = below + vt.candy_pmf[g] * (c + g)
        row[size + g + 1] = below
    for g in range(2 * size + 1, 3 * size):
        row[g] = below
    if c < VALUE_BELOW_ROWS:
        vt.below_ready |= <uint32_t>1 << c
    return row


cdef void _candy_a_means(ValueTables* vt, const State* st, double* mean_candy) noexcept nogil:
    """Each seat's mean candy points on side A (the others' counts below its own) over the
    random split: for every gain g of the seat, q[g] sums over the others, in seat order,
    below[j] of the other's row at j = its count + g - theirs (nothing where j <= 0,
    below[size] where j >= size), and the mean is the sum over g of pmf[g] * q[g] in order
    of g. q is made one other at a time across all g at once, each q[g] taking the same
    additions in the same order as one at a time (adding the rows' 0.0 where j <= 0 leaves
    a sum of non-negative numbers as it is)."""
    cdef int n = st.cfg.n_players, size = vt.size
    cdef double spare[MAX_PLAYERS][VALUE_ROW]
    cdef const double* rows[MAX_PLAYERS]
    cdef double q[MAX_SPLIT_GAIN]
    cdef const double* row
    cdef double top, total
    cdef int s, o, g, d
    for o in range(n):
        rows[o] = _candy_row(vt, st.elems[o][KIND_CANDY], spare[o])
    for s in range(n):
        for g in range(size):
            q[g] = 0.0
        for o in range(n):
            if o == s:
                continue
            d = st.elems[s][KIND_CANDY] - st.elems[o][KIND_CANDY]   # j = d + g
            if d <= 1 - size:       # j <= 0 for every g
                continue
            if d >= size:           # j >= size for every g
                top = rows[o][3 * size - 1]
                for g in range(size):
                    q[g] += top
            else:
                row = rows[o] + size + d
                for g in range(size):
                    q[g] += row[g]
        total = 0.0
        for g in range(size):
            total += vt.candy_pmf[g] * q[g]
        mean_candy[s] = total


cdef void _candy_b_means(const ValueTables* vt, const State* st, double* mean_candy) noexcept nogil:
    """Each seat's mean candy points on side B (ranked by the others above it, each once)
    over the random split: for every gain g, the distribution of the number of others above
    (each other above with chance above[j], j = its count + g - theirs + 1, taken in seat
    order), then the mean of CANDY_B_POINTS over it; the mean over g in order of g. As in
    _candy_a_means, all g at once with the same operations in the same order for each."""
    cdef int n = st.cfg.n_players, size = vt.size
    cdef double rank_pmf[MAX_PLAYERS][MAX_SPLIT_GAIN]
    cdef double up[MAX_SPLIT_GAIN]
    cdef double stay[MAX_SPLIT_GAIN]
    cdef double q, total
    cdef int s, o, g, j, kk, i, d
    for s in range(n):
        for g in range(size):
            rank_pmf[0][g] = 1.0
        for kk in range(1, n):
            for g in range(size):
                rank_pmf[kk][g] = 0.0
        i = 0
        for o in range(n):
            if o == s:
                continue
            d = st.elems[s][KIND_CANDY] - st.elems[o][KIND_CANDY] + 1   # j = d + g
            for g in range(size):
                j = d + g
                if j < 0:
                    j = 0
                elif j > size:
                    j = size
                up[g] = vt.candy_above[j]
                stay[g] = vt.candy_not_above[j]
            i += 1
            for kk in range(i, 0, -1):
                for g in range(size):
                    rank_pmf[kk][g] = rank_pmf[kk][g] * stay[g] + rank_pmf[kk - 1][g] * up[g]
            for g in range(size):
                rank_pmf[0][g] *= stay[g]
        total = 0.0
        for g in range(size):
            q = 0.0
            for kk in range(n):
                q += rank_pmf[kk][g] * CANDY_B_POINTS[kk]
            total += vt.candy_pmf[g] * q
        mean_candy[s] = total


cdef void value_split_features(ValueTables* vt, const State* st, const int32_t (*rows)[N_SCORE_COLS],
                               double (*f)[N_VALUE_FEATURES]) noexcept nogil:
    """Fill the split_* features (VALUE_FEATURES from index 10) of every seat; rows: each
    seat's score breakdown (seat_points)."""
    cdef int n = st.cfg.n_players
    cdef double mean_candy[MAX_PLAYERS]
    cdef double mean_spider, mean_leopard, mean_base, mean_star, three, two
    cdef int s, c, slot
    cdef uint64_t candy = 1   # the candy tallies, 8 bits a seat, above a set bit
    value_tables_ready(vt, st)
    for s in range(n):
        candy = (candy << 8) | st.elems[s][KIND_CANDY]
    slot = <int>(((candy * 0x9E3779B97F4A7C15ULL) >> 32) & (CANDY_MEMO - 1))
    if vt.candy_key[slot] == candy:
        for s in range(n):
            mean_candy[s] = vt.candy_mean[slot][s]
    else:
        if st.cfg.side[KIND_CANDY] == SIDE_A:
            _candy_a_means(vt, st, mean_candy)
        else:
            _candy_b_means(vt, st, mean_candy)
        vt.candy_key[slot] = candy
        for s in range(n):
            vt.candy_mean[slot][s] = mean_candy[s]
    for s in range(n):
        c = st.elems[s][KIND_SPIDER]
        mean_spider = vt.spider_mean[c if c < 6 else 6]
        c = st.elems[s][KIND_LEOPARD]
        mean_leopard = vt.leopard_mean[c if c < 7 else 7]
        mean_base = mean_candy[s] + mean_spider + mean_leopard
        c = st.elems[s][KIND_STAR]
        two = vt.star_two[c if c < 3 else 3]
        three = vt.star_three[c if c < 3 else 3]
        if st.cfg.side[KIND_STAR] == SIDE_A:
            mean_star = -5.0 * two + three * (2.0 if st.cfg.star_a_mode == STAR_A_TWICE else 1.0) * mean_base
        else:
            mean_star = -10.0 * two
        f[s][10] = (mean_candy[s] - rows[s][COL_CANDY]) / 10.0
        f[s][11] = (mean_spider - rows[s][COL_SPIDER]) / 10.0
        f[s][12] = (mean_leopard - rows[s][COL_LEOPARD]) / 10.0
        f[s][13] = (mean_star - rows[s][COL_STAR]) / 10.0
        f[s][14] = three


cdef inline int32_t _star_points(const State* st, int t, int32_t base) noexcept nogil:
    """seat_points' star column for t face-up stars and base candy + spider + leopard points."""
    if st.cfg.side[KIND_STAR] == SIDE_A:
        if t == 2:
            return -5
        if t >= 3:
            return 2 * base if st.cfg.star_a_mode == STAR_A_TWICE else base
        return 0
    return -10 if t == 2 else 0


cdef void value_features(ValueTables* vt, const State* st, double (*f)[N_VALUE_FEATURES],
                         bint with_split=True) noexcept nogil:
    """The features of every seat (f[seat]) from the face-up tallies, weather and face-down
    cards of a round boundary; without with_split the split_* features are left at 0 (a
    value whose weights on them are all 0 does not need them). The gains are what seat_points' total gains with one or two
    more elements of a kind, in whole points as it counts them (the others' tallies as they
    are: one more candy changes only this seat's candy column; a change of candy, spider or
    leopard points moves the star column with it where that counts them, side A with three
    stars)."""
    cdef int32_t rows[MAX_PLAYERS][N_SCORE_COLS]
    cdef int32_t candy_more[3]
    cdef int32_t tens[8]
    cdef int32_t total, k
    cdef int s, o, m, v, c, sp, le, t, n = st.cfg.n_players, star_seats = 0
    cdef const int32_t* spider = SPIDER_POINTS[st.cfg.side[KIND_SPIDER]]
    cdef const int32_t* leopard = LEOPARD_POINTS[st.cfg.side[KIND_LEOPARD]]
    cdef int32_t star_k = 2 if st.cfg.star_a_mode == STAR_A_TWICE else 1
    cdef bint others_star
    for o in range(n):
        if st.elems[o][KIND_STAR] > 0:
            star_seats += 1
    for s in range(n):
        seat_points(st, s, rows[s])
        total = rows[s][COL_TOTAL]
        c = st.elems[s][KIND_CANDY]
        sp = st.elems[s][KIND_SPIDER]
        le = st.elems[s][KIND_LEOPARD]
        t = st.elems[s][KIND_STAR]
        # this seat's candy points with 1 and 2 more candies
        candy_more[1] = 0
        candy_more[2] = 0
        if st.cfg.side[KIND_CANDY] == SIDE_A:
            for o in range(n):
                v = st.elems[o][KIND_CANDY]
                if o != s:
                    if v < c + 1:
                        candy_more[1] += v
                    if v < c + 2:
                        candy_more[2] += v
        else:
            for m in range(1, 3):
                v = 0   # the rank: distinct counts of the others above this seat's
                for o in range(n):
                    if st.elems[o][KIND_CANDY] > c + m and not _candy_seen_before(st, o, n):
                        v += 1
                candy_more[m] = CANDY_B_POINTS[v]
        # the total's change per point of candy, spider or leopard
        k = 1 + star_k if st.cfg.side[KIND_STAR] == SIDE_A and t >= 3 else 1
        tens[0] = total
        tens[1] = k * (leopard[le + 1 if le + 1 < 7 else 7] - rows[s][COL_LEOPARD])
        tens[2] = k * (leopard[le + 2 if le + 2 < 7 else 7] - rows[s][COL_LEOPARD])
        tens[3] = k * (spider[sp + 1 if sp + 1 < 6 else 6] - rows[s][COL_SPIDER])
        tens[4] = k * (spider[sp + 2 if sp + 2 < 6 else 6] - rows[s][COL_SPIDER])
        tens[5] = k * (candy_more[1] - rows[s][COL_CANDY])
        tens[6] = k * (candy_more[2] - rows[s][COL_CANDY])
        tens[7] = (_star_points(st, t + 1, rows[s][COL_CANDY] + rows[s][COL_SPIDER] + rows[s][COL_LEOPARD])
                   - rows[s][COL_STAR])
        for m in range(8):   # points in tens: an exact-rounded division, vector lanes at once
            f[s][m] = tens[m] / 10.0
        others_star = star_seats - (1 if t > 0 else 0) > 0
        f[s][8] = 0.0 if others_star else f[s][7]
        f[s][9] = 1.0 if (st.cfg.side[KIND_STAR] == SIDE_B and t == 2 and not others_star) else 0.0
    if with_split:
        value_split_features(vt, st, rows, f)
        return
    for s in range(n):
        for k in range(SPLIT_FIRST, N_VALUE_FEATURES):
            f[s][k] = 0.0


cdef extern from *:
    """
    #include <immintrin.h>
    /* The first four seats' scores z[s] = sum_i w[i] f[s][i] and points pts[s] = pw[0] +
       sum_i pw[i + 1] f[s][i] (f seat-major, stride doubles a seat), the seats as vector
       lanes: each lane adds its products in the scalar loop's order, so the same numbers.
       Returns the seats done (0 or 4; the caller does the rest). */
    static inline int csl_value_dots4(const double* w, const double* pw, const double* f, int stride,
                                      int n, int nf, double* z, double* pts) {
    #if defined(__AVX2__)
        if (n < 4) return 0;
        __m128i at = _mm_setr_epi32(0, stride, 2 * stride, 3 * stride);
        __m256d zs = _mm256_setzero_pd(), ps = _mm256_set1_pd(pw[0]), fi;
        int i;
        for (i = 0; i < nf; i++) {
            fi = _mm256_i32gather_pd(f + i, at, 8);
            zs = _mm256_add_pd(zs, _mm256_mul_pd(_mm256_set1_pd(w[i]), fi));
            ps = _mm256_add_pd(ps, _mm256_mul_pd(_mm256_set1_pd(pw[i + 1]), fi));
        }
        _mm256_storeu_pd(z, zs);
        _mm256_storeu_pd(pts, ps);
        return 4;
    #else
        return 0;
    #endif
    }
    """
    int csl_value_dots4(const double* w, const double* pw, const double* f, int stride, int n, int nf,
                        double* z, double* pts) nogil


cdef void value_estimate(ValueTables* vt, const double (*w)[N_VALUE_FEATURES],
                         const double (*pw)[N_VALUE_FEATURES + 1],
                         const State* st, double* share, double* pts) noexcept nogil:
    """Each seat's chance of winning and expected final points from a round boundary
    (st.round rounds finished, more to come), under the weights w and points weights pw
    (intercept first), both by rounds left - 1; a seat already holding an outright win has it.
    vt: the tables of the sky cards still to come, remade here when they are another's."""
    cdef double f[MAX_PLAYERS][N_VALUE_FEATURES]
    cdef double z[MAX_PLAYERS]
    cdef int s, i, nf, n = st.cfg.n_players, left = st.cfg.n_rounds - st.round, outright
    cdef double top = -1e300, total = 0.0
    cdef bint with_split = False
    if left < 1:
        left = 1
    elif left > MAX_VALUE_ROUNDS:
        left = MAX_VALUE_ROUNDS
    for i in range(SPLIT_FIRST, N_VALUE_FEATURES):
        if w[left - 1][i] != 0.0 or pw[left - 1][i + 1] != 0.0:
            with_split = True
    value_features(vt, st, f, with_split)
    nf = N_VALUE_FEATURES if with_split else SPLIT_FIRST
    s = csl_value_dots4(w[left - 1], pw[left - 1], &f[0][0], N_VALUE_FEATURES, n, nf, z, pts)
    while s < n:
        z[s] = 0.0
        pts[s] = pw[left - 1][0]
        for i in range(nf):
            z[s] += w[left - 1][i] * f[s][i]
            pts[s] += pw[left - 1][i + 1] * f[s][i]
        s += 1
    for s in range(n):
        if z[s] > top:
            top = z[s]
    outright = star_b_outright(st)
    if outright >= 0:
        for s in range(n):
            share[s] = 1.0 if s == outright else 0.0
        return
    for s in range(n):
        z[s] -= top
    csl_exp_block(z, n)   # libm's exp, four seats at a time
    for s in range(n):
        total += z[s]
    for s in range(n):
        share[s] = z[s] / total


def boundary_features(CoreState state):
    """The value features of every seat (one list per seat, VALUE_FEATURES order) from the
    state's tallies."""
    cdef double f[MAX_PLAYERS][N_VALUE_FEATURES]
    cdef ValueTables vt
    vt.valid = 0
    value_features(&vt, &state.st, f)
    return [[f[s][i] for i in range(N_VALUE_FEATURES)] for s in range(state.st.cfg.n_players)]


def boundary_features_many(states):
    """boundary_features of each state in turn, with one set of tables kept from state to
    state as a search worker keeps them (remade where the sky cards still to come differ):
    the same numbers as boundary_features of each alone."""
    cdef double f[MAX_PLAYERS][N_VALUE_FEATURES]
    cdef ValueTables vt
    cdef CoreState state
    vt.valid = 0
    out = []
    for state in states:
        value_features(&vt, &state.st, f)
        out.append([[f[s][i] for i in range(N_VALUE_FEATURES)] for s in range(state.st.cfg.n_players)])
    return out


def boundary_value(CoreState state, weights, points_weights):
    """(each seat's chance of winning, each seat's expected final points) by the learned
    value with these weights (rows of N_VALUE_FEATURES, and of 1 + N_VALUE_FEATURES with the
    intercept first, by rounds left, 1 first), as the search reads it at a round boundary."""
    cdef double w[MAX_VALUE_ROUNDS][N_VALUE_FEATURES]
    cdef double pw[MAX_VALUE_ROUNDS][N_VALUE_FEATURES + 1]
    cdef double share[MAX_PLAYERS]
    cdef double pts[MAX_PLAYERS]
    cdef ValueTables vt
    vt.valid = 0
    _value_table(weights, N_VALUE_FEATURES, &w[0][0])
    _value_table(points_weights, N_VALUE_FEATURES + 1, &pw[0][0])
    value_estimate(&vt, w, pw, &state.st, share, pts)
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
