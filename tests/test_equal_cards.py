"""Equal cards at a card-play root: cards of one colour with no card still to come between
them play exactly alike, so the search tries the lowest of each run for all of them
(`MoveStats.same_as`), never merges cards that differ, and shows and reports every one."""

from __future__ import annotations

import json
import random

from typer.testing import CliRunner

from csl_ai.analysis import judge
from csl_ai.cli import app
from csl_ai.game import Game, Observation, Phase
from csl_ai.limits import SearchLimit
from csl_ai.moves import Declare
from csl_ai.notation import card_colour, card_rank
from csl_ai.position import observation_to_position, position_to_json
from csl_ai.search import search
from gamegen import random_rules, step


def card_plays(count: int, seed: int) -> list[tuple[Game, Observation]]:
    """Card plays with a choice, from random games on random sides, 2-5 players."""
    rng = random.Random(seed)
    out: list[tuple[Game, Observation]] = []
    while len(out) < count:
        game = Game(random_rules(rng, rng.choice((2, 3, 4, 5))), seed=rng.randrange(10**6))
        while not game.is_over and (game.phase is not Phase.PLAY or rng.random() < 0.85):
            step(game, rng)
        if game.is_over or game.phase is not Phase.PLAY:
            continue
        obs = game.observation(game.to_move)
        if len(obs.legal_moves()) > 1:
            out.append((game, obs))
    return out


def plays_alike(game: Game, low: int, high: int, legal: set[int]) -> bool:
    """The rule by hand: one colour, and no card that can still come in this round's
    tricks (not yet played, or on the table now; not one of the mover's choices) between."""
    on_table = {card for _seat, card in game.current_trick.plays} if game.current_trick else set()
    played = {c for c in range(64) if (game.core.played >> c) & 1} - on_table
    to_come = {c for c in range(64) if (game.core.rain_in_use >> c) & 1} - played - legal
    return card_colour(low) == card_colour(high) and not any(
        card_colour(c) == card_colour(low) and card_rank(low) < card_rank(c) < card_rank(high) for c in to_come
    )


def test_equal_cards_are_searched_as_one_and_every_legal_card_is_covered() -> None:
    merged = 0
    for i, (game, obs) in enumerate(card_plays(40, 11)):
        legal = {m.card for m in obs.legal_moves()}  # type: ignore[attr-defined]
        result = search(obs, SearchLimit(iterations=300, seed=i))
        covered = [m.move.card for m in result.moves] + [x.card for m in result.moves for x in m.same_as]  # type: ignore[attr-defined]
        assert sorted(covered) == sorted(legal), "every legal card once"
        reps = sorted(m.move.card for m in result.moves)  # type: ignore[attr-defined]
        for m in result.moves:
            group = [m.move.card, *(x.card for x in m.same_as)]  # type: ignore[attr-defined]
            assert group[0] == min(group), "the lowest card stands for its run"
            assert all(plays_alike(game, a, b, legal) for a, b in zip(group, group[1:]))
            merged += len(m.same_as)
        for a, b in zip(reps, reps[1:]):   # neighbours in one colour left apart really differ
            if card_colour(a) == card_colour(b):
                assert not plays_alike(game, a, b, legal)
        assert result.best_move in obs.legal_moves()
    assert merged > 0


def test_a_root_of_equal_cards_only_is_settled_at_once() -> None:
    for game, obs in card_plays(60, 5):
        result = search(obs, SearchLimit(iterations=2_000, seed=1))
        if len(result.moves) == 1:
            break
    else:
        raise AssertionError("no position whose legal cards are all equal")
    assert result.moves[0].same_as and result.iterations == 2_000   # a full search still estimates
    settled = search(obs, SearchLimit(iterations=2_000, seed=1, stop_when_settled=True))
    assert settled.settled and settled.iterations == 64 and settled.best_move == result.best_move


def test_the_played_card_is_judged_by_the_run_it_belongs_to(tmp_path) -> None:
    for game, obs in card_plays(60, 7):
        result = search(obs, SearchLimit(iterations=300, seed=2))
        runs = [m for m in result.moves if m.same_as]
        if runs:
            break
    else:
        raise AssertionError("no position with equal cards")
    stats = runs[0]
    other = stats.same_as[-1]
    assert stats.covers(other) and stats.covers(stats.move) and not stats.covers(Declare(True))

    class Decision:
        seat, move = obs.seat, other

    report = judge(Decision(), len(obs.legal_moves()), result)  # type: ignore[arg-type]
    assert report.played_win == stats.win_probability
    path = tmp_path / "position.json"
    path.write_text(position_to_json(observation_to_position(obs)))
    shown = CliRunner().invoke(app, ["best-move", str(path), "-i", "300", "--seed", "2"])
    assert shown.exit_code == 0, shown.output
    assert " = " in shown.output
    answer = CliRunner().invoke(app, ["best-move", str(path), "-i", "300", "--seed", "2", "--json"])
    moves = json.loads(answer.output)["moves"]
    assert any(m["same_as"] for m in moves)
