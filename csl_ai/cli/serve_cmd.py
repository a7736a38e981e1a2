"""The `csl serve` command: the web table of `csl_ai.web` on uvicorn (added by `register`).

The socket is bound here before uvicorn starts, so a port already in use is one error
line (exit 1) rather than a server log. Ctrl-C (or SIGTERM, SIGHUP) stops the server
cleanly: the games being played are saved on the way out. Ctrl-C is how a server is
stopped on purpose, so it ends with a "stopped" line and exit 0; SIGTERM and SIGHUP
exit as they do for every command (143, 129, with their error line).
"""

from __future__ import annotations

import errno
import ipaddress
import signal
import socket
import threading
import time
import webbrowser
from typing import Annotated, Any, Final

import typer

from csl_ai.cli.common import (
    EXIT_FAILURE,
    EXIT_INTERRUPTED,
    TerminationSignal,
    fail,
    interrupt_exit_code,
)

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8000
SERVE_EPILOG: Final = """
The page plays against the AI at the levels of csl play, gives hints at the same level,
takes moves back, resumes saved games and reviews records (yours or uploaded) with the
engine's analysis. Games are saved where csl play saves them ($CSL_RECORDS_DIR, else
~/.local/share/csl/records). The server listens on this machine only unless --host says
otherwise; the JSON API is described in docs/web-api.md.
"""


def is_loopback(host: str) -> bool:
    """Whether host names this machine only (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to host:port (one error line and exit 1 when it cannot be)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as e:
        fail(f"--host: cannot resolve {host!r}: {getattr(e, 'strerror', None) or e}", EXIT_FAILURE)
    family, kind, proto, _name, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            fail(f"port {port} on {host} is already in use (choose another with --port)", EXIT_FAILURE)
        fail(f"cannot listen on {host}:{port}: {e.strerror or e}", EXIT_FAILURE)
    sock.set_inheritable(True)
    return sock


def _open_when_started(server: object, url: str) -> None:
    """Open url in the browser once the server accepts connections (gives up after 30 s)."""
    deadline = time.monotonic() + 30
    while not getattr(server, "started", False):
        if time.monotonic() > deadline or getattr(server, "should_exit", False):
            return
        time.sleep(0.05)
    webbrowser.open(url)


def _stop_on_hangup(server: Any, hangups: list[int]) -> Any:
    """Make SIGHUP stop the server as uvicorn stops on INT and TERM (which it handles
    itself; a hang-up would otherwise raise inside a request and print its traceback),
    noting it in hangups. Returns the handler to put back, or None when SIGHUP is
    ignored (nohup), absent, or this is not the main thread."""
    hangup = getattr(signal, "SIGHUP", None)
    if hangup is None or threading.current_thread() is not threading.main_thread():
        return None
    if signal.getsignal(hangup) is signal.SIG_IGN:
        return None

    def stop(signum: int, frame: Any) -> None:
        hangups.append(signum)
        server.handle_exit(signum, frame)

    return signal.signal(hangup, stop)


def register(app: typer.Typer) -> None:
    """Add the `serve` command to app."""

    @app.command(epilog=SERVE_EPILOG)
    def serve(
        host: Annotated[
            str, typer.Option("--host", help="Address to listen on; other than 127.0.0.1 exposes the table to the network.")
        ] = DEFAULT_HOST,
        port: Annotated[
            int, typer.Option("--port", min=0, max=65535, help="Port to listen on (0: any free port).")
        ] = DEFAULT_PORT,
        open_browser: Annotated[
            bool, typer.Option("--open", help="Open the page in the web browser.")
        ] = False,
    ) -> None:
        """Play and review games in the browser: a local web table against the AI."""
        import uvicorn

        from csl_ai.records import records_folder
        from csl_ai.web import create_app
        from csl_ai.web.guard import new_token

        token = None
        if not is_loopback(host):
            token = new_token()
            typer.echo(
                f"csl: warning: --host {host} exposes the table to the network: anyone who "
                "can reach it and has the address with its token can play and read the saved records",
                err=True,
            )
        sock = bind_socket(host, port)
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{bound}/" + (f"?token={token}" if token is not None else "")
        folder = records_folder()
        config = uvicorn.Config(
            create_app(folder, host=host, port=bound, token=token),
            log_level="warning",
            access_log=False,
            lifespan="on",
        )
        server = uvicorn.Server(config)
        typer.echo(f"csl serve: the table is at {url} (Ctrl-C stops it); records in {folder}")
        if open_browser:
            threading.Thread(target=_open_when_started, args=(server, url), daemon=True).start()
        hangups: list[int] = []
        previous_hangup = _stop_on_hangup(server, hangups)
        stopped_by: KeyboardInterrupt | None = None
        try:
            server.run(sockets=[sock])
        except KeyboardInterrupt as e:
            stopped_by = e  # Ctrl-C or SIGTERM, which uvicorn hands back once it has stopped
        finally:
            sock.close()
            if previous_hangup is not None:
                signal.signal(signal.SIGHUP, previous_hangup)
        typer.echo("csl serve: stopped")
        if hangups:
            raise TerminationSignal(hangups[0])
        if stopped_by is not None and interrupt_exit_code(stopped_by) != EXIT_INTERRUPTED:
            raise stopped_by  # SIGTERM: an error line and 143, as for every command
        # Ctrl-C is how a server is stopped on purpose: not an error, exit 0


__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "bind_socket", "is_loopback", "register"]
