"""Fit the bet model behind SearchConfig.bet_danger_centre / bet_danger_scale.

Plays self-play games of one or more rule-based agents, records for every seat and round
the rules' hand danger (csrc/search.pxi hand_danger_s, with the search's weather_blue and
weather_power) and whether the seat bet on good weather, and fits
P(bet) = 1 / (1 + exp((danger - centre) / scale)) per player count by Newton's method.

Usage:
  python benchmarks/fit_bet_model.py                       # the heuristic agent, 60 games per count
  python benchmarks/fit_bet_model.py --agents heuristic,zoo:bettor --games 100
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from csl_ai.agents import make_agent, play_game  # noqa: E402
from csl_ai.notation import card_colour, card_rank  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.search import SearchConfig  # noqa: E402


def danger(hand: int, ranks: int, config: SearchConfig) -> float:
    total = 0.0
    for card in range(64):
        if (hand >> card) & 1:
            r = card_rank(card) / ranks
            total += config.weather_blue + r if card_colour(card) == 0 else r**config.weather_power
    return total


def fit_logistic(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(centre, scale) of the decreasing logistic that fits y (0/1) on x."""
    a = np.c_[np.ones_like(x), x]
    w = np.zeros(2)
    for _ in range(100):
        p = 1 / (1 + np.exp(-a @ w))
        h = a.T @ (a * (p * (1 - p))[:, None]) + 1e-6 * np.eye(2)
        w += np.linalg.solve(h, a.T @ (y - p))
    return -w[0] / w[1], -1 / w[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", default="heuristic", help="comma-separated agent specs, seated in turn")
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--base", type=int, default=1000)
    args = parser.parse_args()
    specs = args.agents.split(",")
    config = SearchConfig()
    for players in (2, 3, 4, 5):
        rules = RulesConfig(players=players)
        xs, ys = [], []
        for g in range(args.games):
            agents = [make_agent(specs[(g + s) % len(specs)], g * 10 + s) for s in range(players)]
            game = play_game(rules, agents, args.base + g)
            for r in game.rounds:
                for s in range(players):
                    xs.append(danger(r.hands[s] or 0, rules.spec.ranks, config))
                    ys.append(bool(r.declarations[s]))
        x, y = np.array(xs), np.array(ys, dtype=float)
        line = f"{players} players: {len(x)} seat-rounds, bets in {y.mean():.1%}"
        if 0 < y.sum() < len(y):
            centre, scale = fit_logistic(x, y)
            line += f"; fit centre {centre:.2f}, scale {scale:.2f}"
        else:
            line += "; no fit (no bet, or only bets)"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
