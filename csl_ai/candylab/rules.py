"""The Candy Lab rules configuration: players, catalogue, first seat (docs/candy-lab-rules.md).

Everything here is fixed before a game starts. The counts the rulebook prints are
constants; the components' details are the catalogue (``csl_ai.candylab.catalogue``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from csl_ai.candylab.catalogue import Catalogue
from csl_ai.errors import RulesError, short_repr

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 4
FACE_UP: Final = 3
"""Face-up order cards beside the draw pile (Setup 4)."""
GOLDEN_SUGAR: Final = 3
"""Bonus points of the Golden Sugar card (End of Game)."""
MAX_RETURNED: Final = 3
"""Bars one action B returns at most."""
THIRD_HAND_SIZE: Final = 6
"""Cards of the 2-player third hand (Setup 3)."""

_FIELDS: Final = ("players", "first_seat", "catalogue")


def hand_size(players: int) -> int:
    """Cards dealt to each player: 6 with 2 players, else 5 (Setup 3)."""
    return 6 if players == 2 else 5


def _check_players(value: object, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not (
        MIN_PLAYERS <= value <= MAX_PLAYERS
    ):
        raise RulesError(
            f"{where}: must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {short_repr(value)}"
        )
    return value


def _check_seat(value: object, players: int, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < players:
        raise RulesError(f"{where}: must be a seat 0..{players - 1}, got {short_repr(value)}")
    return value


@dataclass(frozen=True)
class CandyLabRules:
    """Every choice made before a game of Candy Lab; validated on construction."""

    players: int = 4
    """2 to 4."""
    first_seat: int = 0
    """The first player: "the last player to have eaten candy" (CL-6)."""
    catalogue: Catalogue = field(default_factory=Catalogue.default)
    """The box's order cards and candy bars."""

    def __post_init__(self) -> None:
        _check_players(self.players, "players")
        _check_seat(self.first_seat, self.players, "first_seat")
        if not isinstance(self.catalogue, Catalogue):
            raise RulesError(f"catalogue must be a Catalogue, got {short_repr(self.catalogue)}")
        self.catalogue.validate("catalogue")

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player."""
        return hand_size(self.players)

    @property
    def third_hand_size(self) -> int:
        """Cards of the third hand: 6 with 2 players, else none."""
        return THIRD_HAND_SIZE if self.players == 2 else 0

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, read back by ``from_dict``."""
        return {
            "players": self.players,
            "first_seat": self.first_seat,
            "catalogue": self.catalogue.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "rules") -> CandyLabRules:
        """Parse the JSON form; absent fields take defaults, errors name the field path."""
        if not isinstance(data, Mapping):
            raise RulesError(f"{path}: must be an object, got {short_repr(data)}")
        for key in data:
            if key not in _FIELDS:
                raise RulesError(
                    f"{path}: unknown field {short_repr(key)} (expected {', '.join(_FIELDS)})"
                )
        players = _check_players(data.get("players", 4), f"{path}.players")
        first = _check_seat(data.get("first_seat", 0), players, f"{path}.first_seat")
        catalogue = (
            Catalogue.from_dict(data["catalogue"], f"{path}.catalogue")
            if "catalogue" in data
            else Catalogue.default()
        )
        return cls(players=players, first_seat=first, catalogue=catalogue)
