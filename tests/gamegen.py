"""Shared test helpers: random legal games, damaged JSON for the records and positions fuzzers,
and the chi-square tail for the frequency tests."""

from __future__ import annotations

import math
import random
from typing import Any

from hypothesis import strategies as st

from csl_ai.agents import Agent
from csl_ai.game import Game, Observation
from csl_ai.moves import Move
from csl_ai.rules import RulesConfig, Side, StarOption

PLAYERS = (2, 3, 4, 5)


def random_rules(rng: random.Random, players: int) -> RulesConfig:
    """Rules with random sides, star option and first seat."""
    return RulesConfig(
        players=players,
        sides=tuple(rng.choice((Side.A, Side.B)) for _ in range(4)),  # type: ignore[arg-type]
        star_option=rng.choice(list(StarOption)),
        first_seat=rng.randrange(players),
    )


def step(game: Game, rng: random.Random) -> None:
    """One random legal move by a random seat that may move now."""
    seat = rng.choice(game.pending_seats())
    game.apply(rng.choice(game.legal_moves(seat)), seat)


def drive(players: int, seed: int, stop: int) -> Game:
    """A default-rules game driven by random legal moves for `stop` decisions (or until over)."""
    game = Game(RulesConfig(players=players), seed=seed)
    rng = random.Random(seed)
    for _ in range(stop):
        if game.is_over:
            break
        step(game, rng)
    return game


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (keys and indexes) into a JSON value, the root included."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(json_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for k, item in enumerate(value):
            out.extend(json_paths(item, (*prefix, k)))
    return out


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "B7", "R12", "G1 B2", "C1", "*", "B1 R1 G1 | B2 R2 G2 | B3 R3 G3", "x"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "leader", "plays"]), inner, max_size=3)
    ),
    max_leaves=8,
)
"""Small JSON values to put in place of a record's or position's node."""


def chi_square_p(stat: float, dof: int) -> float:
    """Upper tail of the chi-square distribution: Q(dof/2, stat/2) (series / continued fraction)."""
    a, x = dof / 2.0, stat / 2.0
    if x <= 0:
        return 1.0
    gln = math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return 1.0 - total * math.exp(-x + a * math.log(x) - gln)
    b = x + 1 - a
    c = 1.0 / 1e-300
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = 1e-300 if abs(d) < 1e-300 else d
        c = b + an / c
        c = 1e-300 if abs(c) < 1e-300 else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return math.exp(-x + a * math.log(x) - gln) * h


class Checked:
    """Wraps an agent: asserts every move is among obs.legal_moves(), records the moves."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = agent.name
        self.moves: list[Move] = []

    def act(self, obs: Observation) -> Move:
        move = self.agent.act(obs)
        assert move in obs.legal_moves(), f"{self.name} chose {move} not among the legal moves"
        self.moves.append(move)
        return move
