"""The search's fitted models: loaded from the data files that ship next to the card
policy, and validated, in one place.

- ``split_model.json``: the allocation model, a conditional logit over four features of
  a split (csrc/playout.pxi split_features), per player count; one part of every split
  mixture (benchmarks/fit_split_model.py);
- ``value_model.json``: the learned value of the later rounds, per player count and rounds
  left: the win-share weights and the final points' line (csl_ai.value;
  benchmarks/fit_value_model.py);
- ``win_calibration.json``: the map from the mean win share to a chance of winning, per
  player count (csl_ai.calibration; benchmarks/fit_calibration.py).

Each file says which command made it. `FittedModels.shipped()` reads them once;
`FittedModels.load(folder)` reads a folder of the same files (a refit), and
`FittedModels.save(folder)` writes one.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Final

from csl_ai.calibration import CalibrationError, WinCalibration
from csl_ai.errors import CslError, OutputWriteError
from csl_ai.files import read_input_text, write_file_atomic
from csl_ai.value import VALUE_FEATURES

MODEL_FORMAT: Final = "csl-fitted-model"
MODEL_VERSION: Final = 1
SPLIT_FEATURES: Final = (
    "danger_by_value", "top_card_by_value", "colours_missing_beside_trump", "piles_with_trump",
)
"""The allocation model's features, in weight order (csrc/playout.pxi split_features)."""
FILES: Final = {"split": "split_model.json", "value": "value_model.json", "win_calibration": "win_calibration.json"}
PLAYER_COUNTS: Final = (2, 3, 4, 5)
MAX_MODEL_BYTES: Final = 1 << 20

Rows = tuple[tuple[float, ...], ...]
Tables = tuple[Rows, ...]


class FittedModelError(CslError):
    """A fitted model file that cannot be read or does not hold a valid model."""


def model_folder(folder: str | os.PathLike[str]) -> Path:
    """folder made if missing, so a fit script can check where it will write before it
    plays its games; OutputWriteError where it cannot be made or is not a folder."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputWriteError(f"cannot make folder {str(path)!r}: {e.strerror or e}") from None
    return path


@dataclass(frozen=True)
class FittedModels:
    """The fitted pieces the search reads, one entry per player count 2..5."""

    split_weights: Rows
    """The allocation model's weights, one row of SPLIT_FEATURES per player count."""
    value_weights: Tables
    """The learned value's weights (VALUE_FEATURES order): per player count, one row per
    rounds left (1 first)."""
    value_points_weights: Tables
    """The same for the final points' line: an intercept, then one weight per feature."""
    win_calibration: WinCalibration | None
    """The win calibration; None: the search reports its raw mean win share."""
    made_by: dict[str, str] = field(default_factory=dict, compare=False)
    """Per model, the command that made it (from its file)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "split_weights", _rows("split_weights", self.split_weights, len(SPLIT_FEATURES)))
        width = len(VALUE_FEATURES)
        object.__setattr__(self, "value_weights", _tables("value_weights", self.value_weights, width))
        object.__setattr__(
            self, "value_points_weights", _tables("value_points_weights", self.value_points_weights, width + 1)
        )
        if self.win_calibration is not None and not isinstance(self.win_calibration, WinCalibration):
            raise FittedModelError(
                f"win_calibration must be a WinCalibration or None, got {self.win_calibration!r}"
            )

    def replace(self, **changes: Any) -> FittedModels:
        """A copy with some models replaced (say win_calibration=None)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    @functools.cache
    def shipped(cls) -> FittedModels:
        """The models that ship with the package (read once)."""
        folder = resources.files("csl_ai").joinpath("data")
        return cls._read(lambda name: folder.joinpath(name).read_text(), "csl_ai/data")

    @classmethod
    def load(cls, folder: str | os.PathLike[str]) -> FittedModels:
        """The models in a folder holding the three files."""
        base = Path(folder)

        def read(name: str) -> str:
            path = base / name
            return read_input_text(path, f"fitted model {str(path)!r}", FittedModelError, MAX_MODEL_BYTES)

        return cls._read(read, str(base))

    def refit(self, model: str, made_by: str, players: Sequence[int], **rows: Sequence[Any]) -> FittedModels:
        """A copy with one model's rows replaced at some player counts (the rest kept) and
        the command that made them: how the fit scripts write their result (--write)."""
        if model not in FILES:
            raise FittedModelError(f"unknown model {model!r} (expected {', '.join(FILES)})")
        changes: dict[str, Any] = {}
        for name, new in rows.items():
            old = self.win_calibration.coefficients if name == "win_calibration" and self.win_calibration else getattr(self, name)
            merged = [new[p - 2] if p in players else old[p - 2] for p in PLAYER_COUNTS]
            changes[name] = WinCalibration(tuple(merged)) if name == "win_calibration" else merged
        return dataclasses.replace(self, **changes, made_by={**self.made_by, model: made_by})

    def save(self, folder: str | os.PathLike[str]) -> None:
        """Write the three files into folder, made if missing (the safe writer: never over a
        non-regular file); OutputWriteError where the folder cannot be made or written."""
        model_folder(folder)
        for model, name in FILES.items():
            path = Path(folder) / name
            write_file_atomic(path, _dumps(self._to_json(model)) + "\n", f"fitted model {str(path)!r}")

    def _to_json(self, model: str) -> dict[str, Any]:
        head = {"format": MODEL_FORMAT, "version": MODEL_VERSION, "model": model,
                "made_by": self.made_by.get(model, "")}
        by = _by_players
        if model == "split":
            return {**head, "features": list(SPLIT_FEATURES), "weights_by_players": by(self.split_weights)}
        if model == "value":
            return {**head, "features": list(VALUE_FEATURES),
                    "win_weights_by_players": by(self.value_weights),
                    "points_weights_by_players": by(self.value_points_weights)}
        coefficients = self.win_calibration.coefficients if self.win_calibration is not None else None
        return {**head, "coefficients_by_players": None if coefficients is None else by(coefficients)}

    @classmethod
    def _read(cls, read: Any, where: str) -> FittedModels:
        data = {model: _parse(read(name), f"{where}/{name}", model) for model, name in FILES.items()}
        try:
            split = data["split"]
            value = data["value"]
            calibration = data["win_calibration"]
            if split.get("features") != list(SPLIT_FEATURES):
                raise FittedModelError(f"split model: features must be {list(SPLIT_FEATURES)}")
            if value.get("features") != list(VALUE_FEATURES):
                raise FittedModelError(f"value model: features differ from this build's {list(VALUE_FEATURES)}")
            coefficients = calibration.get("coefficients_by_players")
            return cls(
                split_weights=_players_list(split.get("weights_by_players"), "split model"),
                value_weights=_players_list(value.get("win_weights_by_players"), "value model"),
                value_points_weights=_players_list(value.get("points_weights_by_players"), "value model"),
                win_calibration=None if coefficients is None else WinCalibration(
                    _players_list(coefficients, "win calibration")
                ),
                made_by={model: str(d.get("made_by", "")) for model, d in data.items()},
            )
        except (FittedModelError, CalibrationError) as e:
            raise FittedModelError(f"{where}: {e}") from None


def _parse(text: str, where: str, model: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise FittedModelError(f"fitted model {where!r}: not JSON ({type(e).__name__})") from None
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or data.get("version") != MODEL_VERSION:
        raise FittedModelError(f"fitted model {where!r}: not a {MODEL_FORMAT} version {MODEL_VERSION} file")
    if data.get("model") != model:
        raise FittedModelError(f"fitted model {where!r}: holds model {data.get('model')!r}, not {model!r}")
    return data


def _players_list(by_players: object, what: str) -> list[Any]:
    if not isinstance(by_players, dict) or sorted(by_players) != [str(p) for p in PLAYER_COUNTS]:
        raise FittedModelError(f"{what}: needs one entry per player count {list(PLAYER_COUNTS)}")
    return [by_players[str(p)] for p in PLAYER_COUNTS]


def _by_players(rows: Sequence[Any]) -> dict[str, Any]:
    return {str(p): _lists(rows[p - 2]) for p in PLAYER_COUNTS}


def _lists(value: Any) -> Any:
    return [_lists(v) for v in value] if isinstance(value, (tuple, list)) else value


def _dumps(data: dict[str, Any]) -> str:
    """JSON with each row of numbers on one line."""
    import re

    text = json.dumps(data, indent=2)
    return re.sub(
        r"\[\s*((?:-?[0-9.e+-]+,\s*)*-?[0-9.e+-]+)\s*\]",
        lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]",
        text,
    )


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _rows(name: str, rows: object, width: int) -> Rows:
    """rows as 4 rows (2..5 players) of `width` floats; FittedModelError otherwise."""
    if (
        not isinstance(rows, (tuple, list)) or len(rows) != 4
        or any(not isinstance(row, (tuple, list)) or len(row) != width for row in rows)
        or not all(_finite(v) for row in rows for v in row)
    ):
        raise FittedModelError(f"{name} must be 4 rows (2..5 players) of {width} finite numbers")
    return tuple(tuple(float(v) for v in row) for row in rows)


def _tables(name: str, tables: object, width: int) -> Tables:
    """tables as 4 tables (2..5 players) of 1 to 6 rows (by rounds left) of `width` floats."""
    if (
        not isinstance(tables, (tuple, list)) or len(tables) != 4
        or any(not isinstance(rows, (tuple, list)) or not 1 <= len(rows) <= 6 for rows in tables)
        or any(not isinstance(row, (tuple, list)) or len(row) != width for rows in tables for row in rows)
        or not all(_finite(v) for rows in tables for row in rows for v in row)
    ):
        raise FittedModelError(f"{name} must be 4 tables (2..5 players) of 1 to 6 rows of {width} finite numbers")
    return tuple(tuple(tuple(float(v) for v in row) for row in rows) for rows in tables)
