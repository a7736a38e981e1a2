"""Candy Lab agents: players behind one interface, ``act(observation) -> move``.

An agent sees only its seat's `Observation` (its hand, the table, its own view of the
history) and answers with one of ``obs.legal_moves``. Two kinds:

- `RandomAgent`: uniform among the legal moves, from its own seeded generator (the floor
  every AI must clear);
- `HeuristicAgent`: greedy on points with some care about effects: it plays the order
  worth most now (order points, bar values, a fair price for each effect, the Golden
  Sugar when it wins), applies its effects in a sensible order (swap first so that what
  it draws or keeps is its own, draw last), takes the face-up card it can play at once,
  and when it cannot play returns the bar that costs least for the cards it brings.

`play_game` plays a whole game between agents and returns the finished `Game`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final, Protocol, runtime_checkable

from csl_ai.bits import bits
from csl_ai.candylab import core
from csl_ai.candylab.catalogue import Catalogue, Effect
from csl_ai.candylab.game import Game, Observation
from csl_ai.candylab.moves import (
    DRAW,
    FACE_DOWN,
    GIVE_BACK,
    NONE,
    PLAY,
    STOP,
    arg_a,
    arg_b,
    arg_c,
    kind,
)
from csl_ai.candylab.rules import GOLDEN_SUGAR, CandyLabRules
from csl_ai.candylab.state import DRAWING, EFFECTS, RETURNING
from csl_ai.errors import IllegalMoveError


@runtime_checkable
class Agent(Protocol):
    """A Candy Lab player: a name, and a move for each observation of its seat."""

    name: str

    def act(self, obs: Observation) -> int:
        """One of ``obs.legal_moves``."""
        ...


class RandomAgent:
    """Uniform among the legal moves; seeded, so a game between seeded agents replays."""

    def __init__(self, seed: int | None = None, name: str = "random") -> None:
        self.name = name
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> int:
        if not obs.legal_moves:
            raise IllegalMoveError(f"seat {obs.seat} has no move to make")
        return self._rng.choice(obs.legal_moves)


# What the heuristic believes things are worth, in points.
EFFECT_WORTH: Final = {
    Effect.NONE: 0.0,
    Effect.DRAW: 1.2,
    Effect.DISCARD_HAND: 0.5,
    Effect.RETURN_BAR: 0.0,  # priced by the bar it takes back (see _effect_worth)
    Effect.DISCARD_PLAYED: 0.0,  # priced by the card it discards
    Effect.SWAP_HANDS: 0.0,  # priced by the hand sizes
}
CARD_IN_HAND: Final = 1.2
"""Worth of one more card in hand (a swap's gain per card)."""
PLAYABLE_NOW: Final = 1.5
"""Extra worth of a drawn card that can be played on the belt as it is."""
FACE_DOWN_WORTH: Final = 1.6
"""Worth of the unknown top face-down card."""
SIZE_BONUS: Final = 0.3
"""Per bar asked beyond the first: long orders are easier early (the rulebook's tip)."""
EFFECT_ORDER: Final = (
    Effect.SWAP_HANDS,
    Effect.DISCARD_PLAYED,
    Effect.RETURN_BAR,
    Effect.DISCARD_HAND,
    Effect.DRAW,
)
"""Swap first (what it then draws stays its own), discard from hands after the swap,
draw last."""


class HeuristicAgent:
    """Greedy on points with some care about effects; deterministic."""

    def __init__(self, name: str = "heuristic") -> None:
        self.name = name

    def act(self, obs: Observation) -> int:
        moves = obs.legal_moves
        if not moves:
            raise IllegalMoveError(f"seat {obs.seat} has no move to make")
        if len(moves) == 1:
            return moves[0]
        if obs.phase == EFFECTS:
            return self._effect(obs, moves)
        if obs.phase == RETURNING:
            return self._returning(obs, moves)
        if obs.phase == DRAWING:
            return self._draw(obs, moves)
        plays = [m for m in moves if kind(m) == PLAY]
        if plays:
            return max(plays, key=lambda m: self.play_worth(obs, m))
        backs = [m for m in moves if kind(m) == GIVE_BACK]
        if backs:
            return max(backs, key=lambda m: self._give_back_worth(obs, m))
        return self._draw(obs, moves)

    # --- action A -------------------------------------------------------------------
    def play_worth(self, obs: Observation, move: int) -> float:
        """Points the play brings now, with a price on each effect."""
        cat = obs.rules.catalogue
        order, start = arg_a(move), arg_b(move)
        size = cat.order_len[order]
        run = obs.belt[start : start + size]
        worth = cat.order_points[order] + sum(cat.bar_value[b] for b in run)
        worth += SIZE_BONUS * (size - 1)
        if len(run) == len(obs.belt):
            mine = obs.scores[obs.seat] + worth - SIZE_BONUS * (size - 1) + GOLDEN_SUGAR
            best_other = max(s for p, s in enumerate(obs.scores) if p != obs.seat)
            return worth + GOLDEN_SUGAR + (100.0 if mine > best_other else -100.0)
        for b in run:
            worth += self._effect_worth(obs, cat, b)
        return worth

    def _effect_worth(self, obs: Observation, cat: Catalogue, bar: int) -> float:
        e = Effect(cat.bar_effect[bar])
        others = [p for p in range(obs.players) if p != obs.seat]
        if e is Effect.RETURN_BAR:
            values = [
                cat.bar_value[x]
                for p in others
                for x in bits(obs.bars[p])
                if cat.bar_colour[x] == cat.bar_colour[bar]
            ]
            return 0.8 * max(values, default=0)
        if e is Effect.DISCARD_PLAYED:
            tops = [cat.order_points[obs.stacks[p][-1]] for p in others if obs.stacks[p]]
            return 0.8 * max(tops, default=0)
        if e is Effect.SWAP_HANDS:
            mine = obs.hand_sizes[obs.seat] - 1
            sizes = [obs.hand_sizes[p] for p in others]
            if obs.players == 2:
                sizes.append(obs.third_hand_size)
            return 0.5 * CARD_IN_HAND * (max(sizes) - mine)
        if e is Effect.DISCARD_HAND and not any(obs.hand_sizes[p] for p in others):
            return 0.0
        return EFFECT_WORTH[e]

    # --- effects --------------------------------------------------------------------
    def _effect(self, obs: Observation, moves: Sequence[int]) -> int:
        cat = obs.rules.catalogue

        def rank(move: int) -> tuple[int, float]:
            e = Effect(cat.bar_effect[arg_a(move)])
            target = arg_b(move)
            if target == NONE:
                return (-1, 0.0)
            return (len(EFFECT_ORDER) - EFFECT_ORDER.index(e), self._target_worth(obs, e, move))

        return max(moves, key=rank)

    def _target_worth(self, obs: Observation, e: Effect, move: int) -> float:
        cat = obs.rules.catalogue
        target = arg_b(move)
        if e is Effect.DRAW:
            return self._source_worth(obs, target)
        if e is Effect.RETURN_BAR:
            owner = next(p for p in range(obs.players) if obs.bars[p] >> target & 1)
            end_bonus = 0.01 if arg_c(move) == 0 else 0.0
            return cat.bar_value[target] + 0.1 * obs.scores[owner] + end_bonus
        if e is Effect.DISCARD_PLAYED:
            return cat.order_points[obs.stacks[target][-1]] + 0.1 * obs.scores[target]
        if e is Effect.SWAP_HANDS:
            size = obs.third_hand_size if target == obs.players else obs.hand_sizes[target]
            return float(size)
        # discard from a hand: hurt the leader, then the biggest hand
        return obs.scores[target] + 0.1 * obs.hand_sizes[target]

    # --- action B and drawing ---------------------------------------------------------
    def _give_back_worth(self, obs: Observation, move: int) -> float:
        """Cards brought less points lost; a bar with no effect feeds the others least;
        an end where it completes a run for a card in hand is better."""
        cat = obs.rules.catalogue
        bar, end = arg_a(move), arg_b(move)
        value = cat.bar_value[bar]
        worth = value * (CARD_IN_HAND - 1.0) - 0.4 * (cat.bar_effect[bar] != Effect.NONE)
        belt = (bar, *obs.belt) if end == 0 else (*obs.belt, bar)
        if any(core.matching_starts(cat, c, belt) for c in bits(obs.hand)):
            worth += 1.0
        return worth

    def _returning(self, obs: Observation, moves: Sequence[int]) -> int:
        """Return one more bar only with an empty hand and fewer than 2 cards coming."""
        backs = [m for m in moves if kind(m) == GIVE_BACK]
        if backs and not obs.hand and obs.draws_left < 2:
            return max(backs, key=lambda m: self._give_back_worth(obs, m))
        return STOP

    def _source_worth(self, obs: Observation, source: int) -> float:
        if source == FACE_DOWN:
            return FACE_DOWN_WORTH
        cat = obs.rules.catalogue
        card = obs.face_up[source]
        worth = float(cat.order_points[card])
        if core.matching_starts(cat, card, obs.belt):
            worth += PLAYABLE_NOW
        return worth

    def _draw(self, obs: Observation, moves: Sequence[int]) -> int:
        draws = [m for m in moves if kind(m) == DRAW]
        return max(draws, key=lambda m: self._source_worth(obs, arg_a(m)))


def play_game(
    rules: CandyLabRules, agents: Sequence[Agent], seed: int | None = None
) -> Game:
    """Play a whole game from seed, each seat's agent acting on its own observation."""
    if len(agents) != rules.players:
        raise IllegalMoveError(f"agents: one per seat ({rules.players}), got {len(agents)}")
    game = Game(rules, seed=seed)
    while not game.is_over:
        seat = game.current
        game.play(agents[seat].act(game.observation(seat)))
    return game


__all__ = ["Agent", "HeuristicAgent", "RandomAgent", "play_game"]
