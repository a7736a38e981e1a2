"""Judge a change of the search against the blind outsiders, on the standard rows, paired
with the shipped engine's stored rows.

Issue 36 judges every change on the same rows: one engine seat at `normal`'s iterations
against three `outsider:hunter` or three `outsider:counter` (`csl_ai/outsiders/`, never
fitted on), duplicate deals, seats rotated. Each row is a `tune_search.py --save` run; the
shipped engine's own rows (two search streams each) are kept in `benchmarks/baselines/`,
so a change costs only its own rows, and it is compared game by game with the mean of
the baseline's streams (`pool_paired.py`).

    python benchmarks/judge.py --out DIR [--config JSON] [--fitted FOLDER] [--rows 4p,5p]
    python benchmarks/judge.py --make-baseline [--rows 4p]      # after a change ships

Rows already in DIR are kept (so a stopped run resumes where it stopped); each row prints
its paired difference as it finishes, and the last line is the pooled difference over all
of them with a 95% interval that resamples deals. The rows run the build tune_search.py
would (this checkout's, or `PYTHONPATH=FROZEN`'s): judge a change from a frozen copy of the
tree, not from a tree being edited. A row takes about 6 minutes on 2 cores.

The stored baselines belong to one build: `benchmarks/baselines/SIGNATURE` holds its bench
signature (`csl bench --signature`), and the judge prints it beside this checkout's, so every
judgement says which build it was paired with. When a change ships, the signature moves and
the baselines are made again (`--make-baseline`, which also drops the rows of another
build). The 4-player rows are stored; the 5-player set is defined but its rows are made with
`--make-baseline --rows 5p` when first needed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import ROOT, put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from pool_paired import PoolError, paired_rows, pooled_line  # noqa: E402

BASELINES = Path(__file__).resolve().parent / "baselines"
"""The shipped engine's rows (two search streams each) and the SIGNATURE of its build."""
BASELINE_STREAMS = (0, 1)


@dataclass(frozen=True)
class Row:
    """One standard row: the outsider, the sides (or 'all' for every scoring), the player
    count, `normal`'s iterations there, and the deals' seed base (100 deals)."""

    opponent: str
    sides: str
    players: int
    iterations: int
    base: int

    def name(self, stream: int = 0) -> str:
        return f"{self.players}p-{self.opponent}-{self.sides}-{self.base}-s{stream}"

    def arguments(self) -> list[str]:
        return ["--players", str(self.players), "--iters", str(self.iterations), "--settled",
                "--opponent", f"outsider:{self.opponent}", "--sides", self.sides,
                "--deals", "100", "--base", str(self.base)]


ROW_SETS: dict[str, tuple[Row, ...]] = {
    "4p": tuple(Row(opp, sides, 4, 44_000, 34_000) for sides in ("AAAA", "BBBB") for opp in ("hunter", "counter")),
    "5p": tuple(Row(opp, "all", 5, 32_000, base) for base in (36_000, 36_500) for opp in ("hunter", "counter")),
}
"""The rows of the thirty-fourth to thirty-eighth sessions' judgements (docs/tuning.md)."""


class JudgeError(Exception):
    """A run that cannot go on: a row that failed, or baselines that do not fit."""


def bench_signature() -> str:
    """This checkout's bench signature (the same line `csl bench --signature` prints)."""
    from csl_ai.signature import bench_signature as signature

    return signature().hex


def run_row(row: Row, stream: int, extra: list[str], workers: int, target: Path) -> None:
    """Play one row with this checkout's tune_search.py into target (written whole or not at all)."""
    partial = target.with_suffix(".partial")
    command = [sys.executable, str(Path(__file__).resolve().parent / "tune_search.py"), *row.arguments(),
               "--stream", str(stream), "--workers", str(workers), *extra, "--save", str(partial)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0 or not partial.exists():
        last = (result.stderr.strip().splitlines() or ["no output"])[-1]
        raise JudgeError(f"row {row.name(stream)} failed: {last}")
    partial.replace(target)
    print(f"  {target.name}: {(result.stdout.strip().splitlines() or ['played'])[-1]}", flush=True)


def baseline_files(row: Row, folder: Path) -> tuple[Path, ...]:
    found = tuple(p for s in BASELINE_STREAMS if (p := folder / f"{row.name(s)}.json").exists())
    if not found:
        raise JudgeError(f"no baseline for row {row.name()} in {folder} (make it with --make-baseline)")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder of this change's rows (kept: a rerun resumes)")
    parser.add_argument("--config", default="{}", help="SearchConfig fields as JSON, as tune_search.py takes them")
    parser.add_argument("--fitted", type=Path, help="a folder of fitted model files (as csl_ai/data)")
    parser.add_argument("--rows", default="4p", help=f"comma-separated row sets: {', '.join(ROW_SETS)}")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--baselines", type=Path, default=BASELINES, help=argparse.SUPPRESS)
    parser.add_argument(
        "--make-baseline", action="store_true",
        help="play the shipped engine's rows (streams 0 and 1) into the baselines folder and record its signature",
    )
    args = parser.parse_args(argv)
    names = [n for n in args.rows.split(",") if n]
    if not names or any(n not in ROW_SETS for n in names):
        parser.error(f"--rows: expected a comma-separated subset of {', '.join(ROW_SETS)}, got {args.rows!r}")
    rows = [row for n in names for row in ROW_SETS[n]]
    if args.make_baseline == (args.out is not None):
        parser.error("give either --out DIR (judge a change) or --make-baseline")
    if args.make_baseline and (args.config != "{}" or args.fitted is not None):
        parser.error("--make-baseline plays the shipped engine: no --config or --fitted")
    signature = bench_signature()
    signature_file = args.baselines / "SIGNATURE"
    try:
        if args.make_baseline:
            args.baselines.mkdir(parents=True, exist_ok=True)
            if signature_file.exists() and signature_file.read_text().strip() != signature:
                for old in args.baselines.glob("*.json"):
                    old.unlink()
            signature_file.write_text(signature + "\n")
            for row in rows:
                for stream in BASELINE_STREAMS:
                    target = args.baselines / f"{row.name(stream)}.json"
                    if not target.exists():
                        run_row(row, stream, [], args.workers, target)
            print(f"baselines of build {signature} in {args.baselines}")
            return 0
        stored = signature_file.read_text().strip() if signature_file.exists() else None
        if stored is None:
            raise JudgeError(f"{signature_file}: missing (make the baselines with --make-baseline)")
        print(f"baseline: the build of signature {stored}; this checkout's signature {signature}"
              + (" (the same build: a --config or --fitted change)" if stored == signature else ""))
        extra = ["--config", args.config] + (["--fitted", str(args.fitted)] if args.fitted else [])
        args.out.mkdir(parents=True, exist_ok=True)
        pairs = []
        for row in rows:
            olds = baseline_files(row, args.baselines)
            target = args.out / f"{row.name()}.json"
            if not target.exists():
                run_row(row, 0, extra, args.workers, target)
            pairs.append((target, olds))
            print(f"  {row.name()} minus the baseline: {pooled_line(paired_rows([pairs[-1]]))}", flush=True)
        print(f"pooled: {pooled_line(paired_rows(pairs))}")
        return 0
    except (JudgeError, PoolError, OSError) as e:
        print(f"judge.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
