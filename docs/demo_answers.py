#!/usr/bin/env python3
"""The answers a scripted player types in a whole game of ``csl play``, one per line.

For the README's terminal session of a whole game: it sets up the table ``csl play
--players N --ai SPEC --seed S`` sets up (you at seat 0), lets the heuristic agent choose
each of your decisions, and prints them in the notation the prompt reads. Cards you must
play are not printed: ``csl play`` plays them for you.

    python docs/demo_answers.py --players 2 --ai ismcts:fast --seed 5 \\
        | csl play --players 2 --ai ismcts:fast --seed 5
"""

from __future__ import annotations

import argparse

from csl_ai.heuristic import HeuristicAgent
from csl_ai.moves import Allocate, Declare, Play
from csl_ai.notation import card_str, format_piles
from csl_ai.session import Table, TableOptions


def answers(players: int, ai: str, seed: int) -> list[str]:
    """Your typed answers, in order, for the whole game."""
    table = Table.new(TableOptions(players=players, humans=(0,), ai=ai, seed=seed))
    you = HeuristicAgent(seed)
    typed: list[str] = []
    while not table.game.is_over:
        if table.ai_step() is not None:
            continue
        forced = table.forced_move()
        if forced is not None:
            table.play(forced)
            continue
        move = you.act(table.game.observation(0))
        if isinstance(move, Allocate):
            typed.append(format_piles(move.piles))
        elif isinstance(move, Declare):
            typed.append("yes" if move.good_weather else "no")
        else:
            assert isinstance(move, Play)
            typed.append(card_str(move.card))
        table.play(move)
    return typed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--ai", default="ismcts:fast")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    print("\n".join(answers(args.players, args.ai, args.seed)))


if __name__ == "__main__":
    main()
