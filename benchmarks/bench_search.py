"""Search benchmark: iterations per second, thread scaling, and the playout policy's gain.

Prints a host calibration line first and last (ns per raw random number: the host is shared,
and the same build reads up to 2x apart on it), then, as medians over repeats:
  (a) ISMCTS iterations/s at the 4-player allocation at game start (target >= 50,000),
  (b) at the first card play of a 4-player game's first round (target >= 200,000),
  (c) at a card play in the last round,
each per CPU-second of the searching thread (the figure that does not depend on what else
the machine runs) and per wall-second; the world sampler's and the playout's own rates
(to the round's end, as the learned value has them at 3 to 5 players, and to the game's
end); the speed-up of threads=2 over threads=1 on the same positions (target >= 1.8x), both in
wall-clock time (needs two idle cores: on a busy machine it reads low) and from each
thread's own CPU clock (what two idle cores would give); and the playout policy's gain:
the win share of ISMCTS with rule playouts against ISMCTS with random playouts, two seats
each in 4-player games, every deal played twice with the seats swapped (a small sample:
the 95% interval is printed with it).

Run: python benchmarks/bench_search.py [--repeats 5] [--games 40] [--gain-iterations 1000]
"""

from __future__ import annotations

import argparse
import math
import random
import os
import statistics
import threading
import time
from collections.abc import Callable

from bench_core import calibration_ns
from csl_ai import _core
from csl_ai.game import Game, Observation, Phase
from csl_ai.rules import RulesConfig
from csl_ai.search import (
    SearchConfig,
    SearchLimit,
    heuristic_move,
    sample_worlds,
    search,
    world_sampler,
)
from csl_ai.search.setup import prepared_engine


def advance(game: Game, until: Callable[[Game], bool], seed: int) -> Game:
    """Play the rule policy's moves (every seat) until `until(game)` holds."""
    step = 0
    while not until(game):
        seat = game.pending_seats()[0]
        game.apply(heuristic_move(game.observation(seat), seed + step), seat)
        step += 1
    return game


def position_a() -> Observation:
    return Game(RulesConfig(players=4), seed=101).observation(0)


def position_b(seed: int = 102) -> Observation:
    game = advance(Game(RulesConfig(players=4), seed=seed), lambda g: g.phase is Phase.PLAY, 1)
    return game.observation(game.to_move)


B_DEALS = range(102, 110)
"""Deals for the spread of (b): the rate depends on the deal (who leads, which cards are seen)."""


def position_c() -> Observation:
    game = Game(RulesConfig(players=4), seed=103)
    game = advance(game, lambda g: g.round == 3 and g.phase is Phase.PLAY and len(g.rounds[-1].tricks) == 3
                   and g.current_trick is None, 1)
    return game.observation(game.to_move)


def rate(obs: Observation, iterations: int, threads: int, repeats: int) -> tuple[float, float]:
    """Median iterations per CPU-second (whole process) and per wall-second."""
    cpu_rates, wall_rates = [], []
    for r in range(repeats):
        limit = SearchLimit(iterations=iterations, threads=threads, seed=r)
        c0, w0 = time.process_time(), time.perf_counter()
        result = search(obs, limit, SearchConfig(search_forced=True))
        c1, w1 = time.process_time(), time.perf_counter()
        cpu_rates.append(result.iterations / (c1 - c0))
        wall_rates.append(result.iterations / (w1 - w0))
    return statistics.median(cpu_rates), statistics.median(wall_rates)


def thread_scaling(obs: Observation, iterations: int, repeats: int) -> tuple[float, float]:
    """threads=2 over threads=1: (wall-clock throughput ratio, ratio of the time the slower
    thread spent on CPU). The second is the speed-up two idle cores give; it is immune to
    other load because each thread's CPU clock only runs while it runs."""
    wall_ratio, cpu_ratio = [], []
    for r in range(repeats):
        runs = {}
        for threads in (1, 2):
            engine = prepared_engine(obs, SearchConfig(search_forced=True))
            share = iterations // threads
            workers = [_core.SearchWorker(engine, r * 7 + t, 2 * share + 64) for t in range(threads)]
            pool = [threading.Thread(target=w.run, args=(share, 0.0)) for w in workers]
            w0 = time.perf_counter()
            for th in pool:
                th.start()
            for th in pool:
                th.join()
            runs[threads] = (time.perf_counter() - w0, max(w.cpu_s for w in workers))
        wall_ratio.append(runs[1][0] / runs[2][0])
        cpu_ratio.append(runs[1][1] / runs[2][1])
    return statistics.median(wall_ratio), statistics.median(cpu_ratio)


def sampler_rate(obs: Observation, repeats: int) -> float:
    sampler = world_sampler(obs)
    n = 200_000
    rates = []
    for r in range(repeats):
        c0 = time.process_time()
        sampler.draw_many(n, r)
        rates.append(n / (time.process_time() - c0))
    return statistics.median(rates)


def playout_rate(obs: Observation, config: SearchConfig, repeats: int) -> float:
    engine = prepared_engine(obs, config)
    world = sample_worlds(obs, 1, 0)[0]
    n = 50_000
    rates = []
    for r in range(repeats):
        c0 = time.process_time()
        _core.bench_playouts(engine, world, n, r)
        rates.append(n / (time.process_time() - c0))
    return statistics.median(rates)


def head_to_head(games: int, iterations: int) -> tuple[float, float, int]:
    """Win share of rule-playout ISMCTS (two seats) against random-playout ISMCTS (two seats)."""
    configs = {"rules": SearchConfig(), "random": SearchConfig(playout="random")}
    share = []
    for g in range(games):
        deal_seed = 1000 + g // 2
        rules_seats = (0, 2) if g % 2 == 0 else (1, 3)
        game = Game(RulesConfig(players=4), seed=deal_seed)
        step = 0
        while not game.is_over:
            seat = random.Random(step).choice(game.pending_seats())
            config = configs["rules" if seat in rules_seats else "random"]
            limit = SearchLimit(iterations=iterations, seed=deal_seed * 100_003 + step)
            game.apply(search(game.observation(seat), limit, config).best_move, seat)
            step += 1
        result = game.result()
        share.append(sum(result.win_share(s) for s in rules_seats))
    mean = statistics.fmean(share)
    half = 1.96 * statistics.stdev(share) / math.sqrt(len(share)) if len(share) > 1 else math.inf
    return mean, half, len(share)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--games", type=int, default=40, help="head-to-head games (even)")
    parser.add_argument("--gain-iterations", type=int, default=1000)
    parser.add_argument("--skip-gain", action="store_true")
    args = parser.parse_args()

    positions = {
        "(a) 4p allocation, game start": (position_a(), 20_000, 50_000),
        "(b) 4p first card play, round 1": (position_b(), 100_000, 200_000),
        "(c) 4p card play, last round": (position_c(), 100_000, None),
    }
    print(f"Host calibration: {calibration_ns(args.repeats):.2f} ns per rng call "
          "(a quiet run of the development machine reads about 0.75)")
    print(f"ISMCTS iterations/s, one thread (median of {args.repeats}):")
    for name, (obs, iterations, target) in positions.items():
        cpu, wall = rate(obs, iterations, 1, args.repeats)
        goal = f"   target >= {target:,}" if target else ""
        print(f"  {name:34s} {cpu:>10,.0f} per CPU-s  {wall:>10,.0f} per wall-s{goal}")

    spread = sorted(rate(position_b(seed), 50_000, 1, 1)[0] for seed in B_DEALS)
    print(f"  (b) over {len(spread)} deals, per CPU-s: median {statistics.median(spread):,.0f}, "
          f"min {spread[0]:,.0f}, max {spread[-1]:,.0f}")

    obs_b = positions["(b) 4p first card play, round 1"][0]
    print(f"World sampler at (b): {sampler_rate(obs_b, args.repeats):,.0f} worlds per CPU-s")
    for playout in ("rules", "random"):
        r = playout_rate(obs_b, SearchConfig(playout=playout), args.repeats)
        print(f"Playouts from (b) to the round's end (the learned value after it), {playout:6s}: {r:,.0f} per CPU-s")
        r = playout_rate(obs_b, SearchConfig(playout=playout, value_horizon=(0, 0, 0, 0)), args.repeats)
        print(f"Playouts from (b) to the game's end, {playout:6s}: {r:,.0f} per CPU-s")

    load = os.getloadavg()[0]
    print(f"Threads=2 over threads=1, same total iterations (target >= 1.8x; load average now {load:.1f} "
          f"on {os.cpu_count()} cores):")
    for name, (obs, iterations, _target) in positions.items():
        wall, cpu = thread_scaling(obs, iterations, args.repeats)
        print(f"  {name:34s} wall-clock {wall:.2f}x   on idle cores (slowest thread's CPU time) {cpu:.2f}x")
    print(f"Host calibration at the end: {calibration_ns(args.repeats):.2f} ns per rng call")

    if not args.skip_gain and args.games > 0:
        mean, half, n = head_to_head(args.games, args.gain_iterations)
        print(f"Playout policy gain: rule-playout ISMCTS vs random-playout ISMCTS, 2 seats each, "
              f"{args.gain_iterations} iterations/decision, {n} 4p games (seats swapped per deal):")
        print(f"  win share of the rules side {mean:.3f} +- {half:.3f} (95%); even = 0.500 (small sample)")


if __name__ == "__main__":
    main()
