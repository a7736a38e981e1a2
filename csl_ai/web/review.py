"""Saved records for the browser: the list, uploads, the review board, positions, analyses.

Records are looked up only by id, a file name stem matched against `RECORD_ID_RE`, and
only inside the records folder: no path ever comes from a request. A review re-enacts
the checked record (`csl_ai.records.replay_record`) decision by decision and draws the
whole board (every hand open) before each one, so only a game that cannot be played on
(`resumable` is false: finished, resigned, or without a human seat) is reviewed,
analysed, exported or uploaded: an unfinished game's record would show the AI seats'
hidden cards of the deal the player resumes. An analysis (`csl_ai.analysis`) runs as a
background job in a worker thread that the page polls for progress.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from starlette.concurrency import run_in_threadpool

from csl_ai.agents import LEVELS, level_iterations, make_agent
from csl_ai.analysis import Decision, Replayer, analyze_game, summary_rows
from csl_ai.errors import CslError, clip
from csl_ai.game import Game
from csl_ai.moves import move_to_json
from csl_ai.position import observation_to_position
from csl_ai.record_lock import record_in_use
from csl_ai.records import replay_record, save_new_record
from csl_ai.records import load_record as _load_record_shape
from csl_ai.session import HUMAN
from csl_ai.web.errors import ApiError, bad_request, busy, conflict, not_found
from csl_ai.web.state import board_json, move_kind, move_text, result_json, rules_json

RECORD_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
JOB_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{16,64}")
MAX_LISTED: Final = 200
MAX_JOBS_KEPT: Final = 32
DEFAULT_ANALYSIS_LEVEL: Final = "normal"


def record_path(folder: Path, record_id: str) -> Path:
    """The file of a record id inside folder (404 for a malformed id or no such regular file)."""
    if not RECORD_ID_RE.fullmatch(record_id):
        raise not_found("no such record")
    path = folder / f"{record_id}.json"
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        raise not_found(f"no record {record_id!r} in the records folder") from None
    if not stat.S_ISREG(mode):
        raise not_found(f"no record {record_id!r} in the records folder")
    return path


def read_record(path: Path) -> dict[str, Any]:
    """A record file, its shape checked (bad_record otherwise)."""
    try:
        return _load_record_shape(path)
    except CslError as e:
        raise ApiError(400, "bad_record", str(e)) from None


def check_record(record: object) -> Game:
    """The game a record describes, every step checked (bad_record naming the first bad one)."""
    try:
        return replay_record(record)
    except CslError as e:
        raise ApiError(400, "bad_record", str(e)) from None


def _agents(record: Mapping[str, Any], players: int) -> list[str] | None:
    agents = record.get("agents")
    if isinstance(agents, list) and len(agents) == players and all(isinstance(a, str) for a in agents):
        return list(agents)
    return None


def _resigned_by(record: Mapping[str, Any]) -> int | None:
    meta = record.get("meta")
    if isinstance(meta, Mapping):
        seat = meta.get("resigned")
        if isinstance(seat, int) and not isinstance(seat, bool):
            return seat
    return None


def resumable(record: Mapping[str, Any], game: Game | None = None) -> bool:
    """Whether a record is a game a person may still play on (no result, not resigned, a
    human seat; and, given its replayed game, not over): its hidden cards stay hidden."""
    if record.get("result") is not None or _resigned_by(record) is not None:
        return False
    if game is not None and game.is_over:
        return False
    agents = record.get("agents")
    return isinstance(agents, list) and HUMAN in agents


def not_over() -> ApiError:
    return conflict(
        "this game is not over: its record holds every hand, the AI seats' too, so it opens "
        "for review once the game is finished or resigned (resume it to play on)"
    )


def _humans(record: Mapping[str, Any], players: int) -> list[int]:
    agents = _agents(record, players)
    if agents is not None:
        return [s for s, a in enumerate(agents) if a == HUMAN]
    return []


def record_info(path: Path, live: set[str]) -> dict[str, Any]:
    """One entry of the records list (docs/web-api.md: RecordInfo); a file that is no
    readable record is listed with its error. live: the record ids of the games this
    server plays; an unfinished game that another process plays (its record's lock is
    held: `csl_ai.record_lock`) is live too."""
    st = path.stat()
    info: dict[str, Any] = {
        "id": path.stem,
        "saved_at": datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds"),
        "size_bytes": st.st_size,
        "players": None,
        "finished": None,
        "resigned_by": None,
        "winners": None,
        "agents": None,
        "humans": None,
        "live": path.stem in live,
        "reviewable": None,
        "error": None,
    }
    try:
        record = _load_record_shape(path)
    except CslError as e:
        info["error"] = clip(str(e), 200)
        return info
    players = record["rules"].get("players", 4)
    result = record.get("result")
    if not info["live"] and resumable(record) and record_in_use(path) is not None:
        info["live"] = True
    info.update(
        players=players,
        finished=result is not None,
        resigned_by=_resigned_by(record),
        winners=list(result["winners"]) if result is not None else None,
        agents=_agents(record, players),
        humans=_humans(record, players),
        reviewable=not resumable(record) and path.stem not in live,
    )
    return info


def list_records(folder: Path, live: set[str]) -> list[dict[str, Any]]:
    """The Candy Spiders Leopards records in folder, newest first (at most MAX_LISTED);
    Candy Lab's (``candylab-*.json``, which this page cannot review) are left out."""
    try:
        entries = [
            e
            for e in os.scandir(folder)
            if e.name.endswith(".json")
            and not e.name.startswith("candylab-")
            and RECORD_ID_RE.fullmatch(e.name[: -len(".json")])
            and e.is_file(follow_symlinks=False)
        ]
    except OSError:
        return []
    entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime, reverse=True)
    out = []
    for entry in entries[:MAX_LISTED]:
        try:
            out.append(record_info(Path(entry.path), live))
        except OSError:
            continue
    return out


def store_upload(folder: Path, record: object, live: set[str]) -> dict[str, Any]:
    """Check an uploaded record in full and save it under a new id; its RecordInfo. A
    game that is not over is refused (409): uploads are for review."""
    game = check_record(record)
    assert isinstance(record, dict)
    if resumable(record, game):
        raise not_over()
    path = save_new_record(record, folder, program="csl serve")
    return record_info(path, live)


# --- review --------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReviewStep(Decision):
    """One recorded decision, in the order a review steps through them."""

    forced: bool = False
    """A card its player had to play (the only legal one)."""


class Walk(Replayer):
    """A `Replayer` whose steps also say whether a card was forced: iterate to get each
    step before it is applied to `Walk.game`; afterwards the game stands after the last."""

    def __iter__(self) -> Iterator[ReviewStep]:  # type: ignore[override]
        for decision in super().__iter__():
            forced = decision.trick is not None and self.game.core.legal_plays().bit_count() == 1
            yield ReviewStep(decision.round, decision.trick, decision.seat, decision.move, forced)


def step_json(index: int, step: ReviewStep) -> dict[str, Any]:
    """A review step (docs/web-api.md: Review.steps)."""
    return {
        "index": index,
        "round": step.round,
        "trick": step.trick,
        "seat": step.seat,
        "kind": move_kind(step.move),
        "move": move_to_json(step.move),
        "text": move_text(step.move),
        "label": step.where,
        "forced": step.forced,
    }


def _seats(record: Mapping[str, Any], players: int) -> list[dict[str, Any]]:
    agents = _agents(record, players)
    return [
        {
            "seat": s,
            "human": agents[s] == HUMAN if agents is not None else None,
            "agent": agents[s] if agents is not None else None,
            "level": _level_name(agents[s]) if agents is not None else None,
        }
        for s in range(players)
    ]


def _level_name(spec: str) -> str | None:
    for name in LEVELS:
        if spec == f"ismcts:{name}":
            return name
    return None


def review_json(record_id: str, record: Mapping[str, Any], reference: Game) -> dict[str, Any]:
    """Every step of a checked record with the whole board before it (docs/web-api.md)."""
    players = reference.players
    seats = _seats(record, players)
    steps: list[dict[str, Any]] = []
    frames: list[dict[str, Any]] = []
    walk = Walk(reference)
    for index, step in enumerate(walk):
        frames.append(board_json(walk.game, None, seats))
        steps.append(step_json(index, step))
    if walk.game.rounds:
        frames.append(board_json(walk.game, None, seats))
    return {
        "id": record_id,
        "rules": rules_json(reference.rules),
        "players": players,
        "seats": seats,
        "finished": reference.is_over,
        "resigned_by": _resigned_by(record),
        "result": result_json(reference),
        "steps": steps,
        "frames": frames,
    }


def position_at(reference: Game, step_index: int, seat: int | None) -> dict[str, Any]:
    """The decision point before review step step_index as a `csl best-move` position, from
    the deciding seat's view (or seat's)."""
    if seat is not None and not 0 <= seat < reference.players:
        raise bad_request(
            f"seat: {seat} is not in this {reference.players}-player game "
            f"(seats 0..{reference.players - 1})"
        )
    walk = Walk(reference)
    count = 0
    for index, step in enumerate(walk):
        if index == step_index:
            try:
                return observation_to_position(
                    walk.game.observation(step.seat if seat is None else seat)
                )
            except CslError as e:
                raise bad_request(str(e)) from None
        count = index + 1
    raise bad_request(f"step: must be 0..{count - 1}, the index of a decision, got {step_index}")


# --- analysis ------------------------------------------------------------------------------
@dataclass(eq=False)
class AnalysisJob:
    """One analysis of a record running (or run) in the background."""

    id: str
    record_id: str
    level: str
    iterations: int
    seats: list[int]
    status: str = "running"
    done: int = 0
    total: int = 0
    result: dict[str, Any] | None = None
    error: dict[str, str] | None = None
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task[None] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "record_id": self.record_id,
            "status": self.status,
            "done": self.done,
            "total": self.total,
            "level": self.level,
            "seats": self.seats,
            "error": self.error,
            "result": self.result,
        }


def analysis_json(reference: Game, seats: Sequence[int], iterations: int, reports: Sequence[Any]) -> dict[str, Any]:
    """The finished analysis (docs/web-api.md: Job.result), each decision tied to its
    review step."""
    wanted = set(seats)
    indexed = [(i, step) for i, step in enumerate(Walk(reference)) if step.seat in wanted]
    if len(indexed) != len(reports):
        raise AssertionError("the analysis and the review disagree on the decisions")
    decisions = []
    for (index, step), report in zip(indexed, reports, strict=True):
        engine = report.engine
        decisions.append(
            {
                "step": index,
                "round": step.round,
                "trick": step.trick,
                "seat": step.seat,
                "kind": move_kind(step.move),
                "label": step.where,
                "played": move_to_json(step.move),
                "played_text": move_text(step.move),
                "engine": move_to_json(engine) if engine is not None else None,
                "engine_text": move_text(engine) if engine is not None else None,
                "win_probability": report.played_win,
                "best_win_probability": report.best_win,
                "loss": report.loss,
                "blunder": report.verdict == "blunder",
                "verdict": report.verdict,
                "forced": report.forced,
                "estimated": report.estimated,
            }
        )
    return {
        "iterations": iterations,
        "decisions": decisions,
        "summary": summary_rows(reports, list(seats)),
    }


class AnalysisJobs:
    """The analyses of a server: at most max_running at once, the last MAX_JOBS_KEPT kept."""

    def __init__(self, max_running: int) -> None:
        self.max_running = max_running
        self.jobs: dict[str, AnalysisJob] = {}

    def get(self, job_id: str) -> AnalysisJob:
        job = self.jobs.get(job_id) if JOB_ID_RE.fullmatch(job_id) else None
        if job is None:
            raise not_found("no such analysis")
        return job

    def start(
        self, record_id: str, reference: Game, seats: list[int], level: str, iterations: int
    ) -> AnalysisJob:
        running = sum(1 for j in self.jobs.values() if j.status == "running")
        if running >= self.max_running:
            raise busy(f"{running} analyses are running already; try again when one is done")
        finished = sorted(
            (j for j in self.jobs.values() if j.status != "running"), key=lambda j: j.started
        )
        while len(self.jobs) >= MAX_JOBS_KEPT and finished:
            del self.jobs[finished.pop(0).id]
        job = AnalysisJob(secrets.token_urlsafe(18), record_id, level, iterations, seats)
        wanted = set(seats)
        job.total = sum(1 for step in Walk(reference) if step.seat in wanted)
        self.jobs[job.id] = job
        job.task = asyncio.get_running_loop().create_task(self._run(job, reference))
        return job

    async def _run(self, job: AnalysisJob, reference: Game) -> None:
        def progress(index: int, total: int, _decision: object) -> None:
            job.done, job.total = index, total

        def analyse() -> dict[str, Any]:
            reports = analyze_game(
                reference, job.seats, job.iterations, 1, reference.seed, progress
            )
            return analysis_json(reference, job.seats, job.iterations, reports)

        try:
            job.result = await run_in_threadpool(analyse)
            job.done = job.total
            job.status = "done"
        except Exception as e:  # noqa: BLE001 - a failed job reports, the server goes on
            message = str(e) if isinstance(e, CslError) else "the analysis failed (a server error)"
            job.error = {"message": clip(message, 300), "kind": "server_error"}
            job.status = "failed"


def analysis_iterations(levels: Mapping[str, str], level: object, players: int) -> tuple[str, int]:
    """A level name offered by the server and its search iterations in a game of this many
    players (a named level's iterations follow the player count: `level_iterations`)."""
    if level is None:
        level = DEFAULT_ANALYSIS_LEVEL
    if not isinstance(level, str) or level not in levels:
        raise bad_request(f"level: must be one of {', '.join(levels)}, got {clip(repr(level), 40)}")
    if level in LEVELS:
        return level, level_iterations(level, players)
    limit = getattr(make_agent(levels[level]), "limit", None)
    iterations = getattr(limit, "iterations", None)
    if isinstance(iterations, int):
        return level, iterations
    return level, level_iterations(DEFAULT_ANALYSIS_LEVEL, players)


__all__: Sequence[str] = (
    "RECORD_ID_RE",
    "AnalysisJob",
    "AnalysisJobs",
    "Walk",
    "analysis_iterations",
    "check_record",
    "list_records",
    "not_over",
    "position_at",
    "read_record",
    "record_info",
    "record_path",
    "resumable",
    "review_json",
    "store_upload",
)
