"""CPU time a decision takes at a level, per player count: what `LEVEL_SCALE` keeps fixed.

Plays seeded games of heuristic agents and, at every decision of seat 0 with a choice
(allocations, bets and card plays alike, all rounds), searches it at the level's
iterations with one thread and a fixed seed, summing the search's CPU time (`cpu_s`:
the threads and the pool of worlds). Prints, per player count, the mean CPU seconds a
decision and the iterations. Run it under two builds to set the levels after a change of
speed: `PYTHONPATH=DIR python benchmarks/level_time.py` for a frozen build in DIR.

Run: python benchmarks/level_time.py [--level normal] [--games 3] [--players 2 3 4 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from csl_ai.agents import level_iterations, make_agent
from csl_ai.game import Game
from csl_ai.rules import RulesConfig
from csl_ai.search import SearchConfig, SearchLimit, search


def decision_time(players: int, level: str, games: int, iterations: int | None = None) -> tuple[float, int, int]:
    """(mean CPU seconds a searched decision, decisions, iterations a decision)."""
    iterations = iterations or level_iterations(level, players)
    config = SearchConfig()
    total, count = 0.0, 0
    for g in range(games):
        game = Game(RulesConfig(players=players), seed=9000 + 17 * players + g)
        agents = [make_agent("heuristic", g * 10 + s) for s in range(players)]
        while not game.is_over:
            seat = game.to_move
            obs = game.observation(seat)
            if seat == 0 and len(obs.legal_moves()) > 1:
                cpu = time.process_time()
                search(obs, SearchLimit(iterations=iterations, seed=count + 1), config)
                total += time.process_time() - cpu
                count += 1
            game.apply(agents[seat].act(obs), seat)
    return total / max(count, 1), count, iterations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", default="normal")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5])
    parser.add_argument("--iterations", type=int, help="search this many iterations instead of the level's")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = {}
    for players in args.players:
        mean, count, iterations = decision_time(players, args.level, args.games, args.iterations)
        rows[players] = {"cpu_s": mean, "decisions": count, "iterations": iterations}
        if not args.json:
            print(f"{players} players: {mean * 1000:7.1f} ms CPU a decision ({count} decisions, "
                  f"{iterations:,} iterations)", flush=True)
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"wall time {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
