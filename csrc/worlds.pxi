# The worlds an iteration searches: exactly uniform from the sampler, the others' splits
# then by their model, or drawn once into a pool the iterations share.

cdef void model_unseen_allocations(const SearchSpec* sp, State* st, Rng* rng, MixDraw* draws) noexcept nogil:
    """The opponent model on top of a uniform world: until the round's first card is played
    nothing distinguishes one split of a seat's hand from another, so every other seat that
    has already allocated gets the split the playout rules make of its sampled hand (the
    rules read only that seat's own cards and the public line), as the seats still to
    allocate do in the tree. Without it a seat that chose before the searcher would be
    modelled as splitting at random and one that chose after as splitting by the rules.
    A seat with a split mixture (set_split_model) splits by it instead, as in the tree
    (with its tables draws[s], where draws is not NULL)."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef int s, g
    if st.line_pos != 0 or st.n_in_trick != 0 or st.phase == PHASE_DEAL or st.phase == PHASE_OVER:
        return
    for s in range(st.cfg.n_players):
        if s == sp.root_seat or not (st.allocated_mask >> s) & 1:
            continue
        if sp.mix_on[s] and sp.split_n[s] == 0:
            allocate_modelled(sp, st, s, rng, piles, draws + s if draws != NULL else NULL)
        elif rng_next(rng) < sp.exact_threshold[s]:
            policy_allocate(st, &sp.policy, s, rng, piles)
        else:
            continue
        for g in range(st.cfg.n_groups):
            st.pile[s][g] = piles[g]


cdef void draw_world(const SearchSpec* sp, Rng* rng, State* st) noexcept nogil:
    """A world for one iteration: one of the pool's worlds (see build_pool), uniformly,
    where there is a pool; else exactly uniform from the sampler, then the rules' split
    for each seat believed exact (with that chance), or each seat's split mixture where it
    has one."""
    if sp.pool_n > 0:
        st[0] = sp.pool[rng_below(rng, sp.pool_n)]
        return
    sampler_draw(sp.sampler, rng, st)
    if sp.any_exact or sp.any_mix:
        model_unseen_allocations(sp, st, rng, NULL)


cdef bint same_position(const State* a, const State* b, int seat) noexcept nogil:
    """Whether b could be a world of position a as seat sees it: the same public state
    of the round and the same cards of seat's own."""
    cdef int g, s, k
    if (a.cfg.n_players != b.cfg.n_players or a.cfg.n_rounds != b.cfg.n_rounds or a.phase != b.phase
            or a.round != b.round or a.to_move != b.to_move or a.line_pos != b.line_pos
            or a.group != b.group or a.n_in_trick != b.n_in_trick or a.trick_mask != b.trick_mask
            or a.played != b.played or a.allocated_mask != b.allocated_mask
            or a.declared_mask != b.declared_mask or a.weather_done_mask != b.weather_done_mask
            or a.sky_pos != b.sky_pos or a.hand[seat] != b.hand[seat]):
        return False
    for g in range(a.cfg.n_groups):
        if a.pile[seat][g] != b.pile[seat][g]:
            return False
    for k in range(a.cfg.line_size):
        if a.sky_order[a.sky_pos + k] != b.sky_order[b.sky_pos + k]:
            return False
    for s in range(a.cfg.n_players):
        for k in range(N_KINDS):
            if a.elems[s][k] != b.elems[s][k] or a.round_elems[s][k] != b.round_elems[s][k]:
                return False
    return True


cdef void redraw_splits(const SearchSpec* sp, Rng* rng, State* st, MixFit* fits, MixDraw* draws) noexcept nogil:
    """The other seats' splits of a world's hands for the pool: redrawn from their split
    tables (draw_table_splits), those of the seats believed exact by the rules with that
    chance or by each seat's split mixture; with mix_condition, after the round's first
    card, by each seat's split mixture given the play (condition_mixture_splits). fits and
    draws: each seat's tables, kept while its hand stays."""
    draw_table_splits(sp, st, rng)
    if sp.any_exact or sp.any_mix:
        model_unseen_allocations(sp, st, rng, draws)
    if sp.mix_condition and sp.any_mix:
        condition_mixture_splits(sp, st, rng, fits, draws)


cdef int build_pool(SearchSpec* sp, Rng* rng, int n, int reuse) noexcept nogil:
    """Draw n worlds: a deal from the sampler serves reuse pool worlds in a row, each with
    its own splits (redraw_splits; the seats' tables are made once a hand). 0 on success,
    -1 out of memory."""
    cdef State* pool
    cdef MixFit* fits
    cdef MixDraw* draws
    cdef int i, s
    sp.pool_n = 0
    pool = <State*>realloc(sp.pool, n * sizeof(State))
    if pool == NULL:
        return -1
    sp.pool = pool
    fits = <MixFit*>malloc(MAX_PLAYERS * sizeof(MixFit))
    draws = mix_draws_new(MAX_PLAYERS)
    if fits == NULL or draws == NULL:
        free(fits)
        free(draws)
        return -1
    for s in range(MAX_PLAYERS):
        fits[s].hand = 0
    for i in range(n):
        if i % reuse == 0:
            sampler_draw(sp.sampler, rng, &pool[i])
        else:
            pool[i] = pool[i - 1]
        redraw_splits(sp, rng, &pool[i], fits, draws)
    free(fits)
    free(draws)
    sp.pool_n = n
    return 0
