"""Tournaments and self-play: many games between agents, on one machine or a Ray cluster.

- `runner`: the duplicate-deal schedule and seeds; plays batches of games (pure, no Ray);
- `harness`: runs batches as Ray tasks (or in-process), writes and resumes results;
- `results`: a run's folder on disk (config, games, training rows, summary) and resume;
- `ray_setup`: starting or joining Ray (cluster address, token, `ray.init`);
- `stats`: standings with bootstrap intervals over deals, head-to-head, ratings;
- `plot`: the win-share picture;
- `selfplay`: per-decision training rows (observation features, search visits, outcome).

`harness` (and `ray_setup`) import Ray when they run, `plot` imports matplotlib: import
them directly.
"""

from csl_ai.tournament.runner import (
    GameOutcome,
    Job,
    TournamentConfig,
    TournamentError,
    TournamentRunError,
    run_batch,
    run_local,
    schedule,
)
from csl_ai.tournament.stats import Summary, summarize

__all__ = [
    "GameOutcome",
    "Job",
    "Summary",
    "TournamentConfig",
    "TournamentError",
    "TournamentRunError",
    "run_batch",
    "run_local",
    "schedule",
    "summarize",
]
