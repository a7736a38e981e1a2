"""Type stub for the compiled Cython module csl_ai._core (csrc/_core.pyx and its .pxi files).

Card sets, hands, piles and masks are 64-bit unsigned integers (Python ints).
"""

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeAlias

from typing_extensions import Self, disjoint_base

_PhaseName: TypeAlias = Literal["deal", "allocate", "weather", "play", "over"]

# A playout event of SearchEngine.playout_trace.
_TraceEvent: TypeAlias = (
    tuple[Literal["deal"], tuple[int, ...], int]
    | tuple[Literal["allocate"], int, tuple[int, ...]]
    | tuple[Literal["weather"], int, bool]
    | tuple[Literal["play"], int]
)

# The move heuristic_move returns.
_HeuristicMove: TypeAlias = (
    tuple[Literal["allocate"], tuple[int, ...]]
    | tuple[Literal["weather"], bool]
    | tuple[Literal["play"], int]
)

ERROR_NAMES: dict[int, str]
"""Error code (non-zero return of the CoreState move methods) -> message."""
PHASE_NAMES: tuple[str, str, str, str, str]
"""("deal", "allocate", "weather", "play", "over"), indexed by the C phase."""
SCORE_COLUMNS: tuple[str, str, str, str, str, str, str]
"""Column names of a score breakdown row, ending with "total"."""

@disjoint_base
class CoreState:
    """One game state held in C; cheap to copy, picklable as its raw bytes."""

    @staticmethod
    def new(
        players: int,
        sides: Sequence[int],
        star_a_mode: int,
        sky_kinds: Sequence[int],
        sky_counts: Sequence[int],
        sky_order: Sequence[int],
        first_seat: int = 0,
    ) -> CoreState:
        """A game waiting for its first deal."""
    def copy(self) -> CoreState: ...
    def to_bytes(self) -> bytes: ...
    @staticmethod
    def from_bytes(data: bytes) -> CoreState: ...
    def __reduce__(self) -> tuple[Callable[[bytes], CoreState], tuple[bytes]]: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...

    # --- configuration ---
    @property
    def players(self) -> int: ...
    @property
    def n_groups(self) -> int: ...
    @property
    def group_sizes(self) -> tuple[int, ...]: ...
    @property
    def hand_size(self) -> int: ...
    @property
    def n_rounds(self) -> int: ...
    @property
    def line_size(self) -> int: ...
    @property
    def rain_in_use(self) -> int: ...
    @property
    def sky_order(self) -> tuple[int, ...]: ...

    # --- progress ---
    @property
    def phase(self) -> _PhaseName: ...
    @property
    def is_over(self) -> bool: ...
    @property
    def round(self) -> int: ...
    @property
    def first_player(self) -> int: ...
    @property
    def to_move(self) -> int: ...
    @property
    def group(self) -> int: ...
    @property
    def trick_in_group(self) -> int: ...
    @property
    def line_pos(self) -> int: ...
    @property
    def leader(self) -> int: ...
    @property
    def last_winner(self) -> int: ...
    @property
    def led_colour(self) -> int: ...
    @property
    def trick_cards(self) -> tuple[int, ...]:
        """Card each seat has played to the trick in progress (-1: none)."""
    @property
    def line(self) -> tuple[int, ...]:
        """Sky card ids of the current round's line (the last round's once the game is over)."""
    @property
    def allocated_mask(self) -> int: ...
    @property
    def declared_mask(self) -> int: ...
    @property
    def weather_done_mask(self) -> int: ...

    # --- cards ---
    @property
    def hands(self) -> tuple[int, ...]: ...
    @property
    def piles(self) -> tuple[tuple[int, ...], ...]:
        """piles[seat][group]: the cards left in each pile."""
    @property
    def set_aside(self) -> int: ...
    @property
    def played(self) -> int: ...

    # --- sky cards won ---
    @property
    def round_won(self) -> tuple[int, ...]: ...
    @property
    def elements(self) -> tuple[tuple[int, int, int, int], ...]:
        """Face-up elements per seat: (candy, spider, leopard, star)."""
    @property
    def faceup_cards(self) -> tuple[int, ...]: ...
    @property
    def facedown_cards(self) -> tuple[int, ...]: ...
    @property
    def good_weather(self) -> tuple[int, ...]: ...

    # --- moves (each returns an error code, 0 = OK; see ERROR_NAMES) ---
    def deal(self, hands: Sequence[int], set_aside: int = 0) -> int: ...
    def deal_random(self, seed: int) -> int: ...
    def allocate(self, seat: int, piles: Sequence[int]) -> int: ...
    def declare(self, seat: int, good_weather: bool) -> int: ...
    def play(self, card: int) -> int: ...
    def reveal_play(self, card: int) -> int:
        """Play a card for a seat whose pile is hidden: the card joins that pile, then is played."""
    def set_hidden_round(self, hands: Sequence[int], set_aside: int = 0) -> int:
        """Start a round from one seat's view: hands holds the known hands (0 where hidden)."""
    def force_allocated(self, seat: int, piles: Sequence[int]) -> int:
        """Mark a seat as allocated with the given (possibly empty, hidden) piles."""
    def legal_plays(self) -> int: ...
    def allocations(self, hand: int) -> list[tuple[int, ...]]:
        """Every split of hand into this game's group piles, as tuples of masks."""

    # --- end of game ---
    def scores(self) -> list[list[int]]:
        """Per seat, the breakdown in SCORE_COLUMNS order."""
    def winners(self) -> int:
        """Bitmask of the winning seats (more than one bit: a shared win)."""
    def outright_winner(self) -> int: ...
    def play_random(self, seed: int) -> None:
        """Finish the game with uniformly random moves (for tests and benchmarks)."""

def random_games(start: CoreState, n_games: int, seed: int) -> int:
    """Play n_games random games from copies of start; returns the sum of winners' masks."""

def random_round_tricks(start: CoreState, n_rounds: int, seed: int) -> int:
    """From a state at the first trick of a round, play that round's tricks n_rounds times."""

def random_tricks_from_piles(start: CoreState, n_rounds: int, seed: int) -> int:
    """The trick phase alone (tricks and their sky cards' winners), n_rounds times: no State
    copy, no end of round; returns the sum of the rounds' last winners."""

def score_tallies(
    players: int,
    sides: Sequence[int],
    star_a_mode: int,
    elements: Sequence[Sequence[int]],
    faceup_cards: Sequence[int],
    facedown_cards: Sequence[int],
    good_weather: Sequence[int],
) -> tuple[list[list[int]], int, int]:
    """(per-seat breakdown rows, winners mask, outright seat or -1)."""

VALUE_FEATURES: tuple[str, ...]
"""The learned value's features of a seat at a round boundary (csrc/value.pxi)."""

def boundary_features(state: CoreState) -> list[list[float]]:
    """The value features of every seat from the state's tallies."""

def boundary_features_many(states: Iterable[CoreState]) -> list[list[list[float]]]:
    """boundary_features of each state, one set of the value's tables kept across them as
    a search worker keeps it (the same numbers as each alone)."""

def boundary_value(
    state: CoreState, weights: Sequence[Sequence[float]], points_weights: Sequence[Sequence[float]]
) -> tuple[list[float], list[float]]:
    """(chance of winning, expected final points) of every seat by the learned value."""

@disjoint_base
class WorldSampler:
    """Draws determinized worlds for one observer; ValueError when no world fits."""

    def __init__(
        self,
        view: CoreState,
        observer: int,
        hidden_counts: Sequence[Sequence[int]],
        voids: Sequence[Sequence[int]],
        unseen: int,
        played_by: Sequence[int],
        sky_from: int,
    ) -> None: ...
    @property
    def worlds(self) -> float:
        """Number of card placements consistent with the observation."""
    @property
    def slots(self) -> list[tuple[int, int, int, int, int]]:
        """(kind, seat, group, size, allowed colour mask) per slot."""
    def world_of(self, truth: CoreState) -> CoreState:
        """The world of this observation whose hidden cards lie where truth has them."""
    def sample(self, n: int, seed: int) -> list[CoreState]:
        """n worlds as CoreStates, from a stream seeded by seed."""
    def draw_many(self, n: int, seed: int) -> int:
        """Draw n worlds in C and discard them (for benchmarks); returns a checksum."""

@disjoint_base
class SearchEngine:
    """The read-only part of one search, shared by its workers."""

    @property
    def root_kind(self) -> int:
        """0: allocation, 1: weather bet, 2: card play."""
    @property
    def n_candidates(self) -> int: ...
    def __init__(
        self,
        sampler: WorldSampler,
        root_seat: int,
        *,
        algorithm: int,
        utility: int,
        rules_playout: int,
        exploration: float,
        margin_weight: float,
        margin_scale: float,
        points_scale: float,
        widening_base: float,
        widening_coef: float,
        widening_alpha: float,
        halving_min_worlds: int,
        pimc_candidates: int,
        epsilon: float,
        weather_threshold: float,
        weather_blue: float,
        weather_power: float,
        candy_value: float,
        star_three_value: float,
        potential_decay: float,
        void_bonus: float,
    ) -> None: ...
    def candidate(self, i: int) -> tuple[int, ...] | bool | int:
        """Root candidate i (prior order): a pile tuple, a boolean or a card index."""
    @property
    def candidates(self) -> list[tuple[int, ...] | bool | int]:
        """Every root candidate in prior order."""
    def set_randomness(self, randomness: list[float]) -> None:
        """Model each seat as a uniformly random player with this chance (0 for the searcher)."""
    def set_exact(self, exactness: list[float], epsilon: float) -> None:
        """Model each seat as playing exactly by the rules with this chance (after set_randomness)."""
    def set_value(
        self, weights: Sequence[Sequence[float]], points_weights: Sequence[Sequence[float]], horizon: int
    ) -> None:
        """Stop playouts at a round's end once at most horizon rounds remain; read the learned value."""
    def set_round_record(
        self, played_from: Sequence[Sequence[int]], voids: Sequence[Sequence[int]], plays: Sequence[tuple[int, int]]
    ) -> None:
        """This round's public card play (per-pile cards played, voids, (seat, card) in order)."""
    def set_worlds(self, worlds: Sequence[CoreState]) -> None:
        """Search these worlds of this position instead of sampled ones (a diagnostic)."""
    def set_mixture_condition(self) -> None:
        """After the round's first card, the pool's splits by each seat's split mixture given the play."""
    def mixture_condition(self, world: CoreState, seat: int, seed: int) -> tuple[CoreState, float]:
        """world with seat's split redrawn by the mixture given the play, and the hand's weight (for tests)."""
    def build_pool(self, pool: int, seed: int, reuse: int = 1) -> bool:
        """Draw the pool of inferred worlds, each deal of hands serving reuse of them; whether it is on."""
    @property
    def pool_size(self) -> int:
        """Worlds in the pool the search draws from (0: it samples each world)."""
    def set_order(self, order: list[int]) -> None:
        """Put the allocation candidates in this order (a permutation of their indices)."""
    def modelled_world(self, world: CoreState, seed: int) -> CoreState:
        """world as the search plays it (the others' unseen splits by the rules, if modelled)."""
    def modelled_allocations(self, state: CoreState, seat: int, seed: int, n: int, tables: bool) -> list[tuple[int, ...]]:
        """n of seat's modelled splits from one stream; tables: the mixture's tables made once (for tests)."""
    def playout_trace(self, world: CoreState, seed: int) -> tuple[CoreState, list[_TraceEvent]]:
        """(final state, events) of one playout from a copy of world, for tests."""

@disjoint_base
class SearchWorker:
    """One thread's search: its own random stream, node pool and root statistics."""

    def __new__(cls, engine: SearchEngine, seed: int, capacity: int, max_bytes: int = 0) -> Self: ...
    def run(self, iterations: int, seconds: float) -> int:
        """Search without the GIL; returns the iterations done in this call (0 if a stop
        was requested before it began)."""
    def request_stop(self) -> None:
        """Make a run on another thread stop after its current iteration, and any later
        run return at once."""
    @property
    def stop_requested(self) -> bool: ...
    @property
    def max_bytes(self) -> int:
        """The ceiling on the node pool and child table in bytes (0: none)."""
    @property
    def pool_bytes(self) -> int:
        """Bytes the node pool and child table take now."""
    @property
    def iterations(self) -> int: ...
    @property
    def worlds(self) -> int: ...
    @property
    def nodes(self) -> int: ...
    def check_tree(self) -> int:
        """Check every node's children's indices; the children seen (for tests)."""
    @property
    def cpu_s(self) -> float:
        """CPU time this worker's thread has spent searching."""
    @property
    def failed(self) -> bool:
        """True when the node pool could not grow (out of memory, or at max_bytes or the
        largest pool) and the run stopped early."""
    def root_stats(self) -> dict[int, tuple[int, float, float, float, float]]:
        """{candidate: (visits, sum utility, sum squares, sum win share, sum points)}."""

def heuristic_move(
    view: CoreState,
    seat: int,
    seed: int,
    *,
    epsilon: float,
    weather_threshold: float,
    weather_blue: float,
    weather_power: float,
    candy_value: float,
    star_three_value: float,
    potential_decay: float,
) -> _HeuristicMove:
    """The playout rules' move for seat: ("allocate", piles), ("weather", bool) or ("play", card)."""

def rng_calibrate(n_calls: int, seed: int) -> int:
    """Draw n_calls raw 64-bit numbers in C; returns their xor."""

def random_deal_allocate(state: CoreState, seed: int) -> int:
    """Deal the round with random piles, leaving state at the weather bet; returns an error code."""

def bench_playouts(engine: SearchEngine, world: CoreState, n: int, seed: int) -> float:
    """Seconds for n playouts from copies of world with engine's policy."""

def exp_block(values: Sequence[float]) -> list[float]:
    """exp of each value through the core's block exp (libm's numbers)."""

def exp_lanes_in_use() -> bool:
    """Whether the block exp runs on vector lanes here."""

def exp_lanes_built() -> bool:
    """Whether this build has the block exp's vector lanes (AVX2 and FMA)."""
