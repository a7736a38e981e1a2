"""The Candy Lab game facade: a game under way, its history, and what each seat may see.

A `Game` owns one `State` (the whole truth, hidden cards included), the moves played, and
the events each seat saw. `Game.observation(seat)` is everything that seat may know and
nothing more (docs/candy-lab-rules.md CL-29 to CL-31): its own hand; the sizes of the
other hands, of the third hand, the draw pile and the box; everything on the table (belt,
bars, face-up cards, every played stack, the Golden Sugar); and its own view of the
history, where a card only others saw reads ``HIDDEN``.

A game replays exactly from its rules, seed and moves (`Game.replay`): chance is drawn
from the state's seeded generator.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, NamedTuple

from csl_ai.candylab import core
from csl_ai.candylab.moves import (
    DRAW,
    EFFECT,
    FACE_DOWN,
    NONE,
    PLAY,
    arg_a,
    arg_b,
    kind,
    move_text,
)
from csl_ai.candylab.catalogue import Effect
from csl_ai.candylab.rules import CandyLabRules
from csl_ai.candylab.state import END_NAMES, PHASE_NAMES, State, deal
from csl_ai.errors import IllegalMoveError, short_repr
from csl_ai.seeds import fresh_seed

HIDDEN: Final = -1
"""A card in an event that the viewing seat did not see."""


class Event(NamedTuple):
    """One move as a seat saw it."""

    actor: int
    """The seat that moved."""
    move: int
    """The packed move (always public: everyone sees which action and which target)."""
    taken: int
    """The card the move moved out of sight or into a hand, if the viewer saw it, else
    HIDDEN: a card drawn (face down: the drawer only; face up: everyone), a card
    discarded from a hand (its owner only) or from a stack (everyone), the card an
    empty-handed swap left to its target (the target only); -1 when there is none."""
    turned_up: int
    """The card turned face up to refill a slot (everyone sees it), else -1."""


@dataclass(frozen=True, slots=True)
class Observation:
    """What one seat may know at one moment (perfect recall of what it saw)."""

    rules: CandyLabRules
    seat: int
    current: int
    """The seat to decide; -1 once the game is over."""
    phase: int
    """The decision the current seat faces (``csl_ai.candylab.state`` phases)."""
    turn: int
    end: int
    """Why the game ended (``state.NOT_OVER`` while it goes on)."""
    hand: int
    """This seat's hand, a mask of order ids."""
    hand_sizes: tuple[int, ...]
    """Cards in each seat's hand."""
    third_hand_size: int
    pile_size: int
    """Face-down cards left."""
    face_up: tuple[int, ...]
    """The 3 face-up slots (order id or -1)."""
    belt: tuple[int, ...]
    """Bar ids on the belt, left to right."""
    bars: tuple[int, ...]
    """Each seat's bars (mask of bar ids)."""
    stacks: tuple[tuple[int, ...], ...]
    """Each seat's played orders, oldest first (every one was seen face up, CL-30)."""
    box_size: int
    """Order cards in the game box."""
    box_seen: int
    """The box cards this seat saw go there (mask)."""
    pending: int
    """Retrieved bars whose effects are still to apply (mask)."""
    returned: int
    draws_left: int
    golden: int
    """The Golden Sugar's holder, or -1."""
    scores: tuple[int, ...]
    """Each seat's points now (everything that scores is on the table)."""
    legal_moves: tuple[int, ...]
    """This seat's legal moves when it is the one to decide, else empty."""
    events: tuple[Event, ...]
    """The history as this seat saw it."""
    known: tuple[int, ...] = ()
    """Per hand (seats 0..n-1, then entry n the third hand): the cards this seat knows to
    be in it (mask; 0 for its own entry). Learnt only from what the seat saw: a card
    another seat drew face up, the hand it gave away in a swap, the hand a swap took from
    it; forgotten when the hand loses a card the seat did not see (a random discard, the
    card kept in an empty-handed swap). Empty when not tracked (``observe`` without it)."""

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def is_over(self) -> bool:
        return self.current == -1

    def unseen(self) -> int:
        """Order cards this seat cannot see (mask): in other hands, the third hand, the
        draw pile or the box unseen; a search deals these, less the ones ``known`` places
        in a hand, to sample a world."""
        known = self.hand | self.box_seen
        for c in self.face_up:
            if c >= 0:
                known |= 1 << c
        for stack in self.stacks:
            for c in stack:
                known |= 1 << c
        return ((1 << len(self.rules.catalogue.orders)) - 1) & ~known


def observe(
    rules: CandyLabRules,
    state: State,
    seat: int,
    events: Iterable[Event],
    box_seen: int,
    known: tuple[int, ...] = (),
) -> Observation:
    """The observation of seat, from the public and own parts of state only (box_seen:
    the cards seat saw discarded from its own hand; known: what it knows of each hand)."""
    n = state.players
    current = core.current_player(state)
    return Observation(
        rules=rules,
        seat=seat,
        current=current,
        phase=state.phase,
        turn=state.turn,
        end=state.end,
        hand=state.hands[seat],
        hand_sizes=tuple(state.hands[p].bit_count() for p in range(n)),
        third_hand_size=state.hands[n].bit_count(),
        pile_size=len(state.pile),
        face_up=tuple(state.face_up),
        belt=tuple(state.belt),
        bars=tuple(state.bars[:n]),
        stacks=tuple(tuple(stack) for stack in state.stacks),
        box_size=state.box.bit_count(),
        box_seen=box_seen | state.box_public,
        pending=state.pending,
        returned=state.returned,
        draws_left=state.draws_left,
        golden=state.golden,
        scores=tuple(core.scores(state)),
        legal_moves=tuple(core.legal_moves(state)) if current == seat else (),
        events=tuple(events),
        known=tuple(known),
    )


class Game:
    """A game under way: rules, seed, the full state, the moves and each seat's events."""

    def __init__(
        self,
        rules: CandyLabRules | None = None,
        *,
        seed: int | None = None,
        state: State | None = None,
    ) -> None:
        """A new game dealt from seed (a fresh one if None), or one going on from a given
        state (a custom position: it cannot be replayed from a seed)."""
        self.rules = rules if rules is not None else CandyLabRules()
        if state is None:
            self.seed: int | None = seed if seed is not None else fresh_seed()
            self.state = deal(self.rules, self.seed)
        else:
            if state.cat is not self.rules.catalogue or state.players != self.rules.players:
                raise IllegalMoveError("state: made for other rules than the game's")
            self.seed = seed
            self.state = state
        self.moves: list[int] = []
        self.log: list[tuple[Event, int]] = []
        """Every event in full, with the mask of seats that saw its ``taken`` card."""
        self._views: list[list[Event]] = [[] for _ in range(self.rules.players)]
        self._box_seen: list[int] = [0] * self.rules.players
        n = self.rules.players
        self._known: list[list[int]] = [[0] * (n + 1) for _ in range(n)]
        """Per seat, per hand (entry n: the third hand): the cards it knows to be there."""

    # --- state -----------------------------------------------------------------------
    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def current(self) -> int:
        """The seat to decide, -1 once over."""
        return core.current_player(self.state)

    @property
    def is_over(self) -> bool:
        return core.is_over(self.state)

    @property
    def phase_name(self) -> str:
        return PHASE_NAMES[self.state.phase]

    @property
    def end_name(self) -> str:
        return END_NAMES[self.state.end]

    def legal_moves(self) -> list[int]:
        return core.legal_moves(self.state)

    def scores(self) -> list[int]:
        return core.scores(self.state)

    def winners(self) -> list[int]:
        return core.winners(self.state)

    def move_text(self, move: int) -> str:
        return move_text(move, self.rules.catalogue)

    # --- playing -----------------------------------------------------------------------
    def play(self, move: int) -> int:
        """Play a legal move for the current seat; IllegalMoveError otherwise. Returns the
        card the move showed (see ``core.apply``)."""
        if isinstance(move, bool) or not isinstance(move, int):
            raise IllegalMoveError(f"a move is a packed int, got {short_repr(move)}")
        s = self.state
        if core.is_over(s):
            raise IllegalMoveError(f"{self._text(move)}: the game is over")
        if not core.is_legal(s, move):
            raise IllegalMoveError(
                f"{self._text(move)}: not legal for seat {s.current} in phase "
                f"{PHASE_NAMES[s.phase]}"
            )
        actor = s.current
        k = kind(move)
        source = arg_a(move) if k == DRAW else NONE
        target = arg_b(move)
        symbol = s.cat.bar_effect[arg_a(move)] if k == EFFECT else 0
        if k == EFFECT and symbol == Effect.DRAW and target != NONE:
            source = target
        taken_up = s.face_up[source] if source < len(s.face_up) else -1
        before = s.hands[:]
        outcome = core.apply(s, move)
        self._learn(actor, move, symbol, target, taken_up, before, outcome)
        everyone = (1 << self.players) - 1
        taken, turned_up, seen = -1, -1, everyone
        if source == FACE_DOWN:
            taken, seen = outcome, 1 << actor
        elif source != NONE:
            taken, turned_up = taken_up, outcome
        elif k == EFFECT and target != NONE:
            if symbol == Effect.DISCARD_HAND:
                taken, seen = outcome, 1 << target
                self._box_seen[target] |= 1 << outcome
            elif symbol == Effect.DISCARD_PLAYED:
                taken = outcome
            elif symbol == Effect.SWAP_HANDS and outcome >= 0:
                taken, seen = outcome, 1 << target
        event = Event(actor, move, taken, turned_up)
        self.moves.append(move)
        self.log.append((event, seen))
        hidden = event._replace(taken=HIDDEN)
        for p in range(self.players):
            self._views[p].append(event if seen >> p & 1 or taken < 0 else hidden)
        return outcome

    def _learn(
        self,
        actor: int,
        move: int,
        symbol: int,
        target: int,
        taken_up: int,
        before: list[int],
        outcome: int,
    ) -> None:
        """Update what each seat knows of the hands after move, from what it saw only:
        the move, the cards shown to it, the public hand sizes and its own hand."""
        n = self.players
        k = kind(move)
        known = self._known
        if k == PLAY:
            gone = ~(1 << arg_a(move))
            for v in range(n):
                known[v][actor] &= gone
        elif taken_up >= 0:  # a face-up card into the actor's hand, in view of all
            for v in range(n):
                if v != actor:
                    known[v][actor] |= 1 << taken_up
        elif k == EFFECT and target != NONE and symbol == Effect.DISCARD_HAND:
            for v in range(n):  # a card no one else saw left the target's hand
                if v != target:
                    known[v][target] = 0
        elif k == EFFECT and target != NONE and symbol == Effect.SWAP_HANDS:
            whole = bool(before[actor]) or target == n
            for v in range(n):
                kv = known[v]
                if whole:
                    kv[actor], kv[target] = kv[target], kv[actor]
                    if v == actor:
                        kv[target] = before[actor]
                    elif v == target:
                        kv[actor] = before[target]
                elif v == actor:  # took all but one: the one known card not received
                    kv[target] &= ~self.state.hands[actor]
                elif v == target:
                    kv[actor] = before[target] & ~(1 << outcome)
                else:
                    kv[actor] = kv[target] = 0
                kv[v] = 0

    def _text(self, move: object) -> str:
        try:
            return repr(move_text(int(move), self.rules.catalogue))  # type: ignore[call-overload]
        except (ValueError, TypeError, IndexError):
            return short_repr(move)

    def observation(self, seat: int) -> Observation:
        """What seat may see now."""
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < self.players:
            raise IllegalMoveError(f"seat: must be 0..{self.players - 1}, got {short_repr(seat)}")
        return observe(
            self.rules,
            self.state,
            seat,
            self._views[seat],
            self._box_seen[seat],
            tuple(self._known[seat]),
        )

    @classmethod
    def replay(cls, rules: CandyLabRules, seed: int, moves: Iterable[int]) -> Game:
        """The game dealt from seed with moves played in turn (IllegalMoveError names the
        first illegal one by its index)."""
        game = cls(rules, seed=seed)
        for i, move in enumerate(moves):
            try:
                game.play(move)
            except IllegalMoveError as e:
                raise IllegalMoveError(f"moves[{i}]: {e}") from None
        return game

    def summary(self) -> str:
        """One line: the end, the scores and the winners."""
        if not self.is_over:
            return f"turn {self.state.turn}, seat {self.current} to play ({self.phase_name})"
        scores = ", ".join(f"seat {p}: {v}" for p, v in enumerate(self.scores()))
        win = " and ".join(f"seat {p}" for p in self.winners())
        return f"over ({self.end_name}): {scores}; won by {win}"
