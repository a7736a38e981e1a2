"""The exceptions csl_ai raises (one small hierarchy, all ValueErrors), and how their
messages quote bad input.

Every message names the bad field or echoes the bad input with ``short_repr``, so a CLI can
print it as one short line and exit. Reading input and writing output files, bounded and
safe, is `csl_ai.files`.
"""

from __future__ import annotations

import os
import reprlib
from typing import Any, Final

SHORT_REPR_CHARS: Final = 60
_BIG_INT_BITS: Final = 1000
"""Integers longer than this (about 300 digits) are described, not written out."""


class CslError(ValueError):
    """Base class of every error csl_ai raises on bad input."""


class RulesError(CslError):
    """A rules configuration that is not allowed (player count, sides, options)."""


class DeckError(CslError):
    """A sky-deck file that cannot be read or fails validation."""


class NotationError(CslError):
    """Text that is not valid card or move notation."""


class IllegalMoveError(CslError):
    """A well-formed move that the rules do not allow in this state."""


class InvalidPositionError(CslError):
    """A position (one seat's view) that is malformed or impossible."""


class InvalidRecordError(CslError):
    """A game record that is malformed, or whose steps or scores are wrong."""


class OutputWriteError(CslError):
    """An output file that cannot be written (a full disk, a folder that refuses writes).

    A failure of the run, not of its input: the CLI exits 1 for it, not 2.
    """


class RecordWriteError(OutputWriteError):
    """A record or results file that cannot be written."""


class UnsafeOutputError(CslError):
    """An output path naming something that is not a regular file: a FIFO, a symbolic link,
    a device node, a folder. It is left as it is, never replaced or written through; the
    path is bad input (the CLI exits 2)."""


class TallyError(CslError):
    """End-of-game tallies that no game under the rules can produce."""


class _ShortRepr(reprlib.Repr):
    """reprlib's bounded repr: dicts in their own order, huge integers described."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.maxlevel = 4
        self.maxstring = limit
        self.maxother = limit
        self.maxlong = limit
        self.maxlist = self.maxtuple = self.maxset = self.maxdict = 12

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > _BIG_INT_BITS:
            digits = int(x.bit_length() * 0.30103) + 1
            return f"<an integer of about {digits} digits>"
        return super().repr_int(x, level)

    def repr_dict(self, x: dict[Any, Any], level: int) -> str:
        if not x:
            return "{}"
        if level <= 0:
            return "{...}"
        items = [
            f"{self.repr1(k, level - 1)}: {self.repr1(v, level - 1)}"
            for k, v in list(x.items())[: self.maxdict]
        ]
        return "{" + ", ".join(items) + (", ..." if len(x) > self.maxdict else "") + "}"


def short_repr(value: object, limit: int = SHORT_REPR_CHARS) -> str:
    """repr of a bad value, cut to limit characters so an error stays one readable line.

    Bounded in time and depth whatever the value: a 50 MB string, a list nested 100,000
    deep or an integer of a million digits each give a few dozen characters.
    """
    try:
        text = _ShortRepr(limit).repr(value)
    except (ValueError, RecursionError, MemoryError):
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clip(text: str, limit: int = 120) -> str:
    """text on one line, cut to limit characters (an exception's message inside another)."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def path_label(path: str | os.PathLike[str]) -> str:
    """A file name as error messages quote it (cut short if absurdly long)."""
    return short_repr(os.fspath(path), 200)
