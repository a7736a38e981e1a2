# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The hot core of csl_ai: the C game state, its rules, and the Python handle on it.

Everything below `CoreState` is C-level (structs, bitmasks, nogil). `CoreState` is the
thin boundary object: it owns one `State` by value and speaks Python ints and tuples.
"""
from libc.stdint cimport uint64_t, uint32_t, uint16_t, uint8_t, int8_t, int32_t
from libc.string cimport memcpy, memmove
from cpython.bytes cimport PyBytes_FromStringAndSize

from cards cimport *
from rng cimport *
from cstate cimport *

include "state.pxi"

ERROR_NAMES = {
    ERR_PHASE: "wrong phase",
    ERR_SEAT: "seat out of range",
    ERR_DONE_ALREADY: "that seat has already chosen this round",
    ERR_BAD_PILES: "piles do not match the group sizes",
    ERR_NOT_IN_HAND: "piles do not hold exactly the cards of the hand",
    ERR_MUST_FOLLOW: "must follow the led colour",
    ERR_BAD_DEAL: "the deal does not split the rain cards in use into hands",
    ERR_NOT_IN_PILE: "card is not in the pile for this group",
}

PHASE_NAMES = ("deal", "allocate", "weather", "play", "over")
SCORE_COLUMNS = ("candy", "spider", "leopard", "star", "good_weather", "face_down", "total")


cdef class CoreState:
    """One game state held in C; cheap to copy, picklable as its raw bytes."""
    cdef State st

    @staticmethod
    def new(int players, sides, int star_a_mode, sky_kinds, sky_counts, sky_order, int first_seat=0):
        """A game waiting for its first deal. sky_kinds/sky_counts describe the deck by card id;
        sky_order is the shuffled deck as card ids, top first."""
        cdef Config cfg
        cdef uint8_t order[MAX_SKY]
        cdef int i
        cdef CoreState obj = CoreState.__new__(CoreState)
        memset(&cfg, 0, sizeof(Config))
        if config_set_players(&cfg, players) != OK:
            raise ValueError(f"players must be 2..5, got {players!r}")
        if len(sky_kinds) != cfg.n_sky or len(sky_counts) != cfg.n_sky or len(sky_order) != cfg.n_sky:
            raise ValueError(f"a {players}-player game uses {cfg.n_sky} sky cards")
        if sorted(sky_order) != list(range(cfg.n_sky)):
            raise ValueError("sky_order must be a permutation of the deck's card ids")
        if not 0 <= first_seat < players:
            raise ValueError(f"first_seat must be in 0..{players - 1}")
        for i in range(N_KINDS):
            cfg.side[i] = sides[i]
        cfg.star_a_mode = star_a_mode
        cfg.first_seat = first_seat
        for i in range(cfg.n_sky):
            cfg.sky_kind[i] = sky_kinds[i]
            cfg.sky_count[i] = sky_counts[i]
            order[i] = sky_order[i]
        state_init(&obj.st, &cfg, order)
        return obj

    def copy(self) -> CoreState:
        cdef CoreState obj = CoreState.__new__(CoreState)
        obj.st = self.st
        return obj

    def to_bytes(self) -> bytes:
        return PyBytes_FromStringAndSize(<char*>&self.st, sizeof(State))

    @staticmethod
    def from_bytes(bytes data) -> CoreState:
        cdef CoreState obj = CoreState.__new__(CoreState)
        if len(data) != sizeof(State):
            raise ValueError("not a CoreState image")
        memcpy(&obj.st, <char*>data, sizeof(State))
        return obj

    def __reduce__(self):
        return (CoreState.from_bytes, (self.to_bytes(),))

    def __eq__(self, other):
        return isinstance(other, CoreState) and self.to_bytes() == other.to_bytes()

    def __hash__(self):
        return hash(self.to_bytes())

    # --- configuration -------------------------------------------------------------
    @property
    def players(self): return self.st.cfg.n_players
    @property
    def n_groups(self): return self.st.cfg.n_groups
    @property
    def group_sizes(self): return tuple(self.st.cfg.group_size[g] for g in range(self.st.cfg.n_groups))
    @property
    def hand_size(self): return self.st.cfg.hand_size
    @property
    def n_rounds(self): return self.st.cfg.n_rounds
    @property
    def line_size(self): return self.st.cfg.line_size
    @property
    def rain_in_use(self): return self.st.cfg.rain_in_use
    @property
    def sky_order(self): return tuple(self.st.sky_order[i] for i in range(self.st.cfg.n_sky))

    # --- progress --------------------------------------------------------------------
    @property
    def phase(self): return PHASE_NAMES[self.st.phase]
    @property
    def is_over(self): return self.st.phase == PHASE_OVER
    @property
    def round(self): return self.st.round
    @property
    def first_player(self): return self.st.first_player
    @property
    def to_move(self): return self.st.to_move
    @property
    def group(self): return self.st.group
    @property
    def trick_in_group(self): return self.st.trick_in_group
    @property
    def line_pos(self): return self.st.line_pos
    @property
    def leader(self): return self.st.leader
    @property
    def last_winner(self): return self.st.last_winner
    @property
    def led_colour(self): return self.st.led_colour
    @property
    def trick_cards(self):
        return tuple(self.st.trick_card[s] for s in range(self.st.cfg.n_players))
    @property
    def line(self):
        """Sky card ids of the current round's line (the last round's once the game is over)."""
        cdef int start = self.st.sky_pos if self.st.phase != PHASE_OVER else self.st.sky_pos - self.st.cfg.line_size
        return tuple(self.st.sky_order[start + i] for i in range(self.st.cfg.line_size))
    @property
    def allocated_mask(self): return self.st.allocated_mask
    @property
    def declared_mask(self): return self.st.declared_mask
    @property
    def weather_done_mask(self): return self.st.weather_done_mask

    # --- cards -----------------------------------------------------------------------
    @property
    def hands(self): return tuple(self.st.hand[s] for s in range(self.st.cfg.n_players))
    @property
    def piles(self):
        return tuple(tuple(self.st.pile[s][g] for g in range(self.st.cfg.n_groups))
                     for s in range(self.st.cfg.n_players))
    @property
    def set_aside(self): return self.st.set_aside
    @property
    def played(self): return self.st.played

    # --- sky cards won ---------------------------------------------------------------
    @property
    def round_won(self): return tuple(self.st.round_won[s] for s in range(self.st.cfg.n_players))
    @property
    def elements(self):
        """Face-up elements per seat: (candy, spider, leopard, star)."""
        return tuple(tuple(self.st.elems[s][k] for k in range(N_KINDS)) for s in range(self.st.cfg.n_players))
    @property
    def faceup_cards(self): return tuple(self.st.faceup_cards[s] for s in range(self.st.cfg.n_players))
    @property
    def facedown_cards(self): return tuple(self.st.facedown_cards[s] for s in range(self.st.cfg.n_players))
    @property
    def good_weather(self): return tuple(self.st.good_weather[s] for s in range(self.st.cfg.n_players))

    # --- moves -----------------------------------------------------------------------
    def deal(self, hands, uint64_t set_aside=0) -> int:
        """Deal the round; returns an error code (0 = OK)."""
        cdef uint64_t h[MAX_PLAYERS]
        cdef int s
        if len(hands) != self.st.cfg.n_players:
            return ERR_BAD_DEAL
        for s in range(self.st.cfg.n_players):
            h[s] = hands[s]
        return state_deal(&self.st, h, set_aside)

    def deal_random(self, uint64_t seed) -> int:
        cdef Rng rng
        if self.st.phase != PHASE_DEAL:
            return ERR_PHASE
        rng_seed(&rng, seed)
        state_deal_random(&self.st, &rng)
        return OK

    def allocate(self, int seat, piles) -> int:
        cdef uint64_t p[MAX_GROUPS]
        cdef int g
        if len(piles) != self.st.cfg.n_groups:
            return ERR_BAD_PILES
        for g in range(self.st.cfg.n_groups):
            p[g] = piles[g]
        return state_allocate(&self.st, seat, p)

    def declare(self, int seat, bint good_weather) -> int:
        return state_declare(&self.st, seat, good_weather)

    def play(self, int card) -> int:
        return state_play(&self.st, card)

    def reveal_play(self, int card) -> int:
        """Play a card for a seat whose pile is hidden: the card joins that pile, then is played.

        Used to replay public history from one seat's view, where others' piles are unknown;
        the card must not have been played already this round."""
        if self.st.phase != PHASE_PLAY:
            return ERR_PHASE
        if card < 0 or card >= N_RAIN or not (self.st.cfg.rain_in_use & bit(card)) or (self.st.played & bit(card)):
            return ERR_NOT_IN_PILE
        self.st.pile[self.st.to_move][self.st.group] |= bit(card)
        return state_play(&self.st, card)

    def set_hidden_round(self, hands, uint64_t set_aside=0) -> int:
        """Start a round from one seat's view: hands holds the known hands (0 where hidden)."""
        cdef int s
        if self.st.phase != PHASE_DEAL:
            return ERR_PHASE
        for s in range(self.st.cfg.n_players):
            self.st.hand[s] = hands[s]
        self.st.set_aside = set_aside
        _start_round(&self.st)
        return OK

    def force_allocated(self, int seat, piles) -> int:
        """Mark a seat as allocated with the given (possibly empty, hidden) piles."""
        cdef int g
        if self.st.phase != PHASE_ALLOCATE or (self.st.allocated_mask >> seat) & 1:
            return ERR_PHASE
        for g in range(self.st.cfg.n_groups):
            self.st.pile[seat][g] = piles[g]
        self.st.allocated_mask |= 1 << seat
        _next_to_allocate(&self.st)
        return OK

    def legal_plays(self) -> int:
        return legal_plays(&self.st)

    def allocations(self, uint64_t hand):
        """Every split of hand into this game's group piles, as tuples of masks."""
        cdef uint64_t buf[1680 * 3]
        cdef int n, i, g, ng = self.st.cfg.n_groups
        if popcount(hand) != self.st.cfg.hand_size:
            raise ValueError("hand has the wrong number of cards")
        n = enumerate_allocations(&self.st.cfg, hand, buf)
        if ng == 2:
            return [(buf[i * 3], buf[i * 3 + 1]) for i in range(n)]
        return [(buf[i * 3], buf[i * 3 + 1], buf[i * 3 + 2]) for i in range(n)]

    # --- end of game -----------------------------------------------------------------
    def scores(self):
        """Per seat, the breakdown in SCORE_COLUMNS order."""
        cdef int32_t out[MAX_PLAYERS * N_SCORE_COLS]
        state_scores(&self.st, out)
        return [[out[s * N_SCORE_COLS + c] for c in range(N_SCORE_COLS)] for s in range(self.st.cfg.n_players)]

    def winners(self) -> int:
        """Bitmask of the winning seats (more than one bit: a shared win)."""
        cdef int32_t out[MAX_PLAYERS * N_SCORE_COLS]
        state_scores(&self.st, out)
        return state_winners(&self.st, out)

    def outright_winner(self) -> int:
        return star_b_outright(&self.st)

    def play_random(self, uint64_t seed):
        """Finish the game with uniformly random moves (for tests and benchmarks)."""
        cdef Rng rng
        rng_seed(&rng, seed)
        with nogil:
            state_play_random(&self.st, &rng)


def random_games(CoreState start, long n_games, uint64_t seed) -> int:
    """Play n_games random games from copies of start, in C without the GIL.

    Returns the sum of all winners' masks so the work cannot be optimised away."""
    cdef State st
    cdef Rng rng
    cdef long i
    cdef int32_t out[MAX_PLAYERS * N_SCORE_COLS]
    cdef long checksum = 0
    rng_seed(&rng, seed)
    with nogil:
        for i in range(n_games):
            st = start.st
            state_play_random(&st, &rng)
            state_scores(&st, out)
            checksum += state_winners(&st, out)
    return checksum


def random_round_tricks(CoreState start, long n_rounds, uint64_t seed) -> int:
    """From a state at the first trick of a round, play that round's tricks n_rounds times."""
    cdef State st
    cdef Rng rng
    cdef long i
    cdef long checksum = 0
    if start.st.phase != PHASE_PLAY:
        raise ValueError("start must be in the trick phase")
    rng_seed(&rng, seed)
    with nogil:
        for i in range(n_rounds):
            st = start.st
            finish_round_random(&st, &rng)
            checksum += st.last_winner
    return checksum


def random_tricks_from_piles(CoreState start, long n_rounds, uint64_t seed) -> int:
    """The trick phase alone, n_rounds times: from a state at a trick boundary, each group's
    piles copied to locals and its tricks played by the playout's own loop (_group_tricks),
    each trick's sky card credited to its winner; no 470-byte State copy, no end of round.

    Credits pile up in one scratch State across rounds (they are not read). Returns the sum
    of the rounds' last winners so the work cannot be optimised away."""
    cdef State scratch
    cdef Rng rng
    cdef long i
    cdef long checksum = 0
    cdef int g, s, pos, end, leader
    cdef int n = start.st.cfg.n_players
    cdef uint64_t p[MAX_PLAYERS]
    if start.st.phase != PHASE_PLAY or start.st.n_in_trick != 0:
        raise ValueError("start must be at a trick boundary of the trick phase")
    scratch = start.st
    rng_seed(&rng, seed)
    with nogil:
        for i in range(n_rounds):
            pos = start.st.line_pos
            leader = start.st.leader
            for g in range(start.st.group, start.st.cfg.n_groups):
                for s in range(n):
                    p[s] = start.st.pile[s][g]
                end = start.st.cfg.group_start[g] + start.st.cfg.group_size[g]
                leader = _group_tricks(&scratch, &rng, p, n, leader, pos, end)
                pos = end
            checksum += leader
    return checksum


def score_tallies(int players, sides, int star_a_mode, elements, faceup_cards, facedown_cards, good_weather):
    """Score end-of-game tallies directly: (per-seat breakdown rows, winners mask, outright seat or -1).

    elements[s] = face-up (candy, spider, leopard, star) counts of seat s."""
    cdef State st
    cdef int32_t out[MAX_PLAYERS * N_SCORE_COLS]
    cdef int s, k
    memset(&st, 0, sizeof(State))
    if config_set_players(&st.cfg, players) != OK:
        raise ValueError(f"players must be 2..5, got {players!r}")
    for k in range(N_KINDS):
        st.cfg.side[k] = sides[k]
    st.cfg.star_a_mode = star_a_mode
    for s in range(players):
        for k in range(N_KINDS):
            st.elems[s][k] = elements[s][k]
        st.faceup_cards[s] = faceup_cards[s]
        st.facedown_cards[s] = facedown_cards[s]
        st.good_weather[s] = good_weather[s]
    st.phase = PHASE_OVER
    state_scores(&st, out)
    rows = [[out[s * N_SCORE_COLS + c] for c in range(N_SCORE_COLS)] for s in range(players)]
    return rows, state_winners(&st, out), star_b_outright(&st)


include "sampler.pxi"
include "search_types.pxi"
include "playout.pxi"
include "fastexp.pxi"
include "splits.pxi"
include "worlds.pxi"
include "tree.pxi"
include "engine.pxi"
include "learned.pxi"
include "value.pxi"


def rng_calibrate(long n_calls, uint64_t seed) -> int:
    """Draw n_calls raw 64-bit numbers in C (benchmark calibration: ns per rng call).

    Returns their xor so the loop cannot be optimised away."""
    cdef Rng rng
    cdef long i
    cdef uint64_t acc = 0
    rng_seed(&rng, seed)
    with nogil:
        for i in range(n_calls):
            acc ^= rng_next(&rng)
    return acc


def random_deal_allocate(CoreState state, uint64_t seed) -> int:
    """Deal the round into state with every hand split into uniformly random piles (the
    playouts' deal), leaving it at the weather bet; returns an error code (0 = OK)."""
    cdef Rng rng
    if state.st.phase != PHASE_DEAL:
        return ERR_PHASE
    rng_seed(&rng, seed)
    deal_and_allocate_random(&state.st, &rng)
    return OK
