"""benchmarks/judge.py: a change's rows paired with the stored baselines, resumed from the
rows already played, and a failing row or a missing baseline as one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import judge  # noqa: E402
import tune_search  # noqa: E402


def _save(path: Path, row: judge.Row, share: float) -> None:
    deals = tune_search.deal_set({"players": row.players, "base": row.base,
                                  "opponent": f"outsider:{row.opponent}", "sides": row.sides})
    games = [[d, r, share if d % 2 else 0.0] for d in range(100) for r in range(row.players)]
    path.write_text(json.dumps({"args": {}, "deals": deals, "games": games}))


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCHMARKS / "judge.py"), *args],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def signature() -> str:
    return judge.bench_signature()


def test_rows_already_played_are_paired_with_both_baseline_streams(tmp_path: Path, signature: str) -> None:
    """Every row of the change won half its odd deals' games where both baseline streams
    won none (stream 0) and all (stream 1) of them: +25 points on each row, pooled the same."""
    baselines, out = tmp_path / "baselines", tmp_path / "out"
    baselines.mkdir()
    out.mkdir()
    (baselines / "SIGNATURE").write_text(signature + "\n")
    for row in judge.ROW_SETS["4p"]:
        _save(baselines / f"{row.name(0)}.json", row, 0.0)
        _save(baselines / f"{row.name(1)}.json", row, 1.0)
        _save(out / f"{row.name()}.json", row, 1.0)
    result = _run("--out", str(out), "--baselines", str(baselines))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "the same build" in lines[0]
    assert sum("minus the baseline: +25.0" in line for line in lines) == 4
    assert lines[-1].startswith("pooled: +25.0") and "over 1600 games" in lines[-1]


def test_a_missing_baseline_or_a_failing_row_is_one_line_exit_2(tmp_path: Path, signature: str) -> None:
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "SIGNATURE").write_text(signature + "\n")
    result = _run("--out", str(tmp_path / "out"), "--baselines", str(baselines))
    assert result.returncode == 2 and "no baseline for row 4p-hunter-AAAA-34000" in result.stderr
    assert "Traceback" not in result.stderr
    row = judge.ROW_SETS["4p"][0]
    _save(baselines / f"{row.name(0)}.json", row, 0.0)
    result = _run("--out", str(tmp_path / "out"), "--baselines", str(baselines), "--config", '{"no_such_field": 1}')
    assert result.returncode == 2 and result.stderr.startswith("judge.py: row 4p-hunter-AAAA-34000-s0 failed:")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not list((tmp_path / "out").glob("*.json"))


def test_bad_arguments_are_refused() -> None:
    for args in (["--out", "x", "--rows", "6p"], [], ["--out", "x", "--make-baseline"],
                 ["--make-baseline", "--config", '{"exploration": 0.5}']):
        result = _run(*args)
        assert result.returncode == 2 and "Traceback" not in result.stderr, args
