"""Shared test inputs: random legal games, and damaged JSON for the records and positions fuzzers."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from csl_ai.game import Game
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
