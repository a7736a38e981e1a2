"""Calibration of the search's win estimate: what the root's mean win share means.

The search's mean win share at a move is not the chance of winning after it: the others
are modelled, not known, and a deeper tree lets their modelled choices grow sharper than
real players', so the raw estimate drifts with the budget (docs/tuning.md). A map fitted
on finished games (benchmarks/fit_calibration.py) turns it into a chance that means what it
says: per player count, a logistic in the raw estimate's log-odds and the budget,

    logit(p) = a + b * logit(raw) + c * log(iterations / 10,000),

the raw estimate clipped to [RAW_FLOOR, 1 - RAW_FLOOR] first. A raw estimate of exactly 0
or 1 (every sampled world lost, or won: a forced result) stays as it is. The map is
monotone in the raw estimate (b > 0), so it never changes which move looks best.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

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
    """Per player count 2..5: (a, b, c) of the map in the module docstring."""

    coefficients: tuple[tuple[float, float, float], ...]

    def __post_init__(self) -> None:
        rows = self.coefficients
        if (
            not isinstance(rows, (tuple, list))
            or len(rows) != 4
            or any(not isinstance(r, (tuple, list)) or len(r) != 3 for r in rows)
            or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for r in rows
                for v in r
            )
            or any(r[1] <= 0 for r in rows)
        ):
            raise CalibrationError(
                "a win calibration needs 4 rows (2..5 players) of 3 finite numbers (a, b, c), b > 0"
            )
        object.__setattr__(self, "coefficients", tuple(tuple(float(v) for v in r) for r in rows))

    def chance(self, raw: float, players: int, iterations: int) -> float:
        """The calibrated chance of winning for a raw mean win share found with
        `iterations` iterations in a game of `players`."""
        if raw <= 0.0 or raw >= 1.0:
            return min(max(raw, 0.0), 1.0)
        a, b, c = self.coefficients[players - 2]
        budget = math.log(max(iterations, 1) / REFERENCE_ITERATIONS)
        return sigmoid(a + b * logit(raw) + c * budget)

    @classmethod
    def identity(cls) -> WinCalibration:
        return cls(((0.0, 1.0, 0.0),) * 4)


def fit_calibration(
    raw: Sequence[float], iterations: Sequence[int], outcome: Sequence[float], ridge: float = 1e-3
) -> tuple[float, float, float]:
    """(a, b, c) maximising the log-likelihood of the realised win shares (a shared win is
    a fraction) under the map, by Newton's method with a small ridge toward identity."""
    x = np.array(
        [[1.0, logit(p), math.log(max(n, 1) / REFERENCE_ITERATIONS)] for p, n in zip(raw, iterations, strict=True)]
    )
    y = np.asarray(outcome, dtype=float)
    prior = np.array([0.0, 1.0, 0.0])
    w = prior.copy()
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        grad = x.T @ (y - p) - ridge * (w - prior)
        hess = x.T @ (x * (p * (1 - p))[:, None]) + ridge * np.eye(3)
        step = np.linalg.solve(hess, grad)
        w += step
        if np.abs(step).max() < 1e-10:
            break
    return float(w[0]), float(w[1]), float(w[2])
