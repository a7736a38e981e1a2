"""The learned value of a round boundary: its features, its shares, its fit, its use in search."""

from __future__ import annotations

import random
from math import comb

import numpy as np
import pytest

from csl_ai import _core
from csl_ai.agents import make_agent
from csl_ai.game import Game
from csl_ai.rules import Kind, RulesConfig, Side, SkyCard, SkyDeck, StarOption
from csl_ai.scoring import score_tallies
from csl_ai.search import SearchConfig, SearchLimit, SearchSettingsError, search
from csl_ai.search.setup import prepared_engine
from csl_ai.search.fitted import FittedModelError, FittedModels
from csl_ai.value import (
    VALUE_FEATURES, boundary_features, boundary_value, fit_points, fit_value, log_loss, points_rmse, softmax_rows,
)

GAIN_COLUMNS = {
    "leopard_1": (Kind.LEOPARD, 1), "leopard_2": (Kind.LEOPARD, 2), "spider_1": (Kind.SPIDER, 1),
    "spider_2": (Kind.SPIDER, 2), "candy_1": (Kind.CANDY, 1), "candy_2": (Kind.CANDY, 2),
    "star_1": (Kind.STAR, 1),
}


def game_at_round(rules: RulesConfig, seed: int, round_index: int, agents_seed: int | None = None) -> Game:
    """A game of random bots stopped at the first decision of round round_index (the bots
    seeded from agents_seed, seed by default)."""
    game = Game(rules, seed=seed)
    agents_seed = seed if agents_seed is None else agents_seed
    agents = [make_agent("random", agents_seed * 10 + s) for s in range(rules.players)]
    while game.round < round_index:
        seat = game.to_move
        game.apply(agents[seat].act(game.observation(seat)), seat)
    return game


def total(rules: RulesConfig, core: _core.CoreState, elements: list[list[int]], seat: int) -> int:
    result = score_tallies(
        rules, elements, core.faceup_cards, core.facedown_cards, core.good_weather
    )
    return result.scores[seat].total


@pytest.mark.parametrize("seed", range(12))
def test_features_are_the_scoring_rules_gains(seed: int) -> None:
    rng = random.Random(seed)
    players = rng.choice((2, 3, 4, 5))
    sides = tuple(rng.choice((Side.A, Side.B)) for _ in range(4))
    rules = RulesConfig(players=players, sides=sides, star_option=rng.choice(tuple(StarOption)))  # type: ignore[arg-type]
    game = game_at_round(rules, seed, rng.randrange(1, rules.spec.rounds))
    core = game.core
    features = boundary_features(core)
    elements = [list(row) for row in core.elements]
    assert features.shape == (players, len(VALUE_FEATURES))
    for seat in range(players):
        now = total(rules, core, elements, seat)
        assert features[seat, VALUE_FEATURES.index("points")] == pytest.approx(now / 10)
        for name, (kind, more) in GAIN_COLUMNS.items():
            bigger = [row[:] for row in elements]
            bigger[seat][kind] += more
            # score_tallies refuses impossible tallies; the gain is the scoring table's all the same
            try:
                gained = total(rules, core, bigger, seat) - now
            except Exception:
                continue
            assert features[seat, VALUE_FEATURES.index(name)] == pytest.approx(gained / 10), name
        others_star = any(elements[o][Kind.STAR] > 0 for o in range(players) if o != seat)
        star = features[seat, VALUE_FEATURES.index("star_1")]
        assert features[seat, VALUE_FEATURES.index("star_open")] == (0.0 if others_star else star)


def random_split_draws(rules: RulesConfig, core: _core.CoreState, draws: int, seed: int) -> np.ndarray:
    """Monte Carlo of the split features: each sky card still to come given to a seat drawn
    at random; per draw and seat, the gain of its candy, spider, leopard and star points in
    tens and whether it ends with three stars (draws, seats, 5)."""
    rng = random.Random(seed)
    deck = rules.deck.for_players(rules.players).cards
    rest = core.sky_order[core.round * core.line_size : core.n_rounds * core.line_size]
    elements = [list(row) for row in core.elements]
    columns = ("candy", "spider", "leopard", "star")

    def parts(elements: list[list[int]], faceup: list[int]) -> np.ndarray:
        result = score_tallies(rules, elements, faceup, core.facedown_cards, core.good_weather)
        return np.array([[getattr(line, c) / 10 for c in columns] for line in result.scores])

    now = parts(elements, list(core.faceup_cards))
    rows = np.zeros((draws, rules.players, 5))
    for d in range(draws):
        drawn = [row[:] for row in elements]
        faceup = list(core.faceup_cards)
        for card_id in rest:
            card = deck[card_id]
            seat = rng.randrange(rules.players)
            drawn[seat][card.kind] += card.count
            faceup[seat] += 1
        rows[d, :, :4] = parts(drawn, faceup) - now
        rows[d, :, 4] = [row[Kind.STAR] >= 3 for row in drawn]
    return rows


@pytest.mark.parametrize("seed", range(6))
def test_split_features_are_the_means_of_a_random_split_of_the_cards_to_come(seed: int) -> None:
    """Spider, leopard and three stars depend on the seat's own count alone, so the
    features are the random split's exact means (within 5 standard errors of 2,000 draws);
    candy (the others' counts taken as independent, side B ranked by seats above) and star
    points (side A's doubling taken at the mean base) are close to them."""
    rng = random.Random(seed)
    players = (2, 3, 4, 5)[seed % 4]
    sides = tuple(rng.choice((Side.A, Side.B)) for _ in range(4))
    rules = RulesConfig(players=players, sides=sides, star_option=rng.choice(tuple(StarOption)))  # type: ignore[arg-type]
    core = game_at_round(rules, seed, rng.randrange(1, rules.spec.rounds)).core
    first = VALUE_FEATURES.index("split_candy")
    features = boundary_features(core)[:, first : first + 5]
    draws = random_split_draws(rules, core, 2000, seed)
    mean = draws.mean(axis=0)
    error = draws.std(axis=0) / np.sqrt(len(draws))
    for column in (1, 2, 4):
        assert np.all(np.abs(features[:, column] - mean[:, column]) <= 5 * error[:, column] + 1e-9), column
    for column in (0, 3):
        assert np.all(np.abs(features[:, column] - mean[:, column]) <= 0.25), column


def reference_split_features(rules: RulesConfig, core: _core.CoreState) -> list[list[float]]:
    """The split features as the value computed them before its tables (csrc/value.pxi at
    signature 1181cd5bcc21bd84): every seat, every gain and every other seat afresh, in the
    same floating-point operations and order, so the numbers must be equal, not close."""
    n = rules.players
    deck = rules.deck.for_players(n).cards
    rest = core.sky_order[core.round * core.line_size : core.n_rounds * core.line_size]
    elements = [list(row) for row in core.elements]
    rows = core.scores()
    sides = [0 if side is Side.A else 1 for side in rules.sides]
    spider_points = ([0, 3, 10, 4, 2, 10, 1], [0, 10, 3, 2, 1, 10, 1])[sides[Kind.SPIDER]]
    leopard_points = ([0, 0, 10, 0, 20, 0, 30, 0], [0, 0, 0, 15, 0, 0, 30, 0])[sides[Kind.LEOPARD]]
    candy_b_points = [3, 10, 6, 0, 0]

    def binom(total: int, x: int) -> float:
        return comb(total, x) * (1.0 / n) ** x * (1.0 - 1.0 / n) ** (total - x)

    singles, doubles = [0] * 4, [0] * 4
    for card_id in rest:
        card = deck[card_id]
        if card.count == 2:
            doubles[card.kind] += 1
        else:
            singles[card.kind] += 1
    pmf = []
    for k in range(4):
        row = [0.0] * (singles[k] + 2 * doubles[k] + 1)
        for x2 in range(doubles[k] + 1):
            for x1 in range(singles[k] + 1):
                row[x1 + 2 * x2] += binom(singles[k], x1) * binom(doubles[k], x2)
        pmf.append(row)
    candy, size = pmf[Kind.CANDY], len(pmf[Kind.CANDY])
    below, under = [], []
    for o in range(n):
        c = elements[o][Kind.CANDY]
        b, u = [0.0], [0.0]
        for g in range(size):
            b.append(b[g] + candy[g] * (c + g))
            u.append(u[g] + candy[g])
        below.append(b)
        under.append(u)

    def table_mean(p: list[float], have: int, table: list[int], cap: int) -> float:
        total = 0.0
        for g in range(len(p)):
            total += p[g] * table[min(have + g, cap)]
        return total

    out = []
    for s in range(n):
        total = 0.0
        for g in range(size):
            a = elements[s][Kind.CANDY] + g
            if sides[Kind.CANDY] == 0:
                q = 0.0
                for o in range(n):
                    j = a - elements[o][Kind.CANDY]
                    if o != s and j > 0:
                        q += below[o][min(j, size)]
            else:
                rank = [1.0] + [0.0] * (n - 1)
                i = 0
                for o in range(n):
                    if o == s:
                        continue
                    j = a - elements[o][Kind.CANDY] + 1
                    q = 1.0 if j <= 0 else 0.0 if j >= size else 1.0 - under[o][j]
                    i += 1
                    for kk in range(i, 0, -1):
                        rank[kk] = rank[kk] * (1.0 - q) + rank[kk - 1] * q
                    rank[0] *= 1.0 - q
                q = 0.0
                for kk in range(n):
                    q += rank[kk] * candy_b_points[kk]
            total += candy[g] * q
        spider = table_mean(pmf[Kind.SPIDER], elements[s][Kind.SPIDER], spider_points, 6)
        leopard = table_mean(pmf[Kind.LEOPARD], elements[s][Kind.LEOPARD], leopard_points, 7)
        base = total + spider + leopard
        two = three = 0.0
        for g, p in enumerate(pmf[Kind.STAR]):
            if elements[s][Kind.STAR] + g == 2:
                two += p
            elif elements[s][Kind.STAR] + g >= 3:
                three += p
        if sides[Kind.STAR] == 0:
            star = -5.0 * two + three * (2.0 if rules.star_option is StarOption.TWICE else 1.0) * base
        else:
            star = -10.0 * two
        line = rows[s]
        out.append([(total - line[0]) / 10.0, (spider - line[1]) / 10.0, (leopard - line[2]) / 10.0,
                    (star - line[3]) / 10.0, three])
    return out


# 36 cards, 3 stars, mostly doubles: longer gain distributions than the default deck's
MANY_DOUBLES = SkyDeck.from_counts({
    SkyCard(Kind.CANDY, 1): 2, SkyCard(Kind.CANDY, 2): 9, SkyCard(Kind.SPIDER, 1): 2, SkyCard(Kind.SPIDER, 2): 9,
    SkyCard(Kind.LEOPARD, 1): 1, SkyCard(Kind.LEOPARD, 2): 10, SkyCard(Kind.STAR, 1): 3,
}, name="many-doubles")


def random_rules(rng: random.Random) -> RulesConfig:
    sides = tuple(rng.choice((Side.A, Side.B)) for _ in range(4))
    return RulesConfig(players=rng.choice((2, 3, 4, 5)), sides=sides,  # type: ignore[arg-type]
                       star_option=rng.choice(tuple(StarOption)),
                       deck=rng.choice((SkyDeck.default(), MANY_DOUBLES)))


@pytest.mark.parametrize("seed", range(40))
def test_split_features_are_the_reference_arithmetic_exactly(seed: int) -> None:
    """The value's tables (kept per worker, csrc/value.pxi) give the very numbers of the
    feature computed afresh: equal as floats, every rule set, deck and round."""
    rng = random.Random(1000 + seed)
    rules = random_rules(rng)
    game = game_at_round(rules, seed, rng.randrange(1, rules.spec.rounds))
    first = VALUE_FEATURES.index("split_candy")
    features = _core.boundary_features(game.core)
    assert [row[first:] for row in features] == reference_split_features(rules, game.core)


@pytest.mark.parametrize("seed", range(12))
def test_gains_are_the_scoring_rules_gains_exactly(seed: int) -> None:
    rng = random.Random(2000 + seed)
    rules = random_rules(rng)
    core = game_at_round(rules, seed, rng.randrange(1, rules.spec.rounds)).core
    features = _core.boundary_features(core)
    elements = [list(row) for row in core.elements]
    for seat in range(rules.players):
        now = total(rules, core, elements, seat)
        assert features[seat][VALUE_FEATURES.index("points")] == now / 10
        for name, (kind, more) in GAIN_COLUMNS.items():
            bigger = [row[:] for row in elements]
            bigger[seat][kind] += more
            try:
                gained = total(rules, core, bigger, seat) - now
            except Exception:
                continue
            assert features[seat][VALUE_FEATURES.index(name)] == gained / 10, name


def test_kept_tables_give_each_state_its_own_numbers() -> None:
    """One set of tables across states, as a search worker keeps it (the same cards to come
    many times over, other cards, other decks and rules, the same tallies again): the
    numbers of each state alone, bit for bit."""
    rng = random.Random(7)
    states = []
    for seed in range(30):
        rules = random_rules(rng) if seed % 3 else RulesConfig(players=4)
        round_index = rng.randrange(1, rules.spec.rounds)
        for agents_seed in range(4):   # the same deal and round, other plays before it
            states.append(game_at_round(rules, seed, round_index, 100 * seed + agents_seed).core)
    states = states + states[::-1] + rng.sample(states, len(states))
    alone = [_core.boundary_features(state) for state in states]
    kept = _core.boundary_features_many(states)

    def bits(features: list[list[list[float]]]) -> list[list[list[str]]]:
        return [[[x.hex() for x in row] for row in f] for f in features]

    assert bits(kept) == bits(alone)


def test_with_no_card_to_come_the_split_gains_nothing() -> None:
    rules = RulesConfig(players=4)
    first = VALUE_FEATURES.index("split_candy")
    for seed in range(5):
        core = game_at_round(rules, seed, 3).core
        assert np.any(boundary_features(core)[:, first : first + 4] != 0.0)
        core.play_random(seed)
        features = boundary_features(core)
        assert np.all(features[:, first : first + 4] == 0.0)
        stars = [row[Kind.STAR] for row in core.elements]
        assert features[:, first + 4].tolist() == [1.0 if t >= 3 else 0.0 for t in stars]


def test_a_leopard_short_of_the_top_count_is_worth_thirty_points() -> None:
    """Side A: 5 leopards score 0, 6 score 30 and 7 score 0 again; 0 -> 1 is worth nothing
    and 0 -> 2 is worth 10."""
    rules = RulesConfig(players=4)
    seen = {0: 0, 5: 0}
    for seed in range(300):
        core = game_at_round(rules, seed, 3).core
        features = boundary_features(core)
        for seat in range(4):
            leopards = core.elements[seat][Kind.LEOPARD]
            if core.elements[seat][Kind.STAR] >= 3:
                continue  # three stars on side A double the gain
            if leopards == 5:
                seen[5] += 1
                assert features[seat, VALUE_FEATURES.index("leopard_1")] == 3.0
                assert features[seat, VALUE_FEATURES.index("leopard_2")] == 0.0
            elif leopards == 0:
                seen[0] += 1
                assert features[seat, VALUE_FEATURES.index("leopard_1")] == 0.0
                assert features[seat, VALUE_FEATURES.index("leopard_2")] == 1.0
        if all(seen.values()):
            return
    pytest.fail(f"no seat with 0 and 5 leopards among the seeds: {seen}")


def test_shares_are_a_softmax_and_points_a_line_of_the_features() -> None:
    rules = RulesConfig(players=4)
    for seed in range(6):
        core = game_at_round(rules, seed, 2).core
        rng = np.random.default_rng(seed)
        weights = rng.normal(size=(3, len(VALUE_FEATURES)))
        points_weights = rng.normal(size=(3, len(VALUE_FEATURES) + 1))
        shares, points = boundary_value(core, weights.tolist(), points_weights.tolist())
        left = rules.spec.rounds - core.round
        features = boundary_features(core)
        expected = softmax_rows(features[None], weights[left - 1])[0]
        assert shares == pytest.approx(expected.tolist())
        assert sum(shares) == pytest.approx(1.0)
        line = points_weights[left - 1]
        assert points == pytest.approx((line[0] + features @ line[1:]).tolist())


def test_an_outright_winner_has_the_whole_share() -> None:
    rules = RulesConfig(players=4, sides=(Side.A, Side.A, Side.A, Side.B))
    for seed in range(400):
        core = game_at_round(rules, seed, 3).core
        holder = [s for s in range(4) if core.elements[s][Kind.STAR] == 3]
        if holder:
            shares, _ = boundary_value(core, [[0.0] * len(VALUE_FEATURES)], [[0.0] * (len(VALUE_FEATURES) + 1)])
            assert shares == [1.0 if s == holder[0] else 0.0 for s in range(4)]
            return
    pytest.skip("no three-star game among the seeds")


def test_fit_recovers_the_weights_that_drew_the_outcomes() -> None:
    rng = np.random.default_rng(5)
    truth = np.array([1.5, -0.7, 0.3])
    features = rng.normal(size=(20_000, 4, 3))
    p = softmax_rows(features, truth)
    winners = (p.cumsum(axis=1) > rng.random((20_000, 1))).argmax(axis=1)
    shares = np.eye(4)[winners]
    fitted = fit_value(features, shares, l2=1e-6)
    assert np.abs(fitted - truth).max() < 0.08
    assert log_loss(features, shares, fitted) < log_loss(features, shares, np.zeros(3))


def test_points_line_recovers_intercept_and_weights() -> None:
    rng = np.random.default_rng(2)
    features = rng.normal(size=(5_000, 3, 2))
    points = 20 + features @ np.array([3.0, -1.0]) + rng.normal(scale=0.5, size=(5_000, 3))
    fitted = fit_points(features, points, l2=0.0)
    assert fitted == pytest.approx([20.0, 3.0, -1.0], abs=0.05)
    assert points_rmse(features, points, fitted) == pytest.approx(0.5, abs=0.05)


def test_playouts_stop_at_the_round_end_with_the_learned_value() -> None:
    rules = RulesConfig(players=4)
    game = game_at_round(rules, 7, 0)
    obs = game.observation(game.to_move)
    config = SearchConfig(value_horizon=(3, 5, 3, 4))
    engine = prepared_engine(obs, config)
    worlds = engine.draw_worlds(1, 3)
    _, events = engine.playout_trace(worlds[0], 11)
    assert not any(e[0] == "deal" for e in events)
    plain = prepared_engine(obs, SearchConfig(value_horizon=(0, 0, 0, 0)))
    _, events = plain.playout_trace(worlds[0], 11)
    assert sum(e[0] == "deal" for e in events) == rules.spec.rounds - 1
    halfway = prepared_engine(obs, SearchConfig(value_horizon=(0, 0, 1, 0)))
    _, events = halfway.playout_trace(worlds[0], 11)
    assert sum(e[0] == "deal" for e in events) == rules.spec.rounds - 2


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_search_with_the_learned_value_is_legal_and_reproducible(players: int) -> None:
    game = Game(RulesConfig(players=players), seed=players)
    agents = [make_agent("heuristic", s) for s in range(players)]
    config = SearchConfig(value_horizon=(3, 5, 3, 4))
    decisions = 0
    while not game.is_over and decisions < 12:
        seat = game.to_move
        obs = game.observation(seat)
        limit = SearchLimit(iterations=300, seed=decisions)
        first = search(obs, limit, config)
        assert game.is_legal(first.best_move, seat)
        assert search(obs, limit, config).best_move == first.best_move
        game.apply(agents[seat].act(obs), seat)
        decisions += 1


@pytest.mark.parametrize(
    "weights",
    [(), ((),) * 4, (((0.0,) * 9,),) * 4, (((float("nan"),) * 10,),) * 4, ((((0.0,) * 10),) * 7,) * 4],
)
def test_malformed_value_weights_are_refused(weights: object) -> None:
    shipped = FittedModels.shipped()
    with pytest.raises(FittedModelError, match="value_weights"):
        shipped.replace(value_weights=weights)
    with pytest.raises(FittedModelError, match="value_points_weights"):
        shipped.replace(value_points_weights=weights)


@pytest.mark.parametrize("horizon", [(0, 0, 0), (0, 0, 0, -1), (0, 0, 0, 6), (0, 0, 0, 1.5), "3"])
def test_malformed_value_horizons_are_refused(horizon: object) -> None:
    with pytest.raises(SearchSettingsError, match="value_horizon"):
        SearchConfig(value_horizon=horizon)  # type: ignore[arg-type]


def test_the_learned_value_reports_final_points() -> None:
    """With the learned value standing for the later rounds the expected points are still
    on the scale of final scores, not the points at the round's end."""
    game = game_at_round(RulesConfig(players=4), 4, 0)
    obs = game.observation(game.to_move)
    result = search(obs, SearchLimit(iterations=2000, seed=1), SearchConfig(value_horizon=(3, 5, 3, 4)))
    best = result.moves[0]
    assert 0.0 <= best.win_probability <= 1.0
    assert 15.0 < best.expected_points < 120.0
