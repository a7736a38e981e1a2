"""Fit the learned value of a round boundary (csl_ai.value) to games of sensible players.

Plays GAMES games per player count with every seat drawn from the tuning bots (heuristic
and zoo:cautious; the other zoo bots stay held out), half of them on the default scoring
and half on random sides and star option, keeps every seat's value features at the start
of each round after the first with the seats' final win shares, and fits one softmax per
player count and rounds left. Prints, per fit, the held-out cross-entropy (the last fifth
of the games) against a uniform guess and a fit on the points alone, then the final
points' error of the points line against the points now plus their mean gain, then the
weights in the shape of SearchConfig.value_weights and value_points_weights.

The split features (what a random split of the sky cards still to come would give each
seat) explain the bots' games better at every player count (4 players, one round left:
1.169 nats with the tallies alone, 1.131 with them), but only heads-up did the search
gain from them (docs/tuning.md, fifteenth session), so by default only the 2-player
weights printed use them; the others are the fit on the tallies alone, with zero weight
on the split features.

Run: python benchmarks/fit_value_model.py [--games 20000] [--players 2 3 4 5] [--workers 2]
     [--split-players 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csl_ai.agents import make_agent  # noqa: E402
from csl_ai.game import Game  # noqa: E402
from csl_ai.rules import RulesConfig, Side, StarOption  # noqa: E402
from csl_ai.value import VALUE_FEATURES, boundary_features, fit_points, fit_value, log_loss, points_rmse  # noqa: E402

TUNING_BOTS = ("heuristic", "zoo:cautious")
TALLY_FEATURES = VALUE_FEATURES.index("split_candy")
"""The features before the random split of the cards to come (the fourteenth session's value)."""


def play(task: tuple[int, int]) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """One game: (rounds left, features (seats, F), final shares, final points) at each
    later round's start."""
    players, seed = task
    rng = random.Random(seed)
    if seed % 2:
        sides = tuple(rng.choice((Side.A, Side.B)) for _ in range(4))
        star = rng.choice(tuple(StarOption))
        rules = RulesConfig(players=players, sides=sides, star_option=star)  # type: ignore[arg-type]
    else:
        rules = RulesConfig(players=players)
    game = Game(rules, seed=seed)
    agents = [make_agent(rng.choice(TUNING_BOTS), rng.getrandbits(62)) for _ in range(players)]
    rows: list[tuple[int, np.ndarray]] = []
    seen = 0
    while not game.is_over:
        if game.round != seen:
            seen = game.round
            rows.append((game.core.n_rounds - seen, boundary_features(game.core)))
        seat = game.to_move
        game.apply(agents[seat].act(game.observation(seat)), seat)
    result = game.result()
    shares = np.array([result.win_share(s) for s in range(players)])
    points = np.array([float(line.total) for line in result.scores])
    return [(left, f, shares, points) for left, f in rows]


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
    args = parser.parse_args()
    table = []
    for players in args.players:
        started = time.time()
        tasks = [(players, args.seed * 10_000_000 + players * 1_000_000 + g) for g in range(args.games)]
        with multiprocessing.Pool(args.workers) as pool:
            games = pool.map(play, tasks, chunksize=64)
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


if __name__ == "__main__":
    raise SystemExit(main())
