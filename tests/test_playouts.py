"""The core's fast random playouts play exactly what uniformly random legal moves would.

The playout path (random deals and allocations in one pass, trick loops on local piles with
cheap picks for the last two tricks of a group) is a separate implementation of the rules;
here its outcome frequencies are checked against exact enumeration of the slow, checked path
(`CoreState.play` with every legal card equally likely), by chi-square."""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from csl_ai import _core
from csl_ai.game import Game
from csl_ai.rules import RulesConfig
from gamegen import PLAYERS, chi_square_p, random_rules, step

Outcome = tuple[tuple[int, ...], ...]


def outcome(core: _core.CoreState) -> Outcome:
    """What a finished game left behind: elements, face-up and face-down cards, weather."""
    return (
        tuple(k for row in core.elements for k in row),
        core.faceup_cards,
        core.facedown_cards,
        core.good_weather,
    )


def exact_outcomes(core: _core.CoreState) -> dict[Outcome, Fraction]:
    """The exact outcome distribution when every remaining card play is a uniformly random
    legal card, by walking every play through the checked rules path."""
    if core.is_over:
        return {outcome(core): Fraction(1)}
    legal = core.legal_plays()
    cards = [c for c in range(36) if legal >> c & 1]
    dist: dict[Outcome, Fraction] = {}
    for card in cards:
        child = core.copy()
        assert child.play(card) == 0
        for key, p in exact_outcomes(child).items():
            dist[key] = dist.get(key, Fraction(0)) + p / len(cards)
    return dist


def last_round_position(players: int, seed: int, tricks_left: int, in_trick: int) -> _core.CoreState:
    """A random game's core state in its last round's play phase, with tricks_left tricks to go
    and in_trick cards already played to the current trick."""
    rng = random.Random(seed)
    game = Game(random_rules(rng, players), seed=seed)
    core = game.core
    while True:
        if core.phase == "play" and core.round == core.n_rounds - 1:
            played = core.line_pos
            if core.line_size - played == tricks_left and len([c for c in core.trick_cards if c >= 0]) == in_trick:
                return core.copy()
        assert not game.is_over, "the position was stepped over"
        step(game, rng)


def sampled_outcomes(core: _core.CoreState, n: int, seed: int) -> Counter[Outcome]:
    counts: Counter[Outcome] = Counter()
    for i in range(n):
        world = core.copy()
        world.play_random(seed * 1_000_003 + i)
        counts[outcome(world)] += 1
    return counts


def chi_square(counts: Counter[Outcome], dist: dict[Outcome, Fraction], n: int) -> tuple[float, int]:
    """Pearson's statistic and its degrees of freedom, rare outcomes (expected < 5) pooled."""
    assert set(counts) <= set(dist), "the playout reached an outcome the rules do not allow"
    stat, bins, pooled_obs, pooled_exp = 0.0, 0, 0, 0.0
    for key, p in dist.items():
        expected = float(p) * n
        if expected < 5:
            pooled_obs += counts.get(key, 0)
            pooled_exp += expected
            continue
        stat += (counts.get(key, 0) - expected) ** 2 / expected
        bins += 1
    if pooled_exp > 0:
        stat += (pooled_obs - pooled_exp) ** 2 / pooled_exp
        bins += 1
    return stat, max(bins - 1, 1)


@pytest.mark.parametrize("players", PLAYERS)
@pytest.mark.parametrize(("tricks_left", "in_trick"), [(3, 0), (2, 0), (2, 1)])
def test_random_round_matches_uniform_legal_play(players: int, tricks_left: int, in_trick: int) -> None:
    """From the last tricks of a game (every pile size the fast loop special-cases, and a
    trick in progress), play_random's outcomes have the exact distribution."""
    core = last_round_position(players, seed=100 * players + 10 * tricks_left + in_trick,
                               tricks_left=tricks_left, in_trick=in_trick)
    dist = exact_outcomes(core)
    assert sum(dist.values()) == 1
    n = 20_000
    counts = sampled_outcomes(core, n, seed=players)
    stat, dof = chi_square(counts, dist, n)
    assert chi_square_p(stat, dof) > 1e-4, (stat, dof, len(dist))


def test_the_frequency_check_can_fail() -> None:
    """A playout that always led its lowest legal card is caught: the same check, fed the
    outcomes of a lowest-card policy, rejects the uniform distribution."""
    core = last_round_position(4, seed=7, tricks_left=3, in_trick=0)
    dist = exact_outcomes(core)
    counts: Counter[Outcome] = Counter()
    for _ in range(6000):
        world = core.copy()
        while not world.is_over:
            legal = world.legal_plays()
            world.play((legal & -legal).bit_length() - 1)
        counts[outcome(world)] += 1
    stat, dof = chi_square(counts, dist, 6000)
    assert len(dist) > 1 and chi_square_p(stat, dof) < 1e-6


def test_random_games_end_with_conserved_cards() -> None:
    """Whole random games through the fast path: every sky card of the line goes to a seat,
    face up or face down, and the core reports a winner."""
    for players in PLAYERS:
        for seed in range(50):
            rules = RulesConfig(players=players)
            core = Game(rules, seed=seed).core.copy()
            core.play_random(seed)
            assert core.is_over
            assert sum(core.faceup_cards) + sum(core.facedown_cards) == core.line_size * core.n_rounds
            assert core.winners() != 0
