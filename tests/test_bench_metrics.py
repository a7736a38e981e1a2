"""The strength benchmark's extra figures: calibration, deal bootstrap, paired differences,
and what a good-weather bet was worth against the same cards left face up."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from strength_metrics import (  # noqa: E402
    Bet,
    bets_of,
    brier,
    calibration,
    calibration_bins,
    deal_bootstrap,
    decile_intervals,
    paired_by_deal,
    paired_figure,
    rescore,
    summarise_bets,
)

from csl_ai.agents import AgentSpecError, RandomAgent, play_game  # noqa: E402
from csl_ai.game import Game  # noqa: E402
from csl_ai.moves import Allocate, Declare, Play  # noqa: E402
from csl_ai.notation import parse_cards, parse_piles  # noqa: E402
from csl_ai.rules import Kind, RulesConfig, SkyCard  # noqa: E402

# --- calibration ----------------------------------------------------------------------------


def test_brier_of_a_hand_made_set() -> None:
    pairs = [(0.2, 0.0), (0.7, 1.0), (0.5, 0.5), (1.0, 0.0)]
    assert brier(pairs) == pytest.approx((0.04 + 0.09 + 0.0 + 1.0) / 4)


def test_perfectly_calibrated_set_has_no_difference_in_any_decile() -> None:
    pairs = []
    for decile in range(10):
        estimate = decile / 10 + 0.05
        wins = round(estimate * 20)
        pairs += [(estimate, 1.0)] * wins + [(estimate, 0.0)] * (20 - wins)
    summary = calibration(pairs)
    assert summary is not None and summary.count == 200
    assert summary.difference == pytest.approx(0.0, abs=1e-12)
    table = calibration_bins(pairs)
    assert [b.count for b in table] == [20] * 10
    assert all(b.difference == pytest.approx(0.0, abs=1e-12) for b in table)


def test_sampled_calibrated_estimates_stay_close_in_every_decile() -> None:
    rng = random.Random(7)
    pairs = []
    for _ in range(40_000):
        estimate = rng.random()
        pairs.append((estimate, 1.0 if rng.random() < estimate else 0.0))
    for b in calibration_bins(pairs):
        assert abs(b.difference) < 0.025, b
    summary = calibration(pairs)
    assert summary is not None and abs(summary.difference) < 0.01
    assert summary.brier == pytest.approx(1 / 6, abs=0.01)


def test_decile_intervals_resample_whole_deals() -> None:
    # one game per deal, many decisions in it: the decisions share the game's outcome, so
    # the interval must be as wide as the few deals make it, not as the many decisions
    rng = random.Random(11)
    by_deal = {}
    for deal in range(30):
        won = 1.0 if rng.random() < 0.45 else 0.0
        by_deal[deal] = [(0.45, won)] * 40 + [(0.95, 1.0)] * 3
    intervals = decile_intervals(by_deal)
    assert len(intervals) == 10
    assert all(intervals[i] is None for i in range(10) if i not in (4, 9))
    lo, hi = intervals[4]
    differences = [pairs[0][0] - pairs[0][1] for pairs in by_deal.values()]
    assert lo <= sum(differences) / len(differences) <= hi
    assert hi - lo > 0.25  # about 4 standard errors of a mean of 30 coin tosses
    assert intervals[9] == (pytest.approx(-0.05), pytest.approx(-0.05))
    assert decile_intervals({0: [(0.3, 1.0)] * 5})[3] is None


def test_the_decile_verdict_counts_noise_apart_from_misses() -> None:
    from bench_strength import decile_verdict

    bins = calibration_bins([(0.15, 0.0)] * 10 + [(0.52, 0.5)] * 10 + [(0.85, 1.0)] * 10)
    intervals = [None] * 10
    intervals[1] = (0.12, 0.18)  # a miss beyond the noise
    intervals[5] = (-0.02, 0.06)  # within, and decided
    intervals[8] = (-0.30, 0.10)  # a miss the games cannot tell from noise
    verdict = decile_verdict(bins, intervals)
    assert "within ±4 points: 1 of 3" in verdict
    assert "beyond the noise: 1" in verdict
    assert "band itself: 1" in verdict


def test_overconfidence_shows_as_a_positive_difference() -> None:
    pairs = [(0.8, 1.0), (0.8, 0.0), (0.8, 0.5), (0.8, 0.5)]
    summary = calibration(pairs)
    assert summary is not None
    assert summary.realised == pytest.approx(0.5)
    assert summary.difference == pytest.approx(0.3)


def test_bins_take_edges_upwards_and_keep_a_certain_estimate() -> None:
    table = calibration_bins([(0.0, 0.0), (0.1, 1.0), (0.999, 1.0), (1.0, 1.0)])
    assert [b.count for b in table] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert table[2].count == 0 and math.isnan(table[2].mean_estimate)
    assert (table[9].low, table[9].high) == pytest.approx((0.9, 1.0))


def test_no_pairs_no_calibration() -> None:
    assert calibration([]) is None


# --- intervals over deals -----------------------------------------------------------------------


def test_deal_bootstrap_of_constant_values_is_that_value() -> None:
    assert deal_bootstrap({0: [3.0, 3.0], 1: [3.0], 2: [3.0, 3.0, 3.0]}) == (3.0, 3.0)


def test_deal_bootstrap_brackets_the_mean_and_needs_two_deals() -> None:
    values = {d: [float(d % 4), float(d % 3)] for d in range(40)}
    lo, hi = deal_bootstrap(values) or (None, None)
    mean = sum(sum(v) for v in values.values()) / 80
    assert lo is not None and hi is not None and lo < mean < hi
    assert deal_bootstrap({0: [1.0, 2.0]}) is None
    assert deal_bootstrap({0: [1.0], 1: []}) is None


def test_bench_bootstrap_of_shares_is_the_deal_bootstrap() -> None:
    from bench_strength import bootstrap

    shares = {d: [1.0 if (d + r) % 3 == 0 else 0.0 for r in range(4)] for d in range(10)}
    assert bootstrap(shares) == deal_bootstrap(shares)
    assert bootstrap({0: [1.0]}) == (0.0, 1.0)


def test_paired_differences_compare_the_same_deal_and_seat() -> None:
    test = {(0, 0): 10.0, (0, 1): 0.0, (1, 0): -5.0, (1, 1): 4.0, (2, 0): 1.0}
    opponents = {(0, 0): [4.0, 6.0], (0, 1): [2.0], (1, 0): [-5.0], (1, 1): [0.0, 2.0]}
    assert paired_by_deal(test, opponents) == {0: [5.0, -2.0], 1: [0.0, 3.0]}
    figure = paired_figure(test, opponents)
    assert figure.test == pytest.approx((10 + 0 - 5 + 4) / 4)
    assert figure.opponents == pytest.approx((5 + 2 - 5 + 1) / 4)
    assert figure.difference == pytest.approx(1.5)
    assert figure.ci95 is not None and figure.ci95[0] <= 1.5 <= figure.ci95[1]


# --- good-weather bets ----------------------------------------------------------------------------


def test_bet_summary_counts_rates_and_values() -> None:
    bets = {
        0: [Bet(0, 0, True, 7), Bet(2, 3, False, -10)],
        1: [Bet(1, 3, False, 4)],
        2: [],
    }
    summary = summarise_bets(bets, seat_rounds=24, last_round=3)
    assert (summary.bets, summary.honoured, summary.last_round) == (3, 1, 2)
    assert summary.per_round == pytest.approx(3 / 24)
    assert summary.honoured_share == pytest.approx(1 / 3)
    assert summary.last_round_share == pytest.approx(2 / 3)
    assert summary.mean_value == pytest.approx(1 / 3)
    assert summary.ci95 is not None


STRONG_PILES = "B4 B5 B6 | B1 B2 B3 | R4 R5 R6"
"""Every blue and the high reds of a 2-player game, three blues in the first pile."""
WEAK_PILES = "R1 R2 R3 | G1 G2 G3 | G4 G5 G6"


def _one_sided_game(declare: dict[tuple[int, int], bool]) -> Game:
    """A 2-player game where seat 0 wins every trick of round 0 and seat 1 every trick
    after: the winner holds every blue, with three blues in its first pile, so it takes
    the first trick whoever leads and leads every trick after.

    Round 0's line is the three stars, three double leopards and three single spiders.
    """
    rules = RulesConfig(players=2)
    cards = rules.game_deck.cards

    def ids(card: SkyCard, n: int) -> list[int]:
        return [i for i, c in enumerate(cards) if c == card][:n]

    first_line = (
        ids(SkyCard(Kind.STAR, 1), 3)
        + ids(SkyCard(Kind.LEOPARD, 2), 3)
        + ids(SkyCard(Kind.SPIDER, 1), 3)
    )
    order = first_line + [i for i in range(len(cards)) if i not in first_line]
    game = Game(rules, seed=1, sky_order=order, auto_deal=False)
    for round_index in range(rules.spec.rounds):
        winner = 0 if round_index == 0 else 1
        piles = [STRONG_PILES if seat == winner else WEAK_PILES for seat in range(2)]
        game.deal([parse_cards(p.replace("|", " ")) for p in piles])
        for seat in range(2):
            game.apply(Allocate(parse_piles(piles[seat])), seat)
        for seat in range(2):
            game.apply(Declare(declare.get((seat, round_index), False)), seat)
        while game.phase.value == "play":
            move = game.legal_moves()[0]
            assert isinstance(move, Play)
            game.apply(move)
    assert game.is_over
    return game


def test_a_failed_bet_is_worth_the_cards_it_turned_face_down() -> None:
    game = _one_sided_game({(0, 0): True, (1, 0): True})
    assert all(t.winner == 0 for t in game.rounds[0].tricks)
    actual = game.result().scores[0]
    assert (actual.face_down, actual.total) == (-18, -18)
    face_up = rescore(game, {(0, 0)}).scores[0]
    # 3 stars, 6 leopards (30), 3 spiders (4), no candy: 34, and side A's star card twice that.
    assert (face_up.spider, face_up.leopard, face_up.star, face_up.total) == (4, 30, 68, 102)
    bets = bets_of(game)
    assert bets[0] == Bet(seat=0, round=0, honoured=False, value=-18 - 102)


def test_an_honoured_bet_is_worth_seven() -> None:
    game = _one_sided_game({(0, 0): True, (1, 0): True})
    assert game.result().scores[1].good_weather == 7
    assert bets_of(game)[1] == Bet(seat=1, round=0, honoured=True, value=7)
    assert len(bets_of(game)) == 2


def test_rescoring_with_nothing_withdrawn_is_the_game_result() -> None:
    for seed in range(6):
        players = 2 + seed % 4
        agents = [RandomAgent(seed * 10 + s) for s in range(players)]
        game = play_game(RulesConfig(players=players), agents, seed)
        assert rescore(game) == game.result()
        for bet in bets_of(game):
            if bet.honoured:
                assert bet.value == 7


# --- the benchmark's data flow ------------------------------------------------------------------


def test_play_one_keeps_the_search_agents_estimates_and_every_seats_stars() -> None:
    from bench_strength import Row, play_one

    row = Row("tiny", 2, "ismcts:iters=40", "heuristic")
    record = play_one((row, 5, 0, 1))
    assert record.rotation == 1 and record.rounds == 4
    assert record.estimates[0].round == 0 and record.estimates[0].phase == "allocate"
    assert all(0.0 <= e.win_probability <= 1.0 for e in record.estimates)
    assert len(record.stars) == len(record.star_points) == 2 and sum(record.stars) <= 3
    heuristic = play_one((Row("tiny", 2, "heuristic", "random"), 5, 0, 0))
    assert heuristic.estimates == ()


def test_star_summary_pairs_each_seat_with_its_opponents_on_the_same_deal() -> None:
    from bench_strength import GameRecord, star_summary

    def game(
        deal: int, rotation: int, stars: tuple[int, int], points: tuple[int, int]
    ) -> GameRecord:
        return GameRecord("r", deal, rotation, 0.0, 0.0, 0.0, 0.0, 4, (), (), stars, points)

    records = [
        game(0, 0, (3, 0), (40, 0)),  # test at seat 0: 3 stars; opponent at seat 1: none
        game(0, 1, (2, 1), (-5, 0)),  # opponent at seat 0: 2 stars; test at seat 1: 1
        game(1, 0, (0, 3), (0, 30)),
        game(1, 1, (0, 3), (0, 20)),
    ]
    summary = star_summary(records)
    assert (summary.three.test, summary.two.test) == pytest.approx((2 / 4, 0.0))
    assert summary.three.opponents == pytest.approx(1 / 4)
    assert summary.two.opponents == pytest.approx(1 / 4)
    assert summary.points.test == pytest.approx((40 + 0 + 0 + 20) / 4)
    assert summary.points.opponents == pytest.approx((-5 + 0 + 0 + 30) / 4)
    assert summary.points.difference == pytest.approx((45 + 0 + 0 - 10) / 4)


def test_zoo_rows_exist_but_run_only_when_asked() -> None:
    from bench_strength import build_rows, select

    rows = build_rows(100, (10, 100))
    zoo = [r.name for r in rows if r.group == "zoo"]
    bots = ("cautious", "leopards", "stars", "trumps", "bettor")
    assert zoo == [f"ismcts-vs-zoo-{bot}-4p" for bot in bots]
    assert {r.opponent_set for r in rows if r.group == "zoo"} == {"tuning", "held-out"}
    assert next(r for r in rows if r.name == zoo[0]).opponent_set == "tuning"
    assert not any(r.group == "zoo" for r in select(rows, None))
    assert [r.name for r in select(rows, ["zoo"])] == zoo
    assert [r.name for r in select(rows, ["ismcts-vs-heuristic-2p"], zoo=True)] == [
        "ismcts-vs-heuristic-2p",
        *zoo,
    ]


def test_the_outsider_rows_run_only_when_asked() -> None:
    from bench_strength import build_rows, select

    rows = build_rows(100, (10, 100))
    assert not any(r.group == "outsider" for r in select(rows, None))
    chosen = select(rows, ["outsider"])
    assert [r.name for r in chosen] == [
        f"outsider-{name}-{sides}-4p" for name in ("counter", "hunter") for sides in ("AAAA", "BBBB")
    ]
    assert {(r.test, r.opponent, r.sides) for r in chosen} == {
        ("ismcts:normal", f"outsider:{name}", sides) for name in ("counter", "hunter") for sides in ("AAAA", "BBBB")
    }


def test_the_efficiency_rows_pair_the_normal_level_with_the_old_strong() -> None:
    from bench_strength import bench_agent, build_rows, paired_outcomes, select

    rows = build_rows(100, (10, 100))
    assert not any(r.group == "efficiency" for r in select(rows, None))
    normal, old = select(rows, ["efficiency"])
    assert (normal.test, old.test) == ("ismcts:normal", "playouts:iters=50000")
    quick = [r.test for r in build_rows(10, (10,), quick=True) if r.group == "efficiency"]
    assert quick == ["ismcts:fast", "playouts:iters=5000"]
    agent = bench_agent(old.test, 1)
    assert agent.config.value_horizon == (0, 0, 0, 0)  # type: ignore[attr-defined]
    assert agent.limit.iterations == 50_000  # type: ignore[attr-defined]
    with pytest.raises(AgentSpecError):
        bench_agent("playouts:iters=x", 1)

    figure = paired_outcomes(
        _outcome(normal, {(0, 0): 1.0, (0, 1): 0.0, (1, 0): 1.0, (1, 1): 0.5}),
        _outcome(old, {(0, 0): 0.0, (0, 1): 0.0, (1, 0): 1.0, (1, 1): 1.0}),
    )
    assert (figure.test, figure.opponents) == pytest.approx((0.625, 0.5))
    assert figure.difference == pytest.approx(0.125)


def _outcome(row: object, shares: dict[tuple[int, int], float]) -> object:
    """An Outcome of ROW with one game a (deal, seat) at the given win shares."""
    from bench_strength import GameRecord, Outcome

    out = Outcome(row)  # type: ignore[arg-type]
    for (deal, seat), share in shares.items():
        out.records.append(GameRecord("r", deal, seat, share, 0.0, 0.0, 1.0, 4, (), (), (0,) * 4, (0,) * 4))
        out.shares.setdefault(deal, []).append(share)
    return out


def test_the_curve_verdict_pairs_the_budgets_and_reads_the_target_literally() -> None:
    from bench_strength import build_rows, curve_verdict

    low_row, high_row = (r for r in build_rows(100, (3000, 30000)) if r.group == "curve")
    rng = random.Random(5)
    cells = [(deal, seat) for deal in range(60) for seat in range(4)]
    low = {cell: 1.0 if rng.random() < 0.3 else 0.0 for cell in cells}
    # the top budget wins every game the bottom one won, and a few more: paired above zero
    close = {cell: 1.0 if low[cell] or rng.random() < 0.1 else 0.0 for cell in cells}
    text = curve_verdict((3000, _outcome(low_row, low)), (30000, _outcome(high_row, close)))
    assert text.startswith("30,000 against 3,000 iterations on the same games: paired +")
    assert text.endswith("30,000's interval above 3,000's: not met")
    paired = text.split("paired ")[1].split(" points (")[1].split(")")[0]
    assert float(paired.split("..")[0]) > 0
    far = {cell: 1.0 if low[cell] or rng.random() < 0.6 else 0.0 for cell in cells}
    text = curve_verdict((3000, _outcome(low_row, low)), (30000, _outcome(high_row, far)))
    assert text.endswith("3,000's: met")
