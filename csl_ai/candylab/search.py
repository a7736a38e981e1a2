"""Candy Lab's determinized information-set MCTS: limits, settings, results, and `search`.

The search itself runs in the compiled core (``csl_ai.candylab._core``, csrc/cl_search.pxi);
this module is its Python face. One iteration (single-observer ISMCTS, Cowling, Powley
and Whitehouse 2012):

1. **Determinize**: deal a world consistent with the deciding seat's observation (the
   hidden cards at random into the hidden places, their sizes kept;
   ``csl_ai.candylab.worlds``) and reseed its chance generator, so that random discards
   and swaps are drawn afresh;
2. **Select**: from the root, while every move legal in this world has a child, take
   the child maximising ``mean + c * sqrt(ln(availability) / visits)``, where a child's
   availability counts the visits of its parent in which it was legal (the moves of one
   node differ from world to world); the mean is the return of the seat that moved; the
   heuristic's move gets a progressive bias ``prior_weight / (visits + 1)``;
3. **Expand**: add one child for a move legal here that has none (the heuristic's move
   first, else one at random);
4. **Play out** to the end by the heuristic with ``playout_epsilon`` of random moves (or
   uniformly random moves);
5. **Back up** each seat's return (its share of the win) along the path: each node
   adds the return of the seat that made its move.

Tree children are keyed by ``worlds.move_key``: the move as every seat sees it, so that
the same public action (an order card of a given combination, say, whose id in a hidden
hand differs between worlds) shares one node.

With a seed and an iteration limit (no time limit) the search is deterministic.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from csl_ai.errors import CslError
from csl_ai.candylab import _core
from csl_ai.limits import SearchLimit, SearchSettingsError
from csl_ai.seeds import fresh_seed, thread_seed
from csl_ai.threads import run_workers, split_budget

MAX_ITERATIONS: Final = 10**9
"""Most iterations one Candy Lab search takes (its node counters are 32-bit)."""
MAX_TREE_BYTES: Final = 4 << 30
"""Ceiling on the memory of one search's trees, all threads together: a search that
reaches it stops early with what it has."""
NODE_BYTES: Final = 40
"""Bytes of one tree node in the compiled core (``ClNode``)."""


class CandyLabSearchError(CslError):
    """A search asked of a seat with no decision, or a budget past the search's reach."""


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
            raise SearchSettingsError(f"exploration: must be >= 0, got {self.exploration!r}")
        if self.playout not in ("heuristic", "random"):
            raise SearchSettingsError(
                f"playout: must be 'heuristic' or 'random', got {self.playout!r}"
            )
        if not 0 <= self.prior_weight < math.inf:
            raise SearchSettingsError(f"prior_weight: must be >= 0, got {self.prior_weight!r}")
        if not 0 <= self.playout_epsilon <= 1:
            raise SearchSettingsError(
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
    if limit.iterations is not None and limit.iterations > MAX_ITERATIONS:
        raise CandyLabSearchError(f"iterations: at most {MAX_ITERATIONS:,} a search")
    template = worlds.world_template(obs)
    seed = limit.seed if limit.seed is not None else fresh_seed()
    threads = limit.threads
    budgets = (
        split_budget(limit.iterations, threads)
        if limit.iterations is not None
        else [MAX_ITERATIONS] * threads
    )
    seconds = limit.time_ms / 1000.0 if limit.time_ms is not None else 0.0
    max_nodes = max(2, min(1 << 30, MAX_TREE_BYTES // NODE_BYTES // threads))
    workers = [
        _core.SearchWorker(
            template.base,
            template.pool,
            template.places,
            template.needs,
            template.pile_size,
            seed=thread_seed(seed, i),
            exploration=config.exploration,
            prior_weight=config.prior_weight,
            epsilon=config.playout_epsilon,
            random_playout=config.playout == "random",
            max_nodes=max_nodes,
        )
        for i in range(threads)
    ]
    start = time.perf_counter()
    settled = limit.stop_when_settled and limit.iterations is not None
    if threads == 1:
        workers[0].run(budgets[0], seconds, settled)
    else:
        run_workers([(w, b) for w, b in zip(workers, budgets) if b > 0], seconds, None, settled)
    elapsed = time.perf_counter() - start
    merged: dict[int, list[Any]] = {}
    for w in workers:
        for key, move, visits, reward, wins in w.root():
            row = merged.setdefault(key, [move, 0, 0.0, 0])
            row[1] += visits
            row[2] += reward
            row[3] += wins
    stats = sorted(
        (
            MoveStats(
                move=move,
                visits=visits,
                mean_return=reward / visits if visits else 0.0,
                win_chance=wins / visits if visits else 0.0,
            )
            for move, visits, reward, wins in merged.values()
        ),
        key=lambda m: (-m.visits, -m.mean_return),
    )
    return SearchResult(
        seat=obs.seat,
        best_move=stats[0].move,
        moves=tuple(stats),
        iterations=sum(w.iterations for w in workers),
        nodes=sum(w.nodes for w in workers),
        elapsed_s=elapsed,
    )


__all__ = [
    "CandyLabSearchError",
    "MoveStats",
    "SearchConfig",
    "SearchLimit",
    "SearchResult",
    "search",
]
