"""Calibration of the search's win estimate: what the root's mean win share means.

The search's mean win share at a move is not the chance of winning after it: the others
are modelled, not known, and a deeper tree lets their modelled choices grow sharper than
real players', so the raw estimate drifts with the budget (docs/tuning.md). A map fitted
on finished games (benchmarks/fit_calibration.py) turns it into a chance that means what it
says: per player count, a logistic in the raw estimate's log-odds, the budget and whether
another round follows the one being decided,

    logit(p) = a + b * logit(raw) + c * log(iterations / 10,000) + (d + e * logit(raw)) * later
               + f * star_b,
    later = 1 before the game's last round, 0 in it, star_b = 1 where the stars score on
    side B (a third star wins the game outright), 0 on side A,

the raw estimate clipped to [RAW_FLOOR, 1 - RAW_FLOOR] first. The stage terms are there
because the rounds after the tree are played out by the playout rules, the searcher's own
seat included, which play them worse than the search will: before the last round the raw
estimate undervalues the rest of the game, in the last round the tree covers all of it
(docs/tuning.md). The star term is there because at small tables the search misjudges side
B's outright win by the third star: over games drawn from all 32 scorings, the map without
it read 5.7 points higher on star side B than on side A at 2 players (4.3 at 3 players,
within 1 at 4 and 5), where no other kind's side moved it as much (docs/benchmarks.md,
twenty-seventh session). A raw estimate of exactly 0 or 1 (every sampled world lost, or won: a
forced result) stays as it is. The map is monotone in the raw estimate in every round
(b > 0 and b + e > 0), so it never changes which move looks best.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from csl_ai.rules import player_spec

RAW_FLOOR: Final = 0.005
"""Raw estimates are clipped to [RAW_FLOOR, 1 - RAW_FLOOR] before the log-odds."""
REFERENCE_ITERATIONS: Final = 10_000


class CalibrationError(ValueError):
    """A calibration map with the wrong shape or values."""


def logit(p: float) -> float:
    p = min(max(p, RAW_FLOOR), 1.0 - RAW_FLOOR)
    return math.log(p / (1.0 - p))


def sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@dataclass(frozen=True)
class WinCalibration:
    """Per player count 2..5: (a, b, c, d, e, f) of the map in the module docstring (a row
    of five, as maps before the star term were written, reads with f = 0)."""

    coefficients: tuple[tuple[float, float, float, float, float, float], ...]

    def __post_init__(self) -> None:
        rows = self.coefficients
        if (
            not isinstance(rows, (tuple, list))
            or len(rows) != 4
            or any(not isinstance(r, (tuple, list)) or len(r) not in (5, 6) for r in rows)
            or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for r in rows
                for v in r
            )
            or any(r[1] <= 0 or r[1] + r[4] <= 0 for r in rows)
        ):
            raise CalibrationError(
                "a win calibration needs 4 rows (2..5 players) of 6 finite numbers (a, b, c, d, e, f;"
                " or 5, f = 0) with b > 0 and b + e > 0"
            )
        object.__setattr__(
            self, "coefficients", tuple(tuple(float(v) for v in (*r, 0.0)[:6]) for r in rows)
        )

    def chance(self, raw: float, players: int, iterations: int, round_index: int, star_b: bool = False) -> float:
        """The calibrated chance of winning for a raw mean win share found with
        `iterations` iterations in round `round_index` (0-based) of a game of `players`,
        the stars scoring on side B or not."""
        return self.chance_map(players, iterations, round_index, star_b)(raw)

    def chance_map(
        self, players: int, iterations: int, round_index: int, star_b: bool = False
    ) -> Callable[[float], float]:
        """`chance` with everything but the raw estimate fixed: the terms that do not read
        it are multiplied out once, so a search's hundreds of allocation candidates cost a
        logit and a sigmoid each (the same operations in the same order: the same numbers)."""
        a, b, c, d, e, f = self.coefficients[players - 2]
        later = rounds_follow(players, round_index)
        budget_term = c * math.log(max(iterations, 1) / REFERENCE_ITERATIONS)
        later_term = d * later
        star_term = f * (1.0 if star_b else 0.0)

        def chance(raw: float) -> float:
            if raw <= 0.0 or raw >= 1.0:
                return min(max(raw, 0.0), 1.0)
            log_odds = logit(raw)
            return sigmoid(0 + a * 1.0 + b * log_odds + budget_term + later_term + e * (later * log_odds) + star_term)

        return chance

    @classmethod
    def identity(cls) -> WinCalibration:
        return cls(((0.0, 1.0, 0.0, 0.0, 0.0, 0.0),) * 4)


def rounds_follow(players: int, round_index: int) -> float:
    """1.0 if another round follows round `round_index` (0-based) of the game, else 0.0."""
    return 1.0 if round_index < player_spec(players).rounds - 1 else 0.0


def calibration_features(
    raw: float, iterations: int, later: float, star_b: bool = False
) -> tuple[float, float, float, float, float, float]:
    """The map's terms: 1, logit(raw), log(iterations / 10,000), later, later * logit(raw),
    star_b."""
    log_odds = logit(raw)
    return (1.0, log_odds, math.log(max(iterations, 1) / REFERENCE_ITERATIONS), later, later * log_odds,
            1.0 if star_b else 0.0)


def fit_calibration(
    raw: Sequence[float],
    iterations: Sequence[int],
    later: Sequence[float],
    outcome: Sequence[float],
    ridge: float = 1e-3,
    star_b: Sequence[bool] | None = None,
) -> tuple[float, float, float, float, float, float]:
    """(a, b, c, d, e, f) maximising the log-likelihood of the realised win shares (a shared
    win is a fraction) under the map, by Newton's method with a small ridge toward identity
    (without star_b, or with no game on star side B, f stays 0)."""
    stars = star_b if star_b is not None else [False] * len(raw)
    x = np.array([
        calibration_features(p, n, t, b) for p, n, t, b in zip(raw, iterations, later, stars, strict=True)
    ])
    y = np.asarray(outcome, dtype=float)
    prior = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    w = prior.copy()
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (y - p) - ridge * (w - prior)
        hess = x.T @ (x * (p * (1 - p))[:, None]) + ridge * np.eye(len(prior))
        step = np.linalg.solve(hess, grad)
        w += step
        if np.abs(step).max() < 1e-10:
            break
    a, b, c, d, e, f = (float(v) for v in w)
    return a, b, c, d, e, f
