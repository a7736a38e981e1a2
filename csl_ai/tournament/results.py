"""A run's folder on disk (`ResultsDir`): its config, finished games, training rows, summary.

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
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final, TypeVar

from csl_ai.errors import OutputWriteError, path_label
from csl_ai.files import appending, check_output_path, replacing, write_file_atomic
from csl_ai.tournament.runner import FinishedGame, GameOutcome, TournamentConfig, TournamentError
from csl_ai.tournament.stats import Summary

T = TypeVar("T")

CONFIG_FILE: Final = "tournament.json"
GAMES_FILE: Final = "games.jsonl"
TRAINING_FILE: Final = "training.jsonl"
SUMMARY_FILE: Final = "summary.json"
PLOT_FILE: Final = "winshare.png"
RESULT_FILES: Final = (CONFIG_FILE, GAMES_FILE, TRAINING_FILE, SUMMARY_FILE, PLOT_FILE)
"""Every file a run reads or writes in its folder."""

@contextmanager
def _writing(path: Path) -> Iterator[None]:
    """Turn an OSError while writing path (a full disk, a folder refusing writes) into an
    OutputWriteError naming it: a failure of the run, not of its options."""
    try:
        yield
    except OSError as e:
        raise OutputWriteError(f"cannot write {path_label(path)}: {e.strerror or e}") from None


def load_lines(
    path: Path, parse: Callable[[object, str], T], job_of: Callable[[T], int]
) -> dict[int, T]:
    """A games file's lines read back by job id: each line parsed (parse(data, where) raises
    TournamentError naming the line), a job's later lines dropped from the file, a last line
    cut short cut off (`_complete_lines`)."""
    done: dict[int, T] = {}
    repeated: set[int] = set()
    for lineno, raw in enumerate(_complete_lines(path), 1):
        if not raw.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            data = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise TournamentError(f"{where}: not a JSON line (the file is damaged)") from None
        outcome = parse(data, where)
        if job_of(outcome) in done:
            repeated.add(lineno)
        else:
            done[job_of(outcome)] = outcome
    if repeated:
        _drop_lines(path, repeated)
    return done


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
        config = self.config
        done = load_lines(
            self.path / GAMES_FILE,
            lambda data, where: GameOutcome.from_json(data, config, where),
            lambda outcome: outcome.job,
        )
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
