"""The Candy Lab components as data: which colours each order card shows, and each candy
bar's colour, value and effect symbol (docs/candy-lab-rules.md, CL-1 to CL-4).

The rulebook gives the counts but not the list, so the list is a data file, like the sky
deck of Candy Spiders Leopards: ``catalogue.toml`` beside this module is the default, and
a user's own file replaces it. The format (TOML)::

    name = "my box"
    [[order]]
    bars = "B O P"        # colour letters B, O, P, W (wild); either reading direction
    count = 2
    [[bar]]
    colour = "blue"       # blue, orange, pink or wild
    value = 1             # 1..5: points, and cards drawn when the bar is returned
    effect = "draw"       # none, draw, discard_hand, return_bar, discard_played, swap_hands
    count = 2

A box holds exactly 42 order cards (12 showing 1 bar, 18 showing 2, 12 showing 3) and
exactly 27 candy bars. Every problem is one ``CatalogueError`` line naming the field.

A catalogue is stored expanded and sorted: order cards by (size, colour sequence), bars
by (colour, value, effect). The index of a card in ``Catalogue.orders`` is its *order
id* (0..41), of a bar in ``Catalogue.bars`` its *bar id* (0..26): the small integers the
rules core stores in bitmasks. The flat tables (``order_len``, ``bar_colour``, ...) are
what the core reads, one tuple per field, as a C port would hold arrays.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypeGuard

from csl_ai.errors import CslError, clip, path_label, short_repr
from csl_ai.files import read_input_text


class CatalogueError(CslError):
    """A Candy Lab catalogue file or table that cannot be read or fails validation."""


BLUE: Final = 0
ORANGE: Final = 1
PINK: Final = 2
WILD: Final = 3
"""Colour ids. WILD is the multicoloured bar, or a multicoloured bar shown on a card."""

COLOUR_NAMES: Final = ("blue", "orange", "pink", "wild")
COLOUR_LETTERS: Final = "BOPW"
PLAIN_COLOURS: Final = 3
"""Colours other than wild."""


class Effect(IntEnum):
    """A candy bar's effect symbol: the five of the reference card, or none."""

    NONE = 0
    DRAW = 1
    """Draw the top face-down card or one of the 3 face-up cards."""
    DISCARD_HAND = 2
    """A random card of another player's hand goes to the box."""
    RETURN_BAR = 3
    """Another player's bar of the same colour goes back to an end of the belt."""
    DISCARD_PLAYED = 4
    """The last card another player played goes to the box."""
    SWAP_HANDS = 5
    """Swap hands with another player (or, with 2 players, the third hand)."""

    @property
    def text(self) -> str:
        """The name used in catalogue files."""
        return self.name.lower()


EFFECT_BY_TEXT: Final[Mapping[str, Effect]] = {e.text: e for e in Effect}

ORDER_CARDS: Final = 42
"""Order cards in a box."""
CANDY_BARS: Final = 27
"""Candy bars in a box."""
ORDERS_BY_SIZE: Final[Mapping[int, int]] = {1: 12, 2: 18, 3: 12}
"""How many order cards show 1, 2 and 3 bars."""
POINTS_BY_SIZE: Final[Mapping[int, int]] = {1: 3, 2: 2, 3: 1}
"""An order card's points, by the number of bars it shows (the rulebook's components)."""
MIN_BAR_VALUE: Final = 1
MAX_BAR_VALUE: Final = 5
MAX_NAME: Final = 255


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def canonical_pattern(pattern: tuple[int, ...]) -> tuple[int, ...]:
    """The reading of a colour sequence used as its name: the smaller of it and its
    reverse (a card reads in either direction, CL-7)."""
    rev = pattern[::-1]
    return min(pattern, rev)


def pattern_text(pattern: tuple[int, ...]) -> str:
    """Colour letters of a sequence: ``(0, 1, 2)`` -> ``"BOP"``."""
    return "".join(COLOUR_LETTERS[c] for c in pattern)


@dataclass(frozen=True, order=True)
class OrderCard:
    """One order card: the colour sequence it shows (read either way; WILD is any)."""

    pattern: tuple[int, ...]

    def __post_init__(self) -> None:
        pattern = tuple(self.pattern)
        if not 1 <= len(pattern) <= 3 or not all(
            _is_int(c) and 0 <= c < len(COLOUR_NAMES) for c in pattern
        ):
            raise CatalogueError(f"an order shows 1 to 3 colour ids 0..3, got {self.pattern!r}")
        object.__setattr__(self, "pattern", canonical_pattern(pattern))

    @property
    def size(self) -> int:
        """Bars it asks for."""
        return len(self.pattern)

    @property
    def points(self) -> int:
        """Points it scores once fulfilled."""
        return POINTS_BY_SIZE[len(self.pattern)]

    @property
    def text(self) -> str:
        """``"BOP"``: the colour letters in the card's canonical reading."""
        return pattern_text(self.pattern)


@dataclass(frozen=True, order=True)
class CandyBar:
    """One candy bar: colour, value (points and cards drawn when returned), symbol."""

    colour: int
    value: int
    effect: Effect

    def __post_init__(self) -> None:
        if not _is_int(self.colour) or not 0 <= self.colour < len(COLOUR_NAMES):
            raise CatalogueError(f"a bar's colour is a colour id 0..3, got {self.colour!r}")
        if not _is_int(self.value) or not MIN_BAR_VALUE <= self.value <= MAX_BAR_VALUE:
            raise CatalogueError(
                f"a bar's value is an integer {MIN_BAR_VALUE}..{MAX_BAR_VALUE}, got {self.value!r}"
            )
        if not _is_int(self.effect) or not 0 <= self.effect < len(Effect):
            raise CatalogueError(f"a bar's effect is an Effect, got {self.effect!r}")
        object.__setattr__(self, "effect", Effect(self.effect))

    @property
    def text(self) -> str:
        """``"B1:draw"``: colour letter, value, symbol."""
        return f"{COLOUR_LETTERS[self.colour]}{self.value}:{self.effect.text}"


def _read_name(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CatalogueError(f"{where}: must be a non-empty string, got {short_repr(value)}")
    if len(value) > MAX_NAME:
        raise CatalogueError(f"{where}: at most {MAX_NAME} characters, got {short_repr(value)}")
    return value


def _check_keys(table: Mapping[Any, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            raise CatalogueError(
                f"{where}: unknown field {short_repr(key)} (expected {', '.join(allowed)})"
            )
    for key in allowed:
        if key not in table:
            raise CatalogueError(f"{where}.{key}: missing")


def _read_count(value: object, limit: int, where: str) -> int:
    if not _is_int(value) or not 1 <= value <= limit:
        raise CatalogueError(f"{where}: must be an integer 1..{limit}, got {short_repr(value)}")
    return value


def _read_pattern(value: object, where: str) -> tuple[int, ...]:
    if not isinstance(value, str):
        raise CatalogueError(f"{where}: must be colour letters like 'B O P', got {short_repr(value)}")
    letters = value.replace(" ", "").upper()
    if not 1 <= len(letters) <= 3:
        raise CatalogueError(f"{where}: an order shows 1 to 3 bars, got {short_repr(value)}")
    for letter in letters:
        if letter not in COLOUR_LETTERS:
            raise CatalogueError(
                f"{where}: unknown colour letter {short_repr(letter)} in {short_repr(value)} "
                "(expected B, O, P or W)"
            )
    return tuple(COLOUR_LETTERS.index(letter) for letter in letters)


def _read_list(data: Mapping[Any, Any], key: str, where: str) -> list[Any]:
    if key not in data:
        raise CatalogueError(f"{where}{key}: missing")
    value = data[key]
    if not isinstance(value, list) or not all(isinstance(t, Mapping) for t in value):
        raise CatalogueError(f"{where}{key}: must be a list of tables, got {short_repr(value)}")
    return value


def _orders_from(tables: list[Any], where: str) -> list[OrderCard]:
    orders: list[OrderCard] = []
    for i, table in enumerate(tables):
        at = f"{where}order[{i}]"
        _check_keys(table, ("bars", "count"), at)
        pattern = _read_pattern(table["bars"], f"{at}.bars")
        count = _read_count(table["count"], ORDER_CARDS, f"{at}.count")
        orders.extend([OrderCard(pattern)] * count)
    return orders


def _bars_from(tables: list[Any], where: str) -> list[CandyBar]:
    bars: list[CandyBar] = []
    for i, table in enumerate(tables):
        at = f"{where}bar[{i}]"
        _check_keys(table, ("colour", "value", "effect", "count"), at)
        colour = table["colour"]
        if not isinstance(colour, str) or colour not in COLOUR_NAMES:
            raise CatalogueError(
                f"{at}.colour: must be blue, orange, pink or wild, got {short_repr(colour)}"
            )
        value = table["value"]
        if not _is_int(value) or not MIN_BAR_VALUE <= value <= MAX_BAR_VALUE:
            raise CatalogueError(
                f"{at}.value: must be an integer {MIN_BAR_VALUE}..{MAX_BAR_VALUE}, "
                f"got {short_repr(value)}"
            )
        effect = table["effect"]
        if not isinstance(effect, str) or effect not in EFFECT_BY_TEXT:
            raise CatalogueError(
                f"{at}.effect: must be one of {', '.join(EFFECT_BY_TEXT)}, got {short_repr(effect)}"
            )
        count = _read_count(table["count"], CANDY_BARS, f"{at}.count")
        bars.extend(
            [CandyBar(COLOUR_NAMES.index(colour), value, EFFECT_BY_TEXT[effect])] * count
        )
    return bars


@dataclass(frozen=True)
class Catalogue:
    """A box's order cards and candy bars, expanded and sorted; indexes are ids.

    The constructor sorts and derives the flat tables; it does not call ``validate``
    (tests may build small boxes), but every loader does.
    """

    orders: tuple[OrderCard, ...]
    """Every order card, sorted by (size, canonical colour sequence): index = order id."""
    bars: tuple[CandyBar, ...]
    """Every candy bar, sorted by (colour, value, effect): index = bar id."""
    name: str = "default"

    order_len: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Bars each order asks for."""
    order_points: tuple[int, ...] = field(init=False, repr=False, compare=False)
    order_pattern: tuple[tuple[int, ...], ...] = field(init=False, repr=False, compare=False)
    """Colour sequence of each order (canonical reading)."""
    order_type: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Index of the order's kind among the distinct kinds: equal kinds are interchangeable."""
    bar_colour: tuple[int, ...] = field(init=False, repr=False, compare=False)
    bar_value: tuple[int, ...] = field(init=False, repr=False, compare=False)
    bar_effect: tuple[int, ...] = field(init=False, repr=False, compare=False)
    bar_type: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """Index of the bar's kind (colour, value, effect) among the distinct kinds."""

    def __post_init__(self) -> None:
        for i, card in enumerate(self.orders):
            if not isinstance(card, OrderCard):
                raise CatalogueError(f"order {i} must be an OrderCard, got {short_repr(card)}")
        for i, bar in enumerate(self.bars):
            if not isinstance(bar, CandyBar):
                raise CatalogueError(f"bar {i} must be a CandyBar, got {short_repr(bar)}")
        if len(self.orders) > 63 or len(self.bars) > 63:
            raise CatalogueError("a catalogue holds at most 63 order cards and 63 bars")
        orders = tuple(sorted(self.orders, key=lambda c: (c.size, c.pattern)))
        bars = tuple(sorted(self.bars))
        object.__setattr__(self, "orders", orders)
        object.__setattr__(self, "bars", bars)
        _read_name(self.name, "catalogue name")
        order_kinds = sorted(set(orders), key=lambda c: (c.size, c.pattern))
        bar_kinds = sorted(set(bars))
        derived = {
            "order_len": tuple(c.size for c in orders),
            "order_points": tuple(c.points for c in orders),
            "order_pattern": tuple(c.pattern for c in orders),
            "order_type": tuple(order_kinds.index(c) for c in orders),
            "bar_colour": tuple(b.colour for b in bars),
            "bar_value": tuple(b.value for b in bars),
            "bar_effect": tuple(int(b.effect) for b in bars),
            "bar_type": tuple(bar_kinds.index(b) for b in bars),
        }
        for key, value in derived.items():
            object.__setattr__(self, key, value)

    # --- loading ----------------------------------------------------------------------
    @classmethod
    def default(cls) -> Catalogue:
        """The default catalogue (CL-1 to CL-4), read from the shipped ``catalogue.toml``."""
        return _shipped(DEFAULT_RESOURCE)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Catalogue:
        """Read and validate a catalogue file; a missing ``name`` becomes the file's stem."""
        p = Path(path)
        source = f"catalogue file {path_label(p)}"
        text = read_input_text(p, source, CatalogueError)
        return cls.from_toml(text, source=source, default_name=p.stem or "custom")

    @classmethod
    def from_toml(
        cls, text: str, source: str = "catalogue text", default_name: str = "custom"
    ) -> Catalogue:
        """Parse and validate catalogue TOML; source starts every error message."""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise CatalogueError(f"{source}: bad TOML: {clip(str(e))}") from None
        except RecursionError:
            raise CatalogueError(f"{source}: bad TOML: nested too deeply") from None
        except ValueError as e:
            raise CatalogueError(f"{source}: bad TOML: {clip(str(e))}") from None
        return cls._from_tables(data, f"{source}: ", default_name, source)

    @classmethod
    def from_dict(cls, data: object, path: str = "catalogue") -> Catalogue:
        """Parse and validate the JSON form of ``to_dict``; errors name the field path."""
        if not isinstance(data, Mapping):
            raise CatalogueError(f"{path}: must be an object, got {short_repr(data)}")
        return cls._from_tables(data, f"{path}.", "custom", path)

    @classmethod
    def _from_tables(
        cls, data: Mapping[Any, Any], prefix: str, default_name: str, source: str
    ) -> Catalogue:
        for key in data:
            if key not in ("name", "order", "bar"):
                raise CatalogueError(
                    f"{prefix}{clip(str(key), 40)}: unknown field {short_repr(key)} "
                    "(expected name, order, bar)"
                )
        name = _read_name(data.get("name", default_name), f"{prefix}name")
        orders = _orders_from(_read_list(data, "order", prefix), prefix)
        bars = _bars_from(_read_list(data, "bar", prefix), prefix)
        catalogue = cls(tuple(orders), tuple(bars), name)
        catalogue.validate(source)
        return catalogue

    # --- writing ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the TOML file's tables, counts grouped), read by ``from_dict``."""
        orders = Counter(self.orders)
        bars = Counter(self.bars)
        return {
            "name": self.name,
            "order": [{"bars": " ".join(card.text), "count": n} for card, n in orders.items()],
            "bar": [
                {
                    "colour": COLOUR_NAMES[bar.colour],
                    "value": bar.value,
                    "effect": bar.effect.text,
                    "count": n,
                }
                for bar, n in bars.items()
            ],
        }

    def to_toml(self) -> str:
        """TOML that ``from_toml`` reads back to an equal catalogue."""
        data = self.to_dict()
        name = json.dumps(self.name, ensure_ascii=False).replace("\x7f", "\\u007f")
        lines = [f"name = {name}"]
        for table in data["order"]:
            lines += ["", "[[order]]", f'bars = "{table["bars"]}"', f"count = {table['count']}"]
        for table in data["bar"]:
            lines += [
                "",
                "[[bar]]",
                f'colour = "{table["colour"]}"',
                f"value = {table['value']}",
                f'effect = "{table["effect"]}"',
                f"count = {table['count']}",
            ]
        return "\n".join(lines) + "\n"

    # --- checks and counts -----------------------------------------------------------
    def validate(self, source: str | None = None) -> None:
        """Check the catalogue is a full box: 42 orders (12/18/12 by size), 27 bars."""
        where = f"{source}: " if source else ""
        box = f"catalogue {self.name!r}"
        if len(self.orders) != ORDER_CARDS:
            raise CatalogueError(
                f"{where}{box} has {len(self.orders)} order cards; a box holds exactly {ORDER_CARDS}"
            )
        sizes = Counter(card.size for card in self.orders)
        for size, want in ORDERS_BY_SIZE.items():
            if sizes[size] != want:
                raise CatalogueError(
                    f"{where}{box} has {sizes[size]} order cards of {size} bar"
                    f"{'s' if size > 1 else ''}; a box holds exactly {want}"
                )
        if len(self.bars) != CANDY_BARS:
            raise CatalogueError(
                f"{where}{box} has {len(self.bars)} candy bars; a box holds exactly {CANDY_BARS}"
            )

    @property
    def wild_bars(self) -> int:
        """Multicoloured bars in the box."""
        return sum(1 for bar in self.bars if bar.colour == WILD)

    def order_text(self, order: int) -> str:
        """``"BOP"``: an order id's colour sequence."""
        return self.orders[order].text

    def bar_text(self, bar: int) -> str:
        """``"B1:draw"``: a bar id's colour, value and symbol."""
        return self.bars[bar].text


DEFAULT_RESOURCE: Final = "catalogue.toml"
"""The default catalogue's file inside the csl_ai.candylab package."""
WILD_RESOURCE: Final = "catalogue-wild.toml"
"""A shipped alternative: a box with 3 multicoloured bars (8 of each colour + 3 wild)."""
SHIPPED: Final[Mapping[str, str]] = {"default": DEFAULT_RESOURCE, "wild": WILD_RESOURCE}
"""Catalogues named on a command line without a path."""


@cache
def _shipped(resource: str) -> Catalogue:
    text = resources.files("csl_ai.candylab").joinpath(resource).read_text(encoding="utf-8")
    return Catalogue.from_toml(text, source=f"shipped catalogue {resource!r}")


def catalogue_from_arg(value: str | os.PathLike[str] | None) -> Catalogue:
    """The catalogue an argument names: None or a shipped name ("default", "wild"), else
    a TOML file path."""
    if value is None:
        return Catalogue.default()
    if isinstance(value, str) and value in SHIPPED:
        return _shipped(SHIPPED[value])
    return Catalogue.load(value)
