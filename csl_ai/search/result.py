"""What a search answers: the move and the statistics behind it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from csl_ai.beliefs import SeatBelief
from csl_ai.moves import Move, move_to_json


@dataclass(frozen=True)
class MoveStats:
    """What the search learnt about one root candidate (from the searching seat's view)."""

    move: Move
    visits: int
    """Iterations (ISMCTS) or playouts (PIMC) that tried this move."""
    mean_utility: float
    """Mean utility: win share plus margin term, or points when utility="points"."""
    ci95: tuple[float, float]
    """Normal 95% interval of mean_utility (infinite with fewer than 2 visits)."""
    win_probability: float
    """The chance of winning after this move: the mean win share (a k-way shared win counts
    1/k) through the config's win calibration where one applies (csl_ai.calibration)."""
    expected_points: float
    """Mean final points of the searching seat."""
    worlds: int
    """Distinct sampled worlds behind these numbers (one per visit)."""
    raw_win_probability: float | None = None
    """The search's own mean win share, before calibration; None where none was applied."""
    win_ci95: tuple[float, float] = (0.0, 1.0)
    """95% interval of win_probability, on its scale: the mean win share's normal interval
    (clipped to [0, 1]) through the same calibration, so it holds win_probability (the
    whole [0, 1] with fewer than 2 visits)."""
    seat_win_probabilities: tuple[float, ...] = ()
    """Every seat's chance of winning after this move, by seat, summing to 1: the searching
    seat's is win_probability, the others share the rest as their mean win shares do."""
    same_as: tuple[Move, ...] = ()
    """Other legal moves that play exactly as this one (cards of one colour with no card
    still to come between them): searched as one, the lowest card standing for them."""

    def covers(self, move: Move) -> bool:
        """Whether these statistics are move's: it is this move or plays as it does."""
        return move == self.move or move in self.same_as


@dataclass(frozen=True)
class SearchResult:
    """The answer of one search: the move and the evidence for it."""

    seat: int
    best_move: Move
    moves: tuple[MoveStats, ...]
    """Every candidate that was tried, best first (ISMCTS: most visits; PIMC: best mean).
    Allocations never opened by progressive widening are left out."""
    iterations: int
    worlds_sampled: int
    elapsed_s: float
    algorithm: str = "ismcts"
    utility: str = "win"
    threads: int = 1
    nodes: int = 0
    """Tree nodes created over all threads."""
    cpu_s: float = 0.0
    """CPU time of the search threads, summed, and of drawing the pool of worlds (excludes
    the rest of the Python set-up)."""
    beliefs: tuple[SeatBelief, ...] = ()
    """What the search believed about each other seat (empty when it models none)."""
    budget: int | None = None
    """The iteration limit searched under (None: a time limit alone)."""
    settled: bool = False
    """The search stopped before its budget because its answer was settled
    (`SearchLimit.stop_when_settled`)."""

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict: seat, best_move (move JSON), iterations, budget, settled, worlds_sampled,
        elapsed_s, cpu_s, algorithm, utility, threads, nodes, beliefs (per other seat: seat,
        models {random, rules: posterior probability}, decisions), and moves: a list of {move, visits,
        mean_utility, ci95: [lo, hi] (null when unbounded), win_probability (calibrated),
        raw_win_probability (the search's mean win share; null when not calibrated),
        win_ci95: [lo, hi] (the interval of win_probability, on its scale),
        seat_win_probabilities (by seat, summing to 1), expected_points, worlds, same_as (the
        moves that play exactly as it, searched as one)}."""
        return {
            "seat": self.seat,
            "best_move": move_to_json(self.best_move),
            "iterations": self.iterations,
            "budget": self.budget,
            "settled": self.settled,
            "worlds_sampled": self.worlds_sampled,
            "elapsed_s": self.elapsed_s,
            "cpu_s": self.cpu_s,
            "algorithm": self.algorithm,
            "utility": self.utility,
            "threads": self.threads,
            "nodes": self.nodes,
            "beliefs": [b.to_json() for b in self.beliefs],
            "moves": [
                {
                    "move": move_to_json(m.move),
                    "visits": m.visits,
                    "mean_utility": m.mean_utility,
                    "ci95": [_finite_or_none(m.ci95[0]), _finite_or_none(m.ci95[1])],
                    "win_probability": m.win_probability,
                    "raw_win_probability": m.raw_win_probability,
                    "win_ci95": list(m.win_ci95),
                    "seat_win_probabilities": list(m.seat_win_probabilities),
                    "same_as": [move_to_json(x) for x in m.same_as],
                    "expected_points": m.expected_points,
                    "worlds": m.worlds,
                }
                for m in self.moves
            ],
        }


Z95 = 1.959963984540054
"""The two-sided 95% quantile of the normal distribution."""


def wilson_interval(share: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion `share` over n trials ((0, 1) for none):
    unlike the normal interval it does not shrink to a point when every trial went one way."""
    if n == 0:
        return (0.0, 1.0)
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None

