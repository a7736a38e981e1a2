"""Where a benchmark finds the `csl_ai` it measures.

A benchmark run as a script from a checkout uses that checkout's package (its compiled core
built in place), but after any `PYTHONPATH` entries, so that
`PYTHONPATH=FROZEN python benchmarks/tune_search.py` measures the build in FROZEN, as the
docstrings say. Putting the checkout first instead silently measured the working tree.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The checkout this benchmark belongs to."""


def put_checkout_on_path() -> None:
    """Insert ROOT into sys.path after the last PYTHONPATH entry there (first where none is)."""
    root = str(ROOT)
    if root in sys.path:
        return
    explicit = {os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    after = [i for i, entry in enumerate(sys.path) if os.path.abspath(entry or os.curdir) in explicit]
    sys.path.insert(max(after) + 1 if after else 0, root)
