"""Stopping a search once its answer is settled (`SearchLimit.stop_when_settled`): the same
move as the whole budget, for fewer iterations, in both games' searches; the levels use it."""

from __future__ import annotations

import random

import pytest

from csl_ai.agents import IsmctsAgent, level_iterations, level_limit
from csl_ai.candylab import CandyLabRules, Game as LabGame
from csl_ai.candylab.agents import HeuristicAgent as LabHeuristic, RandomAgent as LabRandom
from csl_ai.candylab.search import search as lab_search
from csl_ai.game import Game, Observation
from csl_ai.limits import SearchLimit, SearchSettingsError
from csl_ai.search import search
from gamegen import random_rules, step


def csl_positions(count: int, seed: int) -> list[Observation]:
    """Observations with a choice (allocations, bets and card plays), from random games on
    random sides, 2-5 players."""
    rng = random.Random(seed)
    out: list[Observation] = []
    while len(out) < count:
        game = Game(random_rules(rng, rng.choice((2, 3, 4, 5))), seed=rng.randrange(10**6))
        for _ in range(rng.randrange(0, 60)):
            if game.is_over:
                break
            step(game, rng)
        if game.is_over:
            continue
        seat = rng.choice(game.pending_seats())
        obs = game.observation(seat)
        if len(obs.legal_moves()) > 1:
            out.append(obs)
    return out


def test_a_settled_search_answers_as_the_whole_budget_with_fewer_iterations() -> None:
    budget, saved = 2_000, 0
    for i, obs in enumerate(csl_positions(14, 28)):
        full = search(obs, SearchLimit(iterations=budget, seed=i))
        settled = search(obs, SearchLimit(iterations=budget, seed=i, stop_when_settled=True))
        assert settled.best_move == full.best_move
        assert full.iterations == budget and 0 < settled.iterations <= budget
        assert settled.budget == full.budget == budget and not full.settled
        assert settled.settled == (settled.iterations < budget)
        if settled.iterations < budget and len(settled.moves) > 1:
            # it stopped only where the leader's margin was past what was left (a root of
            # equal cards only is settled at once: tests/test_equal_cards.py)
            top = sorted((m.visits for m in settled.moves), reverse=True) + [0]
            assert top[0] - top[1] > budget - settled.iterations
        saved += budget - settled.iterations
    assert saved > 0


@pytest.mark.parametrize("threads", [2, 3])
def test_threads_settle_together_on_the_whole_budgets_answer(threads: int) -> None:
    budget, saved = 2_400, 0
    for i, obs in enumerate(csl_positions(10, 40 + threads)):
        full = search(obs, SearchLimit(iterations=budget, seed=i, threads=threads))
        settled = search(obs, SearchLimit(iterations=budget, seed=i, threads=threads, stop_when_settled=True))
        assert settled.best_move == full.best_move
        assert 0 < settled.iterations <= budget == full.iterations
        saved += budget - settled.iterations
    assert saved > 0


def test_a_thread_settles_only_on_what_every_thread_has_left() -> None:
    """A thread of a settle group stops only once no use of any thread's remaining budget
    can change the summed answer: beside a thread that has not begun, it never settles."""
    from csl_ai import _core
    from csl_ai.search import SearchConfig
    from csl_ai.search.setup import prepared_engine

    budget = 3_000
    for obs in csl_positions(20, 77):
        engine = prepared_engine(obs, SearchConfig())
        if engine.root_kind != 2 or engine.n_candidates < 2:
            continue
        alone = _core.SearchWorker(engine, 5, 4 * budget, 0)
        alone.run(budget, 0.0, True)
        if alone.settled:
            break
    else:
        raise AssertionError("no card play that settles alone")
    beside_idle = _core.SearchWorker(engine, 5, 4 * budget, 0)
    beside_idle.join_settling(_core.SettleGroup([budget, budget], engine.n_candidates), 0)
    beside_idle.run(budget, 0.0, True)
    assert not beside_idle.settled and beside_idle.iterations == budget
    beside_none = _core.SearchWorker(engine, 5, 4 * budget, 0)
    beside_none.join_settling(_core.SettleGroup([budget, 0], engine.n_candidates), 0)
    beside_none.run(budget, 0.0, True)
    assert beside_none.settled and beside_none.iterations == alone.iterations
    with pytest.raises(ValueError, match="does not fit"):
        beside_none.join_settling(_core.SettleGroup([budget], engine.n_candidates + 1), 0)


def test_a_time_limit_ignores_the_flag() -> None:
    obs = csl_positions(1, 5)[0]
    timed = search(obs, SearchLimit(time_ms=40, seed=2, stop_when_settled=True))
    assert timed.iterations >= 1
    with pytest.raises(SearchSettingsError, match="stop_when_settled must be True or False"):
        SearchLimit(iterations=10, stop_when_settled=1)  # type: ignore[arg-type]


def test_the_levels_stop_when_settled() -> None:
    assert level_limit("normal", 4).stop_when_settled
    agent = IsmctsAgent.at_level("fast", seed=1)
    assert agent.limit_for(4).stop_when_settled
    assert agent.limit_for(4).iterations == level_iterations("fast", 4)
    explicit = IsmctsAgent(SearchLimit(iterations=700, seed=1))
    assert not explicit.limit_for(4).stop_when_settled


def lab_positions(count: int, seed: int):
    rng = random.Random(seed)
    found = 0
    while found < count:
        n = rng.choice((2, 3, 4))
        game = LabGame(CandyLabRules(players=n), seed=rng.randrange(10**6))
        agents = [LabHeuristic() if p % 2 else LabRandom(seed + p) for p in range(n)]
        for _ in range(rng.randrange(0, 40)):
            if game.is_over:
                break
            game.play(agents[game.current].act(game.observation(game.current)))
        if game.is_over:
            continue
        obs = game.observation(game.current)
        if len(obs.legal_moves) > 1:
            found += 1
            yield obs


@pytest.mark.parametrize("threads", [1, 2])
def test_candy_lab_settles_with_the_same_move(threads: int) -> None:
    budget, saved = 1_500, 0
    for i, obs in enumerate(lab_positions(8, 39)):
        full = lab_search(obs, SearchLimit(iterations=budget, seed=i, threads=threads))
        settled = lab_search(obs, SearchLimit(iterations=budget, seed=i, threads=threads, stop_when_settled=True))
        if threads == 1:
            assert settled.best_move == full.best_move
        assert settled.best_move in obs.legal_moves
        assert 0 < settled.iterations <= budget == full.iterations
        saved += budget - settled.iterations
    assert saved > 0
