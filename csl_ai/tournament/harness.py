"""Runs a tournament on Ray: batches as tasks, results streamed with ray.wait, kept on disk.

The run's folder on disk (what it holds, how a run resumes from it) is
`csl_ai.tournament.results`; starting or joining Ray (cluster address, token, ``ray.init``)
is `csl_ai.tournament.ray_setup`. This module decides where the games are played, drives
them there and writes them as they finish; it re-exports the names its callers use from
those two modules (``ResultsDir``, the file names, ``connect_ray``, ``check_cluster``...).
What it plays is a `BatchTask` (a function playing a batch of job ids, and its
payload): CSL's games (`run_batch` on a `TournamentConfig`), or another game's through
`play_batches` and `drive_ray` (Candy Lab's: ``csl_ai.candylab.tournament``).

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
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Generic, Literal, TypeVar

from rich.console import Console, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.text import Text

from csl_ai.errors import path_label
from csl_ai.tournament.ray_setup import (
    CONNECT_TIMEOUT_S,
    DEFAULT_TOKEN_FILE,
    TOKEN_HELP,
    _last_line,
    check_cluster,
    check_reachable,
    connect_ray,
    package_root,
    python_signal_handlers_kept,
    ray_code_path,
    token_source,
    use_cluster_token,
)
from csl_ai.tournament.results import (
    CONFIG_FILE,
    GAMES_FILE,
    PLOT_FILE,
    RESULT_FILES,
    SUMMARY_FILE,
    TRAINING_FILE,
    ResultsDir,
)
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

__all__ = [
    "CONFIG_FILE",
    "CONNECT_TIMEOUT_S",
    "DEFAULT_TOKEN_FILE",
    "GAMES_FILE",
    "LOCAL_CHUNK_S",
    "MAX_AUTO_BATCH",
    "PLOT_FILE",
    "RAY_START_S",
    "RESULT_FILES",
    "SUMMARY_FILE",
    "TOKEN_HELP",
    "TRAINING_FILE",
    "BatchTask",
    "ResultsDir",
    "RunOptions",
    "check_cluster",
    "check_reachable",
    "connect_ray",
    "cpus_here",
    "drive_ray",
    "package_root",
    "play_batches",
    "python_signal_handlers_kept",
    "ray_code_path",
    "ray_parallelism",
    "resume",
    "start",
    "token_source",
    "use_cluster_token",
    "where_to_play",
]

MAX_AUTO_BATCH: Final = 32
"""Largest automatic batch: a lost batch costs at most this many games of work."""
RAY_START_S: Final = 5.0
"""About what a local Ray instance adds to a run: ``ray.init``, its workers' first task
and ``ray.shutdown`` took 4 to 6 s together on a 2-core machine (more on a slower or
busier one). A run whose games would end sooner in this process is played here."""
R = TypeVar("R")
"""What a batch of games returns (`BatchTask`)."""
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


@dataclass(frozen=True)
class BatchTask(Generic[R]):
    """Games to play batch by batch, wherever they are played: ``fn(payload, batch, *args)``
    plays the jobs of batch (job ids) and returns their results, the same in whichever
    process it runs. The harness plays CSL's tournaments through one (`run_batch` on a
    `TournamentConfig`) and Candy Lab's through another (``csl_ai.candylab.tournament``).

    On Ray, fn must be a module-level function (workers import it by name) and payload
    and args must pickle; payload goes into Ray's object store once per run."""

    fn: Callable[..., R]
    payload: Any
    args: tuple[Any, ...] = ()

    def here(self, batch: Sequence[int]) -> R:
        """Play a batch in this process; a game's error is reported as on Ray: which jobs, what error."""
        try:
            return self.fn(self.payload, batch, *self.args)
        except Exception as e:  # noqa: BLE001
            raise TournamentRunError(
                f"a game failed in jobs {batch[0]}..{batch[-1]}: {type(e).__name__}: {_last_line(e)}"
            ) from e


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
    task: BatchTask[R],
    todo: Sequence[int],
    options: RunOptions,
    on_batch: Callable[[R], None],
    on_ray: Callable[[Sequence[int]], None],
    say: Callable[[str], None],
) -> None:
    """Play in this process, timing the games, while the games left would end here before
    Ray wins back its start-up; hand the rest to Ray (on_ray) as soon as they would not.
    The first game is played alone, then chunks of about LOCAL_CHUNK_S seconds."""
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
                on_ray(todo[played:])
                return
            if not said_here:
                say_here()
                said_here = True
        size = max(1, min(MAX_AUTO_BATCH, int(LOCAL_CHUNK_S / per_game))) if played else 1
        batch = todo[played : played + size]
        began = time.perf_counter()
        finished = task.here(batch)
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


def drive_ray(
    task: BatchTask[R],
    todo: Sequence[int],
    options: RunOptions,
    on_batch: Callable[[R], None],
    tick: Callable[[], None],
) -> None:
    """Play todo's jobs on Ray (started or joined as options say, `connect_ray`) in batches
    of task, calling on_batch with each batch's results as it returns and tick between
    waits. A batch whose worker died is retried by Ray (options.task_retries), then
    resubmitted (options.max_resubmits); TournamentRunError (one line) when a game raises,
    a batch's workers keep dying or the cluster is lost: the batches already returned
    have been handed to on_batch."""
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
        remote = ray.remote(task.fn).options(max_retries=options.task_retries, retry_exceptions=False)
        payload_ref = ray.put(task.payload)
        queue = deque(batches(todo, size))
        pending: dict[Any, tuple[tuple[int, ...], int]] = {}

        def submit(batch: tuple[int, ...], attempt: int) -> None:
            pending[remote.remote(payload_ref, batch, *task.args)] = (batch, attempt)

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


def _drive_ray(
    config: TournamentConfig,
    todo: Sequence[int],
    options: RunOptions,
    factory: AgentFactory | None,
    on_batch: Callable[[Sequence[FinishedGame]], None],
    tick: Callable[[], None],
) -> None:
    """CSL's games on Ray (`drive_ray`); tests put a stand-in here."""
    drive_ray(BatchTask(_play_batch, config, (factory,)), todo, options, on_batch, tick)


def _one_at_a_time(options: RunOptions) -> str:
    """Why a run with workers other than 0 plays one game at a time anyway."""
    if options.workers == 1:
        return "--workers 1 plays one game at a time"
    return "this machine has one CPU, so games are played one at a time either way"


def play_batches(
    task: BatchTask[R],
    todo: Sequence[int],
    options: RunOptions,
    on_batch: Callable[[R], None],
    tick: Callable[[], None],
    say: Callable[[str], None],
    on_ray: Callable[[Sequence[int]], None] | None = None,
) -> None:
    """Play todo's jobs where options say (`where_to_play`): on Ray (`drive_ray`, or
    on_ray), here first while Ray would not pay for its start-up, or in this process;
    on_batch gets each batch's results as they come, and say what the run should be told
    of where it plays."""
    if on_ray is None:

        def on_ray(rest: Sequence[int]) -> None:
            drive_ray(task, rest, options, on_batch, tick)

    where = where_to_play(options) if todo else "here"
    if where == "ray":
        on_ray(todo)
    elif where == "measure":
        _drive_here_first(task, todo, options, on_batch, on_ray, say)
    elif todo:
        if options.workers != 0:
            say(f"Playing in this process, without Ray: {_one_at_a_time(options)}.")
        for batch in batches(todo, options.batch or _auto_batch(len(todo), 1)):
            on_batch(task.here(batch))


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

        def on_ray(rest: Sequence[int]) -> None:
            _drive_ray(config, rest, options, factory, tracker.add, tracker.refresh)

        task = BatchTask(_play_batch, config, (factory,))
        play_batches(task, todo, options, tracker.add, tracker.refresh, console.print, on_ray)
    outcomes = [done[i] for i in sorted(done)]
    summary = summarize(config.agents, config.labels, config.players, outcomes, seed=config.seed)
    results.write_summary(summary, complete=len(done) == config.total_games)
    return summary
