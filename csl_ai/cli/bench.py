"""`csl bench`: the core and search speed figures, as medians of repeated measurements.

Quick by default (a few seconds); ``--full`` measures longer for steadier medians. The
search positions are fixed (seeded games stopped at set decisions) and searched with a
fixed seed and iteration budget, so their node counts repeat from run to run.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from csl_ai import _core
from csl_ai.game import Game, Observation, Phase, new_core
from csl_ai.rules import RulesConfig


@dataclass(frozen=True)
class Figure:
    """One benchmark result: the median over repeats, and every sample."""

    name: str
    unit: str
    median: float
    samples: tuple[float, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "unit": self.unit,
            "median": self.median,
            "samples": list(self.samples),
        }


@dataclass(frozen=True)
class BenchSize:
    """How much work each measurement does."""

    games: int
    rounds: int
    api_games: int
    search_iterations: int
    repeats: int


QUICK: Final = BenchSize(
    games=50_000, rounds=300_000, api_games=10, search_iterations=2_000, repeats=3
)
FULL: Final = BenchSize(
    games=1_000_000, rounds=5_000_000, api_games=100, search_iterations=20_000, repeats=5
)


def _samples(run: Callable[[], float], repeats: int) -> tuple[float, ...]:
    return tuple(run() for _ in range(repeats))


def _figure(name: str, unit: str, samples: tuple[float, ...]) -> Figure:
    return Figure(name, unit, statistics.median(samples), samples)


def start_of_game(players: int, seed: int = 1) -> _core.CoreState:
    """A core state before the first deal, with a seeded sky order."""
    rules = RulesConfig(players=players)
    order = list(range(len(rules.game_deck.cards)))
    random.Random(seed).shuffle(order)
    return new_core(rules, order)


def start_of_tricks(players: int, seed: int = 1) -> _core.CoreState:
    """A core state at the first trick of round 1, piles and bets chosen at random."""
    game = Game(RulesConfig(players=players), seed=seed)
    rng = random.Random(seed)
    while game.phase is not Phase.PLAY:
        seat = game.to_move
        game.apply(rng.choice(game.legal_moves(seat)), seat)
    return game.core


def core_games(players: int, games: int, repeats: int) -> Figure:
    """Full random games per second in the C core (one thread)."""
    start = start_of_game(players)

    def run() -> float:
        t = time.perf_counter()
        _core.random_games(start, games, 12345)
        return games / (time.perf_counter() - t)

    return _figure(f"core random games {players}p", "games/s", _samples(run, repeats))


def core_round_tricks(players: int, rounds: int, repeats: int) -> Figure:
    """Nanoseconds for the trick phase of one round with random legal plays, in the core."""
    start = start_of_tricks(players)

    def run() -> float:
        t = time.perf_counter()
        _core.random_round_tricks(start, rounds, 12345)
        return (time.perf_counter() - t) / rounds * 1e9

    return _figure(f"core round of tricks {players}p", "ns/round", _samples(run, repeats))


def api_games(players: int, games: int, repeats: int) -> Figure:
    """Full random games per second through the Python `Game` API."""
    rules = RulesConfig(players=players)

    def run() -> float:
        rng = random.Random(7)
        t = time.perf_counter()
        for i in range(games):
            game = Game(rules, seed=i)
            while not game.is_over:
                seat = game.to_move
                game.apply(rng.choice(game.legal_moves(seat)), seat)
        return games / (time.perf_counter() - t)

    return _figure(f"Python API random games {players}p", "games/s", _samples(run, repeats))


def bench_positions() -> list[tuple[str, Observation]]:
    """Fixed decision points: a 4-player first lead, a 3-player allocation, a 5-player play."""
    positions = []
    for label, players, seed, phase, plays in (
        ("4p first lead", 4, 11, Phase.PLAY, 0),
        ("3p allocation", 3, 12, Phase.ALLOCATE, 0),
        ("5p trick 4", 5, 13, Phase.PLAY, 3 * 5 + 2),
    ):
        game = Game(RulesConfig(players=players), seed=seed)
        rng = random.Random(seed)
        played = 0
        while game.phase is not phase or (phase is Phase.PLAY and played < plays):
            seat = game.to_move
            if game.phase is Phase.PLAY:
                played += 1
            game.apply(rng.choice(game.legal_moves(seat)), seat)
        positions.append((label, game.observation(game.to_move)))
    return positions


def search_speed(iterations: int, repeats: int, threads: int = 1) -> list[Figure]:
    """Search iterations per second at each fixed position (fixed seed and budget)."""
    from csl_ai.search import SearchConfig, SearchLimit, search

    config = SearchConfig(search_forced=True)

    figures = []
    for label, obs in bench_positions():

        def run(obs: Observation = obs) -> float:
            t = time.perf_counter()
            limit = SearchLimit(iterations=iterations, threads=threads, seed=1)
            result = search(obs, limit, config)
            return result.iterations / (time.perf_counter() - t)

        figures.append(_figure(f"search {label}", "iterations/s", _samples(run, repeats)))
    return figures


def run_bench(size: BenchSize, include_search: bool = True, threads: int = 1) -> list[Figure]:
    """Every figure `csl bench` prints, in order."""
    figures = [
        core_games(4, size.games, size.repeats),
        core_round_tricks(4, size.rounds, size.repeats),
        api_games(4, size.api_games, size.repeats),
    ]
    if include_search:
        figures.extend(search_speed(size.search_iterations, size.repeats, threads))
    return figures


def speed_ratio(figures: list[Figure]) -> float | None:
    """Core over Python API games per second, when both were measured."""
    core = next((f for f in figures if f.name.startswith("core random games")), None)
    api = next((f for f in figures if f.name.startswith("Python API random games")), None)
    if core is None or api is None or api.median <= 0:
        return None
    return core.median / api.median
