"""Determinized information-set MCTS over a small game interface, and Candy Lab's search.

The engine (`ismcts`) knows nothing of Candy Lab: it reads a game only through a
`GameInterface` (the names of ``csl_ai.candylab.core``: ``current_player``,
``legal_moves``, ``apply``, ``is_over``, ``returns``, plus ``move_key`` and ``reseed``),
a world sampler and a playout policy. It is the search a compiled core will host for
every game of the family; `search` wires it to Candy Lab
(``csl_ai.candylab.worlds``).

One iteration (single-observer ISMCTS, Cowling, Powley and Whitehouse 2012):

1. **Determinize**: sample a world consistent with the deciding seat's observation (the
   hidden cards dealt at random into the hidden places, their sizes kept) and reseed its
   chance generator, so that random discards and swaps are drawn afresh;
2. **Select**: from the root, while every move legal in this world has a child, take
   the child maximising ``mean + c * sqrt(ln(availability) / visits)``, where a child's
   availability counts the visits of its parent in which it was legal (the moves of one
   node differ from world to world); the mean is the return of the seat that moved;
3. **Expand**: add one child for a move legal here that has none (chosen at random);
4. **Play out** to the end by the playout policy;
5. **Back up** each seat's return (its share of the win) along the path: each node
   adds the return of the seat that made its move.

Tree children are keyed by ``move_key(state, move)``: the move as every seat sees it, so
that the same public action (an order card of a given combination, say, whose id in a
hidden hand differs between worlds) shares one node.

With a seed and an iteration limit (no time limit) the search is deterministic.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Protocol, TypeVar

from csl_ai.errors import CslError
from csl_ai.seeds import MASK64, fresh_seed

S = TypeVar("S")

MAX_ITERATIONS: Final = 10**9


class CandyLabSearchError(CslError):
    """A search limit or setting out of range."""


class GameInterface(Protocol[S]):
    """What the search needs of a game (a C port keeps these names and meanings)."""

    def current_player(self, state: S) -> int:
        """The seat to decide, -1 once the game is over."""
        ...

    def legal_moves(self, state: S) -> list[int]:
        """The current seat's moves."""
        ...

    def apply(self, state: S, move: int) -> object:
        """Play a legal move in place (chance drawn from the state's generator)."""
        ...

    def is_over(self, state: S) -> bool: ...

    def returns(self, state: S) -> Sequence[float]:
        """Each seat's return at the end (its share of the win)."""
        ...

    def move_key(self, state: S, move: int) -> Hashable:
        """The move as every seat sees it: equal keys for the same public action."""
        ...

    def reseed(self, state: S, seed: int) -> None:
        """Give the state's chance generator a new 64-bit seed."""
        ...


Policy = Callable[[S, list[int], random.Random], int]
"""A playout policy: a move among the legal ones of the state's current seat."""
Prior = Callable[[S, list[int]], int]
"""The move a fast policy prefers among the legal ones (expanded first, and favoured by
the progressive bias while its node has few visits)."""


@dataclass(frozen=True)
class SearchLimit:
    """When to stop, and from which seed. With both limits the search stops at whichever
    comes first; with a seed and iterations only, the result repeats exactly."""

    iterations: int | None = None
    time_ms: float | None = None
    seed: int | None = None
    """None draws one from the operating system (not reproducible)."""

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_ms is None:
            raise CandyLabSearchError("a search limit needs iterations or time_ms")
        it = self.iterations
        if it is not None and (
            isinstance(it, bool) or not isinstance(it, int) or not 1 <= it <= MAX_ITERATIONS
        ):
            raise CandyLabSearchError(
                f"iterations: must be an integer 1..{MAX_ITERATIONS}, got {it!r}"
            )
        ms = self.time_ms
        if ms is not None and (
            isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 < ms < math.inf
        ):
            raise CandyLabSearchError(f"time_ms: must be a positive number, got {ms!r}")
        sd = self.seed
        if sd is not None and (
            isinstance(sd, bool) or not isinstance(sd, int) or not 0 <= sd <= MASK64
        ):
            raise CandyLabSearchError(f"seed: must be an integer 0..2**64-1, got {sd!r}")


@dataclass(frozen=True)
class SearchConfig:
    """How to search."""

    exploration: float = 0.7
    """UCB constant, in return units (a win is 1)."""
    playout: str = "heuristic"
    """"heuristic": the game's heuristic policy with playout_epsilon of random moves;
    "random": uniformly random moves."""
    playout_epsilon: float = 0.2
    """The heuristic playout's chance of a uniformly random legal move instead."""
    prior_weight: float = 1.0
    """Progressive bias: the move the heuristic prefers (in this world, for the seat to
    move) gets ``prior_weight / (visits + 1)`` added to its UCB value, and is expanded
    first; 0 turns the prior off (moves are then expanded in random order)."""

    def __post_init__(self) -> None:
        if not 0 <= self.exploration < math.inf:
            raise CandyLabSearchError(f"exploration: must be >= 0, got {self.exploration!r}")
        if self.playout not in ("heuristic", "random"):
            raise CandyLabSearchError(
                f"playout: must be 'heuristic' or 'random', got {self.playout!r}"
            )
        if not 0 <= self.prior_weight < math.inf:
            raise CandyLabSearchError(f"prior_weight: must be >= 0, got {self.prior_weight!r}")
        if not 0 <= self.playout_epsilon <= 1:
            raise CandyLabSearchError(
                f"playout_epsilon: must be in [0, 1], got {self.playout_epsilon!r}"
            )


@dataclass(frozen=True)
class MoveStats:
    """What the search learnt of one root move, from the deciding seat's view."""

    move: int
    visits: int
    mean_return: float
    """Mean share of the win after this move (a k-way shared win counts 1/k)."""
    win_chance: float
    """Share of the playouts through this move that the seat won or shared."""

    @property
    def ci95(self) -> tuple[float, float]:
        """Normal 95% interval of mean_return (unbounded with fewer than 2 visits)."""
        if self.visits < 2:
            return (-math.inf, math.inf)
        p = min(max(self.mean_return, 0.0), 1.0)
        half = 1.96 * math.sqrt(max(p * (1 - p), 1e-12) / self.visits)
        return (self.mean_return - half, self.mean_return + half)


@dataclass(frozen=True)
class SearchResult:
    """A search's answer: the move (most visits) and every root move's statistics."""

    seat: int
    best_move: int
    moves: tuple[MoveStats, ...]
    """Best first: most visits, then best mean return."""
    iterations: int
    nodes: int
    elapsed_s: float

    def to_json(self, move_text: Callable[[int], str] | None = None) -> dict[str, Any]:
        """JSON-ready: seat, best_move, iterations, nodes, elapsed_s, moves (move,
        text when move_text is given, visits, mean_return, win_chance)."""

        def move_json(m: int) -> dict[str, Any]:
            out: dict[str, Any] = {"move": m}
            if move_text is not None:
                out["text"] = move_text(m)
            return out

        return {
            "seat": self.seat,
            "best_move": move_json(self.best_move),
            "iterations": self.iterations,
            "nodes": self.nodes,
            "elapsed_s": self.elapsed_s,
            "moves": [
                {
                    **move_json(m.move),
                    "visits": m.visits,
                    "mean_return": m.mean_return,
                    "win_chance": m.win_chance,
                }
                for m in self.moves
            ],
        }


class _Node:
    """A tree node: the move that led here, the seat that made it, its statistics."""

    __slots__ = ("move", "player", "visits", "avail", "reward", "wins", "children")

    def __init__(self, move: int, player: int) -> None:
        self.move = move
        """The move in the world that created the node (the root's own moves are the
        same in every world)."""
        self.player = player
        self.visits = 0
        self.avail = 0
        self.reward = 0.0
        self.wins = 0
        self.children: dict[Hashable, _Node] = {}


@dataclass
class ISMCTS(Generic[S]):
    """The engine over one game interface: sample_world draws a full state from the
    deciding seat's view (its argument: the search's random generator)."""

    game: GameInterface[S]
    sample_world: Callable[[random.Random], S]
    policy: Policy[S]
    config: SearchConfig = field(default_factory=SearchConfig)
    prior: Prior[S] | None = None

    def run(self, seat: int, limit: SearchLimit) -> SearchResult:
        game = self.game
        c = self.config.exploration
        seed = limit.seed if limit.seed is not None else fresh_seed()
        rng = random.Random(seed)
        root = _Node(-1, -1)
        nodes = 0
        start = time.perf_counter()
        deadline = start + limit.time_ms / 1000.0 if limit.time_ms is not None else math.inf
        cap = limit.iterations if limit.iterations is not None else MAX_ITERATIONS
        iterations = 0
        key = game.move_key
        legal = game.legal_moves
        apply = game.apply
        is_over = game.is_over
        current = game.current_player
        policy = self.policy
        prior = self.prior if self.config.prior_weight > 0 else None
        bias = self.config.prior_weight
        log = math.log
        sqrt = math.sqrt
        while iterations < cap and (iterations == 0 or time.perf_counter() < deadline):
            state = self.sample_world(rng)
            game.reseed(state, rng.getrandbits(64))
            node = root
            path: list[_Node] = []
            while not is_over(state):
                moves = legal(state)
                player = current(state)
                preferred = prior(state, moves) if prior is not None and len(moves) > 1 else -1
                untried: list[tuple[Hashable, int]] = []
                best: _Node | None = None
                best_move = -1
                best_value = -math.inf
                children = node.children
                for m in moves:
                    k = key(state, m)
                    child = children.get(k)
                    if child is None:
                        untried.append((k, m))
                        continue
                    child.avail += 1
                    if not untried:
                        value = child.reward / child.visits + c * sqrt(
                            log(child.avail) / child.visits
                        )
                        if m == preferred:
                            value += bias / (child.visits + 1)
                        if value > best_value:
                            best, best_move, best_value = child, m, value
                if untried:
                    if len(untried) == 1:
                        k, m = untried[0]
                    else:
                        first = [u for u in untried if u[1] == preferred]
                        k, m = first[0] if first else untried[rng.randrange(len(untried))]
                    child = _Node(m, player)
                    child.avail = 1
                    children[k] = child
                    nodes += 1
                    apply(state, m)
                    path.append(child)
                    break
                assert best is not None
                apply(state, best_move)
                path.append(best)
                node = best
            while not is_over(state):
                apply(state, policy(state, legal(state), rng))
            ret = game.returns(state)
            for n in path:
                r = ret[n.player]
                n.visits += 1
                n.reward += r
                if r > 0:
                    n.wins += 1
            iterations += 1
        elapsed = time.perf_counter() - start
        stats = sorted(
            (
                MoveStats(
                    move=ch.move,
                    visits=ch.visits,
                    mean_return=ch.reward / ch.visits if ch.visits else 0.0,
                    win_chance=ch.wins / ch.visits if ch.visits else 0.0,
                )
                for ch in root.children.values()
            ),
            key=lambda m: (-m.visits, -m.mean_return),
        )
        return SearchResult(
            seat=seat,
            best_move=stats[0].move,
            moves=tuple(stats),
            iterations=iterations,
            nodes=nodes,
            elapsed_s=elapsed,
        )


# --- Candy Lab ------------------------------------------------------------------------
def search(
    obs: Any,
    limit: SearchLimit,
    config: SearchConfig | None = None,
) -> SearchResult:
    """Search the decision of ``obs.seat`` (a Candy Lab ``Observation`` where that seat is
    to move) from what it may know only. A decision with one legal move is answered
    without searching (0 iterations)."""
    from csl_ai.candylab import worlds

    config = config if config is not None else SearchConfig()
    if obs.current != obs.seat or not obs.legal_moves:
        raise CandyLabSearchError(
            f"seat {obs.seat} has no decision to make (seat {obs.current} is to move)"
        )
    if len(obs.legal_moves) == 1:
        only = obs.legal_moves[0]
        return SearchResult(obs.seat, only, (MoveStats(only, 0, 0.0, 0.0),), 0, 0, 0.0)
    engine: ISMCTS[Any] = ISMCTS(
        game=worlds.CANDY_LAB,
        sample_world=worlds.world_sampler(obs),
        policy=worlds.playout_policy(config.playout, config.playout_epsilon),
        config=config,
        prior=worlds.heuristic_prior(),
    )
    return engine.run(obs.seat, limit)


__all__ = [
    "CandyLabSearchError",
    "GameInterface",
    "ISMCTS",
    "MoveStats",
    "SearchConfig",
    "SearchLimit",
    "SearchResult",
    "search",
]
