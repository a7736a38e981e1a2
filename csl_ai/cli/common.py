"""What every command shares: the one-line error policy, exit codes and option parsing.

Errors never reach the user as a traceback (unless ``--debug``): bad input of any kind
(a usage error, an unreadable or malformed file, an invalid position, record, deck or
rules choice) prints one line on stderr and exits 2; a failure while running exits 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, Final, NoReturn

import typer
from typer.core import TyperGroup

from csl_ai.errors import CslError

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
"""Something went wrong while running (a bug, a missing component)."""
EXIT_BAD_INPUT: Final = 2
"""Bad usage or bad input: options, files, positions, records."""
EXIT_INTERRUPTED: Final = 130
"""Ctrl-C, as shells report SIGINT."""

PROG: Final = "csl"


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


class CliInputError(CslError):
    """A command-line value that is well typed but not allowed (e.g. a seat out of range)."""


class _State:
    """Process-wide flags set by the global options."""

    debug: bool = False


STATE: Final = _State()


def one_line(text: str) -> str:
    """Text squeezed onto one line, so every error stays one line on stderr."""
    parts = [part.strip() for part in str(text).splitlines() if part.strip()]
    return "; ".join(parts) if parts else "unknown error"


def error_line(message: str) -> None:
    """Print ``csl: error: message`` as one line on stderr."""
    typer.echo(f"{PROG}: error: {one_line(message)}", err=True)


def fail(message: str, code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print one error line and leave with code (2 = bad input by default)."""
    error_line(message)
    raise typer.Exit(code)


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
    if isinstance(e, CslError):
        return EXIT_BAD_INPUT, str(e)
    if isinstance(e, UnicodeDecodeError):
        return EXIT_BAD_INPUT, f"not UTF-8 text ({e.reason} at byte {e.start})"
    if isinstance(e, OSError):
        name = f"{e.filename!s}: " if e.filename else ""
        return EXIT_BAD_INPUT, f"{name}{e.strerror or e}"
    if isinstance(e, KeyboardInterrupt):
        return EXIT_INTERRUPTED, "interrupted"
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
            error_line(message)
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
                f"{option}: bad seat {token!r} in {text!r}: expected numbers like 0,2"
            ) from None
        if not 0 <= seat < players:
            raise CliInputError(
                f"{option}: seat {seat} is not in a {players}-player game (seats 0..{players - 1})"
            )
        if seat in seats:
            raise CliInputError(f"{option}: seat {seat} given twice in {text!r}")
        seats.append(seat)
    return tuple(sorted(seats))


def check_positive(value: int | None, option: str) -> None:
    """Raise CliInputError unless value is None or at least 1."""
    if value is not None and value < 1:
        raise CliInputError(f"{option}: must be at least 1, got {value!r}")
