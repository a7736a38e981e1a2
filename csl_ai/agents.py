"""Agents: players behind one interface, ``act(observation) -> move``.

An agent sees only what its seat may see (an `Observation`) and answers with one of the
observation's legal moves. Four kinds:

- `RandomAgent`: uniform among the legal moves (the floor any AI must clear);
- `HeuristicAgent`: a fast rule-based player (hand strength for the allocation, good
  weather with a weak hand, cheap follows); the sparring partner of the benchmarks;
- `PimcAgent`: flat determinized Monte Carlo (perfect-information Monte Carlo) through
  `csl_ai.search` with ``algorithm="pimc"``;
- `IsmctsAgent`: information-set MCTS through `csl_ai.search`, at a named level of
  `LEVELS` or under an explicit iteration or time limit.

`make_agent` builds any of them from a short text spec (``"ismcts:iters=5000,threads=2"``)
and `play_game` plays a whole game between agents. A seeded search agent derives a seed
per decision from its base seed and where the decision falls in the game, so a game
between seeded agents under iteration limits replays identically.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Final, Protocol, runtime_checkable

from csl_ai.errors import CslError, IllegalMoveError
from csl_ai.evaluation import DEFAULT_PARAMS, HeuristicParams
from csl_ai.game import Game, Observation, Phase
from csl_ai.heuristic import HeuristicAgent, no_decision
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import cards_of
from csl_ai.outsiders import OUTSIDER_AGENTS, OUTSIDER_SPECS
from csl_ai.rules import RulesConfig
from csl_ai.search import SearchConfig, SearchLimit, SearchResult, search
from csl_ai.seeds import decision_seed
from csl_ai.style import StyleError, make_style_agent
from csl_ai.zoo import ZOO_AGENTS, ZOO_SPECS


class AgentSpecError(CslError):
    """An agent spec (``"ismcts:iters=5000"``) that names no agent or has a bad option."""


@runtime_checkable
class Agent(Protocol):
    """A player: a name for tables and records, and a move for each observation."""

    name: str

    def act(self, obs: Observation) -> Move:
        """One of ``obs.legal_moves()`` for the observing seat."""
        ...


AGENT_KINDS: Final[tuple[str, ...]] = ("random", "heuristic", "pimc", "ismcts", "style")
"""The agent names `make_agent` understands, in the order error messages list them."""

LEVELS: Final[Mapping[str, int]] = {"fast": 1_000, "normal": 10_000, "strong": 50_000}
"""Each named level's budget, in iterations of the search that played every later round
out (the levels' iterations before the learned value); a level searches as many
iterations of today's search as take that time (`level_iterations`)."""

LEVEL_SCALE: Final[Mapping[int, float]] = {2: 4.0, 3: 3.6, 4: 4.4, 5: 3.1}
"""Per player count: iterations of the default search per iteration of a level's budget,
so that a level keeps its time per decision as the search gets faster: at or under the
process CPU a searched decision at `normal` took the frozen build of issue 40 (scales 1.4,
1.35, 1.5, 1.4), `python benchmarks/level_time.py` under both builds on one quiet host
(docs/benchmarks.md, twenty-fourth and twenty-seventh sessions). A level stops a search
once its move is settled (`level_limit`) and searches equal cards as one, which leaves
61-72% of a budget searched on average (allocations in full, so less of the CPU is
saved): the scales are 1.28-1.35 times the full budgets' (2.6, 2.7, 2.8, 2.5), at or under
their CPU a decision on average (twenty-eighth session). At 4 players the mixture pools'
reuse and selection's side-by-side children then made a decision 0.85 of the time: 3.6 ->
4.2 (twenty-ninth session). An allocation's Python around the search then cost ~18 ms
where it cost ~43 (4 players): decisions 0.93 of the time at 4 players, 0.85 at 2, so
4.2 -> 4.5 and 3.5 -> 4.0 (thirtieth session). The league's value reads the split features
at 4 players, about 4% of a decision: 4.5 -> 4.4 (thirty-first session). The split mixture
in the tree at 5 players costs about 3% of a decision there: 3.2 -> 3.1 (thirty-sixth session)."""

DEFAULT_LEVEL: Final = "normal"
"""The level of a bare ``"ismcts"`` spec."""


def _check_level(level: str) -> None:
    if level not in LEVELS:
        raise AgentSpecError(f"unknown level {level!r} (expected {', '.join(LEVELS)})")


def level_iterations(level: str, players: int) -> int:
    """The iterations per decision of a named level in a game of this many players."""
    _check_level(level)
    if players not in LEVEL_SCALE:
        raise AgentSpecError(f"no level budget for {players!r} players (expected 2..5)")
    return round(LEVELS[level] * LEVEL_SCALE[players])


def level_limit(level: str, players: int, seed: int | None = None, threads: int = 1) -> SearchLimit:
    """The search budget of a named level at a player count: the one notion of strength
    that the AI seats, the hint, `csl analyze` and `csl best-move` share (settings:
    `SearchConfig()`)."""
    return SearchLimit(iterations=level_iterations(level, players), threads=threads, seed=seed, stop_when_settled=True)


def level_range_text(level: str) -> str:
    """A level's iterations in words, the fewest to the most at any player count."""
    low = min(level_iterations(level, n) for n in LEVEL_SCALE)
    high = max(level_iterations(level, n) for n in LEVEL_SCALE)
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"

DEFAULT_PIMC_ITERATIONS: Final = 10_000
"""Determinized playouts per decision of a bare ``"pimc"`` spec."""

PIMC_CONFIG: Final = SearchConfig(algorithm="pimc")
"""The search configuration of `PimcAgent`."""


# --- random -------------------------------------------------------------------------------


class RandomAgent:
    """Uniform among the legal moves.

    An allocation is drawn by shuffling the hand and cutting it into the group sizes,
    which is uniform over the legal allocations without building all 1680 of them.
    """

    name: str = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> Move:
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            cards = cards_of(obs.hand)
            self._rng.shuffle(cards)
            piles = []
            start = 0
            for size in obs.rules.spec.group_sizes:
                piles.append(sum([1 << card for card in cards[start : start + size]]))
                start += size
            return Allocate.trusted(tuple(piles))
        decided = (phase is Phase.ALLOCATE) or (
            phase is Phase.WEATHER and obs.current.declarations[obs.seat] is not None
        )
        moves = [] if decided else obs.legal_moves()
        if not moves:
            raise no_decision(self.name, obs)
        return self._rng.choice(moves)


# --- search agents ----------------------------------------------------------------------------


def _limit_spec(kind: str, iterations: int | None, time_ms: float | None, threads: int) -> str:
    """The make_agent spec for a search agent with these limits."""
    options = []
    if iterations is not None:
        options.append(f"iters={iterations}")
    if time_ms is not None:
        options.append(f"ms={_number_text(time_ms)}")
    if threads != 1:
        options.append(f"threads={threads}")
    return f"{kind}:{','.join(options)}" if options else kind


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class PimcAgent:
    """Flat determinized Monte Carlo: `search` with ``algorithm="pimc"``.

    Each decision samples worlds consistent with the observation, plays each candidate
    out in them, and picks the best average; with a seed, every decision gets its own
    seed from `decision_seed`. Bad limits raise the search's SearchSettingsError.
    """

    def __init__(
        self,
        iterations: int | None = DEFAULT_PIMC_ITERATIONS,
        seed: int | None = None,
        *,
        time_ms: float | None = None,
        threads: int = 1,
    ) -> None:
        self.limit = SearchLimit(iterations=iterations, time_ms=time_ms, threads=threads, seed=seed)
        self.name = _limit_spec("pimc", iterations, time_ms, threads)
        self.last_result: SearchResult | None = None

    def act(self, obs: Observation) -> Move:
        limit = self.limit
        if limit.seed is not None:
            limit = replace(limit, seed=decision_seed(limit.seed, obs))
        result = search(obs, limit, PIMC_CONFIG)
        self.last_result = result
        return result.best_move


class IsmctsAgent:
    """Information-set MCTS through `csl_ai.search` under a SearchLimit.

    ``limit.seed`` is the base seed: each decision searches with `decision_seed` of it,
    so a seeded agent under an iteration limit plays the same game every time.
    """

    def __init__(
        self, limit: SearchLimit, config: SearchConfig | None = None, *, name: str | None = None
    ) -> None:
        self.limit = limit
        self.config = config if config is not None else SearchConfig()
        self.name = name or _limit_spec("ismcts", limit.iterations, limit.time_ms, limit.threads)
        self.last_result: SearchResult | None = None
        self.level: str | None = None
        """The named level the agent plays at, if any (`at_level`)."""

    @classmethod
    def at_level(cls, level: str, seed: int | None = None, threads: int = 1) -> IsmctsAgent:
        """The agent of a named level (`LEVELS`): its iterations follow the game's player
        count (`level_iterations`); ``limit`` holds the level's base budget (`LEVELS`)."""
        _check_level(level)
        limit = SearchLimit(iterations=LEVELS[level], threads=threads, seed=seed, stop_when_settled=True)
        name = f"ismcts:{level}" + (f",threads={threads}" if threads != 1 else "")
        agent = cls(limit, name=name)
        agent.level = level
        return agent

    def limit_for(self, players: int) -> SearchLimit:
        """The budget of a decision in a game of this many players."""
        if self.level is None:
            return self.limit
        return replace(self.limit, iterations=level_iterations(self.level, players))

    def act(self, obs: Observation) -> Move:
        limit = self.limit_for(obs.rules.players)
        if limit.seed is not None:
            limit = replace(limit, seed=decision_seed(limit.seed, obs))
        result = search(obs, limit, self.config)
        self.last_result = result
        return result.best_move


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- specs ------------------------------------------------------------------------------------

_OPTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "random": (),
    "heuristic": (),
    "pimc": ("iters", "ms", "threads"),
    "ismcts": ("iters", "ms", "threads", *LEVELS),
}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent a spec names: ``random``, ``heuristic``, ``pimc[:iters=N]``,
    ``ismcts[:fast|normal|strong|iters=N|ms=N]`` with options joined by commas
    (``ismcts:iters=5000,threads=2``), a zoo bot of `csl_ai.zoo` (``zoo:cautious``,
    `ZOO_SPECS`), a style bot of `csl_ai.style` (``style``, ``style:NAME``,
    ``style:stars=2,deny=1``) or an outsider of `csl_ai.outsiders` (``outsider:counter``,
    `OUTSIDER_SPECS`); AgentSpecError on anything else."""
    if not isinstance(spec, str):
        raise AgentSpecError(f"agent spec must be text like 'ismcts:fast', got {spec!r}")
    kind, colon, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind == "style":
        try:
            return make_style_agent(rest, seed)
        except StyleError as e:
            raise AgentSpecError(f"bad agent spec {spec!r}: {e}") from None
    if kind == "zoo":
        name = rest.strip().lower()
        if name not in ZOO_AGENTS:
            raise AgentSpecError(f"unknown zoo bot {spec!r} (expected {', '.join(ZOO_SPECS)})")
        return ZOO_AGENTS[name](seed)
    if kind == "outsider":
        name = rest.strip().lower()
        if name not in OUTSIDER_AGENTS:
            raise AgentSpecError(f"unknown outsider {spec!r} (expected {', '.join(OUTSIDER_SPECS)})")
        return OUTSIDER_AGENTS[name](seed)
    if kind not in _OPTIONS:
        raise AgentSpecError(
            f"unknown agent {kind!r} (expected {', '.join(AGENT_KINDS)}), "
            f"a zoo bot ({', '.join(ZOO_SPECS)}) or an outsider ({', '.join(OUTSIDER_SPECS)})"
        )
    values = _parse_options(spec, kind, rest) if colon else {}
    if kind == "random":
        return RandomAgent(seed)
    if kind == "heuristic":
        return HeuristicAgent(seed)
    iterations = values.get("iters")
    time_ms = values.get("ms")
    threads = int(values.get("threads", 1))
    level = next((name for name in LEVELS if name in values), None)
    try:
        if kind == "pimc":
            if iterations is None and time_ms is None:
                iterations = DEFAULT_PIMC_ITERATIONS
            return PimcAgent(
                None if iterations is None else int(iterations),
                seed,
                time_ms=time_ms,
                threads=threads,
            )
        if iterations is None and time_ms is None:
            return IsmctsAgent.at_level(level or DEFAULT_LEVEL, seed, threads)
        limit = SearchLimit(
            iterations=None if iterations is None else int(iterations),
            time_ms=time_ms,
            threads=threads,
            seed=seed,
        )
        return IsmctsAgent(limit)
    except AgentSpecError:
        raise
    except CslError as e:
        raise AgentSpecError(f"bad agent spec {spec!r}: {e}") from None


def _parse_options(spec: str, kind: str, text: str) -> dict[str, float]:
    """Options after the colon as {name: value}; a level name maps to 1."""
    allowed = _OPTIONS[kind]
    values: dict[str, float] = {}
    items = [item.strip() for item in text.split(",")]
    for item in items:
        bad = f"bad option {item!r} in {spec!r}"
        if not allowed:
            raise AgentSpecError(f"{bad}: {kind} takes no options")
        name, eq, raw = (part.strip() for part in item.partition("="))
        name = name.lower()
        if name in LEVELS and name in allowed and not eq:
            if any(level in values for level in LEVELS) or "iters" in values or "ms" in values:
                raise AgentSpecError(f"{bad}: give one level, or iters/ms, not both")
            values[name] = 1
            continue
        if name not in allowed or name in LEVELS or not eq:
            raise AgentSpecError(f"{bad}: expected {_expected(kind)}")
        if name in values:
            raise AgentSpecError(f"{bad}: {name} given twice")
        if name in ("iters", "ms") and any(level in values for level in LEVELS):
            raise AgentSpecError(f"{bad}: give one level, or iters/ms, not both")
        values[name] = _option_value(name, raw, bad)
    return values


def _expected(kind: str) -> str:
    if kind == "pimc":
        return "iters=N, ms=N or threads=N"
    return f"{', '.join(LEVELS)}, iters=N, ms=N or threads=N"


def _option_value(name: str, raw: str, bad: str) -> float:
    if name == "ms":
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise AgentSpecError(f"{bad}: ms must be a positive number of milliseconds")
        return value
    if not raw.isdigit() or int(raw) < 1:
        raise AgentSpecError(f"{bad}: {name} must be a positive integer")
    return int(raw)


# --- playing a game -------------------------------------------------------------------------


def _move_text(move: object) -> str:
    return str(move) if isinstance(move, (Play, Allocate, Declare)) else repr(move)


def play_game(
    rules: RulesConfig,
    agents: Sequence[Agent],
    seed: int,
    on_move: Callable[[Game, int, Move], None] | None = None,
) -> Game:
    """Play a whole game between agents (agents[s] plays seat s) and return it, over.

    The deal comes from ``Game(rules, seed=seed)``. `on_move(game, seat, move)` is called
    after each move is applied. An illegal move raises IllegalMoveError naming the agent,
    its seat and the move.
    """
    if len(agents) != rules.players:
        raise CslError(
            f"agents: a {rules.players}-player game needs {rules.players} agents, got {len(agents)}"
        )
    game = Game(rules, seed=seed)
    while not game.is_over:
        seat = game.to_move
        agent = agents[seat]
        move = agent.act(game.observation(seat))
        try:
            game.apply(move, seat)
        except IllegalMoveError as e:
            raise IllegalMoveError(
                f"agent {agent.name!r} at seat {seat} chose an illegal move {_move_text(move)}: {e}"
            ) from None
        if on_move is not None:
            on_move(game, seat, move)
    return game


__all__: Sequence[str] = (
    "AGENT_KINDS",
    "DEFAULT_LEVEL",
    "DEFAULT_PARAMS",
    "DEFAULT_PIMC_ITERATIONS",
    "LEVELS",
    "LEVEL_SCALE",
    "level_iterations",
    "level_limit",
    "level_range_text",
    "PIMC_CONFIG",
    "ZOO_SPECS",
    "Agent",
    "AgentSpecError",
    "HeuristicAgent",
    "HeuristicParams",
    "IsmctsAgent",
    "PimcAgent",
    "RandomAgent",
    "make_agent",
    "play_game",
)
