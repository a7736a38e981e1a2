"""`csl play`: a whole game in the terminal, humans at some seats and the AI at the others.

The game itself is a `csl_ai.session.Table` (the model `csl serve` shares): the AI seats
move through `Table.ai_step`, a human's move goes through `Table.play`, a takeback
through `Table.undo` and the hint, searched at the AI seats' own level, through
`Table.hint`. `PlaySession` only talks: it reads human input through an ``ask``
callable, so tests drive it directly or through stdin.

At a human prompt: the move in notation (``B7``; piles ``B7 R2 G5 | B1 R9 G9 | ...``;
``yes``/``no``), or ``?``/``rules`` (the rules of this game, then the input syntax),
``hint``, ``board``, ``score``, ``undo`` and ``quit``; a refused input says why and asks
again. A card play with one legal card is made for the human, with a line saying so.
The record is saved to the records folder (`csl_ai.records.records_folder`) unless
``--record`` names a file, when the game ends and also when it is cut short (Ctrl-C,
end of input, ``quit``); ``--resume`` continues an unfinished one and saves it back.
While the game is played its record is locked (`csl_ai.record_lock`), so no other
process plays it, or writes a new game under its name, at the same time.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from rich.console import Console
from rich.text import Text

from csl_ai.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    CliInputError,
    check_agent_budget,
    error_line,
    interrupt_exit_code,
    interrupt_text,
    parse_seats,
)
from csl_ai.cli.render import (
    GameView,
    cards_text,
    close_call_text,
    groups_of,
    line_text,
    move_text,
    percent,
    print_rules,
    round_wins_text,
    search_table,
    sky_text,
    tallies_table,
    trick_text,
    worth_line_text,
    worth_table,
)
from csl_ai.errors import CslError, IllegalMoveError, OutputWriteError, clip, path_label
from csl_ai.files import check_output_path, non_regular_kind
from csl_ai.game import COLOUR_NAMES, Game, Phase
from csl_ai.moves import Allocate, Move, Play, parse_move
from csl_ai.notation import card_str, cards_of, format_cards, format_piles, split_difference
from csl_ai.rules import StarOption
from csl_ai.session import DEFAULT_AI, HUMAN, Table, TableError, TableOptions

if TYPE_CHECKING:
    from csl_ai.record_lock import RecordLock
    from csl_ai.search import SearchResult

Ask = Callable[[str], str]
"""Reads one line of human input after showing a prompt; EOFError at end of input."""

HINT_TOP: Final = 5
QUIT_WORDS: Final = frozenset({"quit", "exit"})
HELP_WORDS: Final = frozenset({"?", "help", "rules"})
BOARD_WORDS: Final = frozenset({"board", "b"})
SCORE_WORDS: Final = frozenset({"score", "scores"})
UNDO_WORDS: Final = frozenset({"undo", "takeback"})
COMMANDS_HELP: Final = (
    "Also at any prompt: 'board' (the sky line with each card's worth to you, your cards, "
    "the trick), 'score' (the standings), 'hint' (the AI's advice), 'undo' (take back "
    "your last decision), 'rules' or '?' (this help), 'quit' (stop; the game is saved)."
)
MAX_ANSWER_CHARS: Final = 1000
"""Longest line read at a prompt; the rest of a longer line is skipped, not kept in memory."""


class QuitGame(Exception):
    """A human typed ``quit``: stop now and save what was played."""


def seat_names(players: int, humans: Sequence[int]) -> list[str]:
    """Display names: ``You`` for a lone human, ``seat N`` otherwise."""
    return [
        "You" if seat in humans and len(humans) == 1 else f"seat {seat}" for seat in range(players)
    ]


def check_human_move(game: Game, seat: int, move: Move) -> None:
    """Raise IllegalMoveError, worded to the person at the prompt (``your hand``, ``you
    must follow``) and naming the cards at fault, when seat's move breaks a rule that
    the game would refuse in terms of seat numbers; anything else is the game's to judge."""
    log = game.rounds[-1] if game.rounds else None
    if log is None or seat not in game.pending_seats():
        return
    if isinstance(move, Allocate) and game.phase is Phase.ALLOCATE:
        hand = game.hand(seat)
        problem = split_difference(move.piles, hand, "it")
        if problem:
            raise IllegalMoveError(
                f"piles {format_piles(move.piles)!r} are not a split of your hand: {problem} "
                f"(your hand: {format_cards(hand)})"
            )
    elif isinstance(move, Play) and game.phase is Phase.PLAY:
        core = game.core
        group = core.group
        piles = game.piles(seat)
        pile = piles[group]
        card = card_str(move.card)
        where = f"your pile for group {group + 1} holds {format_cards(pile)}"
        if not (pile >> move.card) & 1:
            other = next((g for g, p in enumerate(piles) if (p >> move.card) & 1), None)
            if other is not None:
                raise IllegalMoveError(
                    f"{card} is in your pile for group {other + 1}, and this trick is in "
                    f"group {group + 1}: {where}"
                )
            allocated = log.allocations[seat] or ()
            if any((p >> move.card) & 1 for p in allocated):
                raise IllegalMoveError(f"you have played {card} already; {where}")
            raise IllegalMoveError(f"{card} is not in your hand; {where}")
        legal = core.legal_plays()
        if not (legal >> move.card) & 1:
            led = COLOUR_NAMES[core.led_colour]
            raise IllegalMoveError(
                f"{card} does not follow: you must follow {led} with {format_cards(legal)}"
            )


def moves_made(game: Game) -> int:
    """Decisions taken so far in the game: allocations, bets and cards played."""
    return sum(
        sum(a is not None for a in log.allocations)
        + sum(d is not None for d in log.declarations)
        + sum(len(t.plays) for t in log.tricks)
        for log in game.rounds
    )


@dataclass
class PlaySession:
    """One game in the terminal: the table, the seats' names and how to talk to the humans."""

    table: Table
    names: Sequence[str]
    console: Console
    ask: Ask
    auto_hint: bool = False
    """Show the hint before every human decision (``--hint``)."""
    view: GameView = field(init=False)
    _decisions: list[tuple[int, Move, bool]] = field(init=False, default_factory=list)
    """(seat, move, forced) of each human move this session made, for `undo`'s message."""

    def __post_init__(self) -> None:
        humans = sorted(self.table.humans)
        lone = humans[0] if len(humans) == 1 else None
        self.view = GameView(
            self.console, self.names, line_view=None if lone is None else self._line_view(lone)
        )

    def _line_view(self, seat: int) -> Callable[[Game], Text]:
        """A new round's sky line with each card's worth to seat (the lone human)."""

        def line_view(game: Game) -> Text:
            head = Text("worth to you now: ", style="dim")
            return head + worth_line_text(game, seat, self.names)

        return line_view

    @property
    def game(self) -> Game:
        """The game as it stands (a takeback replaces it: read it afresh)."""
        return self.table.game

    @property
    def humans(self) -> frozenset[int]:
        """The seats played by people."""
        return self.table.humans

    def run(self) -> None:
        """Play to the end; EOFError, KeyboardInterrupt or QuitGame stop it early."""
        self.view.sync(self.game)
        while not self.game.is_over:
            seat = self.table.waiting_for
            if seat is None:
                self._ai_step()
            else:
                self._human_turn(seat)
            self.view.sync(self.game)

    def show_resumed(self) -> None:
        """Where a resumed game stands: the round, its sky line and the standings."""
        game = self.game
        self.view.rewind(game)
        spec = game.rules.spec
        self.console.print()
        self.console.rule(
            f"Resumed: round {game.round + 1} of {spec.rounds}, "
            f"{moves_made(game)} moves already played",
            align="left",
        )
        humans = sorted(self.humans)
        if len(humans) == 1:
            self.console.print(self._line_view(humans[0])(game))
        else:
            self.console.print(line_text(game, game.rounds[-1].line))
        self.console.print(tallies_table(game, self.names, "Standings so far"))
        wins = round_wins_text(game, self.names)
        if wins is not None:
            self.console.print(wins)

    # --- the AI ---------------------------------------------------------------------------
    def _ai_step(self) -> None:
        seat = self.table.to_move
        if self.console.is_terminal and seat is not None:
            with self.console.status(f"{self.names[seat]} is thinking…"):
                self.table.ai_step()
        else:
            self.table.ai_step()

    # --- a human --------------------------------------------------------------------------
    def _human_turn(self, seat: int) -> None:
        """Ask seat's human until a legal move is given (or a takeback made), then apply it."""
        phase = self.game.phase
        self._show_decision(seat, phase)
        forced = self.table.forced_move()
        if forced is not None:
            line = Text("  Only one legal card: ")
            line.append_text(move_text(forced))
            self.console.print(line + Text(", played for you."))
            self._play(seat, forced, forced=True)
            return
        if self.auto_hint:
            self._show_hint(seat)
        prompt = self._prompt(seat, phase)
        while True:
            text = self.ask(prompt).strip()
            word = text.lower()
            if not text:
                self.console.print("Type your move, or ? for the rules and help.")
            elif word in HELP_WORDS:
                self._show_help(seat, phase)
            elif word == "hint":
                self._show_hint(seat)
            elif word in BOARD_WORDS:
                self.show_board(seat)
            elif word in SCORE_WORDS:
                self.show_score()
            elif word in UNDO_WORDS:
                if self._undo():
                    return
            elif word in QUIT_WORDS:
                raise QuitGame
            else:
                try:
                    move = parse_move(text, phase.value, self.game.rules.spec.group_sizes)
                    check_human_move(self.game, seat, move)
                    self._play(seat, move, forced=False)
                except CslError as e:
                    self.console.print(Text(f"Not accepted: {clip(str(e), 300)}", style="red"))
                    continue
                return

    def _play(self, seat: int, move: Move, *, forced: bool) -> None:
        self.table.play(move, seat)
        self._decisions.append((seat, move, forced))

    def _undo(self) -> bool:
        """Take back the last human decision with a choice and every move after it; say
        what was taken back, or why nothing was. True if the game moved back."""
        before = moves_made(self.game)
        seat = self.table.undo()
        if seat is None:
            self.console.print(
                "Nothing to undo: no decision of yours has been made since the game "
                "started or was resumed (cards you had to play are not decisions)."
            )
            return False
        taken = None
        while self._decisions:
            s, move, forced = self._decisions.pop()
            if not forced:
                taken = (s, move)
                break
        self.view.rewind(self.game)
        after = moves_made(self.game)
        line = Text("Taken back: ")
        if taken is not None:
            who = "your" if len(self.humans) == 1 else f"{self.names[taken[0]]}'s"
            line.append(f"{who} ")
            line.append_text(move_text(taken[1]))
        else:
            line.append(f"{self.names[seat]}'s last decision")
        others = before - after - 1
        if others > 0:
            line.append(f", and the {others} move{'s' if others != 1 else ''} made after it")
        line.append(f". Round {self.game.round + 1}: {self.names[seat]} to decide again.")
        self.console.print(line)
        return True

    def _prompt(self, seat: int, phase: Phase) -> str:
        who = "" if len(self.humans) == 1 else f"{self.names[seat]}, "
        if phase is Phase.ALLOCATE:
            sizes = " | ".join(str(n) for n in self.game.rules.spec.group_sizes)
            return f"{who}your piles ({sizes} cards, group order): "
        if phase is Phase.WEATHER:
            return f"{who}declare good weather? (yes/no): "
        return f"{who}your card: "

    def _show_decision(self, seat: int, phase: Phase) -> None:
        game = self.game
        log = game.rounds[-1]
        sizes = game.rules.spec.group_sizes
        who = "" if len(self.humans) == 1 else f"{self.names[seat]}: "
        if phase is Phase.ALLOCATE:
            if len(self.humans) > 1:
                head = Text(f"{who}sky line, worth to you now: ")
                self.console.print(head + worth_line_text(game, seat, self.names))
            line = Text(f"{who}your hand ")
            line.append_text(cards_text(game.hand(seat)))
            line.append(f"; split it into piles of {', '.join(map(str, sizes))}, in group order")
            self.console.print(line)
            return
        if phase is Phase.WEATHER:
            self.console.print(f"{who}your piles (sky cards with their worth to you now):")
            worth = self._worths(seat)
            groups = groups_of(tuple(range(len(log.line))), sizes)
            for g, (group, pile) in enumerate(
                zip(groups, log.allocations[seat] or (), strict=True)
            ):
                line = Text(f"  group {g + 1} (")
                for i, position in enumerate(group):
                    if i:
                        line.append("  ")
                    line.append_text(sky_text(game.sky_cards[log.line[position]]))
                    if worth[position] is not None:
                        line.append(f" {worth[position]:+d}" if worth[position] else " 0")
                line.append("): ")
                self.console.print(line + cards_text(pile))
            return
        trick = game.current_trick
        core = game.core
        position = core.line_pos
        line = Text(f"  {who}trick {position + 1} for ")
        line.append_text(sky_text(game.sky_cards[log.line[position]]))
        phrase = self._worth_phrases(seat)[position]
        if phrase is not None:
            line.append(f" ({phrase})", style="dim")
        if trick is None:
            line.append(", you lead")
        else:
            line.append(", on the table: ")
            line.append_text(trick_text(game, trick, self.names))
        line.append("; your pile: ")
        line.append_text(cards_text(game.piles(seat)[core.group]))
        self.console.print(line)

    def _worths(self, seat: int) -> list[int | None]:
        from csl_ai.explain import sky_worth

        return sky_worth(self.game, seat)

    def _worth_phrases(self, seat: int) -> list[str | None]:
        from csl_ai.explain import sky_worth_text

        return sky_worth_text(self.game, seat)

    def show_board(self, seat: int) -> None:
        """The round as seat sees it: the sky line with each card's worth to seat or its
        winner, the bets, seat's hand or piles, and the trick on the table."""
        game = self.game
        log = game.rounds[-1]
        spec = game.rules.spec
        self.console.rule(
            f"Round {game.round + 1} of {spec.rounds} (first lead: {self.names[log.first_player]})",
            align="left",
        )
        self.console.print(worth_table(game, seat, self.names))
        if all(d is not None for d in log.declarations):
            declared = [self.names[s] for s in range(game.players) if log.declarations[s]]
            self.console.print(
                "Good weather declared by: " + (", ".join(declared) if declared else "nobody")
            )
        mine = "Your" if len(self.humans) == 1 else f"{self.names[seat]}'s"
        if log.allocations[seat] is None:
            self.console.print(Text(f"{mine} hand: ").append_text(cards_text(game.hand(seat))))
        else:
            piles = Text(" | ", style="dim").join(
                cards_text(pile, empty="(played)") for pile in game.piles(seat)
            )
            self.console.print(Text(f"{mine} piles, cards left: ").append_text(piles))
        trick = game.current_trick
        if trick is not None:
            on_table = trick_text(game, trick, self.names)
            self.console.print(Text("On the table: ").append_text(on_table))
        wins = round_wins_text(game, self.names)
        if wins is not None:
            self.console.print(wins)

    def show_score(self) -> None:
        """The standings so far, and what this round has given so far."""
        game = self.game
        self.console.print(tallies_table(game, self.names, f"Standings in round {game.round + 1}"))
        wins = round_wins_text(game, self.names)
        if wins is not None:
            self.console.print(wins)

    def _show_help(self, seat: int, phase: Phase) -> None:
        game = self.game
        print_rules(self.console, game.rules)
        self.console.print()
        self.console.print(Text("Now", style="bold underline"))
        sizes = game.rules.spec.group_sizes
        if phase is Phase.ALLOCATE:
            hand = cards_of(game.hand(seat))
            example, start = [], 0
            for size in sizes:
                example.append(sum(1 << c for c in hand[start : start + size]))
                start += size
            self.console.print(
                "Split your hand into one pile per group, in group order, piles separated by '|'; "
                f"pile sizes {', '.join(map(str, sizes))}. Cards are a colour B (blue, trump), "
                f"R or G and a rank, e.g. {format_piles(example)}"
            )
        elif phase is Phase.WEATHER:
            self.console.print(
                "Answer yes to bet on good weather: win no sky card this round for +7; "
                "win any and this round's cards go face down (-2 each). Answer no otherwise."
            )
        else:
            legal = format_cards(game.core.legal_plays())
            rule = ""
            if game.current_trick is not None:
                rule = f" You must follow {COLOUR_NAMES[game.core.led_colour]} if you can."
            self.console.print(
                f"Play one card of your pile for this group, e.g. {legal.split()[0]}.{rule} "
                f"Legal now: {legal}"
            )
        self.console.print(COMMANDS_HELP)

    def _show_hint(self, seat: int) -> None:
        result: SearchResult = self.table.hint(seat)
        best = result.moves[0]
        title = Text("AI suggests ")
        title.append_text(move_text(best.move))
        title.append(
            f"  (win {percent(best.win_probability)}; {result.iterations:,} iterations at "
            f"{self.table.hint_level_text()})"
        )
        title.append_text(close_call_text(result))
        self.console.print(title)
        self.console.print(search_table(result, top=HINT_TOP))


def read_answer(stream: TextIO | None) -> str:
    """One line of stream, at most MAX_ANSWER_CHARS of it (the rest of a longer line is
    read and dropped); EOFError at its end, or when it is closed or missing (``<&-``)."""
    if stream is None:
        raise EOFError
    try:
        line = stream.readline(MAX_ANSWER_CHARS + 1)
        if len(line) > MAX_ANSWER_CHARS and not line.endswith("\n"):
            rest = line
            while rest and not rest.endswith("\n"):
                rest = stream.readline(1 << 16)
            line = line[:MAX_ANSWER_CHARS]
    except ValueError:
        raise EOFError from None
    if not line:
        raise EOFError
    return line


def console_ask(console: Console) -> Ask:
    """Read a line after the prompt: with line editing from a terminal, else from stdin with
    the line echoed so that a transcript reads as a dialogue. Closed stdin is end of input."""
    stdin = sys.stdin
    if stdin is not None and not stdin.closed and stdin.isatty():
        return lambda prompt: console.input(Text(prompt, style="bold"))

    def ask(prompt: str) -> str:
        console.print(prompt, end="", markup=False, highlight=False)
        try:
            line = read_answer(sys.stdin)
        except EOFError:
            console.print()
            raise
        console.print(line.rstrip("\n"), markup=False, highlight=False)
        return line

    return ask


@dataclass(frozen=True)
class PlayOptions:
    """The `csl play` command line, parsed."""

    players: int = 4
    humans: str = "0"
    ai: str = DEFAULT_AI
    sides: str = ""
    star_option: StarOption = StarOption.TWICE
    deck: str | None = None
    seed: int | None = None
    hint: bool = False
    record: str | None = None
    first_seat: int = 0
    resume: str | None = None
    """A saved unfinished game to continue (its rules, seats and seed come from it)."""


_GAME_OPTIONS: Final = {
    "players": "--players", "humans": "--humans", "ai": "--ai", "sides": "--sides",
    "star_option": "--star-option", "deck": "--deck", "seed": "--seed",
    "first_seat": "--first-seat",
}  # fmt: skip
"""The options that set up a new game, which a resumed game takes from its record."""


def new_table(options: PlayOptions) -> Table:
    """The table of a new game for these options (RulesError, DeckError, CliInputError,
    TableError and AgentSpecError name the bad option)."""
    from csl_ai.rules import player_spec

    player_spec(options.players)
    humans = parse_seats(options.humans, options.players, "--humans")
    table = Table.new(
        TableOptions(
            players=options.players,
            humans=humans,
            ai=options.ai,
            sides=options.sides,
            star_option=options.star_option,
            deck=options.deck,
            seed=options.seed,
            first_seat=options.first_seat,
        )
    )
    for agent in table.agents.values():
        check_agent_budget(agent, "--ai")
    return table


def resume_table(path: Path) -> Table:
    """The table of the unfinished game saved at path: InvalidRecordError for a broken
    record, TableError for a finished one or one that does not say who sat where."""
    from csl_ai.records import load_record

    record = load_record(path)
    try:
        table = Table.resume(record)
    except TableError as e:
        raise TableError(f"--resume {path_label(path)}: {e}") from None
    for agent in table.agents.values():
        check_agent_budget(agent, f"--resume {path_label(path)}")
    return table


def new_session(options: PlayOptions, console: Console, ask: Ask) -> PlaySession:
    """The session `csl play` runs for these options (tests build the same one)."""
    if options.resume is not None:
        given = [
            flag
            for f in fields(PlayOptions)
            if (flag := _GAME_OPTIONS.get(f.name)) is not None
            and getattr(options, f.name) != f.default
        ]
        if given:
            raise CliInputError(
                f"--resume: the game's rules, seats and seed come from the record; "
                f"leave out {', '.join(given)}"
            )
        table = resume_table(Path(options.resume))
    else:
        table = new_table(options)
    return PlaySession(
        table=table,
        names=seat_names(table.game.players, sorted(table.humans)),
        console=console,
        ask=ask,
        auto_hint=options.hint,
    )


def check_writable(path: Path, option: str = "--record") -> None:
    """Check now, before a game is played, that path can be written: CliInputError for a
    path that names no file in an existing folder, UnsafeOutputError for one naming
    something that is not a regular file (a FIFO, a symbolic link, a device such as
    /dev/null: never replaced), both bad input (exit 2); OutputWriteError for one the
    system will not let us write (a failure, exit 1)."""
    folder = path.parent if str(path.parent) else Path(".")
    label = f"{option}: {path_label(path)}"
    if non_regular_kind(path) == "a directory":
        raise CliInputError(f"{label} is a directory")
    check_output_path(path, label)
    if not folder.is_dir():
        raise CliInputError(f"{option}: folder {path_label(folder)} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputWriteError(f"cannot write record file {path_label(path)}: permission denied")


def check_not_taken(path: Path, resume: str | None) -> None:
    """CliInputError (exit 2) when --record names a file that exists already, unless it is
    the game being resumed: a record, or anything else, is never replaced unasked."""
    if not path.exists():
        return
    try:
        if resume is not None and os.path.samefile(path, resume):
            return
    except OSError:
        pass
    raise CliInputError(
        f"--record: {path_label(path)} already exists; choose a new file "
        "(a saved game goes on with --resume FILE)"
    )


def _seats_text(table: Table) -> str:
    """``Humans at seats 0; heuristic at seats 1, 2``: who sits where."""
    by_spec: dict[str, list[int]] = {}
    for seat, spec in enumerate(table.specs):
        by_spec.setdefault("Humans" if spec == HUMAN else spec, []).append(seat)
    if HUMAN not in table.specs:
        by_spec = {"Humans": [], **by_spec}
    parts = [
        f"{who} at seat{'s' if len(seats) != 1 else ''} "
        + (", ".join(map(str, seats)) if seats else "none")
        for who, seats in by_spec.items()
    ]
    return "; ".join(parts)


PROGRAM: Final = "csl play"
"""How `csl play` names itself in the lock files of the records it plays."""


def _lock_record(path: Path, option: str) -> RecordLock:
    """The lock of the record at path for this game (RecordInUseError, exit 1, when
    another process plays it now)."""
    from csl_ai.record_lock import RecordInUseError, RecordLock, in_use_message

    try:
        return RecordLock.acquire(path, PROGRAM)
    except RecordInUseError as e:
        raise RecordInUseError(f"{option}: {in_use_message(path, e.holder)}", e.holder) from None


def _is_file_of(path: Path, resume: str | None) -> bool:
    """Whether path is the file of the game being resumed."""
    if resume is None or resume == "-":
        return False
    try:
        return os.path.samefile(path, resume)
    except OSError:
        return False


def _save_elsewhere(table: Table, taken: Path, meta: dict[str, Any], locks: list[RecordLock]) -> Path:
    """Save the record beside taken, whose name another program took while the game was
    played (it is left as it is), under the first free ``NAME-N.json``."""
    from csl_ai.record_lock import claim_record_name

    lock = claim_record_name(taken.parent if str(taken.parent) else Path("."), taken.stem, PROGRAM)
    locks.append(lock)
    table.save(lock.record, meta, exclusive=True)
    return lock.record


def play_command(options: PlayOptions, console: Console) -> int:
    """Run `csl play`; returns the exit code.

    The seed rebuilds every hidden card, so a game dealt from a secret seed shows it only
    once the game is over (it is in the record too).

    The record is saved however the game ends: finished, quit, Ctrl-C, end of input, or
    an error (which is then raised again). A resumed game is saved back to its file
    unless --record names another.

    While the game is played its record is locked (`csl_ai.record_lock`): a record that
    another process plays (a `csl serve` table, another `csl play`) is refused at once
    (exit 1), and a new record's name is claimed at the start, so no other process saves
    there. A new record is created exclusively: were its name taken meanwhile by a
    program that ignores the lock, the file there is left as it is, the game is saved
    beside it under a new name, and the exit code is 1.
    """
    locks: list[RecordLock] = []
    try:
        return _play_locked(options, console, locks)
    finally:
        for lock in reversed(locks):
            lock.release()


def _play_locked(options: PlayOptions, console: Console, locks: list[RecordLock]) -> int:
    from csl_ai.files import OutputExistsError
    from csl_ai.records import claim_new_record

    given_path: Path | None = None
    if options.record:
        given_path = Path(options.record)
        check_writable(given_path)
        check_not_taken(given_path, options.resume)
    if options.resume is not None and options.resume != "-":
        locks.append(_lock_record(Path(options.resume), "--resume"))
    session = new_session(options, console, console_ask(console))
    table = session.table
    if given_path is not None:
        record_path = given_path
        own_file = _is_file_of(given_path, options.resume)
        if not own_file:
            locks.append(_lock_record(given_path, "--record"))
            check_not_taken(given_path, options.resume)
    elif options.resume is not None:
        record_path = Path(options.resume)
        check_writable(record_path, "--resume")
        own_file = True
    else:
        lock = claim_new_record(program=PROGRAM)
        locks.append(lock)
        record_path = lock.record
        check_writable(record_path)
        own_file = False
    rules = table.game.rules
    given_seed = f", seed {options.seed}" if options.seed is not None else ""
    console.print(
        f"Candy Spiders Leopards: {rules.players} players{given_seed}, "
        f"sides {rules.sides_text()}",
        soft_wrap=True,
    )
    console.print(
        f"{_seats_text(table)}. Type ? at a prompt for the rules and help.", soft_wrap=True
    )
    console.print(f"The game is saved to {record_path}", soft_wrap=True)
    if options.resume is not None:
        session.show_resumed()
    code, status = EXIT_FAILURE, "failed"
    meta: dict[str, Any] = {"program": "csl play"}
    try:
        session.run()
        code, status = EXIT_OK, "finished"
    except KeyboardInterrupt as e:
        code, status = interrupt_exit_code(e), interrupt_text(e)
        console.print(f"\n{status[0].upper()}{status[1:]}.")
    except EOFError:
        status = "input ended"
        console.print("Input ended before the game did.")
    except QuitGame:
        code, status = EXIT_OK, "quit"
    finally:
        game = session.game
        saved_meta = {**meta, "status": status}
        taken: Path | None = None
        try:
            session.table.save(record_path, saved_meta, exclusive=not own_file)
        except OutputExistsError:
            taken, record_path = record_path, _save_elsewhere(session.table, record_path, saved_meta, locks)
        state = "game" if game.is_over else "unfinished game"
        console.print(f"Saved the {state} to {record_path}", soft_wrap=True)
        if not game.is_over:
            console.print(f"Continue it with: csl play --resume {record_path}", soft_wrap=True)
        elif options.seed is None:
            console.print(f"This deal again: --seed {game.seed}", soft_wrap=True)
        if taken is not None:
            error_line(
                f"the game is saved to {path_label(record_path)}, not to {path_label(taken)}: "
                "another program created that file during the game (it is left as it is)",
                "OutputExistsError",
                EXIT_FAILURE,
            )
            code = EXIT_FAILURE
    return code
