"""The learned card policy: a softmax over the legal cards, learned from search in self-play.

Each legal card gets a few features read from the acting seat's own cards and public facts
(`CARD_FEATURES`, computed in C: csrc/learned.pxi) and a score, the weights' dot product
with them; the policy plays card i with chance softmax(score)_i. It is fitted by expert
iteration: the search plays itself, every card decision with a choice keeps the search's
visit counts, and the weights minimise the cross-entropy of the softmax to the visit
shares (a convex problem, solved by Newton's method with a small L2 penalty). The search
then plays with the new policy in its playouts, and the next round of self-play learns
from a stronger search (csl_ai.tournament.train).

The weights ship as a small JSON file (`csl_ai/data/card_policy.json`) with the features'
names and how they were made.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

import numpy as np

from csl_ai import _core
from csl_ai.errors import CslError
from csl_ai.files import write_file_atomic
from csl_ai.game import Observation
from csl_ai.notation import card_str

CARD_FEATURES: Final[tuple[str, ...]] = tuple(_core.CARD_FEATURES)
"""The features of a candidate card, in weight order (csrc/learned.pxi explains each)."""
POLICY_FORMAT: Final = "csl-card-policy"
POLICY_VERSION: Final = 1
SHIPPED: Final = "card_policy.json"
"""The shipped weights, in the package's data folder."""
MAX_POLICY_BYTES: Final = 1 << 20


class PolicyFileError(CslError):
    """A card policy file that cannot be read or does not hold valid weights."""


@dataclass(frozen=True)
class CardPolicy:
    """Weights for `CARD_FEATURES` and how they were made."""

    weights: tuple[float, ...]
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.weights) != len(CARD_FEATURES) or not all(
            isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w)
            for w in self.weights
        ):
            raise PolicyFileError(
                f"weights: need {len(CARD_FEATURES)} finite numbers, got {list(self.weights)[:20]!r}"
            )

    def to_json(self) -> dict[str, Any]:
        return {
            "format": POLICY_FORMAT,
            "version": POLICY_VERSION,
            "features": list(CARD_FEATURES),
            "weights": list(self.weights),
            "provenance": dict(self.provenance),
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the policy as JSON with the safe writer (never over a non-regular file)."""
        target = Path(path)
        write_file_atomic(
            target, json.dumps(self.to_json(), indent=2) + "\n", f"card policy {str(target)!r}"
        )

    @classmethod
    def from_json(cls, data: object, where: str) -> CardPolicy:
        if not isinstance(data, dict):
            raise PolicyFileError(f"{where}: must be a JSON object")
        if data.get("format") != POLICY_FORMAT or data.get("version") != POLICY_VERSION:
            raise PolicyFileError(f"{where}: not a {POLICY_FORMAT} version {POLICY_VERSION} file")
        if data.get("features") != list(CARD_FEATURES):
            raise PolicyFileError(f"{where}: features differ from this build's {list(CARD_FEATURES)}")
        weights = data.get("weights")
        if not isinstance(weights, list):
            raise PolicyFileError(f"{where}: weights must be a list")
        provenance = data.get("provenance", {})
        if not isinstance(provenance, dict):
            raise PolicyFileError(f"{where}: provenance must be an object")
        try:
            return cls(tuple(weights), provenance)
        except PolicyFileError as e:
            raise PolicyFileError(f"{where}: {e}") from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> CardPolicy:
        try:
            with open(path, "rb") as f:
                raw = f.read(MAX_POLICY_BYTES + 1)
        except OSError as e:
            raise PolicyFileError(f"card policy {str(path)!r}: cannot read: {e.strerror}") from None
        if len(raw) > MAX_POLICY_BYTES:
            raise PolicyFileError(f"card policy {str(path)!r}: larger than {MAX_POLICY_BYTES} bytes")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as e:
            raise PolicyFileError(f"card policy {str(path)!r}: not JSON ({type(e).__name__})") from None
        return cls.from_json(data, f"card policy {str(path)!r}")

    @classmethod
    def shipped(cls) -> CardPolicy:
        """The weights that ship with the package."""
        text = resources.files("csl_ai").joinpath("data", SHIPPED).read_text()
        return cls.from_json(json.loads(text), f"csl_ai/data/{SHIPPED}")


def rules_policy(strength: float = 3.0) -> CardPolicy:
    """Weights that play the rules' card with chance about 1 - (L-1)/(L-1+e^strength)."""
    weights = [0.0] * len(CARD_FEATURES)
    weights[CARD_FEATURES.index("rule")] = strength
    return CardPolicy(tuple(weights), {"made": "rules_policy", "strength": strength})


def card_features(obs: Observation, policy_kwargs: Mapping[str, float]) -> tuple[list[int], list[list[float]]]:
    """(cards, features) of every legal card of obs's seat, which must be to play a card."""
    return _core.card_features(obs.public_view().core, obs.seat, **policy_kwargs)


# --- fitting ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One card decision: the legal cards' features and the search's visit shares."""

    features: np.ndarray
    """(legal cards, features)"""
    target: np.ndarray
    """(legal cards,), sums to 1"""


def chosen_examples(choices: Iterable[tuple[np.ndarray, int]]) -> list[Example]:
    """Observed choices as examples: (features of every option, index of the one taken),
    the taken option the whole target (fitting a model of what a player does)."""
    out = []
    for features, chosen in choices:
        target = np.zeros(len(features))
        target[chosen] = 1.0
        out.append(Example(np.asarray(features, dtype=float), target))
    return out


def examples_from_rows(rows: Iterable[Mapping[str, Any]]) -> list[Example]:
    """The card decisions with a choice and a search among self-play training rows
    (csl_ai.tournament.selfplay rows that hold ``card_features``)."""
    out = []
    for row in rows:
        block = row.get("card_features")
        if not block or not row.get("search"):
            continue
        cards = block["cards"]
        visits = {m["card"]: v for m, v in zip(row["moves"], row["visits"], strict=True)}
        counts = np.array([visits.get(card_str(c), 0) for c in cards], dtype=float)
        if counts.sum() <= 0 or len(cards) < 2:
            continue
        out.append(Example(np.asarray(block["features"], dtype=float), counts / counts.sum()))
    return out


def cross_entropy(weights: np.ndarray, examples: Sequence[Example]) -> float:
    """Mean cross-entropy of the softmax policy to the examples' targets (nats)."""
    total = 0.0
    for ex in examples:
        s = ex.features @ weights
        s -= s.max()
        total -= float(ex.target @ (s - math.log(np.exp(s).sum())))
    return total / max(1, len(examples))


def fit(
    examples: Sequence[Example],
    start: Sequence[float] | None = None,
    l2: float = 1e-3,
    steps: int = 50,
) -> tuple[np.ndarray, float]:
    """Weights minimising mean cross-entropy + l2 |w|^2 / 2 (Newton's method with
    backtracking); returns (weights, final mean cross-entropy). Any softmax over feature
    rows fits here (the card policy; benchmarks/fit_split_model.py's allocation model)."""
    if not examples:
        raise ValueError("no examples to fit")
    k = examples[0].features.shape[1]
    w = np.zeros(k) if start is None else np.asarray(start, dtype=float).copy()
    n = len(examples)

    def objective(v: np.ndarray) -> float:
        return cross_entropy(v, examples) + 0.5 * l2 * float(v @ v)

    current = objective(w)
    for _ in range(steps):
        grad = l2 * w
        hess = l2 * np.eye(k)
        for ex in examples:
            s = ex.features @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            mean_f = p @ ex.features
            grad += (mean_f - ex.target @ ex.features) / n
            centred = ex.features - mean_f
            hess += (centred.T * p) @ centred / n
        step = np.linalg.solve(hess + 1e-9 * np.eye(k), grad)
        t = 1.0
        while t > 1e-4:
            trial = w - t * step
            value = objective(trial)
            if value <= current - 1e-4 * t * float(grad @ step):
                break
            t *= 0.5
        else:
            break
        improvement = current - value
        w, current = trial, value
        if improvement < 1e-9:
            break
    return w, cross_entropy(w, examples)
