"""Candy Lab game records (``candylab-record``, version 1): save, load, replay and check.

A record holds the rules (players, first seat, the whole catalogue with its name), the
seed the game was dealt from, who played each seat, every move in the text of
``csl_ai.candylab.notation`` and, once the game is over, the result (every seat's
score, the winners, why it ended). A game replays exactly from its rules, seed and moves
(CL-33); `replay_record` re-applies every move through the rules and checks every
recorded figure. docs/records.md, section "Candy Lab records", gives the fields.

Every problem is an ``InvalidRecordError`` with one line starting with the JSON path of
the field at fault::

    moves[12]: 'play #3 B @4': not legal for seat 1 in phase main
    result.scores[1]: recorded 20, the replay gives 18
    format: must be 'candylab-record', got 'csl-record'
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final, cast

from csl_ai.candylab.game import Game
from csl_ai.candylab.moves import move_text
from csl_ai.candylab.notation import parse_move
from csl_ai.candylab.rules import CandyLabRules
from csl_ai.candylab.state import END_NAMES
from csl_ai.errors import (
    CslError,
    InvalidRecordError,
    RecordWriteError,
    path_label,
    short_repr,
)
from csl_ai.files import write_file_atomic
from csl_ai.jsonio import check_header, check_object, format_json, is_int, read_json_file, refuse_other_game

RECORD_FORMAT: Final = "candylab-record"
RECORD_VERSION: Final = 1
_REQUIRED: Final = ("format", "version", "rules", "seed", "moves")
_OPTIONAL: Final = ("agents", "meta", "result")
_RESULT_FIELDS: Final = ("scores", "winners", "end")
_ERR = InvalidRecordError


def game_to_record(
    game: Game,
    *,
    agents: Sequence[str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a game dealt from a seed, finished or not (a game from a custom
    position has no seed to replay from: InvalidRecordError)."""
    if game.seed is None:
        raise _ERR("seed: a game from a custom position cannot be recorded (no seed)")
    cat = game.rules.catalogue
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "rules": game.rules.to_dict(),
        "seed": game.seed,
    }
    if agents is not None:
        record["agents"] = list(agents)
    if meta is not None:
        record["meta"] = dict(meta)
    record["moves"] = [move_text(m, cat) for m in game.moves]
    record["result"] = (
        {
            "scores": game.scores(),
            "winners": game.winners(),
            "end": game.end_name,
        }
        if game.is_over
        else None
    )
    return record


def record_to_json(record: Mapping[str, Any]) -> str:
    """The text as saved: indented JSON, the same text for the same record."""
    try:
        return format_json(record)
    except (TypeError, ValueError) as e:
        raise _ERR(f"record: not JSON data: {e}") from None


def save_record(record: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Check the record (shape and replay), then write it atomically through
    ``write_file_atomic`` (never over anything but a regular file)."""
    replay_record(record)
    write_file_atomic(
        path, record_to_json(record), f"record file {path_label(path)}", RecordWriteError
    )


def new_record_path(folder: Path, now: datetime | None = None) -> Path:
    """A free name for a new record in folder (created if missing):
    ``candylab-game-20250101-120000.json``, then ``-2``, ``-3``..."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecordWriteError(
            f"cannot create the records folder {path_label(folder)}: {e.strerror or e}"
        ) from None
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
    path = folder / f"candylab-game-{stamp}.json"
    n = 1
    while os.path.lexists(path):
        n += 1
        path = folder / f"candylab-game-{stamp}-{n}.json"
    return path


def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file (``"-"``: standard input) and check its header and shape (not
    the moves: `replay_record` does that)."""
    data = read_json_file(path, "record", _ERR)
    _shape(data)
    return cast(dict[str, Any], data)


def _shape(data: object) -> tuple[CandyLabRules, int, list[str], Mapping[str, Any] | None]:
    refuse_other_game(data, RECORD_FORMAT, _ERR)
    data = check_object(data, "", _ERR, _REQUIRED, _OPTIONAL)
    check_header(data, RECORD_FORMAT, RECORD_VERSION, _ERR)
    try:
        rules = CandyLabRules.from_dict(data["rules"], "rules")
    except CslError as e:
        raise _ERR(str(e)) from None
    seed = data["seed"]
    if not is_int(seed) or not 0 <= seed < 2**64:
        raise _ERR(f"seed: must be an integer 0..2**64-1, got {short_repr(seed)}")
    n = rules.players
    agents = data.get("agents")
    if agents is not None:
        if not isinstance(agents, list) or len(agents) != n:
            raise _ERR(f"agents: must be a list of one name per seat ({n})")
        for s, name in enumerate(agents):
            if not isinstance(name, str):
                raise _ERR(f"agents[{s}]: must be a name, got {short_repr(name)}")
    if data.get("meta") is not None and not isinstance(data["meta"], Mapping):
        raise _ERR(f"meta: must be an object, got {short_repr(data['meta'])}")
    moves = data["moves"]
    if not isinstance(moves, list):
        raise _ERR(f"moves: must be a list of moves, got {short_repr(moves)}")
    for i, text in enumerate(moves):
        if not isinstance(text, str):
            raise _ERR(f"moves[{i}]: must be a move's text, got {short_repr(text)}")
    result = data.get("result")
    if result is not None:
        result = check_object(result, "result", _ERR, _RESULT_FIELDS)
        scores, winners = result["scores"], result["winners"]
        if not isinstance(scores, list) or len(scores) != n or not all(map(is_int, scores)):
            raise _ERR(f"result.scores: must be one integer per seat ({n})")
        if not isinstance(winners, list) or not winners or not all(
            is_int(w) and 0 <= w < n for w in winners
        ):
            raise _ERR(f"result.winners: must be a non-empty list of seats 0..{n - 1}")
        if result["end"] not in END_NAMES[1:]:
            raise _ERR(
                f"result.end: must be {' or '.join(map(repr, END_NAMES[1:]))}, "
                f"got {short_repr(result['end'])}"
            )
    return rules, seed, moves, result


def replay_record(record: object) -> Game:
    """The game the record holds, rebuilt through the rules: every move re-applied (the
    first one not legal, or not readable, is named), then the result checked: present
    exactly when the game is over, every seat's score, the winners and the end."""
    rules, seed, moves, result = _shape(record)
    cat = rules.catalogue
    game = Game(rules, seed=seed)
    for i, text in enumerate(moves):
        if game.is_over:
            raise _ERR(f"moves[{i}]: the game was over after {i} moves ({game.end_name})")
        try:
            game.play(parse_move(text, cat))
        except CslError as e:
            raise _ERR(f"moves[{i}]: {e}") from None
    if result is None:
        if game.is_over:
            raise _ERR(f"result: missing, but the game is over after {len(moves)} moves")
        return game
    if not game.is_over:
        raise _ERR(
            f"result: recorded, but the game goes on after {len(moves)} moves "
            f"(seat {game.current} to play)"
        )
    for seat, (recorded, actual) in enumerate(zip(result["scores"], game.scores())):
        if recorded != actual:
            raise _ERR(f"result.scores[{seat}]: recorded {recorded}, the replay gives {actual}")
    if sorted(result["winners"]) != game.winners():
        raise _ERR(
            f"result.winners: recorded {result['winners']}, the replay gives {game.winners()}"
        )
    if result["end"] != game.end_name:
        raise _ERR(f"result.end: recorded {result['end']!r}, the replay gives {game.end_name!r}")
    return game


__all__ = [
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "game_to_record",
    "load_record",
    "new_record_path",
    "record_to_json",
    "replay_record",
    "save_record",
]
