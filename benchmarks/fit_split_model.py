"""Fit the allocation model (csl_ai/data/split_model.json; `--write csl_ai/data` writes it), and test it on held-out bots.

A sensible player splits its hand on purpose: strong cards where the round's sky cards are
worth most, voids beside a trump. The split mixture's allocation-model part (csrc/splits.pxi)
draws each other seat's split by a conditional logit over the features of split_features
(csrc/playout.pxi):

    P(split | hand, line) = exp(w . f(split)) / sum over the hand's splits of exp(w . f)

This script plays games between rule-based agents, records every allocation with the
features of all the hand's splits, and fits w per player count by Newton's method on the
tuning agents' allocations, separately for seats that then bet on good weather (their
splits serve another plan). It then prints, for every agent, the mean log-likelihood per
allocation over a uniform split (nats; positive: the model explains that agent's splits
better than chance) on games not used in the fit.

Usage:
  python benchmarks/fit_split_model.py                     # tune on heuristic + zoo:cautious
  python benchmarks/fit_split_model.py --games 40 --tune heuristic,zoo:cautious \\
      --held-out zoo:leopards,zoo:stars,zoo:trumps,zoo:bettor,random
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from csl_ai.agents import Agent, make_agent, play_game  # noqa: E402
from csl_ai.errors import OutputWriteError  # noqa: E402
from csl_ai.game import Observation, Phase  # noqa: E402
from csl_ai.moves import Allocate, Move  # noqa: E402
from csl_ai.policy import Example, chosen_examples, cross_entropy  # noqa: E402
from csl_ai.policy import fit as fit_softmax  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.search import SearchConfig  # noqa: E402
from csl_ai.search.core import core_engine  # noqa: E402
from csl_ai.search.fitted import FittedModels, model_folder  # noqa: E402


@dataclass
class Split:
    """One allocation: the features of every split of the hand, the chosen one's index,
    and whether the seat bet on good weather in that round."""

    features: np.ndarray
    chosen: int
    declared: bool = False


class Recorder:
    """Wraps an agent and records the features of each of its allocations."""

    def __init__(self, inner: Agent, out: list[tuple[int, Split]]) -> None:
        self.inner = inner
        self.name = inner.name
        self.out = out

    def act(self, obs: Observation) -> Move:
        move = self.inner.act(obs)
        if obs.phase is Phase.ALLOCATE and isinstance(move, Allocate):
            engine = core_engine(obs, SearchConfig())
            state = obs.public_view().core
            cands = [tuple(p) for p in engine.candidates]
            feats = np.array([engine.split_features(state, obs.seat, p) for p in cands])
            self.out.append((obs.seat, Split(feats, cands.index(tuple(move.piles)))))
        return move

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def collect(spec: str, players: int, games: int, base: int) -> list[Split]:
    """Allocations of agent spec, every seat, in self-play games."""
    splits: list[Split] = []
    for g in range(games):
        rows: list[tuple[int, Split]] = []
        agents = [Recorder(make_agent(spec, base + g * 10 + s), rows) for s in range(players)]
        game = play_game(RulesConfig(players=players), agents, base + g)
        per_seat: dict[int, list[Split]] = {}
        for seat, split in rows:
            per_seat.setdefault(seat, []).append(split)
        for seat, seq in per_seat.items():
            for r, split in enumerate(seq):
                split.declared = bool(game.rounds[r].declarations[seat])
        splits.extend(s for _, s in rows)
    return splits


def examples(data: list[Split]) -> list[Example]:
    """The allocations as softmax examples: one row per split, the chosen one the target."""
    return chosen_examples((d.features, d.chosen) for d in data)


def fit(data: list[Split]) -> np.ndarray:
    """Maximum-likelihood weights of the conditional logit (csl_ai.policy.fit)."""
    return fit_softmax(examples(data))[0]


def gain(w: np.ndarray, data: list[Split]) -> float:
    """Mean log-likelihood per allocation over a uniform split, in nats."""
    if not data:
        return float("nan")
    uniform = sum(np.log(len(d.features)) for d in data) / len(data)
    return uniform - cross_entropy(w, examples(data))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tune", default="heuristic,zoo:cautious")
    parser.add_argument("--held-out", default="zoo:leopards,zoo:stars,zoo:trumps,zoo:bettor,random")
    parser.add_argument("--games", type=int, default=30, help="games per agent, player count and half")
    parser.add_argument("--players", default="2,3,4,5")
    parser.add_argument("--base", type=int, default=5000)
    parser.add_argument(
        "--write", metavar="FOLDER",
        help="write the fitted models into FOLDER's model files (csl_ai/data: the shipped ones), "
        "this fit replacing its player counts' rows, naming this command",
    )
    args = parser.parse_args()
    if args.write is not None:
        try:
            model_folder(args.write)
        except OutputWriteError as error:
            print(f"fit_split_model: {error}", file=sys.stderr)
            return 2
    fitted: dict[int, list[float]] = {}
    tune = args.tune.split(",")
    held = args.held_out.split(",")
    for players in (int(p) for p in args.players.split(",")):
        train = {spec: collect(spec, players, args.games, args.base) for spec in tune}
        test = {spec: collect(spec, players, args.games, args.base + 100_000) for spec in tune + held}
        pooled = [d for v in train.values() for d in v]
        plain = [d for d in pooled if not d.declared]
        bets = [d for d in pooled if d.declared]
        w = fit(plain)
        wd = fit(bets) if len(bets) >= 20 else np.zeros_like(w)
        print(f"{players} players: {len(plain)} allocations ({len(bets)} by declarers) in the fit")
        print(f"  weights {np.round(w, 4).tolist()}  declarers {np.round(wd, 4).tolist()}")
        fitted[players] = np.round(w, 4).tolist()
        for spec, data in test.items():
            plain_t = [d for d in data if not d.declared]
            bets_t = [d for d in data if d.declared]
            tag = "tuning  " if spec in tune else "held out"
            print(
                f"  {tag} {spec:<14} {len(data):4d} allocations: gain {gain(w, plain_t):+.3f} nats"
                f" (declarers {len(bets_t)}: {gain(wd, bets_t):+.3f})"
            )
    if args.write is not None:
        try:
            FittedModels.shipped().refit(
                "split", "python " + " ".join(sys.argv), sorted(fitted),
                split_weights=[fitted.get(p) for p in range(2, 6)],
            ).save(args.write)
        except OutputWriteError as error:
            print(f"fit_split_model: {error}", file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
