"""``python -m csl_ai`` and the `csl` console script: the command line, guarded from the
first instant against signals.

Loading the command line (typer, rich) and parsing the options take a few tenths of a
second, and nothing needs saving yet. A signal then would print Python's traceback
(Ctrl-C) or end the process without a word (SIGTERM, SIGHUP). Until a command runs
(`csl_ai.cli.common.CslGroup.invoke` takes over), INT, TERM and HUP write the CLI's one
error line (and under ``--json`` its JSON object) and exit with 128 + the signal, with
the standard library alone. A signal ignored when the process started (``nohup``, a
background job's Ctrl-C) stays ignored.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from types import FrameType
from typing import Any

EARLY_SIGNALS = tuple(
    s for s in (signal.SIGINT, getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None))
    if s is not None
)


def _write(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode())
    except OSError:
        pass


def _exit_now(signum: int, frame: FrameType | None) -> None:
    code = 128 + signum
    text = "interrupted" if signum == signal.SIGINT else f"terminated by {signal.Signals(signum).name}"
    if "--json" in sys.argv[1:]:
        error = {"error": {"kind": "KeyboardInterrupt", "message": text, "exit_code": code}}
        _write(1, json.dumps(error) + "\n")
    _write(2, f"csl: error: {text}\n")
    os._exit(code)


def main(args: list[str] | None = None) -> Any:
    """Run `csl` with args (default: the process arguments); exits with its status."""
    saved = {
        s: signal.signal(s, _exit_now) for s in EARLY_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN
    }
    try:
        from csl_ai.cli import main as cli_main

        return cli_main(args)
    finally:
        for signum, handler in saved.items():
            signal.signal(signum, handler)


if __name__ == "__main__":
    main()
