"""CPU time a decision takes at a level, per player count: what `LEVEL_SCALE` keeps fixed.

Plays seeded games of heuristic agents and, at every decision of seat 0 with a choice
(allocations, bets and card plays alike, all rounds), searches it under the level's limit
(`level_limit`: its iterations, stopping once the answer is settled where the build does)
with one thread and a fixed seed, summing the process CPU time. Prints, per player count,
the mean CPU seconds a decision, the iterations of the limit and the share of them done.
Run it under two builds to set the levels after a change of speed:
`PYTHONPATH=DIR python benchmarks/level_time.py` for a frozen build in DIR.

Run: python benchmarks/level_time.py [--level normal] [--games 3] [--players 2 3 4 5]
     [--iterations N] [--full]   (--full: the whole budget, never stopping when settled)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

from csl_ai.agents import level_limit, make_agent
from csl_ai.game import Game
from csl_ai.rules import RulesConfig
from csl_ai.search import SearchConfig, search


def decision_time(
    players: int, level: str, games: int, iterations: int | None = None, full: bool = False,
    runs: list[int] | None = None,
) -> tuple[float, int, int, float]:
    """(mean CPU seconds a searched decision, decisions, iterations of the limit, the
    share of them searched). runs, when given, gains per card play [1 if its root held
    equal cards, legal cards, root candidates] (builds that report `same_as`)."""
    limit = level_limit(level, players)
    if iterations:
        limit = replace(limit, iterations=iterations)
    if full and getattr(limit, "stop_when_settled", False):
        limit = replace(limit, stop_when_settled=False)
    config = SearchConfig()
    total, count, searched = 0.0, 0, 0
    for g in range(games):
        game = Game(RulesConfig(players=players), seed=9000 + 17 * players + g)
        agents = [make_agent("heuristic", g * 10 + s) for s in range(players)]
        while not game.is_over:
            seat = game.to_move
            obs = game.observation(seat)
            if seat == 0 and len(obs.legal_moves()) > 1:
                cpu = time.process_time()
                result = search(obs, replace(limit, seed=count + 1), config)
                total += time.process_time() - cpu
                searched += result.iterations
                if runs is not None and obs.phase.value == "play":
                    equal = sum(len(getattr(m, "same_as", ())) for m in result.moves)
                    runs.extend((int(equal > 0), len(result.moves) + equal, len(result.moves)))
                count += 1
            game.apply(agents[seat].act(obs), seat)
    count = max(count, 1)
    return total / count, count, limit.iterations, searched / (count * limit.iterations)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", default="normal")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5])
    parser.add_argument("--iterations", type=int, help="search this many iterations instead of the level's")
    parser.add_argument("--full", action="store_true", help="search the whole budget (no stop when settled)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = {}
    for players in args.players:
        runs: list[int] = []
        mean, count, iterations, share = decision_time(players, args.level, args.games, args.iterations, args.full, runs)
        plays, legal, candidates = sum(runs[0::3]), sum(runs[1::3]), sum(runs[2::3])
        rows[players] = {"cpu_s": mean, "decisions": count, "iterations": iterations, "searched": share,
                         "plays_with_equal_cards": plays, "card_plays": len(runs) // 3,
                         "legal_cards": legal, "root_candidates": candidates}
        if not args.json:
            print(f"{players} players: {mean * 1000:7.1f} ms CPU a decision ({count} decisions, "
                  f"{iterations:,} iterations, {share:.0%} of them searched); {plays} of {len(runs) // 3} "
                  f"card plays held equal cards ({legal} legal cards, {candidates} root candidates)", flush=True)
    if args.json:
        print(json.dumps(rows))
    else:
        print(f"wall time {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
