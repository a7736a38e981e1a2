"""Candy Lab's side of the search: the worlds a seat cannot tell apart, and move keys.

- `world_template`: one seat's `Observation` as what the compiled search deals from: a
  `State` holding the public table as it is, the seat's own hand and the cards it knows
  to be in a hand (``Observation.known``), and the cards it cannot place (the pool), to
  be dealt at random into the hidden places with their public sizes (the other hands,
  the third hand, the face-down pile in a random order, the box's unseen part);
- `sample_worlds`: full states drawn from that template by the compiled core
  (``csl_ai.candylab._core``), the same draws the search makes;
- `move_key`: a move as every seat sees it (a play names its order by its combination).

The worlds treat every unseen card alike: a seat's past choices (what it did not play)
say nothing of its hand here. A hand that lost a card no one saw (a random discard) is
forgotten whole (``Observation.known``): the cards known there before are dealt again
among all the hidden places.
"""

from __future__ import annotations

from typing import NamedTuple

from csl_ai.bits import bits
from csl_ai.candylab import _core
from csl_ai.candylab.catalogue import Catalogue
from csl_ai.candylab.game import Observation
from csl_ai.candylab.moves import PLAY
from csl_ai.candylab.state import MASK64, State
from csl_ai.errors import InvalidPositionError


_FIRST: dict[int, tuple[Catalogue, tuple[int, ...]]] = {}


def _first_of(cat: Catalogue) -> tuple[int, ...]:
    """For each order id, the first id of its combination (cached per catalogue)."""
    got = _FIRST.get(id(cat))
    if got is None or got[0] is not cat:
        first: dict[int, int] = {}
        for i, t in enumerate(cat.order_type):
            first.setdefault(t, i)
        got = _FIRST[id(cat)] = (cat, tuple(first[t] for t in cat.order_type))
    return got[1]


def move_key(cat: Catalogue, move: int) -> int:
    """The move as every seat sees it: a play names its order by the first id of its
    combination (the ids of a hidden hand differ between worlds); every other move is
    public as it is. The compiled search keys its tree the same way."""
    if move & 15 == PLAY:
        order = (move >> 4) & 255
        return move & ~(255 << 4) | _first_of(cat)[order] << 4
    return move


class WorldTemplate(NamedTuple):
    """What a seat can place, and the cards it cannot, for dealing worlds."""

    base: State
    """The table, the seat's hand and the cards it knows in other hands; empty pile; the
    box holds the cards the seat saw go there."""
    pool: list[int]
    """The cards the seat cannot place, ascending."""
    places: list[int]
    """The hidden hands (hand indices: seats, then ``players`` for the third hand)."""
    needs: list[int]
    """Cards dealt to each hidden hand."""
    pile_size: int
    """Cards dealt to the face-down pile after the hands; the rest go to the box."""


def _hidden_sizes(obs: Observation) -> tuple[list[int], int]:
    """The hidden places' unknown card counts and the unseen box size."""
    n = obs.players
    known = obs.known or (0,) * (n + 1)
    places = []
    for p in range(n + 1):
        if p == obs.seat:
            continue
        size = obs.third_hand_size if p == n else obs.hand_sizes[p]
        places.append(size - known[p].bit_count())
    return places, obs.box_size - obs.box_seen.bit_count()


def world_template(obs: Observation) -> WorldTemplate:
    """The template of the worlds consistent with obs (checks the counts)."""
    n = obs.players
    known = obs.known or (0,) * (n + 1)
    placed = 0
    for p in range(n + 1):
        placed |= known[p]
    pool = bits(obs.unseen() & ~placed)
    others = [p for p in range(n + 1) if p != obs.seat]
    needs, box_unseen = _hidden_sizes(obs)
    if min(needs, default=0) < 0 or sum(needs) + obs.pile_size + box_unseen != len(pool):
        raise InvalidPositionError(
            f"observation of seat {obs.seat}: {len(pool)} unseen cards for "
            f"{sum(needs)} in hands, {obs.pile_size} in the pile and {box_unseen} in the box"
        )
    hands = [known[p] for p in range(n + 1)]
    hands[obs.seat] = obs.hand
    s = State.__new__(State)
    s.cat = obs.rules.catalogue
    s.players = n
    s.belt = list(obs.belt)
    s.bars = list(obs.bars)
    s.hands = hands
    s.pile = []
    s.face_up = list(obs.face_up)
    s.stacks = [list(st) for st in obs.stacks]
    s.box = obs.box_seen
    s.box_public = obs.box_seen
    s.current = obs.current
    s.phase = obs.phase
    s.pending = obs.pending
    s.returned = obs.returned
    s.draws_left = obs.draws_left
    s.golden = obs.golden
    s.end = obs.end
    s.turn = obs.turn
    s.rng = 0
    return WorldTemplate(s, pool, others, needs, obs.pile_size)


def sample_worlds(obs: Observation, n: int, seed: int) -> list[State]:
    """n worlds consistent with obs, drawn by the compiled core from seed."""
    t = world_template(obs)
    return _core.sample_worlds(t.base, t.pool, t.places, t.needs, t.pile_size, n, seed & MASK64)


__all__ = ["WorldTemplate", "move_key", "sample_worlds", "world_template"]
