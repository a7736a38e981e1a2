"""The `csl serve` web app: the page, its JSON API (docs/web-api.md) and the error policy.

`create_app` builds a Starlette app around one `GameStore` (the live games), one
`AnalysisJobs` and one `csl_ai.web.candylab.CandyLabStore` (the Candy Lab games). Every
error is a JSON body ``{"error": {"message", "kind"}}``: 4xx for a bad request
(malformed JSON, a body over its limit, an unknown or path-like id, an illegal move), 500
without a traceback for a bug, and the server keeps serving. Request bodies are read
against a size limit and refused (413) as soon as they pass it; ids are matched against
strict patterns and records are found only inside the records folder.

Outside everything, `csl_ai.web.guard` refuses a foreign Host, Origin, a missing token
or a non-JSON state-changing request, and adds the security headers to every answer.
A refused request changes nothing: every handler checks all it is given (the viewer
seat included) before it changes a game or writes a file.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from csl_ai.agents import DEFAULT_LEVEL
from csl_ai.errors import CslError, clip
from csl_ai.explain import rules_sections
from csl_ai.records import records_folder
from csl_ai.rules import PLAYER_SPECS, Kind, RulesConfig, Side, StarOption, parse_sides
from csl_ai.web.candylab import CandyLabApi, CandyLabStore
from csl_ai.web.errors import ApiError, api_error_for, bad_request, conflict
from csl_ai.web.games import DEFAULTS, GameStore, LiveGame, ServerConfig, builtin_decks, level_specs
from csl_ai.web.guard import GuardMiddleware, ServerGuard, guard_settings
from csl_ai.web.review import (
    AnalysisJobs,
    analysis_iterations,
    check_record,
    list_records,
    not_over,
    position_at,
    read_record,
    record_path,
    resumable,
    review_json,
    store_upload,
)
from csl_ai.web.state import rules_json

STATIC_DIR: Final = Path(__file__).parent / "static"
GZIP_MIN_BYTES: Final = 64 << 10
"""Responses at least this big (reviews, analyses) are compressed for clients that accept it."""
_STATUS_KINDS: Final[Mapping[int, str]] = {
    400: "bad_request",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "too_large",
    415: "unsupported_media_type",
    429: "busy",
}
Handler = Callable[[Request], Awaitable[Response]]


class ApiResponse(JSONResponse):
    """JSON that is never cached; a non-finite number (none is expected) becomes null
    instead of failing the response."""

    def __init__(self, content: Any, status_code: int = 200, headers: Mapping[str, str] | None = None) -> None:
        merged = {"Cache-Control": "no-store", **(headers or {})}
        super().__init__(content, status_code=status_code, headers=merged)

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except ValueError:
            return super().render(_finite(content))


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _error_response(error: ApiError) -> ApiResponse:
    return ApiResponse(error.to_json(), status_code=error.status)


def too_large(limit: int) -> ApiError:
    return ApiError(413, "too_large", f"the request body is over the limit of {limit:,} bytes")


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused (413) once it passes limit bytes: by its Content-Length
    before reading, else as soon as the stream passes it."""
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise bad_request("bad Content-Length header")
        if int(declared) > limit:
            raise too_large(limit)
    chunks = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(body: bytes) -> Any:
    """A JSON body (400 bad_request for anything that is not JSON)."""
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise bad_request("the body is not UTF-8 text") from None
    except json.JSONDecodeError as e:
        raise bad_request(f"the body is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except (ValueError, RecursionError) as e:
        raise bad_request(f"the body is not valid JSON: {clip(str(e), 80) or 'nested too deeply'}") from None


class Api:
    """The handlers of the JSON API, around one server's games and analyses."""

    def __init__(self, config: ServerConfig, guard: ServerGuard | None = None) -> None:
        self.config = config
        self.guard = guard if guard is not None else ServerGuard()
        self.store = GameStore(config)
        self.jobs = AnalysisJobs(config.max_analyses)

    # --- helpers ------------------------------------------------------------------------
    async def body_object(self, request: Request) -> dict[str, Any]:
        """A JSON object body ({} when empty)."""
        body = await read_body(request, self.config.json_limit)
        if not body.strip():
            return {}
        data = parse_json(body)
        if not isinstance(data, dict):
            raise bad_request(f"the body must be a JSON object, got {type(data).__name__}")
        return data

    def game(self, request: Request) -> LiveGame:
        return self.store.get(request.path_params["game_id"])

    def state(self, game: LiveGame, request: Request, seat: int | None = None) -> dict[str, Any]:
        viewer = self.store.viewer(game, request.query_params.get("seat") if seat is None else seat)
        return self.store.state(game, viewer)

    def asker(self, game: LiveGame, request: Request) -> int | None:
        """The request's ``?seat=``, checked (400 unless a human seat), or None: checked
        before anything changes, so a refused seat leaves the game as it was."""
        text = request.query_params.get("seat")
        return self.store.viewer(game, text) if text else None

    def record_file(self, request: Request) -> Path:
        return record_path(self.config.records_dir, request.path_params["record_id"])

    def not_live(self, record_id: str) -> None:
        if record_id in self.store.live_record_ids():
            raise conflict(
                "this game is still being played here: its record (every hand) opens once it is over"
            )

    async def checked_record(self, request: Request) -> tuple[str, dict[str, Any], Any]:
        """A stored record that is not being played and cannot be (finished, resigned or
        without a human seat), read and checked (off the loop)."""
        path = self.record_file(request)
        self.not_live(path.stem)

        def load() -> tuple[dict[str, Any], Any]:
            record = read_record(path)
            return record, check_record(record)

        record, reference = await run_in_threadpool(load)
        if resumable(record, reference):
            raise not_over()
        return path.stem, record, reference

    # --- options and rules ----------------------------------------------------------------
    async def options(self, request: Request) -> Response:
        levels = []
        for name in self.config.levels:
            by_players = {
                str(n): analysis_iterations(self.config.levels, name, n)[1] for n in sorted(PLAYER_SPECS)
            }
            levels.append(
                {"name": name, "iterations": by_players["2"], "iterations_by_players": by_players}
            )
        return ApiResponse(
            {
                "players": sorted(PLAYER_SPECS),
                "player_specs": {
                    str(n): {
                        "hand_size": spec.hand_size,
                        "group_sizes": list(spec.group_sizes),
                        "rounds": spec.rounds,
                        "ranks": spec.ranks,
                    }
                    for n, spec in sorted(PLAYER_SPECS.items())
                },
                "levels": levels,
                "default_level": DEFAULT_LEVEL,
                "kinds": [kind.text for kind in Kind],
                "sides": [side.value for side in Side],
                "star_options": [option.value for option in StarOption],
                "decks": list(builtin_decks()),
                "defaults": dict(DEFAULTS),
                "limits": {
                    "json_bytes": self.config.json_limit,
                    "record_bytes": self.config.record_limit,
                    "live_games": self.config.max_games,
                },
                "security": guard_settings(self.guard),
            }
        )

    async def rules(self, request: Request) -> Response:
        query = request.query_params
        for key in query:
            if key not in ("players", "sides", "star_option"):
                raise bad_request(f"unknown parameter {clip(key, 40)!r} (expected players, sides, star_option)")
        players_text = query.get("players", "4")
        if not players_text.isdigit() or len(players_text) > 2:
            raise bad_request(f"players: must be 2..5, got {clip(players_text, 20)!r}")
        try:
            rules = RulesConfig(
                players=int(players_text),
                sides=parse_sides(query.get("sides", "")),
                star_option=StarOption(query["star_option"]) if "star_option" in query else StarOption.TWICE,
            )
        except ValueError as e:
            raise ApiError(400, "bad_options", str(e) if isinstance(e, CslError) else
                           f"star_option: must be {' or '.join(o.value for o in StarOption)}") from None
        return ApiResponse(_rules_payload(rules))

    async def game_rules(self, request: Request) -> Response:
        return ApiResponse(_rules_payload(self.game(request).game.rules))

    # --- live games ---------------------------------------------------------------------------
    async def new_game(self, request: Request) -> Response:
        body = await self.body_object(request)
        game, viewer = await self.store.create(body, request.query_params.get("seat"))
        return ApiResponse(self.store.state(game, viewer), status_code=201)

    async def get_game(self, request: Request) -> Response:
        game = self.game(request)
        return ApiResponse(self.state(game, request))

    async def move(self, request: Request) -> Response:
        game = self.game(request)
        asker = self.asker(game, request)
        body = await self.body_object(request)
        made = await self.store.move(game, body, asker)
        viewer = asker if asker is not None else made.seat
        state = self.store.state(game, viewer)
        return ApiResponse({"step": made.to_json(viewer, game.hot_seat), "state": state})

    async def step(self, request: Request) -> Response:
        game = self.game(request)
        asker = self.asker(game, request)
        await read_body(request, self.config.json_limit)
        made = await self.store.step(game)
        state = self.store.state(game, self.store.viewer(game, asker))
        return ApiResponse(
            {"step": made.to_json(state["viewer"], game.hot_seat) if made is not None else None, "state": state}
        )

    async def hint(self, request: Request) -> Response:
        game = self.game(request)
        asker = self.asker(game, request)
        await read_body(request, self.config.json_limit)
        return ApiResponse({"hint": await self.store.hint(game, asker)})

    async def undo(self, request: Request) -> Response:
        game = self.game(request)
        seat = self.store.viewer(game, self.asker(game, request))
        await read_body(request, self.config.json_limit)
        await self.store.undo(game, seat)
        return ApiResponse(self.store.state(game, seat))

    async def resign(self, request: Request) -> Response:
        game = self.game(request)
        asker = self.asker(game, request)
        body = await self.body_object(request)
        for key in body:
            if key != "seat":
                raise bad_request(f"resign: unknown field {clip(str(key), 40)!r} (expected seat)")
        seat = self.store.viewer(game, body.get("seat", asker))
        if asker is not None and seat != asker:
            raise bad_request(f"seat: the body says seat {seat}, the query seat {asker}")
        await self.store.resign(game, seat)
        return ApiResponse(self.store.state(game, self.store.viewer(game, asker)))

    async def why(self, request: Request) -> Response:
        game = self.game(request)
        self.asker(game, request)
        query = request.query_params
        for key in query:
            if key not in ("seat", "round"):
                raise bad_request(f"unknown parameter {clip(key, 40)!r} (expected seat, round)")
        text = query.get("round")
        round_ = None
        if text is not None:
            if not text.isdigit() or len(text) > 2:
                raise bad_request(f"round: must be a round number (0-based), got {clip(text, 20)!r}")
            round_ = int(text)
        return ApiResponse(self.store.why(game, round_))

    async def game_record(self, request: Request) -> Response:
        game = self.game(request)
        record = self.store.record(game)
        name = game.record_id or f"csl-game-{game.id[:8]}"
        return ApiResponse(record, headers=_attachment(name))

    async def game_position(self, request: Request) -> Response:
        game = self.game(request)
        viewer = self.store.viewer(game, request.query_params.get("seat"))
        return ApiResponse(self.store.position(game, viewer), headers=_attachment(f"position-seat{viewer}"))

    # --- records ------------------------------------------------------------------------------
    async def records(self, request: Request) -> Response:
        folder = self.config.records_dir
        live = self.store.live_record_ids()
        entries = await run_in_threadpool(list_records, folder, live)
        return ApiResponse({"folder": str(folder), "records": entries})

    async def upload(self, request: Request) -> Response:
        body = await read_body(request, self.config.record_limit)
        data = parse_json(body)
        if not isinstance(data, dict):
            raise ApiError(400, "bad_record", "a record must be a JSON object")
        live = self.store.live_record_ids()
        try:
            info = await run_in_threadpool(store_upload, self.config.records_dir, data, live)
        except CslError as e:
            raise api_error_for(e, "bad_record") from None
        return ApiResponse(info, status_code=201)

    async def record(self, request: Request) -> Response:
        path = self.record_file(request)
        self.not_live(path.stem)
        record = await run_in_threadpool(read_record, path)
        if resumable(record):
            raise not_over()
        return ApiResponse(record, headers=_attachment(path.stem))

    async def resume(self, request: Request) -> Response:
        path = self.record_file(request)
        await read_body(request, self.config.json_limit)
        record = await run_in_threadpool(read_record, path)
        game, created, viewer = await self.store.resume(record, path, request.query_params.get("seat"))
        return ApiResponse(self.store.state(game, viewer), status_code=201 if created else 200)

    async def review(self, request: Request) -> Response:
        record_id, record, reference = await self.checked_record(request)
        payload = await run_in_threadpool(review_json, record_id, record, reference)
        return ApiResponse(payload)

    async def record_position(self, request: Request) -> Response:
        query = request.query_params
        step = query.get("step")
        if step is None or not step.isdigit() or len(step) > 6:
            raise bad_request(f"step: must be the index of a review step, got {clip(str(step), 20)!r}")
        seat_text = query.get("seat")
        if seat_text is not None and (not seat_text.isdigit() or len(seat_text) > 2):
            raise bad_request(f"seat: must be a seat number, got {clip(seat_text, 20)!r}")
        record_id, _record, reference = await self.checked_record(request)
        position = await run_in_threadpool(
            position_at, reference, int(step), int(seat_text) if seat_text is not None else None
        )
        return ApiResponse(position, headers=_attachment(f"{record_id}-step{int(step)}"))

    async def analysis(self, request: Request) -> Response:
        body = await self.body_object(request)
        for key in body:
            if key not in ("seats", "level"):
                raise bad_request(f"analysis: unknown field {clip(str(key), 40)!r} (expected seats, level)")
        record_id, record, reference = await self.checked_record(request)
        players = reference.players
        level, iterations = analysis_iterations(self.config.levels, body.get("level"), players)
        seats = body.get("seats")
        if seats is None:
            agents = record.get("agents")
            humans = [s for s, a in enumerate(agents or ()) if a == "human"]
            seats = humans or list(range(players))
        if (
            not isinstance(seats, list)
            or not seats
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < players for s in seats)
            or len(set(seats)) != len(seats)
        ):
            raise bad_request(
                f"seats: must be a list of distinct seats 0..{players - 1}, got {clip(repr(seats), 40)}"
            )
        job = self.jobs.start(record_id, reference, sorted(seats), level, iterations)
        return ApiResponse({"job": job.to_json()}, status_code=202)

    async def analysis_job(self, request: Request) -> Response:
        return ApiResponse({"job": self.jobs.get(request.path_params["job_id"]).to_json()})


def _rules_payload(rules: RulesConfig) -> dict[str, Any]:
    return {
        "rules": rules_json(rules),
        "sections": [{"heading": h, "text": t} for h, t in rules_sections(rules)],
    }


def _attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}.json"'}


async def _api_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiError)
    return _error_response(exc)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    kind = _STATUS_KINDS.get(exc.status_code, "bad_request" if exc.status_code < 500 else "server_error")
    message = {404: "no such page or API route", 405: "this method is not allowed here"}.get(
        exc.status_code, str(exc.detail)
    )
    return ApiResponse(
        {"error": {"message": message, "kind": kind}},
        status_code=exc.status_code,
        headers=dict(exc.headers or {}),
    )


async def _server_error(request: Request, exc: Exception) -> Response:
    print(f"csl serve: server error on {request.method} {request.url.path}: "
          f"{type(exc).__name__}: {clip(str(exc), 200)}", file=sys.stderr)
    return ApiResponse(
        {"error": {"message": "the server hit a bug answering this request; it goes on serving",
                   "kind": "server_error"}},
        status_code=500,
    )


class _GuardedApp(Starlette):
    """A Starlette app with `GuardMiddleware` outside all its layers, the error handlers
    included, so that every answer (a 500 too) carries the security headers."""

    def __init__(self, guard: ServerGuard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard

    def build_middleware_stack(self) -> Any:
        return GuardMiddleware(super().build_middleware_stack(), self.guard)


def create_app(
    records_dir: Path | None = None,
    *,
    test_ai: str | None = None,
    max_games: int = 64,
    max_searches: int | None = None,
    static_dir: Path | None = None,
    record_limit: int = 1 << 20,
    host: str | None = None,
    port: int | None = None,
    token: str | None = None,
) -> Starlette:
    """The web app. records_dir: where records are saved and looked up (default
    `csl_ai.records.records_folder()`); test_ai: an agent spec offered as the extra level
    ``test`` (cheap AI seats for tests and benchmarks); max_games: live games held at
    once; max_searches: AI searches running at once (default: the CPU count);
    record_limit: the largest record upload in bytes. host, port: the address the server
    listens on (`csl serve --host`, the bound port): the Host names and port it answers
    to besides the loopback names (any port when None); token: the secret every request
    must carry (`csl_ai.web.guard`; None: none needed, for a loopback-only server)."""
    folder = records_dir if records_dir is not None else records_folder()
    limits: dict[str, int] = {"max_games": max_games, "record_limit": record_limit}
    if max_searches is not None:
        limits["max_searches"] = max_searches
    config = ServerConfig(records_dir=folder, levels=level_specs(test_ai), **limits)
    guard = ServerGuard.for_server(host, port, token)
    api = Api(config, guard)
    lab = CandyLabApi(
        CandyLabStore(folder, max_games=max_games, max_searches=config.max_searches),
        api.body_object,
        ApiResponse,
    )
    static = static_dir if static_dir is not None else STATIC_DIR

    async def index(request: Request) -> Response:
        page = static / "index.html"
        if page.is_file():
            return FileResponse(page, headers={"Cache-Control": "no-store"})
        return HTMLResponse("<!doctype html><title>csl serve</title><p>The page is not installed.</p>", 404)

    async def candylab_page(request: Request) -> Response:
        page = static / "candylab.html"
        if page.is_file():
            return FileResponse(page, headers={"Cache-Control": "no-store"})
        return HTMLResponse("<!doctype html><title>csl serve</title><p>The page is not installed.</p>", 404)

    routes: list[Any] = [
        Route("/", index, methods=["GET"]),
        Route("/api/options", api.options, methods=["GET"]),
        Route("/api/rules", api.rules, methods=["GET"]),
        Route("/api/games", api.new_game, methods=["POST"]),
        Route("/api/games/{game_id}", api.get_game, methods=["GET"]),
        Route("/api/games/{game_id}/move", api.move, methods=["POST"]),
        Route("/api/games/{game_id}/step", api.step, methods=["POST"]),
        Route("/api/games/{game_id}/hint", api.hint, methods=["POST"]),
        Route("/api/games/{game_id}/undo", api.undo, methods=["POST"]),
        Route("/api/games/{game_id}/resign", api.resign, methods=["POST"]),
        Route("/api/games/{game_id}/why", api.why, methods=["GET"]),
        Route("/api/games/{game_id}/record", api.game_record, methods=["GET"]),
        Route("/api/games/{game_id}/position", api.game_position, methods=["GET"]),
        Route("/api/games/{game_id}/rules", api.game_rules, methods=["GET"]),
        Route("/api/records", api.records, methods=["GET"]),
        Route("/api/records", api.upload, methods=["POST"]),
        Route("/api/records/{record_id}", api.record, methods=["GET"]),
        Route("/api/records/{record_id}/resume", api.resume, methods=["POST"]),
        Route("/api/records/{record_id}/review", api.review, methods=["GET"]),
        Route("/api/records/{record_id}/position", api.record_position, methods=["GET"]),
        Route("/api/records/{record_id}/analysis", api.analysis, methods=["POST"]),
        Route("/api/analyses/{job_id}", api.analysis_job, methods=["GET"]),
        Route("/candylab", candylab_page, methods=["GET"]),
        Route("/api/candylab/options", lab.options, methods=["GET"]),
        Route("/api/candylab/games", lab.new_game, methods=["POST"]),
        Route("/api/candylab/games/{lab_id}", lab.get_game, methods=["GET"]),
        Route("/api/candylab/games/{lab_id}/move", lab.move, methods=["POST"]),
        Mount("/static", StaticFiles(directory=static, check_dir=False), name="static"),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await api.store.save_all()

    app = _GuardedApp(
        guard,
        routes=routes,
        lifespan=lifespan,
        middleware=[Middleware(GZipMiddleware, minimum_size=GZIP_MIN_BYTES)],
        exception_handlers={
            ApiError: _api_error,
            HTTPException: _http_error,
            Exception: _server_error,
        },
    )
    app.state.api = api
    app.state.candylab = lab
    return app


__all__: Sequence[str] = ("STATIC_DIR", "Api", "create_app", "parse_json", "read_body")
