"""The value fitted on a league (csl_ai.tournament.league, `csl train --model value`): its
games, a fit that reproduces itself in one process and on Ray, the shipped rows it keeps,
and the command's bad input."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from csl_ai.cli import app
from csl_ai.game import Game
from csl_ai.rules import RulesConfig
from csl_ai.search.fitted import FittedModels
from csl_ai.tournament.harness import RunOptions
from csl_ai.tournament.league import (
    LEAGUE,
    ValueTrainConfig,
    check_seats,
    game_seed,
    league_game,
    play_league,
    train_value,
)
from csl_ai.tournament.runner import TournamentError
from csl_ai.value import VALUE_FEATURES

HERE = RunOptions(workers=0, progress=False)
ROOT = Path(__file__).resolve().parents[1]


def value_rows(folder: Path) -> dict[str, list]:
    return json.loads((folder / "value_model.json").read_text())["win_weights_by_players"]


def test_a_league_game_keeps_every_later_rounds_start_with_the_games_end() -> None:
    rounds = Game(RulesConfig(players=3), seed=0).core.n_rounds
    starts = set()
    for g in range(12):
        seed = game_seed(5, 3, g)
        rows = league_game(3, seed, LEAGUE, all_sides=True)
        assert [left for left, *_ in rows] == list(range(rounds - 1, 0, -1))
        for _left, features, shares, points in rows:
            assert features.shape == (3, len(VALUE_FEATURES))
            assert shares.sum() == pytest.approx(1.0) and points.shape == (3,)
        assert all(np.array_equal(rows[0][2], row[2]) for row in rows)
        starts.add(round(float(rows[0][1][:, 0].sum()), 6))
        assert league_game(3, seed, LEAGUE, all_sides=True)[0][1].tolist() == rows[0][1].tolist()
    assert len(starts) > 6, "the league's games differ from one another"


def test_a_league_fit_reproduces_itself_and_keeps_the_shipped_rows_of_other_counts(tmp_path: Path) -> None:
    config = ValueTrainConfig(players=(2,), games=40, seed=3)
    seen = []
    first = train_value(config, tmp_path / "a", "test fit", HERE, seen.append)
    train_value(config, tmp_path / "b", "test fit", HERE)
    assert value_rows(tmp_path / "a") == value_rows(tmp_path / "b")
    shipped = FittedModels.shipped()
    assert [f.rounds_left for f in seen] == [1, 2, 3]
    assert all(f.players == 2 and f.fitted == 32 and f.held_out == 8 for f in seen)
    assert first.value_weights[0] != shipped.value_weights[0]
    assert first.value_weights[1:] == shipped.value_weights[1:]
    assert first.value_points_weights[1:] == shipped.value_points_weights[1:]
    assert FittedModels.load(tmp_path / "a") == first
    made_by = json.loads((tmp_path / "a" / "value_model.json").read_text())["made_by"]
    assert made_by.startswith("test fit; 3, 4, 5 players as shipped: ")
    with pytest.raises(TournamentError, match="already exists"):
        train_value(config, tmp_path / "a", "test fit", HERE)


def test_the_benchmark_script_plays_and_fits_the_same_league(tmp_path: Path) -> None:
    """benchmarks/fit_value_model.py --seats league --all-sides is the same games and fit."""
    train_value(ValueTrainConfig(players=(2,), games=30, seed=2), tmp_path / "cli", "x", HERE)
    script = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "fit_value_model.py"), "--players", "2", "--games", "30",
         "--seed", "2", "--workers", "1", "--seats", "league", "--all-sides", "--write", str(tmp_path / "script")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert script.returncode == 0, script.stderr
    assert value_rows(tmp_path / "cli")["2"] == value_rows(tmp_path / "script")["2"]


def test_the_league_on_ray_plays_the_games_of_one_process() -> None:
    ray = pytest.importorskip("ray")
    config = ValueTrainConfig(players=(2,), games=12, seed=7)
    here = play_league(config, 2, HERE)
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
    try:
        there = play_league(config, 2, RunOptions(workers=2, batch=3, progress=False, always_ray=True))
    finally:
        ray.shutdown()
    assert len(there) == len(here) == 12
    for a, b in zip(here, there, strict=True):
        assert [(left, f.tolist(), y.tolist()) for left, f, y, _ in a] == [(left, f.tolist(), y.tolist()) for left, f, y, _ in b]


def test_bad_league_settings_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(TournamentError, match="seats: .*nonsense"):
        check_seats(["heuristic", "ismcts:nonsense"])
    with pytest.raises(TournamentError, match="games: must be an integer 10"):
        ValueTrainConfig(games=3)
    with pytest.raises(TournamentError, match="players: each count once"):
        ValueTrainConfig(players=(4, 4))
    runner = CliRunner()
    for args, message in (
        (["--model", "weights"], "--model: expected policy or value"),
        (["--model", "value", "--games", "5"], "--games: the value needs 10..1000000"),
        (["--model", "value", "--players", "6"], "--players: each count must be 2..5"),
        (["--model", "value", "--generations", "3"], "--generations and --iterations belong to the policy"),
        (["--model", "value", "--iterations", "2000"], "--generations and --iterations belong to the policy"),
        (["--model", "value", "--seed", "2000000000"], "seed: must be an integer 0..999999999"),
    ):
        out = tmp_path / "run"
        result = runner.invoke(app, ["train", *args, "--workers", "0", "--out", str(out)])
        assert result.exit_code == 2, result.output
        assert message in result.output and "Traceback" not in result.output
        assert not out.exists()


def test_csl_train_model_value_writes_a_models_folder(tmp_path: Path) -> None:
    out = tmp_path / "league"
    result = CliRunner().invoke(
        app, ["train", "--model", "value", "--players", "2", "--games", "20", "--seed", "4", "--workers", "0", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "2 players, 1 rounds left: 16 boundaries fitted, 4 held out; held-out nats: uniform 0.6931" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["split_model.json", "value_model.json", "win_calibration.json"]
    made_by = json.loads((out / "value_model.json").read_text())["made_by"]
    assert made_by.startswith("csl train --model value --players 2 --games 20 --seed 4; 3, 4, 5 players as shipped")
