"""Candy Lab players by name: the search as an agent, and agent specs.

A spec names a player the way ``csl play --ai`` and the records take it:

- ``random``: `RandomAgent`;
- ``heuristic``: `HeuristicAgent`;
- ``ismcts``, ``ismcts:LEVEL`` (``fast``, ``normal``, ``strong``), ``ismcts:iters=N`` or
  ``ismcts:ms=N`` (both may be given, comma-separated: it stops at whichever comes
  first), optionally ``,playout=random|heuristic``, ``,prior=W`` (the progressive
  bias toward the heuristic's move, `SearchConfig.prior_weight`) and ``,threads=N``
  (root-parallel search threads): `SearchAgent`.

`make_agent(spec, seed)` builds one; a seeded search agent derives each decision's seed
from its seed and the decision's place in the game, so a game between seeded agents
replays exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from csl_ai.candylab.agents import Agent, HeuristicAgent, RandomAgent
from csl_ai.candylab.game import Observation
from csl_ai.candylab.search import SearchConfig, SearchLimit, SearchResult, search
from csl_ai.errors import CslError, short_repr
from csl_ai.limits import MAX_THREADS
from csl_ai.seeds import fresh_seed, joined_seed

LEVELS: Final = {"fast": 2_500, "normal": 10_000, "strong": 40_000}
"""Iterations per decision of the search's levels: about 0.1, 0.5 and 2 seconds a
decision on one core, the time the Python engine spent on 100, 400 and 1,600 before the
compiled core (`python benchmarks/bench_candylab.py --only speed`)."""
DEFAULT_LEVEL: Final = "normal"
MAX_ITERS: Final = 10**7
MAX_MS: Final = 86_400_000


class AgentSpecError(CslError):
    """An agent spec that names no player."""


@dataclass(frozen=True)
class SearchSpec:
    """The search budget and playout an ``ismcts`` spec names."""

    iterations: int | None = LEVELS[DEFAULT_LEVEL]
    time_ms: float | None = None
    playout: str = "heuristic"
    prior: float = 1.0
    threads: int = 1


class SearchAgent:
    """The determinized ISMCTS as an agent: one search per decision with more than one
    legal move."""

    def __init__(
        self,
        iterations: int | None = LEVELS[DEFAULT_LEVEL],
        time_ms: float | None = None,
        seed: int | None = None,
        config: SearchConfig | None = None,
        name: str = "ismcts",
        threads: int = 1,
    ) -> None:
        SearchLimit(iterations=iterations, time_ms=time_ms, threads=threads)  # validates
        self.name = name
        self.iterations = iterations
        self.time_ms = time_ms
        self.threads = threads
        self.seed = seed
        self.config = config if config is not None else SearchConfig()
        self.last: SearchResult | None = None

    def limit(self, obs: Observation) -> SearchLimit:
        seed = (
            joined_seed(self.seed, obs.seat, len(obs.events)) if self.seed is not None else None
        )
        return SearchLimit(
            iterations=self.iterations, time_ms=self.time_ms, seed=seed, threads=self.threads
        )

    def act(self, obs: Observation) -> int:
        moves = obs.legal_moves
        if len(moves) == 1:
            return moves[0]
        self.last = search(obs, self.limit(obs), self.config)
        return self.last.best_move


def parse_spec(spec: str) -> tuple[str, SearchSpec | None]:
    """The kind a spec names and, for ``ismcts``, its budget; AgentSpecError otherwise."""
    if not isinstance(spec, str):
        raise AgentSpecError(f"agent spec must be text, got {short_repr(spec)}")
    text = spec.strip()
    head, _, rest = text.partition(":")
    if head in ("random", "heuristic"):
        if rest:
            raise AgentSpecError(f"agent {short_repr(spec)}: {head} takes no options")
        return head, None
    if head != "ismcts":
        raise AgentSpecError(
            f"unknown agent {short_repr(spec)} (expected random, heuristic, "
            "ismcts[:fast|normal|strong|iters=N|ms=N][,playout=random|heuristic][,threads=N])"
        )
    iterations: int | None = None
    time_ms: float | None = None
    playout = "heuristic"
    prior = 1.0
    threads = 1
    level = budget = False
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq:
            if key not in LEVELS:
                raise AgentSpecError(
                    f"agent {short_repr(spec)}: unknown level {short_repr(key)} "
                    f"(expected {', '.join(LEVELS)})"
                )
            iterations, level = LEVELS[key], True
        elif key == "iters":
            iterations, budget = _number(spec, key, value, MAX_ITERS), True
        elif key == "ms":
            time_ms, budget = float(_number(spec, key, value, MAX_MS)), True
        elif key == "playout":
            if value not in ("random", "heuristic"):
                raise AgentSpecError(
                    f"agent {short_repr(spec)}: playout must be random or heuristic, "
                    f"got {short_repr(value)}"
                )
            playout = value
        elif key == "threads":
            threads = _number(spec, key, value, MAX_THREADS)
        elif key == "prior":
            try:
                prior = float(value)
            except ValueError:
                prior = -1.0
            if not 0 <= prior <= 100:
                raise AgentSpecError(
                    f"agent {short_repr(spec)}: prior must be a number 0..100, "
                    f"got {short_repr(value)}"
                )
        else:
            raise AgentSpecError(
                f"agent {short_repr(spec)}: unknown option {short_repr(key)} "
                "(expected iters, ms, playout, prior, threads or a level)"
            )
    if level and budget:
        raise AgentSpecError(f"agent {short_repr(spec)}: give a level or iters/ms, not both")
    if iterations is None and time_ms is None:
        iterations = LEVELS[DEFAULT_LEVEL]
    return "ismcts", SearchSpec(iterations, time_ms, playout, prior, threads)


def _number(spec: str, key: str, value: str, most: int) -> int:
    try:
        n = int(value)
    except ValueError:
        n = 0
    if not 1 <= n <= most:
        raise AgentSpecError(
            f"agent {short_repr(spec)}: {key} must be an integer 1..{most}, got {short_repr(value)}"
        )
    return n


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The player a spec names (its name is the spec); seeded when seed is given."""
    kind, budget = parse_spec(spec)
    name = spec.strip()
    if kind == "random":
        return RandomAgent(seed if seed is not None else fresh_seed(), name=name)
    if kind == "heuristic":
        return HeuristicAgent(name=name)
    assert budget is not None
    return SearchAgent(
        iterations=budget.iterations,
        time_ms=budget.time_ms,
        seed=seed,
        config=SearchConfig(playout=budget.playout, prior_weight=budget.prior),
        name=name,
        threads=budget.threads,
    )


__all__ = [
    "DEFAULT_LEVEL",
    "LEVELS",
    "AgentSpecError",
    "SearchAgent",
    "SearchSpec",
    "make_agent",
    "parse_spec",
]
