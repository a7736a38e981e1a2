"""The bench signature pins the search's behaviour: a refactoring keeps it, and a commit
that changes play updates SIGNATURE here and says why (`csl bench --signature`)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from csl_ai.cli import app
from csl_ai.signature import bench_signature

SIGNATURE = "40e57f1528e6072f"
"""`csl bench --signature` as of the commit that last changed play."""


def test_the_signature_is_the_recorded_one() -> None:
    sig = bench_signature()
    assert sig.searches == 144 and sig.games == 4
    assert sig.hex == SIGNATURE, (
        f"the bench signature changed from {SIGNATURE} to {sig.hex}: a refactoring must keep "
        "it; a change of play updates SIGNATURE and says so in its commit"
    )


def test_the_signature_sees_a_change_of_play(monkeypatch) -> None:
    """One more iteration in each search moves the hash: it reads what the searches did."""
    import csl_ai.signature as signature

    monkeypatch.setattr(signature, "SIGNATURE_ITERATIONS", signature.SIGNATURE_ITERATIONS + 1)
    assert signature.bench_signature(include_games=False).hex != SIGNATURE


def test_cli_prints_the_signature() -> None:
    result = CliRunner().invoke(app, ["bench", "--signature", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["signature"] == SIGNATURE
