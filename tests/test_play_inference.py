"""Play inference: each world's weight is how likely the others' card plays of the round
are in it under their model, computed by replaying the round in C; the pool the search
draws from is resampled by those weights, stays consistent with what the searcher saw,
and never stalls."""

from __future__ import annotations

import dataclasses
import math
import random
from statistics import mean
from typing import NamedTuple

import pytest

from csl_ai.agents import make_agent
from csl_ai.game import Game, Observation
from csl_ai.heuristic import _beats, _trick_best
from csl_ai.moves import Play
from csl_ai.notation import card_colour
from csl_ai.policy import card_features
from csl_ai.rules import RulesConfig
from csl_ai.search import (
    SearchConfig,
    SearchLimit,
    SearchSettingsError,
    _engine,
    _round_plays,
    heuristic_move,
    infer_worlds,
    policy_settings,
    search,
    world_sampler,
)
from worldcheck import check_world, known

RULES_BOT = SearchConfig(playout_epsilon=0.0)
FITTED_WEIGHTS = (0.9, -0.6, 0.1, 0.0, -0.1, 0.9, 0.0, 0.9, 0.4, -2.6, 0.5, 0.2, 0.7, -0.6, -0.2, -2.5)
"""A play model with every kind of feature weighted (about the 4-player fit)."""


def softmax_chance(obs: Observation, card: int, weights: tuple[float, ...]) -> float:
    cards, rows = card_features(obs, policy_settings(obs, SearchConfig()))
    scores = [sum(w * f for w, f in zip(weights, row, strict=True)) for row in rows]
    top = max(scores)
    mass = [math.exp(v - top) for v in scores]
    return mass[cards.index(card)] / sum(mass)


class Choice(NamedTuple):
    """One of the others' card plays with a choice, as the models see it."""

    seat: int
    legal: int
    rules_card: bool
    """Whether it was the rules' own card."""
    same_class: int
    """How many legal cards take the trick so far exactly when the rules' card would
    (all of them for a lead), or 0 if the card played is not one of them."""
    fitted: float
    """The chance of the card played under the softmax with FITTED_WEIGHTS, from the
    seat's own features (csl_ai.policy.card_features)."""


def trick_class(card: int, legal: list[int], plays: list[int]) -> list[int]:
    """The legal cards that take the trick so far exactly when card would."""
    if not plays:
        return legal
    best, led = _trick_best(plays), card_colour(plays[0])
    return [c for c in legal if _beats(c, best, led) == _beats(card, best, led)]


def noisy_rules_game(
    players: int, tricks: int, seed: int, noise: float = 0.3
) -> tuple[Observation, Game, list[Choice]]:
    """Seat 0 (the heuristic agent) to play with a choice, at least `tricks` tricks into a
    round where the others play the rules' card, or with chance `noise` any legal card.
    Also the game and each of the others' plays of the round with a choice."""
    rng = random.Random(seed)
    me = make_agent("heuristic", seed)
    game = Game(RulesConfig(players=players), seed=seed)
    record: list[Choice] = []
    current_round = 0
    while not game.is_over:
        seat = game.to_move
        obs = game.observation(seat)
        if len(game.rounds) != current_round:
            current_round = len(game.rounds)
            record = []
        if game.phase.value == "play" and seat == 0:
            if len(obs.current.tricks) >= tricks and len(obs.legal_moves()) > 1:
                return obs, game, record
            game.apply(me.act(obs), seat)
            continue
        if seat == 0:
            game.apply(me.act(obs), seat)
            continue
        rule = heuristic_move(obs, 0, RULES_BOT)
        move = rule
        if game.phase.value == "play":
            legal = obs.legal_moves()
            if rng.random() < noise:
                move = rng.choice(legal)
            if len(legal) > 1:
                cards = [m.card for m in legal]
                trick = obs.current.tricks[-1] if obs.current.tricks else None
                plays = [c for _, c in trick.plays] if trick is not None and not trick.complete else []
                same = trick_class(rule.card, cards, plays)
                played_same = move.card in same
                record.append(Choice(
                    seat, len(legal), move == rule, len(same) if played_same else 0,
                    softmax_chance(obs, move.card, FITTED_WEIGHTS),
                ))
        game.apply(move, seat)
    raise AssertionError("no such position in the seeded game")


def inference_engine(obs: Observation, config: SearchConfig, pool: int = 256, seed: int = 1):
    """The engine with its pool drawn by play inference (and config's allocation inference)."""
    config = dataclasses.replace(config, play_inference=(obs.players,), inference_pool=pool)
    engine = _engine(obs, config)
    return engine, infer_worlds(engine, obs, config, seed)


@pytest.mark.parametrize("model", ["card", "class", "fitted"])
@pytest.mark.parametrize(("players", "seed", "randomness"), [(4, 3, 0.0), (4, 8, 0.3), (3, 5, 0.0), (5, 6, 0.2), (2, 4, 0.0)])
def test_the_true_world_scores_as_its_plays_say(players: int, seed: int, randomness: float, model: str) -> None:
    """The C replay of the round in the world actually dealt gives, play by play, the
    mixture's chance of the card played: r / k + (1 - r) (t / k + (1 - t) [rules' card]),
    or with the class model (1 - t) [same class] / (cards of that class), or with the
    fitted model the softmax's chance of the card from the seat's own features then."""
    obs, game, record = noisy_rules_game(players, 5, seed)
    config = SearchConfig(
        opponent_beliefs="fixed", opponent_randomness=randomness, play_tremble=0.4, play_model=model,
        play_weights=(FITTED_WEIGHTS,) * 4,
    )
    engine, _ = inference_engine(obs, config)
    r, t = randomness, config.play_tremble

    def chance(play: Choice) -> float:
        if model == "fitted":
            sensible = play.fitted
        else:
            sensible = play.rules_card if model == "card" else (1 / play.same_class if play.same_class else 0.0)
        return (r + (1 - r) * t) / play.legal + (1 - r) * (1 - t) * sensible

    assert record
    assert any(not p.rules_card for p in record)
    assert engine.play_log_likelihood(game.core) == pytest.approx(sum(math.log(chance(p)) for p in record), abs=1e-9)


def test_the_pool_leans_toward_worlds_that_explain_the_plays() -> None:
    """Resampling raises the mean log-likelihood of the drawn worlds above the sampler's,
    by about what importance weights over the sampler's worlds predict."""
    obs, _game, _record = noisy_rules_game(4, 7, 21, noise=0.0)
    config = SearchConfig(opponent_beliefs="fixed", opponent_randomness=0.0, inference_oversample=8)
    engine, on = inference_engine(obs, config, pool=4096, seed=2)
    assert on
    assert 1.0 <= engine.pool_ess <= 4096 * 8
    drawn = [engine.play_log_likelihood(w) for w in engine.draw_worlds(4000, 3)]
    plain = [engine.play_log_likelihood(w) for w in world_sampler(obs).sample(20000, 5)]
    top = max(plain)
    weights = [math.exp(v - top) for v in plain]
    expected = sum(w * v for w, v in zip(weights, plain, strict=True)) / sum(weights)
    assert mean(drawn) > mean(plain) + 0.2
    assert mean(drawn) == pytest.approx(expected, abs=0.15)


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_drawn_worlds_fit_the_observation(players: int) -> None:
    """Every world in the resampled pool is one the exact sampler could give."""
    obs, game, _record = noisy_rules_game(players, 3, 30 + players)
    config = SearchConfig(opponent_beliefs="fixed", opponent_randomness=0.0, allocation_inference=(2,))
    engine, _ = inference_engine(obs, config, pool=128)
    expected = known(game, 0)
    for world in engine.draw_worlds(200, 5):
        check_world(world, obs, expected)


def test_random_seats_weigh_every_world_alike_at_equal_choice() -> None:
    """A seat believed random scores 1/k whatever card it played: the weights then only
    count the choices each world offered, never which card was the rules' one."""
    obs, game, record = noisy_rules_game(4, 6, 12)
    config = SearchConfig(opponent_beliefs="fixed", opponent_randomness=1.0)
    engine, _ = inference_engine(obs, config)
    assert engine.play_log_likelihood(game.core) == pytest.approx(
        -sum(math.log(p.legal) for p in record), abs=1e-9
    )


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_a_seeded_search_with_play_inference_repeats_itself(players: int) -> None:
    obs, _game, _record = noisy_rules_game(players, 2, 40 + players)
    config = SearchConfig(play_inference=(2, 3, 4, 5), inference_pool=256)
    first = search(obs, SearchLimit(iterations=600, seed=9), config)
    again = search(obs, SearchLimit(iterations=600, seed=9), config)
    assert first.best_move in obs.legal_moves()
    assert [(m.move, m.visits) for m in first.moves] == [(m.move, m.visits) for m in again.moves]


def test_the_first_trick_of_a_round_needs_no_pool() -> None:
    """No card played yet this round: nothing to weigh, and the search still answers."""
    game = Game(RulesConfig(players=4), seed=3)
    agents = [make_agent("heuristic", s) for s in range(4)]
    while not (game.phase.value == "play" and game.to_move == 0 and not game.observation(0).current.tricks):
        seat = game.to_move
        game.apply(agents[seat].act(game.observation(seat)), seat)
    obs = game.observation(0)
    assert _round_plays(obs) == []
    result = search(obs, SearchLimit(iterations=300, seed=1), SearchConfig(play_inference=(4,)))
    assert isinstance(result.best_move, Play)


def test_play_inference_settings_are_checked() -> None:
    with pytest.raises(SearchSettingsError, match="play_inference"):
        SearchConfig(play_inference=(6,))
    with pytest.raises(SearchSettingsError, match="play_tremble"):
        SearchConfig(play_tremble=0.0)
    with pytest.raises(SearchSettingsError, match="play_tremble"):
        SearchConfig(play_tremble=math.nan)
    with pytest.raises(SearchSettingsError, match="play_model"):
        SearchConfig(play_model="exact")  # type: ignore[arg-type]
    with pytest.raises(SearchSettingsError, match="inference_oversample"):
        SearchConfig(inference_oversample=0)
    with pytest.raises(SearchSettingsError, match="play_weights"):
        SearchConfig(play_weights=(FITTED_WEIGHTS,) * 3)
    with pytest.raises(SearchSettingsError, match="play_weights"):
        SearchConfig(play_weights=(FITTED_WEIGHTS[:-1],) * 4)
    with pytest.raises(SearchSettingsError, match="play_weights"):
        SearchConfig(play_weights=((math.inf,) * len(FITTED_WEIGHTS),) * 4)
    with pytest.raises(SearchSettingsError, match="262144"):
        SearchConfig(play_inference=(4,), inference_pool=65536, inference_oversample=8)
    assert SearchConfig(play_inference=[5, 3, 3]).play_inference == (3, 5)
    engine = _engine(noisy_rules_game(4, 1, 3)[0], SearchConfig())
    with pytest.raises(ValueError, match="plays"):
        engine.set_round_record([[0] * 3] * 4, [[0] * 3] * 4, [(9, 1)])
    with pytest.raises(ValueError, match="weights"):
        engine.set_play_inference(0.1, 4, False, FITTED_WEIGHTS[:-1])


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_the_shipped_play_model_explains_sensible_plays_better_than_the_rules(players: int) -> None:
    """On games the fit never saw, the default fitted model (with its tremble) gives the
    heuristic agent's card plays a higher likelihood than the rules' own card does (with
    the tremble it needs), and both stay finite."""
    config = SearchConfig()
    weights = config.play_weights[players - 2]
    fitted = rules = 0.0
    count = 0
    for seed in (501, 502, 503):
        game = Game(RulesConfig(players=players), seed=seed)
        agents = [make_agent("heuristic", seed * 10 + s) for s in range(players)]
        while not game.is_over:
            seat = game.to_move
            obs = game.observation(seat)
            move = agents[seat].act(obs)
            if isinstance(move, Play) and len(obs.legal_moves()) > 1:
                k = len(obs.legal_moves())
                is_rule = heuristic_move(obs, 0, RULES_BOT) == move
                fitted += math.log(config.play_tremble / k + (1 - config.play_tremble) * softmax_chance(obs, move.card, weights))
                rules += math.log(0.5 / k + 0.5 * is_rule)
                count += 1
            game.apply(move, seat)
    assert count > 50
    assert fitted / count > rules / count + 0.05
