"""The world sampler: every world is consistent with the observation, and worlds are drawn
exactly uniformly (chi-square against exact enumeration on small positions).

The constraints are recomputed from the game's own history (tests/worldcheck.py),
independently of `PublicView`, so the sampler is checked against the rules rather than
against itself.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator

import pytest

from csl_ai import _core
from csl_ai.errors import InvalidPositionError
from csl_ai.game import Game, Observation, Phase
from csl_ai.rules import PLAYER_SPECS, RulesConfig
from csl_ai.search import SearchSettingsError, sample_worlds, world_sampler
from gamegen import chi_square_p, drive
from worldcheck import Known, check_world, colour_mask, known, popcount


def deciding_seat(game: Game, rng: random.Random) -> int:
    """A seat that has a decision to make now."""
    return rng.choice(game.pending_seats())


def positions(players: int, count: int, seed: int) -> Iterator[tuple[Game, int]]:
    """Random positions (game, deciding seat) of every phase for one player count."""
    rng = random.Random(seed)
    spec = PLAYER_SPECS[players]
    length = spec.rounds * (2 * players + players * spec.hand_size)
    made = 0
    while made < count:
        game = drive(players, rng.randrange(1 << 30), rng.randrange(length))
        if game.is_over:
            continue
        made += 1
        yield game, deciding_seat(game, rng)


@pytest.mark.parametrize("players", sorted(PLAYER_SPECS))
def test_every_world_is_consistent(players: int) -> None:
    phases: Counter[str] = Counter()
    for game, seat in positions(players, 60, seed=players):
        obs = game.observation(seat)
        k = known(game, seat)
        phases[obs.phase.value] += 1
        for world in sample_worlds(obs, 25, seed=players):
            check_world(world, obs, k)
            if obs.phase is Phase.PLAY:
                world.copy().play_random(7)
    assert phases["play"] > 0 and phases["allocate"] + phases["weather"] > 0


@pytest.mark.parametrize("players", sorted(PLAYER_SPECS))
def test_sampled_worlds_play_on_legally(players: int) -> None:
    """A sampled world in the trick phase is a real game state: the observer's legal plays
    are those of its view, and the game can be finished under the rules."""
    for game, seat in positions(players, 20, seed=100 + players):
        if game.phase is not Phase.PLAY:
            continue
        obs = game.observation(game.to_move)
        for world in sample_worlds(obs, 10, seed=3):
            assert world.legal_plays() == obs.public_view().core.legal_plays()
            finished = world.copy()
            finished.play_random(11)
            assert finished.is_over


def test_the_true_world_satisfies_the_checks() -> None:
    """The constraints used above accept the real deal (so they are not vacuous or wrong)."""
    for game, _seat in positions(4, 40, seed=9):
        if game.phase is not Phase.PLAY:
            continue
        seat = game.to_move
        obs = game.observation(seat)
        check_world(game.core, obs, known(game, seat))


def test_same_seed_same_worlds_and_seed_matters() -> None:
    game = drive(4, 5, 20)
    obs = game.observation(game.to_move)
    a = [w.to_bytes() for w in sample_worlds(obs, 50, 1)]
    b = [w.to_bytes() for w in sample_worlds(obs, 50, 1)]
    c = [w.to_bytes() for w in sample_worlds(obs, 50, 2)]
    assert a == b and a != c
    assert len(set(a)) > 40


def test_bad_arguments() -> None:
    obs = drive(4, 5, 20).observation(0)
    with pytest.raises(SearchSettingsError, match="n must be"):
        sample_worlds(obs, -1, 0)
    with pytest.raises(SearchSettingsError, match="seed must be"):
        sample_worlds(obs, 1, -3)


def test_inconsistent_observation_is_an_invalid_position(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view whose voids leave no colour for a hidden pile has no world."""
    game = drive(4, 8, 30)
    seat = game.to_move
    obs = game.observation(seat)
    view = obs.public_view()
    other = (seat + 1) % 4
    voids = [list(row) for row in view.voids]
    voids[other] = [7] * len(voids[other])
    bad = dataclasses.replace(view, voids=tuple(tuple(v) for v in voids))
    monkeypatch.setattr(Observation, "public_view", lambda self: bad)
    with pytest.raises(InvalidPositionError, match=f"seat {seat}"):
        world_sampler(obs)


# --- exact uniformity --------------------------------------------------------------------------


def enumerate_worlds(k: Known, seat: int, players: int) -> list[tuple[int, ...]]:
    """Every placement of the unseen cards into the hidden piles and the set-aside card that
    respects the pile sizes and the voids, as (pile masks of other seats..., set-aside)."""
    slots: list[tuple[int, int]] = []
    for s in range(players):
        if s == seat:
            continue
        for g, size in enumerate(k.remaining[s]):
            forbidden = 0
            for colour in range(3):
                if (k.voids[s][g] >> colour) & 1:
                    forbidden |= colour_mask(colour)
            slots.append((size, forbidden))
    slots.append((k.aside, 0))
    cards = [c for c in range(36) if (k.unseen >> c) & 1]
    out: list[tuple[int, ...]] = []

    def place(i: int, left: list[int], acc: tuple[int, ...]) -> None:
        if i == len(slots):
            out.append(acc)
            return
        size, forbidden = slots[i]
        allowed = [c for c in left if not (forbidden >> c) & 1]
        for combo in itertools.combinations(allowed, size):
            mask = sum(1 << c for c in combo)
            place(i + 1, [c for c in left if not (mask >> c) & 1], acc + (mask,))

    place(0, cards, ())
    return out


def world_key(world: _core.CoreState, seat: int) -> tuple[int, ...]:
    key: list[int] = []
    for s in range(world.players):
        if s != seat:
            key.extend(world.piles[s])
    key.append(world.set_aside)
    return tuple(key)


def small_positions(players: int, want: int) -> Iterator[tuple[Game, int, list[tuple[int, ...]]]]:
    """Trick-phase positions with a few dozen to a few hundred worlds, some with voids."""
    found = 0
    for seed in range(5000):
        game = drive(players, seed, random.Random(seed).randrange(2 * players + 1, 400))
        if game.is_over or game.phase is not Phase.PLAY:
            continue
        seat = game.to_move
        obs = game.observation(seat)
        if not 12 <= world_sampler(obs).worlds <= 400:
            continue
        k = known(game, seat)
        if not any(any(row) for row in k.voids):
            continue
        worlds = enumerate_worlds(k, seat, players)
        yield game, seat, worlds
        found += 1
        if found == want:
            return
    raise AssertionError(f"no small {players}-player position found")


@pytest.mark.parametrize("players", sorted(PLAYER_SPECS))
def test_frequencies_match_exact_enumeration(players: int) -> None:
    for game, seat, worlds in small_positions(players, 2):
        obs = game.observation(seat)
        sampler = world_sampler(obs)
        assert sampler.worlds == len(worlds)
        n = 150 * len(worlds)
        counts = Counter(world_key(w, seat) for w in sampler.sample(n, 12345))
        assert set(counts) <= set(worlds)
        expected = n / len(worlds)
        stat = sum((counts.get(w, 0) - expected) ** 2 / expected for w in worlds)
        p = chi_square_p(stat, len(worlds) - 1)
        assert p > 1e-4, (players, len(worlds), stat, p)


def test_sampler_is_not_uniform_over_unconstrained_deals() -> None:
    """The chi-square test can fail: worlds that ignore voids are rejected by it."""
    for game, seat, worlds in small_positions(4, 20):
        k = known(game, seat)
        free = Known(**{**dataclasses.asdict(k), "voids": [[0] * 3 for _ in range(4)]})
        unconstrained = enumerate_worlds(free, seat, 4)
        if len(unconstrained) > len(worlds):
            break
    else:
        raise AssertionError("no small 4-player position where the voids rule out worlds")
    rng = random.Random(1)
    n = 150 * len(unconstrained)
    counts = Counter(rng.choice(unconstrained) for _ in range(n))
    expected = n / len(worlds)
    stat = sum((counts.get(w, 0) - expected) ** 2 / expected for w in worlds)
    assert chi_square_p(stat, len(worlds) - 1) < 1e-6


def test_allocation_phase_hands_are_uniform() -> None:
    """Three players, observer allocating: 12 unseen cards into two hands of 6 (924 deals)."""
    game = Game(RulesConfig(players=3), seed=4)
    obs = game.observation(1)
    sampler = world_sampler(obs)
    assert sampler.worlds == math.comb(12, 6)
    n = 60 * 924
    counts = Counter(w.hands[0] for w in sampler.sample(n, 99))
    assert len(counts) == 924
    expected = n / 924
    stat = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi_square_p(stat, 923) > 1e-4


def test_unseen_sky_order_is_uniform() -> None:
    game = Game(RulesConfig(players=4), seed=6)
    obs = game.observation(0)
    seen = len(game.rounds[0].line)
    counts = Counter(w.sky_order[seen] for w in sample_worlds(obs, 27 * 300, 5))
    unseen = set(range(36)) - set(game.rounds[0].line)
    assert set(counts) == unseen
    expected = 300
    stat = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi_square_p(stat, 26) > 1e-4


def test_weather_phase_gives_the_others_random_piles() -> None:
    game = Game(RulesConfig(players=4), seed=2)
    rng = random.Random(2)
    for seat in range(4):
        game.apply(rng.choice(game.legal_moves(seat)), seat)
    obs = game.observation(3)
    assert obs.phase is Phase.WEATHER
    k = known(game, 3)
    for world in sample_worlds(obs, 20, 4):
        check_world(world, obs, k)
        assert world.phase == "weather"
        assert world.allocated_mask == 0b1111 and world.weather_done_mask == 0
        for s in range(3):
            assert [popcount(p) for p in world.piles[s]] == [3, 3, 3]


def test_seats_that_have_allocated_get_piles_the_others_hands() -> None:
    """Observer done allocating while seat 1 still chooses: seat 1 holds a whole hand, the
    seats that have (secretly) allocated hold random piles."""
    game = Game(RulesConfig(players=4), seed=3)
    rng = random.Random(3)
    for seat in (0, 2, 3):
        game.apply(rng.choice(game.legal_moves(seat)), seat)
    obs = game.observation(0)
    assert obs.phase is Phase.ALLOCATE and obs.legal_moves() == []
    k = known(game, 0)
    for world in sample_worlds(obs, 30, 4):
        check_world(world, obs, k)
        assert world.allocated_mask == 0b1101
        assert world.piles[1] == (0, 0, 0) and popcount(world.hands[1]) == 9
        for s in (2, 3):
            assert [popcount(p) for p in world.piles[s]] == [3, 3, 3]
