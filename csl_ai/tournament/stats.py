"""Tournament statistics: per-agent standings with bootstrap intervals, head-to-head, ratings.

Each seat of each game is one observation of the agent sitting there: its win share
(1 for a sole win, 1/k for a win shared by k), its points and its rank (1 = best).
An agent's figure is the mean over its seat-games.

Intervals are 95% percentile bootstraps over *deals*: the games of a deal (its seat
rotations) share their cards, so they are resampled together, which is what makes
duplicate deals cancel luck in the interval too. The ratio of sums is resampled, so
deals where an agent sat more often weigh more, as they do in the point estimate; the
three figures share their resamples.

Head-to-head: when two agents sit at the same game, the one whose seats finished higher
(lower mean rank) wins the pair; equal mean ranks tie. The score is (wins + ties/2) / games.

Rating: openskill's Plackett-Luce model, updated game by game in job order (so the
result does not depend on the order games arrived in), one team per agent ranked by its
mean rank at that game. Left out (None) when openskill is not installed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from rich import box
from rich.table import Table

from csl_ai.tournament.runner import GameOutcome

BOOTSTRAP_RESAMPLES: Final = 2000
CONFIDENCE: Final = 0.95
MIN_INTERVAL_DEALS: Final = 4
"""Fewest deals whose bootstrap intervals the standings print. With 3 or fewer, a 95%
percentile bootstrap over deals is only the range of the deals' own figures (a resample
drawing the same deal every time has a chance of 1/27 or more, over the 2.5% in each
tail): ``(1.000, 1.000)`` after two deals both won says nothing about the next.
summary.json keeps the figures either way, with the count of deals."""
_CHUNK_CELLS: Final = 2_000_000
"""Resamples are drawn in chunks of at most this many (resample, deal) cells."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with its 95% interval."""

    value: float
    low: float
    high: float

    def to_json(self) -> dict[str, float]:
        return {"value": self.value, "low": self.low, "high": self.high}

    def text(self, digits: int = 3) -> str:
        """'0.412 (0.371, 0.455)'."""
        return f"{self.value:.{digits}f} ({self.low:.{digits}f}, {self.high:.{digits}f})"

    def cell(self, digits: int = 3, shown: bool = True) -> str:
        """The value over its interval, two lines: a table cell that never wraps
        mid-interval. Without an interval to show (too few deals: not shown, or none at
        all) the value alone; an interval of no width (every deal gave the same figure)
        says that, as the bootstrap cannot tell more."""
        if not shown or not (math.isfinite(self.low) and math.isfinite(self.high)):
            return f"{self.value:.{digits}f}"
        if self.low == self.high:
            return f"{self.value:.{digits}f}\n(all deals alike)"
        return f"{self.value:.{digits}f}\n({self.low:.{digits}f}, {self.high:.{digits}f})"


@dataclass(frozen=True)
class Rating:
    """A Plackett-Luce rating: mean skill and its standard deviation."""

    mu: float
    sigma: float

    def to_json(self) -> dict[str, float]:
        return {"mu": self.mu, "sigma": self.sigma}


@dataclass(frozen=True)
class Standing:
    """One agent's results over the tournament."""

    label: str
    spec: str
    seat_games: int
    """Seats it played (a game where it held two seats counts twice)."""
    games: int
    """Games it took part in."""
    win_share: Interval
    points: Interval
    rank: Interval
    rating: Rating | None

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "spec": self.spec,
            "seat_games": self.seat_games,
            "games": self.games,
            "win_share": self.win_share.to_json(),
            "points": self.points.to_json(),
            "rank": self.rank.to_json(),
            "rating": self.rating.to_json() if self.rating else None,
        }


@dataclass(frozen=True)
class HeadToHead:
    """How agent did against opponent at the games they shared."""

    agent: str
    opponent: str
    games: int
    wins: int
    losses: int
    ties: int

    @property
    def score(self) -> float:
        return (self.wins + self.ties / 2) / self.games if self.games else float("nan")

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "opponent": self.opponent,
            "games": self.games,
            "wins": self.wins,
            "losses": self.losses,
            "ties": self.ties,
            "score": self.score if self.games else None,
        }


@dataclass(frozen=True)
class Summary:
    """Standings (best win share first), head-to-head and counts."""

    players: int
    games: int
    deals: int
    standings: tuple[Standing, ...]
    head_to_head: tuple[HeadToHead, ...]
    resamples: int

    def to_json(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "games": self.games,
            "deals": self.deals,
            "standings": [s.to_json() for s in self.standings],
            "head_to_head": [h.to_json() for h in self.head_to_head],
            "bootstrap": {"unit": "deal", "resamples": self.resamples, "confidence": CONFIDENCE},
        }

    @property
    def intervals_shown(self) -> bool:
        """Whether the standings print the 95% intervals: enough deals to mean something
        (`MIN_INTERVAL_DEALS`)."""
        return self.deals >= MIN_INTERVAL_DEALS

    def table(self) -> Table:
        """The standings as a rich table (the intervals only from `MIN_INTERVAL_DEALS`
        deals on: `interval_note` says why not)."""
        shown = self.intervals_shown
        intervals = "95% intervals; " if shown else ""
        table = Table(
            title=f"{_count(self.games, 'game')}, {_count(self.deals, 'deal')}, "
            f"{self.players} players ({intervals}rating: Plackett-Luce μ±σ)",
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            show_edge=False,
            collapse_padding=True,
        )
        table.add_column("agent", no_wrap=True)
        for name in ("seats", "win share", "points", "rank", "rating"):
            table.add_column(name, justify="right")
        for s in self.standings:
            rating = f"{s.rating.mu:.1f}±{s.rating.sigma:.1f}" if s.rating else "-"
            table.add_row(
                s.label,
                str(s.seat_games),
                s.win_share.cell(3, shown),
                s.points.cell(1, shown),
                s.rank.cell(2, shown),
                rating,
            )
        return table

    def interval_note(self) -> str | None:
        """Why the standings show no intervals (None when they do): a line for under
        the table."""
        if self.intervals_shown:
            return None
        return (
            f"No 95% intervals: {_count(self.deals, 'deal')} played, and an interval needs "
            f"{MIN_INTERVAL_DEALS} or more (raise --games)"
        )

    def head_to_head_table(self) -> Table:
        """Row agent's head-to-head score against each column agent."""
        labels = [s.label for s in self.standings]
        cells = {(h.agent, h.opponent): h for h in self.head_to_head}
        table = Table(
            title="head-to-head: row's score against column (ties 1/2)", box=box.SIMPLE_HEAD, pad_edge=False
        )
        table.add_column("agent", no_wrap=True)
        for label in labels:
            table.add_column(label, justify="right")
        for row in labels:
            values = []
            for col in labels:
                h = cells.get((row, col))
                values.append("" if row == col or h is None or not h.games else f"{h.score:.3f}")
            table.add_row(row, *values)
        return table


def _count(n: int, noun: str) -> str:
    """``1 deal``, ``4 deals``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _mean_rank_by_agent(outcome: GameOutcome) -> dict[int, float]:
    seats: dict[int, list[int]] = {}
    for agent, rank in zip(outcome.seats, outcome.ranks, strict=True):
        seats.setdefault(agent, []).append(rank)
    return {agent: sum(ranks) / len(ranks) for agent, ranks in seats.items()}


def bootstrap_ratio(
    sums: np.ndarray, counts: np.ndarray, resamples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of sum(sums)/sum(counts) per column, resampling rows.

    sums and counts are (units, columns); returns (low, high) arrays of length columns.
    Each resample is a row of weights (how often each unit was drawn), so a resample's
    sums are one matrix product.
    """
    units, columns = sums.shape
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // max(units, 1))
    ratios = np.empty((resamples, columns))
    done = 0
    while done < resamples:
        n = min(chunk, resamples - done)
        draws = rng.integers(0, units, size=(n, units)) + units * np.arange(n)[:, None]
        weights = np.bincount(draws.ravel(), minlength=n * units).reshape(n, units).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratios[done : done + n] = (weights @ sums) / (weights @ counts)
        done += n
    alpha = (1 - CONFIDENCE) / 2
    with np.errstate(invalid="ignore"):
        low = np.nanquantile(ratios, alpha, axis=0)
        high = np.nanquantile(ratios, 1 - alpha, axis=0)
    return low, high


def rate(n_agents: int, outcomes: Sequence[GameOutcome]) -> list[Rating] | None:
    """Plackett-Luce ratings after every game in job order; None without openskill."""
    try:
        from openskill.models import PlackettLuce
    except ImportError:
        return None
    model = PlackettLuce()
    ratings = [model.rating() for _ in range(n_agents)]
    for outcome in sorted(outcomes, key=lambda o: o.job):
        means = _mean_rank_by_agent(outcome)
        if len(means) < 2:
            continue
        agents = sorted(means)
        updated = model.rate([[ratings[a]] for a in agents], ranks=[means[a] for a in agents])
        for a, team in zip(agents, updated, strict=True):
            ratings[a] = team[0]
    return [Rating(float(r.mu), float(r.sigma)) for r in ratings]


def head_to_head(labels: Sequence[str], outcomes: Sequence[GameOutcome]) -> list[HeadToHead]:
    """Every ordered pair of distinct agents (games = 0 for a pair that never met)."""
    n = len(labels)
    wins = np.zeros((n, n), dtype=np.int64)
    ties = np.zeros((n, n), dtype=np.int64)
    met = np.zeros((n, n), dtype=np.int64)
    for outcome in outcomes:
        means = _mean_rank_by_agent(outcome)
        for a, ra in means.items():
            for b, rb in means.items():
                if a == b:
                    continue
                met[a, b] += 1
                if ra < rb:
                    wins[a, b] += 1
                elif ra == rb:
                    ties[a, b] += 1
    return [
        HeadToHead(
            agent=labels[a],
            opponent=labels[b],
            games=int(met[a, b]),
            wins=int(wins[a, b]),
            losses=int(met[a, b] - wins[a, b] - ties[a, b]),
            ties=int(ties[a, b]),
        )
        for a in range(n)
        for b in range(n)
        if a != b
    ]


def summarize(
    specs: Sequence[str],
    labels: Sequence[str],
    players: int,
    outcomes: Sequence[GameOutcome],
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Summary:
    """Standings, head-to-head and ratings of a set of finished games (any order)."""
    n = len(labels)
    deals = sorted({o.deal for o in outcomes})
    row_of = {deal: i for i, deal in enumerate(deals)}
    shape = (max(len(deals), 1), n)
    shares, points, ranks, counts = (np.zeros(shape) for _ in range(4))
    games = np.zeros(n, dtype=np.int64)
    for o in outcomes:
        row = row_of[o.deal]
        for s, agent in enumerate(o.seats):
            shares[row, agent] += o.win_shares[s]
            points[row, agent] += o.totals[s]
            ranks[row, agent] += o.ranks[s]
            counts[row, agent] += 1
        for agent in set(o.seats):
            games[agent] += 1
    total = counts.sum(axis=0)
    metrics = np.hstack([shares, points, ranks])
    with np.errstate(invalid="ignore", divide="ignore"):
        values = metrics.sum(axis=0) / np.tile(total, 3)
    if outcomes:
        lows, highs = bootstrap_ratio(metrics, np.tile(counts, 3), resamples, seed)
    else:
        lows = highs = np.full(3 * n, np.nan)
    intervals = [
        [Interval(float(values[i]), float(lows[i]), float(highs[i])) for i in range(k * n, (k + 1) * n)]
        for k in range(3)
    ]
    ratings = rate(n, outcomes)
    standings = [
        Standing(
            label=labels[a],
            spec=specs[a],
            seat_games=int(total[a]),
            games=int(games[a]),
            win_share=intervals[0][a],
            points=intervals[1][a],
            rank=intervals[2][a],
            rating=ratings[a] if ratings else None,
        )
        for a in range(n)
    ]
    standings.sort(key=lambda s: (-np.nan_to_num(s.win_share.value, nan=-1.0), s.label))
    return Summary(
        players=players,
        games=len(outcomes),
        deals=len(deals),
        standings=tuple(standings),
        head_to_head=tuple(head_to_head(labels, outcomes)),
        resamples=resamples,
    )


class RunningStandings:
    """Win share per agent as games arrive: the live line of the progress display."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = tuple(labels)
        self._shares = [0.0] * len(labels)
        self._seats = [0] * len(labels)

    def add(self, outcome: GameOutcome) -> None:
        for agent, share in zip(outcome.seats, outcome.win_shares, strict=True):
            self._shares[agent] += share
            self._seats[agent] += 1

    def text(self, limit: int = 6) -> str:
        """'heuristic 0.41 · random 0.12 …', best first."""
        rows = [
            (self._shares[a] / self._seats[a], label)
            for a, label in enumerate(self.labels)
            if self._seats[a]
        ]
        rows.sort(key=lambda r: (-r[0], r[1]))
        return " · ".join(f"{label} {share:.2f}" for share, label in rows[:limit])
