"""The model of the other seats: what the search believes about how each plays, and the
worlds it draws from that belief.

seat_beliefs is each other seat's posterior over player models (csl_ai.beliefs); the split
mixture says how a seat splits its hand (heads-up from the table of all splits of the known
other hand, at 3-5 players over every split of each sampled hand, in C), its shares
following the seat's finished splits; apply_world_model hands all of it to the engine and
infer_worlds draws the pool of worlds the iterations share.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from csl_ai import _core
from csl_ai.beliefs import SeatBelief, exactness_by_seat, opponent_beliefs, randomness_by_seat
from csl_ai.game import Observation, RoundLog, played_from_piles
from csl_ai.evaluation import DEFAULT_PARAMS, HandEvaluator
from csl_ai.moves import Allocate
from csl_ai.search.config import SearchConfig, policy_settings
from csl_ai.search.core import heuristic_move, round_plays

def seat_beliefs(obs: Observation, config: SearchConfig = SearchConfig()) -> tuple[SeatBelief, ...]:
    """How the search models each other seat: the posterior over player models, or the
    fixed prior (config.opponent_beliefs); empty when the playouts are random."""
    if config.playout != "rules" or obs.over:
        return ()
    if config.opponent_beliefs == "posterior":
        policy = policy_settings(obs, config)
        del policy["epsilon"]
        return opponent_beliefs(
            obs, policy, config.opponent_randomness, config.belief_tremble, config.belief_bet_tremble,
            config.exact_prior, config.exact_tremble,
        )
    r = config.opponent_randomness
    return tuple(SeatBelief(s, (r, 1.0 - r, 0.0), 0) for s in range(obs.players) if s != obs.seat)


def apply_world_model(
    engine: _core.SearchEngine, obs: Observation, config: SearchConfig,
    beliefs: Sequence[SeatBelief] | None = None,
) -> None:
    """Hand the engine the model of the others (with rule playouts): each seat's chance of
    playing like a random player and exactly by the rules, from its belief (computed here
    unless given), and where it applies each seat's split mixture."""
    if config.playout != "rules":
        return
    if beliefs is None:
        beliefs = seat_beliefs(obs, config)
    engine.set_randomness(randomness_by_seat(beliefs, obs.players))
    if config.exact_prior > 0:
        engine.set_exact(exactness_by_seat(beliefs, obs.players), config.exact_epsilon)
    if _mixture_applies(engine, obs, config):
        _set_split_mixture(engine, obs, config, beliefs)


SPLIT_PARTS: tuple[str, ...] = ("alike", "worth", "model", "rules")
"""The split mixture's parts, in the order of its shares (heads-up: the first three)."""


def with_split_shares(
    engine: _core.SearchEngine, obs: Observation, config: SearchConfig, beliefs: tuple[SeatBelief, ...]
) -> tuple[SeatBelief, ...]:
    """beliefs with each seat's split-mixture shares where this search drew its split by
    the mixture (heads-up, and tree_split_mixture's player counts), for reports."""
    heads_up = obs.players == 2
    if config.playout != "rules" or obs.over or not (heads_up or _mixture_applies(engine, obs, config)):
        return beliefs
    out = []
    for b in beliefs:
        if obs.current.declarations[b.seat] is True and not heads_up:
            out.append(b)
            continue
        shares = _split_shares(engine, obs, b.seat, config)
        out.append(dataclasses.replace(b, splits=tuple(zip(SPLIT_PARTS, shares))))
    return tuple(out)


def _mixture_applies(engine: _core.SearchEngine, obs: Observation, config: SearchConfig) -> bool:
    """Whether the others' splits come from the split mixture in this search: at
    tree_split_mixture's player counts at an allocation, and before the round's first
    card with a pool; at play_split_mixture's after it."""
    if obs.players == 2:
        return False
    if obs.current.tricks:
        return obs.players in config.play_split_mixture
    return obs.players in config.tree_split_mixture and (engine.root_kind == 0 or config.split_mixture_pool > 0)



def _set_split_mixture(
    engine: _core.SearchEngine, obs: Observation, config: SearchConfig, beliefs: Sequence[SeatBelief]
) -> None:
    """Give the engine each other seat's split mixture (SearchConfig.tree_split_mixture):
    the heuristic's worths of the round's groups to that seat and the shares of the
    mixture's parts after its belief's random chance."""
    i = obs.players - 2
    p = DEFAULT_PARAMS
    engine.set_split_mixture(
        config.split_worth_beta[i], config.fitted.split_weights[i], p.blue_decay[i], p.side_top[i], p.side_decay[i],
        p.trump_synergy, p.top_k_share,
    )
    randomness = {b.seat: b.randomness for b in beliefs}
    for seat in range(obs.players):
        if seat == obs.seat or obs.current.declarations[seat] is True:
            continue
        _alike, by_worth, by_model, by_rules = _split_shares(engine, obs, seat, config)
        r = randomness.get(seat, config.opponent_randomness)
        engine.set_split_model(
            seat, _group_worths(obs, seat), (1.0 - r) * by_worth, (1.0 - r) * by_model, (1.0 - r) * by_rules
        )


def _group_worths(obs: Observation, seat: int) -> list[list[float]]:
    """The hand evaluation's worth to seat of each group's sky cards this round, best
    first, negative ones ducked as it plans (csl_ai.evaluation.HandEvaluator.pile_scores)."""
    view = obs.public_view()
    key = ("worths", obs.rules, seat, tuple(obs.current.line), tuple(map(tuple, view.core.elements)),
           tuple(view.unseen_sky), len(obs.rounds))

    def compute() -> list[list[float]]:
        evaluator = HandEvaluator()
        hand = obs.current.hands[obs.seat]  # any hand: the worths read only the public tallies
        return evaluator.ducked_group_values(evaluator.table(_round_start(obs, len(obs.rounds) - 1, seat, hand)))

    return _remembered(_PLANS, key, compute)


MIXTURE_ITERATIONS_PER_WORLD = 8
"""An iteration budget draws at most one mixture world per this many iterations (at least
64 worlds): 10,000 iterations keep the pools' 1,024, the 1,350 of level fast draw 168."""


def infer_worlds(
    engine: _core.SearchEngine, obs: Observation, config: SearchConfig, seed: int,
    beliefs: Sequence[SeatBelief] | None = None, iterations: int | None = None,
) -> bool:
    """Draw the engine's pool of worlds with the others' splits by their split mixture
    (heads-up: the other seat's split table; at 3-5 players where the mixture applies),
    each other seat under its belief (computed here unless given); whether a pool was
    drawn (else the engine samples uniformly). A search of that many iterations draws a
    mixture pool no larger than MIXTURE_ITERATIONS_PER_WORLD allows."""
    heads_up = obs.players == 2
    mixture = engine.root_kind != 0 and _mixture_applies(engine, obs, config)
    if not (heads_up or mixture) or config.playout != "rules":
        return False
    engine.set_round_record(played_from_piles(obs), obs.public_view().voids, round_plays(obs))
    if heads_up:
        if beliefs is None:
            beliefs = seat_beliefs(obs, config)
        _set_split_table(engine, obs, config, beliefs)
    given_play = mixture and bool(obs.current.tricks)
    if given_play:
        engine.set_mixture_condition()
    if heads_up:
        return engine.build_pool(config.inference_pool, seed)
    pool = config.play_mixture_pool if given_play else config.split_mixture_pool
    if iterations is not None:
        pool = min(pool, max(64, iterations // MIXTURE_ITERATIONS_PER_WORLD))
    return engine.build_pool(pool, seed, config.mixture_reuse)


def _set_split_table(
    engine: _core.SearchEngine, obs: Observation, config: SearchConfig, beliefs: Sequence[SeatBelief]
) -> None:
    """Heads-up: give the engine the other seat's table of splits (SearchConfig.split_mixture),
    each weighted by the mixture its belief and config.split_mixture make: the worlds'
    splits once it has split, the tree's while it is still to split."""
    core = obs.public_view().core
    other = 1 - obs.seat
    if obs.over:
        return
    hand = obs.rules.spec.rain_cards & ~obs.current.hands[obs.seat]
    splits, worth, weather = _split_plans(obs, other, hand)
    declared = obs.current.declarations[other]
    n = len(splits)
    alike, by_worth, by_model = _split_shares(engine, obs, other, config)
    p_worth, p_model = _split_components(engine, core, other, config, splits, worth, weather, declared)
    r = next((b.randomness for b in beliefs if b.seat == other), config.opponent_randomness)
    weights = r / n + (1.0 - r) * (alike / n + by_worth * p_worth + by_model * p_model)
    engine.set_split_table(other, splits, weights.tolist())


def _split_components(
    engine: _core.SearchEngine, core: _core.CoreState, seat: int, config: SearchConfig,
    splits: list[tuple[int, ...]], worth: np.ndarray, weather: np.ndarray, declared: bool | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each split's chance under the heuristic's worth and under the allocation model, for
    a seat whose bet is declared (None: not yet known), in core's round."""
    plan = weather if declared is True else worth if declared is False else np.maximum(worth, weather)
    p_worth = _softmax(_worth_beta(core.players, config) * plan)
    if declared is True:
        p_model = np.full(len(splits), 1.0 / len(splits))
    else:
        p_model = _softmax(np.asarray(engine.split_scores(core, seat, splits, config.fitted.split_weights[core.players - 2])))
    return p_worth, p_model


def _worth_beta(players: int, config: SearchConfig) -> float:
    """The split mixture's worth temperature at that player count."""
    return config.split_worth_beta[players - 2]


def _mixture_prior(obs: Observation, config: SearchConfig) -> tuple[float, ...]:
    """The split mixture's prior shares at obs's player count (heads-up the first three:
    the rules' split is no part there)."""
    shares = config.split_mixture[obs.players - 2]
    return shares[:3] if obs.players == 2 else shares


def _split_shares(
    engine: _core.SearchEngine, obs: Observation, seat: int, config: SearchConfig
) -> tuple[float, ...]:
    """The split mixture's shares for seat after its finished rounds' splits: the posterior
    over its components, a fifth of the way back to the prior shares (remembered for the
    round's later decisions)."""
    key = (
        obs.rules, seat, _mixture_prior(obs, config), _worth_beta(obs.players, config),
        config.fitted.split_weights[obs.players - 2], config.playout_epsilon,
        tuple((r.line, tuple(t.plays for t in r.tricks), tuple(r.declarations)) for r in obs.rounds[:-1]),
    )
    return _remembered(_SHARES, key, lambda: _posterior_shares(engine, obs, seat, config))


def _posterior_shares(
    engine: _core.SearchEngine, obs: Observation, seat: int, config: SearchConfig
) -> tuple[float, ...]:
    prior = np.asarray(_mixture_prior(obs, config))
    log_post = np.log(np.maximum(prior, 1e-300))
    for k, past in enumerate(obs.rounds[:-1]):
        split = tuple(played_from_piles(obs, k)[seat])
        hand = sum(split)
        start = _round_start(obs, k, seat, hand)
        splits, worth, weather = _split_plans(start, seat, hand)
        if split not in splits:
            continue
        p_worth, p_model = _split_components(
            engine, start.public_view().core, seat, config, splits, worth, weather, past.declarations[seat]
        )
        i = splits.index(split)
        likelihood = [1.0 / len(splits), p_worth[i], p_model[i]]
        if len(prior) == 4:
            rules = split == _rules_split(start, config)
            likelihood.append((1.0 - RULES_SPLIT_TREMBLE) * rules + RULES_SPLIT_TREMBLE / len(splits))
        log_post += np.log(np.array(likelihood) + 1e-300)
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    shares = 0.8 * post + 0.2 * prior
    return tuple(float(v) for v in shares)


RULES_SPLIT_TREMBLE: float = 0.05
"""In the split posterior, the chance a seat that splits by the rules splits some other
way (its splits alike): one odd split must not rule the rules out."""


def _rules_split(start: Observation, config: SearchConfig) -> tuple[int, ...]:
    """The playout rules' own split (no random move) of start's seat's hand."""
    move = heuristic_move(start, 0, dataclasses.replace(config, playout_epsilon=0.0))
    return cast(Allocate, move).piles


def _round_start(obs: Observation, k: int, seat: int, hand: int) -> Observation:
    """What seat, holding hand, saw when it split in round k of obs's game."""
    n = obs.players
    past = obs.rounds[k]
    start = RoundLog(
        line=past.line, first_player=past.first_player,
        hands=[hand if s == seat else None for s in range(n)], set_aside=None,
        allocations=[None] * n, declarations=[None] * n, tricks=[],
    )
    return Observation(rules=obs.rules, seat=seat, rounds=(*obs.rounds[:k], start), pending=tuple(range(n)))


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


_PLANS: dict[tuple[Any, ...], tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]] = {}
_SHARES: dict[tuple[Any, ...], tuple[float, float, float]] = {}
_REMEMBER_LOCK = threading.Lock()


def _remembered(cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], compute: Any) -> Any:
    """cache[key], computed once by compute() (a small cache: cleared when it holds 64)."""
    with _REMEMBER_LOCK:
        found = cache.get(key)
    if found is None:
        found = compute()
        with _REMEMBER_LOCK:
            if len(cache) >= 64:
                cache.clear()
            cache[key] = found
    return found


def _split_plans(
    obs: Observation, seat: int, hand: int
) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
    """The heuristic agent's allocation_plans for seat holding hand at the start of obs's
    round (what it knew when it split), remembered for the round's later decisions."""
    view = obs.public_view()
    current = obs.current
    key = (obs.rules, seat, hand, tuple(current.line), current.first_player,
           tuple(map(tuple, view.core.elements)), tuple(view.unseen_sky), len(obs.rounds))
    return _remembered(
        _PLANS, key, lambda: HandEvaluator().allocation_plans(_round_start(obs, len(obs.rounds) - 1, seat, hand))
    )
