"""Masks of small ids (cards, bars, order cards) and back, unchecked: the one loop both games'
hot Python paths use. `csl_ai.notation.cards_of` and `mask_of` add the card checks."""

from __future__ import annotations

from collections.abc import Iterable


def bits(mask: int) -> list[int]:
    """The ids in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def mask_of(ids: Iterable[int]) -> int:
    """The mask holding ids."""
    m = 0
    for i in ids:
        m |= 1 << i
    return m
