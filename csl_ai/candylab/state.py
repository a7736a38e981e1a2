"""The compact Candy Lab state: flat ints, bitmasks and short lists, and the deal.

Every field is an int, a list of ints or a list of short int lists, so a C port is a
struct of fixed arrays (noted beside each field). Order cards and candy bars are ids
(``csl_ai.candylab.catalogue``); a set of them is a bitmask (42 and 27 bits).

Chance (the shuffles of the setup, the random card of ``discard_hand``, the card kept in
a swap by an empty-handed player) draws on ``State.rng``, a splitmix64 generator whose
64-bit state is one int of the State: a game replays exactly from its seed and its
moves, and a copied state draws the same outcomes as its original.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from csl_ai.bits import mask_of
from csl_ai.candylab.catalogue import Catalogue
from csl_ai.candylab.rules import FACE_UP, CandyLabRules
from csl_ai.errors import InvalidPositionError

MASK64: Final = (1 << 64) - 1

# phases: who decides what (the current player decides every one)
MAIN: Final = 0
"""Start of a turn: action A (PLAY), B (first GIVE_BACK) or C (DRAW)."""
EFFECTS: Final = 1
"""After a PLAY: apply the retrieved bars' effects, one EFFECT move each."""
RETURNING: Final = 2
"""Action B under way: another GIVE_BACK (up to 3 bars) or STOP."""
DRAWING: Final = 3
"""Action B's draws: one DRAW move per card still to draw."""
OVER: Final = 4
PHASE_NAMES: Final = ("main", "effects", "returning", "drawing", "over")

# why the game ended
NOT_OVER: Final = 0
LAST_BAR: Final = 1
"""A player retrieved the last bar: Golden Sugar to them (End of Game)."""
LAST_CARD: Final = 2
"""The last face-down card left the draw pile: no Golden Sugar (End of Game, CL-25)."""
END_NAMES: Final = ("not over", "last bar", "last card")


def splitmix(x: int) -> tuple[int, int]:
    """One step of splitmix64: (next state, 64-bit output)."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return x, z ^ (z >> 31)




class State:
    """One Candy Lab position, complete (hidden cards included): what the rules core reads
    and writes. Mutable; ``copy`` is cheap. Seats are 0..players-1 clockwise."""

    __slots__ = (
        "cat",
        "players",
        "belt",
        "bars",
        "hands",
        "pile",
        "face_up",
        "stacks",
        "box",
        "box_public",
        "current",
        "phase",
        "pending",
        "returned",
        "draws_left",
        "golden",
        "end",
        "turn",
        "rng",
    )

    cat: Catalogue
    """The box (shared, immutable): the flat tables the core reads."""
    players: int
    belt: list[int]
    """Bar ids on the conveyor belt, left to right (C: int8[27] + length)."""
    bars: list[int]
    """Each seat's bars, a mask of bar ids (C: uint32[4])."""
    hands: list[int]
    """Each seat's hand, a mask of order ids; entry ``players`` is the third hand, empty
    unless 2 players (C: uint64[5])."""
    pile: list[int]
    """The face-down draw pile, order ids, top card last (C: int8[42] + length)."""
    face_up: list[int]
    """The 3 face-up slots: an order id, or -1 when empty (C: int8[3])."""
    stacks: list[list[int]]
    """Each seat's played orders, oldest first; the last is the visible one (C: int8[4][42]
    + lengths)."""
    box: int
    """Orders discarded to the game box (mask)."""
    box_public: int
    """The part of ``box`` everyone saw go there (``discard_played``)."""
    current: int
    """The seat deciding now."""
    phase: int
    pending: int
    """EFFECTS: mask of the retrieved bars whose effect is still to apply."""
    returned: int
    """RETURNING: bars returned by this action B so far."""
    draws_left: int
    """Action B: cards still to draw (the values of the bars returned)."""
    golden: int
    """The seat holding the Golden Sugar card, or -1."""
    end: int
    """Why the game ended (NOT_OVER while it goes on)."""
    turn: int
    """Turns begun so far (0 for the first)."""
    rng: int
    """The splitmix64 state of the chance draws."""

    def copy(self) -> State:
        """An independent copy (the catalogue is shared)."""
        s = State.__new__(State)
        s.cat = self.cat
        s.players = self.players
        s.belt = self.belt[:]
        s.bars = self.bars[:]
        s.hands = self.hands[:]
        s.pile = self.pile[:]
        s.face_up = self.face_up[:]
        s.stacks = [stack[:] for stack in self.stacks]
        s.box = self.box
        s.box_public = self.box_public
        s.current = self.current
        s.phase = self.phase
        s.pending = self.pending
        s.returned = self.returned
        s.draws_left = self.draws_left
        s.golden = self.golden
        s.end = self.end
        s.turn = self.turn
        s.rng = self.rng
        return s

    def below(self, n: int) -> int:
        """A uniform chance draw in 0..n-1 (n >= 1), advancing ``rng``."""
        self.rng, z = splitmix(self.rng)
        return (z * n) >> 64

    def shuffle(self, items: list[int]) -> None:
        """Fisher-Yates shuffle of items in place, from ``rng``."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]

    def key(self) -> tuple[object, ...]:
        """Every field as one comparable value (tests compare states with it)."""
        return (
            self.players,
            tuple(self.belt),
            tuple(self.bars),
            tuple(self.hands),
            tuple(self.pile),
            tuple(self.face_up),
            tuple(map(tuple, self.stacks)),
            self.box,
            self.box_public,
            self.current,
            self.phase,
            self.pending,
            self.returned,
            self.draws_left,
            self.golden,
            self.end,
            self.turn,
            self.rng,
        )


def _blank(rules: CandyLabRules, rng: int) -> State:
    s = State.__new__(State)
    n = rules.players
    s.cat = rules.catalogue
    s.players = n
    s.belt = []
    s.bars = [0] * n
    s.hands = [0] * (n + 1)
    s.pile = []
    s.face_up = [-1] * FACE_UP
    s.stacks = [[] for _ in range(n)]
    s.box = 0
    s.box_public = 0
    s.current = rules.first_seat
    s.phase = MAIN
    s.pending = 0
    s.returned = 0
    s.draws_left = 0
    s.golden = -1
    s.end = NOT_OVER
    s.turn = 0
    s.rng = rng & MASK64
    return s


def deal(rules: CandyLabRules, seed: int) -> State:
    """The set-up of a new game from a seed: the belt shuffled, the orders shuffled and
    dealt (hands, then with 2 players the third hand), the top 3 turned face up.

    The same rules and seed always give the same state.
    """
    s = _blank(rules, splitmix(seed & MASK64)[1])
    cat = rules.catalogue
    belt = list(range(len(cat.bars)))
    s.shuffle(belt)
    s.belt = belt
    deck = list(range(len(cat.orders)))
    s.shuffle(deck)
    h = rules.hand_size
    for seat in range(s.players):
        s.hands[seat] = mask_of(deck[seat * h : (seat + 1) * h])
    dealt = s.players * h
    third = rules.third_hand_size
    s.hands[s.players] = mask_of(deck[dealt : dealt + third])
    s.pile = deck[dealt + third :]
    for slot in range(FACE_UP):
        s.face_up[slot] = s.pile.pop()
    return s


def custom_state(
    rules: CandyLabRules,
    *,
    belt: Sequence[int],
    hands: Sequence[Iterable[int]],
    pile: Sequence[int],
    face_up: Sequence[int],
    bars: Sequence[Iterable[int]] | None = None,
    stacks: Sequence[Sequence[int]] | None = None,
    third_hand: Iterable[int] = (),
    box: Iterable[int] = (),
    box_public: Iterable[int] = (),
    current: int | None = None,
    golden: int = -1,
    seed: int = 0,
) -> State:
    """A state at the start of ``current``'s turn, from its parts (ids; ``pile`` top
    last; ``face_up`` 3 slots, -1 for empty). Every order and every bar of the catalogue
    must be somewhere exactly once; InvalidPositionError names the first fault."""
    n = rules.players
    cat = rules.catalogue
    s = _blank(rules, seed)
    if current is not None:
        if not 0 <= current < n:
            raise InvalidPositionError(f"current: must be a seat 0..{n - 1}, got {current!r}")
        s.current = current
    if len(hands) != n:
        raise InvalidPositionError(f"hands: one per seat ({n}), got {len(hands)}")
    if len(face_up) != FACE_UP:
        raise InvalidPositionError(f"face_up: {FACE_UP} slots, got {len(face_up)}")
    if list(third_hand) and n != 2:
        raise InvalidPositionError("third_hand: only with 2 players")
    bars_list = [list(b) for b in bars] if bars is not None else [[] for _ in range(n)]
    stacks_list = [list(st) for st in stacks] if stacks is not None else [[] for _ in range(n)]
    if len(bars_list) != n or len(stacks_list) != n:
        raise InvalidPositionError(f"bars and stacks: one per seat ({n})")
    seen_orders: dict[int, str] = {}

    def order_at(i: int, where: str) -> None:
        if not 0 <= i < len(cat.orders):
            raise InvalidPositionError(f"{where}: no order id {i!r}")
        if i in seen_orders:
            raise InvalidPositionError(f"{where}: order {i} is also in {seen_orders[i]}")
        seen_orders[i] = where

    for seat, hand in enumerate(hands):
        hand_ids = list(hand)
        for i in hand_ids:
            order_at(i, f"hands[{seat}]")
        s.hands[seat] = mask_of(hand_ids)
    third_ids = list(third_hand)
    for i in third_ids:
        order_at(i, "third_hand")
    s.hands[n] = mask_of(third_ids)
    for i in pile:
        order_at(i, "pile")
    for i in face_up:
        if i != -1:
            order_at(i, "face_up")
    for seat, stack in enumerate(stacks_list):
        for i in stack:
            order_at(i, f"stacks[{seat}]")
    box_ids = list(box)
    public_ids = list(box_public)
    for i in box_ids + public_ids:
        order_at(i, "box")
    if len(seen_orders) != len(cat.orders):
        missing = sorted(set(range(len(cat.orders))) - set(seen_orders))
        raise InvalidPositionError(f"orders {missing} are nowhere")
    seen_bars: dict[int, str] = {}
    for where, ids in [("belt", list(belt))] + [
        (f"bars[{seat}]", ids) for seat, ids in enumerate(bars_list)
    ]:
        for i in ids:
            if not 0 <= i < len(cat.bars):
                raise InvalidPositionError(f"{where}: no bar id {i!r}")
            if i in seen_bars:
                raise InvalidPositionError(f"{where}: bar {i} is also in {seen_bars[i]}")
            seen_bars[i] = where
    if len(seen_bars) != len(cat.bars):
        missing = sorted(set(range(len(cat.bars))) - set(seen_bars))
        raise InvalidPositionError(f"bars {missing} are nowhere")
    if not belt:
        raise InvalidPositionError("belt: empty; the game would be over")
    if not pile:
        raise InvalidPositionError("pile: empty; the game would be over (CL-25)")
    s.belt = list(belt)
    s.bars = [mask_of(b) for b in bars_list]
    s.pile = list(pile)
    s.face_up = list(face_up)
    s.stacks = stacks_list
    s.box = mask_of(box_ids + public_ids)
    s.box_public = mask_of(public_ids)
    if not -1 <= golden < n:
        raise InvalidPositionError(f"golden: must be -1 or a seat 0..{n - 1}, got {golden!r}")
    s.golden = golden
    return s
