"""What one seat knows: `Observation`, its `PublicView`, and the replay of the public history.

An `Observation` is the rules, the public history as the seat saw it and its own hand
and piles. `Game.observation` hands it its PublicView ready made from the state the game
keeps; an observation parsed from a position file replays its history into a C state
(`_replay_public`), checking on the way that it is one the rules allow.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from csl_ai import _core
from csl_ai.errors import InvalidPositionError
from csl_ai.gametypes import (
    _DECLARES,
    _ERRORS,
    _PHASES,
    COLOUR_NAMES,
    Phase,
    RoundLog,
    Trick,
    _play_moves,
    new_core,
    sky_cards_for,
)
from csl_ai.moves import Allocate, Move
from csl_ai.notation import card_colour, card_str, format_cards, format_piles
from csl_ai.rules import RulesConfig


@dataclass(frozen=True)
class PublicView:
    """One seat's knowledge replayed into a C state.

    `core` is the real state with every hidden card removed: the observer's hand and
    piles are there, others' piles hold nothing. `hidden_counts[s][g]` is how many unseen
    cards seat s still holds in pile g; `voids[s][g]` is a colour mask (bit c = colour c)
    of colours seat s has shown it lacks in pile g.
    """

    core: _core.CoreState
    hidden_counts: tuple[tuple[int, ...], ...]
    voids: tuple[tuple[int, ...], ...]
    unseen: int
    """Rain cards in use that the observer has not seen (others' piles and the set-aside)."""
    unseen_sky: tuple[int, ...]
    """Sky card ids not yet dealt into any line."""


@dataclass(frozen=True)
class Observation:
    """What one seat knows: the rules, the public history, and its own hand and piles.

    Built by `Game.observation`, which hands it its PublicView ready made from the state
    the game keeps, or parsed from a position file, whose `public_view()` replays the
    history into a C state and checks on the way that it is one the rules allow.
    """

    rules: RulesConfig
    seat: int
    rounds: tuple[RoundLog, ...]
    over: bool = False
    pending: tuple[int, ...] = ()
    """Seats still making the current simultaneous choice (allocation or weather bet).

    Who has chosen is public at the table; what they chose is not."""

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def current(self) -> RoundLog:
        return self.rounds[-1]

    @property
    def hand(self) -> int:
        hand = self.current.hands[self.seat]
        return hand if hand is not None else 0

    @property
    def allocation(self) -> tuple[int, ...] | None:
        return self.current.allocations[self.seat]

    def public_view(self) -> PublicView:
        """Replay the public history into a C state; InvalidPositionError if it breaks a rule."""
        cached = self.__dict__.get("_view")
        if cached is None:
            cached = _replay_public(self)
            object.__setattr__(self, "_view", cached)
        return cached

    @property
    def phase(self) -> Phase:
        view = self.public_view().core
        return _PHASES[view.phase]

    @property
    def to_move(self) -> int:
        """The seat to act: in a simultaneous phase, this seat if it has not yet chosen."""
        core = self.public_view().core
        if core.phase in ("allocate", "weather"):
            return -1 if self._has_chosen(core) else self.seat
        return core.to_move

    def _has_chosen(self, core: _core.CoreState) -> bool:
        """Whether this seat has already made the current simultaneous decision."""
        done = core.allocated_mask if core.phase == "allocate" else core.weather_done_mask
        return bool((done >> self.seat) & 1)

    def legal_moves(self) -> list[Move]:
        """This seat's legal moves now (empty when it is not this seat's decision)."""
        core = self.public_view().core
        phase = _PHASES[core.phase]
        if phase in (Phase.ALLOCATE, Phase.WEATHER) and self._has_chosen(core):
            return []
        if phase is Phase.ALLOCATE:
            return [Allocate.trusted(p) for p in core.allocations(self.hand)]
        if phase is Phase.WEATHER:
            return list(_DECLARES)
        if phase is Phase.PLAY and core.to_move == self.seat:
            return _play_moves(core.legal_plays())
        return []


def pile_plays(tricks: Iterable[Trick], players: int, groups: int) -> list[list[int]]:
    """The cards each seat played from each of its piles in tricks: ``[seat][pile]``, a
    card mask (bit c = card c)."""
    played = [[0] * groups for _ in range(players)]
    for trick in tricks:
        for seat, card in trick.plays:
            played[seat][trick.group] |= 1 << card
    return played


def played_from_piles(obs: Observation, round_index: int = -1) -> list[list[int]]:
    """Cards each seat has played from each of its piles in a round (the current one by
    default, none once the game is over; in a finished round, each seat's whole split):
    `pile_plays` of the round's tricks."""
    groups = len(obs.rules.spec.group_sizes)
    if not obs.rounds or obs.over and round_index == -1:
        return [[0] * groups for _ in range(obs.players)]
    return pile_plays(obs.rounds[round_index].tricks, obs.players, groups)


def _replay_public(obs: Observation) -> PublicView:
    """Replay obs's history from its seat's view into a C state (see PublicView)."""
    rules = obs.rules
    spec = rules.spec
    n = rules.players
    seat = obs.seat
    n_sky = len(sky_cards_for(rules))
    seen_sky: list[int] = []
    for i, r in enumerate(obs.rounds):
        for sky in r.line:
            if not 0 <= sky < n_sky or sky in seen_sky:
                raise InvalidPositionError(f"rounds[{i}].line: sky card id {sky!r} is unknown or repeated")
            seen_sky.append(sky)
        if len(r.line) != spec.line_size:
            raise InvalidPositionError(f"rounds[{i}].line: must hold {spec.line_size} sky cards")
    unseen_sky = tuple(s for s in range(n_sky) if s not in seen_sky)
    core = new_core(rules, seen_sky + list(unseen_sky))
    if len(obs.rounds) > spec.rounds:
        raise InvalidPositionError(f"rounds: a {n}-player game has {spec.rounds} rounds")
    voids = [[0] * len(spec.group_sizes) for _ in range(n)]
    for i, r in enumerate(obs.rounds):
        where = f"rounds[{i}]"
        last = i == len(obs.rounds) - 1
        if r.first_player != core.first_player:
            raise InvalidPositionError(f"{where}.first_player: must be seat {core.first_player}")
        hands = [0] * n
        own = r.hands[seat] if last else None
        if last:
            if own is None:
                raise InvalidPositionError(f"{where}.hand: the observing seat's hand is required")
            if bin(own).count("1") != spec.hand_size or own & ~spec.rain_cards:
                raise InvalidPositionError(
                    f"{where}.hand: must be {spec.hand_size} rain cards in use, got {format_cards(own)!r}"
                )
            hands[seat] = own
        core.set_hidden_round(hands)
        voids = [[0] * len(spec.group_sizes) for _ in range(n)]
        allocation = r.allocations[seat] if last else None
        started = not last or allocation is not None
        pending = set(obs.pending) if last else set()
        if any(not 0 <= s < n for s in pending) or (pending and r.tricks):
            raise InvalidPositionError(f"pending: {sorted(pending)!r} is not a set of seats still choosing")
        own_declared = r.declarations[seat] is not None
        still_allocating = allocation is None or (not own_declared and bool(pending) and seat not in pending)
        if last and allocation is None and (r.tricks or any(d is not None for d in r.declarations)):
            raise InvalidPositionError(f"{where}.piles: the observing seat's piles are required once dealt")
        for s in range(n):
            if s == seat and last and allocation is not None:
                if core.allocate(s, allocation):
                    raise InvalidPositionError(
                        f"{where}.piles: {format_piles(allocation)!r} is not a split of the hand "
                        f"into piles of {', '.join(map(str, spec.group_sizes))}"
                    )
            elif started and not (still_allocating and s in pending):
                core.force_allocated(s, (0,) * len(spec.group_sizes))
        if not started or core.phase == "allocate":
            continue
        declarations_public = all(d is not None for d in r.declarations)
        if r.tricks and not declarations_public:
            raise InvalidPositionError(f"{where}.declarations: all declarations are public once tricks start")
        if declarations_public:
            for s in range(n):
                core.declare(s, bool(r.declarations[s]))
        elif r.declarations[seat] is not None:
            core.declare(seat, bool(r.declarations[seat]))
        for t, trick in enumerate(r.tricks):
            twhere = f"{where}.tricks[{t}]"
            if trick.leader != core.to_move:
                raise InvalidPositionError(f"{twhere}.leader: seat {core.to_move} leads this trick")
            group = core.group
            for p, (s, card) in enumerate(trick.plays):
                if s != core.to_move:
                    raise InvalidPositionError(f"{twhere}.plays[{p}]: seat {core.to_move} plays here, not {s}")
                led = core.led_colour
                if s == seat and last:
                    err = core.play(card)
                    if err:
                        raise InvalidPositionError(
                            f"{twhere}.plays[{p}]: {card_str(card)} is illegal for the observing seat "
                            f"({_ERRORS.get(err, err)})"
                        )
                else:
                    colour = card_colour(card)
                    if (voids[s][group] >> colour) & 1:
                        raise InvalidPositionError(
                            f"{twhere}.plays[{p}]: seat {s} already showed no {COLOUR_NAMES[colour]} "
                            f"in this pile, then played {card_str(card)}"
                        )
                    if own is not None and (own >> card) & 1:
                        raise InvalidPositionError(
                            f"{twhere}.plays[{p}]: {card_str(card)} is in the observing seat's hand"
                        )
                    err = core.reveal_play(card)
                    if err:
                        raise InvalidPositionError(
                            f"{twhere}.plays[{p}]: {card_str(card)} cannot be played here "
                            f"(unknown, not in use, or already played)"
                        )
                    if led >= 0 and colour != led:
                        voids[s][group] |= 1 << led
            if len(trick.plays) == n:
                if trick.winner is not None and trick.winner != core.last_winner:
                    raise InvalidPositionError(f"{twhere}.winner: seat {core.last_winner} wins this trick")
            elif t != len(r.tricks) - 1 or not last:
                raise InvalidPositionError(f"{twhere}.plays: only the last trick may be incomplete")
        if not last and core.phase != "deal" and core.phase != "over":
            raise InvalidPositionError(f"{where}: a past round must be complete")
    if obs.over != (core.phase == "over"):
        raise InvalidPositionError("over: does not match the history")
    if core.phase == "deal":
        raise InvalidPositionError("rounds: the position must include the current round's line and hand")
    hidden_counts = []
    played = core.played
    played_from = played_from_piles(obs)
    for s in range(n):
        row = []
        for g, size in enumerate(spec.group_sizes):
            if s == seat:
                row.append(0)
                continue
            row.append(size - played_from[s][g].bit_count() if core.phase != "over" else 0)
        hidden_counts.append(tuple(row))
    own_hand = obs.hand if core.phase != "over" else 0
    unseen = spec.rain_cards & ~own_hand & ~played if core.phase != "over" else 0
    return PublicView(
        core=core,
        hidden_counts=tuple(hidden_counts),
        voids=tuple(tuple(v) for v in voids),
        unseen=unseen,
        unseen_sky=unseen_sky,
    )
