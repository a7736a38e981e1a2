"""Random legal games for tests: random rules choices and one random legal move at a time."""

from __future__ import annotations

import random

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
