/* A hand-written C floor for the rules core's random playouts (issue 40).
 *
 * The same work as csl_ai._core.random_tricks_from_piles and random_games, written as
 * plainly and as fast as C allows, for 4 players with the default rules (every scoring
 * card on side A, the shooting star's "twice" option): benchmarks/bench_floor.py times
 * the core against it. Random choices are drawn exactly as the core draws them (wyrand,
 * Lemire's method on 12- and 16-bit slices, the same slices in the same order), so from
 * the same seed both play the same games; tests/test_c_floor.py checks that.
 *
 * What the floor leaves out is what the rules never needed: no game state struct copied
 * per game, no phase machine, no loops over a player count or group sizes known only at
 * run time, no per-round clearing of fields nobody reads; the generator lives in a local,
 * sky cards are resolved to their credits once per call and a round's winnings are one
 * packed word per seat. Self-contained C99 (plus __int128 and GCC builtins, as the core
 * uses); loaded through ctypes.
 */
#include <stdint.h>

#if defined(__BMI2__)
#include <immintrin.h>
#endif

enum {
    SEATS = 4,
    GROUPS = 3,
    GROUP_SIZE = 3,
    LINE = GROUPS * GROUP_SIZE,
    ROUNDS = 4,
    SKY_CARDS = LINE * ROUNDS,
    RAIN_CARDS = 36,
    KINDS = 4,
    STAR = 3,
    WON_LANE = 4,
    GOOD_WEATHER_POINTS = 7,
    FACEDOWN_POINTS = -2,
    STAR_TWO_POINTS = -5,
};

#define BLUE_MASK 0xFFFULL
#define ALL_RAIN ((1ULL << RAIN_CARDS) - 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

static const int32_t SPIDER_A[7] = {0, 3, 10, 4, 2, 10, 1};
static const int32_t LEOPARD_A[8] = {0, 0, 10, 0, 20, 0, 30, 0};

/* --- the core's generator (csrc/rng.pxd) ------------------------------------------------ */

typedef struct {
    uint64_t s;
} Rng;

__extension__ typedef unsigned __int128 u128;

static inline void rng_seed(Rng *r, uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    r->s = z ^ (z >> 31);
}

static inline uint64_t rng_next(Rng *r)
{
    r->s += 0x2d358dccaa6c78a5ULL;
    u128 m = (u128)r->s * (r->s ^ 0x8bb84b93962eacc9ULL);
    return (uint64_t)(m >> 64) ^ (uint64_t)m;
}

/* The rare rejection step of Lemire's method on a `bits`-bit slice. */
static __attribute__((noinline)) uint32_t redraw_bits(Rng *r, uint32_t m, uint32_t n, int bits)
{
    uint32_t low = (1u << bits) - 1;
    uint32_t threshold = (1u << bits) % n;
    while ((m & low) < threshold)
        m = (uint32_t)(rng_next(r) >> (64 - bits)) * n;
    return m;
}

/* Uniform in [0, n) from 12 random bits x (1 <= n <= 4096). */
static inline uint32_t below_bits12(Rng *r, uint32_t x, uint32_t n)
{
    uint32_t m = x * n;
    if (UNLIKELY((m & 0xFFF) < n))
        m = redraw_bits(r, m, n, 12);
    return m >> 12;
}

/* Uniform in [0, n) from 16 random bits x (1 <= n <= 65535). */
static inline uint32_t below_bits16(Rng *r, uint32_t x, uint32_t n)
{
    uint32_t m = x * n;
    if (UNLIKELY((m & 0xFFFF) < n))
        m = redraw_bits(r, m, n, 16);
    return m >> 16;
}

/* --- cards as bits: card = colour * 12 + rank - 1, blue (trump) = colour 0 ---------------- */

/* The bits of x at the set positions of `positions` (bit i keeps x's i-th lowest set bit). */
static inline uint64_t select_bits(uint64_t x, uint64_t positions)
{
#if defined(__BMI2__)
    return _pdep_u64(positions, x);
#else
    uint64_t out = 0;
    for (; x; x &= x - 1, positions >>= 1)
        if (positions & 1)
            out |= x & -x;
    return out;
#endif
}

static inline uint64_t nth_bit(uint64_t x, uint32_t n)
{
    return select_bits(x, 1ULL << n);
}

static inline uint64_t colour_mask_of_bit(uint64_t b)
{
    int colour = (b >= (1ULL << 12)) + (b >= (1ULL << 24));
    return BLUE_MASK << (12 * colour);
}

/* The weather rule as a key: blues above everything, the led colour by rank, others 0. */
static inline uint64_t trick_key(uint64_t b, uint64_t led_mask)
{
    return ((b & BLUE_MASK) << 52) | (b & led_mask);
}

/* --- the deal ------------------------------------------------------------------------------ */

/* Deal the 36 rain cards and split every hand into uniformly random piles, piles[group][seat]:
 * seat 0's piles first, each a uniform 3-card subset of the cards left, drawn card by card
 * as a position among the positions not yet taken, one 16-bit slice of a draw per card. */
static inline void deal_piles(Rng *r, uint64_t piles[GROUPS][SEATS])
{
    uint64_t left = ALL_RAIN, slices = 0, taken = 0;
#pragma GCC unroll 36
    for (int k = 0; k < RAIN_CARDS; k++) {
        if (k % 4 == 0)
            slices = rng_next(r);
        uint32_t pick = below_bits16(r, (uint32_t)(slices & 0xFFFF), (uint32_t)(RAIN_CARDS - k));
        slices >>= 16;
        taken |= nth_bit(~taken, pick);
        if (k % GROUP_SIZE == GROUP_SIZE - 1) {
            uint64_t pile = select_bits(left, taken);
            left ^= pile;
            taken = 0;
            piles[(k / GROUP_SIZE) % GROUPS][k / (GROUP_SIZE * GROUPS)] = pile;
        }
    }
}

/* --- tricks -------------------------------------------------------------------------------- */

/* A seat's winnings this round, packed one byte per lane: lanes 0..3 the elements of each
 * kind, lane 4 the sky cards won. credit[pos] is what line position pos adds. */
static inline uint64_t sky_credit(int kind, int count)
{
    return ((uint64_t)count << (8 * kind)) | (1ULL << (8 * WON_LANE));
}

static inline int next_seat(int seat)
{
    return (seat + 1) & (SEATS - 1);
}

/* A uniformly random legal card (as a one-bit mask) from 12 random bits. */
static inline uint64_t pick_card(Rng *r, uint64_t legal, uint64_t bits12)
{
    return nth_bit(legal, below_bits12(r, (uint32_t)(bits12 & 0xFFF), (uint32_t)__builtin_popcountll(legal)));
}

/* A uniformly random card of a one- or two-card mask, from one random bit (coin & 1),
 * without a branch: the coin is a coin flip to the branch predictor too. */
static inline uint64_t pick_of_two(uint64_t legal, uint64_t coin)
{
    uint64_t low = legal & (0 - legal);
    uint64_t high = legal ^ low;
    uint64_t take_high = 0 - (coin & (uint64_t)(high != 0));
    return low ^ ((low ^ high) & take_high);
}

/* The group's first trick, three cards in every pile; returns the winner. */
static inline int trick_of_three(Rng *r, uint64_t p[SEATS], int leader)
{
    uint64_t bits = rng_next(r);
    uint64_t b = pick_card(r, p[leader], bits);
    uint64_t led = colour_mask_of_bit(b);
    uint64_t best = trick_key(b, led);
    int winner = leader, seat = leader;
    p[leader] ^= b;
    for (int i = 1; i < SEATS; i++) {
        seat = next_seat(seat);
        bits >>= 12;
        uint64_t follow = p[seat] & led;
        b = pick_card(r, follow ? follow : p[seat], bits);
        p[seat] ^= b;
        uint64_t key = trick_key(b, led);
        winner = key > best ? seat : winner;
        best = key > best ? key : best;
    }
    return winner;
}

/* The group's second trick, two cards in every pile: one random bit per seat. */
static inline int trick_of_two(Rng *r, uint64_t p[SEATS], int leader)
{
    uint64_t coins = rng_next(r);
    uint64_t b = pick_of_two(p[leader], coins);
    uint64_t led = colour_mask_of_bit(b);
    uint64_t best = trick_key(b, led);
    int winner = leader, seat = leader;
    p[leader] ^= b;
    for (int i = 1; i < SEATS; i++) {
        seat = next_seat(seat);
        coins >>= 1;
        uint64_t follow = p[seat] & led;
        b = pick_of_two(follow ? follow : p[seat], coins);
        p[seat] ^= b;
        uint64_t key = trick_key(b, led);
        winner = key > best ? seat : winner;
        best = key > best ? key : best;
    }
    return winner;
}

/* The group's last trick: every seat plays its last card. */
static inline int trick_forced(const uint64_t p[SEATS], int leader)
{
    uint64_t led = colour_mask_of_bit(p[leader]);
    uint64_t best = 0;
    int winner = leader;
    for (int seat = 0; seat < SEATS; seat++) {
        uint64_t key = trick_key(p[seat], led);
        winner = key > best ? seat : winner;
        best = key > best ? key : best;
    }
    return winner;
}

/* Every trick of a round from the piles (piles[group][seat]); each trick's sky credit
 * goes to its winner's word in won[]. Returns the last winner. */
static inline int round_tricks(Rng *r, uint64_t piles[GROUPS][SEATS], const uint64_t credit[LINE],
                               int leader, uint64_t won[SEATS])
{
    for (int g = 0; g < GROUPS; g++) {
        uint64_t p[SEATS] = {piles[g][0], piles[g][1], piles[g][2], piles[g][3]};
        const uint64_t *c = credit + g * GROUP_SIZE;
        leader = trick_of_three(r, p, leader);
        won[leader] += c[0];
        leader = trick_of_two(r, p, leader);
        won[leader] += c[1];
        leader = trick_forced(p, leader);
        won[leader] += c[2];
    }
    return leader;
}

/* --- a whole game -------------------------------------------------------------------------- */

/* What a seat holds at the end: face-up elements and cards packed as in sky_credit. */
typedef struct {
    uint64_t faceup[SEATS];
    int32_t facedown[SEATS];
    int32_t good_weather[SEATS];
} Tallies;

static inline int lane(uint64_t word, int k)
{
    return (int)((word >> (8 * k)) & 0xFF);
}

/* Good weather check (RULES.md 3.5): a declarer who won nothing gets a good weather card,
 * one who won turns this round's cards face down; the others keep theirs face up. */
static inline void end_round(Tallies *t, const uint64_t won[SEATS], uint32_t declared)
{
    for (int s = 0; s < SEATS; s++) {
        uint64_t bet = (declared >> s) & 1;
        uint64_t keep = bet - 1;
        int32_t cards = lane(won[s], WON_LANE);
        t->faceup[s] += won[s] & keep;
        t->facedown[s] += cards & (int32_t)~keep;
        t->good_weather[s] += (int32_t)bet & (cards == 0);
    }
}

/* One seat's total by the side A cards and the "twice" star option (RULES.md 4). */
static inline int32_t seat_total(const Tallies *t, int s)
{
    int candy = lane(t->faceup[s], 0);
    int spiders = lane(t->faceup[s], 1);
    int leopards = lane(t->faceup[s], 2);
    int stars = lane(t->faceup[s], STAR);
    int32_t candy_points = 0;
    for (int o = 0; o < SEATS; o++) {
        int c = lane(t->faceup[o], 0);
        candy_points += c < candy ? c : 0;
    }
    int32_t base = candy_points + SPIDER_A[spiders < 6 ? spiders : 6] + LEOPARD_A[leopards < 7 ? leopards : 7];
    int32_t star_points = stars == 2 ? STAR_TWO_POINTS : stars >= 3 ? 2 * base : 0;
    return base + star_points + GOOD_WEATHER_POINTS * t->good_weather[s] + FACEDOWN_POINTS * t->facedown[s];
}

/* Bitmask of the winners: highest total, then fewest sky cards, then most good weather. */
static inline int winners_of(const Tallies *t, const int32_t total[SEATS])
{
    int mask = 0;
    int32_t best_total = INT32_MIN, best_cards = INT32_MAX, best_weather = -1;
    for (int s = 0; s < SEATS; s++) {
        int32_t cards = lane(t->faceup[s], WON_LANE) + t->facedown[s];
        int32_t weather = t->good_weather[s];
        if (total[s] > best_total
            || (total[s] == best_total && (cards < best_cards || (cards == best_cards && weather > best_weather)))) {
            best_total = total[s];
            best_cards = cards;
            best_weather = weather;
            mask = 1 << s;
        } else if (total[s] == best_total && cards == best_cards && weather == best_weather) {
            mask |= 1 << s;
        }
    }
    return mask;
}

/* A random game from its first deal: deal, random split, a coin per seat for the good
 * weather bet, every trick, every round's check; totals into total[], returns the winners. */
static inline int play_game(Rng *r, const uint64_t credit[SKY_CARDS], int first_seat, Tallies *t,
                            int32_t total[SEATS])
{
    int first = first_seat;
    for (int s = 0; s < SEATS; s++) {
        t->faceup[s] = 0;
        t->facedown[s] = 0;
        t->good_weather[s] = 0;
    }
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t piles[GROUPS][SEATS];
        uint64_t won[SEATS] = {0, 0, 0, 0};
        deal_piles(r, piles);
        uint32_t declared = (uint32_t)rng_next(r) & ((1u << SEATS) - 1);
        round_tricks(r, piles, credit + round * LINE, first, won);
        end_round(t, won, declared);
        first = next_seat(first);
    }
    for (int s = 0; s < SEATS; s++)
        total[s] = seat_total(t, s);
    return winners_of(t, total);
}

static void credits_of(const uint8_t *kind_at, const uint8_t *count_at, int n, uint64_t *credit)
{
    for (int i = 0; i < n; i++)
        credit[i] = sky_credit(kind_at[i], count_at[i]);
}

/* --- the C API ----------------------------------------------------------------------------- */

#define EXPORT __attribute__((visibility("default")))

/* The floor of _core.random_tricks_from_piles: the trick phase of one round, n_rounds
 * times, from piles[seat * 3 + group] with the line's sky cards (kind_at/count_at, 9 each)
 * and the leader of the first trick. Winnings pile up in scratch[seat] (packed as in
 * sky_credit, never read back as counts), as in the core's scratch State. Returns the sum
 * of the rounds' last winners. */
EXPORT long floor_tricks_from_piles(const uint64_t *piles, const uint8_t *kind_at, const uint8_t *count_at,
                                    int leader, long n_rounds, uint64_t seed, uint64_t *scratch)
{
    uint64_t by_group[GROUPS][SEATS];
    uint64_t credit[LINE];
    Rng r;
    long checksum = 0;
    for (int s = 0; s < SEATS; s++)
        for (int g = 0; g < GROUPS; g++)
            by_group[g][s] = piles[s * GROUPS + g];
    credits_of(kind_at, count_at, LINE, credit);
    rng_seed(&r, seed);
    for (long i = 0; i < n_rounds; i++)
        checksum += round_tricks(&r, by_group, credit, leader, scratch);
    return checksum;
}

/* One round's tricks as floor_tricks_from_piles plays them, from a generator seeded with
 * seed (as CoreState.play_random seeds its own): out[seat * 5 + lane] the elements of each
 * kind won (lanes 0..3) and the sky cards won (lane 4). Returns the last winner. */
EXPORT int floor_round_tricks(const uint64_t *piles, const uint8_t *kind_at, const uint8_t *count_at,
                              int leader, uint64_t seed, int32_t *out)
{
    uint64_t by_group[GROUPS][SEATS];
    uint64_t credit[LINE];
    uint64_t won[SEATS] = {0, 0, 0, 0};
    Rng r;
    for (int s = 0; s < SEATS; s++)
        for (int g = 0; g < GROUPS; g++)
            by_group[g][s] = piles[s * GROUPS + g];
    credits_of(kind_at, count_at, LINE, credit);
    rng_seed(&r, seed);
    int last = round_tricks(&r, by_group, credit, leader, won);
    for (int s = 0; s < SEATS; s++)
        for (int k = 0; k <= WON_LANE; k++)
            out[s * (WON_LANE + 1) + k] = lane(won[s], k);
    return last;
}

/* The floor of _core.random_games: n_games random games from the first deal, one
 * generator stream seeded once, the sky deck in dealing order (kind_at/count_at, 36 each),
 * first_seat holding the First player card in round 1. Returns the sum of the winners'
 * masks. */
EXPORT long floor_random_games(const uint8_t *kind_at, const uint8_t *count_at, int first_seat, long n_games,
                               uint64_t seed)
{
    uint64_t credit[SKY_CARDS];
    Tallies t;
    int32_t total[SEATS];
    Rng r;
    long checksum = 0;
    credits_of(kind_at, count_at, SKY_CARDS, credit);
    rng_seed(&r, seed);
    for (long i = 0; i < n_games; i++)
        checksum += play_game(&r, credit, first_seat, &t, total);
    return checksum;
}

/* Columns of floor_play_game's rows. */
enum { COL_CANDY, COL_SPIDER, COL_LEOPARD, COL_STAR, COL_FACEUP, COL_FACEDOWN, COL_WEATHER, COL_TOTAL, N_COLS };

/* One random game as floor_random_games plays it, from a generator seeded with seed (as
 * CoreState.play_random seeds its own): out[seat * 8 + column] in the order candy, spider,
 * leopard and star elements, face-up cards, face-down cards, good weather cards, total.
 * Returns the winners' mask. */
EXPORT int floor_play_game(const uint8_t *kind_at, const uint8_t *count_at, int first_seat, uint64_t seed,
                           int32_t *out)
{
    uint64_t credit[SKY_CARDS];
    Tallies t;
    int32_t total[SEATS];
    Rng r;
    credits_of(kind_at, count_at, SKY_CARDS, credit);
    rng_seed(&r, seed);
    int winners = play_game(&r, credit, first_seat, &t, total);
    for (int s = 0; s < SEATS; s++) {
        int32_t *row = out + s * N_COLS;
        for (int k = 0; k < KINDS; k++)
            row[k] = lane(t.faceup[s], k);
        row[COL_FACEUP] = lane(t.faceup[s], WON_LANE);
        row[COL_FACEDOWN] = t.facedown[s];
        row[COL_WEATHER] = t.good_weather[s];
        row[COL_TOTAL] = total[s];
    }
    return winners;
}
