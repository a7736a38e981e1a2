"""The learned card policy: its features, its file, the fit, the playouts that use it, and
a small expert-iteration run through the self-play harness."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from csl_ai import _core
from csl_ai.agents import make_agent
from csl_ai.cli import app
from csl_ai.game import Game, Phase
from csl_ai.heuristic import beats, trick_best
from csl_ai.notation import card_colour
from csl_ai.policy import (
    CARD_FEATURES,
    CardPolicy,
    Example,
    PolicyFileError,
    card_features,
    cross_entropy,
    fit,
    rules_policy,
)
from csl_ai.rules import RulesConfig
from csl_ai.search import SearchConfig, SearchLimit, heuristic_move, policy_settings, search
from csl_ai.search.setup import prepared_engine
from csl_ai.tournament.harness import RunOptions
from csl_ai.tournament.runner import TournamentError
from csl_ai.tournament.train import TrainConfig, train


def card_positions(players: int = 4, seeds: range = range(3)):
    """Every card decision with a choice of some seeded heuristic games (observations)."""
    rules = RulesConfig(players=players)
    for seed in seeds:
        agents = [make_agent("heuristic", seed * 7 + s) for s in range(players)]
        game = Game(rules, seed=seed)
        while not game.is_over:
            seat = game.to_move
            obs = game.observation(seat)
            if game.phase is Phase.PLAY and len(game.legal_moves(seat)) > 1:
                yield obs
            game.apply(agents[seat].act(obs), seat)


def test_features_describe_each_legal_card_and_the_rules_choice() -> None:
    config = SearchConfig(playout_epsilon=0.0)
    seen = 0
    for obs in card_positions():
        cards, rows = card_features(obs, policy_settings(obs, config))
        assert sorted(cards) == sorted(m.card for m in obs.legal_moves())
        assert all(len(r) == len(CARD_FEATURES) for r in rows)
        rule = CARD_FEATURES.index("rule")
        flagged = [c for c, r in zip(cards, rows, strict=True) if r[rule] == 1.0]
        assert flagged == [heuristic_move(obs, 0, config).card]
        wins = CARD_FEATURES.index("wins")
        trick = obs.current.tricks[-1] if obs.current.tricks else None
        if trick is None or trick.complete:
            assert all(r[wins] == 0 for r in rows), "a lead beats nothing yet"
        else:
            played = [card for _seat, card in trick.plays]
            best = trick_best(played)
            assert best is not None
            for card, row in zip(cards, rows, strict=True):
                assert row[wins] == float(beats(card, best, card_colour(played[0])))
        seen += 1
    assert seen > 50


def synthetic_examples(weights: np.ndarray, n: int, seed: int) -> list[Example]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(2, 6))
        f = rng.integers(0, 2, size=(k, len(CARD_FEATURES))).astype(float)
        s = f @ weights
        p = np.exp(s - s.max())
        out.append(Example(f, p / p.sum()))
    return out


def test_fit_recovers_the_weights_behind_the_targets() -> None:
    truth = np.linspace(-1.5, 1.5, len(CARD_FEATURES))
    examples = synthetic_examples(truth, 3000, 1)
    weights, loss = fit(examples, l2=1e-6)
    assert np.allclose(weights, truth, atol=0.05)
    assert loss == pytest.approx(cross_entropy(truth, examples), abs=1e-3)
    assert cross_entropy(np.zeros(len(CARD_FEATURES)), examples) > loss + 0.05


def test_policy_file_round_trips_and_bad_files_are_refused(tmp_path: Path) -> None:
    policy = CardPolicy(tuple(float(i) / 10 for i in range(len(CARD_FEATURES))), {"seed": 3})
    path = tmp_path / "p.json"
    policy.save(path)
    assert CardPolicy.load(path) == CardPolicy(policy.weights, {"seed": 3})
    data = json.loads(path.read_text())
    for broken in (
        {**data, "weights": data["weights"][:-1]},
        {**data, "weights": [*data["weights"][:-1], "x"]},
        {**data, "features": list(reversed(data["features"]))},
        {**data, "version": 99},
        [1, 2],
    ):
        path.write_text(json.dumps(broken))
        with pytest.raises(PolicyFileError):
            CardPolicy.load(path)
    path.write_text("{")
    with pytest.raises(PolicyFileError, match="not JSON"):
        CardPolicy.load(path)
    with pytest.raises(PolicyFileError, match="cannot read"):
        CardPolicy.load(tmp_path / "missing.json")
    assert len(CardPolicy.shipped().weights) == len(CARD_FEATURES)


def test_playouts_with_a_sharp_rules_policy_play_the_rules() -> None:
    """A learned policy that puts all its weight on the rules' card plays exactly as the
    rules with no randomness: the same cards for the rest of the round (later deals differ,
    since the softmax draws from the random stream)."""
    obs = next(iter(card_positions(seeds=range(1))))
    world = prepared_engine(obs, SearchConfig()).draw_worlds(1, 3)[0]
    rules = prepared_engine(obs, SearchConfig(playout_epsilon=0.0, opponent_randomness=0.0,
                                      opponent_beliefs="fixed"))
    sharp = prepared_engine(obs, SearchConfig(playout_epsilon=0.0, opponent_randomness=0.0,
                                      opponent_beliefs="fixed", card_policy="learned",
                                      card_weights=rules_policy(60.0).weights))

    def plays(engine: object, seed: int = 5) -> list[tuple[object, ...]]:
        events = engine.playout_trace(world, seed)[1]  # type: ignore[attr-defined]
        end = next((i for i, e in enumerate(events) if e[0] == "deal"), len(events))
        return [e for e in events[:end] if e[0] == "play"]

    assert len(plays(rules)) > 10
    assert plays(sharp) == plays(rules)
    uniform = prepared_engine(obs, SearchConfig(playout_epsilon=0.0, opponent_randomness=0.0,
                                        opponent_beliefs="fixed", card_policy="learned",
                                        card_weights=rules_policy(0.0).weights))
    differ = sum(plays(uniform, seed) != plays(rules, seed) for seed in range(20))
    assert differ >= 15, "all-zero weights play uniformly at random, not the rules"


def test_the_learned_search_plays_legal_moves() -> None:
    config = SearchConfig(card_policy="learned")
    for obs in list(card_positions(players=3, seeds=range(1)))[:10]:
        result = search(obs, SearchLimit(iterations=300, seed=2), config)
        assert result.best_move in obs.legal_moves()


def test_train_runs_expert_iteration_and_reproduces_its_weights(tmp_path: Path) -> None:
    config = TrainConfig(players=(3,), games=6, generations=2, iterations=200, seed=4)
    options = RunOptions(workers=0, progress=False)
    first, history = train(config, tmp_path / "a", options)
    second, _ = train(config, tmp_path / "b", options)
    assert first.weights == second.weights
    assert [g.index for g in history] == [0, 1]
    assert all(g.examples > 20 and g.loss_after <= g.loss_before + 1e-9 for g in history)
    assert CardPolicy.load(tmp_path / "a" / "card_policy.json") == first


def test_train_joins_ray_once_for_all_its_self_play_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ray's start-up is paid once per training, not once per generation and player count."""
    import csl_ai.tournament.train as train_module

    joined: list[RunOptions] = []
    monkeypatch.setattr(train_module, "where_to_play", lambda options: "measure")
    monkeypatch.setattr(train_module, "connect_ray", lambda options: joined.append(options) or False)
    config = TrainConfig(players=(2, 3), games=2, generations=2, iterations=50, seed=4)
    _, history = train(config, tmp_path / "run", RunOptions(workers=0, progress=False))
    assert len(history) == 2 and len(joined) == 1


def test_csl_train_writes_a_policy_file(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        ["train", "--players", "2", "--games", "4", "--generations", "1", "--iterations", "100",
         "--seed", "2", "--workers", "0", "--out", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "generation 0" in result.output
    assert CardPolicy.load(out / "card_policy.json").provenance["seed"] == 2


def test_playout_scores_are_the_weights_dot_the_features() -> None:
    """The playouts' fast scoring (per-decision terms summed once) equals the plain dot
    product with the features the fit uses."""
    rng = np.random.default_rng(7)
    config = SearchConfig()
    for obs in card_positions(players=5, seeds=range(2)):
        weights = rng.normal(size=len(CARD_FEATURES))
        settings = policy_settings(obs, config)
        cards, rows = card_features(obs, settings)
        same, scores = _core.card_features(
            obs.public_view().core, obs.seat, **settings, weights=list(weights)
        )
        assert same == cards
        assert np.allclose(scores, np.asarray(rows) @ weights)


def test_a_player_count_given_twice_is_refused_before_any_game(tmp_path: Path) -> None:
    with pytest.raises(TournamentError, match=r"players: each count once, got \[2, 2\]"):
        TrainConfig(players=(2, 2))
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["train", "--players", "2,2", "--workers", "0", "--out", str(out)]
    )
    assert result.exit_code == 2
    assert "--players: each count once" in result.output
    assert not out.exists()


def test_an_interrupted_train_says_what_it_leaves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from csl_ai.tournament import train as train_module

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(train_module, "train", interrupted)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["train", "--players", "2", "--workers", "0", "--out", str(out)])
    assert result.exit_code == 130
    assert "interrupted; " in result.output and "train does not resume" in result.output
