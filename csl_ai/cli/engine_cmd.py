"""The `csl engine` command: the JSON-lines engine protocol of `csl_ai.engine` on
standard input and output (added by `register`; docs/engine.md)."""

from __future__ import annotations

from typing import Final

import typer

ENGINE_EPILOG: Final = """
One JSON object a line in, one a line out, as chess engines speak UCI:
{"cmd": "isready"}, {"cmd": "position", "position": {...}} or {"cmd": "position",
"file": "p.json"}, {"cmd": "go", "iterations": N | "time_ms": T | "level": "normal",
"threads": k, "seed": s}, {"cmd": "stop"}, {"cmd": "quit"}. A go answers {"info": ...}
lines while it searches, then {"bestmove": MOVE, "result": ...} with what csl best-move
--json prints. Errors are {"error": {"kind", "message"}} lines; they never end the
program. See docs/engine.md.
"""


def register(app: typer.Typer) -> None:
    """Add the `engine` command to app."""

    @app.command(epilog=ENGINE_EPILOG)
    def engine() -> None:
        """Answer best-move queries over a JSON-lines protocol on stdin/stdout (for programs)."""
        from csl_ai.engine import run_engine

        code = run_engine()
        if code:
            raise typer.Exit(code)


__all__ = ["register"]
