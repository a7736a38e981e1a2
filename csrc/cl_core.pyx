# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Candy Lab's compiled core: the rules, the heuristic player and the ISMCTS search in C.

Everything in the included .pxi files is C-level (fixed structs, bitmasks, nogil). The
functions and the `SearchWorker` class below them are the boundary: they take and give the Python `State`
(``csl_ai.candylab.state``), a `Catalogue` and plain ints. The Python rules core stays the
reference the game, records and replay use; this one is its line-by-line image for the
search's hot loop (tests/test_candylab_core_c.py keeps the two in step).

Shared with Candy Spiders Leopards' core: the search's random generator (``rng.pxd``,
wyrand) and the bit tools; the tree, the worlds and the rules are each game's own.
"""
from libc.stdint cimport uint64_t, uint32_t, int8_t, int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from libc.math cimport sqrt, log
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from cards cimport popcount, lowest_card
from rng cimport Rng, rng_seed, rng_next, rng_below, rng_unit
from cl_state cimport *


cdef inline double cl_now_s() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


include "cl_rules.pxi"
include "cl_heuristic.pxi"
include "cl_search.pxi"


# --- the boundary ----------------------------------------------------------------------------
cdef class _Box:
    """A catalogue's flat tables as one C struct (made once per catalogue)."""
    cdef ClCat cat
    cdef object source


_BOXES: dict = {}


cdef _Box _box(object catalogue):
    cdef _Box box = _BOXES.get(id(catalogue))
    cdef int i, j
    if box is not None and box.source is catalogue:
        return box
    if len(catalogue.order_len) != CL_ORDERS or len(catalogue.bar_colour) != CL_BARS:
        raise ValueError(f"a catalogue holds {CL_ORDERS} order cards and {CL_BARS} candy bars")
    box = _Box.__new__(_Box)
    box.source = catalogue
    first = {}
    for i in range(CL_ORDERS):
        box.cat.order_len[i] = catalogue.order_len[i]
        pattern = catalogue.order_pattern[i]
        for j in range(3):
            box.cat.order_pattern[i][j] = pattern[j] if j < len(pattern) else -1
        box.cat.order_points[i] = catalogue.order_points[i]
        box.cat.order_type[i] = catalogue.order_type[i]
        first.setdefault(catalogue.order_type[i], i)
        box.cat.order_first[i] = first[catalogue.order_type[i]]
    for i in range(CL_BARS):
        box.cat.bar_colour[i] = catalogue.bar_colour[i]
        box.cat.bar_value[i] = catalogue.bar_value[i]
        box.cat.bar_effect[i] = catalogue.bar_effect[i]
        box.cat.bar_type[i] = catalogue.bar_type[i]
    cl_fill_codes(&box.cat)
    if len(_BOXES) > 64:
        _BOXES.clear()
    _BOXES[id(catalogue)] = box
    return box


cdef void _to_c(object s, ClState* out, _Box box) except *:
    cdef int i, p
    out.cat = &box.cat
    out.players = s.players
    out.belt_len = len(s.belt)
    for i in range(out.belt_len):
        out.belt[i] = s.belt[i]
    out.pile_len = len(s.pile)
    for i in range(out.pile_len):
        out.pile[i] = s.pile[i]
    for i in range(CL_FACE_UP):
        out.face_up[i] = s.face_up[i]
    for p in range(CL_MAX_SEATS):
        out.stack_len[p] = 0
        out.bars[p] = 0
    for p in range(s.players):
        stack = s.stacks[p]
        out.stack_len[p] = len(stack)
        for i in range(len(stack)):
            out.stacks[p][i] = stack[i]
        out.bars[p] = s.bars[p]
    for p in range(CL_MAX_SEATS + 1):
        out.hands[p] = s.hands[p] if p < len(s.hands) else 0
    out.box = s.box
    out.box_public = s.box_public
    out.current = s.current
    out.phase = s.phase
    out.pending = s.pending
    out.returned = s.returned
    out.draws_left = s.draws_left
    out.golden = s.golden
    out.end = s.end
    out.turn = s.turn
    out.rng = s.rng


cdef void _to_py(const ClState* c, object s) except *:
    cdef int p
    s.belt = [c.belt[i] for i in range(c.belt_len)]
    s.pile = [c.pile[i] for i in range(c.pile_len)]
    s.face_up = [c.face_up[i] for i in range(CL_FACE_UP)]
    s.stacks = [[c.stacks[p][i] for i in range(c.stack_len[p])] for p in range(c.players)]
    s.bars = [c.bars[p] for p in range(c.players)]
    s.hands = [c.hands[p] for p in range(c.players + 1)]
    s.box = c.box
    s.box_public = c.box_public
    s.current = c.current
    s.phase = c.phase
    s.pending = c.pending
    s.returned = c.returned
    s.draws_left = c.draws_left
    s.golden = c.golden
    s.end = c.end
    s.turn = c.turn
    s.rng = c.rng


def legal_moves(state) -> list:
    """The current player's legal moves (core.legal_moves: the same, in the same order)."""
    cdef ClState st
    cdef int moves[CL_MAX_MOVES]
    _to_c(state, &st, _box(state.cat))
    cdef int n = cl_legal_moves(&st, moves)
    return [moves[i] for i in range(n)]


def apply(state, int move) -> int:
    """Play a legal move on a Python State in place (core.apply's twin); the card shown."""
    cdef ClState st
    _to_c(state, &st, _box(state.cat))
    cdef int outcome = cl_apply(&st, move)
    _to_py(&st, state)
    return outcome


def heuristic_move(state) -> int:
    """The heuristic agent's move for the state's current seat (HeuristicAgent's twin)."""
    cdef ClState st
    cdef int moves[CL_MAX_MOVES]
    _to_c(state, &st, _box(state.cat))
    cdef int n = cl_legal_moves(&st, moves)
    if n == 0:
        raise ValueError("the game is over")
    return cl_heuristic_move(&st, moves, n)


def playouts(state, int games, uint64_t seed, double epsilon=1.0) -> float:
    """Play the state out ``games`` times (random moves with probability epsilon, else the
    heuristic's); the mean nanoseconds a playout, for the benchmarks."""
    cdef ClState base, st
    cdef ClSearchConfig cfg
    cdef Rng rng
    cdef int g
    cdef double start
    if games < 1:
        raise ValueError("games must be >= 1")
    _to_c(state, &base, _box(state.cat))
    cfg.exploration = 0.0
    cfg.prior_weight = 0.0
    cfg.epsilon = epsilon
    cfg.random_playout = epsilon >= 1.0
    rng_seed(&rng, seed)
    with nogil:
        start = cl_now_s()
        for g in range(games):
            st = base
            st.rng = rng_next(&rng)
            cl_playout(&st, &cfg, &rng)
        start = cl_now_s() - start
    return start * 1e9 / games


cdef void _worlds_from(object template, object pool, object places, object needs, int pile_size,
                       ClWorlds* w) except *:
    cdef int i
    if len(pool) > CL_ORDERS or len(places) != len(needs) or len(places) > CL_MAX_SEATS + 1:
        raise ValueError("worlds: bad pool or places")
    if pile_size < 0 or min(needs, default=0) < 0 or sum(needs) + pile_size > len(pool):
        raise ValueError("worlds: the places and the pile ask for more cards than the pool holds")
    _to_c(template, &w.base, _box(template.cat))
    w.n_pool = len(pool)
    for i in range(w.n_pool):
        w.pool[i] = pool[i]
    w.n_places = len(places)
    for i in range(w.n_places):
        w.places[i] = places[i]
        w.needs[i] = needs[i]
    w.pile_size = pile_size


def sample_worlds(template, pool, places, needs, int pile_size, int n, uint64_t seed) -> list:
    """n full States dealt from a world template (see `SearchWorker`), from seed: the worlds the
    search draws, for tests and analysis."""
    cdef ClWorlds w
    cdef ClState st
    cdef Rng rng
    _worlds_from(template, pool, places, needs, pile_size, &w)
    rng_seed(&rng, seed)
    out = []
    for _ in range(n):
        cl_sample_world(&w, &rng, &st)
        world = template.copy()
        _to_py(&st, world)
        out.append(world)
    return out


cdef class SearchWorker:
    """One thread's search: its own tree over worlds dealt from one seat's view, its own
    random stream. ``run`` releases the GIL, so workers on Python threads search in
    parallel (root parallelisation: csl_ai.threads.run_workers, as CSL's search does);
    their root statistics are merged by move key.

    ``template`` is a State holding what the seat can place (the table, its hand, the
    cards it knows in other hands; empty pile, box = what it saw there), ``pool`` the
    cards it cannot place, dealt into ``places`` (hand indices, ``needs`` cards each),
    ``pile_size`` of them to the pile, the rest to the box."""
    cdef ClWorlds worlds
    cdef ClSearchConfig cfg
    cdef ClTree tree
    cdef Rng rng
    cdef int stop
    cdef int64_t done
    cdef double seconds_spent
    cdef bint full

    def __cinit__(self):
        self.tree.nodes = NULL

    def __init__(self, template, pool, places, needs, int pile_size, *, uint64_t seed,
                 double exploration, double prior_weight, double epsilon, bint random_playout,
                 int32_t max_nodes=1 << 26):
        _worlds_from(template, pool, places, needs, pile_size, &self.worlds)
        self.cfg.exploration = exploration
        self.cfg.prior_weight = prior_weight
        self.cfg.epsilon = epsilon
        self.cfg.random_playout = random_playout
        rng_seed(&self.rng, seed)
        if max_nodes < 2:
            raise ValueError("max_nodes must be at least 2")
        self.tree.capacity = min(1024, max_nodes)
        self.tree.limit = max_nodes
        self.tree.size = 1
        self.tree.nodes = <ClNode*>malloc(self.tree.capacity * sizeof(ClNode))
        if self.tree.nodes == NULL:
            raise MemoryError()
        self.tree.nodes[0].first_child = -1
        self.tree.nodes[0].next_sibling = -1
        self.tree.nodes[0].visits = 0
        self.stop = 0
        self.done = 0
        self.seconds_spent = 0.0
        self.full = False

    def __dealloc__(self):
        free(self.tree.nodes)

    def run(self, int64_t iterations, double seconds=0.0, bint stop_settled=False) -> None:
        """Search up to iterations more (and up to seconds, when positive); stop_settled:
        stop sooner once the root's most visited move cannot be overtaken in the
        iterations left."""
        cdef int64_t done
        cdef double start
        with nogil:
            start = cl_now_s()
            done = cl_search_run(&self.worlds, &self.cfg, &self.tree, &self.rng, iterations, seconds,
                                 &self.stop, stop_settled)
            self.seconds_spent += cl_now_s() - start
        if done < 0:
            self.full = True
            done = -done - 1
        self.done += done

    def request_stop(self) -> None:
        """Stop the search at its next iteration (from another thread)."""
        self.stop = 1

    @property
    def iterations(self) -> int:
        return self.done

    @property
    def nodes(self) -> int:
        return self.tree.size - 1

    @property
    def seconds(self) -> float:
        return self.seconds_spent

    @property
    def full(self) -> bool:
        """Whether the tree reached max_nodes (or memory ran out) and the search stopped."""
        return self.full

    def root(self) -> list:
        """The root's children as (key, move, visits, reward, wins)."""
        cdef ClNode* n
        cdef int c = self.tree.nodes[0].first_child
        out = []
        while c >= 0:
            n = &self.tree.nodes[c]
            out.append((n.key, n.move, n.visits, n.reward, n.wins))
            c = n.next_sibling
        return out
