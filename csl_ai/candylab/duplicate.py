"""A Candy Lab tournament on duplicate deals: every agent plays every seat of every deal.

The CSL tournament harness (``csl_ai.tournament``) is built on CSL's game, rules and
records, so Candy Lab has this small runner of its own: in this process, or on worker
processes (``concurrent.futures``), no Ray.

A lineup seats the agents: the first agent once, the others filling the remaining seats
in turn (2 agents at 4 players: one against three of the other). Each deal (a game seed)
is played once per rotation of the lineup round the table, so each agent plays each seat
on the same cards. A game scores each seat's share of the win (1, 1/k for a k-way
shared win, else 0); an agent's figure is its mean share per seat played, with the same
95% percentile bootstrap over deals (the duplicated unit) as CSL's tournaments.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

from csl_ai.candylab.game import Game
from csl_ai.candylab.players import make_agent, parse_spec
from csl_ai.candylab.records import game_to_record
from csl_ai.candylab.rules import CandyLabRules
from csl_ai.errors import CslError
from csl_ai.seeds import joined_seed
from csl_ai.tournament.stats import BOOTSTRAP_RESAMPLES, MIN_INTERVAL_DEALS, bootstrap_ratio


class DuplicateError(CslError):
    """Agents or counts a duplicate tournament cannot take."""


def lineup(agents: Sequence[str], players: int) -> tuple[int, ...]:
    """Agent indexes for seats 0..players-1 before rotation."""
    if not 1 <= len(agents) <= players:
        raise DuplicateError(
            f"agents: 1 to {players} for {players} players, got {len(agents)}"
        )
    rest = list(range(1, len(agents))) or [0]
    return (0, *(rest[i % len(rest)] for i in range(players - 1)))


@dataclass(frozen=True)
class Job:
    """One game: a deal and a rotation of the lineup."""

    deal: int
    rotation: int
    seats: tuple[int, ...]
    """The agent index at each seat."""


def schedule(agents: Sequence[str], players: int, games: int) -> list[Job]:
    """Whole deals (games rounded up to a multiple of players), each rotated round."""
    base = lineup(agents, players)
    deals = max(1, math.ceil(games / players))
    return [
        Job(d, r, tuple(base[(s - r) % players] for s in range(players)))
        for d in range(deals)
        for r in range(players)
    ]


@dataclass(frozen=True)
class Outcome:
    job: Job
    shares: tuple[float, ...]
    """Each seat's share of the win."""
    record: dict[str, Any]
    seconds: float


def play_job(
    agents: Sequence[str], rules: CandyLabRules, seed: int, job: Job
) -> Outcome:
    """Play one game; the deal's seed and each seat's agent seed come from seed."""
    import time

    start = time.perf_counter()
    game = Game(rules, seed=joined_seed(seed, "deal", rules.players, job.deal))
    seated = [
        make_agent(agents[a], joined_seed(seed, "agent", job.deal, job.rotation, s))
        for s, a in enumerate(job.seats)
    ]
    while not game.is_over:
        seat = game.current
        game.play(seated[seat].act(game.observation(seat)))
    from csl_ai.candylab import core

    record = game_to_record(
        game,
        agents=[agents[a] for a in job.seats],
        meta={"deal": job.deal, "rotation": job.rotation},
    )
    return Outcome(job, tuple(core.returns(game.state)), record, time.perf_counter() - start)


def _play(args: tuple[Sequence[str], dict[str, Any], int, Job]) -> Outcome:
    agents, rules_json, seed, job = args
    return play_job(agents, CandyLabRules.from_dict(rules_json), seed, job)


def run(
    agents: Sequence[str],
    rules: CandyLabRules,
    games: int,
    seed: int,
    workers: int = 1,
    progress: Callable[[Outcome, int, int], None] | None = None,
) -> list[Outcome]:
    """Play the schedule (in order when workers <= 1; results in schedule order)."""
    for spec in agents:
        parse_spec(spec)
    jobs = schedule(agents, rules.players, games)
    out: list[Outcome] = []

    def outcomes() -> Iterator[Outcome]:
        if workers <= 1:
            for job in jobs:
                yield play_job(agents, rules, seed, job)
            return
        rules_json = rules.to_dict()
        with ProcessPoolExecutor(workers) as pool:
            yield from pool.map(_play, [(list(agents), rules_json, seed, j) for j in jobs])

    for outcome in outcomes():
        out.append(outcome)
        if progress is not None:
            progress(outcome, len(out), len(jobs))
    return out


@dataclass(frozen=True)
class Standing:
    agent: str
    games: int
    """Seats played (a game seating it twice counts twice)."""
    win_share: float
    ci95: tuple[float, float] | None
    """None with fewer than MIN_INTERVAL_DEALS deals."""
    fair_share: float

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "seats_played": self.games,
            "win_share": self.win_share,
            "ci95": None if self.ci95 is None else list(self.ci95),
            "fair_share": self.fair_share,
        }


def standings(agents: Sequence[str], outcomes: Sequence[Outcome], seed: int = 0) -> list[Standing]:
    """Each agent's mean win share per seat played, with the 95% percentile bootstrap over
    deals that CSL's tournaments give (`csl_ai.tournament.stats.bootstrap_ratio`), and as
    they do, no interval under `MIN_INTERVAL_DEALS` deals."""
    deals = sorted({o.job.deal for o in outcomes})
    row = {deal: i for i, deal in enumerate(deals)}
    sums = np.zeros((len(deals), len(agents)))
    counts = np.zeros((len(deals), len(agents)))
    for o in outcomes:
        for seat, who in enumerate(o.job.seats):
            sums[row[o.job.deal], who] += o.shares[seat]
            counts[row[o.job.deal], who] += 1
    if len(deals) >= MIN_INTERVAL_DEALS:
        low, high = bootstrap_ratio(sums, counts, BOOTSTRAP_RESAMPLES, seed)
    players = len(outcomes[0].shares) if outcomes else 1
    result = []
    for a, name in enumerate(agents):
        played = int(counts[:, a].sum())
        share = float(sums[:, a].sum() / played) if played else 0.0
        ci = (float(low[a]), float(high[a])) if len(deals) >= MIN_INTERVAL_DEALS and played else None
        result.append(Standing(name, played, share, ci, 1 / players))
    return result


__all__ = ["DuplicateError", "Job", "Outcome", "Standing", "lineup", "run", "schedule", "standings"]
