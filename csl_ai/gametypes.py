"""The values a game is told in, and the thin bridge to the C core that Game and Observation share.

- the value types: `Phase`, `Trick`, `RoundLog` (one round's history), `ScoreLine` and
  `GameResult`, with `COLOUR_NAMES` and `SCORE_COLUMNS`;
- the bridge to `csl_ai._core`: `sky_cards_for` and `new_core` build a C state for the
  rules, and the core's phase names, error codes and legal-play masks are read back as
  `Phase`, messages and `Move` lists.

`csl_ai.game` re-exports every public name here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from csl_ai import _core
from csl_ai.moves import Declare, Move, Play
from csl_ai.notation import N_RAIN, card_colour
from csl_ai.rules import RulesConfig, SkyCard, StarOption

COLOUR_NAMES = ("blue", "red", "green")
SCORE_COLUMNS: tuple[str, ...] = tuple(_core.SCORE_COLUMNS)


class Phase(str, Enum):
    """Where a game stands: waiting for a deal, allocating, betting, playing tricks, over."""

    DEAL = "deal"
    ALLOCATE = "allocate"
    WEATHER = "weather"
    PLAY = "play"
    OVER = "over"


@dataclass(frozen=True)
class Trick:
    """One trick: who led, the cards in play order, who won it and which sky card."""

    round: int
    index: int
    """Position of the trick's sky card in the round's line (0-based)."""
    group: int
    leader: int
    plays: tuple[tuple[int, int], ...]
    """(seat, card) in the order played."""
    winner: int | None = None
    """None while the trick is in progress."""
    sky: int | None = None
    """Sky card id won (the line's card at `index`)."""

    @property
    def led_colour(self) -> int | None:
        return card_colour(self.plays[0][1]) if self.plays else None

    @property
    def complete(self) -> bool:
        return self.winner is not None


@dataclass
class RoundLog:
    """Everything that happened in one round; hidden parts are None in an observation."""

    line: tuple[int, ...]
    """Sky card ids of the round's line, in order."""
    first_player: int
    hands: list[int | None]
    set_aside: int | None
    allocations: list[tuple[int, ...] | None]
    declarations: list[bool | None]
    tricks: list[Trick] = field(default_factory=list)


@dataclass(frozen=True)
class ScoreLine:
    """One seat's final score, kind by kind (RULES.md §4)."""

    candy: int
    spider: int
    leopard: int
    star: int
    good_weather: int
    face_down: int
    total: int

    def as_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in SCORE_COLUMNS}


@dataclass(frozen=True)
class GameResult:
    """Final scores and winners; more than one winner is a shared win."""

    scores: tuple[ScoreLine, ...]
    winners: tuple[int, ...]
    outright: int | None
    """The seat that won outright with 3 shooting stars on side B, if any."""

    def win_share(self, seat: int) -> float:
        """1 for a sole win, 1/k for a win shared by k, else 0."""
        return 1.0 / len(self.winners) if seat in self.winners else 0.0


# --- the C core's side ---------------------------------------------------------------
_PHASES: dict[str, Phase] = {phase.value: phase for phase in Phase}
"""Phase by the core's phase name (a dict lookup is cheaper than calling the Enum)."""

_PLAYS: tuple[Play, ...] = tuple(Play(card) for card in range(N_RAIN))
"""One shared (immutable) Play per rain card, so listing legal plays builds no moves."""

_DECLARES: tuple[Declare, Declare] = (Declare(False), Declare(True))


def _play_moves(mask: int) -> list[Move]:
    """The Play of each card of mask, ascending."""
    moves: list[Move] = []
    while mask:
        low = mask & -mask
        moves.append(_PLAYS[low.bit_length() - 1])
        mask ^= low
    return moves


_ERRORS = {
    1: "it is not the time for that move",
    2: "seat out of range",
    3: "that seat has already chosen this round",
    4: "piles do not match the group sizes",
    5: "the piles must hold exactly the cards of the hand",
    6: "must follow",
    7: "the deal does not split the rain cards in use",
    8: "not in the pile",
}


def sky_cards_for(rules: RulesConfig) -> tuple[SkyCard, ...]:
    """The sky cards dealt in a game under these rules; index = sky card id."""
    return rules.game_deck.cards


def new_core(rules: RulesConfig, sky_order: Sequence[int]) -> _core.CoreState:
    """A C state for a new game with the given sky deck order."""
    cards = sky_cards_for(rules)
    sides = tuple(0 if side.value == "A" else 1 for side in rules.sides)
    star_mode = 0 if rules.star_option is StarOption.TWICE else 1
    return _core.CoreState.new(
        rules.players,
        sides,
        star_mode,
        [int(c.kind) for c in cards],
        [c.count for c in cards],
        list(sky_order),
        rules.first_seat,
    )
