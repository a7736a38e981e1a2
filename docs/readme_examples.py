#!/usr/bin/env python3
"""README.md's command examples, made by running the commands, so they cannot go stale.

Each example is a fenced block between two HTML comments; the first names the command:

    <!-- example: csl best-move docs/position-example.json --seed 1 -->
    ```text
    $ csl best-move docs/position-example.json --seed 1
    (what the command printed)
    ```
    <!-- /example -->

The opening comment may go on over more lines, one setting a line:

    lines: 1-12, last 5  show only these lines of the output ("..." where some are left out)
    vary: REGEX          output that differs run to run, compared as a placeholder
    slow: yes            left out by --quick

Usage:

    python docs/readme_examples.py           # rewrite every stale block of README.md
    python docs/readme_examples.py --check   # exit 1 naming every stale block
    python docs/readme_examples.py --check --quick   # the same, without the slow ones

The command is a shell command line (``printf 'B7\\n' | csl play ...`` types at the
prompts), run by bash with stderr merged into stdout and ``(exit N)`` after a failure.
The blocks run in order in one scratch folder (a block may read a file an earlier one
wrote) that holds a copy of docs/ and a data folder (XDG_DATA_HOME) of its own, so
nothing outside it is written; ``csl`` there is this interpreter's ``python -m csl_ai``,
with COLUMNS=100 and no colour. Timings (``elapsed_s``, ``cpu_s``, ``0.05 s``) and the
``vary`` patterns of a block are masked when an example is compared (and runs of spaces
count as one), and a block that differs only there is left as it is.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(
    r"<!-- example: (?P<head>.*?)-->\n(?P<body>.*?)<!-- /example -->\n?", re.DOTALL
)
ALWAYS_VARY = (
    r'(?<="elapsed_s": )[-+0-9.eE]+',
    r'(?<="cpu_s": )[-+0-9.eE]+',
    r"\b\d+\.\d+ s\b",
)
"""Output that differs from run to run in every example: timings."""
PLACEHOLDER = "<varies>"
TIMEOUT_S = 300


class ExampleError(Exception):
    """A README example block that cannot be read or run."""


@dataclass(frozen=True)
class Example:
    """One example block of the README."""

    command: str
    lines: tuple[tuple[int, int], ...] = ()
    """Output lines to show, as 1-based inclusive ranges (a negative number counts from
    the end: ``last 5`` is (-5, -1)); empty: all."""
    vary: tuple[str, ...] = ()
    slow: bool = False

    @classmethod
    def parse(cls, head: str) -> Example:
        """The settings of an opening comment (its text after ``example:``)."""
        command, *settings = [line.strip() for line in head.strip().splitlines()]
        if not command:
            raise ExampleError("an example comment names no command")
        lines: list[tuple[int, int]] = []
        vary: list[str] = []
        slow = False
        for setting in settings:
            key, sep, value = setting.partition(":")
            key, value = key.strip(), value.strip()
            if not sep:
                raise ExampleError(f"{command!r}: bad setting line {setting!r} (key: value)")
            if key == "lines":
                for part in (p.strip() for p in value.split(",")):
                    first, _, last = part.partition("-")
                    if part.startswith("last ") and part[5:].strip().isdigit():
                        lines.append((-int(part[5:]), -1))
                    elif first.isdigit() and (last or first).isdigit():
                        lines.append((int(first), int(last or first)))
                    else:
                        raise ExampleError(f"{command!r}: bad line range {part!r}")
            elif key == "vary":
                try:
                    re.compile(value)
                except re.error as e:
                    raise ExampleError(f"{command!r}: bad vary pattern {value!r}: {e}") from None
                vary.append(value)
            elif key == "slow":
                slow = value.lower() in ("yes", "true", "1")
            else:
                raise ExampleError(f"{command!r}: unknown setting {key!r}")
        return cls(command, tuple(lines), tuple(vary), slow)

    def select(self, output: list[str]) -> list[str]:
        """The chosen lines of the output, ``...`` where lines are left out."""
        if not self.lines:
            return output
        shown: list[str] = []
        after = 0
        n = len(output)
        for first, last in self.lines:
            first, last = (n + 1 + v if v < 0 else v for v in (first, last))
            first = max(first, after + 1)
            if first > after + 1:
                shown.append("...")
            shown.extend(output[first - 1 : last])
            after = max(after, min(last, n))
        if after < len(output):
            shown.append("...")
        return shown

    def masked(self, text: str) -> str:
        """The text with what varies run to run replaced by a placeholder, and runs of
        spaces and table rules as one space (a varying number moves a column)."""
        for pattern in (*ALWAYS_VARY, *self.vary):
            text = re.sub(pattern, PLACEHOLDER, text)
        return re.sub(r"[ ━─]+", " ", text)


class Scratch:
    """The folder the examples run in: a copy of docs/, a csl of this interpreter."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="csl-readme-"))
        shutil.copytree(ROOT / "docs", self.path / "docs")
        bin_dir = self.path / "bin"
        bin_dir.mkdir()
        csl = bin_dir / "csl"
        csl.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m csl_ai "$@"\n')
        csl.chmod(0o755)
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "COLUMNS": "100",
            "LINES": "50",
            "NO_COLOR": "1",
            "TERM": "dumb",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "XDG_DATA_HOME": str(self.path / "data"),
            "CSL_RECORDS_DIR": str(self.path / "records"),
        }
        self.env.pop("FORCE_COLOR", None)

    def run(self, example: Example) -> str:
        """The fenced block the example's command produces now."""
        try:
            proc = subprocess.run(
                ["bash", "-c", example.command],
                cwd=self.path,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise ExampleError(f"{example.command!r} ran over {TIMEOUT_S} s") from None
        output = [line.rstrip() for line in proc.stdout.splitlines()]
        while output and not output[-1]:
            output.pop()
        if proc.returncode:
            if not output:
                output = [""]
            output[-1] += f"   (exit {proc.returncode})"
        shown = example.select(output)
        return "```text\n" + "\n".join([f"$ {example.command}", *shown]) + "\n```\n"

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def update(text: str, quick: bool = False) -> tuple[str, list[str]]:
    """README text with every example block made again; and the stale blocks' commands."""
    stale: list[str] = []
    out: list[str] = []
    position = 0
    scratch = Scratch()
    try:
        for match in BLOCK.finditer(text):
            example = Example.parse(match["head"])
            out.append(text[position : match.start("body")])
            position = match.end("body")
            old = match["body"]
            if quick and example.slow:
                out.append(old)
                continue
            new = scratch.run(example)
            if example.masked(new) == example.masked(old):
                out.append(old)
                continue
            stale.append(example.command)
            out.append(new)
        out.append(text[position:])
    finally:
        scratch.close()
    return "".join(out), stale


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if stale")
    parser.add_argument("--quick", action="store_true", help="leave out the slow examples")
    parser.add_argument("--readme", type=Path, default=README, help="the file (README.md)")
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    if not BLOCK.search(text):
        print(f"{args.readme}: no example blocks", file=sys.stderr)
        return 1
    try:
        new_text, stale = update(text, args.quick)
    except ExampleError as e:
        print(f"{args.readme}: {e}", file=sys.stderr)
        return 1
    if args.check:
        for command in stale:
            print(f"{args.readme}: stale example: {command}", file=sys.stderr)
        return 1 if stale else 0
    if stale:
        args.readme.write_text(new_text, encoding="utf-8")
        for command in stale:
            print(f"made again: {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
