"""Fit the card-play model behind SearchConfig.play_weights, and test it on held-out bots.

Play inference (csrc/search.pxi play_log_likelihood) weighs each sampled world by how
likely the other seats' card plays of the round are in it. That is only as good as the
model of a sensible player's card: the rules' own card with a tremble explained the
heuristic agent's plays barely better than a uniform choice (its 4-player log-likelihood
per play -0.825 nats against -0.842), yet multiplied a world's weight by up to k + 1 for
every play, so it leaned on worlds the bots did not hold. The fitted model is the learned
card policy's softmax (csrc/learned.pxi, features from the seat's own cards and public facts
only) with weights fitted by maximum likelihood to sensible bots' own plays:

    P(card | seat's view) = exp(w . f(card)) / sum over the legal cards of exp(w . f)

This script plays games between rule-based agents (every seat the same agent), records
every card play with a choice with the features of each legal card, fits w per player
count on the tuning agents' plays, and prints, for every agent on games not used in the
fit, the mean log-likelihood per play (nats) of a uniform choice, of the rules' card with
tremble 0.5 (the "card" model) and of the fitted softmax mixed with a uniform tremble t
(the search's play_tremble), and how often each model's likeliest card was the one played.

Usage:
  python benchmarks/fit_play_model.py                       # tune on heuristic + zoo:cautious
  python benchmarks/fit_play_model.py --games 60 --players 4 --tremble 0.1
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csl_ai.agents import Agent, make_agent, play_game  # noqa: E402
from csl_ai.game import Observation  # noqa: E402
from csl_ai.moves import Move, Play  # noqa: E402
from csl_ai.policy import CARD_FEATURES, Example, card_features, chosen_examples  # noqa: E402
from csl_ai.policy import fit as fit_softmax  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.search import SearchConfig, policy_settings  # noqa: E402

RULE = CARD_FEATURES.index("rule")
"""The column of the feature "the rules' own card"."""


@dataclass(frozen=True)
class CardPlay:
    """One card play with a choice: the features of every legal card, the one played."""

    features: np.ndarray
    chosen: int


class Recorder:
    """Wraps an agent and records the features of each of its card plays with a choice."""

    def __init__(self, inner: Agent, out: list[CardPlay]) -> None:
        self.inner = inner
        self.name = inner.name
        self.out = out

    def act(self, obs: Observation) -> Move:
        move = self.inner.act(obs)
        if isinstance(move, Play):
            cards, rows = card_features(obs, policy_settings(obs, SearchConfig()))
            if len(cards) >= 2:
                self.out.append(CardPlay(np.asarray(rows, dtype=float), cards.index(move.card)))
        return move


def _game(task: tuple[str, int, int]) -> list[CardPlay]:
    spec, players, seed = task
    plays: list[CardPlay] = []
    agents = [Recorder(make_agent(spec, seed * 10 + s), plays) for s in range(players)]
    play_game(RulesConfig(players=players), agents, seed)
    return plays


def collect(spec: str, players: int, games: int, base: int, workers: int) -> list[CardPlay]:
    """Card plays with a choice of agent spec, every seat, in self-play games."""
    tasks = [(spec, players, base + g) for g in range(games)]
    with multiprocessing.Pool(workers) as pool:
        return [p for game in pool.map(_game, tasks) for p in game]


def examples(data: list[CardPlay]) -> list[Example]:
    return chosen_examples((d.features, d.chosen) for d in data)


def softmax(w: np.ndarray, features: np.ndarray) -> np.ndarray:
    s = features @ w
    p = np.exp(s - s.max())
    return p / p.sum()


def log_likelihoods(w: np.ndarray, data: list[CardPlay], tremble: float) -> tuple[float, float, float]:
    """Mean log-likelihood per play of: a uniform choice, the rules' card with tremble 0.5,
    the fitted softmax with a uniform tremble."""
    uniform = rules = fitted = 0.0
    for d in data:
        k = len(d.features)
        uniform -= math.log(k)
        rules += math.log(0.5 / k + 0.5 * d.features[d.chosen, RULE])
        fitted += math.log(tremble / k + (1 - tremble) * softmax(w, d.features)[d.chosen])
    n = max(1, len(data))
    return uniform / n, rules / n, fitted / n


def top_share(w: np.ndarray, data: list[CardPlay]) -> tuple[float, float]:
    """How often the fitted model's likeliest card, and the rules' card, were played."""
    n = max(1, len(data))
    fitted = sum(int(np.argmax(d.features @ w) == d.chosen) for d in data) / n
    rules = sum(int(d.features[d.chosen, RULE] == 1.0) for d in data) / n
    return fitted, rules


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tune", default="heuristic,zoo:cautious")
    parser.add_argument("--held-out", default="zoo:leopards,zoo:stars,zoo:trumps,zoo:bettor,random")
    parser.add_argument("--games", type=int, default=40, help="games per agent, player count and half")
    parser.add_argument("--players", default="2,3,4,5")
    parser.add_argument("--tremble", type=float, default=0.1, help="the fitted model's uniform tremble")
    parser.add_argument("--base", type=int, default=7000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    tune = args.tune.split(",")
    held = args.held_out.split(",")
    for players in (int(p) for p in args.players.split(",")):
        train = [d for spec in tune for d in collect(spec, players, args.games, args.base, args.workers)]
        w = fit_softmax(examples(train))[0]
        print(f"{players} players: {len(train)} card plays with a choice in the fit")
        print(f"  weights {np.round(w, 4).tolist()}")
        for spec in tune + held:
            data = collect(spec, players, args.games, args.base + 100_000, args.workers)
            uniform, rules, fitted = log_likelihoods(w, data, args.tremble)
            top_fitted, top_rules = top_share(w, data)
            tag = "tuning  " if spec in tune else "held out"
            print(
                f"  {tag} {spec:<14} {len(data):5d} plays: nats a play uniform {uniform:.3f}, "
                f"rules {rules:.3f}, fitted {fitted:.3f}; likeliest card played: "
                f"fitted {top_fitted:.1%}, rules {top_rules:.1%}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
