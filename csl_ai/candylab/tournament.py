"""A Candy Lab tournament's run: where its games are played, and its folder on disk.

The games (``csl_ai.candylab.duplicate``: the schedule, the seeds, `play_batch`) are
played by CSL's tournament harness (`csl_ai.tournament.harness.play_batches`), with the
same `RunOptions` and the same choice of place as `csl tournament`: in this process for
workers 0 or 1; on Ray with an address, with ``always_ray`` (``--ray``) or when this
process already joined Ray; otherwise here first, timing the games, and on a local Ray
instance once the games left would take longer here than Ray's start-up. Ray is started
or joined by `csl_ai.tournament.ray_setup` (a local ``ray.init`` at the workers'
niceness, or a cluster at an address with its token); a batch whose worker died is
retried by Ray, then resubmitted; workers that keep dying, a lost cluster or a game that
raises end the run with one `TournamentRunError` line, the games finished so far kept.
A game's result depends only on the config and its job id, so every runner gives the
same games (on Ray, games.jsonl is in the order batches finished).

A run's folder holds, as CSL's does (`csl_ai.tournament.results`, same file names):

- ``tournament.json`` -- the config (`DuplicateConfig.to_dict`, format
  ``candylab-tournament``), written first;
- ``games.jsonl`` -- one line per finished game: its ``candylab-record``, whose meta
  names the job (tournament seed, job, deal, rotation, agent seeds), appended batch by
  batch with flush and fsync as batches finish;
- ``summary.json`` -- the standings, written at the end (``complete``: every game in).

`resume` reads games.jsonl, cuts a last line a kill left unfinished, checks every line
against tournament.json (the job's agents per seat, the rules, the deal's and agents'
seeds, a finished result; the moves are not replayed: `csl replay --game candy-lab`
checks a record in full), drops a job's second line, and plays only the jobs missing.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from csl_ai.candylab.duplicate import (
    CONFIG_FORMAT,
    AgentFactory,
    DuplicateConfig,
    DuplicateError,
    Outcome,
    Standing,
    agent_seed,
    deal_seed,
    play_batch,
    shares_of,
    standings,
)
from csl_ai.candylab.records import RECORD_FORMAT
from csl_ai.errors import OutputWriteError, path_label, short_repr
from csl_ai.files import appending, write_file_atomic
from csl_ai.jsonio import is_int
from csl_ai.tournament.results import (
    CONFIG_FILE,
    GAMES_FILE,
    SUMMARY_FILE,
    ResultsDir,
    load_lines,
)
from csl_ai.tournament.runner import TournamentError, first_difference

if TYPE_CHECKING:
    from csl_ai.tournament.harness import RunOptions

Progress = Callable[[int, int], None]
"""Called after each batch with (games done, total games)."""


def holds_candylab_run(path: str | os.PathLike[str]) -> bool:
    """Whether path's tournament.json is a Candy Lab tournament's (False when unreadable or
    not a regular file: a FIFO would block the read, and CSL's resume refuses it in one line)."""
    config = Path(path) / CONFIG_FILE
    try:
        if not stat.S_ISREG(os.lstat(config).st_mode):
            return False
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, Mapping) and data.get("format") == CONFIG_FORMAT


class RunFolder:
    """A Candy Lab tournament's folder: its config, finished games and summary."""

    def __init__(self, path: str | os.PathLike[str], config: DuplicateConfig) -> None:
        self.path = Path(path)
        self.config = config

    @staticmethod
    def check_new(path: str | os.PathLike[str]) -> None:
        """TournamentError unless path can hold a new run (a folder holding no run, or
        nothing yet); UnsafeOutputError for a results file that is not a regular file."""
        ResultsDir.check_new(path)

    @classmethod
    def create(cls, path: str | os.PathLike[str], config: DuplicateConfig) -> RunFolder:
        """Start a new run in path: the folder and its tournament.json."""
        p = Path(path)
        cls.check_new(p)
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputWriteError(f"cannot write {path_label(p)}: {e.strerror or e}") from None
        config_path = p / CONFIG_FILE
        write_file_atomic(
            config_path, json.dumps(config.to_dict(), indent=2) + "\n", path_label(config_path)
        )
        return cls(p, config)

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> RunFolder:
        """An existing run's folder, its config read from tournament.json; TournamentError
        for a folder without one, or holding a CSL run."""
        p = Path(path)
        config_path = p / CONFIG_FILE
        ResultsDir.check_files(p)
        try:
            text = config_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise TournamentError(
                f"resume: no {CONFIG_FILE} in {str(p)!r}; nothing to resume"
            ) from None
        except OSError as e:
            raise TournamentError(
                f"resume: cannot read {str(config_path)!r}: {e.strerror or e}"
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise TournamentError(
                f"resume: {str(config_path)!r} is not JSON ({e.msg}, line {e.lineno})"
            ) from None
        if isinstance(data, Mapping) and data.get("format") == 1:  # CSL's TournamentConfig
            raise TournamentError(
                f"resume: {path_label(p)} holds a Candy Spiders Leopards run; continue it "
                f"with csl {data.get('mode', 'tournament')} --resume {path_label(p)}"
            )
        try:
            config = DuplicateConfig.from_dict(data, str(config_path))
        except DuplicateError as e:
            raise TournamentError(f"resume: {e}") from None
        return cls(p, config)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the folder for this process while the block runs (TournamentError if
        another run holds it): CSL's lock on tournament.json (`ResultsDir.exclusive`),
        which reads nothing but the folder's path."""
        with ResultsDir(self.path, self.config).exclusive():  # type: ignore[arg-type]
            yield

    def load(self) -> dict[int, Outcome]:
        """The finished games by job id, every line checked against the config; a job's
        later lines are dropped from the file, a last line cut short is cut off."""
        ResultsDir.check_files(self.path)
        config = self.config
        rules = json.loads(json.dumps(config.rules.to_dict()))
        return load_lines(
            self.path / GAMES_FILE,
            lambda data, where: outcome_of_line(data, config, where, rules),
            lambda outcome: outcome.job.id,
        )

    def append(self, outcomes: Sequence[Outcome]) -> None:
        """Write a batch's games, one record a line; flushed and fsynced."""
        if not outcomes:
            return
        path = self.path / GAMES_FILE
        text = "".join(json.dumps(o.record, separators=(",", ":")) + "\n" for o in outcomes)
        with appending(path, path_label(path)) as f:
            f.write(text.encode("utf-8"))

    def write_summary(self, table: Sequence[Standing], games: int, complete: bool) -> None:
        config = self.config
        summary = {
            "game": "candy-lab",
            "agents": list(config.agents),
            "players": config.players,
            "games": games,
            "total_games": config.total_games,
            "complete": complete,
            "seed": config.seed,
            "standings": [st.to_json() for st in table],
            "tournament": config.to_dict(),
        }
        path = self.path / SUMMARY_FILE
        write_file_atomic(path, json.dumps(summary, indent=2) + "\n", path_label(path))


def outcome_of_line(
    data: object, config: DuplicateConfig, where: str, rules_json: object | None = None
) -> Outcome:
    """A games.jsonl line read back: its job, checked field by field against the config
    (TournamentError names the first that differs), and its seats' shares of the win."""
    if not isinstance(data, Mapping):
        raise TournamentError(f"{where}: must be a game record (an object)")
    if data.get("format") != RECORD_FORMAT:
        raise TournamentError(
            f"{where}.format: must be {RECORD_FORMAT!r}, got {short_repr(data.get('format'))}"
        )
    meta = data.get("meta")
    if not isinstance(meta, Mapping):
        raise TournamentError(f"{where}.meta: missing: the record of a tournament game has one")
    job_id = meta.get("job")
    total = config.total_games
    if not is_int(job_id) or not 0 <= job_id < total:
        raise TournamentError(
            f"{where}.meta.job: must be a job id 0..{total - 1}, got {short_repr(job_id)}"
        )
    job = config.job(job_id)
    n = config.players
    labels = config.labels
    if rules_json is None:
        rules_json = json.loads(json.dumps(config.rules.to_dict()))
    expected: tuple[tuple[str, object, object], ...] = (
        ("agents", data.get("agents"), [labels[a] for a in job.seats]),
        ("rules", data.get("rules"), rules_json),
        ("meta.tournament_seed", meta.get("tournament_seed"), config.seed),
        ("meta.deal", meta.get("deal"), job.deal),
        ("meta.rotation", meta.get("rotation"), job.rotation),
        ("seed", data.get("seed"), deal_seed(config.seed, n, job.deal)),
        ("meta.agent_seeds", meta.get("agent_seeds"), [agent_seed(config.seed, job, s) for s in range(n)]),
    )
    for field, found, wanted in expected:
        difference = first_difference(found, wanted, field)
        if difference is not None:
            raise TournamentError(
                f"{where}: job {job.id} is not this tournament's: {difference} "
                "(games.jsonl from another tournament?)"
            )
    result = data.get("result")
    winners = result.get("winners") if isinstance(result, Mapping) else None
    scores = result.get("scores") if isinstance(result, Mapping) else None
    if (
        not isinstance(winners, list)
        or not winners
        or not all(is_int(w) and 0 <= w < n for w in winners)
        or len(set(winners)) != len(winners)
        or not isinstance(scores, list)
        or len(scores) != n
        or not all(is_int(v) for v in scores)
    ):
        raise TournamentError(f"{where}.result: missing or malformed: a games line holds a finished game")
    return Outcome(job, shares_of(winners, n), dict(data), 0.0)


@dataclass(frozen=True)
class RunResult:
    """A run's games (finished before this run or in it), in job order, and its standings."""

    config: DuplicateConfig
    outcomes: list[Outcome]
    standings: list[Standing]
    played: int
    """Games played by this run (not loaded from the folder)."""

    @property
    def complete(self) -> bool:
        return len(self.outcomes) == self.config.total_games


def start(
    config: DuplicateConfig,
    out: str | os.PathLike[str] | None,
    options: RunOptions,
    *,
    factory: AgentFactory | None = None,
    say: Callable[[str], None] = print,
    progress: Progress | None = None,
) -> RunResult:
    """Play a new tournament, kept in the folder out (None: nowhere, nothing to resume)."""
    from csl_ai.tournament.harness import check_cluster

    check_cluster(options)
    folder = RunFolder.create(out, config) if out is not None else None
    return _run(config, folder, options, factory, say, progress)


def resume(
    out: str | os.PathLike[str],
    options: RunOptions,
    *,
    factory: AgentFactory | None = None,
    say: Callable[[str], None] = print,
    progress: Progress | None = None,
) -> RunResult:
    """Finish the tournament in out: play only its jobs that have no games line yet."""
    from csl_ai.tournament.harness import check_cluster

    folder = RunFolder.open(out)
    check_cluster(options)
    return _run(folder.config, folder, options, factory, say, progress)


def _run(
    config: DuplicateConfig,
    folder: RunFolder | None,
    options: RunOptions,
    factory: AgentFactory | None,
    say: Callable[[str], None],
    progress: Progress | None,
) -> RunResult:
    if folder is None:
        return _play(config, None, {}, options, factory, say, progress)
    with folder.exclusive():
        result = _play(config, folder, folder.load(), options, factory, say, progress)
        folder.write_summary(result.standings, len(result.outcomes), result.complete)
    return result


def _play(
    config: DuplicateConfig,
    folder: RunFolder | None,
    done: dict[int, Outcome],
    options: RunOptions,
    factory: AgentFactory | None,
    say: Callable[[str], None],
    progress: Progress | None,
) -> RunResult:
    from csl_ai.tournament.harness import BatchTask, play_batches

    total = config.total_games
    todo = [i for i in range(total) if i not in done]
    before = len(done)

    def on_batch(batch: Sequence[Outcome]) -> None:
        fresh = [o for o in batch if o.job.id not in done]
        if folder is not None:
            folder.append(fresh)
        for o in fresh:
            done[o.job.id] = o
        if progress is not None:
            progress(len(done), total)

    task = BatchTask(play_batch, config, (factory,))
    play_batches(task, todo, options, on_batch, lambda: None, say)
    outcomes = [done[i] for i in sorted(done)]
    table = standings(config.labels, outcomes, config.seed)
    return RunResult(config, outcomes, table, len(done) - before)


def run_here(config: DuplicateConfig, factory: AgentFactory | None = None) -> list[Outcome]:
    """Every game in this process, one after another: the reference any runner must give."""
    return play_batch(config, range(config.total_games), factory)


__all__ = [
    "RunFolder",
    "RunResult",
    "holds_candylab_run",
    "outcome_of_line",
    "resume",
    "run_here",
    "start",
]
