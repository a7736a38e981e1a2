# The others' hidden splits: drawn from a seat's split table (heads-up) or by its split
# mixture over every split of its sampled hand (3 to 5 players), before and after the
# round's first card.

cdef const uint64_t* pick_table_split(const SearchSpec* sp, int s, Rng* rng) noexcept nogil:
    """One whole split from seat s's split table (set_split_table), by its weights."""
    cdef int lo = 0, hi = sp.split_n[s] - 1, mid
    cdef double u = rng_unit(rng) * sp.split_cum[s][hi]
    while lo < hi:
        mid = (lo + hi) >> 1
        if sp.split_cum[s][mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return sp.split_table[s] + lo * MAX_GROUPS


cdef void draw_table_splits(const SearchSpec* sp, State* st, Rng* rng) noexcept nogil:
    """Redraw the split of each seat with a split table that has split its hand: a whole
    split is picked by weight, and its unplayed cards become the seat's piles. The table
    holds only splits consistent with the round's play, so the world stays one of the
    position; a split whose unplayed cards are not the world's cards of the seat is left
    as sampled (never the case heads-up, where the other hand is known)."""
    cdef int s, g, ng = st.cfg.n_groups
    cdef const uint64_t* row
    cdef uint64_t have, rest
    for s in range(st.cfg.n_players):
        if sp.split_n[s] == 0 or not (st.allocated_mask >> s) & 1:
            continue
        row = pick_table_split(sp, s, rng)
        have = 0
        rest = 0
        for g in range(ng):
            have |= st.pile[s][g]
            rest |= row[g] & ~sp.played_from[s][g]
        if have != rest:
            continue
        for g in range(ng):
            st.pile[s][g] = row[g] & ~sp.played_from[s][g]


cdef double MIX_TINY = 1e-250  # below this the fast draw's summed weights may have underflowed
cdef int MIX_MASKS[MAX_LINE + 1][MIX_MAX_PILE + 1][MIX_MAX_SUBSETS]
cdef int MIX_COUNT[MAX_LINE + 1][MIX_MAX_PILE + 1]


cdef void mixture_init_masks() noexcept nogil:
    """MIX_MASKS[n][k]: every mask of k of n hand positions, MIX_COUNT[n][k] of them."""
    cdef int n, k, m
    for n in range(MAX_LINE + 1):
        for k in range(MIX_MAX_PILE + 1):
            MIX_COUNT[n][k] = 0
        for m in range(1 << n):
            k = popcount(m)
            if k <= MIX_MAX_PILE:
                MIX_MASKS[n][k][MIX_COUNT[n][k]] = m
                MIX_COUNT[n][k] += 1


mixture_init_masks()


cdef enum:
    MIX_PAIRS = 22442   # sum over n <= MAX_LINE, k, k1 <= MIX_MAX_PILE of C(n, k) C(n - k, k1)

cdef int MIX_PAIR_AT[MAX_LINE + 1][MIX_MAX_PILE + 1][MIX_MAX_PILE + 1]
cdef int32_t MIX_PAIR_SECOND[MIX_PAIRS]
cdef int32_t MIX_PAIR_THIRD[MIX_PAIRS]


def _mixture_init_pairs():
    """MIX_PAIR_SECOND/THIRD from MIX_PAIR_AT[n][k][k1] on: for each first pile of k of n
    hand positions (MIX_MASKS[n][k] order, index j), every second pile of k1 of the rest
    (MIX_MASKS[n - k][k1] order, index q, laid on the rest's positions) and the third pile
    left, at q * C(n, k) + j: the q-th pair of every first pile side by side, so
    mixture_pairs_totals runs over the first piles in its inner loop."""
    cdef int n, k, k1, j, q, r, sub, at = 0
    for n in range(MAX_LINE + 1):
        for k in range(MIX_MAX_PILE + 1):
            for k1 in range(MIX_MAX_PILE + 1):
                MIX_PAIR_AT[n][k][k1] = at
                if k + k1 > n:
                    continue
                for j in range(MIX_COUNT[n][k]):
                    r = ((1 << n) - 1) ^ MIX_MASKS[n][k][j]
                    for q in range(MIX_COUNT[n - k][k1]):
                        sub = <int>csl_pdep(<uint64_t>MIX_MASKS[n - k][k1][q], <uint64_t>r)
                        MIX_PAIR_SECOND[at + q * MIX_COUNT[n][k] + j] = sub
                        MIX_PAIR_THIRD[at + q * MIX_COUNT[n][k] + j] = r ^ sub
                at += MIX_COUNT[n][k] * MIX_COUNT[n - k][k1]
    if at != MIX_PAIRS:
        raise RuntimeError(f"MIX_PAIRS is {MIX_PAIRS}, the tables need {at}")


_mixture_init_pairs()


cdef inline double mixture_pile_capped(double synergy, const double* win, const int* colour, int size,
                                       int m) noexcept nogil:
    """The heuristic agent's expected tricks of the pile of hand positions m
    (csl_ai.evaluation.HandEvaluator.pile_scores): its cards' chances, a bonus per blue
    where a side colour is missing, capped at the group's size."""
    cdef double expected = 0.0
    cdef int i, blues = 0, sides = 0
    cdef uint64_t rest = <uint64_t>m
    while rest:
        i = lowest_card(rest)
        rest &= rest - 1
        expected += win[i]
        if colour[i] == BLUE:
            blues += 1
        else:
            sides |= 1 << colour[i]
    if sides != 6:
        expected += synergy * blues
    return expected if expected < size else <double>size


cdef void mixture_pile_logits(const SearchSpec* sp, const State* st, int s, int component,
                              const int* cards, int n, double* logit, bint scaled) noexcept nogil:
    """logit[g * MIX_STRIDE + m]: the log-weight of the pile of hand positions m (m of the
    group's size) in group g, under the worth part (component 0) or the allocation model
    (1); a split's log-weight is the sum over its piles. scaled: the weight instead, scaled
    by the group's largest, exp(log-weight - top) (libm's numbers, fastexp.pxi), so a
    split's scaled weight is the product of its piles'. cards: the seat's hand, lowest
    first (so the pile of positions m is nth_bits(hand, m)). The worth part weighs a pile's
    capped expected tricks by the group's sky worths, the best ones (each trick's share of
    one) and an average one blended by mix_top_share. A pile's expected tricks and its
    allocation-model parts do not depend on its group, so groups of one size share them,
    and each group's row is made a pile at a time over contiguous arrays (vector lanes)."""
    cdef double win[MAX_LINE]
    cdef double share[MIX_MAX_PILE][MIX_MAX_SUBSETS]
    cdef double blend[MIX_MAX_SUBSETS]
    cdef double parts[N_SPLIT_FEATURES][MIX_MAX_SUBSETS]
    cdef double out[MIX_MAX_SUBSETS]
    cdef double f[N_SPLIT_FEATURES]
    cdef int colour[MAX_LINE]
    cdef uint64_t unseen = st.cfg.rain_in_use & ~st.hand[s]
    cdef int i, g, j, c, hi, k, count, capped_k = -1, parts_k = -1
    cdef double total, worth, x, v, beta = sp.mix_beta, top_share = sp.mix_top_share
    cdef const double* vals
    cdef const double* w = sp.mix_model_w
    cdef const int* masks
    for i in range(n):
        c = cards[i]
        colour[i] = card_colour(c)
        hi = popcount(unseen & colour_mask(colour[i]) & ~((bit(c) << 1) - 1))
        win[i] = sp.mix_blue_win[hi] if colour[i] == BLUE else sp.mix_side_win[hi]
    for g in range(st.cfg.n_groups):
        k = st.cfg.group_size[g]
        count = MIX_COUNT[n][k]
        masks = MIX_MASKS[n][k]
        if component == 0:
            if k != capped_k:
                for j in range(count):
                    blend[j] = mixture_pile_capped(sp.mix_synergy, win, colour, k, masks[j])
                for i in range(k):   # each trick's share of the pile's capped tricks, a row at a time
                    for j in range(count):
                        x = blend[j] - i
                        share[i][j] = 0.0 if x < 0.0 else 1.0 if x > 1.0 else x
                for j in range(count):
                    blend[j] = (1.0 - top_share) * blend[j]
                capped_k = k
            vals = sp.mix_vals[s][g]
            total = 0.0
            for i in range(k):
                total += vals[i]
            for j in range(count):
                out[j] = 0.0
            for i in range(k):
                v = vals[i]
                for j in range(count):
                    out[j] += v * share[i][j]
            for j in range(count):
                out[j] = beta * (top_share * out[j] + blend[j] * total / k)
        else:
            if k != parts_k:
                for j in range(count):
                    for i in range(N_SPLIT_FEATURES):
                        f[i] = 0.0
                    pile_features_of(&sp.policy, nth_bits(st.hand[s], <uint64_t>masks[j]), 1.0, f)
                    for i in range(N_SPLIT_FEATURES):
                        parts[i][j] = f[i]
                parts_k = k
            worth = group_sky_worth(st, &sp.policy, s, g)
            for j in range(count):   # the pile's features dotted with w, term by term
                out[j] = 0.0 + w[0] * (worth * parts[0][j]) + w[1] * (worth * parts[1][j]) + w[2] * parts[2][j] + w[3] * parts[3][j]
        if scaled:
            csl_scaled_row(out, count)
        for j in range(count):
            logit[g * MIX_STRIDE + masks[j]] = out[j]


cdef int mixture_pick(const double* weight, const int* masks, int count, double total, Rng* rng) noexcept nogil:
    """One of masks by weight (total: their sum)."""
    cdef double u = rng_unit(rng) * total, acc = 0.0
    cdef int i
    for i in range(count - 1):
        acc += weight[i]
        if u < acc:
            return masks[i]
    return masks[count - 1]


cdef double mixture_pairs(const double* logit, int r, int rest_n, int k1, int* masks, double* weight) noexcept nogil:
    """The splits of the hand positions r (rest_n of them) into the second group's pile (k1
    positions) and the third's: each second pile's mask and its weight (the product of the
    two piles' weights in logit), and their sum."""
    cdef double total = 0.0
    cdef int q, sub
    for q in range(MIX_COUNT[rest_n][k1]):
        sub = <int>csl_pdep(<uint64_t>MIX_MASKS[rest_n][k1][q], <uint64_t>r)
        masks[q] = sub
        weight[q] = logit[MIX_STRIDE + sub] * logit[2 * MIX_STRIDE + (r ^ sub)]
        total += weight[q]
    return total


cdef extern from *:
    """
    #include <immintrin.h>
    /* inner[j] = sum over q of second[second_of[q * count + j]] * third[third_of[q * count + j]],
       each sum in q order: lanes are first piles, so a vector add keeps every sum's order. */
    static inline void csl_pairs_totals(const double* second, const double* third, const int32_t* second_of,
                                        const int32_t* third_of, int count, int pairs, double* inner) {
        int j, q;
        for (j = 0; j < count; j++) inner[j] = 0.0;
        for (q = 0; q < pairs; q++, second_of += count, third_of += count) {
            j = 0;
    #if defined(__AVX512F__)
            for (; j + 8 <= count; j += 8) {
                __m512d a = _mm512_i32gather_pd(_mm256_loadu_si256((const __m256i*)(second_of + j)), second, 8);
                __m512d b = _mm512_i32gather_pd(_mm256_loadu_si256((const __m256i*)(third_of + j)), third, 8);
                _mm512_storeu_pd(inner + j, _mm512_add_pd(_mm512_loadu_pd(inner + j), _mm512_mul_pd(a, b)));
            }
    #endif
    #if defined(__AVX2__)
            for (; j + 4 <= count; j += 4) {
                __m256d a = _mm256_i32gather_pd(second, _mm_loadu_si128((const __m128i*)(second_of + j)), 8);
                __m256d b = _mm256_i32gather_pd(third, _mm_loadu_si128((const __m128i*)(third_of + j)), 8);
                _mm256_storeu_pd(inner + j, _mm256_add_pd(_mm256_loadu_pd(inner + j), _mm256_mul_pd(a, b)));
            }
    #endif
            for (; j < count; j++) inner[j] += second[second_of[j]] * third[third_of[j]];
        }
    }
    """
    void csl_pairs_totals(const double* second, const double* third, const int32_t* second_of,
                          const int32_t* third_of, int count, int pairs, double* inner) nogil


cdef inline void mixture_pairs_totals(const double* logit, int n, int k, int k1, double* inner) noexcept nogil:
    """inner[j]: mixture_pairs' sum for the rest of first pile MIX_MASKS[n][k][j] (the same
    products added in the same order), for every j at once from the pair tables: the first
    piles are the vector lanes (gathers where the CPU has AVX2 or AVX-512, which GCC does
    not emit for it by itself)."""
    csl_pairs_totals(logit + MIX_STRIDE, logit + 2 * MIX_STRIDE, &MIX_PAIR_SECOND[MIX_PAIR_AT[n][k][k1]],
                     &MIX_PAIR_THIRD[MIX_PAIR_AT[n][k][k1]], MIX_COUNT[n][k], MIX_COUNT[n - k][k1], inner)


# One seat's split-mixture tables for one hand (mixture_allocate), kept while a pool's
# worlds share the seat's hand, so each further split of it costs two picks.
ctypedef struct MixDraw:
    uint64_t hand                              # the hand these are for
    int32_t made[2]                            # component c's tables made for it
    double total[2]                            # the first piles' summed weight
    double weight[2][MIX_MAX_SUBSETS]          # each first pile's weight times its rest's
    double logit[2][MAX_GROUPS * MIX_STRIDE]   # each pile's scaled weight


cdef MixDraw* mix_draws_new(int n) noexcept nogil:
    """n seats' MixDraw, none made yet (free with free); NULL out of memory."""
    cdef MixDraw* draws = <MixDraw*>malloc(n * sizeof(MixDraw))
    cdef int s
    if draws != NULL:
        for s in range(n):
            draws[s].hand = 0
            draws[s].made[0] = 0
            draws[s].made[1] = 0
    return draws


cdef double mixture_first_weights(const SearchSpec* sp, const State* st, int s, int component,
                                  const int* cards, int n, double* logit, double* weight) noexcept nogil:
    """The piles' scaled weights under component (logit, see mixture_pile_logits) and each
    first pile's weight times the summed weights of the rest's splits (weight, in
    MIX_MASKS order); their sum."""
    cdef double inner[MIX_MAX_SUBSETS]
    cdef double total = 0.0
    cdef int j, m, ng = st.cfg.n_groups, full = (1 << n) - 1
    cdef int k = st.cfg.group_size[0], k1 = st.cfg.group_size[1]
    mixture_pile_logits(sp, st, s, component, cards, n, logit, True)
    if ng == 3:
        mixture_pairs_totals(logit, n, k, k1, inner)
    for j in range(MIX_COUNT[n][k]):
        m = MIX_MASKS[n][k][j]
        weight[j] = logit[m] * (logit[MIX_STRIDE + (full ^ m)] if ng == 2 else inner[j])
        total += weight[j]
    return total


cdef void mixture_allocate(const SearchSpec* sp, const State* st, int s, Rng* rng, uint64_t* piles,
                           MixDraw* draw) noexcept nogil:
    """Seat s's split of its hand by the split mixture: with chance mix_share[s][0] exactly
    from a softmax over every split of the heuristic's worth at mix_beta, with
    mix_share[s][1] from the allocation model, with mix_share[s][2] the rules' split
    (rules_allocate), else uniformly. The first two scores are sums over
    piles, so a pile is drawn for the first group by its weight times the summed weights of
    the rest's splits, then the next: exact, every split weighed, no chain. draw (or NULL):
    the seat's tables, made once a hand and component (the same numbers)."""
    cdef double own_logit[MAX_GROUPS * MIX_STRIDE]
    cdef double own_weight[MIX_MAX_SUBSETS]
    cdef double pair_weight[MIX_MAX_SUBSETS]
    cdef int masks[MIX_MAX_SUBSETS]
    cdef int cards[N_RAIN]
    cdef double* logit = own_logit
    cdef double* weight = own_weight
    cdef double u = rng_unit(rng), total
    cdef int component, n, r, k, k1, full, first, second, ng = st.cfg.n_groups
    if u < sp.mix_share[s][0]:
        component = 0
    elif u < sp.mix_share[s][0] + sp.mix_share[s][1]:
        component = 1
    elif u < sp.mix_share[s][0] + sp.mix_share[s][1] + sp.mix_share[s][2]:
        rules_allocate(st, &sp.policy, s, piles)
        return
    else:
        random_allocation(&st.cfg, st.hand[s], rng, piles)
        return
    n = _cards_of(st.hand[s], cards)
    if ng < 2 or n > MAX_LINE:
        random_allocation(&st.cfg, st.hand[s], rng, piles)
        return
    full = (1 << n) - 1
    k = st.cfg.group_size[0]
    k1 = st.cfg.group_size[1]
    if draw == NULL:
        total = mixture_first_weights(sp, st, s, component, cards, n, logit, weight)
    else:
        if draw.hand != st.hand[s]:
            draw.hand = st.hand[s]
            draw.made[0] = 0
            draw.made[1] = 0
        logit = draw.logit[component]
        weight = draw.weight[component]
        if not draw.made[component]:
            draw.total[component] = mixture_first_weights(sp, st, s, component, cards, n, logit, weight)
            draw.made[component] = 1
        total = draw.total[component]
    if not total > MIX_TINY:
        mixture_allocate_logs(sp, st, s, component, cards, n, rng, piles)
        return
    first = mixture_pick(weight, MIX_MASKS[n][k], MIX_COUNT[n][k], total, rng)
    r = full ^ first
    if ng == 2:
        second = r
    else:
        total = mixture_pairs(logit, r, n - k, k1, masks, pair_weight)
        second = mixture_pick(pair_weight, masks, MIX_COUNT[n - k][k1], total, rng)
    mixture_piles(st, cards, n, first, second, piles)


cdef inline void mixture_piles(const State* st, const int* cards, int n, int first, int second,
                               uint64_t* piles) noexcept nogil:
    """The piles of a split given as the hand positions of its first two groups."""
    cdef int g, m
    for g in range(st.cfg.n_groups):
        piles[g] = 0
    for m in range(n):
        g = 0 if (first >> m) & 1 else 1 if (second >> m) & 1 else 2
        piles[g] |= bit(cards[m])


cdef void mixture_allocate_logs(const SearchSpec* sp, const State* st, int s, int component,
                                const int* cards, int n, Rng* rng, uint64_t* piles) noexcept nogil:
    """mixture_allocate's draw with every split's log-weight summed first: slower, but
    exact where the per-group scaling of the fast draw would underflow (piles that each
    group wants most but that clash, at a high inverse temperature)."""
    cdef double logit[MAX_GROUPS * MIX_STRIDE]
    cdef double score[MAX_CANDIDATES]
    cdef int first_of[MAX_CANDIDATES]
    cdef int second_of[MAX_CANDIDATES]
    cdef double top = -1e300, total = 0.0, u, acc = 0.0
    cdef int j, q, m, r, sub, pick, count = 0, full = (1 << n) - 1, ng = st.cfg.n_groups
    cdef int k = st.cfg.group_size[0], k1 = st.cfg.group_size[1]
    mixture_pile_logits(sp, st, s, component, cards, n, &logit[0], False)
    for j in range(MIX_COUNT[n][k]):
        m = MIX_MASKS[n][k][j]
        r = full ^ m
        for q in range(MIX_COUNT[n - k][k1] if ng == 3 else 1):
            sub = <int>csl_pdep(<uint64_t>MIX_MASKS[n - k][k1][q], <uint64_t>r) if ng == 3 else r
            score[count] = logit[m] + logit[MIX_STRIDE + sub] + (logit[2 * MIX_STRIDE + (r ^ sub)] if ng == 3 else 0.0)
            first_of[count] = m
            second_of[count] = sub
            if score[count] > top:
                top = score[count]
            count += 1
    for j in range(count):
        score[j] = exp(score[j] - top)
        total += score[j]
    u = rng_unit(rng) * total
    pick = count - 1
    for j in range(count - 1):
        acc += score[j]
        if u < acc:
            pick = j
            break
    mixture_piles(st, cards, n, first_of[pick], second_of[pick], piles)


cdef void allocate_modelled(const SearchSpec* sp, const State* st, int s, Rng* rng, uint64_t* piles,
                            MixDraw* draw) noexcept nogil:
    """How another seat still to split does so in the tree: from its split table where it
    has one that splits this hand, else by the split mixture where it has one
    (mixture_allocate, with the seat's tables draw or NULL), but by the rules with the
    seat's exact chance; otherwise by the rules (policy_allocate)."""
    cdef const uint64_t* row
    cdef uint64_t whole = 0
    cdef int g, ng = st.cfg.n_groups
    if (sp.split_n[s] > 0 or sp.mix_on[s]) and (
            sp.exact_threshold[s] == 0 or rng_next(rng) >= sp.exact_threshold[s]):
        if sp.split_n[s] == 0:
            mixture_allocate(sp, st, s, rng, piles, draw)
            return
        row = pick_table_split(sp, s, rng)
        for g in range(ng):
            whole |= row[g]
        if whole == st.hand[s]:
            for g in range(ng):
                piles[g] = row[g]
            return
    policy_allocate(st, &sp.policy, s, rng, piles)


cdef double mixture_scaled_total(const double* weight, int n, int ng, int k, int k1) noexcept nogil:
    """The summed weight of every split of n hand positions under the piles' scaled weights
    (mixture_pile_logits' scaled: a split's scaled weight is the product of its piles'), by
    the same product form as mixture_allocate's draw; 0 where that scaled sum underflows."""
    cdef double inner[MIX_MAX_SUBSETS]
    cdef double total = 0.0
    cdef int j, m, full = (1 << n) - 1
    if ng == 3:
        mixture_pairs_totals(weight, n, k, k1, inner)
    for j in range(MIX_COUNT[n][k]):
        m = MIX_MASKS[n][k][j]
        total += weight[m] * (weight[MIX_STRIDE + (full ^ m)] if ng == 2 else inner[j])
    return total if total > MIX_TINY else 0.0


cdef double mixture_log_total_exact(const double* logit, int n, int ng, int k, int k1) noexcept nogil:
    """The log of the summed weight exp(log-weight) of every split of n hand positions
    under the pile log-weights logit, split by split in the log domain (where
    mixture_scaled_total underflows)."""
    cdef double top = -1e300, total = 0.0, v
    cdef int j, q, m, r, sub, full = (1 << n) - 1, pass_
    for pass_ in range(2):
        for j in range(MIX_COUNT[n][k]):
            m = MIX_MASKS[n][k][j]
            r = full ^ m
            for q in range(MIX_COUNT[n - k][k1] if ng == 3 else 1):
                sub = <int>csl_pdep(<uint64_t>MIX_MASKS[n - k][k1][q], <uint64_t>r) if ng == 3 else r
                v = logit[m] + logit[MIX_STRIDE + sub] + (logit[2 * MIX_STRIDE + (r ^ sub)] if ng == 3 else 0.0)
                if pass_ == 0:
                    if v > top:
                        top = v
                else:
                    total += exp(v - top)
    return top + log(total)


# One seat's split mixture given the round's play, for one round hand (mixture_fit).
ctypedef struct MixFit:
    uint64_t hand                    # the round hand these are for (0: none yet)
    int32_t n
    int32_t whole                    # 1: every split fits (no card played, no void shown)
    int32_t count                    # splits that fit
    int cards[MAX_LINE]
    int32_t first_of[MAX_CANDIDATES]   # each such split: its first two piles' hand positions
    int32_t second_of[MAX_CANDIDATES]
    double cum[2][MAX_CANDIDATES]    # their cumulative weights under the worth part and the model
    double part[4]                   # each part's share times its chance of a split that fits
    uint64_t rules[MAX_GROUPS]       # the rules' split (part 2), where it fits
    double likelihood                # the sum of part
    double weight                    # the hand's importance weight against the sampler


cdef void mixture_fit(const SearchSpec* sp, const State* st, int s, MixFit* fit) noexcept nogil:
    """Seat s's split mixture given the round's play so far, for its round hand in st:
    every split that holds the cards it played from each pile and none of a colour it has
    shown a pile lacks, with its weight under each part; each part's share times its
    chance of such a split (a seat whose rules' split would have played otherwise is not
    playing by the rules). The sampler's chance of a hand goes with how many of its splits
    fit, so the hand's importance weight is the mixture's chance of a split that fits over
    that count (times all splits)."""
    cdef double logit[MAX_GROUPS * MIX_STRIDE]
    cdef int cards[N_RAIN]
    cdef int need[MAX_GROUPS]
    cdef int bar[MAX_GROUPS]
    cdef double top, total, all_w, log_fit, e
    cdef int n, g, h, i, j, q, m, r, sub, third, c, count = 0, full, all_n
    cdef int ng = st.cfg.n_groups, k, k1
    cdef bint fits
    fit.hand = st.hand[s]
    fit.whole = 0
    fit.count = 0
    fit.likelihood = 0.0
    fit.weight = 1.0
    n = _cards_of(st.hand[s], cards)
    fit.n = n
    if ng < 2 or n > MAX_LINE:
        fit.whole = 1
        return
    for i in range(n):
        fit.cards[i] = cards[i]
    k = st.cfg.group_size[0]
    k1 = st.cfg.group_size[1] if ng == 3 else n - k
    full = (1 << n) - 1
    for g in range(ng):
        need[g] = 0
        bar[g] = 0
    for i in range(n):
        for g in range(ng):
            if (sp.played_from[s][g] >> cards[i]) & 1:
                need[g] |= 1 << i
    for i in range(n):
        c = card_colour(cards[i])
        for g in range(ng):
            for h in range(ng):
                if h != g and (need[h] >> i) & 1:
                    bar[g] |= 1 << i
            if not (need[g] >> i) & 1 and (sp.pile_void[s][g] >> c) & 1:
                bar[g] |= 1 << i
    for j in range(MIX_COUNT[n][k]):
        m = MIX_MASKS[n][k][j]
        if (m & need[0]) != need[0] or m & bar[0]:
            continue
        r = full ^ m
        for q in range(MIX_COUNT[n - k][k1] if ng == 3 else 1):
            sub = <int>csl_pdep(<uint64_t>MIX_MASKS[n - k][k1][q], <uint64_t>r) if ng == 3 else r
            third = r ^ sub
            if (sub & need[1]) != need[1] or sub & bar[1]:
                continue
            if ng == 3 and ((third & need[2]) != need[2] or third & bar[2]):
                continue
            fit.first_of[count] = m
            fit.second_of[count] = sub
            count += 1
    fit.count = count
    all_n = MIX_COUNT[n][k] * (MIX_COUNT[n - k][k1] if ng == 3 else 1)
    if count == 0 or count == all_n:
        fit.whole = 1
        return
    e = <double>sp.exact_threshold[s] / 18446744073709551616.0
    fit.part[0] = (1.0 - e) * sp.mix_share[s][0]
    fit.part[1] = (1.0 - e) * sp.mix_share[s][1]
    fit.part[2] = e + (1.0 - e) * sp.mix_share[s][2]
    fit.part[3] = 1.0 - fit.part[0] - fit.part[1] - fit.part[2]
    for c in range(2):
        if fit.part[c] <= 0.0:
            continue
        mixture_pile_logits(sp, st, s, c, cards, n, &logit[0], True)
        all_w = mixture_scaled_total(&logit[0], n, ng, k, k1)
        if all_w > 0.0:
            total = 0.0
            for j in range(count):
                m = fit.first_of[j]
                sub = fit.second_of[j]
                total += logit[m] * logit[MIX_STRIDE + sub] * (
                    logit[2 * MIX_STRIDE + (full ^ m ^ sub)] if ng == 3 else 1.0)
                fit.cum[c][j] = total
            fit.part[c] *= total / all_w
            continue
        mixture_pile_logits(sp, st, s, c, cards, n, &logit[0], False)
        top = -1e300
        for j in range(count):
            m = fit.first_of[j]
            sub = fit.second_of[j]
            fit.cum[c][j] = logit[m] + logit[MIX_STRIDE + sub] + (
                logit[2 * MIX_STRIDE + (full ^ m ^ sub)] if ng == 3 else 0.0)
            if fit.cum[c][j] > top:
                top = fit.cum[c][j]
        total = 0.0
        for j in range(count):
            total += exp(fit.cum[c][j] - top)
            fit.cum[c][j] = total
        log_fit = log(total) + top - mixture_log_total_exact(&logit[0], n, ng, k, k1)
        fit.part[c] *= exp(log_fit) if log_fit < 0.0 else 1.0
    if fit.part[2] > 0.0:
        rules_allocate(st, &sp.policy, s, fit.rules)
        fits = True
        for g in range(ng):
            if (fit.rules[g] & sp.played_from[s][g]) != sp.played_from[s][g]:
                fits = False
            for c in range(N_COLOURS):
                if (sp.pile_void[s][g] >> c) & 1 and fit.rules[g] & ~sp.played_from[s][g] & colour_mask(c):
                    fits = False
        if not fits:
            fit.part[2] = 0.0
    fit.part[3] *= <double>count / all_n
    fit.likelihood = fit.part[0] + fit.part[1] + fit.part[2] + fit.part[3]
    fit.weight = fit.likelihood * all_n / count


cdef int pick_cumulative(const double* cum, int count, Rng* rng) noexcept nogil:
    """An index by the weights whose running sums are cum (binary search)."""
    cdef double u = rng_unit(rng) * cum[count - 1]
    cdef int lo = 0, hi = count - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if cum[mid] > u:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef double mixture_fit_draw(const SearchSpec* sp, State* st, int s, const MixFit* fit, Rng* rng,
                             MixDraw* draw) noexcept nogil:
    """Redraw seat s's unplayed cards among its piles from fit (its round hand's, see
    mixture_fit): a part by its share times its chance of a split that fits, then a split
    that fits by the part's weight (alike: uniformly); the hand's importance weight. Where
    every split fits, the mixture's own draw (allocate_modelled, with the seat's tables
    draw or NULL); where none does (never in a world of the position), the split stays."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef double u, acc = 0.0
    cdef int g, c, chosen = 3, pick, ng = st.cfg.n_groups
    if fit.whole:
        if fit.count > 0:
            allocate_modelled(sp, st, s, rng, piles, draw)
            for g in range(ng):
                st.pile[s][g] = piles[g]
        return 1.0
    if not fit.likelihood > 0.0:
        return 0.0
    u = rng_unit(rng) * fit.likelihood
    for c in range(3):
        acc += fit.part[c]
        if u < acc:
            chosen = c
            break
    if chosen == 2:
        for g in range(ng):
            piles[g] = fit.rules[g]
    else:
        pick = rng_below(rng, fit.count) if chosen == 3 else pick_cumulative(fit.cum[chosen], fit.count, rng)
        mixture_piles(st, fit.cards, fit.n, fit.first_of[pick], fit.second_of[pick], piles)
    for g in range(ng):
        st.pile[s][g] = piles[g] & ~sp.played_from[s][g]
    return fit.weight


cdef void condition_mixture_splits(const SearchSpec* sp, State* st, Rng* rng, MixFit* fits,
                                   MixDraw* draws) noexcept nogil:
    """After the round's first card, each other seat with a split mixture splits its sampled
    hand by it given the play so far (mixture_fit, mixture_fit_draw; fits[s] and draws[s]
    are reused while the seat's hand is the one they were made for)."""
    cdef int s
    if st.line_pos == 0 and st.n_in_trick == 0 or st.phase != PHASE_PLAY:
        return
    for s in range(st.cfg.n_players):
        if s != sp.root_seat and sp.mix_on[s] and sp.split_n[s] == 0 and (st.allocated_mask >> s) & 1:
            if fits[s].hand != st.hand[s]:
                mixture_fit(sp, st, s, &fits[s])
            mixture_fit_draw(sp, st, s, &fits[s], rng, &draws[s])
