"""`csl engine`: the search as a long-running program that speaks JSON lines, as chess
engines speak UCI.

A program that wants best moves starts ``csl engine`` once and writes one JSON object a
line on its standard input; each answer is one JSON object a line on standard output.
The protocol is documented in docs/engine.md:

- ``{"cmd": "isready"}`` -> ``{"ready": true}`` (at once, even while a search runs);
- ``{"cmd": "position", "position": {...}}`` or ``{"cmd": "position", "file": "p.json"}``
  sets the position (the JSON ``csl best-move`` reads) -> ``{"position": {...summary}}``;
- ``{"cmd": "go", "iterations": N | "time_ms": T | "level": "normal", "threads": k,
  "seed": s}`` searches it in the background: ``{"info": {...}}`` lines while it runs,
  then ``{"bestmove": MOVE, "result": ...}`` where result is what ``csl best-move --json``
  prints for the same position and budget;
- ``{"cmd": "stop"}`` ends the running search at once, which answers with what it has;
- ``{"cmd": "quit"}`` stops any search (it still answers) and ends the program.

Every command may carry an ``"id"`` (a string or an integer) that the lines answering it
repeat. Every mistake (bad JSON, an unknown command or field, an invalid position, a
``go`` while a search runs) is answered by one ``{"error": {"kind", "message"}}`` line
and never ends the program. End of input waits for a running search to answer, then
ends the program.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Final

from csl_ai.errors import CslError, clip, short_repr
from csl_ai.files import MAX_INPUT_BYTES
from csl_ai.game import Observation
from csl_ai.moves import move_to_json

MAX_LINE_BYTES: Final = MAX_INPUT_BYTES
"""Longest command line read (a position inline is a few KiB); a longer one is an error
and is skipped."""
MAX_ITERATIONS: Final = 10**12
"""Most iterations a ``go`` accepts (as ``csl best-move --iterations``)."""
MAX_TIME_MS: Final = 86_400_000.0
"""Longest ``time_ms`` a ``go`` accepts: a day (as ``csl best-move --time-ms``)."""
MAX_THREADS: Final = 256
MAX_SEED: Final = 2**64 - 1
DEFAULT_INFO_MS: Final = 250
"""How often a running search reports progress (``info_ms`` of ``go`` changes it)."""
MIN_INFO_MS: Final = 10
MAX_INFO_MS: Final = 60_000
MAX_ID_CHARS: Final = 200
_STOP_JOIN_S: Final = 5.0

COMMAND_FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "isready": (),
    "position": ("position", "file"),
    "go": ("iterations", "time_ms", "level", "threads", "seed", "info_ms"),
    "stop": (),
    "quit": (),
}
"""Each command and the fields it takes besides ``cmd`` and ``id``."""


def search_stops() -> bool:
    """Whether this build's search takes a stop event (``search(..., stop=event)``), so
    that ``stop`` ends a search at once; without it a stopped search runs its budget out."""
    from csl_ai.search import search

    try:
        return "stop" in inspect.signature(search).parameters
    except (TypeError, ValueError):
        return False


class ProtocolError(Exception):
    """A command the engine refuses: its kind (``bad_json``, ``bad_command``,
    ``unknown_command``, ``bad_option``, ``bad_position``, ``no_position``,
    ``no_decision``, ``busy``, ``cannot_stop``, ``line_too_long``, ``search_failed``;
    ``internal`` for a bug) and a one-line message."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = clip(" ".join(message.split()), 300)


@dataclass(frozen=True)
class Budget:
    """What a ``go`` asked for: a level (its iterations follow the player count) or an
    iteration and/or time budget; threads and seed."""

    level: str | None
    iterations: int | None
    time_ms: float | None
    threads: int
    seed: int | None

    def limit(self, players: int) -> Any:
        """The SearchLimit `csl best-move` searches with for the same options."""
        from csl_ai.agents import level_limit
        from csl_ai.search import SearchLimit

        if self.level is not None:
            return level_limit(self.level, players, self.seed, self.threads)
        return SearchLimit(
            iterations=self.iterations, time_ms=self.time_ms, threads=self.threads, seed=self.seed
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_budget(command: Mapping[str, Any]) -> tuple[Budget, float]:
    """The budget of a ``go`` and its info interval in seconds, checked as `csl best-move`
    checks its options (ProtocolError ``bad_option`` naming the field)."""
    from csl_ai.agents import DEFAULT_LEVEL, LEVELS

    def bad(message: str) -> ProtocolError:
        return ProtocolError("bad_option", message)

    iterations = command.get("iterations")
    if iterations is not None and (not _is_int(iterations) or not 1 <= iterations <= MAX_ITERATIONS):
        raise bad(f"iterations: must be an integer 1..{MAX_ITERATIONS:,}, got {short_repr(iterations)}")
    time_ms = command.get("time_ms")
    if time_ms is not None and (
        isinstance(time_ms, bool)
        or not isinstance(time_ms, (int, float))
        or not 0 < time_ms <= MAX_TIME_MS
    ):
        raise bad(f"time_ms: must be a number more than 0 and at most {MAX_TIME_MS:,.0f}, got {short_repr(time_ms)}")
    level = command.get("level")
    if level is not None:
        if not isinstance(level, str) or level not in LEVELS:
            raise bad(f"level: must be one of {', '.join(LEVELS)}, got {short_repr(level)}")
        given = [name for name in ("iterations", "time_ms") if command.get(name) is not None]
        if given:
            raise bad(f"level and {given[0]}: give one budget")
    elif iterations is None and time_ms is None:
        level = DEFAULT_LEVEL
    threads = command.get("threads", 1)
    if not _is_int(threads) or not 1 <= threads <= MAX_THREADS:
        raise bad(f"threads: must be an integer 1..{MAX_THREADS}, got {short_repr(threads)}")
    seed = command.get("seed")
    if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
        raise bad(f"seed: must be an integer 0..{MAX_SEED}, got {short_repr(seed)}")
    info_ms = command.get("info_ms", DEFAULT_INFO_MS)
    if isinstance(info_ms, bool) or not isinstance(info_ms, (int, float)) or not MIN_INFO_MS <= info_ms <= MAX_INFO_MS:
        raise bad(f"info_ms: must be a number {MIN_INFO_MS}..{MAX_INFO_MS}, got {short_repr(info_ms)}")
    budget = Budget(
        level=level,
        iterations=iterations if level is None else None,
        time_ms=float(time_ms) if time_ms is not None else None,
        threads=threads,
        seed=seed,
    )
    return budget, info_ms / 1000.0


def read_position(command: Mapping[str, Any]) -> Observation:
    """The position of a ``position`` command: inline (``position``) or read from a file
    (``file``), checked as `csl best-move` checks it (ProtocolError ``bad_position``)."""
    from csl_ai.position import is_game_record, load_position, position_from_dict

    has_inline, has_file = "position" in command, "file" in command
    if has_inline == has_file:
        raise ProtocolError("bad_command", "position: give one of 'position' (the JSON) or 'file' (a path)")
    try:
        if has_file:
            path = command["file"]
            if not isinstance(path, str) or not path or path == "-":
                raise ProtocolError(
                    "bad_command", f"file: must be the path of a position file, got {short_repr(path)}"
                )
            return load_position(path)
        data = command["position"]
        if not isinstance(data, dict):
            raise ProtocolError("bad_position", f"position: must be a JSON object, got {short_repr(data)}")
        if is_game_record(data):
            raise ProtocolError(
                "bad_position", "position: this is a game record, not a position (one seat's view at one decision)"
            )
        return position_from_dict(data)
    except CslError as e:
        raise ProtocolError("bad_position", str(e)) from None


def position_summary(obs: Observation, legal_moves: int | None = None) -> dict[str, Any]:
    """What the engine says about a position it was given (legal_moves: their number,
    when known already)."""
    return {
        "seat": obs.seat,
        "players": obs.players,
        "round": len(obs.rounds),
        "phase": obs.phase.value,
        "legal_moves": len(obs.legal_moves()) if legal_moves is None else legal_moves,
    }


@dataclass(eq=False)
class _Search:
    """One ``go`` running in the background."""

    obs: Observation
    budget: Budget
    info_s: float
    tag: dict[str, Any]
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None


class Engine:
    """The protocol's state: the position, the running search, and the one writer of the
    output (lines from the search thread and the command reader never interleave)."""

    def __init__(self, write: Callable[[str], None], *, clock: Callable[[], float] = time.perf_counter) -> None:
        self._write = write
        self._clock = clock
        self._lock = threading.RLock()
        self._obs: Observation | None = None
        self._search: _Search | None = None
        self.closed = False
        """Set once the output cannot be written (the reader went away)."""
        self.stops = search_stops()

    # --- output -----------------------------------------------------------------------------
    def emit(self, obj: Mapping[str, Any], tag: Mapping[str, Any] | None = None) -> None:
        """Write one answer line (with the command's id when it had one)."""
        line = json.dumps({**obj, **(tag or {})})
        with self._lock:
            if self.closed:
                return
            try:
                self._write(line + "\n")
            except (OSError, ValueError):
                self.closed = True

    def error(self, kind: str, message: str, tag: Mapping[str, Any] | None = None) -> None:
        self.emit({"error": {"kind": kind, "message": clip(" ".join(message.split()), 300)}}, tag)

    # --- input ------------------------------------------------------------------------------
    @property
    def searching(self) -> bool:
        with self._lock:
            return self._search is not None

    def handle_line(self, raw: bytes | str) -> bool:
        """Carry out one command line; False once the program should end (``quit``)."""
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        if not text.strip():
            return True
        tag: dict[str, Any] = {}
        try:
            try:
                command = json.loads(text)
            except RecursionError:
                raise ProtocolError("bad_json", "bad JSON: nested too deeply") from None
            except ValueError as e:
                raise ProtocolError("bad_json", f"bad JSON: {e}") from None
            if not isinstance(command, dict):
                raise ProtocolError("bad_command", f"a command must be a JSON object, got {short_repr(command)}")
            tag = self._tag(command)
            return self._dispatch(command, tag)
        except ProtocolError as e:
            self.error(e.kind, e.message, tag)
            return True
        except Exception as e:  # noqa: BLE001 - a bug answers one line; the engine goes on
            self.error("internal", f"internal error: {type(e).__name__}: {e}", tag)
            return True

    def _tag(self, command: Mapping[str, Any]) -> dict[str, Any]:
        if "id" not in command:
            return {}
        ident = command["id"]
        if not (_is_int(ident) or (isinstance(ident, str) and len(ident) <= MAX_ID_CHARS)):
            raise ProtocolError("bad_command", f"id: must be a string or an integer, got {short_repr(ident)}")
        return {"id": ident}

    def _dispatch(self, command: Mapping[str, Any], tag: dict[str, Any]) -> bool:
        name = command.get("cmd")
        if not isinstance(name, str):
            raise ProtocolError(
                "bad_command", f"cmd: missing or not a string (expected {', '.join(COMMAND_FIELDS)})"
            )
        if name not in COMMAND_FIELDS:
            raise ProtocolError(
                "unknown_command", f"unknown command {short_repr(name)} (expected {', '.join(COMMAND_FIELDS)})"
            )
        allowed = ("cmd", "id", *COMMAND_FIELDS[name])
        for key in command:
            if key not in allowed:
                raise ProtocolError(
                    "bad_command",
                    f"{name}: unknown field {short_repr(key)} (expected {', '.join(allowed[2:]) or 'none'})",
                )
        if name == "isready":
            self.emit({"ready": True}, tag)
        elif name == "position":
            self._position(command, tag)
        elif name == "go":
            self._go(command, tag)
        elif name == "stop":
            if self.searching and not self.stops:
                raise ProtocolError(
                    "cannot_stop", "stop: this build's search cannot be stopped early; its bestmove comes when its budget is spent"
                )
            self.stop()
        elif name == "quit":
            if self.stops:
                self.stop()
                self.wait(_STOP_JOIN_S)
            return False
        return True

    def _position(self, command: Mapping[str, Any], tag: dict[str, Any]) -> None:
        self._refuse_while_searching("position")
        with self._lock:
            self._obs = None  # a refused position leaves none, never an older one
        obs = read_position(command)
        legal = len(obs.legal_moves())
        if not legal:
            raise ProtocolError(
                "no_decision",
                f"position: seat {obs.seat} has no decision to make "
                f"({obs.phase.value} phase, seat {obs.to_move} to move)",
            )
        with self._lock:
            self._obs = obs
        self.emit({"position": position_summary(obs, legal)}, tag)

    def _refuse_while_searching(self, name: str) -> None:
        if self.searching:
            raise ProtocolError("busy", f"{name}: a search is running; send stop first (or wait for its bestmove)")

    def _go(self, command: Mapping[str, Any], tag: dict[str, Any]) -> None:
        budget, info_s = parse_budget(command)
        with self._lock:
            self._refuse_while_searching("go")
            obs = self._obs
            if obs is None:
                raise ProtocolError("no_position", "go: no position yet: send a position command first")
            job = _Search(obs, budget, info_s, tag)
            job.thread = threading.Thread(target=self._run, args=(job,), name="csl-engine-go", daemon=True)
            self._search = job
            job.thread.start()

    # --- searching --------------------------------------------------------------------------
    def _run(self, job: _Search) -> None:
        """The search of one ``go``, with its info lines, then its one answer (bestmove, or
        an error line when the search itself fails)."""
        from csl_ai.search import search

        started = self._clock()
        players = job.obs.rules.players
        try:
            limit = job.budget.limit(players)
        except CslError as e:  # pragma: no cover - parse_budget checked every bound
            self._finish(job, {"error": {"kind": "bad_option", "message": clip(str(e), 300)}})
            return
        self.emit(
            {
                "info": {
                    "elapsed_ms": 0,
                    "seat": job.obs.seat,
                    "phase": job.obs.phase.value,
                    "level": job.budget.level,
                    "iterations": limit.iterations,
                    "time_ms": limit.time_ms,
                    "threads": limit.threads,
                    "seed": limit.seed,
                }
            },
            job.tag,
        )
        box: dict[str, Any] = {}

        def work() -> None:
            try:
                if self.stops:
                    box["result"] = search(job.obs, limit, stop=job.stop)
                else:
                    box["result"] = search(job.obs, limit)
            except CslError as e:
                box["error"] = ("search_failed", str(e))
            except Exception as e:  # noqa: BLE001 - one failed search, the engine goes on
                box["error"] = ("search_failed", f"internal error: {type(e).__name__}: {e}")

        worker = threading.Thread(target=work, name="csl-engine-search", daemon=True)
        worker.start()
        while True:
            worker.join(job.info_s)
            if not worker.is_alive():
                break
            self.emit({"info": {"elapsed_ms": round((self._clock() - started) * 1000)}}, job.tag)
        if "error" in box:
            kind, message = box["error"]
            self._finish(job, {"error": {"kind": kind, "message": clip(" ".join(message.split()), 300)}})
            return
        result = box["result"]
        best = result.moves[0]
        elapsed = self._clock() - started
        self.emit(
            {
                "info": {
                    "elapsed_ms": round(elapsed * 1000),
                    "iterations": result.iterations,
                    "nodes": result.nodes,
                    "ips": round(result.iterations / elapsed) if elapsed > 0 else None,
                    "best": move_to_json(result.best_move),
                    "win_probability": best.win_probability if result.iterations else None,
                    "stopped": job.stop.is_set(),
                }
            },
            job.tag,
        )
        self._finish(
            job,
            {
                "bestmove": move_to_json(result.best_move),
                "result": {"level": job.budget.level, **result.to_json()},
            },
        )

    def _finish(self, job: _Search, answer: Mapping[str, Any]) -> None:
        """The last line of a ``go``; from then on the engine takes the next one."""
        with self._lock:
            if self._search is job:
                self._search = None
            self.emit(answer, job.tag)

    def stop(self) -> None:
        """End the running search at once (it answers with what it has); nothing when none
        runs."""
        with self._lock:
            job = self._search
        if job is not None:
            job.stop.set()

    def wait(self, timeout: float | None = None) -> None:
        """Wait for the running search (if any) to give its answer."""
        with self._lock:
            job = self._search
        if job is not None and job.thread is not None:
            job.thread.join(timeout)


def read_command(stream: IO[bytes]) -> bytes | None:
    """One command line of stream (None at end of input); ProtocolError
    ``line_too_long`` for a line over MAX_LINE_BYTES, whose rest is read and dropped."""
    line = stream.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        rest = line
        while rest and not rest.endswith(b"\n"):
            rest = stream.readline(1 << 16)
        raise ProtocolError("line_too_long", f"a command line of more than {MAX_LINE_BYTES:,} bytes")
    return line


def run_engine(stdin: IO[bytes] | None = None, stdout: IO[str] | None = None) -> int:
    """Speak the protocol on stdin/stdout until ``quit`` or end of input; the exit code (0,
    or 1 when the answers could not be written). A KeyboardInterrupt (Ctrl-C, SIGTERM)
    stops the running search and goes on up."""
    source = stdin if stdin is not None else sys.stdin.buffer
    sink = stdout if stdout is not None else sys.stdout

    def write(text: str) -> None:
        sink.write(text)
        sink.flush()

    engine = Engine(write)
    try:
        while not engine.closed:
            try:
                line = read_command(source)
            except ProtocolError as e:
                engine.error(e.kind, e.message)
                continue
            except UnicodeDecodeError:
                engine.error("bad_json", "a command line that is not UTF-8 text")
                continue
            if line is None:
                engine.wait()  # end of input: the running search still answers
                break
            try:
                if not engine.handle_line(line):
                    break
            except UnicodeDecodeError as e:
                engine.error("bad_json", f"not UTF-8 text ({e.reason} at byte {e.start})")
    except BaseException:
        engine.stop()
        engine.wait(_STOP_JOIN_S)
        raise
    if engine.closed:
        _silence_stdout(sink)
        return 1
    return 0


def _silence_stdout(sink: IO[str]) -> None:
    """Point a broken standard output at /dev/null, so the exit's flush raises nothing."""
    if sink is not sys.stdout:
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


__all__ = [
    "COMMAND_FIELDS",
    "Budget",
    "Engine",
    "ProtocolError",
    "parse_budget",
    "position_summary",
    "read_command",
    "read_position",
    "run_engine",
    "search_stops",
]
