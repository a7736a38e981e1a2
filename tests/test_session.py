"""`csl_ai.session.Table`: the game model shared by `csl play` and `csl serve`."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from csl_ai.errors import IllegalMoveError, InvalidRecordError
from csl_ai.game import Phase
from csl_ai.moves import Move
from csl_ai.records import load_record, new_record_path, records_folder, replay_record
from csl_ai.search import SearchConfig, search
from csl_ai.session import HUMAN, Table, TableError, TableOptions


def _human_choice(table: Table, rng: random.Random) -> Move:
    return rng.choice(table.game.legal_moves())


def _play_out(table: Table, rng: random.Random, stop_after: int | None = None) -> int:
    """Play until the end (or stop_after human decisions); returns human decisions made."""
    made = 0
    while not table.game.is_over:
        if table.ai_step() is not None:
            continue
        if stop_after is not None and made == stop_after:
            break
        forced = table.forced_move()
        if forced is not None:
            table.play(forced)
            continue
        table.play(_human_choice(table, rng))
        made += 1
    return made


def test_a_whole_game_against_the_ai_records_who_sat_where() -> None:
    table = Table.new(TableOptions(players=2, humans=(1,), ai="heuristic", seed=3))
    _play_out(table, random.Random(0))
    record = table.record()
    assert record["agents"] == ["heuristic", HUMAN]
    assert record["meta"]["humans"] == [1]
    assert replay_record(record).result() == table.game.result()


def test_ai_steps_one_decision_at_a_time_and_waits_for_the_human() -> None:
    table = Table.new(TableOptions(players=4, humans=(2,), ai="random", seed=11))
    while table.waiting_for is None:
        before = sum(1 for a in table.game.rounds[-1].allocations if a is not None)
        step = table.ai_step()
        assert step is not None and step.seat != 2
        assert sum(1 for a in table.game.rounds[-1].allocations if a is not None) == before + 1
    assert table.waiting_for == 2 and table.ai_step() is None


def test_undo_takes_back_the_human_decision_and_the_ai_replies() -> None:
    table = Table.new(TableOptions(players=2, humans=(0,), ai="ismcts:iters=200", seed=5))
    rng = random.Random(2)
    _play_out(table, rng, stop_after=3)
    seat = table.waiting_for
    assert seat == 0
    before = table.record()
    table.play(_human_choice(table, rng))
    while table.ai_step() is not None:
        pass
    assert table.record() != before
    assert table.undo() == 0
    assert table.record() == before
    _play_out(table, rng)
    assert table.game.is_over


def test_undo_skips_forced_cards_and_refuses_when_nothing_to_take_back() -> None:
    table = Table.new(TableOptions(players=3, humans=(0,), ai="heuristic", seed=8))
    assert table.undo() is None and not table.can_undo()
    rng = random.Random(4)
    _play_out(table, rng, stop_after=1)
    assert table.can_undo()
    choice_point = table.undo()
    assert choice_point == 0 and table.game.phase is Phase.ALLOCATE
    assert not table.can_undo()


def test_the_last_choice_names_the_seat_a_takeback_would_concern() -> None:
    """Hot seat: after seat 0 and then seat 1 chose, only seat 1 may take back."""
    table = Table.new(TableOptions(players=3, humans=(0, 1), ai="heuristic", seed=8))
    rng = random.Random(4)
    assert table.last_choice() is None and not table.can_undo(0)
    table.play(_human_choice(table, rng))
    assert table.last_choice() == 0 and table.can_undo(0) and not table.can_undo(1)
    table.play(_human_choice(table, rng))
    assert table.last_choice() == 1 and table.can_undo(1) and not table.can_undo(0) and table.can_undo()
    assert table.undo() == 1 and table.last_choice() == 0


@pytest.mark.parametrize(
    ("players", "ai", "seed", "cut"),
    [
        (3, "ismcts:iters=150", 21, 6),
        (4, "heuristic", 33, 9),
        (4, "random", 33, 9),
        (4, "zoo:stars", 33, 9),
    ],
)
def test_resume_plays_on_exactly_as_the_original_game(
    players: int, ai: str, seed: int, cut: int
) -> None:
    """Search agents seed each decision from the position; the others draw from a seeded
    stream, which a resumed table moves past their recorded decisions."""
    options = TableOptions(players=players, humans=(1,) if players == 3 else (0,), ai=ai, seed=seed)
    whole = Table.new(options)
    _play_out(whole, random.Random(seed))
    half = Table.new(options)
    rng = random.Random(seed)
    _play_out(half, rng, stop_after=cut)
    resumed = Table.resume(half.record())
    _play_out(resumed, rng)
    assert resumed.record()["rounds"] == whole.record()["rounds"]


def test_resume_refuses_a_finished_game_and_a_record_without_seats() -> None:
    table = Table.new(TableOptions(players=2, humans=(0,), ai="random", seed=1))
    _play_out(table, random.Random(1))
    with pytest.raises(TableError, match="over"):
        Table.resume(table.record())
    unfinished = Table.new(TableOptions(players=2, humans=(0,), ai="random", seed=1)).record()
    del unfinished["agents"]
    with pytest.raises(TableError, match="agents"):
        Table.resume(unfinished)
    unfinished["rounds"][0]["hands"][0] = "B1"
    with pytest.raises(InvalidRecordError):
        Table.resume(unfinished)


def test_moves_out_of_turn_are_refused() -> None:
    table = Table.new(TableOptions(players=2, humans=(0,), ai="random", seed=2))
    legal = table.game.legal_moves(0)
    with pytest.raises(IllegalMoveError, match="not seat 1"):
        table.play(legal[0], seat=1)
    table.play(legal[0], seat=0)
    with pytest.raises(IllegalMoveError, match="AI"):
        table.play(table.game.legal_moves()[0])


def test_the_hint_searches_at_the_ai_seats_level() -> None:
    table = Table.new(TableOptions(players=2, humans=(0,), ai="ismcts:iters=300", seed=6))
    assert table.hint_limit().iterations == 300
    result = table.hint()
    assert result.iterations == 300 and result.best_move in table.game.legal_moves(0)
    heuristic_table = Table.new(TableOptions(players=2, humans=(0,), ai="heuristic", seed=6))
    assert heuristic_table.hint_limit().iterations == 40_000
    four = Table.new(TableOptions(players=4, humans=(0,), ai="ismcts:normal", seed=6))
    assert four.hint_limit().iterations == 44_000
    assert four.hint_level_text() == "the AI seats' level, normal"
    assert Table.new(TableOptions(players=4, humans=(0,), ai="heuristic", seed=6)).hint_limit().iterations == 44_000


@pytest.mark.parametrize("ai", ["random", "heuristic", "pimc:iters=50", "zoo:cautious"])
def test_the_hint_searches_by_default_when_no_ai_seat_does(ai: str) -> None:
    table = Table.new(TableOptions(players=2, humans=(0,), ai=ai, seed=6))
    obs, limit, config = table.hint_search()
    assert config == SearchConfig() and limit.iterations == 40_000
    assert limit.stop_when_settled   # the level's limit
    result = search(obs, replace(limit, iterations=200), config)
    assert 0 < result.iterations <= 200 and result.best_move in table.game.legal_moves(0)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (TableOptions(players=2, humans=(2,)), "not in a 2-player game"),
        (TableOptions(players=3, humans=(0, 0)), "twice"),
        (TableOptions(players=3, humans=(0,), ai=("random",)), "2 AI seats"),
        (TableOptions(players=2, humans=(0,), ai=(HUMAN,)), "not an AI"),
    ],
)
def test_bad_table_options_are_refused(options: TableOptions, message: str) -> None:
    with pytest.raises(TableError, match=message):
        Table.new(options)


def test_records_go_to_the_records_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CSL_RECORDS_DIR", str(tmp_path / "games"))
    assert records_folder() == tmp_path / "games"
    first = new_record_path()
    assert first.parent == tmp_path / "games" and first.parent.is_dir()
    table = Table.new(TableOptions(players=2, humans=(0,), ai="random", seed=4))
    table.save(first)
    assert new_record_path() != first
    assert load_record(first)["agents"] == [HUMAN, "random"]
    monkeypatch.delenv("CSL_RECORDS_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert records_folder() == tmp_path / "data" / "csl" / "records"
