"""Candy Lab at the `csl serve` table: its JSON API (docs/web-api.md, "Candy Lab") through
Starlette's test client, and one whole game by clicks in headless Chromium.

Whole games against a cheap AI (ISMCTS with 30 iterations), the saved record, no hidden
card in any answer (checked against the game's full truth), refused requests that change
nothing, a bounded store, the AI moving while a second request comes, and the guard.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.request
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

from test_web_api import error_of, local_client

from csl_ai.bits import bits
from csl_ai.candylab.moves import PLAY, arg_a, kind
from csl_ai.candylab.records import load_record, replay_record
from csl_ai.web import create_app
from csl_ai.web.candylab import STALE_AFTER_S, LabGame

TEST_AI = "ismcts:iters=30"
BASE = "/api/candylab"


@pytest.fixture
def records_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "records"
    folder.mkdir()
    return folder


@pytest.fixture
def app(records_dir: Path) -> Any:
    return create_app(records_dir)


@pytest.fixture
def client(app: Any) -> Iterator[TestClient]:
    with local_client(app) as c:
        yield c


def new_game(client: TestClient, **options: Any) -> dict[str, Any]:
    body = {"players": 2, "humans": [0], "ai": TEST_AI, "seed": 7, **options}
    r = client.post(f"{BASE}/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def live(app: Any, state: dict[str, Any]) -> LabGame:
    return app.state.candylab.store.games[state["id"]]


def order_ids(value: Any) -> set[int]:
    """Every order card in a JSON value (an object with id, text, colours and points)."""
    out: set[int] = set()
    if isinstance(value, dict):
        if {"id", "text", "colours", "points"} <= value.keys():
            out.add(value["id"])
        for v in value.values():
            out |= order_ids(v)
    elif isinstance(value, list):
        for v in value:
            out |= order_ids(v)
    return out


def assert_nothing_hidden(app: Any, state: dict[str, Any]) -> None:
    """The answer shows the viewer's hand and no other, and no order card the viewer has not
    seen: checked against the game's whole truth (every hand, the pile, who saw what)."""
    g = live(app, state).game
    viewer = state["seat"]
    truth = g.state
    for hand in state["hands"]:
        if hand["seat"] == viewer:
            assert [c["id"] for c in hand["cards"]] == bits(truth.hands[viewer])
        else:
            assert hand["cards"] is None
        assert hand["size"] == truth.hands[hand["seat"]].bit_count()
    seen = set(bits(truth.hands[viewer])) | {c for c in truth.face_up if c >= 0}
    seen |= {c for stack in truth.stacks for c in stack}
    for event, mask in g.log:
        if event.taken >= 0 and mask >> viewer & 1:
            seen.add(event.taken)
        if event.turned_up >= 0:
            seen.add(event.turned_up)
        if kind(event.move) == PLAY:
            seen.add(arg_a(event.move))
    shown = order_ids(state)
    assert shown <= seen, f"seat {viewer} is shown cards it never saw: {sorted(shown - seen)}"
    assert not shown & set(truth.pile), "a face-down card of the pile is shown"
    for item in state["events"]:
        event, mask = g.log[item["index"]]
        assert item["seat"] == event.actor
        if item["card"] is not None:
            assert mask >> viewer & 1 and item["card"]["id"] == event.taken
    if not state["over"]:
        assert state["seed"] is None and state["winners"] is None
    text = json.dumps(state)
    assert "pile\":" not in text.replace('"pile_size"', "")


def play_out(client: TestClient, app: Any, state: dict[str, Any], pick: int = -1) -> tuple[dict[str, Any], int]:
    """Play the viewer's moves (the pick-th legal one each time) until the game is over,
    checking every answer; the last state and the moves made."""
    moves = 0
    while not state["over"]:
        assert state["your_turn"] and state["legal_moves"], state
        assert state["current"] == state["seat"] and not state["thinking"]
        choice = state["legal_moves"][pick % len(state["legal_moves"])]
        assert choice["text"] and choice["kind"] in ("play", "give_back", "stop", "draw", "effect")
        r = client.post(f"{BASE}/games/{state['id']}/move", json={"seat": state["seat"], "move": choice["move"]})
        assert r.status_code == 200, r.text
        state = r.json()
        assert_nothing_hidden(app, state)
        moves += 1
        assert moves < 500
    return state, moves


# --- API ---------------------------------------------------------------------------------------
def test_options(client: TestClient) -> None:
    options = client.get(f"{BASE}/options").json()
    assert options["players"] == [2, 3, 4]
    assert [level["name"] for level in options["levels"]] == ["fast", "normal", "strong"]
    assert options["default_level"] == "normal" and options["limits"]["live_games"] == 64


def test_a_whole_game_through_the_api_is_saved_as_a_record(client: TestClient, app: Any, records_dir: Path) -> None:
    state = new_game(client)
    assert state["players"] == 2 and state["seat"] == 0 and state["current"] == 0
    assert state["phase"] == "main" and state["your_turn"] and not state["over"]
    assert len(state["belt"]) == 27 and len(state["hands"][0]["cards"]) == 6
    assert state["third_hand_size"] == 6 and state["pile_size"] == 42 - 18 - 3
    assert state["agents"] == ["human", TEST_AI] and state["humans"] == [0]
    assert {b["colour"] for b in state["belt"]} == {"blue", "orange", "pink"}
    assert all(1 <= b["value"] <= 5 and isinstance(b["effect"], str) for b in state["belt"])
    for move in state["legal_moves"]:
        if move["kind"] == "play":
            assert move["run"] and move["text"].startswith("play #")
    assert_nothing_hidden(app, state)
    assert list(records_dir.iterdir()) == []

    state, moves = play_out(client, app, state)
    assert moves > 5
    assert state["over"] and state["legal_moves"] == [] and not state["your_turn"]
    assert state["end"] in ("last bar", "last card") and state["seed"] == 7
    g = live(app, state).game
    assert state["scores"] == g.scores() and state["winners"] == g.winners()
    assert state["record_id"] and state["record_id"].startswith("candylab-game-") and state["save_error"] is None
    (path,) = records_dir.iterdir()
    assert path.name == f"{state['record_id']}.json"
    record = load_record(path)
    assert record["agents"] == ["human", TEST_AI] and record["seed"] == 7
    assert record["result"]["scores"] == state["scores"] and record["result"]["winners"] == state["winners"]
    assert replay_record(record).scores() == state["scores"]
    assert client.get(f"{BASE}/games/{state['id']}").json() == state
    r = client.post(f"{BASE}/games/{state['id']}/move", json={"seat": 0, "move": 0})
    assert "over" in error_of(r, 409, "conflict")


def test_the_same_seed_and_moves_give_the_same_game(client: TestClient, app: Any) -> None:
    """The AI seats are seeded from the game seed: a game replays exactly."""
    a, _ = play_out(client, app, new_game(client, seed=3), pick=0)
    b, _ = play_out(client, app, new_game(client, seed=3), pick=0)
    assert live(app, a).game.moves == live(app, b).game.moves


@pytest.mark.parametrize("players", [3, 4])
def test_the_ai_seats_move_first_when_a_human_is_not_first(client: TestClient, app: Any, players: int) -> None:
    state = new_game(client, players=players, humans=[1], seed=5)
    assert state["seat"] == 1 and state["current"] == 1 and state["your_turn"]
    assert state["events"] and all(e["seat"] == 0 for e in state["events"])
    assert state["third_hand_size"] == 0 and len(state["hands"]) == players
    assert_nothing_hidden(app, state)
    state, _ = play_out(client, app, state, pick=0)
    assert state["over"] and len(state["scores"]) == players


def test_hot_seat_each_human_sees_only_their_hand(client: TestClient, app: Any) -> None:
    state = new_game(client, players=3, humans=[0, 2], seed=9)
    gid = state["id"]
    assert state["seat"] == 0
    other = client.get(f"{BASE}/games/{gid}?seat=2").json()
    assert other["seat"] == 2 and other["hands"][0]["cards"] is None and other["hands"][2]["cards"]
    assert other["legal_moves"] == [] and not other["your_turn"]
    assert_nothing_hidden(app, other)
    for seat in ("1", "9", "x", "-1", "00000"):
        error_of(client.get(f"{BASE}/games/{gid}?seat={seat}"), 400, "bad_request")
    error_of(client.get(f"{BASE}/games/{gid}?peek=1"), 400, "bad_request")
    before = live(app, state).game.moves[:]
    move = state["legal_moves"][0]["move"]
    r = client.post(f"{BASE}/games/{gid}/move", json={"seat": 2, "move": move})
    assert "seat 0's turn" in error_of(r, 409, "conflict")
    assert live(app, state).game.moves == before
    r = client.post(f"{BASE}/games/{gid}/move", json={"move": move})
    assert r.status_code == 200 and r.json()["seat"] == 0


def test_refused_moves_change_nothing(client: TestClient, app: Any) -> None:
    state = new_game(client)
    gid = state["id"]
    legal = {m["move"] for m in state["legal_moves"]}
    illegal = next(m for m in range(1, 4096) if m not in legal)
    g = live(app, state).game
    before = (g.moves[:], client.get(f"{BASE}/games/{gid}").json())
    refused = [
        ({"seat": 0, "move": illegal}, 400, "illegal_move"),
        ({"seat": 0, "move": 1 << 22}, 400, "bad_request"),
        ({"seat": 0, "move": -1}, 400, "bad_request"),
        ({"seat": 0, "move": "play #10 P @0"}, 400, "bad_request"),
        ({"seat": 0, "move": True}, 400, "bad_request"),
        ({"seat": 0}, 400, "bad_request"),
        ({"seat": 1, "move": min(legal)}, 400, "bad_request"),
        ({"seat": "0", "move": min(legal)}, 400, "bad_request"),
        ({"seat": 5, "move": min(legal)}, 400, "bad_request"),
        ({"seat": 0, "move": min(legal), "undo": True}, 400, "bad_request"),
    ]
    for body, status, kind_ in refused:
        message = error_of(client.post(f"{BASE}/games/{gid}/move", json=body), status, kind_)
        assert "Traceback" not in message
        assert (g.moves, client.get(f"{BASE}/games/{gid}").json()) == before, body
    error_of(client.post(f"{BASE}/games/{gid}/move?seat=0", json={"seat": 0, "move": min(legal)}), 400, "bad_request")
    error_of(client.post(f"{BASE}/games/{gid}/move", content=b'{"move": '), 400, "bad_request")
    error_of(client.post(f"{BASE}/games/{gid}/move", content=b"[1]"), 400, "bad_request")
    big = b'{"move": 1, "pad": "' + b"x" * (1 << 20) + b'"}'
    error_of(client.post(f"{BASE}/games/{gid}/move", content=big), 413, "too_large")
    r = client.post(f"{BASE}/games/{gid}/move", content=json.dumps({"seat": 0, "move": min(legal)}),
                    headers={"Content-Type": "text/plain"})
    error_of(r, 415, "unsupported_media_type")
    r = client.post(f"{BASE}/games/{gid}/move", json={"seat": 0, "move": min(legal)},
                    headers={"Origin": "http://evil.example"})
    error_of(r, 403, "forbidden")
    error_of(client.get(f"{BASE}/games/{gid}", headers={"Host": "attacker.example"}), 403, "forbidden")
    assert (g.moves, client.get(f"{BASE}/games/{gid}").json()) == before
    # A move of another game (legal there) does not touch this one.
    other = new_game(client, seed=8)
    r = client.post(f"{BASE}/games/{other['id']}/move", json={"seat": 0, "move": min(legal)})
    assert r.status_code in (200, 400)
    assert (g.moves, client.get(f"{BASE}/games/{gid}").json()) == before


def test_unknown_and_path_like_ids(client: TestClient) -> None:
    for path in (
        f"{BASE}/games/" + "A" * 32,
        f"{BASE}/games/%2e%2e",
        f"{BASE}/games/..%2F..%2Fetc%2Fpasswd",
        f"{BASE}/games/short",
        f"{BASE}/games/" + "A" * 200,
    ):
        error_of(client.get(path), 404, "not_found")
        error_of(client.post(f"{path}/move", json={"seat": 0, "move": 1}), 404, "not_found")
    error_of(client.get(f"{BASE}/games"), 405, "method_not_allowed")


@pytest.mark.parametrize(
    "body",
    [
        {"players": 1},
        {"players": 5},
        {"players": "2"},
        {"players": True},
        {"humans": []},
        {"humans": [2]},
        {"humans": [0, 0]},
        {"humans": "0"},
        {"humans": [-1]},
        {"level": "ultra"},
        {"level": 3},
        {"level": "fast", "ai": TEST_AI},
        {"ai": "bogus"},
        {"ai": "ismcts:iters=10000000"},
        {"ai": "ismcts:ms=600000"},
        {"ai": "ismcts:iters=100,threads=4"},
        {"ai": 7},
        {"seed": -1},
        {"seed": "x"},
        {"seed": 1 << 63},
    ],
)
def test_bad_new_game_options(client: TestClient, app: Any, records_dir: Path, body: dict[str, Any]) -> None:
    r = client.post(f"{BASE}/games", json={"players": 2, **body} if "players" not in body else body)
    message = error_of(r, 400, "bad_options")
    assert next(iter(body)) in message
    assert not app.state.candylab.store.games and not list(records_dir.iterdir())


def test_unknown_new_game_field(client: TestClient, app: Any) -> None:
    assert "deck" in error_of(client.post(f"{BASE}/games", json={"deck": "x"}), 400, "bad_request")
    error_of(client.post(f"{BASE}/games", content=b"{nope"), 400, "bad_request")
    assert not app.state.candylab.store.games


def test_the_defaults_and_a_level(client: TestClient) -> None:
    r = client.post(f"{BASE}/games", json={"level": "fast"})
    assert r.status_code == 201, r.text
    state = r.json()
    assert state["players"] == 2 and state["agents"] == ["human", "ismcts:fast"]
    assert state["seed"] is None  # a fresh seed stays secret while the game goes on


def test_the_store_is_bounded(records_dir: Path) -> None:
    """At its limit the store lets go of a finished game, else of one untouched for
    STALE_AFTER_S; else it refuses the new game (429) and keeps every game played."""
    app = create_app(records_dir, max_games=2)
    store = app.state.candylab.store
    now = [1000.0]
    store._clock = lambda: now[0]
    with local_client(app) as client:
        a = new_game(client, seed=1)
        b = new_game(client, seed=2)
        assert "limit" in error_of(client.post(f"{BASE}/games", json={"ai": TEST_AI}), 429, "busy")
        assert set(store.games) == {a["id"], b["id"]}
        a, _ = play_out(client, app, a)
        c = new_game(client, seed=3)
        assert set(store.games) == {b["id"], c["id"]}
        error_of(client.get(f"{BASE}/games/{a['id']}"), 404, "not_found")
        now[0] += STALE_AFTER_S - 1
        client.get(f"{BASE}/games/{c['id']}")
        error_of(client.post(f"{BASE}/games", json={"ai": TEST_AI}), 429, "busy")
        now[0] += 2
        d = new_game(client, seed=4)
        assert set(store.games) == {c["id"], d["id"]}


class _Gate:
    """An AI that waits for a signal before it moves: the game stays busy meanwhile."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.name = agent.name
        self.entered = threading.Event()
        self.go = threading.Event()

    def act(self, obs: Any) -> int:
        self.entered.set()
        assert self.go.wait(30)
        return int(self.agent.act(obs))


def test_no_move_while_the_ai_is_moving(client: TestClient, app: Any) -> None:
    state = new_game(client, seed=11)
    lab = live(app, state)
    gate = _Gate(lab.agents[1])
    lab.agents[1] = gate
    answer: dict[str, Any] = {}

    def move() -> None:
        # The move that has the AI search may be a few moves away: stop after that one.
        s = state
        while not s["over"]:
            r = client.post(f"{BASE}/games/{s['id']}/move", json={"seat": 0, "move": s["legal_moves"][0]["move"]})
            answer["status"] = r.status_code
            s = r.json()
            if r.status_code != 200 or gate.entered.is_set():
                break
        answer["state"] = s

    quick = new_game(client, seed=12)
    worker = threading.Thread(target=move, daemon=True)
    worker.start()
    try:
        assert gate.entered.wait(30)
        started = time.monotonic()
        r = client.post(f"{BASE}/games/{quick['id']}/move", json={"seat": 0, "move": quick["legal_moves"][0]["move"]})
        assert r.status_code == 200 and time.monotonic() - started < 20  # another game goes on
        busy = client.get(f"{BASE}/games/{state['id']}").json()
        assert busy["thinking"] and busy["current"] == 1 and busy["legal_moves"] == [] and not busy["your_turn"]
        assert_nothing_hidden(app, busy)
        r = client.post(f"{BASE}/games/{state['id']}/move", json={"seat": 0, "move": 1})
        assert "AI" in error_of(r, 409, "conflict")
        assert worker.is_alive()
    finally:
        gate.go.set()
        worker.join(30)
    assert answer["status"] == 200 and not answer["state"]["thinking"]


def test_an_ai_failure_is_a_500_without_a_traceback(records_dir: Path) -> None:
    app = create_app(records_dir)
    with local_client(app, raise_server_exceptions=False) as client:
        state = new_game(client, seed=11)

        class Broken:
            name = "broken"

            def act(self, obs: Any) -> int:
                raise ZeroDivisionError("boom: a secret card #12")

        live(app, state).agents[1] = Broken()
        s = state
        while True:
            r = client.post(f"{BASE}/games/{s['id']}/move", json={"seat": 0, "move": s["legal_moves"][0]["move"]})
            if r.status_code != 200:
                break
            s = r.json()
        message = error_of(r, 500, "server_error")
        assert "Traceback" not in r.text and "boom" not in r.text
        after = client.get(f"{BASE}/games/{state['id']}").json()
        assert after["ai_error"] and "boom" not in after["ai_error"] and not after["thinking"]
        assert message


def test_the_token_guards_candy_lab_too(records_dir: Path) -> None:
    token = "s3cret-token-for-tests"
    app = create_app(records_dir, host="0.0.0.0", port=8000, token=token)
    with TestClient(app, base_url="http://192.168.1.20:8000", headers={"Content-Type": "application/json"},
                    follow_redirects=False) as client:
        error_of(client.post(f"{BASE}/games", json={"ai": TEST_AI}), 403, "forbidden")
        error_of(client.get("/candylab"), 403, "forbidden")
        assert not app.state.candylab.store.games
        with_cookie = {"Cookie": f"csl-token-8000={token}"}
        r = client.post(f"{BASE}/games", json={"ai": TEST_AI}, headers=with_cookie)
        assert r.status_code == 201, r.text
        assert client.get("/candylab", headers={"X-CSL-Token": token}).status_code == 200


def test_the_page_is_served_and_linked(client: TestClient) -> None:
    page = client.get("/candylab")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in page.headers["content-security-policy"]
    html = page.text
    assert '<script type="module" src="/static/candylab.js">' in html
    assert not re.search(r"\sstyle\s*=|\son[a-z]+\s*=|<style\b", html)
    for name in ("candylab.js", "candylab.css"):
        assert client.get(f"/static/{name}").status_code == 200
    assert 'href="/candylab"' in client.get("/").text


# --- the page in a browser -----------------------------------------------------------------------
try:
    from playwright.sync_api import ConsoleMessage, sync_playwright
    from test_web_browser import CHROMIUM, CHROMIUM_ARGS, serving
except ImportError:  # no browser tooling here: the browser test is skipped
    CHROMIUM = None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, Any]]:
    """The app under uvicorn in a background thread: (base URL, records folder, app)."""
    records = tmp_path_factory.mktemp("records")
    app = create_app(records, max_searches=1)
    with serving(app, "csl-serve-candylab-test") as base:
        yield base, records, app


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium executable or playwright")
def test_play_a_whole_game_in_the_browser(server: tuple[str, Path, Any], tmp_path: Path) -> None:
    """From the main page's link to the end of a 2-player game against ismcts:iters=30, by
    clicking legal moves; the final scores shown are the server's and the record's."""
    base, records, app = server
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console: {message.text}")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900}, reduced_motion="reduce")
        try:
            page.on("console", on_console)
            page.on("pageerror", lambda error: problems.append(f"page error: {error.stack or error}"))
            page.set_default_timeout(20_000)
            page.goto(f"{base}/")
            page.get_by_role("link", name="Candy Lab").click()
            page.wait_for_url(re.compile(r"/candylab$"))
            page.goto(f"{base}/candylab?ai={TEST_AI}")
            assert page.locator("#lab-level").input_value() == "custom"
            page.select_option("#lab-players", "2")
            page.click("#lab-start")
            page.wait_for_url(re.compile(r"[?&]game="))
            game_id = re.search(r"[?&]game=([A-Za-z0-9_-]+)", page.url).group(1)  # type: ignore[union-attr]
            table = page.locator("#lab-table")
            clicks = 0
            while True:
                page.wait_for_selector("#lab-table[data-ready]", state="attached")
                if table.get_attribute("data-ready") == "over":
                    break
                assert table.get_attribute("data-ready") == "human"
                state = json.loads(urllib.request.urlopen(f"{base}{BASE}/games/{game_id}", timeout=10).read())
                if clicks == 0:
                    assert page.locator("#lab-belt .bar").count() == len(state["belt"]) == 27
                    assert page.locator("#lab-hand .order").count() == 6
                    assert page.locator("#lab-face-up .order").count() == 3
                buttons = page.locator("#lab-moves button.move")
                assert buttons.count() == len(state["legal_moves"]) > 0
                texts = buttons.all_inner_texts()
                assert texts == [m["text"] for m in state["legal_moves"]]
                # Vary the choices (first, last, middle) so that every kind of move is met.
                buttons.nth([0, -1, len(texts) // 2][clicks % 3] % len(texts)).click()
                clicks += 1
                assert clicks < 400, "the game does not end"
            final = json.loads(urllib.request.urlopen(f"{base}{BASE}/games/{game_id}", timeout=10).read())
            assert final["over"]
            shown = [int(t) for t in page.locator("#lab-seats td.score").all_inner_texts()]
            assert shown == final["scores"]
            assert page.locator("#lab-end").is_visible()
            winners = page.locator("#lab-winners").inner_text()
            assert all(f"{final['scores'][s]}" in winners for s in range(2)) and "win" in winners
            assert page.locator("#lab-moves button").count() == 0
            record = json.loads((records / f"{final['record_id']}.json").read_text())
            assert record["result"]["scores"] == shown
            assert final["record_id"] in page.locator("#lab-record").inner_text()
            page.screenshot(path=str(tmp_path / "candylab-over.png"))
        except Exception:
            page.screenshot(path=str(tmp_path / "candylab-failure.png"), full_page=True)
            if problems:
                raise AssertionError("\n".join(problems)) from None
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
