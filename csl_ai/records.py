"""Game records: a whole game as JSON, and a replay that re-checks every step.

A record holds the rules and deck, the seed, the sky deck order, and for every round the
sky line, the deal, each seat's allocation and declaration and every trick, then the
final scores and winners (docs/records.md). ``replay_record`` rebuilds the game from the
record through the rules engine and raises ``InvalidRecordError`` naming the first step
the rules reject, or the first recorded figure the replay disagrees with, by its JSON
path: ``rounds[1].tricks[4].plays[2]: R5 does not follow: seat 2 must follow green``.

A record without ``result`` is an unfinished game; it replays to where it stops.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Final, cast

from csl_ai.errors import IllegalMoveError, InvalidRecordError, RecordWriteError, path_label, short_repr
from csl_ai.files import create_file_exclusive, write_file_atomic
from csl_ai.game import SCORE_COLUMNS, Game, Phase, Trick, sky_cards_for
from csl_ai.jsonio import (
    check_bool_or_null,
    check_header,
    check_list,
    check_object,
    check_seat,
    format_json,
    guarded,
    is_int,
    read_card,
    read_cards,
    read_json_file,
    read_line,
    read_piles,
    read_rules,
    read_tricks,
    refuse_other_game,
    round_to_json,
)
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import card_str, format_cards, format_piles
from csl_ai.record_lock import RecordLock, claim_record_name, lock_path
from csl_ai.rules import RulesConfig

RECORD_FORMAT: Final = "csl-record"
RECORD_VERSION: Final = 1

_REQUIRED: Final = ("format", "version", "rules", "sky_order", "rounds")
_OPTIONAL: Final = ("seed", "agents", "meta", "result")
_ROUND_FIELDS: Final = (
    "line",
    "line_ids",
    "first_player",
    "hands",
    "set_aside",
    "allocations",
    "declarations",
    "tricks",
)
_RESULT_FIELDS: Final = ("scores", "winners", "outright")
_ERR: Final = InvalidRecordError



@dataclass(frozen=True)
class _Round:
    """One round of a record, parsed and shape-checked."""

    line: tuple[int, ...]
    first_player: int
    hands: tuple[int, ...]
    set_aside: int
    allocations: tuple[tuple[int, ...] | None, ...]
    declarations: tuple[bool | None, ...]
    tricks: tuple[Trick, ...]


@dataclass(frozen=True)
class _Result:
    scores: tuple[Mapping[str, int], ...]
    winners: tuple[int, ...]
    outright: int | None


@dataclass(frozen=True)
class _Record:
    rules: RulesConfig
    seed: int | None
    sky_order: tuple[int, ...]
    rounds: tuple[_Round, ...]
    result: _Result | None


# --- writing ----------------------------------------------------------------------------
def game_to_record(
    game: Game,
    *,
    agents: Sequence[str] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record of a game so far (finished or not); agents names the player of each seat."""
    n = game.players
    record: dict[str, Any] = {
        "format": RECORD_FORMAT,
        "version": RECORD_VERSION,
        "rules": game.rules.to_dict(),
        "seed": game.seed,
    }
    if agents is not None:
        if (
            isinstance(agents, str)
            or len(agents) != n
            or not all(isinstance(a, str) for a in agents)
        ):
            raise _ERR(f"agents: must be {n} names, one per seat, got {short_repr(agents)}")
        record["agents"] = list(agents)
    if meta is not None:
        if not isinstance(meta, Mapping):
            raise _ERR(f"meta: must be a JSON object, got {short_repr(meta)}")
        try:
            record["meta"] = json.loads(json.dumps(meta, allow_nan=False))
        except (TypeError, ValueError) as e:
            raise _ERR(f"meta: not JSON data: {e}") from None
    cards = game.sky_cards
    rounds = [
        round_to_json(
            r,
            cards,
            {
                "hands": [format_cards(h or 0) for h in r.hands],
                "set_aside": format_cards(r.set_aside) if r.set_aside else None,
                "allocations": [format_piles(a) if a is not None else None for a in r.allocations],
            },
        )
        for r in game.rounds
    ]
    record["sky_order"] = list(game.sky_order)
    record["rounds"] = rounds
    if game.is_over:
        result = game.result()
        record["result"] = {
            "scores": [line.as_dict() for line in result.scores],
            "winners": list(result.winners),
            "outright": result.outright,
        }
    return record


def record_to_json(record: Mapping[str, Any]) -> str:
    """The record as saved: indented JSON, the same text for the same record."""
    try:
        return format_json(record)
    except (TypeError, ValueError) as e:
        raise _ERR(f"record: not JSON data: {e}") from None


def save_record(
    record: Mapping[str, Any], path: str | os.PathLike[str], *, exclusive: bool = False
) -> None:
    """Check the record's shape, then write it atomically (``write_file_atomic``: a
    temporary file in the same folder, fsync, rename).

    A reader never sees a half-written file. UnsafeOutputError if something other than a
    regular file is at path (a FIFO, a symbolic link, a device: never replaced);
    RecordWriteError if the file cannot be written. exclusive: path must name nothing
    yet, and the file is created so that nothing is ever replaced, even a file another
    process created a moment before (``create_file_exclusive``); OutputExistsError
    (`csl_ai.files`) when the name is taken.
    """
    _parse(record)
    text = record_to_json(record)
    label = f"record file {path_label(path)}"
    if exclusive:
        create_file_exclusive(path, text, label, RecordWriteError)
    else:
        write_file_atomic(path, text, label, RecordWriteError)


RECORDS_DIR_ENV: Final = "CSL_RECORDS_DIR"
"""Environment variable naming the folder where games are saved (overrides the default)."""


def records_folder() -> Path:
    """Where `csl play` and `csl serve` save their records: ``$CSL_RECORDS_DIR`` if set,
    else ``$XDG_DATA_HOME/csl/records`` (``~/.local/share/csl/records``). Not created here."""
    given = os.environ.get(RECORDS_DIR_ENV)
    if given:
        return Path(given).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "csl" / "records"


def _records_folder_ready(folder: Path | None) -> Path:
    """folder (default `records_folder`), created if missing (RecordWriteError if it cannot be)."""
    folder = records_folder() if folder is None else folder
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise RecordWriteError(
            f"cannot create the records folder {path_label(folder)}: {e.strerror or e}"
        ) from None
    return folder


def _stamp(now: datetime | None) -> str:
    return "csl-game-" + (now or datetime.now()).strftime("%Y%m%d-%H%M%S")


def new_record_path(folder: Path | None = None, now: datetime | None = None) -> Path:
    """A path for a new record in folder (default `records_folder`, created if missing),
    named by the time: ``csl-game-20250101-120000.json``, ``-2``, ``-3``... if taken (a
    name whose lock file is there counts as taken: a game being played will save there).

    Only a name free now: another process may take it next. A game that will be saved
    later claims its name instead (`claim_new_record`), and a record saved at once is
    created exclusively (`save_new_record`)."""
    folder = _records_folder_ready(folder)
    stamp = _stamp(now)
    path = folder / f"{stamp}.json"
    n = 1
    while os.path.lexists(path) or os.path.lexists(lock_path(path)):
        n += 1
        path = folder / f"{stamp}-{n}.json"
    return path


def claim_new_record(
    folder: Path | None = None, now: datetime | None = None, program: str = "csl"
) -> RecordLock:
    """A new record name in folder (default `records_folder`, created if missing), named
    by the time as `new_record_path` names it, and held by this process: its lock is taken
    (`csl_ai.record_lock`), so no other process picks the same name, even one started in
    the same second. Save the record there with ``save_record(..., exclusive=True)`` the
    first time; release the lock once the game is no longer played."""
    return claim_record_name(_records_folder_ready(folder), _stamp(now), program)


def save_new_record(
    record: Mapping[str, Any], folder: Path | None = None, program: str = "csl"
) -> Path:
    """Save a record under a new name in folder (``claim_new_record``, then exclusive
    creation) and let the name go: for a record saved once, such as an upload."""
    lock = claim_new_record(folder, program=program)
    try:
        save_record(record, lock.record, exclusive=True)
    finally:
        lock.release()
    return lock.record


# --- reading ----------------------------------------------------------------------------
def load_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a record file (``"-"`` reads standard input) and check its shape.

    The rules are not replayed here (``replay_record`` does that); an unreadable file, bad
    JSON, a wrong header or a malformed field raise InvalidRecordError.
    """
    data = read_json_file(path, "record", _ERR)
    _parse(data)
    return cast(dict[str, Any], data)


@guarded(InvalidRecordError, "record")
def _parse(data: object) -> _Record:
    refuse_other_game(data, RECORD_FORMAT, _ERR)
    top = check_object(data, "", _ERR, _REQUIRED, _OPTIONAL)
    check_header(top, RECORD_FORMAT, RECORD_VERSION, _ERR)
    rules = read_rules(top["rules"], _ERR)
    n = rules.players
    spec = rules.spec
    seed = top.get("seed")
    if seed is not None and not is_int(seed):
        raise _ERR(f"seed: must be an integer or null, got {short_repr(seed)}")
    agents = top.get("agents")
    if agents is not None:
        check_list(agents, "agents", _ERR, "names")
        if len(agents) != n:
            raise _ERR(f"agents: must hold one name per seat ({n}), got {len(agents)}")
        for s, name in enumerate(agents):
            if not isinstance(name, str):
                raise _ERR(f"agents[{s}]: must be a name, got {short_repr(name)}")
    if top.get("meta") is not None and not isinstance(top["meta"], Mapping):
        raise _ERR(f"meta: must be an object, got {short_repr(top['meta'])}")
    n_sky = len(sky_cards_for(rules))
    order = check_list(top["sky_order"], "sky_order", _ERR, "sky card ids")
    if not all(is_int(v) for v in order) or sorted(order) != list(range(n_sky)):
        raise _ERR(f"sky_order: must be an order of the sky card ids 0..{n_sky - 1}, each once")
    rounds_json = check_list(top["rounds"], "rounds", _ERR, "rounds")
    if len(rounds_json) > spec.rounds:
        raise _ERR(f"rounds: a {n}-player game has {spec.rounds} rounds, got {len(rounds_json)}")
    used: set[int] = set()
    rounds = tuple(
        _parse_round(raw, i, rules, used, last=i == len(rounds_json) - 1)
        for i, raw in enumerate(rounds_json)
    )
    result = _parse_result(top["result"], n) if top.get("result") is not None else None
    return _Record(rules, seed, tuple(order), rounds, result)


def _parse_round(raw: object, i: int, rules: RulesConfig, used: set[int], last: bool) -> _Round:
    where = f"rounds[{i}]"
    n = rules.players
    spec = rules.spec
    obj = check_object(raw, where, _ERR, _ROUND_FIELDS)
    line = read_line(obj["line"], obj["line_ids"], where, _ERR, rules, used)
    first = check_seat(obj["first_player"], n, f"{where}.first_player", _ERR)
    hands_json = check_list(obj["hands"], f"{where}.hands", _ERR, "hands, one per seat")
    if len(hands_json) != n:
        raise _ERR(f"{where}.hands: must hold one hand per seat ({n}), got {len(hands_json)}")
    hands: list[int] = []
    dealt = 0
    for s, text in enumerate(hands_json):
        hwhere = f"{where}.hands[{s}]"
        hand = read_cards(text, hwhere, _ERR, spec.rain_cards)
        if hand.bit_count() != spec.hand_size:
            raise _ERR(
                f"{hwhere}: a {n}-player hand has {spec.hand_size} cards, got {hand.bit_count()}"
            )
        if hand & dealt:
            twice = (hand & dealt & -(hand & dealt)).bit_length() - 1
            other = next(k for k, h in enumerate(hands) if (h >> twice) & 1)
            raise _ERR(f"{hwhere}: {card_str(twice)} is also in hands[{other}]")
        dealt |= hand
        hands.append(hand)
    set_aside = 0
    if spec.set_aside:
        card = read_card(obj["set_aside"], f"{where}.set_aside", _ERR)
        if (dealt >> card) & 1:
            other = next(k for k, h in enumerate(hands) if (h >> card) & 1)
            raise _ERR(f"{where}.set_aside: {card_str(card)} is also in hands[{other}]")
        if not (spec.rain_cards >> card) & 1:
            raise _ERR(f"{where}.set_aside: {card_str(card)} is not in use in this game")
        set_aside = 1 << card
    elif obj["set_aside"] is not None:
        raise _ERR(f"{where}.set_aside: must be null: only a 5-player game sets a card aside")
    allocations_json = check_list(obj["allocations"], f"{where}.allocations", _ERR, "piles or null")
    if len(allocations_json) != n:
        raise _ERR(
            f"{where}.allocations: must hold one entry per seat ({n}), got {len(allocations_json)}"
        )
    allocations: list[tuple[int, ...] | None] = []
    for s, text in enumerate(allocations_json):
        awhere = f"{where}.allocations[{s}]"
        if text is None and not last:
            raise _ERR(f"{awhere}: missing (null), but a later round follows")
        allocations.append(None if text is None else read_piles(text, awhere, _ERR, rules))
    declarations_json = check_list(
        obj["declarations"], f"{where}.declarations", _ERR, "true/false/null"
    )
    if len(declarations_json) != n:
        raise _ERR(
            f"{where}.declarations: must hold one entry per seat ({n}), "
            f"got {len(declarations_json)}"
        )
    declarations: list[bool | None] = []
    for s, value in enumerate(declarations_json):
        dwhere = f"{where}.declarations[{s}]"
        declaration = check_bool_or_null(value, dwhere, _ERR)
        if declaration is None and not last:
            raise _ERR(f"{dwhere}: missing (null), but a later round follows")
        declarations.append(declaration)
    tricks = read_tricks(obj["tricks"], where, _ERR, rules, i, line, may_stop=last)
    return _Round(
        line, first, tuple(hands), set_aside, tuple(allocations), tuple(declarations), tuple(tricks)
    )


def _parse_result(raw: object, n: int) -> _Result:
    obj = check_object(raw, "result", _ERR, _RESULT_FIELDS)
    scores_json = check_list(obj["scores"], "result.scores", _ERR, "score lines")
    if len(scores_json) != n:
        raise _ERR(
            f"result.scores: must hold one score line per seat ({n}), got {len(scores_json)}"
        )
    scores = []
    for s, line in enumerate(scores_json):
        swhere = f"result.scores[{s}]"
        row = check_object(line, swhere, _ERR, SCORE_COLUMNS)
        for col in SCORE_COLUMNS:
            if not is_int(row[col]):
                raise _ERR(f"{swhere}.{col}: must be an integer, got {short_repr(row[col])}")
        scores.append(dict(row))
    winners_json = check_list(obj["winners"], "result.winners", _ERR, "seats")
    winners = [check_seat(w, n, f"result.winners[{k}]", _ERR) for k, w in enumerate(winners_json)]
    if not winners or winners != sorted(set(winners)):
        raise _ERR(
            f"result.winners: must be one or more seats in increasing order, got {winners_json!r}"
        )
    outright = obj["outright"]
    if outright is not None:
        outright = check_seat(outright, n, "result.outright", _ERR)
    return _Result(tuple(scores), tuple(winners), outright)


# --- replay -----------------------------------------------------------------------------
@guarded(InvalidRecordError, "record")
def replay_record(record: object, *, auto_deal: bool = False) -> Game:
    """Rebuild the game a record describes, checking every step, winner and score.

    Raises InvalidRecordError naming the first illegal step or wrong figure by its JSON
    path. A record without ``result`` replays to where it stops. The game comes back
    with ``auto_deal`` as asked: True deals the next round now if the record stopped
    between rounds, and lets play go on. When the record's seed produced its sky order
    and deals, the game's random stream is left where the original game's was, so a
    resumed game deals what the original would have.
    """
    rec = _parse(record)
    game, synced = _start(rec)
    for i, rnd in enumerate(rec.rounds):
        where = f"rounds[{i}]"
        game, synced = _deal(game, rnd, where, synced)
        for s, piles in enumerate(rnd.allocations):
            if piles is not None:
                _apply(game, Allocate(piles), s, f"{where}.allocations[{s}]")
        for s, declaration in enumerate(rnd.declarations):
            if declaration is not None:
                _apply(game, Declare(declaration), s, f"{where}.declarations[{s}]")
        for t, trick in enumerate(rnd.tricks):
            twhere = f"{where}.tricks[{t}]"
            if game.phase is Phase.PLAY and trick.leader != game.to_move:
                raise _ERR(
                    f"{twhere}.leader: recorded seat {trick.leader}, "
                    f"but seat {game.to_move} leads this trick"
                )
            for p, (seat, card) in enumerate(trick.plays):
                _apply(game, Play(card), seat, f"{twhere}.plays[{p}]")
            if trick.complete:
                played = game.rounds[-1].tricks[-1]
                if played.winner != trick.winner:
                    raise _ERR(
                        f"{twhere}.winner: recorded seat {trick.winner}, "
                        f"but seat {played.winner} wins this trick"
                    )
    _check_result(game, rec.result)
    if auto_deal:
        game.auto_deal = True
        if game.phase is Phase.DEAL:
            game.deal()
    return game


def _start(rec: _Record) -> tuple[Game, bool]:
    """A new game for the record, and whether its random stream follows the record's seed."""
    if rec.seed is not None:
        game = Game(rec.rules, seed=rec.seed, auto_deal=False)
        if game.sky_order == rec.sky_order:
            return game, True
    return Game(rec.rules, seed=rec.seed, sky_order=rec.sky_order, auto_deal=False), False


def _deal(game: Game, rnd: _Round, where: str, synced: bool) -> tuple[Game, bool]:
    """Deal the recorded round, from the seed's stream when that gives the recorded deal."""
    if game.phase is not Phase.DEAL:
        raise _ERR(f"{where}: the previous round is not finished")
    if rnd.first_player != game.core.first_player:
        raise _ERR(
            f"{where}.first_player: recorded seat {rnd.first_player}, but seat "
            f"{game.core.first_player} holds the First player card this round"
        )
    if synced:
        trial = game.copy()
        trial.deal()
        log = trial.rounds[-1]
        if tuple(log.hands) == rnd.hands and log.set_aside == rnd.set_aside:
            game = trial
        else:
            synced = False
    if not synced:
        try:
            game.deal(list(rnd.hands), rnd.set_aside)
        except IllegalMoveError as e:
            raise _ERR(f"{where}.hands: {e}") from None
    line = game.rounds[-1].line
    if line != rnd.line:
        raise _ERR(
            f"{where}.line_ids: recorded {list(rnd.line)}, "
            f"but sky_order deals {list(line)} this round"
        )
    return game, synced


def _apply(game: Game, move: Move, seat: int, where: str) -> None:
    try:
        game.apply(move, seat)
    except IllegalMoveError as e:
        raise _ERR(f"{where}: {e}") from None


def _check_result(game: Game, result: _Result | None) -> None:
    if result is None:
        if game.is_over:
            raise _ERR("result: missing, but the recorded rounds finish the game")
        return
    if not game.is_over:
        raise _ERR("result: recorded, but the game is not over after the recorded rounds")
    actual = game.result()
    for s, line in enumerate(actual.scores):
        for col, value in line.as_dict().items():
            if result.scores[s][col] != value:
                raise _ERR(
                    f"result.scores[{s}].{col}: recorded {result.scores[s][col]}, "
                    f"the replay gives {value}"
                )
    if result.winners != actual.winners:
        raise _ERR(
            f"result.winners: recorded {list(result.winners)}, "
            f"the replay gives {list(actual.winners)}"
        )
    if result.outright != actual.outright:
        raise _ERR(
            f"result.outright: recorded {result.outright}, the replay gives {actual.outright}"
        )
