"""What an iteration is worth, without playing games: budgets scored against a reference.

Plays a few games among heuristic bots and keeps every decision of seat 0 with a choice
(card plays and good-weather bets; allocations have too many candidates for one reference
search to rank them all). Each is searched once by a reference search with a large budget,
whose mean utility per move is taken as the truth of the search's own model; then each
budget under test searches it with other seeds, and the script prints the mean loss of the
move it chose (the reference's best mean utility minus that of the chosen move, in
thousandths of a win) with a 95% interval, and how often it chose the reference's best.

It measures how fast the search converges on its own model, not how good the model is:
a change of the model needs games (tune_search.py). A few minutes where an 800-game run
takes eight.

Usage:
  python benchmarks/decision_proxy.py                                   # 3k, 10k, 30k
  python benchmarks/decision_proxy.py --budgets 10000 --config '{"exploration":1.0}'
  python benchmarks/decision_proxy.py --budgets 15000 --config '{}' --config '{"mixture_reuse":8}'

With several --config, every row after the first also prints its difference from the first
config's row at the same budget, paired by decision and seed (the same searches' seeds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout import put_checkout_on_path  # noqa: E402

put_checkout_on_path()

from csl_ai.agents import HeuristicAgent, play_game  # noqa: E402
from csl_ai.game import Observation, Phase  # noqa: E402
from csl_ai.moves import Move  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402
from csl_ai.search import SearchConfig, SearchLimit, search


class Recorder(HeuristicAgent):
    """The heuristic agent, keeping every observation it decides on."""

    def __init__(self, seed: int, out: list[Observation]) -> None:
        super().__init__(seed)
        self.out = out

    def act(self, obs: Observation) -> Move:
        self.out.append(obs)
        return super().act(obs)


def positions(players: int, games: int, base: int) -> list[Observation]:
    """Seat 0's decisions with a choice, allocations left out."""
    seen: list[Observation] = []
    for g in range(games):
        agents = [Recorder(base + g, seen)] + [HeuristicAgent(base * 7 + g * 5 + s) for s in range(1, players)]
        play_game(RulesConfig(players=players), agents, base + g)
    return [o for o in seen if o.phase is not Phase.ALLOCATE and len(o.legal_moves()) > 1]


def _interval(values: list[float]) -> str:
    """The mean in thousandths with its 95% interval."""
    mean = statistics.mean(values)
    half = 1.96 * statistics.stdev(values) / len(values) ** 0.5
    return f"{1000 * mean:.2f} ({1000 * (mean - half):.2f}..{1000 * (mean + half):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=12)
    parser.add_argument("--base", type=int, default=4242)
    parser.add_argument("--reference", type=int, default=200_000, help="the reference search's iterations")
    parser.add_argument("--budgets", default="3000,10000,30000")
    parser.add_argument("--seeds", type=int, default=2, help="searches per decision and budget")
    parser.add_argument("--config", action="append", default=None,
                        help="SearchConfig fields as JSON for the budgets under test (repeat to compare)")
    a = parser.parse_args()
    texts = a.config or ["{}"]
    try:
        configs = [SearchConfig(**json.loads(text)) for text in texts]
    except (ValueError, TypeError) as e:
        parser.error(f"--config: {e}")
    started = time.perf_counter()
    decisions = positions(a.players, a.games, a.base)
    reference = []
    for i, obs in enumerate(decisions):
        result = search(obs, SearchLimit(iterations=a.reference, seed=99 + i))
        reference.append({m.move: m.mean_utility for m in result.moves})
    print(f"{len(decisions)} decisions ({a.players} players, {a.games} games, base {a.base}); "
          f"reference {a.reference:,} iterations, {time.perf_counter() - started:.0f} s")
    for budget in (int(b) for b in a.budgets.split(",")):
        first: list[float] = []
        for text, config in zip(texts, configs):
            losses: list[float] = []
            best_chosen = 0
            cpu = time.process_time()
            for i, obs in enumerate(decisions):
                best = max(reference[i].values())
                for s in range(a.seeds):
                    move = search(obs, SearchLimit(iterations=budget, seed=1000 * s + i), config).best_move
                    loss = best - reference[i][move]
                    losses.append(loss)
                    best_chosen += loss == 0.0
            print(f"config {text} {budget:,} iterations: loss {_interval(losses)} thousandths of a win a "
                  f"decision, best move {best_chosen / len(losses):.1%}, {time.process_time() - cpu:.1f} s CPU")
            if not first:
                first = losses
            else:
                print(f"    minus the first config's: {_interval([x - y for x, y in zip(losses, first)])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
