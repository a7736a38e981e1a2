"""Game records: round trips, replay agreement, resume, files, and every corruption named."""

from __future__ import annotations

import copy
import io
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gamegen import PLAYERS, json_paths, json_values, random_rules, step
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from csl_ai.errors import CslError, InvalidRecordError
from csl_ai.game import COLOUR_NAMES, SCORE_COLUMNS, Game, Phase
from csl_ai.notation import card_colour, card_str, cards_of, parse_card, parse_cards
from csl_ai.records import (
    RECORD_FORMAT,
    RECORD_VERSION,
    RecordWriteError,
    game_to_record,
    load_record,
    record_to_json,
    replay_record,
    save_record,
)
from csl_ai.rules import RulesConfig


def random_game(players: int, seed: int, stop: int | None = None) -> tuple[Game, random.Random]:
    """A game under random rules driven by random legal moves (stop: after that many moves)."""
    rng = random.Random(seed)
    game = Game(random_rules(rng, players), seed=seed)
    moves = 0
    while not game.is_over and (stop is None or moves < stop):
        step(game, rng)
        moves += 1
    return game, rng


def assert_same_game(a: Game, b: Game) -> None:
    assert a.rules == b.rules
    assert a.sky_order == b.sky_order
    assert a.rounds == b.rounds
    assert a.phase is b.phase
    assert a.is_over == b.is_over
    if a.is_over:
        assert a.result() == b.result()
    else:
        assert a.pending_seats() == b.pending_seats()
        assert a.to_move == b.to_move


# --- round trips ------------------------------------------------------------------------
@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize("seed", range(5))
def test_finished_game_round_trips_and_replays(players: int, seed: int) -> None:
    game, _ = random_game(players, 1000 * players + seed)
    agents = [f"agent{s}" for s in range(players)]
    record = game_to_record(game, agents=agents, meta={"event": "test", "game": seed})
    assert record["format"] == RECORD_FORMAT and record["version"] == RECORD_VERSION
    assert record["agents"] == agents
    assert record["result"]["winners"] == list(game.result().winners)
    text = record_to_json(record)
    assert json.loads(text) == record
    replayed = replay_record(json.loads(text))
    assert_same_game(game, replayed)
    assert replayed.result().scores == game.result().scores
    assert replayed.result().winners == game.result().winners
    assert game_to_record(replayed, agents=agents, meta={"event": "test", "game": seed}) == record


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.sampled_from(PLAYERS), seed=st.integers(0, 2**32), stop=st.integers(0, 250))
def test_unfinished_game_replays_to_where_it_stops(players: int, seed: int, stop: int) -> None:
    game, _ = random_game(players, seed, stop)
    record = game_to_record(game)
    assert ("result" in record) == game.is_over
    replayed = replay_record(json.loads(record_to_json(record)))
    assert_same_game(game, replayed)
    assert game_to_record(replayed) == record


@pytest.mark.parametrize("players", PLAYERS)
def test_resumed_game_plays_on_like_the_original(players: int) -> None:
    for seed in range(3):
        stop = 7 + 31 * seed
        original, rng = random_game(players, 50 + seed, stop)
        record = game_to_record(original)
        resumed = replay_record(record, auto_deal=True)
        assert resumed.auto_deal
        moves = random.Random(rng.random())
        twin = random.Random()
        twin.setstate(moves.getstate())
        while not original.is_over:
            step(original, moves)
            step(resumed, twin)
        assert game_to_record(resumed) == game_to_record(original)


def test_resume_between_rounds_deals_what_the_seed_would() -> None:
    rng = random.Random(5)
    original = Game(RulesConfig(players=4), seed=77, auto_deal=False)
    original.deal()
    while original.phase is not Phase.DEAL:
        step(original, rng)
    record = game_to_record(original)
    assert len(record["rounds"]) == 1
    resumed = replay_record(record, auto_deal=True)
    assert resumed.phase is Phase.ALLOCATE
    original.deal()
    assert resumed.rounds == original.rounds
    waiting = replay_record(record)
    assert waiting.phase is Phase.DEAL and not waiting.auto_deal


def test_record_without_seed_or_agents_replays() -> None:
    game, _ = random_game(4, 8)
    record = game_to_record(game)
    del record["seed"]
    assert replay_record(record).result() == game.result()
    record["seed"] = None
    assert replay_record(record).result() == game.result()


def test_record_json_is_stable_and_compact() -> None:
    game, _ = random_game(5, 9)
    record = game_to_record(game, meta={"b": [1, 2], "a": {"x": None}})
    text = record_to_json(record)
    assert text == record_to_json(copy.deepcopy(record))
    assert text.endswith("}\n") and text.startswith('{\n  "format": "csl-record",')
    assert json.loads(text) == record
    assert max(len(line) for line in text.splitlines()) <= 110
    assert '"plays": [[' in text


def test_game_to_record_rejects_bad_agents_and_meta() -> None:
    game, _ = random_game(3, 1, 10)
    with pytest.raises(InvalidRecordError, match=r"^agents: must be 3 names"):
        game_to_record(game, agents=["a", "b"])
    with pytest.raises(InvalidRecordError, match=r"^agents: "):
        game_to_record(game, agents="abc")
    with pytest.raises(InvalidRecordError, match=r"^meta: not JSON data"):
        game_to_record(game, meta={"x": object()})
    with pytest.raises(InvalidRecordError, match=r"^meta: must be a JSON object"):
        game_to_record(game, meta=[1])  # type: ignore[arg-type]


# --- files ------------------------------------------------------------------------------
def test_save_and_load(tmp_path: Path) -> None:
    game, _ = random_game(4, 21)
    record = game_to_record(game, agents=["a", "b", "c", "d"])
    path = tmp_path / "game.json"
    save_record(record, path)
    assert path.read_text(encoding="utf-8") == record_to_json(record)
    assert load_record(path) == record
    assert load_record(str(path)) == record
    other, _ = random_game(4, 22)
    save_record(game_to_record(other), path)
    assert load_record(path) == game_to_record(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"]


def test_save_refuses_a_bad_record_and_keeps_the_old_file(tmp_path: Path) -> None:
    game, _ = random_game(2, 3)
    record = game_to_record(game)
    path = tmp_path / "game.json"
    save_record(record, path)
    before = path.read_text(encoding="utf-8")
    bad = copy.deepcopy(record)
    bad["rounds"][0]["hands"][0] = "B1 B1"
    with pytest.raises(InvalidRecordError, match=r"^rounds\[0\]\.hands\[0\]: card B1 given twice"):
        save_record(bad, path)
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game.json"]


def test_save_into_a_missing_folder_is_a_write_error(tmp_path: Path) -> None:
    game, _ = random_game(2, 3, 5)
    with pytest.raises(RecordWriteError, match=r"cannot write") as info:
        save_record(game_to_record(game), tmp_path / "nope" / "game.json")
    assert isinstance(info.value, CslError)


def test_load_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    game, _ = random_game(3, 4)
    record = game_to_record(game)
    monkeypatch.setattr("sys.stdin", io.StringIO(record_to_json(record)))
    assert load_record("-") == record


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, r"^record file '.*missing\.json': cannot read: No such file"),
        (b"{not json", r"^record file '.*': bad JSON: Expecting property name .* line 1 column 2"),
        (b"\xff\xfe", r"^record file '.*': not UTF-8 text"),
        (b"[1, 2]", r"^\(top level\): must be an object, got \[1, 2\]"),
        (b'{"format": "csl-position"}', r"^version: missing$"),
    ],
)
def test_load_record_file_errors(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "missing.json"
    if content is not None:
        path = tmp_path / "bad.json"
        path.write_bytes(content)
    with pytest.raises(InvalidRecordError, match=message):
        load_record(path)


def test_load_record_checks_header(tmp_path: Path) -> None:
    game, _ = random_game(2, 5)
    record = game_to_record(game)
    path = tmp_path / "r.json"
    for field, value, message in [
        ("format", "csl-position", r"^format: must be 'csl-record', got 'csl-position'"),
        ("version", 2, r"^version: this program reads version 1, got 2"),
        ("version", True, r"^version: this program reads version 1, got True"),
    ]:
        bad = copy.deepcopy(record)
        bad[field] = value
        path.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(InvalidRecordError, match=message):
            load_record(path)
    bad = copy.deepcopy(record)
    del bad["format"]
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(InvalidRecordError, match=r"^format: missing"):
        load_record(path)


# --- corruption -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def game4() -> Game:
    rng = random.Random(4)
    game = Game(RulesConfig(players=4), seed=404)
    while not game.is_over:
        step(game, rng)
    return game


@pytest.fixture(scope="module")
def game5() -> Game:
    rng = random.Random(5)
    game = Game(RulesConfig(players=5), seed=505)
    while not game.is_over:
        step(game, rng)
    return game


def rejects(record: dict[str, Any], message: str) -> None:
    """replay_record raises InvalidRecordError whose text matches message from the start."""
    with pytest.raises(InvalidRecordError) as info:
        replay_record(record)
    assert "\n" not in str(info.value)
    assert re.match(message, str(info.value)), str(info.value)


def other_seat_card(record: dict[str, Any], r: int, seat: int) -> str:
    """A card of another seat's hand in round r."""
    hands: list[str] = record["rounds"][r]["hands"]
    return hands[(seat + 1) % len(hands)].split()[0]


Mutation = Callable[[dict[str, Any]], None]


def _set(path: list[Any], value: Any) -> Mutation:
    def mutate(record: dict[str, Any]) -> None:
        node = record
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return mutate


def _del(path: list[Any]) -> Mutation:
    def mutate(record: dict[str, Any]) -> None:
        node = record
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return mutate


def _changed_card(record: dict[str, Any]) -> None:
    play = record["rounds"][1]["tricks"][2]["plays"][1]
    play[1] = other_seat_card(record, 1, play[0])


def _wrong_winner(record: dict[str, Any]) -> None:
    trick = record["rounds"][2]["tricks"][5]
    trick["winner"] = (trick["winner"] + 1) % 4


def _wrong_leader(record: dict[str, Any]) -> None:
    trick = record["rounds"][0]["tricks"][3]
    trick["leader"] = (trick["leader"] + 1) % 4


def _duplicated_card(record: dict[str, Any]) -> None:
    hands = record["rounds"][1]["hands"]
    cards = hands[2].split()
    cards[0] = hands[0].split()[1]
    hands[2] = " ".join(cards)


def _swapped_allocations(record: dict[str, Any]) -> None:
    allocations = record["rounds"][0]["allocations"]
    allocations[0], allocations[1] = allocations[1], allocations[0]


def _wrong_score(record: dict[str, Any]) -> None:
    record["result"]["scores"][1]["total"] += 1


def _wrong_candy(record: dict[str, Any]) -> None:
    record["result"]["scores"][3]["candy"] += 2


def _wrong_winners(record: dict[str, Any]) -> None:
    winners = record["result"]["winners"]
    record["result"]["winners"] = [(winners[0] + 1) % 4]


def _swapped_sky_order(record: dict[str, Any]) -> None:
    order = record["sky_order"]
    order[0], order[20] = order[20], order[0]


def _wrong_first_player(record: dict[str, Any]) -> None:
    record["rounds"][2]["first_player"] = (record["rounds"][2]["first_player"] + 1) % 4


def _line_text(record: dict[str, Any]) -> None:
    line = record["rounds"][1]["line"]
    line[4] = "*" if line[4] != "*" else "C1"


def _hand_short(record: dict[str, Any]) -> None:
    record["rounds"][0]["hands"][3] = " ".join(record["rounds"][0]["hands"][3].split()[1:])


def _unfinished_trick_in_past_round(record: dict[str, Any]) -> None:
    record["rounds"][1]["tricks"][8]["plays"].pop()


def _extra_round(record: dict[str, Any]) -> None:
    record["rounds"].append(copy.deepcopy(record["rounds"][0]))


def _cut_last_trick(record: dict[str, Any]) -> None:
    record["rounds"][-1]["tricks"].pop()


def _sky_of_trick(record: dict[str, Any]) -> None:
    trick = record["rounds"][3]["tricks"][0]
    trick["sky"] = "*" if trick["sky"] != "*" else "C1"


CORRUPTIONS: list[tuple[str, Mutation, str]] = [
    (
        "changed card",
        _changed_card,
        r"rounds\[1\]\.tricks\[2\]\.plays\[1\]: \w+ is not in seat \d's pile",
    ),
    (
        "wrong winner",
        _wrong_winner,
        r"rounds\[2\]\.tricks\[5\]\.winner: recorded seat \d, but seat \d wins",
    ),
    (
        "wrong leader",
        _wrong_leader,
        r"rounds\[0\]\.tricks\[3\]\.leader: recorded seat \d, but seat \d leads",
    ),
    ("duplicated card", _duplicated_card, r"rounds\[1\]\.hands\[2\]: \w+ is also in hands\[0\]"),
    (
        "allocation of another hand",
        _swapped_allocations,
        r"rounds\[0\]\.allocations\[0\]: piles .* are not a split of your hand",
    ),
    (
        "wrong total",
        _wrong_score,
        r"result\.scores\[1\]\.total: recorded -?\d+, the replay gives -?\d+",
    ),
    ("wrong candy", _wrong_candy, r"result\.scores\[3\]\.candy: recorded"),
    ("wrong winners", _wrong_winners, r"result\.winners: recorded \[\d\], the replay gives"),
    (
        "sky order",
        _swapped_sky_order,
        r"rounds\[0\]\.line_ids: recorded \[.*\], but sky_order deals",
    ),
    (
        "first player",
        _wrong_first_player,
        r"rounds\[2\]\.first_player: recorded seat \d, but seat \d holds",
    ),
    ("line text", _line_text, r"rounds\[1\]\.line\[4\]: '.*' but sky card \d+ is"),
    ("short hand", _hand_short, r"rounds\[0\]\.hands\[3\]: a 4-player hand has 9 cards, got 8"),
    (
        "unfinished past trick",
        _unfinished_trick_in_past_round,
        r"rounds\[1\]\.tricks\[8\]\.plays: every seat plays once in a finished trick, got 3",
    ),
    ("extra round", _extra_round, r"rounds: a 4-player game has 4 rounds, got 5"),
    (
        "result of an unfinished game",
        _cut_last_trick,
        r"result: recorded, but the game is not over",
    ),
    (
        "sky of a trick",
        _sky_of_trick,
        r"rounds\[3\]\.tricks\[0\]\.sky: recorded '.*', but the line's card 0",
    ),
    (
        "missing result",
        _del(["result"]),
        r"result: missing, but the recorded rounds finish the game",
    ),
    ("missing field", _del(["rounds", 2, "tricks"]), r"rounds\[2\]\.tricks: missing"),
    (
        "missing trick field",
        _del(["rounds", 2, "tricks", 1, "winner"]),
        r"rounds\[2\]\.tricks\[1\]\.winner: missing",
    ),
    ("unknown field", _set(["rounds", 0, "colour"], "red"), r"rounds\[0\]: unknown field 'colour'"),
    ("unknown top field", _set(["extra"], 1), r"\(top level\): unknown field 'extra'"),
    ("wrong header", _set(["format"], "csl-game"), r"format: must be 'csl-record', got 'csl-game'"),
    ("bad version", _set(["version"], "1"), r"version: this program reads version 1, got '1'"),
    (
        "play seat out of range",
        _set(["rounds", 0, "tricks", 0, "plays", 0], [4, "B7"]),
        r"rounds\[0\]\.tricks\[0\]\.plays\[0\]: must be a seat 0\.\.3, got 4",
    ),
    (
        "leader out of range",
        _set(["rounds", 1, "tricks", 0, "leader"], -1),
        r"rounds\[1\]\.tricks\[0\]\.leader: must be a seat 0\.\.3, got -1",
    ),
    (
        "first player out of range",
        _set(["rounds", 1, "first_player"], 9),
        r"rounds\[1\]\.first_player: must be a seat 0\.\.3, got 9",
    ),
    (
        "winner out of range",
        _set(["result", "winners"], [7]),
        r"result\.winners\[0\]: must be a seat 0\.\.3, got 7",
    ),
    (
        "bad card",
        _set(["rounds", 0, "hands", 1], "B1 X9"),
        r"rounds\[0\]\.hands\[1\]: bad card 'X9'",
    ),
    (
        "bad play card",
        _set(["rounds", 0, "tricks", 0, "plays", 1, 1], "B13"),
        r"rounds\[0\]\.tricks\[0\]\.plays\[1\]: bad card 'B13'",
    ),
    (
        "play not a pair",
        _set(["rounds", 0, "tricks", 0, "plays", 1], ["B7"]),
        r"rounds\[0\]\.tricks\[0\]\.plays\[1\]: must be a \[seat, card\] pair",
    ),
    (
        "declaration type",
        _set(["rounds", 0, "declarations", 2], "yes"),
        r"rounds\[0\]\.declarations\[2\]: must be true, false or null, got 'yes'",
    ),
    (
        "declaration missing in a past round",
        _set(["rounds", 0, "declarations", 2], None),
        r"rounds\[0\]\.declarations\[2\]: missing \(null\), but a later round follows",
    ),
    (
        "allocation missing in a past round",
        _set(["rounds", 1, "allocations", 3], None),
        r"rounds\[1\]\.allocations\[3\]: missing \(null\), but a later round follows",
    ),
    (
        "bad piles",
        _set(["rounds", 0, "allocations", 0], "B1 B2 | B3"),
        r"rounds\[0\]\.allocations\[0\]: bad allocation",
    ),
    (
        "set-aside in a 4-player game",
        _set(["rounds", 0, "set_aside"], "B1"),
        r"rounds\[0\]\.set_aside: must be null: only a 5-player game",
    ),
    ("seed type", _set(["seed"], "x"), r"seed: must be an integer or null, got 'x'"),
    ("agents count", _set(["agents"], ["a"]), r"agents: must hold one name per seat \(4\), got 1"),
    (
        "sky order not a permutation",
        _set(["sky_order"], [0] * 36),
        r"sky_order: must be an order of the sky card ids",
    ),
    (
        "rules",
        _set(["rules", "players"], "four"),
        r"rules\.players: must be an integer 2\.\.5, got 'four'",
    ),
    (
        "score type",
        _set(["result", "scores", 0, "total"], 1.5),
        r"result\.scores\[0\]\.total: must be an integer",
    ),
    (
        "trick cut short",
        _set(["rounds", 0, "tricks", 0, "plays"], [[0, "B1"]]),
        r"rounds\[0\]\.tricks\[0\]\.plays: every seat plays once in a finished trick, got 1",
    ),
]


@pytest.mark.parametrize(
    ("name", "mutate", "message"), CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS]
)
def test_corruption_is_named(game4: Game, name: str, mutate: Mutation, message: str) -> None:
    record = game_to_record(game4, agents=["a", "b", "c", "d"])
    replay_record(record)
    bad = copy.deepcopy(record)
    mutate(bad)
    rejects(bad, message)


def find_follow_choice(game: Game) -> tuple[int, int, int, int, int]:
    """(round, trick, play, card, led colour): a play that followed suit, and an off-suit card
    still in that pile, which the player may not play there."""
    for r, log in enumerate(game.rounds):
        for t, trick in enumerate(log.tricks):
            led = card_colour(trick.plays[0][1])
            for p, (seat, card) in enumerate(trick.plays[1:], start=1):
                if card_colour(card) != led:
                    continue
                gone = 0
                for earlier in log.tricks[:t]:
                    for s, c in earlier.plays:
                        if s == seat:
                            gone |= 1 << c
                allocation = log.allocations[seat]
                assert allocation is not None
                left = allocation[trick.group] & ~gone
                others = [c for c in cards_of(left) if card_colour(c) != led]
                if others:
                    return r, t, p, others[0], led
    raise AssertionError("no follow with a choice in this game")


def test_illegal_follow_is_named(game4: Game) -> None:
    r, t, p, card, led = find_follow_choice(game4)
    record = game_to_record(game4)
    record["rounds"][r]["tricks"][t]["plays"][p][1] = card_str(card)
    rejects(
        record,
        rf"rounds\[{r}\]\.tricks\[{t}\]\.plays\[{p}\]: {card_str(card)} does not follow: "
        rf"seat \d must follow {COLOUR_NAMES[led]}$",
    )


def test_winner_of_an_unfinished_trick_is_refused(game4: Game) -> None:
    record = game_to_record(game4)
    del record["result"]
    record["rounds"][3]["tricks"][8]["plays"].pop()
    rejects(record, r"rounds\[3\]\.tricks\[8\]\.winner: must be null while the trick is unfinished")
    record["rounds"][3]["tricks"][8]["winner"] = None
    rejects(record, r"rounds\[3\]\.tricks\[8\]\.sky: must be null while the trick is unfinished")
    record["rounds"][3]["tricks"][8]["sky"] = None
    assert replay_record(record).current_trick is not None


def test_play_out_of_turn_is_named(game4: Game) -> None:
    record = game_to_record(game4)
    plays = record["rounds"][1]["tricks"][4]["plays"]
    plays[1], plays[2] = plays[2], plays[1]
    rejects(
        record, r"rounds\[1\]\.tricks\[4\]\.plays\[1\]: it is seat \d's turn to play, not seat \d's"
    )


def test_play_before_declarations_is_named(game4: Game) -> None:
    record = game_to_record(game4)
    del record["result"]
    record["rounds"][3]["declarations"][1] = None
    rejects(
        record,
        r"rounds\[3\]\.tricks\[0\]\.plays\[0\]: "
        r"cannot play \w+ now: the game is in the weather phase",
    )


def test_declaration_before_allocations_is_named(game4: Game) -> None:
    record = game_to_record(game4)
    del record["result"]
    last = record["rounds"][3]
    last["allocations"][2] = None
    last["tricks"] = []
    rejects(
        record,
        r"rounds\[3\]\.declarations\[0\]: cannot declare now: the game is in the allocate phase",
    )


def test_five_player_set_aside_is_checked(game5: Game) -> None:
    record = game_to_record(game5)
    replay_record(record)
    assert all(parse_card(r["set_aside"]) >= 0 for r in record["rounds"])
    for r, log in enumerate(game5.rounds):
        assert record["rounds"][r]["set_aside"] == card_str(cards_of(log.set_aside or 0)[0])
    bad = copy.deepcopy(record)
    bad["rounds"][1]["set_aside"] = bad["rounds"][1]["hands"][3].split()[2]
    rejects(bad, r"rounds\[1\]\.set_aside: \w+ is also in hands\[3\]")
    bad = copy.deepcopy(record)
    bad["rounds"][2]["set_aside"] = None
    rejects(bad, r"rounds\[2\]\.set_aside: must be a card like 'B7', got None")
    bad = copy.deepcopy(record)
    hands = bad["rounds"][0]["hands"]
    aside = bad["rounds"][0]["set_aside"]
    cards = hands[1].split()
    bad["rounds"][0]["set_aside"], cards[0] = cards[0], aside
    hands[1] = " ".join(sorted(cards, key=parse_card))
    rejects(bad, r"rounds\[0\]\.allocations\[1\]: piles .* are not a split of your hand")


def test_two_player_card_not_in_use() -> None:
    game, _ = random_game(2, 6)
    record = game_to_record(game)
    hands = record["rounds"][0]["hands"]
    hands[0] = " ".join([*hands[0].split()[:-1], "B7"])
    rejects(record, r"rounds\[0\]\.hands\[0\]: B7 not in use in this game")


# --- fuzzing: any damage gives InvalidRecordError, never another exception --------------
@pytest.fixture(scope="module")
def fuzz_base() -> dict[str, Any]:
    game, _ = random_game(3, 31)
    return game_to_record(game)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), value=json_values)
def test_damaged_record_never_crashes(
    fuzz_base: dict[str, Any], data: st.DataObject, value: Any
) -> None:
    record = copy.deepcopy(fuzz_base)
    paths = json_paths(record)[1:]
    path = data.draw(st.sampled_from(paths))
    node: Any = record
    for key in path[:-1]:
        node = node[key]
    if data.draw(st.booleans(), label="delete") and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    try:
        replay_record(record)
    except InvalidRecordError as e:
        assert str(e) and "\n" not in str(e)


def test_replay_rejects_a_non_object() -> None:
    values: list[object] = [None, [], "record", 3]
    for value in values:
        with pytest.raises(InvalidRecordError, match=r"^\(top level\): must be an object"):
            replay_record(value)


def test_hands_are_cards_of_the_deal(game4: Game) -> None:
    record = game_to_record(game4)
    for r, log in enumerate(game4.rounds):
        assert [parse_cards(h) for h in record["rounds"][r]["hands"]] == log.hands
        assert record["rounds"][r]["set_aside"] is None
    assert set(record["result"]["scores"][0]) == set(SCORE_COLUMNS)


def test_documented_example_replays() -> None:
    text = (Path(__file__).resolve().parent.parent / "docs" / "records.md").read_text(
        encoding="utf-8"
    )
    blocks = [b for b in re.findall(r"```json\n(.*?)```", text, re.DOTALL) if '"format": "csl-record"' in b]
    assert len(blocks) == 1
    record = json.loads(blocks[0])
    game = replay_record(record)
    assert game.is_over and game.players == 3
    assert record_to_json(record) == blocks[0]
    assert game_to_record(game, agents=record["agents"], meta=record["meta"]) == record
