"""A lock per live game record, shared by every csl process on the machine.

A game being played (by `csl play`, or by a `csl serve` table) holds the lock of its
record file: an advisory ``flock`` on ``NAME.json.lock`` beside the record, a small file
that says who holds it (pid, program, host, since when). Another process that wants the
same record (a second `csl serve` on the same records folder, `csl play --resume`) finds
the lock taken and refuses with `RecordInUseError`, which names the holder.

The kernel lets go of a ``flock`` when its process ends however it ends (a crash, kill
-9), so a lock file left behind by a dead process is stale and the next process simply
takes it over (and writes its own pid in it); nothing has to guess from a pid whether
its owner still runs. A lock released on purpose removes its file. Between the check
that a lock file is free and taking it, the file may be removed and created anew by
others: the holder checks that the file it locked is still the one at the path, and
tries again if not.

New records are claimed the same way (`claim_record_name`): the name's lock is taken
first, then the record is created with exclusive creation
(`csl_ai.files.create_file_exclusive`) when the game is first saved, so two processes
started in the same second never pick one name.

Where ``fcntl`` does not exist (Windows), locks are not taken and every record counts
as free; exclusive creation still keeps two new records apart.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import stat
import time
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from csl_ai.errors import CslError, RecordWriteError, path_label
from csl_ai.files import non_regular_kind

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no advisory locks
    fcntl = None  # type: ignore[assignment]

LOCK_SUFFIX: Final = ".lock"
"""A record's lock file is the record's name with this added: ``game.json.lock``."""
BUSY_WAIT_S: Final = 0.25
"""How long `RecordLock.acquire` keeps trying a taken lock before it says the record is
in use: long enough to ride out another process's brief look (`record_in_use`)."""
_RETRY_S: Final = 0.02
_OPEN_FLAGS: Final = (
    os.O_RDWR
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
_PROBE_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_NONBLOCK", 0)
)
_NO_LOCKS: Final = frozenset(
    getattr(errno, name) for name in ("ENOLCK", "EOPNOTSUPP", "ENOTSUP", "ENOSYS") if hasattr(errno, name)
)
"""What flock fails with on a file system that has no such locks."""
_MAX_NAMES: Final = 10_000
"""Most names `claim_record_name` tries before it gives up."""


class RecordInUseError(CslError):
    """A game record another process (or another game in this one) is playing now.

    Not bad input: the CLI exits 1 for it (its ``exit_code``), the web API answers 409."""

    exit_code: Final = 1

    def __init__(self, message: str, holder: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.holder = dict(holder or {})


def lock_path(record: str | os.PathLike[str]) -> Path:
    """The lock file of a record: ``game.json`` -> ``game.json.lock`` in the same folder."""
    path = Path(record)
    return path.with_name(path.name + LOCK_SUFFIX)


def locks_supported() -> bool:
    """Whether records are locked on this system (not on Windows)."""
    return fcntl is not None


def _holder_text(holder: Mapping[str, Any]) -> str:
    """Who holds a lock, in words: ``csl serve, pid 1234`` (``on host X`` when not here)."""
    parts = []
    program = holder.get("program")
    if isinstance(program, str) and program:
        parts.append(program[:40])
    pid = holder.get("pid")
    if isinstance(pid, int) and not isinstance(pid, bool):
        parts.append(f"pid {pid}")
    host = holder.get("host")
    if isinstance(host, str) and host and host != socket.gethostname():
        parts.append(f"on host {host[:60]}")
    return ", ".join(parts) if parts else "pid unknown"


def in_use_message(record: str | os.PathLike[str], holder: Mapping[str, Any]) -> str:
    """The one line that says a record is live elsewhere, and what to do."""
    return (
        f"{path_label(record)} is a game being played in another csl process "
        f"({_holder_text(holder)}): finish or stop it there first"
    )


def _read_holder(fd: int) -> dict[str, Any]:
    """What a lock file says about its holder ({} when it says nothing readable yet)."""
    try:
        data = os.pread(fd, 4096, 0)
        holder = json.loads(data.decode("utf-8"))
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _lock_file_error(path: Path, e: OSError) -> CslError:
    kind = non_regular_kind(path)
    if kind is not None:
        return RecordWriteError(f"lock file {path_label(path)} is {kind}, not a regular file; it is left as it is")
    return RecordWriteError(f"cannot create the lock file {path_label(path)}: {e.strerror or e}")


class RecordLock:
    """The lock of one record, held by this process until `release` (or the process ends).

    Use `RecordLock.acquire` (waits a moment, then RecordInUseError) or `try_acquire`
    (None at once when taken). A context manager releases it at the end of the block.
    """

    def __init__(self, record: Path, fd: int | None) -> None:
        self.record = record
        """The record file this lock is for."""
        self.path = lock_path(record)
        self._fd = fd
        self._released = False

    @property
    def held(self) -> bool:
        """Whether this lock is still held (False once released; where locks are not
        supported, a lock counts as held until released)."""
        return not self._released

    @classmethod
    def try_acquire(
        cls, record: str | os.PathLike[str], program: str = "csl", wait_s: float = 0.0
    ) -> RecordLock | None:
        """The lock of record, or None when another holder keeps it for wait_s seconds.

        RecordWriteError when the lock file cannot be created (a read-only folder, or
        something other than a regular file at its path)."""
        lock, _holder = cls._attempt(Path(record), program, wait_s)
        return lock

    @classmethod
    def acquire(
        cls, record: str | os.PathLike[str], program: str = "csl", wait_s: float = BUSY_WAIT_S
    ) -> RecordLock:
        """The lock of record; RecordInUseError, naming the holder, when another process
        (or another game of this one) keeps it for wait_s seconds."""
        path = Path(record)
        lock, holder = cls._attempt(path, program, wait_s)
        if lock is None:
            raise RecordInUseError(in_use_message(path, holder), holder)
        return lock

    @classmethod
    def _attempt(cls, record: Path, program: str, wait_s: float) -> tuple[RecordLock | None, dict[str, Any]]:
        if fcntl is None:
            return cls(record, None), {}
        path = lock_path(record)
        deadline = time.monotonic() + max(wait_s, 0.0)
        while True:
            try:
                fd = os.open(path, _OPEN_FLAGS, 0o644)
            except OSError as e:
                raise _lock_file_error(path, e) from None
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise _lock_file_error(path, OSError(errno.EINVAL, "not a regular file"))
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = _read_holder(fd)
                    os.close(fd)
                    fd = -1
                    if time.monotonic() >= deadline:
                        return None, holder
                    time.sleep(_RETRY_S)
                    continue
                except OSError as e:
                    if e.errno in _NO_LOCKS:
                        # a file system without flock (some network mounts): no lock here
                        os.close(fd)
                        fd = -1
                        with contextlib.suppress(OSError):
                            os.unlink(path)
                        return cls(record, None), {}
                    raise RecordWriteError(
                        f"cannot lock {path_label(path)}: {e.strerror or e}"
                    ) from None
                if not _same_file(fd, path):
                    # released (and removed) by its holder between our open and our lock
                    os.close(fd)
                    fd = -1
                    continue
                _write_holder(fd, program)
            except BaseException:
                if fd >= 0:
                    os.close(fd)
                raise
            return cls(record, fd), {}

    def release(self) -> None:
        """Let go of the lock and remove its file (nothing when already released)."""
        fd, self._fd = self._fd, None
        self._released = True
        if fd is None:
            return
        try:
            if _same_file(fd, self.path):
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
            os.close(fd)

    def __del__(self) -> None:
        # a lock dropped without release (a bug, an interpreter exit) lets go of its fd
        try:
            self.release()
        except Exception:  # noqa: BLE001 - nothing to report from a finalizer
            pass

    def __enter__(self) -> RecordLock:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"RecordLock({str(self.record)!r}, held={self.held})"


def _same_file(fd: int, path: Path) -> bool:
    """Whether path still names the file open at fd."""
    try:
        at_path = os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    mine = os.fstat(fd)
    return (at_path.st_dev, at_path.st_ino) == (mine.st_dev, mine.st_ino)


def _write_holder(fd: int, program: str) -> None:
    """Say in the lock file who holds it now (a dead holder's words are replaced)."""
    holder = {
        "pid": os.getpid(),
        "program": program,
        "host": socket.gethostname(),
        "since": datetime.now().isoformat(timespec="seconds"),
    }
    data = (json.dumps(holder) + "\n").encode("utf-8")
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)


def record_in_use(record: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Who holds record's lock now (a dict, perhaps empty), or None when no one does.

    A look that changes nothing: a free lock is taken for an instant and let go, so a
    process acquiring it at that very instant waits a moment (`BUSY_WAIT_S`)."""
    if fcntl is None:
        return None
    path = lock_path(record)
    try:
        fd = os.open(path, _PROBE_FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        except OSError:
            return None
        return None
    finally:
        os.close(fd)


def claim_record_name(folder: Path, stem: str, program: str = "csl") -> RecordLock:
    """A new record name in folder, held for this process: ``STEM.json``, else
    ``STEM-2.json``, ``STEM-3.json``... the first that names nothing and whose lock no
    other process holds (another process may be playing a game it will save there).
    The record itself is created later, with `csl_ai.files.create_file_exclusive`.

    RecordWriteError when the folder cannot take a lock file."""
    for n in range(1, _MAX_NAMES + 1):
        record = folder / (f"{stem}.json" if n == 1 else f"{stem}-{n}.json")
        if os.path.lexists(record):
            continue
        lock = RecordLock.try_acquire(record, program)
        if lock is None:
            continue
        if os.path.lexists(record):
            lock.release()
            continue
        return lock
    raise RecordWriteError(f"no free record name {stem}-N.json in {path_label(folder)}")


@contextlib.contextmanager
def holding(record: str | os.PathLike[str], program: str = "csl") -> Iterator[RecordLock]:
    """The lock of record for the block (RecordInUseError when another holds it)."""
    lock = RecordLock.acquire(record, program)
    try:
        yield lock
    finally:
        lock.release()

__all__ = [
    "BUSY_WAIT_S",
    "LOCK_SUFFIX",
    "RecordInUseError",
    "RecordLock",
    "claim_record_name",
    "holding",
    "in_use_message",
    "lock_path",
    "locks_supported",
    "record_in_use",
]
