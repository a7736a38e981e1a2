"""The PublicView a Game hands out, kept as the game goes, against the full replay.

`Game.observation` attaches a PublicView built from public state the game keeps
(issue 13, item 12); `_replay_public` rebuilds it from the observation's history with
every check. They must agree field by field at every decision of every kind of game,
and an observation must stay a snapshot while the game goes on.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from csl_ai import _core
from csl_ai.agents import HeuristicAgent, play_game
from csl_ai.errors import InvalidPositionError
from csl_ai.game import Game, Observation, Phase, PublicView
from csl_ai.observation import _replay_public
from csl_ai.rules import RulesConfig
from gamegen import random_rules, step

GAMES_PER_PLAYER_COUNT = 12
"""Random games per player count in the property test (48 games, every seat at every decision)."""

CORE_FIELDS = (
    "phase", "round", "first_player", "to_move", "group", "trick_in_group", "line_pos",
    "leader", "last_winner", "led_colour", "trick_cards", "line", "allocated_mask",
    "declared_mask", "weather_done_mask", "sky_order", "hands", "piles", "set_aside",
    "played", "round_won", "elements", "faceup_cards", "facedown_cards", "good_weather",
)  # fmt: skip
"""The CoreState accessors that describe a game's progress and cards."""


def core_fields(core: _core.CoreState) -> dict[str, Any]:
    fields = {name: getattr(core, name) for name in CORE_FIELDS}
    fields["scores"] = core.scores()
    fields["legal_plays"] = core.legal_plays()
    return fields


def view_fields(view: PublicView) -> dict[str, Any]:
    return {
        "core": core_fields(view.core),
        "hidden_counts": view.hidden_counts,
        "voids": view.voids,
        "unseen": view.unseen,
        "unseen_sky": view.unseen_sky,
    }


def replayed(obs: Observation) -> PublicView:
    """The view `_replay_public` builds from a fresh copy of obs (no view attached)."""
    fresh = Observation(obs.rules, obs.seat, obs.rounds, obs.over, obs.pending)
    assert "_view" not in fresh.__dict__
    return _replay_public(fresh)


def check_view(game: Game, seat: int) -> Observation:
    """seat's observation carries a ready view equal, field by field, to the replay's."""
    obs = game.observation(seat)
    assert "_view" in obs.__dict__
    kept, replay = obs.public_view(), replayed(obs)
    assert view_fields(kept) == view_fields(replay)
    assert kept.core == replay.core
    if seat in game.pending_seats():
        assert obs.legal_moves() == game.legal_moves(seat)
    return obs


def snapshot(obs: Observation) -> tuple[str, dict[str, Any], bytes]:
    view = obs.public_view()
    return repr(obs), view_fields(view), view.core.to_bytes()


@pytest.mark.parametrize("players", (2, 3, 4, 5))
def test_kept_view_equals_replay_at_every_decision(players: int) -> None:
    """Over random games with random sides, star option and first seat: at every decision
    every seat's kept view equals the replayed one; sometimes the game is copied mid-way
    (the copy starts its kept state afresh). Observations taken along the way are
    unchanged at the end."""
    for k in range(GAMES_PER_PLAYER_COUNT):
        seed = players * 1000 + k
        rng = random.Random(seed)
        game = Game(random_rules(rng, players), seed=seed)
        taken: list[tuple[Observation, tuple[str, dict[str, Any], bytes]]] = []
        while not game.is_over:
            for seat in range(players):
                obs = check_view(game, seat)
                if rng.random() < 0.05:
                    taken.append((obs, snapshot(obs)))
            if rng.random() < 0.02:
                game = game.copy()
            step(game, rng)
        for seat in range(players):
            check_view(game, seat)
        for obs, before in taken:
            assert snapshot(obs) == before


def test_heuristic_game_views_equal_replay() -> None:
    """Views handed to agents in play_game (a heuristic 4-player game) equal the replay's."""
    checked = []

    def on_move(game: Game, seat: int, move: object) -> None:
        if not game.is_over:
            checked.append(check_view(game, game.to_move if game.to_move >= 0 else 0))

    play_game(RulesConfig(players=4), [HeuristicAgent(s) for s in range(4)], 7, on_move)
    assert len(checked) > 100


def test_no_ready_view_while_waiting_for_a_deal() -> None:
    """Without auto_deal, a game between rounds has no current round: the observation
    carries no view, and asking for one fails as the replay always did."""
    game = Game(RulesConfig(players=3), seed=5, auto_deal=False)
    obs = game.observation(0)
    assert "_view" not in obs.__dict__
    with pytest.raises(InvalidPositionError):
        obs.public_view()
    game.deal()
    rng = random.Random(5)
    while game.phase is not Phase.DEAL:
        check_view(game, rng.randrange(3))
        step(game, rng)
    obs = game.observation(1)
    assert "_view" not in obs.__dict__
    with pytest.raises(InvalidPositionError):
        obs.public_view()
    game.deal()
    for seat in range(3):
        check_view(game, seat)
