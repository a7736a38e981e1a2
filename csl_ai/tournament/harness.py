"""Runs a tournament on Ray: batches as tasks, results streamed with ray.wait, kept on disk.

A results directory holds:

- ``tournament.json`` — the config (``TournamentConfig.to_dict``), written first;
- ``games.jsonl`` — one JSON line per finished game: its outcome, the agent per seat
  and the full game record (``csl_ai.records.game_to_record``), appended batch by batch
  with flush + fsync as results arrive;
- ``training.jsonl`` — self-play with training rows only: one line per decision
  (``csl_ai.tournament.selfplay``), written before its games' lines;
- ``summary.json`` and ``winshare.png`` — written at the end.

Resume reads ``games.jsonl``, drops a last line cut short by a kill (the file is
truncated back to its last complete line), and plays only the jobs not in it. Every line
is checked against ``tournament.json`` (``runner.check_manifest``: the job's seating in
the schedule, the agent of each seat, the rules, sides and deck, the seeds); a line that
does not match stops the resume naming the file and line. A job's second line is dropped
from the file (rewritten atomically) and counted once. Training rows of jobs without a
games line are dropped, since those jobs are played again.

Files written whole (``tournament.json``, ``summary.json``, ``winshare.png``, a
rewritten ``games.jsonl`` or ``training.jsonl``) go through ``csl_ai.files.replacing``:
a temporary file in the folder, fsync, rename. Appended files go through
``csl_ai.files.appending``. Nothing in the folder that is not a regular file (a FIFO,
a symbolic link, a device) is ever read, written through or replaced: the run refuses it
before it starts.

Fault tolerance: a batch whose worker died is retried by Ray (``task_retries``), then
resubmitted by the driver (``max_resubmits``); a batch's games depend only on its job
ids, so a retry reproduces them, and results are written only from a batch that
returned, so nothing is lost or counted twice. An error raised inside a game (a bug,
not a crash) is not retried: it would fail again.

Where the games are played (``where_to_play``): on Ray with an address, ``always_ray``,
or a Ray already started in this process; in this process without Ray for ``workers``
0 or 1 (or one CPU here), since Ray would only add its start-up; otherwise the run plays
here first, timing its games, and hands the games left to a local Ray instance only
once they would take longer here than Ray's start-up (``RAY_START_S``, seconds) costs
with its workers sharing them. Starting Ray cannot be made much cheaper: ``ray.init``
starts about seven processes (GCS, raylet, monitor, API server, log monitor, two
agents) and ``ray.shutdown`` waits for them, a few seconds together; a run of a few cheap
games is over in less. Every game gives the same result wherever it is played, so the
files are the same either way (on Ray, games.jsonl is in the order batches finished).

On a cluster (``address``), every node needs csl_ai importable (the same version, built
for its platform): tasks carry only the config and job ids, and workers import the
agents and the core themselves. A cluster with token authentication (what ``ray start
--head`` turns on when a token exists) is joined with its token: ``token_file``, else
``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token`` (``use_cluster_token``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from csl_ai.errors import OutputWriteError, path_label, short_repr
from csl_ai.files import appending, check_output_path, replacing, write_file_atomic
from csl_ai.tournament.runner import (
    AgentFactory,
    FinishedGame,
    GameOutcome,
    TournamentConfig,
    TournamentError,
    TournamentRunError,
    batches,
    check_agents,
    run_batch,
)
from csl_ai.tournament.stats import RunningStandings, Summary, summarize

CONFIG_FILE: Final = "tournament.json"
GAMES_FILE: Final = "games.jsonl"
TRAINING_FILE: Final = "training.jsonl"
SUMMARY_FILE: Final = "summary.json"
PLOT_FILE: Final = "winshare.png"
RESULT_FILES: Final = (CONFIG_FILE, GAMES_FILE, TRAINING_FILE, SUMMARY_FILE, PLOT_FILE)
"""Every file a run reads or writes in its folder."""
DEFAULT_TOKEN_FILE: Final = Path("~/.ray/auth_token")
"""Where ``ray start`` and a local ``ray.init`` keep the token of their clusters."""
TOKEN_HELP: Final = (
    "pass --ray-token-file FILE or set RAY_AUTH_TOKEN (`ray get-auth-token` on its head prints it)"
)
CONNECT_TIMEOUT_S: Final = 10.0
"""How long a cluster address may take to accept a connection."""
MAX_AUTO_BATCH: Final = 32
"""Largest automatic batch: a lost batch costs at most this many games of work."""
RAY_START_S: Final = 5.0
"""About what a local Ray instance adds to a run: ``ray.init``, its workers' first task
and ``ray.shutdown`` took 4 to 6 s together on a 2-core machine (more on a slower or
busier one). A run whose games would end sooner in this process is played here."""
LOCAL_CHUNK_S: Final = 0.25
"""Seconds of games played here between two writes (and two looks at the time left)."""


@dataclass(frozen=True)
class RunOptions:
    """How to play a tournament (never which games)."""

    workers: int | None = None
    """Local Ray CPUs (None: all cores); with an address, the most batches run at once;
    0 or 1: in this process, without Ray (see ``where_to_play``)."""
    address: str | None = None
    """An existing Ray cluster ("auto", "host:port", "ray://host:10001")."""
    batch: int | None = None
    """Games per task; None picks about 16 batches per CPU, at most MAX_AUTO_BATCH."""
    task_retries: int = 3
    """Ray's own retries of a task whose worker died."""
    max_resubmits: int = 3
    """The driver's resubmissions of a batch after Ray gave up on it."""
    progress: bool = True
    worker_niceness: int = 0
    """Niceness of the workers of a local Ray instance started here. Ray's own default
    is 15, which leaves a tournament the scraps of a busy machine; 0 gives its workers
    the priority of any other process (a plain loop's)."""
    token_file: str | None = None
    """A file holding the authentication token of the cluster at address (Ray's token
    authentication); None: Ray's own places (see ``use_cluster_token``)."""
    always_ray: bool = False
    """Play on Ray even when this process would finish sooner (``where_to_play``)."""

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 0:
            raise TournamentError(f"workers: must be 0 (no Ray) or more, got {self.workers!r}")
        if self.batch is not None and self.batch < 1:
            raise TournamentError(f"batch: must be at least 1, got {self.batch!r}")
        if self.workers == 0 and self.address:
            raise TournamentError("workers: 0 plays without Ray, so it cannot be given with an address")
        if self.token_file is not None and not self.address:
            raise TournamentError("token_file: the token of a cluster goes with its address")
        if self.always_ray and self.workers == 0:
            raise TournamentError("always_ray: workers 0 plays without Ray, so it cannot be given with it")


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Turn an OSError while writing path (a full disk, a folder refusing writes) into an
    OutputWriteError naming it: a failure of the run, not of its options."""
    try:
        yield
    except OSError as e:
        raise OutputWriteError(f"cannot write {path_label(path)}: {e.strerror or e}") from None


def _complete_lines(path: Path) -> Iterator[bytes]:
    """The file's complete lines, streamed (without their newline).

    Once every line has been read, a trailing partial line (a kill mid-write) is cut off
    the file so that later appends start on a fresh line. A reader that stops early
    leaves the file as it was.
    """
    if not path.exists():
        return
    with open(path, "r+b") as f:
        good = 0
        for raw in f:
            if not raw.endswith(b"\n"):
                break
            good += len(raw)
            yield raw[:-1]
        if good < f.seek(0, os.SEEK_END):
            f.truncate(good)
            f.flush()
            os.fsync(f.fileno())


_ROW_KEY: Final = re.compile(rb'^\{"job":(\d+),"step":(\d+),')
"""The start of every training row as `training_rows` writes it: its (job, step) key."""


def _row_key(raw: bytes) -> tuple[int, int] | None:
    """A training row's (job, step), read from its start or else parsed; None if it is no row."""
    match = _ROW_KEY.match(raw)
    if match:
        return int(match[1]), int(match[2])
    try:
        row = json.loads(raw)
        return int(row["job"]), int(row["step"])
    except (json.JSONDecodeError, UnicodeDecodeError, KeyError, TypeError, ValueError):
        return None


class ResultsDir:
    """A tournament's directory: its config, finished games, training rows and summary."""

    def __init__(self, path: str | os.PathLike[str], config: TournamentConfig) -> None:
        self.path = Path(path)
        self.config = config

    @staticmethod
    def check_new(path: str | os.PathLike[str]) -> None:
        """TournamentError unless path can hold a new tournament: it is a directory (or
        nothing yet) and holds no tournament. Cheap, so a command checks it before it
        announces anything."""
        p = Path(path)
        if p.exists() and not p.is_dir():
            raise TournamentError(f"out: {path_label(p)} is not a directory")
        ResultsDir.check_files(p)
        if (p / CONFIG_FILE).exists() or (p / GAMES_FILE).exists():
            raise TournamentError(
                f"out: {path_label(p)} already holds a tournament; "
                f"continue it with --resume {path_label(p)}"
            )

    @staticmethod
    def check_files(path: str | os.PathLike[str]) -> None:
        """UnsafeOutputError if any file a run reads or writes in path is there but is not a
        regular file: a FIFO would hang a read, and a symbolic link or a device would be
        written through or replaced."""
        for name in RESULT_FILES:
            check_output_path(Path(path) / name, path_label(Path(path) / name))

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the run's directory for this process while the block runs: TournamentError
        if another run (a second --resume of the same folder) holds it, which would play
        the same games twice into one file. The lock is on tournament.json, which is
        written once, and goes with the process however it ends."""
        try:
            import fcntl
        except ImportError:  # no advisory locks here (Windows)
            yield
            return
        config_path = self.path / CONFIG_FILE
        with _writing(config_path):
            held = open(config_path, "rb")
        with held:
            try:
                fcntl.flock(held.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise TournamentError(
                    f"out: {path_label(self.path)} is in use by another run; "
                    "let it finish (or stop it) first"
                ) from None
            yield

    @classmethod
    def create(cls, path: str | os.PathLike[str], config: TournamentConfig) -> ResultsDir:
        """Start a new tournament in path; refuses a directory that already holds one.
        OutputWriteError if the directory or its config cannot be written."""
        p = Path(path)
        cls.check_new(p)
        with _writing(p):
            p.mkdir(parents=True, exist_ok=True)
        config_path = p / CONFIG_FILE
        write_file_atomic(
            config_path, json.dumps(config.to_dict(), indent=2) + "\n", path_label(config_path)
        )
        return cls(p, config)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ResultsDir:
        """An existing tournament's directory, its config read from tournament.json."""
        p = Path(path)
        config_path = p / CONFIG_FILE
        cls.check_files(p)
        try:
            text = config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise TournamentError(f"resume: no {CONFIG_FILE} in {str(p)!r}; nothing to resume") from None
        except OSError as e:
            raise TournamentError(f"resume: cannot read {str(config_path)!r}: {e.strerror or e}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TournamentError(
                f"resume: {str(config_path)!r} is not JSON ({e.msg}, line {e.lineno})"
            ) from None
        try:
            config = TournamentConfig.from_dict(data, str(config_path))
        except TournamentError:
            raise
        except ValueError as e:
            raise TournamentError(f"resume: {str(config_path)!r}: {e}") from None
        return cls(p, config)

    def load(self) -> dict[int, GameOutcome]:
        """The finished games by job id, every line checked against the config; a job's
        later lines are dropped from the file (see the module doc for what else is)."""
        self.check_files(self.path)
        path = self.path / GAMES_FILE
        done: dict[int, GameOutcome] = {}
        repeated: set[int] = set()
        for lineno, raw in enumerate(_complete_lines(path), 1):
            if not raw.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                raise TournamentError(f"{where}: not a JSON line (the file is damaged)") from None
            outcome = GameOutcome.from_json(data, self.config, where)
            if outcome.job in done:
                repeated.add(lineno)
            else:
                done[outcome.job] = outcome
        if repeated:
            _drop_lines(path, repeated)
        if self.config.training_rows:
            self._clean_training_rows(set(done))
        return done

    def _clean_training_rows(self, done: set[int]) -> None:
        """Keep only rows of finished jobs, once each, so replayed jobs do not double them."""
        path = self.path / TRAINING_FILE
        seen: set[tuple[int, int]] = set()
        drop: set[int] = set()
        for lineno, raw in enumerate(_complete_lines(path), 1):
            if not raw.strip():
                drop.add(lineno)
                continue
            key = _row_key(raw)
            if key is None:
                raise TournamentError(f"{path}:{lineno}: not a training row (the file is damaged)")
            if key[0] not in done or key in seen:
                drop.add(lineno)
            seen.add(key)
        if drop:
            _drop_lines(path, drop)

    def append(self, finished: Sequence[FinishedGame]) -> None:
        """Write a batch's training rows, then its games; each file flushed and fsynced."""
        if not finished:
            return
        if self.config.training_rows:
            rows = [row for game in finished for row in game.rows]
            if rows:
                self._append_lines(self.path / TRAINING_FILE, rows)
        self._append_lines(self.path / GAMES_FILE, [game.line for game in finished])

    @staticmethod
    def _append_lines(path: Path, lines: Iterable[str]) -> None:
        with appending(path, path_label(path)) as f:
            f.write("".join(line + "\n" for line in lines).encode("utf-8"))

    def write_summary(self, summary: Summary, complete: bool) -> None:
        """summary.json, and for a tournament the win-share picture."""
        data = summary.to_json()
        data["complete"] = complete
        data["tournament"] = self.config.to_dict()
        summary_path = self.path / SUMMARY_FILE
        write_file_atomic(summary_path, json.dumps(data, indent=2) + "\n", path_label(summary_path))
        if self.config.mode == "tournament":
            from csl_ai.tournament.plot import plot_win_share

            plot_path = self.path / PLOT_FILE
            with replacing(plot_path, path_label(plot_path)) as tmp:
                plot_win_share(summary, tmp)


def _drop_lines(path: Path, drop: set[int]) -> None:
    """Rewrite path without the lines numbered in drop (from 1), atomically."""
    with replacing(path, path_label(path)) as tmp, open(tmp, "wb") as out:
        for lineno, raw in enumerate(_complete_lines(path), 1):
            if lineno not in drop:
                out.write(raw + b"\n")


class _TournamentProgress(Progress):
    """A progress bar with the current standings on the line below it."""

    standings: str = ""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        if self.standings:
            yield Text(self.standings, style="dim")


class _Tracker:
    """Counts finished games, writes them, and keeps the display up to date."""

    def __init__(
        self, results: ResultsDir, done: dict[int, GameOutcome], progress: _TournamentProgress
    ) -> None:
        self.results = results
        self.done = done
        self.progress = progress
        self.standings = RunningStandings(results.config.labels)
        for outcome in done.values():
            self.standings.add(outcome)
        self.started = time.perf_counter()
        self.new_games = 0
        self.task = progress.add_task(
            "games", total=results.config.total_games, completed=len(done), rate=""
        )
        self.refresh()

    def add(self, finished: Sequence[FinishedGame]) -> None:
        fresh = [game for game in finished if game.outcome.job not in self.done]
        self.results.append(fresh)
        for game in fresh:
            self.done[game.outcome.job] = game.outcome
            self.standings.add(game.outcome)
        self.new_games += len(fresh)
        self.refresh()

    def refresh(self) -> None:
        elapsed = time.perf_counter() - self.started
        rate = f"{self.new_games / elapsed:.1f} games/s" if elapsed > 0 and self.new_games else ""
        self.progress.update(self.task, completed=len(self.done), rate=rate)
        if self.results.config.mode == "tournament":
            self.progress.standings = self.standings.text()


def _auto_batch(jobs: int, cpus: int) -> int:
    """About 16 batches per CPU: small enough that the last batches leave no CPU idle for
    long, large enough that Ray's per-task cost (about a millisecond) stays small beside
    games that take tens of milliseconds or more."""
    return max(1, min(MAX_AUTO_BATCH, -(-jobs // (16 * max(cpus, 1)))))


def _play_here(
    config: TournamentConfig, batch: Sequence[int], factory: AgentFactory | None
) -> list[FinishedGame]:
    """Play a batch in this process; a game's error is reported as on Ray: which jobs, what error."""
    try:
        return run_batch(config, batch, factory)
    except Exception as e:  # noqa: BLE001
        raise TournamentRunError(
            f"a game failed in jobs {batch[0]}..{batch[-1]}: {type(e).__name__}: {_last_line(e)}"
        ) from e


def _drive_inline(
    config: TournamentConfig,
    todo: Sequence[int],
    options: RunOptions,
    factory: AgentFactory | None,
    on_batch: Callable[[Sequence[FinishedGame]], None],
) -> None:
    for batch in batches(todo, options.batch or _auto_batch(len(todo), 1)):
        on_batch(_play_here(config, batch, factory))


def cpus_here() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _ray_running() -> bool:
    """Whether this process already started or joined Ray (without importing it)."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


def ray_parallelism(options: RunOptions) -> int:
    """How many games a local Ray instance would play at once on this machine."""
    cpus = cpus_here()
    return min(options.workers, cpus) if options.workers else cpus


def where_to_play(options: RunOptions) -> Literal["ray", "here", "measure"]:
    """"ray", "here" (this process, no Ray) or "measure" (here while timing says Ray
    would not pay for its start-up; see the module doc)."""
    if options.address or options.always_ray or (options.workers != 0 and _ray_running()):
        return "ray"
    if options.workers == 0 or ray_parallelism(options) <= 1:
        return "here"
    return "measure"


def _ray_pays_off(games_left: int, seconds_per_game: float, parallel: int) -> bool:
    """Whether Ray would finish the games left sooner than this process, start-up included:
    here they take L = games x seconds, on Ray about RAY_START_S + L / workers."""
    here = games_left * seconds_per_game
    return here - here / min(parallel, games_left) > RAY_START_S


def _drive_here_first(
    config: TournamentConfig,
    todo: Sequence[int],
    options: RunOptions,
    factory: AgentFactory | None,
    on_batch: Callable[[Sequence[FinishedGame]], None],
    tick: Callable[[], None],
    say: Callable[[str], None],
) -> None:
    """Play in this process, timing the games, while the games left would end here before
    Ray wins back its start-up; hand the rest to Ray as soon as they would not. The first
    game is played alone, then chunks of about LOCAL_CHUNK_S seconds."""
    parallel = ray_parallelism(options)
    played, seconds = 0, 0.0
    said_here = False

    def say_here() -> None:
        total = len(todo) * seconds / played
        say(
            f"Playing in this process, without Ray: the {len(todo)} games take about "
            f"{total:.1f} s, too little for Ray's start-up (about {RAY_START_S:g} s) to pay "
            f"off with {parallel} workers; --ray forces it."
        )

    while played < len(todo):
        per_game = seconds / played if played else 0.0
        if played:
            left = len(todo) - played
            if _ray_pays_off(left, per_game, parallel):
                say(
                    f"Playing on Ray: the {left} games left take about {left * per_game:.0f} s "
                    f"in this process, more than Ray's start-up (about {RAY_START_S:g} s) "
                    f"costs with {parallel} workers sharing them."
                )
                _drive_ray(config, todo[played:], options, factory, on_batch, tick)
                return
            if not said_here:
                say_here()
                said_here = True
        size = max(1, min(MAX_AUTO_BATCH, int(LOCAL_CHUNK_S / per_game))) if played else 1
        batch = todo[played : played + size]
        began = time.perf_counter()
        finished = _play_here(config, batch, factory)
        seconds += max(time.perf_counter() - began, 1e-6)
        played += len(batch)
        on_batch(finished)
    if not said_here:
        say_here()


def _play_batch(
    config: TournamentConfig, job_ids: tuple[int, ...], factory: AgentFactory | None
) -> list[FinishedGame]:
    """The Ray task: play one batch in a worker."""
    return run_batch(config, job_ids, factory)


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail fast if a cluster address does not answer: Ray itself retries for ever.

    "auto" and "local" are left to Ray, which fails at once when it finds no cluster.
    """
    if address in ("auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, colon, port = hostport.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise TournamentError(f"address: expected auto, HOST:PORT or ray://HOST:PORT, got {address!r}")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise TournamentRunError(f"cannot reach the Ray cluster at {address!r}: {reason}") from None


def _joins_by_host_port(address: str | None) -> bool:
    """Whether address names a cluster's GCS directly (HOST:PORT), not auto, local or ray://."""
    if not address:
        return False
    return address not in ("auto", "local") and not address.startswith("ray://")


def token_source(token_file: str | None = None) -> str | None:
    """Where Ray would read a cluster token from, in its own order (token_file first);
    None when there is none."""
    if token_file is not None:
        return path_label(token_file)
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if named:
        return f"RAY_AUTH_TOKEN_PATH ({path_label(named)})"
    default = DEFAULT_TOKEN_FILE.expanduser()
    return path_label(default) if default.is_file() else None


def use_cluster_token(options: RunOptions) -> None:
    """Make this process present a token to the cluster at options.address.

    Ray 2.60 clusters started with ``ray start --head`` use token authentication when a
    token exists, and a driver joining them by HOST:PORT sends one only with
    ``RAY_AUTH_MODE=token`` (only ``auto`` turns it on by itself). So: token_file, when
    given, becomes the token (``RAY_AUTH_TOKEN_PATH``); and with RAY_AUTH_MODE unset, a
    token found in Ray's usual places turns token mode on, as ``ray start`` does. A
    cluster without authentication ignores the token. Changes this process's environment
    (where Ray reads these settings), and only before Ray is started here.
    """
    if not _joins_by_host_port(options.address) and options.token_file is None:
        return
    if options.token_file is not None:
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(Path(options.token_file).resolve())
        os.environ.pop("RAY_AUTH_TOKEN", None)
        os.environ["RAY_AUTH_MODE"] = "token"
    elif "RAY_AUTH_MODE" not in os.environ and token_source() is not None:
        os.environ["RAY_AUTH_MODE"] = "token"
    else:
        return
    try:
        from ray._raylet import AuthenticationTokenLoader, Config
    except ImportError:
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _token_error(address: str, token_file: str | None) -> TournamentRunError:
    """The one line for a cluster that refused to let us in for want of the right token."""
    source = token_source(token_file)
    mode = os.environ.get("RAY_AUTH_MODE", "")
    if source is not None and mode.lower() != "token":
        return TournamentRunError(
            f"the Ray cluster at {address!r} asks for an authentication token, but "
            f"RAY_AUTH_MODE={short_repr(mode, 20)} turns tokens off: unset it, or {TOKEN_HELP}"
        )
    if source is None:
        return TournamentRunError(
            f"the Ray cluster at {address!r} asks for an authentication token and none was "
            f"found: {TOKEN_HELP}"
        )
    return TournamentRunError(
        f"the Ray cluster at {address!r} refused the authentication token from {source}: "
        f"{TOKEN_HELP}"
    )


@contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """Ray's native client logs every failed attempt on file descriptor 2; a probe's
    failure is reported as one line instead."""
    saved: int | None
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        saved = None
    if saved is None:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def check_cluster(options: RunOptions) -> None:
    """Fail fast, before a run is announced or its folder made, if the cluster at
    options.address cannot be joined: nothing answers at its port, or (HOST:PORT) its
    GCS asks for a token that this process lacks or that it refuses. One request to the
    GCS, which answers at once, where ``ray.init`` would retry for tens of seconds."""
    address = options.address
    if not address or options.workers == 0:
        return
    check_reachable(address)
    if not _joins_by_host_port(address):
        return
    import ray

    if ray.is_initialized():
        return
    use_cluster_token(options)
    try:
        from ray._raylet import GcsClient
        from ray.exceptions import AuthenticationError, RayError
    except ImportError:
        return
    try:
        with _native_stderr_silenced():
            GcsClient(address=address)
    except AuthenticationError:
        raise _token_error(address, options.token_file) from None
    except (RayError, ConnectionError, TimeoutError, RuntimeError, OSError) as e:
        raise TournamentRunError(f"cannot reach the Ray cluster at {address!r}: {_last_line(e)}") from None


def package_root() -> Path:
    """The folder that holds the csl_ai this process imported (site-packages, or the
    repository for an editable install)."""
    import csl_ai

    return Path(csl_ai.__file__).resolve().parent.parent


@contextmanager
def ray_code_path() -> Iterator[None]:
    """Run ``ray.init`` from the folder of the imported csl_ai.

    Ray puts the driver's working folder first on every worker's ``sys.path``. Started
    from a source checkout, workers would import its uncompiled csl_ai instead of the
    installed one; started from the package's own folder, they import what the driver did.
    """
    before = os.getcwd()
    os.chdir(package_root())
    try:
        yield
    finally:
        os.chdir(before)


@contextmanager
def python_signal_handlers_kept() -> Iterator[None]:
    """Put back, after the block, the main thread's handlers of INT, TERM and HUP.

    ray.init installs its own for the driver (a crash report for SIGTERM, and exit 1):
    the command line's handlers stop a run with one line, the finished games kept and
    the exit status of the signal.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    kept = {s: signal.getsignal(s) for s in (getattr(signal, n) for n in names if hasattr(signal, n))}
    try:
        yield
    finally:
        for signum, handler in kept.items():
            if handler is not None:
                signal.signal(signum, handler)


def connect_ray(options: RunOptions) -> bool:
    """Start or join Ray as the options say, with the cluster's token when it has one
    (``use_cluster_token``); True if this call started it (and must shut it down)."""
    import ray
    from ray.exceptions import AuthenticationError

    if ray.is_initialized():
        return False
    use_cluster_token(options)
    quiet: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
    }
    try:
        with ray_code_path(), python_signal_handlers_kept():
            if options.address:
                ray.init(address=options.address, **quiet)
            else:
                ray.init(
                    num_cpus=options.workers,
                    _system_config={"worker_niceness": options.worker_niceness},
                    **quiet,
                )
    except AuthenticationError:
        raise _token_error(options.address or "", options.token_file) from None
    except (ConnectionError, TimeoutError, RuntimeError, ValueError, OSError) as e:
        where = f"the Ray cluster at {options.address!r}" if options.address else "a local Ray instance"
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TournamentRunError(f"cannot start or reach {where}: {first_line}") from None
    return True


def _drive_ray(
    config: TournamentConfig,
    todo: Sequence[int],
    options: RunOptions,
    factory: AgentFactory | None,
    on_batch: Callable[[Sequence[FinishedGame]], None],
    tick: Callable[[], None],
) -> None:
    import ray
    from ray.exceptions import RayError, RayTaskError

    started = connect_ray(options)
    try:
        resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
        cpus = max(1, int(resources.get("CPU", 1)))
        slots = options.workers if options.workers else cpus
        # Local Ray runs `cpus` batches at once; one more each, queued, keeps every CPU busy.
        # On a cluster with --workers K, at most K batches are out at once.
        in_flight = options.workers if options.address and options.workers else 2 * cpus
        size = options.batch or _auto_batch(len(todo), slots)
        task = ray.remote(_play_batch).options(max_retries=options.task_retries, retry_exceptions=False)
        config_ref = ray.put(config)
        queue = deque(batches(todo, size))
        pending: dict[Any, tuple[tuple[int, ...], int]] = {}

        def submit(batch: tuple[int, ...], attempt: int) -> None:
            pending[task.remote(config_ref, batch, factory)] = (batch, attempt)

        try:
            while queue or pending:
                while queue and len(pending) < in_flight:
                    submit(queue.popleft(), 0)
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.25)
                for ref in ready:
                    batch, attempt = pending.pop(ref)
                    jobs = f"jobs {batch[0]}..{batch[-1]}"
                    try:
                        finished = ray.get(ref)
                    except RayTaskError as e:
                        cause = e.cause if e.cause is not None else e
                        raise TournamentRunError(
                            f"a game failed in {jobs}: {type(cause).__name__}: {_last_line(cause)}"
                        ) from None
                    except RayError as e:
                        if attempt >= options.max_resubmits:
                            raise TournamentRunError(
                                f"{jobs}: a worker died {attempt + 1} times running them "
                                f"({type(e).__name__}); games finished so far are kept, "
                                "continue with --resume"
                            ) from None
                        submit(batch, attempt + 1)
                        continue
                    on_batch(finished)
                tick()
        except RayError as e:
            raise TournamentRunError(
                f"lost the Ray cluster ({type(e).__name__}: {_last_line(e)}); "
                "games finished so far are kept, continue with --resume"
            ) from None
        finally:
            for ref in pending:
                try:
                    ray.cancel(ref)
                except RayError:
                    pass
    finally:
        if started:
            ray.shutdown()


def _one_at_a_time(options: RunOptions) -> str:
    """Why a run with workers other than 0 plays one game at a time anyway."""
    if options.workers == 1:
        return "--workers 1 plays one game at a time"
    return "this machine has one CPU, so games are played one at a time either way"


def _last_line(error: BaseException) -> str:
    """The last line of an error's text: Ray puts the original message after its traceback."""
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__


def start(
    config: TournamentConfig,
    out: str | os.PathLike[str],
    options: RunOptions = RunOptions(),
    *,
    factory: AgentFactory | None = None,
    console: Console | None = None,
) -> Summary:
    """Play a new tournament into the directory out; returns the summary."""
    check_agents(config, factory)
    check_cluster(options)
    return _run(ResultsDir.create(out, config), options, factory, console)


def resume(
    out: str | os.PathLike[str],
    options: RunOptions = RunOptions(),
    *,
    factory: AgentFactory | None = None,
    console: Console | None = None,
    mode: str | None = None,
) -> Summary:
    """Finish the tournament in out: play only its jobs that have no games line yet.
    With mode ("tournament" or "selfplay"), TournamentError for a run of the other kind,
    whose command writes other files."""
    results = ResultsDir.open(out)
    if mode is not None and results.config.mode != mode:
        held = results.config.mode
        raise TournamentError(
            f"out: {path_label(Path(out))} holds a {held} run; continue it with csl {held} --resume"
        )
    check_cluster(options)
    return _run(results, options, factory, console)


def _run(
    results: ResultsDir,
    options: RunOptions,
    factory: AgentFactory | None,
    console: Console | None,
) -> Summary:
    with results.exclusive():
        return _run_held(results, options, factory, console)


def _run_held(
    results: ResultsDir,
    options: RunOptions,
    factory: AgentFactory | None,
    console: Console | None,
) -> Summary:
    config = results.config
    done = results.load()
    todo = [i for i in range(config.total_games) if i not in done]
    console = console if console is not None else Console(stderr=True)
    progress = _TournamentProgress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        disable=not options.progress,
        transient=False,
    )
    with progress:
        tracker = _Tracker(results, done, progress)
        where = where_to_play(options) if todo else "here"
        if where == "ray":
            _drive_ray(config, todo, options, factory, tracker.add, tracker.refresh)
        elif where == "measure":
            _drive_here_first(
                config, todo, options, factory, tracker.add, tracker.refresh, console.print
            )
        elif todo:
            if options.workers != 0:
                console.print(f"Playing in this process, without Ray: {_one_at_a_time(options)}.")
            _drive_inline(config, todo, options, factory, tracker.add)
    outcomes = [done[i] for i in sorted(done)]
    summary = summarize(config.agents, config.labels, config.players, outcomes, seed=config.seed)
    results.write_summary(summary, complete=len(done) == config.total_games)
    return summary
