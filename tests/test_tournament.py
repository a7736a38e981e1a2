"""Tournaments: the duplicate-deal schedule, statistics, result files, resume and Ray.

Ray tests share one local 2-CPU Ray instance (module fixture; starting Ray takes
seconds) and compare every run against the plain in-process runner on the same seeds.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from csl_ai.agents import Agent, make_agent
from csl_ai.cli import app
from csl_ai.cli.tournament_cmd import split_agent_specs
from csl_ai.errors import IllegalMoveError
from csl_ai.game import Observation
from csl_ai.moves import Move
from csl_ai.rules import RulesConfig
from csl_ai.tournament import harness
from csl_ai.tournament.harness import GAMES_FILE, TRAINING_FILE, ResultsDir, RunOptions
from csl_ai.tournament.runner import (
    GameOutcome,
    TournamentConfig,
    TournamentError,
    TournamentRunError,
    deal_seed,
    job_for,
    play_job,
    run_batch,
    run_local,
    schedule,
)
from csl_ai.tournament.selfplay import FEATURE_LAYOUT, FEATURE_NAMES, FEATURE_SIZE
from csl_ai.tournament.stats import MIN_INTERVAL_DEALS, Summary, bootstrap_ratio, summarize

REPO = Path(__file__).resolve().parent.parent

SMALL = TournamentConfig(agents=("random", "heuristic"), rules=RulesConfig(players=4), games=12, seed=7)
"""The Ray tests' tournament: 6 deals x 2 seatings."""


def _config(agents: tuple[str, ...], players: int, games: int, seed: int = 3) -> TournamentConfig:
    return TournamentConfig(agents=agents, rules=RulesConfig(players=players), games=games, seed=seed)


def _jobs_in(path: Path) -> list[int]:
    return [json.loads(line)["job"] for line in path.read_text().splitlines() if line.strip()]


def _outcomes(directory: Path) -> dict[int, GameOutcome]:
    return ResultsDir.open(directory).load()


@pytest.fixture(scope="module")
def small_reference() -> dict[int, GameOutcome]:
    """SMALL played in this process, one game after another: what every harness run must give."""
    return {o.job: o for o in run_local(SMALL)}


# --- schedule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n_agents", "players", "games"),
    [(4, 4, 40), (2, 4, 10), (3, 4, 9), (6, 4, 30), (5, 2, 20), (3, 5, 6)],
)
def test_schedule_seats_every_agent_everywhere_equally(n_agents: int, players: int, games: int) -> None:
    config = _config(tuple(f"random#{i}" for i in range(n_agents)), players, games)
    jobs = schedule(config)
    assert len(jobs) == config.total_games >= games
    assert [j.id for j in jobs] == list(range(config.total_games))
    by_deal: dict[int, list] = {}
    for job in jobs:
        by_deal.setdefault(job.deal, []).append(job)
    for deal_jobs in by_deal.values():
        assert len(deal_jobs) == config.rotations == min(n_agents, players)
        table = {a for job in deal_jobs for a in job.seats}
        for agent in table:
            seats = [s for job in deal_jobs for s, a in enumerate(job.seats) if a == agent]
            assert sorted(seats) == list(range(players)), "each agent at the table plays each seat once"
    per_agent_seat = Counter((a, s) for job in jobs for s, a in enumerate(job.seats))
    assert len(per_agent_seat) == n_agents * players
    assert len(set(per_agent_seat.values())) == 1, per_agent_seat


def test_schedule_is_a_function_of_the_seed() -> None:
    config = _config(("random", "heuristic", "random"), 3, 30)
    assert schedule(config) == schedule(replace(config))
    other = replace(config, seed=config.seed + 1)
    assert [j.seats for j in schedule(config)] != [j.seats for j in schedule(other)]
    assert deal_seed(config, 0) != deal_seed(config, 1) != deal_seed(other, 1)


def test_config_round_trips_and_rejects_bad_values() -> None:
    config = _config(("random", "heuristic"), 5, 17)
    assert TournamentConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(TournamentError, match="at least 2 agents"):
        _config(("random",), 4, 10)
    with pytest.raises(TournamentError, match="games"):
        _config(("random", "heuristic"), 4, 0)
    with pytest.raises(TournamentError, match=r"job 99 is not in this tournament"):
        job_for(config, 99)


# --- playing ------------------------------------------------------------------------------


def test_rotations_of_a_deal_replay_the_same_cards_with_other_agents() -> None:
    config = _config(("random", "heuristic"), 4, 2, seed=11)
    first, second = (json.loads(f.line) for f in run_batch(config, [0, 1]))
    assert first["deal"] == second["deal"] == 0
    assert first["agents"] != second["agents"]
    rec1, rec2 = first["record"], second["record"]
    assert rec1["sky_order"] == rec2["sky_order"]
    for r1, r2 in zip(rec1["rounds"], rec2["rounds"], strict=True):
        assert r1["hands"] == r2["hands"]
        assert r1["line"] == r2["line"]


def test_a_job_gives_the_same_game_alone_or_in_any_batch() -> None:
    config = _config(("random", "heuristic", "random"), 3, 6, seed=5)
    batch = run_batch(config, range(6))
    alone = play_job(config, job_for(config, 4))
    assert alone.line == batch[4].line
    assert [f.line for f in run_batch(config, [5, 1])] == [batch[5].line, batch[1].line]


def test_outcome_ranks_follow_the_result() -> None:
    for finished in run_batch(_config(("random", "heuristic"), 4, 4, seed=2), range(4)):
        o = finished.outcome
        record = json.loads(finished.line)["record"]
        winners = set(record["result"]["winners"])
        assert {s for s in range(4) if o.ranks[s] == 1} == winners
        assert sum(o.win_shares) == pytest.approx(1.0)
        for a in range(4):
            for b in range(4):
                if o.totals[a] > o.totals[b] and b not in winners:
                    assert o.ranks[a] < o.ranks[b]


# --- statistics ---------------------------------------------------------------------------


def _outcome(job: int, deal: int, seats: tuple[int, ...], totals: tuple[int, ...]) -> GameOutcome:
    best = max(totals)
    winners = [s for s, t in enumerate(totals) if t == best]
    ranks = tuple(1 + sum(other > t for other in totals) for t in totals)
    shares = tuple(1 / len(winners) if s in winners else 0.0 for s in range(len(totals)))
    return GameOutcome(job, deal, job % 2, seats, totals, shares, ranks)


def test_summary_figures_of_known_games() -> None:
    outcomes = [
        _outcome(0, 0, (0, 1), (30, 10)),
        _outcome(1, 0, (1, 0), (5, 20)),
        _outcome(2, 1, (0, 1), (12, 12)),
        _outcome(3, 1, (1, 0), (8, 16)),
    ]
    summary = summarize(("a", "b"), ("a", "b"), 2, outcomes, resamples=500)
    a, b = summary.standings
    assert (a.label, b.label) == ("a", "b")
    assert a.win_share.value == pytest.approx(3.5 / 4)
    assert b.win_share.value == pytest.approx(0.5 / 4)
    assert a.points.value == pytest.approx((30 + 20 + 12 + 16) / 4)
    assert a.rank.value == pytest.approx(1.0)
    assert a.seat_games == a.games == 4
    assert a.win_share.low <= a.win_share.value <= a.win_share.high
    h2h = {(h.agent, h.opponent): h for h in summary.head_to_head}
    assert (h2h["a", "b"].wins, h2h["a", "b"].ties, h2h["a", "b"].losses) == (3, 1, 0)
    assert h2h["b", "a"].score == pytest.approx(0.125)
    assert a.rating is not None and b.rating is not None
    assert a.rating.mu > b.rating.mu


def _table_text(summary: Summary) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200)
    console.print(summary.table())
    return out.getvalue()


def test_intervals_are_printed_only_when_the_deals_can_give_one() -> None:
    """Issue 38: two deals both won printed "(1.000, 1.000)" as a 95% interval. With fewer
    than MIN_INTERVAL_DEALS deals the standings show the figures alone and say why; an
    interval of no width (every deal alike) says so rather than print a point as a range."""
    few = [_outcome(0, 0, (0, 1), (30, 10)), _outcome(1, 0, (1, 0), (5, 20)),
           _outcome(2, 1, (0, 1), (31, 12)), _outcome(3, 1, (1, 0), (8, 16))]  # fmt: skip
    summary = summarize(("a", "b"), ("a", "b"), 2, few, resamples=200)
    assert summary.standings[0].win_share.low == summary.standings[0].win_share.high == 1.0
    text = _table_text(summary)
    assert "(1.000, 1.000)" not in text and "95% intervals" not in text
    assert "4 games, 2 deals, 2 players" in text
    assert summary.interval_note() == (
        f"No 95% intervals: 2 deals played, and an interval needs {MIN_INTERVAL_DEALS} or more "
        "(raise --games)"
    )
    one = summarize(("a", "b"), ("a", "b"), 2, few[:2], resamples=200)
    assert "2 games, 1 deal, 2 players" in _table_text(one)
    assert one.interval_note() is not None and "1 deal played" in one.interval_note()

    many = [
        _outcome(2 * d + k, d, seats, totals)
        for d in range(MIN_INTERVAL_DEALS)
        for k, (seats, totals) in enumerate(
            [((0, 1), (30, 10 + d)), ((1, 0), (5 + d, 20 + 3 * d))]
        )
    ]
    summary = summarize(("a", "b"), ("a", "b"), 2, many, resamples=200)
    assert summary.interval_note() is None
    text = _table_text(summary)
    assert "(95% intervals; rating" in text
    assert "(all deals alike)" in text  # a won every game: its win share has no spread
    points = summary.standings[0].points
    assert f"({points.low:.1f}, {points.high:.1f})" in text and points.low < points.high


def test_bootstrap_interval_matches_the_normal_approximation() -> None:
    rng = np.random.default_rng(0)
    deals = 400
    sums = rng.binomial(4, 0.3, size=(deals, 1)).astype(float)
    counts = np.full((deals, 1), 4.0)
    low, high = bootstrap_ratio(sums, counts, 4000, seed=1)
    per_deal = sums[:, 0] / 4
    se = per_deal.std(ddof=1) / np.sqrt(deals)
    assert high[0] - low[0] == pytest.approx(2 * 1.96 * se, rel=0.12)
    assert low[0] < per_deal.mean() < high[0]
    const_low, const_high = bootstrap_ratio(np.full((50, 1), 2.0), np.full((50, 1), 4.0), 200, seed=1)
    assert const_low[0] == const_high[0] == 0.5


# --- results directory, resume -----------------------------------------------------------


def test_resume_skips_finished_games_and_drops_a_cut_line(tmp_path: Path) -> None:
    config = _config(("random", "heuristic"), 2, 10, seed=21)
    full = tmp_path / "full"
    harness.start(config, full, RunOptions(workers=0, batch=3, progress=False))
    lines = (full / GAMES_FILE).read_text().splitlines(keepends=True)
    assert sorted(_jobs_in(full / GAMES_FILE)) == list(range(10))

    cut = tmp_path / "cut"
    cut.mkdir()
    shutil.copy(full / "tournament.json", cut / "tournament.json")
    kept = lines[:4] + [lines[1]]  # a job written twice counts once
    (cut / GAMES_FILE).write_text("".join(kept) + lines[4][: len(lines[4]) // 2])

    made: list[str] = []

    def counting(spec: str, seed: int) -> Agent:
        made.append(spec)
        return make_agent(spec, seed)

    summary = harness.resume(cut, RunOptions(workers=0, batch=2, progress=False), factory=counting)
    assert len(made) == (10 - 4) * 2, "only the 6 missing games are played"
    jobs = _jobs_in(cut / GAMES_FILE)
    assert sorted(jobs) == list(range(10)), "the duplicated line is dropped from the file"
    assert _outcomes(cut) == _outcomes(full)
    assert summary.games == 10
    assert json.loads((cut / "summary.json").read_text())["standings"] == json.loads(
        (full / "summary.json").read_text()
    )["standings"]


def test_a_damaged_or_foreign_games_file_is_refused(tmp_path: Path) -> None:
    config = _config(("random", "heuristic"), 2, 4, seed=1)
    harness.start(config, tmp_path / "t", RunOptions(workers=0, progress=False))
    games = tmp_path / "t" / GAMES_FILE
    lines = games.read_text().splitlines(keepends=True)
    games.write_text(lines[0] + "{oops\n" + "".join(lines[1:]))
    with pytest.raises(TournamentError, match=r"games.jsonl:2: not a JSON line"):
        harness.resume(tmp_path / "t", RunOptions(workers=0, progress=False))
    foreign = json.loads(lines[1])
    foreign["seats"] = foreign["seats"][::-1]
    games.write_text(lines[0] + json.dumps(foreign) + "\n")
    with pytest.raises(TournamentError, match=r"games.jsonl:2: job \d+ does not match .* schedule"):
        harness.resume(tmp_path / "t", RunOptions(workers=0, progress=False))
    with pytest.raises(TournamentError, match="already holds a tournament"):
        harness.start(config, tmp_path / "t", RunOptions(workers=0, progress=False))
    with pytest.raises(TournamentError, match="nothing to resume"):
        harness.resume(tmp_path / "missing", RunOptions(workers=0, progress=False))


_KILL_SCRIPT = textwrap.dedent(
    """
    import sys
    from csl_ai.rules import RulesConfig
    from csl_ai.tournament import harness
    from csl_ai.tournament.runner import TournamentConfig
    config = TournamentConfig(agents=("random", "heuristic"), rules=RulesConfig(players=2), games=60, seed=9)
    harness.start(config, sys.argv[1], harness.RunOptions(workers=0, batch=1, progress=False))
    """
)


def test_resume_after_sigkill(tmp_path: Path) -> None:
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(out)], cwd=REPO, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 60
        games = out / GAMES_FILE
        while time.monotonic() < deadline:
            if games.exists() and games.read_bytes().count(b"\n") >= 6:
                break
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.02)
        else:
            pytest.fail("no games were written within 60 s")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    kept = _outcomes(out)
    config = ResultsDir.open(out).config
    assert 6 <= len(kept) < config.total_games
    harness.resume(out, RunOptions(workers=0, progress=False))
    jobs = _jobs_in(out / GAMES_FILE)
    assert len(jobs) == len(set(jobs)) == config.total_games
    assert _outcomes(out) == {o.job: o for o in run_local(config)}


class _BrokenAgent:
    name = "broken"

    def act(self, obs: Observation) -> Move:
        raise IllegalMoveError("no move today")


def _broken(spec: str, seed: int) -> Agent:
    return _BrokenAgent()


def test_a_game_that_raises_fails_the_run_naming_its_jobs(tmp_path: Path) -> None:
    options = RunOptions(workers=0, batch=2, progress=False)
    failed = r"^a game failed in jobs 0\.\.1: IllegalMoveError: no move today$"
    with pytest.raises(TournamentRunError, match=failed):
        harness.start(SMALL, tmp_path / "broken", options, factory=_broken)


# --- self-play training rows ---------------------------------------------------------------


def test_training_rows_describe_every_decision(tmp_path: Path) -> None:
    config = TournamentConfig(
        agents=("random",), rules=RulesConfig(players=4), games=1, seed=4, mode="selfplay", training_rows=True
    )
    finished = run_batch(config, [0])[0]
    rows = [json.loads(r) for r in finished.rows]
    assert len(FEATURE_NAMES) == FEATURE_SIZE == sum(n for _, n in FEATURE_LAYOUT)
    per_round = 4 + 4 + 4 * 9
    assert len(rows) == 4 * per_round
    assert [r["step"] for r in rows] == list(range(len(rows)))
    start = {name: sum(n for _, n in FEATURE_LAYOUT[:i]) for i, (name, _n) in enumerate(FEATURE_LAYOUT)}
    for row in rows:
        f = row["features"]
        assert len(f) == FEATURE_SIZE
        assert sum(f[start["in_use"] : start["in_use"] + 36]) == 36
        assert row["outcome"]["win_share"] == finished.outcome.win_shares[row["seat"]]
        assert row["outcome"]["rank"] == finished.outcome.ranks[row["seat"]]
        assert row["moves"] == [row["chosen"]] and row["visits"] == [1] and not row["search"]
        if row["phase"] == "allocate":
            assert sum(f[start["hand"] : start["hand"] + 36]) == 9
            assert row["legal_moves"] == 1680
    assert {r["phase"] for r in rows} == {"allocate", "weather", "play"}

    out = tmp_path / "sp"
    harness.start(config, out, RunOptions(workers=0, progress=False))
    written = (out / TRAINING_FILE).read_text()
    assert written.splitlines() == list(finished.rows)
    unfinished = json.dumps({**rows[1], "job": 1})
    damaged = written + json.dumps(rows[0]) + "\n" + unfinished + "\n" + '{"job": 0, "st'
    (out / TRAINING_FILE).write_text(damaged)
    ResultsDir.open(out).load()
    assert (out / TRAINING_FILE).read_text() == written, "a duplicate, an unfinished job's and a cut row go"


def test_training_rows_carry_the_search_visits() -> None:
    pytest.importorskip("csl_ai.search")
    config = TournamentConfig(
        agents=("pimc:iters=64",), rules=RulesConfig(players=3), games=1, seed=4, mode="selfplay",
        training_rows=True,
    )
    rows = [json.loads(r) for r in run_batch(config, [0])[0].rows]
    searched = [r for r in rows if r["search"]]
    assert searched
    for row in searched:
        assert row["chosen"] in row["moves"]
        assert len(row["moves"]) == len(row["visits"]) <= row["legal_moves"]
        if row["legal_moves"] > 1:
            assert sum(row["visits"]) > 0
    assert any(len(row["moves"]) > 1 for row in searched)


# --- command line --------------------------------------------------------------------------


def test_split_agent_specs_keeps_options_with_their_agent() -> None:
    assert split_agent_specs("ismcts:normal,heuristic,random,pimc") == (
        "ismcts:normal", "heuristic", "random", "pimc",
    )
    assert split_agent_specs("ismcts:iters=5000,threads=2,random, pimc:iters=10,ismcts:fast,threads=2") == (
        "ismcts:iters=5000,threads=2", "random", "pimc:iters=10", "ismcts:fast,threads=2",
    )
    assert split_agent_specs("random,bogus") == ("random", "bogus")


def _cli(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def test_cli_tournament_runs_resumes_and_reports_errors_in_one_line(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    code, text = _cli(["tournament", "--agents", "random,heuristic", "--players", "2", "--games", "4",
                       "--seed", "3", "--out", str(out), "--workers", "0", "-q"])
    assert code == 0, text
    assert "heuristic" in text and (out / "summary.json").exists()
    assert (out / "winshare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    results = next(line for line in text.splitlines() if line.startswith("Results in "))
    assert results.endswith(": tournament.json, games.jsonl, summary.json, winshare.png"), results
    assert "No 95% intervals: 2 deals played" in text, text
    code, text = _cli(["tournament", "--resume", str(out), "--workers", "0", "-q"])
    assert code == 0, text
    assert len(_jobs_in(out / GAMES_FILE)) == 4

    bad = [
        (["--agents", "random,bogus", "--out", str(tmp_path / "x")], 2, "unknown agent 'bogus'"),
        (["--agents", "random,heuristic", "--out", str(out)], 2, "--resume"),
        (["--resume", str(out), "--agents", "random,heuristic"], 2, "keeps its options"),
        (["--agents", "random,heuristic", "--out", str(tmp_path / "y"), "--address", "127.0.0.1:1"],
         1, "cannot reach the Ray cluster"),
        (["--agents", "random,heuristic", "--out", str(tmp_path / "z"), "--workers", "0", "--ray"],
         2, "--ray: --workers 0 plays without Ray"),
    ]
    for args, want_code, want in bad:
        code, text = _cli(["tournament", *args, "-q"])
        errors = [line for line in text.splitlines() if line.startswith("csl: error:")]
        assert code == want_code, text
        assert len(errors) == 1 and want in errors[0], text
        assert "Traceback" not in text


def test_cli_selfplay_writes_records_and_rows(tmp_path: Path) -> None:
    out = tmp_path / "sp"
    code, text = _cli(["selfplay", "--agent", "random", "--players", "3", "--games", "2", "--seed", "1",
                       "--out", str(out), "--training-rows", "--workers", "0", "-q"])
    assert code == 0, text
    lines = (out / GAMES_FILE).read_text().splitlines()
    assert len(lines) == 2
    assert json.loads(lines[0])["record"]["agents"] == ["random"] * 3
    rows = (out / TRAINING_FILE).read_text().splitlines()
    assert len(rows) == 2 * 6 * (3 + 3 + 3 * 6)
    code, text = _cli(["tournament", "--resume", str(out), "--workers", "0", "-q"])
    assert code == 2 and "holds a selfplay run; continue it with csl selfplay --resume" in text, text
    tour = tmp_path / "tour"
    code, text = _cli(["tournament", "--agents", "random,heuristic", "--players", "2", "--games", "1",
                       "--seed", "3", "--out", str(tour), "--workers", "0", "-q"])
    assert code == 0, text
    code, text = _cli(["selfplay", "--resume", str(tour), "--workers", "0", "-q"])
    assert code == 2 and "holds a tournament run; continue it with csl tournament --resume" in text, text


# --- where the games are played -------------------------------------------------------------


@pytest.fixture
def no_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine of 4 CPUs where Ray is not running yet and must not be started."""

    def refuse(options: RunOptions) -> bool:
        raise AssertionError("Ray was started")

    monkeypatch.setattr(harness, "connect_ray", refuse)
    monkeypatch.setattr(harness, "_ray_running", lambda: False)
    monkeypatch.setattr(harness, "cpus_here", lambda: 4)


def _start_noting(directory: Path, options: RunOptions, config: TournamentConfig = SMALL) -> str:
    """Run config into directory; what the run said on its console."""
    said = io.StringIO()
    harness.start(config, directory, options, console=Console(file=said, width=400))
    return said.getvalue()


def test_workers_0_and_1_play_in_this_process_and_write_the_same_files(
    no_ray: None, tmp_path: Path
) -> None:
    assert _start_noting(tmp_path / "w0", RunOptions(workers=0, progress=False)) == ""
    said = _start_noting(tmp_path / "w1", RunOptions(workers=1, progress=False))
    assert said == "Playing in this process, without Ray: --workers 1 plays one game at a time.\n"
    assert (tmp_path / "w1" / GAMES_FILE).read_bytes() == (tmp_path / "w0" / GAMES_FILE).read_bytes()


def test_a_run_shorter_than_rays_start_up_plays_in_this_process(no_ray: None, tmp_path: Path) -> None:
    said = _start_noting(tmp_path / "short", RunOptions(workers=2, progress=False))
    assert said.startswith(f"Playing in this process, without Ray: the {SMALL.total_games} games take")
    assert said.rstrip().endswith("to pay off with 2 workers; --ray forces it.")
    _start_noting(tmp_path / "w0", RunOptions(workers=0, progress=False))
    assert (tmp_path / "short" / GAMES_FILE).read_bytes() == (tmp_path / "w0" / GAMES_FILE).read_bytes()


def test_games_that_outlast_rays_start_up_hand_the_rest_to_ray(
    no_ray: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """With a start-up that costs nothing, the first game (played here to time it) shows
    that Ray would finish sooner: every other game goes to Ray, once."""
    handed: list[list[int]] = []

    def fake_ray(config, todo, options, factory, on_batch, tick):  # type: ignore[no-untyped-def]
        handed.append(list(todo))
        on_batch(run_batch(config, todo, factory))

    monkeypatch.setattr(harness, "RAY_START_S", 0.0)
    monkeypatch.setattr(harness, "_drive_ray", fake_ray)
    said = _start_noting(tmp_path / "long", RunOptions(workers=3, progress=False))
    assert handed == [list(range(1, SMALL.total_games))]
    assert said.startswith(f"Playing on Ray: the {SMALL.total_games - 1} games left take about")
    assert "with 3 workers sharing them" in said and "without Ray" not in said
    assert _jobs_in(tmp_path / "long" / GAMES_FILE) == list(range(SMALL.total_games))
    _start_noting(tmp_path / "w0", RunOptions(workers=0, progress=False))
    assert (tmp_path / "long" / GAMES_FILE).read_bytes() == (tmp_path / "w0" / GAMES_FILE).read_bytes()


def test_ray_pays_off_only_when_its_workers_win_back_its_start_up() -> None:
    start = harness.RAY_START_S
    assert not harness._ray_pays_off(10, start / 5, 2), "10 games of S/5 s: 2 workers save exactly S"
    assert harness._ray_pays_off(11, start / 5, 2)
    assert not harness._ray_pays_off(1, 100 * start, 8), "one game cannot be shared"
    assert harness._ray_pays_off(2, 100 * start, 8)


def test_where_to_play(no_ray: None, monkeypatch: pytest.MonkeyPatch) -> None:
    where = harness.where_to_play
    assert where(RunOptions(workers=0)) == where(RunOptions(workers=1)) == "here"
    assert where(RunOptions(workers=2)) == where(RunOptions()) == "measure"
    assert where(RunOptions(workers=1, always_ray=True)) == "ray"
    assert where(RunOptions(workers=1, address="auto")) == "ray"
    monkeypatch.setattr(harness, "cpus_here", lambda: 1)
    assert where(RunOptions()) == where(RunOptions(workers=4)) == "here"
    monkeypatch.setattr(harness, "_ray_running", lambda: True)
    assert where(RunOptions(workers=1)) == "ray", "a Ray already started here costs nothing more"
    assert where(RunOptions(workers=0)) == "here"
    with pytest.raises(TournamentError, match="always_ray"):
        RunOptions(workers=0, always_ray=True)


# --- Ray -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    ray = pytest.importorskip("ray")
    import logging

    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_tournament_matches_the_in_process_run(
    ray_local: None, small_reference: dict[int, GameOutcome], tmp_path: Path
) -> None:
    out = tmp_path / "ray"
    said = io.StringIO()
    summary = harness.start(
        SMALL, out, RunOptions(workers=2, batch=2, progress=False), console=Console(file=said)
    )
    assert said.getvalue() == "", "played on the Ray already started here"
    assert _outcomes(out) == small_reference
    harness.start(SMALL, tmp_path / "here", RunOptions(workers=0, progress=False))
    assert sorted((out / GAMES_FILE).read_text().splitlines()) == sorted(
        (tmp_path / "here" / GAMES_FILE).read_text().splitlines()
    ), "the same lines, in the order their batches finished"
    jobs = _jobs_in(out / GAMES_FILE)
    assert sorted(jobs) == list(range(SMALL.total_games))
    plain = summarize(
        SMALL.agents, SMALL.labels, SMALL.players, list(small_reference.values()), seed=SMALL.seed
    )
    assert summary.to_json() == plain.to_json()

    lines = (out / GAMES_FILE).read_text().splitlines(keepends=True)
    (out / GAMES_FILE).write_text("".join(lines[:5]) + lines[5][:40])
    harness.resume(out, RunOptions(workers=2, batch=3, progress=False))
    jobs = _jobs_in(out / GAMES_FILE)
    assert len(jobs) == len(set(jobs)) == SMALL.total_games
    assert _outcomes(out) == small_reference


class _CrashingAgent:
    """Plays like its inner agent but kills its process at its 5th move, once per marker file."""

    def __init__(self, inner: Agent, marker: str) -> None:
        self.inner = inner
        self.name = inner.name
        self.marker = marker
        self.moves = 0

    def act(self, obs: Observation) -> Move:
        self.moves += 1
        if self.moves == 5:
            try:
                fd = os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                pass
            else:
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
                os._exit(1)
        return self.inner.act(obs)


@dataclass(frozen=True)
class _CrashOnce:
    marker: str

    def __call__(self, spec: str, seed: int) -> Agent:
        return _CrashingAgent(make_agent(spec, seed), self.marker)


@pytest.mark.parametrize("task_retries", [0, 3], ids=["driver-resubmits", "ray-retries"])
def test_a_worker_killed_mid_batch_loses_and_doubles_nothing(
    ray_local: None, small_reference: dict[int, GameOutcome], tmp_path: Path, task_retries: int
) -> None:
    marker = tmp_path / "crashed"
    out = tmp_path / "crash"
    options = RunOptions(workers=2, batch=3, task_retries=task_retries, max_resubmits=2, progress=False)
    harness.start(SMALL, out, options, factory=_CrashOnce(str(marker)))
    assert marker.exists(), "a worker was killed"
    assert int(marker.read_text()) != os.getpid()
    jobs = _jobs_in(out / GAMES_FILE)
    assert len(jobs) == len(set(jobs)) == SMALL.total_games
    assert _outcomes(out) == small_reference


@dataclass(frozen=True)
class _CrashInWorkers:
    """Kills any process but the test's own as soon as it is asked for an agent."""

    driver_pid: int

    def __call__(self, spec: str, seed: int) -> Agent:
        if os.getpid() != self.driver_pid:
            os._exit(1)
        return make_agent(spec, seed)


def test_workers_that_keep_dying_fail_with_one_clear_error(ray_local: None, tmp_path: Path) -> None:
    options = RunOptions(workers=2, batch=12, task_retries=0, max_resubmits=1, progress=False)
    with pytest.raises(TournamentRunError, match=r"^jobs 0\.\.11: a worker died 2 times .*--resume"):
        harness.start(SMALL, tmp_path / "dead", options, factory=_CrashInWorkers(os.getpid()))
    assert not (tmp_path / "dead" / GAMES_FILE).exists(), "no game finished, so none was written"


def test_a_game_that_raises_on_ray_fails_the_run_naming_its_jobs(ray_local: None, tmp_path: Path) -> None:
    options = RunOptions(workers=2, batch=SMALL.total_games, progress=False)
    failed = r"^a game failed in jobs 0\.\.11: IllegalMoveError: no move today$"
    with pytest.raises(TournamentRunError, match=failed):
        harness.start(SMALL, tmp_path / "broken", options, factory=_broken)


def test_ray_workers_import_the_drivers_package_not_the_working_folders(tmp_path: Path) -> None:
    """Started from a source checkout (an uncompiled csl_ai in the working folder), the Ray
    workers still import the csl_ai the driver imported: Ray puts the working folder first
    on every worker's path, and that checkout used to fail every game."""
    csl = Path(sys.executable).with_name("csl")
    if not csl.exists():
        pytest.skip("the csl console script is not installed next to this Python")
    checkout = tmp_path / "checkout"
    (checkout / "csl_ai").mkdir(parents=True)
    (checkout / "csl_ai" / "__init__.py").write_text(
        "raise ImportError('the working folder csl_ai was imported')\n"
    )
    out = tmp_path / "out"
    proc = subprocess.run(
        [str(csl), "tournament", "--agents", "random,heuristic", "--players", "2",
         "--games", "4", "--seed", "3", "--workers", "1", "--ray", "--out", str(out)],
        cwd=checkout, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "without Ray" not in proc.stderr
    assert len((out / GAMES_FILE).read_text().splitlines()) == 4


def test_a_folder_a_run_is_playing_into_is_refused_to_a_second_run(tmp_path: Path) -> None:
    """Two runs on one folder would play the same games twice into one file."""
    out = tmp_path / "t"
    config = TournamentConfig(agents=("random", "heuristic"), rules=RulesConfig(players=2), games=2, seed=1)
    harness.start(config, out, RunOptions(workers=0, progress=False))
    held = harness.ResultsDir.open(out)
    with held.exclusive():
        with pytest.raises(TournamentError, match="is in use by another run"):
            harness.resume(out, RunOptions(workers=0, progress=False))
    assert harness.resume(out, RunOptions(workers=0, progress=False)).games == 2
