"""Random-playout speed of the rules core, and of the same games through the Python API.

Prints, for 4 players with the default rules:
- calibration: ns per raw random number drawn in C (the machine is shared and noisy, so
  compare figures taken on the same run against this);
- full random games per second in the core (`_core.random_games`: deal, allocation,
  weather bet and every trick of every round, each game from a fresh copy of the start);
- full random games per second through `csl_ai.game.Game` (uniform random legal moves)
  and the core/Python ratio;
- ns for the trick phase of one round (`_core.random_tricks_from_piles`: random legal plays
  from given piles by the playout's own trick loop, each trick's sky card credited to its
  winner; no State copy, no end of round);
- ns for the same round the old way (`_core.random_round_tricks`: a copy of the 470-byte
  State, then the tricks, the crediting and the end-of-round tallies), so nothing is hidden;
- ms per whole game through `csl_ai.agents.play_game` between four `RandomAgent`s and
  between four `HeuristicAgent`s: what tournaments, analysis and self-play of Python agents
  pay per game (every decision builds an `Observation` with its `PublicView`).

Every figure is the median of --repeats timed runs, timed in this process's CPU time
(time.process_time), so that other jobs sharing the machine's cores do not count against
it; the calibration line shows how fast this core runs at the moment. Targets (issue 2):
at least 800,000 core games/s on one core, a round's tricks under 200 ns; (issue 13) a
random game through play_game at most 2 ms, a heuristic game at most 10 ms.

    python benchmarks/bench_core.py [--repeats 7] [--seconds 0.3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from csl_ai import _core
from csl_ai.agents import Agent, HeuristicAgent, RandomAgent, play_game
from csl_ai.game import Game, new_core
from csl_ai.rules import RulesConfig

PLAYERS = 4
CORE_GAMES_TARGET = 800_000.0
ROUND_NS_TARGET = 200.0
RANDOM_GAME_MS_TARGET = 2.0
HEURISTIC_GAME_MS_TARGET = 10.0


def _median_rate(run: Callable[[int], object], count: int, repeats: int) -> float:
    """Median of count / seconds over repeats timed calls of run(count)."""
    rates = []
    for _ in range(repeats):
        start = time.process_time()
        run(count)
        rates.append(count / (time.process_time() - start))
    return statistics.median(rates)


def size_for(run: Callable[[int], object], seconds: float) -> int:
    """How many units of run make one timed call last about `seconds`."""
    count = 1000
    while True:
        start = time.process_time()
        run(count)
        elapsed = time.process_time() - start
        if elapsed >= seconds / 4:
            return max(1, int(count * seconds / elapsed))
        count *= 4


def start_state(rules: RulesConfig, seed: int) -> _core.CoreState:
    """A new game waiting for its first deal, with a seeded sky deck order."""
    order = list(range(rules.spec.sky_cards_used))
    random.Random(seed).shuffle(order)
    return new_core(rules, order)


def first_trick_state(rules: RulesConfig, seed: int) -> _core.CoreState:
    """A state at the first trick of round 1: dealt, allocated and declared at random."""
    rng = random.Random(seed)
    game = Game(rules, seed=seed)
    while game.phase.value != "play":
        game.apply(rng.choice(game.legal_moves()))
    return game.core.copy()


def python_game(rules: RulesConfig, seed: int) -> None:
    """One full game through the Python API with uniformly random legal moves."""
    rng = random.Random(seed)
    game = Game(rules, seed=seed)
    while not game.is_over:
        game.apply(rng.choice(game.legal_moves()))
    game.result()


def play_game_ms(
    rules: RulesConfig, agent: Callable[[int], Agent], repeats: int, seconds: float, seed: int
) -> float:
    """Median ms per whole game through play_game between agents made by agent(seed)."""
    seeds = iter(range(seed, seed + 10**9))

    def run(n: int) -> object:
        for _ in range(n):
            game_seed = next(seeds)
            play_game(rules, [agent(game_seed * 8 + s) for s in range(rules.players)], game_seed)
        return None

    count = max(1, int(seconds / _time_one(run)))
    return 1e3 / _median_rate(run, count, repeats)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per figure (median)")
    parser.add_argument("--seconds", type=float, default=0.3, help="length of one timed run")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be >= 1 and --seconds > 0")

    rules = RulesConfig(players=PLAYERS)
    start = start_state(rules, args.seed)
    tricks_start = first_trick_state(rules, args.seed)
    seed = args.seed

    def core_run(n: int) -> object:
        return _core.random_games(start, n, seed)

    def round_run(n: int) -> object:
        return _core.random_round_tricks(tricks_start, n, seed)

    def tricks_run(n: int) -> object:
        return _core.random_tricks_from_piles(tricks_start, n, seed)

    py_seeds = iter(range(args.seed, args.seed + 10**9))

    def py_run(n: int) -> object:
        for _ in range(n):
            python_game(rules, next(py_seeds))
        return None

    rng_ns = calibration_ns(args.repeats, args.seconds, seed)
    core_rate = _median_rate(core_run, size_for(core_run, args.seconds), args.repeats)
    round_rate = _median_rate(round_run, size_for(round_run, args.seconds), args.repeats)
    tricks_rate = _median_rate(tricks_run, size_for(tricks_run, args.seconds), args.repeats)
    py_count = max(1, int(args.seconds * 2 / _time_one(py_run)))
    py_rate = _median_rate(py_run, py_count, args.repeats)
    random_ms = play_game_ms(rules, RandomAgent, args.repeats, args.seconds, seed)
    heuristic_ms = play_game_ms(rules, HeuristicAgent, args.repeats, args.seconds, seed)

    print(f"{PLAYERS} players, default rules; medians of {args.repeats} runs of ~{args.seconds:g} s")
    print(f"calibration       {rng_ns:10.2f} ns per rng call")
    print(f"core full games   {core_rate:12,.0f} games/s   ({1e9 / core_rate:7.0f} ns/game; "
          f"target >= {CORE_GAMES_TARGET:,.0f}: {'met' if core_rate >= CORE_GAMES_TARGET else 'NOT met'})")
    print(f"python full games {py_rate:12,.1f} games/s   ({1e3 / py_rate:7.2f} ms/game)")
    print(f"core / python     {core_rate / py_rate:12,.0f} x")
    for label, ms, target in (
        ("random   ", random_ms, RANDOM_GAME_MS_TARGET),
        ("heuristic", heuristic_ms, HEURISTIC_GAME_MS_TARGET),
    ):
        print(f"play_game {label} {ms:8.2f} ms/game   (4 {label.strip()} agents; target <= {target:g}: "
              f"{'met' if ms <= target else 'NOT met'})")
    tricks_ns = 1e9 / tricks_rate
    round_ns = 1e9 / round_rate
    print(f"round's tricks    {tricks_ns:10.1f} ns/round  (trick phase; target < {ROUND_NS_TARGET:g}: "
          f"{'met' if tricks_ns < ROUND_NS_TARGET else 'NOT met'})")
    print(f"round, old way    {round_ns:10.1f} ns/round  (State copy + tricks + end of round; "
          f"{'under' if round_ns < ROUND_NS_TARGET else 'NOT under'} {ROUND_NS_TARGET:g})")
    print(f"                  = {tricks_ns / rng_ns:.1f} / {round_ns / rng_ns:.1f} rng calls; "
          f"game = {1e9 / core_rate / rng_ns:.0f} rng calls")


def calibration_ns(repeats: int, seconds: float = 0.3, seed: int = 0) -> float:
    """Median ns per raw random number drawn in C: how fast this shared host runs right now,
    so that runs taken at different times (here and in bench_search.py) compare."""

    def rng_run(n: int) -> object:
        return _core.rng_calibrate(n, seed)

    return 1e9 / _median_rate(rng_run, size_for(rng_run, seconds), repeats)


def _time_one(run: Callable[[int], object]) -> float:
    start = time.process_time()
    run(1)
    return time.process_time() - start


if __name__ == "__main__":
    main()
