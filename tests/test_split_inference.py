"""Allocation inference: the worlds the search draws follow how likely each other seat's
split is under the allocation model, stay consistent with what the searcher saw, and the
draw never stalls."""

from __future__ import annotations

import math
from statistics import mean

import pytest

from csl_ai.agents import make_agent
from csl_ai.game import Game, Observation
from csl_ai.notation import card_colour
from csl_ai.rules import RulesConfig
from csl_ai.search import (
    SearchConfig,
    SearchLimit,
    SearchSettingsError,
    _engine,
    _played_from_piles,
    _round_plays,
    _played_this_round,
    search,
    world_sampler,
)
from worldcheck import check_world, known

SENSIBLE = SearchConfig(
    opponent_beliefs="fixed", opponent_randomness=0.0, allocation_inference=(2, 3, 4, 5), tree_split_mixture=()
)


def trick_position(players: int = 4, tricks: int = 0, seed: int = 11) -> Observation:
    """Seat 0 to play with a choice, at least `tricks` tricks into a round of heuristic play."""
    return trick_game(players, tricks, seed)[0]


def trick_game(players: int = 4, tricks: int = 0, seed: int = 11) -> tuple[Observation, Game]:
    """trick_position, and the game it comes from."""
    agents = [make_agent("heuristic", seed * 7 + s) for s in range(players)]
    game = Game(RulesConfig(players=players), seed=seed)
    while not game.is_over:
        seat = game.to_move
        obs = game.observation(seat)
        if (
            game.phase.value == "play"
            and seat == 0
            and len(obs.current.tricks) >= tricks
            and len(obs.legal_moves()) > 1
        ):
            return obs, game
        game.apply(agents[seat].act(obs), seat)
    raise AssertionError("no such position in the seeded game")


def whole_piles(world, obs: Observation, seat: int) -> tuple[int, ...]:
    played = _played_from_piles(obs)[seat]
    return tuple(p | q for p, q in zip(world.piles[seat], played, strict=True))


def test_played_from_piles_puts_each_card_under_its_group() -> None:
    obs = trick_position(tricks=4)
    by_pile = _played_from_piles(obs)
    played = [0] * obs.players
    for trick in obs.current.tricks:
        for seat, card in trick.plays:
            played[seat] |= 1 << card
    assert [sum(row) for row in by_pile] == played == _played_this_round(obs)
    sizes = obs.rules.spec.group_sizes
    for i, trick in enumerate(obs.current.tricks):
        group = next(g for g in range(len(sizes)) if i < sum(sizes[: g + 1]))
        for seat, card in trick.plays:
            assert (by_pile[seat][group] >> card) & 1


def test_split_features_count_voids_and_trumps() -> None:
    """f[2]: colours missing from a pile that holds a trump; f[3]: piles holding a trump."""
    obs = trick_position()
    engine = _engine(obs, SearchConfig())
    state = obs.public_view().core
    hand = sum(world_sampler(obs).sample(1, 1)[0].piles[1])
    cards = [c for c in range(64) if (hand >> c) & 1]
    piles = (sum(1 << c for c in cards[:3]), sum(1 << c for c in cards[3:6]), sum(1 << c for c in cards[6:]))
    f = engine.split_features(state, 1, piles)
    trump_piles = [p for p in piles if any((p >> c) & 1 and card_colour(c) == 0 for c in range(64))]
    missing = sum(
        sum(1 for colour in (1, 2) if not any((p >> c) & 1 and card_colour(c) == colour for c in range(64)))
        for p in trump_piles
    )
    assert f[3] == len(trump_piles)
    assert f[2] == missing


def inference_engine(obs: Observation, config: SearchConfig, weights, moves: int, pool: int, seed: int):
    engine = _engine(obs, config)
    engine.set_round_record(_played_from_piles(obs), obs.public_view().voids, _round_plays(obs))
    engine.set_allocation_inference(weights, (0.0,) * 4, moves)
    return engine, engine.build_pool(pool, seed)


def test_zero_weights_leave_the_worlds_uniform() -> None:
    """With zero weights no split moves: the pool holds the sampler's own worlds."""
    obs = trick_position()
    engine, on = inference_engine(obs, SENSIBLE, (0.0,) * 4, 50, 64, 3)
    assert on
    drawn = {w.to_bytes() for w in engine.draw_worlds(2000, 1)}
    assert drawn == {w.to_bytes() for w in world_sampler(obs).sample(64, 3)}


def test_drawn_worlds_fit_the_observation() -> None:
    """Every world drawn is one the exact sampler could give: the searcher's own piles, the
    played cards and every shown void respected, every card in use dealt once."""
    obs, game = trick_game(tricks=5)
    engine, _ = inference_engine(obs, SENSIBLE, SENSIBLE.split_weights[2], 200, 512, 7)
    expected = known(game, 0)
    for world in engine.draw_worlds(300, 5):
        check_world(world, obs, expected)


@pytest.mark.parametrize("tricks", [0, 4])
def test_inference_draws_splits_by_the_model(tricks: int) -> None:
    """Heads-up the other hand is known, so the model's splits given everything shown are
    the uniform consistent splits weighted by exp(w . f): the drawn worlds' mean of the
    voids-beside-a-trump feature matches that weighted mean, well above the uniform one."""
    obs = trick_position(players=2, tricks=tricks)
    weights = SENSIBLE.split_weights[0]
    engine, on = inference_engine(obs, SENSIBLE, weights, 300, 4096, 2)
    assert on
    state = obs.public_view().core

    def feature_and_log_weight(world) -> tuple[float, float]:
        f = engine.split_features(state, 1, whole_piles(world, obs, 1))
        return f[2], sum(a * b for a, b in zip(weights, f, strict=True))

    inferred = [feature_and_log_weight(w)[0] for w in engine.draw_worlds(4096, 4)]
    pairs = [feature_and_log_weight(w) for w in world_sampler(obs).sample(20000, 5)]
    top = max(lw for _, lw in pairs)
    ws = [math.exp(lw - top) for _, lw in pairs]
    expected = sum(w * v for w, (v, _) in zip(ws, pairs, strict=True)) / sum(ws)
    plain = mean(v for v, _ in pairs)
    assert mean(inferred) == pytest.approx(expected, abs=0.1)
    assert expected > plain + 0.3


def test_random_seats_keep_their_sampled_split() -> None:
    obs = trick_position()
    config = SearchConfig(opponent_beliefs="fixed", opponent_randomness=1.0, allocation_inference=(2, 3, 4, 5),
                          tree_split_mixture=())
    engine, _ = inference_engine(obs, config, (5.0, 5.0, 5.0, 5.0), 100, 32, 1)
    drawn = {w.to_bytes() for w in engine.draw_worlds(500, 1)}
    assert drawn == {w.to_bytes() for w in world_sampler(obs).sample(32, 1)}


def test_sharp_weights_never_stall_and_the_search_stays_legal() -> None:
    obs = trick_position(tricks=2)
    config = SearchConfig(
        allocation_inference=(2, 3, 4, 5),
        opponent_beliefs="fixed",
        opponent_randomness=0.0,
        split_weights=((50.0, 50.0, 50.0, -50.0),) * 4,
        split_moves=1000,
        inference_pool=64,
    )
    result = search(obs, SearchLimit(iterations=500, seed=3), config)
    assert result.best_move in obs.legal_moves()


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_seeded_search_with_inference_repeats_itself(players: int) -> None:
    obs = trick_position(players=players)
    config = SearchConfig(allocation_inference=(2, 3, 4, 5))
    first = search(obs, SearchLimit(iterations=800, seed=9), config)
    again = search(obs, SearchLimit(iterations=800, seed=9), config)
    assert first.best_move in obs.legal_moves()
    assert [(m.move, m.visits) for m in first.moves] == [(m.move, m.visits) for m in again.moves]


def test_inference_settings_are_checked() -> None:
    with pytest.raises(SearchSettingsError, match="split_weights"):
        SearchConfig(split_weights=((1.0, 2.0),) * 4)
    with pytest.raises(SearchSettingsError, match="split_weights"):
        SearchConfig(split_weights=((math.nan, 0.0, 0.0, 0.0),) * 4)
    with pytest.raises(SearchSettingsError, match="split_moves"):
        SearchConfig(split_moves=-1)
    with pytest.raises(SearchSettingsError, match="inference_pool"):
        SearchConfig(inference_pool=0)
    with pytest.raises(SearchSettingsError, match="allocation_inference"):
        SearchConfig(allocation_inference="yes")  # type: ignore[arg-type]
    with pytest.raises(SearchSettingsError, match="allocation_inference"):
        SearchConfig(allocation_inference=(1,))
    assert SearchConfig(allocation_inference=[4, 2, 4]).allocation_inference == (2, 4)
