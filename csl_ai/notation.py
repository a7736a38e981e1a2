"""Canonical text for rain cards, card sets, piles, sky cards and weather declarations.

Rain card index = colour * 12 + (rank - 1), colours 0 = blue ``B`` (trump), 1 = red
``R``, 2 = green ``G``, ranks 1..12 — the numbering of the C core. A set of rain cards is
an int bitmask (bit i = card i). Every ``parse_*`` reads what the matching formatter
prints, and printing what was parsed gives the canonical text back:

- card ``B7``, ``R12`` (the letter may be lower case; ranks have no leading zero);
- cards ``B7 R2 G5`` (ascending index: blue, red, green, each by rank; commas allowed);
- piles ``B7 R2 G5 | B1 R9 G9 | B3 R4 G12`` (one pile per group, in group order);
- sky cards ``C1 C2 S1 S2 L1 L2 *`` (candy, spider, leopard ×1/×2; shooting star);
- weather ``yes`` / ``no``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Final

from csl_ai.bits import bits
from csl_ai.errors import NotationError
from csl_ai.rules import Kind, SkyCard

N_COLOURS: Final = 3
MAX_RANK: Final = 12
N_RAIN: Final = N_COLOURS * MAX_RANK
BLUE: Final = 0
RED: Final = 1
GREEN: Final = 2
COLOUR_LETTERS: Final = "BRG"
ALL_CARDS: Final = (1 << N_RAIN) - 1
"""Bitmask of all 36 rain cards."""

_CARD_RE: Final = re.compile(r"([BRG])([1-9]|1[0-2])", re.IGNORECASE)
_CARD_SEP_RE: Final = re.compile(r"\s*,\s*|\s+")
_SKY_RE: Final = re.compile(r"([CSL])([12])", re.IGNORECASE)
_SKY_LETTERS: Final = {Kind.CANDY: "C", Kind.SPIDER: "S", Kind.LEOPARD: "L"}
_KIND_BY_LETTER: Final = {letter: kind for kind, letter in _SKY_LETTERS.items()}
STAR_TEXT: Final = "*"
PILE_SEP: Final = " | "
_WEATHER_WORDS: Final = {
    "yes": True,
    "y": True,
    "true": True,
    "no": False,
    "n": False,
    "false": False,
}
WEATHER_CHOICES: Final = "answer yes (bet on good weather) or no; y, n, true and false work too"
"""What a weather declaration may be, as error messages say it."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_card(card: int) -> None:
    """Raise NotationError unless card is a rain card index 0..35."""
    if not _is_int(card) or not 0 <= card < N_RAIN:
        raise NotationError(f"card index must be an integer 0..{N_RAIN - 1}, got {card!r}")


def check_mask(mask: int) -> None:
    """Raise NotationError unless mask is a set of rain cards (an int 0..2**36-1)."""
    if not _is_int(mask) or not 0 <= mask <= ALL_CARDS:
        raise NotationError(f"card mask must be an integer 0..2**{N_RAIN}-1, got {mask!r}")


def card_index(colour: int, rank: int) -> int:
    """The index of the card of that colour (0 blue, 1 red, 2 green) and rank (1..12)."""
    if not _is_int(colour) or not 0 <= colour < N_COLOURS:
        raise NotationError(f"colour must be 0 (blue), 1 (red) or 2 (green), got {colour!r}")
    if not _is_int(rank) or not 1 <= rank <= MAX_RANK:
        raise NotationError(f"rank must be an integer 1..{MAX_RANK}, got {rank!r}")
    return colour * MAX_RANK + rank - 1


def card_colour(card: int) -> int:
    """The colour of a card: 0 blue, 1 red, 2 green."""
    check_card(card)
    return card // MAX_RANK


def card_rank(card: int) -> int:
    """The rank of a card, 1..12."""
    check_card(card)
    return card % MAX_RANK + 1


def card_str(card: int) -> str:
    """Canonical text of a card: ``"B7"``."""
    return f"{COLOUR_LETTERS[card_colour(card)]}{card_rank(card)}"


def _card_or_none(text: str) -> int | None:
    match = _CARD_RE.fullmatch(text)
    if match is None:
        return None
    return COLOUR_LETTERS.index(match[1].upper()) * MAX_RANK + int(match[2]) - 1


def parse_card(text: str) -> int:
    """The index of a card written ``B7``, ``r12`` or `` G3 ``; NotationError otherwise."""
    card = _card_or_none(text.strip()) if isinstance(text, str) else None
    if card is None:
        raise NotationError(
            f"bad card {text!r}: expected a colour B, R or G and a rank 1..12, like 'B7'"
        )
    return card


def cards_of(mask: int) -> list[int]:
    """The cards of a mask, ascending."""
    check_mask(mask)
    return bits(mask)


def mask_of(cards: Iterable[int]) -> int:
    """The mask of some cards; a card given twice is an error."""
    mask = 0
    for card in cards:
        check_card(card)
        if mask >> card & 1:
            raise NotationError(f"card {card_str(card)} given twice")
        mask |= 1 << card
    return mask


def format_cards(mask: int) -> str:
    """Canonical text of a card set: ascending index, space-separated (``""`` if empty)."""
    return " ".join(card_str(card) for card in cards_of(mask))


def parse_cards(text: str) -> int:
    """The mask of cards separated by spaces and/or commas; blank text is the empty set."""
    if not isinstance(text, str):
        raise NotationError(f"cards must be text like 'B7 R2 G5', got {text!r}")
    stripped = text.strip()
    if not stripped:
        return 0
    mask = 0
    for token in _CARD_SEP_RE.split(stripped):
        card = _card_or_none(token)
        if card is None:
            raise NotationError(f"bad card {token!r} in {text!r}")
        if mask >> card & 1:
            raise NotationError(f"card {card_str(card)} given twice in {text!r}")
        mask |= 1 << card
    return mask


def check_piles(piles: Sequence[int], group_sizes: Sequence[int] | None = None) -> None:
    """Check piles are valid, disjoint masks (and, if group_sizes given, their count and sizes)."""
    if not piles:
        raise NotationError("an allocation needs at least one pile")
    seen = 0
    for pile in piles:
        check_mask(pile)
        if seen & pile:
            twice = seen & pile
            raise NotationError(
                f"card {card_str((twice & -twice).bit_length() - 1)} is in two piles"
            )
        seen |= pile
    if group_sizes is None:
        return
    if len(piles) != len(group_sizes):
        raise NotationError(f"expected {len(group_sizes)} piles, got {len(piles)}")
    for i, (pile, size) in enumerate(zip(piles, group_sizes, strict=True), start=1):
        if pile.bit_count() != size:
            raise NotationError(f"pile {i} must hold {size} cards, got {pile.bit_count()}")


def parse_piles(text: str, group_sizes: Sequence[int] | None = None) -> tuple[int, ...]:
    """Pile masks from ``"B7 R2 G5 | B1 R9 G9 | ..."``, checked by ``check_piles``."""
    if not isinstance(text, str):
        raise NotationError(f"piles must be text like 'B7 R2 G5 | B1 R9 G9', got {text!r}")
    piles = []
    for i, part in enumerate(text.split("|"), start=1):
        try:
            piles.append(parse_cards(part))
        except NotationError as e:
            raise NotationError(f"bad allocation {text!r}: pile {i}: {e}") from None
    try:
        check_piles(piles, group_sizes)
    except NotationError as e:
        raise NotationError(f"bad allocation {text!r}: {e}") from None
    return tuple(piles)


def split_difference(piles: Sequence[int], hand: int, hand_name: str = "your hand") -> str:
    """What keeps piles from being a split of hand, naming the cards: ``B9 is not in your
    hand, B4 is left out`` (stray cards first, then the hand's cards no pile holds, then
    a card given twice); ``""`` when the piles do split the hand."""
    union = twice = 0
    for pile in piles:
        twice |= union & pile
        union |= pile
    parts = []
    for mask, what in (
        (union & ~hand, f"not in {hand_name}"),
        (hand & ~union, "left out"),
        (twice, "in two piles"),
    ):
        if mask:
            verb = "is" if mask.bit_count() == 1 else "are"
            parts.append(f"{format_cards(mask)} {verb} {what}")
    return ", ".join(parts)


def format_piles(piles: Sequence[int]) -> str:
    """Canonical text of piles: each pile ascending, ``" | "`` between piles."""
    if not piles:
        raise NotationError("an allocation needs at least one pile")
    return PILE_SEP.join(format_cards(pile) for pile in piles)


def sky_str(card: SkyCard) -> str:
    """Canonical text of a sky card: ``C1``, ``C2``, ``S1``, ``S2``, ``L1``, ``L2``, ``*``."""
    if not isinstance(card, SkyCard):
        raise NotationError(f"not a sky card: {card!r}")
    if card.kind is Kind.STAR:
        return STAR_TEXT
    return f"{_SKY_LETTERS[card.kind]}{card.count}"


def parse_sky(text: str) -> SkyCard:
    """The sky card written ``C1`` .. ``L2`` (any case) or ``*``."""
    stripped = text.strip() if isinstance(text, str) else ""
    if stripped == STAR_TEXT:
        return SkyCard(Kind.STAR, 1)
    match = _SKY_RE.fullmatch(stripped)
    if match is None:
        raise NotationError(f"bad sky card {text!r}: expected C1, C2, S1, S2, L1, L2 or *")
    return SkyCard(_KIND_BY_LETTER[match[1].upper()], int(match[2]))


def format_sky_cards(cards: Iterable[SkyCard]) -> str:
    """Sky cards in the given order, space-separated: ``"C1 S2 *"``."""
    return " ".join(sky_str(card) for card in cards)


def parse_sky_cards(text: str) -> tuple[SkyCard, ...]:
    """Sky cards from space-separated text, order kept; blank text is no cards."""
    if not isinstance(text, str):
        raise NotationError(f"sky cards must be text like 'C1 S2 *', got {text!r}")
    return tuple(parse_sky(token) for token in text.split())


def parse_weather(text: str) -> bool:
    """A good weather declaration: yes/y/true or no/n/false, any case."""
    value = _WEATHER_WORDS.get(text.strip().lower()) if isinstance(text, str) else None
    if value is None:
        raise NotationError(f"bad weather declaration {text!r}: {WEATHER_CHOICES}")
    return value


def weather_str(good_weather: bool) -> str:
    """Canonical text of a declaration: ``"yes"`` or ``"no"``."""
    if not isinstance(good_weather, bool):
        raise NotationError(f"a weather declaration must be True or False, got {good_weather!r}")
    return "yes" if good_weather else "no"
