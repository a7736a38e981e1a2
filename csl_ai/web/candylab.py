"""Candy Lab at the `csl serve` table: the live games, what one seat sees, and the API.

A `CandyLabStore` holds the Candy Lab games being played in this server, each under an
unguessable id (the same pattern as the Candy Spiders Leopards games), at most
``max_games`` at once. It is deliberately simpler than `csl_ai.web.games.GameStore`: no
takebacks, hints, resume or saving of unfinished games; a game is saved once, as a
``candylab-record`` in the records folder, when it ends.

Thread safety: a game changes only on the event loop's thread, between awaits, so a
request never sees a game half-changed and reading needs no lock. The AI seats' searches
(C code that releases the GIL) run in worker threads on a snapshot `Observation`, at most
``max_searches`` at once. The AI seats of a game are moved by one asyncio task at a time
(`LabGame.task`), started by the human move (or the new game) that hands them the turn
and awaited under `asyncio.shield`: a request that goes away does not stop it halfway,
and a game whose AI is moving takes no human move (409).

Hidden cards: a seat's view (`CandyLabStore.state`) is drawn from `Game.observation`
alone: that seat's hand, the sizes of the other hands, of the third hand, the pile and
the box, and the history as that seat saw it. The pile's order and the seed (from which
the whole deal follows) are never shown while the game goes on.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from csl_ai.bits import bits
from csl_ai.candylab.agents import Agent
from csl_ai.candylab.catalogue import COLOUR_NAMES, Catalogue, Effect
from csl_ai.candylab.game import Event, Game
from csl_ai.candylab.moves import KIND_NAMES, PLAY, arg_a, arg_b, kind
from csl_ai.candylab.players import DEFAULT_LEVEL, LEVELS, make_agent, parse_spec
from csl_ai.candylab.records import game_to_record, new_record_path, record_to_json, replay_record
from csl_ai.candylab.rules import MAX_PLAYERS, MIN_PLAYERS, CandyLabRules
from csl_ai.candylab.state import PHASE_NAMES
from csl_ai.errors import CslError, IllegalMoveError, RecordWriteError, clip, path_label
from csl_ai.files import OutputExistsError, create_file_exclusive
from csl_ai.seeds import MAX_SEED, fresh_seed, labelled_seed
from csl_ai.web.errors import ApiError, api_error_for, bad_request, busy, conflict, not_found
from csl_ai.web.games import GAME_ID_RE, check_fields, viewer_seat

HUMAN: Final = "human"
"""A human seat's name in `LabGame.specs` and in records (as `csl play --game candy-lab`)."""
APP_NAME: Final = "csl serve"
NEW_GAME_FIELDS: Final = ("players", "humans", "level", "ai", "seed")
MOVE_FIELDS: Final = ("seat", "move")
DEFAULT_PLAYERS: Final = 2
MAX_EVENTS: Final = 40
"""Most recent events a state lists (``event_count`` says how many there were)."""
MAX_AI_ITERATIONS: Final = 100_000
"""Largest search budget an ``ai`` spec may ask for (the ``strong`` level is 40,000)."""
MAX_AI_MS: Final = 10_000
"""Longest search time an ``ai`` spec may ask for, per decision."""
STALE_AFTER_S: Final = 30 * 60.0
"""A game untouched this long may be let go for a new one when the store is full."""
MAX_MOVE: Final = (1 << 21) - 1
"""Every packed move fits in 21 bits (`csl_ai.candylab.moves`)."""
MAX_RECORD_NAMES: Final = 100


@dataclass(eq=False)
class LabGame:
    """One Candy Lab game being played here: the game, who sits where, its AI task."""

    id: str
    game: Game
    specs: list[str]
    """Per seat: ``"human"`` or the AI's agent spec."""
    agents: list[Agent | None]
    """Per seat: the AI agent, None for a human seat."""
    last_used: float
    task: asyncio.Task[None] | None = None
    """The task moving the AI seats (and saving the record once over), while it runs."""
    record_path: Path | None = None
    save_error: str | None = None
    ai_error: str | None = None

    @property
    def humans(self) -> list[int]:
        return [s for s, spec in enumerate(self.specs) if spec == HUMAN]

    @property
    def busy(self) -> bool:
        """Whether the AI seats are moving (or the finished game is being saved)."""
        return self.task is not None and not self.task.done()

    @property
    def ai_to_move(self) -> bool:
        g = self.game
        return not g.is_over and self.agents[g.current] is not None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _bad_options(message: str) -> ApiError:
    return ApiError(400, "bad_options", message)


# --- JSON of the components ---------------------------------------------------------------
def bar_json(cat: Catalogue, bar: int) -> dict[str, Any]:
    """A candy bar: id, colour name, value, effect name (``none``, ``draw``...)."""
    return {
        "id": bar,
        "colour": COLOUR_NAMES[cat.bar_colour[bar]],
        "value": cat.bar_value[bar],
        "effect": Effect(cat.bar_effect[bar]).text,
    }


def order_json(cat: Catalogue, order: int) -> dict[str, Any]:
    """An order card: id, colour letters (``BOP``), colour names in that order, points."""
    return {
        "id": order,
        "text": cat.order_text(order),
        "colours": [COLOUR_NAMES[c] for c in cat.order_pattern[order]],
        "points": cat.order_points[order],
    }


def event_json(game: Game, index: int, event: Event) -> dict[str, Any]:
    """One move of the history as the viewer saw it: the seat, the move's text, the card it
    took if the viewer saw it (else null) and the card turned face up, if any."""
    cat = game.rules.catalogue
    return {
        "index": index,
        "seat": event.actor,
        "kind": KIND_NAMES[kind(event.move)],
        "text": game.move_text(event.move),
        "card": order_json(cat, event.taken) if event.taken >= 0 else None,
        "turned_up": order_json(cat, event.turned_up) if event.turned_up >= 0 else None,
    }


def move_json(game: Game, move: int) -> dict[str, Any]:
    """A legal move: the packed int to send back, its kind and text, and for a played card
    the belt positions of the run it retrieves (``run``, else null)."""
    k = kind(move)
    run = None
    if k == PLAY:
        start = arg_b(move)
        run = list(range(start, start + game.rules.catalogue.order_len[arg_a(move)]))
    return {"move": move, "kind": KIND_NAMES[k], "text": game.move_text(move), "run": run}


def level_list() -> list[dict[str, Any]]:
    return [{"name": name, "iterations": iterations} for name, iterations in LEVELS.items()]


def ai_spec(level: object, ai: object) -> str:
    """The agent spec of the AI seats: a level name, or an ``ai`` spec this server will run
    (random, heuristic, or a search of at most `MAX_AI_ITERATIONS` iterations or
    `MAX_AI_MS` ms a decision, on one thread). bad_options otherwise."""
    if level is not None and ai is not None:
        raise _bad_options("level, ai: give one of them, not both")
    if ai is None:
        name = DEFAULT_LEVEL if level is None else level
        if not isinstance(name, str) or name not in LEVELS:
            raise _bad_options(f"level: must be one of {', '.join(LEVELS)}, got {clip(repr(name), 40)}")
        return f"ismcts:{name}"
    if not isinstance(ai, str) or len(ai) > 100:
        raise _bad_options(f"ai: must be an agent spec like 'ismcts:iters=2000', got {clip(repr(ai), 40)}")
    try:
        kind, budget = parse_spec(ai)
    except CslError as e:
        raise _bad_options(f"ai: {e}") from None
    if budget is not None:
        bounded = (budget.iterations is not None and budget.iterations <= MAX_AI_ITERATIONS) or (
            budget.iterations is None and budget.time_ms is not None and budget.time_ms <= MAX_AI_MS
        )
        if not bounded or (budget.time_ms is not None and budget.time_ms > MAX_AI_MS) or budget.threads != 1:
            raise _bad_options(
                f"ai: this server runs searches of at most {MAX_AI_ITERATIONS:,} iterations or "
                f"{MAX_AI_MS:,} ms a decision, on one thread; got {clip(ai, 60)!r}"
            )
    return ai.strip()


class CandyLabStore:
    """The Candy Lab games of one server, by id, and the operations the API runs on them."""

    def __init__(
        self,
        records_dir: Path,
        *,
        max_games: int = 64,
        max_searches: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.records_dir = records_dir
        self.max_games = max_games
        self.games: dict[str, LabGame] = {}
        self._search_slots = asyncio.Semaphore(max(1, max_searches))
        self._save_lock = asyncio.Lock()
        self._clock = clock

    # --- looking games up ---------------------------------------------------------------
    def get(self, game_id: str) -> LabGame:
        """The game of that id (404 for an unknown or malformed id)."""
        lab = self.games.get(game_id) if GAME_ID_RE.fullmatch(game_id) else None
        if lab is None:
            raise not_found("no such Candy Lab game (games end with a server restart: start a new one)")
        lab.last_used = self._clock()
        return lab

    @staticmethod
    def viewer(lab: LabGame, seat: object) -> int:
        """The human seat a state is drawn for: seat when given (text from a query, or an
        int; 400 unless a human seat), else the human to move, else the lowest human seat."""
        return viewer_seat(seat, lab.humans, lab.game.current)

    # --- what a seat sees -----------------------------------------------------------------
    def state(self, lab: LabGame, viewer: int) -> dict[str, Any]:
        """The game as seat viewer sees it (docs/web-api.md, "Candy Lab"): nothing in it
        comes from outside that seat's `Observation`, but the result once the game is over."""
        g = lab.game
        obs = g.observation(viewer)
        cat = g.rules.catalogue
        over = obs.is_over
        your_turn = not over and not lab.busy and obs.current == viewer
        first_event = max(0, len(obs.events) - MAX_EVENTS)
        return {
            "id": lab.id,
            "players": obs.players,
            "seat": viewer,
            "humans": lab.humans,
            "agents": list(lab.specs),
            "current": obs.current,
            "phase": PHASE_NAMES[obs.phase],
            "turn": obs.turn,
            "thinking": lab.busy,
            "your_turn": your_turn,
            "belt": [bar_json(cat, b) for b in obs.belt],
            "face_up": [order_json(cat, c) if c >= 0 else None for c in obs.face_up],
            "pile_size": obs.pile_size,
            "box_size": obs.box_size,
            "third_hand_size": obs.third_hand_size,
            "hands": [
                {
                    "seat": s,
                    "size": size,
                    "cards": [order_json(cat, c) for c in bits(obs.hand)] if s == viewer else None,
                }
                for s, size in enumerate(obs.hand_sizes)
            ],
            "bars": [[bar_json(cat, b) for b in bits(mask)] for mask in obs.bars],
            "stacks": [
                {"top": order_json(cat, stack[-1]) if stack else None, "count": len(stack)}
                for stack in obs.stacks
            ],
            "pending": [bar_json(cat, b) for b in bits(obs.pending)],
            "draws_left": obs.draws_left,
            "golden": obs.golden if obs.golden >= 0 else None,
            "scores": list(obs.scores),
            "legal_moves": [move_json(g, m) for m in obs.legal_moves] if your_turn else [],
            "events": [
                event_json(g, first_event + i, e) for i, e in enumerate(obs.events[first_event:])
            ],
            "event_count": len(obs.events),
            "over": over,
            "end": g.end_name if over else None,
            "winners": g.winners() if over else None,
            "seed": g.seed if over else None,
            "record_id": lab.record_path.stem if lab.record_path is not None else None,
            "save_error": lab.save_error,
            "ai_error": lab.ai_error,
        }

    # --- starting a game ------------------------------------------------------------------
    async def create(self, body: Mapping[str, Any]) -> LabGame:
        """A new game from the options of docs/web-api.md (bad_options for refused ones),
        its AI seats moved until a human is to move."""
        check_fields(body, NEW_GAME_FIELDS, "new game")
        players = body.get("players", DEFAULT_PLAYERS)
        if not _is_int(players) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise _bad_options(
                f"players: must be an integer {MIN_PLAYERS}..{MAX_PLAYERS}, got {clip(repr(players), 40)}"
            )
        humans = body.get("humans", [0])
        if not isinstance(humans, list) or not humans or not all(_is_int(h) for h in humans):
            raise _bad_options(f"humans: must be a list of one or more seats, got {clip(repr(humans), 40)}")
        if len(set(humans)) != len(humans):
            raise _bad_options(f"humans: a seat is given twice in {clip(repr(humans), 40)}")
        for seat in humans:
            if not 0 <= seat < players:
                raise _bad_options(f"humans: seat {seat} is not in a {players}-player game (seats 0..{players - 1})")
        spec = ai_spec(body.get("level"), body.get("ai"))
        seed = body.get("seed")
        if seed is not None and (not _is_int(seed) or not 0 <= seed <= MAX_SEED):
            raise _bad_options(f"seed: must be an integer 0..2^63-1 or null, got {clip(repr(seed), 40)}")
        game_seed = fresh_seed() if seed is None else seed
        try:
            game = Game(CandyLabRules(players=players), seed=game_seed)
            specs = [HUMAN if s in humans else spec for s in range(players)]
            agents: list[Agent | None] = [
                None if specs[s] == HUMAN else make_agent(spec, labelled_seed(game_seed, f"agent{s}"))
                for s in range(players)
            ]
        except CslError as e:
            raise api_error_for(e, "bad_options") from None
        self._make_room()
        lab = LabGame(secrets.token_urlsafe(24), game, specs, agents, self._clock())
        self.games[lab.id] = lab
        await self._advance(lab)
        return lab

    def _make_room(self) -> None:
        """Let go of one game if the store is full: the least recently used one over, else
        the least recently used one untouched for `STALE_AFTER_S`; with none, 429 busy."""
        if len(self.games) < self.max_games:
            return
        now = self._clock()
        idle = [g for g in self.games.values() if not g.busy]
        spare = [g for g in idle if g.game.is_over] or [
            g for g in idle if now - g.last_used >= STALE_AFTER_S
        ]
        if not spare:
            raise busy(
                f"the server holds {len(self.games)} Candy Lab games being played, its limit: "
                "finish one, or try again later"
            )
        victim = min(spare, key=lambda g: g.last_used)
        del self.games[victim.id]

    # --- moving ---------------------------------------------------------------------------
    async def move(self, lab: LabGame, body: Mapping[str, Any]) -> int:
        """A human's move, then the AI seats' until a human is to move or the game is over;
        the seat that moved. Everything is checked before the move is played: 400 for a bad
        body or a seat that is not human, 409 when it is not that seat's turn (or the AI is
        moving, or the game is over), 400 illegal_move for a move the rules refuse."""
        check_fields(body, MOVE_FIELDS, "move request")
        if "move" not in body:
            raise bad_request("move: missing (one of the packed moves of legal_moves)")
        move = body["move"]
        if not _is_int(move) or not 0 <= move <= MAX_MOVE:
            raise bad_request(f"move: must be one of the packed moves of legal_moves, got {clip(repr(move), 40)}")
        g = lab.game
        seat = body.get("seat")
        if seat is not None:
            if not _is_int(seat):
                raise bad_request(f"seat: must be a seat number, got {clip(repr(seat), 40)}")
            seat = self.viewer(lab, seat)
        if g.is_over:
            raise conflict("the game is over")
        if lab.busy:
            raise conflict("the AI seats are moving: wait for your turn")
        if seat is None:
            if g.current not in lab.humans:
                raise conflict(f"no human seat is to move (seat {g.current} is)")
            seat = g.current
        if g.current != seat:
            raise conflict(f"it is seat {g.current}'s turn, not seat {seat}'s")
        try:
            g.play(move)
        except IllegalMoveError as e:
            raise api_error_for(e) from None
        await self._advance(lab)
        return seat

    async def _advance(self, lab: LabGame) -> None:
        """Move the AI seats (and save the record once over) in the game's task, and wait
        for it; shielded, so the task finishes even if this request is dropped."""
        if not lab.ai_to_move and not lab.game.is_over:
            return
        if not lab.busy:
            lab.task = asyncio.get_running_loop().create_task(self._play_ais(lab))
            lab.task.add_done_callback(_log_failure)
        assert lab.task is not None
        await asyncio.shield(lab.task)

    async def _play_ais(self, lab: LabGame) -> None:
        """The AI seats' moves until a human is to move or the game is over; then, once over,
        the record. An AI's failure (a bug) is noted in `LabGame.ai_error` (no detail: the
        log has it) and raised."""
        g = lab.game
        try:
            while lab.ai_to_move:
                seat = g.current
                agent = lab.agents[seat]
                assert agent is not None
                obs = g.observation(seat)
                if len(obs.legal_moves) == 1:
                    move = obs.legal_moves[0]
                else:
                    async with self._search_slots:
                        move = await run_in_threadpool(agent.act, obs)
                g.play(move)
                lab.last_used = self._clock()
        except Exception:
            lab.ai_error = "an AI seat failed to move (a bug: the server's log says more); start a new game"
            raise
        if g.is_over and lab.record_path is None:
            await self._save(lab)

    # --- the record -------------------------------------------------------------------------
    async def _save(self, lab: LabGame) -> None:
        """Save the finished game as a new ``candylab-game-...json`` in the records folder. A
        failure is kept in `LabGame.save_error` (the state shows it), not raised."""
        record = game_to_record(lab.game, agents=lab.specs, meta={"app": APP_NAME})
        try:
            async with self._save_lock:
                lab.record_path = await run_in_threadpool(self._write_new, record)
            lab.save_error = None
        except CslError as e:
            lab.save_error = clip(str(e), 300)
            print(f"csl serve: cannot save Candy Lab game {lab.id[:6]}...: {lab.save_error}", file=sys.stderr)

    def _write_new(self, record: Mapping[str, Any]) -> Path:
        """Check the record (a full replay), then create it under a free name, never over
        another file (one another program takes meanwhile is skipped)."""
        replay_record(record)
        text = record_to_json(record)
        for _ in range(MAX_RECORD_NAMES):
            path = new_record_path(self.records_dir)
            try:
                create_file_exclusive(path, text, f"record file {path_label(path)}", RecordWriteError)
            except OutputExistsError:
                continue
            return path
        raise RecordWriteError(f"no free record name in {path_label(self.records_dir)}")


def _log_failure(task: asyncio.Task[None]) -> None:
    """Retrieve a failed AI task's exception (said once on stderr), awaited or not."""
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        print(f"csl serve: a Candy Lab AI failed: {type(error).__name__}: {clip(str(error), 200)}", file=sys.stderr)


class CandyLabApi:
    """The handlers of ``/api/candylab/...``. read_object: the app's JSON-object body reader
    (its size limit and 400s); respond: the app's JSON response class (never cached)."""

    def __init__(
        self,
        store: CandyLabStore,
        read_object: Callable[[Request], Awaitable[dict[str, Any]]],
        respond: Callable[..., Response],
    ) -> None:
        self.store = store
        self.read_object = read_object
        self.respond = respond

    async def options(self, request: Request) -> Response:
        return self.respond(
            {
                "players": list(range(MIN_PLAYERS, MAX_PLAYERS + 1)),
                "default_players": DEFAULT_PLAYERS,
                "levels": level_list(),
                "default_level": DEFAULT_LEVEL,
                "limits": {
                    "live_games": self.store.max_games,
                    "ai_iterations": MAX_AI_ITERATIONS,
                    "ai_ms": MAX_AI_MS,
                },
            }
        )

    async def new_game(self, request: Request) -> Response:
        body = await self.read_object(request)
        lab = await self.store.create(body)
        return self.respond(self.store.state(lab, self.store.viewer(lab, None)), status_code=201)

    async def get_game(self, request: Request) -> Response:
        lab = self.store.get(request.path_params["lab_id"])
        for key in request.query_params:
            if key != "seat":
                raise bad_request(f"unknown parameter {clip(key, 40)!r} (expected seat)")
        viewer = self.store.viewer(lab, request.query_params.get("seat"))
        return self.respond(self.store.state(lab, viewer))

    async def move(self, request: Request) -> Response:
        lab = self.store.get(request.path_params["lab_id"])
        for key in request.query_params:
            raise bad_request(f"unknown parameter {clip(key, 40)!r}: the seat goes in the body")
        body = await self.read_object(request)
        seat = await self.store.move(lab, body)
        return self.respond(self.store.state(lab, seat))


__all__: Sequence[str] = (
    "HUMAN",
    "CandyLabApi",
    "CandyLabStore",
    "LabGame",
    "ai_spec",
    "bar_json",
    "order_json",
)
