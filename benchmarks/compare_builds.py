"""Paired speed comparison of two builds of the engine at the positions of bench_search.py.

The development host is shared and its speed drifts up to 2x within minutes, so two builds
timed minutes apart do not compare. This script builds two git revisions (each exported with
`git archive` into a temporary folder and compiled there) and then times them alternately:
each round runs one process per build, each process timing the same searches at each
position ((a) the 4-player allocation at game start, (b) the first card play of a 4-player
round, (c) a card play in the last round; --positions picks, (b) alone by default) in CPU
seconds. It prints every round, the medians, their ratio and the iterations per
CPU-second. The searches are the same positions and seeds in both builds; a build whose
random streams differ still searches the same position for the same number of iterations.

Run: python benchmarks/compare_builds.py REV_A REV_B [--rounds 10] [--searches 3]
         [--iterations 200000] [--positions b]
     REV may be any commit-ish; WORKTREE times the working tree as it is, built in place;
     a folder holding a tree with its core already built (a frozen build: e.g. `git archive
     HEAD | tar -x -C /tmp/frozen` and the built csl_ai/_core*.so copied into it) is timed
     as it is, unbuilt.
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

POSITIONS = {"a": "position_a", "b": "position_b", "c": "position_c"}

TIMER = """
import sys, time
sys.path.insert(0, {bench!r})
import bench_search
from csl_ai.search import SearchConfig, SearchLimit, search
for name in {names!r}:
    obs = getattr(bench_search, name)()
    c0 = time.process_time()
    for seed in range({searches}):
        search(obs, SearchLimit(iterations={iterations}, threads=1, seed=seed), SearchConfig(search_forced=True))
    print(time.process_time() - c0)
"""


class BuildError(Exception):
    """A revision could not be exported or compiled."""


def prepare(rev: str, into: Path) -> Path:
    """A compiled tree of rev (or the working tree itself for WORKTREE, or a folder as it is)."""
    if rev != "WORKTREE" and Path(rev).is_dir():
        tree = Path(rev).resolve()
        if not list((tree / "csl_ai").glob("_core*.so")):
            raise BuildError(f"{rev}: no built csl_ai/_core*.so in this folder")
        return tree
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


def time_once(tree: Path, positions: str, searches: int, iterations: int) -> list[float]:
    """CPU seconds of the searches at each position, in one process of tree's build."""
    names = [POSITIONS[p] for p in positions]
    code = TIMER.format(bench=str(tree / "benchmarks"), names=names, searches=searches, iterations=iterations)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", code], cwd=tempfile.gettempdir(), env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise BuildError(f"timing {tree}: {out.stderr.strip().splitlines()[-1:]}")
    return [float(line) for line in out.stdout.strip().splitlines()[-len(names):]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev_a")
    parser.add_argument("rev_b")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--searches", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--positions", default="b", help="which of a, b, c to time (default b)")
    args = parser.parse_args()
    if args.rounds < 1 or args.searches < 1 or args.iterations < 1:
        parser.error("--rounds, --searches and --iterations must be >= 1")
    if not args.positions or any(p not in POSITIONS for p in args.positions) or len(set(args.positions)) != len(
            args.positions):
        parser.error("--positions takes letters of abc")
    if args.rev_a == args.rev_b:
        parser.error("REV_A and REV_B must differ")
    positions = args.positions
    try:
        with tempfile.TemporaryDirectory(prefix="csl-compare-") as tmp:
            trees = {rev: prepare(rev, Path(tmp)) for rev in (args.rev_a, args.rev_b)}
            times: dict[str, dict[str, list[float]]] = {rev: {p: [] for p in positions} for rev in trees}
            for r in range(args.rounds):
                for rev, tree in trees.items():
                    for p, t in zip(positions, time_once(tree, positions, args.searches, args.iterations)):
                        times[rev][p].append(t)
                print(f"round {r + 1:2d}: " + "   ".join(
                    f"{rev} " + " ".join(f"({p}) {times[rev][p][-1]:.3f} s" for p in positions) for rev in trees),
                    flush=True)
    except BuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    a, b = args.rev_a, args.rev_b
    total = args.searches * args.iterations
    for p in positions:
        med_a, med_b = statistics.median(times[a][p]), statistics.median(times[b][p])
        print(f"({p}) median CPU seconds for {args.searches} searches of {args.iterations:,} iterations: "
              f"{a} {med_a:.3f}, {b} {med_b:.3f}; {b} / {a} = {med_b / med_a:.3f}; iterations per CPU-second "
              f"{a} {total / med_a:,.0f}, {b} {total / med_b:,.0f} ({med_a / med_b:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
