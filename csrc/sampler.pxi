# The world sampler: full determinized States drawn exactly uniformly from one seat's view.
# Included by _core.pyx after CoreState; C-level parts are nogil and free of Python objects.
#
# Method. What the observer does not see is a set of "slots": one per hidden pile (seat s,
# group g) with the colours that seat has shown it lacks there excluded; one per whole hand
# of a seat that has not allocated yet (observer still allocating: no plays, no voids); and
# the 5-player set-aside card. Every constraint is per colour, so a world is a colour-count
# matrix (how many unseen cards of each colour go to each slot) times a uniform choice of
# which cards of each colour. ways[i][rB][rR] counts the worlds that fill slots i.. from rB
# blue, rR red and rG (implied by the slot sizes) green unseen cards:
#     ways[i][r] = sum over (a, b, c) fitting slot i of C(rB,a) C(rR,b) C(rG,c) ways[i+1][r - (a,b,c)].
# Drawing slot by slot by inverse CDF on this table (tabulated once per observation as
# cumulative weights of each slot's colour splits, per remaining count), then dealing each
# colour's cards by a partial uniform shuffle, gives every consistent world the same
# probability; nothing is rejected. The unseen sky cards are shuffled uniformly too.
# The table is in doubles: counts stay below 2^53 (at most about 5e14 worlds) so the weights
# are exact, and the only departure from exact uniformity is the rounding of one uniform
# double per slot (relative error about 1e-16).

from libc.stdlib cimport calloc, malloc, free, realloc, qsort
from libc.stdint cimport int16_t, int64_t

cdef extern from "math.h" nogil:
    double log(double x)
    double sqrt(double x)
    double pow(double x, double y)

cdef enum:
    MAX_SLOTS = 16
    MAX_OPTS = 91
    N_STATES = (MAX_RANK + 1) * (MAX_RANK + 1)
    SLOT_PILE = 0
    SLOT_HAND = 1
    SLOT_ASIDE = 2
    SAMPLE_OK = 0
    SAMPLE_NO_WORLD = 1

cdef double BINOM[MAX_RANK + 1][MAX_RANK + 1]


cdef void _init_binomials() noexcept nogil:
    cdef int n, k
    for n in range(MAX_RANK + 1):
        for k in range(MAX_RANK + 1):
            BINOM[n][k] = 0.0
        BINOM[n][0] = 1.0
        for k in range(1, n + 1):
            BINOM[n][k] = BINOM[n - 1][k - 1] + (BINOM[n - 1][k] if k <= n - 1 else 0.0)

_init_binomials()


ctypedef struct Sampler:
    State base      # the observer's knowledge: its own cards, public facts, others' piles empty
    int32_t observer
    int32_t n_slots
    int8_t slot_kind[MAX_SLOTS]
    int8_t slot_seat[MAX_SLOTS]
    int8_t slot_group[MAX_SLOTS]
    int8_t slot_size[MAX_SLOTS]
    int8_t slot_allow[MAX_SLOTS]
    int8_t slot_total[MAX_SLOTS + 1]
    int8_t n_col[N_COLOURS]
    int8_t col_card[N_COLOURS][MAX_RANK]
    int32_t sky_from
    int32_t n_opt[MAX_SLOTS]
    int8_t opt[MAX_SLOTS][MAX_OPTS][N_COLOURS]
    int64_t cum_base[MAX_SLOTS]
    double* cum         # per slot and remaining (rB, rR): cumulative weights of its options
    double ways[MAX_SLOTS + 1][MAX_RANK + 1][MAX_RANK + 1]


cdef int sampler_prepare(Sampler* sm, uint64_t unseen) noexcept nogil:
    """Fill the colour lists and the ways table once the slots are set; SAMPLE_NO_WORLD if
    no world fits the observation."""
    cdef int i, c, k, a, b, cc, rb, rr, rg, t, allow
    cdef double total
    cdef uint64_t m
    for c in range(N_COLOURS):
        m = unseen & colour_mask(c)
        sm.n_col[c] = popcount(m)
        k = 0
        while m:
            sm.col_card[c][k] = lowest_card(m)
            m &= m - 1
            k += 1
    sm.slot_total[sm.n_slots] = 0
    for i in range(sm.n_slots - 1, -1, -1):
        sm.slot_total[i] = sm.slot_total[i + 1] + sm.slot_size[i]
    if sm.slot_total[0] != sm.n_col[0] + sm.n_col[1] + sm.n_col[2]:
        return SAMPLE_NO_WORLD
    memset(sm.ways, 0, sizeof(sm.ways))
    sm.ways[sm.n_slots][0][0] = 1.0
    for i in range(sm.n_slots - 1, -1, -1):
        t = sm.slot_total[i]
        k = sm.slot_size[i]
        allow = sm.slot_allow[i]
        for rb in range(min(sm.n_col[0], t) + 1):
            for rr in range(min(sm.n_col[1], t - rb) + 1):
                rg = t - rb - rr
                if rg > sm.n_col[2]:
                    continue
                total = 0.0
                for a in range(min(k, rb) + 1):
                    if a and not (allow & 1):
                        break
                    for b in range(min(k - a, rr) + 1):
                        if b and not (allow & 2):
                            break
                        cc = k - a - b
                        if cc > rg or (cc and not (allow & 4)):
                            continue
                        total += (BINOM[rb][a] * BINOM[rr][b] * BINOM[rg][cc]
                                  * sm.ways[i + 1][rb - a][rr - b])
                sm.ways[i][rb][rr] = total
    if sm.ways[0][sm.n_col[0]][sm.n_col[1]] <= 0.0:
        return SAMPLE_NO_WORLD
    return _sampler_tables(sm)


cdef int _sampler_tables(Sampler* sm) noexcept nogil:
    """List each slot's feasible colour splits and tabulate their cumulative weights per
    remaining (rB, rR), so a draw is one scan of a short row per slot."""
    cdef int i, j, a, b, cc, k, allow, rb, rr, rg, t
    cdef int64_t size = 0
    cdef double acc
    cdef double* row
    for i in range(sm.n_slots):
        k = sm.slot_size[i]
        allow = sm.slot_allow[i]
        j = 0
        for a in range(k + 1):
            if a and not (allow & 1):
                break
            for b in range(k - a + 1):
                if b and not (allow & 2):
                    break
                cc = k - a - b
                if cc and not (allow & 4):
                    continue
                if j >= MAX_OPTS:
                    return SAMPLE_NO_WORLD
                sm.opt[i][j][0] = a
                sm.opt[i][j][1] = b
                sm.opt[i][j][2] = cc
                j += 1
        if j == 0:
            return SAMPLE_NO_WORLD
        sm.n_opt[i] = j
        sm.cum_base[i] = size
        size += N_STATES * j
    free(sm.cum)
    sm.cum = <double*>malloc((size if size > 0 else 1) * sizeof(double))
    if sm.cum == NULL:
        return SAMPLE_NO_WORLD
    for i in range(sm.n_slots):
        t = sm.slot_total[i]
        for rb in range(MAX_RANK + 1):
            for rr in range(MAX_RANK + 1):
                row = &sm.cum[sm.cum_base[i] + (rb * (MAX_RANK + 1) + rr) * sm.n_opt[i]]
                rg = t - rb - rr
                acc = 0.0
                for j in range(sm.n_opt[i]):
                    a = sm.opt[i][j][0]
                    b = sm.opt[i][j][1]
                    cc = sm.opt[i][j][2]
                    if (rb <= sm.n_col[0] and rr <= sm.n_col[1] and 0 <= rg <= sm.n_col[2]
                            and a <= rb and b <= rr and cc <= rg):
                        acc += (BINOM[rb][a] * BINOM[rr][b] * BINOM[rg][cc]
                                * sm.ways[i + 1][rb - a][rr - b])
                    row[j] = acc
    return SAMPLE_OK


cdef inline double sampler_worlds(const Sampler* sm) noexcept nogil:
    """How many distinct card placements fit the observation (sky order not counted)."""
    return sm.ways[0][sm.n_col[0]][sm.n_col[1]]


cdef void sampler_draw(const Sampler* sm, Rng* rng, State* out) noexcept nogil:
    """One world, uniform among those consistent with the observation, written to out."""
    cdef int8_t cards[N_COLOURS][MAX_RANK]
    cdef int r[N_COLOURS]
    cdef int pos[N_COLOURS]
    cdef int c, i, j, t, x, no, s, n_sky, take
    cdef double u
    cdef const double* row
    cdef uint64_t mask
    cdef int8_t tmp8
    cdef uint8_t tmp
    out[0] = sm.base
    memcpy(cards, sm.col_card, sizeof(cards))
    for c in range(N_COLOURS):
        r[c] = sm.n_col[c]
        pos[c] = 0
    for i in range(sm.n_slots):
        no = sm.n_opt[i]
        row = &sm.cum[sm.cum_base[i] + (r[0] * (MAX_RANK + 1) + r[1]) * no]
        u = rng_unit(rng) * row[no - 1]
        j = 0
        while j < no - 1 and u >= row[j]:
            j += 1
        while j > 0 and row[j] <= row[j - 1]:
            j -= 1
        mask = 0
        for c in range(N_COLOURS):
            take = sm.opt[i][j][c]
            for t in range(take):
                x = pos[c] + <int>rng_below(rng, r[c])
                tmp8 = cards[c][x]; cards[c][x] = cards[c][pos[c]]; cards[c][pos[c]] = tmp8
                mask |= bit(tmp8)
                pos[c] += 1
                r[c] -= 1
        s = sm.slot_seat[i]
        if sm.slot_kind[i] == SLOT_PILE:
            out.pile[s][sm.slot_group[i]] = mask
            out.hand[s] |= mask
        elif sm.slot_kind[i] == SLOT_HAND:
            out.hand[s] = mask
        else:
            out.set_aside = mask
    n_sky = sm.base.cfg.n_sky
    for i in range(n_sky - 1, sm.sky_from, -1):
        j = sm.sky_from + <int>rng_below(rng, i - sm.sky_from + 1)
        tmp = out.sky_order[i]; out.sky_order[i] = out.sky_order[j]; out.sky_order[j] = tmp


cdef int sampler_build(Sampler* sm, const State* view, int observer, const int32_t* hidden,
                       const int32_t* voids, uint64_t unseen, const uint64_t* played_by,
                       int sky_from) noexcept nogil:
    """Set up the slots from a public view (hidden[s*3+g] counts, voids[s*3+g] colour masks,
    played_by[s] = cards seat s played this round); SAMPLE_NO_WORLD if nothing fits."""
    cdef int s, g, n = view.cfg.n_players, total = 0, aside, phase = view.phase
    sm.base = view[0]
    sm.observer = observer
    sm.n_slots = 0
    sm.sky_from = sky_from
    if phase == PHASE_ALLOCATE or phase == PHASE_WEATHER or phase == PHASE_PLAY:
        for s in range(n):
            if s == observer:
                continue
            if phase == PHASE_ALLOCATE and not (view.allocated_mask >> s) & 1:
                sm.base.hand[s] = 0
                if sm.n_slots >= MAX_SLOTS:
                    return SAMPLE_NO_WORLD
                total += view.cfg.hand_size
                sm.slot_kind[sm.n_slots] = SLOT_HAND
                sm.slot_seat[sm.n_slots] = s
                sm.slot_group[sm.n_slots] = -1
                sm.slot_size[sm.n_slots] = view.cfg.hand_size
                sm.slot_allow[sm.n_slots] = 7
                sm.n_slots += 1
                continue
            sm.base.hand[s] = played_by[s]
            for g in range(view.cfg.n_groups):
                if hidden[s * MAX_GROUPS + g] <= 0:
                    continue
                if sm.n_slots >= MAX_SLOTS:
                    return SAMPLE_NO_WORLD
                total += hidden[s * MAX_GROUPS + g]
                sm.slot_kind[sm.n_slots] = SLOT_PILE
                sm.slot_seat[sm.n_slots] = s
                sm.slot_group[sm.n_slots] = g
                sm.slot_size[sm.n_slots] = hidden[s * MAX_GROUPS + g]
                sm.slot_allow[sm.n_slots] = 7 & ~voids[s * MAX_GROUPS + g]
                sm.n_slots += 1
        aside = popcount(unseen) - total
        if aside < 0 or sm.n_slots >= MAX_SLOTS:
            return SAMPLE_NO_WORLD
        if aside > 0:
            sm.slot_kind[sm.n_slots] = SLOT_ASIDE
            sm.slot_seat[sm.n_slots] = -1
            sm.slot_group[sm.n_slots] = -1
            sm.slot_size[sm.n_slots] = aside
            sm.slot_allow[sm.n_slots] = 7
            sm.n_slots += 1
    elif unseen != 0:
        return SAMPLE_NO_WORLD
    return sampler_prepare(sm, unseen)


cdef class WorldSampler:
    """Draws determinized worlds for one observer (the Python face of the C Sampler).

    Built from a public view (see csl_ai.game.PublicView) plus the cards each seat has
    played this round; raises ValueError when no world fits the observation.
    """
    cdef Sampler* sm

    def __cinit__(self):
        self.sm = <Sampler*>malloc(sizeof(Sampler))
        if self.sm == NULL:
            raise MemoryError()
        self.sm.cum = NULL

    def __dealloc__(self):
        if self.sm != NULL:
            free(self.sm.cum)
        free(self.sm)

    def __init__(self, CoreState view, int observer, hidden_counts, voids, uint64_t unseen,
                 played_by, int sky_from):
        cdef int32_t hidden[MAX_PLAYERS * MAX_GROUPS]
        cdef int32_t vd[MAX_PLAYERS * MAX_GROUPS]
        cdef uint64_t pb[MAX_PLAYERS]
        cdef int s, g, n = view.st.cfg.n_players, err
        if not 0 <= observer < n:
            raise ValueError(f"observer must be a seat 0..{n - 1}, got {observer!r}")
        if not 0 <= sky_from <= view.st.cfg.n_sky:
            raise ValueError(f"sky_from out of range: {sky_from!r}")
        for s in range(MAX_PLAYERS):
            pb[s] = 0
            for g in range(MAX_GROUPS):
                hidden[s * MAX_GROUPS + g] = 0
                vd[s * MAX_GROUPS + g] = 0
        for s in range(n):
            pb[s] = played_by[s]
            for g in range(view.st.cfg.n_groups):
                hidden[s * MAX_GROUPS + g] = hidden_counts[s][g]
                vd[s * MAX_GROUPS + g] = voids[s][g]
        err = sampler_build(self.sm, &view.st, observer, hidden, vd, unseen, pb, sky_from)
        if err != SAMPLE_OK:
            raise ValueError("no deal of the unseen cards is consistent with the observation")

    @property
    def worlds(self) -> float:
        """Number of card placements consistent with the observation."""
        return sampler_worlds(self.sm)

    @property
    def slots(self):
        """(kind, seat, group, size, allowed colour mask) per slot; kind 0 pile, 1 hand, 2 set-aside."""
        return [(self.sm.slot_kind[i], self.sm.slot_seat[i], self.sm.slot_group[i],
                 self.sm.slot_size[i], self.sm.slot_allow[i]) for i in range(self.sm.n_slots)]

    def sample(self, long n, uint64_t seed):
        """n worlds as CoreStates, from a stream seeded by seed."""
        cdef Rng rng
        cdef long i
        cdef CoreState obj
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n!r}")
        rng_seed(&rng, seed)
        out = []
        for i in range(n):
            obj = CoreState.__new__(CoreState)
            sampler_draw(self.sm, &rng, &obj.st)
            out.append(obj)
        return out

    def world_of(self, CoreState truth):
        """The world of this observation whose hidden cards lie where they lie in truth (the
        game's true state), and whose later sky cards come in truth's order: the oracle of
        benchmarks/tune_search.py --oracle. ValueError if truth's cards do not fit."""
        cdef CoreState obj = CoreState.__new__(CoreState)
        cdef const State* t = &truth.st
        cdef State* out = &obj.st
        cdef uint64_t mask, used = 0, unseen = 0
        cdef int i, c, s
        out[0] = self.sm.base
        for c in range(N_COLOURS):
            for i in range(self.sm.n_col[c]):
                unseen |= bit(self.sm.col_card[c][i])
        for i in range(self.sm.n_slots):
            s = self.sm.slot_seat[i]
            if self.sm.slot_kind[i] == SLOT_PILE:
                mask = t.pile[s][self.sm.slot_group[i]]
                out.pile[s][self.sm.slot_group[i]] = mask
                out.hand[s] |= mask
            elif self.sm.slot_kind[i] == SLOT_HAND:
                mask = t.hand[s]
                out.hand[s] = mask
            else:
                mask = t.set_aside
                out.set_aside = mask
            if popcount(mask) != self.sm.slot_size[i] or mask & ~unseen or mask & used:
                raise ValueError(f"truth's cards do not fit hidden slot {i} of this observation")
            for c in range(N_COLOURS):
                if mask & colour_mask(c) and not (self.sm.slot_allow[i] >> c) & 1:
                    raise ValueError(f"truth's cards break a void shown in hidden slot {i}")
            used |= mask
        for i in range(self.sm.sky_from, self.sm.base.cfg.n_sky):
            out.sky_order[i] = t.sky_order[i]
        return obj

    def draw_many(self, long n, uint64_t seed) -> int:
        """Draw n worlds in C without the GIL and discard them (for benchmarks); returns a checksum."""
        cdef Rng rng
        cdef State st
        cdef long i
        cdef uint64_t acc = 0
        rng_seed(&rng, seed)
        with nogil:
            for i in range(n):
                sampler_draw(self.sm, &rng, &st)
                acc ^= st.pile[(self.sm.observer + 1) % st.cfg.n_players][0] ^ st.hand[(self.sm.observer + 1) % st.cfg.n_players]
        return acc
