"""Records written with exclusive creation, and the lock of a live record shared by every
process (csl_ai/record_lock.py): several `csl play` started at once never share a name,
a `--record` taken meanwhile is never overwritten, and a game live in one process (a
`csl play`, a `csl serve`) is refused by the others (exit 1, 409) until it is let go;
a lock whose process died is taken over.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

import csl_ai
from csl_ai.cli import app
from csl_ai.errors import UnsafeOutputError
from csl_ai.files import OutputExistsError, create_file_exclusive
from csl_ai.game import Game
from csl_ai.record_lock import (
    RecordInUseError,
    RecordLock,
    claim_record_name,
    lock_path,
    record_in_use,
)
from csl_ai.records import (
    claim_new_record,
    game_to_record,
    load_record,
    new_record_path,
    save_new_record,
    save_record,
)
from csl_ai.rules import RulesConfig
from csl_ai.web import create_app

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

ROOT = Path(csl_ai.__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
runner = CliRunner()


def invoke(args: list[str], stdin: str | None = None) -> Result:
    return runner.invoke(app, args, input=stdin)


def one_error_line(result: Result, code: int, *fragments: str) -> str:
    assert result.exit_code == code, (result.exit_code, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("csl: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def a_record() -> dict[str, Any]:
    return game_to_record(Game(RulesConfig(players=2), seed=1), agents=["human", "random"])


def python(code: str, **options: Any) -> subprocess.Popen[str]:
    """A Python process running code, its stdin, stdout and stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, **options,
    )  # fmt: skip


HOLDER = """
import sys
from csl_ai.record_lock import RecordLock
lock = RecordLock.acquire(sys.argv[1], "test holder")
print("held", flush=True)
sys.stdin.readline()
"""


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """Another process holding the lock of tmp_path/game.json until its stdin closes."""
    record = tmp_path / "game.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(record)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "held\n", proc.stderr
    try:
        yield proc, record
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def wait_for(predicate: Any, what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


# --- exclusive creation ---------------------------------------------------------------------------
def test_exclusive_creation_never_replaces_anything(tmp_path: Path) -> None:
    path = tmp_path / "out.json"
    create_file_exclusive(path, "first", "out")
    assert path.read_text() == "first" and oct(path.stat().st_mode & 0o777) == oct(0o644)
    with pytest.raises(OutputExistsError, match="exists already"):
        create_file_exclusive(path, "second", "out")
    assert path.read_text() == "first"
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(UnsafeOutputError):
        create_file_exclusive(tmp_path / "fifo", "x", "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    with pytest.raises((UnsafeOutputError, OutputExistsError)):
        create_file_exclusive(tmp_path / "link", "x", "link")
    assert not (tmp_path / "nowhere").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link", "out.json"], "no temporary file left"


def test_save_record_exclusive_refuses_a_taken_name(tmp_path: Path) -> None:
    path = tmp_path / "game.json"
    path.write_text("precious")
    with pytest.raises(OutputExistsError):
        save_record(a_record(), path, exclusive=True)
    assert path.read_text() == "precious"
    save_record(a_record(), tmp_path / "new.json", exclusive=True)
    assert load_record(tmp_path / "new.json") == a_record()


CLAIMER = """
import sys
from datetime import datetime
from pathlib import Path
from csl_ai.records import claim_new_record, game_to_record, save_record
from csl_ai.game import Game
from csl_ai.rules import RulesConfig
sys.stdin.readline()  # all start together
lock = claim_new_record(Path(sys.argv[1]), now=datetime(2025, 1, 1, 12, 0, 0), program="claimer")
save_record(game_to_record(Game(RulesConfig(players=2), seed=int(sys.argv[2]))), lock.record, exclusive=True)
print(lock.record.name, flush=True)
sys.stdin.readline()
lock.release()
"""


def test_processes_claiming_in_the_same_second_get_distinct_names(tmp_path: Path) -> None:
    """Six processes claim a record name for the same second at once: six names, six
    files, each holding its own game; a name whose lock is held is skipped too."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CLAIMER, str(tmp_path), str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        )  # fmt: skip
        for seed in range(6)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("\n")
        proc.stdin.flush()
    names = []
    for proc in procs:
        assert proc.stdout is not None
        names.append(proc.stdout.readline().strip())
    assert len(set(names)) == 6 and all(names), [p.stderr.read() for p in procs if p.stderr]  # type: ignore[union-attr]
    stamp = "csl-game-20250101-120000"
    assert set(names) == {f"{stamp}.json", *(f"{stamp}-{n}.json" for n in range(2, 7))}
    # the names are held while their processes live: a seventh claim goes past them all
    later = claim_new_record(tmp_path, now=datetime(2025, 1, 1, 12, 0, 0))
    assert later.record.name == f"{stamp}-7.json"
    later.release()
    for proc in procs:
        proc.communicate("\n", timeout=30)
        assert proc.returncode == 0
    seeds = sorted(load_record(tmp_path / name)["seed"] for name in names)
    assert seeds == list(range(6)), "no process wrote over another's record"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names), "every lock file removed"


def test_a_claimed_name_is_skipped_until_it_is_let_go(tmp_path: Path) -> None:
    now = datetime(2025, 1, 1, 12, 0, 0)
    first = claim_new_record(tmp_path, now=now)
    assert new_record_path(tmp_path, now=now).name.endswith("-2.json"), "a claimed name is taken"
    second = claim_new_record(tmp_path, now=now)
    assert (first.record.name, second.record.name) == ("csl-game-20250101-120000.json", "csl-game-20250101-120000-2.json")
    first.release()
    second.release()
    assert list(tmp_path.iterdir()) == []
    path = save_new_record(a_record(), tmp_path)
    assert load_record(path) == a_record() and list(tmp_path.iterdir()) == [path]


def test_several_csl_play_started_together_keep_every_game(tmp_path: Path) -> None:
    """The issue's report: several `csl play` started in the same second all exited 0
    and left one file. Now each game has its own record."""
    env = {**ENV, "CSL_RECORDS_DIR": str(tmp_path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "csl_ai", "play", "-n", "2", "--ai", "random", "--seed", str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        for seed in range(4)
    ]
    for proc in procs:
        _out, err = proc.communicate("quit\n", timeout=120)
        assert proc.returncode == 0, err
    records = sorted(tmp_path.glob("*.json"))
    assert len(records) == 4
    assert sorted(load_record(p)["seed"] for p in records) == [0, 1, 2, 3]
    assert not list(tmp_path.glob("*.lock"))


# --- the lock ----------------------------------------------------------------------------------------
def test_a_lock_is_held_once_and_its_file_goes_with_it(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    lock = RecordLock.acquire(record, "me")
    assert lock.held and lock_path(record).exists()
    held_by = json.loads(lock_path(record).read_text())
    assert held_by["pid"] == os.getpid() and held_by["program"] == "me"
    assert record_in_use(record) == held_by
    assert RecordLock.try_acquire(record) is None, "a second holder, even in this process, is refused"
    with pytest.raises(RecordInUseError, match=rf"another csl process \(me, pid {os.getpid()}\)"):
        RecordLock.acquire(record, wait_s=0.05)
    lock.release()
    lock.release()
    assert not lock.held and not lock_path(record).exists()
    assert record_in_use(record) is None
    with RecordLock.acquire(record) as again:
        assert again.held
    assert not lock_path(record).exists()


def test_a_lock_held_by_another_process_is_refused_and_freed_when_it_ends(
    holder: tuple[subprocess.Popen[str], Path],
) -> None:
    proc, record = holder
    with pytest.raises(RecordInUseError) as refused:
        RecordLock.acquire(record)
    assert f"pid {proc.pid}" in str(refused.value) and "test holder" in str(refused.value)
    assert record_in_use(record) is not None
    proc.communicate("\n", timeout=30)  # its process ends without releasing: the kernel frees it
    with RecordLock.acquire(record, "next") as lock:
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()


def test_a_stale_lock_of_a_killed_process_is_taken_over(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(record)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert json.loads(lock_path(record).read_text())["pid"] == proc.pid, "the dead process's file is left"
    assert record_in_use(record) is None
    with RecordLock.acquire(record, "heir") as lock:
        assert json.loads(lock.path.read_text())["program"] == "heir"


def test_a_lock_file_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    (tmp_path / "elsewhere").write_text("keep")
    lock_path(record).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(Exception, match="lock file"):
        RecordLock.acquire(record)
    assert (tmp_path / "elsewhere").read_text() == "keep"


def test_claim_record_name_skips_names_held_elsewhere(holder: tuple[subprocess.Popen[str], Path]) -> None:
    _proc, record = holder
    lock = claim_record_name(record.parent, "game")
    assert lock.record.name == "game-2.json"
    lock.release()


# --- csl play -------------------------------------------------------------------------------------------
def cut_game(path: Path) -> None:
    result = invoke(["play", "-n", "2", "--ai", "random", "--seed", "3", "--record", str(path)], "quit\n")
    assert result.exit_code == 0, result.output


def test_csl_play_refuses_a_game_live_in_another_process(tmp_path: Path) -> None:
    """A `csl play --resume` running in another process: a second resume, or a --record
    of the same file, is one error line and exit 1; the file is untouched. Once the
    first has quit, the game resumes."""
    record = tmp_path / "game.json"
    cut_game(record)
    before = record.read_bytes()
    first = subprocess.Popen(
        [sys.executable, "-m", "csl_ai", "play", "--resume", str(record)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        wait_for(lambda: record_in_use(record) is not None, "the first csl play to lock its game")
        line = one_error_line(invoke(["play", "--resume", str(record)], "quit\n"), 1, "--resume", "another csl process", "csl play")
        assert f"pid {first.pid}" in line
        assert record.read_bytes() == before
    finally:
        out, err = first.communicate("quit\n", timeout=60)
    assert first.returncode == 0, err
    assert not lock_path(record).exists()
    assert invoke(["play", "--resume", str(record)], "quit\n").exit_code == 0


def test_csl_play_refuses_a_record_name_another_game_holds(holder: tuple[subprocess.Popen[str], Path]) -> None:
    proc, record = holder
    one_error_line(
        invoke(["play", "-n", "2", "--ai", "random", "--record", str(record)], "quit\n"),
        1, "--record", f"pid {proc.pid}",
    )  # fmt: skip
    assert not record.exists()


def test_a_record_created_meanwhile_is_not_overwritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--record names a free file at the start; a program that ignores the lock creates
    it during the game: it is left as it is, the game is saved beside it, exit 1."""
    from csl_ai.cli import play as play_module

    record = tmp_path / "game.json"

    def run(self: Any) -> None:
        record.write_text("precious")
        raise play_module.QuitGame

    monkeypatch.setattr(play_module.PlaySession, "run", run)
    result = invoke(["play", "-n", "2", "--ai", "random", "--seed", "5", "--record", str(record)], "")
    one_error_line(result, 1, "the game is saved to", "game-2.json", "another program created")
    assert record.read_text() == "precious"
    assert load_record(tmp_path / "game-2.json")["seed"] == 5
    assert "Saved the unfinished game to " + str(tmp_path / "game-2.json") in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["game-2.json", "game.json"]


def test_a_default_record_name_taken_meanwhile_is_not_overwritten(monkeypatch: pytest.MonkeyPatch) -> None:
    from csl_ai.cli import play as play_module
    from csl_ai.records import records_folder

    def run(self: Any) -> None:
        (path,) = records_folder().glob("*.json.lock")
        Path(str(path)[: -len(".lock")]).write_text("precious")
        raise play_module.QuitGame

    monkeypatch.setattr(play_module.PlaySession, "run", run)
    result = invoke(["play", "-n", "2", "--ai", "random", "--seed", "6"], "")
    one_error_line(result, 1, "another program created that file")
    texts = sorted(p.read_text()[:1] for p in records_folder().iterdir())
    assert texts == ["p", "{"] and not list(records_folder().glob("*.lock"))


# --- csl serve ----------------------------------------------------------------------------------------------
def start_server(records: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "csl_ai", "serve", "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**ENV, "CSL_RECORDS_DIR": str(records)},
    )  # fmt: skip
    assert proc.stdout is not None
    line = proc.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert match, (line, proc.stderr.read() if proc.poll() is not None else "")  # type: ignore[union-attr]
    return proc, f"http://127.0.0.1:{match.group(1)}"


def http(method: str, url: str) -> Any:
    import httpx

    deadline = time.monotonic() + 30
    while True:
        try:
            return httpx.request(method, url, headers={"Content-Type": "application/json"}, content=b"{}", timeout=30)
        except httpx.TransportError:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_a_second_server_and_csl_play_refuse_a_game_live_in_a_server(tmp_path: Path) -> None:
    """The issue's report: a second `csl serve` on the same records folder resumed a game
    live in the first (two live copies writing one file). Now the second answers 409 and
    lists the game as live, `csl play --resume` exits 1, and once the first server has
    stopped (its lock let go) the game resumes."""
    records = tmp_path / "records"
    records.mkdir()
    record = records / "game.json"
    cut_game(record)
    first, base = start_server(records)
    try:
        r = http("POST", f"{base}/api/records/game/resume")
        assert r.status_code == 201, r.text
        assert record_in_use(record)["program"] == "csl serve"  # type: ignore[index]
        with TestClient(create_app(records), base_url="http://127.0.0.1:8000",
                        headers={"Content-Type": "application/json"}) as second:  # fmt: skip
            r = second.post("/api/records/game/resume")
            assert r.status_code == 409, r.text
            error = r.json()["error"]
            assert error["kind"] == "conflict" and f"pid {first.pid}" in error["message"]
            listed = {e["id"]: e for e in second.get("/api/records").json()["records"]}
            assert listed["game"]["live"] is True and listed["game"]["reviewable"] is False
            assert not second.app.state.api.store.games  # type: ignore[attr-defined]
            one_error_line(invoke(["play", "--resume", str(record)], "quit\n"), 1, "csl serve", f"pid {first.pid}")
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 0
    assert not lock_path(record).exists(), "a stopped server lets go of its games"
    with TestClient(create_app(records), base_url="http://127.0.0.1:8000",
                    headers={"Content-Type": "application/json"}) as second:  # fmt: skip
        r = second.post("/api/records/game/resume")
        assert r.status_code == 201, r.text
        assert record_in_use(record) is not None
    assert not lock_path(record).exists()


def test_a_server_refuses_a_game_live_in_csl_play(tmp_path: Path) -> None:
    records = tmp_path / "records"
    records.mkdir()
    record = records / "game.json"
    cut_game(record)
    play = subprocess.Popen(
        [sys.executable, "-m", "csl_ai", "play", "--resume", str(record)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
    )  # fmt: skip
    try:
        wait_for(lambda: record_in_use(record) is not None, "csl play to lock its game")
        with TestClient(create_app(records), base_url="http://127.0.0.1:8000",
                        headers={"Content-Type": "application/json"}) as server:  # fmt: skip
            r = server.post("/api/records/game/resume")
            assert r.status_code == 409 and "csl play" in r.json()["error"]["message"], r.text
    finally:
        play.communicate("quit\n", timeout=60)
    assert play.returncode == 0


def test_a_server_holds_the_records_of_its_games_and_lets_go(tmp_path: Path) -> None:
    """A game's first save claims its record under the lock; resigning lets it go; a game
    still played holds it until the server stops."""
    from test_web_api import TEST_AI, advance, new_game

    records = tmp_path / "records"
    records.mkdir()
    with TestClient(create_app(records, test_ai=TEST_AI), base_url="http://127.0.0.1:8000",
                    headers={"Content-Type": "application/json"}) as client:  # fmt: skip
        kept = advance(client, new_game(client, seed=1), [])
        resigned = advance(client, new_game(client, seed=2), [])
        for state in (kept, resigned):
            assert record_in_use(records / f"{state['record_id']}.json") is not None
        assert client.post(f"/api/games/{resigned['id']}/resign").status_code == 200
        assert record_in_use(records / f"{resigned['record_id']}.json") is None
        assert record_in_use(records / f"{kept['record_id']}.json") is not None
    assert not list(records.glob("*.lock"))
    assert len(list(records.glob("*.json"))) == 2
