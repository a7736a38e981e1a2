"""benchmarks/fit_calibration.py on saved decisions: it fits the stage terms the decisions
carry, leaves them out when asked, and refuses a broken file with one line."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "fit_calibration.py"


def decisions(path: Path) -> None:
    """Two fitting sets at 4 players whose outcomes follow a map with a stage shift of +0.8."""
    rng = random.Random(12)
    sets = {}
    for opponent in ("heuristic", "zoo:cautious"):
        rows = []
        for game in range(600):
            round_index = rng.randrange(4)
            raw = rng.uniform(0.05, 0.95)
            x = math.log(raw / (1 - raw)) + (0.8 if round_index < 3 else 0.0)
            won = 1.0 if rng.random() < 1 / (1 + math.exp(-x)) else 0.0
            rows.append([raw, 10_000, won, round_index, game])
        sets[f"4|fit|{opponent}|10000"] = rows
    path.write_text(json.dumps(sets))


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def row_of(stdout: str) -> list[float]:
    line = next(line for line in stdout.splitlines() if line.startswith("4 players:"))
    return [float(term.split("=")[1]) for term in line.split()[2:7]]


def interval_of(stdout: str, label: str) -> tuple[float, float]:
    """The 95% interval over deals of estimate minus realised share on label's line."""
    line = next(line for line in stdout.splitlines() if line.strip().startswith(label))
    low, high = line.split("est-real ")[1].split()[0].split("..")
    return float(low), float(high)


def test_the_stage_terms_are_fitted_or_left_out(tmp_path: Path) -> None:
    saved = tmp_path / "decisions.json"
    decisions(saved)
    staged = run("--load", str(saved), "--players", "4")
    assert staged.returncode == 0, staged.stderr
    a, b, c, d, e = row_of(staged.stdout)
    assert 0.4 < d < 1.2 and abs(a) < 0.4
    assert "est-real by round" in staged.stdout
    gaps = {label: interval_of(staged.stdout, label) for label in ("heuristic 10k, raw", "heuristic 10k, calibrated")}
    assert gaps["heuristic 10k, raw"][1] < 0, "the raw estimate ignores the later rounds' +0.8 log-odds"
    assert gaps["heuristic 10k, calibrated"][0] < 0 < gaps["heuristic 10k, calibrated"][1]
    plain = run("--load", str(saved), "--players", "4", "--no-stage")
    assert plain.returncode == 0, plain.stderr
    a, b, c, d, e = row_of(plain.stdout)
    assert d == 0.0 and e == 0.0 and a > 0.2


def test_a_broken_decisions_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"4|fit|heuristic|10000": [[0.5, 10000]]}')
    result = run("--load", str(broken))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "cannot read" in result.stderr
    assert "Traceback" not in result.stderr


def test_several_files_are_pooled_with_their_games_apart(tmp_path: Path) -> None:
    """Two saved runs load as one: every decision counted once, and the games (so the
    deals the intervals resample) of one file never merge with the other's."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    decisions(first)
    decisions(second)
    one = run("--load", str(first), "--players", "4")
    both = run("--load", str(first), str(second), "--players", "4")
    assert one.returncode == 0 and both.returncode == 0, both.stderr
    assert "(1200 decisions in the fit)" in one.stdout
    assert "(2400 decisions in the fit)" in both.stdout
    assert "600 decisions, 600 games" in one.stdout
    assert "1200 decisions, 1200 games" in both.stdout


def test_by_sides_splits_by_each_kinds_side_and_needs_a_base_per_file(tmp_path: Path) -> None:
    saved = tmp_path / "decisions.json"
    decisions(saved)
    split = run("--load", str(saved), "--players", "4", "--by-sides", "777")
    assert split.returncode == 0, split.stderr
    assert "estimate minus realised share by scoring" in split.stdout
    line = next(line for line in split.stdout.splitlines() if line.strip().startswith("4 players: candy"))
    assert all(f"{kind} {side} " in line for kind in ("candy", "spider", "leopard", "star") for side in "AB")
    assert "f=" in split.stdout
    wrong = run("--load", str(saved), "--players", "4", "--by-sides", "777", "778")
    assert wrong.returncode == 2 and "one base per --load file" in wrong.stderr
