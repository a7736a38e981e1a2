"""The split mixture at 3 to 5 players: another seat's unseen split drawn in C, exactly,
over every split of its sampled hand, by the heuristic agent's worth (the same numbers as
the agent's own), by the allocation model, or alike; the rules' split where the seat is
believed exact; the search stays legal with it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from csl_ai.agents import make_agent
from csl_ai.game import Game
from csl_ai.heuristic import HeuristicAgent
from csl_ai.moves import Allocate, Declare
from csl_ai.rules import RulesConfig
from csl_ai.search import (
    SearchConfig,
    SearchLimit,
    SearchSettingsError,
    heuristic_move,
    search,
    world_sampler,
)
from csl_ai.search.others import _group_worths, _round_start, _split_shares, infer_worlds
from csl_ai.search.setup import prepared_engine
from test_split_table import all_splits

ALL = (3, 4, 5)
PLAIN = SearchConfig(opponent_beliefs="fixed", opponent_randomness=0.0, playout_epsilon=0.0, tree_split_mixture=ALL)


def first_allocation(players: int, seed: int):
    game = Game(RulesConfig(players=players), seed=seed)
    obs = game.observation(0)
    return game, obs, world_sampler(obs).sample(1, seed + 1)[0]


def heuristic_worths(obs, seat: int, hand: int, splits) -> np.ndarray:
    start = _round_start(obs, len(obs.rounds) - 1, seat, hand)
    plan_splits, worth, _weather = HeuristicAgent().allocation_plans(start)
    index = {s: i for i, s in enumerate(plan_splits)}
    return np.array([worth[index[s]] for s in splits])


@pytest.mark.parametrize("players", [3, 4, 5])
@pytest.mark.parametrize("seed", [0, 3])
def test_the_worth_part_is_the_heuristic_agents_own_worth(players: int, seed: int) -> None:
    """Every split of a sampled hand: the C log-weights are beta times the heuristic
    agent's worth of normal play, up to one constant; the model part is split_scores."""
    _game, obs, world = first_allocation(players, seed)
    engine = prepared_engine(obs, PLAIN)
    for seat in range(1, players):
        hand = world.hands[seat]
        splits = all_splits(hand, obs.rules.spec.group_sizes)
        logits = np.array(engine.mixture_logits(world, seat, 0, splits))
        gap = logits / PLAIN.split_worth_beta[players - 2] - heuristic_worths(obs, seat, hand, splits)
        assert np.ptp(gap) < 1e-9
        model = np.array(engine.mixture_logits(world, seat, 1, splits))
        scores = np.array(engine.split_scores(world, seat, splits, PLAIN.fitted.split_weights[players - 2]))
        assert np.abs(model - scores).max() < 1e-9


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


@pytest.mark.parametrize(("players", "component"), [(4, 0), (4, 1), (5, 0), (3, 1)])
def test_splits_are_drawn_exactly_by_their_weights(players: int, component: int) -> None:
    """All the share on one part: the drawn splits follow its softmax over every split."""
    _game, obs, world = first_allocation(players, 2)
    engine = prepared_engine(obs, PLAIN)
    seat = players - 1
    hand = world.hands[seat]
    splits = all_splits(hand, obs.rules.spec.group_sizes)
    shares = (1.0, 0.0) if component == 0 else (0.0, 1.0)
    engine.set_split_model(seat, _group_worths(obs, seat), *shares)
    p = softmax(np.array(engine.mixture_logits(world, seat, component, splits)))
    n = 20_000
    counts = Counter(engine.modelled_allocation(world, seat, k) for k in range(n))
    assert set(counts) <= set(splits)
    freq = np.array([counts[s] / n for s in splits])
    top = np.argsort(-p)[:5]
    for i in top:
        assert abs(freq[i] - p[i]) < 4 * np.sqrt(p[i] * (1 - p[i]) / n) + 1e-3
    expected = n * p
    chi2 = float(((n * freq - expected) ** 2 / expected).sum())
    df = len(splits) - 1
    assert chi2 < df + 6 * np.sqrt(2 * df)


def test_no_share_is_uniform_and_exact_seats_split_by_the_rules() -> None:
    """Shares 0: every split alike (a uniform split); the rules' share: the rules' split; a
    seat believed exact splits by the rules whatever its mixture."""
    _game, obs, world = first_allocation(3, 4)
    rules_split = prepared_engine(obs, replace(PLAIN, tree_split_mixture=())).modelled_allocation(world, 1, 3)
    engine = prepared_engine(obs, PLAIN)
    splits = all_splits(world.hands[2], obs.rules.spec.group_sizes)
    engine.set_split_model(2, _group_worths(obs, 2), 0.0, 0.0)
    n = 6000
    counts = Counter(engine.modelled_allocation(world, 2, k) for k in range(n))
    assert set(counts) == set(splits)
    assert max(counts.values()) / n < 2.0 / len(splits)
    engine.set_split_model(1, _group_worths(obs, 1), 0.0, 0.0, 1.0)
    assert {engine.modelled_allocation(world, 1, k) for k in range(20)} == {rules_split}
    engine.set_split_model(1, _group_worths(obs, 1), 1.0, 0.0)
    assert len({engine.modelled_allocation(world, 1, k) for k in range(20)}) > 1
    engine.set_exact([0.0, 1.0, 0.0], 0.0)
    assert {engine.modelled_allocation(world, 1, k) for k in range(20)} == {rules_split}


def test_the_pool_splits_the_others_by_their_mixtures_before_the_first_card() -> None:
    """At the weather bet every seat has split in secret: with split_mixture_pool and a
    sharp worth part (beta 1000, all the share), every world gives each other seat the
    split of its sampled hand that the heuristic values most (or one within 0.02 points: a
    split 0.02 points below the best has weight exp(-20) against it)."""
    game = Game(RulesConfig(players=4), seed=8)
    agents = [make_agent("heuristic", s) for s in range(4)]
    while game.phase.value == "allocate":
        game.apply(agents[game.to_move].act(game.observation(game.to_move)), game.to_move)
    obs = game.observation(1)
    sharp = SearchConfig(opponent_beliefs="fixed", opponent_randomness=0.0, split_worth_beta=(16.0, 1000.0, 1000.0, 1000.0), tree_split_mixture=ALL,
                         split_mixture=((0.2, 0.4, 0.4, 0.0),) + ((0.0, 1.0, 0.0, 0.0),) * 3, split_mixture_pool=64)
    engine = prepared_engine(obs, sharp)
    assert infer_worlds(engine, obs, sharp, 9)
    for world in engine.draw_worlds(8, 5):
        for seat in (0, 2, 3):
            hand = world.hands[seat]
            splits = all_splits(hand, obs.rules.spec.group_sizes)
            worth = heuristic_worths(obs, seat, hand, splits)
            assert worth[splits.index(tuple(world.piles[seat]))] > worth.max() - 0.02
    plain = replace(sharp, split_mixture_pool=0)
    assert not infer_worlds(prepared_engine(obs, plain), obs, plain, 9)


@pytest.mark.parametrize("players", [3, 4, 5])
def test_search_with_the_mixture_stays_legal(players: int) -> None:
    """Allocation, bet and first card, with and without the pool for the later two."""
    game = Game(RulesConfig(players=players), seed=players)
    agents = [make_agent("heuristic", s) for s in range(players)]
    seen = set()
    while not game.is_over and len(seen) < 3:
        seat = game.to_move
        obs = game.observation(seat)
        if seat == 1 and game.phase.value not in seen and len(obs.legal_moves()) > 1:
            seen.add(game.phase.value)
            for config in (SearchConfig(tree_split_mixture=ALL), SearchConfig(tree_split_mixture=ALL, split_mixture_pool=256)):
                result = search(obs, SearchLimit(iterations=600, seed=3), config)
                assert result.best_move in obs.legal_moves()
        game.apply(agents[seat].act(obs), seat)
    assert seen == {"allocate", "weather", "play"}


def test_the_mixture_changes_the_search_and_can_be_turned_off() -> None:
    """Off, the allocation search is the rules' split model of before; on (the default at 4
    and 5 players), it differs; at 3 players it is off by default."""
    limit = SearchLimit(iterations=3000, seed=1)
    for players in (4, 5):
        _game, obs, _world = first_allocation(players, 6)
        off = search(obs, limit, SearchConfig(tree_split_mixture=()))
        again = search(obs, limit, SearchConfig(tree_split_mixture=()))
        on = search(obs, limit, SearchConfig())
        assert isinstance(off.best_move, Allocate) and isinstance(on.best_move, Allocate)
        assert [m.mean_utility for m in off.moves] == [m.mean_utility for m in again.moves]
        assert [m.mean_utility for m in off.moves] != [m.mean_utility for m in on.moves]
    _game, obs, _world = first_allocation(3, 6)
    default = search(obs, limit, SearchConfig())
    off = search(obs, limit, SearchConfig(tree_split_mixture=()))
    assert [m.mean_utility for m in default.moves] == [m.mean_utility for m in off.moves]


def test_a_sharp_mixture_does_not_underflow() -> None:
    """At beta 1000 the piles each group wants most clash by hundreds of nats: the draw
    still finds the best splits (it sums each split's log-weight where the fast draw's
    scaled weights would underflow)."""
    _game, obs, world = first_allocation(4, 2)
    engine = prepared_engine(obs, replace(PLAIN, split_worth_beta=(16.0, 1000.0, 1000.0, 1000.0)))
    splits = all_splits(world.hands[3], obs.rules.spec.group_sizes)
    engine.set_split_model(3, _group_worths(obs, 3), 1.0, 0.0)
    logits = np.array(engine.mixture_logits(world, 3, 0, splits))
    gaps = [logits.max() - logits[splits.index(engine.modelled_allocation(world, 3, k))] for k in range(40)]
    assert max(gaps) < 20 and sum(g == 0 for g in gaps) > 10


def test_settings_are_checked() -> None:
    with pytest.raises(SearchSettingsError, match="tree_split_mixture"):
        SearchConfig(tree_split_mixture=(6,))
    with pytest.raises(SearchSettingsError, match="split_mixture_pool"):
        SearchConfig(split_mixture_pool=-1)
    _game, obs, _world = first_allocation(4, 1)
    engine = prepared_engine(obs, PLAIN)
    with pytest.raises(ValueError, match="another seat"):
        engine.set_split_model(0, _group_worths(obs, 1), 0.5, 0.5)
    with pytest.raises(ValueError, match="shares"):
        engine.set_split_model(1, _group_worths(obs, 1), 0.8, 0.5)
    with pytest.raises(ValueError, match="shares"):
        engine.set_split_model(1, _group_worths(obs, 1), 0.4, 0.4, 0.4)
    with pytest.raises(SearchSettingsError, match="split_mixture"):
        SearchConfig(split_mixture=((0.2, 0.4, 0.4, 0.0),) + ((0.5, 0.5, 0.5, 0.0),) * 3)
    with pytest.raises(ValueError, match="one worth per sky card"):
        engine.set_split_model(1, [[1.0, 2.0]], 0.5, 0.5)
    assert heuristic_move(obs, 0, PLAIN) in obs.legal_moves()
    assert not isinstance(heuristic_move(obs, 0, PLAIN), Declare)


def test_the_shares_follow_each_seats_finished_splits() -> None:
    """After a round, a seat that split by the playout rules reads mostly "rules", one
    that split as the heuristic agent does mostly "worth"; both keep a fifth of the prior."""
    exact = SearchConfig(playout_epsilon=0.0)
    heuristic = make_agent("heuristic", 3)
    game = Game(RulesConfig(players=4), seed=12)
    while len(game.observation(0).rounds) < 2 or game.phase.value != "allocate":
        seat = game.to_move
        obs = game.observation(seat)
        game.apply(heuristic.act(obs) if seat == 2 else heuristic_move(obs, seat, exact), seat)
    obs = game.observation(0)
    engine = prepared_engine(obs, PLAIN)
    rules_seat = _split_shares(engine, obs, 1, PLAIN)
    heuristic_seat = _split_shares(engine, obs, 2, PLAIN)
    prior = PLAIN.split_mixture[2]
    assert len(rules_seat) == 4 and abs(sum(rules_seat) - 1) < 1e-9
    assert rules_seat[3] > 0.75 and max(rules_seat[:3]) < 0.25
    assert heuristic_seat[1] > 0.6 and heuristic_seat[3] < 0.2
    assert all(share >= 0.2 * p - 1e-12 for share, p in zip(rules_seat, prior))


def test_the_result_reports_each_seats_split_shares_where_the_mixture_drew_them() -> None:
    """At an allocation each other seat's belief carries the mixture's four shares (also in
    its JSON); at a card play after the first too (play_split_mixture), but none where the
    mixture is not used there."""
    game, obs, _world = first_allocation(4, 3)
    result = search(obs, SearchLimit(iterations=500, seed=1), SearchConfig())
    assert [b.seat for b in result.beliefs] == [1, 2, 3]
    for b in result.beliefs:
        assert [name for name, _ in b.splits] == ["alike", "worth", "model", "rules"]
        assert abs(sum(share for _, share in b.splits) - 1) < 1e-9
        assert set(b.to_json()["splits"]) == {"alike", "worth", "model", "rules"}
    agents = [make_agent("heuristic", s) for s in range(4)]
    while not (game.phase.value == "play" and game.observation(game.to_move).current.tricks):
        game.apply(agents[game.to_move].act(game.observation(game.to_move)), game.to_move)
    now = game.observation(game.to_move)
    later = search(now, SearchLimit(iterations=300, seed=1), SearchConfig())
    betting = {s for s, bet in enumerate(now.current.declarations) if bet is True}
    assert all(
        [name for name, _ in b.splits] == ([] if b.seat in betting else ["alike", "worth", "model", "rules"])
        for b in later.beliefs
    )
    assert len(betting) < 3
    off = search(game.observation(game.to_move), SearchLimit(iterations=300, seed=1),
                 SearchConfig(play_split_mixture=()))
    assert all(b.splits == () and "splits" not in b.to_json() for b in off.beliefs)


@pytest.mark.parametrize(("players", "shares"), [(4, (0.5, 0.3, 0.1)), (5, (0.3, 0.6, 0.0)), (3, (1.0, 0.0, 0.0))])
def test_tables_made_once_a_hand_draw_the_same_splits(players: int, shares) -> None:
    """The pool's reuse makes a seat's mixture tables once a hand (MixDraw): from one seeded
    stream the splits so drawn are exactly those drawn with the tables made afresh each time."""
    _game, obs, world = first_allocation(players, 3)
    engine = prepared_engine(obs, PLAIN)
    seat = players - 1
    engine.set_split_model(seat, _group_worths(obs, seat), *shares)
    for seed in range(3):
        fresh = engine.modelled_allocations(world, seat, seed, 300, False)
        kept = engine.modelled_allocations(world, seat, seed, 300, True)
        assert kept == fresh
        assert len(set(kept)) > 10


def test_reused_deals_before_the_first_card_keep_their_hands() -> None:
    """mixture_reuse 4: the bet's pool comes four worlds to a deal of hands, each
    with its own splits, every one a split of the world's hand."""
    game = Game(RulesConfig(players=4), seed=8)
    agents = [make_agent("heuristic", s) for s in range(4)]
    while game.phase.value == "allocate":
        game.apply(agents[game.to_move].act(game.observation(game.to_move)), game.to_move)
    obs = game.observation(1)
    config = SearchConfig(tree_split_mixture=ALL, split_mixture_pool=256, mixture_reuse=4)
    engine = prepared_engine(obs, config)
    assert infer_worlds(engine, obs, config, 3)
    worlds = engine.draw_worlds(400, 1)
    hands = Counter(w.hands for w in worlds)
    splits = Counter((w.hands, tuple(map(tuple, w.piles))) for w in worlds)
    assert len(hands) <= 64 < len(splits)
    for world in worlds:
        for seat in (0, 2, 3):
            piles = world.piles[seat]
            assert sum(piles) == world.hands[seat]
            assert sum(bin(p).count("1") for p in piles) == bin(world.hands[seat]).count("1")
