"""Fit the learned value of a round boundary (csl_ai.value) to games of sensible players.

Plays GAMES games per player count with every seat drawn from the tuning bots (heuristic
and zoo:cautious; the other zoo bots stay held out), half of them on the default scoring
and half on random sides and star option, keeps every seat's value features at the start
of each round after the first with the seats' final win shares, and fits one softmax per
player count and rounds left. Prints, per fit, the held-out cross-entropy (the last fifth
of the games) against a uniform guess and a fit on the points alone, then the final
points' error of the points line against the points now plus their mean gain, then the
weights in the shape of the value model's tables (csl_ai/data/value_model.json);
`--write csl_ai/data` writes them into the shipped file, naming the command.

`--seats league --all-sides` fits on issue 36's league instead (csl_ai.tournament.league,
which `csl train --model value` plays and fits on the Ray harness, with the split features
at every player count): the tuning bots, the zoo's star hunter, style bots (csl_ai/style.py,
built from the scoring, the default and knobs drawn at random) and the saved exploiters,
every game on sides drawn from all 16 and either star option.

`--seats` draws the seats from other agents instead, so the value can be fitted to the
search's own games (expert iteration; with two seats of `ismcts:iters=3000` such fits
played 1–2 points below the shipped value at 2 and 4 players, within the noise:
docs/tuning.md, sixteenth session); `--rows FILE` keeps the games' rows so a refit
(another `--split-players`) needs no replay.

The split features (what a random split of the sky cards still to come would give each
seat) explain the bots' games better at every player count (4 players, one round left:
1.169 nats with the tallies alone, 1.131 with them), but only heads-up did the search
gain from them (docs/tuning.md, fifteenth session), so by default only the 2-player
weights printed use them; the others are the fit on the tallies alone, with zero weight
on the split features.

Run: python benchmarks/fit_value_model.py [--games 20000] [--players 2 3 4 5] [--workers 2]
     [--split-players 2] [--seats SPEC ... | league] [--all-sides] [--rows FILE]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
import zipfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from csl_ai.errors import OutputWriteError  # noqa: E402
from csl_ai.search.fitted import FittedModels, model_folder  # noqa: E402
from csl_ai.tournament.league import LEAGUE, RANDOM_STYLE, BoundaryRow, check_seats, game_seed, league_game  # noqa: E402
from csl_ai.tournament.runner import TournamentError  # noqa: E402
from csl_ai.value import VALUE_FEATURES, fit_points, fit_value, log_loss, points_rmse  # noqa: E402

TUNING_BOTS = ("heuristic", "zoo:cautious")
TALLY_FEATURES = VALUE_FEATURES.index("split_candy")
"""The features before the random split of the cards to come (the fourteenth session's value)."""


def play(task: tuple[int, int, tuple[str, ...], bool]) -> list[BoundaryRow]:
    """One game (csl_ai.tournament.league.league_game): the rows of each later round's start."""
    return league_game(*task)


class RowsFileError(Exception):
    """A --rows file that cannot be read, or that holds other games than asked for."""


def save_rows(path: Path, games: list[list[BoundaryRow]], played: dict) -> None:
    """Write the games' rows as flat arrays (game index, rounds left, features, shares,
    points), with PLAYED (what made them) so a later run cannot mistake them for others."""
    flat = [(index, *row) for index, rows in enumerate(games) for row in rows]
    np.savez_compressed(
        path,
        played=np.array(json.dumps(played, sort_keys=True)),
        game=np.array([row[0] for row in flat]),
        left=np.array([row[1] for row in flat]),
        features=np.stack([row[2] for row in flat]),
        shares=np.stack([row[3] for row in flat]),
        points=np.stack([row[4] for row in flat]),
        games=np.array(len(games)),
    )


def load_rows(path: Path, played: dict) -> list[list[BoundaryRow]]:
    """The games save_rows wrote, in their order; RowsFileError unless they were played as PLAYED."""
    try:
        with np.load(path) as data:
            kept = json.loads(str(data["played"]))
            columns = [data[name] for name in ("game", "left", "features", "shares", "points")]
            count = int(data["games"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise RowsFileError(f"cannot read rows file {path}: {error}") from None
    if kept != played:
        raise RowsFileError(f"rows file {path} holds games played as {kept}, not {played}: give another --rows")
    games: list[list[BoundaryRow]] = [[] for _ in range(count)]
    for index, left, f, shares, points in zip(*columns):
        games[int(index)].append((int(left), f, shares, points))
    return games


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 5])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--l2", type=float, default=1e-3)
    parser.add_argument(
        "--split-players", type=int, nargs="*", default=[2],
        help="player counts whose printed weights use the split features (the others: the "
        "tallies alone, zero weight on split_*; default 2, as shipped)",
    )
    parser.add_argument(
        "--seats", nargs="+", default=list(TUNING_BOTS),
        help="agent specs each seat is drawn from, uniformly (repeat one to weight it; "
        f"{RANDOM_STYLE} draws a style's knobs; 'league' for {', '.join(LEAGUE)}; "
        "default: the tuning bots)",
    )
    parser.add_argument(
        "--all-sides", action="store_true",
        help="draw the sides and star option of every game from all 32 (default: half the "
        "games on the default scoring)",
    )
    parser.add_argument(
        "--rows", help="file that keeps the played games' rows ({players} is replaced by the "
        "player count): read when it exists, written otherwise, so a refit needs no replay",
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
            print(f"fit_value_model: {error}", file=sys.stderr)
            return 2
    if args.seats == ["league"]:
        args.seats = list(LEAGUE)
    try:
        check_seats(args.seats)
    except TournamentError as error:
        print(f"fit_value_model: {error}", file=sys.stderr)
        return 2
    try:
        table = fit_all(args)
    except RowsFileError as error:
        print(f"fit_value_model: {error}", file=sys.stderr)
        return 2
    if args.write is not None:
        try:
            value = [next((row[1] for row in table if row[0] == p), None) for p in range(2, 6)]
            points = [next((row[2] for row in table if row[0] == p), None) for p in range(2, 6)]
            FittedModels.shipped().refit(
                "value", "python " + " ".join(sys.argv), [row[0] for row in table],
                value_weights=value, value_points_weights=points,
            ).save(args.write)
        except OutputWriteError as error:
            print(f"fit_value_model: {error}", file=sys.stderr)
            return 2
    print("features:", ", ".join(VALUE_FEATURES))
    for name, column in (("value_weights", 1), ("value_points_weights", 2)):
        print(f"{name} = (")
        for row in table:
            print(f"    (  # {row[0]} players, by rounds left")
            for w in row[column]:
                print(f"        {w},")
            print("    ),")
        print(")")
    return 0


def fit_all(args: argparse.Namespace) -> list[tuple[int, list, list]]:
    """Play (or read) each player count's games, print the fits' held-out figures, and
    return (players, value weights, points weights by rounds left) per player count."""
    table = []
    for players in args.players:
        started = time.time()
        cache = None if args.rows is None else Path(args.rows.replace("{players}", str(players)))
        played = {"players": players, "games": args.games, "seed": args.seed, "seats": list(args.seats)}
        if args.all_sides:
            played["all_sides"] = True
        if cache is not None and cache.exists():
            games = load_rows(cache, played)
        else:
            seeds = (game_seed(args.seed, players, g) for g in range(args.games))
            tasks = [(players, seed, tuple(args.seats), args.all_sides) for seed in seeds]
            with multiprocessing.Pool(args.workers) as pool:
                games = pool.map(play, tasks, chunksize=16)
            if cache is not None:
                save_rows(cache, games, played)
        held = int(len(games) * 0.8)
        by_left: dict[int, dict[str, list]] = {}
        for index, rows in enumerate(games):
            part = "fit" if index < held else "test"
            for left, f, shares, points in rows:
                slot = by_left.setdefault(left, {"fit": [], "test": []})
                slot[part].append((f, shares, points))
        print(f"{players} players: {args.games} games in {time.time() - started:.0f} s")
        weights, points_weights = [], []
        for left in sorted(by_left):
            fit_f, fit_y, fit_p = (np.stack(column) for column in zip(*by_left[left]["fit"]))
            test_f, test_y, test_p = (np.stack(column) for column in zip(*by_left[left]["test"]))
            w = fit_value(fit_f, fit_y, args.l2)
            pw = fit_points(fit_f, fit_p, args.l2)
            now = test_f[:, :, 0] * 10
            drift = float(np.mean(fit_p - fit_f[:, :, 0] * 10))
            points = fit_value(fit_f[:, :, :1], fit_y, args.l2)
            tallies = fit_value(fit_f[:, :, :TALLY_FEATURES], fit_y, args.l2)
            tallies_pw = fit_points(fit_f[:, :, :TALLY_FEATURES], fit_p, args.l2)
            uniform = float(np.log(players))
            print(
                f"  {left} rounds left: {len(fit_f)} fit / {len(test_f)} held out; held-out nats: "
                f"uniform {uniform:.4f}, points {log_loss(test_f[:, :, :1], test_y, points):.4f}, "
                f"tallies alone {log_loss(test_f[:, :, :TALLY_FEATURES], test_y, tallies):.4f}, "
                f"value {log_loss(test_f, test_y, w):.4f}; final points' held-out RMSE: "
                f"points now + mean gain {float(np.sqrt(np.mean((now + drift - test_p) ** 2))):.2f}, "
                f"tallies alone {points_rmse(test_f[:, :, :TALLY_FEATURES], test_p, tallies_pw):.2f}, "
                f"value {points_rmse(test_f, test_p, pw):.2f}"
            )
            if players not in args.split_players:
                pad = np.zeros(len(VALUE_FEATURES) - TALLY_FEATURES)
                w, pw = np.concatenate([tallies, pad]), np.concatenate([tallies_pw, pad])
            weights.append(tuple(round(float(x), 4) for x in w))
            points_weights.append(tuple(round(float(x), 3) for x in pw))
        table.append((players, weights, points_weights))
    return table


if __name__ == "__main__":
    raise SystemExit(main())
