"""The Candy Lab faces of the commands (``--game candy-lab``): play, replay, best-move, analyze, tournament.

The commands in ``csl_ai.cli.app`` take a ``--game`` option (`GameName`) and hand a Candy
Lab run to the functions here:

- `play_command`: a game in the terminal, people at some seats (``--humans``) and the AI
  (``--ai SPEC``: random, heuristic, ismcts[:fast|normal|strong|iters=N|ms=N]) at the
  others. At a prompt a person types a move's number in the list shown, or its text
  (``play #17 BOP @4``, ``draw down``, ...); ``board`` shows the table again, ``?`` or
  ``help`` the input forms, ``quit`` stops. A refused input is one line and the prompt
  comes back. The record (``candylab-record``) is saved when the game ends, and also
  when it is cut short (quit, end of input, Ctrl-C);
- `replay_command`: re-check a record move by move and show it;
- `best_move_command`: search the decision at the end of an unfinished record;
- `analyze_command`: the blunder report of a record (``csl analyze --game candy-lab``);
- `tournament_command`: agents on duplicate deals, in this process or on Ray, as CSL's
  tournaments are played (``csl tournament --game candy-lab``, ``--resume``).

Everything heavy (the rules, the search) is imported when a command runs.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console

from csl_ai.cli.common import (
    EXIT_FAILURE,
    CliInputError,
    fail,
    interrupt_exit_code,
    interrupt_text,
)
from csl_ai.errors import CslError, path_label, short_repr

if TYPE_CHECKING:
    from csl_ai.candylab import Game, Observation
    from csl_ai.candylab.agents import Agent
    from csl_ai.candylab.search import SearchResult


class GameName(str, Enum):
    """The games the commands play."""

    CSL = "csl"
    CANDY_LAB = "candy-lab"


GAME_HELP: Final = "The game: csl (Candy Spiders Leopards) or candy-lab (Candy Lab)."
HUMAN: Final = "human"
INPUT_HELP: Final = (
    "Type a move's number from the list, or its text as listed (play #ID [COLOURS] @POS, "
    "give_back #BAR left|right, stop, draw down|up0|up1|up2, effect #BAR -> ...); "
    "'board' shows the table, 'hint' the AI's advice (at the AI seats' level), 'quit' "
    "stops (the record is saved)."
)


class _Quit(Exception):
    pass


def refuse_options(game: str, given: dict[str, bool]) -> None:
    """CliInputError naming the first option given that the game does not take."""
    for option, is_given in given.items():
        if is_given:
            raise CliInputError(f"{option}: not an option of {game}")


def parse_humans(text: str, players: int) -> list[int]:
    """The seats people play: ``none`` or seats separated by commas."""
    if text.strip().lower() == "none":
        return []
    seats: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or not 0 <= int(part) < players:
            raise CliInputError(
                f"--humans: seats are 0..{players - 1} separated by commas, or none; "
                f"got {short_repr(text)}"
            )
        if int(part) not in seats:
            seats.append(int(part))
    return sorted(seats)


def check_players(players: int) -> None:
    if not 2 <= players <= 4:
        raise CliInputError(f"--players: Candy Lab is for 2 to 4 players, got {players}")


# --- showing the table ----------------------------------------------------------------
def board_lines(obs: Observation, names: list[str]) -> list[str]:
    """The table as obs's seat sees it, a few plain lines."""
    from csl_ai.bits import bits
    from csl_ai.candylab.state import PHASE_NAMES

    cat = obs.rules.catalogue
    n = obs.players
    lines = [
        f"Turn {obs.turn + 1}: {names[obs.current] if obs.current >= 0 else 'nobody'} "
        f"to play ({PHASE_NAMES[obs.phase]}).",
        "Belt: "
        + (", ".join(f"@{i} {cat.bar_text(b)}" for i, b in enumerate(obs.belt)) or "empty"),
        "Face up: "
        + ", ".join(
            f"up{i} {cat.order_text(c)}" if c >= 0 else f"up{i} -"
            for i, c in enumerate(obs.face_up)
        )
        + f"; face-down pile {obs.pile_size}, box {obs.box_size}.",
    ]
    for p in range(n):
        bars = " ".join(cat.bar_text(b) for b in bits(obs.bars[p])) or "-"
        stack = " ".join(cat.order_text(c) for c in obs.stacks[p]) or "-"
        gold = ", Golden Sugar" if obs.golden == p else ""
        lines.append(
            f"{names[p]}: {obs.scores[p]} points{gold}; {obs.hand_sizes[p]} cards in hand; "
            f"bars {bars}; played {stack}"
        )
    if n == 2:
        lines.append(f"Third hand: {obs.third_hand_size} cards.")
    hand = " ".join(f"#{c} {cat.order_text(c)}" for c in bits(obs.hand)) or "empty"
    lines.append(f"Your hand: {hand}")
    if obs.pending:
        lines.append(
            "Effects to apply: " + " ".join(f"#{b} {cat.bar_text(b)}" for b in bits(obs.pending))
        )
    if obs.draws_left:
        lines.append(f"Cards still to draw: {obs.draws_left}")
    return lines


def seat_names(players: int, specs: list[str]) -> list[str]:
    return [
        f"seat {p} (you)" if specs[p] == HUMAN else f"seat {p} ({specs[p]})" for p in range(players)
    ]


# --- play -----------------------------------------------------------------------------
def choose_move(text: str, game: Game) -> int:
    """The move a person's answer names: a number in the list, or a move's text; a
    CslError (one line) for anything else."""
    from csl_ai.candylab.notation import parse_move
    from csl_ai.errors import IllegalMoveError

    moves = game.legal_moves()
    answer = text.strip()
    if answer.isdigit():
        k = int(answer)
        if not 1 <= k <= len(moves):
            raise CliInputError(f"no move {k}: choose 1..{len(moves)}")
        return moves[k - 1]
    move = parse_move(answer, game.rules.catalogue)
    from csl_ai.candylab.core import is_legal

    if not is_legal(game.state, move):
        raise IllegalMoveError(f"{game.move_text(move)!r} is not a legal move now")
    return move


def play_command(
    *,
    players: int,
    humans: str,
    ai: str,
    seed: int | None,
    record: str | None,
    first_seat: int,
    console: Console,
    hint: bool = False,
    resume: str | None = None,
    setup_given: Sequence[str] = (),
) -> int:
    """`csl play --game candy-lab`: play to the end, save the record; the exit code. With
    hint, the AI's advice is shown before each of the human's decisions. With resume, an
    unfinished record goes on (its rules, seats and seed; setup_given names the set-up
    options given beside it, which are refused) and is saved back to its file unless
    record names another; the record is locked while it is played."""
    from csl_ai.cli.play import check_not_taken, check_writable, console_ask
    from csl_ai.record_lock import RecordInUseError, RecordLock, in_use_message

    locks: list[RecordLock] = []

    def lock(path: Path, option: str) -> None:
        try:
            locks.append(RecordLock.acquire(path, PROGRAM))
        except RecordInUseError as e:
            raise RecordInUseError(f"{option}: {in_use_message(path, e.holder)}", e.holder) from None

    try:
        path: Path | None = None
        if record is not None:
            path = Path(record)
            check_writable(path)
            check_not_taken(path, resume)
        if resume is not None:
            if setup_given:
                raise CliInputError(
                    "--resume: the game's rules, seats and seed come from the record; "
                    f"leave out {', '.join(setup_given)}"
                )
            lock(Path(resume), "--resume")
            game, specs = _resumed(resume)
            if path is None:
                path = Path(resume)
                check_writable(path, "--resume")
            secret = False
        else:
            game, specs, secret = _new_game(players, humans, ai, seed, first_seat)
        if path is not None and not (resume is not None and _same_file(path, resume)):
            lock(path, "--record")
        return _play(game, specs, secret, path, console, console_ask(console), hint, resume)
    finally:
        for held in reversed(locks):
            held.release()


PROGRAM: Final = "csl play --game candy-lab"
"""Who holds a record's lock while this command plays it."""


def _same_file(path: Path, other: str) -> bool:
    import os

    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


def _new_game(
    players: int, humans: str, ai: str, seed: int | None, first_seat: int
) -> tuple[Game, list[str], bool]:
    """A new game from the options: the game, each seat's spec, whether its seed is secret."""
    from csl_ai.candylab import CandyLabRules, Game
    from csl_ai.candylab.players import parse_spec
    from csl_ai.seeds import MAX_SEED, fresh_seed

    check_players(players)
    if not 0 <= first_seat < players:
        raise CliInputError(f"--first-seat: must be a seat 0..{players - 1}, got {first_seat}")
    if seed is not None and not 0 <= seed <= MAX_SEED:
        raise CliInputError(f"--seed: must be 0..{MAX_SEED}, got {seed}")
    human_seats = parse_humans(humans, players)
    parse_spec(ai)
    game_seed = fresh_seed() if seed is None else seed
    rules = CandyLabRules(players=players, first_seat=first_seat)
    specs = [HUMAN if p in human_seats else ai.strip() for p in range(players)]
    return Game(rules, seed=game_seed), specs, seed is None


def _resumed(path: str) -> tuple[Game, list[str]]:
    """The unfinished game of a record and its seats' specs; one-line errors otherwise."""
    from csl_ai.candylab.players import parse_spec
    from csl_ai.candylab.records import load_record, replay_record

    where = f"--resume {path_label(path)}"
    record = load_record(path)
    game = replay_record(record)
    if game.is_over:
        raise CliInputError(f"{where}: the game is over ({game.summary()}); nothing to resume")
    specs = record.get("agents")
    if (
        not isinstance(specs, list)
        or len(specs) != game.players
        or not all(isinstance(spec, str) for spec in specs)
    ):
        raise CliInputError(
            f"{where}: agents: one spec per seat ({game.players}) is needed to seat the players"
        )
    for seat, spec in enumerate(specs):
        if spec != HUMAN:
            try:
                parse_spec(spec)
            except CslError as e:
                raise CliInputError(f"{where}: agents[{seat}]: {e}") from None
    return game, list(specs)


def _play(
    game: Game,
    specs: list[str],
    secret: bool,
    path: Path | None,
    console: Console,
    ask: Any,
    hint: bool,
    resume: str | None,
) -> int:
    """Play the game to its end (or until stopped) and save its record; the exit code."""
    from csl_ai.candylab.players import make_agent, parse_spec
    from csl_ai.seeds import labelled_seed

    players = game.players
    game_seed = game.seed
    assert game_seed is not None
    human_seats = [p for p in range(players) if specs[p] == HUMAN]
    agents: list[Agent | None] = [
        None if specs[p] == HUMAN else make_agent(specs[p], labelled_seed(game_seed, f"agent{p}"))
        for p in range(players)
    ]
    ai_budget = next((parse_spec(s)[1] for s in specs if s != HUMAN), None)
    advice = _Advice(ai_budget, game_seed)
    names = seat_names(players, specs)
    rules = game.rules
    if resume is not None:
        _say(
            console,
            f"Candy Lab, {players} players, resumed at turn {game.state.turn + 1} "
            f"({len(game.moves)} moves played); " + ", ".join(names) + ".",
        )
    else:
        _say(
            console,
            f"Candy Lab, {players} players (catalogue {rules.catalogue.name!r}); "
            + ", ".join(names)
            + ("." if secret else f"; seed {game_seed}."),
        )
    status, code = "over", 0
    try:
        shown_turn = -1
        while not game.is_over:
            seat = game.current
            agent = agents[seat]
            if agent is None:
                obs = game.observation(seat)
                if obs.turn != shown_turn or len(human_seats) > 1:
                    _print_lines(console, board_lines(obs, names))
                    shown_turn = obs.turn
                if hint and len(obs.legal_moves) > 1:
                    advice.show(game, seat, console)
                game.play(_human_move(game, seat, names, ask, console, advice))
            else:
                move = agent.act(game.observation(seat))
                text = game.move_text(move)
                game.play(move)
                _say(console, f"{names[seat]}: {text}")
    except _Quit:
        status = "quit"
    except EOFError:
        status, code = "input ended", EXIT_FAILURE
        _say(console, "Input ended before the game did.")
    except KeyboardInterrupt as e:
        status, code = interrupt_text(e), interrupt_exit_code(e)
        _say(console, f"{status[0].upper()}{status[1:]}.")
    if game.is_over:
        _say(console, game.summary())
        if secret:
            _say(console, f"This deal again: --seed {game_seed}")
    else:
        _say(console, f"Game {status} at turn {game.state.turn + 1}.")
    saved = _save(game, specs, path, console, status)
    if not game.is_over:
        _say(console, f"Go on with: csl play --game candy-lab --resume {shlex.quote(str(saved))}")
    return code


def _save(game: Game, specs: list[str], path: Path | None, console: Console, status: str) -> Path:
    """Save the game's record at path, or at a new name in the records folder; where."""
    from csl_ai.candylab.records import game_to_record, new_record_path, save_record
    from csl_ai.records import records_folder

    meta = None if game.is_over else {"status": status}
    record = game_to_record(game, agents=specs, meta=meta)
    target = path if path is not None else new_record_path(records_folder())
    save_record(record, target)
    _say(console, f"Record saved to {path_label(target)}.")
    return target


def _say(console: Console, text: str) -> None:
    """Print text as it is (no markup, no emoji codes: bars read ``O2:none``)."""
    console.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)


def _print_lines(console: Console, lines: list[str]) -> None:
    for line in lines:
        _say(console, line)


class _Advice:
    """The hint: a search from the waiting seat's view at the AI seats' budget (the
    default level when the AI seats do not search), seeded from the game's seed and the
    decision's place, so the same deal gives the same advice."""

    def __init__(self, budget: Any, game_seed: int) -> None:
        from csl_ai.candylab.players import DEFAULT_LEVEL, LEVELS

        if budget is None:
            self.iterations, self.time_ms = LEVELS[DEFAULT_LEVEL], None
            self.text = f"level {DEFAULT_LEVEL}"
        else:
            self.iterations, self.time_ms = budget.iterations, budget.time_ms
            self.text = "the AI seats' level"
        self.game_seed = game_seed

    def show(self, game: Game, seat: int, console: Console) -> None:
        from csl_ai.candylab.search import SearchLimit, search
        from csl_ai.seeds import labelled_seed

        obs = game.observation(seat)
        seed = labelled_seed(self.game_seed, f"hint{seat}-{len(game.moves)}")
        result = search(
            obs, SearchLimit(iterations=self.iterations, time_ms=self.time_ms, seed=seed)
        )
        best = result.moves[0]
        lines = [
            f"Hint ({self.text}, {result.iterations:,} iterations): "
            f"{game.move_text(result.best_move)} (wins {best.win_chance:.0%} of its playouts)"
        ]
        for m in result.moves[1:3]:
            lines.append(f"  then {game.move_text(m.move)} ({m.win_chance:.0%})")
        _print_lines(console, lines)


def _human_move(
    game: Game, seat: int, names: list[str], ask: Any, console: Console, advice: _Advice
) -> int:
    moves = game.legal_moves()
    _say(console, f"{names[seat]}, your moves:")
    for i, m in enumerate(moves, 1):
        _say(console, f"  {i:>2}. {game.move_text(m)}")
    while True:
        answer = ask(f"{names[seat]}> ").strip()
        low = answer.lower()
        if not answer:
            continue
        if low in ("quit", "exit"):
            raise _Quit
        if low in ("?", "help"):
            _say(console, INPUT_HELP)
            continue
        if low == "board":
            _print_lines(console, board_lines(game.observation(seat), names))
            continue
        if low == "hint":
            if len(moves) == 1:
                _say(console, f"Only one move: {game.move_text(moves[0])}")
            else:
                advice.show(game, seat, console)
            continue
        if low in ("moves", "list"):
            for i, m in enumerate(moves, 1):
                _say(console, f"  {i:>2}. {game.move_text(m)}")
            continue
        try:
            return choose_move(answer, game)
        except CslError as e:
            _say(console, f"Refused: {e}")


# --- replay ---------------------------------------------------------------------------
def replay_command(path: str, console: Console, summary: bool) -> None:
    """`csl replay --game candy-lab RECORD`: check every move and figure, then show it."""
    from csl_ai.candylab import Game
    from csl_ai.candylab.records import load_record, replay_record

    record = load_record(path)
    checked = replay_record(record)
    rules = checked.rules
    _say(
        console,
        f"Record {path_label(path)}: Candy Lab, {rules.players} players, catalogue "
        f"{rules.catalogue.name!r}, seed {checked.seed}, {len(checked.moves)} moves; every "
        "move and score checks out.",
    )
    agents = record.get("agents")
    if agents:
        _say(console, "Seats: " + ", ".join(f"seat {p} {a}" for p, a in enumerate(agents)))
    if not summary:
        game = Game(rules, seed=checked.seed)
        for move in checked.moves:
            seat, turn = game.current, game.state.turn
            text = game.move_text(move)
            game.play(move)
            _say(console, f"turn {turn + 1:>2}  seat {seat}: {text}")
    _say(console, checked.summary())


# --- best move ------------------------------------------------------------------------
def best_move_command(
    position: str,
    *,
    level: str | None,
    iterations: int | None,
    time_ms: float | None,
    seed: int | None,
    top: int,
    as_json: bool,
    console: Console,
    threads: int = 1,
) -> None:
    """`csl best-move --game candy-lab RECORD`: rank the moves of the seat to play at the
    end of an unfinished record, from that seat's view only."""
    import typer

    from csl_ai.candylab.players import DEFAULT_LEVEL, LEVELS
    from csl_ai.candylab.records import load_record, replay_record
    from csl_ai.candylab.search import SearchLimit, search

    if level is not None and level not in LEVELS:
        raise CliInputError(
            f"--level: unknown level {short_repr(level)} (expected {', '.join(LEVELS)})"
        )
    if level is not None and (iterations is not None or time_ms is not None):
        raise CliInputError("--level and --iterations/--time-ms: give one budget")
    if iterations is None and time_ms is None:
        level = level or DEFAULT_LEVEL
        iterations = LEVELS[level]
    game = replay_record(load_record(position))
    if game.is_over:
        raise CliInputError(f"position {path_label(position)}: the game is over; no move to make")
    seat = game.current
    obs = game.observation(seat)
    result = search(
        obs, SearchLimit(iterations=iterations, time_ms=time_ms, seed=seed, threads=threads)
    )
    if as_json:
        typer.echo(json.dumps({"level": level, **result.to_json(game.move_text)}, indent=2))
        return
    _print_search(console, game, result, top, level)


def _print_search(
    console: Console, game: Game, result: SearchResult, top: int, level: str | None
) -> None:
    from csl_ai.candylab.state import PHASE_NAMES

    budget = f"level {level}" if level else "budget"
    _say(
        console,
        f"Seat {result.seat}, {PHASE_NAMES[game.state.phase]}: {budget}, "
        f"{result.iterations:,} iterations, {result.elapsed_s:.2f} s.",
    )
    names = [f"seat {p}" for p in range(game.players)]
    _print_lines(console, board_lines(game.observation(result.seat), names))
    _say(console, f"Best move: {game.move_text(result.best_move)}")
    for m in result.moves[:top]:
        lo, hi = m.ci95
        interval = f"{max(lo, 0):.0%}..{min(hi, 1):.0%}" if m.visits > 1 else "-"
        _say(
            console,
            f"  {game.move_text(m.move):40s} visits {m.visits:>6,}  "
            f"win {m.win_chance:5.1%}  share {m.mean_return:5.1%} ({interval})",
        )
    if len(result.moves) > top:
        _say(console, f"... {len(result.moves) - top} more (--top N to list more)")


# --- analyze --------------------------------------------------------------------------
def analyze_command(
    path: str,
    *,
    seat: int | None,
    level: str | None,
    iterations: int | None,
    seed: int,
    threshold: float,
    as_json: bool,
    show_all: bool,
    console: Console,
    threads: int = 1,
) -> None:
    """`csl analyze --game candy-lab RECORD`: the blunder report of a Candy Lab record
    (``csl_ai.candylab.analysis``), as `csl analyze` gives CSL's: each decision of the
    chosen seats searched from that seat's view, the engine's choice beside the move
    played and the win lost; the record is checked in full first (one line naming the
    first bad field or move)."""
    from rich.table import Table
    from rich.text import Text

    from csl_ai.candylab.analysis import RECHECK_FACTOR, analyze_game, summary_rows
    from csl_ai.candylab.players import DEFAULT_LEVEL, LEVELS
    from csl_ai.candylab.records import load_record, replay_record
    from csl_ai.cli.render import percent
    from csl_ai.cli.review import VERDICT_STYLES

    if level is not None and level not in LEVELS:
        raise CliInputError(
            f"--level: unknown level {short_repr(level)} (expected {', '.join(LEVELS)})"
        )
    if level is not None and iterations is not None:
        raise CliInputError(
            f"--level and --iterations: give one budget (level {level} is "
            f"{LEVELS[level]:,} iterations)"
        )
    if iterations is None:
        level = level or DEFAULT_LEVEL
        iterations = LEVELS[level]
    record = load_record(path)
    reference = replay_record(record)
    players = reference.players
    if seat is not None and not 0 <= seat < players:
        raise CliInputError(
            f"--seat: seat {seat} is not in this {players}-player game (seats 0..{players - 1})"
        )
    seats = [seat] if seat is not None else list(range(players))
    live = console.is_terminal and not as_json

    def show_progress(index: int, total: int, decision: Any) -> None:
        console.print(
            f"analysing {decision.where} seat {decision.seat} ({index + 1}/{total})",
            end="\r", markup=False, highlight=False,
        )

    reports = analyze_game(
        reference, seats, iterations, seed, show_progress if live else None, threshold, threads
    )
    if live:
        console.print(" " * (console.width - 1), end="\r")
    rows = summary_rows(reports, seats)
    text = reference.move_text
    if as_json:
        import typer

        typer.echo(
            json.dumps(
                {
                    "game": "candy-lab",
                    "record": path,
                    "level": level,
                    "iterations": iterations,
                    "recheck_iterations": RECHECK_FACTOR * iterations,
                    "seed": seed,
                    "threshold": threshold,
                    "decisions": [r.to_json(text) for r in reports],
                    "summary": rows,
                },
                indent=2,
            )
        )
        return
    budget = (f"level {level}, " if level is not None else "") + f"{iterations:,} iterations"
    _say(
        console,
        f"Analysis of {path_label(path)} (Candy Lab, {players} players, {len(reports)} "
        f"decisions) at {budget} a decision. win, best: the share of the win the search "
        "expects after the played move and after its own choice (a win shared by k counts "
        f"1/k), ± its 95% interval. blunder: loses {percent(threshold)} or more, intervals "
        "apart; close: loses as much, intervals overlap even after a second search "
        f"(*: {RECHECK_FACTOR * iterations:,} iterations).",
    )
    agents = record.get("agents")
    if agents:
        _say(console, "Seats: " + ", ".join(f"seat {s} {agents[s]}" for s in seats))

    def win_cell(win: float | None, interval: tuple[float, float] | None) -> str:
        if win is None:
            return "-"
        if interval is None:
            return percent(win) + " ±?"
        return f"{percent(win)} ±{100 * max(win - interval[0], interval[1] - win):.1f}"

    listed = [r for r in reports if show_all or r.flagged]
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("when", "seat", "played → engine", "win", "best", "loss", "verdict"):
        table.add_column(column, justify="right" if column in ("win", "best", "loss") else "left")
    for r in listed:
        played = text(r.decision.move)
        if r.engine is None:
            moves = Text(played) + Text("  (forced)", style="dim")
        elif r.agrees:
            moves = Text(played) + Text("  (engine agrees)", style="dim")
        else:
            moves = Text(f"{played} → {text(r.engine)}")
        table.add_row(
            Text(r.decision.where),
            Text(str(r.decision.seat)),
            moves,
            Text(win_cell(r.played_win, r.played_ci)),
            Text(win_cell(r.best_win, r.best_ci)),
            Text("-" if r.loss is None else percent(r.loss)),
            Text(r.verdict + ("*" if r.rechecked else ""), style=VERDICT_STYLES[r.verdict]),
        )
    if listed:
        console.print(table)
    else:
        _say(console, "No blunders or close calls found.")
    flagged = {r.decision.index for r in reports if r.flagged}
    if flagged:
        from csl_ai.candylab.analysis import decisions

        _say(console, "On the table at each blunder and close call:")
        cat = reference.rules.catalogue
        for decision, game in decisions(reference):
            if decision.index not in flagged:
                continue
            obs = game.observation(decision.seat)
            hand = " ".join(cat.order_text(c) for c in _bits(obs.hand)) or "empty"
            belt = " ".join(cat.bar_text(b) for b in obs.belt) or "empty"
            pending = " ".join(cat.bar_text(b) for b in _bits(obs.pending))
            _say(
                console,
                f"  {decision.where} seat {decision.seat} ({decision.phase}): hand {hand}; "
                f"belt {belt}" + (f"; effects to apply {pending}" if pending else ""),
            )
    summary = Table(title="Summary", title_justify="left", show_edge=False, pad_edge=False)
    for column in ("seat", "decisions", "judged", "mean loss", "total loss", "blunders", "close"):
        summary.add_column(column, justify="left" if column == "seat" else "right")
    for row in rows:
        summary.add_row(
            f"seat {row['seat']}",
            str(row["decisions"]),
            str(row["evaluated"]),
            percent(row["mean_loss"]) if row["mean_loss"] is not None else "-",
            percent(row["total_loss"]),
            str(row["blunders"]),
            str(row["close"]),
        )
    console.print(summary)


def _bits(mask: int) -> list[int]:
    from csl_ai.bits import bits

    return list(bits(mask))


# --- tournament -----------------------------------------------------------------------
def tournament_command(
    *,
    agents: str | None,
    players: int | None,
    games: int | None,
    out: str | None,
    seed: int | None,
    workers: int | None,
    quiet: bool,
    console: Console,
    address: str | None = None,
    ray_token_file: str | None = None,
    always_ray: bool = False,
    batch: int | None = None,
    resume: str | None = None,
) -> None:
    """`csl tournament --game candy-lab`: agents on duplicate deals, the standings with 95%
    intervals. The games are played as CSL's are (``csl_ai.candylab.tournament``: the
    tournament harness, in this process or on Ray, with the same --workers, --ray,
    --address, --ray-token-file and --batch); with --out DIR, DIR/tournament.json, then
    DIR/games.jsonl (one record a line, written as games finish) and DIR/summary.json,
    and ``--resume DIR`` plays only the games still missing. A run that fails (Ray
    unreachable, workers dying, a game raising) says so in one line and exits 1, its
    finished games kept."""
    from csl_ai.candylab import CandyLabRules
    from csl_ai.candylab import tournament as runs
    from csl_ai.candylab.duplicate import DuplicateConfig
    from csl_ai.candylab.players import parse_spec
    from csl_ai.cli.tournament_cmd import (
        check_cluster_or_fail,
        refuse_with_resume,
        run_options,
        split_agent_specs,
    )
    from csl_ai.seeds import fresh_seed
    from csl_ai.tournament.runner import TournamentRunError
    from csl_ai.tournament.stats import MIN_INTERVAL_DEALS

    options = run_options(workers, address, batch, quiet, ray_token_file, always_ray)
    folder_name = resume if resume is not None else out
    if resume is not None:
        refuse_with_resume(
            {"--agents": agents, "--players": players, "--games": games, "--seed": seed},
            resume,
            out,
        )
        config = runs.RunFolder.open(resume).config
    else:
        if agents is None:
            raise CliInputError("--agents: missing, e.g. --agents ismcts:normal,heuristic")
        specs = list(split_agent_specs(agents))
        for spec in specs:
            parse_spec(spec)
        n = players if players is not None else 4
        check_players(n)
        if len(specs) > n:
            raise CliInputError(
                f"--agents: at most {n} agents for {n} players, got {len(specs)}"
            )
        count = games if games is not None else 100
        if not 1 <= count <= 1_000_000:
            raise CliInputError(f"--games: must be 1..1000000, got {count}")
        config = DuplicateConfig(
            agents=tuple(specs),
            rules=CandyLabRules(players=n),
            games=count,
            seed=seed if seed is not None else fresh_seed(31),
        )
        if out is not None:
            runs.RunFolder.check_new(out)
    check_cluster_or_fail(options)
    n, jobs = config.players, config.total_games
    _say(
        console,
        f"Candy Lab tournament: {', '.join(config.agents)}; {n} players, {jobs} games on "
        f"{config.deals} duplicate deals, seed {config.seed}"
        + (f"; resuming {path_label(resume)}." if resume is not None else "."),
    )
    shown = [0]

    def progress(done: int, total: int) -> None:
        step = max(1, total // 10)
        if not quiet and (done // step > shown[0] // step or done == total):
            _say(console, f"  {done}/{total} games")
        shown[0] = done

    notes = Console(stderr=True, highlight=False)

    def say(text: str) -> None:
        notes.print(text, markup=False, highlight=False, emoji=False, soft_wrap=True)

    try:
        if resume is not None:
            result = runs.resume(resume, options, say=say, progress=progress)
        else:
            result = runs.start(config, out, options, say=say, progress=progress)
    except TournamentRunError as e:
        message = str(e)
        if folder_name is None:
            message = message.replace("; games finished so far are kept, continue with --resume", "")
        fail(message, EXIT_FAILURE)
    except KeyboardInterrupt as e:
        kept = (
            f"; finished games are kept in {str(folder_name)!r}: continue with --resume "
            f"{str(folder_name)!r}"
            if folder_name is not None
            else ""
        )
        fail(f"{interrupt_text(e)}{kept}", interrupt_exit_code(e))
    for st in result.standings:
        interval = "" if st.ci95 is None else f"  95% [{st.ci95[0]:.1%}, {st.ci95[1]:.1%}]"
        _say(
            console,
            f"{st.agent:32s} win share {st.win_share:6.1%}{interval}  "
            f"({st.games} seats; fair {st.fair_share:.0%})",
        )
    if result.standings and result.standings[0].ci95 is None:
        deals = len({o.job.deal for o in result.outcomes})
        _say(
            console,
            f"No 95% intervals: {deals} deal{'' if deals == 1 else 's'} played, and an "
            f"interval needs {MIN_INTERVAL_DEALS} or more (raise --games)",
        )
    if folder_name is not None:
        _say(console, f"Results in {path_label(folder_name)}: tournament.json, games.jsonl, summary.json")


__all__ = [
    "GAME_HELP",
    "GameName",
    "analyze_command",
    "best_move_command",
    "parse_humans",
    "play_command",
    "refuse_options",
    "replay_command",
    "tournament_command",
]
