"""Tournament throughput: Ray harness with 1 and 2 workers against a plain in-process loop.

Prints medians over repeats of the same tournament (same seed, same games):

- plain: `runner.run_local` in this process, one game after another (one core), each
  run right after a 1-worker harness run so both meet the same load;
- ray N: `harness.start` on a local Ray instance of N CPUs, files and all, timed from
  the call to the summary (Ray already started and its workers warmed up; workers at
  niceness 0 as the harness starts them, not Ray's default 15).

Targets (wall clock): ray 2 / ray 1 >= 1.8 (scaling) and ray 1 / plain >= 0.90
(harness overhead). Beside the wall clock, every run's CPU time is counted over this
process and all its descendants (Ray's daemons and workers; Linux /proc): on a shared,
loaded machine the wall-clock ratios measure the neighbours, while games per CPU-second
and the cores kept busy (CPU s / wall s) still show what the harness costs and how well
it keeps N workers fed.

``--workers-curve 1,2,4,8,16`` measures the scaling curve on a bigger machine (each
point plays ``--games-per-worker`` games per worker).

    python benchmarks/bench_tournament.py
    python benchmarks/bench_tournament.py --agents random,heuristic --players 4 --repeats 5
    python benchmarks/bench_tournament.py --workers-curve 1,2,4,8,16 --games-per-worker 40
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.tournament import harness  # noqa: E402
from csl_ai.tournament.runner import TournamentConfig, run_local  # noqa: E402

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_s(root: int) -> float:
    """CPU seconds (user + system) used so far by root and every live descendant (Linux)."""
    parent: dict[int, int] = {}
    used: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parent[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / _TICKS
    total = used.get(root, 0.0)
    frontier = [root]
    while frontier:
        here = frontier.pop()
        for pid, ppid in parent.items():
            if ppid == here:
                total += used[pid]
                frontier.append(pid)
    return total


@dataclass(frozen=True)
class Figure:
    """One measured setting: wall and CPU seconds of each repeat, and medians."""

    name: str
    workers: int
    games: int
    seconds: tuple[float, ...]
    cpu_seconds: tuple[float, ...]

    @property
    def games_per_s(self) -> float:
        return self.games / statistics.median(self.seconds)

    @property
    def games_per_cpu_s(self) -> float:
        return self.games / statistics.median(self.cpu_seconds)

    @property
    def busy_cores(self) -> float:
        """Median CPU seconds per wall second: how many cores the run kept busy."""
        return statistics.median(c / s for c, s in zip(self.cpu_seconds, self.seconds, strict=True))

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "workers": self.workers,
            "games": self.games,
            "seconds": list(self.seconds),
            "cpu_seconds": list(self.cpu_seconds),
            "median_games_per_s": self.games_per_s,
            "median_games_per_cpu_s": self.games_per_cpu_s,
            "busy_cores": self.busy_cores,
        }


def _config(args: argparse.Namespace, games: int) -> TournamentConfig:
    return TournamentConfig(
        agents=tuple(args.agents.split(",")),
        rules=RulesConfig(players=args.players),
        games=games,
        seed=args.seed,
    )


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and tree-CPU seconds of calling run()."""
    me = os.getpid()
    cpu = tree_cpu_s(me)
    start = time.perf_counter()
    run()
    return time.perf_counter() - start, tree_cpu_s(me) - cpu


def measure(
    args: argparse.Namespace, workers: int, games: int, plain_games: int = 0
) -> tuple[Figure, Figure | None, float]:
    """The harness on a fresh local Ray of `workers` CPUs, repeated; also Ray's start time.

    With plain_games, each harness run is followed by a plain in-process run of that many
    games, so both see the same load on a shared machine.
    """
    import ray

    config = _config(args, games)
    plain_config = _config(args, plain_games) if plain_games else None
    start = time.perf_counter()
    ray.init(
        num_cpus=workers,
        include_dashboard=False,
        logging_level=logging.ERROR,
        log_to_driver=False,
        _system_config={"worker_niceness": harness.RunOptions().worker_niceness},
    )
    startup = time.perf_counter() - start
    options = harness.RunOptions(workers=workers, batch=args.batch, progress=False)
    runs: list[tuple[float, float]] = []
    plain_runs: list[tuple[float, float]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
            harness.start(_config(args, 4 * workers), Path(tmp) / "warm", options)
            if plain_config is not None:
                run_local(plain_config, range(min(4, plain_config.total_games)))
            for i in range(args.repeats):
                out = Path(tmp) / f"run{i}"
                runs.append(_timed(functools.partial(harness.start, config, out, options)))
                if plain_config is not None:
                    plain_runs.append(_timed(functools.partial(run_local, plain_config)))
    finally:
        ray.shutdown()
    name = f"ray {workers} worker{'s' if workers > 1 else ''}"
    figure = Figure(
        name, workers, config.total_games, tuple(w for w, _ in runs), tuple(c for _, c in runs)
    )
    plain = None
    if plain_config is not None:
        plain = Figure(
            "plain loop", 1, plain_config.total_games,
            tuple(w for w, _ in plain_runs), tuple(c for _, c in plain_runs),
        )
    return figure, plain, startup


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--agents", default="random,heuristic", help="agent specs, comma-separated")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=120, help="games per measurement (1 worker and plain)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=None, help="games per Ray task (default: automatic)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers-curve", default=None, help="e.g. 1,2,4,8,16: measure each worker count")
    parser.add_argument("--games-per-worker", type=int, default=60, help="curve: games per worker per point")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    figures: list[Figure] = []
    startups: dict[int, float] = {}
    if args.workers_curve:
        counts = [int(n) for n in args.workers_curve.split(",")]
        for n in counts:
            fig, _none, startups[n] = measure(args, n, args.games_per_worker * n)
            figures.append(fig)
        base = figures[0].games_per_s / figures[0].workers
        ratios = {f"speedup {f.workers} (ideal {f.workers})": f.games_per_s / base for f in figures}
    else:
        one, plain, startups[1] = measure(args, 1, args.games, plain_games=args.games)
        two, _none, startups[2] = measure(args, 2, 2 * args.games)
        assert plain is not None
        figures = [plain, one, two]
        ratios = {
            "wall: ray 2 / ray 1 (target >= 1.8)": two.games_per_s / one.games_per_s,
            "wall: ray 1 / plain (target >= 0.90)": one.games_per_s / plain.games_per_s,
            "cpu: ray 1 / plain games per CPU-second": one.games_per_cpu_s / plain.games_per_cpu_s,
            "cpu: ray 2 / ray 1 games per CPU-second": two.games_per_cpu_s / one.games_per_cpu_s,
        }
    load_after = os.getloadavg()[0]
    if args.json:
        print(json.dumps({
            "figures": [f.to_json() for f in figures],
            "ratios": ratios,
            "ray_startup_s": startups,
            "cpus": os.cpu_count(),
            "load_average": [load_before, load_after],
        }, indent=2))
        return
    print(f"agents {args.agents}, {args.players} players, {args.repeats} repeats, {os.cpu_count()} CPUs, "
          f"load average {load_before:.2f} before, {load_after:.2f} after")
    print(f"{'setting':<16}{'games':>7}{'median s':>10}{'games/s':>10}{'games/cpu-s':>13}{'busy cores':>12}"
          "   runs (s)")
    for f in figures:
        runs = " ".join(f"{t:.2f}" for t in f.seconds)
        print(f"{f.name:<16}{f.games:>7}{statistics.median(f.seconds):>10.2f}{f.games_per_s:>10.2f}"
              f"{f.games_per_cpu_s:>13.2f}{f.busy_cores:>12.2f}   {runs}")
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}")
    print("ray start-up (not in the times): " + ", ".join(f"{n} cpu {s:.1f} s" for n, s in startups.items()))


if __name__ == "__main__":
    main()
