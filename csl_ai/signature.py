"""The bench signature: one number that pins what the search does.

A fixed set of seeded searches (2-5 players, several side combinations and both star
options, every kind of decision, in the first round and a later one) and seeded games
between a small search and the heuristic agent. Each search's chosen move, node count and
root visits, and each game's moves, are hashed into one 64-bit number. A refactoring keeps
it; a change of play changes it, and its commit says so and gives the new one (as
Stockfish's `bench` node count does).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

from csl_ai.agents import make_agent
from csl_ai.game import Game, Observation, Phase
from csl_ai.moves import move_to_json
from csl_ai.rules import RulesConfig, StarOption, parse_sides
from csl_ai.search import SearchConfig, SearchLimit, search

SIGNATURE_ITERATIONS = 4000
"""Iterations of each signature ISMCTS search (one thread, seeded)."""

PIMC_ITERATIONS = 300
"""Playouts of each signature PIMC search."""

SETUPS: tuple[tuple[int, str, StarOption, int], ...] = (
    (2, "candy=A,spider=A,leopard=A,star=A", StarOption.TWICE, 101),
    (2, "candy=B,spider=B,leopard=B,star=B", StarOption.TWICE, 102),
    (3, "candy=A,spider=A,leopard=A,star=A", StarOption.DOUBLE, 103),
    (3, "candy=B,spider=A,leopard=B,star=A", StarOption.TWICE, 104),
    (4, "candy=A,spider=A,leopard=A,star=A", StarOption.TWICE, 105),
    (4, "candy=B,spider=B,leopard=B,star=B", StarOption.TWICE, 106),
    (4, "candy=A,spider=B,leopard=A,star=B", StarOption.DOUBLE, 107),
    (5, "candy=B,spider=A,leopard=A,star=B", StarOption.TWICE, 108),
    (5, "candy=A,spider=A,leopard=A,star=A", StarOption.TWICE, 109),
)
"""(players, sides, star option, seed) of each signature deal."""

GAMES: tuple[tuple[int, str, int], ...] = (
    (2, "candy=A,spider=B,leopard=A,star=A", 201),
    (3, "candy=A,spider=A,leopard=A,star=A", 202),
    (4, "candy=B,spider=A,leopard=B,star=B", 203),
    (5, "candy=A,spider=A,leopard=B,star=A", 204),
)
"""(players, sides, seed) of each signature game: seat 0 searches (ismcts:iters=300),
the others are heuristic agents."""

GAME_AGENT = "ismcts:iters=300"


@dataclass(frozen=True)
class Signature:
    """The signature and what went into it."""

    value: int
    searches: int
    games: int
    nodes: int
    elapsed_s: float

    @property
    def hex(self) -> str:
        return f"{self.value:016x}"


def _decision_points(players: int, sides: str, star: StarOption, seed: int) -> Iterator[Observation]:
    """From a game of heuristic agents: in round 1 and round 2, the first allocation, the
    first weather bet and the card plays at the round's first and fifth trick."""
    rules = RulesConfig(players=players, sides=parse_sides(sides), star_option=star)
    game = Game(rules, seed=seed)
    agents = [make_agent("heuristic", seed * 10 + s) for s in range(players)]
    seen: set[tuple[int, str, int]] = set()
    while not game.is_over:
        seat = game.to_move
        obs = game.observation(seat)
        round_number = len(obs.rounds)
        if round_number > 2:
            return
        phase = game.phase
        trick = len(obs.current.tricks) if phase is Phase.PLAY else 0
        key = (round_number, phase.value, trick)
        if phase is not Phase.DEAL and trick in (0, 1, 5) and key not in seen:
            if phase is not Phase.PLAY or trick != 1:
                seen.add(key)
                yield obs
        game.apply(agents[seat].act(obs), seat)


def _search_record(obs: Observation, config: SearchConfig, iterations: int) -> tuple[dict[str, object], int]:
    result = search(obs, SearchLimit(iterations=iterations, threads=1, seed=7), config)
    record = {
        "best": move_to_json(result.best_move),
        "nodes": result.nodes,
        "iterations": result.iterations,
        "visits": [[move_to_json(m.move), m.visits] for m in result.moves],
    }
    return record, result.nodes


def _game_record(players: int, sides: str, seed: int) -> list[object]:
    rules = RulesConfig(players=players, sides=parse_sides(sides))
    game = Game(rules, seed=seed)
    agents = [make_agent(GAME_AGENT if s == 0 else "heuristic", seed * 10 + s) for s in range(players)]
    moves: list[object] = []
    while not game.is_over:
        seat = game.to_move
        move = agents[seat].act(game.observation(seat))
        moves.append([seat, move_to_json(move)])
        game.apply(move, seat)
    moves.append([list(row) for row in game.core.scores()])
    return moves


def bench_signature(include_games: bool = True) -> Signature:
    """Run every signature search (and game) and hash what they chose."""
    start = time.perf_counter()
    configs = (
        (SearchConfig(search_forced=True), SIGNATURE_ITERATIONS),
        (SearchConfig(search_forced=True, algorithm="pimc"), PIMC_ITERATIONS),
    )
    digest = hashlib.sha256()
    searches = nodes = 0
    for players, sides, star, seed in SETUPS:
        for obs in _decision_points(players, sides, star, seed):
            for config, iterations in configs:
                record, n = _search_record(obs, config, iterations)
                digest.update(json.dumps(record, sort_keys=True).encode())
                searches += 1
                nodes += n
    games = 0
    if include_games:
        for players, sides, seed in GAMES:
            digest.update(json.dumps(_game_record(players, sides, seed)).encode())
            games += 1
    value = int.from_bytes(digest.digest()[:8], "big")
    return Signature(value, searches, games, nodes, time.perf_counter() - start)
