"""The bare C engine and the samplers: what the core needs from an observation.

world_sampler and sample_worlds draw the determinizations (exactly uniform among the worlds
consistent with what the seat saw); core_engine builds the C engine for one decision with
its candidates and the tree and playout constants; heuristic_move asks the playout rules.
"""

from __future__ import annotations

import functools
import operator
from typing import Any

from csl_ai import _core
from csl_ai.errors import InvalidPositionError
from csl_ai.game import Observation, played_from_piles
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.search.config import SearchConfig, SearchSettingsError, _is_int, policy_settings
from csl_ai.seeds import core_seed

ROOT_KINDS = ("allocate", "weather", "play")
"""The engine's root kinds, by its root_kind number."""


def played_this_round(obs: Observation) -> list[int]:
    """Cards each seat has played in the current round (0 once the game is over)."""
    return [functools.reduce(operator.or_, row, 0) for row in played_from_piles(obs)]


def round_plays(obs: Observation) -> list[tuple[int, int]]:
    """The current round's card plays as (seat, card), in the order played."""
    if obs.over or not obs.rounds:
        return []
    return [(seat, card) for trick in obs.current.tricks for seat, card in trick.plays]


def world_sampler(obs: Observation) -> _core.WorldSampler:
    """The C sampler for obs; InvalidPositionError when no world fits it."""
    view = obs.public_view()
    core = view.core
    sky_from = len(core.sky_order) - len(view.unseen_sky)
    try:
        return _core.WorldSampler(
            core,
            obs.seat,
            view.hidden_counts,
            view.voids,
            view.unseen,
            played_this_round(obs),
            sky_from,
        )
    except ValueError as e:
        raise InvalidPositionError(f"observation of seat {obs.seat}: {e}") from None


def sample_worlds(obs: Observation, n: int, seed: int) -> list[_core.CoreState]:
    """n full determinized states, each exactly uniform among the worlds consistent with obs.

    Allocation: a seat that has not allocated holds a whole hand, not split (it chooses in
    the search); one that has allocated in secret holds uniformly random piles. Weather bet:
    the others hold uniformly random piles and have not declared. Trick phase: the others'
    piles respect every void shown. The unseen sky cards are shuffled; with 5 players the
    set-aside card is drawn too. The draw is slot by slot from a table of world counts kept
    in doubles, which are exact below 2^53 (there are at most about 5e14 worlds); the only
    departure from exact uniformity is the rounding of one uniform double per slot.
    """
    if not _is_int(n) or n < 0:
        raise SearchSettingsError(f"n must be a non-negative integer, got {n!r}")
    if not _is_int(seed) or seed < 0:
        raise SearchSettingsError(f"seed must be a non-negative integer, got {seed!r}")
    return world_sampler(obs).sample(n, core_seed(seed))


def core_engine(obs: Observation, config: SearchConfig) -> _core.SearchEngine:
    """The bare C engine for obs: its candidates in the engine's own order (allocations by
    the playout rules' quick score), the tree and playout constants set, nothing else."""
    sampler = world_sampler(obs)
    try:
        engine = _core.SearchEngine(
            sampler,
            obs.seat,
            algorithm=0 if config.algorithm == "ismcts" else 1,
            utility=0 if config.utility == "win" else 1,
            rules_playout=1 if config.playout == "rules" else 0,
            exploration=config.exploration,
            margin_weight=config.margin_weight,
            margin_scale=config.margin_scale,
            points_scale=config.points_scale,
            widening_base=config.widening_base,
            widening_coef=config.widening_coef,
            widening_alpha=config.widening_alpha,
            halving_min_worlds=config.halving_min_worlds,
            pimc_candidates=config.pimc_candidates,
            void_bonus=config.void_bonus,
            **policy_settings(obs, config),
        )
    except ValueError as e:
        raise InvalidPositionError(f"observation of seat {obs.seat}: {e}") from None
    return engine


def move_of(kind: int, candidate: Any) -> Move:
    """The move of a root candidate of the core's kind (0 allocate, 1 declare, 2 play): its
    allocations are the core's own enumeration, so not checked again."""
    if kind == 0:
        return Allocate.trusted(tuple(candidate))
    if kind == 1:
        return Declare(bool(candidate))
    return Play(int(candidate))


def heuristic_move(obs: Observation, seed: int = 0, config: SearchConfig = SearchConfig()) -> Move:
    """The playout rules' move for obs's seat (its own cards and public facts only)."""
    view = obs.public_view()
    try:
        kind, value = _core.heuristic_move(view.core, obs.seat, core_seed(seed), **policy_settings(obs, config))
    except ValueError as e:
        raise InvalidPositionError(f"observation of seat {obs.seat}: {e}") from None
    return move_of(ROOT_KINDS.index(kind), value)
