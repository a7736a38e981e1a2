"""Where a search's time goes: a repeatable profile at the positions of bench_search.py.

Prints, first line, the bench signature of the build (csl_ai.signature, what the numbers
below are numbers of); then, for each of bench_search.py's positions (a) the 4-player
allocation at game start, (b) the first card play of a 4-player round, (c) a card play in
the last round:
  - iterations per CPU-second of the build itself (median of --repeats seeded searches of
    --iterations, one thread, as bench_search.py times them),
  - a table of function -> share of the time (self cost, largest first): under callgrind
    of the search loop (worker_run and all it calls: the iterations) and of drawing the
    search's pool of worlds (build_pool, where the position has one: the largest part of a
    search's set-up), whose instructions are printed beside the loop's; under perf of the
    whole search.

The profiler (--tool):
  callgrind  valgrind's callgrind counts the instructions of one seeded search (seed 0) per
             position: the same build gives the same numbers on every run and every host,
             so a change's effect shows exactly; also prints instructions per iteration.
             Valgrind does not decode AVX-512, so the core is compiled once more for it
             with the build's flags less AVX-512 (-mno-avx512f, the same arithmetic:
             -ffp-contract=off) into build/profile/<hash of csrc and setup.py>/, kept for
             later runs (the first run after a change of csrc/ spends ~45 s building it,
             then a run takes about 30 s). Its instruction shares are of that build: where
             the native one vectorizes a loop with AVX-512, the loop costs less there.
  perf       `perf record` samples --perf-searches searches per position of the build
             itself (--perf-event, default cycles; cpu-clock where the host has no
             hardware counters), recording only while they run (perf's control fifo).
  auto       (default) perf where hardware counters work (`perf stat -e instructions true`
             counts), else callgrind.

--level fast|normal|strong searches a level's iterations at 4 players (the positions' count)
instead of --iterations: where the time goes at each level's budget.

Run: python benchmarks/profile_search.py [--iterations 15000 | --level normal] [--positions abc]
         [--top 15] [--repeats 5] [--tool auto|callgrind|perf] [--perf-event cycles]
         [--perf-searches 20]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path(__file__).resolve().parent
CORE_PREFIX = "__pyx_f_6csl_ai_5_core_"
WORKER_RUN = CORE_PREFIX + "worker_run"
BUILD_POOL = "__pyx_pw_6csl_ai_5_core_12SearchEngine_*build_pool"   # the Python method; the C one is inlined
PROFILE_FLAGS = "-mno-avx512f"
POSITIONS = {
    "a": "(a) 4p allocation, game start",
    "b": "(b) 4p first card play, round 1",
    "c": "(c) 4p card play, last round",
}


# --- the searches (in this process, or in a worker under a profiler) ---------------------

def _install_core(path: str) -> None:
    """Make `import csl_ai._core` load the extension at path (the profiling build)."""
    import importlib.machinery
    import importlib.util

    class CoreFinder:
        @staticmethod
        def find_spec(name: str, _path: object = None, _target: object = None) -> object:
            if name != "csl_ai._core":
                return None
            loader = importlib.machinery.ExtensionFileLoader(name, path)
            return importlib.util.spec_from_file_location(name, path, loader=loader)

    sys.meta_path.insert(0, CoreFinder)


def _observations(keys: str) -> list[object]:
    sys.path.insert(0, str(BENCH))
    from bench_search import position_a, position_b, position_c

    make = {"a": position_a, "b": position_b, "c": position_c}
    return [make[k]() for k in keys]


def _search(obs: object, iterations: int, seed: int) -> int:
    from csl_ai.search import SearchConfig, SearchLimit, search

    limit = SearchLimit(iterations=iterations, threads=1, seed=seed)
    return search(obs, limit, SearchConfig(search_forced=True)).iterations  # type: ignore[arg-type]


def _perf_control(command: str) -> None:
    """Send perf record an enable/disable command and wait for its ack."""
    ctl, ack = os.environ["CSL_PERF_CTL"], os.environ["CSL_PERF_ACK"]
    with open(ctl, "w") as f:
        f.write(command + "\n")
    with open(ack) as f:
        f.readline()


def worker(keys: str, iterations: int, searches: int) -> None:
    """The profiled process: one seeded search per position (callgrind: one dump each), or
    `searches` of them recorded between perf's enable and disable (one position)."""
    if os.environ.get("CSL_PROFILE_CORE"):
        _install_core(os.environ["CSL_PROFILE_CORE"])
    observations = _observations(keys)
    _search(observations[0], 200, 1)   # warm the imports and caches outside the profile
    for obs in observations:
        if "CSL_PERF_CTL" in os.environ:
            _perf_control("enable")
            for seed in range(searches):
                _search(obs, iterations, seed)
            _perf_control("disable")
        else:
            _search(obs, iterations, 0)


def rates(keys: str, iterations: int, repeats: int) -> dict[str, float]:
    """Median iterations per CPU-second of the searches at each position (this build)."""
    out = {}
    for key, obs in zip(keys, _observations(keys)):
        per_s = []
        for seed in range(repeats):
            c0 = time.process_time()
            done = _search(obs, iterations, seed)
            per_s.append(done / (time.process_time() - c0))
        out[key] = statistics.median(per_s)
    return out


# --- names and tables --------------------------------------------------------------------

def short_name(name: str) -> str:
    """A function's name without Cython's module prefix, compiler clone suffixes, symbol
    versions or callgrind's recursion marks."""
    name = re.sub(r"'\d+$", "", name)
    name = name.split("@")[0]
    name = re.sub(r"\.(constprop|isra|part|cold|lto_priv)\.\d+", "", name)
    name = re.sub(r"\.(constprop|isra|part|cold)$", "", name)
    if name.startswith(CORE_PREFIX):
        return name[len(CORE_PREFIX):]
    m = re.fullmatch(r"__ieee754_(\w+?)(_fma|_avx2|_sse2)?", name)
    if m:
        return f"{m.group(1)} (libm)"
    if name in ("exp", "log", "sqrt", "pow", "exp2", "log2"):
        return f"{name} (libm)"
    return name


def print_table(costs: dict[str, float], top: int, unit: str) -> None:
    total = sum(costs.values())
    if total <= 0:
        print("    (nothing recorded)")
        return
    merged: dict[str, float] = {}
    for name, cost in costs.items():
        merged[short_name(name)] = merged.get(short_name(name), 0.0) + cost
    rows = sorted(merged.items(), key=lambda kv: -kv[1])
    shown = rows[:top]
    width = max(len(n) for n, _c in shown)
    for name, cost in shown:
        print(f"    {name:<{width}}  {100 * cost / total:6.2f}%")
    rest = sum(c for _n, c in rows[top:])
    if rest > 0:
        print(f"    {'(the rest)':<{width}}  {100 * rest / total:6.2f}%")
    print(f"    {'total':<{width}}  {total:,.0f} {unit}")


# --- callgrind ---------------------------------------------------------------------------

def callgrind_self_costs(path: Path) -> dict[str, int]:
    """Self cost (the first event, Ir) per function of a callgrind output file: cost lines
    after fn= count, the inclusive cost line after each calls= does not."""
    names: dict[str, str] = {}
    costs: dict[str, int] = {}
    current = ""
    skip_next = False

    def resolve(spec: str) -> str:
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), spec)

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            head = line[0]
            if head.isdigit() or head in "+-*":
                if skip_next:
                    skip_next = False
                    continue
                fields = line.split()
                if len(fields) >= 2:
                    costs[current] = costs.get(current, 0) + int(fields[1])
            elif line.startswith("fn="):
                current = resolve(line[3:])
            elif line.startswith(("cfn=", "cfi=", "cfl=", "cob=")):
                if line.startswith("cfn="):
                    resolve(line[4:])
            elif line.startswith("calls="):
                skip_next = True
    return costs


def profile_build(python: str) -> Path:
    """The core compiled for valgrind (no AVX-512), kept by the hash of its sources."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "csrc").iterdir()) + [ROOT / "setup.py"]:
        if path.is_file():
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(PROFILE_FLAGS.encode() + sys.version.encode())
    where = ROOT / "build" / "profile" / digest.hexdigest()[:16]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    so = where / "lib" / "csl_ai" / f"_core{suffix}"
    if so.exists():
        return so
    print(f"(building the core for valgrind into {where.relative_to(ROOT)}, once per change of csrc/: ~45 s)",
          flush=True)
    env = {**os.environ, "CFLAGS": (os.environ.get("CFLAGS", "") + " " + PROFILE_FLAGS).strip(),
           "CSL_BUILD_DIR": str(where / "cython")}
    build = subprocess.run(
        [python, "setup.py", "build_ext", "--build-lib", str(where / "lib"), "--build-temp", str(where / "temp")],
        cwd=ROOT, env=env, capture_output=True, text=True)
    if build.returncode != 0 or not so.exists():
        sys.exit(f"building the profiling core failed:\n{build.stderr[-2000:]}")
    for old in where.parent.iterdir():   # the builds of earlier sources
        if old != where and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return so


def _callgrind_parts(so: Path, keys: str, iterations: int, tmp: Path, name: str, options: list[str]) -> list[Path]:
    """Run the worker under callgrind with these options; its dump files, in order."""
    out = tmp / name
    env = {**os.environ, "CSL_PROFILE_CORE": str(so), "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *options,
           sys.executable, str(Path(__file__).resolve()), "--worker", keys, "--iterations", str(iterations)]
    run = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"valgrind failed:\n{run.stderr[-3000:]}")
    return sorted(tmp.glob(f"{name}.*"), key=lambda p: int(p.suffix[1:]))


def run_callgrind(keys: str, iterations: int, top: int) -> dict[str, float]:
    """Profile one search per position; print the tables; instructions per iteration.
    Two runs: the search loop (collected inside worker_run, dumped after each), and the
    set-up's pool of worlds (collected inside SearchEngine.build_pool, dumped as each
    search's loop begins, so part i holds search i's pool, or nothing)."""
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (apt-get install valgrind), and perf has no counters here")
    so = profile_build(sys.executable)
    per_iteration = {}
    with tempfile.TemporaryDirectory(prefix="csl-profile-") as tmp:
        loops = _callgrind_parts(so, keys, iterations, Path(tmp), "loop",
                                 [f"--toggle-collect={WORKER_RUN}", f"--dump-after={WORKER_RUN}"])
        pools = _callgrind_parts(so, keys, iterations, Path(tmp), "pool",
                                 [f"--toggle-collect={BUILD_POOL}", f"--dump-before={WORKER_RUN}"])
        # the warm-up search is the first part, then one per position (the pool run ends
        # with one more part: the run's end)
        if len(loops) != len(keys) + 1 or len(pools) < len(keys) + 1:
            sys.exit(f"expected {len(keys) + 1} profile parts (one per search), got {len(loops)} and {len(pools)}")
        for key, part, pool_part in zip(keys, loops[1:], pools[1:]):
            costs = callgrind_self_costs(part)
            loop = sum(costs.values())
            pool_costs = callgrind_self_costs(pool_part)
            pool = sum(pool_costs.values())
            per_iteration[key] = loop / iterations
            print(f"  {POSITIONS[key]}: {loop / iterations:,.0f} instructions per iteration "
                  f"(callgrind, one search of {iterations:,}, seed 0, the search loop: worker_run); "
                  f"drawing its pool of worlds at the set-up (build_pool) {pool:,} instructions, "
                  f"{100 * pool / max(1, pool + loop):.1f}% of the search")
            print_table(costs, top, "instructions")
            if pool:
                print(f"  {POSITIONS[key]}: the pool of worlds (build_pool)")
                print_table(pool_costs, top, "instructions")
    return per_iteration


# --- perf --------------------------------------------------------------------------------

def perf_counts() -> bool:
    """Whether perf counts hardware events here."""
    if shutil.which("perf") is None:
        return False
    run = subprocess.run(["perf", "stat", "-x,", "-e", "instructions", "true"], capture_output=True, text=True)
    return run.returncode == 0 and "not supported" not in run.stderr and "<not counted>" not in run.stderr


def perf_costs(data: Path) -> dict[str, float]:
    """Samples per symbol of a perf.data file."""
    report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children", "-n", "--sort", "sym",
                             "--percent-limit", "0"], capture_output=True, text=True)
    costs: dict[str, float] = {}
    for line in report.stdout.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[[^\]]*\]\s+(.+?)\s*$", line)
        if m:
            costs[m.group(2)] = costs.get(m.group(2), 0.0) + float(m.group(1))
    return costs


def run_perf(keys: str, iterations: int, top: int, event: str, searches: int) -> None:
    with tempfile.TemporaryDirectory(prefix="csl-profile-") as tmp:
        for key in keys:
            ctl, ack, data = Path(tmp) / "ctl", Path(tmp) / "ack", Path(tmp) / f"perf-{key}.data"
            for fifo in (ctl, ack):
                if fifo.exists():
                    fifo.unlink()
                os.mkfifo(fifo)
            env = {**os.environ, "CSL_PERF_CTL": str(ctl), "CSL_PERF_ACK": str(ack), "OPENBLAS_NUM_THREADS": "1"}
            cmd = ["perf", "record", "-q", "-e", event, "-D", "-1", "--control", f"fifo:{ctl},{ack}",
                   "-o", str(data), "--", sys.executable, str(Path(__file__).resolve()),
                   "--worker", key, "--iterations", str(iterations), "--perf-searches", str(searches)]
            run = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"perf record failed:\n{run.stderr[-3000:]}")
            print(f"  {POSITIONS[key]}: perf record -e {event}, {searches} searches of {iterations:,} "
                  "(the whole search: its set-up too)")
            print_table(perf_costs(data), top, "samples")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=None, help="iterations a search (default 15,000)")
    parser.add_argument("--level", choices=("fast", "normal", "strong"), default=None,
                        help="search a named level's iterations at 4 players instead (the positions' player count)")
    parser.add_argument("--positions", default="abc", help="which of a, b, c (default abc)")
    parser.add_argument("--top", type=int, default=15, help="functions shown per position")
    parser.add_argument("--repeats", type=int, default=5, help="timed searches per position")
    parser.add_argument("--tool", choices=("auto", "callgrind", "perf"), default="auto")
    parser.add_argument("--perf-event", default=None, help="perf's event (default cycles; cpu-clock without counters)")
    parser.add_argument("--perf-searches", type=int, default=20, help="searches per position perf samples")
    parser.add_argument("--no-signature", action="store_true", help="skip the signature line (saves ~2 s)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.level is not None and args.iterations is not None:
        parser.error("give --iterations or --level, not both")
    if args.iterations is None:
        args.iterations = 15_000
        if args.level is not None:
            from csl_ai.agents import level_iterations
            args.iterations = level_iterations(args.level, 4)
    keys = "".join(k for k in args.positions if k in POSITIONS)
    if not keys or len(keys) != len(args.positions) or args.iterations < 1 or args.repeats < 1:
        parser.error("--positions takes letters of abc; --iterations and --repeats must be >= 1")
    if args.worker is not None:
        worker(args.worker, args.iterations, args.perf_searches)
        return 0

    if not args.no_signature:
        from csl_ai.signature import bench_signature
        print(f"signature {bench_signature().hex}", flush=True)
    counters = perf_counts()
    tool = args.tool if args.tool != "auto" else ("perf" if counters else "callgrind")
    print(f"iterations per CPU-second at {args.iterations:,} iterations a search, one thread "
          f"(median of {args.repeats} seeds, this build):")
    for key, r in rates(keys, args.iterations, args.repeats).items():
        print(f"  {POSITIONS[key]:34s} {r:>10,.0f}")
    print(f"where the time goes (self cost by function, largest first; {tool}):", flush=True)
    if tool == "perf":
        event = args.perf_event or ("cycles" if counters else "cpu-clock")
        run_perf(keys, args.iterations, args.top, event, args.perf_searches)
    else:
        run_callgrind(keys, args.iterations, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
