"""The split mixture after the round's first card (SearchConfig.play_split_mixture): each
other seat's split of its sampled hand redrawn in C by its mixture given the round's play
(only splits that hold the cards it played from each pile and none of a colour it has
shown a pile lacks), exactly as the mixture's conditional, with the hand's importance
weight; the pool's worlds always fit the play, and the search stays legal with it."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import numpy as np
import pytest

from csl_ai.agents import make_agent
from csl_ai.game import Game
from csl_ai.notation import card_colour
from csl_ai.rules import RulesConfig
from csl_ai.game import played_from_piles
from csl_ai.search import SearchConfig, SearchLimit, SearchSettingsError, search, world_sampler
from csl_ai.search.core import round_plays
from csl_ai.search.others import _group_worths, _round_start, _rules_split, infer_worlds
from csl_ai.search.setup import prepared_engine
from test_split_table import all_splits

PLAIN = SearchConfig(
    opponent_beliefs="fixed", opponent_randomness=0.0, playout_epsilon=0.0, exact_prior=0.0,
    play_split_mixture=(3, 4, 5),
)


def mid_round(players: int, seed: int, plays: int, seat: int = 1):
    """The game after `plays` card plays of its first round by heuristic seats, where `seat`
    is to play (the first such point at or after it)."""
    game = Game(RulesConfig(players=players), seed=seed)
    agents = [make_agent("heuristic", s) for s in range(players)]
    played = 0
    while not game.is_over:
        if game.phase.value == "play":
            if played >= plays and game.to_move == seat:
                return game
            played += 1
        game.apply(agents[game.to_move].act(game.observation(game.to_move)), game.to_move)
    raise AssertionError("no such position")


def fits(obs, seat: int, split: tuple[int, ...]) -> bool:
    """Whether a whole split of seat's round hand fits the round's play as obs sees it."""
    played = played_from_piles(obs)[seat]
    voids = obs.public_view().voids[seat]
    for g, pile in enumerate(split):
        rest = pile & ~played[g]
        if pile & played[g] != played[g]:
            return False
        if any((voids[g] >> card_colour(c)) & 1 for c in range(64) if (rest >> c) & 1):
            return False
    return True


def rules_split(obs, world, seat: int) -> tuple[int, ...]:
    """The playout rules' split of seat's round hand in world."""
    return _rules_split(_round_start(obs, len(obs.rounds) - 1, seat, world.hands[seat]), PLAIN)


def whole_split(obs, world, seat: int) -> tuple[int, ...]:
    played = played_from_piles(obs)[seat]
    return tuple(p | q for p, q in zip(world.piles[seat], played))


def prepared(obs, config: SearchConfig = PLAIN):
    engine = prepared_engine(obs, config)
    engine.set_round_record(played_from_piles(obs), obs.public_view().voids, round_plays(obs))
    return engine


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def exact_conditional(engine, obs, world, seat, shares, rules_split):
    """The mixture's chance of each whole split of seat's hand given the play, and the
    hand's weight (the mixture's chance of a split that fits, over the share of splits that
    fit), computed split by split."""
    splits = all_splits(world.hands[seat], obs.rules.spec.group_sizes)
    ok = np.array([fits(obs, seat, s) for s in splits])
    p_worth = softmax(np.array(engine.mixture_logits(world, seat, 0, splits)))
    p_model = softmax(np.array(engine.mixture_logits(world, seat, 1, splits)))
    p_rules = np.array([s == rules_split for s in splits], dtype=float)
    p_alike = np.full(len(splits), 1.0 / len(splits))
    joint = sum(share * p * ok for share, p in zip(shares, (p_worth, p_model, p_rules, p_alike)))
    likelihood = joint.sum()
    return splits, joint / likelihood, likelihood / ok.mean()


@pytest.mark.parametrize(
    ("players", "seed", "plays", "shares"),
    [
        (4, 1, 5, (0.4, 0.35, 0.25, 0.0)),
        (4, 2, 9, (0.3, 0.3, 0.2, 0.2)),
        (4, 7, 14, (0.0, 0.0, 0.0, 1.0)),
        (3, 5, 4, (0.3, 0.3, 0.2, 0.2)),
        (5, 3, 6, (0.4, 0.35, 0.25, 0.0)),
    ],
)
def test_the_redrawn_split_is_the_mixtures_conditional(players: int, seed: int, plays: int, shares) -> None:
    """For one sampled world: the returned weight is the hand's exact importance weight, and
    the redrawn splits follow the mixture's conditional given the play (worth, model, rules
    and alike parts; a chi-square bound over every split that can come)."""
    game = mid_round(players, seed, plays)
    obs = game.observation(1)
    engine = prepared(obs)
    world = world_sampler(obs).sample(1, seed + 11)[0]
    seat = next(s for s in range(players) if s != 1 and any(played_from_piles(obs)[s]))
    engine.set_split_model(seat, _group_worths(obs, seat), *shares[:3])
    splits, p, weight = exact_conditional(engine, obs, world, seat, shares, rules_split(obs, world, seat))
    n = 12_000
    draws = [engine.mixture_condition(world, seat, k) for k in range(n)]
    assert all(abs(w - weight) <= 1e-9 * weight for _, w in draws)
    counts = Counter(whole_split(obs, out, seat) for out, _ in draws)
    index = {s: i for i, s in enumerate(splits)}
    assert all(p[index[s]] > 0 for s in counts)
    expected = n * p
    big = expected >= 5
    observed = np.array([counts.get(s, 0) for s in splits], dtype=float)
    chi2 = float(((observed[big] - expected[big]) ** 2 / expected[big]).sum())
    rest_o, rest_e = observed[~big].sum(), expected[~big].sum()
    if rest_e > 0:
        chi2 += (rest_o - rest_e) ** 2 / rest_e
    df = int(big.sum()) + (rest_e > 0) - 1
    assert chi2 < df + 6 * np.sqrt(2 * max(df, 1))


def test_alike_seats_weigh_every_hand_the_same_and_exact_seats_play_the_rules() -> None:
    """All the share alike: a split that fits, and every hand weighs the same (the sampler's
    own chance of it); a seat believed exact plays the rules' split where that fits the
    play, and a hand whose rules' split does not fit weighs nothing."""
    game = mid_round(4, 4, 3)
    obs = game.observation(1)
    engine = prepared(obs)
    worlds = world_sampler(obs).sample(20, 7)
    for world in worlds:
        for seat in (0, 2, 3):
            engine.set_split_model(seat, _group_worths(obs, seat), 0.0, 0.0, 0.0)
            out, weight = engine.mixture_condition(world, seat, 3)
            assert fits(obs, seat, whole_split(obs, out, seat))
            assert out.hands == world.hands
            assert weight == pytest.approx(1.0, rel=1e-12)
    engine.set_exact([1.0, 0.0, 1.0, 1.0], 0.0)
    outcomes = set()
    for world in worlds:
        for seat in (0, 2, 3):
            split = rules_split(obs, world, seat)
            out, weight = engine.mixture_condition(world, seat, 5)
            outcomes.add(fits(obs, seat, split))
            if fits(obs, seat, split):
                assert whole_split(obs, out, seat) == split and weight > 0
            else:
                assert weight == 0.0 and out.piles[seat] == world.piles[seat]
    assert outcomes == {True, False}


@pytest.mark.parametrize("reuse", [1, 4])
def test_the_pool_fits_the_play_and_follows_a_sharp_worth(reuse: int) -> None:
    """With play_split_mixture every pooled world keeps each seat's hand, holds the cards it
    played in the piles it played them from and respects its voids; with the worth part
    sharp (beta 1000, all the share) each seat's split is the best that fits by the
    heuristic's worth (within 0.02 points)."""
    game = mid_round(4, 6, 6)
    obs = game.observation(1)
    sharp = replace(PLAIN, split_worth_beta=(16.0, 1000.0, 1000.0, 1000.0), split_mixture=((0.2, 0.4, 0.4, 0.0),) + ((0.0, 1.0, 0.0, 0.0),) * 3,
                    play_mixture_pool=64, mixture_reuse=reuse)
    engine = prepared_engine(obs, sharp)
    assert infer_worlds(engine, obs, sharp, 9)
    assert engine.pool_size == 64
    for world in engine.draw_worlds(16, 5):
        for seat in (0, 2, 3):
            split = whole_split(obs, world, seat)
            assert fits(obs, seat, split)
            assert sum(bin(p).count("1") for p in split) == bin(world.hands[seat]).count("1")
            splits = [s for s in all_splits(world.hands[seat], obs.rules.spec.group_sizes) if fits(obs, seat, s)]
            logits = np.array(engine.mixture_logits(world, seat, 0, splits)) / 1000.0
            assert logits[splits.index(split)] > logits.max() - 0.02
    off = replace(sharp, play_split_mixture=())
    assert not infer_worlds(prepared_engine(obs, off), obs, off, 9)


def test_reused_deals_keep_their_hands_and_draw_their_own_splits() -> None:
    """mixture_reuse 4: the pool's worlds come four to a deal of hands, and the splits
    within a deal still differ."""
    game = mid_round(4, 6, 6)
    obs = game.observation(1)
    config = replace(PLAIN, play_mixture_pool=256, mixture_reuse=4)
    engine = prepared_engine(obs, config)
    assert infer_worlds(engine, obs, config, 3)
    worlds = engine.draw_worlds(400, 1)
    hands = Counter(w.hands for w in worlds)
    splits = Counter((w.hands, w.piles) for w in worlds)
    assert len(hands) <= 64 < len(splits)
    for world in worlds:
        for seat in (0, 2, 3):
            assert fits(obs, seat, whole_split(obs, world, seat))


@pytest.mark.parametrize("players", [3, 4, 5])
def test_search_with_the_mixture_given_play_stays_legal(players: int) -> None:
    """Every card play of a game, with the mixture given play on, from the default beliefs."""
    game = Game(RulesConfig(players=players), seed=20 + players)
    agents = [make_agent("heuristic", s) for s in range(players)]
    config = SearchConfig(play_split_mixture=(players,), play_mixture_pool=128)
    searched = 0
    while not game.is_over and searched < 12:
        seat = game.to_move
        obs = game.observation(seat)
        if game.phase.value == "play" and obs.current.tricks and len(obs.legal_moves()) > 1:
            result = search(obs, SearchLimit(iterations=300, seed=searched), config)
            assert result.best_move in obs.legal_moves()
            searched += 1
        game.apply(agents[seat].act(obs), seat)
    assert searched == 12


def test_settings_are_checked() -> None:
    with pytest.raises(SearchSettingsError, match="play_split_mixture"):
        SearchConfig(play_split_mixture=(6,))
    with pytest.raises(SearchSettingsError, match="play_mixture_pool"):
        SearchConfig(play_mixture_pool=0)
    with pytest.raises(SearchSettingsError, match="mixture_reuse"):
        SearchConfig(mixture_reuse=0)
    game = mid_round(4, 1, 5)
    engine = prepared(game.observation(1), replace(PLAIN, play_split_mixture=()))
    with pytest.raises(ValueError, match="split mixture"):
        engine.mixture_condition(world_sampler(game.observation(1)).sample(1, 0)[0], 2, 0)
    with pytest.raises(ValueError, match="reuse"):
        engine.build_pool(64, 0, 0)


def test_a_small_budget_draws_a_smaller_pool() -> None:
    """One mixture world per eight iterations at most, and never fewer than 64; the
    configured pool without an iteration budget (a time limit)."""
    obs = mid_round(4, 6, 6).observation(1)
    sizes = []
    for iterations in (None, 100_000, 1_350, 100):
        engine = prepared_engine(obs, PLAIN)
        assert infer_worlds(engine, obs, PLAIN, 1, iterations=iterations)
        sizes.append(engine.pool_size)
    assert sizes == [1024, 1024, 168, 64]
