"""benchmarks/fit_value_model.py keeps the games it played in --rows: a rerun refits from
them to the same weights, and a file of other games or a broken one is one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "fit_value_model.py"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--players", "2", "--workers", "1", *args],
        capture_output=True, text=True, timeout=300,
    )


def weights_of(stdout: str) -> str:
    return stdout[stdout.index("value_weights = ("):]


def test_a_refit_from_the_kept_rows_gives_the_same_weights(tmp_path: Path) -> None:
    rows = tmp_path / "rows{players}.npz"
    first = run("--games", "12", "--seats", "random", "heuristic", "--rows", str(rows))
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "rows2.npz").exists()
    again = run("--games", "12", "--seats", "random", "heuristic", "--rows", str(rows))
    assert again.returncode == 0, again.stderr
    assert weights_of(again.stdout) == weights_of(first.stdout)
    other = run("--games", "12", "--seats", "random", "--rows", str(rows))
    assert other.returncode == 2
    assert other.stderr.count("\n") == 1 and "holds games played as" in other.stderr


def test_a_broken_rows_file_or_seat_spec_is_one_line_and_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "rows2.npz"
    broken.write_bytes(b"PK\x03\x04 not a zip at all")
    result = run("--games", "12", "--seats", "random", "--rows", str(broken))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "cannot read rows file" in result.stderr
    bad_seat = run("--games", "12", "--seats", "ismcts:nonsense")
    assert bad_seat.returncode == 2
    assert bad_seat.stderr.count("\n") == 1


def test_write_makes_its_folder_and_a_folder_it_cannot_make_is_one_line_before_any_game(tmp_path: Path) -> None:
    folder = tmp_path / "new" / "models"
    made = run("--games", "12", "--seats", "random", "--write", str(folder))
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["split_model.json", "value_model.json", "win_calibration.json"]
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    refused = run("--games", "100000", "--seats", "random", "--write", str(blocker / "models"))
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "cannot make folder" in refused.stderr
    assert refused.stdout == ""
