"""The compiled Candy Lab core (csl_ai.candylab._core) against the Python rules core.

The C rules and heuristic are a line-by-line image of ``core`` and
``agents.HeuristicAgent``: along random and heuristic games at 2, 3 and 4 players, with
the default box and one with wild bars, both cores must list the same legal moves in the
same order, reach the same state (chance included) after every move and show the same
card, and the C heuristic must choose the Python agent's move.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csl_ai.candylab import CandyLabRules, Catalogue, Game, core, deal
from csl_ai.candylab import _core as ccore
from csl_ai.candylab.agents import HeuristicAgent
from csl_ai.candylab.catalogue import catalogue_from_arg

CATALOGUES = {"default": Catalogue.default(), "wild": catalogue_from_arg("wild")}


def _walk(players: int, cat: Catalogue, seed: int) -> int:
    """Play one game on both cores in step (moves half random, half heuristic); the
    number of moves compared."""
    rules = CandyLabRules(players=players, catalogue=cat)
    game = Game(rules, seed=seed)
    agent = HeuristicAgent()
    rng = random.Random(seed)
    steps = 0
    while not game.is_over:
        s = game.state
        moves = core.legal_moves(s)
        assert ccore.legal_moves(s) == moves
        obs = game.observation(game.current)
        heuristic = agent.act(obs)
        assert ccore.heuristic_move(s) == heuristic
        move = rng.choice(moves) if rng.random() < 0.5 else heuristic
        twin = s.copy()
        shown = ccore.apply(twin, move)
        assert game.play(move) == shown
        assert twin.key() == game.state.key()
        steps += 1
    return steps


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("box", sorted(CATALOGUES))
def test_c_core_moves_like_the_python_core(players: int, box: str) -> None:
    steps = sum(_walk(players, CATALOGUES[box], seed) for seed in range(12))
    assert steps > 12 * 20


@settings(max_examples=40, deadline=None)
@given(
    players=st.integers(2, 4),
    box=st.sampled_from(sorted(CATALOGUES)),
    seed=st.integers(0, 2**32 - 1),
)
def test_c_core_moves_like_the_python_core_from_any_seed(players: int, box: str, seed: int) -> None:
    assert _walk(players, CATALOGUES[box], seed) > 0


def test_playouts_reach_the_end_and_leave_the_state_alone() -> None:
    s = deal(CandyLabRules(players=3), 4)
    before = s.key()
    assert ccore.playouts(s, 50, 1, 1.0) > 0
    assert ccore.playouts(s, 50, 1, 0.2) > 0
    assert s.key() == before
    with pytest.raises(ValueError):
        ccore.playouts(s, 0, 1)


def test_over_game_has_no_moves_and_no_heuristic_move() -> None:
    game = Game(CandyLabRules(players=2), seed=3)
    agent = HeuristicAgent()
    while not game.is_over:
        game.play(agent.act(game.observation(game.current)))
    assert ccore.legal_moves(game.state) == []
    with pytest.raises(ValueError, match="over"):
        ccore.heuristic_move(game.state)
