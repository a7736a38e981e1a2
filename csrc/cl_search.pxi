# Candy Lab's determinized ISMCTS in C (the algorithm of csl_ai/candylab/search.py's
# docstring): worlds drawn from one seat's view, selection by UCB over the moves legal in
# each world with availability counts, one expansion an iteration (the heuristic's move
# first), a heuristic playout with epsilon of random moves, each seat's share of the win
# backed up. Nodes live in one growing array and are linked by index. Included by
# cl_core.pyx.

cdef enum:
    CL_MAX_PATH = 2048
    CL_CLOCK_EVERY = 16

ctypedef struct ClNode:
    int32_t move
    int32_t key
    int32_t first_child
    int32_t next_sibling
    int32_t visits
    int32_t avail
    int32_t wins
    int32_t player
    double reward

# One seat's view as a template: the public table, the seat's hand and the cards it knows
# in other hands in ``base``; ``pool`` the cards it cannot place, dealt afresh into
# ``places`` (hand indices, ``needs`` cards each), then the face-down pile (``pile_size``,
# top last), the rest to the box.
ctypedef struct ClWorlds:
    ClState base
    int8_t pool[CL_ORDERS]
    int32_t n_pool
    int8_t places[CL_MAX_SEATS + 1]
    int8_t needs[CL_MAX_SEATS + 1]
    int32_t n_places
    int32_t pile_size

ctypedef struct ClSearchConfig:
    double exploration
    double prior_weight
    double epsilon
    bint random_playout


cdef void cl_sample_world(const ClWorlds* w, Rng* rng, ClState* out) noexcept nogil:
    cdef int8_t cards[CL_ORDERS]
    cdef int i, j, p, k, c
    cdef int8_t tmp
    out[0] = w.base
    for i in range(w.n_pool):
        cards[i] = w.pool[i]
    i = w.n_pool - 1
    while i > 0:
        j = rng_below(rng, i + 1)
        tmp = cards[i]
        cards[i] = cards[j]
        cards[j] = tmp
        i -= 1
    k = 0
    for p in range(w.n_places):
        for j in range(w.needs[p]):
            out.hands[w.places[p]] |= (<uint64_t>1) << cards[k]
            k += 1
    for j in range(w.pile_size):
        out.pile[j] = cards[k]
        k += 1
    out.pile_len = w.pile_size
    while k < w.n_pool:
        out.box |= (<uint64_t>1) << cards[k]
        k += 1


cdef inline int cl_move_key(const ClCat* cat, int move) noexcept nogil:
    """The move as every seat sees it: a play names its order by the first card of its
    kind (the ids in a hidden hand differ between worlds)."""
    if move & 15 == MV_PLAY:
        return (move & ~(255 << 4)) | cat.order_first[(move >> 4) & 255] << 4
    return move


cdef inline int cl_policy_move(const ClState* s, const int* moves, int n, const ClSearchConfig* cfg,
                               Rng* rng) noexcept nogil:
    if n == 1:
        return moves[0]
    if cfg.random_playout or rng_unit(rng) < cfg.epsilon:
        return moves[rng_below(rng, n)]
    return cl_heuristic_move(s, moves, n)


cdef void cl_playout(ClState* s, const ClSearchConfig* cfg, Rng* rng) noexcept nogil:
    cdef int moves[CL_MAX_MOVES]
    cdef int n
    while s.phase != PH_OVER:
        n = cl_legal_moves(s, moves)
        cl_apply(s, cl_policy_move(s, moves, n, cfg, rng))


cdef struct ClTree:
    ClNode* nodes
    int32_t size
    int32_t capacity
    int32_t limit


cdef int cl_tree_add(ClTree* t, int parent, int move, int key, int player) noexcept nogil:
    """A new child of parent, first in its list; -1 when the tree is at its limit or memory
    runs out."""
    cdef ClNode* grown
    cdef int i
    cdef int32_t grow
    if t.size == t.capacity:
        if t.capacity >= t.limit:
            return -1
        grow = t.limit if t.capacity > t.limit // 2 else 2 * t.capacity
        grown = <ClNode*>realloc(t.nodes, grow * sizeof(ClNode))
        if grown == NULL:
            return -1
        t.nodes = grown
        t.capacity = grow
    i = t.size
    t.size += 1
    t.nodes[i].move = move
    t.nodes[i].key = key
    t.nodes[i].first_child = -1
    t.nodes[i].next_sibling = t.nodes[parent].first_child
    t.nodes[i].visits = 0
    t.nodes[i].avail = 1
    t.nodes[i].wins = 0
    t.nodes[i].player = player
    t.nodes[i].reward = 0.0
    t.nodes[parent].first_child = i
    return i


cdef inline int cl_find_child(const ClTree* t, int parent, int key) noexcept nogil:
    cdef int c = t.nodes[parent].first_child
    while c >= 0:
        if t.nodes[c].key == key:
            return c
        c = t.nodes[c].next_sibling
    return -1


cdef inline bint cl_root_settled(const ClTree* t, int64_t left) noexcept nogil:
    """Whether the root's most visited child leads every other (and any move not yet
    tried) by more than left visits: left more iterations cannot change the answer."""
    cdef int64_t first = 0, second = 0, v
    cdef int c = t.nodes[0].first_child
    while c >= 0:
        v = t.nodes[c].visits
        if v > first:
            second = first
            first = v
        elif v > second:
            second = v
        c = t.nodes[c].next_sibling
    return first - second > left


cdef int64_t cl_search_run(const ClWorlds* w, const ClSearchConfig* cfg, ClTree* t, Rng* rng_state,
                           int64_t iterations, double seconds, const int* stop, bint stop_settled) noexcept nogil:
    """Run up to iterations (and up to seconds, when positive; until *stop is set) from the
    root t.nodes[0], drawing on rng_state; the iterations run, or -1 - (the iterations run)
    when the tree could not grow (the iteration that found it full is not counted).
    stop_settled: also stop once the root's answer is settled (cl_root_settled, looked at
    every 64 iterations)."""
    cdef Rng rng
    cdef ClState st
    cdef int moves[CL_MAX_MOVES]
    cdef int untried[CL_MAX_MOVES]
    cdef int path[CL_MAX_PATH]
    cdef double ret[CL_MAX_SEATS]
    cdef int64_t done = 0
    cdef int n, i, node, child, player, preferred, n_untried, best, best_move, path_len, m, key
    cdef double value, best_value, r
    cdef double start = cl_now_s()
    cdef const ClCat* cat = w.base.cat
    cdef bint use_prior = cfg.prior_weight > 0
    rng = rng_state[0]
    while done < iterations:
        if stop[0] or (seconds > 0 and done > 0 and done % CL_CLOCK_EVERY == 0
                       and cl_now_s() - start >= seconds):
            break
        if stop_settled and done > 0 and (done & 63) == 0 and cl_root_settled(t, iterations - done):
            break
        cl_sample_world(w, &rng, &st)
        st.rng = rng_next(&rng)
        node = 0
        path_len = 0
        while st.phase != PH_OVER and path_len < CL_MAX_PATH:
            n = cl_legal_moves(&st, moves)
            player = st.current
            preferred = cl_heuristic_move(&st, moves, n) if use_prior and n > 1 else -1
            n_untried = 0
            best = -1
            best_move = -1
            best_value = -1e300
            for i in range(n):
                key = cl_move_key(cat, moves[i])
                child = cl_find_child(t, node, key)
                if child < 0:
                    untried[n_untried] = i
                    n_untried += 1
                    continue
                t.nodes[child].avail += 1
                if n_untried == 0:
                    value = (t.nodes[child].reward / t.nodes[child].visits
                             + cfg.exploration * sqrt(log(<double>t.nodes[child].avail) / t.nodes[child].visits))
                    if moves[i] == preferred:
                        value += cfg.prior_weight / (t.nodes[child].visits + 1)
                    if value > best_value:
                        best, best_move, best_value = child, moves[i], value
            if n_untried:
                m = -1
                if n_untried > 1:
                    for i in range(n_untried):
                        if moves[untried[i]] == preferred:
                            m = moves[untried[i]]
                            break
                    if m < 0:
                        m = moves[untried[rng_below(&rng, n_untried)]]
                else:
                    m = moves[untried[0]]
                child = cl_tree_add(t, node, m, cl_move_key(cat, m), player)
                if child < 0:
                    rng_state[0] = rng
                    return -1 - done
                cl_apply(&st, m)
                path[path_len] = child
                path_len += 1
                break
            cl_apply(&st, best_move)
            path[path_len] = best
            path_len += 1
            node = best
        cl_playout(&st, cfg, &rng)
        cl_returns(&st, ret)
        for i in range(path_len):
            child = path[i]
            r = ret[t.nodes[child].player]
            t.nodes[child].visits += 1
            t.nodes[child].reward += r
            if r > 0:
                t.nodes[child].wins += 1
        done += 1
    rng_state[0] = rng
    return done
