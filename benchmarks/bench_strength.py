"""Strength benchmarks (issue 3): win shares with 95% intervals over fixed, duplicated deals.

Each row pits one test agent against opponents of one kind. Every deal (a game seed:
the same hands and sky cards in every replay) is played once per seat, the test agent
moving round the table, so each agent plays each seat on the same cards (duplicate
format). A game's score for the test agent is its win share (1, 1/k for a k-way shared
win, else 0). Intervals: a percentile bootstrap over deals (the unit that was
duplicated) and, for reference, Wilson's interval over games.

Rows and targets (issue 3):
  heuristic-vs-random-4p   one heuristic, three random bots       (sanity, fair share 25%)
  heuristic-vs-random-2p   heuristic heads-up against random       (sanity, fair share 50%)
  ismcts-vs-heuristic-4p   ISMCTS 10k iterations, three heuristics  target >= 45%
  ismcts-vs-random-4p      ISMCTS 10k iterations, three random bots target >= 90%
  ismcts-vs-heuristic-2p   ISMCTS 10k iterations heads-up           target >= 70%
  curve                    ISMCTS at 1k, 3k, 10k, 30k iterations against three heuristics

Usage:
  python benchmarks/bench_strength.py                 # full size: 400 games a row
  python benchmarks/bench_strength.py --quick         # smoke run: 20 games, budgets / 10
  python benchmarks/bench_strength.py --games 100 --workers 2 --only ismcts-vs-heuristic-4p
  python benchmarks/bench_strength.py --only heuristic-vs-random-4p heuristic-vs-random-2p

With iteration limits and fixed seeds every game is reproducible, whatever --workers.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csl_ai.agents import Agent, make_agent, play_game  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402

FULL_GAMES = 400
QUICK_GAMES = 20
QUICK_BUDGET_DIVISOR = 10
MAIN_ITERATIONS = 10_000
CURVE_ITERATIONS = (1_000, 3_000, 10_000, 30_000)
BOOTSTRAP_RESAMPLES = 2_000
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Row:
    """One benchmark row: the test agent's spec against opponents' spec at a player count."""

    name: str
    players: int
    test: str
    opponent: str
    target: float | None = None
    group: str = "main"


@dataclass
class Outcome:
    """The games of one row, by deal: win shares and points of the test agent."""

    row: Row
    shares: dict[int, list[float]] = field(default_factory=dict)
    points: list[float] = field(default_factory=list)
    others: list[float] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def games(self) -> int:
        return sum(len(v) for v in self.shares.values())

    @property
    def share(self) -> float:
        return sum(sum(v) for v in self.shares.values()) / self.games


def agent_seed(base: int, deal: int, rotation: int, seat: int, role: str) -> int:
    """A fixed seed for one agent in one game, independent of how games are scheduled."""
    key = f"{base}|{deal}|{rotation}|{seat}|{role}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little") >> 1


def play_one(task: tuple[Row, int, int, int]) -> tuple[str, int, float, float, float, float]:
    """Play one game: the test agent at seat `rotation` of deal `deal`."""
    row, base, deal, rotation = task
    agents: list[Agent] = []
    for seat in range(row.players):
        if seat == rotation:
            agents.append(make_agent(row.test, agent_seed(base, deal, rotation, seat, "test")))
        else:
            agents.append(make_agent(row.opponent, agent_seed(base, deal, rotation, seat, "opp")))
    started = time.perf_counter()
    game = play_game(RulesConfig(players=row.players), agents, base + deal)
    elapsed = time.perf_counter() - started
    result = game.result()
    totals = [line.total for line in result.scores]
    others = [t for s, t in enumerate(totals) if s != rotation]
    return (
        row.name,
        deal,
        result.win_share(rotation),
        float(totals[rotation]),
        sum(others) / len(others),
        elapsed,
    )


def tasks_for(rows: Sequence[Row], games: int, base: int) -> Iterator[tuple[Row, int, int, int]]:
    """Every game of every row: ceil(games / players) deals, each at every rotation."""
    for row in rows:
        deals = math.ceil(games / row.players)
        for deal in range(deals):
            for rotation in range(row.players):
                yield row, base, deal, rotation


def wilson(share: float, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval for a proportion over n trials."""
    if n == 0:
        return (0.0, 1.0)
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap(shares: dict[int, list[float]], seed: int = 12345) -> tuple[float, float]:
    """95% percentile interval of the mean win share, resampling whole deals."""
    per_deal = [(sum(v), len(v)) for v in shares.values()]
    if len(per_deal) < 2:
        return (0.0, 1.0)
    rng = random.Random(seed)
    means = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        total = games = 0.0
        for _ in range(len(per_deal)):
            s, n = per_deal[rng.randrange(len(per_deal))]
            total += s
            games += n
        means.append(total / games)
    means.sort()
    lo = means[int(0.025 * (len(means) - 1))]
    hi = means[math.ceil(0.975 * (len(means) - 1))]
    return (lo, hi)


def verdict(target: float | None, lo: float, share: float) -> str:
    if target is None:
        return "-"
    if lo >= target:
        return "MET"
    if share >= target:
        return "met (point only)"
    return "NOT MET"


def build_rows(main_iters: int, curve: Sequence[int]) -> list[Row]:
    ismcts = f"ismcts:iters={main_iters}"
    rows = [
        Row("heuristic-vs-random-4p", 4, "heuristic", "random", None, "sanity"),
        Row("heuristic-vs-random-2p", 2, "heuristic", "random", None, "sanity"),
        Row("ismcts-vs-heuristic-4p", 4, ismcts, "heuristic", 0.45),
        Row("ismcts-vs-random-4p", 4, ismcts, "random", 0.90),
        Row("ismcts-vs-heuristic-2p", 2, ismcts, "heuristic", 0.70),
    ]
    rows += [
        Row(f"curve-{iters}", 4, f"ismcts:iters={iters}", "heuristic", None, "curve")
        for iters in curve
        if iters != main_iters
    ]
    return rows


def select(rows: list[Row], only: Sequence[str] | None, main_iters: int) -> list[Row]:
    if not only:
        return rows
    names = {r.name for r in rows} | {"curve"}
    for name in only:
        if name not in names:
            raise SystemExit(f"unknown row {name!r}; expected one of: {', '.join(sorted(names))}")
    chosen = [r for r in rows if r.name in only or ("curve" in only and r.group == "curve")]
    if "curve" in only and not any(r.name == "ismcts-vs-heuristic-4p" for r in chosen):
        chosen.append(next(r for r in rows if r.name == "ismcts-vs-heuristic-4p"))
    return chosen


def run(
    rows: Sequence[Row], games: int, base: int, workers: int, progress: bool
) -> dict[str, Outcome]:
    outcomes = {row.name: Outcome(row) for row in rows}
    tasks = list(tasks_for(rows, games, base))
    started = time.perf_counter()
    done = 0

    def record(item: tuple[str, int, float, float, float, float]) -> None:
        nonlocal done
        name, deal, share, pts, others, elapsed = item
        out = outcomes[name]
        out.shares.setdefault(deal, []).append(share)
        out.points.append(pts)
        out.others.append(others)
        out.seconds += elapsed
        done += 1
        if progress and (done % 20 == 0 or done == len(tasks)):
            print(
                f"  {done}/{len(tasks)} games, {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )

    if workers <= 1:
        for task in tasks:
            record(play_one(task))
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for item in pool.imap_unordered(play_one, tasks, chunksize=1):
                record(item)
    return outcomes


def print_table(title: str, outcomes: Sequence[Outcome]) -> None:
    print(f"\n{title}")
    header = (
        f"{'row':<24} {'test':<20} {'vs':<10} {'games':>5} {'win share':>9} "
        f"{'95% CI (deals)':>15} {'Wilson 95%':>15} {'fair':>5} {'target':>6} "
        f"{'verdict':<16} {'pts':>6} {'opp pts':>7} {'s/game':>7}"
    )
    print(header)
    print("-" * len(header))
    for out in outcomes:
        row = out.row
        share = out.share
        lo, hi = bootstrap(out.shares)
        wlo, whi = wilson(share, out.games)
        target = f"{row.target:.0%}" if row.target is not None else "-"
        print(
            f"{row.name:<24} {row.test:<20} {row.opponent:<10} {out.games:>5} {share:>9.1%} "
            f"{f'{lo:.1%}..{hi:.1%}':>15} {f'{wlo:.1%}..{whi:.1%}':>15} {1 / row.players:>5.0%} "
            f"{target:>6} {verdict(row.target, lo, share):<16} "
            f"{sum(out.points) / len(out.points):>6.1f} {sum(out.others) / len(out.others):>7.1f} "
            f"{out.seconds / out.games:>7.2f}"
        )


def print_curve(outcomes: Sequence[tuple[int, Outcome]]) -> None:
    print("\nWin share against three heuristic bots (4 players) by ISMCTS iterations a decision")
    print(
        f"{'iterations':>10} {'games':>5} {'win share':>9} {'95% CI (deals)':>15}  bar (| = 2.5%)"
    )
    previous = None
    for iters, out in sorted(outcomes, key=lambda e: e[0]):
        lo, hi = bootstrap(out.shares)
        trend = "" if previous is None else ("  up" if out.share > previous else "  not up")
        print(
            f"{iters:>10} {out.games:>5} {out.share:>9.1%} {f'{lo:.1%}..{hi:.1%}':>15}  "
            f"{'|' * round(out.share * 40)}{trend}"
        )
        previous = out.share


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Strength benchmarks of issue 3 (win share with 95% intervals).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--games",
        type=int,
        default=None,
        help=f"games per row (default {FULL_GAMES}; rounded up to whole deals)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {QUICK_GAMES} games a row, ISMCTS budgets / {QUICK_BUDGET_DIVISOR}",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="processes playing games (default 1)"
    )
    parser.add_argument(
        "--seed", type=int, default=20_000, help="base seed: deal d is game seed SEED+d"
    )
    parser.add_argument(
        "--iters",
        type=int,
        default=MAIN_ITERATIONS,
        help=f"ISMCTS iterations a decision in the main rows (default {MAIN_ITERATIONS})",
    )
    parser.add_argument(
        "--curve",
        type=int,
        nargs="+",
        default=list(CURVE_ITERATIONS),
        help="ISMCTS budgets of the curve (default 1000 3000 10000 30000)",
    )
    parser.add_argument(
        "--only", nargs="+", default=None, help="rows to run (names as printed, or 'curve')"
    )
    parser.add_argument("--json", default=None, help="also write the figures to this JSON file")
    parser.add_argument("--progress", action="store_true", help="print progress to stderr")
    args = parser.parse_args(argv)
    games = args.games if args.games is not None else (QUICK_GAMES if args.quick else FULL_GAMES)
    main_iters = args.iters
    curve = list(args.curve)
    if args.quick:
        main_iters = max(1, main_iters // QUICK_BUDGET_DIVISOR)
        curve = [max(1, c // QUICK_BUDGET_DIVISOR) for c in curve]
    if games < 1 or args.workers < 1:
        parser.error("--games and --workers must be positive")
    rows = select(build_rows(main_iters, curve), args.only, main_iters)
    mode = (
        f"QUICK smoke run (budgets / {QUICK_BUDGET_DIVISOR}; not the benchmark)"
        if args.quick
        else "full"
    )
    print(
        f"bench_strength: {mode}; {games} games a row (whole deals, seats rotated); "
        f"base seed {args.seed}; {args.workers} worker(s)"
    )
    started = time.perf_counter()
    outcomes = run(rows, games, args.seed, args.workers, args.progress)
    for group, title in (
        ("sanity", "Heuristic against random bots"),
        ("main", f"ISMCTS ({main_iters} iterations a decision)"),
    ):
        chosen = [outcomes[r.name] for r in rows if r.group == group]
        if chosen:
            print_table(title, chosen)
    curve_points = []
    for iters in curve:
        name = "ismcts-vs-heuristic-4p" if iters == main_iters else f"curve-{iters}"
        if name in outcomes:
            curve_points.append((iters, outcomes[name]))
    if any(r.group == "curve" for r in rows) and curve_points:
        print_curve(curve_points)
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")
    if args.json:
        data = {
            "games_per_row": games,
            "seed": args.seed,
            "quick": args.quick,
            "rows": [
                {
                    **asdict(out.row),
                    "games": out.games,
                    "win_share": out.share,
                    "ci95_deals": bootstrap(out.shares),
                    "wilson95": wilson(out.share, out.games),
                    "mean_points": sum(out.points) / len(out.points),
                    "mean_opponent_points": sum(out.others) / len(out.others),
                    "seconds_per_game": out.seconds / out.games,
                }
                for out in outcomes.values()
            ],
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
