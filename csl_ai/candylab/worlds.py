"""Candy Lab's side of the search: the game interface, the worlds, the playout policies.

- `CANDY_LAB`: the rules core behind the search's `GameInterface` (``core``'s functions,
  a move key that names a played order by its combination, the state's rng reseeded);
- `sample_world`: a full `State` consistent with one seat's `Observation`: the public
  table as it is, the seat's own hand, the cards it knows to be in a hand
  (``Observation.known``) left there, and every other card it cannot see dealt at
  random into the hidden places with their public sizes (the other hands, the third
  hand, the face-down pile in a random order, the box's unseen part);
- `playout_policy`: uniformly random moves, or the heuristic agent with some epsilon of
  random moves, acting on a cheap view of the playout state.

The worlds treat every unseen card alike: a seat's past choices (what it did not play)
say nothing of its hand here. A hand that lost a card no one saw (a random discard) is
forgotten whole (``Observation.known``): the cards known there before are dealt again
among all the hidden places.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable

from csl_ai.bits import bits
from csl_ai.candylab import core
from csl_ai.candylab.agents import HeuristicAgent
from csl_ai.candylab.catalogue import Catalogue
from csl_ai.candylab.game import Observation
from csl_ai.candylab.moves import PLAY
from csl_ai.candylab.rules import CandyLabRules
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


class CandyLabInterface:
    """The Candy Lab rules core as the search's game interface."""

    current_player = staticmethod(core.current_player)
    legal_moves = staticmethod(core.legal_moves)
    apply = staticmethod(core.apply)
    is_over = staticmethod(core.is_over)
    returns = staticmethod(core.returns)

    @staticmethod
    def move_key(state: State, move: int) -> Hashable:
        """A play names its order by the first id of its combination (the ids of a hidden
        hand differ between worlds); every other move is public as it is."""
        if move & 15 == PLAY:
            order = (move >> 4) & 255
            return move & ~(255 << 4) | _first_of(state.cat)[order] << 4
        return move

    @staticmethod
    def reseed(state: State, seed: int) -> None:
        state.rng = seed & MASK64


CANDY_LAB = CandyLabInterface()
"""The game interface the search plays Candy Lab through."""


def _hidden_sizes(obs: Observation) -> tuple[list[int], int]:
    """The hidden places (hand index, cards still unknown there) and the unseen box size."""
    n = obs.players
    known = obs.known or (0,) * (n + 1)
    places = []
    for p in range(n + 1):
        if p == obs.seat:
            continue
        size = obs.third_hand_size if p == n else obs.hand_sizes[p]
        places.append(size - known[p].bit_count())
    return places, obs.box_size - obs.box_seen.bit_count()


def world_sampler(obs: Observation) -> Callable[[random.Random], State]:
    """A function drawing worlds consistent with obs (checks the counts once)."""
    n = obs.players
    cat = obs.rules.catalogue
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
    belt = list(obs.belt)
    bars = list(obs.bars)
    face_up = list(obs.face_up)
    stacks = [list(s) for s in obs.stacks]
    base_hands = [known[p] for p in range(n + 1)]
    base_hands[obs.seat] = obs.hand
    pile_size = obs.pile_size

    def sample(rng: random.Random) -> State:
        cards = pool[:]
        rng.shuffle(cards)
        hands = base_hands[:]
        i = 0
        for p, need in zip(others, needs):
            for c in cards[i : i + need]:
                hands[p] |= 1 << c
            i += need
        s = State.__new__(State)
        s.cat = cat
        s.players = n
        s.belt = belt[:]
        s.bars = bars[:]
        s.hands = hands
        s.pile = cards[i : i + pile_size]
        i += pile_size
        box = obs.box_seen
        for c in cards[i:]:
            box |= 1 << c
        s.face_up = face_up[:]
        s.stacks = [st[:] for st in stacks]
        s.box = box
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
        return s

    return sample


def sample_world(obs: Observation, rng: random.Random) -> State:
    """One world consistent with obs."""
    return world_sampler(obs)(rng)


class StateView:
    """The fields of an `Observation` the heuristic agent reads, taken from a full state
    for its current seat (a playout's world: no history, no copies)."""

    __slots__ = ("_s", "seat", "rules", "legal_moves", "_scores")

    def __init__(self, s: State, rules: CandyLabRules, moves: list[int]) -> None:
        self._s = s
        self.seat = s.current
        self.rules = rules
        self.legal_moves = moves
        self._scores: list[int] | None = None

    players = property(lambda self: self._s.players)
    phase = property(lambda self: self._s.phase)
    hand = property(lambda self: self._s.hands[self._s.current])
    belt = property(lambda self: self._s.belt)
    bars = property(lambda self: self._s.bars)
    stacks = property(lambda self: self._s.stacks)
    face_up = property(lambda self: self._s.face_up)
    draws_left = property(lambda self: self._s.draws_left)
    hand_sizes = property(lambda self: [h.bit_count() for h in self._s.hands[: self._s.players]])
    third_hand_size = property(lambda self: self._s.hands[self._s.players].bit_count())

    @property
    def scores(self) -> list[int]:
        if self._scores is None:
            self._scores = core.scores(self._s)
        return self._scores


class _RulesView:
    """A stand-in for CandyLabRules with only the catalogue (what the heuristic reads)."""

    __slots__ = ("catalogue",)

    def __init__(self, catalogue: object) -> None:
        self.catalogue = catalogue


def heuristic_prior() -> Callable[[State, list[int]], int]:
    """The heuristic agent's move for the current seat of a state (the search's prior)."""
    agent = HeuristicAgent()
    views: dict[int, _RulesView] = {}

    def prior(s: State, moves: list[int]) -> int:
        rv = views.get(id(s.cat))
        if rv is None:
            rv = views[id(s.cat)] = _RulesView(s.cat)
        return agent.act(StateView(s, rv, moves))  # type: ignore[arg-type]

    return prior


def playout_policy(kind: str, epsilon: float) -> Callable[[State, list[int], random.Random], int]:
    """The playout policy: "random", or "heuristic" (random with chance epsilon)."""
    if kind == "random":
        return lambda s, moves, rng: moves[rng.randrange(len(moves))]
    agent = HeuristicAgent()
    rules_views: dict[int, _RulesView] = {}

    def heuristic(s: State, moves: list[int], rng: random.Random) -> int:
        if len(moves) == 1:
            return moves[0]
        if rng.random() < epsilon:
            return moves[rng.randrange(len(moves))]
        rv = rules_views.get(id(s.cat))
        if rv is None:
            rv = rules_views[id(s.cat)] = _RulesView(s.cat)
        return agent.act(StateView(s, rv, moves))  # type: ignore[arg-type]

    return heuristic


__all__ = [
    "CANDY_LAB",
    "CandyLabInterface",
    "StateView",
    "heuristic_prior",
    "playout_policy",
    "sample_world",
    "world_sampler",
]
