"""Fit the win calibration (csl_ai/data/win_calibration.json; `--write csl_ai/data` writes it), and check it on held-out bots.

Plays ISMCTS (one seat, every seat in turn on each deal) against three copies of each
opponent, keeps the search's raw mean win share at every decision it searched with the
realised win share of the game, fits the map of csl_ai.calibration per player count on the
tuning opponents' games, and prints for the fitting games and for held-out opponents' games
(other deals) the calibration before (raw), with the map the search reads now ("map in use":
the shipped one, or --fitted's) and after: the Brier score, the mean estimate against
the realised share, the deciles (estimate, realised, decisions, and the 95% interval of
their difference bootstrapped over deals, since a game's decisions share one outcome), and
the mean difference by round of the game. --save keeps the decisions, --load refits and
reports on saved ones without playing (the map is fitted on the --tune opponents' games,
whichever role the saved file gave them: `--load` of a run with held-out style bots and
`--tune heuristic,zoo:cautious,style` fits a population's map).

Usage:
  python benchmarks/fit_calibration.py --save decisions.json   # the shipped map's fit, 1,421 s
  python benchmarks/fit_calibration.py --load decisions.json   # the same rows from the saved decisions
  python benchmarks/fit_calibration.py --load decisions.json --no-stage   # the budget-only map
  python benchmarks/fit_calibration.py --load a.json b.json   # two runs' decisions pooled
  python benchmarks/fit_calibration.py --deals 10 --players 4 --budgets 10000   # a quick look
  python benchmarks/fit_calibration.py --budgets 1000,10000,30000 --deals 20 \
      --tune heuristic,zoo:cautious,random --save decisions.json      # eleventh session, 1,311 s

--all-sides plays every deal on sides and a star option drawn from all 32 scorings, and
--fitted FOLDER searches with another folder's value (a calibration belongs to the value
it reads: refit it whenever the value changes).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from csl_ai.agents import Agent, IsmctsAgent, make_agent, play_game  # noqa: E402
from csl_ai.calibration import WinCalibration, fit_calibration, rounds_follow  # noqa: E402
from csl_ai.errors import OutputWriteError  # noqa: E402
from csl_ai.game import Observation  # noqa: E402
from csl_ai.moves import Move  # noqa: E402
from csl_ai.rules import Kind, RulesConfig, Side, drawn_rules  # noqa: E402
from csl_ai.search import SearchConfig, SearchLimit  # noqa: E402
from csl_ai.search.fitted import FittedModels, model_folder  # noqa: E402
from csl_ai.seeds import joined_seed  # noqa: E402
from strength_metrics import calibration_bins, deal_bootstrap, decile_intervals  # noqa: E402

Sample = tuple[float, int, float, int, int]
"""(raw mean win share, iterations, realised win share of the game, round of the decision
(0-based), game: deal * players + the test seat, for intervals over deals)."""


class RawEstimates:
    """ISMCTS without calibration that keeps the raw estimate of each searched decision."""

    def __init__(self, iterations: int, seed: int, fitted: FittedModels) -> None:
        self.inner = IsmctsAgent(SearchLimit(iterations=iterations, seed=seed), SearchConfig(fitted=fitted.replace(win_calibration=None)))
        self.name = self.inner.name
        self.seen: list[tuple[float, int, int]] = []

    def act(self, obs: Observation) -> Move:
        move = self.inner.act(obs)
        result = self.inner.last_result
        if result is not None and result.iterations:
            self.seen.append((result.moves[0].win_probability, result.iterations, len(obs.rounds) - 1))
        return move


@cache
def models(folder: str | None) -> FittedModels:
    """The fitted models of --fitted's folder, else the shipped ones (read once a process)."""
    return FittedModels.shipped() if folder is None else FittedModels.load(folder)


def play(task: tuple[int, str, int, int, int, int, bool, str | None]) -> list[Sample]:
    players, opponent, iterations, base, deal, rotation, all_sides, fitted = task
    agents: list[Agent] = []
    test = RawEstimates(iterations, joined_seed(base, deal, rotation, iterations, "test"), models(fitted))
    for seat in range(players):
        agents.append(test if seat == rotation else make_agent(opponent, joined_seed(base, deal, rotation, seat)))
    rules = drawn_rules(players, random.Random(joined_seed(base, deal, "sides"))) if all_sides else RulesConfig(players=players)
    game = play_game(rules, agents, base + deal)
    share = game.result().win_share(rotation)
    game_index = deal * players + rotation
    return [(raw, n, share, round_index, game_index) for raw, n, round_index in test.seen]


def collect(
    players: int, opponent: str, iterations: int, deals: int, base: int, workers: int,
    all_sides: bool = False, fitted: str | None = None,
) -> list[Sample]:
    tasks = [(players, opponent, iterations, base, d, r, all_sides, fitted) for d in range(deals) for r in range(players)]
    with ProcessPoolExecutor(workers) as pool:
        return [s for game in pool.map(play, tasks, chunksize=1) for s in game]


def report(
    label: str, samples: Sequence[Sample], calibration: WinCalibration | None, players: int,
    stars: Sequence[bool] | None = None,
) -> str:
    """Brier, mean estimate and realised share with the 95% interval of their difference
    over deals (what a ±4-point target is read on); per decile the estimate, the realised
    share, the decisions and the interval of the difference; the mean difference by round
    of the game. stars: each decision's game on star side B (else all side A)."""
    star_b = stars if stars is not None else [False] * len(samples)
    est = [calibration.chance(s[0], players, s[1], s[3], b) if calibration is not None else s[0]
           for s, b in zip(samples, star_b, strict=True)]
    real = [s[2] for s in samples]
    brier = sum((e - y) ** 2 for e, y in zip(est, real, strict=True)) / len(est)
    by_deal: dict[int, list[tuple[float, float]]] = {}
    for e, s in zip(est, samples, strict=True):
        by_deal.setdefault(s[4] // players, []).append((e, s[2]))
    cells = []
    for b, ci in zip(calibration_bins(list(zip(est, real, strict=True))), decile_intervals(by_deal), strict=True):
        if b.count >= 20 and ci is not None:
            cells.append(
                f"{b.mean_estimate * 100:.0f}/{b.realised * 100:.0f}({b.count}; {ci[0] * 100:+.0f}..{ci[1] * 100:+.0f})"
            )
        else:
            cells.append("-")
    by_round: dict[int, list[float]] = {}
    for e, s in zip(est, samples, strict=True):
        by_round.setdefault(s[3], []).append(e - s[2])
    rounds = " ".join(f"{r + 1}:{sum(v) / len(v) * 100:+.1f}" for r, v in sorted(by_round.items()))
    mean_e = sum(est) / len(est)
    mean_y = sum(real) / len(real)
    gap = deal_bootstrap({deal: [e - y for e, y in pairs] for deal, pairs in by_deal.items()})
    gap_text = f"; est-real {gap[0] * 100:+.1f}..{gap[1] * 100:+.1f}" if gap is not None else ""
    return (
        f"    {label:<34} Brier {brier:.4f}  estimate {mean_e:.1%} realised {mean_y:.1%}{gap_text} "
        f"({len(est)} decisions, {len({s[4] for s in samples})} games)\n"
        f"      deciles est/real(n; 95% of est-real over deals): {' '.join(cells)}\n"
        f"      est-real by round (points): {rounds}"
    )


FILE_GAMES = 60_000_000
"""Game numbers of the n-th --load file start at n times this (a multiple of every player
count, so a game's deal, its number // players, stays apart from other files' deals)."""


def load_decisions(path: Path) -> dict[str, list[Sample]]:
    """Decisions saved by --save: {"players|fit or held|opponent|budget": [Sample, ...]}."""
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError("not a JSON object of decision sets")
    sets: dict[str, list[Sample]] = {}
    for key, rows in data.items():
        parts = str(key).split("|")
        if len(parts) != 4 or parts[0] not in {"2", "3", "4", "5"} or parts[1] not in {"fit", "held"}:
            raise ValueError(f"bad set name {key!r}")
        if not isinstance(rows, list) or not all(
            isinstance(r, list) and len(r) == 5 and all(isinstance(v, (int, float)) for v in r) for r in rows
        ):
            raise ValueError(f"set {key!r} is not a list of [raw, iterations, outcome, round, game]")
        sets[key] = [(float(r[0]), int(r[1]), float(r[2]), int(r[3]), int(r[4])) for r in rows]
    return sets


def fit_row(
    samples: Sequence[Sample], players: int, stage: bool = True, stars: Sequence[bool] | None = None
) -> tuple[float, float, float, float, float, float]:
    """The map's row for one player count; without `stage` every decision reads as the last
    round's, so the stage terms have no data and stay at their prior, 0; without `stars`
    (each decision's game on star side B) the star term stays 0."""
    return fit_calibration(
        [s[0] for s in samples],
        [s[1] for s in samples],
        [rounds_follow(players, s[3]) if stage else 0.0 for s in samples],
        [s[2] for s in samples],
        star_b=stars,
    )


HELD_OUT_BASE = 500_000
"""Held-out opponents play the deals of --base plus this."""


def sample_rules(key: str, sample: Sample, bases: Sequence[int]) -> RulesConfig:
    """The rules a decision's game was played on (--all-sides: drawn from its deal's seed)."""
    players = int(key.split("|")[0])
    run = sample[4] // FILE_GAMES
    base = bases[run] + (HELD_OUT_BASE if key.split("|")[1] == "held" else 0)
    deal = (sample[4] - run * FILE_GAMES) // players
    return drawn_rules(players, random.Random(joined_seed(base, deal, "sides")))


def by_sides_report(
    sets: dict[str, list[Sample]], rules_of: dict[str, list[RulesConfig]], maps: dict[str, WinCalibration | None]
) -> str:
    """Mean estimate minus realised share (points) over every decision, split by each kind's
    side and by the star option, per player count, over all, and over the held-out
    opponents' games alone (the map was fitted on the others); the 95% interval over deals
    (a deal's decisions share its cards and scoring, so deals are the independent units).
    rules_of: each decision's rules (sample_rules), by set."""
    kinds = ("candy", "spider", "leopard", "star")
    lines = ["estimate minus realised share by scoring (points; 95% interval over deals; decisions):"]
    for name, calibration in maps.items():
        if calibration is None:
            continue
        cells: dict[tuple[str, str], dict[tuple[str, int], list[float]]] = {}
        for key, samples in sets.items():
            players = int(key.split("|")[0])
            for sample, rules in zip(samples, rules_of[key], strict=True):
                err = calibration.chance(sample[0], players, sample[1], sample[3],
                                         rules.sides[Kind.STAR] is Side.B) - sample[2]
                labels = [f"{k} {side.value}" for k, side in zip(kinds, rules.sides, strict=True)]
                labels.append(f"stars {rules.star_option.value}")
                deal = (key, sample[4] // players)
                scopes = (str(players), "all", "held") if key.split("|")[1] == "held" else (str(players), "all")
                for count in scopes:
                    for label in labels:
                        cells.setdefault((count, label), {}).setdefault(deal, []).append(err)
        lines.append(f"  {name}:")
        titles = {"all": "all counts", "held": "held-out opponents only, all counts"}
        for count in sorted({c for c, _ in cells}, key=lambda c: (c in titles, c)):
            row = []
            for label in sorted({lab for c, lab in cells if c == count}):
                deals = cells[(count, label)]
                means = [sum(v) / len(v) for v in deals.values()]
                mean = sum(e for v in deals.values() for e in v) / sum(len(v) for v in deals.values())
                spread = (sum((m - sum(means) / len(means)) ** 2 for m in means) / max(1, len(means) - 1)) ** 0.5
                half = 1.96 * spread / len(means) ** 0.5
                row.append(f"{label} {100 * mean:+.1f} (±{100 * half:.1f}; {sum(len(v) for v in deals.values())})")
            lines.append(f"    {titles.get(count, count + ' players')}: " + ", ".join(row))
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", default="2,3,4,5")
    parser.add_argument("--tune", default="heuristic,zoo:cautious")
    parser.add_argument("--held-out", default="zoo:leopards,zoo:trumps")
    parser.add_argument(
        "--budgets", default="1000,10000,30000", help="iterations a decision, comma-separated"
    )
    parser.add_argument("--held-out-budget", type=int, default=10_000)
    parser.add_argument("--deals", type=int, default=30, help="deals per player count, opponent and budget")
    parser.add_argument("--base", type=int, default=60_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--save", type=Path, help="write the collected decisions to this JSON file")
    parser.add_argument(
        "--load", type=Path, nargs="+",
        help="fit on decisions saved by --save instead of playing (several files: pooled, each "
        "file's games kept apart, so runs of other --base seeds add up)",
    )
    parser.add_argument(
        "--all-sides", action="store_true",
        help="each deal draws its sides and star option from all 32 (default: the default scoring)",
    )
    parser.add_argument(
        "--fitted", metavar="FOLDER",
        help="search with the value and split models of FOLDER (as csl_ai/data) and start --write from them",
    )
    parser.add_argument(
        "--no-stage", action="store_true", help="fit the budget-only map (no stage terms), for comparison"
    )
    parser.add_argument(
        "--by-sides", type=int, nargs="+", metavar="BASE",
        help="games played with --all-sides: the --base of each run (one per --load file, in order; "
        "when playing, this run's --base); prints the estimate minus the realised share by each "
        "kind's side and by the star option, per player count and over all of them",
    )
    parser.add_argument(
        "--write", metavar="FOLDER",
        help="write the fitted models into FOLDER's model files (csl_ai/data: the shipped ones), "
        "this fit replacing its player counts' rows, naming this command",
    )
    args = parser.parse_args()
    if args.write is not None:
        try:
            model_folder(args.write)
        except OutputWriteError as error:
            print(f"fit_calibration: {error}", file=sys.stderr)
            return 2
    started = time.perf_counter()
    budgets = [int(b) for b in args.budgets.split(",")]
    sets: dict[str, list[Sample]] = {}
    if args.load:
        for index, path in enumerate(args.load):
            try:
                loaded = load_decisions(path)
            except (OSError, ValueError) as e:
                print(f"fit_calibration: cannot read {path}: {e}", file=sys.stderr)
                return 2
            for key, samples in loaded.items():
                sets.setdefault(key, []).extend((*s[:4], s[4] + index * FILE_GAMES) for s in samples)
        wanted = set(args.players.split(","))
        sets = {k: v for k, v in sets.items() if k.split("|")[0] in wanted}
    else:
        for players in (int(p) for p in args.players.split(",")):
            for opponent in args.tune.split(","):
                for budget in budgets:
                    sets[f"{players}|fit|{opponent}|{budget}"] = collect(
                        players, opponent, budget, args.deals, args.base, args.workers, args.all_sides, args.fitted
                    )
            for opponent in args.held_out.split(","):
                sets[f"{players}|held|{opponent}|{args.held_out_budget}"] = collect(
                    players, opponent, args.held_out_budget, args.deals, args.base + HELD_OUT_BASE, args.workers,
                    args.all_sides, args.fitted,
                )
            print(f"collected {players} players, {time.perf_counter() - started:.0f} s", flush=True)
        if args.save:
            args.save.write_text(json.dumps(sets))
    stars: dict[str, list[bool]] | None = None
    if args.by_sides:
        if len(args.by_sides) != (len(args.load) if args.load else 1):
            print("fit_calibration: --by-sides needs one base per --load file", file=sys.stderr)
            return 2
        rules_of = {key: [sample_rules(key, s, args.by_sides) for s in samples] for key, samples in sets.items()}
        stars = {key: [r.sides[Kind.STAR] is Side.B for r in rules] for key, rules in rules_of.items()}
    identity = WinCalibration.identity().coefficients[0]
    in_use = models(args.fitted).win_calibration
    rows = [identity] * 4
    for players in sorted({int(k.split("|")[0]) for k in sets}):
        mine = {k.split("|", 1)[1]: v for k, v in sets.items() if int(k.split("|")[0]) == players}
        star_b = {k.split("|", 1)[1]: v for k, v in stars.items() if int(k.split("|")[0]) == players} if stars else {}
        tune = args.tune.split(",")
        fitting = [k for k in mine if k.split("|")[1] in tune]   # loaded: whatever role a file gave it
        fit_samples = [s for k in fitting for s in mine[k]]
        if not fit_samples:
            print(f"fit_calibration: no decisions of {args.tune} at {players} players to fit", file=sys.stderr)
            return 2
        row = fit_row(fit_samples, players, stage=not args.no_stage,
                      stars=[b for k in fitting for b in star_b[k]] if star_b else None)
        rows[players - 2] = row
        coeffs = [identity] * 4
        coeffs[players - 2] = row
        fitted = WinCalibration(tuple(coeffs))
        terms = " ".join(f"{name}={v:.4f}" for name, v in zip("abcdef", row, strict=True))
        print(f"{players} players: {terms}  ({len(fit_samples)} decisions in the fit)")
        for key, samples in sorted(mine.items()):
            _kind, opponent, budget = key.split("|")
            name = f"{'' if key in fitting else 'held out '}{opponent} {int(budget) // 1000}k"
            print(report(f"{name}, raw", samples, None, players))
            if in_use is not None:
                print(report(f"{name}, map in use", samples, in_use, players, star_b.get(key)))
            print(report(f"{name}, calibrated", samples, fitted, players, star_b.get(key)))
        sys.stdout.flush()
    print("win_calibration rows:", tuple(tuple(round(v, 4) for v in r) for r in rows))
    if args.by_sides:
        print(by_sides_report(sets, rules_of, {"map in use": in_use, "calibrated": WinCalibration(tuple(rows))}))
    if args.write is not None:
        fitted_counts = sorted({int(k.split("|")[0]) for k in sets})
        try:
            models(args.fitted).refit(
                "win_calibration", "python " + " ".join(sys.argv), fitted_counts,
                win_calibration=[tuple(round(v, 4) for v in r) for r in rows],
            ).save(args.write)
        except OutputWriteError as error:
            print(f"fit_calibration: {error}", file=sys.stderr)
            return 2
    print(f"wall time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
