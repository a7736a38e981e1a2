"""Reading input files and writing output files, so that bad input of any size, and any
path that is not a regular file, ends in one of csl_ai's errors.

``read_input_text`` is the one reader of every input file and of standard input: it reads
at most ``MAX_INPUT_BYTES``. ``write_file_atomic`` (on ``replacing``) is the one writer of
every file written whole, ``create_file_exclusive`` the one creator of a file that must
not exist yet (it never replaces anything, even a file another program created a moment
before), and ``appending`` the one opener of every file appended to: none ever writes
through, or replaces, anything at the path that is not a regular file (a FIFO, a symbolic
link, a device, a folder).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, Final

from csl_ai.errors import CslError, OutputWriteError, UnsafeOutputError

MAX_INPUT_BYTES: Final = 16 << 20
"""Largest input file (position, record, deck) read: far above any real one (a whole
5-player record is about 20 KiB), low enough that /dev/zero fails at once."""


def read_input_text(
    source: str | os.PathLike[str],
    label: str,
    err: type[CslError],
    limit: int = MAX_INPUT_BYTES,
) -> str:
    """The UTF-8 text of a file, or of standard input for ``"-"``; err (its message starting
    with label) when it cannot be read, is not UTF-8, or holds more than limit bytes.

    At most limit + 1 bytes are ever read, so a huge file, a device such as /dev/zero or an
    endless pipe fails at once instead of filling memory. Closed standard input is an
    error like a missing file.
    """
    try:
        if isinstance(source, str) and source == "-":
            data: bytes | str = _read_stdin(limit + 1)
        else:
            with open(source, "rb") as f:
                data = f.read(limit + 1)
    except OSError as e:
        raise err(f"{label}: cannot read: {e.strerror or e}") from None
    except _StdinClosedError:
        raise err(f"{label}: closed, nothing to read") from None
    if len(data) > limit:
        raise err(f"{label}: more than {limit:,} bytes; not an input this program reads")
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise err(f"{label}: not UTF-8 text ({e.reason} at byte {e.start})") from None


class _StdinClosedError(Exception):
    """Standard input is closed or missing (``<&-``)."""


def _read_stdin(n: int) -> bytes | str:
    """At most n bytes (or characters, for a text-only stream) of standard input."""
    stream = sys.stdin
    if stream is None:
        raise _StdinClosedError
    try:
        binary = getattr(stream, "buffer", None)
        return binary.read(n) if binary is not None else stream.read(n)
    except ValueError:
        raise _StdinClosedError from None


_NODE_KINDS: Final[tuple[tuple[Callable[[int], bool], str], ...]] = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)
_NEW_FILE_MODE: Final = 0o644


def non_regular_kind(path: str | os.PathLike[str]) -> str | None:
    """What is at path when it is not a regular file (``"a FIFO"``, ``"a symbolic link"``,
    ...); None when nothing or a regular file is there. A symbolic link is itself, whatever
    it points to."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _NODE_KINDS if test(mode)), "a special file")


def check_output_path(path: str | os.PathLike[str], label: str) -> None:
    """UnsafeOutputError unless path names nothing yet or a regular file; label names the
    path in the message (``"record file 'game.json'"``)."""
    kind = non_regular_kind(path)
    if kind is not None:
        raise UnsafeOutputError(f"{label} is {kind}, not a regular file; it is left as it is")


class OutputExistsError(OutputWriteError):
    """A file to be created whose name is taken: something is there already (another
    program may have created it a moment before). What is there is left as it is."""


def _write_error(label: str, e: OSError, err: type[OutputWriteError]) -> OutputWriteError:
    return err(f"cannot write {label}: {e.strerror or e}")


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike[str], label: str, err: type[OutputWriteError] = OutputWriteError
) -> Iterator[Path]:
    """A new temporary file in path's folder for the block to write path's next contents
    into (by name, so any writer can fill it); once the block ends, the file is fsynced and
    renamed over path, so a reader finds the old file or the new one, never a part.

    Refuses (UnsafeOutputError, before anything is written) when path is not a regular file
    or nothing; err names path when the system refuses a step (a full disk, a read-only
    folder). A file replaced keeps its permission bits. The temporary file never outlives
    the block.
    """
    target = Path(path)
    check_output_path(target, label)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
    except OSError as e:
        raise _write_error(label, e, err) from None
    tmp = Path(name)
    try:
        yield tmp
        fd = os.open(tmp, os.O_WRONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            mode = stat.S_IMODE(os.lstat(target).st_mode)
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
        os.chmod(tmp, mode)
        check_output_path(target, label)
        os.replace(tmp, target)
    except OSError as e:
        raise _write_error(label, e, err) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def write_file_atomic(
    path: str | os.PathLike[str],
    data: str | bytes,
    label: str,
    err: type[OutputWriteError] = OutputWriteError,
) -> None:
    """Replace path with data (text is written as UTF-8) through ``replacing``: a temporary
    file in the same folder, fsync, then ``os.replace``; never over a non-regular file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with replacing(path, label, err) as tmp, open(tmp, "wb") as f:
        f.write(payload)


_EXCL_FLAGS: Final = (
    os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
)
_NO_HARD_LINKS: Final = frozenset(
    getattr(errno, name)
    for name in ("EPERM", "EOPNOTSUPP", "ENOTSUP", "EXDEV", "EMLINK", "ENOSYS")
    if hasattr(errno, name)
)
"""What os.link fails with on a file system that has no hard links (FAT, some mounts)."""


def _exists_error(label: str) -> OutputExistsError:
    return OutputExistsError(f"{label} exists already (another program created it meanwhile?); it is left as it is")


def create_file_exclusive(
    path: str | os.PathLike[str],
    data: str | bytes,
    label: str,
    err: type[OutputWriteError] = OutputWriteError,
) -> None:
    """Create path holding data (text is written as UTF-8); OutputExistsError, before or
    instead of writing anything there, when anything at all is at path, even a file that
    another process created a moment ago: nothing is ever replaced.

    The data goes to a temporary file in the same folder, is fsynced, and is then
    hard-linked to path, which the system refuses atomically when the name is taken, so a
    reader never sees a part of the file. On a file system without hard links the file is
    opened with O_EXCL and written in place instead. err names path when the system
    refuses a step (a full disk, a read-only folder).
    """
    target = Path(path)
    check_output_path(target, label)
    if os.path.lexists(target):
        raise _exists_error(label)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as e:
        raise _write_error(label, e, err) from None
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _NEW_FILE_MODE)
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise _exists_error(label) from None
        except OSError as e:
            if e.errno not in _NO_HARD_LINKS:
                raise
            _create_in_place(target, payload, label)
    except OSError as e:
        raise _write_error(label, e, err) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _create_in_place(target: Path, payload: bytes, label: str) -> None:
    """Create target with O_EXCL and write payload into it (no hard links here)."""
    try:
        fd = os.open(target, _EXCL_FLAGS, _NEW_FILE_MODE)
    except FileExistsError:
        raise _exists_error(label) from None
    with os.fdopen(fd, "wb") as f:
        f.write(payload)
        f.flush()
        os.fsync(f.fileno())


_APPEND_FLAGS: Final = (
    os.O_WRONLY
    | os.O_APPEND
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


@contextlib.contextmanager
def appending(
    path: str | os.PathLike[str], label: str, err: type[OutputWriteError] = OutputWriteError
) -> Iterator[BinaryIO]:
    """path opened to append to (created if absent); what the block wrote is flushed and
    fsynced when it ends.

    Only a regular file is opened: a symbolic link is not followed and a FIFO does not
    block the open (UnsafeOutputError for either, or for a device); err names path when the
    system refuses a step.
    """
    check_output_path(path, label)
    try:
        fd = os.open(path, _APPEND_FLAGS, _NEW_FILE_MODE)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            check_output_path(path, label)
        raise _write_error(label, e, err) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            check_output_path(path, label)
            raise UnsafeOutputError(f"{label} is not a regular file; it is left as it is")
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "ab")
    except OSError as e:
        os.close(fd)
        raise _write_error(label, e, err) from None
    except BaseException:
        os.close(fd)
        raise
    try:
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        raise _write_error(label, e, err) from None
