"""benchmarks/checkout.py: a benchmark measures the build PYTHONPATH names, not its own
checkout's (`PYTHONPATH=FROZEN python benchmarks/tune_search.py` compares builds)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

PROBE = """
import sys
sys.path.insert(0, {bench!r})
from checkout import ROOT, put_checkout_on_path
put_checkout_on_path()
import csl_ai
print(csl_ai.__file__)
print(sys.path.index(str(ROOT)))
"""


def _run(env_path: str | None, cwd: Path) -> list[str]:
    """The probe's csl_ai and ROOT's place in sys.path, run from cwd (not the checkout,
    whose package `python -c` would otherwise find first)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if env_path is not None:
        env["PYTHONPATH"] = env_path
    out = subprocess.run([sys.executable, "-c", PROBE.format(bench=str(BENCHMARKS))], env=env, cwd=cwd,
                         capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_pythonpath_build_comes_before_the_checkout(tmp_path: Path) -> None:
    frozen = tmp_path / "frozen"
    (frozen / "csl_ai").mkdir(parents=True)
    (frozen / "csl_ai" / "__init__.py").write_text("")
    found, index = _run(str(frozen), tmp_path)
    assert Path(found).resolve() == (frozen / "csl_ai" / "__init__.py").resolve()
    assert int(index) > 0


def test_the_checkout_is_on_the_path_without_pythonpath(tmp_path: Path) -> None:
    found, index = _run(None, tmp_path)
    assert Path(found).resolve() == BENCHMARKS.parent / "csl_ai" / "__init__.py"
    assert int(index) == 0
