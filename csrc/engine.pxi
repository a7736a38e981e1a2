# The Python boundary of the search: SearchEngine (the read-only set-up of one search,
# shared by its threads, and the test probes) and SearchWorker (one thread's tree).

# --- Python boundary --------------------------------------------------------------------

ctypedef struct Ranked:
    double prior
    int32_t index


cdef inline bint equal_cards(int low, int high, uint64_t blockers) noexcept nogil:
    """Whether playing card low or card high (low < high) is the same move: one colour, and
    none of blockers (every card still to come in this round's tricks but the mover's
    own choices: the others' unplayed cards, the set-aside, the trick on the table, the
    mover's later piles) ranks between them. Every trick then goes the same way whichever
    is played, and the one kept plays as the other would have, so the search's outcomes
    after the two have one distribution: a card-play root keeps the lowest of each run."""
    return card_colour(low) == card_colour(high) and not (blockers & (bit(high) - 1) & ~((bit(low) << 1) - 1))


cdef int _by_prior(const void* a, const void* b) noexcept nogil:
    """Higher prior first; ties in enumeration order (a total order, so sorting is deterministic)."""
    cdef const Ranked* x = <const Ranked*>a
    cdef const Ranked* y = <const Ranked*>b
    if x.prior != y.prior:
        return -1 if x.prior > y.prior else 1
    return x.index - y.index


cdef class SearchEngine:
    """The read-only part of one search: the sampler, the root candidates in prior order,
    the playout rules and the tuned constants. Workers (one per thread) share it."""
    cdef SearchSpec sp
    cdef WorldSampler sampler
    cdef readonly int root_kind
    cdef readonly int n_candidates
    cdef uint64_t same_cards[MAX_CANDIDATES]   # card-play roots: each candidate's equal cards

    def __cinit__(self):
        cdef int s
        self.sp.cand_piles = <uint64_t*>malloc(MAX_CANDIDATES * MAX_GROUPS * sizeof(uint64_t))
        self.sp.cand_key = <int32_t*>malloc(MAX_CANDIDATES * sizeof(int32_t))
        self.sp.pool = NULL
        self.sp.pool_n = 0
        self.sp.n_round_plays = 0
        memset(self.sp.played_from, 0, sizeof(self.sp.played_from))
        memset(self.sp.pile_void, 0, sizeof(self.sp.pile_void))
        memset(self.sp.mix_on, 0, sizeof(self.sp.mix_on))
        memset(self.sp.mix_share, 0, sizeof(self.sp.mix_share))
        self.sp.any_mix = 0
        self.sp.mix_condition = 0
        for s in range(MAX_PLAYERS):
            self.sp.split_table[s] = NULL
            self.sp.split_cum[s] = NULL
            self.sp.split_n[s] = 0
        if self.sp.cand_piles == NULL or self.sp.cand_key == NULL:
            raise MemoryError()

    def __dealloc__(self):
        cdef int s
        free(self.sp.cand_piles)
        free(self.sp.cand_key)
        free(self.sp.pool)
        for s in range(MAX_PLAYERS):
            free(self.sp.split_table[s])
            free(self.sp.split_cum[s])

    def __init__(self, WorldSampler sampler, int root_seat, *, int algorithm, int utility,
                 int rules_playout, double exploration, double margin_weight,
                 double margin_scale, double points_scale, double widening_base, double widening_coef,
                 double widening_alpha, int halving_min_worlds,
                 int pimc_candidates, double epsilon, double weather_threshold,
                 double weather_blue, double weather_power, double candy_value,
                 double star_three_value, double potential_decay, double void_bonus):
        cdef const State* base = &sampler.sm.base
        cdef uint64_t buf[MAX_CANDIDATES * 3]
        cdef Ranked ranked[MAX_CANDIDATES]
        cdef int i, g, n, ng = base.cfg.n_groups
        cdef uint64_t legal, blockers
        cdef int c, prev
        self.sampler = sampler
        self.sp.sampler = sampler.sm
        self.sp.root_seat = root_seat
        self.sp.algorithm = algorithm
        self.sp.utility = utility
        self.sp.exploration = exploration
        self.sp.margin_weight = margin_weight
        self.sp.margin_scale = margin_scale
        self.sp.points_scale = points_scale
        self.sp.widening_base = widening_base
        self.sp.widening_coef = widening_coef
        self.sp.widening_alpha = widening_alpha
        self.sp.halving_min_worlds = halving_min_worlds if halving_min_worlds > 0 else 1
        for i in range(MAX_PLAYERS):
            self.sp.randomness[i] = 0.0
            self.sp.exact_threshold[i] = 0
        self.sp.any_exact = 0
        self.sp.pimc_candidates = pimc_candidates if pimc_candidates > 0 else 1
        policy_init(&self.sp.policy, &base.cfg, rules_playout, epsilon, weather_threshold,
                    weather_blue, weather_power, candy_value, star_three_value, potential_decay,
                    void_bonus)
        if root_seat != sampler.sm.observer:
            raise ValueError(f"root_seat {root_seat!r} is not the sampler's observer")
        if base.phase == PHASE_ALLOCATE and not (base.allocated_mask >> root_seat) & 1:
            self.root_kind = ROOT_ALLOCATE
            n = enumerate_allocations(&base.cfg, base.hand[root_seat], buf)
            for i in range(n):
                ranked[i].prior = allocation_prior(base, &self.sp.policy, root_seat, &buf[i * 3])
                ranked[i].index = i
            qsort(ranked, n, sizeof(Ranked), _by_prior)
            for i in range(n):
                for g in range(MAX_GROUPS):
                    self.sp.cand_piles[i * MAX_GROUPS + g] = buf[ranked[i].index * 3 + g] if g < ng else 0
                self.sp.cand_key[i] = i
        elif base.phase == PHASE_WEATHER and not (base.weather_done_mask >> root_seat) & 1:
            self.root_kind = ROOT_WEATHER
            n = 2
            self.sp.cand_key[0] = 0
            self.sp.cand_key[1] = 1
        elif base.phase == PHASE_PLAY and base.to_move == root_seat:
            self.root_kind = ROOT_PLAY
            legal = legal_plays(base)
            n = 0
            blockers = base.cfg.rain_in_use & ~legal & ~(base.played & ~base.trick_mask)
            prev = -1
            while legal:
                c = lowest_card(legal)
                legal &= legal - 1
                if prev >= 0 and equal_cards(prev, c, blockers):
                    self.same_cards[n - 1] |= bit(c)
                else:
                    self.sp.cand_key[n] = c
                    self.same_cards[n] = 0
                    n += 1
                prev = c
        else:
            raise ValueError(f"seat {root_seat} has no decision to make in this position")
        self.sp.root_kind = self.root_kind
        self.sp.n_cand = n
        self.n_candidates = n
        self.sp.two_trees = 1 if self.root_kind != ROOT_PLAY else 0

    def set_randomness(self, randomness):
        """Model each other seat as a uniformly random player with the given chance (one
        number per seat, in [0, 1]; the searcher's own entry must be 0), in playouts and in
        the others' hidden choices in the tree."""
        cdef int s, n = self.sampler.sm.base.cfg.n_players
        values = [float(p) for p in randomness]
        if len(values) != n or values[self.sp.root_seat] != 0.0 or not all(0.0 <= p <= 1.0 for p in values):
            raise ValueError("set_randomness needs one chance in [0, 1] per seat, 0 for the searcher")
        for s in range(n):
            self.sp.randomness[s] = values[s]
            if values[s] > 0.0:
                policy_set_randomness(&self.sp.policy, s, values[s])

    def set_exact(self, exactness, double epsilon):
        """Model each other seat as playing exactly by the rules with the given chance (one
        number per seat in [0, 1], at most 1 minus its randomness; 0 for the searcher):
        with that chance its card in the tree is the rules' card instead of its UCB choice,
        its split before the round's first card is the rules' split of its sampled hand, and
        its playout moves are random with chance epsilon instead of playout_epsilon. Call
        after set_randomness; only with rule playouts."""
        cdef int s, n = self.sampler.sm.base.cfg.n_players
        cdef double r, x
        values = [float(p) for p in exactness]
        if (len(values) != n or values[self.sp.root_seat] != 0.0
                or not all(0.0 <= p <= 1.0 for p in values) or not 0.0 <= epsilon <= 1.0
                or any(values[s] > 1.0 - self.sp.randomness[s] + 1e-12 for s in range(n))):
            raise ValueError("set_exact needs one chance in [0, 1 - randomness] per seat, "
                             "0 for the searcher, and an epsilon in [0, 1]")
        if not self.sp.policy.rules:
            return
        for s in range(n):
            x = values[s]
            if x <= 0.0:
                continue
            r = self.sp.randomness[s]
            self.sp.exact_threshold[s] = chance_threshold(x)
            self.sp.policy.eps_threshold[s] = chance_threshold(
                r + (1.0 - r - x) * self.sp.policy.epsilon + x * epsilon)
            self.sp.any_exact = 1

    def set_card_policy(self, weights):
        """Play cards in the playouts (every seat, and the others' rule moves in the tree) by
        the learned softmax with these weights (one per CARD_FEATURES entry) instead of the
        rules' choose_pos; the per-seat chance of a uniformly random move still applies."""
        cdef int k
        values = [float(w) for w in weights]
        if len(values) != N_CARD_FEATURES or not all(v == v and abs(v) < 1e6 for v in values):
            raise ValueError(f"set_card_policy needs {N_CARD_FEATURES} finite weights")
        if not self.sp.policy.rules:
            return
        for k in range(N_CARD_FEATURES):
            self.sp.policy.card_w[k] = values[k]
        self.sp.policy.learned = 1

    def set_value(self, weights, points_weights, int horizon):
        """Stop a playout at a round's end once at most `horizon` rounds remain and judge
        them by the learned value (value.pxi): weights, one row of N_VALUE_FEATURES per
        rounds left (1 first; rows past the last repeat it), and points_weights, the same
        rows with an intercept first, for the expected final points."""
        if horizon < 0:
            raise ValueError(f"the value's horizon must be >= 0, got {horizon!r}")
        _value_table(weights, N_VALUE_FEATURES, &self.sp.value_w[0][0])
        _value_table(points_weights, N_VALUE_FEATURES + 1, &self.sp.value_pts_w[0][0])
        self.sp.policy.value_horizon = horizon

    def set_round_record(self, played_from, voids, plays):
        """This round's public card play, for the inferences: played_from[s][g] the cards
        seat s has played from its pile g, voids[s][g] the colours it has shown that pile
        lacks, plays the (seat, card) pairs in the order played."""
        cdef int s, g, k, n = self.sampler.sm.base.cfg.n_players, ng = self.sampler.sm.base.cfg.n_groups
        rows = [list(r) for r in played_from]
        void_rows = [list(r) for r in voids]
        moves = [(int(a), int(b)) for a, b in plays]
        if (len(rows) != n or any(len(r) != ng for r in rows)
                or len(void_rows) != n or any(len(r) != ng for r in void_rows)):
            raise ValueError("played_from and voids need one row per seat, one entry per group")
        if len(moves) > MAX_ROUND_PLAYS or not all(0 <= a < n and 0 <= b < 64 for a, b in moves):
            raise ValueError(f"plays must be at most {MAX_ROUND_PLAYS} (seat, card) pairs")
        for s in range(MAX_PLAYERS):
            for g in range(MAX_GROUPS):
                self.sp.played_from[s][g] = rows[s][g] if s < n and g < ng else 0
                self.sp.pile_void[s][g] = (void_rows[s][g] & 7) if s < n and g < ng else 0
        for k in range(len(moves)):
            self.sp.round_play_seat[k] = moves[k][0]
            self.sp.round_play_card[k] = moves[k][1]
        self.sp.n_round_plays = len(moves)

    def set_split_table(self, int seat, splits, weights):
        """Draw another seat's split from a table instead (draw_table_splits): splits are
        whole splits of its round hand (one pile mask per group, played cards included),
        weights their non-negative weights. Only the splits consistent with the round's
        play (set_round_record: every card played from a pile is in it, no unplayed card of
        a colour the pile was shown to lack) are kept. Returns how many; with none of
        positive weight the table is off and the seat's split is drawn as before. Takes
        effect in build_pool."""
        cdef int g, k, kept = 0, n = self.sampler.sm.base.cfg.n_players, ng = self.sampler.sm.base.cfg.n_groups
        cdef uint64_t* table
        cdef double* cum
        cdef double total = 0.0
        cdef uint64_t whole, rest
        cdef bint consistent
        rows = [tuple(int(m) for m in piles) for piles in splits]
        values = [float(v) for v in weights]
        if not 0 <= seat < n or seat == self.sp.root_seat:
            raise ValueError(f"set_split_table needs another seat, got {seat!r}")
        if len(rows) != len(values) or not 1 <= len(rows) <= MAX_SPLIT_TABLE:
            raise ValueError(f"set_split_table needs 1..{MAX_SPLIT_TABLE} splits, one weight each")
        if any(len(r) != ng or not all(0 <= m < (1 << 64) for m in r) for r in rows):
            raise ValueError(f"set_split_table: each split needs {ng} pile masks")
        if not all(v == v and 0.0 <= v < 1e300 for v in values):
            raise ValueError("set_split_table: weights must be finite and non-negative")
        free(self.sp.split_table[seat])
        free(self.sp.split_cum[seat])
        self.sp.split_n[seat] = 0
        table = <uint64_t*>malloc(len(rows) * MAX_GROUPS * sizeof(uint64_t))
        cum = <double*>malloc(len(rows) * sizeof(double))
        self.sp.split_table[seat] = table
        self.sp.split_cum[seat] = cum
        if table == NULL or cum == NULL:
            raise MemoryError()
        for piles, v in zip(rows, values):
            if v <= 0.0:
                continue
            consistent = True
            for g in range(ng):
                whole = piles[g]
                rest = whole & ~self.sp.played_from[seat][g]
                if self.sp.played_from[seat][g] & ~whole:
                    consistent = False
                for k in range(N_COLOURS):
                    if (self.sp.pile_void[seat][g] >> k) & 1 and rest & colour_mask(k):
                        consistent = False
            if not consistent:
                continue
            for g in range(MAX_GROUPS):
                table[kept * MAX_GROUPS + g] = piles[g] if g < ng else 0
            total += v
            cum[kept] = total
            kept += 1
        self.sp.split_n[seat] = kept
        return kept

    def set_split_mixture(self, double beta, model_weights, blue_decay, side_top, side_decay,
                          double synergy, double top_share):
        """The split mixture's constants (mixture_allocate): the worth part's inverse
        temperature, the allocation model's weights, and the heuristic agent's card-power
        constants for this player count (a blue takes its trick with chance
        blue_decay ** higher blues unseen, a red or green with side_top * side_decay **
        higher cards of its colour unseen; synergy extra tricks per blue in a pile short
        of a side colour; top_share the blend of a group's best and average sky cards)."""
        cdef int i
        weights = [float(v) for v in model_weights]
        if len(weights) != N_SPLIT_FEATURES:
            raise ValueError(f"set_split_mixture needs {N_SPLIT_FEATURES} model weights")
        if not (0.0 <= beta < 1e6 and 0.0 < blue_decay <= 1.0 and 0.0 <= side_top <= 1.0
                and 0.0 < side_decay <= 1.0 and 0.0 <= top_share <= 1.0 and abs(synergy) < 1e6
                and all(abs(v) < 1e6 for v in weights)):
            raise ValueError("set_split_mixture: constants out of range")
        self.sp.mix_beta = beta
        for i in range(N_SPLIT_FEATURES):
            self.sp.mix_model_w[i] = weights[i]
        for i in range(MAX_RANK + 1):
            self.sp.mix_blue_win[i] = blue_decay ** i
            self.sp.mix_side_win[i] = side_top * side_decay ** i
        self.sp.mix_synergy = synergy
        self.sp.mix_top_share = top_share

    def set_split_model(self, int seat, group_worths, double worth_share, double model_share,
                        double rules_share=0.0):
        """Split another seat still to split in the tree by the split mixture
        (mixture_allocate; after set_split_mixture): group_worths[g] are the worths to it of
        group g's sky cards, best first, ducked as the heuristic agent plans (one per card of
        the group); worth_share, model_share and rules_share the chances of the worth, the
        allocation-model and the rules' parts, the rest uniform. A seat's split table, where it has one,
        comes first."""
        cdef int g, i, n = self.sampler.sm.base.cfg.n_players, ng = self.sampler.sm.base.cfg.n_groups
        cdef const Config* cfg = &self.sampler.sm.base.cfg
        if not 0 <= seat < n or seat == self.sp.root_seat:
            raise ValueError(f"set_split_model needs another seat, got {seat!r}")
        rows = [[float(v) for v in row] for row in group_worths]
        if len(rows) != ng or any(len(rows[g]) != cfg.group_size[g] for g in range(ng)):
            raise ValueError("set_split_model needs one worth per sky card of each group")
        if not all(abs(v) < 1e6 for row in rows for v in row):
            raise ValueError("set_split_model: worths must be finite")
        if not (0.0 <= worth_share <= 1.0 and 0.0 <= model_share <= 1.0 and 0.0 <= rules_share <= 1.0
                and worth_share + model_share + rules_share <= 1.0 + 1e-12):
            raise ValueError("set_split_model: shares must be chances that sum to at most 1")
        for g in range(ng):
            for i in range(cfg.group_size[g]):
                self.sp.mix_vals[seat][g][i] = rows[g][i]
        self.sp.mix_share[seat][0] = worth_share
        self.sp.mix_share[seat][1] = model_share
        self.sp.mix_share[seat][2] = rules_share
        self.sp.mix_on[seat] = 1
        self.sp.any_mix = 1

    def set_mixture_condition(self):
        """After the round's first card, split each other seat with a split mixture by it
        given the round's play so far (condition_mixture_splits), in the pool's worlds.
        Takes effect in build_pool, after set_round_record and set_split_model."""
        self.sp.mix_condition = 1

    def mixture_condition(self, CoreState world, int seat, uint64_t seed):
        """Seat's split in a copy of world redrawn by the mixture given the round's play
        (mixture_fit, mixture_fit_draw; after set_round_record and set_split_model), and
        the hand's importance weight: for tests."""
        cdef CoreState out = CoreState.__new__(CoreState)
        cdef Rng rng
        cdef double weight
        cdef MixFit* fit
        if not 0 <= seat < world.st.cfg.n_players or seat == self.sp.root_seat or not self.sp.mix_on[seat]:
            raise ValueError("mixture_condition needs another seat with a split mixture")
        fit = <MixFit*>malloc(sizeof(MixFit))
        if fit == NULL:
            raise MemoryError()
        out.st = world.st
        rng_seed(&rng, seed)
        mixture_fit(&self.sp, &out.st, seat, fit)
        weight = mixture_fit_draw(&self.sp, &out.st, seat, fit, &rng, NULL)
        free(fit)
        return out, weight

    def mixture_logits(self, CoreState state, int seat, int component, splits):
        """The split mixture's log-weight of each of seat's splits (tuples of whole pile
        masks of its hand in state) under the worth part (component 0) or the allocation
        model (1), up to a constant, for tests."""
        cdef double logit[MAX_GROUPS * MIX_STRIDE]
        cdef int cards[N_RAIN]
        cdef int n, g, i, m
        if not 0 <= seat < state.st.cfg.n_players or component not in (0, 1):
            raise ValueError("mixture_logits needs a seat and a component 0 or 1")
        n = _cards_of(state.st.hand[seat], cards)
        if n > MAX_LINE:
            raise ValueError("mixture_logits: hand too large")
        mixture_pile_logits(&self.sp, &state.st, seat, component, cards, n, &logit[0], False)
        out = []
        for piles in splits:
            total = 0.0
            for g in range(state.st.cfg.n_groups):
                m = 0
                for i in range(n):
                    if (piles[g] >> cards[i]) & 1:
                        m |= 1 << i
                total += logit[g * MIX_STRIDE + m]
            out.append(total)
        return out

    def set_worlds(self, worlds):
        """Search these determinizations instead of sampled ones, each iteration one of
        them uniformly. A diagnostic: given the true deal, the search's ceiling under
        perfect inference. Each must be a world of this position (the same public state
        and the searcher's own cards); ValueError otherwise."""
        cdef CoreState w
        cdef State* pool
        cdef int i
        items = list(worlds)
        if not 1 <= len(items) <= MAX_POOL:
            raise ValueError(f"set_worlds needs 1..{MAX_POOL} worlds, got {len(items)}")
        for i, w in enumerate(items):
            if not same_position(&self.sampler.sm.base, &w.st, self.sp.root_seat):
                raise ValueError(f"world {i} is not a world of this position")
        pool = <State*>realloc(self.sp.pool, len(items) * sizeof(State))
        if pool == NULL:
            raise MemoryError()
        self.sp.pool = pool
        for i, w in enumerate(items):
            pool[i] = w.st
        self.sp.pool_n = len(items)

    @property
    def pool_size(self):
        """Worlds in the pool the search draws from (0: it samples each world)."""
        return self.sp.pool_n

    def build_pool(self, int pool, uint64_t seed, int reuse=1):
        """Draw a pool of that many worlds (seeded) by the inferences set above, each deal of
        hands serving reuse worlds in a row with their own splits (a seat's split tables are
        made once a hand); the search then draws among them. Returns whether it is on: not
        with random playouts, nor where no other seat has split its hand."""
        cdef Rng rng
        cdef int s, k, n = self.sampler.sm.base.cfg.n_players
        if not 1 <= pool <= MAX_POOL:
            raise ValueError(f"pool must be 1..{MAX_POOL}, got {pool!r}")
        if not 1 <= reuse <= MAX_OVERSAMPLE:
            raise ValueError(f"reuse must be 1..{MAX_OVERSAMPLE}, got {reuse!r}")
        self.sp.pool_n = 0
        if not self.sp.policy.rules or self.sampler.sm.base.phase == PHASE_ALLOCATE and not any(
                (self.sampler.sm.base.allocated_mask >> s) & 1 for s in range(n) if s != self.sp.root_seat):
            return False
        rng_seed(&rng, seed)
        with nogil:
            k = build_pool(&self.sp, &rng, pool, reuse)
        if k != 0:
            raise MemoryError()
        return True

    def split_features(self, CoreState state, int seat, piles):
        """The allocation model's features of seat's split piles (a tuple of pile masks, the
        round's whole piles) in state's round, for fitting the model's weights."""
        cdef uint64_t P[MAX_GROUPS]
        cdef double f[N_SPLIT_FEATURES]
        cdef int g, ng = state.st.cfg.n_groups
        if len(piles) != ng or not 0 <= seat < state.st.cfg.n_players:
            raise ValueError("split_features needs a seat and one pile per group")
        for g in range(MAX_GROUPS):
            P[g] = piles[g] if g < ng else 0
        split_features(&state.st, &self.sp.policy, seat, P, f)
        return [f[g] for g in range(N_SPLIT_FEATURES)]

    def modelled_allocation(self, CoreState state, int seat, uint64_t seed):
        """The split seat, still to split in state, makes in this search's tree
        (allocate_modelled), for tests."""
        return self.modelled_allocations(state, seat, seed, 1, False)[0]

    def modelled_allocations(self, CoreState state, int seat, uint64_t seed, int n, bint tables):
        """n splits of seat, still to split in state, drawn in a row from one seeded stream as
        allocate_modelled makes them; tables: through one MixDraw, so the mixture's tables
        are made once (the pool's reuse), for tests."""
        cdef Rng rng
        cdef uint64_t piles[MAX_GROUPS]
        cdef MixDraw* draw = NULL
        cdef int g, i
        if (not 0 <= seat < state.st.cfg.n_players or seat == self.sp.root_seat
                or state.st.phase != PHASE_ALLOCATE or (state.st.allocated_mask >> seat) & 1):
            raise ValueError("modelled_allocation needs another seat still to split")
        if tables:
            draw = mix_draws_new(1)
            if draw == NULL:
                raise MemoryError()
        rng_seed(&rng, seed)
        out = []
        try:
            for i in range(n):
                allocate_modelled(&self.sp, &state.st, seat, &rng, piles, draw)
                out.append(tuple(piles[g] for g in range(state.st.cfg.n_groups)))
        finally:
            free(draw)
        return out

    def split_scores(self, CoreState state, int seat, splits, weights):
        """w . split_features of each of seat's splits (tuples of whole pile masks) in
        state's round, for weights w: the allocation model's log-odds, up to a constant."""
        cdef uint64_t P[MAX_GROUPS]
        cdef double f[N_SPLIT_FEATURES]
        cdef double w[N_SPLIT_FEATURES]
        cdef double score
        cdef int g, i, ng = state.st.cfg.n_groups
        values = [float(v) for v in weights]
        if len(values) != N_SPLIT_FEATURES or not 0 <= seat < state.st.cfg.n_players:
            raise ValueError(f"split_scores needs a seat and {N_SPLIT_FEATURES} weights")
        for i in range(N_SPLIT_FEATURES):
            w[i] = values[i]
        out = []
        for piles in splits:
            if len(piles) != ng:
                raise ValueError("split_scores needs one pile per group")
            for g in range(MAX_GROUPS):
                P[g] = piles[g] if g < ng else 0
            split_features(&state.st, &self.sp.policy, seat, P, f)
            score = 0.0
            for i in range(N_SPLIT_FEATURES):
                score += w[i] * f[i]
            out.append(score)
        return out

    def draw_worlds(self, long n, uint64_t seed):
        """n worlds as the search draws them (bet inference and allocation model included),
        for tests."""
        cdef Rng rng
        cdef long i
        cdef CoreState obj
        if n < 0:
            raise ValueError(f"n must be >= 0, got {n!r}")
        rng_seed(&rng, seed)
        out = []
        for i in range(n):
            obj = CoreState.__new__(CoreState)
            draw_world(&self.sp, &rng, &obj.st)
            out.append(obj)
        return out

    def set_order(self, order):
        """Put the allocation candidates in the given order (a permutation of their indices),
        before any worker is made: the search opens them in this order."""
        cdef Py_ssize_t i, k, n = self.n_candidates
        cdef uint64_t* old
        cdef Py_ssize_t* perm
        cdef bytearray seen
        order = list(order)
        if self.root_kind != ROOT_ALLOCATE or len(order) != n:
            raise ValueError("set_order needs a permutation of the allocation candidates")
        seen = bytearray(n)
        perm = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t))
        old = <uint64_t*>malloc(n * MAX_GROUPS * sizeof(uint64_t))
        try:
            if perm == NULL or old == NULL:
                raise MemoryError()
            for i in range(n):
                try:
                    k = order[i]
                except (TypeError, OverflowError):
                    raise ValueError("set_order needs a permutation of the allocation candidates") from None
                if not 0 <= k < n or seen[k]:
                    raise ValueError("set_order needs a permutation of the allocation candidates")
                seen[k] = 1
                perm[i] = k
            memcpy(old, self.sp.cand_piles, n * MAX_GROUPS * sizeof(uint64_t))
            for i in range(n):
                memcpy(&self.sp.cand_piles[i * MAX_GROUPS], &old[perm[i] * MAX_GROUPS], MAX_GROUPS * sizeof(uint64_t))
        finally:
            free(perm)
            free(old)

    def same_as(self, int i):
        """The cards that play exactly as card-play candidate i (equal_cards), lowest
        first; empty for other roots."""
        if not 0 <= i < self.n_candidates:
            raise IndexError(f"candidate {i!r} out of range")
        if self.root_kind != ROOT_PLAY:
            return ()
        return tuple(c for c in range(N_RAIN) if (self.same_cards[i] >> c) & 1)

    def candidate(self, int i):
        """Root candidate i (prior order): a pile tuple, a boolean or a card index."""
        cdef int g, ng = self.sampler.sm.base.cfg.n_groups
        if not 0 <= i < self.n_candidates:
            raise IndexError(f"candidate {i!r} out of range")
        if self.root_kind == ROOT_ALLOCATE:
            return tuple([self.sp.cand_piles[i * MAX_GROUPS + g] for g in range(ng)])
        if self.root_kind == ROOT_WEATHER:
            return bool(self.sp.cand_key[i])
        return self.sp.cand_key[i]

    @property
    def candidates(self):
        """Every root candidate in prior order."""
        return [self.candidate(i) for i in range(self.n_candidates)]

    def modelled_world(self, CoreState world, uint64_t seed) -> CoreState:
        """A copy of world as the search plays it: the splits of the seats believed exact
        redrawn by the rules (by that chance) where no card of the round is out (for tests)."""
        cdef Rng rng
        cdef CoreState out = world.copy()
        rng_seed(&rng, seed)
        if self.sp.any_exact:
            model_unseen_allocations(&self.sp, &out.st, &rng, NULL)
        return out

    def playout_trace(self, CoreState world, uint64_t seed):
        """(final state, events) of one playout from a copy of world, for tests: events are
        ("deal", hands, set_aside), ("allocate", seat, piles), ("weather", seat, bool) and
        ("play", card) in the order the playout made them."""
        cdef Rng rng
        cdef Trace tr
        cdef uint64_t buf[4096]
        cdef CoreState out = world.copy()
        cdef int i = 0, n = world.st.cfg.n_players, ng = world.st.cfg.n_groups, tag
        tr.buf = buf
        tr.len = 0
        tr.cap = 4096
        rng_seed(&rng, seed)
        rollout(&self.sp.policy, &out.st, &rng, &tr)
        if tr.len > tr.cap:
            raise RuntimeError("playout trace overflow")
        events = []
        while i < tr.len:
            tag = buf[i] >> 56
            if tag == TRACE_DEAL:
                events.append(("deal", tuple(buf[i + 1 + s] for s in range(n)), buf[i + 1 + n]))
                i += 2 + n
            elif tag == TRACE_ALLOCATE:
                events.append(("allocate", <int>(buf[i] & 0xFF), tuple(buf[i + 1 + g] for g in range(ng))))
                i += 1 + ng
            elif tag == TRACE_DECLARE:
                events.append(("weather", <int>((buf[i] >> 8) & 0xFF), bool(buf[i] & 1)))
                i += 1
            else:
                events.append(("play", <int>(buf[i] & 0xFF)))
                i += 1
        return out, events


cdef class SettleGroup:
    """The threads of one search settling together: a worker that joins it (join_settling)
    stops when settled (run's stop_settled) only once no use of the iterations any thread
    has left can change the summed answer, so several threads answer exactly as their
    whole budgets would."""
    cdef SettleBoard board

    def __cinit__(self, budgets, int n_candidates):
        values = [int(b) for b in budgets]
        if not values or n_candidates < 1 or any(b < 0 for b in values):
            raise ValueError("a settle group needs one budget >= 0 per thread and candidates")
        self.board.n_threads = len(values)
        self.board.n_cand = n_candidates
        self.board.visits = <long long*>alloc_lines(len(values) * n_candidates * sizeof(long long))
        self.board.done = <long long*>alloc_lines(len(values) * sizeof(long long))
        self.board.budget = <long long*>alloc_lines(len(values) * sizeof(long long))
        if self.board.visits == NULL or self.board.done == NULL or self.board.budget == NULL:
            raise MemoryError()
        memset(self.board.visits, 0, len(values) * n_candidates * sizeof(long long))
        for t in range(len(values)):
            self.board.done[t] = 0
            self.board.budget[t] = values[t]

    def __dealloc__(self):
        free(self.board.visits)
        free(self.board.done)
        free(self.board.budget)


cdef class SearchWorker:
    """One thread's search: its own random stream, node pool and root statistics.

    max_bytes (0: no ceiling) bounds the node pool and its children's indices, counting the old
    and the new ones while the pool doubles; the first pool is cut to fit. A run that would
    pass it stops early (``failed``) with the statistics it has."""
    cdef Worker w
    cdef SearchEngine engine
    cdef int stop_flag
    cdef SettleGroup group

    def __cinit__(self, SearchEngine engine, uint64_t seed, long capacity, int64_t max_bytes=0):
        cdef int i
        cdef int64_t cap = capacity if capacity > 16 else 16
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes!r}")
        self.engine = engine
        memset(&self.w, 0, sizeof(Worker))
        self.w.max_bytes = max_bytes
        while max_bytes > 0 and cap > 16 and pool_bytes(cap) > max_bytes:
            cap //= 2
        self.w.root = <RootStat*>alloc_lines(engine.n_candidates * sizeof(RootStat))
        self.w.alive = <int32_t*>malloc(engine.n_candidates * sizeof(int32_t))
        self.w.root_seats = <double*>calloc(engine.n_candidates * ROOT_SEATS, sizeof(double))
        if (self.w.root == NULL or self.w.alive == NULL or self.w.root_seats == NULL
                or not worker_alloc(&self.w, cap)):
            raise MemoryError()
        memset(self.w.root, 0, engine.n_candidates * sizeof(RootStat))
        for i in range(engine.n_candidates):
            self.w.root[i].node = -1
        rng_seed(&self.w.rng, seed)
        if engine.sp.two_trees:
            new_node(&self.w, -1, 0, -1)

    def __dealloc__(self):
        free(self.w.pool)
        free(self.w.edges)
        free(self.w.root)
        free(self.w.root_seats)
        free(self.w.alive)

    def run(self, int64_t iterations, double seconds, bint stop_settled=False) -> int:
        """Search without the GIL; returns the iterations done in this call (0 if a stop
        was requested before it began). stop_settled: end a run under an iteration limit
        once its most visited root candidate can no longer be overtaken (worker_run)."""
        cdef int64_t done
        with nogil:
            done = worker_run(&self.engine.sp, &self.w, iterations, seconds, &self.stop_flag, stop_settled)
        return done

    def join_settling(self, SettleGroup group, int index) -> None:
        """Settle with the other threads of group (SettleGroup), as its thread index."""
        if not 0 <= index < group.board.n_threads or group.board.n_cand != self.engine.n_candidates:
            raise ValueError(f"thread {index!r} does not fit this settle group")
        self.group = group
        self.w.board = &group.board
        self.w.board_index = index

    def request_stop(self) -> None:
        """Make a run on another thread stop after its current iteration, and any later
        run return at once: the way to interrupt a search (Ctrl-C, a signal)."""
        csl_flag_set(&self.stop_flag, 1)

    @property
    def stop_requested(self) -> bool:
        return csl_flag_get(&self.stop_flag) != 0

    @property
    def max_bytes(self) -> int:
        """The ceiling on the node pool and child table in bytes (0: none)."""
        return self.w.max_bytes

    @property
    def pool_bytes(self) -> int:
        """Bytes the node pool and child table take now."""
        return pool_bytes(self.w.cap)

    @property
    def iterations(self) -> int:
        return self.w.iterations

    @property
    def worlds(self) -> int:
        return self.w.worlds

    @property
    def nodes(self) -> int:
        return self.w.used

    def check_tree(self) -> int:
        """Walk every node's children's indices (for tests): each within the pool, of the key
        of its bit in the node's child_mask, in key order, inside the node's block, and
        every node some node's child at most once; returns the children seen."""
        cdef int64_t i, seen = 0
        cdef const Node* nd
        cdef uint64_t m
        cdef int32_t c
        cdef int r
        parents = bytearray(self.w.used)
        for i in range(self.w.used):
            nd = &self.w.pool[i]
            m = nd.child_mask
            if not m:
                continue
            if nd.edges < 0 or popcount(m) > (1 << nd.edge_bits) or nd.edges + (1 << nd.edge_bits) > self.w.edges_used:
                raise AssertionError(f"node {i}: children's block at {nd.edges} of {1 << nd.edge_bits} for {popcount(m)}")
            r = 0
            while m:
                c = self.w.edges[nd.edges + r]
                if not 0 <= c < self.w.used or self.w.pool[c].key != lowest_card(m) or parents[c]:
                    raise AssertionError(f"node {i}: child {r} is {c}, not a new child of key {lowest_card(m)}")
                parents[c] = 1
                r += 1
                seen += 1
                m &= m - 1
        return seen

    @property
    def cpu_s(self) -> float:
        """CPU time this worker's thread has spent searching."""
        return self.w.cpu_s

    @property
    def settled(self) -> bool:
        """True when a run stopped before its iterations because its answer was settled
        (run's stop_settled)."""
        return self.w.settled != 0

    @property
    def failed(self) -> bool:
        """True when the node pool could not grow (out of memory, or at max_bytes or the
        largest pool) and the run stopped early."""
        return self.w.failed != 0

    def root_stats(self):
        """{candidate index: (visits, sum of utility, sum of squares, sum of win share,
        sum of points)} for the candidates visited."""
        cdef int i
        return {i: (self.w.root[i].visits, self.w.root[i].sum_u, self.w.root[i].sum_u2,
                    self.w.root[i].sum_win, self.w.root[i].sum_points)
                for i in range(self.engine.n_candidates) if self.w.root[i].visits > 0}

    def root_seat_stats(self):
        """{candidate index: (sum of the searcher's squared win shares, (every seat's sum of
        win shares))} for the candidates visited (the same visits as root_stats)."""
        cdef int i, s, n = self.engine.sampler.sm.base.cfg.n_players
        return {i: (self.w.root_seats[i * ROOT_SEATS],
                    tuple(self.w.root_seats[i * ROOT_SEATS + 1 + s] for s in range(n)))
                for i in range(self.engine.n_candidates) if self.w.root[i].visits > 0}


def heuristic_move(CoreState view, int seat, uint64_t seed, *, double epsilon,
                   double weather_threshold, double weather_blue, double weather_power,
                   double candy_value, double star_three_value, double potential_decay):
    """The playout rules' move for seat, read from a public view (its own cards and public
    facts only): ("allocate", piles), ("weather", bool) or ("play", card)."""
    cdef Policy pp
    cdef Rng rng
    cdef uint64_t piles[MAX_GROUPS]
    cdef int g
    cdef const State* st = &view.st
    policy_init(&pp, &st.cfg, 1, epsilon, weather_threshold, weather_blue, weather_power,
                candy_value, star_three_value, potential_decay, 0.0)
    rng_seed(&rng, seed)
    if st.phase == PHASE_ALLOCATE and not (st.allocated_mask >> seat) & 1:
        policy_allocate(st, &pp, seat, &rng, piles)
        return ("allocate", tuple(piles[g] for g in range(st.cfg.n_groups)))
    if st.phase == PHASE_WEATHER and not (st.weather_done_mask >> seat) & 1:
        return ("weather", bool(policy_declare(st, &pp, seat, &rng)))
    if st.phase == PHASE_PLAY and st.to_move == seat:
        return ("play", policy_card(st, &pp, &rng))
    raise ValueError(f"seat {seat} has no decision to make in this position")


def bench_playouts(SearchEngine engine, CoreState world, long n, uint64_t seed) -> float:
    """Seconds for n playouts from copies of world with engine's policy (for benchmarks)."""
    cdef Rng rng
    cdef State st
    cdef long i
    cdef double t0
    rng_seed(&rng, seed)
    with nogil:
        t0 = now_s()
        for i in range(n):
            st = world.st
            playout(&engine.sp, &st, &rng)
        t0 = now_s() - t0
    return t0
