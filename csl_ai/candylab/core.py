"""The Candy Lab rules core: legal moves, applying a move, the end and the scores.

Plain typed Python over the flat ``State``, written so that a Cython port is line by line:
ints and masks, loops over short lists, no object made per move (moves are packed ints,
``csl_ai.candylab.moves``). Each rule cites the rulebook or its ruling
(docs/candy-lab-rules.md, ``CL-n``).

Moves that would lead to the same future are generated once (CL-32): of two cards in hand
of the same kind only the lower id, of two bars of one kind only the lower id, of two
face-up cards of the same kind only the lower slot, of two pending effects with the same
symbol (and colour, for ``return_bar``) only the lower bar. ``apply`` accepts any move
that ``is_legal`` accepts, the equivalent ones included.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from csl_ai.bits import bits
from csl_ai.candylab.catalogue import WILD, Catalogue, Effect
from csl_ai.candylab.moves import (
    DRAW,
    EFFECT,
    FACE_DOWN,
    GIVE_BACK,
    LEFT,
    NONE,
    PLAY,
    RIGHT,
    STOP,
    arg_a,
    arg_b,
    arg_c,
)
from csl_ai.candylab.rules import FACE_UP, GOLDEN_SUGAR, MAX_RETURNED
from csl_ai.candylab.state import (
    DRAWING,
    EFFECTS,
    LAST_BAR,
    LAST_CARD,
    MAIN,
    OVER,
    RETURNING,
    State,
)

_DRAW: Final = int(Effect.DRAW)
_DISCARD_HAND: Final = int(Effect.DISCARD_HAND)
_RETURN_BAR: Final = int(Effect.RETURN_BAR)
_DISCARD_PLAYED: Final = int(Effect.DISCARD_PLAYED)
_SWAP_HANDS: Final = int(Effect.SWAP_HANDS)


# --- questions ---------------------------------------------------------------------------
def is_over(s: State) -> bool:
    """True once the game has ended."""
    return s.phase == OVER


def current_player(s: State) -> int:
    """The seat to decide, or -1 when the game is over (no chance player: chance is drawn
    inside ``apply``)."""
    return -1 if s.phase == OVER else s.current


def bar_points(s: State, seat: int) -> int:
    """Points of a seat's candy bars: the sum of their values."""
    value = s.cat.bar_value
    return sum(value[b] for b in bits(s.bars[seat]))


def order_points(s: State, seat: int) -> int:
    """Points of the orders a seat fulfilled and still has (discarded ones do not count)."""
    points = s.cat.order_points
    return sum(points[c] for c in s.stacks[seat])


def scores(s: State) -> list[int]:
    """Each seat's points now: bars + orders + Golden Sugar (End of Game)."""
    return [
        bar_points(s, p) + order_points(s, p) + (GOLDEN_SUGAR if s.golden == p else 0)
        for p in range(s.players)
    ]


def winners(s: State) -> list[int]:
    """The seats with the most points, ties broken by the most bar points; several seats
    share the title when those tie too (End of Game, CL-28)."""
    totals = scores(s)
    keys = [(totals[p], bar_points(s, p)) for p in range(s.players)]
    best = max(keys)
    return [p for p in range(s.players) if keys[p] == best]


def returns(s: State) -> list[float]:
    """Each seat's share of the win: 1/k for each of k winners, 0 for the others."""
    win = winners(s)
    return [1.0 / len(win) if p in win else 0.0 for p in range(s.players)]


def hand_size(s: State, seat: int) -> int:
    return s.hands[seat].bit_count()


# --- move generation -------------------------------------------------------------------
def _matches(pattern: tuple[int, ...], colours: list[int], start: int) -> bool:
    """Whether the run at start reads as pattern in either direction (CL-7, CL-8)."""
    k = len(pattern)
    forward = True
    for i in range(k):
        want = pattern[i]
        got = colours[start + i]
        if want != got and want != WILD and got != WILD:
            forward = False
            break
    if forward:
        return True
    for i in range(k):
        want = pattern[k - 1 - i]
        got = colours[start + i]
        if want != got and want != WILD and got != WILD:
            return False
    return True


def _starts(pattern: tuple[int, ...], colours: list[int], text: bytes | None) -> list[int]:
    """The starts where pattern reads on the belt's colours, ascending (CL-7, CL-8).

    ``text`` is the colours as bytes when the belt has no wild bar: a card without a
    wild position is then found by ``bytes.find`` in either reading, the same starts
    as ``_matches`` finds one by one."""
    if text is None or WILD in pattern:
        return [
            start
            for start in range(len(colours) - len(pattern) + 1)
            if _matches(pattern, colours, start)
        ]
    forward = bytes(pattern)
    found = []
    i = text.find(forward)
    while i >= 0:
        found.append(i)
        i = text.find(forward, i + 1)
    backward = forward[::-1]
    if backward != forward:
        i = text.find(backward)
        if i >= 0:
            while i >= 0:
                found.append(i)
                i = text.find(backward, i + 1)
            found = sorted(set(found))
    return found


def _belt_text(colours: list[int]) -> bytes | None:
    """The belt's colours as bytes, or None when a wild bar is on it."""
    return None if WILD in colours else bytes(colours)


def matching_starts(cat: Catalogue, order: int, belt: Sequence[int]) -> list[int]:
    """The belt positions where a run for order starts (reads only the belt: an agent may
    call it on its observation)."""
    colour = cat.bar_colour
    colours = [colour[b] for b in belt]
    return _starts(cat.order_pattern[order], colours, _belt_text(colours))


def play_moves(s: State, seat: int, out: list[int]) -> None:
    """Append every action A open to seat: each kind of card in hand, each matching run."""
    cat = s.cat
    colour = cat.bar_colour
    colours = [colour[b] for b in s.belt]
    text = _belt_text(colours)
    seen = 0
    for c in bits(s.hands[seat]):
        t = 1 << cat.order_type[c]
        if seen & t:
            continue
        seen |= t
        for start in _starts(cat.order_pattern[c], colours, text):
            out.append(PLAY | c << 4 | start << 12)


def can_play(s: State, seat: int) -> bool:
    """Whether seat holds a card whose combination is on the belt (CL-7, CL-24)."""
    out: list[int] = []
    play_moves(s, seat, out)
    return bool(out)


def _give_back_moves(s: State, seat: int, out: list[int]) -> None:
    kind_of = s.cat.bar_type
    seen = 0
    for b in bits(s.bars[seat]):
        t = 1 << kind_of[b]
        if seen & t:
            continue
        seen |= t
        out.append(GIVE_BACK | b << 4 | LEFT << 12)
        out.append(GIVE_BACK | b << 4 | RIGHT << 12)


def _sources(s: State) -> list[int]:
    """Draw sources with a card: face-up slots (one per kind of card) and FACE_DOWN."""
    kind_of = s.cat.order_type
    out = []
    seen = 0
    for slot in range(FACE_UP):
        c = s.face_up[slot]
        if c >= 0 and not seen & (1 << kind_of[c]):
            seen |= 1 << kind_of[c]
            out.append(slot)
    if s.pile:
        out.append(FACE_DOWN)
    return out


def _has_source(s: State) -> bool:
    return bool(s.pile) or s.face_up[0] >= 0 or s.face_up[1] >= 0 or s.face_up[2] >= 0


def _swap_changes(s: State, seat: int, target: int) -> bool:
    """Whether a swap with target moves any card (CL-18)."""
    mine = s.hands[seat]
    theirs = s.hands[target]
    if target == s.players or mine:
        return bool(mine | theirs)
    return theirs.bit_count() >= 2


def _effect_moves(s: State, out: list[int]) -> None:
    """One EFFECT move per way of carrying out a pending effect; a pending effect that
    cannot be carried out now offers its NONE move (CL-12, CL-13)."""
    cat = s.cat
    p = s.current
    n = s.players
    effect_of = cat.bar_effect
    colour = cat.bar_colour
    seen_keys = 0
    for b in bits(s.pending):
        e = effect_of[b]
        key = 1 << (e * 4 + colour[b]) if e == _RETURN_BAR else 1 << (e * 4)
        if seen_keys & key:
            continue
        seen_keys |= key
        before = len(out)
        head = EFFECT | b << 4
        if e == _DRAW:
            for src in _sources(s):
                out.append(head | src << 12)
        elif e == _DISCARD_HAND:
            for t in range(n):
                if t != p and s.hands[t]:
                    out.append(head | t << 12)
        elif e == _RETURN_BAR:
            want = colour[b]
            kind_of = cat.bar_type
            for t in range(n):
                if t == p:
                    continue
                seen = 0
                for x in bits(s.bars[t]):
                    if colour[x] != want or seen & (1 << kind_of[x]):
                        continue
                    seen |= 1 << kind_of[x]
                    out.append(head | x << 12 | LEFT << 20)
                    out.append(head | x << 12 | RIGHT << 20)
        elif e == _DISCARD_PLAYED:
            for t in range(n):
                if t != p and s.stacks[t]:
                    out.append(head | t << 12)
        elif e == _SWAP_HANDS:
            targets = n + 1 if n == 2 else n
            for t in range(targets):
                if t != p and _swap_changes(s, p, t):
                    out.append(head | t << 12)
        if len(out) == before:
            out.append(head | NONE << 12)


def legal_moves(s: State) -> list[int]:
    """Every legal move of the current player, equivalent ones once (CL-32); empty when
    the game is over."""
    out: list[int] = []
    phase = s.phase
    p = s.current
    if phase == MAIN:
        play_moves(s, p, out)
        if s.bars[p]:
            _give_back_moves(s, p, out)
        if not out:
            # action C: no card can be played and no bar can be returned (CL-24)
            for src in _sources(s):
                out.append(DRAW | src << 4)
    elif phase == EFFECTS:
        _effect_moves(s, out)
    elif phase == RETURNING:
        _give_back_moves(s, p, out)
        out.append(STOP)
    elif phase == DRAWING:
        for src in _sources(s):
            out.append(DRAW | src << 4)
    return out


def is_legal(s: State, move: int) -> bool:
    """Whether move is legal now, including moves equivalent to a generated one."""
    if s.phase == OVER or not 0 <= move < 1 << 21:
        return False
    moves = legal_moves(s)
    if move in moves:
        return True
    canon = _canonical(s, move)
    return canon != move and canon in moves


def _canonical(s: State, move: int) -> int:
    """The generated representative of a move equivalent to it (CL-32), else move."""
    cat = s.cat
    k = move & 15
    a, b, c = arg_a(move), arg_b(move), arg_c(move)
    p = s.current
    if k == PLAY and a < len(cat.orders) and s.hands[p] >> a & 1:
        for other in bits(s.hands[p]):
            if cat.order_type[other] == cat.order_type[a]:
                return PLAY | other << 4 | b << 12
    if k == GIVE_BACK and a < len(cat.bars) and s.bars[p] >> a & 1:
        for other in bits(s.bars[p]):
            if cat.bar_type[other] == cat.bar_type[a]:
                return GIVE_BACK | other << 4 | b << 12
    if k == DRAW and a < FACE_UP and s.face_up[a] >= 0:
        kind = cat.order_type[s.face_up[a]]
        for slot in range(FACE_UP):
            if s.face_up[slot] >= 0 and cat.order_type[s.face_up[slot]] == kind:
                return DRAW | slot << 4
    if k == EFFECT and a < len(cat.bars) and s.pending >> a & 1:
        e = cat.bar_effect[a]
        head = a
        for other in bits(s.pending):
            if cat.bar_effect[other] == e and (
                e != _RETURN_BAR or cat.bar_colour[other] == cat.bar_colour[a]
            ):
                head = other
                break
        target = b
        if e == _DRAW and b < FACE_UP and s.face_up[b] >= 0:
            target = arg_a(_canonical(s, DRAW | b << 4))
        elif e == _RETURN_BAR and b < len(cat.bars):
            owner = _owner(s, b)
            if owner >= 0:
                for other in bits(s.bars[owner]):
                    if cat.bar_type[other] == cat.bar_type[b]:
                        target = other
                        break
        return EFFECT | head << 4 | target << 12 | c << 20
    return move


def _owner(s: State, bar: int) -> int:
    for t in range(s.players):
        if s.bars[t] >> bar & 1:
            return t
    return -1


# --- applying a move --------------------------------------------------------------------
def _finish(s: State, why: int) -> None:
    s.phase = OVER
    s.end = why
    s.pending = 0
    s.draws_left = 0


def _end_turn(s: State) -> None:
    s.pending = 0
    s.returned = 0
    s.draws_left = 0
    s.current = (s.current + 1) % s.players
    s.phase = MAIN
    s.turn += 1


def _draw(s: State, seat: int, source: int) -> int:
    """Seat draws from source; returns the card drawn face down, or the card turned face
    up to refill the slot. The last face-down card leaving the pile, drawn or turned
    face up, ends the game (CL-25)."""
    if source == FACE_DOWN:
        c = s.pile.pop()
        s.hands[seat] |= 1 << c
        if not s.pile:
            _finish(s, LAST_CARD)
        return c
    c = s.face_up[source]
    s.hands[seat] |= 1 << c
    refill = s.pile.pop()
    s.face_up[source] = refill
    if not s.pile:
        _finish(s, LAST_CARD)
    return refill


def _random_card(s: State, hand: int) -> int:
    """A uniformly random card of a non-empty hand mask, from the state's rng."""
    k = s.below(hand.bit_count())
    for _ in range(k):
        hand &= hand - 1
    return (hand & -hand).bit_length() - 1


def _start_draws(s: State) -> None:
    if s.draws_left > 0 and _has_source(s):
        s.phase = DRAWING
    else:
        _end_turn(s)


def apply(s: State, move: int) -> int:
    """Play move (assumed legal: check with ``is_legal`` or take it from ``legal_moves``)
    for the current player, in place. Chance is drawn from ``s.rng``.

    Returns the card the move showed to someone, else -1: the face-down card drawn (seen
    by the drawer), the card turned face up to refill a slot (seen by all), the card
    discarded from a hand (seen by its owner), the card discarded from a stack (seen by
    all), the card an empty-handed swap left to its target (seen by the target).
    """
    cat = s.cat
    p = s.current
    k = move & 15
    a = (move >> 4) & 255
    b = (move >> 12) & 255
    outcome = -1
    if k == PLAY:
        size = cat.order_len[a]
        s.hands[p] &= ~(1 << a)
        s.stacks[p].append(a)
        effect_of = cat.bar_effect
        pending = 0
        for bar in s.belt[b : b + size]:
            s.bars[p] |= 1 << bar
            if effect_of[bar]:
                pending |= 1 << bar
        del s.belt[b : b + size]
        if not s.belt:
            # the last bars: Golden Sugar, no effects, the end (CL-11)
            s.golden = p
            _finish(s, LAST_BAR)
        elif pending:
            s.phase = EFFECTS
            s.pending = pending
        else:
            _end_turn(s)
    elif k == GIVE_BACK:  # action B, one bar to an end, its effect unused (CL-22)
        s.bars[p] &= ~(1 << a)
        if b == LEFT:
            s.belt.insert(0, a)
        else:
            s.belt.append(a)
        s.returned += 1
        s.draws_left += cat.bar_value[a]
        if s.returned >= MAX_RETURNED or not s.bars[p]:
            _start_draws(s)
        else:
            s.phase = RETURNING
    elif k == STOP:  # then one draw per point returned (CL-23)
        _start_draws(s)
    elif k == DRAW:
        outcome = _draw(s, p, a)
        if s.phase == MAIN:
            _end_turn(s)  # action C: one card, then the turn ends
        elif s.phase == DRAWING:
            s.draws_left -= 1
            if s.draws_left == 0 or not _has_source(s):
                _end_turn(s)
    elif k == EFFECT:
        s.pending &= ~(1 << a)
        if b != NONE:
            outcome = _apply_effect(s, p, a, b, (move >> 20) & 1)
        if s.phase == EFFECTS and not s.pending:
            _end_turn(s)
    return outcome


def _apply_effect(s: State, p: int, bar: int, target: int, end: int) -> int:
    e = s.cat.bar_effect[bar]
    if e == _DRAW:
        return _draw(s, p, target)
    if e == _DISCARD_HAND:  # a uniformly random card to the box (CL-15)
        c = _random_card(s, s.hands[target])
        s.hands[target] &= ~(1 << c)
        s.box |= 1 << c
        return c
    if e == _RETURN_BAR:  # the bar to an end, its effect unused (CL-16)
        owner = _owner(s, target)
        s.bars[owner] &= ~(1 << target)
        if end == LEFT:
            s.belt.insert(0, target)
        else:
            s.belt.append(target)
        return -1
    if e == _DISCARD_PLAYED:  # the top of the stack to the box, in view (CL-17)
        c = s.stacks[target].pop()
        s.box |= 1 << c
        s.box_public |= 1 << c
        return c
    if e == _SWAP_HANDS:  # whole hands; an empty hand leaves one random card (CL-18)
        mine = s.hands[p]
        theirs = s.hands[target]
        if mine or target == s.players:
            s.hands[p] = theirs
            s.hands[target] = mine
            return -1
        keep = _random_card(s, theirs)
        s.hands[p] = theirs & ~(1 << keep)
        s.hands[target] = 1 << keep
        return keep
    return -1
