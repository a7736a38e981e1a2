"""Training rows (docs/training-rows.md): a tiny self-play run written by the harness, read
back by the loader, and checked against the games it came from.

The rows alone replay every game: each row's legal codes, decoded as the document says
(without the package), are exactly the game's legal moves at that step, and its action is
the move that was played.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from csl_ai.agents import make_agent, play_game
from csl_ai.game import Game, Observation
from csl_ai.moves import Allocate, Declare, Move, Play, move_from_json
from csl_ai.policy import CARD_FEATURES, examples_from_rows
from csl_ai.rules import RulesConfig
from csl_ai.tournament import harness
from csl_ai.tournament.harness import GAMES_FILE, TRAINING_FILE, RunOptions
from csl_ai.tournament.rows import TrainingRows, TrainingRowsError, load_training_rows, split_piles
from csl_ai.tournament.runner import TournamentConfig, deal_seed, job_for
from csl_ai.tournament.selfplay import (
    FEATURE_LAYOUT,
    FEATURE_NAMES,
    FEATURE_SIZE,
    SCHEMA_VERSION,
    DecisionRecorder,
    move_code,
)
from csl_ai.tournament.train import card_examples

DOC = Path(__file__).resolve().parent.parent / "docs" / "training-rows.md"
RUNS = {
    "search4": TournamentConfig(agents=("ismcts:iters=60",), rules=RulesConfig(players=4), games=2, seed=5,
                                mode="selfplay", training_rows=True),
    "random3": TournamentConfig(agents=("random",), rules=RulesConfig(players=3), games=1, seed=6,
                                mode="selfplay", training_rows=True),
    "pimc5": TournamentConfig(agents=("pimc:iters=16",), rules=RulesConfig(players=5), games=1, seed=7,
                              mode="selfplay", training_rows=True),
}  # fmt: skip
"""Every pile layout (3+3+3, 3+3, 3+4), with and without a search."""


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each run of RUNS played in this process into its own results folder."""
    root = tmp_path_factory.mktemp("rows")
    for name, config in RUNS.items():
        harness.start(config, root / name, RunOptions(workers=0, progress=False))
    return {name: root / name for name in RUNS}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _decode_split(code: int, hand: list[int], piles: int) -> tuple[int, ...]:
    """An allocation code as the document defines it: digit i in base 3 is the pile of the
    i-th lowest card of the hand."""
    masks = [0] * piles
    for card in hand:
        code, pile = divmod(code, 3)
        masks[pile] |= 1 << card
    assert code == 0, "no digit beyond the hand"
    return tuple(masks)


def _decode(phase: str, code: int, hand: list[int], piles: int) -> Move:
    if phase == "allocate":
        return Allocate(_decode_split(code, hand, piles))
    if phase == "weather":
        assert code in (0, 1)
        return Declare(bool(code))
    return Play(code)


# --- the rows replay their games ---------------------------------------------------------------


@pytest.mark.parametrize("name", list(RUNS))
def test_rows_replay_every_decision_of_their_games(runs: dict[str, Path], name: str) -> None:
    config = RUNS[name]
    folder = runs[name]
    rows = _lines(folder / TRAINING_FILE)
    games = {g["job"]: g for g in _lines(folder / GAMES_FILE)}
    assert sorted(games) == list(range(config.total_games))
    piles = len(config.rules.spec.group_sizes)
    for job, entry in games.items():
        mine = sorted((r for r in rows if r["job"] == job), key=lambda r: r["step"])
        assert [r["step"] for r in mine] == list(range(len(mine)))
        game = Game(config.rules, seed=deal_seed(config, job_for(config, job).deal))
        for row in mine:
            seat, phase = row["seat"], row["phase"]
            assert (row["schema"], row["version"]) == ("csl-training-rows", 1)
            assert row["players"] == config.players
            assert (game.phase.value, len(game.rounds) - 1) == (phase, row["round"])
            hand = row.get("hand", [])
            if phase == "allocate":
                assert hand == [c for c in range(36) if game.core.hands[seat] >> c & 1]
            legal = [_decode(phase, code, hand, piles) for code in row["legal"]]
            assert legal == game.legal_moves(seat), "every legal move, in the documented order"
            assert row["legal_moves"] == len(legal)
            move = _decode(phase, row["action"], hand, piles)
            assert move == move_from_json(row["chosen"]) and move in legal
            tried = [_decode(phase, c, hand, piles) for c in row["codes"]]
            assert tried == [move_from_json(m) for m in row["moves"]]
            assert set(row["codes"]) <= set(row["legal"]) and row["action"] in row["codes"]
            game.apply(move, seat)
        assert game.is_over
        result = game.result()
        for row in mine:
            assert row["outcome"] == {
                "win_share": result.win_share(row["seat"]),
                "points": result.scores[row["seat"]].total,
                "rank": entry["ranks"][row["seat"]],
            }
        assert [r.total for r in result.scores] == entry["totals"]


@pytest.mark.parametrize("name", list(RUNS))
def test_loaded_rows_count_the_decisions_of_the_games(runs: dict[str, Path], name: str) -> None:
    config = RUNS[name]
    loaded = load_training_rows(runs[name] / TRAINING_FILE)
    assert loaded.version == SCHEMA_VERSION == 1
    want: Counter[str] = Counter()
    for entry in _lines(runs[name] / GAMES_FILE):
        for rnd in entry["record"]["rounds"]:
            want["allocate"] += config.players
            want["weather"] += config.players
            want["play"] += sum(len(trick["plays"]) for trick in rnd["tricks"])
    assert {phase: len(loaded.phase(phase)) for phase in want} == dict(want)
    assert len(loaded) == sum(want.values()) == len(_lines(runs[name] / TRAINING_FILE))
    rounds, line = config.rules.spec.rounds, config.rules.spec.line_size
    assert want["play"] == config.total_games * rounds * line * config.players, "all play every trick"


class _Remembering:
    """A search agent that keeps every SearchResult it gave, to check the rows against."""

    def __init__(self, spec: str, seed: int) -> None:
        self.agent = make_agent(spec, seed)
        self.name = self.agent.name
        self.results: list[Any] = []

    @property
    def last_result(self) -> Any:
        return getattr(self.agent, "last_result", None)

    def act(self, obs: Observation) -> Move:
        move = self.agent.act(obs)
        self.results.append(self.last_result)
        return move


def test_rows_hold_the_search_result_of_each_decision() -> None:
    rules = RulesConfig(players=3)
    steps = itertools.count()
    agents = [_Remembering("ismcts:iters=40", seat) for seat in range(3)]
    recorders = [DecisionRecorder(agent, steps) for agent in agents]
    play_game(rules, recorders, seed=11)
    checked = unvisited = 0
    for agent, recorder in zip(agents, recorders, strict=True):
        assert len(agent.results) == len(recorder.decisions)
        for result, decision in zip(agent.results, recorder.decisions, strict=True):
            if not decision.search:
                continue
            hand = decision.hand
            # each searched move, then the cards equal to it with its statistics and a share of its visits
            rows = [(s, move, k, len(s.same_as) + 1) for s in result.moves for k, move in enumerate((s.move, *s.same_as))]
            assert decision.codes == [move_code(move, hand) for _s, move, _k, _n in rows]
            assert decision.visits == [s.visits // n + (1 if k < s.visits % n else 0) for s, _m, k, n in rows]
            assert sum(decision.visits) == sum(s.visits for s in result.moves)
            for (stats, _move, _k, _n), win, points in zip(
                rows, decision.win_probability, decision.expected_points, strict=True
            ):
                if stats.visits == 0:
                    assert win is None and points is None, "no estimate without a visit"
                    unvisited += 1
                else:
                    assert win == pytest.approx(stats.raw_win_probability, abs=1e-4)
                    assert points == pytest.approx(stats.expected_points, abs=1e-3)
            assert decision.action == move_code(result.best_move, hand)
            checked += 1
    assert checked > 50 and unvisited > 0


def test_rows_start_with_the_key_the_harness_reads(runs: dict[str, Path]) -> None:
    for folder in runs.values():
        for line in (folder / TRAINING_FILE).read_text().splitlines():
            assert re.match(r'^\{"job":\d+,"step":\d+,"schema":"csl-training-rows","version":1,', line)


# --- the loader's arrays ---------------------------------------------------------------------


def _by_key(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
    return {(r["job"], r["step"]): r for r in _lines(path)}


def test_allocation_arrays_hold_every_split_and_the_search_targets(runs: dict[str, Path]) -> None:
    path = runs["search4"] / TRAINING_FILE
    rows = _by_key(path)
    alloc = load_training_rows(path).allocate
    assert alloc.actions.shape == (len(alloc), 1680) and alloc.legal.all()
    assert alloc.hands.shape == (len(alloc), 9)
    assert list(zip(alloc.job, alloc.step)) == sorted(zip(alloc.job, alloc.step))
    core = Game(RulesConfig(players=4), seed=1).core
    some_tried_only_a_few = False
    for i in range(len(alloc)):
        row = rows[int(alloc.job[i]), int(alloc.step[i])]
        hand = alloc.hands[i].tolist()
        mask = sum(1 << c for c in hand)
        splits = [split_piles(int(code), hand, 3) for code in alloc.actions[i]]
        assert splits == core.allocations(mask), "the slots are the core's enumeration"
        assert alloc.actions[i, alloc.chosen[i]] == row["action"]
        assert alloc.searched[i] and alloc.evaluated[i, alloc.chosen[i]]
        slots = [int(np.flatnonzero(alloc.actions[i] == code)[0]) for code in row["codes"]]
        assert sorted(np.flatnonzero(alloc.evaluated[i]).tolist()) == sorted(slots)
        assert alloc.visits[i, slots].tolist() == row["visits"]
        for name, atol in (("win_probability", 1e-6), ("expected_points", 1e-4)):
            written = [math.nan if v is None else v for v in row[name]]
            assert np.allclose(getattr(alloc, name)[i, slots], written, atol=atol, equal_nan=True)
        untried = ~alloc.evaluated[i]
        assert (alloc.visits[i, untried] == 0).all()
        assert np.isnan(alloc.win_probability[i, untried]).all()
        assert np.isnan(alloc.expected_points[i, untried]).all()
        some_tried_only_a_few |= 0 < alloc.evaluated[i].sum() < 1680
    assert some_tried_only_a_few


def test_play_and_weather_arrays_use_card_and_bet_slots(runs: dict[str, Path]) -> None:
    for name in ("search4", "random3"):
        path = runs[name] / TRAINING_FILE
        rows = _by_key(path)
        loaded = load_training_rows(path)
        play, weather = loaded.play, loaded.weather
        forced = 0
        assert play.actions.shape[1] == 36 and weather.actions.shape[1] == 2
        assert weather.legal.all() and (weather.actions == [0, 1]).all()
        for i in range(len(play)):
            row = rows[int(play.job[i]), int(play.step[i])]
            assert np.flatnonzero(play.legal[i]).tolist() == row["legal"]
            assert (play.actions[i][play.legal[i]] == row["legal"]).all()
            assert (play.actions[i][~play.legal[i]] == -1).all()
            assert play.chosen[i] == row["action"] and play.legal[i, play.chosen[i]]
            assert play.visits[i, row["codes"]].tolist() == row["visits"]
            assert play.has_card_features[i] == ("card_features" in row) == (len(row["legal"]) > 1)
            if "card_features" in row:
                block = row["card_features"]
                assert np.array_equal(play.card_features[i, block["cards"]], block["features"])
                assert not play.card_features[i, ~play.legal[i]].any()
            assert play.searched[i] == row["search"]
            if row["search"] and len(row["legal"]) == 1:
                assert row["visits"] == [0] and row["win_probability"] == [None]
                assert play.evaluated[i].sum() == 1 and np.isnan(play.win_probability[i]).all()
                forced += 1
            if not row["search"]:
                assert row["visits"] == [1] and row["win_probability"] is None
                assert np.isnan(play.win_probability[i]).all() and play.visits[i].sum() == 1
        assert forced > 0 if name == "search4" else forced == 0, "a search's forced plays are unvisited"
        for i in range(len(weather)):
            row = rows[int(weather.job[i]), int(weather.step[i])]
            assert weather.chosen[i] == int(row["chosen"]["good_weather"])
        assert (loaded.allocate.win_share == [rows[k]["outcome"]["win_share"] for k in
                zip(loaded.allocate.job.tolist(), loaded.allocate.step.tolist())]).all()  # fmt: skip


def test_feature_widths_match_the_documented_layout(runs: dict[str, Path]) -> None:
    text = DOC.read_text()
    table = re.findall(r"^\| (\d+)–(\d+) \| `(\w+)` \| (\d+) \| `([^`]+)` … `([^`]+)` \|", text, re.M)
    layout = [(name, int(n)) for _a, _b, name, n, _first, _last in table]
    assert layout == list(FEATURE_LAYOUT)
    offset = 0
    for start, end, _name, n, first, last in table:
        assert (int(start), int(end)) == (offset, offset + int(n) - 1)
        assert (FEATURE_NAMES[offset], FEATURE_NAMES[offset + int(n) - 1]) == (first, last)
        offset += int(n)
    assert offset == FEATURE_SIZE == len(FEATURE_NAMES) == 424
    assert f"{FEATURE_SIZE} numbers" in text
    documented_cards = re.findall(r"^\| (\d+) \| `(\w+)` \|", text, re.M)
    assert [name for _i, name in documented_cards] == list(CARD_FEATURES)
    assert [int(i) for i, _name in documented_cards] == list(range(len(CARD_FEATURES)))
    for name in RUNS:
        loaded = load_training_rows(runs[name] / TRAINING_FILE)
        for phase in ("allocate", "weather", "play"):
            rows = loaded.phase(phase)
            assert rows.features.shape == (len(rows), FEATURE_SIZE)
            assert rows.card_features.shape[2] == len(CARD_FEATURES)
            assert (rows.features[:, 410 + ("allocate", "weather", "play").index(phase)] == 1).all()


def _doc_blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text(), re.M | re.S)


def test_the_documented_decoder_and_order_match_the_core() -> None:
    space: dict[str, Callable[..., Any]] = {}
    exec(_doc_blocks("python")[0], space)  # the document's code, as a reader would run it
    decode_split, split_order = space["decode_split"], space["split_order"]
    hands = {4: [0, 3, 5, 12, 17, 20, 26, 30, 35], 3: [1, 2, 13, 14, 27, 29], 5: [4, 5, 6, 20, 21, 30, 31]}
    for players, hand in hands.items():
        rules = RulesConfig(players=players)
        sizes = rules.spec.group_sizes
        core = Game(rules, seed=1).core
        splits = core.allocations(sum(1 << c for c in hand))
        codes = split_order(sizes)
        assert len(codes) == len(splits) == len(set(codes))
        for code, piles in zip(codes, splits, strict=True):
            masks = [sum(1 << c for c in pile) for pile in decode_split(code, hand, len(sizes))]
            assert masks == list(piles)
            assert split_piles(code, hand, len(sizes)) == piles


def test_the_documented_example_row_loads(tmp_path: Path) -> None:
    example = json.loads(_doc_blocks("json")[0])
    path = tmp_path / "example.jsonl"
    path.write_text(json.dumps(example) + "\n")
    loaded = load_training_rows(path)
    alloc = loaded.allocate
    assert (len(alloc), len(loaded.weather), len(loaded.play)) == (1, 0, 0)
    assert alloc.actions[0, alloc.chosen[0]] == 13
    assert split_piles(13, example["hand"], 2) == (1 << 14 | 1 << 27 | 1 << 29, 1 << 4 | 1 << 12 | 1 << 13)
    assert alloc.evaluated.sum() == 8 and alloc.legal.sum() == 20


def test_train_reads_the_same_examples_as_the_rows_say(runs: dict[str, Path]) -> None:
    path = runs["search4"] / TRAINING_FILE
    raw = sorted(_lines(path), key=lambda r: (r["job"], r["step"]))
    old = examples_from_rows(raw)
    new = card_examples(load_training_rows(path))
    assert len(new) == len(old) > 10
    for a, b in zip(old, new, strict=True):
        order_a, order_b = np.lexsort(a.features.T), np.lexsort(b.features.T)
        assert np.array_equal(a.features[order_a], b.features[order_b])
        assert np.allclose(a.target[order_a], b.target[order_b])


# --- bad files ---------------------------------------------------------------------------------


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _refused(path: Path, message: str) -> None:
    with pytest.raises(TrainingRowsError) as caught:
        load_training_rows(path)
    text = str(caught.value)
    assert "\n" not in text and message in text, text
    assert text.startswith(f"training rows {str(path)!r}")


DROP = object()
"""In a BAD_ROWS change: remove the field."""

BAD_ROWS: list[tuple[int, Callable[[dict[str, Any]], dict[str, Any]], str]] = [
    (2, lambda r: {"version": 2}, "line 2: csl-training-rows version 2; this build reads version 1"),
    (1, lambda r: {"version": "1"}, "line 1: csl-training-rows version '1'"),
    (3, lambda r: {"schema": DROP}, "line 3: no 'schema' field: not a csl-training-rows row"),
    (1, lambda r: {"schema": "csl-record"}, "line 1: schema 'csl-record', expected 'csl-training-rows'"),
    (4, lambda r: {"legal": DROP}, "line 4: missing field 'legal'"),
    (2, lambda r: {"outcome": {"win_share": 0.5, "rank": 1}}, "line 2: outcome: missing field 'points'"),
    (1, lambda r: {"features": r["features"][:-1]}, "line 1: features: need 424 numbers, got 423"),
    (1, lambda r: {"features": [*r["features"][:-1], None]}, "line 1: features: must be a list of numbers"),
    (1, lambda r: {"action": -5}, "line 1: action: must be a non-negative integer, got -5"),
    (1, lambda r: {"action": 3**9}, "line 1: action 19683 is not among the legal codes"),
    (1, lambda r: {"legal": r["legal"][:-1]}, "line 1: legal_moves 1680 but legal lists 1679 moves"),
    (1, lambda r: {"legal": [*r["legal"][:-1], 3**9]},
     "line 1: legal: must be distinct allocate codes 0..19682"),
    (1, lambda r: {"hand": [5, 3]}, "line 1: hand: must be card indices 0..35, ascending"),
    (1, lambda r: {"visits": r["visits"][:-1]},
     "line 1: moves, codes and visits: need the same non-zero length"),
    (1, lambda r: {"seat": 4}, "line 1: seat: must be an integer 0..3, got 4"),
    (1, lambda r: {"phase": "bid"}, "line 1: phase: must be one of allocate, weather, play, got 'bid'"),
    (1, lambda r: {"win_probability": [0.5] * (len(r["codes"]) + 1)},
     "line 1: win_probability: need one number per move"),
    (1, lambda r: {"search": "yes"}, "line 1: search: must be true or false"),
]  # fmt: skip
"""(line changed, its change from the row written, the error's message)."""


@pytest.mark.parametrize(("line", "change", "message"), BAD_ROWS, ids=[m for _l, _c, m in BAD_ROWS])
def test_a_bad_row_is_refused_naming_its_line_and_field(
    runs: dict[str, Path],
    tmp_path: Path,
    line: int,
    change: Callable[[dict[str, Any]], dict[str, Any]],
    message: str,
) -> None:
    rows = _lines(runs["search4"] / TRAINING_FILE)[:4]
    assert rows[0]["phase"] == "allocate"
    bad = rows[line - 1]
    for key, value in change(bad).items():
        if value is DROP:
            del bad[key]
        else:
            bad[key] = value
    _refused(_write(tmp_path / "bad.jsonl", rows), message)


def test_bad_files_are_refused_in_one_line(runs: dict[str, Path], tmp_path: Path) -> None:
    rows = _lines(runs["search4"] / TRAINING_FILE)[:2]
    bad = tmp_path / "bad.jsonl"
    _refused(_write(bad, [*rows, '{"job": 0, "st']), "line 3: not a JSON line (Unterminated string")
    _refused(_write(bad, [rows[0], "[1, 2]"]), "line 2: not a JSON object")
    _refused(tmp_path / "absent.jsonl", ": cannot read: No such file or directory")
    _refused(tmp_path, ": not a regular file")

    assert len(load_training_rows(_write(bad, [rows[0], "", rows[1]]))) == 2, "blank lines are skipped"
    loaded = load_training_rows(_write(tmp_path / "empty.jsonl", []))
    assert isinstance(loaded, TrainingRows) and len(loaded) == 0
    assert loaded.play.features.shape == (0, FEATURE_SIZE) and loaded.allocate.actions.shape == (0, 0)
    with pytest.raises(TrainingRowsError, match="phase: must be one of"):
        loaded.phase("bid")


def test_rows_from_before_the_schema_are_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    """A row as the unversioned writer wrote it (no schema, version, legal, codes...)."""
    row = _lines(runs["random3"] / TRAINING_FILE)[0]
    old_fields = ("job", "step", "seat", "round", "phase", "features", "legal_moves", "search", "moves",
                  "visits", "chosen", "outcome")  # fmt: skip
    old = {key: row[key] for key in old_fields}
    _refused(_write(tmp_path / "old.jsonl", [old]), "line 1: no 'schema' field")
