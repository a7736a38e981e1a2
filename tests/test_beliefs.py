"""Beliefs about the other seats: the posterior over player models follows what each seat
did, it reaches the search, and best-move reports it; the worlds the search draws follow
the others' weather bets."""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean

import pytest
from typer.testing import CliRunner

from csl_ai.agents import make_agent, play_game
from csl_ai.beliefs import MODELS, SeatBelief, opponent_beliefs
from csl_ai.cli import app
from csl_ai.game import Game, Observation
from csl_ai.moves import Move
from csl_ai.position import observation_to_position, position_to_json
from csl_ai.rules import RulesConfig
from csl_ai.search import (
    SearchConfig,
    SearchLimit,
    heuristic_move,
    policy_settings,
    search,
    seat_beliefs,
)

RULES_ONLY = SearchConfig(playout_epsilon=0.0)


class RulesPlayer:
    """Plays exactly the search's own no-peek rules."""

    name = "rules"

    def act(self, obs: Observation) -> Move:
        return heuristic_move(obs, 0, RULES_ONLY)


def finished_game(opponent: str, seed: int, players: int = 4) -> Game:
    agents = [make_agent("heuristic", seed)] + [
        RulesPlayer() if opponent == "rules" else make_agent(opponent, seed * 31 + s)
        for s in range(1, players)
    ]
    return play_game(RulesConfig(players=players), agents, seed)


def beliefs_at_game_end(game: Game) -> tuple[SeatBelief, ...]:
    """Seat 0's beliefs about the others after the whole game (every round finished)."""
    obs = game.observation(0)
    config = SearchConfig()
    policy = {k: v for k, v in policy_settings(obs, config).items() if k != "epsilon"}
    return opponent_beliefs(
        obs, policy, config.opponent_randomness, config.belief_tremble, config.belief_bet_tremble
    )


def randomness_seen(opponent: str, seeds: range) -> list[float]:
    return [b.randomness for seed in seeds for b in beliefs_at_game_end(finished_game(opponent, seed))]


def test_random_players_are_recognised_as_random() -> None:
    seen = randomness_seen("random", range(6))
    assert mean(seen) > 0.8
    assert sum(p > 0.5 for p in seen) >= 0.8 * len(seen)


@pytest.mark.parametrize("opponent", ["heuristic", "rules"])
def test_sensible_players_are_recognised_as_sensible(opponent: str) -> None:
    seen = randomness_seen(opponent, range(6))
    assert mean(seen) < 0.15
    if opponent == "rules":
        assert max(seen) < 1e-3, "a seat that plays exactly the rules leaves no doubt"


@pytest.mark.parametrize("opponent", ["rules", "heuristic", "random", "zoo:cautious"])
def test_only_a_seat_that_plays_exactly_the_rules_is_believed_exact(opponent: str) -> None:
    """The narrow-tremble model wins the posterior for a seat that always plays the rules'
    move and loses it at once for every other kind of player, sensible or not."""
    for seed in range(3):
        obs = finished_game(opponent, seed).observation(0)
        policy = {k: v for k, v in policy_settings(obs, SearchConfig()).items() if k != "epsilon"}
        for b in opponent_beliefs(obs, policy, 0.5, 0.5, 0.1, prior_exact=0.1, exact_tremble=0.02):
            if opponent == "rules":
                assert b.exactness > 0.9 and b.randomness < 1e-4
            else:
                assert b.exactness < 1e-3


@pytest.mark.parametrize("players", [2, 4])
def test_one_round_of_exact_play_is_enough(players: int) -> None:
    """Each split is scored for the exact model, so one finished round (a split matching
    the rules' own among up to 1,680) settles it; before it the belief is the prior."""
    rules = RulesConfig(players=players)
    agents = [make_agent("heuristic", 1)] + [RulesPlayer() for _ in range(1, players)]
    game = Game(rules, seed=4)
    config = SearchConfig(exact_prior=0.1)
    while not (game.round == 1 and game.phase.value == "play" and game.to_move == 0):
        seat = game.to_move if game.phase.value == "play" else game.pending_seats()[0]
        if game.round == 0 and seat == 0 and game.phase.value == "play":
            assert all(b.exactness == pytest.approx(0.05) for b in seat_beliefs(game.observation(0), config))
        game.apply(agents[seat].act(game.observation(seat)), seat)
    assert all(b.exactness > 0.99 for b in seat_beliefs(game.observation(0), config))


@pytest.mark.parametrize("players", [2, 3, 5])
def test_every_player_count_scores_decisions(players: int) -> None:
    game = finished_game("random", 3, players)
    beliefs = beliefs_at_game_end(game)
    assert [b.seat for b in beliefs] == list(range(1, players))
    for b in beliefs:
        assert b.decisions > 0
        assert sum(b.probabilities) == pytest.approx(1.0)


def test_without_a_finished_round_the_belief_is_the_prior() -> None:
    obs = mid_round_observation("random", 5, round_index=0)
    beliefs = seat_beliefs(obs, SearchConfig(opponent_randomness=0.3, exact_prior=0.0))
    assert len(beliefs) == 3
    for b in beliefs:
        assert b.probabilities == pytest.approx((0.3, 0.7, 0.0)) and b.decisions == 0
    exact = seat_beliefs(obs, SearchConfig(opponent_randomness=0.3, exact_prior=0.2))
    assert all(b.probabilities == pytest.approx((0.3, 0.56, 0.14)) for b in exact)


def test_fixed_beliefs_ignore_the_evidence() -> None:
    obs = finished_game("random", 1).observation(0)
    mid = mid_round_observation("random", 1)
    fixed = seat_beliefs(mid, SearchConfig(opponent_beliefs="fixed"))
    assert all(b.randomness == SearchConfig().opponent_randomness for b in fixed)
    posterior = seat_beliefs(mid, SearchConfig())
    assert any(b.decisions > 0 and b.randomness != 0.5 for b in posterior)
    assert seat_beliefs(obs, SearchConfig()) == (), "a finished game has no one left to model"


def mid_round_observation(opponent: str, seed: int, round_index: int = 1) -> Observation:
    """Seat 0's observation at its first card play of a round."""
    rules = RulesConfig(players=4)
    agents = [make_agent("heuristic", seed)] + [make_agent(opponent, seed + s) for s in range(1, 4)]
    game = Game(rules, seed=seed)
    while not (game.round == round_index and game.phase.value == "play" and game.to_move == 0):
        seat = game.to_move
        game.apply(agents[seat].act(game.observation(seat)), seat)
    return game.observation(0)


def test_search_reports_its_beliefs_and_best_move_shows_them(tmp_path: Path) -> None:
    obs = mid_round_observation("random", 2)
    result = search(obs, SearchLimit(iterations=200, seed=1))
    assert [b.seat for b in result.beliefs] == [1, 2, 3]
    assert result.beliefs == seat_beliefs(obs, SearchConfig())
    position = tmp_path / "pos.json"
    position.write_text(position_to_json(observation_to_position(obs)))
    out = CliRunner().invoke(app, ["best-move", str(position), "--iterations", "200", "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
    assert [b["seat"] for b in answer["beliefs"]] == [1, 2, 3]
    for got, want in zip(answer["beliefs"], result.beliefs, strict=True):
        assert set(got["models"]) == set(MODELS)
        assert got["models"]["random"] == pytest.approx(want.randomness)
        assert got["decisions"] == want.decisions > 0


# --- inference from weather bets -----------------------------------------------------------
