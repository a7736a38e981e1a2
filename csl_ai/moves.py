"""Moves as small frozen values that know nothing of the position.

A move is one of three decisions (RULES.md §6): ``Allocate`` a hand into piles,
``Declare`` good weather or not, ``Play`` a card. Whether a move is legal is the game's
business; here a move is only checked to be well formed. Text is the canonical notation
of ``csl_ai.notation``; JSON is ``{"type": "play", "card": "B7"}``,
``{"type": "allocate", "piles": ["B7 R2 G5", ...]}`` or
``{"type": "weather", "good_weather": true}``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from csl_ai.errors import NotationError
from csl_ai.notation import (
    card_str,
    check_card,
    check_piles,
    format_cards,
    format_piles,
    parse_card,
    parse_cards,
    parse_piles,
    parse_weather,
    weather_str,
)

MoveKind: TypeAlias = Literal["play", "allocate", "weather"]
MOVE_KINDS: Final[tuple[MoveKind, ...]] = ("play", "allocate", "weather")
_KIND_CHOICES: Final = "'play', 'allocate' or 'weather'"


@dataclass(frozen=True)
class Play:
    """Play a rain card (its index) from the pile of the current group."""

    card: int

    def __post_init__(self) -> None:
        check_card(self.card)

    def __str__(self) -> str:
        return card_str(self.card)

    @property
    def kind(self) -> Literal["play"]:
        """The decision this move answers."""
        return "play"


@dataclass(frozen=True)
class Allocate:
    """Split a hand into piles: one card mask per group, in group order."""

    piles: tuple[int, ...]

    def __post_init__(self) -> None:
        if isinstance(self.piles, (str, bytes)) or not isinstance(self.piles, Sequence):
            raise NotationError(f"piles must be a sequence of card masks, got {self.piles!r}")
        object.__setattr__(self, "piles", tuple(self.piles))
        check_piles(self.piles)

    @classmethod
    def trusted(cls, piles: tuple[int, ...]) -> Allocate:
        """An allocation the core has just enumerated: skips re-validating 1680 of them."""
        move = object.__new__(cls)
        object.__setattr__(move, "piles", piles)
        return move

    def __str__(self) -> str:
        return format_piles(self.piles)

    @property
    def kind(self) -> Literal["allocate"]:
        """The decision this move answers."""
        return "allocate"

    @property
    def cards(self) -> int:
        """The mask of every card allocated (the hand)."""
        hand = 0
        for pile in self.piles:
            hand |= pile
        return hand


@dataclass(frozen=True)
class Declare:
    """Declare good weather (True) or not (False)."""

    good_weather: bool

    def __post_init__(self) -> None:
        if not isinstance(self.good_weather, bool):
            raise NotationError(f"good_weather must be True or False, got {self.good_weather!r}")

    def __str__(self) -> str:
        return weather_str(self.good_weather)

    @property
    def kind(self) -> Literal["weather"]:
        """The decision this move answers."""
        return "weather"


Move: TypeAlias = Play | Allocate | Declare


def parse_move(text: str, kind: str, group_sizes: Sequence[int] | None = None) -> Move:
    """The move of that kind written in canonical notation (group_sizes checks piles)."""
    if kind == "play":
        return Play(parse_card(text))
    if kind == "allocate":
        return Allocate(parse_piles(text, group_sizes))
    if kind == "weather":
        return Declare(parse_weather(text))
    raise NotationError(f"unknown move kind {kind!r}: expected {_KIND_CHOICES}")


def move_to_json(move: Move) -> dict[str, Any]:
    """The JSON form of a move."""
    if isinstance(move, Play):
        return {"type": "play", "card": card_str(move.card)}
    if isinstance(move, Allocate):
        return {"type": "allocate", "piles": [format_cards(pile) for pile in move.piles]}
    if isinstance(move, Declare):
        return {"type": "weather", "good_weather": move.good_weather}
    raise NotationError(f"not a move: {move!r}")


_FIELDS: Final[Mapping[str, str]] = {"play": "card", "allocate": "piles", "weather": "good_weather"}


def move_from_json(
    data: object, group_sizes: Sequence[int] | None = None, path: str = "move"
) -> Move:
    """Read the JSON form of a move; errors name the field path (``move.piles[1]``)."""
    if not isinstance(data, Mapping):
        raise NotationError(f"{path}: must be an object, got {data!r}")
    if "type" not in data:
        raise NotationError(f"{path}.type: missing")
    kind = data["type"]
    if kind not in _FIELDS:
        raise NotationError(f"{path}.type: must be {_KIND_CHOICES}, got {kind!r}")
    name = _FIELDS[kind]
    for key in data:
        if key not in ("type", name):
            raise NotationError(f"{path}: unknown field {key!r} for a {kind} move")
    if name not in data:
        raise NotationError(f"{path}.{name}: missing")
    value = data[name]
    where = f"{path}.{name}"
    if kind == "play":
        if not isinstance(value, str):
            raise NotationError(f"{where}: must be a card like 'B7', got {value!r}")
        try:
            return Play(parse_card(value))
        except NotationError as e:
            raise NotationError(f"{where}: {e}") from None
    if kind == "allocate":
        return Allocate(_piles_from_json(value, group_sizes, where))
    if not isinstance(value, bool):
        raise NotationError(f"{where}: must be true or false, got {value!r}")
    return Declare(value)


def _piles_from_json(
    value: object, group_sizes: Sequence[int] | None, where: str
) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise NotationError(
            f"{where}: must be a list of piles like ['B7 R2 G5', ...], got {value!r}"
        )
    piles = []
    for i, pile in enumerate(value):
        if not isinstance(pile, str) or "|" in pile:
            raise NotationError(f"{where}[{i}]: must be cards like 'B7 R2 G5', got {pile!r}")
        try:
            piles.append(parse_cards(pile))
        except NotationError as e:
            raise NotationError(f"{where}[{i}]: {e}") from None
    try:
        check_piles(piles, group_sizes)
    except NotationError as e:
        raise NotationError(f"{where}: {e}") from None
    return tuple(piles)
