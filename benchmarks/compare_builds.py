"""Paired speed comparison of two builds of the engine at position (b) of bench_search.py.

The development host is shared and its speed drifts up to 2x within minutes, so two builds
timed minutes apart do not compare. This script builds two git revisions (each exported with
`git archive` into a temporary folder and compiled there) and then times them alternately:
each round runs one process per build, each process timing the same searches at (b) (the
first card play of a 4-player round) in CPU seconds. It prints every round, the medians and
their ratio. The searches are the same positions and seeds in both builds; a build whose
random streams differ still searches the same position for the same number of iterations.

Run: python benchmarks/compare_builds.py REV_A REV_B [--rounds 10] [--searches 3]
     (REV may be any commit-ish; WORKTREE times the working tree as it is, built in place)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TIMER = """
import sys, time
sys.path.insert(0, {bench!r})
from bench_search import position_b
from csl_ai.search import SearchConfig, SearchLimit, search
obs = position_b()
c0 = time.process_time()
for seed in range({searches}):
    search(obs, SearchLimit(iterations={iterations}, threads=1, seed=seed), SearchConfig(search_forced=True))
print(time.process_time() - c0)
"""


class BuildError(Exception):
    """A revision could not be exported or compiled."""


def prepare(rev: str, into: Path) -> Path:
    """A compiled tree of rev (or the working tree itself for WORKTREE)."""
    if rev == "WORKTREE":
        tree = ROOT
    else:
        tree = into / rev.replace("/", "_")
        tree.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True)
        if archive.returncode != 0:
            raise BuildError(f"git archive {rev}: {archive.stderr.decode().strip()}")
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    build = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tree,
                           capture_output=True, text=True)
    if build.returncode != 0:
        raise BuildError(f"building {rev} failed: {build.stderr.strip().splitlines()[-1:]}")
    return tree


def time_once(tree: Path, searches: int, iterations: int) -> float:
    code = TIMER.format(bench=str(tree / "benchmarks"), searches=searches, iterations=iterations)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tempfile.gettempdir(), env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BuildError(f"timing {tree}: {out.stderr.strip().splitlines()[-1:]}")
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev_a")
    parser.add_argument("rev_b")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--searches", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=200_000)
    args = parser.parse_args()
    if args.rounds < 1 or args.searches < 1 or args.iterations < 1:
        parser.error("--rounds, --searches and --iterations must be >= 1")
    try:
        with tempfile.TemporaryDirectory(prefix="csl-compare-") as tmp:
            trees = {rev: prepare(rev, Path(tmp)) for rev in (args.rev_a, args.rev_b)}
            times: dict[str, list[float]] = {rev: [] for rev in trees}
            for r in range(args.rounds):
                for rev, tree in trees.items():
                    times[rev].append(time_once(tree, args.searches, args.iterations))
                print(f"round {r + 1:2d}: " + "   ".join(f"{rev} {times[rev][-1]:.3f} s" for rev in trees),
                      flush=True)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    med = {rev: statistics.median(t) for rev, t in times.items()}
    a, b = args.rev_a, args.rev_b
    print(f"median CPU seconds for {args.searches} searches of {args.iterations:,} iterations at (b): "
          f"{a} {med[a]:.3f}, {b} {med[b]:.3f}; {b} / {a} = {med[b] / med[a]:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
