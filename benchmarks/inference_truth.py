"""How far inference moves the search's worlds toward the true deal.

For positions of seat 0 in the middle of a round (after the given tricks) of games among
rule-based bots, draws worlds as the search would under each inference, and prints the
mean share of the drawn worlds that put each hidden card in its true seat's true pile:
the exact-uniform sampler (every void shown respected) against play inference under the
rules'-card and the fitted play models, and the allocation model's splits with the
fitted play model. 100% would be the true deal itself (tune_search.py --oracle measures
what that is worth in play); the distance from the uniform share is what the inference
has learnt from the plays.

Usage:
  python benchmarks/inference_truth.py
  python benchmarks/inference_truth.py --opponent zoo:trumps --players 4 --games 24
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csl_ai import _core  # noqa: E402
from csl_ai.agents import make_agent  # noqa: E402
from csl_ai.game import Game, Observation  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.search import SearchConfig, _engine, infer_worlds, world_sampler  # noqa: E402

INFERENCES = {
    "uniform sampler": None,
    "plays, rules' card (tremble 0.5)": SearchConfig(play_model="card", play_tremble=0.5),
    "plays, fitted model (tremble 0.1)": SearchConfig(),
    "splits and plays, fitted model": SearchConfig(),
}


def positions(spec: str, players: int, seed: int, tricks: set[int]) -> list[tuple[Observation, _core.CoreState]]:
    """Seat 0's card plays with a choice after the given numbers of tricks, with the true state."""
    game = Game(RulesConfig(players=players), seed=seed)
    agents = [make_agent(spec, seed * 10 + s) for s in range(players)]
    out = []
    while not game.is_over:
        seat = game.to_move
        obs = game.observation(seat)
        if seat == 0 and obs.phase.value == "play" and len(obs.current.tricks) in tricks and len(obs.legal_moves()) > 1:
            out.append((obs, game.core.copy()))
        game.apply(agents[seat].act(obs), seat)
    return out


def worlds(obs: Observation, name: str, n: int, seed: int) -> list[_core.CoreState]:
    config = INFERENCES[name]
    if config is None:
        return world_sampler(obs).sample(n, seed)
    splits = (obs.players,) if name.startswith("splits") else ()
    config = replace(config, play_inference=(obs.players,), allocation_inference=splits)
    engine = _engine(obs, config)
    infer_worlds(engine, obs, config, seed)
    return engine.draw_worlds(n, seed + 1)


def share_in_true_pile(drawn: list[_core.CoreState], truth: _core.CoreState, seat: int) -> float:
    hits = total = 0
    for s, piles in enumerate(truth.piles):
        if s == seat:
            continue
        for g, pile in enumerate(piles):
            for card in range(64):
                if (pile >> card) & 1:
                    hits += sum(1 for w in drawn if (w.piles[s][g] >> card) & 1)
                    total += len(drawn)
    return hits / max(1, total)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--opponent", default="heuristic", help="the agent at every seat")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--tricks", default="3,5,7", help="tricks played before the positions kept")
    parser.add_argument("--worlds", type=int, default=400, help="worlds drawn per position and inference")
    a = parser.parse_args()
    tricks = {int(t) for t in a.tricks.split(",")}
    shares: dict[str, list[float]] = {name: [] for name in INFERENCES}
    for seed in range(1, a.games + 1):
        for obs, truth in positions(a.opponent, a.players, seed, tricks):
            for name in INFERENCES:
                shares[name].append(share_in_true_pile(worlds(obs, name, a.worlds, 7), truth, obs.seat))
    count = len(shares["uniform sampler"])
    print(f"{count} positions of seat 0 after tricks {a.tricks}, {a.players} players, every seat {a.opponent}:")
    for name, values in shares.items():
        print(f"  {name:<36} hidden cards in their true pile: {sum(values) / max(1, count):.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
