"""The zoo bots: legal whole games at every player count, side and star option; the same
seed replays the same game; each style shows, in the direction its name says, against
the heuristic on the same seeded deals; and the ``zoo:NAME`` specs of make_agent."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from functools import cache

import pytest
from gamegen import Checked, random_rules

from csl_ai.agents import (
    Agent,
    AgentSpecError,
    HeuristicAgent,
    ZOO_SPECS,
    make_agent,
    play_game,
)
from csl_ai.moves import Move
from csl_ai.notation import BLUE, card_colour
from csl_ai.rules import PLAYER_SPECS, Kind, RulesConfig, Side, StarOption
from csl_ai.zoo import ZOO_AGENTS

PLAYER_COUNTS = tuple(sorted(PLAYER_SPECS))
STYLE_DEALS = {4: 60, 5: 40}
"""Seeded deals per player count on which each style is compared with the heuristic."""
STYLE_SEED_BASE = 31_000


def test_zoo_specs_are_the_fixed_names() -> None:
    assert ZOO_SPECS == ("zoo:cautious", "zoo:leopards", "zoo:stars", "zoo:trumps", "zoo:bettor")


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_zoo_bots_play_legal_games_under_every_side_and_star_option(players: int) -> None:
    rng = random.Random(600 + players)
    sides_seen: set[tuple[Kind, Side]] = set()
    options_seen: set[StarOption] = set()
    for game_seed in range(10):
        rules = random_rules(rng, players)
        sides_seen.update(zip(Kind, rules.sides, strict=True))
        options_seen.add(rules.star_option)
        specs = [ZOO_SPECS[(game_seed + s) % len(ZOO_SPECS)] for s in range(players)]
        agents = [Checked(make_agent(spec, game_seed * 10 + s)) for s, spec in enumerate(specs)]
        game = play_game(rules, agents, 700 + game_seed)
        assert game.is_over
        assert (
            sum(len(a.moves) for a in agents)
            == (2 + rules.spec.hand_size) * players * rules.spec.rounds
        )
    assert sides_seen == {(kind, side) for kind in Kind for side in Side}
    assert options_seen == set(StarOption)


def test_same_seed_same_game() -> None:
    rules = RulesConfig(players=5, sides=(Side.B, Side.A, Side.B, Side.A))

    def moves() -> list[tuple[int, Move]]:
        out: list[tuple[int, Move]] = []
        agents = [make_agent(spec, seed=40 + s) for s, spec in enumerate(ZOO_SPECS)]
        play_game(rules, agents, 41, on_move=lambda _g, seat, move: out.append((seat, move)))
        return out

    assert moves() == moves()


# --- styles ------------------------------------------------------------------------------------


@dataclass
class Tally:
    """What one seat did over a set of games against heuristic bots."""

    games: int = 0
    rounds: int = 0
    wins: float = 0.0
    bets: int = 0
    stars: int = 0
    leopards: int = 0
    blue_places: list[float] = field(default_factory=list)
    """Per blue card played: its trick's place in its group, 0 first to 1 last."""

    @property
    def bet_rate(self) -> float:
        return self.bets / self.rounds

    @property
    def win_share(self) -> float:
        return self.wins / self.games

    @property
    def blue_place(self) -> float:
        return sum(self.blue_places) / len(self.blue_places)


@cache
def style_tally(spec: str, players: int) -> Tally:
    """spec at seat deal % players against heuristic bots, over STYLE_DEALS[players] deals."""
    rules = RulesConfig(players=players)
    deck = rules.game_deck.cards
    sizes = rules.spec.group_sizes
    tally = Tally()
    for deal in range(STYLE_DEALS[players]):
        seat = deal % players
        agents: list[Agent] = [HeuristicAgent(deal * 10 + s) for s in range(players)]
        agents[seat] = make_agent(spec, deal)
        game = play_game(rules, agents, STYLE_SEED_BASE + deal)
        tally.games += 1
        tally.wins += game.result().win_share(seat)
        for log in game.rounds:
            tally.rounds += 1
            tally.bets += bool(log.declarations[seat])
            for trick in log.tricks:
                if trick.winner == seat and trick.sky is not None:
                    card = deck[trick.sky]
                    tally.stars += card.kind is Kind.STAR
                    tally.leopards += card.count if card.kind is Kind.LEOPARD else 0
                first = sum(sizes[: trick.group])
                place = (trick.index - first) / (sizes[trick.group] - 1)
                tally.blue_places += [
                    place for s, c in trick.plays if s == seat and card_colour(c) == BLUE
                ]
    return tally


def test_bettor_declares_good_weather_far_more_often_than_the_heuristic() -> None:
    bettor, heuristic = style_tally("zoo:bettor", 4), style_tally("heuristic", 4)
    assert bettor.bet_rate >= 0.1
    assert bettor.bet_rate >= 3 * heuristic.bet_rate


def test_cautious_declares_good_weather_far_less_often_than_the_heuristic() -> None:
    cautious, heuristic = style_tally("zoo:cautious", 5), style_tally("heuristic", 5)
    assert heuristic.bet_rate >= 0.05
    assert cautious.bet_rate <= heuristic.bet_rate / 4


def test_star_hunter_wins_more_stars_than_the_heuristic() -> None:
    stars, heuristic = style_tally("zoo:stars", 4), style_tally("heuristic", 4)
    assert stars.stars >= 1.3 * heuristic.stars


def test_leopard_hunter_wins_more_leopards_than_the_heuristic() -> None:
    leopards, heuristic = style_tally("zoo:leopards", 4), style_tally("heuristic", 4)
    assert leopards.leopards >= 1.15 * heuristic.leopards


def test_trump_hoarder_plays_its_blues_later_in_their_group() -> None:
    trumps, heuristic = style_tally("zoo:trumps", 4), style_tally("heuristic", 4)
    assert min(len(trumps.blue_places), len(heuristic.blue_places)) >= 500
    assert trumps.blue_place >= heuristic.blue_place + 0.03


@pytest.mark.parametrize("spec", ZOO_SPECS)
def test_zoo_bots_are_sensible_against_three_heuristics(spec: str) -> None:
    """A fair share is 25%, random bots win about 5%; every style keeps well above that."""
    assert style_tally(spec, 4).win_share >= 0.1


# --- specs -------------------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ZOO_SPECS)
def test_make_agent_builds_each_zoo_bot(spec: str) -> None:
    agent = make_agent(f" {spec.upper()} ", seed=3)
    assert type(agent) is ZOO_AGENTS[spec.removeprefix("zoo:")]
    assert isinstance(agent, HeuristicAgent)
    assert isinstance(agent, Agent)
    assert agent.name == spec
    assert type(make_agent(agent.name)) is type(agent)


@pytest.mark.parametrize("spec", ["zoo:nope", "zoo", "zoo:", "zoo:stars,iters=5"])
def test_make_agent_names_the_zoo_on_an_unknown_bot(spec: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec)
    message = str(info.value)
    assert f"unknown zoo bot {spec!r}" in message
    assert all(name in message for name in ZOO_SPECS)


def test_unknown_agent_lists_the_zoo() -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent("nope")
    assert all(name in str(info.value) for name in ZOO_SPECS)
