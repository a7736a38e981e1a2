"""The learned value of later rounds fitted on a league of players (issue 36), on the harness.

The value (csl_ai.value) judges the rounds after the one a playout ends in. Fitted to the
heuristic's family alone, it reads every table as one of that family; fitted on a league
it reads tallies as a population of different players makes them end. The league is the
population that costs no search: the tuning bots, the zoo's star hunter, style bots
(csl_ai/style.py: the default and random knobs, drawn twice as often) and every saved
exploiter, each seat drawn for each game, every game on sides and a star option drawn
from all 32 scorings. At the start of each round after the first every
seat's value features are kept with the seats' final win shares and points, and one
softmax (and one points line) is fitted per rounds left on the first 80% of the games;
the last 20% are held out for the figures.

Games are played by `play_batches` (Ray, or this process with ``workers=0``), each from
its own seed, and put back in order, so a run's weights depend only on its config.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from csl_ai.agents import AgentSpecError, make_agent
from csl_ai.game import Game
from csl_ai.rules import RulesConfig, drawn_rules
from csl_ai.search.fitted import FittedModels
from csl_ai.style import STYLE_SPACE, saved_styles, style_spec
from csl_ai.tournament.harness import BatchTask, RunOptions, play_batches
from csl_ai.tournament.runner import TournamentError
from csl_ai.value import boundary_features, fit_points, fit_value, log_loss

RANDOM_STYLE: Final = "style:random"
"""A seat token: a style bot with knobs drawn uniformly from STYLE_SPACE for each game."""

LEAGUE: Final = (
    "heuristic", "zoo:cautious", "zoo:stars", "style", RANDOM_STYLE, RANDOM_STYLE,
    *(f"style:{name}" for name in saved_styles()),
)
"""The league that costs no search; zoo:leopards, zoo:trumps and zoo:bettor stay held out.
No random players: with them the value read sensible tables worse (three heuristics on
all 32 scorings −3.9 points paired against −0.6 without; docs/tuning.md)."""

HELD_OUT_SHARE: Final = 0.2

BoundaryRow = tuple[int, np.ndarray, np.ndarray, np.ndarray]
"""(rounds left, every seat's value features (seats, F), final win shares, final points)."""


def seat_spec(token: str, rng: random.Random) -> str:
    """The agent spec of a seat token (RANDOM_STYLE draws a style's knobs from rng)."""
    if token != RANDOM_STYLE:
        return token
    return style_spec({name: rng.uniform(low, high) for name, (low, high) in STYLE_SPACE.items()})


def check_seats(seats: Sequence[str]) -> None:
    """TournamentError (one line) unless every seat token makes an agent."""
    if not seats:
        raise TournamentError("seats: give at least one agent spec")
    for token in seats:
        try:
            make_agent(seat_spec(token, random.Random(0)), 0)
        except AgentSpecError as error:
            raise TournamentError(f"seats: {error}") from None


def game_seed(seed: int, players: int, game: int) -> int:
    """The seed of one league game (the scheme of benchmarks/fit_value_model.py's fits)."""
    return seed * 10_000_000 + players * 1_000_000 + game


def league_game(players: int, seed: int, seats: Sequence[str], all_sides: bool) -> list[BoundaryRow]:
    """One game, each seat drawn from seats, the sides drawn from all 32 scorings when
    all_sides (else for every other seed): the rows of each later round's start."""
    rng = random.Random(seed)
    rules = drawn_rules(players, rng) if all_sides or seed % 2 else RulesConfig(players=players)
    game = Game(rules, seed=seed)
    agents = [make_agent(seat_spec(rng.choice(seats), rng), rng.getrandbits(62)) for _ in range(players)]
    rows: list[tuple[int, np.ndarray]] = []
    seen = 0
    while not game.is_over:
        if game.round != seen:
            seen = game.round
            rows.append((game.core.n_rounds - seen, boundary_features(game.core)))
        seat = game.to_move
        game.apply(agents[seat].act(game.observation(seat)), seat)
    result = game.result()
    shares = np.array([result.win_share(s) for s in range(players)])
    points = np.array([float(line.total) for line in result.scores])
    return [(left, f, shares, points) for left, f in rows]


@dataclass(frozen=True)
class ValueTrainConfig:
    """What fixes a league fit's weights."""

    players: tuple[int, ...] = (4,)
    games: int = 12_000
    """League games per player count."""
    seed: int = 1
    seats: tuple[str, ...] = LEAGUE
    all_sides: bool = True
    l2: float = 1e-3

    def __post_init__(self) -> None:
        if not self.players or any(p not in (2, 3, 4, 5) for p in self.players):
            raise TournamentError(f"players: each must be 2..5, got {list(self.players)!r}")
        if len(set(self.players)) != len(self.players):
            raise TournamentError(f"players: each count once, got {list(self.players)!r}")
        if isinstance(self.games, bool) or not isinstance(self.games, int) or not 10 <= self.games <= 1_000_000:
            raise TournamentError(f"games: must be an integer 10..1000000, got {self.games!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 10**9:
            raise TournamentError(f"seed: must be an integer 0..999999999, got {self.seed!r}")


@dataclass(frozen=True)
class RoundsLeftFit:
    """The fit of one player count and rounds left, with its held-out figures (nats a
    game of the win shares' cross-entropy; the shipped value's on the same games)."""

    players: int
    rounds_left: int
    fitted: int
    held_out: int
    uniform_nats: float
    shipped_nats: float
    nats: float
    weights: tuple[float, ...]
    points_weights: tuple[float, ...]


def _play_jobs(payload: tuple[int, int, tuple[str, ...], bool], jobs: Sequence[int]) -> list[tuple[int, list[BoundaryRow]]]:
    """The harness's task: the league games of jobs (game indices)."""
    players, seed, seats, all_sides = payload
    return [(g, league_game(players, game_seed(seed, players, g), seats, all_sides)) for g in jobs]


def play_league(
    config: ValueTrainConfig,
    players: int,
    options: RunOptions = RunOptions(),
    say: Callable[[str], None] = lambda _text: None,
) -> list[list[BoundaryRow]]:
    """The config's league games at players, in game order, wherever options say."""
    games: list[list[BoundaryRow] | None] = [None] * config.games

    def keep(done: list[tuple[int, list[BoundaryRow]]]) -> None:
        for g, rows in done:
            games[g] = rows

    task = BatchTask(_play_jobs, (players, config.seed, tuple(config.seats), config.all_sides))
    play_batches(task, range(config.games), options, keep, lambda: None, say)
    missing = [g for g, rows in enumerate(games) if rows is None]
    if missing:
        raise TournamentError(f"the league lost {len(missing)} games (first: {missing[0]})")
    return [rows for rows in games if rows is not None]


def fit_league_rows(games: Sequence[Sequence[BoundaryRow]], players: int, l2: float) -> list[RoundsLeftFit]:
    """One fit per rounds left on the first games, figures on the held-out last ones."""
    shipped = FittedModels.shipped().value_weights[players - 2]
    held = int(len(games) * (1.0 - HELD_OUT_SHARE))
    parts: dict[int, dict[str, list[BoundaryRow]]] = {}
    for index, rows in enumerate(games):
        for row in rows:
            parts.setdefault(row[0], {"fit": [], "test": []})["fit" if index < held else "test"].append(row)
    fits = []
    for left in sorted(parts):
        fit_rows, test_rows = parts[left]["fit"], parts[left]["test"]
        if not fit_rows or not test_rows:
            raise TournamentError(f"too few games to fit {players} players with {left} rounds left: play more")
        fit_f, fit_y, fit_p = (np.stack(column) for column in list(zip(*fit_rows))[1:])
        test_f, test_y = (np.stack(column) for column in list(zip(*test_rows))[1:3])
        w = fit_value(fit_f, fit_y, l2)
        pw = fit_points(fit_f, fit_p, l2)
        fits.append(RoundsLeftFit(
            players, left, len(fit_rows), len(test_rows), float(np.log(players)),
            log_loss(test_f, test_y, np.asarray(shipped[left - 1])), log_loss(test_f, test_y, w),
            tuple(round(float(x), 4) for x in w), tuple(round(float(x), 3) for x in pw),
        ))  # fmt: skip
    return fits


def train_value(
    config: ValueTrainConfig,
    out: str | os.PathLike[str],
    made_by: str,
    options: RunOptions = RunOptions(),
    on_fit: Callable[[RoundsLeftFit], None] | None = None,
    say: Callable[[str], None] = lambda _text: None,
) -> FittedModels:
    """Play and fit the league at each of config's player counts, and write the shipped
    models with those counts' value rows replaced into the new folder out (as
    csl_ai/data: usable with `--fitted`, or copied over the shipped value_model.json)."""
    check_seats(config.seats)
    root = Path(out)
    if root.exists():
        raise TournamentError(f"out: {str(root)!r} already exists; choose a new folder")
    value: list[list[tuple[float, ...]] | None] = [None] * 4
    points: list[list[tuple[float, ...]] | None] = [None] * 4
    for players in config.players:
        fits = fit_league_rows(play_league(config, players, options, say), players, config.l2)
        for fit in fits:
            if on_fit is not None:
                on_fit(fit)
        value[players - 2] = [fit.weights for fit in fits]
        points[players - 2] = [fit.points_weights for fit in fits]
    shipped = FittedModels.shipped()
    if set(config.players) != {2, 3, 4, 5}:
        kept = ", ".join(str(p) for p in (2, 3, 4, 5) if p not in config.players)
        made_by = f"{made_by}; {kept} players as shipped: {shipped.made_by.get('value', '')}"
    models = shipped.refit("value", made_by, list(config.players), value_weights=value, value_points_weights=points)
    models.save(root)
    return models
