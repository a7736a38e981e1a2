"""csl_ai.analysis: verdicts only where the search can tell a loss from noise, close calls
searched again with more budget, allocations valued by the weather search after them."""

from __future__ import annotations

import math
import subprocess
import sys
from dataclasses import dataclass

import pytest

from csl_ai.agents import make_agent, play_game
from csl_ai.analysis import (
    DEFAULT_THRESHOLD,
    RECHECK_FACTOR,
    Decision,
    DecisionReport,
    Replayer,
    analyze_game,
    judge,
    summary_rows,
    verdict_of,
    win_interval,
)
from csl_ai.game import Game, Observation, Phase
from csl_ai.moves import Move, Play
from csl_ai.rules import RulesConfig
from csl_ai.search import MoveStats, SearchLimit, SearchResult

BASE = 100
"""The iteration budget of the analyses here."""


def finished_game(players: int = 2, seed: int = 11) -> Game:
    agents = [make_agent("heuristic", seed=seed + s) for s in range(players)]
    return play_game(RulesConfig(players=players), agents, seed=seed)


def stats(move: Move, win: float, half: float, visits: int = 100) -> MoveStats:
    interval = (win - half, win + half) if visits >= 2 else (-math.inf, math.inf)
    win_ci = (max(0.0, win - half), min(1.0, win + half)) if visits >= 2 else (0.0, 1.0)
    return MoveStats(move, visits, win, interval, win, 20.0, visits, win_ci95=win_ci)


def result_of(*moves: MoveStats) -> SearchResult:
    return SearchResult(
        seat=0, best_move=moves[0].move, moves=moves, iterations=BASE, worlds_sampled=BASE,
        elapsed_s=0.0,
    )  # fmt: skip


PLAY = Decision(0, 0, 0, Play(5))


# --- the verdict -------------------------------------------------------------------------------


def test_a_blunder_needs_the_loss_and_intervals_apart() -> None:
    assert verdict_of(0.10, (0.55, 0.65), (0.40, 0.50), 0.05) == "blunder"
    assert verdict_of(0.10, (0.55, 0.65), (0.45, 0.56), 0.05) == "close"
    assert verdict_of(0.10, (0.55, 0.65), None, 0.05) == "close", "unbounded: cannot tell"
    assert verdict_of(0.04, (0.55, 0.65), (0.40, 0.50), 0.05) == "ok"
    assert verdict_of(None, (0.55, 0.65), None, 0.05) == "n/a"


def test_the_win_interval_is_the_search_s_own_on_the_win_scale() -> None:
    """The analysis takes the interval the search gives on the win probability's scale,
    none with fewer than 2 visits."""
    m = MoveStats(Play(1), 400, 0.43, (0.41, 0.45), 0.62, 20.0, 400, win_ci95=(0.6, 0.65))
    assert win_interval(m) == (0.6, 0.65)
    assert win_interval(stats(Play(1), 0.5, 0.1, visits=1)) is None


def test_judge_compares_the_played_move_with_the_engines() -> None:
    apart = judge(PLAY, 3, result_of(stats(Play(1), 0.60, 0.02), stats(Play(5), 0.40, 0.05)))
    assert apart.verdict == "blunder" and apart.engine == Play(1)
    assert apart.loss == pytest.approx(0.20)
    assert apart.best_ci == pytest.approx((0.58, 0.62))
    assert apart.played_ci == pytest.approx((0.35, 0.45))
    overlapping = judge(PLAY, 3, result_of(stats(Play(1), 0.60, 0.02), stats(Play(5), 0.50, 0.09)))
    assert overlapping.verdict == "close" and overlapping.flagged
    agrees = judge(PLAY, 3, result_of(stats(Play(5), 0.60, 0.02), stats(Play(1), 0.40, 0.02)))
    assert agrees.verdict == "ok" and agrees.loss == 0.0
    forced = judge(PLAY, 1, None)
    assert forced.verdict == "forced" and forced.forced
    json = apart.to_json()
    assert json["verdict"] == "blunder"
    assert json["best_ci95"] == pytest.approx([0.58, 0.62])
    assert json["played_ci95"] == pytest.approx([0.35, 0.45])


# --- analyze_game with a scripted search -------------------------------------------------------


@dataclass
class ScriptedSearch:
    """The first legal move is best (60%), the rest 50%; a base budget gives intervals of
    ±20 points (every loss overlaps), the re-search ±2 (apart). Allocation searches list
    only the first 3 splits, so most played allocations are valued by the weather search,
    whose every answer is 50%."""

    calls: list[tuple[Phase, int]]

    def __call__(self, obs: Observation, limit: SearchLimit, config: object = None) -> SearchResult:
        assert limit.iterations is not None
        self.calls.append((obs.phase, limit.iterations))
        half = 0.02 if limit.iterations >= RECHECK_FACTOR * BASE else 0.2
        legal = obs.legal_moves()
        if obs.phase is Phase.ALLOCATE:
            legal = legal[:3]
        top = 0.5 if obs.phase is Phase.WEATHER else 0.6
        moves = tuple(
            stats(m, top if i == 0 else 0.5, half, visits=1000 - i) for i, m in enumerate(legal)
        )
        return SearchResult(
            seat=obs.seat, best_move=legal[0], moves=moves, iterations=limit.iterations,
            worlds_sampled=limit.iterations, elapsed_s=0.0,
        )  # fmt: skip


def first_legal_moves(game: Game, seat: int) -> dict[Decision, tuple[Move, ...]]:
    """The legal moves before each of seat's decisions."""
    replayer = Replayer(game)
    return {d: tuple(replayer.game.legal_moves(seat)) for d in replayer if d.seat == seat}


def test_close_calls_are_searched_again_with_four_times_the_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import csl_ai.search

    scripted = ScriptedSearch([])
    monkeypatch.setattr(csl_ai.search, "search", scripted)
    game = finished_game()
    legal = first_legal_moves(game, 0)
    reports = analyze_game(game, [0], BASE, seed=3)
    assert [r.decision for r in reports] == list(legal)
    estimated = 0
    for report in reports:
        moves = legal[report.decision]
        if len(moves) == 1:
            assert report.verdict == "forced" and not report.rechecked
        elif report.decision.phase is Phase.ALLOCATE and report.decision.move not in moves[:3]:
            estimated += 1
            assert report.estimated and report.played_win == pytest.approx(0.5)
            assert report.verdict == "blunder" and report.rechecked
            assert report.iterations == RECHECK_FACTOR * BASE
        elif report.decision.move == moves[0] or report.decision.phase is Phase.WEATHER:
            assert report.verdict == "ok" and not report.rechecked
        else:
            assert report.loss == pytest.approx(0.1)
            assert report.verdict == "blunder" and report.rechecked
            assert report.iterations == RECHECK_FACTOR * BASE
            assert report.best_ci is not None and report.played_ci is not None
            assert report.best_ci[0] > report.played_ci[1]
    assert estimated > 0, "the seed should give allocations outside the searched three"
    rechecked_weather = [c for c in scripted.calls if c == (Phase.WEATHER, RECHECK_FACTOR * BASE)]
    assert len(rechecked_weather) == estimated, "each estimate is re-made by a longer search"
    rows = summary_rows(reports, [0])
    assert rows[0]["blunders"] == sum(r.verdict == "blunder" for r in reports)
    assert rows[0]["close"] == 0


def test_a_close_call_that_stays_close_is_not_a_blunder(monkeypatch: pytest.MonkeyPatch) -> None:
    import csl_ai.search

    def always_wide(obs: Observation, limit: SearchLimit, config: object = None) -> SearchResult:
        legal = obs.legal_moves()
        moves = tuple(stats(m, 0.6 if i == 0 else 0.5, 0.2) for i, m in enumerate(legal))
        return SearchResult(obs.seat, legal[0], moves, limit.iterations or 0, 0, 0.0)

    monkeypatch.setattr(csl_ai.search, "search", always_wide)
    reports = analyze_game(finished_game(), [1], BASE)
    lost = [r for r in reports if r.loss is not None and r.loss > 0]
    assert lost and all(r.verdict == "close" and r.rechecked for r in lost)
    assert not any(r.verdict == "blunder" for r in reports)


# --- analyze_game with the real search ---------------------------------------------------------


def test_a_real_analysis_repeats_and_its_verdicts_follow_the_rule() -> None:
    game = finished_game(players=3, seed=5)
    seen: list[tuple[int, int, Decision]] = []

    def progress(index: int, total: int, decision: Decision) -> None:
        seen.append((index, total, decision))

    reports = analyze_game(game, [2], BASE, seed=1, progress=progress)
    assert [s[0] for s in seen] == list(range(len(reports)))
    assert {s[1] for s in seen} == {len(reports)}
    assert [s[2] for s in seen] == [r.decision for r in reports]
    again = analyze_game(game, [2], BASE, seed=1)
    assert [r.to_json() for r in again] == [r.to_json() for r in reports]
    for r in reports:
        _check_verdict(r)
    assert any(r.verdict == "ok" for r in reports)


def _check_verdict(r: DecisionReport) -> None:
    if r.forced:
        assert r.verdict == "forced"
        return
    if r.loss is None:
        assert r.verdict == "n/a"
        return
    if r.loss < DEFAULT_THRESHOLD:
        assert r.verdict == "ok"
        return
    assert r.rechecked or r.verdict == "blunder"
    apart = r.best_ci is not None and r.played_ci is not None and r.best_ci[0] > r.played_ci[1]
    assert r.verdict == ("blunder" if apart else "close")


def test_the_analysis_module_needs_no_terminal_library() -> None:
    code = "import sys, csl_ai.analysis; print(sorted({'rich', 'typer'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
