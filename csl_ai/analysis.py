"""Judging a recorded game: each decision searched from the deciding seat's view.

`Replayer` re-enacts a checked game (`csl_ai.records.replay_record`) from its deals on a
fresh `Game`, stopping before each decision. `analyze_game` searches every decision of
the chosen seats from that seat's observation at that moment and `judge` compares the
played move with the engine's choice: the win probability lost, both moves' 95%
intervals and a verdict. Nothing here prints: `csl analyze` and the web server render
the `DecisionReport`s.

A blunder is a loss that the search can tell from noise: at least the threshold, and
the engine's move's interval lies wholly above the played move's. A loss as large whose
intervals overlap is searched again with `RECHECK_FACTOR` times the budget; if they
still overlap it is a close call, not a blunder.

Each move's win probability comes with its 95% interval on the same scale
(`MoveStats.win_ci95`: the mean win share's interval through the same calibration).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final, Literal

from csl_ai.game import Game, Observation, Phase
from csl_ai.moves import Allocate, Declare, Move, Play, move_to_json
from csl_ai.seeds import labelled_seed

if TYPE_CHECKING:
    from csl_ai.search import MoveStats, SearchResult

DEFAULT_THRESHOLD: Final = 0.05
"""Least win probability a decision must lose to be a blunder."""
RECHECK_FACTOR: Final = 4
"""A close call is searched again with this many times the budget."""

Verdict = Literal["blunder", "close", "ok", "forced", "n/a"]
"""How a decision is judged: ``blunder`` (loses at least the threshold, intervals apart),
``close`` (loses as much but the intervals overlap, even after a second search), ``ok``
(loses less), ``forced`` (one legal move), ``n/a`` (the played move was not evaluated)."""
Interval = tuple[float, float]
Progress = Callable[[int, int, "Decision"], None]
"""Called before each judged decision with (index, total, decision)."""


@dataclass(frozen=True)
class Decision:
    """One recorded decision, seen before it is applied to `Replayer.game`."""

    round: int
    trick: int | None
    """Line position of the trick (0-based) for a card play, else None."""
    seat: int
    move: Move

    @property
    def phase(self) -> Phase:
        if isinstance(self.move, Allocate):
            return Phase.ALLOCATE
        if isinstance(self.move, Declare):
            return Phase.WEATHER
        return Phase.PLAY

    @property
    def where(self) -> str:
        """Short label: ``r2 piles``, ``r2 weather``, ``r2 t5``."""
        if self.trick is not None:
            return f"r{self.round + 1} t{self.trick + 1}"
        return f"r{self.round + 1} {'piles' if self.phase is Phase.ALLOCATE else 'weather'}"


class Replayer:
    """Re-enacts a checked game: iterate to get each decision before it is applied."""

    def __init__(self, reference: Game) -> None:
        self.reference = reference
        self.game = Game(
            reference.rules,
            seed=reference.seed,
            sky_order=reference.core.sky_order,
            auto_deal=False,
        )

    def __iter__(self) -> Iterator[Decision]:
        game = self.game
        for r, log in enumerate(self.reference.rounds):
            hands = [h if h is not None else 0 for h in log.hands]
            game.deal(hands, log.set_aside or 0)
            for seat, piles in enumerate(log.allocations):
                if piles is not None:
                    yield Decision(r, None, seat, Allocate(piles))
                    game.apply(Allocate(piles), seat)
            for seat, good in enumerate(log.declarations):
                if good is not None:
                    yield Decision(r, None, seat, Declare(good))
                    game.apply(Declare(good), seat)
            for trick in log.tricks:
                for seat, card in trick.plays:
                    yield Decision(r, trick.index, seat, Play(card))
                    game.apply(Play(card), seat)


def win_interval(stats: MoveStats) -> Interval | None:
    """95% interval of a move's win probability, on its scale (`MoveStats.win_ci95`); None
    with fewer than 2 visits."""
    return stats.win_ci95 if stats.visits >= 2 else None


def verdict_of(
    loss: float | None,
    best_ci: Interval | None,
    played_ci: Interval | None,
    threshold: float,
) -> Verdict:
    """``blunder`` when loss >= threshold and best_ci lies wholly above played_ci;
    ``close`` when the loss is as large but the intervals overlap (or one is unbounded);
    ``ok`` for a smaller loss; ``n/a`` without a loss."""
    if loss is None:
        return "n/a"
    if loss < threshold:
        return "ok"
    if best_ci is not None and played_ci is not None and best_ci[0] > played_ci[1]:
        return "blunder"
    return "close"


@dataclass(frozen=True)
class DecisionReport:
    """The engine's verdict on one recorded decision."""

    decision: Decision
    engine: Move | None
    """The engine's choice (None when the move was forced)."""
    played_win: float | None
    """Win probability of the played move (None: forced, or not estimated)."""
    best_win: float | None
    loss: float | None
    """best_win - played_win, at least 0; None when it could not be estimated."""
    candidates: int
    """Legal moves at this decision."""
    evaluated: int
    """Candidates the search gave statistics for."""
    estimated: bool = False
    """True when played_win comes from the seat's next decision (see `analyze_game`)."""
    played_ci: Interval | None = None
    """95% interval of played_win (None: unbounded or not estimated)."""
    best_ci: Interval | None = None
    """95% interval of best_win."""
    verdict: Verdict = "n/a"
    rechecked: bool = False
    """True when a close call was searched again with `RECHECK_FACTOR` times the budget."""
    iterations: int = 0
    """Iterations of the search that judged it (0 when forced)."""

    @property
    def forced(self) -> bool:
        return self.candidates == 1

    @property
    def flagged(self) -> bool:
        """A blunder or a close call: worth a look."""
        return self.verdict in ("blunder", "close")

    def to_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "round": d.round,
            "trick": d.trick,
            "seat": d.seat,
            "phase": d.phase.value,
            "played": move_to_json(d.move),
            "engine": move_to_json(self.engine) if self.engine is not None else None,
            "played_win_probability": self.played_win,
            "best_win_probability": self.best_win,
            "played_ci95": list(self.played_ci) if self.played_ci is not None else None,
            "best_ci95": list(self.best_ci) if self.best_ci is not None else None,
            "loss": self.loss,
            "verdict": self.verdict,
            "forced": self.forced,
            "estimated": self.estimated,
            "rechecked": self.rechecked,
            "iterations": self.iterations,
            "candidates": self.candidates,
            "evaluated": self.evaluated,
        }


def judge(
    decision: Decision,
    candidates: int,
    result: SearchResult | None,
    threshold: float = DEFAULT_THRESHOLD,
) -> DecisionReport:
    """Compare the played move with the search result at that decision."""
    if result is None:
        verdict: Verdict = "forced" if candidates == 1 else "n/a"
        return DecisionReport(decision, None, None, None, None, candidates, 0, verdict=verdict)
    best = result.moves[0]
    played = next((m for m in result.moves if m.covers(decision.move)), None)
    played_win = played.win_probability if played is not None else None
    played_ci = win_interval(played) if played is not None else None
    best_ci = win_interval(best)
    loss = max(0.0, best.win_probability - played_win) if played_win is not None else None
    return DecisionReport(
        decision,
        result.best_move,
        played_win,
        best.win_probability,
        loss,
        candidates,
        len(result.moves),
        played_ci=played_ci,
        best_ci=best_ci,
        verdict=verdict_of(loss, best_ci, played_ci, threshold),
        iterations=result.iterations,
    )


def with_played_estimate(
    report: DecisionReport,
    played_win: float,
    played_ci: Interval | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> DecisionReport:
    """The report of an unevaluated allocation, its played value (and interval) estimated
    elsewhere."""
    assert report.best_win is not None
    loss = max(0.0, report.best_win - played_win)
    return replace(
        report,
        played_win=played_win,
        played_ci=played_ci,
        loss=loss,
        estimated=True,
        verdict=verdict_of(loss, report.best_ci, played_ci, threshold),
    )


def _best_stats(result: SearchResult) -> MoveStats:
    """The move with the highest win probability (the value of the position to the seat)."""
    return max(result.moves, key=lambda m: m.win_probability)


def analyze_game(
    reference: Game,
    seats: Sequence[int],
    iterations: int,
    threads: int = 1,
    seed: int = 0,
    progress: Progress | None = None,
    threshold: float = DEFAULT_THRESHOLD,
) -> list[DecisionReport]:
    """Judge every decision of the given seats by a search from its observation.

    Each search has `iterations` (a level's budget: `csl_ai.agents.level_limit`) and a
    seed derived from `seed` and the decision's place, so a report repeats exactly for the
    same seed and thread count. A loss of at least `threshold` whose intervals overlap is
    searched again with `RECHECK_FACTOR` times the iterations before it is judged.

    Progressive widening leaves most of the 1680 allocations of a 2- or 4-player hand
    unsearched. When the played allocation is among them, its value is estimated by the
    seat's weather decision that follows: that search starts from the same knowledge
    (others' piles are hidden either way) with the played piles fixed, and its best
    weather answer's win probability (and interval) stands for the allocation's.
    """
    from csl_ai.search import SearchLimit, search

    def searched(obs: Observation, n: int, factor: int) -> SearchResult:
        label = f"analysis{n}" if factor == 1 else f"analysis{n}x{factor}"
        limit = SearchLimit(
            iterations=iterations * factor, threads=threads, seed=labelled_seed(seed, label)
        )
        return search(obs, limit)

    wanted = set(seats)
    total = sum(1 for d in Replayer(reference) if d.seat in wanted)
    reports: list[DecisionReport] = []
    unevaluated: dict[tuple[int, int], tuple[int, Observation, int]] = {}
    replayer = Replayer(reference)
    for n, decision in enumerate(replayer):
        if decision.seat not in wanted:
            continue
        if progress is not None:
            progress(len(reports), total, decision)
        game = replayer.game
        candidates = len(game.legal_moves(decision.seat))
        obs = game.observation(decision.seat)
        result = searched(obs, n, 1) if candidates > 1 else None
        report = judge(decision, candidates, result, threshold)
        if report.verdict == "close":
            result = searched(obs, n, RECHECK_FACTOR)
            report = replace(judge(decision, candidates, result, threshold), rechecked=True)
        key = (decision.round, decision.seat)
        if decision.phase is Phase.ALLOCATE and report.verdict == "n/a" and not report.forced:
            unevaluated[key] = (len(reports), obs, n)
        elif decision.phase is Phase.WEATHER and key in unevaluated and result is not None:
            index, allocation_obs, allocation_n = unevaluated.pop(key)
            best = _best_stats(result)
            estimate = with_played_estimate(
                reports[index], best.win_probability, win_interval(best), threshold
            )
            if estimate.verdict == "close":
                rechecked = judge(
                    estimate.decision,
                    estimate.candidates,
                    searched(allocation_obs, allocation_n, RECHECK_FACTOR),
                    threshold,
                )
                if rechecked.loss is None:
                    if not report.rechecked:
                        result = searched(obs, n, RECHECK_FACTOR)
                    best = _best_stats(result)
                    rechecked = with_played_estimate(
                        rechecked, best.win_probability, win_interval(best), threshold
                    )
                estimate = replace(rechecked, rechecked=True)
            reports[index] = estimate
        reports.append(report)
    return reports


def summary_rows(reports: Sequence[DecisionReport], seats: Sequence[int]) -> list[dict[str, Any]]:
    """Per seat: decisions, those judged, mean and total loss, blunders and close calls."""
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


__all__: Sequence[str] = (
    "DEFAULT_THRESHOLD",
    "RECHECK_FACTOR",
    "Decision",
    "DecisionReport",
    "Replayer",
    "Verdict",
    "analyze_game",
    "judge",
    "summary_rows",
    "verdict_of",
    "win_interval",
    "with_played_estimate",
)
