"""The style bots (csl_ai.style): specs, saved styles, legal play under any style, and
worths that follow the scoring (the third star hunted and denied)."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csl_ai import style as style_mod
from csl_ai.agents import AgentSpecError, make_agent, play_game
from csl_ai.game import Game, Phase
from csl_ai.rules import Kind, RulesConfig, Side, StarOption
from csl_ai.style import (
    DEFAULT_STYLE,
    STYLE_SPACE,
    StyleAgent,
    StyleError,
    parse_style,
    save_style,
    style_of,
    style_spec,
)


def test_spec_round_trip_and_defaults() -> None:
    params = {"stars": 2.5, "deny": 1.25, "bet": -3.0}
    style = parse_style(style_spec(params).partition(":")[2])
    assert style == style_of(params)
    assert style.candy == DEFAULT_STYLE.candy
    assert parse_style("") == DEFAULT_STYLE
    assert isinstance(make_agent("style:stars=3,deny=0.5", 1), StyleAgent)
    assert make_agent("style", 1).style == DEFAULT_STYLE


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("style:colour=1", "unknown style knob 'colour'"),
        ("style:stars=99", "outside"),
        ("style:stars=x", "not a number"),
        ("style:stars", "no saved style 'stars'"),
        ("style:stars=1,stars=2", "given twice"),
        ("style:Bad/Name", "style name"),
    ],
)
def test_bad_specs_are_one_line_errors(spec: str, words: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec, 0)
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_style_of_checks_every_knob() -> None:
    """The library call behind the specs and the exploiter study raises StyleError."""
    for params, words in (({"colour": 1.0}, "unknown style knob"), ({"stars": True}, "must be a number"),
                          ({"stars": float("nan")}, "must be a number"), ({"stars": 99.0}, "outside")):
        with pytest.raises(StyleError, match=words):
            style_of(params)


def test_saved_style_round_trip(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(style_mod, "STYLES_DIR", tmp_path)
    path = save_style("hunter", {"stars": 3.0, "star_hope": 0.6}, {"win_share": 0.3})
    data = json.loads(path.read_text())
    assert data["format"] == "csl-style" and data["meta"] == {"win_share": 0.3}
    agent = make_agent("style:hunter", 5)
    assert isinstance(agent, StyleAgent) and agent.style.stars == 3.0
    assert style_mod.saved_styles() == ("hunter",)
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(AgentSpecError, match="not a style file"):
        make_agent("style:broken", 0)
    (tmp_path / "wrong.json").write_text(json.dumps({"format": "csl-style", "version": 1, "style": {"x": 1}}))
    with pytest.raises(AgentSpecError, match="unknown style knob"):
        make_agent("style:wrong", 0)


def test_shipped_styles_load() -> None:
    for name in style_mod.saved_styles():
        assert isinstance(make_agent(f"style:{name}", 0), StyleAgent)


_KNOBS = st.fixed_dictionaries({name: st.floats(low, high) for name, (low, high) in STYLE_SPACE.items()})


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params=_KNOBS, players=st.integers(2, 5), seed=st.integers(0, 2**31), sides=st.lists(st.sampled_from(list(Side)), min_size=4, max_size=4))
def test_any_style_plays_whole_legal_games(params, players, seed, sides) -> None:
    rules = RulesConfig(players=players, sides=tuple(sides), star_option=random.Random(seed).choice(list(StarOption)))
    agents = [StyleAgent(style_of(params), seed + k) for k in range(players)]
    game = play_game(rules, agents, seed=seed)
    assert game.is_over


def test_the_default_style_beats_random_players() -> None:
    share = 0.0
    games = 24
    for s in range(games):
        agents = [make_agent("style" if k == s % 4 else "random", 10 * s + k) for k in range(4)]
        share += play_game(RulesConfig(players=4), agents, seed=s).result().win_share(s % 4)
    assert share / games > 0.5


def _first_play_observation(rules: RulesConfig, seed: int):
    """A game at its first card play, every seat allocated and declared by the default style."""
    game = Game(rules, seed=seed)
    agents = [StyleAgent(DEFAULT_STYLE, k) for k in range(rules.players)]
    while game.phase is not Phase.PLAY:
        seat = game.to_move
        game.apply(agents[seat].act(game.observation(seat)), seat)
    return game


def _with_elements(agent: StyleAgent, rows: list[list[int]]) -> None:
    """Make the agent see these face-up elements per seat (a test's view of the tallies)."""
    original = agent._tallies

    def tallies(obs):
        _, won, declared = original(obs)
        return [list(r) for r in rows], won, [False] * len(won)

    agent._tallies = tallies  # type: ignore[method-assign]


def test_the_third_star_is_hunted_and_denied() -> None:
    rules = RulesConfig(players=3, sides=(Side.A, Side.A, Side.A, Side.B))
    game = _first_play_observation(rules, 3)
    obs = game.observation(0)
    deck = rules.game_deck.cards
    star = next(i for i, card in enumerate(deck) if card.kind is Kind.STAR)
    hunter = StyleAgent(style_of({"deny": 0.0}), 0)
    _with_elements(hunter, [[0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert hunter._worths(obs, [star])[star] >= style_mod.OUTRIGHT_POINTS * 0.9
    blocker = StyleAgent(style_of({"deny": 1.0}), 0)
    _with_elements(blocker, [[0, 0, 0, 0], [0, 0, 0, 2], [0, 0, 0, 0]])
    idle = StyleAgent(style_of({"deny": 0.0}), 0)
    _with_elements(idle, [[0, 0, 0, 0], [0, 0, 0, 2], [0, 0, 0, 0]])
    assert blocker._worths(obs, [star])[star] - idle._worths(obs, [star])[star] >= style_mod.OUTRIGHT_POINTS * 0.9


def test_a_second_star_costs_when_three_are_out_of_reach() -> None:
    rules = RulesConfig(players=3)
    game = _first_play_observation(rules, 4)
    obs = game.observation(0)
    star = next(i for i, card in enumerate(rules.game_deck.cards) if card.kind is Kind.STAR)
    agent = StyleAgent(style_of({"deny": 0.0}), 0)
    _with_elements(agent, [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    assert agent._worths(obs, [star])[star] < 0
