"""The JSON shared by positions (position.py) and game records (records.py): checked
readers that name a bad field by its JSON path, the forms of sky lines and tricks, reading
a JSON file, and stable indented JSON text.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any, Final, ParamSpec, TypeGuard, TypeVar

from csl_ai.errors import CslError, clip, path_label, short_repr
from csl_ai.files import read_input_text
from csl_ai.game import RoundLog, Trick, sky_cards_for
from csl_ai.notation import card_str, format_cards, parse_card, parse_cards, parse_piles, parse_sky, sky_str
from csl_ai.rules import RulesConfig, SkyCard

JSON_WIDTH: Final = 100
"""Lines of ``format_json`` output stay within this width where a value allows it."""

_TRICK_FIELDS: Final = ("leader", "plays", "winner", "sky")

ErrorClass = type[CslError]
"""The error a reader raises: InvalidPositionError, InvalidRecordError, ..."""


def format_json(value: Any, width: int = JSON_WIDTH) -> str:
    """Indented JSON text ending in a newline; containers that fit on one line stay on one.

    The same value always gives the same text, so saved files diff cleanly.
    """
    normal = json.loads(json.dumps(value, allow_nan=False))
    return _format(normal, 0, 0, width) + "\n"


def _format(value: Any, indent: int, used: int, width: int) -> str:
    compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, (dict, list)) or not value or indent + used + len(compact) < width:
        return compact
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            head = json.dumps(key, ensure_ascii=False) + ": "
            items.append(pad + head + _format(item, indent + 2, len(head), width))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if not any(isinstance(item, (dict, list)) for item in value):
        lines: list[str] = []
        for item in value:
            text = json.dumps(item, ensure_ascii=False)
            if lines and len(lines[-1]) + len(text) + 2 < width:
                lines[-1] += " " + text + ","
            else:
                lines.append(pad + text + ",")
        lines[-1] = lines[-1][:-1]
        return "[\n" + "\n".join(lines) + "\n" + " " * indent + "]"
    items = [pad + _format(item, indent + 2, 0, width) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def is_int(value: object) -> TypeGuard[int]:
    """True for an int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_object(
    value: object,
    path: str,
    err: ErrorClass,
    required: Sequence[str],
    optional: Sequence[str] = (),
) -> Mapping[str, Any]:
    """value as a JSON object with every required field and no unknown one."""
    if not isinstance(value, Mapping):
        raise err(f"{_join(path, '')}: must be an object, got {short_repr(value)}")
    allowed = (*required, *optional)
    for key in value:
        if key not in allowed:
            raise err(f"{_join(path, '')}: unknown field {key!r} (expected {', '.join(allowed)})")
    for key in required:
        if key not in value:
            raise err(f"{_join(path, key)}: missing")
    return value


def _join(path: str, key: str) -> str:
    if not key:
        return path or "(top level)"
    return f"{path}.{key}" if path else key


def check_list(value: object, path: str, err: ErrorClass, what: str) -> list[Any]:
    """value as a JSON list; what describes the items for the message."""
    if not isinstance(value, list):
        raise err(f"{path}: must be a list of {what}, got {short_repr(value)}")
    return value


def check_seat(value: object, players: int, path: str, err: ErrorClass) -> int:
    """A seat number 0..players-1."""
    if not is_int(value) or not 0 <= value < players:
        raise err(f"{path}: must be a seat 0..{players - 1}, got {short_repr(value)}")
    return value


def check_bool_or_null(value: object, path: str, err: ErrorClass) -> bool | None:
    if value is not None and not isinstance(value, bool):
        raise err(f"{path}: must be true, false or null, got {short_repr(value)}")
    return value


def read_card(value: object, path: str, err: ErrorClass) -> int:
    """One rain card written like ``"B7"``."""
    if not isinstance(value, str):
        raise err(f"{path}: must be a card like 'B7', got {short_repr(value)}")
    try:
        return parse_card(value)
    except CslError as e:
        raise err(f"{path}: {e}") from None


def read_cards(value: object, path: str, err: ErrorClass, in_use: int) -> int:
    """A set of rain cards in use, written like ``"B7 R2 G5"``."""
    if not isinstance(value, str):
        raise err(f"{path}: must be cards like 'B7 R2 G5', got {short_repr(value)}")
    try:
        mask = parse_cards(value)
    except CslError as e:
        raise err(f"{path}: {e}") from None
    if mask & ~in_use:
        raise err(f"{path}: {format_cards(mask & ~in_use)} not in use in this game")
    return mask


def read_piles(value: object, path: str, err: ErrorClass, rules: RulesConfig) -> tuple[int, ...]:
    """Piles written like ``"B7 R2 G5 | B1 R9 G9 | B3 R4 G12"``, sized for the groups."""
    if not isinstance(value, str):
        raise err(f"{path}: must be piles like 'B7 R2 G5 | B1 R9 G9', got {short_repr(value)}")
    try:
        piles = parse_piles(value, rules.spec.group_sizes)
    except CslError as e:
        raise err(f"{path}: {e}") from None
    union = 0
    for pile in piles:
        union |= pile
    if union & ~rules.spec.rain_cards:
        raise err(f"{path}: {format_cards(union & ~rules.spec.rain_cards)} not in use in this game")
    return piles


def line_to_json(line: Sequence[int], cards: Sequence[SkyCard]) -> tuple[list[str], list[int]]:
    """A round's sky line as (notation list, id list)."""
    return [sky_str(cards[i]) for i in line], list(line)


def read_line(
    texts: object,
    ids: object,
    path: str,
    err: ErrorClass,
    rules: RulesConfig,
    used: set[int],
) -> tuple[int, ...]:
    """A round's line from its notation list and (if not None) id list; adds the ids to used.

    Without ids each card takes the lowest id of its kind and count not yet used.
    """
    cards = sky_cards_for(rules)
    size = rules.spec.line_size
    where = f"{path}.line"
    text_list = check_list(texts, where, err, "sky cards like 'C1'")
    if len(text_list) != size:
        raise err(
            f"{where}: a {rules.players}-player round has {size} sky cards, got {len(text_list)}"
        )
    line_cards = []
    for k, text in enumerate(text_list):
        if not isinstance(text, str):
            raise err(f"{where}[{k}]: must be a sky card like 'C1' or '*', got {short_repr(text)}")
        try:
            line_cards.append(parse_sky(text))
        except CslError as e:
            raise err(f"{where}[{k}]: {e}") from None
    line: list[int] = []
    if ids is None:
        for k, card in enumerate(line_cards):
            free = [i for i, c in enumerate(cards) if c == card and i not in used]
            if not free:
                raise err(f"{where}[{k}]: no {sky_str(card)} card left in the deck")
            used.add(free[0])
            line.append(free[0])
        return tuple(line)
    where = f"{path}.line_ids"
    id_list = check_list(ids, where, err, "sky card ids")
    if len(id_list) != size:
        raise err(f"{where}: must hold {size} ids, one per card of the line, got {len(id_list)}")
    for k, (sky, card) in enumerate(zip(id_list, line_cards, strict=True)):
        if not is_int(sky) or not 0 <= sky < len(cards):
            raise err(
                f"{where}[{k}]: must be a sky card id 0..{len(cards) - 1}, got {short_repr(sky)}"
            )
        if sky in used:
            raise err(f"{where}[{k}]: sky card id {sky} is dealt twice")
        if cards[sky] != card:
            raise err(
                f"{path}.line[{k}]: {sky_str(card)!r} but sky card {sky} is {sky_str(cards[sky])!r}"
            )
        used.add(sky)
        line.append(sky)
    return tuple(line)


def group_of(index: int, group_sizes: Sequence[int]) -> int:
    """The group of the trick at that position of the line."""
    for g, end in enumerate(accumulate(group_sizes)):
        if index < end:
            return g
    raise ValueError(f"trick index {index} is past the line")


def trick_to_json(trick: Trick, cards: Sequence[SkyCard]) -> dict[str, Any]:
    """A trick as ``{"leader", "plays": [[seat, "B7"], ...], "winner", "sky"}``."""
    return {
        "leader": trick.leader,
        "plays": [[seat, card_str(card)] for seat, card in trick.plays],
        "winner": trick.winner,
        "sky": sky_str(cards[trick.sky]) if trick.sky is not None else None,
    }


def round_to_json(
    r: RoundLog, cards: Sequence[SkyCard], dealt: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """A round as ``{"line", "line_ids", "first_player", ..., "declarations", "tricks"}``,
    with the fields of dealt (a record's hands and piles) in its place."""
    texts, ids = line_to_json(r.line, cards)
    return {
        "line": texts,
        "line_ids": ids,
        "first_player": r.first_player,
        **(dealt or {}),
        "declarations": list(r.declarations),
        "tricks": [trick_to_json(t, cards) for t in r.tricks],
    }


def read_tricks(
    value: object,
    path: str,
    err: ErrorClass,
    rules: RulesConfig,
    round_index: int,
    line: Sequence[int],
    may_stop: bool,
) -> list[Trick]:
    """A round's tricks; only with may_stop may the round end early or mid-trick.

    Checks shape, seats and that the recorded sky card is the line's; whether the plays
    and winners are legal is the replay's business.
    """
    n = rules.players
    cards = sky_cards_for(rules)
    where = f"{path}.tricks"
    tricks_json = check_list(value, where, err, "tricks")
    size = rules.spec.line_size
    if len(tricks_json) > size:
        raise err(f"{where}: a {n}-player round has {size} tricks, got {len(tricks_json)}")
    if not may_stop and len(tricks_json) != size:
        raise err(f"{where}: a finished round has {size} tricks, got {len(tricks_json)}")
    tricks = []
    for t, data in enumerate(tricks_json):
        twhere = f"{where}[{t}]"
        obj = check_object(data, twhere, err, _TRICK_FIELDS)
        leader = check_seat(obj["leader"], n, f"{twhere}.leader", err)
        plays_json = check_list(obj["plays"], f"{twhere}.plays", err, "[seat, card] pairs")
        last = t == len(tricks_json) - 1
        if not plays_json or len(plays_json) > n:
            raise err(f"{twhere}.plays: must hold 1..{n} plays, got {len(plays_json)}")
        if len(plays_json) < n and not (last and may_stop):
            raise err(
                f"{twhere}.plays: every seat plays once in a finished trick, "
                f"got {len(plays_json)} plays"
            )
        plays = []
        for p, play in enumerate(plays_json):
            pwhere = f"{twhere}.plays[{p}]"
            if not isinstance(play, list) or len(play) != 2:
                raise err(
                    f"{pwhere}: must be a [seat, card] pair like [0, 'B7'], got {short_repr(play)}"
                )
            plays.append((check_seat(play[0], n, pwhere, err), read_card(play[1], pwhere, err)))
        complete = len(plays) == n
        winner, sky_text = obj["winner"], obj["sky"]
        if not complete:
            if winner is not None:
                raise err(f"{twhere}.winner: must be null while the trick is unfinished")
            if sky_text is not None:
                raise err(f"{twhere}.sky: must be null while the trick is unfinished")
            tricks.append(
                Trick(round_index, t, group_of(t, rules.spec.group_sizes), leader, tuple(plays))
            )
            continue
        winner = check_seat(winner, n, f"{twhere}.winner", err)
        expected = sky_str(cards[line[t]])
        if not isinstance(sky_text, str):
            raise err(
                f"{twhere}.sky: must be the sky card won, like 'C1', got {short_repr(sky_text)}"
            )
        if sky_text.strip().upper() != expected.upper():
            raise err(
                f"{twhere}.sky: recorded {sky_text!r}, but the line's card {t} is {expected!r}"
            )
        tricks.append(
            Trick(
                round_index,
                t,
                group_of(t, rules.spec.group_sizes),
                leader,
                tuple(plays),
                winner=winner,
                sky=line[t],
            )
        )
    return tricks


def read_rules(value: object, err: ErrorClass) -> RulesConfig:
    """The rules configuration (``RulesConfig.to_dict`` form) at path ``rules``."""
    try:
        return RulesConfig.from_dict(value, "rules")
    except CslError as e:
        raise err(str(e)) from None


_GAME_FILES: Final = {
    "csl-record": ("a Candy Spiders Leopards record", "without --game candy-lab"),
    "csl-position": ("a Candy Spiders Leopards position", "without --game candy-lab"),
    "candylab-record": ("a Candy Lab record", "with --game candy-lab"),
}
"""Files of one game by their format, and how the CLI reads them: the hint for a file of
the other game."""


def refuse_other_game(data: object, fmt: str, err: ErrorClass) -> None:
    """Before any other check of a file expected in format fmt: one of the other game says
    how to read it."""
    found = data.get("format") if isinstance(data, Mapping) else None
    other = _GAME_FILES.get(found) if isinstance(found, str) else None
    if other is not None and fmt in _GAME_FILES and _GAME_FILES[fmt][1] != other[1]:
        raise err(f"format: {found!r} is {other[0]}: read it {other[1]}")


def check_header(data: Mapping[str, Any], fmt: str, version: int, err: ErrorClass) -> None:
    """The fixed ``format`` and ``version`` fields."""
    if data["format"] != fmt:
        refuse_other_game(data, fmt, err)
        raise err(f"format: must be {fmt!r}, got {short_repr(data['format'])}")
    if not is_int(data["version"]) or data["version"] != version:
        raise err(
            f"version: this program reads version {version}, got {short_repr(data['version'])}"
        )


def read_json_file(source: str | os.PathLike[str], what: str, err: ErrorClass) -> object:
    """The JSON value in a file, or on standard input for ``"-"``; errors name the file.

    The text is read by the bounded ``read_input_text``; nesting too deep for the parser
    and integers too long to convert are errors like any other bad JSON.
    """
    label = "standard input" if source == "-" else f"{what} file {path_label(source)}"
    text = read_input_text(source, label, err)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise err(f"{label}: bad JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise err(f"{label}: bad JSON: nested too deeply") from None
    except ValueError as e:
        raise err(f"{label}: bad JSON: {clip(str(e))}") from None


_P = ParamSpec("_P")
_R = TypeVar("_R")


def guarded(err: ErrorClass, what: str) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Turn a stray KeyError/TypeError/ValueError/IndexError (or a value nested too deep to
    walk) into err, never a traceback."""

    def wrap(func: Callable[_P, _R]) -> Callable[_P, _R]:
        @functools.wraps(func)
        def inner(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            try:
                return func(*args, **kwargs)
            except CslError as e:
                if isinstance(e, err):
                    raise
                raise err(str(e)) from None
            except (KeyError, TypeError, ValueError, IndexError, OverflowError) as e:
                raise err(f"{what}: malformed ({type(e).__name__}: {clip(str(e))})") from None
            except RecursionError:
                raise err(f"{what}: malformed (nested too deeply)") from None

        return inner

    return wrap
