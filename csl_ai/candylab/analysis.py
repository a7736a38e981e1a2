"""Judging a recorded Candy Lab game: each decision searched from the deciding seat's view.

The Candy Lab side of `csl analyze` (CSL's is `csl_ai.analysis`, whose verdicts and
thresholds this shares). `decisions` re-enacts a checked game
(`csl_ai.candylab.records.replay_record`) from its seed on a fresh `Game`, stopping
before each move; `analyze_game` searches every decision of the chosen seats from that
seat's observation at that moment (`csl_ai.candylab.search.search`) and `judge` compares
the move played with the engine's choice (the root move of most visits): the win lost,
both moves' 95% intervals and a verdict.

A move's win is the search's mean share of the win after it (1 for a win, 1/k for a
win shared by k, else 0): Candy Lab's search has no calibration, so this is its win
probability, a shared win counting its share. Its 95% interval is the Wilson score
interval over the move's visits (`win_interval`).

Verdicts are CSL's (`csl_ai.analysis.verdict_of`): a blunder loses at least the
threshold and the engine's move's interval lies wholly above the played move's; a loss
as large whose intervals overlap is searched again with `RECHECK_FACTOR` times the
budget, and is a close call if they still overlap; ``forced`` when the seat had one
move (moves that every seat sees alike, such as two order cards of one combination,
count once: the search's move keys); ``n/a`` when the search never tried the played move.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from csl_ai.analysis import DEFAULT_THRESHOLD, RECHECK_FACTOR, Interval, Verdict, verdict_of
from csl_ai.candylab.game import Game, Observation
from csl_ai.candylab.search import MoveStats, SearchLimit, SearchResult, search
from csl_ai.candylab.worlds import move_key
from csl_ai.search.result import wilson_interval
from csl_ai.seeds import labelled_seed

Progress = Callable[[int, int, "Decision"], None]
"""Called before each judged decision with (index, total, decision)."""


@dataclass(frozen=True)
class Decision:
    """One recorded move, seen before it is applied."""

    index: int
    """The move's place in the record (0-based)."""
    turn: int
    """The game's turn (0-based)."""
    seat: int
    phase: str
    """``main``, ``effects``, ``returning`` or ``drawing``."""
    move: int

    @property
    def where(self) -> str:
        """Short label: ``t5 #12`` (turn 5, the record's 12th move)."""
        return f"t{self.turn + 1} #{self.index + 1}"


def decisions(reference: Game) -> Iterator[tuple[Decision, Game]]:
    """Each move of a checked game with the game just before it (a fresh game, dealt from
    the same seed, played along: it is the same object at every step)."""
    assert reference.seed is not None
    game = Game(reference.rules, seed=reference.seed)
    for i, move in enumerate(reference.moves):
        decision = Decision(i, game.state.turn, game.current, game.phase_name, move)
        yield decision, game
        game.play(move)


def win_interval(stats: MoveStats) -> Interval | None:
    """A move's 95% interval: the Wilson score interval of its mean share of the win over
    its visits (None with fewer than 2). Not `MoveStats.ci95`, the normal interval, which
    shrinks to a point when a few playouts all lost (or all won): 0 wins in 3 playouts
    would read as a certain 0% and make a blunder of any move tried three times."""
    n = stats.visits
    if n < 2:
        return None
    return wilson_interval(min(max(stats.mean_return, 0.0), 1.0), n)


@dataclass(frozen=True)
class DecisionReport:
    """The engine's verdict on one recorded decision."""

    decision: Decision
    engine: int | None
    """The engine's choice (None when the move was forced)."""
    played_win: float | None
    best_win: float | None
    loss: float | None
    """best_win - played_win, at least 0; None when it could not be estimated."""
    candidates: int
    """Distinct moves at this decision (as the search keys them)."""
    evaluated: int
    """Candidates the search tried."""
    played_ci: Interval | None = None
    best_ci: Interval | None = None
    verdict: Verdict = "n/a"
    rechecked: bool = False
    iterations: int = 0
    agrees: bool = False
    """The engine's choice is the move played (or the same public action)."""

    @property
    def forced(self) -> bool:
        return self.candidates == 1

    @property
    def flagged(self) -> bool:
        """A blunder or a close call: worth a look."""
        return self.verdict in ("blunder", "close")

    def to_json(self, move_text: Callable[[int], str]) -> dict[str, Any]:
        d = self.decision
        return {
            "move_index": d.index,
            "turn": d.turn,
            "seat": d.seat,
            "phase": d.phase,
            "played": move_text(d.move),
            "engine": move_text(self.engine) if self.engine is not None else None,
            "agrees": self.agrees,
            "played_win_probability": self.played_win,
            "best_win_probability": self.best_win,
            "played_ci95": list(self.played_ci) if self.played_ci is not None else None,
            "best_ci95": list(self.best_ci) if self.best_ci is not None else None,
            "loss": self.loss,
            "verdict": self.verdict,
            "forced": self.forced,
            "rechecked": self.rechecked,
            "iterations": self.iterations,
            "candidates": self.candidates,
            "evaluated": self.evaluated,
        }


def judge(
    decision: Decision,
    game: Game,
    candidates: int,
    result: SearchResult | None,
    threshold: float = DEFAULT_THRESHOLD,
) -> DecisionReport:
    """Compare the played move with the search's answer at that decision (game: the game
    just before it, whose state keys the moves)."""
    if result is None:
        verdict: Verdict = "forced" if candidates == 1 else "n/a"
        return DecisionReport(decision, None, None, None, None, candidates, 0, verdict=verdict)
    state = game.state
    played_key = move_key(state.cat, decision.move)
    best = result.moves[0]
    played = next(
        (m for m in result.moves if move_key(state.cat, m.move) == played_key), None
    )
    played_win = played.mean_return if played is not None and played.visits else None
    played_ci = win_interval(played) if played is not None else None
    best_ci = win_interval(best)
    loss = max(0.0, best.mean_return - played_win) if played_win is not None else None
    return DecisionReport(
        decision,
        result.best_move,
        played_win,
        best.mean_return,
        loss,
        candidates,
        sum(1 for m in result.moves if m.visits),
        played_ci=played_ci,
        best_ci=best_ci,
        verdict=verdict_of(loss, best_ci, played_ci, threshold),
        iterations=result.iterations,
        agrees=move_key(state.cat, result.best_move) == played_key,
    )


def candidates_of(game: Game) -> int:
    """The current seat's distinct moves, as the search keys them."""
    state = game.state
    return len({move_key(state.cat, m) for m in game.legal_moves()})


def analyze_game(
    reference: Game,
    seats: Sequence[int],
    iterations: int,
    seed: int = 0,
    progress: Progress | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    threads: int = 1,
) -> list[DecisionReport]:
    """Judge every decision of the given seats by a search from its observation.

    Each search has `iterations` on `threads` and a seed derived from `seed` and the
    decision's place, so a report repeats exactly for the same seed and threads. A loss of at least `threshold` whose
    intervals overlap is searched again with `RECHECK_FACTOR` times the iterations."""

    def searched(obs: Observation, n: int, factor: int) -> SearchResult:
        label = f"analysis{n}" if factor == 1 else f"analysis{n}x{factor}"
        limit = SearchLimit(
            iterations=iterations * factor, seed=labelled_seed(seed, label), threads=threads
        )
        return search(obs, limit)

    wanted = set(seats)
    total = sum(1 for d, _ in decisions(reference) if d.seat in wanted)
    reports: list[DecisionReport] = []
    for decision, game in decisions(reference):
        if decision.seat not in wanted:
            continue
        if progress is not None:
            progress(len(reports), total, decision)
        candidates = candidates_of(game)
        obs = game.observation(decision.seat)
        result = searched(obs, decision.index, 1) if candidates > 1 else None
        report = judge(decision, game, candidates, result, threshold)
        if report.verdict == "close":
            result = searched(obs, decision.index, RECHECK_FACTOR)
            report = replace(judge(decision, game, candidates, result, threshold), rechecked=True)
        reports.append(report)
    return reports


def summary_rows(reports: Sequence[DecisionReport], seats: Sequence[int]) -> list[dict[str, Any]]:
    """Per seat: decisions, those judged, mean and total loss, blunders and close calls
    (the rows of CSL's report)."""
    rows = []
    for seat in seats:
        mine = [r for r in reports if r.decision.seat == seat]
        losses = [r.loss for r in mine if r.loss is not None]
        rows.append(
            {
                "seat": seat,
                "decisions": len(mine),
                "evaluated": len(losses),
                "total_loss": sum(losses),
                "mean_loss": sum(losses) / len(losses) if losses else None,
                "blunders": sum(1 for r in mine if r.verdict == "blunder"),
                "close": sum(1 for r in mine if r.verdict == "close"),
            }
        )
    return rows


__all__ = [
    "DEFAULT_THRESHOLD",
    "RECHECK_FACTOR",
    "Decision",
    "DecisionReport",
    "analyze_game",
    "candidates_of",
    "decisions",
    "judge",
    "summary_rows",
    "win_interval",
]
