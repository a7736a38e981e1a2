"""When a search stops, on how many threads, from which seed: one `SearchLimit` for both
games' searches (Candy Spiders Leopards' ``csl_ai.search`` and ``csl_ai.candylab.search``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from csl_ai.errors import CslError
from csl_ai.seeds import MASK64

MAX_THREADS = 256
"""Most search threads a limit allows."""


class SearchSettingsError(CslError):
    """A SearchLimit or SearchConfig value out of range."""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class SearchLimit:
    """When to stop, on how many threads, from which seed.

    With both limits the search stops at whichever comes first. With a seed and an
    iteration limit (and no time limit) the result is identical run after run for the same
    number of threads; another thread count searches other streams and may answer otherwise
    where moves are close.
    """

    iterations: int | None = None
    """Total iterations over all threads (ISMCTS: one world and one playout each; PIMC: one
    playout each, whole worlds only)."""
    time_ms: float | None = None
    """Wall-clock budget of the decision, in milliseconds, for each thread: what the set-up
    before the threads start takes (the pool of inferred worlds) counts against it."""
    threads: int = 1
    """Root-parallel searches, each on its own thread with its own seeded stream; their root
    statistics are summed in thread order."""
    seed: int | None = None
    """Base seed; None draws one from the operating system (not reproducible)."""
    stop_when_settled: bool = False
    """Under an iteration limit, the search stops as soon as its most visited move can no
    longer be overtaken in the iterations left: the very answer of the whole budget, for
    fewer iterations (Candy Lab's threads each settle on their own tree). The named levels
    use it and spend what it saves on their iteration budgets."""

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_ms is None:
            raise SearchSettingsError("SearchLimit needs iterations or time_ms")
        if self.iterations is not None and (
            not _is_int(self.iterations) or self.iterations < 1
        ):
            raise SearchSettingsError(
                f"iterations must be a positive integer, got {self.iterations!r}"
            )
        if self.time_ms is not None and (
            isinstance(self.time_ms, bool)
            or not isinstance(self.time_ms, (int, float))
            or not 0 < self.time_ms < math.inf
        ):
            raise SearchSettingsError(f"time_ms must be a positive number, got {self.time_ms!r}")
        if not _is_int(self.threads) or not 1 <= self.threads <= MAX_THREADS:
            raise SearchSettingsError(
                f"threads must be an integer 1..{MAX_THREADS}, got {self.threads!r}"
            )
        if not isinstance(self.stop_when_settled, bool):
            raise SearchSettingsError(f"stop_when_settled must be True or False, got {self.stop_when_settled!r}")
        if self.seed is not None and (not _is_int(self.seed) or not 0 <= self.seed <= MASK64):
            raise SearchSettingsError(f"seed must be an integer 0..2**64-1, got {self.seed!r}")


__all__ = ["MAX_THREADS", "SearchLimit", "SearchSettingsError"]
