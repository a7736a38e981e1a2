"""The rule-based player, `HeuristicAgent`: the hand evaluation of `csl_ai.evaluation`
with a seeded choice of split, the good-weather bet, and cheap rules for card play.

It reads only its own observation (see `HeuristicAgent`). `csl_ai.agents` re-exports
the agent; the zoo's styles (`csl_ai.zoo`) are subclasses that each change one decision.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

import numpy as np

from csl_ai.errors import CslError
from csl_ai.evaluation import (
    DEFAULT_PARAMS,
    HandEvaluator,
    HeuristicParams,
    SeatTable,
    higher_same,
    split_piles,
)
from csl_ai.game import Observation, Phase
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import BLUE, MAX_RANK, N_RAIN, cards_of


def no_decision(agent: str, obs: Observation) -> CslError:
    """The error an agent raises when its seat has nothing to decide."""
    return CslError(
        f"agent {agent!r} has no move to make: seat {obs.seat} is not to decide in the "
        f"{obs.phase.value} phase"
    )


def _colour(card: int) -> int:
    return card // MAX_RANK


def strength_key(card: int) -> tuple[int, int]:
    """Play strength order: any red or green below any blue, then by rank."""
    return (1 if card < MAX_RANK else 0, card % MAX_RANK)


_STRENGTH: Final = tuple(
    (MAX_RANK if card < MAX_RANK else 0) + card % MAX_RANK for card in range(N_RAIN)
)
"""`strength_key` as one int per card, in the same order (min and max by it pick the same
cards)."""
_strength: Final = _STRENGTH.__getitem__

_PLAYS: Final = tuple(Play(card) for card in range(N_RAIN))
"""One shared (immutable) Play per rain card."""

_BLUE_CARDS: Final = ((1 << MAX_RANK) - 1) << (MAX_RANK * BLUE)
"""The mask of the blue cards."""


class HeuristicAgent(HandEvaluator):
    """A fast rule-based player that uses only its observation.

    - Values and plans come from the `HandEvaluator` it extends (sky cards in points
      from the seat's tallies, every split of the hand scored for normal play and for
      losing every trick); a style overrides its methods to value differently.
    - Allocation: the best-scored split, ties broken by a seeded noise; the
      good-weather plan's best split when it beats normal play by ``weather_margin``.
    - Good weather is declared when the piles are weak enough that the expected +7
      beats normal play; a declarer then plays to lose every trick.
    - Cheap follows: win a wanted sky card with the cheapest card likely to hold, else
      play low; shed the highest card that does not win when the sky card is unwanted.
    """

    name: str = "heuristic"

    def __init__(self, seed: int | None = None, params: HeuristicParams = DEFAULT_PARAMS) -> None:
        super().__init__(params)
        self.seed = seed
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> Move:
        """This seat's move; a play with a single legal card is made without evaluation."""
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            table = self.table(obs)
            return Allocate.trusted(self._allocate(table)[0])
        if phase is Phase.WEATHER and obs.current.declarations[obs.seat] is None:
            table = self.table(obs)
            allocation = obs.allocation
            if allocation is None:
                raise no_decision(self.name, obs)
            normal, weather = self.plan_values(table, allocation)
            return Declare(weather > normal + self.params.weather_margin)
        if phase is Phase.PLAY and obs.to_move == obs.seat:
            legal = obs.public_view().core.legal_plays()
            if legal and not legal & (legal - 1):
                return _PLAYS[legal.bit_length() - 1]
            return _PLAYS[self._play(self.table(obs))]
        raise no_decision(self.name, obs)

    def _allocate(self, table: SeatTable) -> tuple[tuple[int, ...], bool]:
        """The best split of the hand, and whether it is the good-weather plan."""
        p = self.params
        worth, weather = self.split_values(table)
        stream = np.random.PCG64(np.random.SeedSequence(self._rng.getrandbits(64)))
        noise = np.random.Generator(stream).random(len(worth)) * 1e-6
        normal = int((worth + noise).argmax())
        safe = int((weather + noise).argmax())
        if weather[safe] > worth[normal] + p.weather_margin:
            chosen, is_weather = safe, True
        else:
            chosen, is_weather = normal, False
        return split_piles(table.obs, chosen), is_weather

    # --- card play --------------------------------------------------------------------
    def _play(self, table: SeatTable) -> int:
        """The card to play at the table's trick."""
        p = self.params
        obs = table.obs
        core = table.view.core
        seat = obs.seat
        n = obs.players
        legal = cards_of(core.legal_plays())
        if len(legal) == 1:
            return legal[0]
        current = obs.current
        trick = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None
        plays = [card for _, card in trick.plays] if trick is not None else []
        group = core.group
        spec = obs.rules.spec
        end = sum(spec.group_sizes[: group + 1])
        pos = core.line_pos
        value = self.won_value(table, current.line[pos])
        later = current.line[pos + 1 : end]

        def later_wanted() -> bool:
            """Whether a later sky card of the group is wanted."""
            return any(self.won_value(table, sky) > 0 for sky in later)

        pool = spec.rain_cards & ~obs.hand & ~core.played
        later_seats = [(seat + i) % n for i in range(1, n - len(plays))]
        hidden = sum(table.view.hidden_counts[s][group] for s in later_seats)
        share = min(1.0, hidden / max(1, pool.bit_count()))
        led = _colour(plays[0]) if plays else -1
        best = trick_best(plays)

        def hold(card: int) -> float:
            """Chance no later seat beats card (if it is winning now)."""
            if not later_seats:
                return 1.0
            higher = higher_same(card, pool)
            beaten_by_colour = float((1 - share) ** higher)
            if _colour(card) == BLUE:
                return beaten_by_colour
            blues = (pool & _BLUE_CARDS).bit_count()
            return beaten_by_colour * float((1 - share * p.void_chance) ** blues)

        if best is None:
            winners, losers = legal, []
        else:
            winners = [c for c in legal if beats(c, best, led)]
            losers = [c for c in legal if c not in winners]
        if value > 0:
            if not plays:
                chances = {c: hold(c) for c in legal}
                top = max(chances.values())
                if top < p.lead_min and later_wanted():
                    return min(legal, key=_strength)
                return min((c for c in legal if chances[c] >= top - 0.05), key=_strength)
            if winners:
                if not later_seats:
                    return min(winners, key=_strength)
                chances = {c: hold(c) for c in winners}
                safe = [c for c in winners if chances[c] >= p.hold_ok]
                if safe:
                    return min(safe, key=_strength)
                return max(winners, key=lambda c: (chances[c], _STRENGTH[c]))
            return min(legal, key=_strength) if later_wanted() else max(legal, key=_strength)
        if losers:
            return min(losers, key=_strength) if later_wanted() else max(losers, key=_strength)
        if not later_seats:
            return max(legal, key=_strength)
        return min(legal, key=lambda c: (hold(c), _STRENGTH[c]))


def trick_best(plays: Sequence[int]) -> int | None:
    """The card winning a trick so far (plays in order; blue trumps the led colour), None
    before the lead."""
    if not plays:
        return None
    blues = [c for c in plays if _colour(c) == BLUE]
    if blues:
        return max(blues)
    led = _colour(plays[0])
    return max(c for c in plays if _colour(c) == led)


def beats(card: int, best: int, led: int) -> bool:
    """Whether card, played now, would take the trick from best (of `trick_best`) in a
    trick led in colour led."""
    if _colour(card) == BLUE:
        return _colour(best) != BLUE or card > best
    return _colour(best) != BLUE and _colour(card) == led and card > best


__all__: Sequence[str] = (
    "HeuristicAgent",
    "beats",
    "no_decision",
    "strength_key",
    "trick_best",
)
