"""Heads-up split tables: the other seat's split drawn exactly from all splits of its known
hand, by weight, only those consistent with its play; the heuristic's own plans behind the
default weights; the draw never stalls and the search stays legal."""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from csl_ai.agents import make_agent
from csl_ai.game import Game, Observation
from csl_ai.moves import Allocate
from csl_ai.rules import RulesConfig, StarOption, parse_sides
from csl_ai.game import played_from_piles
from csl_ai.search import (
    SearchConfig,
    SearchLimit,
    SearchSettingsError,
    heuristic_move,
    search,
    world_sampler,
)
from csl_ai.search.core import round_plays
from csl_ai.search.others import _split_plans, infer_worlds
from csl_ai.search.setup import prepared_engine
from test_split_inference import trick_game, whole_piles
from worldcheck import check_world, known

TABLE = SearchConfig(opponent_beliefs="fixed", opponent_randomness=0.0, playout_epsilon=0.0)


def all_splits(hand: int, sizes: tuple[int, ...]) -> list[tuple[int, ...]]:
    cards = [c for c in range(64) if (hand >> c) & 1]

    def rest(left: list[int], sizes: tuple[int, ...]):
        if not sizes:
            yield ()
            return
        for pick in combinations(left, sizes[0]):
            mask = sum(1 << c for c in pick)
            for tail in rest([c for c in left if c not in pick], sizes[1:]):
                yield (mask, *tail)

    return list(rest(cards, sizes))


def other_hand(obs: Observation) -> int:
    return obs.rules.spec.rain_cards & ~obs.current.hands[obs.seat]


def table_engine(obs: Observation, splits, weights):
    engine = prepared_engine(obs, TABLE)
    engine.set_round_record(played_from_piles(obs), obs.public_view().voids, round_plays(obs))
    kept = engine.set_split_table(1, splits, weights)
    assert engine.build_pool(4096, 5)
    return engine, kept


@pytest.mark.parametrize("tricks", [0, 4])
def test_one_weighted_split_is_the_only_one_drawn(tricks: int) -> None:
    """All the weight on the true split: every world holds the other seat's true piles."""
    obs, game = trick_game(players=2, tricks=tricks)
    truth = tuple(p | q for p, q in zip(game.core.piles[1], played_from_piles(obs)[1], strict=True))
    splits = all_splits(other_hand(obs), obs.rules.spec.group_sizes)
    assert truth in splits
    engine, kept = table_engine(obs, splits, [1.0 if s == truth else 0.0 for s in splits])
    assert kept == 1
    assert {whole_piles(w, obs, 1) for w in engine.draw_worlds(200, 2)} == {truth}


def test_only_consistent_splits_are_kept_and_drawn_by_weight() -> None:
    """Splits that contradict the play (a played card in another pile, an unplayed card of a
    colour the pile was shown to lack) are dropped; the rest are drawn by their weights."""
    obs, game = trick_game(players=2, tricks=2)
    splits = all_splits(other_hand(obs), obs.rules.spec.group_sizes)
    probe = prepared_engine(obs, TABLE)
    probe.set_round_record(played_from_piles(obs), obs.public_view().voids, round_plays(obs))
    consistent = [sp for sp in splits if probe.set_split_table(1, [sp], [1.0]) == 1]
    assert 1 < len(consistent) < len(splits)
    weights = [float(1 + i % 3) for i in range(len(splits))]
    engine, kept = table_engine(obs, splits, weights)
    assert kept == len(consistent)
    expected = known(game, 0)
    drawn = engine.draw_worlds(6000, 3)
    for world in drawn[:300]:
        check_world(world, obs, expected)
    counts = Counter(whole_piles(w, obs, 1) for w in drawn)
    assert set(counts) <= set(consistent)
    weight_of = dict(zip(splits, weights, strict=True))
    total = sum(weight_of[sp] for sp in consistent)
    for level in (1.0, 2.0, 3.0):
        share = sum(c for sp, c in counts.items() if weight_of[sp] == level) / len(drawn)
        want = sum(weight_of[sp] for sp in consistent if weight_of[sp] == level) / total
        assert share == pytest.approx(want, abs=0.04)


def test_a_table_with_no_consistent_weight_is_off_and_never_stalls() -> None:
    obs, game = trick_game(players=2, tricks=5)
    splits = all_splits(other_hand(obs), obs.rules.spec.group_sizes)
    probe = prepared_engine(obs, TABLE)
    probe.set_round_record(played_from_piles(obs), obs.public_view().voids, round_plays(obs))
    probe.set_split_table(1, splits, [1.0] * len(splits))
    bad = next(s for s in splits if probe.set_split_table(1, [s], [1.0]) == 0)
    engine, kept = table_engine(obs, [bad], [1.0])
    assert kept == 0
    expected = known(game, 0)
    for world in engine.draw_worlds(100, 4):
        check_world(world, obs, expected)


def test_set_split_table_refuses_what_it_cannot_use() -> None:
    obs, _ = trick_game(players=2, tricks=0)
    engine = prepared_engine(obs, TABLE)
    splits = all_splits(other_hand(obs), obs.rules.spec.group_sizes)[:4]
    with pytest.raises(ValueError, match="another seat"):
        engine.set_split_table(0, splits, [1.0] * 4)
    with pytest.raises(ValueError, match="one weight each"):
        engine.set_split_table(1, splits, [1.0] * 3)
    with pytest.raises(ValueError, match="non-negative"):
        engine.set_split_table(1, splits, [1.0, -1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="non-negative"):
        engine.set_split_table(1, splits, [1.0, math.nan, 1.0, 1.0])
    with pytest.raises(ValueError, match="pile masks"):
        engine.set_split_table(1, [s[:2] for s in splits], [1.0] * 4)


def test_the_plans_are_what_the_heuristic_split_by() -> None:
    """The table's worths are the heuristic agent's own at the round's start: the split the
    heuristic seat chose is its best plan's best split, every split of the hand is there,
    and the plans are remembered for the round's later decisions."""
    obs, game = trick_game(players=2, tricks=3)
    truth = tuple(p | q for p, q in zip(game.core.piles[1], played_from_piles(obs)[1], strict=True))
    hand = other_hand(obs)
    splits, worth, weather = _split_plans(obs, 1, hand)
    assert sorted(splits) == sorted(all_splits(hand, obs.rules.spec.group_sizes))
    best = np.maximum(worth, weather)
    assert best[splits.index(truth)] == pytest.approx(best.max(), abs=1e-5)
    assert _split_plans(obs, 1, hand) is _split_plans(obs, 1, hand)


def test_a_random_seat_gets_a_flat_table_and_a_sensible_one_a_sharp_one() -> None:
    """The default weights: a seat believed random splits alike; a sensible one puts the
    heuristic's best split far above the average split."""
    obs, _ = trick_game(players=2, tricks=0)
    hand = other_hand(obs)
    splits, worth, weather = _split_plans(obs, 1, hand)
    top = splits[int(np.argmax(worth if obs.current.declarations[1] is False else np.maximum(worth, weather)))]
    shares = {}
    for r in (0.0, 1.0):
        config = SearchConfig(opponent_beliefs="fixed", opponent_randomness=r, inference_pool=4096)
        engine = prepared_engine(obs, config)
        assert infer_worlds(engine, obs, config, 3)
        drawn = [whole_piles(w, obs, 1) for w in engine.draw_worlds(4096, 1)]
        shares[r] = sum(1 for d in drawn if d == top) / len(drawn)
    assert shares[1.0] < 0.01
    assert shares[0.0] > 20 / len(splits)


def test_split_table_settings_are_checked() -> None:
    rest = SearchConfig().split_mixture[1:]
    with pytest.raises(SearchSettingsError, match="split_mixture"):
        SearchConfig(split_mixture=((0.5, 0.5),) + rest)  # type: ignore[arg-type]
    with pytest.raises(SearchSettingsError, match="split_mixture"):
        SearchConfig(split_mixture=((0.5, 0.5, 0.5, 0.0),) + rest)
    with pytest.raises(SearchSettingsError, match="split_mixture"):
        SearchConfig(split_mixture=((1.2, -0.1, -0.1, 0.0),) + rest)
    with pytest.raises(SearchSettingsError, match="heads-up the rules' share 0"):
        SearchConfig(split_mixture=((0.2, 0.4, 0.2, 0.2),) + rest)
    with pytest.raises(SearchSettingsError, match="split_worth_beta"):
        SearchConfig(split_worth_beta=(-1.0, 6.0, 6.0, 6.0))
    with pytest.raises(SearchSettingsError, match="split_worth_beta"):
        SearchConfig(split_worth_beta=16.0)  # type: ignore[arg-type]
    assert SearchConfig(split_mixture=[[0, 1, 0, 0], *rest]).split_mixture[0] == (0.0, 1.0, 0.0, 0.0)


@pytest.mark.parametrize("tricks", [0, 3, 7])
def test_searches_with_the_table_stay_legal_and_repeat(tricks: int) -> None:
    obs, _ = trick_game(players=2, tricks=tricks)
    config = SearchConfig()
    first = search(obs, SearchLimit(iterations=600, seed=4), config)
    again = search(obs, SearchLimit(iterations=600, seed=4), config)
    assert first.best_move in obs.legal_moves()
    assert [(m.move, m.visits) for m in first.moves] == [(m.move, m.visits) for m in again.moves]


def test_a_heads_up_allocation_after_the_other_split_uses_the_table() -> None:
    """Seat 1 splits after seat 0 has: the search runs on the table and answers a split."""

    game = Game(RulesConfig(players=2), seed=4)
    game.apply(make_agent("heuristic", 1).act(game.observation(0)), 0)
    obs = game.observation(1)
    result = search(obs, SearchLimit(iterations=800, seed=2), SearchConfig())
    assert isinstance(result.best_move, Allocate)
    assert result.best_move in obs.legal_moves()


def test_a_seat_still_to_split_splits_by_its_table_in_the_tree() -> None:
    """Seat 0 splits first: in its tree seat 1 takes a split from its table (all the weight
    on one split: that one), by the rules without a table, and by the rules where it is
    believed exact."""

    game = Game(RulesConfig(players=2), seed=4)
    obs = game.observation(0)
    world = world_sampler(obs).sample(1, 1)[0]
    splits = all_splits(other_hand(obs), obs.rules.spec.group_sizes)
    pick = splits[77]
    engine = prepared_engine(obs, TABLE)
    rules_split = engine.modelled_allocation(world, 1, 3)
    assert rules_split == heuristic_move(game.observation(1), 0, TABLE).piles
    engine.set_split_table(1, splits, [1.0 if s == pick else 0.0 for s in splits])
    assert {engine.modelled_allocation(world, 1, k) for k in range(20)} == {pick}
    engine.set_exact([0.0, 1.0], 0.01)
    assert engine.modelled_allocation(world, 1, 5) == rules_split
    with pytest.raises(ValueError, match="still to split"):
        engine.modelled_allocation(world, 0, 1)


@pytest.mark.parametrize(
    ("sides", "option", "first"),
    [
        ("candy=B,spider=B,leopard=B,star=B", "double", 1),
        ("candy=A,spider=B,leopard=A,star=B", "twice", 0),
        ("candy=B,spider=A,leopard=A,star=A", "double", 0),
    ],
)
def test_heads_up_games_under_other_rules_search_legally_on_the_table(sides: str, option: str, first: int) -> None:
    """Every decision of both seats searched, scoring sides B, the star option and the first
    seat varied: the heuristic's plans serve any rules, and each pool with the other seat
    split draws from its table."""

    rules = RulesConfig(players=2, sides=parse_sides(sides), star_option=StarOption(option), first_seat=first)
    game = Game(rules, seed=len(option) + first)
    config = SearchConfig(inference_pool=64)
    k = 0
    while not game.is_over:
        seat = game.to_move if game.phase.value == "play" else game.pending_seats()[0]
        obs = game.observation(seat)
        result = search(obs, SearchLimit(iterations=60, seed=k), config)
        assert game.is_legal(result.best_move, seat)
        game.apply(result.best_move, seat)
        k += 1


def _shares_at_round(opponent: str, rnd: int, seed: int) -> tuple[float, ...]:
    from csl_ai.search.others import _split_shares

    config = SearchConfig()
    game = Game(RulesConfig(players=2), seed=seed)
    agents = [make_agent("heuristic", 1), make_agent(opponent, 2)]
    while not (game.round == rnd and game.phase.value == "allocate"):
        seat = game.to_move if game.phase.value == "play" else game.pending_seats()[0]
        game.apply(agents[seat].act(game.observation(seat)), seat)
    obs = game.observation(0)
    return _split_shares(prepared_engine(obs, config), obs, 1, config)


def test_the_mixture_shares_follow_the_finished_rounds_splits() -> None:
    """Before any round is finished the shares are the prior; after three rounds of a
    heuristic seat the heuristic's worth holds most of them, and each share keeps at least
    a fifth of its prior."""
    prior = SearchConfig().split_mixture[0][:3]
    assert _shares_at_round("heuristic", 0, 1) == pytest.approx(prior)
    after = _shares_at_round("heuristic", 3, 1)
    assert sum(after) == pytest.approx(1.0)
    assert after[1] > 0.6 > after[2]
    assert all(a >= 0.2 * p - 1e-12 for a, p in zip(after, prior, strict=True))


def test_split_posterior_searches_stay_legal() -> None:
    """Every decision of a heads-up game searched with the shares' posterior on."""
    game = Game(RulesConfig(players=2), seed=6)
    config = SearchConfig(inference_pool=64)
    k = 0
    while not game.is_over:
        seat = game.to_move if game.phase.value == "play" else game.pending_seats()[0]
        result = search(game.observation(seat), SearchLimit(iterations=60, seed=k), config)
        assert game.is_legal(result.best_move, seat)
        game.apply(result.best_move, seat)
        k += 1
