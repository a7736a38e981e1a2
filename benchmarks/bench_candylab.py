"""Candy Lab benchmarks (issue 39): the core's speed, the search's speed, its strength.

Three parts, each optional:

- **core**: a random game's time in Candy Lab's compiled core (``_core.playouts`` from a
  fresh deal, random moves) and in the Python rules core (``core.legal_moves`` and
  ``core.apply``, deal included) at 2, 3 and 4 players, beside a random CSL game's time
  in CSL's compiled core (``csl_ai._core.random_games``, 4 players), and the ratios;
- **speed**: search iterations per second at fixed positions (seeded games stopped at
  the 1st, 10th and 25th decision), each playout policy, seeded;
- **strength**: win shares of a test agent against opponents, over duplicate deals:
  each deal (a game seed) is played once per seat with the test agent moving round the
  table, so every agent plays every seat on the same cards. A game scores the test
  agent's share of the win (1, 1/k for a k-way shared win, else 0); the 95% interval is
  normal over the deals' mean scores (the duplicated unit).

Rows (``--only`` names some; default: every row at ``--games`` games each):

  heuristic-vs-random-2p     sanity: heuristic heads-up against random
  ismcts-vs-heuristic-2p     the search heads-up against the heuristic   (issue: >= 90%)
  ismcts-vs-heuristic-3p     the search against two heuristics
  ismcts-vs-heuristic-4p     the search against three heuristics         (issue: >= 60%)
  ismcts-vs-random-2p        ... against random bots                      (issue: >= 95%)
  ismcts-vs-random-3p
  ismcts-vs-random-4p

Usage:
  python benchmarks/bench_candylab.py --only core speed
  python benchmarks/bench_candylab.py --only ismcts-vs-heuristic-2p --games 100 --agent ismcts:iters=400
  python benchmarks/bench_candylab.py --games 40 --workers 2 --json cl.json

With iteration limits and fixed seeds every game is reproducible, whatever --workers.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from csl_ai.candylab import CandyLabRules, Game, core, deal
from csl_ai.candylab import _core as ccore
from csl_ai.candylab.players import make_agent
from csl_ai.candylab.search import SearchConfig, SearchLimit, search
from csl_ai.seeds import joined_seed

ROWS = {
    "heuristic-vs-random-2p": ("heuristic", "random", 2),
    "ismcts-vs-heuristic-2p": (None, "heuristic", 2),
    "ismcts-vs-heuristic-3p": (None, "heuristic", 3),
    "ismcts-vs-heuristic-4p": (None, "heuristic", 4),
    "ismcts-vs-random-2p": (None, "random", 2),
    "ismcts-vs-random-3p": (None, "random", 3),
    "ismcts-vs-random-4p": (None, "random", 4),
}


# --- core --------------------------------------------------------------------------------
def candylab_game_ms(players: int, games: int, seed: int = 1) -> float:
    """Mean milliseconds of a random Candy Lab game in the rules core (deal included)."""
    rules = CandyLabRules(players=players)
    rng = random.Random(seed)
    start = time.perf_counter()
    for g in range(games):
        s = deal(rules, seed + g)
        while not core.is_over(s):
            moves = core.legal_moves(s)
            core.apply(s, moves[rng.randrange(len(moves))])
    return (time.perf_counter() - start) * 1000 / games


def candylab_c_game_ms(players: int, games: int, seed: int = 1) -> float:
    """Mean milliseconds of a random Candy Lab game in the compiled core, from one deal."""
    return ccore.playouts(deal(CandyLabRules(players=players), seed), games, seed, 1.0) / 1e6


def csl_game_ms(games: int = 20_000) -> float | None:
    """Mean milliseconds of a random 4-player CSL game in CSL's compiled core."""
    try:
        from csl_ai import _core
        from csl_ai.cli.bench import start_of_game
    except ImportError:
        return None
    state = start_of_game(4)
    start = time.perf_counter()
    _core.random_games(state, games, 12345)
    return (time.perf_counter() - start) * 1000 / games


def bench_core(games: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for n in (2, 3, 4):
        samples = [candylab_game_ms(n, games, seed=1 + 1000 * r) for r in range(3)]
        out[f"candylab_python_{n}p_ms"] = statistics.median(samples)
        c_samples = [candylab_c_game_ms(n, 100 * games, seed=1 + 1000 * r) for r in range(3)]
        out[f"candylab_c_{n}p_ms"] = statistics.median(c_samples)
        out[f"ratio_python_over_c_{n}p"] = out[f"candylab_python_{n}p_ms"] / out[f"candylab_c_{n}p_ms"]
    csl = csl_game_ms()
    out["csl_4p_ms"] = csl
    if csl:
        out["ratio_candylab_c_4p_over_csl_4p"] = out["candylab_c_4p_ms"] / csl
    return out


# --- search speed ------------------------------------------------------------------------
def position(players: int, decision: int, seed: int = 7) -> Any:
    """The observation of the seat to move at the given decision (counting only
    decisions with more than one legal move) of a seeded game between heuristics."""
    from csl_ai.candylab.agents import HeuristicAgent

    game = Game(CandyLabRules(players=players), seed=seed)
    agent = HeuristicAgent()
    seen = 0
    while not game.is_over:
        obs = game.observation(game.current)
        if len(obs.legal_moves) > 1:
            if seen == decision:
                return obs
            seen += 1
        game.play(agent.act(obs))
    raise ValueError("the game ended first")


def bench_speed(iterations: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for playout in ("random", "heuristic"):
        config = SearchConfig(playout=playout)
        for n in (2, 4):
            rates = []
            for decision in (0, 10, 25):
                obs = position(n, decision)
                result = search(obs, SearchLimit(iterations=iterations, seed=1), config)
                rates.append(result.iterations / result.elapsed_s)
            out[f"{playout}_{n}p_iters_per_s"] = statistics.median(rates)
    return out


# --- strength ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    row: str
    deal: int
    seat: int
    """The test agent's seat."""
    test: str
    opponent: str
    players: int
    seed: int


def play_job(job: Job) -> tuple[str, int, int, float, float]:
    """(row, deal, seat, the test agent's win share, seconds)."""
    rules = CandyLabRules(players=job.players)
    game_seed = joined_seed(job.seed, "deal", job.players, job.deal)
    agents = [
        make_agent(
            job.test if p == job.seat else job.opponent,
            joined_seed(job.seed, "agent", job.row, job.deal, job.seat, p),
        )
        for p in range(job.players)
    ]
    start = time.perf_counter()
    game = Game(rules, seed=game_seed)
    while not game.is_over:
        seat = game.current
        game.play(agents[seat].act(game.observation(seat)))
    share = core.returns(game.state)[job.seat]
    return job.row, job.deal, job.seat, share, time.perf_counter() - start


def interval(deal_means: Sequence[float]) -> tuple[float, float, float]:
    """Mean and normal 95% interval over the deals' mean scores."""
    k = len(deal_means)
    mean = sum(deal_means) / k
    if k < 2:
        return mean, 0.0, 1.0
    sd = statistics.stdev(deal_means)
    half = 1.96 * sd / math.sqrt(k)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def bench_strength(
    rows: Sequence[str], games: int, agent: str, seed: int, workers: int
) -> dict[str, Any]:
    jobs = []
    for row in rows:
        test, opponent, n = ROWS[row]
        test = test or agent
        deals = max(1, games // n)
        for d in range(deals):
            for seat in range(n):
                jobs.append(Job(row, d, seat, test, opponent, n, seed))
    results: list[tuple[str, int, int, float, float]] = []
    start = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for r in pool.map(play_job, jobs, chunksize=1):
                results.append(r)
    else:
        for job in jobs:
            results.append(play_job(job))
            done = len(results)
            if done % 10 == 0:
                print(f"  {done}/{len(jobs)} games, {time.perf_counter() - start:.0f} s",
                      file=sys.stderr, flush=True)
    out: dict[str, Any] = {}
    for row in rows:
        mine = [r for r in results if r[0] == row]
        by_deal: dict[int, list[float]] = {}
        for _, d, _, share, _ in mine:
            by_deal.setdefault(d, []).append(share)
        means = [sum(v) / len(v) for _, v in sorted(by_deal.items())]
        mean, lo, hi = interval(means)
        test, opponent, n = ROWS[row]
        out[row] = {
            "test": test or agent,
            "opponent": opponent,
            "players": n,
            "games": len(mine),
            "deals": len(means),
            "win_share": mean,
            "ci95": [lo, hi],
            "fair_share": 1 / n,
            "seconds_per_game": sum(r[4] for r in mine) / max(1, len(mine)),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None,
                        help="parts or rows: core, speed, strength, or row names")
    parser.add_argument("--games", type=int, default=100, help="games per strength row")
    parser.add_argument("--agent", default="ismcts:normal", help="the test agent's spec")
    parser.add_argument("--seed", type=int, default=39, help="base seed of deals and agents")
    parser.add_argument("--workers", type=int, default=1, help="processes for the games")
    parser.add_argument("--core-games", type=int, default=200)
    parser.add_argument("--speed-iters", type=int, default=20_000)
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    only = args.only or ["core", "speed", "strength"]
    rows = [r for r in ROWS if "strength" in only or r in only]
    figures: dict[str, Any] = {"agent": args.agent, "seed": args.seed}
    if "core" in only:
        figures["core"] = core_figs = bench_core(args.core_games)
        print("core: ms per random game, and ratios: " + ", ".join(
            f"{k} {v:.4g}" for k, v in core_figs.items() if v is not None))
    if "speed" in only:
        figures["speed"] = speed = bench_speed(args.speed_iters)
        print("search: iterations/s (median of 3 positions): " + ", ".join(
            f"{k} {v:,.0f}" for k, v in speed.items()))
    if rows:
        strength = bench_strength(rows, args.games, args.agent, args.seed, args.workers)
        figures["strength"] = strength
        for row, f in strength.items():
            lo, hi = f["ci95"]
            print(f"{row:26s} {f['test']} vs {f['opponent']}: win share {f['win_share']:.1%} "
                  f"[{lo:.1%}, {hi:.1%}] over {f['games']} games ({f['deals']} deals; fair "
                  f"{f['fair_share']:.0%}), {f['seconds_per_game']:.1f} s/game")
    if args.json:
        from csl_ai.files import write_file_atomic

        write_file_atomic(args.json, json.dumps(figures, indent=2) + "\n", f"--json {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
