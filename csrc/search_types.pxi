# Information-set MCTS (and flat determinized Monte Carlo) over sampled worlds, in C: the
# types, here, then playout.pxi (the playout rules and the playout), splits.pxi (the
# others' hidden splits), worlds.pxi (the worlds an iteration searches), tree.pxi (the tree
# and its iterations) and engine.pxi (the Python boundary). Included by _core.pyx after
# sampler.pxi, in that order; everything below the Python classes is nogil.
#
# Variant: multiple-observer ISMCTS (Cowling, Powley & Whitehouse 2012), cut to what this
# game needs. Every card play is public, so a tree keyed by public events serves every seat
# that cannot see the searcher's private choices; the searcher's own allocation and weather
# bet are hidden from the others. Hence two trees when the root decision is private
# (allocation or weather): the searcher's tree, keyed by its own choices and public events,
# and a public tree in which the searcher's private choices are one merged edge. The
# searcher picks its moves in its tree; every other seat picks its card plays in the public
# tree, by UCB over the cards legal for its own pile in the sampled world (availability
# counts, as in ISMCTS). When the root decision is a card play there is nothing private left
# in the round and one tree does both jobs. The others' own hidden choices (allocations and
# weather bets) come from the playout rules, which read only the acting seat's own cards and
# public facts: a tree over them would be keyed by a hand that differs in every world and so
# never share a statistic. After the declarations a public "reveal" node branches on the
# declared mask. The tree covers the current round; later rounds are playouts.
#
# Allocation roots under an iteration budget use sequential halving (halving_iteration):
# the first m candidates in prior order, each round trying every survivor on the same worlds
# with the same playout stream and keeping the better half by mean utility.
#
# Tree storage: one preallocated pool of 32-byte nodes per worker, children found through
# an open-addressing table keyed by (parent, key) plus a per-node mask of the keys present,
# so selection touches only the children legal in the sampled world.
#
# Playouts run in "strength order": a card mask is permuted so that bit order is playing
# strength (red and green ranks interleaved in bits 0..23, blue above in bits 24..35).
# Then the weakest card is the lowest bit, the strongest the highest, a colour is a fixed
# mask, and "beats the trick so far" is one comparison, so the rule policy costs a few
# bit operations per card.
from posix.stdlib cimport posix_memalign
from libc.math cimport exp
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC, CLOCK_THREAD_CPUTIME_ID

cdef extern from *:
    """
    #if defined(__BMI2__)
    #include <immintrin.h>
    static inline unsigned long long csl_pdep(unsigned long long x, unsigned long long m) { return _pdep_u64(x, m); }
    static inline unsigned long long csl_pext(unsigned long long x, unsigned long long m) { return _pext_u64(x, m); }
    #else
    static inline unsigned long long csl_pdep(unsigned long long x, unsigned long long m) {
        unsigned long long r = 0, b;
        for (b = 1; m; b += b) { if (x & b) r |= m & (0ULL - m); m &= m - 1; }
        return r;
    }
    static inline unsigned long long csl_pext(unsigned long long x, unsigned long long m) {
        unsigned long long r = 0, b;
        for (b = 1; m; b += b) { if (x & m & (0ULL - m)) r |= b; m &= m - 1; }
        return r;
    }
    #endif
    #define CSL_S_RED 0x555555ULL
    #define CSL_S_GREEN 0xAAAAAAULL
    #define CSL_S_BLUE 0xFFF000000ULL
    #define CSL_ALL_ONES 0xFFFFFFFFFFFFFFFFULL
    #define csl_prefetch(p) __builtin_prefetch(p)
    static inline int csl_flag_get(const int* p) { return *(const volatile int*)p; }
    static inline void csl_flag_set(int* p, int v) { *(volatile int*)p = v; }
    static inline void csl_publish(long long* p, long long v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline void csl_publish_last(long long* p, long long v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline long long csl_read(const long long* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline long long csl_read_first(const long long* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    """
    uint64_t csl_pdep(uint64_t x, uint64_t m) nogil
    uint64_t csl_pext(uint64_t x, uint64_t m) nogil
    const uint64_t CSL_S_RED
    const uint64_t CSL_S_GREEN
    const uint64_t CSL_S_BLUE
    const uint64_t CSL_ALL_ONES
    void csl_prefetch(const void* p) nogil
    int csl_flag_get(const int* p) nogil
    void csl_flag_set(int* p, int v) nogil
    void csl_publish(long long* p, long long v) nogil
    void csl_publish_last(long long* p, long long v) nogil
    long long csl_read(const long long* p) nogil
    long long csl_read_first(const long long* p) nogil

cdef enum:
    ROOT_ALLOCATE = 0
    ROOT_WEATHER = 1
    ROOT_PLAY = 2
    ALGO_ISMCTS = 0
    ALGO_PIMC = 1
    UTIL_WIN = 0
    UTIL_POINTS = 1
    MAX_CANDIDATES = 1680
    MAX_PATH = 160
    N_CARD_FEATURES = 16
    N_SPLIT_FEATURES = 4
    N_VALUE_FEATURES = 15
    SPLIT_FIRST = 10                  # the first split_* value feature (value.pxi)
    MAX_VALUE_ROUNDS = 6
    MAX_SPLIT_GAIN = 2 * MAX_SKY + 1  # entries of a split gain pmf (value.pxi)
    VALUE_BELOW_ROWS = 16             # candy counts whose split rows ValueTables keeps
    VALUE_ROW = 3 * MAX_SPLIT_GAIN    # the length of one
    CANDY_MEMO = 256                  # candy tallies whose mean candy points ValueTables keeps
    MAX_POOL = 1 << 16
    MAX_SPLIT_TABLE = 1 << 12
    MIX_STRIDE = 1 << MAX_LINE  # pile masks over a hand's positions (mixture_allocate)
    MIX_MAX_PILE = 4            # the largest group (5 players: 3 and 4)
    MIX_MAX_SUBSETS = 126       # C(9, 4): the most piles of one size in a hand
    MAX_ROUND_PLAYS = 48
    MAX_OVERSAMPLE = 64
    MAX_LEGAL = 12
    RESERVE_NODES = 8
    ROOT_SEATS = MAX_PLAYERS + 1
    CACHE_LINE = 64
    MAX_NODES = 1 << 25
    VALUE_HAVE = 16
    SCORE_TABLE = 20
    TRACE_DEAL = 1
    TRACE_ALLOCATE = 2
    TRACE_DECLARE = 3
    TRACE_PLAY = 4


ctypedef struct Node:
    int32_t edges       # where its children's indices start in the worker's edges, in key
                        # order (-1: no child yet)
    int32_t visits
    int32_t avail
    int16_t key         # card, declaration (0/1), declared mask or root candidate index
    int8_t mover        # seat whose move leads here; -1 for a public reveal
    int8_t edge_bits    # room for 1 << edge_bits children's indices at edges
    double reward       # sum of the mover's utility over visits
    uint64_t child_mask # keys of the children present


ctypedef struct Policy:
    int32_t rules       # 1: the rules below; 0: uniformly random moves
    double epsilon
    uint64_t eps_threshold[MAX_PLAYERS]   # per seat: chance of a uniformly random move
    uint64_t coin_threshold[MAX_PLAYERS]  # per seat: chance the weather bet is a coin toss
    double weather_threshold
    double void_bonus
    double danger[N_RAIN]
    double danger_s[64]
    double sky_value[N_KINDS][VALUE_HAVE][3]
    uint64_t deck_s     # the rain cards in use, in strength order
    int32_t learned     # 1: cards by the learned softmax (learned.pxi) instead of choose_pos
    double card_w[N_CARD_FEATURES]
    int32_t value_horizon  # a playout stops at a round's end once at most this many rounds remain
                           # (the learned value stands for them); 0: it plays to the game's end


ctypedef struct SearchSpec:
    Sampler* sampler
    Policy policy
    int32_t root_seat
    int32_t root_kind
    int32_t n_cand
    uint64_t* cand_piles
    int32_t* cand_key
    int32_t algorithm
    int32_t utility
    int32_t two_trees
    int32_t pimc_candidates
    double exploration
    double margin_weight
    double margin_scale
    double points_scale
    double widening_base
    double widening_coef
    double widening_alpha
    int32_t halving_min_worlds  # worlds each candidate gets in the first halving round
    double randomness[MAX_PLAYERS]  # per seat: the chance it plays like a random player
    uint64_t exact_threshold[MAX_PLAYERS]  # per seat: chance it plays exactly by the rules (set_exact)
    int32_t any_exact       # 1: some seat has a positive exact chance
    # the round's public play and the others' split tables (set_round_record, set_split_table)
    uint64_t played_from[MAX_PLAYERS][MAX_GROUPS]  # cards each seat has played from each pile
    uint8_t pile_void[MAX_PLAYERS][MAX_GROUPS]     # colours each seat has shown its pile lacks
    uint64_t* split_table[MAX_PLAYERS]  # per seat: split_n[s] whole splits, MAX_GROUPS piles each
    double* split_cum[MAX_PLAYERS]      # their cumulative weights (set_split_table)
    int32_t split_n[MAX_PLAYERS]        # 0: no table for the seat
    # the split mixture for seats still to split in the tree (set_split_model, 3 to 5 players)
    int32_t mix_on[MAX_PLAYERS]
    int32_t any_mix                     # 1: some seat has a split mixture
    double mix_share[MAX_PLAYERS][3]    # chance of the heuristic-worth, allocation-model, rules part
    double mix_vals[MAX_PLAYERS][MAX_GROUPS][MAX_LINE]  # each group's ducked sky worths, best first
    double mix_beta                     # the worth part's inverse temperature, per point
    double mix_model_w[N_SPLIT_FEATURES]  # the allocation-model part's weights
    double mix_blue_win[MAX_RANK + 1]    # a blue's chance to take its trick, by higher blues unseen
    double mix_side_win[MAX_RANK + 1]    # a red's or green's, by higher cards of its colour unseen
    double mix_synergy                  # extra tricks per blue in a pile short of a side colour
    double mix_top_share                # worth of the group's best cards (1) or an average one (0)
    int32_t mix_condition               # 1: after the first card, the pool's splits by the mixture given the play
    int32_t n_round_plays
    uint8_t round_play_seat[MAX_ROUND_PLAYS]  # this round's card plays, in order
    uint8_t round_play_card[MAX_ROUND_PLAYS]
    int32_t pool_n          # 0: worlds straight from the sampler; else drawn from the pool
    State* pool             # pool_n worlds, the others' splits drawn by the allocation model
    double value_w[MAX_VALUE_ROUNDS][N_VALUE_FEATURES]  # the learned value (value.pxi), by rounds left
    double value_pts_w[MAX_VALUE_ROUNDS][N_VALUE_FEATURES + 1]  # its expected final points


ctypedef struct ValueTables:
    # What the learned value's split features (value.pxi) need of the sky cards still to
    # come, made once for them and kept by each worker: the same in every iteration that
    # ends at the same round boundary, where only the tallies differ. Every number is
    # computed by the same operations, in the same order, as the features compute them.
    uint64_t key            # the player count, sides, star option and the singles and doubles of each kind to come
    int32_t valid           # 0: empty (a zeroed struct is)
    uint64_t remaining      # the card ids of the sky cards to come the tables were last used for
    uint8_t deck_kind[MAX_SKY]   # and the deck they were of (Config.sky_kind, sky_count)
    uint8_t deck_count[MAX_SKY]
    int32_t size            # entries of candy_pmf
    double candy_pmf[MAX_SPLIT_GAIN]         # the chance a seat gains g candies
    double candy_above[MAX_SPLIT_GAIN + 1]   # [j]: the chance of a gain >= j (1 at j = 0, 0 at size)
    double candy_not_above[MAX_SPLIT_GAIN + 1]  # [j]: 1 - candy_above[j]
    double spider_mean[7]   # mean spider points, by the seat's spiders now (6 and more alike)
    double leopard_mean[8]  # mean leopard points, by its leopards now (7 and more alike)
    double star_two[4]      # the chance it ends with exactly two stars, by its stars now (3 and more alike)
    double star_three[4]    # with three or more
    uint64_t candy_key[CANDY_MEMO]   # the candy tallies of every seat, 8 bits a seat above a 1 bit; 0: none
    double candy_mean[CANDY_MEMO][MAX_PLAYERS]  # each seat's mean candy points under them
    uint32_t below_ready    # bit c: below[c] is filled
    double below[VALUE_BELOW_ROWS][VALUE_ROW]  # [c]: the candy row of a seat with c candies (value.pxi _candy_row)


ctypedef struct RootStat:
    int64_t visits
    double sum_u
    double sum_u2
    double sum_win
    double sum_points
    double mean
    double inv_sqrt
    int32_t node


ctypedef struct SettleBoard:
    # One search's threads, settling together (root_settled): each publishes its root
    # visits, then the iterations it has done (release), every 64 iterations; a reader
    # reads the iterations first (acquire), so the visits it reads are at least those of
    # that moment.
    int32_t n_threads
    int32_t n_cand
    long long* visits   # n_threads * n_cand
    long long* done     # n_threads
    long long* budget   # n_threads


ctypedef struct Worker:
    Node* pool
    int64_t cap
    int64_t used
    int32_t* edges      # every node's children's indices, a block a node (see edge_insert)
    int64_t edges_used
    Rng rng
    RootStat* root
    double* root_seats  # per candidate ROOT_SEATS numbers: the root seat's sum of squared win
                        # shares, then every seat's sum of win shares (for the reports only)
    int64_t iterations
    int64_t worlds
    int32_t failed      # 1: the pool could not grow (memory, MAX_NODES or max_bytes)
    int32_t settled     # 1: a run ended before its iterations because its answer was settled
    SettleBoard* board  # the search's threads settling together (NULL: this tree alone)
    int32_t board_index # this worker's row of the board
    int64_t max_bytes   # ceiling on the pool and child table, old and new while growing; 0: none
    double cpu_s        # thread CPU time spent searching
    # sequential halving at an allocation root (see halving_iteration)
    int32_t* alive      # surviving candidates; the first n_alive entries
    int32_t n_alive     # 0 until halving_start: the root is searched by UCB
    int32_t next_alive  # next survivor to try on the current world; 0: draw a new world
    int32_t rounds_left
    int64_t budget_left
    int64_t round_worlds_left
    Rng world_rng       # the current world's playout stream, the same for every survivor
    State world
    ValueTables value_tables  # the learned value's tables of the round boundary it last evaluated


ctypedef struct Trace:
    uint64_t* buf
    int32_t len
    int32_t cap
