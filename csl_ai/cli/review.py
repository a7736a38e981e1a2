"""`csl replay` and `csl analyze`: walk a recorded game decision by decision.

A record is first checked in full by `csl_ai.records.replay_record` (which names the
first illegal step). `csl_ai.analysis.Replayer` then re-enacts the checked game from its
deals on a fresh `Game`, stopping before each decision so a view can narrate it; the
analysis itself (`csl_ai.analysis.analyze_game`) judges each decision, and this module
renders its reports.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from csl_ai.analysis import (
    RECHECK_FACTOR,
    Decision,
    DecisionReport,
    Interval,
    Replayer,
    analyze_game,
    summary_rows,
)
from csl_ai.cli.common import CliInputError
from csl_ai.cli.render import (
    GameView,
    line_text,
    move_text,
    percent,
    position_text,
    scores_table,
    sky_text,
    tallies_table,
)
from csl_ai.game import Game
from csl_ai.moves import Allocate

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


VERDICT_STYLES = {"blunder": "bold red", "close": "yellow", "ok": "", "forced": "dim", "n/a": "dim"}


def _moves_cell(report: DecisionReport) -> Text:
    """``played → engine`` (``played (engine agrees)``); allocations on two lines."""
    played = move_text(report.decision.move)
    if report.engine is None:
        return played + Text("  (forced)", style="dim")
    if report.engine == report.decision.move:
        return played + Text("  (engine agrees)", style="dim")
    joint = "\n→ " if isinstance(report.decision.move, Allocate) else " → "
    return played + Text(joint) + move_text(report.engine)


def _win_cell(win: float | None, interval: Interval | None) -> str:
    """``37.6% ±2.0`` (the larger side of the 95% interval, in points), ``-`` if unknown."""
    if win is None:
        return "-"
    if interval is None:
        return percent(win) + " ±?"
    half = max(win - interval[0], interval[1] - win)
    return f"{percent(win)} ±{100 * half:.1f}"


def _loss_cell(report: DecisionReport) -> str:
    if report.loss is None:
        return "-"
    return percent(report.loss) + ("~" if report.estimated else "")


def _verdict_cell(report: DecisionReport) -> Text:
    return Text(
        report.verdict + ("*" if report.rechecked else ""), style=VERDICT_STYLES[report.verdict]
    )


def table_contexts(reference: Game, decisions: set[Decision]) -> dict[Decision, Text]:
    """What was on the table at each of these decisions: the hand or piles and the sky
    line (allocations, bets), the pile, the trick so far and the sky card at stake (plays)."""
    contexts: dict[Decision, Text] = {}
    replayer = Replayer(reference)
    for decision in replayer:
        if decision not in decisions:
            continue
        game = replayer.game
        text = position_text(game.observation(decision.seat))
        log = game.rounds[decision.round]
        if decision.trick is None:
            text.append("; sky ")
            text.append_text(line_text(game, log.line))
        else:
            trick = log.tricks[-1] if log.tricks else None
            if trick is None or trick.complete or not trick.plays:
                text.append("; to lead")
            text.append("; sky card ")
            text.append_text(sky_text(game.sky_cards[log.line[decision.trick]]))
        contexts[decision] = text
    return contexts


def budget_text(level: str | None, iterations: int) -> str:
    """``level normal, 10,000 iterations`` (or ``12,000 iterations`` without a level)."""
    return (f"level {level}, " if level is not None else "") + f"{iterations:,} iterations"


def analyze_command(
    path: str,
    console: Console,
    seat: int | None,
    level: str | None,
    iterations: int | None,
    threads: int,
    seed: int,
    threshold: float,
    as_json: bool,
    show_all: bool,
) -> None:
    """Run `csl analyze`: the blunder report of one seat (or all seats) of a record.

    level names the budget (None when --iterations set it; its iterations then follow the
    record's player count); iterations is the budget without a level.
    """
    from csl_ai.agents import level_iterations

    record, reference = load_checked(path)
    players = reference.players
    if level is not None:
        iterations = level_iterations(level, players)
    assert iterations is not None
    if seat is not None and not 0 <= seat < players:
        raise CliInputError(
            f"--seat: seat {seat} is not in this {players}-player game (seats 0..{players - 1})"
        )
    seats = [seat] if seat is not None else list(range(players))

    def show_progress(index: int, total: int, decision: Decision) -> None:
        console.print(
            f"analysing {decision.where} seat {decision.seat} ({index + 1}/{total})", end="\r"
        )

    live = console.is_terminal and not as_json
    reports = analyze_game(
        reference, seats, iterations, threads, seed, show_progress if live else None, threshold
    )
    if live:
        console.print(" " * (console.width - 1), end="\r")
    rows = summary_rows(reports, seats)
    if as_json:
        print(
            json.dumps(
                {
                    "record": path,
                    "level": level,
                    "iterations": iterations,
                    "recheck_iterations": RECHECK_FACTOR * iterations,
                    "seed": seed,
                    "threshold": threshold,
                    "decisions": [r.to_json() for r in reports],
                    "summary": rows,
                },
                indent=2,
            )
        )
        return
    console.print(
        f"Analysis of {path} at {budget_text(level, iterations)} a decision. "
        "win, best: the win probability of the played move and of the engine's choice, "
        f"± its 95% interval. blunder: loses {percent(threshold)} or more, intervals apart; "
        "close: loses as much, intervals overlap even after a second search "
        f"(*: {RECHECK_FACTOR * iterations:,} iterations); "
        "~: an allocation valued by the weather search after it.",
    )
    names = seat_labels(players)
    agents = record_agents(record, players)
    if agents is not None:
        console.print(
            "Players: " + ", ".join(f"{names[s]} {agents[s]}" for s in seats), soft_wrap=True
        )
    listed = [r for r in reports if show_all or r.flagged]
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("when", "seat", "played → engine", "win", "best", "loss", "verdict"):
        table.add_column(column, justify="right" if column in ("win", "best", "loss") else "left")
    for report in listed:
        table.add_row(
            report.decision.where,
            str(report.decision.seat),
            _moves_cell(report),
            _win_cell(report.played_win, report.played_ci),
            _win_cell(report.best_win, report.best_ci),
            _loss_cell(report),
            _verdict_cell(report),
        )
    if listed:
        console.print(table)
    else:
        console.print("No blunders or close calls found.")
    flagged = [r for r in reports if r.flagged]
    if flagged:
        contexts = table_contexts(reference, {r.decision for r in flagged})
        context = Table(
            title="On the table at each blunder and close call",
            title_justify="left",
            box=None,
            pad_edge=False,
            header_style="bold",
        )
        for column in ("when", "seat", "hand, piles or pile; trick so far; sky"):
            context.add_column(column)
        for report in flagged:
            context.add_row(
                report.decision.where, str(report.decision.seat), contexts[report.decision]
            )
        console.print(context)
    summary = Table(title="Summary", title_justify="left", show_edge=False, pad_edge=False)
    for column in ("seat", "decisions", "judged", "mean loss", "total loss", "blunders", "close"):
        summary.add_column(column, justify="left" if column == "seat" else "right")
    for row in rows:
        summary.add_row(
            names[row["seat"]],
            str(row["decisions"]),
            str(row["evaluated"]),
            percent(row["mean_loss"]) if row["mean_loss"] is not None else "-",
            percent(row["total_loss"]),
            str(row["blunders"]),
            str(row["close"]),
        )
    console.print(summary)
