# The tree and its iterations: node pools, UCB selection with availability counts,
# ISMCTS iterations, sequential halving at allocation roots, PIMC, the worker's run.

# --- the tree ---------------------------------------------------------------------------

cdef inline int32_t child_get(const Worker* w, int32_t parent, int key) noexcept nogil:
    """The child of parent with key; it must exist (its bit is in parent's child_mask)."""
    cdef const Node* nd = &w.pool[parent]
    return w.edges[nd.edges + popcount(nd.child_mask & (bit(key) - 1))]


cdef inline void edge_insert(Worker* w, int32_t parent, int key, int32_t child) noexcept nogil:
    """Put child among parent's children's indices, in key order: a node's indices lie side
    by side, so selection reads one or two cache lines of them. A full block moves to one
    twice as large at the end of the edges (a node's blocks sum to under four times its
    children, so the edges never need more than four per node)."""
    cdef Node* nd = &w.pool[parent]
    cdef int n = popcount(nd.child_mask), r = popcount(nd.child_mask & (bit(key) - 1))
    cdef int32_t start
    if nd.edges < 0 or n == (1 << nd.edge_bits):
        start = <int32_t>w.edges_used
        if nd.edges < 0:
            nd.edge_bits = 0
        else:
            memcpy(&w.edges[start], &w.edges[nd.edges], n * sizeof(int32_t))
            nd.edge_bits += 1
        w.edges_used += 1 << nd.edge_bits
        nd.edges = start
    memmove(&w.edges[nd.edges + r + 1], &w.edges[nd.edges + r], (n - r) * sizeof(int32_t))
    w.edges[nd.edges + r] = child
    nd.child_mask |= bit(key)


cdef inline int32_t new_node(Worker* w, int32_t parent, int key, int mover) noexcept nogil:
    cdef int32_t idx = <int32_t>w.used
    cdef Node* nd = &w.pool[idx]
    w.used += 1
    nd.edges = -1
    nd.edge_bits = 0
    nd.visits = 0
    nd.avail = 0
    nd.key = <int16_t>key
    nd.mover = <int8_t>mover
    nd.reward = 0.0
    nd.child_mask = 0
    if parent >= 0:
        edge_insert(w, parent, key, idx)
    return idx


cdef inline int32_t child_or_new(Worker* w, int32_t parent, int key, int mover, int* created) noexcept nogil:
    if (w.pool[parent].child_mask >> key) & 1:
        return child_get(w, parent, key)
    created[0] = 1
    return new_node(w, parent, key, mover)


cdef enum:
    LOG_COUNTS = 1 << 12

cdef double LOG_COUNT[LOG_COUNTS]   # LOG_COUNT[i] = log(i), i >= 1


def _fill_log_count():
    cdef int i
    LOG_COUNT[0] = 0.0
    for i in range(1, LOG_COUNTS):
        LOG_COUNT[i] = log(<double>i)


_fill_log_count()


cdef inline double log_count(int32_t n) noexcept nogil:
    """log(n) for a count n >= 1: from a table while n is small (the same number: the same
    function of the same argument)."""
    if n < LOG_COUNTS:
        return LOG_COUNT[n]
    return log(<double>n)


cdef int32_t select_child(Worker* w, int32_t node, uint64_t legal, int mover, double c,
                          int* created) noexcept nogil:
    """ISMCTS selection: UCB over the children legal in this world (their availability
    counts grow with each such visit); expand one untried legal key if there is one.
    The children are looked up and prefetched first, so their cache misses overlap."""
    cdef uint64_t present = legal & w.pool[node].child_mask
    cdef uint64_t untried = legal & ~w.pool[node].child_mask
    cdef int32_t kids[64]
    cdef int32_t best = -1
    cdef int i, k = 0
    cdef double best_v = -1e300, v
    cdef Node* nd
    while present:
        kids[k] = child_get(w, node, lowest_card(present))
        csl_prefetch(&w.pool[kids[k]])
        k += 1
        present &= present - 1
    for i in range(k):
        nd = &w.pool[kids[i]]
        nd.avail += 1
        v = nd.reward / nd.visits + c * sqrt(log_count(nd.avail) / nd.visits)
        if v > best_v:
            best_v = v
            best = kids[i]
    if untried:
        created[0] = 1
        return new_node(w, node, rng_pick_card(&w.rng, untried), mover)
    return best


cdef void* alloc_lines(size_t size) noexcept nogil:
    """Memory that shares no cache line with any other allocation (so threads writing their
    own arrays never slow each other down by false sharing); NULL on failure."""
    cdef void* p = NULL
    if posix_memalign(&p, CACHE_LINE, (size + CACHE_LINE - 1) // CACHE_LINE * CACHE_LINE + CACHE_LINE) != 0:
        return NULL
    return p


cdef enum:
    EDGES_PER_NODE = 4   # room for every node's children's indices (edge_insert)


cdef inline int64_t pool_bytes(int64_t cap) noexcept nogil:
    """Bytes of a pool of cap nodes and its children's indices."""
    return cap * <int64_t>(sizeof(Node) + EDGES_PER_NODE * sizeof(int32_t))


cdef int worker_alloc(Worker* w, int64_t cap) noexcept nogil:
    """(Re)allocate the pool for cap nodes and their children's indices; 0 on failure, and
    0 when the old and new ones together would pass w.max_bytes (a growing pool briefly
    holds both)."""
    cdef Node* pool
    cdef int32_t* edges
    cdef int64_t held = pool_bytes(w.cap) if w.pool != NULL else 0
    if cap > MAX_NODES:
        return 0
    if w.max_bytes > 0 and held + pool_bytes(cap) > w.max_bytes:
        return 0
    pool = <Node*>alloc_lines(cap * sizeof(Node))
    if pool == NULL:
        return 0
    edges = <int32_t*>alloc_lines(cap * EDGES_PER_NODE * sizeof(int32_t))
    if edges == NULL:
        free(pool)
        return 0
    if w.pool != NULL:
        memcpy(pool, w.pool, w.used * sizeof(Node))
        memcpy(edges, w.edges, w.edges_used * sizeof(int32_t))
    free(w.pool)
    free(w.edges)
    w.pool = pool
    w.edges = edges
    w.cap = cap
    return 1


cdef int select_root(const SearchSpec* sp, Worker* w) noexcept nogil:
    """UCB1 over the root candidates in prior order; for allocations only the first
    widening_base + widening_coef * N^widening_alpha are open (progressive widening), N = root visits."""
    cdef int64_t n_open = sp.n_cand
    cdef int i, best = 0
    cdef double k, v, best_v = -1e300
    cdef const RootStat* rs
    if sp.root_kind == ROOT_ALLOCATE:
        n_open = <int64_t>(sp.widening_base + sp.widening_coef * pow(<double>w.iterations, sp.widening_alpha))
        if n_open > sp.n_cand:
            n_open = sp.n_cand
        if n_open < 1:
            n_open = 1
    k = sp.exploration * sqrt(log(<double>(w.iterations if w.iterations > 0 else 1)))
    for i in range(n_open):
        rs = &w.root[i]
        if rs.visits == 0:
            return i
        v = rs.mean + k * rs.inv_sqrt
        if v > best_v:
            best_v = v
            best = i
    return best


cdef inline void apply_candidate(const SearchSpec* sp, State* st, int i) noexcept nogil:
    if sp.root_kind == ROOT_ALLOCATE:
        state_allocate(st, sp.root_seat, &sp.cand_piles[i * MAX_GROUPS])
    elif sp.root_kind == ROOT_WEATHER:
        state_declare(st, sp.root_seat, sp.cand_key[i])
    else:
        state_play_unchecked(st, sp.cand_key[i])


cdef inline void record_root(const SearchSpec* sp, RootStat* rs, double* seats, const double* u,
                             const double* share, const double* pts) noexcept nogil:
    cdef int r = sp.root_seat, s
    seats[0] += share[r] * share[r]
    for s in range(sp.sampler.base.cfg.n_players):
        seats[1 + s] += share[s]
    rs.visits += 1
    rs.sum_u += u[r]
    rs.sum_u2 += u[r] * u[r]
    rs.sum_win += share[r]
    rs.sum_points += pts[r]
    rs.mean = rs.sum_u / rs.visits
    rs.inv_sqrt = 1.0 / sqrt(<double>rs.visits)


cdef void ismcts_iteration(const SearchSpec* sp, Worker* w) noexcept nogil:
    """One determinization: sample a world, pick a root candidate by UCB (with progressive
    widening for allocations), then descend from it (ismcts_descend). A pool's world is
    read where it lies (draw_world's pick, the same draw), not copied twice."""
    cdef State st
    cdef const State* world = &st
    cdef int ci
    if sp.pool_n > 0:
        world = &sp.pool[rng_below(&w.rng, sp.pool_n)]
    else:
        draw_world(sp, &w.rng, &st)
    w.worlds += 1
    ci = select_root(sp, w)
    ismcts_descend(sp, w, world, ci, &w.rng)


cdef void ismcts_descend(const SearchSpec* sp, Worker* w, const State* world, int ci, Rng* rng) noexcept nogil:
    """Apply root candidate ci to a copy of world, descend both trees to the first new
    node, play out to the end of the game, back the utilities up."""
    cdef State st = world[0]
    cdef int32_t path[MAX_PATH]
    cdef int plen = 0, created = 0, n, s, p, key, round0, root = sp.root_seat
    cdef int32_t rc, pc
    cdef uint64_t legal
    cdef uint64_t piles[MAX_GROUPS]
    cdef double u[MAX_PLAYERS]
    cdef double share[MAX_PLAYERS]
    cdef double pts[MAX_PLAYERS]
    cdef RootStat* rs
    cdef Node* nd
    n = st.cfg.n_players
    round0 = st.round
    rs = &w.root[ci]
    if rs.node < 0:
        rs.node = new_node(w, -1, ci, root)
        created = 1
    rc = rs.node
    path[plen] = rc
    plen += 1
    pc = 0 if sp.two_trees else -1
    apply_candidate(sp, &st, ci)
    while not created and st.round == round0 and plen < MAX_PATH - 4:
        if st.phase == PHASE_PLAY:
            p = st.to_move
            if p != root and sp.any_exact and rng_next(rng) < sp.exact_threshold[p]:
                key = policy_card(&st, &sp.policy, rng)
                rc = child_or_new(w, rc, key, p, &created)
                csl_prefetch(&w.pool[rc])   # read at the next card: its load overlaps the rules' work
                path[plen] = rc
                plen += 1
                if pc >= 0:
                    pc = child_or_new(w, pc, key, p, &created)
                    csl_prefetch(&w.pool[pc])
                    path[plen] = pc
                    plen += 1
            elif pc < 0 or p == root:
                legal = legal_plays(&st)
                rc = select_child(w, rc, legal, p, sp.exploration, &created)
                key = w.pool[rc].key
                path[plen] = rc
                plen += 1
                if pc >= 0:
                    pc = child_or_new(w, pc, key, p, &created)
                    csl_prefetch(&w.pool[pc])
                    path[plen] = pc
                    plen += 1
            else:
                legal = legal_plays(&st)
                pc = select_child(w, pc, legal, p, sp.exploration, &created)
                key = w.pool[pc].key
                path[plen] = pc
                plen += 1
                rc = child_or_new(w, rc, key, p, &created)
                csl_prefetch(&w.pool[rc])
                path[plen] = rc
                plen += 1
            state_play_unchecked(&st, key)
        elif st.phase == PHASE_ALLOCATE:
            for s in range(n):
                if not (st.allocated_mask >> s) & 1:
                    allocate_modelled(sp, &st, s, rng, piles, NULL)
                    state_allocate(&st, s, piles)
        elif st.phase == PHASE_WEATHER:
            if not (st.weather_done_mask >> root) & 1:
                rc = select_child(w, rc, 3, root, sp.exploration, &created)
                path[plen] = rc
                plen += 1
                state_declare(&st, root, w.pool[rc].key)
                if created:
                    break
            for s in range(n):
                if not (st.weather_done_mask >> s) & 1:
                    state_declare(&st, s, policy_declare(&st, &sp.policy, s, rng))
            key = st.declared_mask
            rc = child_or_new(w, rc, key, -1, &created)
            path[plen] = rc
            plen += 1
            if pc >= 0:
                pc = child_or_new(w, pc, key, -1, &created)
                path[plen] = pc
                plen += 1
        else:
            break
    playout(sp, &st, rng)
    outcome(sp, &w.value_tables, &st, u, share, pts)
    for s in range(plen):
        nd = &w.pool[path[s]]
        nd.visits += 1
        if nd.mover >= 0:
            nd.reward += u[nd.mover]
    record_root(sp, rs, &w.root_seats[ci * ROOT_SEATS], u, share, pts)


cdef void halving_size_round(Worker* w) noexcept nogil:
    """Worlds for the coming round: an equal share of the budget per round left, one
    iteration always kept back so that the last survivor ends with the most visits."""
    cdef int64_t worlds
    if w.rounds_left <= 0 or w.n_alive <= 1:
        w.round_worlds_left = (<int64_t>1) << 62
        return
    worlds = (w.budget_left - 1) // (w.rounds_left * w.n_alive)
    w.round_worlds_left = worlds if worlds >= 1 else 1


cdef inline int ceil_log2(int64_t m) noexcept nogil:
    cdef int r = 0
    while (<int64_t>1 << r) < m:
        r += 1
    return r


cdef void halving_start(const SearchSpec* sp, Worker* w, int64_t budget) noexcept nogil:
    """Sequential halving (Karnin, Koren & Somekh 2013) over the first m >= 2 allocations in
    prior order: m as large as lets each get halving_min_worlds worlds in the first of its
    ceil(log2 m) rounds, which share the budget equally."""
    cdef int64_t m = sp.n_cand, i
    while m > 2 and m * ceil_log2(m) * sp.halving_min_worlds > budget:
        m -= 1
    for i in range(m):
        w.alive[i] = <int32_t>i
    w.n_alive = <int32_t>m
    w.next_alive = 0
    w.rounds_left = ceil_log2(m)
    w.budget_left = budget
    halving_size_round(w)


cdef inline bint _ranks_before(const Worker* w, int32_t a, int32_t b) noexcept nogil:
    if w.root[a].mean != w.root[b].mean:
        return w.root[a].mean > w.root[b].mean
    return a < b


cdef void halving_next_round(Worker* w) noexcept nogil:
    """Keep the better half of the survivors by mean utility (ties: prior order). Every
    survivor has been tried on the same worlds, so the comparison is paired."""
    cdef int i, j
    cdef int32_t x
    for i in range(1, w.n_alive):
        x = w.alive[i]
        j = i - 1
        while j >= 0 and _ranks_before(w, x, w.alive[j]):
            w.alive[j + 1] = w.alive[j]
            j -= 1
        w.alive[j + 1] = x
    w.n_alive = (w.n_alive + 1) // 2
    w.rounds_left -= 1
    halving_size_round(w)


cdef void split_others_first(const SearchSpec* sp, State* st, Rng* rng) noexcept nogil:
    """Split every other seat still to split now, as the tree would (allocate_modelled):
    splits are simultaneous, so theirs do not depend on the searcher's, and every survivor
    of a halving round then meets the same splits without drawing them again."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef int s
    for s in range(st.cfg.n_players):
        if s != sp.root_seat and not (st.allocated_mask >> s) & 1:
            allocate_modelled(sp, st, s, rng, piles, NULL)
            state_allocate(st, s, piles)


cdef void halving_iteration(const SearchSpec* sp, Worker* w) noexcept nogil:
    """One iteration of sequential halving: the next survivor on the current world, with
    the world's own playout stream (common random numbers: every survivor meets the same
    hidden cards, the same later deals and, as far as play stays alike, the same random
    choices)."""
    cdef State st
    cdef Rng rng
    if w.next_alive == 0:
        if w.round_worlds_left <= 0:
            halving_next_round(w)
        draw_world(sp, &w.rng, &w.world)
        if sp.any_mix and sp.root_kind == ROOT_ALLOCATE:
            split_others_first(sp, &w.world, &w.rng)
        rng_seed(&w.world_rng, rng_next(&w.rng))
        w.worlds += 1
        w.round_worlds_left -= 1
    rng = w.world_rng
    ismcts_descend(sp, w, &w.world, w.alive[w.next_alive], &rng)
    w.next_alive += 1
    if w.next_alive >= w.n_alive:
        w.next_alive = 0
    w.budget_left -= 1


cdef inline int pimc_width(const SearchSpec* sp) noexcept nogil:
    """Candidates a PIMC world evaluates: all, or the first pimc_candidates allocations."""
    if sp.root_kind == ROOT_ALLOCATE and sp.n_cand > sp.pimc_candidates:
        return sp.pimc_candidates
    return sp.n_cand


cdef void pimc_iteration(const SearchSpec* sp, Worker* w) noexcept nogil:
    """Flat determinized Monte Carlo: one world, one playout for each of the first
    pimc_width candidates (all of them for weather and card play)."""
    cdef State world, st
    cdef int i, k = pimc_width(sp)
    cdef double u[MAX_PLAYERS]
    cdef double share[MAX_PLAYERS]
    cdef double pts[MAX_PLAYERS]
    draw_world(sp, &w.rng, &world)
    w.worlds += 1
    for i in range(k):
        st = world
        apply_candidate(sp, &st, i)
        playout(sp, &st, &w.rng)
        outcome(sp, &w.value_tables, &st, u, share, pts)
        record_root(sp, &w.root[i], &w.root_seats[i * ROOT_SEATS], u, share, pts)


cdef inline double now_s() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline double thread_cpu_s() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline void settle_publish(const SearchSpec* sp, const Worker* w, int64_t done) noexcept nogil:
    """Put this thread's root visits, then its iterations done, on its settle board."""
    cdef SettleBoard* b = w.board
    cdef int i
    for i in range(sp.n_cand):
        csl_publish(&b.visits[w.board_index * b.n_cand + i], w.root[i].visits)
    csl_publish_last(&b.done[w.board_index], done)


cdef inline bint root_settled(const SearchSpec* sp, const Worker* w, int64_t left) noexcept nogil:
    """Whether the most visited root candidate leads every other by more than left visits:
    then left more iterations cannot change which candidate is most visited (the answer).
    With a board (settle_publish first), over all the search's threads: each one's visits
    as last published (at least those of its published iterations done), left all their
    iterations not yet published as done, so no way of spending the rest of any budget
    changes the summed answer. A root of one candidate is settled from the start."""
    cdef int64_t first = 0, second = 0, v
    cdef int i, t
    cdef SettleBoard* b = w.board
    if sp.n_cand == 1:   # every legal move plays as one (equal_cards)
        return True
    if b != NULL:
        left = 0
        for t in range(b.n_threads):
            left += b.budget[t] - csl_read_first(&b.done[t])
    for i in range(sp.n_cand):
        if b == NULL:
            v = w.root[i].visits
        else:
            v = 0
            for t in range(b.n_threads):
                v += csl_read(&b.visits[t * b.n_cand + i])
        if v > first:
            second = first
            first = v
        elif v > second:
            second = v
    return first - second > left


cdef int64_t worker_run(const SearchSpec* sp, Worker* shared, int64_t iterations, double seconds,
                        const int* stop, bint stop_settled) noexcept nogil:
    """Run until iterations (if > 0) more are done or seconds (if > 0) have passed; the node
    pool grows by doubling between iterations, and a failed growth ends the run early.
    Every run does at least one iteration (one world) unless *stop is set: it is read
    before every iteration (one playout, a few microseconds), so another thread stops the
    run at once by setting it. The worker's counters live on this thread's stack while it
    runs. A PIMC iteration is one playout; a world's candidates are never split, so PIMC
    stops at the last whole world within the limit. stop_settled: an ISMCTS run under an
    iteration limit (not a halving allocation root) also ends once its most visited root
    candidate cannot be overtaken in the iterations left (root_settled, looked at every
    64): the same answer for fewer iterations."""
    cdef Worker local = shared[0]
    cdef Worker* w = &local
    cdef int64_t done = 0, step = 1
    cdef double start = now_s() if seconds > 0.0 else 0.0
    cdef double cpu0 = thread_cpu_s()
    if sp.algorithm == ALGO_PIMC:
        step = pimc_width(sp)
    elif (sp.root_kind == ROOT_ALLOCATE and iterations > 0 and w.iterations == 0
          and sp.n_cand > 1):
        halving_start(sp, w, iterations)
    while True:
        if csl_flag_get(stop):
            break
        if iterations > 0 and done + step > iterations and (done > 0 or w.iterations > 0):
            break
        if (stop_settled and iterations > 0 and (done & 63) == 0 and done > 0 and w.n_alive == 0
                and sp.algorithm == ALGO_ISMCTS):
            if w.board != NULL:
                settle_publish(sp, w, done)
            if root_settled(sp, w, iterations - done):
                w.settled = 1
                break
        if (seconds > 0.0 and done > 0 and (sp.algorithm == ALGO_PIMC or (done & 15) == 0)
                and now_s() - start >= seconds):
            break
        if sp.algorithm == ALGO_ISMCTS:
            if w.used + RESERVE_NODES > w.cap and not worker_alloc(w, w.cap * 2):
                w.failed = 1
                break
            if w.n_alive > 0:
                halving_iteration(sp, w)
            else:
                ismcts_iteration(sp, w)
        else:
            pimc_iteration(sp, w)
        w.iterations += step
        done += step
    w.cpu_s += thread_cpu_s() - cpu0
    shared[0] = local
    return done
