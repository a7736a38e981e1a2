"""`csl engine`: the JSON-lines protocol (docs/engine.md) through a real process.

One engine process is driven line by line: isready, position (inline and from a file),
go with each budget, progressive info lines, stop, quit, end of input, and every kind of
mistake answered by an error line that leaves the engine running. Its answer for a
position and seed is the one `csl best-move --json` gives.
"""

from __future__ import annotations

import io
import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import csl_ai
from csl_ai.cli import app
from csl_ai.engine import Engine, ProtocolError, read_command
from csl_ai.game import Game, Phase
from csl_ai.position import observation_to_position
from csl_ai.records import game_to_record
from csl_ai.rules import RulesConfig

ROOT = Path(csl_ai.__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "position-example.json"
VARYING = ("elapsed_s", "cpu_s")
"""The fields of a search result that are timings, not answers."""
LINE_TIMEOUT_S = 60.0


class EngineProcess:
    """A `csl engine` subprocess: send commands, read its answer lines (with a timeout)."""

    def __init__(self, cwd: Path | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "csl_ai", "engine"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, command: dict[str, Any]) -> None:
        self.send_raw(json.dumps(command).encode() + b"\n")

    def read(self, timeout: float = LINE_TIMEOUT_S) -> dict[str, Any]:
        line = self.lines.get(timeout=timeout)
        assert line is not None, f"the engine ended: {self.stderr()}"
        assert line.endswith(b"\n") and line.count(b"\n") == 1
        answer = json.loads(line)
        assert isinstance(answer, dict)
        return answer

    def ask(self, command: dict[str, Any]) -> dict[str, Any]:
        self.send(command)
        return self.read()

    def next_not_info(self) -> dict[str, Any]:
        """The next line that is not a running search's info line."""
        line = self.read()
        while "info" in line:
            line = self.read()
        return line

    def until_answer(self, timeout: float = LINE_TIMEOUT_S) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The info lines of a go, then its answer (bestmove or error)."""
        infos = []
        while True:
            line = self.read(timeout)
            if "info" in line:
                infos.append(line)
            else:
                return infos, line

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait(self, timeout: float = 30) -> int:
        return self.proc.wait(timeout=timeout)

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass


@pytest.fixture
def engine() -> Iterator[EngineProcess]:
    proc = EngineProcess()
    try:
        yield proc
    finally:
        proc.kill()


def best_move_json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["best-move", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def without_timings(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in VARYING}


def example() -> dict[str, Any]:
    return json.loads(EXAMPLE.read_text())


def allocation_position(players: int = 3, seed: int = 5) -> dict[str, Any]:
    game = Game(RulesConfig(players=players), seed=seed)
    return observation_to_position(game.observation(0))


def waiting_position() -> dict[str, Any]:
    """A card-play position of a seat that is not to move: it has no decision."""
    game = Game(RulesConfig(players=3), seed=8)
    while game.phase is not Phase.PLAY:
        seat = game.pending_seats()[0]
        game.apply(game.legal_moves(seat)[0], seat)
    idle = (game.to_move + 1) % game.players
    return observation_to_position(game.observation(idle))


# --- the answers ------------------------------------------------------------------------------
def test_its_answer_is_the_one_best_move_gives(engine: EngineProcess) -> None:
    """The same position, budget and seed: the same result as `csl best-move --json`,
    timings aside, for an iteration budget, a level, and two threads."""
    assert engine.ask({"cmd": "isready"}) == {"ready": True}
    answer = engine.ask({"cmd": "position", "file": str(EXAMPLE)})
    assert answer == {"position": {"seat": 1, "players": 4, "round": 2, "phase": "play", "legal_moves": 2}}
    for go, options in (
        ({"iterations": 3000, "seed": 11}, ["--iterations", "3000", "--seed", "11"]),
        ({"level": "fast", "seed": 4}, ["--level", "fast", "--seed", "4"]),
        ({"iterations": 2000, "seed": 9, "threads": 2}, ["--iterations", "2000", "--seed", "9", "--threads", "2"]),
    ):
        engine.send({"cmd": "go", **go})
        infos, answer = engine.until_answer()
        assert infos, "at least one info line before the answer"
        expected = best_move_json(str(EXAMPLE), *options)
        assert set(answer) == {"bestmove", "result"}
        assert without_timings(answer["result"]) == without_timings(expected)
        assert answer["bestmove"] == expected["best_move"]
        final = infos[-1]["info"]
        assert final["iterations"] == expected["iterations"] and final["best"] == expected["best_move"]
        assert final["stopped"] is False


def test_an_inline_position_and_the_default_level(engine: EngineProcess, tmp_path: Path) -> None:
    """An inline position searches as its file does; no budget is the normal level, as
    for best-move; ids come back on every line answering their command."""
    position = allocation_position()
    path = tmp_path / "alloc.json"
    path.write_text(json.dumps(position))
    answer = engine.ask({"cmd": "position", "position": position, "id": "p1"})
    assert answer["id"] == "p1" and answer["position"]["phase"] == "allocate"
    assert answer["position"]["legal_moves"] > 1
    engine.send({"cmd": "go", "seed": 3, "id": 42})
    infos, answer = engine.until_answer()
    assert all(line["id"] == 42 for line in infos) and answer["id"] == 42
    assert infos[0]["info"]["level"] == "normal" and infos[0]["info"]["elapsed_ms"] == 0
    expected = best_move_json(str(path), "--seed", "3")
    del answer["id"]
    assert without_timings(answer["result"]) == without_timings(expected)
    assert answer["result"]["level"] == "normal"


def test_info_lines_come_while_it_searches(engine: EngineProcess) -> None:
    """A timed search reports its elapsed time every info_ms, then its figures."""
    engine.ask({"cmd": "position", "position": example()})
    engine.send({"cmd": "go", "time_ms": 700, "info_ms": 50, "seed": 1})
    infos, answer = engine.until_answer()
    assert "bestmove" in answer
    elapsed = [line["info"]["elapsed_ms"] for line in infos]
    assert len(infos) >= 4 and elapsed == sorted(elapsed) and elapsed[-1] >= 600
    assert infos[0]["info"]["time_ms"] == 700 and infos[0]["info"]["iterations"] is None
    assert infos[-1]["info"]["iterations"] == answer["result"]["iterations"] > 0


# --- stop, quit, end of input -------------------------------------------------------------------
def test_stop_ends_a_search_at_once_with_the_answer_so_far(engine: EngineProcess) -> None:
    engine.ask({"cmd": "position", "position": allocation_position()})
    engine.send({"cmd": "go", "iterations": 10**9, "seed": 2})
    first = engine.read()
    assert first["info"]["iterations"] == 10**9
    time.sleep(0.5)
    engine.send({"cmd": "isready"})
    assert engine.next_not_info() == {"ready": True}, "isready answers during a search"
    started = time.monotonic()
    engine.send({"cmd": "stop"})
    infos, answer = engine.until_answer(timeout=10)
    assert time.monotonic() - started < 3.0
    assert "bestmove" in answer and 0 < answer["result"]["iterations"] < 10**9
    assert infos[-1]["info"]["stopped"] is True
    assert answer["bestmove"] == answer["result"]["best_move"]
    # a stop with no search running says nothing; the engine goes on
    engine.send({"cmd": "stop"})
    assert engine.ask({"cmd": "isready"}) == {"ready": True}
    engine.send({"cmd": "go", "iterations": 500, "seed": 2})
    _infos, again = engine.until_answer()
    assert again["result"]["iterations"] == 500


def test_quit_stops_the_search_answers_and_ends(engine: EngineProcess) -> None:
    engine.ask({"cmd": "position", "position": allocation_position()})
    engine.send({"cmd": "go", "iterations": 10**9})
    engine.read()
    started = time.monotonic()
    engine.send({"cmd": "quit"})
    _infos, answer = engine.until_answer(timeout=10)
    assert "bestmove" in answer
    assert engine.wait() == 0
    assert time.monotonic() - started < 5.0
    assert engine.lines.get(timeout=5) is None, "nothing after the answer"


def test_end_of_input_waits_for_the_search_to_answer() -> None:
    """`printf ... | csl engine`: closing stdin after go still gets the bestmove."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    script = "\n".join(
        json.dumps(c)
        for c in (
            {"cmd": "position", "file": str(EXAMPLE)},
            {"cmd": "go", "iterations": 2000, "seed": 5},
        )
    )
    proc = subprocess.run(
        [sys.executable, "-m", "csl_ai", "engine"], input=script, capture_output=True, text=True, env=env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert "position" in lines[0] and "info" in lines[1] and "bestmove" in lines[-1]
    assert lines[-1]["result"]["iterations"] == 2000


# --- errors never end the engine ------------------------------------------------------------------
def test_every_mistake_is_one_error_line_and_the_engine_goes_on(engine: EngineProcess, tmp_path: Path) -> None:
    record = tmp_path / "game.json"
    game = Game(RulesConfig(players=2), seed=1)
    record.write_text(json.dumps(game_to_record(game)))
    over = waiting_position()
    bad_rules = example()
    bad_rules["rules"]["players"] = 9
    cases: list[tuple[bytes, str, str]] = [
        (b"not json", "bad_json", "bad JSON"),
        (b"[1, 2]", "bad_command", "JSON object"),
        (b'{"cmd": 3}', "bad_command", "cmd"),
        (b'{"id": 1}', "bad_command", "cmd"),
        (b'{"cmd": "uci"}', "unknown_command", "'uci'"),
        (b'{"cmd": "isready", "extra": 1}', "bad_command", "'extra'"),
        (b'{"cmd": "isready", "id": [1]}', "bad_command", "id"),
        (b'{"cmd": "go"}', "no_position", "position"),
        (b'{"cmd": "position"}', "bad_command", "one of"),
        (b'{"cmd": "position", "file": "-"}', "bad_command", "file"),
        (json.dumps({"cmd": "position", "file": str(tmp_path / "none.json")}).encode(), "bad_position", "cannot read"),
        (json.dumps({"cmd": "position", "file": str(record)}).encode(), "bad_position", "game record"),
        (json.dumps({"cmd": "position", "position": game_to_record(game)}).encode(), "bad_position", "game record"),
        (json.dumps({"cmd": "position", "position": bad_rules}).encode(), "bad_position", "players"),
        (json.dumps({"cmd": "position", "position": over}).encode(), "no_decision", "no decision"),
        (b'{"cmd": "position", "position": "x"}', "bad_position", "JSON object"),
        (b"\xff\xfe{}", "bad_json", "UTF-8"),
        (b"[" * 100_000, "bad_json", "bad JSON"),
    ]
    for data, kind, fragment in cases:
        engine.send_raw(data + b"\n")
        answer = engine.read()
        assert "error" in answer and set(answer) <= {"error", "id"}, (data[:60], answer)
        assert answer["error"]["kind"] == kind, (data[:60], answer)
        assert fragment in answer["error"]["message"], (data[:60], answer)
    engine.ask({"cmd": "position", "position": example()})
    for go, fragment in (
        ({"iterations": 0}, "iterations"),
        ({"iterations": True}, "iterations"),
        ({"iterations": 10**13}, "iterations"),
        ({"time_ms": -1}, "time_ms"),
        ({"time_ms": 10**9}, "time_ms"),
        ({"level": "godlike"}, "level"),
        ({"level": "fast", "iterations": 10}, "one budget"),
        ({"threads": 0}, "threads"),
        ({"threads": 1000}, "threads"),
        ({"seed": -1}, "seed"),
        ({"seed": 2**64}, "seed"),
        ({"info_ms": 0}, "info_ms"),
        ({"depth": 3}, "'depth'"),
    ):
        answer = engine.ask({"cmd": "go", **go, "id": "g"})
        assert answer["error"]["kind"] in ("bad_option", "bad_command") and answer["id"] == "g", answer
        assert fragment in answer["error"]["message"], answer
    # a refused position leaves none behind: go does not search an older one
    engine.send_raw(b'{"cmd": "position", "position": {}}\n')
    assert engine.read()["error"]["kind"] == "bad_position"
    assert engine.ask({"cmd": "go"})["error"]["kind"] == "no_position"
    # while a search runs, position and go are refused; the search goes on to its answer
    engine.ask({"cmd": "position", "position": example()})
    engine.send({"cmd": "go", "iterations": 10**9, "seed": 1})
    assert "info" in engine.read()
    for command in ({"cmd": "go"}, {"cmd": "position", "position": example()}):
        engine.send(command)
        line = engine.next_not_info()
        assert line["error"]["kind"] == "busy", line
    engine.send({"cmd": "stop"})
    _infos, answer = engine.until_answer()
    assert "bestmove" in answer
    assert engine.ask({"cmd": "isready"}) == {"ready": True}
    engine.send({"cmd": "quit"})
    assert engine.wait() == 0
    assert engine.stderr() == ""


# --- in-process pieces ------------------------------------------------------------------------------
def test_an_overlong_line_is_an_error_and_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    import csl_ai.engine as engine_module

    monkeypatch.setattr(engine_module, "MAX_LINE_BYTES", 100)
    stream = io.BytesIO(b'{"cmd": "isready", "pad": "' + b"x" * 500 + b'"}\n{"cmd": "isready"}\n')
    with pytest.raises(ProtocolError) as refused:
        read_command(stream)
    assert refused.value.kind == "line_too_long"
    assert read_command(stream) == b'{"cmd": "isready"}\n'
    assert read_command(stream) is None


def test_an_engine_whose_reader_went_away_stops_writing() -> None:
    written: list[str] = []

    def write(text: str) -> None:
        if written:
            raise BrokenPipeError
        written.append(text)

    engine = Engine(write)
    assert engine.handle_line('{"cmd": "isready"}')
    assert not engine.closed
    assert engine.handle_line('{"cmd": "isready"}')
    assert engine.closed and written == ['{"ready": true}\n']
    assert engine.handle_line('{"cmd": "quit"}') is False
