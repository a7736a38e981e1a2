# Information-set MCTS (and flat determinized Monte Carlo) over sampled worlds, in C.
# Included by _core.pyx after sampler.pxi; everything below the Python classes is nogil.
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
# declared mask. The tree covers the current round; later rounds are playouts. With
# opponents_rules the others' card plays in the tree come from the rules as well (one tree,
# single-observer ISMCTS for the searcher).
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
    MAX_BET_TRIES = 64
    N_CARD_FEATURES = 16
    N_SPLIT_FEATURES = 4
    N_VALUE_FEATURES = 15
    MAX_VALUE_ROUNDS = 6
    MAX_POOL = 1 << 16
    MAX_SPLIT_TABLE = 1 << 12
    MIX_STRIDE = 1 << MAX_LINE  # pile masks over a hand's positions (mixture_allocate)
    MIX_MAX_PILE = 4            # the largest group (5 players: 3 and 4)
    MIX_MAX_SUBSETS = 126       # C(9, 4): the most piles of one size in a hand
    MAX_ROUND_PLAYS = 48
    MAX_OVERSAMPLE = 64
    MAX_DRAWS = 1 << 18
    MAX_LEGAL = 12
    RESERVE_NODES = 8
    CACHE_LINE = 64
    MAX_NODES = 1 << 25
    VALUE_HAVE = 16
    SCORE_TABLE = 20
    TRACE_DEAL = 1
    TRACE_ALLOCATE = 2
    TRACE_DECLARE = 3
    TRACE_PLAY = 4


ctypedef struct Node:
    int32_t parent
    int32_t visits
    int32_t avail
    int16_t key         # card, declaration (0/1), declared mask or root candidate index
    int8_t mover        # seat whose move leads here; -1 for a public reveal
    int8_t _pad
    double reward       # sum of the mover's utility over visits
    uint64_t child_mask # keys of the children present


ctypedef struct Slot:
    int32_t tag         # parent * 64 + key; -1 when empty
    int32_t child


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
    int32_t opponents_rules  # 1: the others' card plays in the tree come from the rules
    int32_t model_allocations  # 1: the others' unseen splits come from the rules (see below)
    int32_t pimc_candidates
    double c_uct
    double margin_weight
    double margin_scale
    double points_scale
    double pw_base
    double pw_coef
    double pw_alpha
    int32_t halving             # 1: allocation roots by sequential halving over common worlds
    int32_t halving_min_worlds  # worlds each candidate gets in the first halving round
    int32_t bet_inference       # 1: worlds weighted by the others' public weather bets
    double bet_tremble          # a sensible seat's chance of either bet, whatever its hand
    double bet_centre           # hand danger at which a sensible seat bets half the time
    double bet_scale            # how sharply that chance falls with the danger
    double randomness[MAX_PLAYERS]  # per seat: the chance it plays like a random player
    uint64_t exact_threshold[MAX_PLAYERS]  # per seat: chance it plays exactly by the rules (set_exact)
    int32_t any_exact       # 1: some seat has a positive exact chance
    # allocation inference (see split_features and infer_splits)
    double split_w[2][N_SPLIT_FEATURES]  # a sensible seat's split weights; [1]: one that bet
    uint64_t played_from[MAX_PLAYERS][MAX_GROUPS]  # cards each seat has played from each pile
    uint8_t pile_void[MAX_PLAYERS][MAX_GROUPS]     # colours each seat has shown its pile lacks
    int32_t split_moves     # swap proposals per seat and world
    uint64_t* split_table[MAX_PLAYERS]  # per seat: split_n[s] whole splits, MAX_GROUPS piles each
    double* split_cum[MAX_PLAYERS]      # their cumulative weights (set_split_table)
    int32_t split_n[MAX_PLAYERS]        # 0: the seat's split by infer_splits, if at all
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
    int32_t mix_oversample              # worlds drawn per pool world, resampled by their hands' weights
    int32_t mix_reuse                   # pool worlds per sampled deal, each with its own splits
    # play inference (see play_log_likelihood)
    int32_t play_inference  # 1: the pool's worlds resampled by how likely the round's plays are
    double play_tremble     # a sensible seat's chance of any legal card instead of the rules' own
    int32_t play_by_class   # 1: the rules say only whether the card takes the trick so far
    int32_t play_fitted     # 1: a sensible seat's card by the fitted softmax play_w (learned.pxi)
    double play_w[N_CARD_FEATURES]
    int32_t oversample      # worlds drawn per pool world before the resampling
    int32_t n_round_plays
    uint8_t round_play_seat[MAX_ROUND_PLAYS]  # this round's card plays, in order
    uint8_t round_play_card[MAX_ROUND_PLAYS]
    double pool_ess         # the resampling's effective sample size (the pool's size without it)
    int32_t pool_n          # 0: worlds straight from the sampler; else drawn from the pool
    State* pool             # pool_n worlds, the others' splits drawn by the allocation model
    double value_w[MAX_VALUE_ROUNDS][N_VALUE_FEATURES]  # the learned value (value.pxi), by rounds left
    double value_pts_w[MAX_VALUE_ROUNDS][N_VALUE_FEATURES + 1]  # its expected final points


ctypedef struct RootStat:
    int64_t visits
    double sum_u
    double sum_u2
    double sum_win
    double sum_points
    double mean
    double inv_sqrt
    int32_t node


ctypedef struct Worker:
    Node* pool
    int64_t cap
    int64_t used
    Slot* table
    uint64_t table_mask
    int32_t table_bits
    Rng rng
    RootStat* root
    int64_t iterations
    int64_t worlds
    int32_t failed      # 1: the pool could not grow (memory, MAX_NODES or max_bytes)
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


ctypedef struct Trace:
    uint64_t* buf
    int32_t len
    int32_t cap


# --- strength order ------------------------------------------------------------------------

cdef inline uint64_t to_strength(uint64_t m) noexcept nogil:
    return (((m & 0xFFF) << 24) | csl_pdep((m >> 12) & 0xFFF, CSL_S_RED)
            | csl_pdep((m >> 24) & 0xFFF, CSL_S_GREEN))


cdef inline uint64_t from_strength(uint64_t s) noexcept nogil:
    return ((s >> 24) & 0xFFF) | (csl_pext(s, CSL_S_RED) << 12) | (csl_pext(s, CSL_S_GREEN) << 24)


cdef inline int card_of_pos(int p) noexcept nogil:
    if p >= 24:
        return p - 24
    return ((p & 1) + 1) * 12 + (p >> 1)


cdef inline int pos_of_card(int c) noexcept nogil:
    cdef int colour = card_colour(c), r = c % 12
    if colour == BLUE:
        return 24 + r
    return 2 * r + (colour - 1)


cdef inline uint64_t colour_mask_s(int colour) noexcept nogil:
    if colour == BLUE:
        return CSL_S_BLUE
    return CSL_S_RED if colour == RED else CSL_S_GREEN


cdef inline uint64_t pos_colour_mask(int p) noexcept nogil:
    if p >= 24:
        return CSL_S_BLUE
    return CSL_S_GREEN if p & 1 else CSL_S_RED


cdef inline uint64_t above(int p) noexcept nogil:
    return ~((bit(p) << 1) - 1)


cdef inline void trace_put(Trace* tr, uint64_t v) noexcept nogil:
    if tr.len < tr.cap:
        tr.buf[tr.len] = v
    tr.len += 1


# --- the playout rules (read only the acting seat's own cards and public facts) ---------

cdef inline uint64_t chance_threshold(double p) noexcept nogil:
    """The threshold t with P(rng_next < t) = p (all ones from p >= 1)."""
    if p >= 1.0:
        return CSL_ALL_ONES
    if p <= 0.0:
        return 0
    return <uint64_t>(p * 18446744073709551616.0)


cdef void policy_set_randomness(Policy* pp, int seat, double p) noexcept nogil:
    """Model seat as a uniformly random player with chance p (else the rules with their
    epsilon): each of its moves is random with chance p + (1 - p) epsilon, and its weather
    bet a coin toss with chance p."""
    if not pp.rules:
        return
    pp.eps_threshold[seat] = chance_threshold(p + (1.0 - p) * pp.epsilon)
    pp.coin_threshold[seat] = chance_threshold(p)


cdef void policy_init(Policy* pp, const Config* cfg, int rules, double epsilon,
                      double weather_threshold, double weather_blue, double weather_power,
                      double candy_value, double star_three_value, double potential_decay,
                      double void_bonus) noexcept nogil:
    """Fill the rule tables. sky_value[kind][have][count] is the gain, by a look-ahead of two
    elements (pot(h) = max(T[h], d T[h+1], d^2 T[h+2])), of taking count more elements of
    kind when holding have; T comes from the scoring rules themselves (state_scores)."""
    cdef State probe
    cdef int32_t out[MAX_PLAYERS * N_SCORE_COLS]
    cdef double table[SCORE_TABLE]
    cdef double pot[SCORE_TABLE]
    cdef int kind, h, cnt, c, col, top
    cdef double r, best
    pp.rules = rules
    pp.epsilon = epsilon
    pp.learned = 0
    pp.value_horizon = 0
    for c in range(N_CARD_FEATURES):
        pp.card_w[c] = 0.0
    for c in range(MAX_PLAYERS):
        pp.eps_threshold[c] = chance_threshold(epsilon if rules else 1.0)
        pp.coin_threshold[c] = 0
    pp.weather_threshold = weather_threshold
    pp.void_bonus = void_bonus
    for c in range(64):
        pp.danger_s[c] = 0.0
    for c in range(N_RAIN):
        r = card_rank(c) / <double>cfg.ranks
        if card_colour(c) == BLUE:
            pp.danger[c] = weather_blue + r
        else:
            pp.danger[c] = pow(r, weather_power)
        pp.danger_s[pos_of_card(c)] = pp.danger[c]
    pp.deck_s = to_strength(cfg.rain_in_use)
    for kind in range(N_KINDS):
        for h in range(SCORE_TABLE):
            if kind == KIND_CANDY:
                table[h] = candy_value * h
                continue
            if kind == KIND_STAR and h >= 3:
                table[h] = star_three_value
                continue
            memset(&probe, 0, sizeof(State))
            probe.cfg = cfg[0]
            probe.phase = PHASE_OVER
            probe.elems[0][kind] = h
            state_scores(&probe, out)
            col = COL_SPIDER if kind == KIND_SPIDER else (COL_LEOPARD if kind == KIND_LEOPARD else COL_STAR)
            table[h] = out[col]
        for h in range(SCORE_TABLE):
            best = table[h]
            if h + 1 < SCORE_TABLE and potential_decay * table[h + 1] > best:
                best = potential_decay * table[h + 1]
            if h + 2 < SCORE_TABLE and potential_decay * potential_decay * table[h + 2] > best:
                best = potential_decay * potential_decay * table[h + 2]
            pot[h] = best
        for h in range(VALUE_HAVE):
            pp.sky_value[kind][h][0] = 0.0
            for cnt in range(1, 3):
                top = h + cnt if h + cnt < SCORE_TABLE else SCORE_TABLE - 1
                pp.sky_value[kind][h][cnt] = pot[top] - pot[h]


cdef inline double sky_worth(const Policy* pp, int kind, int have, int count) noexcept nogil:
    """The rules' worth of count more elements of kind to a seat holding have of them."""
    return pp.sky_value[kind][have if have < VALUE_HAVE else VALUE_HAVE - 1][count]


cdef inline double sky_value_for(const State* st, const Policy* pp, int seat, int sky) noexcept nogil:
    cdef int kind = st.cfg.sky_kind[sky]
    return sky_worth(pp, kind, st.elems[seat][kind] + st.round_elems[seat][kind], st.cfg.sky_count[sky])


cdef inline bint wants_trick(const State* st, const Policy* pp, int seat) noexcept nogil:
    """A declarer never wants a trick; others want it when its sky card is worth taking."""
    if (st.declared_mask >> seat) & 1:
        return False
    return sky_value_for(st, pp, seat, st.sky_order[st.sky_pos + st.line_pos]) >= 0.0


cdef inline uint64_t trick_winners(uint64_t legal_s, uint64_t led_s, int best_p) noexcept nogil:
    """The cards of legal_s (strength order) that would take the trick from best_p."""
    return legal_s & (CSL_S_BLUE | led_s) & above(best_p)


cdef inline int choose_pos(uint64_t legal, bint lead, uint64_t led_s, int best_p, bint last,
                           bint want) noexcept nogil:
    """The rule for one card, in strength order. Leading: the strongest card when the trick's
    sky card is wanted, else the weakest. Following: when wanted, the cheapest card that beats
    the trick so far (a led-colour card before a trump), else the weakest; when not wanted
    (declarers always), the strongest card that still loses, else (forced to beat it) the
    strongest when last to play and the weakest otherwise, leaving later seats the chance
    to take it."""
    cdef uint64_t winners, losers
    if lead:
        return highest_card(legal) if want else lowest_card(legal)
    winners = trick_winners(legal, led_s, best_p)
    if want:
        return lowest_card(winners) if winners else lowest_card(legal)
    losers = legal & ~winners
    if losers:
        return highest_card(losers)
    return highest_card(legal) if last else lowest_card(legal)


cdef int policy_card(const State* st, const Policy* pp, Rng* rng) noexcept nogil:
    """The card the rules (or the learned policy) play for the seat to move (see choose_pos)."""
    cdef uint64_t legal = legal_plays(st), tb
    cdef uint64_t led_s = 0
    cdef int best_p = 0, best, sky
    if (legal & (legal - 1)) == 0:
        return lowest_card(legal)
    if rng_next(rng) < pp.eps_threshold[st.to_move]:
        return rng_pick_card(rng, legal)
    if st.n_in_trick != 0:
        led_s = colour_mask_s(st.led_colour)
        tb = st.trick_mask & colour_mask(BLUE)
        best = highest_card(tb) if tb else highest_card(st.trick_mask & colour_mask(st.led_colour))
        best_p = pos_of_card(best)
    if pp.learned:
        sky = st.sky_order[st.sky_pos + st.line_pos]
        return card_of_pos(learned_pos(pp, to_strength(legal), st.n_in_trick == 0, led_s, best_p,
                                       st.n_in_trick == st.cfg.n_players - 1,
                                       wants_trick(st, pp, st.to_move),
                                       (st.declared_mask >> st.to_move) & 1,
                                       sky_value_for(st, pp, st.to_move, sky), st.cfg.sky_kind[sky],
                                       unseen_by(st, st.to_move), rng))
    return card_of_pos(choose_pos(to_strength(legal), st.n_in_trick == 0, led_s, best_p,
                                  st.n_in_trick == st.cfg.n_players - 1,
                                  wants_trick(st, pp, st.to_move)))


cdef inline double hand_danger_s(const Policy* pp, uint64_t hand_s) noexcept nogil:
    cdef double d = 0.0
    while hand_s:
        d += pp.danger_s[lowest_card(hand_s)]
        hand_s &= hand_s - 1
    return d


cdef inline bint declare_rule(const Policy* pp, int seat, uint64_t hand_s, Rng* rng) noexcept nogil:
    """Declare good weather when the hand's danger (a rough count of the tricks it could win)
    is under the threshold; random playouts, and a seat modelled as random, toss a coin."""
    if not pp.rules:
        return <bint>(rng_next(rng) >> 63)
    if pp.coin_threshold[seat] and rng_next(rng) < pp.coin_threshold[seat]:
        return <bint>(rng_next(rng) >> 63)
    return hand_danger_s(pp, hand_s) < pp.weather_threshold


cdef inline bint policy_declare(const State* st, const Policy* pp, int seat, Rng* rng) noexcept nogil:
    return declare_rule(pp, seat, to_strength(st.hand[seat]), rng)


cdef void group_order(const State* st, const Policy* pp, int seat, const uint8_t* line, int* order) noexcept nogil:
    """Groups from the most to the least valuable to seat (line = the round's sky card ids)."""
    cdef double v[MAX_GROUPS]
    cdef int kind, g, i, j, t, sky, pos = 0
    for g in range(st.cfg.n_groups):
        v[g] = 0.0
        order[g] = g
        for i in range(st.cfg.group_size[g]):
            sky = line[pos]
            pos += 1
            kind = st.cfg.sky_kind[sky]
            v[g] += sky_worth(pp, kind, st.elems[seat][kind], st.cfg.sky_count[sky])
    for i in range(1, st.cfg.n_groups):
        j = i
        while j > 0 and v[order[j - 1]] < v[order[j]]:
            t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
            j -= 1


cdef inline void split_strongest(const Config* cfg, uint64_t hand_s, const int* order, uint64_t* piles_s) noexcept nogil:
    """The strongest cards to the first group of order, the next to the second, and so on."""
    cdef int i, g, t, p
    for i in range(cfg.n_groups):
        g = order[i]
        piles_s[g] = 0
        for t in range(cfg.group_size[g]):
            p = highest_card(hand_s)
            hand_s &= ~bit(p)
            piles_s[g] |= bit(p)


cdef void policy_allocate(const State* st, const Policy* pp, int seat, Rng* rng, uint64_t* piles) noexcept nogil:
    """The rules' split, or a random one with the seat's playout epsilon."""
    if rng_next(rng) < pp.eps_threshold[seat]:
        random_allocation(&st.cfg, st.hand[seat], rng, piles)
        return
    rules_allocate(st, pp, seat, piles)


cdef void rules_allocate(const State* st, const Policy* pp, int seat, uint64_t* piles) noexcept nogil:
    """The rules' split: the strongest cards to the group whose sky cards are worth most."""
    cdef int order[MAX_GROUPS]
    cdef uint64_t piles_s[MAX_GROUPS]
    cdef int g
    group_order(st, pp, seat, &st.sky_order[st.sky_pos], order)
    split_strongest(&st.cfg, to_strength(st.hand[seat]), order, piles_s)
    for g in range(st.cfg.n_groups):
        piles[g] = from_strength(piles_s[g])


cdef double allocation_prior(const State* st, const Policy* pp, int seat, const uint64_t* piles) noexcept nogil:
    """Order for progressive widening: danger placed where the sky cards are worth most,
    plus a bonus per colour missing from a pile that holds a trump."""
    cdef double score = 0.0, v
    cdef int g, c, i, missing, sky, pos = 0
    for g in range(st.cfg.n_groups):
        v = 0.0
        for i in range(st.cfg.group_size[g]):
            sky = st.sky_order[st.sky_pos + pos]
            pos += 1
            v += sky_value_for(st, pp, seat, sky)
        score += v * hand_danger_s(pp, to_strength(piles[g]))
        if piles[g] & colour_mask(BLUE):
            missing = 0
            for c in range(1, N_COLOURS):
                if not (piles[g] & colour_mask(c)):
                    missing += 1
            score += pp.void_bonus * missing
    return score


cdef void pile_features(const State* st, const Policy* pp, int seat, int g, uint64_t pile,
                        double* f) noexcept nogil:
    """Add one whole pile's part of the split features to f (each feature is a sum over the
    piles; see split_features)."""
    cdef double v = 0.0
    cdef uint64_t ps = to_strength(pile)
    cdef int i, c, sky, kind
    for i in range(st.cfg.group_size[g]):
        sky = st.sky_order[st.sky_pos + st.cfg.group_start[g] + i]
        kind = st.cfg.sky_kind[sky]
        v += sky_worth(pp, kind, st.elems[seat][kind], st.cfg.sky_count[sky])
    if ps:
        f[0] += v * hand_danger_s(pp, ps)
        f[1] += v * pp.danger_s[highest_card(ps)]
    if pile & colour_mask(BLUE):
        f[3] += 1.0
        for c in range(1, N_COLOURS):
            if not (pile & colour_mask(c)):
                f[2] += 1.0


cdef void split_features(const State* st, const Policy* pp, int seat, const uint64_t* piles,
                         double* f) noexcept nogil:
    """What a sensible split looks like, as numbers (the allocation model's features): the
    rules' danger placed where the round's sky cards are worth most to seat (summed and by
    each pile's top card), the colours missing beside a trump, the piles holding a trump.
    piles are the round's whole piles; values use the seat's elements before the round."""
    cdef int g, i
    for i in range(N_SPLIT_FEATURES):
        f[i] = 0.0
    for g in range(st.cfg.n_groups):
        pile_features(st, pp, seat, g, piles[g], f)


cdef double pile_score(const State* st, const Policy* pp, const double* w, int seat, int g,
                       uint64_t pile) noexcept nogil:
    """One pile's share of w . split_features."""
    cdef double f[N_SPLIT_FEATURES]
    cdef double score = 0.0
    cdef int i
    for i in range(N_SPLIT_FEATURES):
        f[i] = 0.0
    pile_features(st, pp, seat, g, pile, f)
    for i in range(N_SPLIT_FEATURES):
        score += w[i] * f[i]
    return score


cdef void infer_splits(const SearchSpec* sp, State* st, Rng* rng) noexcept nogil:
    """Redraw each other seat's split of its sampled hand toward the allocation model:
    split_moves Metropolis steps per seat, each proposing to swap two unplayed cards
    between two of its piles (kept only where both piles may hold the incoming colour),
    accepted with chance min(1, exp(change in (1 - randomness) w . f)). The proposal is
    symmetric, so the chain's target is the model's split given the seat's hand and all
    it has shown; it starts from the sampler's uniform split and never stalls."""
    cdef uint64_t rest[MAX_GROUPS]
    cdef uint64_t whole[MAX_GROUPS]
    cdef double score[MAX_GROUPS]
    cdef const double* w
    cdef double t, sg, sh, delta
    cdef uint64_t new_g, new_h
    cdef int s, g, h, k, a, b, ng = st.cfg.n_groups, open_n
    cdef int open_g[MAX_GROUPS]
    for s in range(st.cfg.n_players):
        if s == sp.root_seat or not (st.allocated_mask >> s) & 1 or sp.split_n[s] > 0:
            continue
        t = 1.0 - sp.randomness[s]
        if t <= 0.0:
            continue
        w = sp.split_w[1 if (st.weather_done_mask >> s) & 1 and (st.declared_mask >> s) & 1 else 0]
        if w[0] == 0.0 and w[1] == 0.0 and w[2] == 0.0 and w[3] == 0.0:
            continue
        open_n = 0
        for g in range(ng):
            rest[g] = st.pile[s][g]
            whole[g] = rest[g] | sp.played_from[s][g]
            score[g] = pile_score(st, &sp.policy, w, s, g, whole[g])
            if rest[g]:
                open_g[open_n] = g
                open_n += 1
        if open_n < 2:
            continue
        for k in range(sp.split_moves):
            g = open_g[rng_below(rng, open_n)]
            h = open_g[rng_below(rng, open_n - 1)]
            if h == g:
                h = open_g[open_n - 1]
            a = rng_pick_card(rng, rest[g])
            b = rng_pick_card(rng, rest[h])
            if (sp.pile_void[s][g] >> card_colour(b)) & 1 or (sp.pile_void[s][h] >> card_colour(a)) & 1:
                continue
            new_g = whole[g] & ~bit(a) | bit(b)
            new_h = whole[h] & ~bit(b) | bit(a)
            sg = pile_score(st, &sp.policy, w, s, g, new_g)
            sh = pile_score(st, &sp.policy, w, s, h, new_h)
            delta = t * (sg + sh - score[g] - score[h])
            if delta < 0.0 and rng_unit(rng) >= exp(delta):
                continue
            whole[g] = new_g
            whole[h] = new_h
            rest[g] = rest[g] & ~bit(a) | bit(b)
            rest[h] = rest[h] & ~bit(b) | bit(a)
            score[g] = sg
            score[h] = sh
        for g in range(ng):
            st.pile[s][g] = rest[g]


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


cdef double mixture_pile_worth(const SearchSpec* sp, int s, int g, int size, const double* win,
                               const int* colour, int m) noexcept nogil:
    """The heuristic agent's worth of the pile of hand positions m for group g
    (HeuristicAgent._pile_scores): its expected tricks, a bonus per blue where a side
    colour is missing, capped at the group's size, times the group's sky worths, the best
    ones and an average one blended."""
    cdef double expected = 0.0, capped, top = 0.0, total = 0.0, share
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
        expected += sp.mix_synergy * blues
    capped = expected if expected < size else <double>size
    for i in range(size):
        share = capped - i
        share = 0.0 if share < 0.0 else 1.0 if share > 1.0 else share
        top += sp.mix_vals[s][g][i] * share
        total += sp.mix_vals[s][g][i]
    return sp.mix_top_share * top + (1.0 - sp.mix_top_share) * capped * total / size


cdef void mixture_pile_logits(const SearchSpec* sp, const State* st, int s, int component,
                              const int* cards, int n, double* logit) noexcept nogil:
    """logit[g * MIX_STRIDE + m]: the log-weight of the pile of hand positions m (m of the
    group's size) in group g, under the worth part (component 0) or the allocation model
    (1); a split's log-weight is the sum over its piles."""
    cdef double win[MAX_LINE]
    cdef int colour[MAX_LINE]
    cdef uint64_t unseen = st.cfg.rain_in_use & ~st.hand[s], pile, rest
    cdef int i, g, j, m, c, hi, k
    for i in range(n):
        c = cards[i]
        colour[i] = card_colour(c)
        hi = popcount(unseen & colour_mask(colour[i]) & ~((bit(c) << 1) - 1))
        win[i] = sp.mix_blue_win[hi] if colour[i] == BLUE else sp.mix_side_win[hi]
    for g in range(st.cfg.n_groups):
        k = st.cfg.group_size[g]
        for j in range(MIX_COUNT[n][k]):
            m = MIX_MASKS[n][k][j]
            if component == 0:
                logit[g * MIX_STRIDE + m] = sp.mix_beta * mixture_pile_worth(sp, s, g, k, win, colour, m)
            else:
                pile = 0
                rest = <uint64_t>m
                while rest:
                    pile |= bit(cards[lowest_card(rest)])
                    rest &= rest - 1
                logit[g * MIX_STRIDE + m] = pile_score(st, &sp.policy, sp.mix_model_w, s, g, pile)


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


cdef void mixture_allocate(const SearchSpec* sp, const State* st, int s, Rng* rng, uint64_t* piles) noexcept nogil:
    """Seat s's split of its hand by the split mixture: with chance mix_share[s][0] exactly
    from a softmax over every split of the heuristic's worth at mix_beta, with
    mix_share[s][1] from the allocation model, with mix_share[s][2] the rules' split
    (rules_allocate), else uniformly. The first two scores are sums over
    piles, so a pile is drawn for the first group by its weight times the summed weights of
    the rest's splits, then the next: exact, every split weighed, no chain."""
    cdef double logit[MAX_GROUPS * MIX_STRIDE]
    cdef double top
    cdef double weight[MIX_MAX_SUBSETS]
    cdef double pair_weight[MIX_MAX_SUBSETS]
    cdef int masks[MIX_MAX_SUBSETS]
    cdef int cards[N_RAIN]
    cdef double u = rng_unit(rng), total, inner
    cdef int component, n, g, j, m, r, k, k1, count, full, first, second, ng = st.cfg.n_groups
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
    mixture_pile_logits(sp, st, s, component, cards, n, &logit[0])
    for g in range(ng):
        k = st.cfg.group_size[g]
        top = -1e300
        for j in range(MIX_COUNT[n][k]):
            m = MIX_MASKS[n][k][j]
            if logit[g * MIX_STRIDE + m] > top:
                top = logit[g * MIX_STRIDE + m]
        for j in range(MIX_COUNT[n][k]):
            m = MIX_MASKS[n][k][j]
            logit[g * MIX_STRIDE + m] = exp(logit[g * MIX_STRIDE + m] - top)
    k = st.cfg.group_size[0]
    k1 = st.cfg.group_size[1]
    count = MIX_COUNT[n][k]
    total = 0.0
    for j in range(count):
        m = MIX_MASKS[n][k][j]
        r = full ^ m
        inner = logit[MIX_STRIDE + r] if ng == 2 else mixture_pairs(logit, r, n - k, k1, masks, pair_weight)
        weight[j] = logit[m] * inner
        total += weight[j]
    if not total > MIX_TINY:
        mixture_allocate_logs(sp, st, s, component, cards, n, rng, piles)
        return
    first = mixture_pick(weight, MIX_MASKS[n][k], count, total, rng)
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
    mixture_pile_logits(sp, st, s, component, cards, n, &logit[0])
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


cdef void allocate_modelled(const SearchSpec* sp, const State* st, int s, Rng* rng, uint64_t* piles) noexcept nogil:
    """How another seat still to split does so in the tree: from its split table where it
    has one that splits this hand, else by the split mixture where it has one
    (mixture_allocate), but by the rules with the seat's exact chance; otherwise by the
    rules (policy_allocate)."""
    cdef const uint64_t* row
    cdef uint64_t whole = 0
    cdef int g, ng = st.cfg.n_groups
    if (sp.split_n[s] > 0 or sp.mix_on[s]) and (
            sp.exact_threshold[s] == 0 or rng_next(rng) >= sp.exact_threshold[s]):
        if sp.split_n[s] == 0:
            mixture_allocate(sp, st, s, rng, piles)
            return
        row = pick_table_split(sp, s, rng)
        for g in range(ng):
            whole |= row[g]
        if whole == st.hand[s]:
            for g in range(ng):
                piles[g] = row[g]
            return
    policy_allocate(st, &sp.policy, s, rng, piles)


cdef double mixture_scaled_total(double* logit, int n, int ng, int k, int k1) noexcept nogil:
    """The summed weight of every split of n hand positions, each pile's log-weight in
    logit turned in place into a weight scaled by its group's largest (so a split's
    scaled weight is the product of its piles'), by the same product form as
    mixture_allocate's draw; 0 where that scaled sum underflows."""
    cdef double pair_weight[MIX_MAX_SUBSETS]
    cdef int masks[MIX_MAX_SUBSETS]
    cdef double top, total = 0.0
    cdef int g, j, m, kg, r, full = (1 << n) - 1
    for g in range(ng):
        kg = k if g == 0 else k1 if g == 1 else n - k - k1
        top = -1e300
        for j in range(MIX_COUNT[n][kg]):
            m = MIX_MASKS[n][kg][j]
            if logit[g * MIX_STRIDE + m] > top:
                top = logit[g * MIX_STRIDE + m]
        for j in range(MIX_COUNT[n][kg]):
            m = MIX_MASKS[n][kg][j]
            logit[g * MIX_STRIDE + m] = exp(logit[g * MIX_STRIDE + m] - top)
    for j in range(MIX_COUNT[n][k]):
        m = MIX_MASKS[n][k][j]
        r = full ^ m
        total += logit[m] * (logit[MIX_STRIDE + r] if ng == 2 else mixture_pairs(logit, r, n - k, k1, masks, pair_weight))
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
        mixture_pile_logits(sp, st, s, c, cards, n, &logit[0])
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
        mixture_pile_logits(sp, st, s, c, cards, n, &logit[0])
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


cdef double mixture_fit_draw(const SearchSpec* sp, State* st, int s, const MixFit* fit, Rng* rng) noexcept nogil:
    """Redraw seat s's unplayed cards among its piles from fit (its round hand's, see
    mixture_fit): a part by its share times its chance of a split that fits, then a split
    that fits by the part's weight (alike: uniformly); the hand's importance weight. Where
    every split fits, the mixture's own draw (allocate_modelled); where none does (never
    in a world of the position), the split stays."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef double u, acc = 0.0
    cdef int g, c, chosen = 3, pick, ng = st.cfg.n_groups
    if fit.whole:
        if fit.count > 0:
            allocate_modelled(sp, st, s, rng, piles)
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


cdef double condition_mixture_splits(const SearchSpec* sp, State* st, Rng* rng, MixFit* fits) noexcept nogil:
    """After the round's first card, each other seat with a split mixture splits its sampled
    hand by it given the play so far (mixture_fit, mixture_fit_draw; fits[s] is reused
    while the seat's hand is the one it was made for); the product of the hands'
    importance weights."""
    cdef double weight = 1.0
    cdef int s
    if st.line_pos == 0 and st.n_in_trick == 0 or st.phase != PHASE_PLAY:
        return 1.0
    for s in range(st.cfg.n_players):
        if s != sp.root_seat and sp.mix_on[s] and sp.split_n[s] == 0 and (st.allocated_mask >> s) & 1:
            if fits[s].hand != st.hand[s]:
                mixture_fit(sp, st, s, &fits[s])
            weight *= mixture_fit_draw(sp, st, s, &fits[s], rng)
    return weight


# --- the playout ----------------------------------------------------------------------------

cdef void rollout_end_round(State* st, int last_winner) noexcept nogil:
    """RULES.md 3.5-3.6 on the tallies (the same as the rules core's end of round; the
    playout equivalence test replays playouts through the core to keep them in step)."""
    cdef int s, k, n = st.cfg.n_players
    for s in range(n):
        if (st.declared_mask >> s) & 1:
            if st.round_won[s] == 0:
                st.good_weather[s] += 1
            else:
                st.facedown_cards[s] += st.round_won[s]
        else:
            st.faceup_cards[s] += st.round_won[s]
            for k in range(N_KINDS):
                st.elems[s][k] += st.round_elems[s][k]
        st.round_won[s] = 0
        for k in range(N_KINDS):
            st.round_elems[s][k] = 0
    st.round += 1
    st.sky_pos += st.cfg.line_size
    st.first_player = (st.first_player + 1) % n
    st.leader = st.first_player
    st.last_winner = last_winner
    st.to_move = -1
    st.group = 0
    st.line_pos = 0
    st.trick_in_group = 0
    st.n_in_trick = 0
    st.trick_mask = 0
    st.led_colour = -1
    st.phase = PHASE_OVER if st.round >= st.cfg.n_rounds else PHASE_DEAL


cdef void fast_tricks(const Policy* pp, State* st, uint64_t (*P)[MAX_GROUPS], int group,
                      int pos, int leader, Rng* rng, Trace* tr) noexcept nogil:
    """Play the round's remaining tricks from a trick boundary on strength-order piles P."""
    cdef int n = st.cfg.n_players, ng = st.cfg.n_groups
    cdef int i, seat, p, best_p, winner, sky, kind, cnt, end, s2, g2
    cdef double worth
    cdef uint64_t pile, legal, f, led_s, b, unseen_s
    cdef bint want
    cdef uint8_t declared = st.declared_mask
    end = st.cfg.group_start[group] + st.cfg.group_size[group]
    while group < ng:
        sky = st.sky_order[st.sky_pos + pos]
        kind = st.cfg.sky_kind[sky]
        cnt = st.cfg.sky_count[sky]
        seat = leader
        best_p = 0
        led_s = 0
        winner = leader
        for i in range(n):
            pile = P[seat][group]
            if i == 0:
                legal = pile
            else:
                f = pile & led_s
                legal = f if f else pile
            if (legal & (legal - 1)) == 0:
                p = lowest_card(legal)
            elif rng_next(rng) < pp.eps_threshold[seat]:
                p = rng_pick_card(rng, legal)
            else:
                worth = sky_worth(pp, kind, st.elems[seat][kind] + st.round_elems[seat][kind], cnt)
                want = not (declared >> seat) & 1 and worth >= 0.0
                if pp.learned:
                    unseen_s = to_strength(st.set_aside)
                    for s2 in range(n):
                        if s2 != seat:
                            for g2 in range(ng):
                                unseen_s |= P[s2][g2]
                    p = learned_pos(pp, legal, i == 0, led_s, best_p, i == n - 1, want,
                                    (declared >> seat) & 1, worth, kind,
                                    unseen_s, rng)
                else:
                    p = choose_pos(legal, i == 0, led_s, best_p, i == n - 1, want)
            b = bit(p)
            P[seat][group] = pile & ~b
            if i == 0:
                led_s = pos_colour_mask(p)
                best_p = p
            elif (b & (CSL_S_BLUE | led_s)) and p > best_p:
                best_p = p
                winner = seat
            if tr != NULL:
                trace_put(tr, (<uint64_t>TRACE_PLAY << 56) | card_of_pos(p))
            seat = seat + 1 if seat + 1 < n else 0
        st.round_won[winner] += 1
        st.round_elems[winner][kind] += cnt
        leader = winner
        pos += 1
        if pos == end:
            group += 1
            if group < ng:
                end += st.cfg.group_size[group]
    rollout_end_round(st, leader)


cdef void fast_round(const Policy* pp, State* st, uint64_t (*P)[MAX_GROUPS], Rng* rng, Trace* tr) noexcept nogil:
    """Deal, allocate, declare and play one whole round by the playout rules.

    The deal draws every pile as a uniformly random subset of the cards left (draw_subset,
    as the core's random deal): a uniform deal and, within each hand, a uniform split,
    which a seat playing by the rules then replaces."""
    cdef int order[MAX_GROUPS]
    cdef uint64_t hands_s[MAX_PLAYERS]
    cdef int n = st.cfg.n_players, ng = st.cfg.n_groups
    cdef int s, g, size, remaining
    cdef uint64_t left = pp.deck_s
    cdef uint8_t declared = 0
    cdef PickBits pb
    pb.bits = 0
    pb.slices = 0
    remaining = popcount(left)
    for s in range(n):
        hands_s[s] = 0
        for g in range(ng):
            size = st.cfg.group_size[g]
            P[s][g] = draw_subset(left, remaining, size, rng, &pb)
            left ^= P[s][g]
            remaining -= size
            hands_s[s] |= P[s][g]
    if tr != NULL:
        trace_put(tr, <uint64_t>TRACE_DEAL << 56)
        for s in range(n):
            trace_put(tr, from_strength(hands_s[s]))
        trace_put(tr, from_strength(left))
    for s in range(n):
        if rng_next(rng) >= pp.eps_threshold[s]:
            group_order(st, pp, s, &st.sky_order[st.sky_pos], order)
            split_strongest(&st.cfg, hands_s[s], order, P[s])
        if declare_rule(pp, s, hands_s[s], rng):
            declared |= 1 << s
        if tr != NULL:
            trace_put(tr, (<uint64_t>TRACE_ALLOCATE << 56) | s)
            for g in range(ng):
                trace_put(tr, from_strength(P[s][g]))
    if tr != NULL:
        for s in range(n):
            trace_put(tr, (<uint64_t>TRACE_DECLARE << 56) | (s << 8) | ((declared >> s) & 1))
    st.declared_mask = declared
    st.weather_done_mask = (1 << n) - 1
    st.allocated_mask = (1 << n) - 1
    for s in range(n):
        st.round_won[s] = 0
        for g in range(N_KINDS):
            st.round_elems[s][g] = 0
    fast_tricks(pp, st, P, 0, 0, st.first_player, rng, tr)


cdef void rollout(const Policy* pp, State* st, Rng* rng, Trace* tr) noexcept nogil:
    """Play to the end of the game by the playout rules: pending simultaneous choices and the
    trick in progress through the rules core, the rest in strength order."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef uint64_t P[MAX_PLAYERS][MAX_GROUPS]
    cdef int s, g, c, d, n = st.cfg.n_players
    while True:
        if st.phase == PHASE_ALLOCATE:
            for s in range(n):
                if not (st.allocated_mask >> s) & 1:
                    policy_allocate(st, pp, s, rng, piles)
                    if tr != NULL:
                        trace_put(tr, (<uint64_t>TRACE_ALLOCATE << 56) | s)
                        for g in range(st.cfg.n_groups):
                            trace_put(tr, piles[g])
                    state_allocate(st, s, piles)
        elif st.phase == PHASE_WEATHER:
            for s in range(n):
                if not (st.weather_done_mask >> s) & 1:
                    d = policy_declare(st, pp, s, rng)
                    if tr != NULL:
                        trace_put(tr, (<uint64_t>TRACE_DECLARE << 56) | (s << 8) | d)
                    state_declare(st, s, d)
        elif st.phase == PHASE_PLAY and st.n_in_trick != 0:
            c = policy_card(st, pp, rng)
            if tr != NULL:
                trace_put(tr, (<uint64_t>TRACE_PLAY << 56) | c)
            state_play_unchecked(st, c)
        else:
            break
    if st.phase == PHASE_PLAY:
        for s in range(n):
            for g in range(st.cfg.n_groups):
                P[s][g] = to_strength(st.pile[s][g]) if g >= st.group else 0
        fast_tricks(pp, st, P, st.group, st.line_pos, st.leader, rng, tr)
    while st.phase == PHASE_DEAL:
        if st.cfg.n_rounds - st.round <= pp.value_horizon:
            return
        fast_round(pp, st, P, rng, tr)


cdef inline void playout(const SearchSpec* sp, State* st, Rng* rng) noexcept nogil:
    rollout(&sp.policy, st, rng, NULL)


cdef void outcome(const SearchSpec* sp, const State* st, double* u, double* share, double* pts) noexcept nogil:
    """Utility per seat: win share (1/k for a k-way shared win) plus a small clamped margin
    over the best other seat, or points / points_scale. A playout stopped at a round's end
    (Policy.value_horizon) takes the learned value's shares and expected final points."""
    cdef int32_t sc[MAX_PLAYERS * N_SCORE_COLS]
    cdef int s, o, n = st.cfg.n_players, winners, k
    cdef double best, d
    if st.phase == PHASE_OVER:
        state_scores(st, sc)
        winners = state_winners(st, sc)
        k = popcount(winners)
        for s in range(n):
            share[s] = ((winners >> s) & 1) / <double>k
            pts[s] = sc[s * N_SCORE_COLS + COL_TOTAL]
    else:
        value_estimate(sp.value_w, sp.value_pts_w, st, share, pts)
    for s in range(n):
        if sp.utility == UTIL_POINTS:
            u[s] = pts[s] / sp.points_scale
            continue
        best = -1e9
        for o in range(n):
            if o != s and pts[o] > best:
                best = pts[o]
        d = (pts[s] - best) / sp.margin_scale
        if d > 1.0:
            d = 1.0
        elif d < -1.0:
            d = -1.0
        u[s] = share[s] + sp.margin_weight * d


# --- the tree ---------------------------------------------------------------------------

cdef inline uint64_t slot_hash(const Worker* w, int32_t parent, int key) noexcept nogil:
    """The parent's hash plus the key: a node's children sit in neighbouring slots, so
    selection reads a few cache lines of the table rather than one per child."""
    return ((((<uint64_t>parent) * 0x9E3779B97F4A7C15ULL) >> (64 - w.table_bits)) + <uint64_t>key) & w.table_mask


cdef inline void table_insert(Worker* w, int32_t parent, int key, int32_t child) noexcept nogil:
    cdef uint64_t h = slot_hash(w, parent, key)
    while w.table[h].tag >= 0:
        h = (h + 1) & w.table_mask
    w.table[h].tag = parent * 64 + key
    w.table[h].child = child


cdef inline int32_t child_get(const Worker* w, int32_t parent, int key) noexcept nogil:
    """The child of parent with key; it must exist (its bit is in parent's child_mask)."""
    cdef int32_t tag = parent * 64 + key
    cdef uint64_t h = slot_hash(w, parent, key)
    while w.table[h].tag != tag:
        h = (h + 1) & w.table_mask
    return w.table[h].child


cdef inline int32_t new_node(Worker* w, int32_t parent, int key, int mover) noexcept nogil:
    cdef int32_t idx = <int32_t>w.used
    cdef Node* nd = &w.pool[idx]
    w.used += 1
    nd.parent = parent
    nd.visits = 0
    nd.avail = 0
    nd.key = <int16_t>key
    nd.mover = <int8_t>mover
    nd.reward = 0.0
    nd.child_mask = 0
    if parent >= 0:
        w.pool[parent].child_mask |= bit(key)
        table_insert(w, parent, key, idx)
    return idx


cdef inline int32_t child_or_new(Worker* w, int32_t parent, int key, int mover, int* created) noexcept nogil:
    if (w.pool[parent].child_mask >> key) & 1:
        return child_get(w, parent, key)
    created[0] = 1
    return new_node(w, parent, key, mover)


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
        v = nd.reward / nd.visits + c * sqrt(log(<double>nd.avail) / nd.visits)
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


cdef inline int table_bits_for(int64_t cap) noexcept nogil:
    cdef int bits = 4
    while (<int64_t>1 << bits) < 2 * cap:
        bits += 1
    return bits


cdef inline int64_t pool_bytes(int64_t cap) noexcept nogil:
    """Bytes of a pool of cap nodes and its child table."""
    return cap * <int64_t>sizeof(Node) + (<int64_t>1 << table_bits_for(cap)) * <int64_t>sizeof(Slot)


cdef int worker_alloc(Worker* w, int64_t cap) noexcept nogil:
    """(Re)allocate the pool for cap nodes and rebuild the child table; 0 on failure, and
    0 when the old and new pools and tables together would pass w.max_bytes (a growing
    pool briefly holds both)."""
    cdef Node* pool
    cdef Slot* table
    cdef int bits = table_bits_for(cap)
    cdef int64_t i, held = pool_bytes(w.cap) if w.pool != NULL else 0
    if cap > MAX_NODES:
        return 0
    if w.max_bytes > 0 and held + pool_bytes(cap) > w.max_bytes:
        return 0
    pool = <Node*>alloc_lines(cap * sizeof(Node))
    if pool == NULL:
        return 0
    if w.pool != NULL:
        memcpy(pool, w.pool, w.used * sizeof(Node))
    free(w.pool)
    w.pool = pool
    table = <Slot*>alloc_lines((<int64_t>1 << bits) * sizeof(Slot))
    if table == NULL:
        return 0
    free(w.table)
    w.table = table
    w.table_bits = bits
    w.table_mask = (<uint64_t>1 << bits) - 1
    w.cap = cap
    memset(w.table, 0xFF, (<int64_t>1 << bits) * sizeof(Slot))
    for i in range(w.used):
        if w.pool[i].parent >= 0:
            table_insert(w, w.pool[i].parent, w.pool[i].key, <int32_t>i)
    return 1


cdef int select_root(const SearchSpec* sp, Worker* w) noexcept nogil:
    """UCB1 over the root candidates in prior order; for allocations only the first
    pw_base + pw_coef * N^pw_alpha are open (progressive widening), N = root visits."""
    cdef int64_t n_open = sp.n_cand
    cdef int i, best = 0
    cdef double k, v, best_v = -1e300
    cdef const RootStat* rs
    if sp.root_kind == ROOT_ALLOCATE:
        n_open = <int64_t>(sp.pw_base + sp.pw_coef * pow(<double>w.iterations, sp.pw_alpha))
        if n_open > sp.n_cand:
            n_open = sp.n_cand
        if n_open < 1:
            n_open = 1
    k = sp.c_uct * sqrt(log(<double>(w.iterations if w.iterations > 0 else 1)))
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


cdef inline void record_root(const SearchSpec* sp, RootStat* rs, const double* u, const double* share,
                             const double* pts) noexcept nogil:
    cdef int r = sp.root_seat
    rs.visits += 1
    rs.sum_u += u[r]
    rs.sum_u2 += u[r] * u[r]
    rs.sum_win += share[r]
    rs.sum_points += pts[r]
    rs.mean = rs.sum_u / rs.visits
    rs.inv_sqrt = 1.0 / sqrt(<double>rs.visits)


cdef void model_unseen_allocations(const SearchSpec* sp, State* st, Rng* rng) noexcept nogil:
    """The opponent model on top of a uniform world: until the round's first card is played
    nothing distinguishes one split of a seat's hand from another, so every other seat that
    has already allocated gets the split the playout rules make of its sampled hand (the
    rules read only that seat's own cards and the public line), as the seats still to
    allocate do in the tree. Without it a seat that chose before the searcher would be
    modelled as splitting at random and one that chose after as splitting by the rules.
    A seat with a split mixture (set_split_model) splits by it instead, as in the tree."""
    cdef uint64_t piles[MAX_GROUPS]
    cdef int s, g
    if st.line_pos != 0 or st.n_in_trick != 0 or st.phase == PHASE_DEAL or st.phase == PHASE_OVER:
        return
    for s in range(st.cfg.n_players):
        if s == sp.root_seat or not (st.allocated_mask >> s) & 1:
            continue
        if sp.mix_on[s] and sp.split_n[s] == 0:
            allocate_modelled(sp, st, s, rng, piles)
        elif sp.model_allocations or rng_next(rng) < sp.exact_threshold[s]:
            policy_allocate(st, &sp.policy, s, rng, piles)
        else:
            continue
        for g in range(st.cfg.n_groups):
            st.pile[s][g] = piles[g]


cdef double bet_acceptance(const SearchSpec* sp, const State* st) noexcept nogil:
    """How likely the others' public weather bets are in this world, relative to the most
    likely world. A random player bets either way with chance 1/2; a sensible one bets
    with chance tremble/2 + (1 - tremble) / (1 + exp((danger - centre) / scale)), danger
    being the rules' rough count of the tricks its round hand could win; each seat is the
    mixture its randomness says. The product over the other seats, divided by its largest
    possible value."""
    cdef int s
    cdef double a = 1.0, r, p, top = 1.0 - 0.5 * sp.bet_tremble, d
    for s in range(st.cfg.n_players):
        if s == sp.root_seat:
            continue
        r = sp.randomness[s]
        d = hand_danger_s(&sp.policy, to_strength(st.hand[s]))
        p = 0.5 * sp.bet_tremble + (1.0 - sp.bet_tremble) / (1.0 + exp((d - sp.bet_centre) / sp.bet_scale))
        if not (st.declared_mask >> s) & 1:
            p = 1.0 - p
        a *= (0.5 * r + (1.0 - r) * p) / (0.5 * r + (1.0 - r) * top)
    return a


cdef void draw_world(const SearchSpec* sp, Rng* rng, State* st) noexcept nogil:
    """A world for one iteration. With allocation inference, one of the pool's worlds
    (see build_pool), uniformly. Else exactly uniform
    from the sampler, then, with bet inference, accepted with chance bet_acceptance
    (rejection sampling: the accepted worlds follow the posterior given the bets); after
    MAX_BET_TRIES refusals the last draw stands, so a search never stalls on an unlikely
    bet. Last, the rules' allocation model (if on, or for each seat believed exact with
    that chance), or each seat's split mixture where it has one."""
    if sp.pool_n > 0:
        st[0] = sp.pool[rng_below(rng, sp.pool_n)]
        return
    draw_sampled(sp, rng, st)
    if sp.model_allocations or sp.any_exact or sp.any_mix:
        model_unseen_allocations(sp, st, rng)


cdef void draw_sampled(const SearchSpec* sp, Rng* rng, State* st) noexcept nogil:
    """A world from the sampler, with bet inference by rejection (see draw_world)."""
    cdef int tries = 1
    sampler_draw(sp.sampler, rng, st)
    if sp.bet_inference:
        while tries < MAX_BET_TRIES and rng_unit(rng) >= bet_acceptance(sp, st):
            sampler_draw(sp.sampler, rng, st)
            tries += 1


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


cdef double play_log_likelihood(const SearchSpec* sp, const State* st) noexcept nogil:
    """Log of how likely the other seats' card plays of this round are in world st, up to a
    constant: the round is replayed from its piles (the world's unplayed cards plus those
    played from each pile), and each play by another seat with a choice scores
    r / k + (1 - r) (tremble / k + (1 - tremble) [the rules' card]), k legal cards, r the
    seat's randomness. A seat that could take a trick it wanted and did not is unlikely
    to have held the winner. With play_by_class the rules only say whether the card takes
    the trick so far: [the rules' card] becomes [same class as it] / (cards of that class),
    and a lead says nothing but its k (styles differ most in which winner or loser). With
    play_fitted it becomes the fitted softmax's chance of the card (learned_chance), from
    what the seat saw then: its cards and the cards played before."""
    cdef uint64_t pile[MAX_PLAYERS][MAX_GROUPS]
    cdef uint8_t won[MAX_PLAYERS][N_KINDS]
    cdef uint64_t legal, f, led_s = 0, b, same, played_now, held
    cdef int n = st.cfg.n_players, s, g, k, seat, c, p, best_p = 0, winner = 0, pos = 0
    cdef int in_trick = 0, group = 0, end, sky, kind, rule_p, nl, led_c = 0
    cdef double ll = 0.0, r, q, value
    cdef bint want
    for s in range(n):
        for g in range(st.cfg.n_groups):
            pile[s][g] = st.pile[s][g] | sp.played_from[s][g]
        for k in range(N_KINDS):
            won[s][k] = 0
    played_now = st.played
    for k in range(sp.n_round_plays):
        played_now &= ~(<uint64_t>1 << sp.round_play_card[k])
    end = st.cfg.group_start[0] + st.cfg.group_size[0]
    for k in range(sp.n_round_plays):
        seat = sp.round_play_seat[k]
        c = sp.round_play_card[k]
        sky = st.sky_order[st.sky_pos + pos]
        kind = st.cfg.sky_kind[sky]
        if in_trick == 0:
            legal = pile[seat][group]
        else:
            f = pile[seat][group] & colour_mask(led_c)
            legal = f if f else pile[seat][group]
        if seat != sp.root_seat and (legal & (legal - 1)) and (legal >> c) & 1:
            nl = popcount(legal)
            value = sky_worth(&sp.policy, kind, st.elems[seat][kind] + won[seat][kind], st.cfg.sky_count[sky])
            want = not (st.declared_mask >> seat) & 1 and value >= 0.0
            rule_p = choose_pos(to_strength(legal), in_trick == 0, led_s, best_p,
                                in_trick == n - 1, want)
            r = sp.randomness[seat]
            q = (r + (1.0 - r) * sp.play_tremble) / nl
            if sp.play_fitted:
                held = 0
                for g in range(st.cfg.n_groups):
                    held |= pile[seat][g]
                q += (1.0 - r) * (1.0 - sp.play_tremble) * learned_chance(
                    sp.play_w, to_strength(legal), in_trick == 0, led_s, best_p, in_trick == n - 1, want,
                    (st.declared_mask >> seat) & 1, value, kind,
                    to_strength(st.cfg.rain_in_use & ~played_now & ~held), pos_of_card(c))
            elif sp.play_by_class:
                if in_trick == 0:
                    same = to_strength(legal)
                else:
                    same = trick_winners(to_strength(legal), led_s, best_p)
                    if not (same >> rule_p) & 1:
                        same = to_strength(legal) & ~same
                if (same >> pos_of_card(c)) & 1:
                    q += (1.0 - r) * (1.0 - sp.play_tremble) / popcount(same)
            elif c == card_of_pos(rule_p):
                q += (1.0 - r) * (1.0 - sp.play_tremble)
            ll += log(q)
        pile[seat][group] &= ~(<uint64_t>1 << c)
        played_now |= <uint64_t>1 << c
        p = pos_of_card(c)
        b = <uint64_t>1 << p
        if in_trick == 0:
            led_c = card_colour(c)
            led_s = pos_colour_mask(p)
            best_p = p
            winner = seat
        elif (b & (CSL_S_BLUE | led_s)) and p > best_p:
            best_p = p
            winner = seat
        in_trick += 1
        if in_trick == n:
            won[winner][kind] += st.cfg.sky_count[sky]
            in_trick = 0
            pos += 1
            if pos == end and group + 1 < st.cfg.n_groups:
                group += 1
                end += st.cfg.group_size[group]
    return ll


cdef inline double log_weight(double w) noexcept nogil:
    return log(w) if w > 1e-300 else -690.0


cdef double draw_inferred(const SearchSpec* sp, Rng* rng, State* st, MixFit* fits) noexcept nogil:
    """A world as draw_world makes one without a pool, with the other seats' splits then
    redrawn from their split tables (draw_table_splits) or by the allocation model
    (infer_splits), and those of the seats believed exact by the rules with that chance;
    with mix_condition, after the round's first card, by each seat's split mixture given
    the play (condition_mixture_splits). Returns the log of the world's weight as a deal
    of hands under that last (0 without it)."""
    draw_sampled(sp, rng, st)
    if sp.model_allocations:
        model_unseen_allocations(sp, st, rng)
    draw_table_splits(sp, st, rng)
    infer_splits(sp, st, rng)
    if (sp.any_exact or sp.any_mix) and not sp.model_allocations:
        model_unseen_allocations(sp, st, rng)
    if sp.mix_condition and sp.any_mix:
        return log_weight(condition_mixture_splits(sp, st, rng, fits))
    return 0.0



cdef int build_pool(SearchSpec* sp, Rng* rng, int n) noexcept nogil:
    """Draw n worlds by draw_inferred. With play inference, draw
    oversample times as many and keep n of them by systematic resampling on the weights
    exp(play_log_likelihood) (sampling-importance-resampling: the sampler's worlds are the
    proposal, so the pool follows the posterior given the plays); with mix_condition and
    mix_oversample > 1, so too by the hands' weights under the split mixture given the
    play (condition_mixture_splits), times the plays' where both are on. 0 on success,
    -1 out of memory."""
    cdef State* pool
    cdef State* draws = NULL
    cdef double* lw = NULL
    cdef MixFit* fits = NULL
    cdef double top, total, total2, u, step, acc
    cdef int i, j, m, factor = 1, s
    cdef bint by_plays = sp.play_inference and sp.n_round_plays > 0
    cdef bint by_hands = sp.mix_condition and sp.any_mix and sp.mix_oversample > 1 and sp.n_round_plays > 0
    sp.pool_n = 0
    pool = <State*>realloc(sp.pool, n * sizeof(State))
    if pool == NULL:
        return -1
    sp.pool = pool
    sp.pool_ess = n
    if sp.mix_condition:
        fits = <MixFit*>malloc(MAX_PLAYERS * sizeof(MixFit))
        if fits == NULL:
            return -1
        for s in range(MAX_PLAYERS):
            fits[s].hand = 0
    if not by_plays and not by_hands:
        for i in range(n):
            if fits != NULL and i % sp.mix_reuse != 0:
                pool[i] = pool[i - 1]
                condition_mixture_splits(sp, &pool[i], rng, fits)
            else:
                draw_inferred(sp, rng, &pool[i], fits)
        free(fits)
        sp.pool_n = n
        return 0
    if by_plays:
        factor = sp.oversample
    if by_hands and sp.mix_oversample > factor:
        factor = sp.mix_oversample
    m = n * factor
    draws = <State*>malloc(m * sizeof(State))
    lw = <double*>malloc(m * sizeof(double))
    if draws == NULL or lw == NULL:
        free(draws)
        free(lw)
        free(fits)
        return -1
    top = -1e300
    for i in range(m):
        lw[i] = draw_inferred(sp, rng, &draws[i], fits)
        if not by_hands:
            lw[i] = 0.0
        if by_plays:
            lw[i] += play_log_likelihood(sp, &draws[i])
        if lw[i] > top:
            top = lw[i]
    total = 0.0
    total2 = 0.0
    for i in range(m):
        lw[i] = exp(lw[i] - top)
        total += lw[i]
        total2 += lw[i] * lw[i]
    sp.pool_ess = total * total / total2
    step = total / n
    u = rng_unit(rng) * step
    acc = lw[0]
    j = 0
    for i in range(n):
        while acc < u and j < m - 1:
            j += 1
            acc += lw[j]
        pool[i] = draws[j]
        u += step
    free(draws)
    free(lw)
    free(fits)
    sp.pool_n = n
    return 0


cdef void ismcts_iteration(const SearchSpec* sp, Worker* w) noexcept nogil:
    """One determinization: sample a world, pick a root candidate by UCB (with progressive
    widening for allocations), then descend from it (ismcts_descend)."""
    cdef State st
    cdef int ci
    draw_world(sp, &w.rng, &st)
    w.worlds += 1
    ci = select_root(sp, w)
    ismcts_descend(sp, w, &st, ci, &w.rng)


cdef void ismcts_descend(const SearchSpec* sp, Worker* w, State* world, int ci, Rng* rng) noexcept nogil:
    """Apply root candidate ci to world (consumed), descend both trees to the first new
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
            legal = legal_plays(&st)
            if p != root and (sp.opponents_rules or (
                    sp.any_exact and rng_next(rng) < sp.exact_threshold[p])):
                key = policy_card(&st, &sp.policy, rng)
                rc = child_or_new(w, rc, key, p, &created)
                path[plen] = rc
                plen += 1
                if pc >= 0:
                    pc = child_or_new(w, pc, key, p, &created)
                    path[plen] = pc
                    plen += 1
            elif pc < 0 or p == root:
                rc = select_child(w, rc, legal, p, sp.c_uct, &created)
                key = w.pool[rc].key
                path[plen] = rc
                plen += 1
                if pc >= 0:
                    pc = child_or_new(w, pc, key, p, &created)
                    path[plen] = pc
                    plen += 1
            else:
                pc = select_child(w, pc, legal, p, sp.c_uct, &created)
                key = w.pool[pc].key
                path[plen] = pc
                plen += 1
                rc = child_or_new(w, rc, key, p, &created)
                path[plen] = rc
                plen += 1
            state_play_unchecked(&st, key)
        elif st.phase == PHASE_ALLOCATE:
            for s in range(n):
                if not (st.allocated_mask >> s) & 1:
                    allocate_modelled(sp, &st, s, rng, piles)
                    state_allocate(&st, s, piles)
        elif st.phase == PHASE_WEATHER:
            if not (st.weather_done_mask >> root) & 1:
                rc = select_child(w, rc, 3, root, sp.c_uct, &created)
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
    outcome(sp, &st, u, share, pts)
    for s in range(plen):
        nd = &w.pool[path[s]]
        nd.visits += 1
        if nd.mover >= 0:
            nd.reward += u[nd.mover]
    record_root(sp, rs, u, share, pts)


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
            allocate_modelled(sp, st, s, rng, piles)
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
        outcome(sp, &st, u, share, pts)
        record_root(sp, &w.root[i], u, share, pts)


cdef inline double now_s() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef inline double thread_cpu_s() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef int64_t worker_run(const SearchSpec* sp, Worker* shared, int64_t iterations, double seconds,
                        const int* stop) noexcept nogil:
    """Run until iterations (if > 0) more are done or seconds (if > 0) have passed; the node
    pool grows by doubling between iterations, and a failed growth ends the run early.
    Every run does at least one iteration (one world) unless *stop is set: it is read
    before every iteration (one playout, a few microseconds), so another thread stops the
    run at once by setting it. The worker's counters live on this thread's stack while it
    runs. A PIMC iteration is one playout; a world's candidates are never split, so PIMC
    stops at the last whole world within the limit."""
    cdef Worker local = shared[0]
    cdef Worker* w = &local
    cdef int64_t done = 0, step = 1
    cdef double start = now_s() if seconds > 0.0 else 0.0
    cdef double cpu0 = thread_cpu_s()
    if sp.algorithm == ALGO_PIMC:
        step = pimc_width(sp)
    elif (sp.halving and sp.root_kind == ROOT_ALLOCATE and iterations > 0 and w.iterations == 0
          and sp.n_cand > 1):
        halving_start(sp, w, iterations)
    while True:
        if csl_flag_get(stop):
            break
        if iterations > 0 and done + step > iterations and (done > 0 or w.iterations > 0):
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


# --- Python boundary --------------------------------------------------------------------

ctypedef struct Ranked:
    double prior
    int32_t index


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

    def __cinit__(self):
        cdef int s
        self.sp.cand_piles = <uint64_t*>malloc(MAX_CANDIDATES * MAX_GROUPS * sizeof(uint64_t))
        self.sp.cand_key = <int32_t*>malloc(MAX_CANDIDATES * sizeof(int32_t))
        self.sp.pool = NULL
        self.sp.pool_n = 0
        self.sp.pool_ess = 0.0
        self.sp.split_moves = 0
        self.sp.play_inference = 0
        self.sp.play_fitted = 0
        self.sp.n_round_plays = 0
        memset(self.sp.split_w, 0, sizeof(self.sp.split_w))
        memset(self.sp.played_from, 0, sizeof(self.sp.played_from))
        memset(self.sp.pile_void, 0, sizeof(self.sp.pile_void))
        memset(self.sp.mix_on, 0, sizeof(self.sp.mix_on))
        memset(self.sp.mix_share, 0, sizeof(self.sp.mix_share))
        self.sp.any_mix = 0
        self.sp.mix_condition = 0
        self.sp.mix_oversample = 1
        self.sp.mix_reuse = 1
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
                 int rules_playout, int opponents_rules, int model_allocations, double c_uct, double margin_weight,
                 double margin_scale, double points_scale, double pw_base, double pw_coef,
                 double pw_alpha, int halving, int halving_min_worlds,
                 int pimc_candidates, double epsilon, double weather_threshold,
                 double weather_blue, double weather_power, double candy_value,
                 double star_three_value, double potential_decay, double void_bonus):
        cdef const State* base = &sampler.sm.base
        cdef uint64_t buf[MAX_CANDIDATES * 3]
        cdef Ranked ranked[MAX_CANDIDATES]
        cdef int i, g, n, ng = base.cfg.n_groups
        cdef uint64_t legal
        self.sampler = sampler
        self.sp.sampler = sampler.sm
        self.sp.root_seat = root_seat
        self.sp.algorithm = algorithm
        self.sp.utility = utility
        self.sp.c_uct = c_uct
        self.sp.margin_weight = margin_weight
        self.sp.margin_scale = margin_scale
        self.sp.points_scale = points_scale
        self.sp.pw_base = pw_base
        self.sp.pw_coef = pw_coef
        self.sp.pw_alpha = pw_alpha
        self.sp.halving = halving
        self.sp.halving_min_worlds = halving_min_worlds if halving_min_worlds > 0 else 1
        self.sp.bet_inference = 0
        self.sp.bet_tremble = 1.0
        self.sp.bet_centre = 0.0
        self.sp.bet_scale = 1.0
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
            while legal:
                self.sp.cand_key[n] = lowest_card(legal)
                legal &= legal - 1
                n += 1
        else:
            raise ValueError(f"seat {root_seat} has no decision to make in this position")
        self.sp.root_kind = self.root_kind
        self.sp.n_cand = n
        self.n_candidates = n
        self.sp.opponents_rules = opponents_rules
        self.sp.model_allocations = model_allocations if rules_playout else 0
        self.sp.two_trees = 1 if self.root_kind != ROOT_PLAY and not opponents_rules else 0

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

    def set_own_epsilon(self, double epsilon):
        """The searcher's own chance of a uniformly random move in the playouts (by default
        playout_epsilon, as everybody's)."""
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError("set_own_epsilon needs a chance in [0, 1]")
        if self.sp.policy.rules:
            self.sp.policy.eps_threshold[self.sp.root_seat] = chance_threshold(epsilon)

    def set_bet_inference(self, double tremble, double centre, double scale):
        """Weight the sampled worlds by the others' weather bets (see bet_acceptance) once
        they are public, i.e. in the trick phase; each seat by the randomness given to
        set_randomness. Returns whether it is on (only with rule playouts, in the trick
        phase)."""
        if not 0.0 < tremble <= 1.0 or not scale > 0.0 or centre != centre:
            raise ValueError("set_bet_inference needs a tremble in (0, 1] and a positive scale")
        self.sp.bet_tremble = tremble
        self.sp.bet_centre = centre
        self.sp.bet_scale = scale
        self.sp.bet_inference = 1 if (self.sp.policy.rules
                                      and self.sampler.sm.base.phase == PHASE_PLAY) else 0
        return bool(self.sp.bet_inference)

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

    def set_allocation_inference(self, weights, declared_weights, int moves):
        """Draw the other seats' splits by the allocation model (infer_splits): weights (and
        declared_weights, for a seat that bet on good weather) are one number per
        split_features entry; moves the swap proposals per seat and world. Takes effect in
        build_pool, after set_round_record."""
        cdef int k
        w = [[float(v) for v in weights], [float(v) for v in declared_weights]]
        if any(len(row) != N_SPLIT_FEATURES or not all(v == v and abs(v) < 1e6 for v in row) for row in w):
            raise ValueError(f"set_allocation_inference needs {N_SPLIT_FEATURES} finite weights, twice")
        if not 0 <= moves <= 100000:
            raise ValueError(f"moves must be 0..100000, got {moves!r}")
        for k in range(N_SPLIT_FEATURES):
            self.sp.split_w[0][k] = w[0][k]
            self.sp.split_w[1][k] = w[1][k]
        self.sp.split_moves = moves

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

    def set_mixture_condition(self, int oversample=1, int reuse=1):
        """After the round's first card, split each other seat with a split mixture by it
        given the round's play so far (condition_mixture_splits), in the pool's worlds;
        with oversample > 1, that many worlds drawn per pool world and resampled by their
        hands' weights under the mixture; else each sampled deal gives reuse pool worlds,
        each with its own splits (the mixture's tables are made once a hand). Takes effect
        in build_pool, after set_round_record and set_split_model."""
        if not 1 <= oversample <= MAX_OVERSAMPLE or not 1 <= reuse <= MAX_OVERSAMPLE:
            raise ValueError(f"set_mixture_condition needs oversample and reuse 1..{MAX_OVERSAMPLE}")
        self.sp.mix_condition = 1
        self.sp.mix_oversample = oversample
        self.sp.mix_reuse = reuse

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
        weight = mixture_fit_draw(&self.sp, &out.st, seat, fit, &rng)
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
        mixture_pile_logits(&self.sp, &state.st, seat, component, cards, n, &logit[0])
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

    def set_play_inference(self, double tremble, int oversample, bint by_class=False, weights=None):
        """Resample the pool's worlds by how likely the others' card plays of this round are
        in each (play_log_likelihood), a sensible seat playing the rules' card but for a
        tremble (by_class: only whether it takes the trick so far); oversample worlds are
        drawn per pool world. Takes effect in build_pool, after set_round_record and
        set_randomness."""
        if not 0.0 < tremble <= 1.0 or not 1 <= oversample <= MAX_OVERSAMPLE:
            raise ValueError(f"set_play_inference needs a tremble in (0, 1] and oversample 1..{MAX_OVERSAMPLE}")
        cdef int k
        values = None if weights is None else [float(v) for v in weights]
        if values is not None and (len(values) != N_CARD_FEATURES or not all(v == v and abs(v) < 1e6 for v in values)):
            raise ValueError(f"set_play_inference: weights need {N_CARD_FEATURES} finite numbers")
        self.sp.play_tremble = tremble
        self.sp.play_by_class = by_class
        self.sp.play_fitted = values is not None
        for k in range(N_CARD_FEATURES):
            self.sp.play_w[k] = values[k] if values is not None else 0.0
        self.sp.oversample = oversample
        self.sp.play_inference = 1

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
        self.sp.pool_ess = len(items)

    def build_pool(self, int pool, uint64_t seed):
        """Draw a pool of that many worlds (seeded) by the inferences set above; the search
        then draws among them. Returns whether it is on: not with random playouts, nor
        where no other seat has split its hand."""
        cdef Rng rng
        cdef int s, k, n = self.sampler.sm.base.cfg.n_players
        if not 1 <= pool <= MAX_POOL:
            raise ValueError(f"pool must be 1..{MAX_POOL}, got {pool!r}")
        if (self.sp.play_inference and pool * self.sp.oversample > MAX_DRAWS
                or self.sp.mix_condition and pool * self.sp.mix_oversample > MAX_DRAWS):
            raise ValueError(f"pool times oversample must be at most {MAX_DRAWS}")
        self.sp.pool_n = 0
        if not self.sp.policy.rules or self.sampler.sm.base.phase == PHASE_ALLOCATE and not any(
                (self.sampler.sm.base.allocated_mask >> s) & 1 for s in range(n) if s != self.sp.root_seat):
            return False
        rng_seed(&rng, seed)
        with nogil:
            k = build_pool(&self.sp, &rng, pool)
        if k != 0:
            raise MemoryError()
        return True

    @property
    def pool_ess(self):
        """The effective sample size of the last pool's play-inference weights (the pool's
        size without play inference, 0 with no pool)."""
        return self.sp.pool_ess if self.sp.pool_n > 0 else 0.0

    def play_log_likelihood(self, CoreState world):
        """play_log_likelihood of world (a world consistent with this search's position),
        for tests."""
        return play_log_likelihood(&self.sp, &world.st)

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
        cdef Rng rng
        cdef uint64_t piles[MAX_GROUPS]
        cdef int g
        if (not 0 <= seat < state.st.cfg.n_players or seat == self.sp.root_seat
                or state.st.phase != PHASE_ALLOCATE or (state.st.allocated_mask >> seat) & 1):
            raise ValueError("modelled_allocation needs another seat still to split")
        rng_seed(&rng, seed)
        allocate_modelled(&self.sp, &state.st, seat, &rng, piles)
        return tuple(piles[g] for g in range(state.st.cfg.n_groups))

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
        cdef int i, g
        if self.root_kind != ROOT_ALLOCATE or sorted(order) != list(range(self.n_candidates)):
            raise ValueError("set_order needs a permutation of the allocation candidates")
        piles = [self.candidate(k) for k in order]
        for i in range(self.n_candidates):
            for g in range(len(piles[i])):
                self.sp.cand_piles[i * MAX_GROUPS + g] = piles[i][g]

    def candidate(self, int i):
        """Root candidate i (prior order): a pile tuple, a boolean or a card index."""
        cdef int g, ng = self.sampler.sm.base.cfg.n_groups
        if not 0 <= i < self.n_candidates:
            raise IndexError(f"candidate {i!r} out of range")
        if self.root_kind == ROOT_ALLOCATE:
            return tuple(self.sp.cand_piles[i * MAX_GROUPS + g] for g in range(ng))
        if self.root_kind == ROOT_WEATHER:
            return bool(self.sp.cand_key[i])
        return self.sp.cand_key[i]

    @property
    def candidates(self):
        """Every root candidate in prior order."""
        return [self.candidate(i) for i in range(self.n_candidates)]

    def modelled_world(self, CoreState world, uint64_t seed) -> CoreState:
        """A copy of world as the search plays it: with the allocation model on (or for the
        seats believed exact, by that chance), the other seats' splits redrawn by the rules
        where no card of the round is out (for tests)."""
        cdef Rng rng
        cdef CoreState out = world.copy()
        rng_seed(&rng, seed)
        if self.sp.model_allocations or self.sp.any_exact:
            model_unseen_allocations(&self.sp, &out.st, &rng)
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


cdef class SearchWorker:
    """One thread's search: its own random stream, node pool and root statistics.

    max_bytes (0: no ceiling) bounds the node pool and its child table, counting the old
    and the new ones while the pool doubles; the first pool is cut to fit. A run that would
    pass it stops early (``failed``) with the statistics it has."""
    cdef Worker w
    cdef SearchEngine engine
    cdef int stop_flag

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
        if self.w.root == NULL or self.w.alive == NULL or not worker_alloc(&self.w, cap):
            raise MemoryError()
        memset(self.w.root, 0, engine.n_candidates * sizeof(RootStat))
        for i in range(engine.n_candidates):
            self.w.root[i].node = -1
        rng_seed(&self.w.rng, seed)
        if engine.sp.two_trees:
            new_node(&self.w, -1, 0, -1)

    def __dealloc__(self):
        free(self.w.pool)
        free(self.w.table)
        free(self.w.root)
        free(self.w.alive)

    def run(self, int64_t iterations, double seconds) -> int:
        """Search without the GIL; returns the iterations done in this call (0 if a stop
        was requested before it began)."""
        cdef int64_t done
        with nogil:
            done = worker_run(&self.engine.sp, &self.w, iterations, seconds, &self.stop_flag)
        return done

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

    @property
    def cpu_s(self) -> float:
        """CPU time this worker's thread has spent searching."""
        return self.w.cpu_s

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
