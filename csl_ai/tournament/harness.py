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
truncated back to its last complete line), and plays only the jobs not in it; a job
id seen twice counts once. Training rows of jobs without a games line are dropped,
since those jobs are played again.

Fault tolerance: a batch whose worker died is retried by Ray (``task_retries``), then
resubmitted by the driver (``max_resubmits``); a batch's games depend only on its job
ids, so a retry reproduces them, and results are written only from a batch that
returned, so nothing is lost or counted twice. An error raised inside a game (a bug,
not a crash) is not retried: it would fail again.

``workers=0`` plays in this process without Ray, with the same files and resume.

On a cluster (``address``), every node needs csl_ai importable (the same version, built
for its platform): tasks carry only the config and job ids, and workers import the
agents and the core themselves.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from csl_ai.errors import OutputWriteError, path_label
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
CONNECT_TIMEOUT_S: Final = 10.0
"""How long a cluster address may take to accept a connection."""
MAX_AUTO_BATCH: Final = 32
"""Largest automatic batch: a lost batch costs at most this many games of work."""


@dataclass(frozen=True)
class RunOptions:
    """How to play a tournament (never which games)."""

    workers: int | None = None
    """Local Ray CPUs (None: all cores); with an address, the most batches run at once; 0: no Ray."""
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

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 0:
            raise TournamentError(f"workers: must be 0 (no Ray) or more, got {self.workers!r}")
        if self.batch is not None and self.batch < 1:
            raise TournamentError(f"batch: must be at least 1, got {self.batch!r}")
        if self.workers == 0 and self.address:
            raise TournamentError("workers: 0 plays without Ray, so it cannot be given with an address")


@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Turn an OSError while writing path (a full disk, a folder refusing writes) into an
    OutputWriteError naming it: a failure of the run, not of its options."""
    try:
        yield
    except OSError as e:
        raise OutputWriteError(f"cannot write {path_label(path)}: {e.strerror or e}") from None


def _fsync_write(path: Path, text: str) -> None:
    """Replace path's contents atomically (write a temporary file, fsync, rename)."""
    tmp = path.with_name(path.name + ".tmp")
    with _writing(path):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


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
        if (p / CONFIG_FILE).exists() or (p / GAMES_FILE).exists():
            raise TournamentError(
                f"out: {path_label(p)} already holds a tournament; "
                f"continue it with --resume {path_label(p)}"
            )

    @classmethod
    def create(cls, path: str | os.PathLike[str], config: TournamentConfig) -> ResultsDir:
        """Start a new tournament in path; refuses a directory that already holds one.
        OutputWriteError if the directory or its config cannot be written."""
        p = Path(path)
        cls.check_new(p)
        with _writing(p):
            p.mkdir(parents=True, exist_ok=True)
        _fsync_write(p / CONFIG_FILE, json.dumps(config.to_dict(), indent=2) + "\n")
        return cls(p, config)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ResultsDir:
        """An existing tournament's directory, its config read from tournament.json."""
        p = Path(path)
        config_path = p / CONFIG_FILE
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
        """The finished games by job id (see the module doc for what is dropped)."""
        path = self.path / GAMES_FILE
        done: dict[int, GameOutcome] = {}
        for lineno, raw in enumerate(_complete_lines(path), 1):
            if not raw.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                data = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                raise TournamentError(f"{where}: not a JSON line (the file is damaged)") from None
            outcome = GameOutcome.from_json(data, self.config, where)
            done.setdefault(outcome.job, outcome)
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
        if not drop:
            return
        tmp = path.with_name(path.name + ".tmp")
        with _writing(path):
            with open(tmp, "wb") as out:
                for lineno, raw in enumerate(_complete_lines(path), 1):
                    if lineno not in drop:
                        out.write(raw + b"\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)

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
        with _writing(path), open(path, "a", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))
            f.flush()
            os.fsync(f.fileno())

    def write_summary(self, summary: Summary, complete: bool) -> None:
        """summary.json, and for a tournament the win-share picture."""
        data = summary.to_json()
        data["complete"] = complete
        data["tournament"] = self.config.to_dict()
        _fsync_write(self.path / SUMMARY_FILE, json.dumps(data, indent=2) + "\n")
        if self.config.mode == "tournament":
            from csl_ai.tournament.plot import plot_win_share

            with _writing(self.path / PLOT_FILE):
                plot_win_share(summary, self.path / PLOT_FILE)


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


def _drive_inline(
    config: TournamentConfig,
    todo: Sequence[int],
    options: RunOptions,
    factory: AgentFactory | None,
    on_batch: Callable[[Sequence[FinishedGame]], None],
) -> None:
    for batch in batches(todo, options.batch or _auto_batch(len(todo), 1)):
        try:
            finished = run_batch(config, batch, factory)
        except Exception as e:  # noqa: BLE001 - reported as on Ray: which jobs, what error
            raise TournamentRunError(
                f"a game failed in jobs {batch[0]}..{batch[-1]}: {type(e).__name__}: {_last_line(e)}"
            ) from e
        on_batch(finished)


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


def connect_ray(options: RunOptions) -> bool:
    """Start or join Ray as the options say; True if this call started it (and must shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    quiet: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
    }
    try:
        with ray_code_path():
            if options.address:
                ray.init(address=options.address, **quiet)
            else:
                ray.init(
                    num_cpus=options.workers,
                    _system_config={"worker_niceness": options.worker_niceness},
                    **quiet,
                )
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
    if options.address and options.workers != 0:
        check_reachable(options.address)
    return _run(ResultsDir.create(out, config), options, factory, console)


def resume(
    out: str | os.PathLike[str],
    options: RunOptions = RunOptions(),
    *,
    factory: AgentFactory | None = None,
    console: Console | None = None,
) -> Summary:
    """Finish the tournament in out: play only its jobs that have no games line yet."""
    results = ResultsDir.open(out)
    if options.address and options.workers != 0:
        check_reachable(options.address)
    return _run(results, options, factory, console)


def _run(
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
        if todo:
            if options.workers == 0:
                _drive_inline(config, todo, options, factory, tracker.add)
            else:
                _drive_ray(config, todo, options, factory, tracker.add, tracker.refresh)
    outcomes = [done[i] for i in sorted(done)]
    summary = summarize(config.agents, config.labels, config.players, outcomes, seed=config.seed)
    results.write_summary(summary, complete=len(done) == config.total_games)
    return summary
