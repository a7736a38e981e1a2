"""The learned value of a round boundary: each seat's chance of winning from the tallies.

After a finished round, with more rounds to come, each seat gets a score, the dot product
of per-rounds-left weights with a few features of its tallies and of the sky cards still
to come (`VALUE_FEATURES`, computed in C: csrc/value.pxi), and the value gives seat s the
chance softmax(score)_s of winning. The
weights minimise the cross-entropy of that softmax to the realised win shares of finished
games (a convex problem, solved by Newton's method with a small L2 penalty), and a line
from the same features to the final points gives the expected points, one fit per
player count and rounds left (benchmarks/fit_value_model.py plays the games and prints the
weights that `SearchConfig.value_weights` holds). Where `SearchConfig.value_horizon`
is set, the search's playouts stop at a round's end once at most that many rounds remain
and read this value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np

from csl_ai import _core

VALUE_FEATURES: Final[tuple[str, ...]] = tuple(_core.VALUE_FEATURES)
"""The features of a seat at a round boundary, in weight order (csrc/value.pxi explains each)."""


def boundary_features(state: _core.CoreState) -> np.ndarray:
    """The features of every seat (rows, in seat order) from the state's tallies."""
    return np.asarray(_core.boundary_features(state), dtype=float)


def boundary_value(
    state: _core.CoreState, weights: Sequence[Sequence[float]], points_weights: Sequence[Sequence[float]]
) -> tuple[list[float], list[float]]:
    """(each seat's chance of winning, its expected final points) by the value with
    `weights` and `points_weights` (rows by rounds left, 1 first; the points rows start
    with an intercept), as the search reads it at a round boundary."""
    return _core.boundary_value(state, weights, points_weights)


def softmax_rows(features: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per position (axis 0), each seat's softmax chance; features (positions, seats, F)."""
    z = features @ weights
    z -= z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def log_loss(features: np.ndarray, shares: np.ndarray, weights: np.ndarray) -> float:
    """Mean cross-entropy (nats a position) of the value's chances to the realised shares."""
    p = softmax_rows(features, weights)
    return float(-(shares * np.log(np.maximum(p, 1e-12))).sum(axis=1).mean())


def fit_points(features: np.ndarray, points: np.ndarray, l2: float = 1e-3) -> np.ndarray:
    """Intercept and weights of the least-squares (ridge l2 on the weights) line from a
    seat's features to its final points; features (positions, seats, F), points (positions,
    seats)."""
    x = np.asarray(features, dtype=float).reshape(-1, np.shape(features)[-1])
    x = np.hstack([np.ones((len(x), 1)), x])
    y = np.asarray(points, dtype=float).reshape(-1)
    ridge = l2 * len(x) * np.eye(x.shape[1])
    ridge[0, 0] = 0.0
    return np.linalg.solve(x.T @ x + ridge, x.T @ y)


def points_rmse(features: np.ndarray, points: np.ndarray, weights: np.ndarray) -> float:
    """Root mean squared error (points) of fit_points' line."""
    predicted = weights[0] + np.asarray(features) @ weights[1:]
    return float(np.sqrt(np.mean((predicted - np.asarray(points)) ** 2)))


def fit_value(features: np.ndarray, shares: np.ndarray, l2: float = 1e-3, steps: int = 50) -> np.ndarray:
    """Weights minimising the softmax cross-entropy to `shares` (positions, seats; rows sum
    to 1) plus l2 * |w|^2 / 2, by Newton's method; features (positions, seats, F)."""
    features = np.asarray(features, dtype=float)
    shares = np.asarray(shares, dtype=float)
    m, _, k = features.shape
    w = np.zeros(k)
    for _ in range(steps):
        p = softmax_rows(features, w)
        mean_f = np.einsum("ms,msk->mk", p, features)
        grad = np.einsum("ms,msk->k", p - shares, features) / m + l2 * w
        centred = features - mean_f[:, None, :]
        hess = np.einsum("ms,msk,msj->kj", p, centred, centred) / m + l2 * np.eye(k)
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-9:
            break
    return w
