"""The one reader of self-play training rows: a ``training.jsonl`` into numpy arrays.

`load_training_rows` checks every row against the schema (docs/training-rows.md: its name
and version, every field and its type) and gives one `PhaseRows` per phase, the rows of
that phase sorted by (job, step), each legal move of a row in a fixed *slot*:

- ``play``: 36 slots, the slot of a card is its index (colour*12 + rank - 1);
- ``weather``: 2 slots, 0 = no good weather, 1 = good weather;
- ``allocate``: one slot per legal split, in the row's ``legal`` order (the core's
  enumeration order), as many as the longest such list in the file.

What is not a move of a row is marked, never guessed: a slot with no legal move has
``legal`` False and action -1, a legal move the search did not try has ``evaluated``
False, 0 visits and NaN values. A bad file gives one `TrainingRowsError` naming the file,
the line and the field.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from csl_ai.errors import CslError, path_label, short_repr
from csl_ai.policy import CARD_FEATURES
from csl_ai.tournament.selfplay import CARDS, FEATURE_SIZE, SCHEMA, SCHEMA_VERSION

PHASE_NAMES: Final = ("allocate", "weather", "play")
MAX_PILES: Final = 3
"""Allocation codes are base 3: a hand splits into at most three piles."""
_FIXED_SLOTS: Final = {"weather": 2, "play": CARDS}


class TrainingRowsError(CslError):
    """A training-rows file that cannot be read, or a row that does not follow the schema."""


def split_piles(code: int, hand: Sequence[int], piles: int) -> tuple[int, ...]:
    """The pile card masks an allocation code stands for: card ``hand[i]`` (hand ascending)
    goes to pile ``(code // 3**i) % 3``."""
    if not 1 <= piles <= MAX_PILES:
        raise TrainingRowsError(f"piles: must be 1..{MAX_PILES}, got {piles!r}")
    masks = [0] * piles
    for i, card in enumerate(hand):
        pile = code // 3**i % 3
        if pile >= piles:
            raise TrainingRowsError(
                f"allocation code {code}: card {i} in pile {pile}, only {piles} piles"
            )
        masks[pile] |= 1 << card
    return tuple(masks)


@dataclass(frozen=True)
class PhaseRows:
    """The rows of one phase as arrays: N rows, K move slots (see the module doc)."""

    phase: str
    job: np.ndarray
    """(N,) int64: the self-play job (game) of the row."""
    step: np.ndarray
    """(N,) int64: the decision's place in its game."""
    seat: np.ndarray
    """(N,) int64: the deciding seat."""
    players: np.ndarray
    """(N,) int64: the game's player count."""
    round: np.ndarray
    """(N,) int64: the round, from 0."""
    features: np.ndarray
    """(N, FEATURE_SIZE) float64: the observation features (selfplay.FEATURE_NAMES)."""
    hands: np.ndarray
    """(N, H) int64: allocation only, the hand's card indices ascending, -1 after its end;
    (N, 0) for the other phases."""
    actions: np.ndarray
    """(N, K) int64: the move code in each slot, -1 where the slot holds no legal move."""
    legal: np.ndarray
    """(N, K) bool: the slot holds a legal move."""
    chosen: np.ndarray
    """(N,) int64: the slot of the move played."""
    searched: np.ndarray
    """(N,) bool: a search chose the move (else visits are the chosen move's single 1)."""
    evaluated: np.ndarray
    """(N, K) bool: the search tried that move (without a search: the move played)."""
    visits: np.ndarray
    """(N, K) int32: the search's visits to each move, 0 where not evaluated."""
    win_probability: np.ndarray
    """(N, K) float32: the search's mean win share per move; NaN where not evaluated, with
    0 visits, or without a search."""
    expected_points: np.ndarray
    """(N, K) float32: the search's mean final points per move; NaN like win_probability."""
    card_features: np.ndarray
    """(N, 36, C) float64: play only, the learned policy's features of each legal card by
    card slot (policy.CARD_FEATURES), 0 elsewhere; (N, 0, C) for the other phases."""
    has_card_features: np.ndarray
    """(N,) bool: the row holds card features (a play with more than one legal card)."""
    win_share: np.ndarray
    """(N,) float64: the seat's share of the win at the end of the game."""
    points: np.ndarray
    """(N,) int64: the seat's final points."""
    rank: np.ndarray
    """(N,) int64: the seat's final rank, 1 = winner."""

    def __len__(self) -> int:
        return len(self.job)


@dataclass(frozen=True)
class TrainingRows:
    """A whole training-rows file: its schema version and the rows of each phase."""

    version: int
    allocate: PhaseRows
    weather: PhaseRows
    play: PhaseRows

    def __len__(self) -> int:
        return len(self.allocate) + len(self.weather) + len(self.play)

    def phase(self, name: str) -> PhaseRows:
        """The rows of one phase by name (``allocate``, ``weather``, ``play``)."""
        if name not in PHASE_NAMES:
            raise TrainingRowsError(f"phase: must be one of {', '.join(PHASE_NAMES)}, got {name!r}")
        rows: PhaseRows = getattr(self, name)
        return rows


@dataclass(frozen=True)
class _Row:
    """One checked row, still as Python values."""

    job: int
    step: int
    seat: int
    players: int
    round: int
    phase: str
    features: np.ndarray
    hand: np.ndarray
    legal: np.ndarray
    action: int
    search: bool
    codes: np.ndarray
    visits: np.ndarray
    win_probability: np.ndarray | None
    expected_points: np.ndarray | None
    card_cards: np.ndarray | None
    card_features: np.ndarray | None
    win_share: float
    points: int
    rank: int


def load_training_rows(path: str | os.PathLike[str]) -> TrainingRows:
    """Every row of a training-rows file as arrays per phase, checked against the schema;
    TrainingRowsError (one line: the file, the line, the field) for anything else."""
    label = f"training rows {path_label(path)}"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise TrainingRowsError(f"{label}: not a regular file")
        with open(path, "rb") as f:
            rows = [
                _parse_line(raw, f"{label} line {n}") for n, raw in enumerate(f, 1) if raw.strip()
            ]
    except OSError as e:
        raise TrainingRowsError(f"{label}: cannot read: {e.strerror or e}") from None
    rows.sort(key=lambda r: (r.job, r.step))
    return TrainingRows(
        SCHEMA_VERSION,
        *(_phase_arrays(name, [r for r in rows if r.phase == name]) for name in PHASE_NAMES),
    )


def _parse_line(raw: bytes, where: str) -> _Row:
    try:
        data = json.loads(raw.rstrip(b"\r\n"))
    except (ValueError, RecursionError) as e:
        reason = e.msg if isinstance(e, json.JSONDecodeError) else type(e).__name__
        raise TrainingRowsError(f"{where}: not a JSON line ({reason})") from None
    if not isinstance(data, dict):
        raise TrainingRowsError(f"{where}: not a JSON object, got {short_repr(data)}")
    return _parse_row(data, where)


def _parse_row(data: Mapping[str, Any], where: str) -> _Row:
    _check_schema(data, where)
    players = _int(data, "players", where, 2, 5)
    phase = _get(data, "phase", where)
    if phase not in PHASE_NAMES:
        raise TrainingRowsError(
            f"{where}: phase: must be one of {', '.join(PHASE_NAMES)}, got {short_repr(phase)}"
        )
    features = _numbers(_get(data, "features", where), f"{where}: features")
    if len(features) != FEATURE_SIZE:
        raise TrainingRowsError(
            f"{where}: features: need {FEATURE_SIZE} numbers, got {len(features)}"
        )
    hand, legal = _legal(data, phase, where)
    action = _int(data, "action", where, 0)
    if action not in set(legal.tolist()):
        raise TrainingRowsError(f"{where}: action {action} is not among the legal codes")
    search = _get(data, "search", where)
    if not isinstance(search, bool):
        raise TrainingRowsError(f"{where}: search: must be true or false, got {short_repr(search)}")
    codes, visits, win, points = _targets(data, legal, where)
    if not isinstance(_get(data, "chosen", where), dict):
        raise TrainingRowsError(f"{where}: chosen: must be a move object")
    card_cards = card_rows = None
    if "card_features" in data:
        card_cards, card_rows = _card_block(data["card_features"], legal, phase, where)
    outcome = _get(data, "outcome", where)
    if not isinstance(outcome, dict):
        raise TrainingRowsError(f"{where}: outcome: must be an object, got {short_repr(outcome)}")
    win_share = _get(outcome, "win_share", f"{where}: outcome")
    if not _is_number(win_share) or not 0 <= win_share <= 1:
        raise TrainingRowsError(
            f"{where}: outcome.win_share: must be a number 0..1, got {short_repr(win_share)}"
        )
    return _Row(
        job=_int(data, "job", where, 0),
        step=_int(data, "step", where, 0),
        seat=_int(data, "seat", where, 0, players - 1),
        players=players,
        round=_int(data, "round", where, 0),
        phase=phase,
        features=features,
        hand=hand,
        legal=legal,
        action=action,
        search=search,
        codes=codes,
        visits=visits,
        win_probability=win,
        expected_points=points,
        card_cards=card_cards,
        card_features=card_rows,
        win_share=float(win_share),
        points=_int(outcome, "points", f"{where}: outcome"),
        rank=_int(outcome, "rank", f"{where}: outcome", 1, 5),
    )


def _check_schema(data: Mapping[str, Any], where: str) -> None:
    if "schema" not in data:
        raise TrainingRowsError(
            f"{where}: no 'schema' field: not a {SCHEMA} row "
            "(rows from before version 1 carry none)"
        )
    if data["schema"] != SCHEMA:
        raise TrainingRowsError(
            f"{where}: schema {short_repr(data['schema'])}, expected {SCHEMA!r}"
        )
    version = _get(data, "version", where)
    if version != SCHEMA_VERSION or type(version) is not int:
        raise TrainingRowsError(
            f"{where}: {SCHEMA} version {short_repr(version)}; "
            f"this build reads version {SCHEMA_VERSION}"
        )


def _legal(data: Mapping[str, Any], phase: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(hand, legal codes) of a row: the hand is empty outside the allocation phase."""
    hand = np.empty(0, dtype=np.int64)
    if phase == "allocate":
        hand = _ints(_get(data, "hand", where), f"{where}: hand")
        if (
            not 1 <= len(hand) <= CARDS
            or hand.min() < 0
            or hand.max() >= CARDS
            or np.any(np.diff(hand) <= 0)
        ):
            raise TrainingRowsError(
                f"{where}: hand: must be card indices 0..35, ascending, "
                f"got {short_repr(data['hand'])}"
            )
        top = 3 ** len(hand)
    else:
        top = _FIXED_SLOTS[phase]
    legal = _ints(_get(data, "legal", where), f"{where}: legal")
    distinct = len(np.unique(legal)) == len(legal)
    if len(legal) == 0 or not distinct or legal.min() < 0 or legal.max() >= top:
        raise TrainingRowsError(
            f"{where}: legal: must be distinct {phase} codes 0..{top - 1}, "
            f"got {short_repr(data['legal'])}"
        )
    if _int(data, "legal_moves", where, 0) != len(legal):
        raise TrainingRowsError(
            f"{where}: legal_moves {data['legal_moves']} but legal lists {len(legal)} moves"
        )
    return hand, legal


def _targets(
    data: Mapping[str, Any], legal: np.ndarray, where: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(codes, visits, win_probability, expected_points) of the moves a row's search tried."""
    moves = _get(data, "moves", where)
    if not isinstance(moves, list):
        raise TrainingRowsError(f"{where}: moves: must be a list, got {short_repr(moves)}")
    codes = _ints(_get(data, "codes", where), f"{where}: codes")
    visits = _ints(_get(data, "visits", where), f"{where}: visits")
    if not len(moves) == len(codes) == len(visits) or len(codes) == 0:
        raise TrainingRowsError(
            f"{where}: moves, codes and visits: need the same non-zero length, got "
            f"{len(moves)}, {len(codes)}, {len(visits)}"
        )
    if not np.isin(codes, legal).all() or len(np.unique(codes)) != len(codes):
        raise TrainingRowsError(
            f"{where}: codes: must be distinct legal codes, got {short_repr(data['codes'])}"
        )
    if visits.min() < 0:
        raise TrainingRowsError(f"{where}: visits: must not be negative")
    win = _optional_numbers(data, "win_probability", len(codes), where)
    points = _optional_numbers(data, "expected_points", len(codes), where)
    return codes, visits, win, points


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _get(data: Mapping[str, Any], name: str, where: str) -> Any:
    if name not in data:
        raise TrainingRowsError(f"{where}: missing field {name!r}")
    return data[name]


def _int(
    data: Mapping[str, Any], name: str, where: str, lo: int | None = None, hi: int | None = None
) -> int:
    value = _get(data, name, where)
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or (lo is not None and value < lo)
        or (hi is not None and value > hi)
    ):
        if lo is None:
            kind = "an integer"
        elif hi is None:
            kind = "a non-negative integer" if lo == 0 else f"an integer >= {lo}"
        else:
            kind = f"an integer {lo}..{hi}"
        raise TrainingRowsError(f"{where}: {name}: must be {kind}, got {short_repr(value)}")
    return value


def _array(value: object, what: str, kinds: str, noun: str) -> np.ndarray:
    if not isinstance(value, list):
        raise TrainingRowsError(f"{what}: must be a list of {noun}, got {short_repr(value)}")
    if not value:
        return np.empty(0, dtype=np.int64 if kinds == "iu" else np.float64)
    try:
        arr = np.asarray(value)
    except (ValueError, OverflowError):
        arr = np.empty(0, dtype=object)
    if arr.ndim != 1 or arr.dtype.kind not in kinds:
        raise TrainingRowsError(f"{what}: must be a list of {noun}, got {short_repr(value)}")
    return arr


def _ints(value: object, what: str) -> np.ndarray:
    return _array(value, what, "iu", "integers").astype(np.int64)


def _numbers(value: object, what: str) -> np.ndarray:
    arr = _array(value, what, "iuf", "numbers").astype(np.float64)
    if not np.isfinite(arr).all():
        raise TrainingRowsError(f"{what}: must be finite numbers")
    return arr


def _optional_numbers(
    data: Mapping[str, Any], name: str, size: int, where: str
) -> np.ndarray | None:
    """A list of per-move numbers (null for a move never visited, read as NaN), or None."""
    value = _get(data, name, where)
    if value is None:
        return None
    unvisited = None
    if isinstance(value, list):
        unvisited = np.array([v is None for v in value], dtype=bool)
        value = [0 if v is None else v for v in value]
    arr = _numbers(value, f"{where}: {name}")
    if unvisited is not None:
        arr[unvisited] = math.nan
    if len(arr) != size:
        raise TrainingRowsError(
            f"{where}: {name}: need one number per move ({size}), got {len(arr)}"
        )
    return arr


def _card_block(
    block: object, legal: np.ndarray, phase: str, where: str
) -> tuple[np.ndarray, np.ndarray]:
    what = f"{where}: card_features"
    if phase != "play" or not isinstance(block, dict):
        raise TrainingRowsError(f"{what}: must be an object, and only in a play row")
    cards = _ints(_get(block, "cards", what), f"{what}.cards")
    if sorted(cards.tolist()) != sorted(legal.tolist()):
        raise TrainingRowsError(
            f"{what}.cards: must be the legal cards, got {short_repr(block['cards'])}"
        )
    rows = _get(block, "features", what)
    if not isinstance(rows, list) or len(rows) != len(cards):
        raise TrainingRowsError(f"{what}.features: need one list per card ({len(cards)})")
    out = np.empty((len(cards), len(CARD_FEATURES)))
    for i, row in enumerate(rows):
        values = _numbers(row, f"{what}.features[{i}]")
        if len(values) != len(CARD_FEATURES):
            raise TrainingRowsError(
                f"{what}.features[{i}]: need {len(CARD_FEATURES)} numbers, got {len(values)}"
            )
        out[i] = values
    return cards, out


def _phase_arrays(phase: str, rows: list[_Row]) -> PhaseRows:
    n = len(rows)
    slots = _FIXED_SLOTS.get(phase, max((len(r.legal) for r in rows), default=0))
    hand_width = max((len(r.hand) for r in rows), default=0)
    card_slots = CARDS if phase == "play" else 0
    hands = np.full((n, hand_width), -1, dtype=np.int64)
    actions = np.full((n, slots), -1, dtype=np.int64)
    legal = np.zeros((n, slots), dtype=bool)
    chosen = np.zeros(n, dtype=np.int64)
    evaluated = np.zeros((n, slots), dtype=bool)
    visits = np.zeros((n, slots), dtype=np.int32)
    win = np.full((n, slots), math.nan, dtype=np.float32)
    points = np.full((n, slots), math.nan, dtype=np.float32)
    card_features = np.zeros((n, card_slots, len(CARD_FEATURES)))
    has_cards = np.zeros(n, dtype=bool)
    for i, r in enumerate(rows):
        if phase == "allocate":
            slot_of = {int(code): s for s, code in enumerate(r.legal)}
            hands[i, : len(r.hand)] = r.hand
            where = [slot_of[int(c)] for c in r.codes]
            chosen[i] = slot_of[r.action]
            actions[i, : len(r.legal)] = r.legal
            legal[i, : len(r.legal)] = True
        else:
            where = r.codes.tolist()
            chosen[i] = r.action
            actions[i, r.legal] = r.legal
            legal[i, r.legal] = True
        evaluated[i, where] = True
        visits[i, where] = r.visits
        if r.win_probability is not None:
            win[i, where] = r.win_probability
        if r.expected_points is not None:
            points[i, where] = r.expected_points
        if r.card_features is not None and r.card_cards is not None:
            card_features[i, r.card_cards] = r.card_features
            has_cards[i] = True

    def column(name: str, dtype: type = np.int64) -> np.ndarray:
        return np.array([getattr(r, name) for r in rows], dtype=dtype)

    return PhaseRows(
        phase=phase,
        job=column("job"),
        step=column("step"),
        seat=column("seat"),
        players=column("players"),
        round=column("round"),
        features=np.array([r.features for r in rows]).reshape(n, FEATURE_SIZE),
        hands=hands,
        actions=actions,
        legal=legal,
        chosen=chosen,
        searched=column("search", bool),
        evaluated=evaluated,
        visits=visits,
        win_probability=win,
        expected_points=points,
        card_features=card_features,
        has_card_features=has_cards,
        win_share=column("win_share", np.float64),
        points=column("points"),
        rank=column("rank"),
    )
