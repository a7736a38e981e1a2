"""Robustness under signals, faults and hostile input (issue 15, items 3, 4, 5, 6, 7, 8, 10).

Signals are sent to real `python -m csl_ai` processes once their search (or prompt) has
started; the rest runs the command in process through its entry point. The fuzz test
mutates real positions, records and deck files with a seeded mutator and checks that
every case ends in exit 0, or exit 2 with one short error line. The item-10 tests start a
Ray head of their own (`ray start --head` on a free local port) and stop only that head.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import random
import select
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

import csl_ai
from csl_ai import _core
from csl_ai.cli import app
from csl_ai.errors import short_repr
from csl_ai.files import MAX_INPUT_BYTES
from csl_ai.game import Game, Phase
from csl_ai.position import load_position, observation_to_position, position_to_json
from csl_ai.records import game_to_record, load_record, record_to_json
from csl_ai.rules import Kind, RulesConfig, SkyCard, SkyDeck
from csl_ai.search import SearchConfig, SearchLimit, search
from csl_ai.search.setup import prepared_engine

COMMAND = typer.main.get_command(app)
ROOT = Path(csl_ai.__file__).resolve().parent.parent
HUGE_SEARCH = str(10**12)
MAX_ERROR_LINE = 300
SIGNAL_EXIT_S = 5.0
"""A signalled command must be gone within this many seconds."""


# --- running the command ----------------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str


def run_cli(args: Sequence[str], stdin: bytes = b"") -> Ran:
    """`csl args` in this process (the entry point `main` calls), stdin given as bytes."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = COMMAND.main(args=list(args), prog_name="csl", standalone_mode=False)
    finally:
        sys.stdin = saved
    return Ran(code, out.getvalue(), err.getvalue())


def assert_error_line(ran: Ran, code: int, *fragments: str) -> str:
    """The command exited code with exactly one short ``csl: error:`` line naming fragments."""
    assert ran.code == code, ran
    lines = ran.stderr.splitlines()
    assert len(lines) == 1, ran.stderr[:2000]
    line = lines[0]
    assert line.startswith("csl: error: ") and len(line) < MAX_ERROR_LINE, line[:2000]
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def default_signals() -> None:
    """In a child before exec: INT, TERM and HUP as a terminal gives them, whatever this
    test run inherited (a background job ignores Ctrl-C, nohup ignores SIGHUP, and csl
    keeps a signal ignored at start ignored)."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _child_setup(close_stdin: bool) -> Callable[[], None]:
    def setup() -> None:
        default_signals()
        if close_stdin:
            os.close(0)

    return setup


def spawn(
    args: Sequence[str], *, stdin: Any = subprocess.DEVNULL, close_stdin: bool = False
) -> subprocess.Popen[bytes]:
    """`python -m csl_ai args` as a child process; SIGINT is not inherited ignored, and the
    numeric libraries run no threads of their own (so a thread count shows the search)."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "COLUMNS": "200",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "csl_ai", *args],
        stdin=None if close_stdin else stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=_child_setup(close_stdin),
    )
    _CHILDREN.append(proc)
    return proc


def thread_count(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def wait_for_threads(proc: subprocess.Popen[bytes], n: int, timeout: float = 60.0) -> None:
    """Wait until the process runs n threads (the main one and n - 1 search threads)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        with contextlib.suppress(FileNotFoundError):
            if thread_count(proc.pid) >= n:
                time.sleep(0.3)
                return
        time.sleep(0.02)
    raise AssertionError("the search never started")


def read_until(proc: subprocess.Popen[bytes], text: str, timeout: float = 60.0) -> str:
    """Stdout of proc up to and including text (a prompt without a newline)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + timeout
    while text.encode() not in seen:
        left = deadline - time.monotonic()
        assert left > 0, seen.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            chunk = os.read(fd, 65536)
            assert chunk, seen.decode(errors="replace")
            seen += chunk
    return seen.decode()


def signal_and_wait(proc: subprocess.Popen[bytes], signum: int) -> tuple[float, str, str]:
    """Send signum; (seconds until the process was gone, stdout, stderr)."""
    sent = time.perf_counter()
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    return time.perf_counter() - sent, out.decode(), err.decode()


@pytest.fixture(autouse=True)
def _no_stray_processes() -> Iterator[None]:
    """Kill any child a failed test left running (a search that ignored its signal)."""
    yield
    for proc in list(_CHILDREN):
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    _CHILDREN.clear()


_CHILDREN: list[subprocess.Popen[bytes]] = []


needs_proc = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")


# --- inputs the code produces -------------------------------------------------------------------


def played_game(players: int, seed: int, decisions: int) -> Game:
    """A default-rules game after `decisions` random legal decisions (or over)."""
    game = Game(RulesConfig(players=players), seed=seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        if game.is_over:
            break
        seat = rng.choice(game.pending_seats())
        game.apply(rng.choice(game.legal_moves(seat)), seat)
    return game


def position_text(players: int, seed: int, decisions: int) -> str:
    """The position of the first seat with a decision after `decisions` random ones."""
    game = played_game(players, seed, decisions)
    return position_to_json(observation_to_position(game.observation(game.pending_seats()[0])))


def record_text(players: int, seed: int, decisions: int = 10**6) -> str:
    game = played_game(players, seed, decisions)
    return record_to_json(game_to_record(game, agents=["random"] * players))


@pytest.fixture(scope="module")
def play_position(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 4-player position at a card play with a choice of cards."""
    path = tmp_path_factory.mktemp("pos") / "position.json"
    game = played_game(4, 3, 12)
    while game.phase is not Phase.PLAY or len(game.legal_moves(game.to_move)) < 2:
        seat = game.pending_seats()[0]
        game.apply(game.legal_moves(seat)[0], seat)
    path.write_text(position_to_json(observation_to_position(game.observation(game.to_move))))
    return path


# --- item 3: an interrupt stops every search ---------------------------------------------------


@needs_proc
def test_sigint_stops_a_huge_best_move_search_at_once(play_position: Path) -> None:
    proc = spawn(["best-move", str(play_position), "--iterations", HUGE_SEARCH])
    wait_for_threads(proc, 2)
    seconds, out, err = signal_and_wait(proc, signal.SIGINT)
    assert proc.returncode == 130, err
    assert seconds < SIGNAL_EXIT_S
    assert err.splitlines() == ["csl: error: interrupted"]


@needs_proc
def test_sigterm_stops_a_two_thread_best_move_search(play_position: Path) -> None:
    proc = spawn(["best-move", str(play_position), "--iterations", HUGE_SEARCH, "--threads", "2"])
    wait_for_threads(proc, 3)
    seconds, _, err = signal_and_wait(proc, signal.SIGTERM)
    assert proc.returncode == 143, err
    assert seconds < SIGNAL_EXIT_S
    assert err.splitlines() == ["csl: error: terminated by SIGTERM"]


def _assert_saved(path: Path, status: str) -> None:
    record = load_record(path)
    assert record["meta"]["status"] == status


@needs_proc
@pytest.mark.parametrize(
    ("threads", "signum", "code", "status"),
    [
        (2, signal.SIGINT, 130, "interrupted"),
        (1, signal.SIGINT, 130, "interrupted"),
        (1, signal.SIGHUP, 129, "terminated by SIGHUP"),
    ],
    ids=["2-threads-SIGINT", "1-thread-SIGINT", "1-thread-SIGHUP"],
)
def test_a_signal_during_the_ais_search_saves_the_game_and_exits(
    tmp_path: Path, threads: int, signum: int, code: int, status: str
) -> None:
    record = tmp_path / "game.json"
    ai = f"ismcts:iters={HUGE_SEARCH},threads={threads}"
    proc = spawn(
        ["play", "-n", "2", "--humans", "none", "--ai", ai, "--seed", "1", "--record", str(record)]
    )
    wait_for_threads(proc, 1 + threads)
    seconds, out, err = signal_and_wait(proc, signum)
    assert proc.returncode == code, err
    assert seconds < SIGNAL_EXIT_S
    assert err == ""
    assert f"Saved the unfinished game to {record}" in out
    _assert_saved(record, status)


@needs_proc
@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"]
)
def test_a_signal_at_a_prompt_saves_the_game_and_exits(tmp_path: Path, signum: int, code: int) -> None:
    record = tmp_path / "game.json"
    proc = spawn(
        ["play", "-n", "2", "--humans", "0", "--ai", "random", "--seed", "1", "--record", str(record)],
        stdin=subprocess.PIPE,
    )
    read_until(proc, "your piles")
    seconds, out, err = signal_and_wait(proc, signum)
    assert proc.returncode == code, err
    assert seconds < SIGNAL_EXIT_S
    name = signal.Signals(signum).name
    assert f"Terminated by {name}." in out
    _assert_saved(record, f"terminated by {name}")


def test_a_stop_request_ends_a_running_worker_at_once(play_position: Path) -> None:
    engine = prepared_engine(load_position(play_position), SearchConfig())
    worker = _core.SearchWorker(engine, 1, 1 << 16)
    thread = threading.Thread(target=worker.run, args=(10**12, 0.0))
    thread.start()
    time.sleep(0.2)
    asked = time.perf_counter()
    worker.request_stop()
    thread.join(5.0)
    assert not thread.is_alive()
    assert time.perf_counter() - asked < 0.5
    assert worker.stop_requested and worker.iterations > 0
    assert worker.run(10, 0.0) == 0


def test_keyboard_interrupt_while_waiting_stops_the_search_threads(
    play_position: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """search() waits in short joins; an exception there stops and joins every thread."""
    import csl_ai.threads as threads_module

    calls = {"n": 0}
    real_join = threading.Thread.join

    def join(self: threading.Thread, timeout: float | None = None) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real_join(self, timeout)

    monkeypatch.setattr(threads_module, "JOIN_POLL_S", 0.05)
    monkeypatch.setattr(threading.Thread, "join", join)
    before = threading.active_count()
    with pytest.raises(KeyboardInterrupt):
        search(load_position(play_position), SearchLimit(iterations=10**12, threads=2, seed=1))
    assert threading.active_count() == before


# --- item 4: bounded inputs, short errors, bounded memory ------------------------------------


def test_best_move_of_dev_zero_fails_at_once() -> None:
    started = time.perf_counter()
    assert_error_line(run_cli(["best-move", "/dev/zero"]), 2, "/dev/zero", "more than")
    assert time.perf_counter() - started < 5


def test_standard_input_is_read_only_up_to_the_cap() -> None:
    ran = run_cli(["best-move", "-"], stdin=b" " * (MAX_INPUT_BYTES + 1))
    assert_error_line(ran, 2, "standard input", "more than")


def test_a_deck_file_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    path = tmp_path / "big.toml"
    path.write_bytes(b"#" * (MAX_INPUT_BYTES + 1))
    assert_error_line(run_cli(["play", "--deck", str(path)]), 2, "big.toml", "more than")


def _with_value(text: str, key: str, value: str) -> str:
    """JSON text with the top-level key's value replaced by raw JSON text."""
    data = json.loads(text)
    data[key] = "@@VALUE@@"
    return json.dumps(data).replace('"@@VALUE@@"', value)


def test_a_huge_bad_value_is_echoed_as_a_short_excerpt(tmp_path: Path, play_position: Path) -> None:
    big = '"' + "X9 " * 3_000_000 + '"'
    path = tmp_path / "hand.json"
    path.write_text(_with_value(play_position.read_text(), "hand", big))
    started = time.perf_counter()
    assert_error_line(run_cli(["best-move", str(path)]), 2, "hand")
    assert time.perf_counter() - started < 5
    deck = tmp_path / "deck.toml"
    long_name = f'name = "{"n" * 1_000_000}"'
    deck.write_text(SkyDeck.default().to_toml().replace('name = "default"', long_name))
    assert_error_line(run_cli(["play", "--deck", str(deck)]), 2, "name")


HUGE_INT = "9" * 5000
DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "raw", [HUGE_INT, "-" + HUGE_INT, DEEP_JSON, '{"a":' * 100_000 + "1" + "}" * 100_000]
)
@pytest.mark.parametrize("key", ["seat", "rules", "hand", "rounds"])
def test_huge_integers_and_deep_nesting_in_a_position(
    tmp_path: Path, play_position: Path, raw: str, key: str
) -> None:
    path = tmp_path / "p.json"
    path.write_text(_with_value(play_position.read_text(), key, raw))
    assert_error_line(run_cli(["best-move", str(path)]), 2, "position")


@pytest.mark.parametrize("raw", [HUGE_INT, DEEP_JSON, "[" * 500 + "]" * 500])
@pytest.mark.parametrize("key", ["seed", "rules", "rounds", "version"])
def test_huge_integers_and_deep_nesting_in_a_record(tmp_path: Path, raw: str, key: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(_with_value(record_text(3, 5), key, raw))
    assert_error_line(run_cli(["replay", str(path)]), 2)


@pytest.mark.parametrize(
    "text",
    [
        f"[candy]\nsingle = {HUGE_INT}\ndouble = 3\n",
        f"name = {HUGE_INT}\n",
        "name = " + "[" * 100_000 + "]" * 100_000 + "\n",
        "name = " + "{a = " * 100_000 + "1" + "}" * 100_000 + "\n",
        "[" + ".".join(["a"] * 20_000) + "]\n",
        "[candy]\nsingle = " + "[" * 300 + "]" * 300 + "\n",
    ],
    ids=["huge-count", "huge-name", "deep-array", "deep-inline-table", "deep-header", "nested-count"],
)
def test_huge_integers_and_deep_nesting_in_a_deck(tmp_path: Path, text: str) -> None:
    path = tmp_path / "deck.toml"
    path.write_text(text)
    assert_error_line(run_cli(["play", "--deck", str(path)]), 2, "deck")


@pytest.mark.parametrize(
    "args",
    [
        ["best-move", "POS", "--iterations", str(2**63)],
        ["best-move", "POS", "--iterations", str(10**12 + 1)],
        ["best-move", "POS", "--time-ms", "1e12"],
        ["best-move", "POS", "--time-ms", "nan"],
        ["best-move", "POS", "--threads", str(2**63)],
        ["analyze", "POS", "--iterations", str(2**63)],
        ["play", "--first-seat", str(2**63)],
        ["play", "--ai", f"ismcts:iters={2**70}"],
        ["play", "--ai", "ismcts:ms=1e15"],
        ["play", "--humans", "9" * 5000],
    ],
    ids=lambda a: " ".join(a)[:40],
)
def test_numeric_options_have_bounds(play_position: Path, args: list[str]) -> None:
    line = assert_error_line(run_cli([str(play_position) if a == "POS" else a for a in args]), 2)
    assert "Overflow" not in line and "internal error" not in line


def test_the_search_stops_at_its_memory_ceiling(
    play_position: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csl_ai.search.run as search_module

    ceiling = 2 << 20
    monkeypatch.setattr(search_module, "MAX_TREE_BYTES", ceiling)
    result = search(load_position(play_position), SearchLimit(iterations=10**12, threads=2, seed=1))
    assert 0 < result.iterations < 10**12
    assert result.nodes * 32 < ceiling
    engine = prepared_engine(load_position(play_position), SearchConfig())
    worker = _core.SearchWorker(engine, 1, 1 << 20, ceiling)
    assert worker.pool_bytes <= ceiling
    worker.run(10**12, 0.0)
    assert worker.failed and worker.pool_bytes <= ceiling and worker.max_bytes == ceiling


def test_best_move_says_when_the_memory_ceiling_stopped_it(
    play_position: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csl_ai.search.run as search_module

    monkeypatch.setattr(search_module, "MAX_TREE_BYTES", 1 << 20)
    ran = run_cli(["best-move", str(play_position), "--iterations", HUGE_SEARCH, "--seed", "1"])
    assert ran.code == 0, ran.stderr
    assert "memory ceiling" in ran.stdout


def test_short_repr_is_bounded_for_any_value() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    for value in (deep, "x" * 10_000_000, 10**100_000, {"k" * 1000: [1] * 1000}):
        assert len(short_repr(value)) <= 60


# --- item 5: closed standard input -----------------------------------------------------------------


def test_best_move_from_closed_stdin_is_a_one_line_error() -> None:
    proc = spawn(["best-move", "-"], close_stdin=True)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert err.decode().splitlines() == ["csl: error: standard input: closed, nothing to read"]


def test_play_with_closed_stdin_saves_the_game_as_at_end_of_input(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    proc = spawn(
        ["play", "-n", "2", "--ai", "random", "--seed", "1", "--record", str(record)], close_stdin=True
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert err == b""
    assert b"Input ended before the game did." in out
    _assert_saved(record, "input ended")


def test_a_very_long_answer_line_is_refused_not_kept(tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    args = ["play", "-n", "2", "--ai", "random", "--seed", "1", "--record", str(record)]
    ran = run_cli(args, stdin=b"B" * 5_000_000 + b"\nquit\n")
    assert ran.code == 0, ran.stderr
    assert max(len(line) for line in ran.stdout.splitlines()) < 2000
    assert "Not accepted" in ran.stdout


# --- item 8: exit codes and the order of checks -----------------------------------------------------


def _no_space(*_args: object, **_kwargs: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_a_full_disk_while_saving_a_game_exits_1_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csl_ai.records as records

    monkeypatch.setattr(records.os, "fsync", _no_space)
    record = tmp_path / "full.json"
    ran = run_cli(
        ["play", "-n", "2", "--humans", "none", "--ai", "random", "--seed", "1", "--record", str(record)]
    )
    assert_error_line(ran, 1, "full.json", "No space left")


def test_an_unwritable_record_folder_exits_1() -> None:
    ran = run_cli(["play", "-n", "2", "--humans", "none", "--ai", "random", "--seed", "1",
                   "--record", "/proc/csl-robustness.json"])
    assert_error_line(ran, 1, "csl-robustness.json")


def test_a_full_disk_during_a_tournament_exits_1_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csl_ai.tournament.harness as harness

    real_fsync = os.fsync
    writes = {"n": 0}

    def fsync(fd: int) -> None:
        writes["n"] += 1
        if writes["n"] > 1:
            _no_space()
        real_fsync(fd)

    monkeypatch.setattr(harness.os, "fsync", fsync)
    out = tmp_path / "t"
    ran = run_cli(["tournament", "--agents", "random,heuristic", "--players", "2", "--games", "2",
                   "--seed", "1", "--workers", "0", "--quiet", "--out", str(out)])
    assert ran.code == 1, ran.stderr
    assert ran.stderr.splitlines()[-1].startswith("csl: error: cannot write")
    assert "games.jsonl" in ran.stderr and "No space left" in ran.stderr


def test_an_unwritable_tournament_folder_exits_1() -> None:
    ran = run_cli(["tournament", "--agents", "random,heuristic", "--players", "2", "--games", "2",
                   "--seed", "1", "--workers", "0", "--quiet", "--out", "/proc/csl-robustness"])
    assert ran.code == 1, ran.stderr
    assert "csl-robustness" in ran.stderr.splitlines()[-1]


@pytest.mark.parametrize(
    "extra",
    [["--workers", "-1"], ["--batch", "0"], ["--out-exists"], ["--workers", str(2**63)],
     ["--agents-budget"]],
    ids=["workers", "batch", "out", "huge-workers", "agent-budget"],
)
@pytest.mark.parametrize("command", ["tournament", "selfplay"])
def test_tournament_refuses_bad_options_before_announcing(
    tmp_path: Path, extra: list[str], command: str
) -> None:
    out = tmp_path / "t"
    if extra == ["--out-exists"]:
        out.mkdir()
        (out / "tournament.json").write_text("{}")
        extra = []
    agents = "random,heuristic"
    if extra == ["--agents-budget"]:
        agents, extra = f"ismcts:iters={10**13}", []
    who = ["--agents", agents] if command == "tournament" else ["--agent", agents.split(",")[0]]
    ran = run_cli([command, *who, "--players", "2", "--games", "2", "--seed", "1",
                   "--out", str(out), *extra])
    assert_error_line(ran, 2)


# --- the fuzz test: mutated real inputs end in exit 0, or 2 with one short line -------------------

_SCALARS: tuple[str, ...] = (
    "0", "-1", "1", "2", "7", "37", "2147483648", "9223372036854775808", "1e400", "-0.0",
    "1.5", "NaN", "Infinity", "true", "false", "null", '""', '"B7"', '"X9"', '"B13"', '"R0"',
    '"*"', '"C1"', '"L2"', '"S9"', '"twice"', '"A"', '"B"', '"é"', '"\\u0000"', "[]", "{}",
    "[1, 2]", '{"a": 1}', '"B7 R2 G5 | B1"', '"B7 B7"', "[0, \"B7\"]",
)
_TEXT_BOMBS: tuple[str, ...] = (
    HUGE_INT,
    "[" * 900 + "]" * 900,
    DEEP_JSON,
    '"' + "B7 " * 200_000 + '"',
    "[" + ", ".join(['"B7"'] * 50_000) + "]",
)
_TOML_SCALARS: tuple[str, ...] = (
    "0", "-1", "1", "2", "3", "8", "9", "36", "37", "1e9", "1.5", "nan", "true", '"x"', "[1, 2]",
    "{a = 1}", "1979-05-27", HUGE_INT, "[" * 400 + "]" * 400, "'''\nx'''", '"' + "x" * 100_000 + '"',
)


class Mutator:
    """Seeded damage to real inputs: bytes, values, types, sizes and nesting."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def bytes_of(self, data: bytes) -> bytes:
        rng = self.rng
        op = rng.randrange(6)
        i = rng.randrange(len(data) + 1)
        j = min(len(data), i + rng.randrange(1, 40))
        if op == 0:
            return data[:i] + bytes([rng.randrange(256)]) + data[i + 1 :]
        if op == 1:
            return data[:i] + data[j:]
        if op == 2:
            return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))) + data[i:]
        if op == 3:
            return data[:i]
        if op == 4:
            return data[:j] + data[i:j] + data[j:]
        return data[:i] + b"\xff\xfe" + data[i:]

    def json_text(self, text: str) -> bytes:
        rng = self.rng
        if rng.random() < 0.3:
            return self.bytes_of(text.encode())
        data = json.loads(text)
        for _ in range(1 + int(rng.random() < 0.3)):
            data = self._mutate_value(data)
        out = json.dumps(data, ensure_ascii=False)
        if "@@BOMB@@" in out:
            out = out.replace('"@@BOMB@@"', rng.choice(_TEXT_BOMBS), 1).replace('"@@BOMB@@"', "0")
        if "@@RAW@@" in out:
            out = out.replace('"@@RAW@@"', rng.choice(_SCALARS))
        return out.encode()

    def _mutate_value(self, data: Any) -> Any:
        rng = self.rng
        spots = list(_containers(data))
        if not spots:
            return data
        parent, key = rng.choice(spots)
        value = parent[key]
        op = rng.randrange(10)
        if op == 0:
            parent[key] = "@@RAW@@"
        elif op == 1:
            parent[key] = "@@BOMB@@" if rng.random() < 0.15 else "@@RAW@@"
        elif op == 2 and isinstance(value, int) and not isinstance(value, bool):
            parent[key] = value + rng.choice((-1, 1, 12, -100, 10**6))
        elif op == 3 and isinstance(value, str) and value:
            k = rng.randrange(len(value))
            parent[key] = value[:k] + rng.choice("BRGCLS*| 0123456789xé") + value[k + 1 :]
        elif op == 4 and isinstance(parent, dict):
            del parent[key]
        elif op == 5 and isinstance(parent, list):
            del parent[key]
        elif op == 6 and isinstance(parent, list):
            parent.insert(key, value)
        elif op == 7 and isinstance(parent, dict):
            parent[rng.choice(("extra", "x" * 5000, ""))] = value
        elif op == 8:
            other_parent, other_key = rng.choice(spots)
            parent[key] = json.loads(json.dumps(other_parent[other_key]))
        else:
            parent[key] = [value] if rng.random() < 0.5 else {"v": value}
        return json.loads(json.dumps(data))

    def toml_text(self, text: str) -> bytes:
        rng = self.rng
        if rng.random() < 0.3:
            return self.bytes_of(text.encode())
        lines = text.splitlines()
        k = rng.randrange(len(lines))
        op = rng.randrange(6)
        if op == 0 and "=" in lines[k]:
            lines[k] = lines[k].split("=")[0] + "= " + rng.choice(_TOML_SCALARS)
        elif op == 1:
            del lines[k]
        elif op == 2:
            lines.insert(k, lines[k])
        elif op == 3:
            lines.insert(k, rng.choice(("[snake]", "[candy.x]", "triple = 1", "x = 1", "[[star]]")))
        elif op == 4 and lines[k].startswith("["):
            lines[k] = rng.choice(("[Candy]", "[candy", "[ candy ]", "[star]", '["candy"]'))
        else:
            lines[k] = lines[k].replace("3", rng.choice(("2", "4", "03", "+3", "3_0")))
        return ("\n".join(lines) + "\n").encode()


def _containers(value: Any) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every value inside value."""
    stack = [value]
    while stack:
        node = stack.pop()
        items: Any = ()
        if isinstance(node, dict):
            items = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        for key, item in items:
            yield node, key
            stack.append(item)


@pytest.fixture(scope="module")
def fuzz_inputs() -> dict[str, list[str]]:
    positions = [
        position_text(players, seed, decisions)
        for players, seed, decisions in (
            (2, 1, 0), (2, 2, 14), (3, 3, 3), (3, 4, 30),
            (4, 5, 40), (4, 6, 80), (5, 7, 60), (5, 8, 130),
        )
    ]
    records = [record_text(2, 11), record_text(3, 12), record_text(4, 13, 50), record_text(5, 14)]
    custom = SkyDeck.from_counts(
        {SkyCard(Kind.CANDY, 1): 12, SkyCard(Kind.CANDY, 2): 4, SkyCard(Kind.SPIDER, 1): 8,
         SkyCard(Kind.SPIDER, 2): 2, SkyCard(Kind.LEOPARD, 1): 6, SkyCard(Kind.LEOPARD, 2): 1,
         SkyCard(Kind.STAR, 1): 3},
        name="my box",
    )
    decks = [SkyDeck.default().to_toml(), custom.to_toml()]
    return {"position": positions, "record": records, "deck": decks}


FUZZ_CASES = {"position": 2000, "record": 1200, "deck": 800}


@pytest.mark.parametrize("kind", sorted(FUZZ_CASES))
def test_fuzzed_inputs_end_in_exit_0_or_one_short_error_line(
    tmp_path: Path, fuzz_inputs: dict[str, list[str]], kind: str
) -> None:
    mutator = Mutator(sum(map(ord, kind)))
    path = tmp_path / ("input.toml" if kind == "deck" else "input.json")
    record_out = str(tmp_path / "out.json")
    outcomes = {0: 0, 2: 0}
    for case in range(FUZZ_CASES[kind]):
        base = mutator.rng.choice(fuzz_inputs[kind])
        data = mutator.toml_text(base) if kind == "deck" else mutator.json_text(base)
        stdin = b""
        if kind == "position":
            source = "-" if case % 5 == 0 else str(path)
            stdin = data if source == "-" else b""
            args = ["best-move", source, "--iterations", "1", "--seed", "1", "--json"]
        elif kind == "record":
            args = ["replay", str(path), "--summary"]
        else:
            args = ["play", "--deck", str(path), "-n", "2", "--ai", "random", "--seed", "1",
                    "--record", record_out]
            stdin = b"quit\n"
        path.write_bytes(data)
        ran = run_cli(args, stdin)
        where = f"{kind} case {case}: {data[:300]!r}"
        assert ran.code in (0, 2), f"{where}\nexit {ran.code}: {ran.stderr[:500]}"
        if ran.code == 0:
            assert ran.stderr == "", f"{where}\n{ran.stderr[:500]}"
        else:
            lines = ran.stderr.splitlines()
            one_error = len(lines) == 1 and lines[0].startswith("csl: error: ")
            assert one_error, f"{where}\n{ran.stderr[:500]}"
            assert len(lines[0]) < MAX_ERROR_LINE, f"{where}\n{lines[0][:500]}"
        outcomes[ran.code] += 1
    assert outcomes[2] > FUZZ_CASES[kind] // 4, outcomes


# --- item 6: one safe writer; never replace what is not a regular file ---------------------------


def _make_node(path: Path, kind: str) -> None:
    """A non-regular file of that kind at path: fifo, symlink (to a file beside it), device."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        target = path.with_name(path.name + ".target")
        target.write_text("keep me\n")
        path.symlink_to(target)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("creating a device node needs root")
        os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    else:
        raise AssertionError(kind)


def _is_still(path: Path, kind: str) -> bool:
    mode = os.lstat(path).st_mode
    return {"fifo": stat.S_ISFIFO, "symlink": stat.S_ISLNK, "device": stat.S_ISCHR}[kind](mode)


_NODE_KINDS = ("fifo", "symlink", "device")


@pytest.mark.parametrize("kind", _NODE_KINDS)
def test_record_refuses_a_non_regular_file_before_any_game(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "game.json"
    _make_node(path, kind)
    ran = run_cli(["play", "-n", "2", "--humans", "none", "--ai", "random", "--seed", "1",
                   "--record", str(path)])  # fmt: skip
    assert_error_line(ran, 2, "--record", "game.json", "not a regular file")
    assert ran.stdout == "", "refused before the game was announced or played"
    assert _is_still(path, kind)
    if kind == "symlink":
        assert path.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_record_dev_null_is_refused_not_replaced() -> None:
    from csl_ai.cli.play import check_writable
    from csl_ai.errors import UnsafeOutputError

    with pytest.raises(UnsafeOutputError, match=r"--record: '/dev/null' is a character device"):
        check_writable(Path("/dev/null"))
    ran = run_cli(["play", "-n", "2", "--humans", "none", "--ai", "random", "--seed", "1",
                   "--record", "/dev/null"])  # fmt: skip
    assert_error_line(ran, 2, "/dev/null", "not a regular file")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)


@pytest.mark.parametrize("kind", _NODE_KINDS)
def test_save_record_never_replaces_a_non_regular_file(tmp_path: Path, kind: str) -> None:
    from csl_ai.errors import UnsafeOutputError
    from csl_ai.records import save_record

    path = tmp_path / "game.json"
    _make_node(path, kind)
    with pytest.raises(UnsafeOutputError, match=r"game\.json.*not a regular file"):
        save_record(json.loads(record_text(2, 1)), path)
    assert _is_still(path, kind)
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def test_the_safe_writer_syncs_then_renames_and_keeps_the_old_file_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from csl_ai import files
    from csl_ai.errors import OutputWriteError
    from csl_ai.files import write_file_atomic

    path = tmp_path / "out.json"
    path.write_text("old\n")
    os.chmod(path, 0o600)
    steps: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        steps.append("fsync")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        steps.append("replace")
        assert Path(src).parent == path.parent and Path(dst) == path
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    write_file_atomic(path, "new\n", "results file")
    assert path.read_text() == "new\n" and steps == ["fsync", "replace"]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, "an existing file keeps its mode"
    monkeypatch.setattr(files.os, "fsync", _no_space)
    with pytest.raises(OutputWriteError, match=r"cannot write results file: No space"):
        write_file_atomic(path, "newer\n", "results file")
    assert path.read_text() == "new\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


_TOURNAMENT_ARGS = ["--agents", "random,heuristic", "--players", "2", "--games", "2", "--seed", "1",
                    "--workers", "0", "--quiet"]  # fmt: skip


@pytest.mark.parametrize(
    ("name", "kind"),
    [("summary.json", "fifo"), ("tournament.json", "symlink"), ("winshare.png", "device"),
     ("summary.json", "symlink")],
)  # fmt: skip
def test_a_new_tournament_refuses_non_regular_result_files_before_announcing(
    tmp_path: Path, name: str, kind: str
) -> None:
    out = tmp_path / "t"
    out.mkdir()
    _make_node(out / name, kind)
    ran = run_cli(["tournament", *_TOURNAMENT_ARGS, "--out", str(out)])
    assert_error_line(ran, 2, name, "not a regular file")
    assert _is_still(out / name, kind)
    assert not (out / "games.jsonl").exists()


def _finished_tournament(out: Path, *, agents: str = "random,heuristic", extra: Sequence[str] = ()) -> None:
    args = ["tournament", "--agents", agents, "--players", "2", "--games", "4", "--seed", "5",
            "--workers", "0", "--quiet", "--out", str(out), *extra]  # fmt: skip
    ran = run_cli(args)
    assert ran.code == 0, ran.stderr


@pytest.mark.parametrize("kind", ["fifo", "symlink"])
@pytest.mark.parametrize("name", ["games.jsonl", "summary.json", "tournament.json"])
def test_resume_refuses_non_regular_result_files_at_once(tmp_path: Path, name: str, kind: str) -> None:
    """A FIFO at games.jsonl used to hang the resume for ever, reading it."""
    out = tmp_path / "t"
    _finished_tournament(out)
    (out / name).rename(out / (name + ".real"))
    _make_node(out / name, kind)
    proc = spawn(["tournament", "--resume", str(out), "--workers", "0", "--quiet"])
    out_text, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    lines = err.decode().splitlines()
    assert len(lines) == 1 and name in lines[0] and "not a regular file" in lines[0], lines
    assert _is_still(out / name, kind)


def test_appending_refuses_a_non_regular_file(tmp_path: Path) -> None:
    from csl_ai.errors import UnsafeOutputError
    from csl_ai.tournament.harness import ResultsDir
    from csl_ai.tournament.runner import TournamentConfig, run_batch

    config = TournamentConfig(agents=("random",), rules=RulesConfig(players=2), games=1, seed=1,
                              mode="selfplay", training_rows=True)  # fmt: skip
    results = ResultsDir(tmp_path, config)
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    (tmp_path / "training.jsonl").symlink_to(target)
    with pytest.raises(UnsafeOutputError, match=r"training\.jsonl.*not a regular file"):
        results.append(run_batch(config, [0]))
    assert target.read_text() == ""
    (tmp_path / "training.jsonl").unlink()
    os.mkfifo(tmp_path / "games.jsonl")
    with pytest.raises(UnsafeOutputError, match=r"games\.jsonl.*not a regular file"):
        results.append(run_batch(config, [0]))


# --- item 7: resume checks every games.jsonl line against tournament.json -------------------------


def _custom_deck_file(path: Path) -> Path:
    deck = SkyDeck.from_counts(
        {SkyCard(Kind.CANDY, 1): 12, SkyCard(Kind.CANDY, 2): 4, SkyCard(Kind.SPIDER, 1): 8,
         SkyCard(Kind.SPIDER, 2): 2, SkyCard(Kind.LEOPARD, 1): 6, SkyCard(Kind.LEOPARD, 2): 1,
         SkyCard(Kind.STAR, 1): 3},
        name="my box",
    )  # fmt: skip
    path.write_text(deck.to_toml())
    return path


@pytest.mark.parametrize(
    ("agents", "extra", "fragment"),
    [
        ("heuristic,zoo:cautious", [], "agents"),
        ("heuristic,random", [], "agents"),
        ("random,heuristic", ["--sides", "candy=B"], "rules.sides"),
        ("random,heuristic", ["--star-option", "double"], "rules.star_option"),
        ("random,heuristic", ["--deck", "DECK"], "rules.deck"),
    ],
    ids=["other-agents", "reversed-agents", "other-sides", "other-star-option", "other-deck"],
)
def test_resume_refuses_games_of_another_tournament_with_the_same_seed(
    tmp_path: Path, agents: str, extra: list[str], fragment: str
) -> None:
    """Same seed and agent count give the same schedule of seat indices: the lines used
    to pass and their wins went to the wrong agents."""
    played = tmp_path / "played"
    _finished_tournament(played)
    other = tmp_path / "other"
    deck = str(_custom_deck_file(tmp_path / "deck.toml"))
    args = ["tournament", "--agents", agents, "--players", "2", "--games", "4", "--seed", "5",
            "--workers", "0", "--quiet", "--out", str(other),
            *[deck if a == "DECK" else a for a in extra]]  # fmt: skip
    assert run_cli(args).code == 0
    games = (played / "games.jsonl").read_bytes()
    (other / "games.jsonl").write_bytes(games)
    (other / "summary.json").unlink()
    ran = run_cli(["tournament", "--resume", str(other), "--workers", "0", "--quiet"])
    line = assert_error_line(ran, 2, "games.jsonl:1:", fragment)
    assert "tournament.json" in line
    assert (other / "games.jsonl").read_bytes() == games
    assert not (other / "summary.json").exists()


def test_resume_refuses_a_line_whose_record_was_changed(tmp_path: Path) -> None:
    out = tmp_path / "t"
    _finished_tournament(out)
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    changed = json.loads(lines[2])
    changed["totals"] = changed["totals"][::-1] if len(set(changed["totals"])) > 1 else [99, 99]
    (out / "games.jsonl").write_text("".join(lines[:2]) + json.dumps(changed) + "\n" + lines[3])
    ran = run_cli(["tournament", "--resume", str(out), "--workers", "0", "--quiet"])
    assert_error_line(ran, 2, "games.jsonl:3:", "totals")


def test_resume_drops_a_duplicated_job_line_from_the_file(tmp_path: Path) -> None:
    out = tmp_path / "t"
    _finished_tournament(out)
    games = out / "games.jsonl"
    lines = games.read_text().splitlines(keepends=True)
    summary = json.loads((out / "summary.json").read_text())
    games.write_text(lines[0] + lines[1] + lines[0] + lines[1] + lines[2][:30])
    ran = run_cli(["tournament", "--resume", str(out), "--workers", "0", "--quiet"])
    assert ran.code == 0, ran.stderr
    jobs = [json.loads(line)["job"] for line in games.read_text().splitlines()]
    assert sorted(jobs) == [0, 1, 2, 3], jobs
    assert json.loads((out / "summary.json").read_text())["standings"] == summary["standings"]
    assert [p.name for p in out.iterdir() if ".tmp" in p.name] == []


# --- item 10: --address HOST:PORT joins a head started with `ray start --head` -------------------

RAY_EXE = Path(sys.executable).with_name("ray")
HEAD_START_S = 120.0


@dataclass(frozen=True)
class Head:
    """A Ray head of this test module's own, with token authentication on."""

    address: str
    home: Path
    """A HOME whose ~/.ray/auth_token holds the head's token, as `ray start` leaves it."""
    token_file: Path
    """The same token in a file of its own."""
    base: Path


def _free_local_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_env(home: Path) -> dict[str, str]:
    """This environment without Ray's address and authentication settings, with HOME home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH") and k != "RAY_ADDRESS"}
    env["HOME"] = str(home)
    return env


def _start_time(pid: int) -> str | None:
    """A process's start time (field 22 of /proc/PID/stat): with its pid, who it is."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()[19]


def _descendants(root: int) -> dict[int, str]:
    """Every process below root now, with its start time."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            after = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(after[1]), []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            started = _start_time(child)
            if started is not None and child not in found:
                found[child] = started
                todo.append(child)
    return found


def _stop_head(proc: subprocess.Popen[bytes]) -> None:
    """Stop this module's head and only it: `ray stop` would stop every Ray on the machine.

    `ray start --block` shuts its own head's processes down on SIGTERM; any of them still
    running afterwards (the same pid and start time as before) is killed.
    """
    spawned = _descendants(proc.pid)
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid, started in spawned.items():
        if _start_time(pid) == started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def token_head() -> Iterator[Head]:
    """`ray start --head --port P` on a free local port, with a token in its HOME (so Ray
    turns token authentication on), stopped at the end whatever happens."""
    import secrets
    import shutil
    import tempfile

    if not RAY_EXE.exists():
        pytest.skip(f"no `ray` executable next to {sys.executable}")
    if not Path("/proc/self/stat").exists():
        pytest.skip("stopping only this test's Ray head needs Linux /proc")
    base = Path(tempfile.mkdtemp(prefix="csl-ray-", dir="/tmp"))
    home = base / "home"
    (home / ".ray").mkdir(parents=True)
    token = secrets.token_hex(32)
    (home / ".ray" / "auth_token").write_text(token)
    token_file = base / "token"
    token_file.write_text(token)
    port = _free_local_port()
    log_path = base / "head.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(RAY_EXE), "start", "--head", "--block", "--port", str(port), "--num-cpus", "1",
             "--include-dashboard=false", "--disable-usage-stats", "--temp-dir", str(base / "ray")],
            env=_ray_env(home), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            cwd=base, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + HEAD_START_S
        while b"Ray runtime started" not in log_path.read_bytes():
            if proc.poll() is not None or time.monotonic() > deadline:
                last = (log_path.read_text(errors="replace").strip().splitlines() or ["no output"])[-1]
                pytest.skip(f"`ray start --head` cannot start a head here: {last[:200]}")
            time.sleep(0.2)
        yield Head(f"127.0.0.1:{port}", home, token_file, base)
    finally:
        _stop_head(proc)
        shutil.rmtree(base, ignore_errors=True)


def _tournament_on(head: Head, out: Path, home: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "csl_ai", "tournament", "--address", head.address,
         "--agents", "random,heuristic", "--players", "2", "--games", "4", "--workers", "1",
         "--seed", "3", "--quiet", "--out", str(out), *extra],
        env=_ray_env(home), cwd=out.parent, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip


def test_a_tournament_joins_a_token_authenticated_head_by_host_and_port(
    token_head: Head, tmp_path: Path
) -> None:
    """The head was started the usual way; the driver finds the token where `ray start`
    found it. It used to fail with InvalidAuthToken unless RAY_AUTH_MODE=token was set."""
    from csl_ai.tournament.harness import ResultsDir
    from csl_ai.tournament.runner import run_local

    out = tmp_path / "t"
    proc = _tournament_on(token_head, out, token_head.home)
    assert proc.returncode == 0, proc.stderr[-3000:]
    announced = " ".join(proc.stderr.split())
    assert announced == f"4 games: 2 deals x 2 seatings, 2 players, seed 3 -> {out}", proc.stderr[-3000:]
    results = ResultsDir.open(out)
    assert results.load() == {o.job: o for o in run_local(results.config)}


def test_a_tournament_takes_the_clusters_token_from_a_file(token_head: Head, tmp_path: Path) -> None:
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    out = tmp_path / "t"
    proc = _tournament_on(token_head, out, empty_home, "--ray-token-file", str(token_head.token_file))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert len((out / "games.jsonl").read_text().splitlines()) == 4


def test_a_missing_or_wrong_token_is_one_line_saying_how_to_give_it(
    token_head: Head, tmp_path: Path
) -> None:
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    wrong = tmp_path / "wrong-token"
    wrong.write_text("0" * 64)
    for extra, says in (((), "asks for an authentication token"),
                        (("--ray-token-file", str(wrong)), "refused the authentication token")):  # fmt: skip
        out = tmp_path / "t"
        started = time.monotonic()
        proc = _tournament_on(token_head, out, empty_home, *extra)
        assert time.monotonic() - started < 60
        assert proc.returncode == 1, proc.stderr[-3000:]
        lines = proc.stderr.splitlines()
        assert len(lines) == 1, proc.stderr[-3000:]
        assert lines[0].startswith("csl: error: ") and says in lines[0], lines[0]
        assert "--ray-token-file" in lines[0] and "RAY_AUTH_TOKEN" in lines[0]
        assert not out.exists(), "refused before the run was announced or its folder made"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_full_stdout_is_one_line_on_stderr(json_flag: list[str]) -> None:
    """With --json an error is also a JSON object on stdout; when stdout itself is what
    failed, the line on stderr is all there is, never a traceback."""
    position = ROOT / "docs" / "position-example.json"
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [sys.executable, "-m", "csl_ai", "best-move", str(position), "-i", "20", *json_flag],
            stdout=full,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
            timeout=120,
        )
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == ["csl: error: No space left on device"]


def test_a_closed_stdout_is_a_failure_not_a_silent_success() -> None:
    position = ROOT / "docs" / "position-example.json"
    proc = subprocess.run(
        [sys.executable, "-m", "csl_ai", "best-move", str(position), "-i", "20"],
        stdout=None,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.close(1),
        env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
        timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == ["csl: error: standard output: closed, nowhere to answer"]


_SIGNAL_WHILE_LOADING = """
import builtins, os, signal, sys
import csl_ai.__main__ as entry
real_import = builtins.__import__
signum = getattr(signal, sys.argv[1])
sent = []
def hook(name, *args, **kwargs):
    if name == "typer" and not sent:
        sent.append(1)
        os.kill(os.getpid(), signum)
    return real_import(name, *args, **kwargs)
builtins.__import__ = hook
sys.argv = ["csl", *sys.argv[2:]]
entry.main()
"""


@pytest.mark.parametrize(("name", "code", "text"), [
    ("SIGINT", 130, "interrupted"), ("SIGTERM", 143, "terminated by SIGTERM"),
    ("SIGHUP", 129, "terminated by SIGHUP"),
])  # fmt: skip
def test_a_signal_while_the_command_line_loads_is_one_line(name: str, code: int, text: str) -> None:
    """The signal arrives as the entry point imports typer: before any command runs."""
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNAL_WHILE_LOADING, name, "best-move", "-", "--json"],
        input=b"",
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
        preexec_fn=default_signals,
        timeout=120,
    )
    assert proc.returncode == code, proc.stderr
    assert proc.stderr.decode().splitlines() == [f"csl: error: {text}"]
    assert json.loads(proc.stdout)["error"] == {"kind": "KeyboardInterrupt", "message": text, "exit_code": code}


def test_a_signal_ignored_at_start_stays_ignored() -> None:
    """nohup: a hang-up signal while loading, or while the command runs, changes nothing."""
    proc = subprocess.run(
        [sys.executable, "-c", _SIGNAL_WHILE_LOADING, "SIGHUP", "rules", "--players", "2"],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")},
        preexec_fn=lambda: (default_signals(), signal.signal(signal.SIGHUP, signal.SIG_IGN)),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout and not proc.stderr
    from csl_ai.cli.common import signals_as_exceptions

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with signals_as_exceptions():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


def test_a_termination_a_library_turned_into_ctrl_c_keeps_its_signal() -> None:
    """Ray catches the interrupt in ray.get and raises a KeyboardInterrupt of its own."""
    from csl_ai.cli.common import interrupt_exit_code, interrupt_text, signals_as_exceptions

    plain = KeyboardInterrupt()
    with signals_as_exceptions():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
        except KeyboardInterrupt:
            pass
        assert (interrupt_exit_code(plain), interrupt_text(plain)) == (143, "terminated by SIGTERM")
    with signals_as_exceptions():
        assert (interrupt_exit_code(plain), interrupt_text(plain)) == (130, "interrupted")


def test_the_command_lines_signal_handlers_outlive_ray_init() -> None:
    from csl_ai.tournament.harness import python_signal_handlers_kept

    def mine(signum: int, frame: Any) -> None: ...

    before = signal.signal(signal.SIGTERM, mine)
    try:
        with python_signal_handlers_kept():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, before)
