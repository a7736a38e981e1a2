"""Root-parallel search threads, shared by both games' searches.

A search worker is one thread's tree in a compiled core (``csl_ai._core.SearchWorker``,
``csl_ai.candylab._core.SearchWorker``): ``run(budget, seconds)`` searches with the GIL
released, ``request_stop()`` asks it to stop at its next iteration. `run_workers` runs
each on a Python thread of its own and waits for them, so that Ctrl-C arrives during a
search of any length; `split_budget` shares an iteration budget among them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol


class SearchWorker(Protocol):
    """One thread's search in a compiled core."""

    def run(self, budget: int, seconds: float, stop_settled: bool = False) -> None: ...

    def request_stop(self) -> None: ...


JOIN_POLL_S = 0.2
"""How long a wait for the search threads lasts before Python gets to run signal handlers."""
STOP_POLL_S = 0.02
"""How often a search given a stop event looks at it."""


def split_budget(total: int, parts: int) -> list[int]:
    """total iterations shared as evenly as they go among parts (the first ones get the rest)."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def run_workers(
    workers: Sequence[tuple[SearchWorker, int]],
    seconds: float,
    stop: threading.Event | None = None,
    stop_settled: bool = False,
) -> None:
    """Run each worker with its budget on a thread of its own and wait for them all
    (stop_settled: each stops once its answer is settled, `SearchLimit.stop_when_settled`).

    The wait comes back to Python every JOIN_POLL_S, so Ctrl-C (or any signal handler's
    exception) arrives during a search of any length; then every worker is told to stop,
    the threads are joined (a few microseconds: each checks before every iteration) and
    the exception goes on. The threads are daemons, so even a second interrupt during
    that join cannot keep the process from exiting. Once stop is set, every worker is told
    to stop and the search ends with what it has.
    """
    poll = JOIN_POLL_S if stop is None else min(JOIN_POLL_S, STOP_POLL_S)
    pool = [
        threading.Thread(target=w.run, args=(b, seconds, stop_settled), name=f"csl-search-{i}", daemon=True)
        for i, (w, b) in enumerate(workers)
    ]
    try:
        for th in pool:
            th.start()
        for th in pool:
            while th.is_alive():
                th.join(poll)
                if stop is not None and stop.is_set():
                    for w, _b in workers:
                        w.request_stop()
    except BaseException:
        for w, _b in workers:
            w.request_stop()
        for th in pool:
            if th.ident is not None:
                th.join()
        raise


__all__ = ["JOIN_POLL_S", "STOP_POLL_S", "SearchWorker", "run_workers", "split_budget"]
