"""`csl replay` and `csl analyze`: walk a recorded game decision by decision.

A record is first checked in full by `csl_ai.records.replay_record` (which names the
first illegal step). `Replayer` then re-enacts the checked game from its deals on a fresh
`Game`, stopping before each decision so a view can narrate it or the engine can judge
it from the deciding seat's observation at that moment.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from csl_ai.cli.common import CliInputError
from csl_ai.cli.render import GameView, move_text, percent, scores_table, tallies_table
from csl_ai.game import Game, Phase
from csl_ai.moves import Allocate, Declare, Move, Play, move_to_json

if TYPE_CHECKING:
    from csl_ai.search import SearchResult

DEFAULT_THRESHOLD: Final = 0.05
"""A decision losing at least this much win probability is reported as a blunder."""


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


def load_checked(path: str) -> tuple[dict[str, Any], Game]:
    """A record read and re-checked step by step (InvalidRecordError names the bad step)."""
    from csl_ai.records import load_record, replay_record

    record = load_record(path)
    return record, replay_record(record)


def record_agents(record: Mapping[str, Any], players: int) -> list[str] | None:
    """Who played each seat, when the record says."""
    agents = record.get("agents")
    if (
        isinstance(agents, list)
        and len(agents) == players
        and all(isinstance(a, str) for a in agents)
    ):
        return list(agents)
    return None


def seat_labels(players: int) -> list[str]:
    """``seat 0``, ``seat 1``, ..."""
    return [f"seat {s}" for s in range(players)]


def replay_command(path: str, console: Console, summary: bool) -> None:
    """Check a record and show it trick by trick (or only its result with summary)."""
    record, reference = load_checked(path)
    rules = reference.rules
    names = seat_labels(rules.players)
    console.print(
        f"Record {path}: {rules.players} players, sides {rules.sides_text()}, "
        f"star option {rules.star_option.value}, deck {rules.deck.name!r}; every step checks out.",
        soft_wrap=True,
    )
    agents = record_agents(record, rules.players)
    if agents is not None:
        console.print(
            "Players: " + ", ".join(f"{names[s]} {agents[s]}" for s in range(rules.players)),
            soft_wrap=True,
        )
    if summary:
        game = reference
        if game.is_over:
            result = game.result()
            console.print(scores_table(result.scores, result.winners, names, result.outright))
    else:
        view = GameView(console, names, frozenset(range(rules.players)))
        replayer = Replayer(reference)
        for _ in replayer:
            view.sync(replayer.game)
        view.sync(replayer.game)
        game = replayer.game
    if not game.is_over:
        console.print(Text("The record stops before the end of the game.", style="yellow"))
        console.print(tallies_table(game, names, "Standings when the record stops"))


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

    @property
    def forced(self) -> bool:
        return self.candidates == 1

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
            "loss": self.loss,
            "forced": self.forced,
            "estimated": self.estimated,
            "candidates": self.candidates,
            "evaluated": self.evaluated,
        }


def judge(decision: Decision, candidates: int, result: SearchResult | None) -> DecisionReport:
    """Compare the played move with the search result at that decision."""
    if result is None:
        return DecisionReport(decision, None, None, None, None, candidates, 0)
    best = result.moves[0]
    played = next((m for m in result.moves if m.move == decision.move), None)
    played_win = played.win_probability if played is not None else None
    loss = max(0.0, best.win_probability - played_win) if played_win is not None else None
    return DecisionReport(
        decision,
        result.best_move,
        played_win,
        best.win_probability,
        loss,
        candidates,
        len(result.moves),
    )


def with_played_estimate(report: DecisionReport, played_win: float) -> DecisionReport:
    """The report of an unevaluated allocation, its played value estimated elsewhere."""
    assert report.best_win is not None
    return replace(
        report, played_win=played_win, loss=max(0.0, report.best_win - played_win), estimated=True
    )


def analyze_game(
    reference: Game,
    seats: Sequence[int],
    iterations: int,
    threads: int,
    seed: int,
    progress: Console | None = None,
) -> list[DecisionReport]:
    """Judge every decision of the given seats by a search from its observation.

    Progressive widening leaves most of the 1680 allocations of a 2- or 4-player hand
    unsearched. When the played allocation is among them, its value is estimated by the
    seat's weather decision that follows: that search starts from the same knowledge
    (others' piles are hidden either way) with the played piles fixed, and its best
    weather answer's win probability stands for the allocation's.
    """
    from csl_ai.cli.play import derived_seed
    from csl_ai.search import SearchLimit, search

    reports: list[DecisionReport] = []
    unevaluated: dict[tuple[int, int], int] = {}
    replayer = Replayer(reference)
    for n, decision in enumerate(replayer):
        if decision.seat not in seats:
            continue
        game = replayer.game
        candidates = len(game.legal_moves(decision.seat))
        result = None
        if candidates > 1:
            if progress is not None:
                progress.print(f"analysing {decision.where} seat {decision.seat}", end="\r")
            limit = SearchLimit(
                iterations=iterations, threads=threads, seed=derived_seed(seed, f"analysis{n}")
            )
            result = search(game.observation(decision.seat), limit)
        report = judge(decision, candidates, result)
        key = (decision.round, decision.seat)
        if decision.phase is Phase.ALLOCATE and report.loss is None and not report.forced:
            unevaluated[key] = len(reports)
        elif decision.phase is Phase.WEATHER and key in unevaluated and result is not None:
            index = unevaluated.pop(key)
            reports[index] = with_played_estimate(
                reports[index], max(m.win_probability for m in result.moves)
            )
        reports.append(report)
    return reports


def summary_rows(
    reports: Sequence[DecisionReport], seats: Sequence[int], threshold: float
) -> list[dict[str, Any]]:
    """Per seat: decisions judged, mean and total loss, blunders."""
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
                "blunders": sum(1 for loss in losses if loss >= threshold),
            }
        )
    return rows


def _moves_cell(report: DecisionReport) -> Text:
    """``played → engine`` (``played (engine agrees)``); allocations on two lines."""
    played = move_text(report.decision.move)
    if report.engine is None:
        return played + Text("  (forced)", style="dim")
    if report.engine == report.decision.move:
        return played + Text("  (engine agrees)", style="dim")
    joint = "\n→ " if isinstance(report.decision.move, Allocate) else " → "
    return played + Text(joint) + move_text(report.engine)


def _loss_cell(report: DecisionReport, threshold: float) -> Text:
    if report.forced:
        return Text("forced", style="dim")
    if report.loss is None:
        return Text("n/a", style="dim")
    text = percent(report.loss) + ("~" if report.estimated else "")
    if report.loss >= threshold:
        return Text(text + " !", style="bold red")
    return Text(text)


def analyze_command(
    path: str,
    console: Console,
    seat: int | None,
    iterations: int,
    threads: int,
    seed: int,
    threshold: float,
    as_json: bool,
    show_all: bool,
) -> None:
    """Run `csl analyze`: the blunder report of one seat (or all seats) of a record."""
    record, reference = load_checked(path)
    players = reference.players
    if seat is not None and not 0 <= seat < players:
        raise CliInputError(
            f"--seat: seat {seat} is not in this {players}-player game (seats 0..{players - 1})"
        )
    seats = [seat] if seat is not None else list(range(players))
    progress = console if console.is_terminal and not as_json else None
    reports = analyze_game(reference, seats, iterations, threads, seed, progress)
    rows = summary_rows(reports, seats, threshold)
    if as_json:
        print(
            json.dumps(
                {
                    "record": path,
                    "iterations": iterations,
                    "seed": seed,
                    "threshold": threshold,
                    "decisions": [r.to_json() for r in reports],
                    "summary": rows,
                },
                indent=2,
            )
        )
        return
    agents = record_agents(record, players)
    names = [
        f"{label} ({agents[s]})" if agents else label
        for s, label in enumerate(seat_labels(players))
    ]
    console.print(
        f"Analysis of {path}, {iterations} search iterations per decision. win: the played move's "
        "win probability, best: the engine's choice's; ! marks a blunder "
        f"(loss of {percent(threshold)} "
        "or more), ~ an allocation valued by the weather search that follows it.",
        soft_wrap=False,
    )
    table = Table(box=None, title_justify="left", pad_edge=False, header_style="bold")
    for column in ("when", "seat", "played → engine", "win", "best", "loss"):
        table.add_column(column, justify="right" if column in ("win", "best", "loss") else "left")
    for report in reports:
        blunder = report.loss is not None and report.loss >= threshold
        if not (show_all or blunder):
            continue
        table.add_row(
            report.decision.where,
            str(report.decision.seat),
            _moves_cell(report),
            percent(report.played_win) if report.played_win is not None else "-",
            percent(report.best_win) if report.best_win is not None else "-",
            _loss_cell(report, threshold),
        )
    if table.row_count:
        console.print(table)
    else:
        console.print("No blunders found.")
    summary = Table(title="Summary", title_justify="left", show_edge=False, pad_edge=False)
    for column in ("seat", "decisions", "judged", "mean loss", "total loss", "blunders"):
        summary.add_column(column, justify="left" if column == "seat" else "right")
    for row in rows:
        summary.add_row(
            names[row["seat"]],
            str(row["decisions"]),
            str(row["evaluated"]),
            percent(row["mean_loss"]) if row["mean_loss"] is not None else "-",
            percent(row["total_loss"]),
            str(row["blunders"]),
        )
    console.print(summary)
