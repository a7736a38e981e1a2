"""Positions: one seat's view of a game at a decision point, as strictly checked JSON.

A position holds what the seat knows (RULES.md §5) and nothing more: the rules and deck,
the public history of every round so far (sky line, first player, declarations, tricks)
and the seat's own hand and piles for the current round. ``position_from_dict`` checks
every field and replays the history through the rules, so a position that parses is one
the rules allow; any problem is an ``InvalidPositionError`` naming the field by its JSON
path (``rounds[0].tricks[2].plays[1]``). The format is documented in docs/positions.md.

The JSON helpers it shares with game records (records.py) are in jsonio.py.
"""

from __future__ import annotations

import functools
import operator
import os
import shlex
from collections.abc import Mapping
from typing import Any, Final

from csl_ai.errors import InvalidPositionError
from csl_ai.game import COLOUR_NAMES, Observation, RoundLog, pile_plays, sky_cards_for
from csl_ai.jsonio import (
    ErrorClass,
    check_bool_or_null,
    check_header,
    check_list,
    check_object,
    check_seat,
    format_json,
    guarded,
    read_cards,
    read_json_file,
    read_line,
    read_piles,
    read_rules,
    read_tricks,
    round_to_json,
)
from csl_ai.notation import MAX_RANK, N_COLOURS, format_cards, format_piles, split_difference
from csl_ai.records import RECORD_FORMAT

POSITION_FORMAT: Final = "csl-position"
POSITION_VERSION: Final = 1

_POSITION_FIELDS: Final = ("format", "version", "rules", "seat", "rounds", "hand", "piles")
_ROUND_FIELDS: Final = ("line", "line_ids", "first_player", "declarations", "tricks")

_COLOUR_MASK: Final = tuple(((1 << MAX_RANK) - 1) << (MAX_RANK * c) for c in range(N_COLOURS))


# --- positions --------------------------------------------------------------------------
def observation_to_position(obs: Observation) -> dict[str, Any]:
    """The JSON form (a dict) of one seat's view; ``position_from_dict`` reads it back."""
    if not obs.rounds:
        raise InvalidPositionError("rounds: the observation has no round dealt yet")
    cards = sky_cards_for(obs.rules)
    rounds = [round_to_json(r, cards) for r in obs.rounds]
    piles = obs.allocation
    return {
        "format": POSITION_FORMAT,
        "version": POSITION_VERSION,
        "rules": obs.rules.to_dict(),
        "seat": obs.seat,
        "rounds": rounds,
        "hand": format_cards(obs.hand),
        "piles": format_piles(piles) if piles is not None else None,
        "pending": list(obs.pending),
    }


def position_to_json(position: Mapping[str, Any]) -> str:
    """Position text as saved: stable, indented JSON."""
    return format_json(position)


@guarded(InvalidPositionError, "position")
def position_from_dict(data: object) -> Observation:
    """The Observation a position describes, after checking every field and rule.

    Raises InvalidPositionError naming the first bad field by its JSON path.
    """
    err = InvalidPositionError
    if is_game_record(data):
        raise err(f"this is a game record (format {RECORD_FORMAT!r}), not a position")
    top = check_object(data, "", err, _POSITION_FIELDS, ["pending"])
    check_header(top, POSITION_FORMAT, POSITION_VERSION, err)
    rules = read_rules(top["rules"], err)
    spec = rules.spec
    n = rules.players
    seat = check_seat(top["seat"], n, "seat", err)
    rounds_json = check_list(top["rounds"], "rounds", err, "rounds")
    if not 1 <= len(rounds_json) <= spec.rounds:
        raise err(
            f"rounds: a {n}-player game has 1..{spec.rounds} rounds so far "
            f"(the current one included), got {len(rounds_json)}"
        )
    hand = read_cards(top["hand"], "hand", err, spec.rain_cards)
    piles = None if top["piles"] is None else read_piles(top["piles"], "piles", err, rules)
    used: set[int] = set()
    rounds: list[RoundLog] = []
    for i, raw in enumerate(rounds_json):
        where = f"rounds[{i}]"
        last = i == len(rounds_json) - 1
        obj = check_object(
            raw, where, err, [f for f in _ROUND_FIELDS if f != "line_ids"], ["line_ids"]
        )
        line = read_line(obj["line"], obj.get("line_ids"), where, err, rules, used)
        first = check_seat(obj["first_player"], n, f"{where}.first_player", err)
        declarations = _read_declarations(
            obj["declarations"], f"{where}.declarations", seat, n, last
        )
        tricks = read_tricks(obj["tricks"], where, err, rules, i, line, may_stop=last)
        if last:
            own_hand, own_piles = hand, piles
        else:  # a finished round: the seat's piles are the cards it played from each
            own_piles = tuple(pile_plays(tricks, n, len(spec.group_sizes))[seat])
            own_hand = functools.reduce(operator.or_, own_piles, 0)
        rounds.append(
            RoundLog(
                line=line,
                first_player=first,
                hands=[own_hand if s == seat else None for s in range(n)],
                set_aside=None,
                allocations=[own_piles if s == seat else None for s in range(n)],
                declarations=declarations,
                tricks=tricks,
            )
        )
    current = rounds[-1]
    if hand.bit_count() != spec.hand_size:
        raise err(f"hand: a {n}-player hand has {spec.hand_size} cards, got {hand.bit_count()}")
    if piles is not None:
        union = 0
        for pile in piles:
            union |= pile
        if union != hand:
            raise err(
                f"piles: {format_piles(piles)!r} is not a split of the hand {format_cards(hand)!r}: "
                f"{split_difference(piles, hand, 'the hand')}"
            )
    elif current.tricks or any(d is not None for d in current.declarations):
        raise err("piles: required once the seat has declared or tricks have started, got null")
    over = (
        len(rounds) == spec.rounds
        and len(current.tricks) == spec.line_size
        and current.tricks[-1].complete
    )
    pending = _read_pending(top.get("pending", []), n, err)
    if piles is None and pending and seat not in pending:
        raise err(
            f"pending: {list(pending)!r} leaves out seat {seat}, whose piles are null: "
            "a seat that has not allocated is still choosing"
        )
    obs = Observation(rules=rules, seat=seat, rounds=tuple(rounds), over=over, pending=pending)
    obs.public_view()
    _check_voids_fit(obs)
    return obs


def _read_pending(value: object, n: int, err: ErrorClass) -> tuple[int, ...]:
    """Seats still choosing in the current simultaneous phase: distinct seats, ascending."""
    items = check_list(value, "pending", err, "seats")
    seats = tuple(check_seat(s, n, f"pending[{i}]", err) for i, s in enumerate(items))
    if list(seats) != sorted(set(seats)):
        raise err(f"pending: seats must be distinct and ascending, got {list(seats)!r}")
    return seats


def _read_declarations(
    value: object, where: str, seat: int, n: int, last: bool
) -> list[bool | None]:
    """Declarations: all public in a past round; in the current one, either all public or
    only the observing seat's own (others' stay hidden until every seat has declared)."""
    err = InvalidPositionError
    raw = check_list(value, where, err, "true/false/null, one per seat")
    if len(raw) != n:
        raise err(f"{where}: must hold one entry per seat ({n}), got {len(raw)}")
    declarations = [check_bool_or_null(d, f"{where}[{s}]", err) for s, d in enumerate(raw)]
    if all(d is not None for d in declarations):
        return declarations
    if not last:
        s = declarations.index(None)
        raise err(f"{where}[{s}]: a past round's declarations are all public (true or false)")
    for s, d in enumerate(declarations):
        if d is not None and s != seat:
            raise err(
                f"{where}[{s}]: seat {s}'s declaration is hidden from seat {seat} "
                "until every seat has declared"
            )
    return declarations


def _check_voids_fit(obs: Observation) -> None:
    """The cards the seat has not seen must fit in the others' piles as their voids allow.

    Hall's condition over colour sets: for every set S of colours, the unseen cards of
    colours in S need at least as many places (pile slots not void in all of S, and the
    5-player set-aside card) as there are such cards.
    """
    view = obs.public_view()
    if obs.over:
        return
    spec = obs.rules.spec
    unseen = [(view.unseen & _COLOUR_MASK[c]).bit_count() for c in range(N_COLOURS)]
    for subset in range(1, 1 << N_COLOURS):
        colours = [c for c in range(N_COLOURS) if (subset >> c) & 1]
        need = sum(unseen[c] for c in colours)
        room = spec.set_aside
        for s in range(obs.players):
            if s == obs.seat:
                continue
            for g, count in enumerate(view.hidden_counts[s]):
                if subset & ~view.voids[s][g]:
                    room += count
        if need > room:
            names = "/".join(COLOUR_NAMES[c] for c in colours)
            raise InvalidPositionError(
                f"rounds[{len(obs.rounds) - 1}].tricks: impossible voids: {need} unseen {names} "
                f"card(s) but only {room} place(s) left where the shown voids allow them"
            )


def is_game_record(data: object) -> bool:
    """Whether data is a game record (records.py), which a position reader is often
    handed by mistake: a whole game, where a position is one seat's view at one moment.
    Its format says so, and it has fields a position lacks (a position with only its
    format wrong is a bad position, named as such)."""
    return (
        isinstance(data, Mapping)
        and data.get("format") == RECORD_FORMAT
        and not set(data) <= {*_POSITION_FIELDS, "pending"}
    )


def load_position(source: str | os.PathLike[str]) -> Observation:
    """Read a position file (``"-"`` reads standard input) into a checked Observation.

    A game record given instead is named as one, with the commands that read it."""
    data = read_json_file(source, "position", InvalidPositionError)
    if is_game_record(data):
        name = os.fspath(source)
        shown = shlex.quote(name) if name != "-" and len(name) <= 60 else "FILE"
        raise InvalidPositionError(
            f"this is a game record, not a position: csl analyze {shown} judges its "
            f"decisions, csl replay {shown} shows it"
        )
    return position_from_dict(data)
