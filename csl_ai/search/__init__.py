"""Search: information-set MCTS (and flat determinized Monte Carlo) from one seat's view.

`search(obs, limit, config)` answers "what should this seat do now?" for any of the three
decisions (allocation, good-weather bet, card play); `sample_worlds` draws the
determinizations it searches. The work happens in C (csrc/search_types.pxi and the files
it lists) without the GIL. How the search works is told in docs/search.md; the evidence
for each setting's default in docs/tuning.md.

The package, in the order data flows:

- `config`: SearchLimit (when to stop) and SearchConfig (how to search);
- `core`: the samplers and the bare C engine of one decision;
- `others`: the model of the other seats (their beliefs and split mixtures) and the
  worlds drawn from it;
- `setup`: the engine made ready for one search;
- `run`: search() on threads, and its root statistics turned into
- `result`: SearchResult and MoveStats.
"""

from __future__ import annotations

from collections.abc import Sequence

from csl_ai.search.config import SearchConfig, SearchLimit, SearchSettingsError, policy_settings
from csl_ai.search.core import heuristic_move, sample_worlds, world_sampler
from csl_ai.search.others import seat_beliefs
from csl_ai.search.result import MoveStats, SearchResult
from csl_ai.search.run import search

__all__: Sequence[str] = (
    "MoveStats",
    "SearchConfig",
    "SearchLimit",
    "SearchResult",
    "SearchSettingsError",
    "heuristic_move",
    "policy_settings",
    "sample_worlds",
    "search",
    "seat_beliefs",
    "world_sampler",
)
