"""A `csl serve` server that any web page the user visits cannot use, that refuses
without changing anything, that never floods the records folder, and that plays fair.

Hostile requests (a foreign Host or Origin, a cross-site fetch, a non-JSON state-changing
request, a missing token, a seat that is not the asker's, a bad move) are sent to every
route, and the games and the records folder are compared before and after: a refused
request changes nothing. The fair-play rules: a record opens for review only once its
game cannot be played on, a hot-seat answer shows no human's secret choice, a takeback
is only of one's own choice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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
    from starlette.routing import Route
    from starlette.testclient import TestClient

from test_web_api import TEST_AI, advance, error_of, human_move, local_client, new_game, play_out

from csl_ai.records import load_record
from csl_ai.web import create_app
from csl_ai.web.app import STATIC_DIR
from csl_ai.web.guard import CONTENT_SECURITY_POLICY, SECURITY_HEADERS, ServerGuard, same_origin, split_host

BASE = "http://127.0.0.1:8000"
EVIL = "http://evil.example"


@pytest.fixture
def records_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "records"
    folder.mkdir()
    return folder


@pytest.fixture
def app(records_dir: Path) -> Any:
    return create_app(records_dir, test_ai=TEST_AI)


@pytest.fixture
def client(app: Any) -> Iterator[TestClient]:
    with local_client(app) as c:
        yield c


def snapshot(app: Any, records_dir: Path) -> dict[str, Any]:
    """Everything a request could change: each live game (its moves, status, takebacks,
    record file), the analysis jobs, and every file of the records folder."""
    api = app.state.api
    games = {
        gid: (
            g.status, g.version, g.resigned_by, g.thinking, str(g.record_path),
            json.dumps(g.table.record(), sort_keys=True), len(g.table._history),
        )
        for gid, g in api.store.games.items()
    }
    files = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(records_dir.iterdir())}
    return {"games": games, "jobs": sorted(api.jobs.jobs), "files": files}


# --- Host, Origin, content type --------------------------------------------------------------
def test_a_foreign_host_is_refused_before_anything_is_read(client: TestClient, records_dir: Path) -> None:
    """DNS rebinding: a page of attacker.example that resolves to 127.0.0.1 reaches the
    server under its own name; the server answers no such Host."""
    state = advance(client, new_game(client), [])
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.evil.example", "localhost.", "", "a b"):
        r = client.get("/api/records", headers={"Host": host})
        assert "Host" in error_of(r, 403, "forbidden"), host
        assert str(records_dir) not in r.text and state["record_id"] not in r.text
    assert client.get("/", headers={"Host": "attacker.example"}).status_code == 403
    for host in ("127.0.0.1", "127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000", "[::1]"):
        assert client.get("/api/records", headers={"Host": host}).status_code == 200, host


def test_the_host_allowlist_has_the_given_host_and_port(records_dir: Path) -> None:
    with local_client(create_app(records_dir, host="127.0.0.1", port=8000)) as c:
        assert c.get("/api/options").status_code == 200
        error_of(c.get("/api/options", headers={"Host": "127.0.0.1:8001"}), 403, "forbidden")
        assert c.get("/api/options", headers={"Host": "localhost:8000"}).status_code == 200
    token = "t0k3n-for-tests"
    with TestClient(create_app(records_dir, host="table.lan", port=8000, token=token),
                    base_url="http://table.lan:8000", headers={"X-CSL-Token": token}) as c:
        assert c.get("/api/options").status_code == 200
        assert c.get("/api/options", headers={"Host": "localhost:8000"}).status_code == 200
        error_of(c.get("/api/options", headers={"Host": "other.lan:8000"}), 403, "forbidden")
    guard = ServerGuard.for_server("0.0.0.0", 8000, token)
    assert guard.hosts is None and guard.host_allowed("192.168.1.20:8000")
    assert not guard.host_allowed("192.168.1.20:8001") and not guard.host_allowed(None)


def test_host_and_origin_parsing() -> None:
    assert split_host("[::1]:8000") == ("::1", 8000)
    assert split_host("LocalHost") == ("localhost", None)
    for bad in ("a:b:c", "[::1", "[::1]x", "x:99999", "x:-1", "a/b", "u@h", ""):
        assert split_host(bad) is None, bad
    assert same_origin("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert same_origin("http://localhost", "localhost:80")
    assert same_origin("http://[::1]:8000", "[::1]:8000")
    assert same_origin("https://127.0.0.1:8000", "127.0.0.1:8000", "https")
    for origin in ("http://127.0.0.1:8001", "http://localhost:8000", "null", "file://", EVIL,
                   "http://127.0.0.1:8000/x", "ftp://127.0.0.1:8000"):
        assert not same_origin(origin, "127.0.0.1:8000"), origin


def test_a_foreign_origin_changes_nothing(app: Any, client: TestClient, records_dir: Path) -> None:
    """A page of another site (or another port of this machine) can neither start games
    nor write records; the server's own page (same origin) can."""
    record = load_record_of_a_finished_game(client, records_dir)
    before = snapshot(app, records_dir)
    for origin in (EVIL, "null", "http://127.0.0.1:3000", "http://localhost:8000", "https://127.0.0.1:8000"):
        error_of(client.post("/api/games", json={"players": 2, "ai": "test"}, headers={"Origin": origin}), 403, "forbidden")
        error_of(client.post("/api/records", json=record, headers={"Origin": origin}), 403, "forbidden")
        error_of(client.get("/api/records", headers={"Origin": origin}), 403, "forbidden")
    for site in ("cross-site", "same-site"):
        error_of(client.post("/api/games", json={}, headers={"Sec-Fetch-Site": site}), 403, "forbidden")
    assert snapshot(app, records_dir) == before
    r = client.post("/api/games", json={"players": 2, "ai": "test"},
                    headers={"Origin": BASE, "Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 201, r.text
    assert client.get("/", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 200  # a link to the page


def test_a_cors_preflight_from_another_site_is_refused(client: TestClient) -> None:
    headers = {"Origin": EVIL, "Access-Control-Request-Method": "POST",
               "Access-Control-Request-Headers": "content-type"}
    for path in ("/api/games", "/api/records", "/api/games/x/move"):
        r = client.options(path, headers=headers)
        error_of(r, 403, "forbidden")
        assert not any(h.lower().startswith("access-control-") for h in r.headers)


def test_a_state_changing_request_must_be_json(app: Any, client: TestClient, records_dir: Path) -> None:
    """A form or a plain-text fetch (what another site can send without a preflight) is
    refused (415) whatever its body, an empty one too."""
    record = load_record_of_a_finished_game(client, records_dir)
    state = advance(client, new_game(client), [])
    before = snapshot(app, records_dir)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                         "application/jsonx", ""):
        headers = {"Content-Type": content_type}
        body = json.dumps({"players": 2, "ai": "test"})
        assert "Content-Type" in error_of(
            client.post("/api/games", content=body, headers=headers), 415, "unsupported_media_type"
        )
        error_of(client.post("/api/records", content=json.dumps(record), headers=headers), 415, "unsupported_media_type")
        error_of(client.post(f"/api/games/{state['id']}/resign", headers=headers), 415, "unsupported_media_type")
        move = json.dumps({"move": human_move(state)})
        error_of(client.post(f"/api/games/{state['id']}/move", content=move, headers=headers), 415, "unsupported_media_type")
    assert snapshot(app, records_dir) == before
    r = client.post("/api/games", content='{"players": 2, "ai": "test"}',
                    headers={"Content-Type": "application/json; charset=utf-8"})
    assert r.status_code == 201


def load_record_of_a_finished_game(client: TestClient, records_dir: Path) -> dict[str, Any]:
    state = play_out(client, new_game(client, seed=5), [])
    return load_record(records_dir / f"{state['record_id']}.json")


# --- security headers --------------------------------------------------------------------------
def test_every_answer_carries_the_security_headers(records_dir: Path) -> None:
    app = create_app(records_dir, test_ai=TEST_AI, record_limit=1000)
    with local_client(app, raise_server_exceptions=False) as client:
        state = new_game(client)

        async def broken(game: Any, seat: Any = None) -> Any:
            raise ZeroDivisionError("boom")

        app.state.api.store.hint = broken
        answers = {
            "page": client.get("/"),
            "static": client.get("/static/app.js"),
            "json": client.get("/api/options"),
            "created": client.post("/api/games", json={"players": 2, "ai": "test"}),
            "404": client.get("/api/nothing"),
            "405": client.get("/api/games"),
            "400": client.post("/api/games", content=b"{"),
            "403 host": client.get("/api/options", headers={"Host": "evil.example"}),
            "403 origin": client.post("/api/games", json={}, headers={"Origin": EVIL}),
            "415": client.post("/api/games", content=b"{}", headers={"Content-Type": "text/plain"}),
            "413": client.post("/api/records", content=b" " * 2000),
            "500": client.post(f"/api/games/{state['id']}/hint"),
        }
    for name, r in answers.items():
        for header, value in SECURITY_HEADERS.items():
            assert r.headers.get(header) == value, (name, header, r.status_code)
    assert answers["500"].status_code == 500 and answers["413"].status_code == 413
    assert "frame-ancestors 'none'" in CONTENT_SECURITY_POLICY
    assert "unsafe-inline" not in CONTENT_SECURITY_POLICY and "unsafe-eval" not in CONTENT_SECURITY_POLICY


def test_the_page_works_under_its_content_security_policy() -> None:
    """No inline script, inline style, event handler attribute or eval in the page's files
    (the policy allows the page's own files only; the browser test sees any violation
    as a console error)."""
    if not (STATIC_DIR / "index.html").is_file():
        pytest.skip("the page is not installed")
    html = (STATIC_DIR / "index.html").read_text()
    for script in re.findall(r"<script\b[^>]*>", html):
        assert "src=" in script, script
    assert not re.search(r"<style\b", html)
    assert not re.search(r"\sstyle\s*=", html)
    assert not re.search(r"\son[a-z]+\s*=", html)
    for path in STATIC_DIR.glob("*.js"):
        text = path.read_text()
        assert not re.search(r"\beval\(|new Function\(|setAttribute\(\s*[\"']style|setAttribute\(\s*[\"']on", text), path.name
        for markup in re.findall(r"innerHTML\s*=\s*([^;]+);", text):
            assert "style=" not in markup and "<script" not in markup, path.name
        assert not re.search(r"style=\\?[\"']", text), path.name


# --- the token of a server open to the network ------------------------------------------------
def test_a_network_server_needs_its_token(records_dir: Path) -> None:
    token = "s3cret-token-for-tests"
    app = create_app(records_dir, test_ai=TEST_AI, host="0.0.0.0", port=8000, token=token)
    with TestClient(app, base_url="http://192.168.1.20:8000", headers={"Content-Type": "application/json"},
                    follow_redirects=False) as client:
        for headers in ({}, {"X-CSL-Token": "wrong"}, {"Authorization": "token wrong"},
                        {"Cookie": "csl-token-8000=wrong"}, {"Cookie": f"csl-token-8001={token}"}):
            assert "token" in error_of(client.get("/api/options", headers=headers), 403, "forbidden")
            error_of(client.post("/api/games", json={"players": 2, "ai": "test"}, headers=headers), 403, "forbidden")
        assert not app.state.api.store.games and not list(records_dir.iterdir())
        page = client.get("/")
        assert page.status_code == 403 and "token" in page.text and page.headers["content-type"].startswith("text/html")
        assert client.get("/?token=wrong").status_code == 403
        for headers in ({"X-CSL-Token": token}, {"Authorization": f"token {token}"},
                        {"Authorization": f"Bearer {token}"}):
            r = client.get("/api/options", headers=headers)
            assert r.status_code == 200 and r.json()["security"] == {"token_required": True}
        opened = client.get(f"/?token={token}")
        assert opened.status_code == 303 and opened.headers["location"] == "/"
        cookie = opened.headers["set-cookie"]
        assert cookie.startswith(f"csl-token-8000={token}") and "HttpOnly" in cookie
        assert "samesite=strict" in cookie.lower() and "Path=/" in cookie
        assert client.get(f"/?delay=20&token={token}").headers["location"] == "/?delay=20"
        assert client.get("/?token=wrong").status_code == 403
        client.cookies.clear()
        assert client.get("/").status_code == 403
        with_cookie = {"Cookie": f"csl-token-8000={token}"}
        assert client.get("/", headers=with_cookie).status_code == 200
        assert client.get("/static/app.js", headers=with_cookie).status_code == 200
        r = client.post("/api/games", json={"players": 2, "ai": "test"}, headers=with_cookie)
        assert r.status_code == 201, r.text
        error_of(client.post("/api/games", json={}, headers={**with_cookie, "Origin": EVIL}), 403, "forbidden")


def test_a_loopback_server_needs_no_token(client: TestClient) -> None:
    assert client.get("/api/options").json()["security"] == {"token_required": False}


def test_csl_serve_on_the_network_prints_its_token_and_requires_it(records_dir: Path) -> None:
    import httpx

    env = {**os.environ, "CSL_RECORDS_DIR": str(records_dir)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "csl_ai", "serve", "--host", "0.0.0.0", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"http://0\.0\.0\.0:(\d+)/\?token=([A-Za-z0-9_-]{20,})", line)
        assert match, line
        port, token = match.groups()
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(base + "/api/options", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert r.status_code == 403 and r.json()["error"]["kind"] == "forbidden"
        r = httpx.get(base + "/api/options", headers={"X-CSL-Token": token}, timeout=5)
        assert r.status_code == 200 and r.json()["security"]["token_required"]
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


# --- quotas ------------------------------------------------------------------------------------
def test_an_upload_over_the_limit_is_refused_and_writes_nothing(records_dir: Path) -> None:
    with local_client(create_app(records_dir, test_ai=TEST_AI)) as client:
        limits = client.get("/api/options").json()["limits"]
        assert limits["record_bytes"] == 1 << 20 and limits["live_games"] == 64
        record = load_record_of_a_finished_game(client, records_dir)
        files = sorted(records_dir.iterdir())
        record["meta"] = {"pad": "x" * (1 << 20)}
        error_of(client.post("/api/records", json=record), 413, "too_large")
        assert sorted(records_dir.iterdir()) == files


def test_a_flood_of_new_games_never_costs_a_players_game(records_dir: Path) -> None:
    """Many games started and left untouched (a script, another tab) let go of each other,
    none of them saved; the player's own game stays, and once every game is one a player
    moved in, a new game is refused with 429."""
    app = create_app(records_dir, test_ai=TEST_AI, max_games=3)
    with local_client(app) as client:
        mine = advance(client, new_game(client, seed=1), [])
        for seed in range(30):
            assert client.post("/api/games", json={"players": 2, "ai": "test", "seed": seed}).status_code == 201
        assert client.get(f"/api/games/{mine['id']}").json() == mine
        assert [p.stem for p in records_dir.glob("*.json")] == [mine["record_id"]]
        others = [g for g in app.state.api.store.games.values() if g.id != mine["id"]]
        for game in others:
            advance(client, client.get(f"/api/games/{game.id}").json(), [])
        before = snapshot(app, records_dir)
        r = client.post("/api/games", json={"players": 2, "ai": "test"})
        assert "3 games" in error_of(r, 429, "busy")
        assert snapshot(app, records_dir) == before


def test_a_game_no_one_moved_in_is_never_saved(records_dir: Path) -> None:
    with local_client(create_app(records_dir, test_ai=TEST_AI)) as client:
        state = new_game(client)
        r = client.post(f"/api/games/{state['id']}/resign")
        assert r.status_code == 200 and r.json()["status"] == "resigned" and r.json()["record_id"] is None
        new_game(client)
    # the server has stopped, saving its games being played: none was moved in
    assert list(records_dir.iterdir()) == []


# --- a refused request changes nothing, on every route -----------------------------------------
@pytest.fixture
def world(app: Any, client: TestClient, records_dir: Path) -> dict[str, Any]:
    """Games and records on which a request, were it let through, would change something:
    a game waiting for the human with a takeback possible, a game whose AI is to move, a
    finished record, an unfinished record not being played, and a hot-seat game."""
    waiting = advance(client, new_game(client, seed=1), [])
    while waiting["next"] == "step":
        waiting = advance(client, waiting, [])
    assert waiting["your_turn"] and waiting["can_undo"]
    ai_to_move = advance(client, new_game(client, seed=2), [])
    assert ai_to_move["next"] == "step"
    finished = play_out(client, new_game(client, seed=3), [])
    paused = records_dir / "paused.json"
    paused.write_bytes((records_dir / f"{waiting['record_id']}.json").read_bytes())
    hot = new_game(client, players=3, humans=[0, 1], seed=4)
    hot = client.post(f"/api/games/{hot['id']}/move?seat=0", json={"move": human_move(hot)}).json()["state"]
    return {"waiting": waiting, "ai": ai_to_move, "finished": finished, "hot": hot}


def _routes(app: Any) -> list[tuple[str, str]]:
    out = []
    for route in app.routes:
        if isinstance(route, Route):
            out += [(method, route.path) for method in sorted(route.methods or ()) if method != "HEAD"]
    assert len(out) >= 20
    return out


def _fill(path: str, game_id: str, record_id: str) -> str:
    return path.replace("{game_id}", game_id).replace("{record_id}", record_id).replace("{job_id}", "J" * 24)


def _body(method: str, path: str, state: dict[str, Any]) -> Any:
    if path.endswith("/move"):
        return {"move": human_move(state)}
    return {} if method == "POST" else None


def test_a_hostile_request_changes_nothing_on_any_route(app: Any, client: TestClient, records_dir: Path,
                                                        world: dict[str, Any]) -> None:
    hostile = [
        {"Host": "attacker.example"},
        {"Host": "127.0.0.1:8000.evil.example"},
        {"Origin": EVIL},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ]
    before = snapshot(app, records_dir)
    checked = 0
    for method, path in _routes(app):
        for state in (world["waiting"], world["ai"]):
            for record_id in (world["finished"]["record_id"], "paused"):
                url = _fill(path, state["id"], record_id)
                body = _body(method, path, state)
                for headers in hostile:
                    if "Sec-Fetch-Site" in headers and not path.startswith("/api/"):
                        continue  # a link from another site may open the page
                    r = client.request(method, url, json=body, headers=headers)
                    error_of(r, 403, "forbidden")
                    checked += 1
                if method == "POST":
                    for content_type in ("text/plain", "application/x-www-form-urlencoded"):
                        r = client.request(method, url, content=json.dumps(body), headers={"Content-Type": content_type})
                        error_of(r, 415, "unsupported_media_type")
                        checked += 1
                assert snapshot(app, records_dir) == before, (method, url)
    assert checked > 300


def test_a_refused_seat_changes_nothing_on_any_route(app: Any, client: TestClient, records_dir: Path,
                                                     world: dict[str, Any]) -> None:
    """A seat that is not a human seat (an AI's, out of range, not a number) is refused
    before anything happens: the move of a human is not played for an AI seat."""
    before = snapshot(app, records_dir)
    refused = 0
    for method, path in _routes(app):
        takes_seat = "{game_id}" in path and not path.endswith(("/record", "/rules"))
        if not takes_seat and path not in ("/api/games", "/api/records/{record_id}/resume"):
            continue
        for state in (world["waiting"], world["ai"]):
            for seat in ("1", "9", "x", "-1"):
                url = _fill(path, state["id"], "paused") + f"?seat={seat}"
                r = client.request(method, url, json=_body(method, path, state))
                assert r.status_code == 400, (url, r.text)
                refused += 1
                assert snapshot(app, records_dir) == before, (method, url)
    assert refused > 40


def test_a_move_for_an_ai_seat_is_refused_and_not_played(app: Any, client: TestClient, records_dir: Path,
                                                         world: dict[str, Any]) -> None:
    state = world["waiting"]
    before = snapshot(app, records_dir)
    r = client.post(f"/api/games/{state['id']}/move?seat=1", json={"move": human_move(state)})
    assert "not a human seat" in error_of(r, 400, "bad_request")
    assert snapshot(app, records_dir) == before
    assert client.get(f"/api/games/{state['id']}").json()["board"] == state["board"]
    error_of(client.post(f"/api/games/{state['id']}/undo?seat=1"), 400, "bad_request")
    assert snapshot(app, records_dir) == before


def test_bad_moves_and_bodies_change_nothing(app: Any, client: TestClient, records_dir: Path,
                                             world: dict[str, Any]) -> None:
    state, finished, hot = world["waiting"], world["finished"], world["hot"]
    gid = state["id"]
    record = load_record(records_dir / f"{finished['record_id']}.json")
    unfinished = load_record(records_dir / "paused.json")
    before = snapshot(app, records_dir)
    cases = [
        ("POST", f"/api/games/{gid}/move", {"move": {"type": "play", "card": "B1"}}, 400),
        ("POST", f"/api/games/{gid}/move", {"move": {"type": "allocate", "piles": ["B1", "", ""]}}, 400),
        ("POST", f"/api/games/{gid}/move", {"move": human_move(state), "seat": 1}, 400),
        ("POST", f"/api/games/{gid}/move?seat=0", {"move": human_move(state), "seat": 1}, 400),
        ("POST", f"/api/games/{gid}/move", {"move": human_move(state), "colour": "B"}, 400),
        ("POST", f"/api/games/{gid}/move", {"card": "B1"}, 400),
        ("POST", f"/api/games/{gid}/move", [1, 2], 400),
        ("POST", f"/api/games/{gid}/resign", {"seat": 1}, 400),
        ("POST", f"/api/games/{gid}/resign?seat=0", {"seat": 1}, 400),
        ("POST", f"/api/games/{gid}/resign", {"why": "bored"}, 400),
        ("POST", f"/api/games/{finished['id']}/resign", {}, 409),
        ("POST", f"/api/games/{hot['id']}/undo?seat=1", {}, 409),
        ("POST", f"/api/games/{hot['id']}/undo", {}, 409),
        ("POST", f"/api/games/{hot['id']}/hint?seat=0", {}, 409),
        ("POST", "/api/games", {"players": 9}, 400),
        ("POST", "/api/games?seat=3", {"players": 2, "ai": "test"}, 400),
        ("POST", "/api/records", {**record, "seed": "x"}, 400),
        ("POST", "/api/records", unfinished, 409),
        ("POST", "/api/records/paused/resume?seat=1", {}, 400),
        ("POST", "/api/records/nothing/resume", {}, 404),
        ("POST", f"/api/records/{finished['record_id']}/analysis", {"seats": [7]}, 400),
        ("POST", f"/api/records/{finished['record_id']}/analysis", {"level": "godlike"}, 400),
        ("POST", "/api/records/paused/analysis", {}, 409),
        ("POST", f"/api/records/{state['record_id']}/analysis", {}, 409),
    ]
    for method, url, body, status in cases:
        r = client.request(method, url, json=body)
        assert r.status_code == status, (url, body, r.text)
        assert snapshot(app, records_dir) == before, (url, body)


# --- fair play -----------------------------------------------------------------------------------
def test_an_unfinished_game_does_not_open_for_review(app: Any, client: TestClient, records_dir: Path,
                                                     world: dict[str, Any]) -> None:
    """Its record holds the AI seats' hidden piles of the deal the player would resume:
    no review, analysis, position or download until it is finished or resigned."""
    listed = {e["id"]: e for e in client.get("/api/records").json()["records"]}
    assert listed["paused"]["reviewable"] is False and listed[world["finished"]["record_id"]]["reviewable"] is True
    assert listed[world["waiting"]["record_id"]]["reviewable"] is False
    for url in ("/api/records/paused/review", "/api/records/paused", "/api/records/paused/position?step=0"):
        assert "not over" in error_of(client.get(url), 409, "conflict"), url
    assert "not over" in error_of(client.post("/api/records/paused/analysis", json={}), 409, "conflict")
    second = create_app(records_dir, test_ai=TEST_AI)  # another server on the same folder
    with local_client(second) as other:
        rid = world["waiting"]["record_id"]
        error_of(other.get(f"/api/records/{rid}/review"), 409, "conflict")
        error_of(other.get(f"/api/records/{rid}"), 409, "conflict")
    resumed = client.post("/api/records/paused/resume").json()
    assert client.post(f"/api/games/{resumed['id']}/resign").status_code == 200
    review = client.get("/api/records/paused/review")
    assert review.status_code == 200 and review.json()["resigned_by"] == 0
    assert client.get("/api/records").json()["records"][0]["reviewable"] is True


def test_an_unfinished_game_without_a_human_opens_for_review(client: TestClient, records_dir: Path,
                                                              world: dict[str, Any]) -> None:
    """No one can play it on (resume needs a human seat), so its review hides nothing."""
    record = load_record(records_dir / "paused.json")
    record["agents"] = [TEST_AI, TEST_AI]
    record["meta"].pop("humans", None)
    (records_dir / "robots.json").write_text(json.dumps(record))
    assert client.get("/api/records/robots/review").status_code == 200
    r = client.post("/api/records", json=record)
    assert r.status_code == 201 and r.json()["reviewable"] is True


def test_a_hot_seat_answer_shows_no_humans_secret_choice(client: TestClient) -> None:
    """Seats 0 and 1 share the screen: seat 0's split and bet are in no answer (not even
    the answer to its own move, which seat 1 reads next); in a one-human game the mover
    still sees their own."""
    solo = new_game(client)
    r = client.post(f"/api/games/{solo['id']}/move", json={"move": human_move(solo)}).json()
    assert r["step"]["text"] and r["step"]["move"]["type"] == "allocate"

    state = new_game(client, players=3, humans=[0, 1], seed=8)
    gid = state["id"]
    answers: list[dict[str, Any]] = []
    while state["status"] == "playing" and state["board"]["phase"] != "play":
        viewer = state["waiting_for"] if state["waiting_for"] is not None else 0
        if state["next"] == "step":
            r = client.post(f"/api/games/{gid}/step?seat={viewer}")
        else:
            r = client.post(f"/api/games/{gid}/move?seat={viewer}", json={"move": human_move(state), "seat": viewer})
        assert r.status_code == 200, r.text
        answers.append(r.json())
        state = r.json()["state"]
        if state["next"] == "human" and state["waiting_for"] != state["viewer"]:
            state = client.get(f"/api/games/{gid}?seat={state['waiting_for']}").json()
    human_steps = [a for a in answers if a["step"] and a["step"]["by"] == "human"]
    assert {a["step"]["kind"] for a in human_steps} == {"allocate", "weather"}
    for answer in human_steps:
        step = answer["step"]
        if step["kind"] == "allocate" or answer["state"]["board"]["phase"] == "weather":
            assert step["move"] is None and step["text"] is None, step
        assert answer["state"]["viewer"] == step["seat"]
        for seat in answer["state"]["board"]["seats"]:
            if seat["seat"] != step["seat"]:
                assert seat["hand"] is None and seat["piles"] is None


def test_a_takeback_is_only_of_ones_own_choice(client: TestClient) -> None:
    state = new_game(client, players=3, humans=[0, 1], seed=6)
    gid = state["id"]
    r = client.post(f"/api/games/{gid}/move?seat=0", json={"move": human_move(state)})
    assert r.status_code == 200 and r.json()["state"]["can_undo"]
    seat1 = client.get(f"/api/games/{gid}?seat=1").json()
    assert seat1["your_turn"] and not seat1["can_undo"]
    assert "seat 0's" in error_of(client.post(f"/api/games/{gid}/undo?seat=1"), 409, "conflict")
    error_of(client.post(f"/api/games/{gid}/undo"), 409, "conflict")  # the seat to move: 1
    assert client.get(f"/api/games/{gid}?seat=1").json() == seat1
    r = client.post(f"/api/games/{gid}/move?seat=1", json={"move": human_move(seat1)})
    assert r.status_code == 200
    seat0 = client.get(f"/api/games/{gid}?seat=0").json()
    assert not seat0["can_undo"] and client.get(f"/api/games/{gid}?seat=1").json()["can_undo"]
    error_of(client.post(f"/api/games/{gid}/undo?seat=0"), 409, "conflict")
    undone = client.post(f"/api/games/{gid}/undo?seat=1")
    assert undone.status_code == 200, undone.text
    assert undone.json()["your_turn"] and undone.json()["viewer"] == 1
    assert undone.json()["board"] == seat1["board"]


def test_a_hint_is_only_for_ones_own_decision(client: TestClient) -> None:
    state = new_game(client, players=3, humans=[0, 1], seed=6)
    gid = state["id"]
    client.post(f"/api/games/{gid}/move?seat=0", json={"move": human_move(state)})
    error_of(client.post(f"/api/games/{gid}/hint?seat=0"), 409, "conflict")
    r = client.post(f"/api/games/{gid}/hint?seat=1")
    assert r.status_code == 200 and r.json()["hint"]["seat"] == 1
