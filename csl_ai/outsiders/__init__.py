"""Outsiders: rule-based players written blind, from the rules alone.

The heuristic, the zoo and the style bots share one hand evaluation or borrow its pieces,
and every learned part of the search was fitted on their games, so beating them says
little about a player who thinks differently (issue 36). Each outsider here was written
from `RULES.md` and the game's public interface only, by someone who had not read the
heuristic, the zoo, the style bots, the search or its tuning notes: opponents the
project never tuned on, held out for measuring whether a change travels.

Specs for `csl_ai.agents.make_agent`: ``outsider:NAME`` (`OUTSIDER_SPECS`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from csl_ai.outsiders.counter import CounterAgent
from csl_ai.outsiders.hunter import HunterAgent

OUTSIDER_AGENTS: Final[Mapping[str, Callable[[int | None], CounterAgent | HunterAgent]]] = {
    "counter": CounterAgent,
    "hunter": HunterAgent,
}
"""Each outsider by name: ``counter`` counts cards and prices every trick by the exact
score it changes; ``hunter`` plans for the tables' big scores and the third star and
fights any seat close to one."""

OUTSIDER_SPECS: Final[tuple[str, ...]] = tuple(f"outsider:{name}" for name in OUTSIDER_AGENTS)

__all__ = ["OUTSIDER_AGENTS", "OUTSIDER_SPECS", "CounterAgent", "HunterAgent"]
