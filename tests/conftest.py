"""Shared test settings: the hypothesis profiles and rules fixtures used across test files.

Profiles: "csl" (loaded by default; no deadline, since the first call into the C core
and the Python game can be slow on a shared machine) and "ci" (the same, derandomized
so a CI run is reproducible). Pick one with ``--hypothesis-profile=ci``.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

from csl_ai.rules import PLAYER_SPECS, RulesConfig

settings.register_profile(
    "csl", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("ci", settings.get_profile("csl"), derandomize=True)
settings.load_profile("csl")

PLAYER_COUNTS: tuple[int, ...] = tuple(sorted(PLAYER_SPECS))
"""Every allowed player count, for parametrizing."""


@pytest.fixture(params=PLAYER_COUNTS, ids=lambda n: f"{n}p")
def rules(request: pytest.FixtureRequest) -> RulesConfig:
    """Default rules (all A sides, default deck) for each player count in turn."""
    return RulesConfig(players=request.param)


@pytest.fixture(autouse=True)
def _records_in_a_temporary_folder(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games that tests save without a path land in a temporary folder, never the user's."""
    monkeypatch.setenv("CSL_RECORDS_DIR", str(tmp_path_factory.mktemp("records")))
