"""The one error a request can end in: an HTTP status, a kind and a one-line message.

docs/web-api.md lists the kinds. `api_error_for` turns the engine's own errors
(`csl_ai.errors`) into the kind the page expects, so every bad request gets a 4xx JSON
error saying what the engine said.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from csl_ai.errors import (
    CslError,
    DeckError,
    IllegalMoveError,
    InvalidPositionError,
    InvalidRecordError,
    RulesError,
    clip,
)

MAX_MESSAGE_CHARS: Final = 300


class ApiError(Exception):
    """A request that cannot be served: status (4xx, or 500), kind and message."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = clip(message, MAX_MESSAGE_CHARS)

    def to_json(self) -> dict[str, dict[str, str]]:
        return {"error": {"message": self.message, "kind": self.kind}}


def bad_request(message: str) -> ApiError:
    return ApiError(400, "bad_request", message)


def not_found(message: str) -> ApiError:
    return ApiError(404, "not_found", message)


def conflict(message: str) -> ApiError:
    return ApiError(409, "conflict", message)


def busy(message: str) -> ApiError:
    return ApiError(429, "busy", message)


def api_error_for(e: CslError, default_kind: str = "bad_request") -> ApiError:
    """The 400 error for an engine error: illegal moves, records, options by their kind."""
    if isinstance(e, IllegalMoveError):
        kind = "illegal_move"
    elif isinstance(e, InvalidRecordError):
        kind = "bad_record"
    elif isinstance(e, (RulesError, DeckError)):
        kind = "bad_options"
    elif isinstance(e, InvalidPositionError):
        kind = "bad_request"
    else:
        kind = default_kind
    return ApiError(400, kind, str(e))


__all__: Sequence[str] = (
    "ApiError",
    "api_error_for",
    "bad_request",
    "busy",
    "conflict",
    "not_found",
)
