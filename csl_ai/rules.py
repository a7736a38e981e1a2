"""The rules configuration: kinds, scoring sides, options, the sky deck, player counts.

Everything here is fixed before a game starts and follows RULES.md. The sky deck is data
(RULES.md §1.1) because no printed rule lists its contents: a TOML file with an optional
``name`` and one table per kind giving how many ×1 (``single``) and ×2 (``double``)
cards it holds; shooting stars are single only::

    name = "default"
    [candy]
    single = 8
    double = 3
    [spider]
    single = 8
    double = 3
    [leopard]
    single = 8
    double = 3
    [star]
    single = 3

A deck is stored expanded, sorted by (kind, count): candy ×1 cards first, then candy ×2,
spider ×1, spider ×2, leopard ×1, leopard ×2, stars. The index of a card in
``SkyDeck.cards`` is its *sky card id*, the number the C core stores.
"""

from __future__ import annotations

import os
import random
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum, IntEnum
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypeGuard

from csl_ai.errors import DeckError, RulesError, clip, path_label, short_repr
from csl_ai.files import read_input_text

DECK_SIZE: Final = 36
"""Sky cards in a box."""

STARS_IN_DECK: Final = 3
"""Shooting star cards in a box."""

MAX_CARDS_PER_ENTRY: Final = DECK_SIZE
"""Upper bound on one ``single``/``double`` count in a deck file."""

MAX_DECK_NAME: Final = 255
"""Longest deck name (a file name's length): it is shown in messages and records."""


def _is_int(value: object) -> TypeGuard[int]:
    """True for an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


class Kind(IntEnum):
    """The kind shown on a sky card, and the scoring card that counts it."""

    CANDY = 0
    SPIDER = 1
    LEOPARD = 2
    STAR = 3

    @property
    def text(self) -> str:
        """The lower-case name used in files and on the command line."""
        return self.name.lower()


KIND_BY_TEXT: Final[Mapping[str, Kind]] = {kind.text: kind for kind in Kind}
"""Kinds by their text name ("candy", "spider", "leopard", "star")."""

_KIND_CHOICES: Final = "candy, spider, leopard or star"


class Side(str, Enum):
    """The side of a scoring card in use (RULES.md §4)."""

    A = "A"
    B = "B"


class StarOption(str, Enum):
    """How shooting star side A scores a player holding all 3 stars (RULES.md §4)."""

    TWICE = "twice"
    """The star card scores twice the candy + spider + leopard points (default)."""
    DOUBLE = "double"
    """The star card scores that sum once, so the three cards' total is doubled."""


@dataclass(frozen=True, order=True)
class SkyCard:
    """One sky card: its kind and how many elements it shows (1 or 2; a star is 1).

    Ordering is the canonical deck order, by kind then count.
    """

    kind: Kind
    count: int

    def __post_init__(self) -> None:
        if not _is_int(self.kind) or not 0 <= self.kind < len(Kind):
            raise DeckError(f"sky card kind must be a Kind, got {self.kind!r}")
        object.__setattr__(self, "kind", Kind(self.kind))
        if isinstance(self.count, bool) or self.count not in (1, 2):
            raise DeckError(f"sky card count must be 1 or 2, got {self.count!r}")
        if self.kind is Kind.STAR and self.count != 1:
            raise DeckError(f"a shooting star card has count 1, got {self.count!r}")


SINGLE_CANDY: Final = SkyCard(Kind.CANDY, 1)
"""The card the 5-player game removes from the deck."""

_COUNT_KEYS: Final[Mapping[str, int]] = {"single": 1, "double": 2}


def _keys_for(kind: Kind) -> tuple[str, ...]:
    """The count keys a kind's table holds: stars are single only."""
    return ("single",) if kind is Kind.STAR else ("single", "double")


def _counts_from_tables(tables: Mapping[Any, Any], prefix: str) -> dict[SkyCard, int]:
    """Card counts from ``{kind: {"single": n, "double": m}}``; errors start with prefix."""
    for key in tables:
        if key not in KIND_BY_TEXT:
            raise DeckError(
                f"{prefix}{clip(str(key), 40)}: unknown kind {short_repr(key)} "
                f"(expected {_KIND_CHOICES})"
            )
    counts: dict[SkyCard, int] = {}
    for kind in Kind:
        where = f"{prefix}{kind.text}"
        if kind.text not in tables:
            raise DeckError(f"{where}: missing table")
        table = tables[kind.text]
        if not isinstance(table, Mapping):
            raise DeckError(f"{where}: must be a table of counts, got {short_repr(table)}")
        allowed = _keys_for(kind)
        for key in table:
            if key not in allowed:
                raise DeckError(
                    f"{where}.{clip(str(key), 40)}: unknown field {short_repr(key)} "
                    f"(expected {' or '.join(allowed)})"
                )
        for key in allowed:
            if key not in table:
                raise DeckError(f"{where}.{key}: missing")
            n = table[key]
            if not _is_int(n) or not 0 <= n <= MAX_CARDS_PER_ENTRY:
                raise DeckError(
                    f"{where}.{key}: must be an integer 0..{MAX_CARDS_PER_ENTRY}, got {short_repr(n)}"
                )
            if n:
                counts[SkyCard(kind, _COUNT_KEYS[key])] = n
    return counts


def _deck_name(value: object, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise DeckError(f"{where}: must be a non-empty string, got {short_repr(value)}")
    if len(value) > MAX_DECK_NAME:
        raise DeckError(f"{where}: at most {MAX_DECK_NAME} characters, got {short_repr(value)}")
    return value


def _toml_string(text: str) -> str:
    """A TOML basic string holding text."""
    escapes = {
        '"': '\\"',
        "\\": "\\\\",
        "\b": "\\b",
        "\t": "\\t",
        "\n": "\\n",
        "\f": "\\f",
        "\r": "\\r",
    }
    out = []
    for ch in text:
        if ch in escapes:
            out.append(escapes[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class SkyDeck:
    """A sky deck, stored expanded in canonical order; indexes are sky card ids.

    The constructor sorts the cards, so any order gives the same deck. It does not call
    ``validate``: the 5-player deck (35 cards) is a deck too.
    """

    cards: tuple[SkyCard, ...]
    """Every card, sorted by (kind, count)."""
    name: str = "default"
    """A label for the deck, shown to users and stored in records."""

    def __post_init__(self) -> None:
        cards = tuple(self.cards)
        for i, card in enumerate(cards):
            if not isinstance(card, SkyCard):
                raise DeckError(f"deck card {i} must be a SkyCard, got {card!r}")
        object.__setattr__(self, "cards", tuple(sorted(cards)))
        _deck_name(self.name, "deck name")

    @classmethod
    def default(cls) -> SkyDeck:
        """The default deck of RULES.md §1.1, read from the shipped ``decks/default.toml``."""
        return _default_deck()

    @classmethod
    def from_counts(cls, counts: Mapping[SkyCard, int], name: str = "default") -> SkyDeck:
        """A deck holding ``counts[card]`` copies of each card."""
        cards: list[SkyCard] = []
        for card, n in counts.items():
            if not _is_int(n) or n < 0:
                raise DeckError(f"count of {card!r} must be a non-negative integer, got {short_repr(n)}")
            cards.extend([card] * n)
        return cls(tuple(cards), name)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SkyDeck:
        """Read and validate a deck file; a missing ``name`` becomes the file's stem."""
        p = Path(path)
        source = f"deck file {path_label(p)}"
        text = read_input_text(p, source, DeckError)
        return cls.from_toml(text, source=source, default_name=p.stem or "custom")

    @classmethod
    def from_toml(
        cls, text: str, source: str = "deck text", default_name: str = "custom"
    ) -> SkyDeck:
        """Parse and validate deck TOML; source labels the text in error messages.

        Nesting too deep for the parser and integers too long to convert are bad TOML.
        """
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise DeckError(f"{source}: bad TOML: {clip(str(e))}") from None
        except RecursionError:
            raise DeckError(f"{source}: bad TOML: nested too deeply") from None
        except ValueError as e:
            raise DeckError(f"{source}: bad TOML: {clip(str(e))}") from None
        name = _deck_name(data.pop("name", default_name), f"{source}: name")
        deck = cls.from_counts(_counts_from_tables(data, f"{source}: "), name)
        deck.validate(source)
        return deck

    @classmethod
    def from_dict(cls, data: object, path: str = "deck") -> SkyDeck:
        """Parse and validate the JSON form of ``to_dict``; errors name the field path."""
        if not isinstance(data, Mapping):
            raise DeckError(f"{path}: must be an object, got {short_repr(data)}")
        for key in data:
            if key not in ("name", "cards"):
                raise DeckError(f"{path}: unknown field {short_repr(key)} (expected name, cards)")
        name = _deck_name(data.get("name", "custom"), f"{path}.name")
        if "cards" not in data:
            raise DeckError(f"{path}.cards: missing")
        tables = data["cards"]
        if not isinstance(tables, Mapping):
            raise DeckError(f"{path}.cards: must be an object, got {short_repr(tables)}")
        deck = cls.from_counts(_counts_from_tables(tables, f"{path}.cards."), name)
        deck.validate(path)
        return deck

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: ``{"name": ..., "cards": {"candy": {"single": 8, ...}, ...}}``."""
        counts = self.counts()
        cards = {
            kind.text: {
                key: counts.get(SkyCard(kind, _COUNT_KEYS[key]), 0) for key in _keys_for(kind)
            }
            for kind in Kind
        }
        return {"name": self.name, "cards": cards}

    def to_toml(self) -> str:
        """The deck as TOML that ``from_toml`` reads back to an equal deck."""
        lines = [f"name = {_toml_string(self.name)}"]
        for kind, table in self.to_dict()["cards"].items():
            lines.append("")
            lines.append(f"[{kind}]")
            lines.extend(f"{key} = {n}" for key, n in table.items())
        return "\n".join(lines) + "\n"

    def counts(self) -> dict[SkyCard, int]:
        """Copies of each distinct card, in canonical order (absent cards left out)."""
        return dict(Counter(self.cards))

    def cards_per_kind(self) -> dict[Kind, int]:
        """Number of cards of each kind."""
        return {kind: sum(1 for c in self.cards if c.kind is kind) for kind in Kind}

    def elements_per_kind(self) -> dict[Kind, int]:
        """Number of elements (×2 cards count 2) of each kind."""
        return {kind: sum(c.count for c in self.cards if c.kind is kind) for kind in Kind}

    def validate(self, source: str | None = None) -> None:
        """Check the deck is a full box (RULES.md §1.1); raise DeckError naming source.

        Card counts (1 or 2, a star 1) are already checked when each SkyCard is made.
        """
        where = f"{source}: " if source else ""
        deck = f"deck {self.name!r}"
        if len(self.cards) != DECK_SIZE:
            raise DeckError(
                f"{where}{deck} has {len(self.cards)} cards; a deck needs exactly {DECK_SIZE}"
            )
        stars = self.cards_per_kind()[Kind.STAR]
        if stars != STARS_IN_DECK:
            raise DeckError(
                f"{where}{deck} has {stars} shooting stars; a deck needs exactly {STARS_IN_DECK}"
            )
        if SINGLE_CANDY not in self.cards:
            raise DeckError(
                f"{where}{deck} has no single candy card; the 5-player game removes one"
            )

    def for_players(self, players: int) -> SkyDeck:
        """The deck a game of that many players uses: 5 players drop one single candy."""
        player_spec(players)
        if players != 5:
            return self
        if SINGLE_CANDY not in self.cards:
            raise DeckError(f"deck {self.name!r} has no single candy card to remove for 5 players")
        i = self.cards.index(SINGLE_CANDY)
        return SkyDeck(self.cards[:i] + self.cards[i + 1 :], self.name)


DEFAULT_DECK_RESOURCE: Final = "decks/default.toml"
"""The default deck's path inside the csl_ai package."""


@cache
def _default_deck() -> SkyDeck:
    text = resources.files("csl_ai").joinpath(DEFAULT_DECK_RESOURCE).read_text(encoding="utf-8")
    return SkyDeck.from_toml(text, source=f"shipped deck {DEFAULT_DECK_RESOURCE!r}")


def deck_from_arg(value: str | os.PathLike[str] | None) -> SkyDeck:
    """The deck a CLI or API argument names: None or "default", else a TOML file path."""
    if value is None or (isinstance(value, str) and value == "default"):
        return SkyDeck.default()
    return SkyDeck.load(value)


@dataclass(frozen=True)
class PlayerCountSpec:
    """What a player count fixes (RULES.md §2)."""

    players: int
    ranks: int
    """Rain cards in use are ranks 1..ranks of each colour (6 or 12)."""
    hand_size: int
    group_sizes: tuple[int, ...]
    """Size of each group of the sky line, and so of each pile, in order."""
    rounds: int

    @property
    def line_size(self) -> int:
        """Sky cards dealt in a round's line: one per trick, as many as a hand holds."""
        return self.hand_size

    @property
    def set_aside(self) -> int:
        """Rain cards in use but not dealt (1 with 5 players, else 0)."""
        return 3 * self.ranks - self.players * self.hand_size

    @property
    def rain_cards(self) -> int:
        """Bitmask of the rain cards in use (card index = colour * 12 + rank - 1)."""
        one_colour = (1 << self.ranks) - 1
        return one_colour | one_colour << 12 | one_colour << 24

    @property
    def sky_cards_used(self) -> int:
        """Sky cards dealt over the game: the whole deck for that player count."""
        return self.line_size * self.rounds


PLAYER_SPECS: Final[Mapping[int, PlayerCountSpec]] = {
    2: PlayerCountSpec(players=2, ranks=6, hand_size=9, group_sizes=(3, 3, 3), rounds=4),
    3: PlayerCountSpec(players=3, ranks=6, hand_size=6, group_sizes=(3, 3), rounds=6),
    4: PlayerCountSpec(players=4, ranks=12, hand_size=9, group_sizes=(3, 3, 3), rounds=4),
    5: PlayerCountSpec(players=5, ranks=12, hand_size=7, group_sizes=(3, 4), rounds=5),
}
"""The fixed setup for each allowed player count."""

MIN_PLAYERS: Final = min(PLAYER_SPECS)
MAX_PLAYERS: Final = max(PLAYER_SPECS)


def player_spec(players: int) -> PlayerCountSpec:
    """The spec for a player count; RulesError if the count is not allowed."""
    if not _is_int(players) or players not in PLAYER_SPECS:
        raise RulesError(
            f"players must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {players!r}"
        )
    return PLAYER_SPECS[players]


Sides = tuple[Side, Side, Side, Side]
"""One side per kind, indexed by Kind."""

ALL_A: Final[Sides] = (Side.A, Side.A, Side.A, Side.A)


def drawn_rules(players: int, rng: random.Random) -> RulesConfig:
    """Rules with the sides (each kind A or B) and the star option drawn uniformly by rng,
    the 32 scorings a benchmark or a fit should cover rather than the default alone."""
    sides = tuple(rng.choice((Side.A, Side.B)) for _ in range(len(Kind)))
    star = rng.choice(tuple(StarOption))
    return RulesConfig(players=players, sides=sides, star_option=star)  # type: ignore[arg-type]


def parse_sides(text: str) -> Sides:
    """Sides from text like ``"candy=A,spider=B"``: any subset, missing kinds A, any case."""
    if not isinstance(text, str):
        raise RulesError(f"sides must be text like 'candy=A,spider=B', got {text!r}")
    if not text.strip():
        return ALL_A
    sides = list(ALL_A)
    seen: set[Kind] = set()
    for item in text.split(","):
        bad = f"bad sides item {item.strip()!r} in {text!r}"
        key, sep, value = (part.strip() for part in item.partition("="))
        if not sep:
            raise RulesError(f"{bad}: expected kind=A or kind=B")
        kind = KIND_BY_TEXT.get(key.lower())
        if kind is None:
            raise RulesError(f"{bad}: unknown kind {key!r} (expected {_KIND_CHOICES})")
        if kind in seen:
            raise RulesError(f"{bad}: {kind.text} given twice")
        if value.upper() not in ("A", "B"):
            raise RulesError(f"{bad}: side must be A or B, got {value!r}")
        seen.add(kind)
        sides[kind] = Side(value.upper())
    return (sides[0], sides[1], sides[2], sides[3])


def format_sides(sides: Sides) -> str:
    """The text ``parse_sides`` reads back, every kind named: ``"candy=A,spider=B,..."``."""
    return ",".join(f"{kind.text}={side.value}" for kind, side in zip(Kind, sides, strict=True))


def _coerce_side(value: object, where: str) -> Side:
    if isinstance(value, str) and value.upper() in ("A", "B"):
        return Side(value.upper())
    raise RulesError(f"{where}: must be 'A' or 'B', got {value!r}")


def _coerce_star_option(value: object, where: str) -> StarOption:
    if isinstance(value, str):
        try:
            return StarOption(value)
        except ValueError:
            pass
    choices = " or ".join(repr(o.value) for o in StarOption)
    raise RulesError(f"{where}: must be {choices}, got {value!r}")


def _check_first_seat(value: object, players: int, where: str) -> int:
    if not _is_int(value) or not 0 <= value < players:
        raise RulesError(f"{where}: must be a seat 0..{players - 1}, got {value!r}")
    return value


_RULES_FIELDS: Final = ("players", "sides", "star_option", "first_seat", "deck")


@dataclass(frozen=True)
class RulesConfig:
    """Every rules choice made before a game: players, scoring sides, options, deck.

    Sides and star_option given as strings are converted; everything is validated.
    """

    players: int = 4
    sides: Sides = ALL_A
    """Scoring card side per kind, indexed by Kind."""
    star_option: StarOption = StarOption.TWICE
    deck: SkyDeck = field(default_factory=SkyDeck.default)
    """The full box deck (36 cards); ``game_deck`` is the one dealt."""
    first_seat: int = 0
    """The seat holding the First player card in round 1."""

    def __post_init__(self) -> None:
        player_spec(self.players)
        if isinstance(self.sides, str):
            raise RulesError(
                f"sides must be a tuple of 4 sides (see parse_sides), got {self.sides!r}"
            )
        try:
            sides = tuple(self.sides)
        except TypeError:
            sides = ()
        if len(sides) != len(Kind):
            raise RulesError(
                f"sides must give one side per kind (candy, spider, leopard, star), "
                f"got {self.sides!r}"
            )
        object.__setattr__(
            self,
            "sides",
            tuple(_coerce_side(s, f"sides.{k.text}") for k, s in zip(Kind, sides, strict=True)),
        )
        object.__setattr__(
            self, "star_option", _coerce_star_option(self.star_option, "star_option")
        )
        if not isinstance(self.deck, SkyDeck):
            raise RulesError(f"deck must be a SkyDeck, got {self.deck!r}")
        self.deck.validate("deck")
        _check_first_seat(self.first_seat, self.players, "first_seat")

    @property
    def spec(self) -> PlayerCountSpec:
        """The setup fixed by the player count."""
        return PLAYER_SPECS[self.players]

    @property
    def game_deck(self) -> SkyDeck:
        """The deck dealt in this game; its indexes are the sky card ids."""
        return self.deck.for_players(self.players)

    def side(self, kind: Kind) -> Side:
        """The side in use for a kind's scoring card."""
        return self.sides[kind]

    def sides_text(self) -> str:
        """The sides as ``"candy=A,spider=A,leopard=A,star=A"`` (``parse_sides`` reads it)."""
        return format_sides(self.sides)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, read back by ``from_dict``."""
        return {
            "players": self.players,
            "sides": {kind.text: side.value for kind, side in zip(Kind, self.sides, strict=True)},
            "star_option": self.star_option.value,
            "first_seat": self.first_seat,
            "deck": self.deck.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "rules") -> RulesConfig:
        """Parse the JSON form; absent fields take defaults, errors name the field path."""
        if not isinstance(data, Mapping):
            raise RulesError(f"{path}: must be an object, got {data!r}")
        for key in data:
            if key not in _RULES_FIELDS:
                raise RulesError(
                    f"{path}: unknown field {key!r} (expected {', '.join(_RULES_FIELDS)})"
                )
        players = data.get("players", 4)
        if not _is_int(players) or players not in PLAYER_SPECS:
            raise RulesError(
                f"{path}.players: must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {players!r}"
            )
        sides = list(ALL_A)
        raw_sides = data.get("sides", {})
        if not isinstance(raw_sides, Mapping):
            raise RulesError(
                f'{path}.sides: must be an object like {{"candy": "A"}}, got {raw_sides!r}'
            )
        for key, value in raw_sides.items():
            kind = KIND_BY_TEXT.get(key) if isinstance(key, str) else None
            if kind is None:
                raise RulesError(f"{path}.sides: unknown kind {key!r} (expected {_KIND_CHOICES})")
            if value not in ("A", "B"):
                raise RulesError(f"{path}.sides.{kind.text}: must be 'A' or 'B', got {value!r}")
            sides[kind] = Side(value)
        star_option = _coerce_star_option(
            data.get("star_option", StarOption.TWICE.value), f"{path}.star_option"
        )
        first_seat = _check_first_seat(data.get("first_seat", 0), players, f"{path}.first_seat")
        deck = (
            SkyDeck.from_dict(data["deck"], f"{path}.deck") if "deck" in data else SkyDeck.default()
        )
        return cls(
            players=players,
            sides=(sides[0], sides[1], sides[2], sides[3]),
            star_option=star_option,
            deck=deck,
            first_seat=first_seat,
        )
