"""Candy Lab tournaments on CSL's harness: the same games in this process and on Ray, the
run's folder, resume, and failures in one line.

The Ray tests share one local 1-CPU Ray instance (module fixture, started once: a run
finds it and plays on it, as `csl tournament --ray` does on a Ray started before it).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from csl_ai.candylab import CandyLabRules
from csl_ai.candylab import tournament as runs
from csl_ai.candylab.agents import Agent
from csl_ai.candylab.duplicate import DuplicateConfig, Outcome, agent_seed, standings
from csl_ai.candylab.players import make_agent
from csl_ai.candylab.records import replay_record
from csl_ai.cli import app
from csl_ai.tournament.harness import RunOptions
from csl_ai.tournament.runner import TournamentError, TournamentRunError

CONFIG = DuplicateConfig(("heuristic", "random"), CandyLabRules(players=2), games=8, seed=5)
"""4 deals x 2 seatings, a few milliseconds a game."""
HERE = RunOptions(workers=0, progress=False)


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(app, args)


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}"


def one_error_line(result: Result, code: int) -> str:
    assert result.exit_code == code, f"exit {result.exit_code}\n{result.stdout}\n{result.stderr}"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("csl: error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def lines_of(folder: Path) -> list[str]:
    return (folder / "games.jsonl").read_text().splitlines()


def jobs_of(folder: Path) -> list[int]:
    return [json.loads(line)["meta"]["job"] for line in lines_of(folder)]


def standings_of(folder: Path) -> list[dict]:
    return json.loads((folder / "summary.json").read_text())["standings"]


@pytest.fixture(scope="module")
def reference() -> list[Outcome]:
    """CONFIG played in this process, one game after another."""
    return runs.run_here(CONFIG)


def tournament_args(out: Path, *more: str) -> list[str]:
    return ["tournament", "--game", "candy-lab", "--agents", "heuristic,random", "--players",
            "2", "--games", "8", "--seed", "5", "--out", str(out), "-q", *more]


# --- in this process --------------------------------------------------------------------------
def test_every_runner_here_plays_the_reference_games(tmp_path: Path, reference: list[Outcome]) -> None:
    result = runs.start(CONFIG, tmp_path / "api", HERE)
    assert result.complete and result.played == CONFIG.total_games
    assert [o.record for o in result.outcomes] == [o.record for o in reference]
    assert_ok(invoke(tournament_args(tmp_path / "w0", "--workers", "0")))
    assert_ok(invoke(tournament_args(tmp_path / "w1", "--workers", "1", "--batch", "3")))
    expected = [json.dumps(o.record, separators=(",", ":")) for o in reference]
    assert lines_of(tmp_path / "w0") == lines_of(tmp_path / "w1") == lines_of(tmp_path / "api") == expected
    table = [st.to_json() for st in standings(CONFIG.labels, reference, CONFIG.seed)]
    assert standings_of(tmp_path / "w0") == standings_of(tmp_path / "w1") == table
    summary = json.loads((tmp_path / "w0" / "summary.json").read_text())
    assert summary["complete"] is True and summary["tournament"] == CONFIG.to_dict()
    config = json.loads((tmp_path / "w0" / "tournament.json").read_text())
    assert DuplicateConfig.from_dict(config) == CONFIG
    for line in expected:
        assert replay_record(json.loads(line)).is_over


def test_resume_after_a_partial_run_plays_only_the_missing_games(
    tmp_path: Path, reference: list[Outcome]
) -> None:
    out = tmp_path / "cut"
    assert_ok(invoke(tournament_args(out, "--workers", "0")))
    full = lines_of(out)
    # killed mid-run: 3 games written, the 4th cut mid-line, the 2nd written twice
    (out / "games.jsonl").write_text("\n".join(full[:3] + [full[1]]) + "\n" + full[3][:50])
    (out / "summary.json").unlink()
    result = invoke(["tournament", "--game", "candy-lab", "--resume", str(out), "--workers", "0"])
    assert_ok(result)
    assert f"resuming '{out}'" in result.stdout and "  8/8 games" in result.stdout
    assert sorted(jobs_of(out)) == list(range(CONFIG.total_games))
    assert sorted(lines_of(out)) == sorted(full)
    assert standings_of(out) == [
        st.to_json() for st in standings(CONFIG.labels, reference, CONFIG.seed)
    ]
    # a complete run resumes to the same figures, and --game is read from the folder
    again = invoke(["tournament", "--resume", str(out), "--workers", "0", "-q"])
    assert_ok(again)
    assert "heuristic" in again.stdout and lines_of(out) == full


def test_resume_refuses_another_tournaments_games_and_changed_options(tmp_path: Path) -> None:
    out, other = tmp_path / "a", tmp_path / "b"
    assert_ok(invoke(tournament_args(out, "--workers", "0")))
    args = tournament_args(other, "--workers", "0")
    args[args.index("--seed") + 1] = "6"
    assert_ok(invoke(args))
    (out / "games.jsonl").write_text("\n".join(lines_of(out)[:2] + lines_of(other)[2:3]) + "\n")
    line = one_error_line(
        invoke(["tournament", "--game", "candy-lab", "--resume", str(out), "--workers", "0"]), 2
    )
    assert "games.jsonl:3: job 2 is not this tournament's" in line, line
    line = one_error_line(
        invoke(["tournament", "--game", "candy-lab", "--resume", str(out), "--games", "4"]), 2
    )
    assert "--games: a resumed run keeps its options" in line
    line = one_error_line(invoke(tournament_args(other, "--workers", "0")), 2)
    assert "already holds a tournament; continue it with --resume" in line
    with pytest.raises(TournamentError, match="nothing to resume"):
        runs.resume(tmp_path / "none", HERE)


def test_an_unreachable_cluster_is_one_line_and_exit_1(tmp_path: Path) -> None:
    out = tmp_path / "far"
    line = one_error_line(invoke(tournament_args(out, "--address", "127.0.0.1:1")), 1)
    assert "cannot reach the Ray cluster at '127.0.0.1:1'" in line
    assert not out.exists(), "refused before the run's folder is made"


def test_a_run_that_fails_is_one_line_and_exit_1_its_games_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: list[Outcome]
) -> None:
    out = tmp_path / "fails"
    real = runs.play_batch

    def failing(config: DuplicateConfig, job_ids, factory=None):  # type: ignore[no-untyped-def]
        if 3 in job_ids:
            raise RuntimeError("the lab is on fire")
        return real(config, job_ids, factory)

    monkeypatch.setattr(runs, "play_batch", failing)
    line = one_error_line(invoke(tournament_args(out, "--workers", "0")), 1)
    assert line == "csl: error: a game failed in jobs 3..3: RuntimeError: the lab is on fire"
    assert jobs_of(out) == [0, 1, 2] and not (out / "summary.json").exists()
    monkeypatch.setattr(runs, "play_batch", real)
    assert_ok(invoke(["tournament", "--resume", str(out), "--workers", "0", "-q"]))
    assert lines_of(out) == [json.dumps(o.record, separators=(",", ":")) for o in reference]


# --- on Ray ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=1, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_plays_the_same_games_and_standings(
    ray_local: None, tmp_path: Path, reference: list[Outcome]
) -> None:
    out = tmp_path / "ray"
    result = invoke(tournament_args(out, "--ray", "--workers", "1", "--batch", "3"))
    assert_ok(result)
    assert "without Ray" not in result.stderr
    here = tmp_path / "here"
    assert_ok(invoke(tournament_args(here, "--workers", "0")))
    assert sorted(lines_of(out)) == sorted(lines_of(here))
    assert standings_of(out) == standings_of(here)
    table = lambda r: [l for l in r.stdout.splitlines() if "win share" in l]  # noqa: E731
    assert table(result) == table(invoke(tournament_args(tmp_path / "h2", "--workers", "0")))


@dataclass(frozen=True)
class _DieAt:
    """Kills the worker that builds the agent of one seat of one job: once (a marker file
    says it happened) or every time."""

    seed: int
    marker: str | None = None

    def __call__(self, spec: str, seed: int) -> Agent:
        if seed == self.seed:
            if self.marker is None:
                os._exit(1)
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.close(fd)
                os._exit(1)
        return make_agent(spec, seed)


def test_a_worker_killed_once_is_retried_and_loses_nothing(
    ray_local: None, tmp_path: Path, reference: list[Outcome]
) -> None:
    marker = tmp_path / "died"
    options = RunOptions(workers=1, always_ray=True, batch=2, max_resubmits=1, progress=False)
    factory = _DieAt(agent_seed(CONFIG.seed, CONFIG.job(5), 0), str(marker))
    result = runs.start(CONFIG, tmp_path / "once", options, factory=factory)
    assert marker.exists(), "a worker died"
    assert sorted(jobs_of(tmp_path / "once")) == list(range(CONFIG.total_games))
    assert [o.record for o in result.outcomes] == [o.record for o in reference]


def test_workers_that_keep_dying_fail_in_one_line_keeping_finished_games(
    ray_local: None, tmp_path: Path, reference: list[Outcome]
) -> None:
    out = tmp_path / "dead"
    options = RunOptions(
        workers=1, always_ray=True, batch=1, task_retries=0, max_resubmits=1, progress=False
    )
    factory = _DieAt(agent_seed(CONFIG.seed, CONFIG.job(3), 1))
    with pytest.raises(TournamentRunError, match=r"^jobs 3\.\.3: a worker died 2 times .*--resume$"):
        runs.start(CONFIG, out, options, factory=factory)
    kept = jobs_of(out)
    assert kept and 3 not in kept and len(kept) == len(set(kept))
    assert not (out / "summary.json").exists()
    finished = runs.resume(out, HERE)
    assert finished.played == CONFIG.total_games - len(kept)
    assert [o.record for o in finished.outcomes] == [o.record for o in reference]
