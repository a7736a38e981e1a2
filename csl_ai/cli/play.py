"""`csl play`: a whole game in the terminal, humans at some seats and the AI at the others.

The game loop (`PlaySession.run`) reads human input through an ``ask`` callable, so tests
drive it directly or through stdin. A human prompt accepts the move in notation (``B7``;
piles ``B7 R2 G5 | B1 R9 G9 | ...``; ``yes``/``no``), ``?`` for help, ``hint`` for the AI's
view and ``quit``; a refused input says why and asks again. The game record is saved when
the game ends and also when it is cut short (Ctrl-C, end of input, ``quit``).
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from rich.console import Console
from rich.text import Text

from csl_ai.cli.common import (
    EXIT_FAILURE,
    EXIT_OK,
    MAX_ITERATIONS,
    CliInputError,
    check_agent_budget,
    check_positive,
    interrupt_exit_code,
    interrupt_text,
    parse_seats,
)
from csl_ai.cli.render import (
    GameView,
    best_move_text,
    cards_text,
    groups_of,
    move_text,
    percent,
    search_table,
    sky_cards_text,
    trick_text,
)
from csl_ai.errors import (
    CslError,
    OutputWriteError,
    check_output_path,
    clip,
    non_regular_kind,
    path_label,
)
from csl_ai.game import COLOUR_NAMES, Game, Observation, Phase
from csl_ai.moves import Move, parse_move
from csl_ai.notation import cards_of, format_cards, format_piles
from csl_ai.rules import RulesConfig, StarOption, deck_from_arg, parse_sides

if TYPE_CHECKING:
    from csl_ai.agents import Agent
    from csl_ai.search import SearchResult

Ask = Callable[[str], str]
"""Reads one line of human input after showing a prompt; EOFError at end of input."""
HintFn = Callable[[Observation], "SearchResult"]
"""The AI's analysis of a human's decision."""

HUMAN: Final = "human"
DEFAULT_AI: Final = "ismcts:normal"
HINT_TOP: Final = 5
QUIT_WORDS: Final = frozenset({"quit", "exit"})
HELP_WORDS: Final = frozenset({"?", "help"})
MAX_ANSWER_CHARS: Final = 1000
"""Longest line read at a prompt; the rest of a longer line is skipped, not kept in memory."""


class QuitGame(Exception):
    """A human typed ``quit``: stop now and save what was played."""


def derived_seed(seed: int, label: str) -> int:
    """A 63-bit seed derived from the game seed and a label (a seat, a decision)."""
    return random.Random(f"{seed}:{label}").getrandbits(63)


def seat_names(players: int, humans: Sequence[int]) -> list[str]:
    """Display names: ``You`` for a lone human, ``seat N`` otherwise."""
    return [
        "You" if seat in humans and len(humans) == 1 else f"seat {seat}" for seat in range(players)
    ]


def build_rules(
    players: int, sides: str, star_option: StarOption, deck: str | None, first_seat: int
) -> RulesConfig:
    """The rules from command-line values; RulesError/DeckError name the bad one."""
    return RulesConfig(
        players=players,
        sides=parse_sides(sides),
        star_option=star_option,
        deck=deck_from_arg(deck),
        first_seat=first_seat,
    )


def make_agents(spec: str, seats: Sequence[int], seed: int) -> dict[int, Agent]:
    """One AI agent per seat, each seeded from the game seed; its search budget within
    the bounds of the command line's options."""
    from csl_ai.agents import make_agent

    agents = {seat: make_agent(spec, seed=derived_seed(seed, f"agent{seat}")) for seat in seats}
    for agent in agents.values():
        check_agent_budget(agent, "--ai")
    return agents


def search_hint(iterations: int, seed: int) -> HintFn:
    """A hint function: a search of the human's observation with a fixed budget."""
    counter = iter(range(1 << 62))

    def hint(obs: Observation) -> SearchResult:
        from csl_ai.search import SearchLimit, search

        return search(
            obs, SearchLimit(iterations=iterations, seed=derived_seed(seed, f"hint{next(counter)}"))
        )

    return hint


@dataclass
class PlaySession:
    """One game in the terminal: the game, who sits where, and how to talk to the humans."""

    game: Game
    agents: Mapping[int, Agent]
    """The AI seats and their agents; every other seat is human."""
    names: Sequence[str]
    console: Console
    ask: Ask
    hint: HintFn | None = None
    auto_hint: bool = False
    """Show the hint before every human decision (``--hint``)."""
    view: GameView = field(init=False)

    def __post_init__(self) -> None:
        self.view = GameView(self.console, self.names)

    @property
    def humans(self) -> frozenset[int]:
        """The seats played by people."""
        return frozenset(range(self.game.players)) - frozenset(self.agents)

    def run(self) -> None:
        """Play to the end; EOFError, KeyboardInterrupt or QuitGame stop it early."""
        game = self.game
        self.view.sync(game)
        while not game.is_over:
            seat = game.to_move
            if seat in self.agents:
                move = self._ai_move(seat)
                game.apply(move, seat)
            else:
                self._human_move(seat)
            self.view.sync(game)

    def _ai_move(self, seat: int) -> Move:
        obs = self.game.observation(seat)
        if self.console.is_terminal:
            with self.console.status(f"{self.names[seat]} is thinking…"):
                return self.agents[seat].act(obs)
        return self.agents[seat].act(obs)

    def _human_move(self, seat: int) -> None:
        """Ask seat's human until a legal move is given, then apply it."""
        game = self.game
        phase = game.phase
        obs = game.observation(seat)
        self._show_decision(seat, phase)
        legal = game.legal_moves(seat) if phase is Phase.PLAY else []
        if len(legal) == 1:
            line = Text("  Only one legal card: ")
            line.append_text(move_text(legal[0]))
            self.console.print(line + Text(", played for you."))
            game.apply(legal[0], seat)
            return
        if self.auto_hint:
            self._show_hint(obs)
        prompt = self._prompt(seat, phase)
        while True:
            text = self.ask(prompt).strip()
            word = text.lower()
            if not text:
                self.console.print("Type your move, or ? for help.")
                continue
            if word in HELP_WORDS:
                self._show_help(seat, phase)
                continue
            if word == "hint":
                self._show_hint(obs)
                continue
            if word in QUIT_WORDS:
                raise QuitGame
            try:
                move = parse_move(text, phase.value, game.rules.spec.group_sizes)
                game.apply(move, seat)
            except CslError as e:
                self.console.print(Text(f"Not accepted: {clip(str(e), 300)}", style="red"))
                continue
            return

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
            line = Text(f"{who}your hand ")
            line.append_text(cards_text(game.hand(seat)))
            line.append(f"; split it into piles of {', '.join(map(str, sizes))}, in group order")
            self.console.print(line)
            return
        if phase is Phase.WEATHER:
            self.console.print(f"{who}your piles:")
            groups = groups_of(log.line, sizes)
            for g, (group, pile) in enumerate(
                zip(groups, log.allocations[seat] or (), strict=True)
            ):
                line = Text(f"  group {g + 1} (")
                line.append_text(sky_cards_text([game.sky_cards[s] for s in group]))
                line.append("): ")
                self.console.print(line + cards_text(pile))
            return
        trick = game.current_trick
        core = game.core
        line = Text(f"  {who}trick {core.line_pos + 1} for ")
        line.append_text(sky_cards_text([game.sky_cards[log.line[core.line_pos]]]))
        if trick is None:
            line.append(", you lead")
        else:
            line.append(", on the table: ")
            line.append_text(trick_text(game, trick, self.names))
        line.append("; your pile: ")
        line.append_text(cards_text(game.piles(seat)[core.group]))
        self.console.print(line)

    def _show_help(self, seat: int, phase: Phase) -> None:
        game = self.game
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
        self.console.print("Also: 'hint' for the AI's advice, 'quit' to stop (the game is saved).")

    def _show_hint(self, obs: Observation) -> None:
        if self.hint is None:
            self.console.print("No hint available in this session.")
            return
        result = self.hint(obs)
        best = result.moves[0]
        title = Text("AI suggests ")
        title.append_text(best_move_text(result))
        title.append(f"  (win {percent(best.win_probability)}, {result.iterations} iterations)")
        self.console.print(title)
        self.console.print(search_table(result, top=HINT_TOP))


def default_record_path(now: datetime | None = None) -> Path:
    """A new file in the current directory named by the time: ``csl-game-20250101-120000.json``."""
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    path = Path(f"csl-game-{stamp}.json")
    n = 1
    while os.path.lexists(path):
        n += 1
        path = Path(f"csl-game-{stamp}-{n}.json")
    return path


def save_game(game: Game, path: Path, agents: Sequence[str], meta: Mapping[str, object]) -> None:
    """Write the game (finished or not) as a record."""
    from csl_ai.records import game_to_record, save_record

    save_record(game_to_record(game, agents=list(agents), meta=dict(meta)), path)


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
    hint_iterations: int = 2000
    record: str | None = None
    first_seat: int = 0


def new_session(options: PlayOptions, console: Console, ask: Ask) -> PlaySession:
    """The session `csl play` runs for these options (tests build the same one)."""
    rules = build_rules(
        options.players, options.sides, options.star_option, options.deck, options.first_seat
    )
    humans = parse_seats(options.humans, rules.players, "--humans")
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**63)
    check_positive(options.hint_iterations, "--hint-iterations", MAX_ITERATIONS)
    ai_seats = [s for s in range(rules.players) if s not in humans]
    agents = make_agents(options.ai, ai_seats, seed) if ai_seats else {}
    hint = search_hint(options.hint_iterations, seed) if humans else None
    game = Game(rules, seed=seed)
    return PlaySession(
        game=game,
        agents=agents,
        names=seat_names(rules.players, humans),
        console=console,
        ask=ask,
        hint=hint,
        auto_hint=options.hint,
    )


def check_writable(path: Path) -> None:
    """Check now, before a game is played, that path can be written: CliInputError for a
    path that names no file in an existing folder, UnsafeOutputError for one naming
    something that is not a regular file (a FIFO, a symbolic link, a device such as
    /dev/null: never replaced), both bad input (exit 2); OutputWriteError for one the
    system will not let us write (a failure, exit 1)."""
    folder = path.parent if str(path.parent) else Path(".")
    label = f"--record: {path_label(path)}"
    if non_regular_kind(path) == "a directory":
        raise CliInputError(f"{label} is a directory")
    check_output_path(path, label)
    if not folder.is_dir():
        raise CliInputError(f"--record: folder {path_label(folder)} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise OutputWriteError(f"cannot write record file {path_label(path)}: permission denied")


def play_command(options: PlayOptions, console: Console) -> int:
    """Run `csl play`; returns the exit code.

    The seed rebuilds every hidden card, so a game dealt from a secret seed shows it only
    once the game is over (it is in the record too).

    The record is saved however the game ends: finished, quit, Ctrl-C, end of input, or
    an error (which is then raised again).
    """
    record_path = Path(options.record) if options.record else default_record_path()
    check_writable(record_path)
    session = new_session(options, console, console_ask(console))
    agents = [HUMAN if s in session.humans else options.ai for s in range(session.game.players)]
    rules = session.game.rules
    ai_seats = ", ".join(str(s) for s in sorted(session.agents)) or "none"
    human_seats = ", ".join(str(s) for s in sorted(session.humans)) or "none"
    given_seed = f", seed {options.seed}" if options.seed is not None else ""
    console.print(
        f"Candy Spiders Leopards: {rules.players} players{given_seed}, "
        f"sides {rules.sides_text()}",
        soft_wrap=True,
    )
    console.print(
        f"Humans at seats {human_seats}; {options.ai} at seats {ai_seats}. "
        "Type ? at a prompt for help."
    )
    code, status = EXIT_FAILURE, "failed"
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
        meta = {"program": "csl play", "humans": sorted(session.humans), "status": status}
        save_game(session.game, record_path, agents, meta)
        state = "game" if session.game.is_over else "unfinished game"
        console.print(f"Saved the {state} to {record_path}", soft_wrap=True)
        if session.game.is_over and options.seed is None:
            console.print(f"This deal again: --seed {session.game.seed}", soft_wrap=True)
    return code
