"""Candy Lab moves as text: the lines ``moves.move_text`` writes, read back.

The text of a move names its ids and, for reading, what they show::

    play #17 BOP @4              play order 17 (BOP) on the run starting at belt position 4
    give_back #3 B1:draw left    return bar 3 (blue, value 1, draw) to the left end
    stop                         return no more bars (action B)
    draw down | draw up0..up2    draw the top face-down card, or a face-up one
    effect #5 B1:discard_hand -> seat 2
    effect #5 B1:draw -> up1     (a draw effect's source)
    effect #9 O1:return_bar -> #12 O2:none right
    effect #5 B1:swap_hands -> nothing

The catalogue parts (``BOP``, ``B1:draw``) may be left out; when given they must be what
the id shows (an order's colours in either reading). `parse_move` checks the form only;
whether the move is legal is the game's to judge.
"""

from __future__ import annotations

import re
from typing import Final

from csl_ai.candylab import moves as mv
from csl_ai.candylab.catalogue import Catalogue, Effect
from csl_ai.errors import NotationError, short_repr

_ORDER: Final = r"#(?P<{0}>\d+)(?:\s+(?P<{0}_text>[A-Za-z]{{1,3}}))?"
_BAR: Final = r"#(?P<{0}>\d+)(?:\s+(?P<{0}_text>[A-Za-z]\d:[a-z_]+))?"
_SOURCE: Final = r"(?P<{0}>down|up[0-2])"
_END: Final = r"(?P<{0}>left|right)"

_PATTERNS: Final = {
    "play": re.compile(rf"play\s+{_ORDER.format('order')}\s+@(?P<start>\d+)"),
    "give_back": re.compile(rf"give_back\s+{_BAR.format('bar')}\s+{_END.format('end')}"),
    "stop": re.compile(r"stop"),
    "draw": re.compile(rf"draw\s+{_SOURCE.format('source')}"),
    "effect": re.compile(
        rf"effect\s+{_BAR.format('bar')}\s*->\s*(?:"
        rf"(?P<nothing>nothing)|seat\s+(?P<seat>\d+)|{_SOURCE.format('source')}|"
        rf"{_BAR.format('target')}\s+{_END.format('end')})"
    ),
}
FORMS: Final = (
    "play #ID [COLOURS] @POS, give_back #BAR [TEXT] left|right, stop, draw down|up0|up1|up2, "
    "effect #BAR [TEXT] -> seat N|down|upN|#BAR [TEXT] left|right|nothing"
)


def _source(text: str) -> int:
    return mv.FACE_DOWN if text == "down" else int(text[2])


def _order(cat: Catalogue, m: re.Match[str], name: str, text: str) -> int:
    i = int(m.group(name))
    if i >= len(cat.orders):
        raise NotationError(
            f"{short_repr(text)}: no order card #{i} (ids 0..{len(cat.orders) - 1})"
        )
    shown = m.group(f"{name}_text")
    if shown is not None:
        want = cat.order_text(i)
        if shown.upper() not in (want, want[::-1]):
            raise NotationError(f"{short_repr(text)}: order #{i} shows {want}, not {shown}")
    return i


def _bar(cat: Catalogue, m: re.Match[str], name: str, text: str) -> int:
    i = int(m.group(name))
    if i >= len(cat.bars):
        raise NotationError(f"{short_repr(text)}: no candy bar #{i} (ids 0..{len(cat.bars) - 1})")
    shown = m.group(f"{name}_text")
    if shown is not None and shown != cat.bar_text(i):
        raise NotationError(f"{short_repr(text)}: bar #{i} is {cat.bar_text(i)}, not {shown}")
    return i


def parse_move(text: str, cat: Catalogue) -> int:
    """The packed move a text names (NotationError, one line, for anything else)."""
    if not isinstance(text, str):
        raise NotationError(f"a move is text, got {short_repr(text)}")
    line = " ".join(text.strip().split())
    head = line.split(" ", 1)[0].lower()
    pattern = _PATTERNS.get(head)
    m = pattern.fullmatch(line) if pattern is not None else None
    if m is None:
        raise NotationError(f"{short_repr(text)}: not a move (forms: {FORMS})")
    if head == "play":
        start = int(m.group("start"))
        if start > 254:
            raise NotationError(f"{short_repr(text)}: no belt position {start}")
        return mv.play(_order(cat, m, "order", text), start)
    if head == "give_back":
        return mv.give_back(_bar(cat, m, "bar", text), 0 if m.group("end") == "left" else 1)
    if head == "stop":
        return mv.STOP
    if head == "draw":
        return mv.draw(_source(m.group("source")))
    bar = _bar(cat, m, "bar", text)
    symbol = Effect(cat.bar_effect[bar])
    if m.group("nothing"):
        return mv.effect(bar)
    if m.group("seat") is not None:
        seat = int(m.group("seat"))
        if symbol not in (Effect.DISCARD_HAND, Effect.DISCARD_PLAYED, Effect.SWAP_HANDS):
            raise NotationError(f"{short_repr(text)}: a {symbol.text} effect has no seat target")
        if seat > 254:
            raise NotationError(f"{short_repr(text)}: no seat {seat}")
        return mv.effect(bar, seat)
    if m.group("source") is not None:
        if symbol is not Effect.DRAW:
            raise NotationError(f"{short_repr(text)}: a {symbol.text} effect draws no card")
        return mv.effect(bar, _source(m.group("source")))
    if symbol is not Effect.RETURN_BAR:
        raise NotationError(f"{short_repr(text)}: a {symbol.text} effect takes back no bar")
    target = _bar(cat, m, "target", text)
    return mv.effect(bar, target, 0 if m.group("end") == "left" else 1)


__all__ = ["FORMS", "parse_move"]
