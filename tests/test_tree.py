"""The search tree's children's indices (csrc/tree.pxi edge_insert): every node's children
side by side in key order, through the pool's doublings, the search's numbers alike
whatever the pool it starts with."""

from __future__ import annotations

from csl_ai import _core
from csl_ai.search import SearchConfig
from csl_ai.search.setup import prepared_engine
from test_settled import csl_positions


def test_every_node_finds_its_children_through_the_pools_doublings() -> None:
    kinds = set()
    for obs in csl_positions(12, 2029):
        engine = prepared_engine(obs, SearchConfig())
        kinds.add(engine.root_kind)
        small = _core.SearchWorker(engine, 3, 16, 0)
        small.run(6_000, 0.0)
        large = _core.SearchWorker(engine, 3, 1 << 18, 0)
        large.run(6_000, 0.0)
        seen = small.check_tree()
        assert small.nodes - engine.n_candidates - 1 <= seen < small.nodes
        assert large.check_tree() == seen and large.nodes == small.nodes
        assert small.root_stats() == large.root_stats()
    assert kinds == {0, 1, 2}, "allocations, bets and card plays"
