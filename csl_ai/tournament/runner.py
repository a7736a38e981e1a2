"""Plays a tournament's games: the duplicate-deal schedule, the seeds, one batch at a time.

Pure and deterministic — no Ray, no files — so the Ray harness, a plain loop and the
tests all play exactly the same games.

Schedule (duplicate deals). A tournament of A agents at P-player tables plays D deals;
each deal is one game seed (the sky order and every round's hands) replayed once per
*rotation*. The deal's *table* is a list of L = min(A, P) distinct agents and rotation r
puts ``table[(seat + r) % L]`` in each seat, for r = 0..L-1:

- A = P: every agent plays every seat of every deal exactly once.
- A < P: agents repeat round-robin around the table (A=2, P=4: 0 1 0 1 then 1 0 1 0);
  each agent still plays every seat of every deal exactly once.
- A > P: the table is a subset of P agents. Agents are shuffled once per *block* of A
  consecutive deals and deal k of a block takes the P agents at positions
  ``k*P .. k*P+P-1 (mod A)`` of that order, so over a complete block every agent sits
  at exactly P deals, and so plays every seat equally often. ``--games`` is rounded up
  to whole blocks so every agent plays as often as every other.

The table's order is shuffled per deal (per block for A > P) so that who sits after
whom also averages out. ``--games`` is rounded up to whole deals.

Seeds: every seed is derived from the tournament seed by hashing, the deal seed from
(seed, deal) and each agent's from (seed, job id, seat), so any game can be replayed
alone, in any batch, on any worker, with the same result.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from csl_ai.agents import Agent, make_agent, play_game
from csl_ai.errors import CslError, short_repr
from csl_ai.game import Game
from csl_ai.records import game_to_record
from csl_ai.rules import RulesConfig
from csl_ai.seeds import derive_seed
from csl_ai.tournament.selfplay import DecisionRecorder, training_rows

FORMAT: Final = 1
"""Version of the tournament.json and games.jsonl layouts."""

Mode = Literal["tournament", "selfplay"]
AgentFactory = Callable[[str, int], Agent]
"""Builds an agent from its spec and seed (``csl_ai.agents.make_agent`` by default)."""


class TournamentError(CslError):
    """A tournament that cannot be set up or resumed as asked (bad options or files)."""


class TournamentRunError(RuntimeError):
    """A tournament that could not run to the end: Ray unreachable, workers dying, a game failing.

    Games finished before the failure are kept; ``--resume`` continues from them.
    """


def agent_labels(specs: Sequence[str]) -> tuple[str, ...]:
    """Names for the agents in reports: the spec, with ``#k`` added to repeated specs."""
    labels = []
    for i, spec in enumerate(specs):
        if specs.count(spec) > 1:
            labels.append(f"{spec}#{specs[: i + 1].count(spec)}")
        else:
            labels.append(spec)
    return tuple(labels)


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that fixes a tournament's games: agents, rules, size, seed.

    Workers, batch size and the Ray address are not here: they change how fast the
    games are played, never which games or their results.
    """

    agents: tuple[str, ...]
    """Agent specs (``csl_ai.agents.make_agent``), one per competitor."""
    rules: RulesConfig
    games: int
    """Games asked for; ``total_games`` is this rounded up to whole deals (and blocks)."""
    seed: int
    mode: Mode = "tournament"
    training_rows: bool = False
    """Self-play only: also record one training row per decision."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "agents", tuple(self.agents))
        if not self.agents or not all(isinstance(a, str) and a.strip() for a in self.agents):
            raise TournamentError(f"agents: need at least one agent spec, got {self.agents!r}")
        if self.mode not in ("tournament", "selfplay"):
            raise TournamentError(f"mode: must be 'tournament' or 'selfplay', got {self.mode!r}")
        if self.mode == "tournament" and len(self.agents) < 2:
            raise TournamentError(f"agents: a tournament needs at least 2 agents, got {self.agents!r}")
        if self.mode == "selfplay" and len(self.agents) != 1:
            raise TournamentError(f"agents: self-play takes exactly one agent spec, got {self.agents!r}")
        if isinstance(self.games, bool) or not isinstance(self.games, int) or self.games < 1:
            raise TournamentError(f"games: must be a positive integer, got {self.games!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise TournamentError(f"seed: must be a non-negative integer, got {self.seed!r}")

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def labels(self) -> tuple[str, ...]:
        return agent_labels(self.agents)

    @property
    def rotations(self) -> int:
        """Games per deal: the table size min(agents, players)."""
        return min(len(self.agents), self.players)

    @property
    def deals(self) -> int:
        deals = math.ceil(self.games / self.rotations)
        n_agents = len(self.agents)
        if n_agents > self.players:
            deals = math.ceil(deals / n_agents) * n_agents
        return deals

    @property
    def total_games(self) -> int:
        return self.deals * self.rotations

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored as tournament.json."""
        return {
            "format": FORMAT,
            "mode": self.mode,
            "agents": list(self.agents),
            "labels": list(self.labels),
            "games": self.games,
            "seed": self.seed,
            "training_rows": self.training_rows,
            "deals": self.deals,
            "rotations": self.rotations,
            "total_games": self.total_games,
            "rules": self.rules.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: object, path: str = "tournament.json") -> TournamentConfig:
        """Read the JSON form back; errors name the field."""
        if not isinstance(data, Mapping):
            raise TournamentError(f"{path}: must be an object, got {data!r}")
        if data.get("format") != FORMAT:
            raise TournamentError(f"{path}.format: expected {FORMAT}, got {data.get('format')!r}")
        for key in ("agents", "games", "seed", "rules"):
            if key not in data:
                raise TournamentError(f"{path}.{key}: missing")
        agents = data["agents"]
        if not isinstance(agents, list):
            raise TournamentError(f"{path}.agents: must be a list of specs, got {agents!r}")
        config = cls(
            agents=tuple(agents),
            rules=RulesConfig.from_dict(data["rules"], f"{path}.rules"),
            games=data["games"],
            seed=data["seed"],
            mode=data.get("mode", "tournament"),
            training_rows=bool(data.get("training_rows", False)),
        )
        return config


def check_agents(config: TournamentConfig, factory: AgentFactory | None = None) -> None:
    """Build each agent once, so a bad spec fails before any game (AgentSpecError)."""
    make = factory if factory is not None else make_agent
    for spec in config.agents:
        make(spec, 0)


@dataclass(frozen=True)
class Job:
    """One game of the schedule: a deal, a rotation, and the agent in each seat."""

    id: int
    """deal * rotations + rotation: the key that resume and dedupe go by."""
    deal: int
    rotation: int
    seats: tuple[int, ...]
    """Index into config.agents for each seat."""


def deal_table(config: TournamentConfig, deal: int) -> tuple[int, ...]:
    """The deal's table: the L = min(agents, players) agents it seats, in order (see module doc)."""
    n_agents, players = len(config.agents), config.players
    order = list(range(n_agents))
    if n_agents <= players:
        random.Random(derive_seed(config.seed, "table", deal)).shuffle(order)
        return tuple(order)
    block, k = divmod(deal, n_agents)
    random.Random(derive_seed(config.seed, "block", block)).shuffle(order)
    return tuple(order[(k * players + i) % n_agents] for i in range(players))


def job_for(config: TournamentConfig, job_id: int) -> Job:
    """The job with that id; TournamentError if it is not in the schedule."""
    if isinstance(job_id, bool) or not isinstance(job_id, int) or not 0 <= job_id < config.total_games:
        raise TournamentError(f"job {job_id!r} is not in this tournament (0..{config.total_games - 1})")
    deal, rotation = divmod(job_id, config.rotations)
    table = deal_table(config, deal)
    size = len(table)
    seats = tuple(table[(s + rotation) % size] for s in range(config.players))
    return Job(id=job_id, deal=deal, rotation=rotation, seats=seats)


def schedule(config: TournamentConfig) -> list[Job]:
    """Every job of the tournament, in id order."""
    return [job_for(config, i) for i in range(config.total_games)]


def deal_seed(config: TournamentConfig, deal: int) -> int:
    """The game seed of a deal: the same sky order and hands in every rotation."""
    return derive_seed(config.seed, "deal", deal)


def agent_seed(config: TournamentConfig, job_id: int, seat: int) -> int:
    return derive_seed(config.seed, "agent", job_id, seat)


@dataclass(frozen=True)
class GameOutcome:
    """What the statistics need from one finished game, seat by seat."""

    job: int
    deal: int
    rotation: int
    seats: tuple[int, ...]
    """Agent index per seat."""
    totals: tuple[int, ...]
    """Final points per seat."""
    win_shares: tuple[float, ...]
    """1 for a sole win, 1/k for a win shared by k, else 0."""
    ranks: tuple[int, ...]
    """1 = best; seats level on every tie-break (winners included) share a rank."""

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "deal": self.deal,
            "rotation": self.rotation,
            "seats": list(self.seats),
            "totals": list(self.totals),
            "win_shares": list(self.win_shares),
            "ranks": list(self.ranks),
        }

    @classmethod
    def from_json(cls, data: object, config: TournamentConfig, where: str) -> GameOutcome:
        """Read a games.jsonl line and check it against the config: the job's place in the
        schedule, then every field that fixes its game (``check_manifest``); errors start
        with where."""
        if not isinstance(data, Mapping):
            raise TournamentError(f"{where}: must be an object")
        fields: dict[str, Any] = {}
        for key in ("job", "deal", "rotation", "seats", "totals", "win_shares", "ranks"):
            if key not in data:
                raise TournamentError(f"{where}.{key}: missing")
            fields[key] = data[key]
        job_id = fields["job"]
        if isinstance(job_id, bool) or not isinstance(job_id, int) or not 0 <= job_id < config.total_games:
            raise TournamentError(
                f"{where}.job: must be a job id 0..{config.total_games - 1}, got {job_id!r}"
            )
        job = job_for(config, job_id)
        players = config.players
        for key in ("seats", "totals", "win_shares", "ranks"):
            value = fields[key]
            if not isinstance(value, list) or len(value) != players:
                raise TournamentError(f"{where}.{key}: must be a list of {players} numbers")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                raise TournamentError(f"{where}.{key}: must be a list of {players} numbers")
        found = (fields["deal"], fields["rotation"], tuple(fields["seats"]))
        if found != (job.deal, job.rotation, job.seats):
            raise TournamentError(
                f"{where}: job {job.id} does not match this tournament's schedule "
                "(games.jsonl from another tournament?)"
            )
        check_manifest(data, config, job, where)
        return cls(
            job=job.id,
            deal=job.deal,
            rotation=job.rotation,
            seats=job.seats,
            totals=tuple(int(v) for v in fields["totals"]),
            win_shares=tuple(float(v) for v in fields["win_shares"]),
            ranks=tuple(int(v) for v in fields["ranks"]),
        )


@functools.lru_cache(maxsize=8)
def _rules_json(rules: RulesConfig) -> Any:
    """The rules as a games line's record holds them (plain JSON values); built once per
    rules, since every line of a file is checked against them. Never to be modified."""
    return json.loads(json.dumps(rules.to_dict()))


def first_difference(found: object, expected: object, field: str) -> str | None:
    """Where found differs from expected, as ``field.key is X, tournament.json gives Y``;
    None when they are equal. Objects are compared key by key, anything else whole."""
    if isinstance(found, Mapping) and found == expected:
        return None
    if isinstance(found, Mapping) and isinstance(expected, Mapping):
        for key in expected:
            if key not in found:
                return f"{field}.{key} is missing, tournament.json gives {short_repr(expected[key])}"
            difference = first_difference(found[key], expected[key], f"{field}.{key}")
            if difference is not None:
                return difference
        extra = next((key for key in found if key not in expected), None)
        if extra is not None:
            return f"{field}.{short_repr(extra, 40)} is not in tournament.json"
        return None
    if type(found) is bool or type(expected) is bool:
        same = type(found) is type(expected) and found == expected
    else:
        same = found == expected
    if same:
        return None
    return f"{field} is {short_repr(found)}, tournament.json gives {short_repr(expected)}"


def check_manifest(data: Mapping[str, Any], config: TournamentConfig, job: Job, where: str) -> None:
    """Check that a games line is this job of this tournament, field by field: the agent of
    each seat, the rules (sides, options, deck), the deal's and agents' seeds, the mode,
    the job and its place in the schedule, all from the line and the record it carries;
    and that its totals and win shares are the ones its record's result gives.

    A line from another tournament with the same seed and agent count has the same
    schedule of seat indices; only these fields tell it apart. TournamentError names the
    first field that differs.
    """
    record = data.get("record")
    if not isinstance(record, Mapping):
        raise TournamentError(f"{where}.record: missing: every games line carries its game's record")
    meta = record.get("meta")
    if not isinstance(meta, Mapping):
        raise TournamentError(f"{where}.record.meta: missing: the record of a tournament game has one")
    labels = [config.labels[a] for a in job.seats]
    expected: tuple[tuple[str, object, object], ...] = (
        ("agents", data.get("agents"), labels),
        ("record.agents", record.get("agents"), labels),
        ("record.rules", record.get("rules"), _rules_json(config.rules)),
        ("record.meta.mode", meta.get("mode"), config.mode),
        ("record.meta.tournament_seed", meta.get("tournament_seed"), config.seed),
        ("record.meta.job", meta.get("job"), job.id),
        ("record.meta.deal", meta.get("deal"), job.deal),
        ("record.meta.rotation", meta.get("rotation"), job.rotation),
        ("record.seed", record.get("seed"), deal_seed(config, job.deal)),
        (
            "record.meta.agent_seeds",
            meta.get("agent_seeds"),
            [agent_seed(config, job.id, s) for s in range(config.players)],
        ),
    )
    for field_name, found, wanted in expected:
        difference = first_difference(found, wanted, field_name)
        if difference is not None:
            raise TournamentError(
                f"{where}: job {job.id} is not this tournament's: {difference} "
                "(games.jsonl from another tournament?)"
            )
    _check_result(data, record.get("result"), where)


def _check_result(data: Mapping[str, Any], result: object, where: str) -> None:
    """The line's totals and win shares are those of its record's result."""
    scores = result.get("scores") if isinstance(result, Mapping) else None
    winners = result.get("winners") if isinstance(result, Mapping) else None
    if not isinstance(scores, list) or not isinstance(winners, list) or not winners:
        raise TournamentError(f"{where}.record.result: missing: a games line holds a finished game")
    totals = [row.get("total") if isinstance(row, Mapping) else None for row in scores]
    if totals != data.get("totals"):
        raise TournamentError(
            f"{where}: totals {short_repr(data.get('totals'))}, but its record's result gives "
            f"{short_repr(totals)}"
        )
    shares = [1.0 / len(winners) if s in winners else 0.0 for s in range(len(totals))]
    if shares != data.get("win_shares"):
        raise TournamentError(
            f"{where}: win_shares {short_repr(data.get('win_shares'))}, but its record's "
            f"winners {short_repr(winners)} give {short_repr(shares)}"
        )


def outcome_of(game: Game, job: Job) -> GameOutcome:
    """The outcome of a finished game.

    Seats are ordered as the rules order them: points, then fewest sky cards held, then
    most good-weather cards honoured; the winners (including an outright side-B star
    win) always rank first.
    """
    result = game.result()
    core = game.core
    held = [up + down for up, down in zip(core.faceup_cards, core.facedown_cards, strict=True)]
    keys = [
        (s in result.winners, line.total, -held[s], core.good_weather[s])
        for s, line in enumerate(result.scores)
    ]
    ranks = tuple(1 + sum(other > key for other in keys) for key in keys)
    return GameOutcome(
        job=job.id,
        deal=job.deal,
        rotation=job.rotation,
        seats=job.seats,
        totals=tuple(line.total for line in result.scores),
        win_shares=tuple(result.win_share(s) for s in range(game.players)),
        ranks=ranks,
    )


@dataclass(frozen=True)
class FinishedGame:
    """One played job: its outcome, its games.jsonl line, and any training rows (JSON lines)."""

    outcome: GameOutcome
    line: str
    rows: tuple[str, ...] = field(default=())


def play_job(config: TournamentConfig, job: Job, factory: AgentFactory | None = None) -> FinishedGame:
    """Play one job and serialise it; deterministic in (config, job)."""
    make = factory if factory is not None else make_agent
    seeds = [agent_seed(config, job.id, s) for s in range(config.players)]
    agents: list[Agent] = [make(config.agents[a], seeds[s]) for s, a in enumerate(job.seats)]
    recorders = None
    if config.training_rows:
        steps = itertools.count()
        recorders = [DecisionRecorder(agent, steps) for agent in agents]
        agents = list(recorders)
    game = play_game(config.rules, agents, deal_seed(config, job.deal))
    outcome = outcome_of(game, job)
    labels = config.labels
    seat_labels = [labels[a] for a in job.seats]
    meta = {
        "mode": config.mode,
        "tournament_seed": config.seed,
        "job": job.id,
        "deal": job.deal,
        "rotation": job.rotation,
        "agent_seeds": seeds,
    }
    entry = outcome.to_json()
    entry["agents"] = seat_labels
    entry["record"] = game_to_record(game, agents=seat_labels, meta=meta)
    rows: tuple[str, ...] = ()
    if recorders is not None:
        rows = tuple(json.dumps(row, separators=(",", ":")) for row in training_rows(recorders, outcome))
    return FinishedGame(outcome, json.dumps(entry, separators=(",", ":")), rows)


def run_batch(
    config: TournamentConfig, job_ids: Iterable[int], factory: AgentFactory | None = None
) -> list[FinishedGame]:
    """Play the given jobs in order: the unit of work a worker runs."""
    return [play_job(config, job_for(config, i), factory) for i in job_ids]


def run_local(
    config: TournamentConfig,
    job_ids: Iterable[int] | None = None,
    factory: AgentFactory | None = None,
) -> list[GameOutcome]:
    """Play jobs (default: all) in this process, one after another: the reference run."""
    ids = range(config.total_games) if job_ids is None else job_ids
    return [finished.outcome for finished in run_batch(config, ids, factory)]


def batches(job_ids: Sequence[int], size: int) -> list[tuple[int, ...]]:
    """Split job ids into consecutive batches of at most size."""
    if size < 1:
        raise TournamentError(f"batch: must be at least 1, got {size!r}")
    return [tuple(job_ids[i : i + size]) for i in range(0, len(job_ids), size)]
