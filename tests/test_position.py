"""Positions: exact round trips, nothing hidden leaks, and every bad field is named."""

from __future__ import annotations

import copy
import io
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gamegen import PLAYERS, json_paths, json_values, random_rules, step
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csl_ai.errors import InvalidPositionError
from csl_ai.game import COLOUR_NAMES, Game, Observation, Phase
from csl_ai.jsonio import format_json
from csl_ai.notation import (
    card_colour,
    card_str,
    cards_of,
    format_cards,
    format_piles,
    parse_card,
)
from csl_ai.position import (
    POSITION_FORMAT,
    POSITION_VERSION,
    load_position,
    observation_to_position,
    position_from_dict,
    position_to_json,
)
from csl_ai.rules import RulesConfig


def game_states(players: int, seed: int) -> Iterator[Game]:
    """Every state of one random game, from the first deal to the end (the same object)."""
    rng = random.Random(seed)
    game = Game(random_rules(rng, players), seed=seed)
    yield game
    while not game.is_over:
        step(game, rng)
        yield game


def finished_game(players: int, seed: int) -> Game:
    *_, game = game_states(players, seed)
    return game


def rejects(data: Any, message: str) -> None:
    """position_from_dict raises InvalidPositionError matching message from its start."""
    with pytest.raises(InvalidPositionError) as info:
        position_from_dict(data)
    assert "\n" not in str(info.value)
    assert re.match(message, str(info.value)), str(info.value)


# --- round trips ------------------------------------------------------------------------
@pytest.mark.parametrize("players", PLAYERS)
def test_positions_round_trip_at_every_point(players: int) -> None:
    checked = 0
    for seed in range(3):
        rng = random.Random(seed)
        for game in game_states(players, 100 * players + seed):
            if rng.random() > 0.12 and not game.is_over:
                continue
            for seat in range(players):
                obs = game.observation(seat)
                position = observation_to_position(obs)
                text = position_to_json(position)
                assert json.loads(text) == position
                back = position_from_dict(json.loads(text))
                assert back == obs
                assert observation_to_position(back) == position
                assert back.phase is obs.phase
                assert back.to_move == obs.to_move
                assert back.legal_moves() == obs.legal_moves()
                if seat in game.pending_seats():
                    assert back.legal_moves() == game.legal_moves(seat)
                checked += 1
    assert checked > 40


@settings(max_examples=60, deadline=None)
@given(
    players=st.sampled_from(PLAYERS),
    seed=st.integers(0, 2**32),
    stop=st.integers(0, 300),
    seat=st.integers(0, 4),
)
def test_position_round_trip_property(players: int, seed: int, stop: int, seat: int) -> None:
    for moves, game in enumerate(game_states(players, seed)):  # noqa: B007 - game used after
        if moves == stop:
            break
    obs = game.observation(seat % players)
    position = observation_to_position(obs)
    back = position_from_dict(json.loads(position_to_json(position)))
    assert back == obs
    assert back.public_view().unseen == obs.public_view().unseen
    assert back.public_view().voids == obs.public_view().voids


def test_position_header_and_fields() -> None:
    game = finished_game(4, 3)
    position = observation_to_position(game.observation(1))
    assert list(position) == ["format", "version", "rules", "seat", "rounds", "hand", "piles", "pending"]
    assert position["format"] == POSITION_FORMAT and position["version"] == POSITION_VERSION
    assert list(position["rounds"][0]) == [
        "line",
        "line_ids",
        "first_player",
        "declarations",
        "tricks",
    ]
    assert position_to_json(position) == format_json(position)


def test_line_ids_may_be_left_out() -> None:
    for game in game_states(4, 12):
        if game.round == 2 and game.phase is Phase.PLAY:
            break
    obs = game.observation(3)
    position = observation_to_position(obs)
    for r in position["rounds"]:
        del r["line_ids"]
    back = position_from_dict(position)
    assert back.legal_moves() == obs.legal_moves()
    cards = game.sky_cards
    for mine, theirs in zip(back.rounds, obs.rounds, strict=True):
        assert [cards[i] for i in mine.line] == [cards[i] for i in theirs.line]
    ids = [i for r in back.rounds for i in r.line]
    assert len(ids) == len(set(ids))


# --- nothing hidden ---------------------------------------------------------------------
def _cards_in(value: Any) -> set[int]:
    """Every rain card named anywhere in a JSON value."""
    found: set[int] = set()
    if isinstance(value, str):
        for token in re.split(r"[\s|,]+", value):
            if re.fullmatch(r"[BRG](1[0-2]|[1-9])", token):
                found.add(parse_card(token))
    elif isinstance(value, list):
        for item in value:
            found |= _cards_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            found |= _cards_in(item)
    return found


@pytest.mark.parametrize("players", PLAYERS)
def test_a_position_never_shows_hidden_cards(players: int) -> None:
    for seed in range(3):
        previous: dict[int, dict[str, Any]] = {}
        for game in game_states(players, 7 * players + seed):
            log = game.rounds[-1]
            played = {c for t in log.tricks for _, c in t.plays}
            for seat in range(players):
                obs = game.observation(seat)
                for r in obs.rounds:
                    assert all(r.hands[s] is None for s in range(players) if s != seat)
                    assert all(r.allocations[s] is None for s in range(players) if s != seat)
                    assert r.set_aside is None
                position = observation_to_position(obs)
                assert not {"hands", "allocations", "set_aside"} & set(position)
                assert all(
                    not {"hands", "allocations", "set_aside"} & set(r) for r in position["rounds"]
                )
                current = position["rounds"][-1]
                shown = _cards_in([current, position["hand"], position["piles"]])
                own = log.hands[seat] or 0
                hidden = {
                    c for s in range(players) if s != seat for c in cards_of(log.hands[s] or 0)
                }
                hidden |= set(cards_of(log.set_aside or 0))
                assert shown <= set(cards_of(own)) | played
                assert not (shown & (hidden - played))
                if not game.is_over and game.phase in (Phase.ALLOCATE, Phase.WEATHER):
                    assert all(
                        d is None for s, d in enumerate(current["declarations"]) if s != seat
                    )
                previous[seat] = position
        assert previous


@pytest.mark.parametrize("players", PLAYERS)
def test_other_seats_secret_choices_do_not_change_a_position(players: int) -> None:
    """While seats allocate and bet, one seat's position changes only in who is still choosing
    (public at the table), never in what the others chose."""
    rng = random.Random(players)
    game = Game(RulesConfig(players=players), seed=players)
    changes = 0
    while not game.is_over:
        before = {s: observation_to_position(game.observation(s)) for s in range(players)}
        phase = game.phase
        mover = rng.choice(game.pending_seats())
        game.apply(rng.choice(game.legal_moves(mover)), mover)
        if phase in (Phase.ALLOCATE, Phase.WEATHER) and game.phase is phase:
            for s in range(players):
                if s != mover:
                    after = observation_to_position(game.observation(s))
                    assert after["pending"] == list(game.pending_seats())
                    assert mover not in after["pending"] and mover in before[s]["pending"]
                    assert {k: v for k, v in after.items() if k != "pending"} == {
                        k: v for k, v in before[s].items() if k != "pending"
                    }
                    changes += 1
    assert changes > 0


# --- corruption -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mid4() -> tuple[Game, Observation]:
    """A 4-player game in round 2, five tricks into the round, seen by seat 2."""
    for game in game_states(4, 42):
        if game.round == 1 and len(game.rounds[-1].tricks) == 5 and game.current_trick is None:
            break
    return game.copy(), game.observation(2)


def base(mid4: tuple[Game, Observation]) -> dict[str, Any]:
    return copy.deepcopy(observation_to_position(mid4[1]))


def test_valid_base(mid4: tuple[Game, Observation]) -> None:
    assert position_from_dict(base(mid4)) == mid4[1]


BAD_FIELDS: list[tuple[str, list[Any], Any, str]] = [
    ("format", ["format"], "csl-record", r"format: must be 'csl-position', got 'csl-record'"),
    ("version", ["version"], 3, r"version: this program reads version 1, got 3"),
    ("seat out of range", ["seat"], 4, r"seat: must be a seat 0\.\.3, got 4"),
    ("seat type", ["seat"], "2", r"seat: must be a seat 0\.\.3, got '2'"),
    ("seat bool", ["seat"], True, r"seat: must be a seat 0\.\.3, got True"),
    ("unknown card", ["hand"], "B1 X9", r"hand: bad card 'X9' in 'B1 X9'"),
    ("duplicate card", ["hand"], "B1 B1 B2", r"hand: card B1 given twice"),
    ("hand type", ["hand"], ["B1"], r"hand: must be cards like 'B7 R2 G5', got \['B1'\]"),
    ("short hand", ["hand"], "B1 B2 B3", r"hand: a 4-player hand has 9 cards, got 3"),
    (
        "piles sizes",
        ["piles"],
        "B1 B2 | B3 B4 B5 | B6 B7 B8 B9",
        r"piles: bad allocation .*: pile 1 must hold 3 cards",
    ),
    (
        "piles of another hand",
        ["piles"],
        "B1 B2 B3 | B4 B5 B6 | B7 B8 B9",
        r"piles: '.*' is not a split of the hand",
    ),
    (
        "piles missing",
        ["piles"],
        None,
        r"piles: required once the seat has declared or tricks have started",
    ),
    ("rounds type", ["rounds"], {}, r"rounds: must be a list of rounds, got \{\}"),
    ("no rounds", ["rounds"], [], r"rounds: a 4-player game has 1\.\.4 rounds so far"),
    ("rules", ["rules", "players"], 6, r"rules\.players: must be an integer 2\.\.5, got 6"),
    (
        "rules side",
        ["rules", "sides", "candy"],
        "C",
        r"rules\.sides\.candy: must be 'A' or 'B', got 'C'",
    ),
    ("deck", ["rules", "deck", "cards", "star", "single"], 4, r"rules\.deck: deck .* has 37 cards"),
    (
        "first player type",
        ["rounds", 1, "first_player"],
        None,
        r"rounds\[1\]\.first_player: must be a seat",
    ),
    (
        "line length",
        ["rounds", 0, "line"],
        ["C1"],
        r"rounds\[0\]\.line: a 4-player round has 9 sky cards, got 1",
    ),
    ("line card", ["rounds", 0, "line", 2], "Q1", r"rounds\[0\]\.line\[2\]: bad sky card 'Q1'"),
    (
        "line id range",
        ["rounds", 0, "line_ids", 2],
        36,
        r"rounds\[0\]\.line_ids\[2\]: must be a sky card id 0\.\.35, got 36",
    ),
    (
        "declarations length",
        ["rounds", 0, "declarations"],
        [True],
        r"rounds\[0\]\.declarations: must hold one entry per seat \(4\), got 1",
    ),
    (
        "declaration type",
        ["rounds", 1, "declarations", 3],
        1,
        r"rounds\[1\]\.declarations\[3\]: must be true, false or null, got 1",
    ),
    (
        "declaration hidden in a past round",
        ["rounds", 0, "declarations", 3],
        None,
        r"rounds\[0\]\.declarations\[3\]: a past round's declarations are all public",
    ),
    (
        "tricks type",
        ["rounds", 1, "tricks"],
        "none",
        r"rounds\[1\]\.tricks: must be a list of tricks, got 'none'",
    ),
    (
        "trick type",
        ["rounds", 1, "tricks", 0],
        [],
        r"rounds\[1\]\.tricks\[0\]: must be an object, got \[\]",
    ),
    (
        "leader range",
        ["rounds", 1, "tricks", 2, "leader"],
        5,
        r"rounds\[1\]\.tricks\[2\]\.leader: must be a seat 0\.\.3, got 5",
    ),
    (
        "play pair",
        ["rounds", 1, "tricks", 2, "plays", 1],
        [1, "B1", 2],
        r"rounds\[1\]\.tricks\[2\]\.plays\[1\]: must be a \[seat, card\] pair",
    ),
    (
        "play seat",
        ["rounds", 1, "tricks", 2, "plays", 1, 0],
        4,
        r"rounds\[1\]\.tricks\[2\]\.plays\[1\]: must be a seat 0\.\.3, got 4",
    ),
    (
        "play card",
        ["rounds", 1, "tricks", 2, "plays", 1, 1],
        "B0",
        r"rounds\[1\]\.tricks\[2\]\.plays\[1\]: bad card 'B0'",
    ),
    (
        "no plays",
        ["rounds", 1, "tricks", 4, "plays"],
        [],
        r"rounds\[1\]\.tricks\[4\]\.plays: must hold 1\.\.4 plays, got 0",
    ),
    (
        "winner type",
        ["rounds", 1, "tricks", 1, "winner"],
        "1",
        r"rounds\[1\]\.tricks\[1\]\.winner: must be a seat",
    ),
    (
        "sky",
        ["rounds", 1, "tricks", 1, "sky"],
        3,
        r"rounds\[1\]\.tricks\[1\]\.sky: must be the sky card won",
    ),
]


@pytest.mark.parametrize(
    ("name", "path", "value", "message"), BAD_FIELDS, ids=[b[0] for b in BAD_FIELDS]
)
def test_bad_field_is_named(
    mid4: tuple[Game, Observation], name: str, path: list[Any], value: Any, message: str
) -> None:
    data = base(mid4)
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    rejects(data, message)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (["hand"], r"hand: missing"),
        (["seat"], r"seat: missing"),
        (["piles"], r"piles: missing"),
        (["rounds", 1, "tricks"], r"rounds\[1\]\.tricks: missing"),
        (["rounds", 0, "first_player"], r"rounds\[0\]\.first_player: missing"),
        (["rounds", 1, "tricks", 3, "sky"], r"rounds\[1\]\.tricks\[3\]\.sky: missing"),
    ],
)
def test_missing_field_is_named(
    mid4: tuple[Game, Observation], path: list[Any], message: str
) -> None:
    data = base(mid4)
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    rejects(data, message)


def test_unknown_fields_are_named(mid4: tuple[Game, Observation]) -> None:
    data = base(mid4)
    data["hands"] = []
    rejects(data, r"\(top level\): unknown field 'hands'")
    data = base(mid4)
    data["rounds"][0]["allocations"] = []
    rejects(data, r"rounds\[0\]: unknown field 'allocations'")
    data = base(mid4)
    data["rounds"][1]["tricks"][0]["group"] = 0
    rejects(data, r"rounds\[1\]\.tricks\[0\]: unknown field 'group'")
    rejects([], r"\(top level\): must be an object, got \[\]")


def test_piles_of_another_hand_name_the_stray_and_the_missing_cards(
    mid4: tuple[Game, Observation],
) -> None:
    """Issue 38: which cards keep the piles from splitting the hand, not only that they do not."""
    from csl_ai.notation import split_difference

    data = base(mid4)
    hand = cards_of(mid4[1].hand)
    stray = next(c for c in range(36) if not (mid4[1].hand >> c) & 1)
    piles = list(mid4[1].allocation or ())
    group = next(g for g, pile in enumerate(piles) if (pile >> hand[0]) & 1)
    piles[group] = piles[group] & ~(1 << hand[0]) | 1 << stray
    data["piles"] = format_piles(piles)
    rejects(
        data,
        rf"piles: '.*' is not a split of the hand '.*': {card_str(stray)} is not in the hand, "
        rf"{card_str(hand[0])} is left out$",
    )
    assert split_difference([0b11, 0b100], 0b1011) == "B3 is not in your hand, B4 is left out"
    assert split_difference([0b11, 0b110], 0b111) == "B2 is in two piles"
    assert split_difference([0b111, 0b11000], 0b11111) == ""


def test_a_game_record_is_named_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 38: a record handed to the position reader is called a record, not a position
    with an unknown field 'seed'; a position whose format alone is wrong is still told so."""
    from csl_ai.records import game_to_record, save_record

    game = finished_game(2, 8)
    record = game_to_record(game)
    rejects(record, r"this is a game record \(format 'csl-record'\), not a position$")
    save_record(record, tmp_path / "my game.json")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidPositionError) as info:
        load_position("my game.json")
    assert str(info.value) == (
        "this is a game record, not a position: csl analyze 'my game.json' judges its "
        "decisions, csl replay 'my game.json' shows it"
    )


def test_history_the_rules_do_not_allow(mid4: tuple[Game, Observation]) -> None:
    game = mid4[0]
    n = 4

    data = base(mid4)
    first = data["rounds"][1]["first_player"]
    data["rounds"][1]["first_player"] = (first + 1) % n
    rejects(data, rf"rounds\[1\]\.first_player: must be seat {first}$")

    data = base(mid4)
    trick = data["rounds"][1]["tricks"][3]
    trick["leader"] = (trick["leader"] + 1) % n
    rejects(data, r"rounds\[1\]\.tricks\[3\]\.leader: seat \d leads this trick")

    data = base(mid4)
    trick = data["rounds"][1]["tricks"][2]
    trick["winner"] = (trick["winner"] + 1) % n
    rejects(data, r"rounds\[1\]\.tricks\[2\]\.winner: seat \d wins this trick")

    data = base(mid4)
    trick = data["rounds"][0]["tricks"][6]
    trick["sky"] = "*" if trick["sky"] != "*" else "C1"
    rejects(data, r"rounds\[0\]\.tricks\[6\]\.sky: recorded '.*', but the line's card 6 is")

    data = base(mid4)
    plays = data["rounds"][1]["tricks"][1]["plays"]
    plays[1], plays[2] = plays[2], plays[1]
    rejects(data, r"rounds\[1\]\.tricks\[1\]\.plays\[1\]: seat \d plays here, not \d")

    data = base(mid4)
    tricks = data["rounds"][1]["tricks"]
    first_other = next(p for p in tricks[0]["plays"] if p[0] != 2)
    later = next(
        (t, k) for t in range(1, 5) for k, p in enumerate(tricks[t]["plays"]) if p[0] not in (2,)
    )
    tricks[later[0]]["plays"][later[1]][1] = first_other[1]
    rejects(
        data, rf"rounds\[1\]\.tricks\[{later[0]}\]\.plays\[{later[1]}\]: \w+ cannot be played here"
    )

    data = base(mid4)
    data["rounds"][0]["tricks"].pop()
    rejects(data, r"rounds\[0\]\.tricks: a finished round has 9 tricks, got 8")

    data = base(mid4)
    data["rounds"][1]["tricks"] = (
        data["rounds"][1]["tricks"] + [copy.deepcopy(data["rounds"][1]["tricks"][0])] * 5
    )
    rejects(data, r"rounds\[1\]\.tricks: a 4-player round has 9 tricks, got 10")

    data = base(mid4)
    data["rounds"][1]["line_ids"] = data["rounds"][0]["line_ids"]
    data["rounds"][1]["line"] = data["rounds"][0]["line"]
    rejects(data, r"rounds\[1\]\.line_ids\[0\]: sky card id \d+ is dealt twice")

    data = base(mid4)
    data["rounds"][1]["line"][0] = "*" if data["rounds"][1]["line"][0] != "*" else "C1"
    rejects(data, r"rounds\[1\]\.line\[0\]: '.*' but sky card \d+ is")

    data = base(mid4)
    data["rounds"].extend(copy.deepcopy(data["rounds"][:1]) * 3)
    rejects(data, r"rounds: a 4-player game has 1\.\.4 rounds so far .* got 5")

    assert game.round == 1


def test_hand_with_a_card_another_seat_played(mid4: tuple[Game, Observation]) -> None:
    obs = mid4[1]
    data = base(mid4)
    current = obs.rounds[-1]
    mine = [c for t in current.tricks for s, c in t.plays if s == 2]
    theirs = [
        (t, k, c)
        for t, tr in enumerate(current.tricks)
        for k, (s, c) in enumerate(tr.plays)
        if s != 2
    ]
    t, k, card = theirs[0]
    keep = next(c for c in cards_of(obs.hand) if c not in mine)
    piles = [p & ~(1 << keep) | ((1 << card) if p >> keep & 1 else 0) for p in obs.allocation or ()]
    data["hand"] = format_cards(obs.hand & ~(1 << keep) | 1 << card)
    data["piles"] = format_piles(piles)
    rejects(
        data,
        rf"rounds\[1\]\.tricks\[{t}\]\.plays\[{k}\]: "
        rf"{card_str(card)} is in the observing seat's hand",
    )


def test_own_play_must_follow() -> None:
    for seed in range(40):
        game = finished_game(4, seed)
        for seat in range(4):
            log = game.rounds[-1]
            for t, trick in enumerate(log.tricks):
                led = card_colour(trick.plays[0][1])
                for p, (s, card) in enumerate(trick.plays[1:], start=1):
                    if s != seat or card_colour(card) != led:
                        continue
                    gone = {
                        c for earlier in log.tricks[:t] for ps, c in earlier.plays if ps == seat
                    }
                    alloc = log.allocations[seat]
                    assert alloc is not None
                    other = [
                        c
                        for c in cards_of(alloc[trick.group])
                        if c not in gone and card_colour(c) != led
                    ]
                    if not other:
                        continue
                    data = observation_to_position(game.observation(seat))
                    data["rounds"][-1]["tricks"][t]["plays"][p][1] = card_str(other[0])
                    rejects(
                        data,
                        rf"rounds\[3\]\.tricks\[{t}\]\.plays\[{p}\]: "
                        rf"{card_str(other[0])} is illegal "
                        rf"for the observing seat \(must follow\)",
                    )
                    return
    raise AssertionError("no follow with a choice found")


def test_a_seat_cannot_play_a_colour_it_showed_it_lacks() -> None:
    observer = 0
    for seed in range(60):
        game = finished_game(4, seed)
        log = game.rounds[-1]
        hand = log.hands[observer] or 0
        for t, trick in enumerate(log.tricks):
            led = card_colour(trick.plays[0][1])
            for p, (s, card) in enumerate(trick.plays):
                if s == observer or p == 0 or card_colour(card) == led:
                    continue
                later = [
                    (u, k)
                    for u in range(t + 1, len(log.tricks))
                    if log.tricks[u].group == trick.group
                    for k, (ps, _) in enumerate(log.tricks[u].plays)
                    if ps == s
                ]
                if not later:
                    continue
                u, k = later[0]
                seen = {c for tr in log.tricks[:u] for _, c in tr.plays}
                seen |= {c for _, c in log.tricks[u].plays[:k]}
                spare = [
                    c
                    for c in range(36)
                    if card_colour(c) == led and not (hand >> c) & 1 and c not in seen
                ]
                if not spare:
                    continue
                data = observation_to_position(game.observation(observer))
                data["rounds"][-1]["tricks"][u]["plays"][k][1] = card_str(spare[0])
                rejects(
                    data,
                    rf"rounds\[3\]\.tricks\[{u}\]\.plays\[{k}\]: seat {s} already showed no "
                    rf"{COLOUR_NAMES[led]} in this pile, then played {card_str(spare[0])}",
                )
                return
    raise AssertionError("no void shown and played into found")


def _two_player_position(tricks: list[dict[str, Any]]) -> dict[str, Any]:
    """Seat 0 of a 2-player game, round 1, with the given tricks (all sky cards C1/C2)."""
    return {
        "format": "csl-position",
        "version": 1,
        "rules": {"players": 2},
        "seat": 0,
        "rounds": [
            {
                "line": ["C1"] * 8 + ["C2"],
                "first_player": 0,
                "declarations": [False, False],
                "tricks": tricks,
            }
        ],
        "hand": "B1 B2 B3 B4 R1 R2 G1 G2 G3",
        "piles": "B1 B2 R1 | B3 B4 R2 | G1 G2 G3",
    }


def _trick(leader: int, plays: list[list[Any]], winner: int, sky: str = "C1") -> dict[str, Any]:
    return {"leader": leader, "plays": plays, "winner": winner, "sky": sky}


def test_impossible_voids_are_refused() -> None:
    """Seat 1 showed no red in piles 1 and 2, but holds 4 red cards: only 3 places left."""
    tricks = [
        _trick(0, [[0, "R1"], [1, "G4"]], 0),
        _trick(0, [[0, "B1"], [1, "G5"]], 0),
        _trick(0, [[0, "B2"], [1, "G6"]], 0),
    ]
    obs = position_from_dict(_two_player_position(tricks))
    assert obs.legal_moves() and obs.to_move == 0
    tricks.append(_trick(0, [[0, "R2"], [1, "B5"]], 1))
    with pytest.raises(
        InvalidPositionError,
        match=(
            r"^rounds\[0\]\.tricks: impossible voids: "
            r"4 unseen red card\(s\) but only 3 place\(s\) left"
        ),
    ):
        position_from_dict(_two_player_position(tricks))


def test_declarations_stay_hidden_until_all_have_declared() -> None:
    for game in game_states(3, 77):
        if game.phase is Phase.WEATHER and len(game.pending_seats()) == 3:
            break
    data = observation_to_position(game.observation(1))
    assert data["rounds"][-1]["declarations"] == [None, None, None]
    data["rounds"][-1]["declarations"][1] = True
    assert position_from_dict(data).rounds[-1].declarations == [None, True, None]
    data["rounds"][-1]["declarations"][2] = False
    rejects(data, r"rounds\[0\]\.declarations\[2\]: seat 2's declaration is hidden from seat 1")


def test_position_before_allocating() -> None:
    game = Game(RulesConfig(players=5), seed=3)
    data = observation_to_position(game.observation(4))
    assert data["piles"] is None
    obs = position_from_dict(data)
    assert obs.phase is Phase.ALLOCATE and len(obs.legal_moves()) == 35
    data["rounds"][0]["declarations"][4] = True
    rejects(data, r"piles: required once the seat has declared")


def test_a_finished_round_must_be_followed_by_the_next() -> None:
    for game in game_states(3, 5):
        if game.round == 1:
            break
    data = observation_to_position(game.observation(0))
    data["rounds"].pop()
    data["hand"] = format_cards(
        sum(
            1 << c
            for t in data["rounds"][0]["tricks"]
            for s, c in ((p[0], parse_card(p[1])) for p in t["plays"])
            if s == 0
        )
    )
    data["piles"] = None
    rejects(data, r"piles: required once the seat has declared or tricks have started")


# --- files ------------------------------------------------------------------------------
def test_load_position_from_file_and_stdin(
    mid4: tuple[Game, Observation], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = position_to_json(base(mid4))
    path = tmp_path / "p.json"
    path.write_text(text, encoding="utf-8")
    assert load_position(path) == mid4[1]
    assert load_position(str(path)) == mid4[1]
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert load_position("-") == mid4[1]


def test_load_position_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidPositionError, match=r"^position file '.*nope\.json': cannot read"):
        load_position(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "csl-position",', encoding="utf-8")
    with pytest.raises(
        InvalidPositionError, match=r"^position file '.*bad\.json': bad JSON: .* line 1"
    ):
        load_position(bad)
    monkeypatch.setattr("sys.stdin", io.StringIO("nonsense"))
    with pytest.raises(InvalidPositionError, match=r"^standard input: bad JSON"):
        load_position("-")
    bad.write_text('{"format": "csl-position", "version": 1}', encoding="utf-8")
    with pytest.raises(InvalidPositionError, match=r"^rules: missing$"):
        load_position(bad)


# --- fuzzing ----------------------------------------------------------------------------
@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), value=json_values)
def test_damaged_position_never_crashes(
    mid4: tuple[Game, Observation], data: st.DataObject, value: Any
) -> None:
    position = base(mid4)
    path = data.draw(st.sampled_from(json_paths(position)[1:]))
    node: Any = position
    for key in path[:-1]:
        node = node[key]
    if data.draw(st.booleans(), label="delete") and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    try:
        position_from_dict(position)
    except InvalidPositionError as e:
        assert str(e) and "\n" not in str(e)


def test_documented_example_parses() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "positions.md").read_text(
        encoding="utf-8"
    )
    blocks = re.findall(r"```json\n(.*?)```", text, re.DOTALL)
    assert len(blocks) == 1
    obs = position_from_dict(json.loads(blocks[0]))
    assert obs.seat == 1 and obs.phase is Phase.PLAY and obs.to_move == 1
    assert sorted(str(m) for m in obs.legal_moves()) == ["G5", "R1"]
    assert position_to_json(observation_to_position(obs)) == blocks[0]


@pytest.mark.parametrize("players", PLAYERS)
def test_a_seat_still_allocating_must_be_pending(players: int) -> None:
    """piles null says the seat has not allocated; a pending list without it contradicts
    that (with pending left out, the seat is taken to be choosing)."""
    game = Game(RulesConfig(players=players), seed=players)
    game.apply(game.legal_moves(0)[0], 0)
    data = observation_to_position(game.observation(1))
    assert data["piles"] is None and data["pending"] == list(range(1, players))
    position_from_dict(copy.deepcopy(data))
    data["pending"] = [0]
    rejects(data, r"pending: \[0\] leaves out seat 1, whose piles are null")
    data["pending"] = []
    position_from_dict(data)
