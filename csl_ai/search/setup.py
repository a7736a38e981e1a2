"""The engine for one search: the bare engine, its allocations in prior order, the card
policy and the learned value, then the model of the others (others.apply_world_model)."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from csl_ai import _core
from csl_ai.beliefs import SeatBelief
from csl_ai.game import Observation
from csl_ai.evaluation import HandEvaluator
from csl_ai.policy import CardPolicy
from csl_ai.search.config import SearchConfig
from csl_ai.search.core import core_engine
from csl_ai.search.others import apply_world_model


def prepared_engine(
    obs: Observation, config: SearchConfig, beliefs: Sequence[SeatBelief] | None = None
) -> _core.SearchEngine:
    """The C engine for obs, ready to search: candidates in prior order, each other seat
    modelled by its belief (computed here unless given)."""
    engine = core_engine(obs, config)
    if engine.root_kind == 0:
        order_allocations(engine, obs)
    if config.playout == "rules" and config.card_policy == "learned":
        weights = config.card_weights if config.card_weights is not None else _shipped_weights()
        engine.set_card_policy(weights)
    players = obs.players - 2
    if config.value_horizon[players]:
        engine.set_value(
            config.fitted.value_weights[players], config.fitted.value_points_weights[players], config.value_horizon[players]
        )
    apply_world_model(engine, obs, config, beliefs)
    return engine


@functools.lru_cache(maxsize=1)
def _shipped_weights() -> tuple[float, ...]:
    return CardPolicy.shipped().weights


def order_allocations(engine: _core.SearchEngine, obs: Observation) -> None:
    """Put the allocation candidates in the prior order: the hand evaluation's order (best
    split first, ties in the engine's own order) taken in turn with the engine's own (the
    playout rules' quick score), each split at its first appearance. The two scores are
    right about different splits: the heuristic's worths assume sensible opponents."""
    values = HandEvaluator().allocation_values(obs)
    worth = np.array([values[piles] for piles in engine.candidates])
    by_worth = np.argsort(-worth, kind="stable")
    in_turn = np.column_stack((by_worth, np.arange(len(worth)))).ravel()
    _, first = np.unique(in_turn, return_index=True)
    engine.set_order(in_turn[np.sort(first)].tolist())
