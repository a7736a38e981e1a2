"""The counter outsider: legal in every player count and many sides, seeded replays, and
worked examples of its key decisions."""

from __future__ import annotations

import random

import pytest

from csl_ai.agents import RandomAgent, play_game
from csl_ai.game import Game
from csl_ai.moves import Allocate, Declare, Play
from csl_ai.notation import parse_card, parse_cards
from csl_ai.outsiders.counter import CounterAgent, exact_scores
from csl_ai.rules import RulesConfig, Side, StarOption
from csl_ai.scoring import score_tallies

A, B = Side.A, Side.B
SIDES = [(A, A, A, A), (B, B, B, B), (A, B, A, B), (B, A, B, A), (B, B, A, A), (A, A, B, B)]


def _rules(players: int, i: int) -> RulesConfig:
    star = StarOption.DOUBLE if i % 2 else StarOption.TWICE
    return RulesConfig(players=players, sides=SIDES[i % len(SIDES)], star_option=star)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_plays_legal_games(players: int) -> None:
    for i in range(4):
        agents = [CounterAgent(seed=i * 10 + s) if s % 2 == 0 else RandomAgent(seed=s)
                  for s in range(players)]
        game = play_game(_rules(players, i + players), agents, seed=100 * players + i)
        assert game.is_over


def test_seeded_bot_replays_the_same_game() -> None:
    rules = _rules(4, 1)
    moves: list[list[str]] = []
    for _ in range(2):
        log: list[str] = []
        play_game(rules, [CounterAgent(seed=s) for s in range(4)], seed=7,
                  on_move=lambda g, seat, move: log.append(f"{seat}:{move}"))
        moves.append(log)
    assert moves[0] == moves[1]


def test_exact_scores_match_the_engine() -> None:
    rng = random.Random(3)
    for i in range(200):
        rules = _rules(rng.choice([2, 3, 4, 5]), i)
        n = rules.players
        stars = [0] * n
        for _ in range(rng.randint(0, 3)):
            stars[rng.randrange(n)] += 1
        rows = [[rng.randint(0, 3), rng.randint(0, 3), rng.randint(0, 2), stars[s]] for s in range(n)]
        faceup = [sum(r) for r in rows]
        down = [rng.randint(0, 1) for _ in range(n)]
        weather = [rng.randint(0, 1) for _ in range(n)]
        if sum(faceup) + sum(down) > rules.spec.sky_cards_used:
            continue
        result = score_tallies(rules, rows, faceup, down, weather)
        mine = exact_scores(rules, rows, down, weather)
        for s in range(n):
            if result.outright is None:
                assert mine[s] == result.scores[s].total


def _deal(hands: list[str], line: list[int], first: int = 0) -> Game:
    """A 4-player game whose first round is dealt with these hands and this line start."""
    rules = RulesConfig(players=4, first_seat=first)
    order = line + [i for i in range(36) if i not in line]
    game = Game(rules, seed=1, sky_order=order, auto_deal=False)
    game.deal([parse_cards(h) for h in hands])
    return game


HANDS = [
    "R5 R1 G1 B1 R9 G9 B2 R10 G10",
    "R7 R4 G4 B3 R11 G11 B4 B5 G12",
    "R2 R3 G2 B6 G5 B7 B8 B9 G6",
    "R8 R12 G3 R6 G7 B10 B11 B12 G8",
]
LEOPARD_2 = 30
"""Sky card id of a double leopard in the default deck (ids 30-32)."""


def _first_trick(declare_last: bool) -> Game:
    """Seats 0-2 have played R5, R7, R2 to the first trick (a double leopard); seat 3,
    last to play, holds R6 R8 R12 for this group and must follow red."""
    game = _deal(HANDS, [LEOPARD_2, 31, 32, 0, 1, 2, 11, 12, 13])
    for seat, hand in enumerate(HANDS):
        cards = hand.split()
        piles = [parse_cards(" ".join(cards[k:k + 3])) for k in (0, 3, 6)]
        if seat == 3:
            piles = [parse_cards("R6 R8 R12"), parse_cards("G3 G7 B10"), parse_cards("B11 B12 G8")]
        game.apply(Allocate(tuple(piles)), seat)
    for seat in range(4):
        game.apply(Declare(declare_last and seat == 3), seat)
    for card in ("R5", "R7", "R2"):
        game.apply(Play(parse_card(card)))
    return game


def test_takes_a_valuable_trick_with_the_cheapest_sure_winner() -> None:
    game = _first_trick(declare_last=False)
    assert CounterAgent(seed=0).act(game.observation(3)) == Play(parse_card("R8"))


def test_ducks_a_trick_that_would_break_its_good_weather_bet() -> None:
    game = _first_trick(declare_last=True)
    assert CounterAgent(seed=0).act(game.observation(3)) == Play(parse_card("R6"))


def _round_for(seat: int, hand: str, line: list[int]) -> Game:
    """A first round where seat holds hand and the others share the rest in card order."""
    mine = parse_cards(hand)
    rest = [c for c in range(36) if not mine >> c & 1]
    hands: list[str] = []
    for s in range(4):
        if s == seat:
            hands.append(hand)
        else:
            cards, rest = rest[:9], rest[9:]
            hands.append(" ".join(f"{'BRG'[c // 12]}{c % 12 + 1}" for c in cards))
    return _deal(hands, line)


def test_allocation_puts_its_trumps_on_the_richest_group() -> None:
    game = _round_for(0, "B12 B11 B10 R1 R2 R3 G1 G2 G3", [0, 1, 2, 3, 4, 5, 30, 31, 32])
    move = CounterAgent(seed=0).act(game.observation(0))
    assert isinstance(move, Allocate)
    assert move.piles[2] == parse_cards("B10 B11 B12")


@pytest.mark.parametrize(("hand", "bet"), [
    ("R1 R2 R3 R4 R5 G1 G2 G3 G4", True),
    ("B12 B11 B10 B9 R12 G12 R1 G1 B1", False),
])
def test_bets_good_weather_only_with_a_hand_that_can_lose_every_trick(hand: str, bet: bool) -> None:
    game = _round_for(1, hand, [0, 11, 22, 1, 12, 23, 2, 13, 24])
    agent = CounterAgent(seed=0)
    for seat in range(4):
        move = agent.act(game.observation(1)) if seat == 1 else RandomAgent(seat).act(game.observation(seat))
        game.apply(move, seat)
    assert agent.act(game.observation(1)) == Declare(bet)
