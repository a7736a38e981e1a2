"""A search over given worlds (`search(..., worlds=...)`): the diagnostic behind
`benchmarks/tune_search.py --oracle`, which hands the search the true deal."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from csl_ai.agents import make_agent
from csl_ai.errors import InvalidPositionError
from csl_ai.game import Game, Observation
from csl_ai.rules import RulesConfig
from csl_ai.search import SearchConfig, SearchLimit, search, world_sampler
from csl_ai.search.setup import prepared_engine
from worldcheck import check_world, known


def position(players: int, seed: int, phase: str, tricks: int = 0, seat: int = 0) -> tuple[Observation, Game]:
    """Seat `seat`'s first decision of the given phase (at least `tricks` tricks into the
    round for a card play) among heuristic bots."""
    game = Game(RulesConfig(players=players), seed=seed)
    agents = [make_agent("heuristic", seed * 10 + s) for s in range(players)]
    while not game.is_over:
        to_move = game.to_move
        obs = game.observation(to_move)
        if to_move == seat and obs.phase.value == phase and len(obs.legal_moves()) > 1:
            if phase != "play" or len(obs.current.tricks) >= tricks:
                return obs, game
        game.apply(agents[to_move].act(obs), to_move)
    raise AssertionError("no such position in the seeded game")


@pytest.mark.parametrize(
    ("players", "phase", "seat"),
    [(4, "play", 0), (2, "play", 1), (5, "play", 3), (5, "allocate", 3), (3, "weather", 2), (4, "allocate", 0)],
)
def test_the_true_deal_is_a_world_of_the_observation(players: int, phase: str, seat: int) -> None:
    """world_of puts every hidden card where the game has it, keeps what the seat saw
    (after the others' secret allocations and bets the seat does not know), and the
    search then draws that world alone and answers legally, repeatably."""
    obs, game = position(players, 11, phase, tricks=3, seat=seat)
    truth = world_sampler(obs).world_of(game.core)
    check_world(truth, obs, known(game, seat))
    for s in range(players):
        if s != seat and truth.piles[s] != (0,) * len(truth.piles[s]):
            assert truth.piles[s] == game.core.piles[s]
        if truth.hands[s]:
            assert truth.hands[s] == game.core.hands[s]
    engine = prepared_engine(obs, SearchConfig())
    engine.set_worlds([truth])
    assert {w.to_bytes() for w in engine.draw_worlds(40, 1)} == {truth.to_bytes()}
    result = search(obs, SearchLimit(iterations=400, seed=3), SearchConfig(), worlds=[truth])
    assert result.best_move in obs.legal_moves()
    again = search(obs, SearchLimit(iterations=400, seed=3), SearchConfig(), worlds=[truth])
    assert [(m.move, m.visits) for m in result.moves] == [(m.move, m.visits) for m in again.moves]


def test_a_truth_that_does_not_fit_the_observation_is_refused() -> None:
    """Another game's deal puts cards the seat holds or saw played into hidden slots."""
    obs, _game = position(4, 12, "play", tricks=2)
    _other_obs, other_game = position(4, 99, "play", tricks=2)
    with pytest.raises(ValueError, match="hidden slot"):
        world_sampler(obs).world_of(other_game.core)


def test_a_world_of_another_position_is_refused() -> None:
    obs, game = position(4, 12, "play", tricks=2)
    other = Game(RulesConfig(players=4), seed=99)
    with pytest.raises(InvalidPositionError, match="not a world of this position"):
        search(obs, SearchLimit(iterations=100, seed=1), worlds=[other.core])
    later = game.core.copy()
    legal = later.legal_plays()
    later.play((legal & -legal).bit_length() - 1)
    with pytest.raises(InvalidPositionError, match="world 1"):
        search(obs, SearchLimit(iterations=100, seed=1), worlds=[game.core, later])
    with pytest.raises(InvalidPositionError, match="1..65536"):
        search(obs, SearchLimit(iterations=100, seed=1), worlds=[])


def test_tune_search_oracle_plays_a_game_on_the_true_deal() -> None:
    """`tune_search.py --oracle play` plays whole games with the true deal at the card
    plays (and samples at the rest); its agent answers legally throughout."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import tune_search

    args = {"config": {}, "iters": 200, "opponent": "heuristic", "players": 4, "base": 5, "phases": [],
            "phase_iters": {}, "stream": 0, "oracle": ["play"]}
    deal, share, iterations, cpu_s, decisions = tune_search.play((args, 0, 1))
    assert deal == 0 and 0.0 <= share <= 1.0
    assert decisions > 10 and iterations == 200 * decisions
