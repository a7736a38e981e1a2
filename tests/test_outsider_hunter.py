"""The hunter outsider: legal and reproducible at every player count and scoring, exact
scores at the end of a game, and its key decisions on hand-built 2-player deals."""

from __future__ import annotations

import pytest

from csl_ai.agents import RandomAgent, play_game
from csl_ai.game import Game
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import parse_card, parse_cards
from csl_ai.outsiders.hunter import HunterAgent
from csl_ai.rules import RulesConfig, Side, StarOption

A, B = Side.A, Side.B
SIDE_SETS = [(A, A, A, A), (B, B, B, B), (A, B, A, B), (B, A, B, A)]

CANDY, LEOPARD_X2, STAR = 0, 30, 33
"""Sky card ids in the default deck: the first single candy, double leopard, star."""


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("sides", SIDE_SETS, ids=["AAAA", "BBBB", "ABAB", "BABA"])
def test_plays_legal_games(players: int, sides: tuple[Side, Side, Side, Side]) -> None:
    option = StarOption.DOUBLE if sides[0] is B else StarOption.TWICE
    rules = RulesConfig(players=players, sides=sides, star_option=option)
    agents = [HunterAgent(seed=s) if s % 2 == 0 else RandomAgent(seed=s) for s in range(players)]
    game = play_game(rules, agents, seed=players * 100 + sides.count(B))
    assert game.is_over


def test_seeded_bot_replays_the_same_game() -> None:
    rules = RulesConfig(players=4, sides=(A, B, B, A))

    def moves() -> list[tuple[int, Move]]:
        record: list[tuple[int, Move]] = []
        agents = [HunterAgent(seed=7 + s) for s in range(4)]
        play_game(rules, agents, seed=42, on_move=lambda g, seat, m: record.append((seat, m)))
        return record

    assert moves() == moves()


@pytest.mark.parametrize("players", [2, 4, 5])
def test_plan_values_are_exact_scores_at_the_end(players: int) -> None:
    rules = RulesConfig(players=players, sides=(B, A, B, A))
    agents = [HunterAgent(seed=s) for s in range(players)]
    game = play_game(rules, agents, seed=3)
    bot = agents[0]
    tables = bot._rules(rules)
    values = tables.scorer.values(bot._board(game.observation(0), tables))
    assert values == pytest.approx([line.total for line in game.result().scores])


def _two_player_deal(
    line: list[int], hunter: list[str], other: list[str], sides: tuple[Side, ...] = (A, A, A, A)
) -> Game:
    """A 2-player game whose first line and piles are given; the hunter sits at seat 0 and
    leads, nobody bets good weather."""
    order = line + [s for s in range(36) if s not in line]
    rules = RulesConfig(players=2, sides=sides)  # type: ignore[arg-type]
    game = Game(rules, sky_order=order, auto_deal=False)
    piles = [tuple(parse_cards(p) for p in hunter), tuple(parse_cards(p) for p in other)]
    game.deal([sum(p) for p in piles])
    for seat in (0, 1):
        game.apply(Allocate(piles[seat]), seat)
    for seat in (0, 1):
        game.apply(Declare(False), seat)
    return game


def _play(game: Game, cards: str) -> None:
    for card in cards.split():
        game.apply(Play(parse_card(card)), game.to_move)


def test_blocks_the_third_star_on_side_b() -> None:
    game = _two_player_deal(
        [STAR, STAR + 1, CANDY, STAR + 2, 1, 2, 3, 4, 5],
        ["G1 G3 G4", "R1 R5 G2", "R4 G5 G6"],
        ["B4 B5 B6", "B1 B2 R3", "B3 R2 R6"],
        sides=(A, A, A, B),
    )
    _play(game, "G1 B4 B5 G3 B6 G4 R3")
    assert HunterAgent(seed=1).act(game.observation(0)) == Play(parse_card("R5"))


def test_ducks_a_second_star_when_the_third_is_out_of_reach() -> None:
    game = _two_player_deal(
        [STAR, STAR + 1, CANDY, STAR + 2, 1, 2, 3, 4, 5],
        ["B6 G1 G3", "R1 R5 G2", "R4 G5 G6"],
        ["B4 B5 G4", "B1 B2 R3", "B3 R2 R6"],
        sides=(A, A, A, B),
    )
    _play(game, "B6 B4 G1 G4 B5 G3 R3")
    assert HunterAgent(seed=1).act(game.observation(0)) == Play(parse_card("R1"))


def test_takes_a_rich_trick_with_its_cheapest_winner() -> None:
    game = _two_player_deal(
        [CANDY, 1, 2, LEOPARD_X2, LEOPARD_X2 + 1, LEOPARD_X2 + 2, 3, 4, 5],
        ["G1 G3 G4", "R1 R5 R6", "R4 G5 G6"],
        ["B4 B5 B6", "B1 B2 R3", "B3 R2 G2"],
    )
    _play(game, "G1 B4 B5 G3 B6 G4 R3")
    assert HunterAgent(seed=1).act(game.observation(0)) == Play(parse_card("R5"))


def test_allocation_sends_its_trumps_to_the_group_it_needs() -> None:
    line = [CANDY, 1, 2, 3, 4, 5, LEOPARD_X2, LEOPARD_X2 + 1, LEOPARD_X2 + 2]
    order = line + [s for s in range(36) if s not in line]
    game = Game(RulesConfig(players=2), sky_order=order, auto_deal=False)
    hunter = parse_cards("B4 B5 B6 R1 R2 R3 G1 G2 G3")
    game.deal([hunter, parse_cards("B1 B2 B3 R4 R5 R6 G4 G5 G6")])
    move = HunterAgent(seed=1).act(game.observation(0))
    assert isinstance(move, Allocate)
    assert move.piles[2] == parse_cards("B4 B5 B6")
