"""Who may talk to a `csl serve` server, and the headers of every answer it gives.

The server writes files on the user's machine (records) and holds their games, so any web
page the user visits must not be able to use it. `GuardMiddleware` sits outside every
other layer of the app and refuses, before any handler runs and so before anything
changes:

- a request whose ``Host`` is not one of this server's names (the loopback names
  ``127.0.0.1``, ``localhost``, ``[::1]`` and the ``--host`` given; with its port when the
  port is known): 403 ``forbidden``. This defeats DNS rebinding, where a foreign page
  reaches the server under the page's own host name;
- a request with an ``Origin`` that is not the server's own (``http://`` + its ``Host``),
  or a ``Sec-Fetch-Site`` of ``cross-site``/``same-site`` on the API: 403 ``forbidden``.
  A CORS preflight (``OPTIONS``) from a foreign page is refused the same way;
- a state-changing request (``POST PUT PATCH DELETE``) whose ``Content-Type`` is not
  ``application/json``: 415 ``unsupported_media_type``. A page on another site can only
  send a JSON content type after a preflight, which is refused;
- on a server listening beyond this machine (a non-loopback ``--host``), any request
  without the server's token (`ServerGuard.token`, printed in the URL at start as
  Jupyter does): 403 ``forbidden``. The token is accepted as an ``X-CSL-Token`` header,
  an ``Authorization: token ...`` (or ``Bearer``) header, or the cookie the page gets by
  opening ``/?token=...`` once.

Every answer, refusals and errors included, carries `SECURITY_HEADERS`: no sniffing, no
framing, no referrer, a Content-Security-Policy that allows the page's own files only.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from csl_ai.web.errors import ApiError

LOOPBACK_NAMES: Final = frozenset({"127.0.0.1", "localhost", "::1"})
"""Host names (without brackets) a server always answers to."""
WILDCARD_HOSTS: Final = frozenset({"0.0.0.0", "::", ""})
"""``--host`` values that listen on every interface: any Host name may reach the server
(it then requires its token)."""
STATE_CHANGING: Final = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_TYPE: Final = "application/json"
TOKEN_HEADER: Final = "x-csl-token"
TOKEN_QUERY: Final = "token"
CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS: Final[Mapping[str, str]] = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}


def new_token() -> str:
    """A fresh server token (unguessable, URL-safe)."""
    return secrets.token_urlsafe(32)


def split_host(value: str) -> tuple[str, int | None] | None:
    """A Host header (or an origin's netloc) as (lower-case name without brackets, port or
    None); None when it is malformed."""
    value = value.strip().lower()
    if not value or any(c.isspace() or c in "/?#@\\" for c in value):
        return None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text_raw = value.partition(":")
        if ":" in port_text_raw:
            return None
        port_text = port_text_raw if sep else None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or len(port_text) > 5 or int(port_text) > 65535:
        return None
    return name, int(port_text)


@dataclass(frozen=True)
class ServerGuard:
    """What a server accepts: its host names (None: any, when it listens on every
    interface), its port (None: not known, any port in Host is accepted) and its token
    (None: no token needed, on a loopback-only server)."""

    hosts: frozenset[str] | None = LOOPBACK_NAMES
    port: int | None = None
    token: str | None = None

    @classmethod
    def for_server(cls, host: str | None = None, port: int | None = None, token: str | None = None) -> ServerGuard:
        """The guard of a server listening on host:port: the loopback names and host."""
        if host is None:
            return cls(LOOPBACK_NAMES, port, token)
        name = host.strip().lower().strip("[]")
        hosts = None if name in WILDCARD_HOSTS else LOOPBACK_NAMES | {name}
        return cls(hosts, port, token)

    @property
    def cookie_name(self) -> str:
        """The token cookie: one per port, as cookies do not tell ports apart."""
        return f"csl-token-{self.port}" if self.port is not None else "csl-token"

    def host_allowed(self, host_header: str | None) -> bool:
        if host_header is None:
            return False
        parsed = split_host(host_header)
        if parsed is None:
            return False
        name, port = parsed
        if self.hosts is not None and name not in self.hosts:
            return False
        return port is None or self.port is None or port == self.port

    def token_ok(self, headers: Headers) -> bool:
        if self.token is None:
            return True
        given = headers.get(TOKEN_HEADER)
        if given is None:
            scheme, _, value = headers.get("authorization", "").partition(" ")
            if scheme.lower() in ("token", "bearer"):
                given = value.strip()
        if given is None:
            given = _cookies(headers).get(self.cookie_name)
        return given is not None and secrets.compare_digest(given.encode(), self.token.encode())


def _cookies(headers: Headers) -> dict[str, str]:
    out: dict[str, str] = {}
    for header in headers.getlist("cookie"):
        for part in header.split(";"):
            name, sep, value = part.strip().partition("=")
            if sep and name not in out:
                out[name] = value.strip().strip('"')
    return out


def same_origin(origin: str, host_header: str, scheme: str = "http") -> bool:
    """Whether an Origin header names the server the request reached (its scheme and
    Host)."""
    parts = urlsplit(origin.strip())
    if parts.scheme != scheme or parts.path or parts.query or parts.fragment:
        return False
    mine, theirs = split_host(host_header), split_host(parts.netloc)
    if mine is None or theirs is None:
        return False
    default = 80 if parts.scheme == "http" else 443
    their_port = theirs[1] if theirs[1] is not None else default
    if mine[1] is None:
        return mine[0] == theirs[0]
    return mine == (theirs[0], their_port)


def refusal(status: int, kind: str, message: str) -> Response:
    return JSONResponse(
        ApiError(status, kind, message).to_json(), status_code=status, headers={"Cache-Control": "no-store"}
    )


class GuardMiddleware:
    """The checks of this module's docstring, then `SECURITY_HEADERS` on every answer."""

    def __init__(self, app: ASGIApp, guard: ServerGuard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in SECURITY_HEADERS.items():
                    if name not in headers:
                        headers[name] = value
            await send(message)

        response = self.check(scope)
        if response is not None:
            await response(scope, receive, send_secured)
            return
        await self.app(scope, receive, send_secured)

    def check(self, scope: Scope) -> Response | None:
        """The refusal of a request, or None to let it through."""
        headers = Headers(scope=scope)
        method = scope["method"].upper()
        path: str = scope.get("path", "")
        host = headers.get("host")
        if not self.guard.host_allowed(host):
            return refusal(
                403, "forbidden",
                "this server answers only to its own address (Host header refused): open the "
                "address csl serve printed",
            )
        assert host is not None
        origin = headers.get("origin")
        if origin is not None and not same_origin(origin, host, scope.get("scheme", "http")):
            return refusal(403, "forbidden", "requests from another web site are refused (Origin header)")
        fetch_site = headers.get("sec-fetch-site")
        if path.startswith("/api/") and fetch_site in ("cross-site", "same-site"):
            return refusal(403, "forbidden", "requests from another web site are refused (Sec-Fetch-Site header)")
        if self.guard.token is not None and method == "GET" and path == "/" and _has_token_query(scope):
            return self._open_with_token(scope)
        if not self.guard.token_ok(headers):
            return self._token_refusal(scope, method, path)
        if method in STATE_CHANGING:
            media_type = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if media_type != JSON_TYPE:
                return refusal(
                    415, "unsupported_media_type",
                    f"a {method} request must send Content-Type: {JSON_TYPE}, even with an empty body",
                )
        return None

    def _open_with_token(self, scope: Scope) -> Response:
        """``GET /?token=...``: with the right token, set the cookie and reload the page
        without the token in the address; with a wrong one, 403."""
        assert self.guard.token is not None
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = (query.pop(TOKEN_QUERY, None) or [""])[0]
        if not secrets.compare_digest(given.encode(), self.guard.token.encode()):
            return self._token_refusal(scope, "GET", "/")
        rest = urlencode(query, doseq=True)
        response = RedirectResponse(f"/?{rest}" if rest else "/", status_code=303, headers={"Cache-Control": "no-store"})
        response.set_cookie(self.guard.cookie_name, self.guard.token, httponly=True, samesite="strict", path="/")
        return response

    def _token_refusal(self, scope: Scope, method: str, path: str) -> Response:
        """The answer to a request without the token: a short page for the page, else 403."""
        if method == "GET" and path == "/":
            return HTMLResponse(
                "<!doctype html><title>csl serve</title><p>This table needs its token: open the "
                "address with <code>?token=</code> that <code>csl serve</code> printed when it started.</p>",
                status_code=403,
                headers={"Cache-Control": "no-store"},
            )
        return refusal(
            403, "forbidden",
            "this server needs its token (printed by csl serve at start): send it as the "
            "X-CSL-Token header, or open the page with ?token= once",
        )


def _has_token_query(scope: Scope) -> bool:
    return TOKEN_QUERY in parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def guard_settings(guard: ServerGuard) -> dict[str, Any]:
    """What the options endpoint says of the guard (no secret)."""
    return {"token_required": guard.token is not None}


__all__: Sequence[str] = (
    "CONTENT_SECURITY_POLICY",
    "LOOPBACK_NAMES",
    "SECURITY_HEADERS",
    "GuardMiddleware",
    "ServerGuard",
    "guard_settings",
    "new_token",
    "same_origin",
    "split_host",
)
