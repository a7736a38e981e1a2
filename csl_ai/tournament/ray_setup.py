"""Starting or joining Ray for a run: reaching a cluster, its token, ``ray.init`` and its side effects.

On a cluster (``address``), every node needs csl_ai importable (the same version, built
for its platform): tasks carry only the config and job ids, and workers import the
agents and the core themselves. A cluster with token authentication (what ``ray start
--head`` turns on when a token exists) is joined with its token: ``token_file``, else
``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token`` (``use_cluster_token``).

Ray itself is imported only inside the functions that need it.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from csl_ai.errors import path_label, short_repr
from csl_ai.tournament.runner import TournamentError, TournamentRunError

if TYPE_CHECKING:
    from csl_ai.tournament.harness import RunOptions

DEFAULT_TOKEN_FILE: Final = Path("~/.ray/auth_token")
"""Where ``ray start`` and a local ``ray.init`` keep the token of their clusters."""
TOKEN_HELP: Final = (
    "pass --ray-token-file FILE or set RAY_AUTH_TOKEN (`ray get-auth-token` on its head prints it)"
)
CONNECT_TIMEOUT_S: Final = 10.0
"""How long a cluster address may take to accept a connection."""


def _last_line(error: BaseException) -> str:
    """The last line of an error's text: Ray puts the original message after its traceback."""
    text = str(error).strip()
    return text.splitlines()[-1] if text else type(error).__name__


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail fast if a cluster address does not answer: Ray itself retries for ever.

    "auto" and "local" are left to Ray, which fails at once when it finds no cluster.
    """
    if address in ("auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, colon, port = hostport.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise TournamentError(f"address: expected auto, HOST:PORT or ray://HOST:PORT, got {address!r}")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            pass
    except OSError as e:
        reason = e.strerror or type(e).__name__
        raise TournamentRunError(f"cannot reach the Ray cluster at {address!r}: {reason}") from None


def _joins_by_host_port(address: str | None) -> bool:
    """Whether address names a cluster's GCS directly (HOST:PORT), not auto, local or ray://."""
    if not address:
        return False
    return address not in ("auto", "local") and not address.startswith("ray://")


def token_source(token_file: str | None = None) -> str | None:
    """Where Ray would read a cluster token from, in its own order (token_file first);
    None when there is none."""
    if token_file is not None:
        return path_label(token_file)
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    named = os.environ.get("RAY_AUTH_TOKEN_PATH")
    if named:
        return f"RAY_AUTH_TOKEN_PATH ({path_label(named)})"
    default = DEFAULT_TOKEN_FILE.expanduser()
    return path_label(default) if default.is_file() else None


def use_cluster_token(options: RunOptions) -> None:
    """Make this process present a token to the cluster at options.address.

    Ray 2.60 clusters started with ``ray start --head`` use token authentication when a
    token exists, and a driver joining them by HOST:PORT sends one only with
    ``RAY_AUTH_MODE=token`` (only ``auto`` turns it on by itself). So: token_file, when
    given, becomes the token (``RAY_AUTH_TOKEN_PATH``); and with RAY_AUTH_MODE unset, a
    token found in Ray's usual places turns token mode on, as ``ray start`` does. A
    cluster without authentication ignores the token. Changes this process's environment
    (where Ray reads these settings), and only before Ray is started here.
    """
    if not _joins_by_host_port(options.address) and options.token_file is None:
        return
    if options.token_file is not None:
        os.environ["RAY_AUTH_TOKEN_PATH"] = str(Path(options.token_file).resolve())
        os.environ.pop("RAY_AUTH_TOKEN", None)
        os.environ["RAY_AUTH_MODE"] = "token"
    elif "RAY_AUTH_MODE" not in os.environ and token_source() is not None:
        os.environ["RAY_AUTH_MODE"] = "token"
    else:
        return
    try:
        from ray._raylet import AuthenticationTokenLoader, Config
    except ImportError:
        return
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _token_error(address: str, token_file: str | None) -> TournamentRunError:
    """The one line for a cluster that refused to let us in for want of the right token."""
    source = token_source(token_file)
    mode = os.environ.get("RAY_AUTH_MODE", "")
    if source is not None and mode.lower() != "token":
        return TournamentRunError(
            f"the Ray cluster at {address!r} asks for an authentication token, but "
            f"RAY_AUTH_MODE={short_repr(mode, 20)} turns tokens off: unset it, or {TOKEN_HELP}"
        )
    if source is None:
        return TournamentRunError(
            f"the Ray cluster at {address!r} asks for an authentication token and none was "
            f"found: {TOKEN_HELP}"
        )
    return TournamentRunError(
        f"the Ray cluster at {address!r} refused the authentication token from {source}: "
        f"{TOKEN_HELP}"
    )


@contextmanager
def _native_stderr_silenced() -> Iterator[None]:
    """Ray's native client logs every failed attempt on file descriptor 2; a probe's
    failure is reported as one line instead."""
    saved: int | None
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):
        saved = None
    if saved is None:
        yield
        return
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def check_cluster(options: RunOptions) -> None:
    """Fail fast, before a run is announced or its folder made, if the cluster at
    options.address cannot be joined: nothing answers at its port, or (HOST:PORT) its
    GCS asks for a token that this process lacks or that it refuses. One request to the
    GCS, which answers at once, where ``ray.init`` would retry for tens of seconds."""
    address = options.address
    if not address or options.workers == 0:
        return
    check_reachable(address)
    if not _joins_by_host_port(address):
        return
    import ray

    if ray.is_initialized():
        return
    use_cluster_token(options)
    try:
        from ray._raylet import GcsClient
        from ray.exceptions import AuthenticationError, RayError
    except ImportError:
        return
    try:
        with _native_stderr_silenced():
            GcsClient(address=address)
    except AuthenticationError:
        raise _token_error(address, options.token_file) from None
    except (RayError, ConnectionError, TimeoutError, RuntimeError, OSError) as e:
        raise TournamentRunError(f"cannot reach the Ray cluster at {address!r}: {_last_line(e)}") from None


def package_root() -> Path:
    """The folder that holds the csl_ai this process imported (site-packages, or the
    repository for an editable install)."""
    import csl_ai

    return Path(csl_ai.__file__).resolve().parent.parent


@contextmanager
def ray_code_path() -> Iterator[None]:
    """Run ``ray.init`` from the folder of the imported csl_ai.

    Ray puts the driver's working folder first on every worker's ``sys.path``. Started
    from a source checkout, workers would import its uncompiled csl_ai instead of the
    installed one; started from the package's own folder, they import what the driver did.
    """
    before = os.getcwd()
    os.chdir(package_root())
    try:
        yield
    finally:
        os.chdir(before)


@contextmanager
def python_signal_handlers_kept() -> Iterator[None]:
    """Put back, after the block, the main thread's handlers of INT, TERM and HUP.

    ray.init installs its own for the driver (a crash report for SIGTERM, and exit 1):
    the command line's handlers stop a run with one line, the finished games kept and
    the exit status of the signal.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    names = ("SIGINT", "SIGTERM", "SIGHUP")
    kept = {s: signal.getsignal(s) for s in (getattr(signal, n) for n in names if hasattr(signal, n))}
    try:
        yield
    finally:
        for signum, handler in kept.items():
            if handler is not None:
                signal.signal(signum, handler)


def connect_ray(options: RunOptions) -> bool:
    """Start or join Ray as the options say, with the cluster's token when it has one
    (``use_cluster_token``); True if this call started it (and must shut it down)."""
    import ray
    from ray.exceptions import AuthenticationError

    if ray.is_initialized():
        return False
    use_cluster_token(options)
    quiet: dict[str, Any] = {
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
    }
    try:
        with ray_code_path(), python_signal_handlers_kept():
            if options.address:
                ray.init(address=options.address, **quiet)
            else:
                ray.init(
                    num_cpus=options.workers,
                    _system_config={"worker_niceness": options.worker_niceness},
                    **quiet,
                )
    except AuthenticationError:
        raise _token_error(options.address or "", options.token_file) from None
    except (ConnectionError, TimeoutError, RuntimeError, ValueError, OSError) as e:
        where = f"the Ray cluster at {options.address!r}" if options.address else "a local Ray instance"
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise TournamentRunError(f"cannot start or reach {where}: {first_line}") from None
    return True
