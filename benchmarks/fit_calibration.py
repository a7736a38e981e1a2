"""Fit the win calibration behind SearchConfig.win_calibration, and check it on held-out bots.

Plays ISMCTS (one seat, every seat in turn on each deal) against three copies of each
opponent, keeps the search's raw mean win share at every decision it searched with the
realised win share of the game, fits the map of csl_ai.calibration per player count on the
tuning opponents' games, and prints for the fitting games and for held-out opponents' games
(other deals) the calibration before and after: the Brier score, the mean estimate against
the realised share, and the deciles (estimate, realised, decisions).

Usage:
  python benchmarks/fit_calibration.py                  # the default plan below, 2 workers
  python benchmarks/fit_calibration.py --deals 10 --players 4 --budgets 10000
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csl_ai.agents import Agent, IsmctsAgent, make_agent, play_game  # noqa: E402
from csl_ai.calibration import WinCalibration, fit_calibration  # noqa: E402
from csl_ai.game import Observation  # noqa: E402
from csl_ai.moves import Move  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.search import SearchConfig, SearchLimit  # noqa: E402

Sample = tuple[float, int, float]
"""(raw mean win share, iterations, realised win share of the game)."""


def seed_of(*parts: object) -> int:
    key = "|".join(map(str, parts)).encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") >> 1


class RawEstimates:
    """ISMCTS without calibration that keeps the raw estimate of each searched decision."""

    def __init__(self, iterations: int, seed: int) -> None:
        self.inner = IsmctsAgent(SearchLimit(iterations=iterations, seed=seed), SearchConfig(win_calibration=None))
        self.name = self.inner.name
        self.seen: list[tuple[float, int]] = []

    def act(self, obs: Observation) -> Move:
        move = self.inner.act(obs)
        result = self.inner.last_result
        if result is not None and result.iterations:
            self.seen.append((result.moves[0].win_probability, result.iterations))
        return move


def play(task: tuple[int, str, int, int, int, int]) -> list[Sample]:
    players, opponent, iterations, base, deal, rotation = task
    agents: list[Agent] = []
    test = RawEstimates(iterations, seed_of(base, deal, rotation, iterations, "test"))
    for seat in range(players):
        agents.append(test if seat == rotation else make_agent(opponent, seed_of(base, deal, rotation, seat)))
    game = play_game(RulesConfig(players=players), agents, base + deal)
    share = game.result().win_share(rotation)
    return [(raw, n, share) for raw, n in test.seen]


def collect(players: int, opponent: str, iterations: int, deals: int, base: int, workers: int) -> list[Sample]:
    tasks = [(players, opponent, iterations, base, d, r) for d in range(deals) for r in range(players)]
    with ProcessPoolExecutor(workers) as pool:
        return [s for game in pool.map(play, tasks, chunksize=1) for s in game]


def report(label: str, samples: Sequence[Sample], calibration: WinCalibration | None, players: int) -> str:
    est = [
        calibration.chance(raw, players, n) if calibration is not None else raw for raw, n, _ in samples
    ]
    real = [y for _, _, y in samples]
    brier = sum((e - y) ** 2 for e, y in zip(est, real, strict=True)) / len(est)
    bins: list[list[tuple[float, float]]] = [[] for _ in range(10)]
    for e, y in zip(est, real, strict=True):
        bins[min(int(e * 10), 9)].append((e, y))
    cells = []
    for b in bins:
        if len(b) >= 20:
            mean_e = sum(e for e, _ in b) / len(b)
            mean_y = sum(y for _, y in b) / len(b)
            cells.append(f"{mean_e * 100:.0f}/{mean_y * 100:.0f}({len(b)})")
        else:
            cells.append("-")
    mean_e = sum(est) / len(est)
    mean_y = sum(real) / len(real)
    return (
        f"    {label:<34} Brier {brier:.4f}  estimate {mean_e:.1%} realised {mean_y:.1%} "
        f"({len(est)} decisions)\n      deciles est/real(n): {' '.join(cells)}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", default="2,3,4,5")
    parser.add_argument("--tune", default="heuristic,zoo:cautious")
    parser.add_argument("--held-out", default="zoo:leopards,zoo:trumps")
    parser.add_argument("--budgets", default="10000", help="iterations a decision, comma-separated")
    parser.add_argument("--held-out-budget", type=int, default=10_000)
    parser.add_argument("--deals", type=int, default=30, help="deals per player count, opponent and budget")
    parser.add_argument("--base", type=int, default=60_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    budgets = [int(b) for b in args.budgets.split(",")]
    rows: list[tuple[float, float, float]] = []
    for players in (int(p) for p in args.players.split(",")):
        fit_samples: list[Sample] = []
        for opponent in args.tune.split(","):
            for budget in budgets:
                fit_samples += collect(players, opponent, budget, args.deals, args.base, args.workers)
        a, b, c = fit_calibration([s[0] for s in fit_samples], [s[1] for s in fit_samples], [s[2] for s in fit_samples])
        rows.append((a, b, c))
        coeffs = [(0.0, 1.0, 0.0)] * 4
        coeffs[players - 2] = (a, b, c)
        fitted = WinCalibration(tuple(coeffs))
        print(f"{players} players: a={a:.4f} b={b:.4f} c={c:.4f}  ({len(fit_samples)} decisions in the fit)")
        print(report("fitting games, raw", fit_samples, None, players))
        print(report("fitting games, calibrated", fit_samples, fitted, players))
        for opponent in args.held_out.split(","):
            held = collect(players, opponent, args.held_out_budget, args.deals, args.base + 500_000, args.workers)
            print(report(f"held out {opponent}, raw", held, None, players))
            print(report(f"held out {opponent}, calibrated", held, fitted, players))
        sys.stdout.flush()
    print("win_calibration rows:", tuple(tuple(round(v, 4) for v in r) for r in rows))
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
