"""Candy Lab moves as packed integers: one decision each, knowing nothing of the position.

A move is an ``int`` (no object per move), packed as::

    bits 0-3    kind     PLAY, GIVE_BACK, STOP, DRAW, EFFECT
    bits 4-11   a        PLAY: order id; GIVE_BACK: bar id; DRAW: source; EFFECT: the
                         bar whose effect is applied
    bits 12-19  b        PLAY: first belt position of the run; GIVE_BACK: end;
                         EFFECT: the target (see below), NONE when nothing happens
    bit  20     c        EFFECT return_bar: the end the returned bar goes to

Sources are the face-up slots 0, 1, 2 and FACE_DOWN (3). Ends are LEFT (0) and RIGHT
(1): the belt's first and last positions. An EFFECT's target by symbol: draw: a source;
discard_hand, discard_played, swap_hands: a seat (with 2 players, seat 2 is the third
hand); return_bar: the bar id taken back from its owner.

Which decisions exist and when (docs/candy-lab-rules.md CL-7 to CL-24):

- ``PLAY(order, start)``: action A, play an order card and retrieve the adjacent run of
  bars starting at ``start`` (read in whichever direction matches);
- ``GIVE_BACK(bar, end)``: action B, return one of your bars to an end; then more
  ``GIVE_BACK`` or ``STOP``, at most 3 bars, then one ``DRAW`` per point returned;
- ``DRAW(source)``: a card drawn for action B or action C;
- ``EFFECT(bar, target, end)``: apply the effect of one retrieved bar.
"""

from __future__ import annotations

from typing import Final

from csl_ai.candylab.catalogue import Catalogue, Effect

PLAY: Final = 0
GIVE_BACK: Final = 1
STOP: Final = 2
DRAW: Final = 3
EFFECT: Final = 4
KIND_NAMES: Final = ("play", "give_back", "stop", "draw", "effect")

LEFT: Final = 0
RIGHT: Final = 1
FACE_DOWN: Final = 3
"""The draw source of the top face-down card; 0..2 are the face-up slots."""
NONE: Final = 255
"""An EFFECT's target when the effect cannot be carried out (nothing happens)."""


def play(order: int, start: int) -> int:
    """Action A: play order and retrieve the run of bars starting at belt position start."""
    return PLAY | order << 4 | start << 12


def give_back(bar: int, end: int) -> int:
    """Action B, one bar: return bar to the LEFT or RIGHT end of the belt."""
    return GIVE_BACK | bar << 4 | end << 12


def draw(source: int) -> int:
    """Draw a card from a face-up slot (0..2) or FACE_DOWN (action B's draws, action C)."""
    return DRAW | source << 4


def effect(bar: int, target: int = NONE, end: int = 0) -> int:
    """Apply the effect of retrieved bar on target (NONE: it cannot be carried out)."""
    return EFFECT | bar << 4 | target << 12 | end << 20



def kind(move: int) -> int:
    """The move's kind (PLAY, GIVE_BACK, STOP, DRAW, EFFECT)."""
    return move & 15


def arg_a(move: int) -> int:
    """The move's first argument: an order id, a bar id or a draw source."""
    return (move >> 4) & 255


def arg_b(move: int) -> int:
    """The move's second argument: a belt position, an end or an effect's target."""
    return (move >> 12) & 255


def arg_c(move: int) -> int:
    """The move's third argument: the end a return_bar effect puts the bar at."""
    return (move >> 20) & 1


def _source_text(source: int) -> str:
    return "down" if source == FACE_DOWN else f"up{source}"


def move_text(move: int, catalogue: Catalogue | None = None) -> str:
    """A readable line for a move: ``play #17 BOP @4``, ``give_back #3 B1:draw left``,
    ``effect #5 B1:discard_hand -> seat 2``; with no catalogue, ids only."""

    def order(i: int) -> str:
        return f"#{i} {catalogue.order_text(i)}" if catalogue else f"#{i}"

    def bar(i: int) -> str:
        return f"#{i} {catalogue.bar_text(i)}" if catalogue else f"#{i}"

    k, a, b, c = kind(move), arg_a(move), arg_b(move), arg_c(move)
    ends = ("left", "right")
    if k == PLAY:
        return f"play {order(a)} @{b}"
    if k == GIVE_BACK:
        return f"give_back {bar(a)} {ends[b & 1]}"
    if k == STOP:
        return "stop"
    if k == DRAW:
        return f"draw {_source_text(a)}"
    if k == EFFECT:
        head = f"effect {bar(a)}"
        if b == NONE:
            return f"{head} -> nothing"
        symbol = Effect(catalogue.bar_effect[a]) if catalogue else None
        if symbol is Effect.DRAW:
            return f"{head} -> {_source_text(b)}"
        if symbol is Effect.RETURN_BAR:
            return f"{head} -> {bar(b)} {ends[c]}"
        return f"{head} -> seat {b}"
    return f"<move {move}>"
