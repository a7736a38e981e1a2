"""A Candy Lab tournament on duplicate deals: every agent plays every seat of every deal.

This module fixes which games a tournament plays and plays them: the schedule, the
seeds, one game (`play_job`) and one batch of games (`play_batch`), the unit a worker
runs, and the standings. It is pure and deterministic (no Ray, no files), so a game
gives the same result in this process, in a batch of any size and on any Ray worker.
Where the games are played and how a run is kept on disk and resumed is
``csl_ai.candylab.tournament``, on the CSL tournament harness
(``csl_ai.tournament.harness``).

A lineup seats the agents: the first agent once, the others filling the remaining seats
in turn (2 agents at 4 players: one against three of the other). Each deal (a game seed)
is played once per rotation of the lineup round the table, so each agent plays each seat
on the same cards. Job ids number the games: ``deal * players + rotation``. A game scores
each seat's share of the win (1, 1/k for a k-way shared win, else 0); an agent's figure
is its mean share per seat played, with the same 95% percentile bootstrap over deals
(the duplicated unit) as CSL's tournaments.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from csl_ai.candylab.agents import Agent
from csl_ai.candylab.game import Game
from csl_ai.candylab.players import make_agent, parse_spec
from csl_ai.candylab.records import game_to_record
from csl_ai.candylab.rules import CandyLabRules
from csl_ai.errors import CslError
from csl_ai.seeds import joined_seed
from csl_ai.tournament.runner import agent_labels
from csl_ai.tournament.stats import BOOTSTRAP_RESAMPLES, MIN_INTERVAL_DEALS, bootstrap_ratio

AgentFactory = Callable[[str, int], Agent]
"""Builds an agent from its spec and seed (`csl_ai.candylab.players.make_agent` by default)."""
CONFIG_FORMAT: Final = "candylab-tournament"
CONFIG_VERSION: Final = 1


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

    @property
    def id(self) -> int:
        """deal * players + rotation: the key that resume and dedupe go by."""
        return self.deal * len(self.seats) + self.rotation


def deal_count(players: int, games: int) -> int:
    """Whole deals for games asked (rounded up to a multiple of players)."""
    return max(1, math.ceil(games / players))


def job_for(agents: Sequence[str], players: int, job_id: int) -> Job:
    """The job with that id (its deal, rotation and seating)."""
    base = lineup(agents, players)
    deal, rotation = divmod(job_id, players)
    return Job(deal, rotation, tuple(base[(s - rotation) % players] for s in range(players)))


def schedule(agents: Sequence[str], players: int, games: int) -> list[Job]:
    """Whole deals (games rounded up to a multiple of players), each rotated round; in
    job id order."""
    return [job_for(agents, players, i) for i in range(deal_count(players, games) * players)]


def deal_seed(seed: int, players: int, deal: int) -> int:
    """The game seed of a deal: the same order cards and bars in every rotation."""
    return joined_seed(seed, "deal", players, deal)


def agent_seed(seed: int, job: Job, seat: int) -> int:
    return joined_seed(seed, "agent", job.deal, job.rotation, seat)


@dataclass(frozen=True)
class DuplicateConfig:
    """Everything that fixes a tournament's games: agents, rules, size, seed. Workers,
    batches and Ray are not here: they change how fast the games are played, never which
    games or their results."""

    agents: tuple[str, ...]
    """Agent specs (`csl_ai.candylab.players.make_agent`), one per competitor."""
    rules: CandyLabRules
    games: int
    """Games asked for; `total_games` is this rounded up to whole deals."""
    seed: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))
        for spec in self.agents:
            parse_spec(spec)
        lineup(self.agents, self.rules.players)
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise DuplicateError(f"games: must be a positive integer, got {self.games!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise DuplicateError(f"seed: must be a non-negative integer, got {self.seed!r}")

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def labels(self) -> tuple[str, ...]:
        """The agents' names in records and standings: the spec, ``#k`` added to repeats."""
        return agent_labels(self.agents)

    @property
    def deals(self) -> int:
        return deal_count(self.players, self.games)

    @property
    def total_games(self) -> int:
        return self.deals * self.players

    def job(self, job_id: int) -> Job:
        return job_for(self.agents, self.players, job_id)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored as a run's tournament.json."""
        return {
            "format": CONFIG_FORMAT,
            "version": CONFIG_VERSION,
            "game": "candy-lab",
            "agents": list(self.agents),
            "labels": list(self.labels),
            "games": self.games,
            "seed": self.seed,
            "deals": self.deals,
            "total_games": self.total_games,
            "rules": self.rules.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "tournament.json") -> DuplicateConfig:
        """Read the JSON form back; DuplicateError names the field."""
        if not isinstance(data, Mapping):
            raise DuplicateError(f"{path}: must be an object")
        if data.get("format") != CONFIG_FORMAT:
            raise DuplicateError(
                f"{path}.format: expected {CONFIG_FORMAT!r}, got {data.get('format')!r}"
            )
        if data.get("version") != CONFIG_VERSION:
            raise DuplicateError(
                f"{path}.version: expected {CONFIG_VERSION}, got {data.get('version')!r}"
            )
        for key in ("agents", "games", "seed", "rules"):
            if key not in data:
                raise DuplicateError(f"{path}.{key}: missing")
        agents = data["agents"]
        if not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
            raise DuplicateError(f"{path}.agents: must be a list of specs")
        try:
            rules = CandyLabRules.from_dict(data["rules"], f"{path}.rules")
        except CslError as e:
            raise DuplicateError(str(e)) from None
        return cls(agents=tuple(agents), rules=rules, games=data["games"], seed=data["seed"])


@dataclass(frozen=True)
class Outcome:
    job: Job
    shares: tuple[float, ...]
    """Each seat's share of the win."""
    record: dict[str, Any]
    """The game's ``candylab-record``; its meta says which job of which tournament."""
    seconds: float


def shares_of(winners: Sequence[int], players: int) -> tuple[float, ...]:
    """Each seat's share of the win: 1/k for each of k winners, else 0."""
    return tuple(1 / len(winners) if s in winners else 0.0 for s in range(players))


def play_job(
    agents: Sequence[str],
    rules: CandyLabRules,
    seed: int,
    job: Job,
    factory: AgentFactory | None = None,
) -> Outcome:
    """Play one game; the deal's seed and each seat's agent seed come from seed."""
    make = factory if factory is not None else make_agent
    start = time.perf_counter()
    game = Game(rules, seed=deal_seed(seed, rules.players, job.deal))
    seeds = [agent_seed(seed, job, s) for s in range(rules.players)]
    seated = [make(agents[a], seeds[s]) for s, a in enumerate(job.seats)]
    while not game.is_over:
        seat = game.current
        game.play(seated[seat].act(game.observation(seat)))
    labels = agent_labels(agents)
    record = game_to_record(
        game,
        agents=[labels[a] for a in job.seats],
        meta={
            "tournament_seed": seed,
            "job": job.id,
            "deal": job.deal,
            "rotation": job.rotation,
            "agent_seeds": seeds,
        },
    )
    shares = shares_of(game.winners(), rules.players)
    return Outcome(job, shares, record, time.perf_counter() - start)


def play_batch(
    config: DuplicateConfig, job_ids: Iterable[int], factory: AgentFactory | None = None
) -> list[Outcome]:
    """Play the given jobs in order: the unit of work a worker runs (a Ray task)."""
    return [
        play_job(config.agents, config.rules, config.seed, config.job(i), factory) for i in job_ids
    ]


def run(
    agents: Sequence[str],
    rules: CandyLabRules,
    games: int,
    seed: int,
    progress: Callable[[Outcome, int, int], None] | None = None,
) -> list[Outcome]:
    """Play the whole schedule in this process, in job order: the reference run."""
    config = DuplicateConfig(tuple(agents), rules, games, seed)
    out: list[Outcome] = []
    for i in range(config.total_games):
        out.extend(play_batch(config, [i]))
        if progress is not None:
            progress(out[-1], len(out), config.total_games)
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
    they do, no interval under `MIN_INTERVAL_DEALS` deals. The same figures whatever
    order the outcomes come in (games finish in any order on Ray)."""
    outcomes = sorted(outcomes, key=lambda o: o.job.id)
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


__all__ = [
    "AgentFactory",
    "DuplicateConfig",
    "DuplicateError",
    "Job",
    "Outcome",
    "Standing",
    "agent_seed",
    "deal_seed",
    "job_for",
    "lineup",
    "play_batch",
    "play_job",
    "run",
    "schedule",
    "shares_of",
    "standings",
]
