"""The `csl serve` JSON API (docs/web-api.md) through Starlette's test client.

Whole games against a cheap AI (the ``test`` level: ISMCTS with a handful of
iterations), refused moves, takebacks, resume, review and export, hostile input, no
hidden card in any state, and one game's search not blocking another game.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from csl_ai.moves import move_to_json
from csl_ai.notation import card_str, cards_of, parse_cards
from csl_ai.position import position_from_dict
from csl_ai.records import load_record, replay_record
from csl_ai.web import create_app
from csl_ai.web.review import Walk

TEST_AI = "ismcts:iters=20"


def local_client(app: Any, **options: Any) -> TestClient:
    """A client as the page is one: at a loopback address, sending JSON (the server refuses
    a foreign Host and a state-changing request of another content type)."""
    return TestClient(
        app, base_url="http://127.0.0.1:8000", headers={"Content-Type": "application/json"}, **options
    )


@pytest.fixture
def records_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "records"
    folder.mkdir()
    return folder


@pytest.fixture
def client(records_dir: Path) -> Iterator[TestClient]:
    with local_client(create_app(records_dir, test_ai=TEST_AI)) as c:
        yield c


def new_game(client: TestClient, **options: Any) -> dict[str, Any]:
    body = {"players": 2, "humans": [0], "ai": "test", "seed": 7, **options}
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def human_move(state: dict[str, Any]) -> dict[str, Any]:
    """A legal move for the seat the state waits for (the viewer)."""
    board = state["board"]
    me = board["seats"][state["viewer"]]
    if board["phase"] == "allocate":
        hand = me["hand"]
        piles, start = [], 0
        for size in state["rules"]["group_sizes"]:
            piles.append(" ".join(hand[start : start + size]))
            start += size
        return {"type": "allocate", "piles": piles}
    if board["phase"] == "weather":
        return {"type": "weather", "good_weather": False}
    return {"type": "play", "card": state["legal"][-1]}


def advance(client: TestClient, state: dict[str, Any], seen: list[dict[str, Any]]) -> dict[str, Any]:
    """One request that moves the game on (a human move or a step); its answer is kept."""
    gid, viewer = state["id"], state["viewer"]
    if state["next"] == "step":
        r = client.post(f"/api/games/{gid}/step?seat={viewer}")
    else:
        assert state["next"] == "human" and state["your_turn"]
        r = client.post(f"/api/games/{gid}/move?seat={viewer}", json={"move": human_move(state)})
    assert r.status_code == 200, r.text
    answer = r.json()
    why = client.get(f"/api/games/{gid}/why?seat={viewer}")
    assert why.status_code == 200, why.text
    answer["why"] = why.json()
    seen.append(answer)
    return answer["state"]


def play_out(client: TestClient, state: dict[str, Any], seen: list[dict[str, Any]]) -> dict[str, Any]:
    while state["status"] == "playing":
        state = advance(client, state, seen)
    return state


def error_of(r: Any, status: int, kind: str) -> str:
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert error["kind"] == kind, error
    assert error["message"] and "\n" not in error["message"]
    return error["message"]


def tokens(value: Any) -> set[str]:
    """Every word of every string in a JSON value."""
    out: set[str] = set()
    if isinstance(value, str):
        out.update(value.replace("|", " ").split())
    elif isinstance(value, dict):
        for item in value.values():
            out |= tokens(item)
    elif isinstance(value, list):
        for item in value:
            out |= tokens(item)
    return out


def assert_nothing_hidden(answers: list[dict[str, Any]], record: dict[str, Any], others: set[int]) -> None:
    """No card still held by a seat in others appears in any answer's state (past rounds
    aside, whose cards were all played), and no other seat's allocation in a step."""
    checked = 0
    for answer in answers:
        state = answer["state"]
        step = answer.get("step")
        if step is not None and step["seat"] in others and step["kind"] == "allocate":
            assert step["move"] is None and step["text"] is None
        if step is not None and step["seat"] in others and step["kind"] == "weather":
            if state["board"]["phase"] == "weather":
                assert step["move"] is None and step["text"] is None
        if state["status"] != "playing":
            continue
        board = state["board"]
        rnd = record["rounds"][board["round"]]
        played = {p["card"] for t in board["tricks"] for p in t["plays"]}
        held = set()
        for s in others:
            held |= {card_str(c) for c in cards_of(parse_cards(rnd["hands"][s]))}
        if rnd["set_aside"] is not None:
            held.add(rnd["set_aside"])
        # Finished rounds (past rounds, their results, a step that ended one) are public.
        visible = {k: v for k, v in board.items() if k not in ("past_rounds", "round_results")}
        shown: list[Any] = [{**state, "board": visible}]
        if step is not None and not step["round_over"]:
            shown.append(step)
        why = answer.get("why")
        if why is not None:
            shown += [d for d in why["decisions"] if d["round"] == board["round"]]
        leaked = tokens(shown) & (held - played)
        assert not leaked, f"hidden cards {sorted(leaked)} in an answer of round {board['round']}"
        for s in others:
            seat = board["seats"][s]
            assert seat["hand"] is None and seat["piles"] is None
            if board["phase"] == "weather":
                assert seat["good_weather"] is None
        checked += 1
    assert checked > 10


# --- a whole game ----------------------------------------------------------------------------
def test_options(client: TestClient) -> None:
    options = client.get("/api/options").json()
    assert options["players"] == [2, 3, 4, 5]
    assert [level["name"] for level in options["levels"]] == ["fast", "normal", "strong", "test"]
    assert options["decks"][0] == "default"
    assert options["limits"]["json_bytes"] == 1 << 20


def test_whole_two_player_game_through_the_api(client: TestClient, records_dir: Path) -> None:
    state = new_game(client)
    assert state["your_turn"] and state["board"]["phase"] == "allocate" and state["legal"] is None
    assert state["record_id"] is None
    assert all(item["worth_text"] for item in state["board"]["line"])
    seen: list[dict[str, Any]] = []
    state = play_out(client, state, seen)
    assert state["status"] == "over" and state["next"] == "none"
    result = state["result"]
    assert result["winners"] and len(result["scores"]) == 2
    assert [s["score"] for s in state["board"]["seats"]] == result["scores"]
    steps = [answer["step"] for answer in seen if answer["step"] is not None]
    assert {step["by"] for step in steps} >= {"human", "ai"}
    estimates = [s["estimate"] for s in steps if s["by"] == "ai" and s["estimate"] is not None]
    assert estimates and all(0.0 <= e["win_probability"] <= 1.0 for e in estimates)
    assert all(s["forced"] for s in steps if s["by"] == "auto")
    plays = [s for s in steps if s["kind"] == "play"]
    assert len(plays) == 4 * 9 * 2 and all(s["trick"] is not None for s in plays)

    record_id = state["record_id"]
    assert record_id and (records_dir / f"{record_id}.json").is_file()
    saved = load_record(records_dir / f"{record_id}.json")
    assert saved["result"]["winners"] == result["winners"]
    assert saved["agents"] == ["human", TEST_AI]
    downloaded = client.get(f"/api/games/{state['id']}/record")
    assert downloaded.status_code == 200
    assert "attachment" in downloaded.headers["content-disposition"]
    assert replay_record(downloaded.json()).result().winners == tuple(result["winners"])
    listed = client.get("/api/records").json()["records"]
    assert [(e["id"], e["finished"], e["live"]) for e in listed] == [(record_id, True, False)]
    assert client.post(f"/api/games/{state['id']}/step").json()["step"] is None


def test_steps_and_why_show_the_ais_candidates_once_public(client: TestClient) -> None:
    """An AI step carries its visits and, when nothing in them is hidden (a bet once every
    bet is shown), its top candidates; `/why` lists every searched AI decision, with the
    candidates of its cards and piles once their round is over."""
    state = new_game(client)
    gid = state["id"]
    seen: list[dict[str, Any]] = []
    while state["board"]["round"] == 0:
        state = advance(client, state, seen)
        board = state["board"]
        for d in seen[-1]["why"]["decisions"] if board["round"] == 0 else ():
            assert d["seat"] == 1 and d["round"] == 0
            if d["kind"] == "play":
                assert d["text"] and d["candidates"] is None
            elif d["kind"] == "allocate":
                assert d["text"] is None and d["move"] is None and d["candidates"] is None
            else:
                assert (d["candidates"] is None) == (board["phase"] == "weather")
    ai = [a["step"] for a in seen if a["step"] is not None and a["step"]["by"] == "ai"]
    searched = [step for step in ai if step["estimate"] is not None]
    assert searched and all(step["estimate"]["visits"] >= 1 for step in searched)
    for step in ai:
        if step["kind"] == "weather":  # seat 1 bets after seat 0: the bets show at once
            cands = step["candidates"]
            assert cands and {c["text"] for c in cands} == {"yes", "no"} and step["text"] in {"yes", "no"}
            assert all(0 <= c["win_probability"] <= 1 and c["visits"] >= 0 for c in cands)
        else:
            assert step["candidates"] is None
    # The round is over: its decisions are all public now, candidates and all.
    decisions = client.get(f"/api/games/{gid}/why").json()["decisions"]
    assert {d["kind"] for d in decisions} == {"allocate", "weather", "play"}
    for d in decisions:
        assert d["text"] is not None and d["candidates"]
        assert 1 <= len(d["candidates"]) <= 5
        assert d["visits"] == next(c["visits"] for c in d["candidates"] if c["text"] == d["text"])
        assert d["label"].startswith("r1 ")
    assert client.get(f"/api/games/{gid}/why?round=1").json()["decisions"] == []
    assert len(client.get(f"/api/games/{gid}/why?round=0").json()["decisions"]) == len(decisions)
    error_of(client.get(f"/api/games/{gid}/why?round=x"), 400, "bad_request")
    error_of(client.get(f"/api/games/{gid}/why?turn=1"), 400, "bad_request")
    error_of(client.get(f"/api/games/{gid}/why?seat=1"), 400, "bad_request")


def test_a_takeback_drops_the_ai_decisions_after_it(client: TestClient) -> None:
    state = new_game(client)
    gid = state["id"]
    while state["board"]["phase"] != "play" or state["next"] != "human":
        state = advance(client, state, [])
    kinds = [d["kind"] for d in client.get(f"/api/games/{gid}/why").json()["decisions"]]
    assert kinds[:2] == ["allocate", "weather"]
    client.post(f"/api/games/{gid}/undo").raise_for_status()  # back to seat 0's bet
    kinds = [d["kind"] for d in client.get(f"/api/games/{gid}/why").json()["decisions"]]
    assert kinds == ["allocate"]


def test_round_results_say_what_each_round_did(client: TestClient) -> None:
    """Each finished round: every seat's bet and whether it held, the sky cards won (face
    down for a failed bet), the round's points, the score at its end; the last at the end
    of the game is the result."""
    state = new_game(client, seed=3)
    bets = iter([False, True, True, False])
    checked = 0
    while state["status"] == "playing":
        if state["your_turn"] and state["board"]["phase"] == "weather":
            r = client.post(f"/api/games/{state['id']}/move", json={"move": {"type": "weather", "good_weather": next(bets)}})
            state = r.json()["state"]
        else:
            state = advance(client, state, [])
        board = state["board"]
        results = board["round_results"]
        finished = board["round"] + (1 if state["status"] == "over" else 0)
        assert [r["round"] for r in results] == list(range(finished))
        for r, past in zip(results, board["past_rounds"], strict=False):
            for line in r["seats"]:
                s = line["seat"]
                won = [t["sky"] for t in past["tricks"] if t["winner"] == s]
                assert line["good_weather"] == past["declarations"][s]
                assert sorted(line["won"]) == sorted(won)
                if line["good_weather"]:
                    assert line["held"] == (not won) and line["face_down"] == line["won"]
                else:
                    assert line["held"] is None and line["face_down"] == []
            checked += 1
        if results:
            last = results[-1]["seats"]
            assert [line["score"]["total"] for line in last] == [seat["score"]["total"] for seat in board["seats"]]
            for s in range(2):
                assert sum(r["seats"][s]["points"] for r in results) == last[s]["score"]["total"]
    assert [line["score"] for line in state["board"]["round_results"][-1]["seats"]] == state["result"]["scores"]
    assert checked > 20


# --- what a board says of the tricks and the elements --------------------------------------------
KINDS = ("candy", "spider", "leopard", "star")


def check_tricks_and_elements(board: dict[str, Any]) -> None:
    """Every trick names its sky card, in progress too; each seat's `elements` are the
    face-up elements of the finished rounds and `round_elements` those won this round."""
    cards = {item["index"]: item["card"] for item in board["line"]}
    for trick in board["tricks"] + ([board["trick"]] if board["trick"] else []):
        assert trick["sky"] == cards[trick["index"]], trick
    for past in board["past_rounds"]:
        past_cards = {item["index"]: item["card"] for item in past["line"]}
        assert all(t["sky"] == past_cards[t["index"]] for t in past["tricks"])
    finished = all(item["taken_by"] is not None for item in board["line"])
    settled_rounds = board["round"] + (1 if finished else 0)
    for seat in board["seats"]:
        for kind in KINDS:
            of_kind = [t for t in seat["taken"] if t["kind"] == kind]
            settled = sum(t["count"] for t in of_kind if t["face_up"] and t["round"] < settled_rounds)
            this_round = 0 if finished else sum(t["count"] for t in of_kind if t["round"] == board["round"])
            assert seat["elements"][kind] == settled, (seat["seat"], kind, board["round"])
            assert seat["round_elements"][kind] == this_round, (seat["seat"], kind, board["round"])


def test_tricks_name_their_sky_card_and_elements_are_the_settled_ones(client: TestClient) -> None:
    """A good weather bet in round 2 (won cards turn face down); every state and review
    frame checked; mid-round the score counts only `elements`, and at the end `elements`
    with the face-down cards and good weather cards score as the engine's result."""
    from csl_ai.rules import RulesConfig
    from csl_ai.scoring import score_tallies

    state = new_game(client, seed=3)
    in_progress = mid_round = 0
    while state["status"] == "playing":
        board = state["board"]
        check_tricks_and_elements(board)
        if board["trick"] is not None and board["trick"]["plays"]:
            in_progress += 1
        if board["round"] == 0 and any(any(s["round_elements"].values()) for s in board["seats"]):
            mid_round += 1
            assert all(s["score"]["total"] == 0 and not any(s["elements"].values()) for s in board["seats"])
        gid = state["id"]
        if state["next"] == "step":
            r = client.post(f"/api/games/{gid}/step")
        else:
            move = human_move(state)
            if move["type"] == "weather":
                move["good_weather"] = board["round"] == 1
            r = client.post(f"/api/games/{gid}/move", json={"move": move})
        assert r.status_code == 200, r.text
        step = r.json()["step"]
        if step is not None and step["trick"] is not None:
            assert step["trick"]["sky"] == board["line"][step["trick"]["index"]]["card"]
        state = r.json()["state"]
    assert in_progress > 10 and mid_round > 0
    board = state["board"]
    check_tricks_and_elements(board)
    seats = board["seats"]
    assert not any(any(s["round_elements"].values()) for s in seats)
    bet_settled = [t["face_up"] for t in seats[0]["taken"] if t["round"] == 1]
    assert (bet_settled and not any(bet_settled)) or seats[0]["good_weather_cards"] == 1
    result = score_tallies(
        RulesConfig(players=2),
        [[s["elements"][k] for k in KINDS] for s in seats],
        [sum(1 for t in s["taken"] if t["face_up"]) for s in seats],
        [sum(1 for t in s["taken"] if not t["face_up"]) for s in seats],
        [s["good_weather_cards"] for s in seats],
    )
    assert [line.as_dict() for line in result.scores] == state["result"]["scores"]
    review = client.get(f"/api/records/{state['record_id']}/review").json()
    for frame in review["frames"]:
        check_tricks_and_elements(frame)


def test_the_rules_carry_the_scoring_tables_of_the_sides_asked(client: TestClient) -> None:
    """`rules.scoring` holds side B's tables when side B is asked, every entry the engine's
    points; a game's state, its rules endpoint and its review carry the same."""
    from csl_ai.rules import Kind, RulesConfig, parse_sides
    from csl_ai.scoring import score_tallies

    def engine_points(rules: RulesConfig, kind: Kind, n: int) -> int:
        elements = [[0] * 4 for _ in range(rules.players)]
        elements[0][kind] = n
        zeros = [0] * rules.players
        faceup = [(n + 1) // 2] + zeros[1:]
        return int(getattr(score_tallies(rules, elements, faceup, zeros, zeros).scores[0], kind.text))

    r = client.get("/api/rules?players=3&sides=spider=B,leopard=B&star_option=double")
    assert r.status_code == 200, r.text
    payload = r.json()
    rules = RulesConfig(players=3, sides=parse_sides("spider=B,leopard=B"))
    cards = {card["kind"]: card for card in payload["rules"]["scoring"]}
    assert [card["kind"] for card in payload["rules"]["scoring"]] == [*KINDS, "weather"]
    assert [cards[k]["side"] for k in (*KINDS, "weather")] == ["A", "B", "B", "A", None]
    for kind, last in ((Kind.SPIDER, 6), (Kind.LEOPARD, 7)):
        table = cards[kind.text]["table"]
        assert [row["count"] for row in table] == [*map(str, range(last)), f"{last}+"]
        assert [row["points"] for row in table] == [engine_points(rules, kind, n) for n in range(last + 1)]
    assert [row["points"] for row in cards["spider"]["table"]] == [0, 10, 3, 2, 1, 10, 1]
    assert cards["candy"]["table"] is None and "fewer candies" in cards["candy"]["text"]
    assert "count double" in cards["star"]["text"] and "+7" in cards["weather"]["text"]
    assert "trump" in payload["rules"]["scoring_note"]

    state = new_game(client, sides={"spider": "B", "leopard": "B"})
    game_rules = client.get(f"/api/games/{state['id']}/rules").json()["rules"]
    assert state["rules"]["scoring"] == game_rules["scoring"]
    assert game_rules["scoring"][1]["table"] == cards["spider"]["table"]
    a_side = client.get("/api/rules?players=2").json()["rules"]["scoring"]
    assert [row["points"] for row in a_side[1]["table"]] == [0, 3, 10, 4, 2, 10, 1]
    assert a_side[2]["table"] != game_rules["scoring"][2]["table"]


def test_no_hidden_card_in_any_state(client: TestClient, records_dir: Path) -> None:
    state = new_game(client, seed=11)
    seen: list[dict[str, Any]] = [{"state": state}]
    state = play_out(client, state, seen)
    record = load_record(records_dir / f"{state['record_id']}.json")
    assert_nothing_hidden(seen, record, {1})


def test_no_hidden_card_for_either_hot_seat_or_the_set_aside(client: TestClient, records_dir: Path) -> None:
    state = new_game(client, players=5, humans=[0, 3], seed=3)
    seen: list[dict[str, Any]] = [{"state": state}]
    while state["board"]["round"] == 0 and state["status"] == "playing":
        viewer = state["waiting_for"] if state["waiting_for"] is not None else 0
        if viewer != state["viewer"]:
            state = client.get(f"/api/games/{state['id']}?seat={viewer}").json()
            seen.append({"state": state})
        state = advance(client, state, seen)
    client.post(f"/api/games/{state['id']}/resign")
    record = load_record(records_dir / f"{state['record_id']}.json")
    for viewer in (0, 3):
        mine = [a for a in seen if a["state"]["viewer"] == viewer]
        assert_nothing_hidden(mine, record, {0, 1, 2, 3, 4} - {viewer})
    assert record["rounds"][0]["set_aside"]


# --- refusals ---------------------------------------------------------------------------------
def test_illegal_moves_are_refused_with_the_engines_reason(client: TestClient) -> None:
    state = new_game(client)
    gid = state["id"]
    hand = state["board"]["seats"][0]["hand"]
    r = client.post(f"/api/games/{gid}/move", json={"move": {"type": "play", "card": hand[0]}})
    assert "allocate" in error_of(r, 400, "illegal_move")
    piles = [" ".join(hand[0:3]), " ".join(hand[3:6]), " ".join(hand[5:8])]
    r = client.post(f"/api/games/{gid}/move", json={"move": {"type": "allocate", "piles": piles}})
    error_of(r, 400, "bad_request")
    r = client.post(f"/api/games/{gid}/move", json={"move": {"type": "dance"}})
    assert "move.type" in error_of(r, 400, "bad_request")
    r = client.post(f"/api/games/{gid}/move", json={"move": human_move(state), "seat": 1})
    assert "seat 0" in error_of(r, 400, "illegal_move")
    r = client.post(f"/api/games/{gid}/move", json={"card": "B1"})
    error_of(r, 400, "bad_request")
    assert client.get(f"/api/games/{gid}").json() == state
    state = advance(client, state, [])
    while state["next"] == "step":
        state = advance(client, state, [])
    assert state["board"]["phase"] == "weather"
    r = client.post(f"/api/games/{gid}/move", json={"move": {"type": "play", "card": hand[0]}})
    assert "weather" in error_of(r, 400, "illegal_move")
    while state["board"]["phase"] != "play" or state["next"] != "step":
        state = advance(client, state, [])
    r = client.post(f"/api/games/{gid}/move", json={"move": {"type": "play", "card": "B1"}})
    assert "AI" in error_of(r, 400, "illegal_move")


def test_bad_new_game_options(client: TestClient, records_dir: Path) -> None:
    cases = [
        ({"players": 6}, "players"),
        ({"players": True}, "players"),
        ({"humans": []}, "humans"),
        ({"humans": [0, 0]}, "twice"),
        ({"humans": [2]}, "seat 2"),
        ({"ai": "grandmaster"}, "unknown level"),
        ({"ai": ["fast", "fast"]}, "2 levels for 1 AI seats"),
        ({"sides": {"candy": "C"}}, "sides.candy"),
        ({"sides": "candy=Q"}, "side must be A or B"),
        ({"star_option": "triple"}, "star_option"),
        ({"deck": "../../etc/passwd"}, "unknown built-in deck"),
        ({"deck": "default", "deck_toml": "x"}, "not both"),
        ({"deck_toml": "name = 'tiny'\n[candy]\nsingle = 1\ndouble = 0\n"}, "deck_toml"),
        ({"seed": -1}, "seed"),
        ({"first_seat": 5}, "first_seat"),
    ]
    for options, words in cases:
        r = client.post("/api/games", json={"players": 2, **options})
        assert words in error_of(r, 400, "bad_options"), options
    error_of(client.post("/api/games", json={"colour": "blue"}), 400, "bad_request")
    assert not client.get("/api/records").json()["records"]


def test_a_deck_given_as_toml_or_json(client: TestClient) -> None:
    deck = {"name": "my box", "cards": {"candy": {"single": 7, "double": 4}, "spider": {"single": 8, "double": 3},
                                        "leopard": {"single": 8, "double": 3}, "star": {"single": 3}}}
    state = new_game(client, deck=deck)
    assert state["rules"]["deck"] == "my box"
    toml = "name = 'toml box'\n" + "".join(
        f"[{kind}]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()) for kind, table in deck["cards"].items()
    )
    assert new_game(client, deck_toml=toml)["rules"]["deck"] == "toml box"


# --- takebacks, hints, resign ----------------------------------------------------------------------
def test_undo_takes_back_the_last_choice_and_the_ai_moves_after_it(client: TestClient) -> None:
    state = new_game(client)
    gid = state["id"]
    assert not state["can_undo"]
    error_of(client.post(f"/api/games/{gid}/undo"), 409, "conflict")
    state = advance(client, state, [])
    while state["next"] == "step":
        state = advance(client, state, [])
    before = state
    assert before["board"]["phase"] == "weather" and before["can_undo"]
    state = advance(client, state, [])
    while state["next"] == "step":
        state = advance(client, state, [])
    assert state["board"]["phase"] == "play" and state["board"]["seats"][1]["good_weather"] is not None
    undone = client.post(f"/api/games/{gid}/undo")
    assert undone.status_code == 200, undone.text
    after = undone.json()
    assert after["board"] == before["board"]
    assert after["your_turn"] and after["board"]["phase"] == "weather"

    strict = new_game(client, takebacks=False)
    advance(client, strict, [])
    assert "off" in error_of(client.post(f"/api/games/{strict['id']}/undo"), 409, "conflict")


def test_hint_searches_the_humans_decision(client: TestClient) -> None:
    state = new_game(client)
    r = client.post(f"/api/games/{state['id']}/hint")
    assert r.status_code == 200, r.text
    hint = r.json()["hint"]
    assert hint["seat"] == 0 and hint["best"]["type"] == "allocate" and hint["iterations"] == 20
    assert hint["moves"] and len(hint["moves"]) <= 10
    state = advance(client, state, [])
    if state["next"] == "step":
        error_of(client.post(f"/api/games/{state['id']}/hint"), 409, "conflict")


def test_resign_saves_the_record_and_refuses_resume(client: TestClient, records_dir: Path) -> None:
    state = advance(client, new_game(client), [])
    gid = state["id"]
    error_of(client.get(f"/api/games/{gid}/record"), 409, "conflict")
    r = client.post(f"/api/games/{gid}/resign", json={"seat": 0})
    assert r.status_code == 200, r.text
    state = r.json()
    assert state["status"] == "resigned" and state["resigned_by"] == 0 and state["next"] == "none"
    assert state["board"]["seats"][1]["hand"] is None
    record = client.get(f"/api/games/{gid}/record").json()
    assert record["meta"]["resigned"] == 0
    error_of(client.post(f"/api/games/{gid}/resign"), 409, "conflict")
    r = client.post(f"/api/records/{state['record_id']}/resume")
    assert "resigned" in error_of(r, 409, "conflict")


# --- resume, review, export ----------------------------------------------------------------------
def test_resume_a_saved_game_after_a_restart(records_dir: Path) -> None:
    with local_client(create_app(records_dir, test_ai=TEST_AI)) as first:
        state = new_game(first, seed=21)
        for _ in range(3):
            state = advance(first, state, [])
        while state["next"] == "step":
            state = advance(first, state, [])
        record_id = state["record_id"]
        error_of(first.get(f"/api/records/{record_id}/review"), 409, "conflict")
        error_of(first.get(f"/api/records/{record_id}"), 409, "conflict")
        again = first.post(f"/api/records/{record_id}/resume")
        assert again.status_code == 200 and again.json()["id"] == state["id"]
        assert [e["live"] for e in first.get("/api/records").json()["records"]] == [True]
    with local_client(create_app(records_dir, test_ai=TEST_AI)) as second:
        r = second.post(f"/api/records/{record_id}/resume")
        assert r.status_code == 201, r.text
        resumed = r.json()
        assert resumed["id"] != state["id"] and resumed["record_id"] == record_id
        assert resumed["board"] == state["board"]
        finished = play_out(second, resumed, [])
        assert finished["status"] == "over" and finished["record_id"] == record_id
        assert load_record(records_dir / f"{record_id}.json")["result"] is not None
        r = second.post(f"/api/records/{record_id}/resume")
        assert "over" in error_of(r, 409, "conflict")


def test_resume_refuses_an_ai_without_bounds(client: TestClient, records_dir: Path) -> None:
    state = advance(client, new_game(client), [])
    record = load_record(records_dir / f"{state['record_id']}.json")
    for spec, words in (
        ("ismcts:iters=100000000000", "does not play"),
        ("ismcts:threads=256", "does not play"),
        ("alphazero", "unknown agent"),
    ):
        record["agents"][1] = spec
        path = records_dir / "hostile.json"
        path.write_text(json.dumps(record))
        r = client.post("/api/records/hostile/resume")
        assert words in error_of(r, 400, "bad_record"), spec
    record["agents"] = ["ismcts:fast", "ismcts:fast"]
    path.write_text(json.dumps(record))
    assert "no human" in error_of(client.post("/api/records/hostile/resume"), 400, "bad_record")


def test_review_upload_and_position_export(client: TestClient, records_dir: Path) -> None:
    state = play_out(client, new_game(client, seed=5), [])
    record_id = state["record_id"]
    r = client.get(f"/api/records/{record_id}/review")
    assert r.status_code == 200, r.text
    review = r.json()
    steps, frames = review["steps"], review["frames"]
    assert len(steps) == 4 * (2 + 2 + 18) and len(frames) == len(steps) + 1
    assert review["finished"] and review["result"] == state["result"]
    assert [s["agent"] for s in review["seats"]] == ["human", TEST_AI]
    first = frames[0]
    assert all(len(seat["hand"]) == 9 for seat in first["seats"])
    assert frames[-1]["phase"] == "over"
    assert steps[0]["label"] == "r1 piles" and steps[-1]["label"] == "r4 t9"

    record = load_record(records_dir / f"{record_id}.json")
    reference = replay_record(record)
    walk = Walk(reference)
    wanted = {0, 2, 3, 30, len(steps) - 1}
    for index, step in enumerate(walk):
        if index not in wanted:
            continue
        r = client.get(f"/api/records/{record_id}/position?step={index}")
        assert r.status_code == 200, r.text
        obs = position_from_dict(r.json())
        assert obs.seat == step.seat
        expected = walk.game.legal_moves(step.seat)
        assert [move_to_json(m) for m in obs.legal_moves()] == [move_to_json(m) for m in expected]
        assert move_to_json(step.move) == steps[index]["move"]
    other = client.get(f"/api/records/{record_id}/position?step=30&seat=1")
    assert other.status_code == 200 and other.json()["seat"] == 1
    error_of(client.get(f"/api/records/{record_id}/position?step={len(steps)}"), 400, "bad_request")
    error_of(client.get(f"/api/records/{record_id}/position?step=-1"), 400, "bad_request")
    error_of(client.get(f"/api/records/{record_id}/position"), 400, "bad_request")

    upload = client.post("/api/records", content=json.dumps(record))
    assert upload.status_code == 201, upload.text
    uploaded = upload.json()["id"]
    assert uploaded != record_id and client.get(f"/api/records/{uploaded}/review").json()["steps"] == steps
    record["rounds"][0]["tricks"][0]["plays"][0][1] = "G6" if record["rounds"][0]["tricks"][0]["plays"][0][1] != "G6" else "G5"
    r = client.post("/api/records", content=json.dumps(record))
    assert "rounds[0]" in error_of(r, 400, "bad_record")
    error_of(client.post("/api/records", content=b"[1, 2]"), 400, "bad_record")


def test_analysis_job_judges_the_human_seat(client: TestClient) -> None:
    state = play_out(client, new_game(client, seed=9), [])
    record_id = state["record_id"]
    r = client.post(f"/api/records/{record_id}/analysis", json={"level": "test"})
    assert r.status_code == 202, r.text
    job = r.json()["job"]
    assert job["status"] == "running" and job["seats"] == [0] and job["total"] == 4 * 11
    deadline = time.monotonic() + 60
    while job["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.05)
        job = client.get(f"/api/analyses/{job['id']}").json()["job"]
    assert job["status"] == "done", job
    decisions = job["result"]["decisions"]
    assert len(decisions) == 44 and all(d["seat"] == 0 for d in decisions)
    steps = client.get(f"/api/records/{record_id}/review").json()["steps"]
    for d in decisions:
        assert steps[d["step"]]["move"] == d["played"]
    assert any(d["win_probability"] is not None for d in decisions)
    assert job["result"]["summary"][0]["decisions"] == 44
    error_of(client.post(f"/api/records/{record_id}/analysis", json={"level": "x"}), 400, "bad_request")
    error_of(client.post(f"/api/records/{record_id}/analysis", json={"seats": [2]}), 400, "bad_request")
    error_of(client.get("/api/analyses/nope"), 404, "not_found")


# --- hostile input --------------------------------------------------------------------------------
def test_oversized_and_malformed_bodies(records_dir: Path) -> None:
    with local_client(create_app(records_dir, test_ai=TEST_AI, record_limit=4096)) as client:
        big = b'{"players": 2, "pad": "' + b"x" * (1 << 20) + b'"}'
        error_of(client.post("/api/games", content=big), 413, "too_large")
        error_of(client.post("/api/records", content=b" " * 5000), 413, "too_large")

        def chunks() -> Iterator[bytes]:
            for _ in range(100):
                yield b" " * 1024

        error_of(client.post("/api/records", content=chunks()), 413, "too_large")
        error_of(client.post("/api/games", content=b"{not json"), 400, "bad_request")
        error_of(client.post("/api/games", content=b"[1]"), 400, "bad_request")
        error_of(client.post("/api/games", content=b"\xff\xfe"), 400, "bad_request")
        error_of(client.post("/api/games", content=b"[" * 100_000), 400, "bad_request")
        state = new_game(client)
        error_of(client.post(f"/api/games/{state['id']}/move", content=b'{"move": '), 400, "bad_request")
        assert client.get(f"/api/games/{state['id']}").json() == state
        assert list(records_dir.iterdir()) == []


def test_path_like_and_unknown_ids(client: TestClient, records_dir: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    (records_dir / "evil.json").symlink_to(secret)
    for path in (
        "/api/records/..%2F..%2Fetc%2Fpasswd/review",
        "/api/records/%2e%2e/review",
        "/api/records/%2e%2e",
        "/api/records/evil",
        "/api/records/evil/review",
        "/api/records/.hidden/review",
        "/api/records/a.b/review",
        "/api/records/" + "a" * 200 + "/review",
        "/api/games/%2e%2e",
        "/api/games/..%2F..%2Fetc%2Fpasswd",
        "/api/games/" + "A" * 32,
        "/api/analyses/%2e%2e",
        "/api/nothing",
    ):
        error_of(client.get(path), 404, "not_found")
    error_of(client.post("/api/records/%2e%2e/resume"), 404, "not_found")
    error_of(client.get("/api/games"), 405, "method_not_allowed")
    assert client.get("/static/../../../../etc/passwd").status_code == 404
    assert [e["id"] for e in client.get("/api/records").json()["records"]] == []


def test_a_move_sent_to_another_games_id_cannot_touch_it(client: TestClient) -> None:
    a = new_game(client, seed=1)
    b = new_game(client, seed=2)
    assert a["id"] != b["id"] and len(a["id"]) >= 16
    r = client.post(f"/api/games/{a['id']}/move", json={"move": human_move(b)})
    assert "split of your hand" in error_of(r, 400, "illegal_move")
    assert client.get(f"/api/games/{a['id']}").json() == a
    assert client.get(f"/api/games/{b['id']}").json() == b
    r = client.post(f"/api/games/{b['id']}/move", json={"move": human_move(b)})
    assert r.status_code == 200
    assert client.get(f"/api/games/{a['id']}").json() == a


def test_a_server_error_is_json_without_a_traceback(records_dir: Path) -> None:
    app = create_app(records_dir, test_ai=TEST_AI)
    with local_client(app, raise_server_exceptions=False) as client:
        state = new_game(client)

        async def broken(game: Any) -> Any:
            raise ZeroDivisionError("boom")

        app.state.api.store.hint = broken
        r = client.post(f"/api/games/{state['id']}/hint")
        message = error_of(r, 500, "server_error")
        assert "Traceback" not in r.text and "boom" not in message
        assert client.get(f"/api/games/{state['id']}").status_code == 200


def test_the_viewer_seat_must_be_a_human_seat(client: TestClient) -> None:
    state = new_game(client)
    for seat in ("1", "9", "x", "-1"):
        error_of(client.get(f"/api/games/{state['id']}?seat={seat}"), 400, "bad_request")
    assert client.get(f"/api/games/{state['id']}?seat=0").json()["viewer"] == 0


def test_a_full_server_lets_go_only_of_games_that_lose_nothing(records_dir: Path) -> None:
    """At its limit the server lets go of a game no one moved in (never saved) or one that
    is over; a game a player moved in is never let go: a new game is refused (429)."""
    with local_client(create_app(records_dir, test_ai=TEST_AI, max_games=2)) as client:
        first = advance(client, new_game(client, seed=1), [])
        second = new_game(client, seed=2)
        third = new_game(client, seed=3)
        error_of(client.get(f"/api/games/{second['id']}"), 404, "not_found")
        assert client.get(f"/api/games/{first['id']}").json() == first
        third = advance(client, third, [])
        message = error_of(client.post("/api/games", json={"players": 2, "ai": "test"}), 429, "busy")
        assert "finish or resign" in message
        for game in (first, third):
            assert client.get(f"/api/games/{game['id']}?seat=0").json() == game
        assert sorted(p.stem for p in records_dir.glob("*.json")) == sorted([first["record_id"], third["record_id"]])
        assert client.post(f"/api/games/{first['id']}/resign").status_code == 200
        fourth = new_game(client, seed=4)
        error_of(client.get(f"/api/games/{first['id']}"), 404, "not_found")
        assert client.get(f"/api/games/{fourth['id']}").status_code == 200
        resumed = client.post(f"/api/records/{third['record_id']}/resume")
        assert resumed.status_code == 200 and resumed.json()["id"] == third["id"]
        assert len(list(records_dir.glob("*.json"))) == 2


def test_the_page_and_its_files_are_served(client: TestClient) -> None:
    from csl_ai.web.app import STATIC_DIR

    if not (STATIC_DIR / "index.html").is_file():
        pytest.skip("the page is not installed")
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    for name in sorted(p.name for p in STATIC_DIR.iterdir() if p.suffix in (".js", ".css")):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200, name
        assert ("javascript" if name.endswith(".js") else "css") in r.headers["content-type"]


def test_a_big_review_is_compressed(client: TestClient) -> None:
    state = play_out(client, new_game(client, seed=4), [])
    r = client.get(f"/api/records/{state['record_id']}/review", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers.get("content-encoding") == "gzip"
    assert len(r.json()["frames"]) == 89


# --- searches off the event loop ---------------------------------------------------------------------
class _Gate:
    """An agent that waits for the test to let it move: a search that takes as long as asked."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.entered = threading.Event()
        self.release = threading.Event()
        self.limit = agent.limit

    def act(self, obs: Any) -> Any:
        self.entered.set()
        assert self.release.wait(60)
        return self.agent.act(obs)


def test_one_games_search_does_not_block_another_game(records_dir: Path) -> None:
    app = create_app(records_dir, test_ai=TEST_AI)
    with local_client(app) as client:
        slow = new_game(client, seed=1)
        quick = new_game(client, seed=2)
        slow = advance(client, slow, [])
        assert slow["next"] == "step"
        live = app.state.api.store.get(slow["id"])
        gate = _Gate(live.table.agents[1])
        live.table.agents[1] = gate
        answers: list[Any] = []
        stepping = threading.Thread(
            target=lambda: answers.append(client.post(f"/api/games/{slow['id']}/step")), daemon=True
        )
        stepping.start()
        try:
            assert gate.entered.wait(30)
            started = time.monotonic()
            during = client.get(f"/api/games/{slow['id']}").json()
            assert during["thinking"] is True and during["next"] == "step"
            error_of(client.post(f"/api/games/{slow['id']}/step"), 409, "conflict")
            error_of(client.post(f"/api/games/{slow['id']}/undo"), 409, "conflict")
            other = client.post(f"/api/games/{quick['id']}/move", json={"move": human_move(quick)})
            assert other.status_code == 200
            assert client.get(f"/api/games/{quick['id']}").status_code == 200
            assert time.monotonic() - started < 20
            assert stepping.is_alive()
        finally:
            gate.release.set()
            stepping.join(60)
        assert answers and answers[0].status_code == 200, answers
        assert answers[0].json()["step"]["by"] == "ai"
        assert answers[0].json()["state"]["thinking"] is False


# --- csl serve ------------------------------------------------------------------------------------------
def _serve(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "csl_ai", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_default_signals,
    )


def _default_signals() -> None:
    """INT, TERM and HUP as a terminal gives them, whatever this test run inherited."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize(("name", "code", "text"), [
    ("SIGINT", 0, None), ("SIGTERM", 143, "terminated by SIGTERM"),
    ("SIGHUP", 129, "terminated by SIGHUP"),
])  # fmt: skip
def test_csl_serve_starts_answers_and_stops_on_a_signal(
    records_dir: Path, name: str, code: int, text: str | None
) -> None:
    """It stops cleanly and says so; Ctrl-C (how a server is stopped on purpose) exits 0
    with no error, SIGTERM and SIGHUP as every command does for them."""
    import httpx

    env = {**os.environ, "CSL_RECORDS_DIR": str(records_dir)}
    proc = _serve("--port", "0", env=env)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "http://127.0.0.1:" in line, line + (proc.stderr.read() if proc.poll() is not None else "")
        url = line.split("at ", 1)[1].split()[0]
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(url + "api/options", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["players"] == [2, 3, 4, 5]
        assert httpx.get(url + "api/games/x", timeout=5).json()["error"]["kind"] == "not_found"
        proc.send_signal(getattr(signal, name))
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code, err
    assert out.splitlines()[-1] == "csl serve: stopped"
    assert err.splitlines() == ([] if text is None else [f"csl: error: {text}"])


def test_csl_serve_port_in_use_and_exposed_host(records_dir: Path) -> None:
    env = {**os.environ, "CSL_RECORDS_DIR": str(records_dir)}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = _serve("--port", str(port), env=env)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 1
        assert err.strip().splitlines() == [f"csl: error: port {port} on 127.0.0.1 is already in use (choose another with --port)"]
        proc = _serve("--host", "0.0.0.0", "--port", str(port), env=env)
        out, err = proc.communicate(timeout=60)
    lines = err.strip().splitlines()
    assert lines[0].startswith("csl: warning: --host 0.0.0.0 exposes the table")
    assert len(lines) <= 2 and "Traceback" not in err
