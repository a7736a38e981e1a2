"""The zoo: rule-based bots of distinct styles, for testing the search on opponents it
was not tuned on.

Each bot is a `HeuristicAgent` that changes only the decision that defines its style, so
the hand evaluation has one home (`csl_ai.evaluation`):

- ``zoo:cautious``: bets good weather only on a very weak hand, ducks sky cards of little
  worth, and sheds its highest losing card whenever it does not want a trick;
- ``zoo:leopards``: values leopards (and spiders, less) far above their points, so its
  strong cards go to the groups holding them, and fights for every leopard it wants;
- ``zoo:stars``: chases all three shooting stars while they are within reach, with its
  strongest cards in the star groups, and fights for every star;
- ``zoo:trumps``: puts its blues in the most valuable group and spends a blue only on a
  trick worth it and worth at least any later one of the group;
- ``zoo:bettor``: bets good weather unless its hand is clearly strong, then plays to lose
  every trick (as the heuristic does after a bet).

`make_agent` builds them from ``zoo:NAME`` (`ZOO_SPECS`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import ClassVar, Final

import numpy as np

from csl_ai.evaluation import (
    DEFAULT_PARAMS,
    HeuristicParams,
    SeatTable,
    kind_points_table,
    split_table,
)
from csl_ai.heuristic import HeuristicAgent, beats, strength_key, trick_best
from csl_ai.notation import BLUE, card_colour, cards_of
from csl_ai.rules import Kind, SkyCard


@dataclass(frozen=True)
class _TrickNow:
    """The trick a seat is to play to, as the style rules need it."""

    legal: list[int]
    winners: list[int]
    """Legal cards that would be taking the trick if played now (all of them on a lead)."""
    losers: list[int]
    sky: int
    later_in_group: tuple[int, ...]
    """Sky cards of the same group still to be played for after this one."""


def _trick_now(table: SeatTable) -> _TrickNow:
    obs = table.obs
    core = table.view.core
    current = obs.current
    trick = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None
    plays = [card for _, card in trick.plays] if trick is not None else []
    best = trick_best(plays)
    led = card_colour(plays[0]) if plays else -1
    legal = cards_of(core.legal_plays())
    winners = [c for c in legal if best is None or beats(c, best, led)]
    end = sum(obs.rules.spec.group_sizes[: core.group + 1])
    pos = core.line_pos
    return _TrickNow(
        legal=legal,
        winners=winners,
        losers=[c for c in legal if c not in winners],
        sky=current.line[pos],
        later_in_group=tuple(current.line[pos + 1 : end]),
    )


CAUTIOUS_PARAMS: Final = replace(DEFAULT_PARAMS, weather_margin=5.0, duck_share=0.8)
"""Bets need a 5-point edge; unwanted sky cards count mostly in full when planning."""


class CautiousAgent(HeuristicAgent):
    """Avoids risk: a good-weather bet only on a very weak hand (the bet must beat normal
    play by `CAUTIOUS_PARAMS.weather_margin` points), no fight for a sky card worth less
    than `little_worth`, and on any unwanted trick it sheds its highest losing card at
    once rather than keep it for a later trick of the group."""

    name: str = "zoo:cautious"
    little_worth: ClassVar[float] = 2.0

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, CAUTIOUS_PARAMS)

    def won_value(self, table: SeatTable, sky: int) -> float:
        return super().won_value(table, sky) - self.little_worth

    def _play(self, table: SeatTable) -> int:
        trick = _trick_now(table)
        if trick.losers and self.won_value(table, trick.sky) <= 0:
            return max(trick.losers, key=strength_key)
        return super()._play(table)


@dataclass(frozen=True)
class KindCraving:
    """How a hunter revalues one kind of sky card while the hunt is on:
    ``scale * max(points, 0) + bonus`` per element, so a craved card is always wanted."""

    scale: float
    bonus: float


@cache
def _peak_count(kind: Kind, side: int) -> int:
    """The most elements of a spider or leopard side that still score its top points."""
    table = kind_points_table(kind, side)
    return max(n for n, points in enumerate(table) if points == max(table))


class _HunterAgent(HeuristicAgent):
    """A heuristic player that craves some kinds of sky card (`cravings`) while the hunt
    is on, and for the kinds in `fights_for` plays its strongest winning card to take
    one it wants. The hunt for spiders or leopards stops past the count of top points
    (6 leopards, 5 spiders), for stars once a rival holds one."""

    cravings: ClassVar[Mapping[Kind, KindCraving]] = {}
    fights_for: ClassVar[frozenset[Kind]] = frozenset()
    hunt_params: ClassVar[HeuristicParams] = DEFAULT_PARAMS

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, self.hunt_params)

    def _craves(self, table: SeatTable, card: SkyCard) -> bool:
        if card.kind not in self.cravings:
            return False
        have = table.elems[table.obs.seat][card.kind]
        if card.kind is Kind.STAR:
            return have + table.unclaimed_stars >= 3
        if card.kind in (Kind.SPIDER, Kind.LEOPARD):
            return have + card.count <= _peak_count(card.kind, table.sides[card.kind])
        return True

    def sky_value(self, table: SeatTable, sky: int) -> float:
        value = super().sky_value(table, sky)
        card = table.obs.rules.game_deck.cards[sky]
        if not self._craves(table, card):
            return value
        craving = self.cravings[card.kind]
        return craving.scale * max(value, 0.0) + craving.bonus * card.count

    def _play(self, table: SeatTable) -> int:
        trick = _trick_now(table)
        card = table.obs.rules.game_deck.cards[trick.sky]
        if (
            trick.winners
            and card.kind in self.fights_for
            and self._craves(table, card)
            and self.won_value(table, trick.sky) > 0
        ):
            return max(trick.winners, key=strength_key)
        return super()._play(table)


class LeopardHunterAgent(_HunterAgent):
    """Greedy leopard hunter: up to six leopards, a leopard is worth 2.5 times its
    expected points plus 4 per element (up to five spiders, a spider 1.5 times plus 1),
    so strong cards go to leopard groups, and it plays its strongest winner for one."""

    name: str = "zoo:leopards"
    cravings: ClassVar[Mapping[Kind, KindCraving]] = {
        Kind.LEOPARD: KindCraving(scale=2.5, bonus=4.0),
        Kind.SPIDER: KindCraving(scale=1.5, bonus=1.0),
    }
    fights_for: ClassVar[frozenset[Kind]] = frozenset({Kind.LEOPARD})


class StarHunterAgent(_HunterAgent):
    """Star hunter: while all three shooting stars are within its reach (no rival holds
    one), a star is worth twice the heuristic's value plus 10, the heuristic's chance of
    collecting each further star is raised to 0.6, and it plays its strongest winner for
    a star."""

    name: str = "zoo:stars"
    cravings: ClassVar[Mapping[Kind, KindCraving]] = {
        Kind.STAR: KindCraving(scale=2.0, bonus=10.0)
    }
    fights_for: ClassVar[frozenset[Kind]] = frozenset({Kind.STAR})
    hunt_params: ClassVar[HeuristicParams] = replace(DEFAULT_PARAMS, star_chance=0.6)


class TrumpHoarderAgent(HeuristicAgent):
    """Trump hoarder: the split that puts more blues in the most valuable group is worth
    `focus_bonus` points more per blue; in play a blue is spent only on a sky card worth
    at least `spend_at` and at least any later one of its group, else a red or green
    card goes instead."""

    name: str = "zoo:trumps"
    focus_bonus: ClassVar[float] = 3.0
    spend_at: ClassVar[float] = 4.0

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, DEFAULT_PARAMS)

    def split_values(self, table: SeatTable) -> tuple[np.ndarray, np.ndarray]:
        worth, weather = super().split_values(table)
        values = self.group_values(table)
        focus = max(range(len(values)), key=lambda g: sum(max(v, 0.0) for v in values[g]))
        size = table.obs.rules.spec.group_sizes[focus]
        blue = [card_colour(card) == BLUE for card in cards_of(table.obs.hand)]
        splits, combos = split_table(table.obs.rules.spec.group_sizes)
        blues = np.array([sum(1 for i in combo if blue[i]) for combo in combos[size]])
        return worth + self.focus_bonus * blues[splits[:, focus]], weather

    def _play(self, table: SeatTable) -> int:
        choice = super()._play(table)
        if card_colour(choice) != BLUE:
            return choice
        trick = _trick_now(table)
        sides = [c for c in trick.legal if card_colour(c) != BLUE]
        if not sides:
            return choice
        value = self.won_value(table, trick.sky)
        later = max((self.won_value(table, sky) for sky in trick.later_in_group), default=0.0)
        if value >= self.spend_at and value >= later:
            return choice
        return _side_card(sides, trick, wanted=value > 0)


def _side_card(sides: Sequence[int], trick: _TrickNow, *, wanted: bool) -> int:
    """The red or green card to play instead of a blue: the cheapest that wins a wanted
    trick, the highest that loses an unwanted one, else the lowest."""
    winners = [c for c in sides if c in trick.winners]
    losers = [c for c in sides if c not in trick.winners]
    if wanted and winners:
        return min(winners, key=strength_key)
    if not wanted and losers:
        return max(losers, key=strength_key)
    return min(sides, key=strength_key)


BETTOR_PARAMS: Final = replace(DEFAULT_PARAMS, weather_margin=-6.0)
"""Bets unless normal play is worth 6 points more than the bet."""


class BettorAgent(HeuristicAgent):
    """Bettor: declares good weather whenever the bet's worth comes within
    `BETTOR_PARAMS.weather_margin` points of normal play, i.e. unless the hand is clearly
    strong; a declarer plays to lose every trick and a non-declarer plays the heuristic."""

    name: str = "zoo:bettor"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed, BETTOR_PARAMS)


ZOO_AGENTS: Final[Mapping[str, type[HeuristicAgent]]] = {
    "cautious": CautiousAgent,
    "leopards": LeopardHunterAgent,
    "stars": StarHunterAgent,
    "trumps": TrumpHoarderAgent,
    "bettor": BettorAgent,
}
"""The zoo bots by name; the agent spec of each is ``zoo:NAME``."""

ZOO_SPECS: Final[tuple[str, ...]] = tuple(f"zoo:{name}" for name in ZOO_AGENTS)
"""The zoo's agent specs, in the order error messages list them."""


__all__: Sequence[str] = (
    "BETTOR_PARAMS",
    "CAUTIOUS_PARAMS",
    "ZOO_AGENTS",
    "ZOO_SPECS",
    "BettorAgent",
    "CautiousAgent",
    "KindCraving",
    "LeopardHunterAgent",
    "StarHunterAgent",
    "TrumpHoarderAgent",
)
