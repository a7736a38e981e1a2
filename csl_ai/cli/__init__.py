"""The `csl` command line. The console script enters at `csl_ai.__main__.main`, which
guards the loading against signals and calls `main`."""

from __future__ import annotations

from typing import Any

import typer

from csl_ai.cli.app import app


def main(args: list[str] | None = None) -> Any:
    """Run `csl` with args (default: the process arguments); exits with its status."""
    return typer.main.get_command(app).main(args=args, prog_name="csl")


__all__ = ["app", "main"]
