"""What every command shares: the one-line error policy, exit codes, signals and option parsing.

Errors never reach the user as a traceback (unless ``--debug``): bad input of any kind
(a usage error, an unreadable or malformed file, an invalid position, record, deck or
rules choice) prints one line on stderr and exits 2; a failure while running (an output
that cannot be written, a game record being played by another process, a bug) exits 1.
Every error line is short: at most ``MAX_ERROR_CHARS`` characters whatever the input.
While a command runs, SIGTERM and SIGHUP raise ``TerminationSignal`` as Ctrl-C raises
KeyboardInterrupt, so a command stops, keeps its work and exits 128 + the signal's
number (130, 143, 129).

Under ``--json`` a script reads stdout only, so an error is also one JSON object there,
``{"error": {"kind": ..., "message": ..., "exit_code": N}}`` (kind: the error's class,
such as ``InvalidPositionError`` or ``BadParameter``), beside the same line on stderr and
the same exit code. JSON mode is on when the command line holds ``--json`` (so a bad
option value of a command that was never run answers in JSON too) or a command says so
(`json_errors`).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final, NoReturn

import typer
from typer.core import TyperGroup, TyperOption

from csl_ai.errors import CslError, OutputWriteError, clip, path_label, short_repr


def _flags_show_no_type() -> None:
    """In help, a flag (``--hint``) shows no ``<bool>``: recent typer prints a type for
    every option, which reads as if the flag wanted a value (``--hint true`` is refused)."""
    option = TyperOption
    shown = getattr(option, "display_type_rich", None)
    if shown is None or getattr(shown, "_csl_flags", False):
        return

    def display_type_rich(self: Any, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._csl_flags = True  # type: ignore[attr-defined]
    option.display_type_rich = display_type_rich


_flags_show_no_type()

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
"""Something went wrong while running (a bug, a missing component)."""
EXIT_BAD_INPUT: Final = 2
"""Bad usage or bad input: options, files, positions, records."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl-C, as shells report SIGINT."""

PROG: Final = "csl"
MAX_ERROR_CHARS: Final = 240
"""Longest error message printed after ``csl: error: ``."""
MAX_ITERATIONS: Final = 10**12
"""Most search iterations an option accepts (the search's memory stays bounded anyway)."""
MAX_TIME_MS: Final = 86_400_000.0
"""Longest search time an option accepts: one day."""
TERMINATION_SIGNALS: Final = tuple(
    s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None
)


class TerminationSignal(KeyboardInterrupt):
    """SIGTERM or SIGHUP while a command runs.

    A KeyboardInterrupt, so whatever stops and saves on Ctrl-C (a search's threads, a
    game's record, a tournament's finished games) does the same for these signals.
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as shells report a process a signal ended."""
        return 128 + self.signum


def _termination_of(e: BaseException) -> TerminationSignal | None:
    """The termination behind an interrupt: e itself, or the one this command received
    when a library turned it into a plain KeyboardInterrupt of its own (Ray does)."""
    return e if isinstance(e, TerminationSignal) else STATE.termination


def interrupt_exit_code(e: BaseException) -> int:
    """The exit code for an interrupt: 128 + its signal (130 for Ctrl-C)."""
    termination = _termination_of(e)
    return termination.exit_code if termination is not None else EXIT_INTERRUPTED


def interrupt_text(e: BaseException) -> str:
    """How an interrupt is reported: ``interrupted`` or ``terminated by SIGTERM``."""
    termination = _termination_of(e)
    return f"terminated by {termination.args[0]}" if termination is not None else "interrupted"


def _raise_termination(signum: int, frame: FrameType | None) -> None:
    STATE.termination = TerminationSignal(signum)
    raise STATE.termination


@contextmanager
def signals_as_exceptions() -> Iterator[None]:
    """While the block runs, in the main thread, Ctrl-C raises KeyboardInterrupt and SIGTERM
    and SIGHUP raise TerminationSignal; a signal ignored when the process started (nohup)
    stays ignored, and the handlers there before come back after. Elsewhere than the main
    thread (where signal handlers cannot be set) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {}
    STATE.termination = None
    try:
        for signum in TERMINATION_SIGNALS:
            if signal.getsignal(signum) is not signal.SIG_IGN:
                previous[signum] = signal.signal(signum, _raise_termination)
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _cli_exception_classes() -> tuple[type[Exception], ...]:
    """The base classes of typer's (or click's) usage and parameter errors."""
    classes: list[type[Exception]] = []
    typer_exception = getattr(typer, "TyperException", None)
    if isinstance(typer_exception, type):
        classes.append(typer_exception)
    try:
        import click
    except ImportError:
        pass
    else:
        classes.append(click.ClickException)
    return tuple(classes)


CLI_EXCEPTIONS: Final = _cli_exception_classes()
"""Errors typer raises for a bad command line (exit_code 2) or a bad file argument."""


DECK_HELP: Final = (
    "Sky deck TOML file (default: the built-in deck, also named by 'default'; "
    "./default for a file of that name)."
)
"""The --deck option's help, shared by every command that deals."""


class CliInputError(CslError):
    """A command-line value that is well typed but not allowed (e.g. a seat out of range)."""


class _State:
    """Process-wide flags set by the global options and the running command."""

    debug: bool = False
    json: bool = False
    """Errors are also printed as a JSON object on stdout (see `json_errors`)."""
    termination: TerminationSignal | None = None
    """The SIGTERM or SIGHUP the running command received, if any (`_termination_of`)."""


STATE: Final = _State()


def one_line(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """Text squeezed onto one line of at most limit characters, so every error stays one
    short line on stderr whatever input it quotes."""
    text = str(text)
    if len(text) > 4 * limit:
        text = text[: 4 * limit]
    parts = [part.strip() for part in text.splitlines() if part.strip()]
    return clip("; ".join(parts), limit) if parts else "unknown error"


def json_errors() -> None:
    """Mark the running command as answering in JSON: its errors also go to stdout as one
    JSON object (see the module docstring)."""
    STATE.json = True


def error_json(kind: str, message: str, code: int) -> str:
    """The JSON object of an error, on one line: ``{"error": {kind, message, exit_code}}``."""
    return json.dumps({"error": {"kind": kind, "message": one_line(message), "exit_code": code}})


def error_line(message: str, kind: str = "CslError", code: int = EXIT_BAD_INPUT) -> None:
    """Print ``csl: error: message`` as one line on stderr, and in JSON mode the same
    error as a JSON object on stdout (kind and code are for that object)."""
    if STATE.json:
        try:
            typer.echo(error_json(kind, message, code))
        except OSError:
            pass  # stdout itself failed (full, closed): the line on stderr still says why
    typer.echo(f"{PROG}: error: {one_line(message)}", err=True)


def fail(message: str, code: int = EXIT_BAD_INPUT, kind: str | None = None) -> NoReturn:
    """Print one error line and leave with code (2 = bad input by default); kind names the
    error in JSON mode (default: ``CliInputError`` for bad input, else ``Failure``)."""
    error_line(message, kind or ("CliInputError" if code == EXIT_BAD_INPUT else "Failure"), code)
    raise typer.Exit(code)


def _asks_for_json(args: Sequence[str]) -> bool:
    """Whether a command line holds the ``--json`` flag (before any ``--``)."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _cli_message(e: Exception) -> tuple[int, str]:
    """Exit code and message of a typer/click command-line error."""
    code = getattr(e, "exit_code", EXIT_FAILURE)
    format_message = getattr(e, "format_message", None)
    message = format_message() if callable(format_message) else str(e)
    if not message.strip():
        message = "missing command"
    if code == EXIT_BAD_INPUT:
        ctx = getattr(e, "ctx", None)
        path = getattr(ctx, "command_path", None)
        if path:
            message = f"{message} (see '{path} --help')"
    return (code if isinstance(code, int) and code else EXIT_FAILURE), message


def _exit_code_for(e: BaseException) -> tuple[int, str]:
    """The exit code and one-line message for an exception a command let through."""
    if isinstance(e, CLI_EXCEPTIONS):
        return _cli_message(e)
    if isinstance(e, json.JSONDecodeError):
        return EXIT_BAD_INPUT, f"bad JSON: {e.msg} at line {e.lineno} column {e.colno}"
    if isinstance(e, OutputWriteError):
        return EXIT_FAILURE, str(e)
    if isinstance(e, CslError) and getattr(e, "exit_code", None) == EXIT_FAILURE:
        return EXIT_FAILURE, str(e)  # not bad input: a record in use elsewhere (RecordInUseError)
    if isinstance(e, CslError):
        return EXIT_BAD_INPUT, str(e)
    if isinstance(e, UnicodeDecodeError):
        return EXIT_BAD_INPUT, f"not UTF-8 text ({e.reason} at byte {e.start})"
    if isinstance(e, OSError):
        name = f"{path_label(e.filename)}: " if e.filename else ""
        return EXIT_FAILURE, f"{name}{e.strerror or e}"
    if isinstance(e, KeyboardInterrupt):
        return interrupt_exit_code(e), interrupt_text(e)
    if isinstance(e, typer.Abort):
        return EXIT_INTERRUPTED, "aborted"
    if isinstance(e, ImportError):
        return EXIT_FAILURE, f"a component is missing: {e} (run with --debug for details)"
    return (
        EXIT_FAILURE,
        f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)",
    )


class CslGroup(TyperGroup):
    """The top-level command group: runs the command and applies the error policy."""

    def invoke(self, ctx: typer.Context) -> Any:
        """Run the command; an interrupt (Ctrl-C, SIGTERM, SIGHUP) that it lets through
        is one line and exit 128 + the signal (typer would make every one exit 130)."""
        try:
            with signals_as_exceptions():
                return super().invoke(ctx)
        except KeyboardInterrupt as e:
            if STATE.debug:
                raise
            error_line(interrupt_text(e), type(e).__name__, interrupt_exit_code(e))
            raise typer.Exit(interrupt_exit_code(e)) from None

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        STATE.debug = False
        arglist = list(sys.argv[1:] if args is None else args)
        STATE.json = _asks_for_json(arglist)
        if sys.stdout is None:
            # started with stdout closed: every answer would vanish while the exit said 0
            error_line("standard output: closed, nowhere to answer", "OutputWriteError", EXIT_FAILURE)
            if standalone_mode:
                sys.exit(EXIT_FAILURE)
            return EXIT_FAILURE
        try:
            rv = super().main(
                arglist,
                prog_name=prog_name or PROG,
                complete_var=complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
            code = rv if isinstance(rv, int) and not isinstance(rv, bool) else EXIT_OK
        except typer.Exit as e:
            code = e.exit_code
        except (Exception, KeyboardInterrupt) as e:
            if (STATE.debug or "--debug" in arglist[:1]) and not isinstance(e, CLI_EXCEPTIONS):
                raise
            code, message = _exit_code_for(e)
            error_line(message, type(e).__name__, code)
        if standalone_mode:
            sys.exit(code)
        return code


def parse_seats(text: str, players: int, option: str) -> tuple[int, ...]:
    """Seats from ``"0,2"`` (``"none"`` or blank: no seat), each checked to be in range."""
    stripped = text.strip()
    if not stripped or stripped.lower() == "none":
        return ()
    seats: list[int] = []
    for item in stripped.split(","):
        token = item.strip()
        try:
            seat = int(token)
        except ValueError:
            raise CliInputError(
                f"{option}: bad seat {short_repr(token)} in {short_repr(text)}: "
                "expected numbers like 0,2"
            ) from None
        if not 0 <= seat < players:
            raise CliInputError(
                f"{option}: seat {short_repr(seat)} is not in a {players}-player game "
                f"(seats 0..{players - 1})"
            )
        if seat in seats:
            raise CliInputError(f"{option}: seat {seat} given twice in {short_repr(text)}")
        seats.append(seat)
    return tuple(sorted(seats))


def check_positive(value: int | None, option: str, most: int | None = None) -> None:
    """Raise CliInputError unless value is None or at least 1 (and at most most)."""
    if value is not None and value < 1:
        raise CliInputError(f"{option}: must be at least 1, got {short_repr(value)}")
    if value is not None and most is not None and value > most:
        raise CliInputError(f"{option}: must be at most {most:,}, got {short_repr(value)}")



def check_agent_budget(agent: object, option: str) -> None:
    """Raise CliInputError if an agent's search budget (``iters=``, ``ms=`` of its spec)
    passes the bounds the search options have."""
    limit = getattr(agent, "limit", None)
    iterations = getattr(limit, "iterations", None)
    time_ms = getattr(limit, "time_ms", None)
    if isinstance(iterations, int) and iterations > MAX_ITERATIONS:
        raise CliInputError(
            f"{option}: iters must be at most {MAX_ITERATIONS:,}, got {short_repr(iterations)}"
        )
    if isinstance(time_ms, (int, float)) and time_ms > MAX_TIME_MS:
        raise CliInputError(f"{option}: ms must be at most {MAX_TIME_MS:,.0f}, got {time_ms!r}")
