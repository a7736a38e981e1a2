"""The live games of a server: each under an unguessable id, moved by its own requests.

A `LiveGame` wraps a `csl_ai.session.Table`. Every change to a game happens on the event
loop's thread, between awaits, so a request never sees a game half-changed and reading
needs no lock. Only searches leave the loop: an AI decision (`GameStore.step`) and a hint
search from a snapshot `Observation`, in worker threads, at most
`ServerConfig.max_searches` at once, so one game's search never holds up another game's
requests. A game whose AI is thinking takes no second step and no takeback; a
resignation during the search voids its answer.

Records are saved in the records folder when a human moves, takes back, resigns and
when the game ends, so a stopped server loses nothing that a resume cannot replay (the
AI seats are seeded from the game seed); a game no human has moved in is never saved.
A game with a record holds the record's lock (`csl_ai.record_lock`) while it is in this
server (until it is resigned, let go of, or the server stops), so another server on the
same folder, or `csl play --resume`, refuses it (409 here); a new record's name is
claimed under its lock and the file created exclusively, never over another's. A
full server lets go only of a game over or not moved in, else refuses a new one (429).
In a hot-seat game no answer shows a human's secret choice (the next human reads the
same screen), and a takeback is only ever of the asking seat's own last choice.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Final

from starlette.concurrency import run_in_threadpool

from csl_ai.agents import LEVELS, make_agent
from csl_ai.analysis import win_interval
from csl_ai.errors import CslError, IllegalMoveError, NotationError, OutputWriteError, clip
from csl_ai.explain import sky_worth, sky_worth_text
from csl_ai.game import Game, Phase
from csl_ai.moves import Move, move_from_json, move_to_json
from csl_ai.notation import card_str
from csl_ai.position import observation_to_position
from csl_ai.record_lock import RecordInUseError, RecordLock, in_use_message
from csl_ai.records import claim_new_record, load_record, save_record
from csl_ai.rules import (
    KIND_BY_TEXT,
    MAX_PLAYERS,
    MIN_PLAYERS,
    RulesConfig,
    Side,
    SkyDeck,
    StarOption,
    parse_sides,
)
from csl_ai.search import SearchResult, search
from csl_ai.seeds import MAX_SEED
from csl_ai.session import HUMAN, Table
from csl_ai.web.errors import ApiError, api_error_for, bad_request, busy, conflict, not_found
from csl_ai.web.state import board_json, move_kind, move_text, result_json, rules_json, trick_json

GAME_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{16,64}")
MAX_RESUMED_ITERATIONS: Final = 200_000
"""Largest search budget of a resumed record's AI seat (a level's is at most 50,000)."""
MAX_RESUMED_MS: Final = 60_000.0
HINT_MOVES: Final = 10
"""Candidates a hint lists."""
WHY_MOVES: Final = 5
"""Candidates an AI decision's "why" lists."""
NEW_GAME_FIELDS: Final = (
    "players",
    "humans",
    "ai",
    "sides",
    "star_option",
    "deck",
    "deck_toml",
    "seed",
    "first_seat",
    "takebacks",
)
DEFAULTS: Final[Mapping[str, Any]] = {
    "players": 4,
    "humans": [0],
    "ai": "normal",
    "sides": {"candy": "A", "spider": "A", "leopard": "A", "star": "A"},
    "star_option": "twice",
    "deck": "default",
    "takebacks": True,
}
APP_NAME: Final = "csl serve"


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class ServerConfig:
    """What a server allows: where records go, the AI levels offered, its limits."""

    records_dir: Path
    levels: Mapping[str, str]
    """AI level name -> agent spec (``"fast"`` -> ``"ismcts:fast"``)."""
    max_games: int = 64
    max_searches: int = field(default_factory=usable_cpus)
    """AI and hint searches running at once (each on one thread); more wait their turn."""
    max_analyses: int = 2
    json_limit: int = 1 << 20
    record_limit: int = 1 << 20


def level_specs(test_ai: str | None = None) -> dict[str, str]:
    """The levels a server offers: the named ISMCTS levels, and ``test`` when given."""
    specs = {name: f"ismcts:{name}" for name in LEVELS}
    if test_ai is not None:
        make_agent(test_ai)
        specs["test"] = test_ai
    return specs


@cache
def builtin_decks() -> tuple[str, ...]:
    """The names of the decks shipped in csl_ai/decks/, ``default`` first."""
    names = sorted(
        entry.name[: -len(".toml")]
        for entry in resources.files("csl_ai").joinpath("decks").iterdir()
        if entry.name.endswith(".toml")
    )
    return tuple(sorted(names, key=lambda name: name != "default"))


def builtin_deck(name: str) -> SkyDeck:
    """A shipped deck by name (bad_options if there is none of that name)."""
    if name not in builtin_decks():
        raise ApiError(
            400, "bad_options", f"deck: unknown built-in deck {clip(name, 40)!r} "
            f"(expected {', '.join(builtin_decks())})"
        )
    if name == "default":
        return SkyDeck.default()
    text = resources.files("csl_ai").joinpath("decks", f"{name}.toml").read_text(encoding="utf-8")
    return SkyDeck.from_toml(text, source=f"built-in deck {name!r}", default_name=name)


@dataclass(frozen=True)
class StepMade:
    """One decision just made, before it is drawn for a viewer."""

    seat: int
    by: str
    move: Move
    forced: bool
    public: bool
    """Whether every seat may see the move now (a card, or a bet once all are made)."""
    estimate: dict[str, Any] | None
    trick: dict[str, Any] | None
    round_over: bool
    game_over: bool
    candidates: list[dict[str, Any]] | None = None
    """An AI decision's top candidates, only when none shows a hidden card now."""

    @property
    def kind(self) -> str:
        return move_kind(self.move)

    def to_json(self, viewer: int, shared: bool = False) -> dict[str, Any]:
        """The step as viewer may see it; shared: a hot-seat game, whose screen the other
        humans read too, so a secret choice is shown to no one."""
        visible = self.public or (self.seat == viewer and not shared)
        return {
            "seat": self.seat,
            "by": self.by,
            "kind": move_kind(self.move),
            "move": move_to_json(self.move) if visible else None,
            "text": move_text(self.move) if visible else None,
            "forced": self.forced,
            "estimate": self.estimate,
            "trick": self.trick,
            "round_over": self.round_over,
            "game_over": self.game_over,
            "candidates": self.candidates,
        }


@dataclass(frozen=True)
class AiDecision:
    """An AI seat's searched decision, kept for the "why" of the page (`GameStore.why`)."""

    ply: int
    """Decisions made in the game before this one (a takeback drops those at or after it)."""
    round: int
    trick: int | None
    seat: int
    move: Move
    estimate: dict[str, Any]
    candidates: list[dict[str, Any]]


@dataclass(eq=False)
class LiveGame:
    """A game being played in this server."""

    id: str
    table: Table
    takebacks: bool
    record_path: Path | None = None
    status: str = "playing"
    """``playing``, ``over`` or ``resigned``."""
    resigned_by: int | None = None
    thinking: bool = False
    version: int = 0
    """Counts every change, so a search can tell whether its game moved on meanwhile."""
    last_used: float = field(default_factory=time.monotonic)
    save_error: str | None = None
    save_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    decisions: list[AiDecision] = field(default_factory=list)
    """The AI seats' searched decisions in this server (not those before a resume)."""
    record_lock: RecordLock | None = None
    """The lock of the game's record while this server holds the game (None before its
    first save, and once let go)."""

    def let_go(self) -> None:
        """Release the record's lock: this server no longer plays on this game."""
        lock, self.record_lock = self.record_lock, None
        if lock is not None:
            lock.release()

    @property
    def game(self) -> Game:
        return self.table.game

    @property
    def record_id(self) -> str | None:
        return self.record_path.stem if self.record_path is not None else None

    @property
    def playing(self) -> bool:
        return self.status == "playing"

    @property
    def moved_in(self) -> bool:
        """Whether a human has moved in this game (it has a record then, or was resumed
        from one): only such a game is ever saved."""
        return self.record_path is not None

    @property
    def hot_seat(self) -> bool:
        return len(self.table.humans) > 1

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def changed(self) -> None:
        """Note a change of the game: a new version, and over once the rules say so."""
        self.version += 1
        self.touch()
        if self.status == "playing" and self.game.is_over:
            self.status = "over"


def _estimate(result: SearchResult | None, move: Move) -> dict[str, Any] | None:
    """An AI decision's own search summary (None when forced or not searched)."""
    if result is None or result.iterations == 0 or not result.moves:
        return None
    stats = next((m for m in result.moves if m.covers(move)), result.moves[0])
    interval = win_interval(stats)
    return {
        "win_probability": stats.win_probability,
        "ci95": list(interval) if interval is not None else None,
        "expected_points": stats.expected_points,
        "visits": stats.visits,
        "iterations": result.iterations,
        "elapsed_s": result.elapsed_s,
    }


def _candidates(result: SearchResult, limit: int) -> list[dict[str, Any]]:
    """A search's top candidates, best first (docs/web-api.md: Candidate)."""
    return [
        {
            "move": move_to_json(m.move),
            "text": move_text(m.move),
            "visits": m.visits,
            "win_probability": m.win_probability,
            "ci95": list(interval) if (interval := win_interval(m)) is not None else None,
            "expected_points": m.expected_points,
        }
        for m in result.moves[:limit]
    ]


def _trick_index(game: Game) -> int:
    """The line position of the trick in progress, or of the next one."""
    current = game.current_trick
    return current.index if current is not None else len(game.rounds[-1].tricks)


def decisions_made(game: Game) -> int:
    """How many decisions (allocations, bets, cards) the game has seen."""
    count = 0
    for log in game.rounds:
        count += sum(a is not None for a in log.allocations)
        count += sum(d is not None for d in log.declarations)
        count += sum(len(t.plays) for t in log.tricks)
    return count


def check_fields(body: Mapping[str, Any], allowed: Sequence[str], what: str) -> None:
    """400 naming the first field of body that is not in allowed."""
    for key in body:
        if key not in allowed:
            raise bad_request(
                f"{what}: unknown field {clip(str(key), 40)!r} (expected {', '.join(allowed)})"
            )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bad_options(message: str) -> ApiError:
    return ApiError(400, "bad_options", message)


def _viewer(table: Table, seat: str | int | None, playing: bool) -> int:
    """The human seat of table a state is drawn for (`viewer_seat`)."""
    return viewer_seat(seat, sorted(table.humans), table.waiting_for if playing else None)


def viewer_seat(seat: object, humans: Sequence[int], waiting: int | None) -> int:
    """The human seat a state is drawn for, in either game: seat when given (text from a
    query, or an int; 400 unless one of humans), else waiting when it is a human seat,
    else the lowest human seat."""
    if seat is None or seat == "":
        return waiting if waiting is not None and waiting in humans else min(humans)
    if isinstance(seat, str):
        if not seat.isdigit() or len(seat) > 3:
            raise bad_request(f"seat: must be a seat number, got {clip(seat, 20)!r}")
        seat = int(seat)
    if not _is_int(seat) or seat not in humans:
        raise bad_request(
            f"seat: {clip(repr(seat), 20)} is not a human seat of this game "
            f"(human seats: {', '.join(map(str, humans))})"
        )
    assert isinstance(seat, int)
    return seat


class GameStore:
    """The live games of one server, by id, and the operations the API runs on them."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.games: dict[str, LiveGame] = {}
        self._search_slots = asyncio.Semaphore(config.max_searches)
        self._path_lock = asyncio.Lock()
        self._level_of_spec = {spec: name for name, spec in config.levels.items()}

    # --- looking games up -----------------------------------------------------------------
    def get(self, game_id: str) -> LiveGame:
        """The live game of that id (404 for an unknown or malformed id)."""
        game = self.games.get(game_id) if GAME_ID_RE.fullmatch(game_id) else None
        if game is None:
            raise not_found("no such game (it may have ended with a server restart: resume it from its record)")
        game.touch()
        return game

    def live_record_ids(self) -> set[str]:
        """Record ids of the games being played now (their records are not reviewed yet)."""
        return {g.record_id for g in self.games.values() if g.playing and g.record_id is not None}

    def seats_json(self, table: Table) -> list[dict[str, Any]]:
        """Who sits where: seat, human, agent spec, level name."""
        return [
            {
                "seat": s,
                "human": spec == HUMAN,
                "agent": spec,
                "level": self._level_of_spec.get(spec) if spec != HUMAN else None,
            }
            for s, spec in enumerate(table.specs)
        ]

    def viewer(self, game: LiveGame, seat: str | int | None) -> int:
        """The human seat a state is drawn for: the one asked, else the one the game waits
        for, else the lowest human seat."""
        return _viewer(game.table, seat, game.playing)

    # --- what a viewer sees ---------------------------------------------------------------
    def state(self, game: LiveGame, viewer: int) -> dict[str, Any]:
        """The game from a human seat's view (docs/web-api.md: State)."""
        table = game.table
        playing = game.playing
        to_move = table.to_move if playing else None
        forced = table.forced_move() if playing and to_move in table.humans else None
        waiting = table.waiting_for if playing and forced is None else None
        your_turn = waiting is not None and waiting == viewer
        legal: list[Any] | None = None
        if your_turn:
            phase = table.game.phase
            if phase is Phase.PLAY:
                legal = [card_str(m.card) for m in table.game.legal_moves(viewer)]  # type: ignore[union-attr]
            elif phase is Phase.WEATHER:
                legal = [True, False]
        worth = None
        if playing and table.game.phase in (Phase.ALLOCATE, Phase.WEATHER, Phase.PLAY):
            worth = (sky_worth(table.game, viewer), sky_worth_text(table.game, viewer))
        if not playing:
            next_ = "none"
        elif waiting is not None:
            next_ = "human"
        else:
            next_ = "step"
        return {
            "id": game.id,
            "record_id": game.record_id,
            "viewer": viewer,
            "status": game.status,
            "next": next_,
            "waiting_for": waiting,
            "your_turn": your_turn,
            "thinking": game.thinking,
            "legal": legal,
            "forced": move_to_json(forced) if forced is not None and to_move == viewer else None,
            "can_undo": self._can_undo(game, viewer),
            "takebacks": game.takebacks,
            "humans": sorted(table.humans),
            "rules": rules_json(table.game.rules),
            "board": board_json(
                table.game, viewer, self.seats_json(table), to_move=to_move, worth=worth
            ),
            "result": result_json(table.game),
            "resigned_by": game.resigned_by,
            "save_error": game.save_error,
        }

    def _can_undo(self, game: LiveGame, viewer: int) -> bool:
        return (
            game.takebacks
            and not game.thinking
            and game.status != "resigned"
            and game.table.can_undo(viewer)
        )

    # --- starting games ---------------------------------------------------------------------
    async def create(self, body: Mapping[str, Any], asked: str | None = None) -> tuple[LiveGame, int]:
        """A new game from the options of docs/web-api.md (bad_options for refused ones)
        and the seat to draw it for (asked, checked before the game is added)."""
        check_fields(body, NEW_GAME_FIELDS, "new game")
        table, takebacks = self._new_table(body)
        viewer = _viewer(table, asked, True) if asked else None
        game = await self._admit(table, takebacks, None)
        return game, viewer if viewer is not None else self.viewer(game, None)

    def _new_table(self, body: Mapping[str, Any]) -> tuple[Table, bool]:
        players = body.get("players", DEFAULTS["players"])
        if not _is_int(players) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise _bad_options(
                f"players: must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {clip(repr(players), 40)}"
            )
        humans = body.get("humans", DEFAULTS["humans"])
        if not isinstance(humans, list) or not humans or not all(_is_int(h) for h in humans):
            raise _bad_options(f"humans: must be a list of one or more seats, got {clip(repr(humans), 40)}")
        if len(set(humans)) != len(humans):
            raise _bad_options(f"humans: a seat is given twice in {clip(repr(humans), 40)}")
        for seat in humans:
            if not 0 <= seat < players:
                raise _bad_options(
                    f"humans: seat {seat} is not in a {players}-player game (seats 0..{players - 1})"
                )
        ai_seats = [s for s in range(players) if s not in humans]
        levels = self._ai_levels(body.get("ai", DEFAULTS["ai"]), len(ai_seats))
        takebacks = body.get("takebacks", True)
        if not isinstance(takebacks, bool):
            raise _bad_options(f"takebacks: must be true or false, got {clip(repr(takebacks), 40)}")
        seed = body.get("seed")
        if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
            raise _bad_options(f"seed: must be an integer 0..2^63-1 or null, got {clip(repr(seed), 40)}")
        first_seat = body.get("first_seat", 0)
        try:
            rules = RulesConfig(
                players=players,
                sides=self._sides(body.get("sides", DEFAULTS["sides"])),
                star_option=self._star_option(body.get("star_option", DEFAULTS["star_option"])),
                deck=self._deck(body.get("deck"), body.get("deck_toml")),
                first_seat=first_seat,
            )
            specs = [HUMAN] * players
            for seat, level in zip(ai_seats, levels, strict=True):
                specs[seat] = self.config.levels[level]
            game = Game(rules, seed=seed)
            table = Table(game, specs, meta={"app": APP_NAME, "takebacks": takebacks})
        except CslError as e:
            raise api_error_for(e, "bad_options") from None
        return table, takebacks

    def _ai_levels(self, value: object, count: int) -> list[str]:
        choices = ", ".join(self.config.levels)
        if isinstance(value, str):
            levels = [value] * count
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            if len(value) != count:
                raise _bad_options(f"ai: {len(value)} levels for {count} AI seats")
            levels = list(value)
        else:
            raise _bad_options(f"ai: must be a level ({choices}) or a list of levels, got {clip(repr(value), 40)}")
        for level in levels:
            if level not in self.config.levels:
                raise _bad_options(f"ai: unknown level {clip(level, 40)!r} (expected {choices})")
        return levels

    @staticmethod
    def _sides(value: object) -> tuple[Side, ...]:
        if isinstance(value, str):
            return parse_sides(value)
        if not isinstance(value, Mapping):
            raise _bad_options(f"sides: must be an object like {{\"candy\": \"B\"}}, got {clip(repr(value), 40)}")
        sides = [Side.A] * len(KIND_BY_TEXT)
        for key, side in value.items():
            kind = KIND_BY_TEXT.get(key) if isinstance(key, str) else None
            if kind is None:
                raise _bad_options(
                    f"sides: unknown kind {clip(repr(key), 40)} (expected {', '.join(KIND_BY_TEXT)})"
                )
            if side not in ("A", "B"):
                raise _bad_options(f"sides.{key}: must be 'A' or 'B', got {clip(repr(side), 40)}")
            sides[kind] = Side(side)
        return tuple(sides)

    @staticmethod
    def _star_option(value: object) -> StarOption:
        choices = [o.value for o in StarOption]
        if value not in choices:
            raise _bad_options(f"star_option: must be {' or '.join(choices)}, got {clip(repr(value), 40)}")
        return StarOption(value)

    @staticmethod
    def _deck(deck: object, deck_toml: object) -> SkyDeck:
        if deck is not None and deck_toml is not None:
            raise _bad_options("deck, deck_toml: give one of them, not both")
        if deck_toml is not None:
            if not isinstance(deck_toml, str):
                raise _bad_options(f"deck_toml: must be the text of a deck file, got {clip(repr(deck_toml), 40)}")
            return SkyDeck.from_toml(deck_toml, source="deck_toml", default_name="custom")
        if deck is None:
            return builtin_deck("default")
        if isinstance(deck, str):
            return builtin_deck(deck)
        if isinstance(deck, Mapping):
            return SkyDeck.from_dict(deck, "deck")
        raise _bad_options(f"deck: must be a built-in deck name or a deck object, got {clip(repr(deck), 40)}")

    async def resume(
        self, record: Mapping[str, Any], path: Path, asked: str | None = None
    ) -> tuple[LiveGame, bool, int]:
        """The live game of a saved unfinished game, whether it is new, and the seat to
        draw it for (checked before the game is added): a game of this record already
        being played here is returned as it is; one being played by another process (its
        record's lock is held elsewhere) is refused (409). Once the lock is held the
        record is read again, so the game goes on from its last save."""
        for game in self.games.values():
            if game.playing and game.record_path == path:
                viewer = self.viewer(game, asked)
                game.touch()
                return game, False, viewer
        self._check_resumable(record)
        try:
            lock = await run_in_threadpool(RecordLock.acquire, path, APP_NAME)
        except RecordInUseError as e:
            raise conflict(in_use_message(path.stem, e.holder)) from None
        except CslError as e:  # the lock file cannot be made (a read-only folder)
            raise conflict(f"cannot hold this record while it is played: {e}") from None
        try:
            try:
                record = await run_in_threadpool(load_record, path)
            except CslError as e:
                raise ApiError(400, "bad_record", str(e)) from None
            self._check_resumable(record)
            table, takebacks = await self._resumed_table(record)
            viewer = _viewer(table, asked, True) if asked else None
            game = await self._admit(table, takebacks, path, lock)
        except BaseException:
            lock.release()
            raise
        return game, True, viewer if viewer is not None else self.viewer(game, None)

    def _check_resumable(self, record: Mapping[str, Any]) -> None:
        """Refuse a record that cannot be played on here: resigned or over (409), no human
        seat, or an AI this server does not run (400)."""
        meta = record.get("meta")
        if isinstance(meta, Mapping) and meta.get("resigned") is not None:
            raise conflict("this game was resigned: there is nothing to resume")
        if record.get("result") is not None:
            raise conflict("this game is over: there is nothing to resume")
        agents = record.get("agents") or ()
        if not any(a == HUMAN for a in agents):
            raise ApiError(400, "bad_record", "the record has no human seat to play")
        for seat, spec in enumerate(agents):
            if spec != HUMAN:
                self._check_ai_spec(seat, spec)

    @staticmethod
    async def _resumed_table(record: Mapping[str, Any]) -> tuple[Table, bool]:
        """The table of a checked record and whether it allows takebacks."""
        try:
            table = await run_in_threadpool(Table.resume, record)
        except CslError as e:
            raise ApiError(400, "bad_record", str(e)) from None
        takebacks = table.meta.get("takebacks", True)
        return table, takebacks if isinstance(takebacks, bool) else True

    def _check_ai_spec(self, seat: int, spec: object) -> None:
        """Refuse a record's AI whose search this server will not run: a budget without
        bound, above `MAX_RESUMED_ITERATIONS`, or more threads than CPUs."""
        if spec in self._level_of_spec:
            return
        try:
            agent = make_agent(spec) if isinstance(spec, str) else None
        except CslError as e:
            raise ApiError(400, "bad_record", f"agents[{seat}]: {e}") from None
        if agent is None:
            raise ApiError(400, "bad_record", f"agents[{seat}]: must be an agent spec")
        limit = getattr(agent, "limit", None)
        if limit is None:
            return
        iterations, time_ms = limit.iterations, limit.time_ms
        bounded = (iterations is not None and iterations <= MAX_RESUMED_ITERATIONS) or (
            iterations is None and time_ms is not None and time_ms <= MAX_RESUMED_MS
        )
        if not bounded or limit.threads > usable_cpus():
            raise ApiError(
                400,
                "bad_record",
                f"agents[{seat}]: this server does not play {clip(str(spec), 60)!r} "
                f"(at most {MAX_RESUMED_ITERATIONS:,} iterations or {MAX_RESUMED_MS / 1000:.0f} s "
                f"a decision, on at most {usable_cpus()} threads)",
            )

    async def _admit(
        self, table: Table, takebacks: bool, path: Path | None, lock: RecordLock | None = None
    ) -> LiveGame:
        """Add a game. A full server first lets go of the least recently used game that
        loses nothing by it: one over or resigned (its record is saved), else one no human
        has moved in yet (it has no record, and gets none). A game a player moved in is
        never let go: with only such games, the new one is refused (429 busy)."""
        while len(self.games) >= self.config.max_games:
            spare = [g for g in self.games.values() if not g.thinking and (not g.playing or not g.moved_in)]
            if not spare:
                raise busy(
                    f"the server holds {len(self.games)} games being played, its limit: finish or "
                    "resign one, or try again later"
                )
            victim = min(spare, key=lambda g: (g.playing, g.last_used))
            del self.games[victim.id]
            victim.let_go()
        game = LiveGame(secrets.token_urlsafe(24), table, takebacks, record_path=path, record_lock=lock)
        self.games[game.id] = game
        return game

    # --- moving -------------------------------------------------------------------------
    async def move(self, game: LiveGame, body: Mapping[str, Any], asker: int | None = None) -> StepMade:
        """A human's decision (illegal_move with the engine's reason for a refused one).
        The mover is the body's ``seat``, else asker (the request's ``?seat=``), else the
        seat the game waits for; a body seat other than asker is refused."""
        check_fields(body, ("move", "seat"), "move request")
        if "move" not in body:
            raise bad_request("move: missing")
        seat = body.get("seat")
        if seat is not None and not _is_int(seat):
            raise bad_request(f"seat: must be a seat number, got {clip(repr(seat), 40)}")
        if seat is not None and asker is not None and seat != asker:
            raise bad_request(f"seat: the body says seat {seat}, the query seat {asker}")
        if seat is None:
            seat = asker
        if not game.playing:
            raise conflict(f"the game is {'over' if game.status == 'over' else 'resigned'}")
        table = game.table
        try:
            move = move_from_json(body["move"], table.game.rules.spec.group_sizes)
        except NotationError as e:
            raise bad_request(str(e)) from None
        forced = table.forced_move() is not None
        mover = table.waiting_for
        rounds = len(table.game.rounds)
        try:
            table.play(move, seat)
        except IllegalMoveError as e:
            raise api_error_for(e) from None
        assert mover is not None
        made = self._made(
            game, table.game.rounds[rounds - 1].tricks, mover, "human", move, forced, None, rounds
        )
        game.changed()
        await self.save(game)
        return made

    async def step(self, game: LiveGame) -> StepMade | None:
        """One decision that is not a human's choice: the AI seat to move decides (searching
        off the loop), or a human's only legal card is played for them. None when a human
        must choose or the game is over."""
        if game.thinking:
            raise conflict("the AI is already thinking in this game")
        if not game.playing:
            return None
        table = game.table
        seat = table.to_move
        if seat is None:
            return None
        rounds = len(table.game.rounds)
        if seat in table.humans:
            only = table.forced_move()
            if only is None:
                return None
            table.play(only, seat)
            made = self._made(game, table.game.rounds[rounds - 1].tricks, seat, "auto", only, True, None, rounds)
            game.changed()
            await self.save(game)
            return made
        turn = table.ai_turn()
        assert turn is not None
        forced = table.forced_move() is not None
        version = game.version
        game.thinking = True
        try:
            async with self._search_slots:
                if game.version == version and game.playing:
                    step = await run_in_threadpool(turn.think)
        finally:
            game.thinking = False
        if game.version != version or not game.playing:
            raise conflict("the game changed while the AI was thinking; its move is dropped")
        ply = decisions_made(table.game)
        trick_index = _trick_index(table.game) if move_kind(step.move) == "play" else None
        table.apply_ai(step)
        estimate = _estimate(step.result, step.move)
        made = self._made(
            game,
            table.game.rounds[rounds - 1].tricks,
            seat,
            "ai",
            step.move,
            forced,
            estimate,
            rounds,
        )
        if estimate is not None and step.result is not None:
            candidates = _candidates(step.result, WHY_MOVES)
            game.decisions.append(
                AiDecision(ply, rounds - 1, trick_index, seat, step.move, estimate, candidates)
            )
            if made.kind == "weather" and made.public:
                made = replace(made, candidates=candidates)
        game.changed()
        if not game.playing:
            await self.save(game)
        return made

    def _made(
        self,
        game: LiveGame,
        tricks: Sequence[Any],
        seat: int,
        by: str,
        move: Move,
        forced: bool,
        estimate: dict[str, Any] | None,
        rounds_before: int,
    ) -> StepMade:
        """The StepMade of a move just applied (rounds_before: rounds dealt before it)."""
        g = game.game
        kind = move_kind(move)
        trick = None
        if kind == "play" and tricks:
            trick = trick_json(tricks[-1], g.sky_cards, g.rounds[rounds_before - 1].line)
        public = kind == "play" or (kind == "weather" and g.phase is not Phase.WEATHER)
        if kind == "weather" and len(g.rounds) > rounds_before:
            public = True
        return StepMade(
            seat=seat,
            by=by,
            move=move,
            forced=forced,
            public=public,
            estimate=estimate,
            trick=trick,
            round_over=g.is_over or len(g.rounds) > rounds_before,
            game_over=g.is_over,
        )

    async def hint(self, game: LiveGame, asker: int | None = None) -> dict[str, Any]:
        """The engine's advice to the human to move, at the AI seats' own level (when asker
        is given, only if it is asker's decision: advice shows the hand it is for)."""
        table = game.table
        seat = table.waiting_for if game.playing else None
        if seat is None:
            raise conflict("no human decision to advise on now")
        if asker is not None and asker != seat:
            raise conflict(f"no decision of seat {asker} to advise on now (seat {seat} is to decide)")
        obs, limit, config = table.hint_search(seat)
        async with self._search_slots:
            result = await run_in_threadpool(search, obs, limit, config)
        best = result.moves[0]
        return {
            "seat": seat,
            "iterations": result.iterations,
            "elapsed_s": result.elapsed_s,
            "best": move_to_json(result.best_move),
            "best_text": move_text(result.best_move),
            "win_probability": best.win_probability if result.iterations else None,
            "moves": _candidates(result, HINT_MOVES),
        }

    def why(self, game: LiveGame, round_: int | None = None) -> dict[str, Any]:
        """The AI seats' searched decisions with their top candidates, as much as every seat
        may see now (docs/web-api.md, `GET /api/games/{id}/why`): a decision's candidates
        are cards or splits of the AI's hand, hidden until the round is over (a bet's, until
        every bet is shown); an allocation's own piles and a secret bet are hidden as in the
        game."""
        g = game.game
        current = len(g.rounds) - 1
        everything = not game.playing
        bets_shown = g.phase is not Phase.WEATHER
        out = []
        for d in game.decisions:
            if round_ is not None and d.round != round_:
                continue
            kind = move_kind(d.move)
            past = everything or d.round < current
            if kind == "play":
                shown, listed = True, past
            elif kind == "weather":
                shown = listed = past or bets_shown
            else:
                shown = listed = past
            label = f"r{d.round + 1} " + (
                "piles" if kind == "allocate" else "weather" if kind == "weather" else f"t{(d.trick or 0) + 1}"
            )
            out.append(
                {
                    "round": d.round,
                    "trick": d.trick,
                    "seat": d.seat,
                    "kind": kind,
                    "label": label,
                    "move": move_to_json(d.move) if shown else None,
                    "text": move_text(d.move) if shown else None,
                    **d.estimate,
                    "candidates": d.candidates if listed else None,
                }
            )
        return {"decisions": out}

    async def undo(self, game: LiveGame, seat: int) -> None:
        """Take back seat's last choice and all after it (conflict when not allowed, or
        when the last human choice is another seat's)."""
        if not game.takebacks:
            raise conflict("takebacks are off in this game")
        if game.thinking:
            raise conflict("the AI is thinking: take back once it has moved")
        if game.status == "resigned":
            raise conflict("the game was resigned")
        last = game.table.last_choice()
        if last is None:
            raise conflict("there is no move of yours to take back")
        if last != seat:
            raise conflict(f"the last choice is seat {last}'s: only that seat may take it back")
        game.table.undo()
        ply = decisions_made(game.game)
        game.decisions = [d for d in game.decisions if d.ply < ply]
        game.status = "playing"
        game.changed()
        await self.save(game)

    async def resign(self, game: LiveGame, seat: int) -> None:
        """End the game: seat resigns (the record is saved, unfinished, saying so)."""
        if not game.playing:
            raise conflict(f"the game is already {'over' if game.status == 'over' else 'resigned'}")
        game.status = "resigned"
        game.resigned_by = seat
        game.changed()
        if game.moved_in:
            await self.save(game)
            async with game.save_lock:
                game.let_go()  # a resigned game is played no more: its record is free

    def record(self, game: LiveGame) -> dict[str, Any]:
        """The game's record (every hand in it): only once the game is over or resigned."""
        if game.playing:
            raise conflict("the record holds every hand: it is available once the game is over or resigned")
        return game.table.record(self._meta(game))

    def position(self, game: LiveGame, viewer: int) -> dict[str, Any]:
        """The viewer's current view as a `csl best-move` position."""
        try:
            return observation_to_position(game.game.observation(viewer))
        except CslError as e:
            raise api_error_for(e) from None

    # --- saving -------------------------------------------------------------------------
    @staticmethod
    def _meta(game: LiveGame) -> dict[str, Any]:
        return {"resigned": game.resigned_by} if game.resigned_by is not None else {}

    async def save(self, game: LiveGame) -> None:
        """Write the game's record (a new file in the records folder the first time). A
        failure is kept in `LiveGame.save_error` (the state shows it), not raised: the move
        that triggered the save stands."""
        async with game.save_lock:
            record = game.table.record(self._meta(game))
            try:
                if game.record_path is None:
                    async with self._path_lock:
                        game.record_lock = await run_in_threadpool(self._save_new, record)
                        game.record_path = game.record_lock.record
                else:
                    await run_in_threadpool(save_record, record, game.record_path)
                game.save_error = None
            except (OutputWriteError, CslError) as e:
                game.save_error = clip(str(e), 300)
                print(f"csl serve: cannot save game {game.id[:6]}...: {game.save_error}", file=sys.stderr)

    async def save_all(self) -> None:
        """Save every game being played, then let go of every record's lock (the server is
        stopping)."""
        try:
            for game in list(self.games.values()):
                if game.playing and game.moved_in:
                    await self.save(game)
        finally:
            for game in list(self.games.values()):
                game.let_go()

    def _save_new(self, record: Mapping[str, Any]) -> RecordLock:
        """Save a game's first record under a new name, claimed under its lock and created
        exclusively; the lock, held from now on, names the file."""
        lock = claim_new_record(self.config.records_dir, program=APP_NAME)
        try:
            save_record(record, lock.record, exclusive=True)
        except BaseException:
            lock.release()
            raise
        return lock


__all__: Sequence[str] = (
    "DEFAULTS",
    "GAME_ID_RE",
    "AiDecision",
    "GameStore",
    "LiveGame",
    "ServerConfig",
    "StepMade",
    "builtin_deck",
    "builtin_decks",
    "level_specs",
)
