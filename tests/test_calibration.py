"""The win calibration: a monotone map per player count, budget and stage of the game,
fitted by maximum likelihood, applied to what the search reports and nothing else."""

from __future__ import annotations

import math
import random

import pytest

from csl_ai.agents import make_agent
from csl_ai.calibration import (
    CalibrationError, WinCalibration, calibration_features, fit_calibration, rounds_follow, sigmoid,
)
from csl_ai.game import Game
from csl_ai.rules import RulesConfig, Side
from csl_ai.search import SearchConfig, SearchLimit, SearchSettingsError, search
from csl_ai.search.fitted import FittedModelError, FittedModels


def test_identity_keeps_the_estimate() -> None:
    identity = WinCalibration.identity()
    for p in (0.01, 0.2, 0.5, 0.77, 0.99):
        for round_index in range(4):
            assert identity.chance(p, 4, 10_000, round_index) == pytest.approx(p)
    assert identity.chance(0.001, 4, 10_000, 0) == pytest.approx(0.005)
    assert identity.chance(0.999, 4, 10_000, 0) == pytest.approx(0.995)
    shifted = WinCalibration(((2.0, 0.5, 1.0, -1.0, 0.3),) * 4)
    assert shifted.chance(0.0, 4, 10_000, 0) == 0.0
    assert shifted.chance(1.0, 4, 10_000, 0) == 1.0



def test_the_map_is_the_fitted_terms_exactly() -> None:
    """chance multiplies out the terms that do not read the raw estimate once a search;
    the numbers stay those of the fit's features, to the last bit."""
    rng = random.Random(5)
    for _ in range(200):
        rows = tuple(
            (rng.uniform(-1, 1), rng.uniform(0.2, 2), rng.uniform(-0.5, 0.5), rng.uniform(-1, 1), rng.uniform(-0.1, 0.1),
             rng.uniform(-1, 1))
            for _ in range(4)
        )
        cal = WinCalibration(rows)
        players, iterations, round_index = rng.randint(2, 5), rng.randint(1, 300_000), rng.randint(0, 3)
        star_b = rng.random() < 0.5
        raw = rng.choice([rng.random(), 0.001, 0.999, 0.5])
        terms = calibration_features(raw, iterations, rounds_follow(players, round_index), star_b)
        expected = sigmoid(sum(w * f for w, f in zip(rows[players - 2], terms, strict=True)))
        assert cal.chance_map(players, iterations, round_index, star_b)(raw) == expected
        assert cal.chance(raw, players, iterations, round_index, star_b) == expected

def test_the_map_is_monotone_and_reads_the_budget() -> None:
    cal = WinCalibration(
        ((0.1, 0.8, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0), (0.2, 0.9, 0.1, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0))
    )
    chances = [cal.chance(p / 100, 4, 10_000, 1) for p in range(1, 100)]
    assert chances == sorted(chances)
    assert cal.chance(0.5, 4, 30_000, 1) > cal.chance(0.5, 4, 10_000, 1) > cal.chance(0.5, 4, 3_000, 1)
    assert cal.chance(0.5, 2, 10_000, 0) == pytest.approx(1 / (1 + math.exp(-0.1)))
    assert cal.chance(0.5, 3, 1, 0) == pytest.approx(0.5)


def test_the_stage_terms_apply_before_the_last_round() -> None:
    assert [rounds_follow(4, r) for r in range(4)] == [1.0, 1.0, 1.0, 0.0]
    assert [rounds_follow(3, r) for r in range(6)] == [1.0] * 5 + [0.0]
    assert [rounds_follow(5, r) for r in range(5)] == [1.0] * 4 + [0.0]
    cal = WinCalibration(((0.0, 1.0, 0.0, 0.4, -0.5),) * 4)
    # the last round reads the raw estimate as it is; earlier rounds shift it up and flatten it
    assert cal.chance(0.3, 4, 10_000, 3) == pytest.approx(0.3)
    first = [cal.chance(p / 100, 4, 10_000, 0) for p in range(1, 100)]
    assert first == sorted(first)
    assert cal.chance(0.5, 4, 10_000, 0) == pytest.approx(1 / (1 + math.exp(-0.4)))
    assert cal.chance(0.5, 4, 10_000, 2) == cal.chance(0.5, 4, 10_000, 0) > cal.chance(0.5, 4, 10_000, 3)
    assert cal.chance(0.95, 4, 10_000, 0) < 0.95


@pytest.mark.parametrize(
    "rows",
    [
        ((0.0, 1.0, 0.0, 0.0, 0.0),) * 3,
        ((0.0, 1.0, 0.0),) * 4,
        ((0.0, 0.0, 0.0, 0.0, 0.0),) * 4,
        ((0.0, -1.0, 0.0, 0.0, 0.0),) * 4,
        ((0.0, 1.0, 0.0, 0.0, -1.0),) * 4,
        ((math.inf, 1.0, 0.0, 0.0, 0.0),) * 4,
        ((True, 1.0, 0.0, 0.0, 0.0),) * 4,
        ((0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0),) * 4,
        ((0.0, 1.0, 0.0, 0.0, 0.0, math.nan),) * 4,
    ],
)
def test_a_malformed_map_is_refused(rows) -> None:
    with pytest.raises(CalibrationError):
        WinCalibration(rows)


def test_the_star_term_shifts_side_b_alone() -> None:
    """f moves the log-odds where the stars score on side B, and nowhere else; a map of
    five numbers (written before the term) reads with f = 0."""
    old = WinCalibration(((0.1, 0.9, 0.0, 0.2, 0.1),) * 4)
    assert old.coefficients[2] == (0.1, 0.9, 0.0, 0.2, 0.1, 0.0)
    assert old.chance(0.4, 4, 10_000, 1, True) == old.chance(0.4, 4, 10_000, 1, False)
    cal = WinCalibration(((0.1, 0.9, 0.0, 0.2, 0.1, -0.5),) * 4)
    assert cal.chance(0.4, 4, 10_000, 1) == old.chance(0.4, 4, 10_000, 1)
    log_odds = math.log(0.4 / 0.6)
    assert cal.chance(0.4, 4, 10_000, 3, True) == pytest.approx(1 / (1 + math.exp(-(0.1 + 0.9 * log_odds - 0.5))))
    side_b = [cal.chance(p / 100, 3, 10_000, 0, True) for p in range(1, 100)]
    assert side_b == sorted(side_b)


@pytest.mark.parametrize("with_stars", [False, True])
def test_the_fit_recovers_a_known_map(with_stars: bool) -> None:
    rng = random.Random(4)
    truth = (-0.3, 1.4, 0.25, 0.5, -0.4, -0.6 if with_stars else 0.0)
    raw, iters, later, won, stars = [], [], [], [], []
    for _ in range(60_000):
        p = rng.uniform(0.02, 0.98)
        n = rng.choice((1_000, 10_000, 30_000))
        t = rounds_follow(4, rng.randrange(4))
        b = with_stars and rng.random() < 0.5
        log_odds = math.log(p / (1 - p))
        x = (truth[0] + truth[1] * log_odds + truth[2] * math.log(n / 10_000) + (truth[3] + truth[4] * log_odds) * t
             + truth[5] * b)
        raw.append(p)
        iters.append(n)
        later.append(t)
        stars.append(b)
        won.append(1.0 if rng.random() < 1 / (1 + math.exp(-x)) else 0.0)
    fitted = fit_calibration(raw, iters, later, won, star_b=stars if with_stars else None)
    assert fitted == pytest.approx(truth, abs=0.08)
    if not with_stars:
        assert fitted[5] == 0.0


def position(rules: RulesConfig | None = None):
    game = Game(rules or RulesConfig(players=4), seed=21)
    agents = [make_agent("heuristic", s) for s in range(4)]
    while True:
        obs = game.observation(game.to_move)
        if game.phase.value == "play" and len(obs.legal_moves()) > 2:
            return obs
        game.apply(agents[game.to_move].act(obs), game.to_move)


def test_the_search_reports_calibrated_chances_in_its_own_order() -> None:
    obs = position()
    cal = WinCalibration(
        ((0.0, 1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 0.0, 0.0), (-0.5, 1.5, 0.0, 0.3, -0.2, 0.7), (0.0, 1.0, 0.0, 0.0, 0.0))
    )
    limit = SearchLimit(iterations=3_000, seed=5)
    raw = search(obs, limit, SearchConfig(fitted=FittedModels.shipped().replace(win_calibration=None)))
    calibrated = search(obs, limit, SearchConfig(fitted=FittedModels.shipped().replace(win_calibration=cal)))
    assert [m.move for m in raw.moves] == [m.move for m in calibrated.moves]
    for r, c in zip(raw.moves, calibrated.moves, strict=True):
        assert r.raw_win_probability is None
        assert c.raw_win_probability == r.win_probability
        assert c.win_probability == pytest.approx(
            cal.chance(r.win_probability, 4, calibrated.iterations, len(obs.rounds) - 1)
        )
        assert c.win_probability != pytest.approx(
            cal.chance(r.win_probability, 4, calibrated.iterations, len(obs.rounds) - 1, True)
        )
        assert c.mean_utility == r.mean_utility
    assert calibrated.to_json()["moves"][0]["raw_win_probability"] == raw.moves[0].win_probability


def test_a_star_side_b_game_reads_the_star_term() -> None:
    obs = position(RulesConfig(players=4, sides=(Side.A, Side.A, Side.A, Side.B)))
    cal = WinCalibration(((0.0, 1.0, 0.0, 0.0, 0.0, -0.8),) * 4)
    limit = SearchLimit(iterations=2_000, seed=5)
    raw = search(obs, limit, SearchConfig(fitted=FittedModels.shipped().replace(win_calibration=None)))
    calibrated = search(obs, limit, SearchConfig(fitted=FittedModels.shipped().replace(win_calibration=cal)))
    for r, c in zip(raw.moves, calibrated.moves, strict=True):
        assert 0.0 < r.win_probability < 1.0
        assert c.win_probability == pytest.approx(cal.chance(r.win_probability, 4, calibrated.iterations, 0, True))
        assert c.win_probability < r.win_probability


def test_other_utilities_are_not_calibrated() -> None:
    obs = position()
    result = search(obs, SearchLimit(iterations=500, seed=1), SearchConfig(utility="points"))
    assert all(m.raw_win_probability is None for m in result.moves)


def test_the_setting_is_checked() -> None:
    with pytest.raises(FittedModelError, match="win_calibration"):
        FittedModels.shipped().replace(win_calibration=((0.0, 1.0, 0.0, 0.0, 0.0),) * 4)
    with pytest.raises(SearchSettingsError, match="fitted"):
        SearchConfig(fitted=None)  # type: ignore[arg-type]
