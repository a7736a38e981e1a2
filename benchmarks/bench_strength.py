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
  curve                    ISMCTS at 1k, 3k, 10k, 30k iterations against three heuristics;
                           the top budget paired against the bottom one (issue 12: 30k's
                           interval above 3k's)
  ismcts-vs-zoo-NAME-4p    ISMCTS 10k iterations against three `zoo:NAME` bots (csl_ai/zoo.py),
                           NAME = cautious, leopards, stars, trumps, bettor; target >= 45%.
                           Not in the default run: add them with --zoo, or name them (or
                           'zoo') in --only.
  travel-heuristic-SIDES-4p `ismcts:normal` against three heuristics on sides BBBB, ABAB and
                           BAAB (candy, spider, leopard, star); issue 36's target >= 50%.
  travel-style-SIDES-4p    `ismcts:normal` against three style bots (csl_ai/style.py, built
                           from the scoring, outside the heuristic's family) and against each
                           saved style (exploiters found by benchmarks/exploit.py), on AAAA and
                           BBBB. Not in the default run: --only travel.
  outsider-NAME-SIDES-4p   `ismcts:normal` against three outsiders (csl_ai/outsiders: bots
                           written blind, from the rules alone; nothing was tuned on them),
                           NAME = counter, hunter, on AAAA and BBBB. Not in the default run:
                           --only outsider.
  efficiency-normal-4p     `ismcts:normal` (the level: its time a decision, 26k iterations at 4
  efficiency-old-strong-4p players) and the old `strong`: 50k iterations of the search that plays
                           every later round out (value_horizon 0), on the same deals against
                           three heuristics; issue 12: normal at least as strong, the paired
                           difference printed. Not in the default run: --only efficiency.

Opponents used while tuning the search (heuristic, zoo:cautious, random) are marked
"tuning" in the tables, the other zoo bots "held-out"; a summary line gives the mean win
share over the held-out rows that were run.

Beside the win share, every row reports (from its own games; benchmarks/strength_metrics.py):
  - calibration of the test agent's own win estimate (search agents only): the best
    move's win_probability at each searched decision against the game's realised win
    share; mean estimate, realised share and Brier score at its first allocation and
    over all its decisions, and both by estimate decile;
  - good-weather bets of the test agent and of its opponents pooled: bets per round
    played, honoured share, share made in the last round, and each bet's value against
    the same sky cards left face up (the game replayed with that declaration withdrawn
    and rescored by the engine), as a mean per bet with a 95% interval over deals;
  - shooting stars: the test agent's share of games ending with 2 and with 3 face-up
    stars against its opponents' on the same cards (same deal, same seat, other
    rotations), and the paired difference in star points a game with a 95% interval
    over deals.

Usage:
  python benchmarks/bench_strength.py                 # full size: 400 games a row
  python benchmarks/bench_strength.py --quick         # smoke run: 20 games, budgets / 10
  python benchmarks/bench_strength.py --games 100 --workers 2 --only ismcts-vs-heuristic-4p
  python benchmarks/bench_strength.py --only heuristic-vs-random-4p heuristic-vs-random-2p
  python benchmarks/bench_strength.py --zoo           # the default rows and the zoo rows
  python benchmarks/bench_strength.py --only zoo --json zoo.json   # zoo rows, figures to JSON
  python benchmarks/bench_strength.py --only efficiency --workers 2  # normal against old strong

With iteration limits and fixed seeds every game is reproducible, whatever --workers.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from csl_ai.agents import Agent, AgentSpecError, IsmctsAgent, make_agent, play_game  # noqa: E402
from csl_ai.game import Observation  # noqa: E402
from csl_ai.moves import Move  # noqa: E402
from csl_ai.outsiders import OUTSIDER_SPECS  # noqa: E402
from csl_ai.rules import Kind, RulesConfig, Side  # noqa: E402
from csl_ai.search import SearchConfig, SearchLimit
from csl_ai.search.result import wilson_interval as wilson  # noqa: E402
from csl_ai.seeds import joined_seed  # noqa: E402
from csl_ai.style import saved_styles  # noqa: E402
from strength_metrics import (  # noqa: E402
    Bet,
    BetSummary,
    Calibration,
    CalibrationBin,
    PairedFigure,
    bets_of,
    calibration,
    calibration_bins,
    deal_bootstrap,
    decile_intervals,
    paired_figure,
    summarise_bets,
)

FULL_GAMES = 400
QUICK_GAMES = 20
QUICK_BUDGET_DIVISOR = 10
MAIN_ITERATIONS = 10_000
CURVE_ITERATIONS = (1_000, 3_000, 10_000, 30_000)
ZOO_BOTS = ("cautious", "leopards", "stars", "trumps", "bettor")
CALIBRATION_TOLERANCE = 0.04
"""Issue 12: every decile of the win estimate within 4 points of its realised share."""
ZOO_TARGET = 0.45
TRAVEL_SIDES = ("BBBB", "ABAB", "BAAB")
TRAVEL_TARGET = 0.50
"""Issue 36: `normal` against three heuristic bots on other scorings than the default."""
OLD_STRONG_ITERATIONS = 50_000
PLAYOUTS_SPEC = "playouts:iters="
"""A bench-only spec: ISMCTS whose playouts deal and play every later round out (the search
before the learned value, value_horizon 0), the old levels' search."""
TUNING_OPPONENTS = frozenset({"heuristic", "zoo:cautious", "random"})
"""Opponents the search was tuned against; the other zoo bots are held out."""


@dataclass(frozen=True)
class Row:
    """One benchmark row: the test agent's spec against opponents' spec at a player count."""

    name: str
    players: int
    test: str
    opponent: str
    target: float | None = None
    group: str = "main"
    sides: str = "AAAA"
    """Scoring sides of candy, spider, leopard and star."""

    @property
    def rules(self) -> RulesConfig:
        return RulesConfig(players=self.players, sides=tuple(Side(c) for c in self.sides))  # type: ignore[arg-type]

    @property
    def opponent_set(self) -> str:
        """Whether the search was tuned against these opponents: "tuning", "held-out" (a
        zoo, style or outsider bot it never met while tuning) or "-"."""
        if self.opponent in TUNING_OPPONENTS:
            return "tuning"
        return "held-out" if self.opponent.startswith(("zoo:", "style", "outsider:")) else "-"


@dataclass(frozen=True)
class Estimate:
    """The test agent's own win estimate at one searched decision."""

    round: int
    phase: str
    win_probability: float


@dataclass(frozen=True)
class GameRecord:
    """What one game sends back from its worker process: plain, picklable values."""

    row: str
    deal: int
    rotation: int
    """The test agent's seat."""
    win_share: float
    points: float
    opponent_points: float
    """Mean final total of the other seats."""
    seconds: float
    rounds: int
    estimates: tuple[Estimate, ...]
    bets: tuple[Bet, ...]
    """Every seat's good-weather bets."""
    stars: tuple[int, ...]
    """Face-up shooting stars per seat at the end."""
    star_points: tuple[int, ...]
    """The star column of each seat's final score."""


@dataclass
class Outcome:
    """The games of one row: win shares by deal, points, and every game's record."""

    row: Row
    shares: dict[int, list[float]] = field(default_factory=dict)
    points: list[float] = field(default_factory=list)
    others: list[float] = field(default_factory=list)
    seconds: float = 0.0
    records: list[GameRecord] = field(default_factory=list)

    @property
    def games(self) -> int:
        return sum(len(v) for v in self.shares.values())

    @property
    def share(self) -> float:
        return sum(sum(v) for v in self.shares.values()) / self.games


class EstimateRecorder:
    """Plays exactly as the wrapped agent and keeps its win estimate at each decision it
    searched (the best move's win_probability in ``agent.last_result``).

    An agent without ``last_result`` (one that does not search) leaves no estimates; a
    forced move (no iterations) is not an estimate either.
    """

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = agent.name
        self.estimates: list[Estimate] = []

    def act(self, obs: Observation) -> Move:
        before = getattr(self.agent, "last_result", None)
        move = self.agent.act(obs)
        result = getattr(self.agent, "last_result", None)
        if result is not None and result is not before and result.iterations > 0:
            best = next((m for m in result.moves if m.move == result.best_move), result.moves[0])
            self.estimates.append(
                Estimate(len(obs.rounds) - 1, obs.phase.value, float(best.win_probability))
            )
        return move


def bench_agent(spec: str, seed: int) -> Agent:
    """make_agent's agent for spec, or for ``playouts:iters=N`` the search that plays every
    later round out at N iterations a decision."""
    if spec.startswith(PLAYOUTS_SPEC):
        text = spec[len(PLAYOUTS_SPEC) :]
        if not text.isdigit() or int(text) < 1:
            raise AgentSpecError(f"{spec!r}: expected {PLAYOUTS_SPEC}N with N a positive integer")
        return IsmctsAgent(
            SearchLimit(iterations=int(text), seed=seed),
            SearchConfig(value_horizon=(0, 0, 0, 0)),
            name=spec,
        )
    return make_agent(spec, seed)


def play_one(task: tuple[Row, int, int, int]) -> GameRecord:
    """Play one game: the test agent at seat `rotation` of deal `deal`."""
    row, base, deal, rotation = task
    test_seed = joined_seed(base, deal, rotation, rotation, "test")
    test = EstimateRecorder(bench_agent(row.test, test_seed))
    agents: list[Agent] = [
        test
        if seat == rotation
        else make_agent(row.opponent, joined_seed(base, deal, rotation, seat, "opp"))
        for seat in range(row.players)
    ]
    started = time.perf_counter()
    game = play_game(row.rules, agents, base + deal)
    elapsed = time.perf_counter() - started
    result = game.result()
    totals = [line.total for line in result.scores]
    others = [t for s, t in enumerate(totals) if s != rotation]
    return GameRecord(
        row=row.name,
        deal=deal,
        rotation=rotation,
        win_share=result.win_share(rotation),
        points=float(totals[rotation]),
        opponent_points=sum(others) / len(others),
        seconds=elapsed,
        rounds=len(game.rounds),
        estimates=tuple(test.estimates),
        bets=bets_of(game),
        stars=tuple(elements[Kind.STAR] for elements in game.core.elements),
        star_points=tuple(line.star for line in result.scores),
    )


def tasks_for(rows: Sequence[Row], games: int, base: int) -> Iterator[tuple[Row, int, int, int]]:
    """Every game of every row: ceil(games / players) deals, each at every rotation."""
    for row in rows:
        deals = math.ceil(games / row.players)
        for deal in range(deals):
            for rotation in range(row.players):
                yield row, base, deal, rotation


def bootstrap(shares: dict[int, list[float]], seed: int = 12345) -> tuple[float, float]:
    """95% percentile interval of the mean win share, resampling whole deals."""
    return deal_bootstrap(shares, seed) or (0.0, 1.0)


def verdict(target: float | None, lo: float, share: float) -> str:
    if target is None:
        return "-"
    if lo >= target:
        return "MET"
    if share >= target:
        return "met (point only)"
    return "NOT MET"


# --- the figures beside the win share ----------------------------------------------------------


def decisions_by_deal(records: Sequence[GameRecord]) -> dict[int, list[tuple[float, float]]]:
    """(estimate, realised win share) at every searched decision of the test agent, by deal."""
    out: dict[int, list[tuple[float, float]]] = {}
    for rec in records:
        out.setdefault(rec.deal, []).extend((e.win_probability, rec.win_share) for e in rec.estimates)
    return out


def calibration_pairs(
    records: Sequence[GameRecord],
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(estimate, realised win share) at the test agent's first allocation of each game,
    and at all its searched decisions."""
    first: list[tuple[float, float]] = []
    every: list[tuple[float, float]] = []
    for rec in records:
        opening = next((e for e in rec.estimates if e.round == 0 and e.phase == "allocate"), None)
        if opening is not None:
            first.append((opening.win_probability, rec.win_share))
        every.extend((e.win_probability, rec.win_share) for e in rec.estimates)
    return first, every


def bet_summaries(row: Row, records: Sequence[GameRecord]) -> tuple[BetSummary, BetSummary]:
    """The test agent's bets and its opponents' (pooled), by deal."""
    test: dict[int, list[Bet]] = {}
    opponents: dict[int, list[Bet]] = {}
    for rec in records:
        for bet in rec.bets:
            (test if bet.seat == rec.rotation else opponents).setdefault(rec.deal, []).append(bet)
    rounds = sum(rec.rounds for rec in records)
    last_round = row.rules.spec.rounds - 1
    return (
        summarise_bets(test, rounds, last_round),
        summarise_bets(opponents, rounds * (row.players - 1), last_round),
    )


@dataclass(frozen=True)
class StarSummary:
    """Shooting stars of the test agent against its opponents on the same cards: shares of
    games ending with 2 and with 3 face-up stars, and star points a game."""

    two: PairedFigure
    three: PairedFigure
    points: PairedFigure


def star_summary(records: Sequence[GameRecord]) -> StarSummary:
    """At each (deal, seat), the test agent's game there against the opponents' games at
    the same seat of the same deal (the other rotations)."""
    test: dict[tuple[int, int], tuple[int, int]] = {}
    opponents: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for rec in records:
        for seat, held in enumerate(zip(rec.stars, rec.star_points)):
            if seat == rec.rotation:
                test[(rec.deal, seat)] = held
            else:
                opponents.setdefault((rec.deal, seat), []).append(held)

    def figure(value: Callable[[int, int], float]) -> PairedFigure:
        return paired_figure(
            {cell: value(*held) for cell, held in test.items()},
            {cell: [value(*h) for h in held] for cell, held in opponents.items()},
        )

    return StarSummary(
        two=figure(lambda stars, _points: float(stars == 2)),
        three=figure(lambda stars, _points: float(stars == 3)),
        points=figure(lambda _stars, points: float(points)),
    )


# --- rows ----------------------------------------------------------------------------------------


def build_rows(main_iters: int, curve: Sequence[int], quick: bool = False) -> list[Row]:
    """Every known row; the zoo and efficiency rows run only when asked for (see `select`).
    A quick run's efficiency rows are the fast level against a tenth of the old strong."""
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
    rows += [
        Row(f"ismcts-vs-zoo-{bot}-4p", 4, ismcts, f"zoo:{bot}", ZOO_TARGET, "zoo")
        for bot in ZOO_BOTS
    ]
    normal = "ismcts:fast" if quick else "ismcts:normal"
    rows += [
        Row(f"travel-heuristic-{sides}-4p", 4, normal, "heuristic", TRAVEL_TARGET, "travel", sides)
        for sides in TRAVEL_SIDES
    ]
    rows += [
        Row(f"travel-{spec.replace(':', '-')}-{sides}-4p", 4, normal, spec, None, "travel", sides)
        for spec in ("style", *(f"style:{name}" for name in saved_styles()))
        for sides in ("AAAA", "BBBB")
    ]
    rows += [
        Row(f"outsider-{spec.split(':')[1]}-{sides}-4p", 4, normal, spec, None, "outsider", sides)
        for spec in OUTSIDER_SPECS
        for sides in ("AAAA", "BBBB")
    ]
    old_strong = OLD_STRONG_ITERATIONS // (QUICK_BUDGET_DIVISOR if quick else 1)
    rows += [
        Row("efficiency-normal-4p", 4, "ismcts:fast" if quick else "ismcts:normal", "heuristic", None, "efficiency"),
        Row("efficiency-old-strong-4p", 4, f"{PLAYOUTS_SPEC}{old_strong}", "heuristic", None, "efficiency"),
    ]
    return rows


def select(rows: list[Row], only: Sequence[str] | None, zoo: bool = False) -> list[Row]:
    """The rows named in `only` ('curve' and 'zoo' name their groups), else every row
    but the zoo rows; `zoo` adds the zoo rows to either."""
    groups = {"curve", "zoo", "efficiency", "travel", "outsider"}
    if only:
        names = {r.name for r in rows} | groups
        for name in only:
            if name not in names:
                raise SystemExit(
                    f"unknown row {name!r}; expected one of: {', '.join(sorted(names))}"
                )
    wanted = set(only or ()) | ({"zoo"} if zoo else set())

    def chosen_row(row: Row) -> bool:
        if row.name in wanted or (row.group in groups and row.group in wanted):
            return True
        return not only and row.group not in ("zoo", "efficiency", "travel", "outsider")

    chosen = [r for r in rows if chosen_row(r)]
    if "curve" in wanted and not any(r.name == "ismcts-vs-heuristic-4p" for r in chosen):
        chosen.append(next(r for r in rows if r.name == "ismcts-vs-heuristic-4p"))
    return chosen


def check_specs(rows: Sequence[Row]) -> None:
    """Exit with a clear message, before any game, if make_agent cannot build a row's agents."""
    for row in rows:
        for spec in (row.test, row.opponent):
            try:
                bench_agent(spec, 0)
            except AgentSpecError as e:
                zoo = spec.startswith("zoo:")
                hint = " (is the zoo registered in make_agent yet?)" if zoo else ""
                raise SystemExit(f"row {row.name}: agent {spec!r}: {e}{hint}") from None


def run(
    rows: Sequence[Row], games: int, base: int, workers: int, progress: bool
) -> dict[str, Outcome]:
    outcomes = {row.name: Outcome(row) for row in rows}
    tasks = list(tasks_for(rows, games, base))
    started = time.perf_counter()
    done = 0

    def record(game: GameRecord) -> None:
        nonlocal done
        out = outcomes[game.row]
        out.shares.setdefault(game.deal, []).append(game.win_share)
        out.points.append(game.points)
        out.others.append(game.opponent_points)
        out.seconds += game.seconds
        out.records.append(game)
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
    for out in outcomes.values():
        out.records.sort(key=lambda g: (g.deal, g.rotation))
    return outcomes


# --- printing ---------------------------------------------------------------------------------


def print_table(title: str, outcomes: Sequence[Outcome]) -> None:
    print(f"\n{title}")
    header = (
        f"{'row':<26} {'test':<20} {'vs':<12} {'opp set':<8} {'games':>5} {'win share':>9} "
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
            f"{row.name:<26} {row.test:<20} {row.opponent:<12} {row.opponent_set:<8} "
            f"{out.games:>5} {share:>9.1%} "
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
    ordered = sorted(outcomes, key=lambda e: e[0])
    for iters, out in ordered:
        lo, hi = bootstrap(out.shares)
        trend = "" if previous is None else ("  up" if out.share > previous else "  not up")
        print(
            f"{iters:>10} {out.games:>5} {out.share:>9.1%} {f'{lo:.1%}..{hi:.1%}':>15}  "
            f"{'|' * round(out.share * 40)}{trend}"
        )
        previous = out.share
    if len(ordered) > 1:
        print(curve_verdict(ordered[0], ordered[-1]))


def curve_verdict(low: tuple[int, Outcome], high: tuple[int, Outcome]) -> str:
    """The top budget against the bottom one: the paired difference on the same (deal,
    seat), and whether the top's interval lies above the bottom's (issue 12's target,
    read literally)."""
    (low_iters, low_out), (high_iters, high_out) = low, high
    figure = paired_outcomes(high_out, low_out)
    _, low_hi = bootstrap(low_out.shares)
    high_lo, _ = bootstrap(high_out.shares)
    ci = figure.ci95
    paired = "no interval"
    if ci is not None:
        paired = f"{figure.difference * 100:+.1f} points ({ci[0] * 100:+.1f}..{ci[1] * 100:+.1f})"
    verdict = "met" if high_lo > low_hi else "not met"
    return (
        f"{high_iters:,} against {low_iters:,} iterations on the same games: paired {paired}; "
        f"{high_iters:,}'s interval above {low_iters:,}'s: {verdict}"
    )


def paired_outcomes(test: Outcome, other: Outcome) -> PairedFigure:
    """TEST's win share against OTHER's on the same (deal, seat)."""
    shares = {(g.deal, g.rotation): g.win_share for g in test.records}
    others = {(g.deal, g.rotation): [g.win_share] for g in other.records}
    return paired_figure(shares, others)


def print_efficiency(normal: Outcome, old_strong: Outcome) -> None:
    figure = paired_outcomes(normal, old_strong)
    ci = figure.ci95
    if ci is None or math.isnan(figure.difference):
        verdict_text = "no interval"
    elif ci[1] < 0:
        verdict_text = "not met (weaker beyond the noise)"
    elif figure.difference >= 0:
        verdict_text = "met (at least as strong)"
    else:
        verdict_text = "not shown (within the noise)"
    print(
        f"\nEfficiency (issue 12): {normal.row.test} {figure.test:.1%} against the old strong "
        f"({old_strong.row.test}) {figure.opponents:.1%} on the same games: paired "
        f"{100 * figure.difference:+.1f} points {_interval(ci, 100)}, "
        f"{normal.seconds / normal.games:.2f} against {old_strong.seconds / old_strong.games:.2f} "
        f"s a game; {verdict_text}"
    )


def held_out_summary(outcomes: Sequence[Outcome]) -> str | None:
    """One line: the mean win share over the held-out rows run (None if none ran)."""
    held = [out for out in outcomes if out.row.opponent_set == "held-out"]
    if not held:
        return None
    mean = sum(out.share for out in held) / len(held)
    names = ", ".join(out.row.opponent for out in held)
    return f"held-out opponents: mean win share {mean:.1%} over {len(held)} row(s) ({names})"


def _percent(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1%}"


def _points(value: float, width: int = 0) -> str:
    """A difference of shares in percentage points, signed."""
    return f"{'-' if math.isnan(value) else f'{100 * value:+.1f}':>{width}}"


def _interval(ci: tuple[float, float] | None, scale: float = 1.0, digits: int = 1) -> str:
    if ci is None:
        return "-"
    return f"{scale * ci[0]:+.{digits}f}..{scale * ci[1]:+.{digits}f}"


def print_calibration(records: Sequence[GameRecord], test: str) -> None:
    first, every = calibration_pairs(records)
    if not every:
        print(f"  win estimate: none ({test} reports no search result)")
        return
    print(
        f"  {'win estimate of the test agent':<31} {'n':>6} {'mean est':>8} {'realised':>8} "
        f"{'est-real':>8} {'Brier':>6}"
    )
    for label, pairs in (("at its first allocation", first), ("at all its decisions", every)):
        summary: Calibration | None = calibration(pairs)
        if summary is None:
            print(f"    {label:<29} {0:>6}")
            continue
        print(
            f"    {label:<29} {summary.count:>6} {summary.mean_estimate:>8.1%} "
            f"{summary.realised:>8.1%} {_points(summary.difference, 8)} {summary.brier:>6.3f}"
        )
    columns = f"{'n':>6} {'est':>6} {'real':>6} {'diff':>6}"
    print(f"    {'by estimate':<12}{'first allocation':^27}  {'all decisions':^27}".rstrip())
    print(f"    {'':<12}{columns}  {columns} {'diff 95% (deals)':>16}")
    intervals = decile_intervals(decisions_by_deal(records))
    every_bins = calibration_bins(every)
    for first_bin, every_bin, ci in zip(calibration_bins(first), every_bins, intervals, strict=True):
        if first_bin.count == 0 and every_bin.count == 0:
            continue
        cells = []
        for b in (first_bin, every_bin):
            if b.count == 0:
                cells.append(f"{'-':>6} {'':>6} {'':>6} {'':>6}")
            else:
                cells.append(
                    f"{b.count:>6} {b.mean_estimate:>6.1%} {b.realised:>6.1%} "
                    f"{_points(b.difference, 6)}"
                )
        label = f"{first_bin.low:.0%}-{first_bin.high:.0%}"
        print(f"    {label:<12}" + "  ".join(cells) + f" {_interval(ci, 100):>16}")
    print("    " + decile_verdict(every_bins, intervals))


def decile_verdict(bins: Sequence[CalibrationBin], intervals: Sequence[tuple[float, float] | None]) -> str:
    """How the all-decisions deciles stand against issue 12's ±4 points: within it, missing
    it beyond the noise (the whole interval outside), or undecided at this many games."""
    filled = [(b, ci) for b, ci in zip(bins, intervals, strict=True) if b.count and ci is not None]
    within = sum(abs(b.difference) <= CALIBRATION_TOLERANCE for b, _ in filled)
    beyond = sum(ci[0] > CALIBRATION_TOLERANCE or ci[1] < -CALIBRATION_TOLERANCE for _, ci in filled)
    wide = sum(ci[1] - ci[0] > 2 * CALIBRATION_TOLERANCE for _, ci in filled)
    return (
        f"deciles within ±{100 * CALIBRATION_TOLERANCE:.0f} points: {within} of {len(filled)}; "
        f"outside it beyond the noise: {beyond}; intervals wider than the ±{100 * CALIBRATION_TOLERANCE:.0f} "
        f"band itself: {wide}"
    )


def print_bets(row: Row, records: Sequence[GameRecord]) -> None:
    print(
        f"  {'good weather':<31} {'bets/round':>10} {'bets':>5} {'honoured':>8} "
        f"{'value/bet':>9} {'95% CI (deals)':>15} {'last round':>10}"
    )
    for label, summary in zip(("test agent", "opponents"), bet_summaries(row, records)):
        value = "-" if math.isnan(summary.mean_value) else f"{summary.mean_value:+.1f}"
        print(
            f"    {label:<29} {summary.per_round:>10.3f} {summary.bets:>5} "
            f"{_percent(summary.honoured_share):>8} {value:>9} {_interval(summary.ci95):>15} "
            f"{_percent(summary.last_round_share):>10}"
        )


def print_stars(records: Sequence[GameRecord]) -> None:
    stars = star_summary(records)
    print(f"  {'shooting stars':<31} {'2 stars':>8} {'3 stars':>8} {'star pts/game':>13}")
    print(
        f"    {'test agent':<29} {_percent(stars.two.test):>8} {_percent(stars.three.test):>8} "
        f"{stars.points.test:>+13.2f}"
    )
    print(
        f"    {'opponents, same cards':<29} {_percent(stars.two.opponents):>8} "
        f"{_percent(stars.three.opponents):>8} {stars.points.opponents:>+13.2f}"
    )
    print(
        f"    test - opponents: {stars.points.difference:+.2f} star pts/game, "
        f"95% CI (deals) {_interval(stars.points.ci95, digits=2)}"
    )


def print_details(out: Outcome) -> None:
    row = out.row
    print(
        f"\n{row.name}: {row.test} vs {row.opponent} ({row.opponent_set}), "
        f"{out.games} games, win share {out.share:.1%}"
    )
    print_calibration(out.records, row.test)
    print_bets(row, out.records)
    print_stars(out.records)


# --- JSON -----------------------------------------------------------------------------------


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def calibration_json(
    pairs: Sequence[tuple[float, float]], intervals: Sequence[tuple[float, float] | None] | None = None
) -> dict[str, Any] | None:
    """The summary and its deciles; with intervals (decile_intervals), each decile's 95%
    interval of the difference over deals as difference_ci95_deals."""
    summary = calibration(pairs)
    if summary is None:
        return None
    return {
        **asdict(summary),
        "difference": summary.difference,
        "deciles": [
            {
                "low": b.low,
                "high": b.high,
                "count": b.count,
                "mean_estimate": _finite(b.mean_estimate),
                "realised": _finite(b.realised),
                "difference": _finite(b.difference),
                **({"difference_ci95_deals": intervals[i]} if intervals is not None else {}),
            }
            for i, b in enumerate(calibration_bins(pairs))
        ],
    }


def bets_json(summary: BetSummary) -> dict[str, Any]:
    return {
        "seat_rounds": summary.seat_rounds,
        "bets": summary.bets,
        "bets_per_round": _finite(summary.per_round),
        "honoured": summary.honoured,
        "honoured_share": _finite(summary.honoured_share),
        "mean_value_per_bet": _finite(summary.mean_value),
        "value_ci95_deals": summary.ci95,
        "last_round_bets": summary.last_round,
        "last_round_share": _finite(summary.last_round_share),
    }


def paired_json(figure: PairedFigure) -> dict[str, Any]:
    return {
        "test": _finite(figure.test),
        "opponents_same_cards": _finite(figure.opponents),
        "difference": _finite(figure.difference),
        "difference_ci95_deals": figure.ci95,
    }


def outcome_json(out: Outcome) -> dict[str, Any]:
    first, every = calibration_pairs(out.records)
    test_bets, opponent_bets = bet_summaries(out.row, out.records)
    stars = star_summary(out.records)
    return {
        **asdict(out.row),
        "opponent_set": out.row.opponent_set,
        "games": out.games,
        "win_share": out.share,
        "ci95_deals": bootstrap(out.shares),
        "wilson95": wilson(out.share, out.games),
        "mean_points": sum(out.points) / len(out.points),
        "mean_opponent_points": sum(out.others) / len(out.others),
        "seconds_per_game": out.seconds / out.games,
        "calibration": {
            "first_allocation": calibration_json(first),
            "all_decisions": calibration_json(every, decile_intervals(decisions_by_deal(out.records))),
        },
        "good_weather": {"test": bets_json(test_bets), "opponents": bets_json(opponent_bets)},
        "shooting_stars": {
            "two_stars_share": paired_json(stars.two),
            "three_stars_share": paired_json(stars.three),
            "star_points_per_game": paired_json(stars.points),
        },
    }


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
        help=f"ISMCTS iterations a decision in the main and zoo rows (default {MAIN_ITERATIONS})",
    )
    parser.add_argument(
        "--curve",
        type=int,
        nargs="+",
        default=list(CURVE_ITERATIONS),
        help="ISMCTS budgets of the curve (default 1000 3000 10000 30000)",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        help="rows to run (names as printed, or 'curve', 'zoo' or 'efficiency' for those groups)",
    )
    parser.add_argument(
        "--zoo",
        action="store_true",
        help=(
            "also run the zoo rows (ISMCTS against three zoo:NAME bots, "
            f"NAME in {', '.join(ZOO_BOTS)})"
        ),
    )
    parser.add_argument("--json", default=None, help="also write every figure to this JSON file")
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
    rows = select(build_rows(main_iters, curve, args.quick), args.only, args.zoo)
    check_specs(rows)
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
        ("zoo", f"ISMCTS ({main_iters} iterations a decision) against three zoo bots, 4 players"),
        ("efficiency", "The normal level against the old strong, 4 players"),
    ):
        chosen = [outcomes[r.name] for r in rows if r.group == group]
        if chosen:
            print_table(title, chosen)
    held_out = held_out_summary([outcomes[r.name] for r in rows])
    if held_out:
        print(f"\n{held_out}")
    curve_points = []
    for iters in curve:
        name = "ismcts-vs-heuristic-4p" if iters == main_iters else f"curve-{iters}"
        if name in outcomes:
            curve_points.append((iters, outcomes[name]))
    if any(r.group == "curve" for r in rows) and curve_points:
        print_curve(curve_points)
    if "efficiency-normal-4p" in outcomes and "efficiency-old-strong-4p" in outcomes:
        print_efficiency(outcomes["efficiency-normal-4p"], outcomes["efficiency-old-strong-4p"])
    print(
        "\nPer row: calibration of the test agent's own win estimate (est-real and diff in "
        "percentage points),\ngood-weather bets (value: final total minus the total had it not "
        "declared, same cards won),\nshooting stars against the opponents who held the same seat "
        "of the same deal."
    )
    for row in rows:
        print_details(outcomes[row.name])
    print(f"\ntotal wall time {time.perf_counter() - started:.0f} s")
    if args.json:
        held = [outcomes[r.name] for r in rows if r.opponent_set == "held-out"]
        data = {
            "games_per_row": games,
            "seed": args.seed,
            "quick": args.quick,
            "rows": [outcome_json(outcomes[r.name]) for r in rows],
            "held_out": {
                "rows": [out.row.name for out in held],
                "mean_win_share": sum(out.share for out in held) / len(held) if held else None,
            },
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
