"""README.md's command outputs are those the commands print now (docs/readme_examples.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "readme_examples.py"


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600
    )


def test_the_readme_examples_are_current() -> None:
    """Every example but the slow ones (a tournament, the benchmark) is run and compared."""
    ran = run_script("--check", "--quick")
    assert ran.returncode == 0, (
        f"{ran.stderr}\nREADME.md is stale: run `python docs/readme_examples.py` and review the diff"
    )


def test_every_shown_command_output_is_an_example_block() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    inside = re.sub(r"<!-- example: .*?<!-- /example -->", "", text, flags=re.DOTALL)
    fenced = re.findall(r"```[a-z]*\n(.*?)```", inside, flags=re.DOTALL)
    shown = [block.splitlines()[0] for block in fenced if block.startswith("$ ")]
    assert shown == [], f"command output outside an example block: {shown}"
    blocks = re.findall(r"<!-- example: (.*?)-->\n```text\n\$ (.*?)\n", text, flags=re.DOTALL)
    assert len(blocks) >= 5
    for head, command in blocks:
        assert head.strip().splitlines()[0] == command


def test_a_stale_block_is_named_and_then_rewritten(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "Intro.\n\n"
        "<!-- example: csl best-move missing.json -->\n"
        "```text\n$ csl best-move missing.json\nsomething else\n```\n"
        "<!-- /example -->\n\n"
        "<!-- example: csl --version\nlines: 1-1 -->\n"
        "```text\n```\n"
        "<!-- /example -->\n\nThe end.\n",
        encoding="utf-8",
    )
    check = run_script("--check", "--readme", str(readme))
    assert check.returncode == 1
    assert "stale example: csl best-move missing.json" in check.stderr
    assert "stale example: csl --version" in check.stderr
    assert run_script("--readme", str(readme)).returncode == 0
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("Intro.\n\n") and text.endswith("The end.\n")
    assert (
        "```text\n$ csl best-move missing.json\ncsl: error: position file 'missing.json': "
        "cannot read: No such file or directory   (exit 2)\n```\n"
    ) in text
    assert re.search(r"```text\n\$ csl --version\ncsl \S+\n```\n", text)
    assert run_script("--check", "--readme", str(readme)).returncode == 0


def test_lines_and_masks() -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from readme_examples import Example
    finally:
        sys.path.remove(str(SCRIPT.parent))
    example = Example.parse("csl x\nlines: 1-2, 4, last 1\nvary: \\d+ games/s\n")
    output = [f"line {n}" for n in range(1, 8)]
    assert example.select(output) == ["line 1", "line 2", "...", "line 4", "...", "line 7"]
    assert example.masked('3.5 games/s, "elapsed_s": 0.012, 0.07 s.') == (
        '3.<varies>, "elapsed_s": <varies>, <varies>.'
    )
    assert example.masked("a   b ━━━ c") == example.masked("a b ━ c")
