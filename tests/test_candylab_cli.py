"""Candy Lab records (``candylab-record``) and its commands: `csl play --game candy-lab`,
`csl replay`, `csl best-move`, `csl analyze` and `csl tournament` (``--game candy-lab``),
through typer's CliRunner (the tournament's runs, resume and Ray:
tests/test_candylab_tournament.py).

A record round-trips (saved, loaded, replayed to the same game); a broken or tampered
record fails with one line naming the field; a person's typed moves are checked with
one-line refusals and the game goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from csl_ai.candylab import CandyLabRules, Game
from csl_ai.candylab.agents import HeuristicAgent, RandomAgent, play_game
from csl_ai.candylab.catalogue import catalogue_from_arg
from csl_ai.candylab.notation import parse_move
from csl_ai.candylab.moves import move_text
from csl_ai.candylab.records import (
    RECORD_FORMAT,
    game_to_record,
    load_record,
    record_to_json,
    replay_record,
    save_record,
)
from csl_ai.cli import app
from csl_ai.errors import InvalidRecordError, NotationError

runner = CliRunner()


def invoke(args: list[str], stdin: str | None = None) -> Result:
    return runner.invoke(app, args, input=stdin)


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, (
        f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )


def assert_one_line_error(result: Result, *fragments: str, code: int = 2) -> str:
    assert result.exit_code == code, (
        f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("csl: error: "), lines[0]
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def finished_game(players: int = 3, seed: int = 4, catalogue: str = "default") -> Game:
    rules = CandyLabRules(players=players, catalogue=catalogue_from_arg(catalogue))
    agents = [HeuristicAgent() if p % 2 else RandomAgent(seed + p) for p in range(players)]
    return play_game(rules, agents, seed=seed)


# --- notation and records ----------------------------------------------------------------
def test_move_text_reads_back() -> None:
    cat = CandyLabRules().catalogue
    for players in (2, 4):
        game = Game(CandyLabRules(players=players), seed=1)
        agent = RandomAgent(1)
        while not game.is_over:
            for m in game.legal_moves():
                assert parse_move(move_text(m, cat), cat) == m
            game.play(agent.act(game.observation(game.current)))
    assert parse_move("play #0 @3", cat) == parse_move(f"play #0 {cat.order_text(0)} @3", cat)
    for bad, message in [
        ("jump", "not a move"),
        ("play #99 @0", "no order card #99"),
        ("play #0 OO @0", "shows"),
        ("give_back #0 P3:none left", "is B1"),
        ("draw up3", "not a move"),
    ]:
        with pytest.raises(NotationError, match=message):
            parse_move(bad, cat)


@pytest.mark.parametrize("players, catalogue", [(2, "default"), (3, "wild"), (4, "default")])
def test_record_round_trip(tmp_path: Path, players: int, catalogue: str) -> None:
    game = finished_game(players, seed=players, catalogue=catalogue)
    record = game_to_record(game, agents=["random"] * players)
    assert record["format"] == RECORD_FORMAT and record["version"] == 1
    assert record["rules"]["catalogue"]["name"] == catalogue
    path = tmp_path / "game.json"
    save_record(record, path)
    loaded = load_record(path)
    assert loaded == json.loads(record_to_json(record))
    again = replay_record(loaded)
    assert again.moves == game.moves
    assert again.state.key() == game.state.key()
    assert loaded["result"] == {
        "scores": game.scores(),
        "winners": game.winners(),
        "end": game.end_name,
    }


def test_an_unfinished_game_records_and_replays() -> None:
    game = Game(CandyLabRules(players=2), seed=8)
    agent = RandomAgent(8)
    for _ in range(15):
        game.play(agent.act(game.observation(game.current)))
    record = game_to_record(game)
    assert record["result"] is None
    again = replay_record(record)
    assert again.state.key() == game.state.key()


def _tampered(record: dict, change) -> dict:
    data = json.loads(json.dumps(record))
    change(data)
    return data


@pytest.mark.parametrize(
    "change, fragment",
    [
        (lambda r: r.__setitem__("format", "csl-record"),
         "'csl-record' is a Candy Spiders Leopards record: read it without --game candy-lab"),
        (lambda r: r.__setitem__("format", "other"), "format: must be 'candylab-record'"),
        (lambda r: r.__setitem__("version", 2), "version"),
        (lambda r: r["result"]["scores"].__setitem__(1, r["result"]["scores"][1] + 1),
         "result.scores[1]: recorded"),
        (lambda r: r["result"].__setitem__("winners", [0, 1]), "result.winners"),
        (lambda r: r["result"].__setitem__("end", "last card" if r["result"]["end"] == "last bar"
                                           else "last bar"), "result.end"),
        (lambda r: r["moves"].pop(), "result: recorded, but the game goes on"),
        (lambda r: r["moves"].append("stop"), "the game was over"),
        (lambda r: r["moves"].__setitem__(0, "stop"), "moves[0]:"),
        (lambda r: r["moves"].__setitem__(3, "fly away"), "moves[3]: 'fly away': not a move"),
        (lambda r: r.__setitem__("seed", r["seed"] + 1), "moves["),
        (lambda r: r.__setitem__("seed", "x"), "seed: must be an integer"),
        (lambda r: r["rules"].__setitem__("players", 7), "rules.players"),
        (lambda r: r.__setitem__("extra", 1), "unknown field"),
        (lambda r: r.pop("moves"), "moves: missing"),
        (lambda r: r.__setitem__("result", None), "result: missing, but the game is over"),
    ],
)
def test_a_tampered_record_fails_with_one_line(change, fragment: str) -> None:
    record = game_to_record(finished_game(3, seed=12))
    with pytest.raises(InvalidRecordError) as info:
        replay_record(_tampered(record, change))
    message = str(info.value)
    assert fragment in message and "\n" not in message


# --- the commands ---------------------------------------------------------------------
def test_play_watch_ai_game_writes_a_record_replay_checks(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    result = invoke(
        ["play", "--game", "candy-lab", "--players", "3", "--humans", "none",
         "--ai", "heuristic", "--seed", "5", "--record", str(path)]
    )
    assert_ok(result)
    assert "won by seat" in result.stdout and "Record saved" in result.stdout
    record = load_record(path)
    assert record["agents"] == ["heuristic"] * 3 and record["seed"] == 5
    game = replay_record(record)
    assert game.is_over
    replayed = invoke(["replay", "--game", "candy-lab", str(path)])
    assert_ok(replayed)
    assert "every move and score checks out" in replayed.stdout
    assert "turn  1  seat 0:" in replayed.stdout
    summary = invoke(["replay", "--game", "candy-lab", "--summary", str(path)])
    assert_ok(summary)
    assert "turn  1" not in summary.stdout and game.summary() in summary.stdout


def test_a_human_plays_a_whole_game_with_refused_inputs(tmp_path: Path) -> None:
    path = tmp_path / "h.json"
    typed = "board\nzzz\n99\nplay #0 @99\n?\n" + "1\n" * 400
    result = invoke(
        ["play", "--game", "candy-lab", "--players", "2", "--ai", "random", "--seed", "3",
         "--record", str(path)],
        stdin=typed,
    )
    assert_ok(result)
    out = result.stdout
    assert "Refused: 'zzz': not a move" in out
    assert "Refused: no move 99: choose 1.." in out
    assert "is not a legal move now" in out
    assert "Your hand:" in out and "Belt: @0 " in out
    record = load_record(path)
    assert record["agents"] == ["human", "random"]
    assert replay_record(record).is_over


def test_hints_advise_a_legal_move_at_the_ai_level(tmp_path: Path) -> None:
    """'hint' searches the waiting seat's decision at the AI seats' budget and names one of
    the listed moves; --hint shows it before every decision with a choice; the same seed
    gives the same advice."""
    path = tmp_path / "hint.json"
    args = ["play", "--game", "candy-lab", "--players", "2", "--ai", "ismcts:iters=40",
            "--seed", "5", "--record", str(path)]
    result = invoke(args, stdin="hint\nquit\n")
    assert_ok(result)
    lines = [line for line in result.stdout.splitlines() if line.startswith("Hint (")]
    assert len(lines) == 1 and "40 iterations" in lines[0] and "the AI seats' level" in lines[0]
    listed = [line.split(". ", 1)[1] for line in result.stdout.splitlines()
              if line.strip()[:3].strip().rstrip(".").isdigit() and ". " in line]
    advised = lines[0].split("iterations): ", 1)[1].rsplit(" (wins", 1)[0]
    assert advised in listed
    again = invoke(args[:-2] + ["--record", str(tmp_path / "again.json")], stdin="hint\nquit\n")
    assert [line for line in again.stdout.splitlines() if line.startswith("Hint (")] == lines
    auto = invoke(["play", "--game", "candy-lab", "--players", "2", "--ai", "random", "--seed",
                   "5", "--hint", "--record", str(tmp_path / "auto.json")], stdin="1\n1\nquit\n")
    assert_ok(auto)
    assert "Hint (level normal, 10,000 iterations): " in auto.stdout


def test_a_quit_game_resumes_to_the_same_end(tmp_path: Path) -> None:
    """Quit after a few decisions, --resume the record: the game goes on from there with
    the same seats and AI (seeded by the deal and each decision's place), saved back to
    its file, and ends exactly as the game played without a break."""
    setup = ["--players", "2", "--ai", "ismcts:iters=20", "--seed", "11"]
    whole = tmp_path / "whole.json"
    assert_ok(invoke(["play", "--game", "candy-lab", *setup, "--record", str(whole)],
                     stdin="1\n" * 400))
    cut = tmp_path / "cut.json"
    first = invoke(["play", "--game", "candy-lab", *setup, "--record", str(cut)],
                   stdin="1\n1\n1\nquit\n")
    assert_ok(first)
    assert f"--resume {cut}" in first.stdout
    assert load_record(cut)["meta"] == {"status": "quit"}
    resumed = invoke(["play", "--game", "candy-lab", "--resume", str(cut)], stdin="1\n" * 400)
    assert_ok(resumed)
    assert "resumed at turn" in resumed.stdout
    done, reference = load_record(cut), load_record(whole)
    assert done["moves"] == reference["moves"] and done["result"] == reference["result"]
    assert replay_record(done).is_over
    assert_one_line_error(
        invoke(["play", "--game", "candy-lab", "--resume", str(cut)]), "the game is over"
    )


def test_resume_refuses_setup_options_and_broken_records(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    assert_ok(invoke(["play", "--game", "candy-lab", "--players", "2", "--ai", "random",
                      "--seed", "3", "--record", str(cut)], stdin="quit\n"))
    assert_one_line_error(
        invoke(["play", "--game", "candy-lab", "--resume", str(cut), "--players", "3"]),
        "--resume: the game's rules, seats and seed come from the record; leave out --players",
    )
    record = json.loads(cut.read_text())
    record["agents"] = ["human"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    assert_one_line_error(
        invoke(["play", "--game", "candy-lab", "--resume", str(bad)]), "agents: must be a list of one name per seat"
    )
    record["agents"] = ["human", "minimax"]
    bad.write_text(json.dumps(record))
    assert_one_line_error(
        invoke(["play", "--game", "candy-lab", "--resume", str(bad)]), "agents[1]"
    )
    assert_one_line_error(
        invoke(["play", "--game", "candy-lab", "--resume", str(tmp_path / "none.json")]),
        "none.json",
    )


def test_end_of_input_saves_the_unfinished_game(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    result = invoke(
        ["play", "--game", "candy-lab", "--players", "2", "--ai", "random", "--seed", "3",
         "--record", str(path)],
        stdin="1\n",
    )
    assert result.exit_code == 1
    assert "Input ended" in result.stdout
    record = load_record(path)
    assert record["result"] is None and record["meta"] == {"status": "input ended"}
    assert not replay_record(record).is_over


def test_quit_saves_and_exits_zero(tmp_path: Path) -> None:
    path = tmp_path / "quit.json"
    result = invoke(
        ["play", "--game", "candy-lab", "--players", "2", "--ai", "random", "--seed", "3",
         "--record", str(path)],
        stdin="quit\n",
    )
    assert_ok(result)
    assert load_record(path)["meta"] == {"status": "quit"}


def test_search_ai_seats_play(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    result = invoke(
        ["play", "--game", "candy-lab", "--players", "2", "--humans", "none",
         "--ai", "ismcts:iters=5", "--seed", "9", "--record", str(path)]
    )
    assert_ok(result)
    assert replay_record(load_record(path)).is_over


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--players", "5"], "--players: Candy Lab is for 2 to 4"),
        (["--humans", "7"], "--humans"),
        (["--ai", "minimax"], "unknown agent"),
        (["--ai", "ismcts:iters=0"], "iters"),
        (["--sides", "candy=B"], "--sides: not an option of Candy Lab"),
        (["--deck", "x.json"], "--deck: not an option of Candy Lab"),
        (["--first-seat", "3", "--players", "2"], "--first-seat"),
    ],
)
def test_play_refuses_bad_options_in_one_line(args: list[str], fragment: str) -> None:
    result = invoke(["play", "--game", "candy-lab", "--humans", "none", "--seed", "1", *args])
    assert_one_line_error(result, fragment)


def test_play_refuses_an_existing_record_file(tmp_path: Path) -> None:
    path = tmp_path / "taken.json"
    path.write_text("{}")
    result = invoke(["play", "--game", "candy-lab", "--humans", "none", "--record", str(path)])
    assert_one_line_error(result, "already exists")
    assert path.read_text() == "{}"


def test_replay_of_a_tampered_record_is_one_line(tmp_path: Path) -> None:
    record = game_to_record(finished_game(2, seed=6))
    record["result"]["scores"][0] += 5
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(record))
    assert_one_line_error(
        invoke(["replay", "--game", "candy-lab", str(path)]), "result.scores[0]: recorded"
    )
    path.write_text("{not json")
    assert_one_line_error(invoke(["replay", "--game", "candy-lab", str(path)]), "bad JSON")


def test_best_move_of_an_unfinished_record(tmp_path: Path) -> None:
    game = Game(CandyLabRules(players=2), seed=8)
    agent = HeuristicAgent()
    while len(game.legal_moves()) < 2:
        game.play(agent.act(game.observation(game.current)))
    path = tmp_path / "pos.json"
    save_record(game_to_record(game), path)
    result = invoke(["best-move", "--game", "candy-lab", str(path), "--iterations", "30",
                     "--seed", "1", "--json"])
    assert_ok(result)
    answer = json.loads(result.stdout)
    assert answer["seat"] == game.current and answer["iterations"] == 30
    assert answer["best_move"]["move"] in game.legal_moves()
    assert sum(m["visits"] for m in answer["moves"]) == 30
    table = invoke(["best-move", "--game", "candy-lab", str(path), "-i", "30", "--seed", "1"])
    assert_ok(table)
    assert "Best move: " + game.move_text(answer["best_move"]["move"]) in table.stdout
    threaded = invoke(["best-move", "--game", "candy-lab", str(path), "-i", "40", "--seed", "1",
                       "--threads", "2", "--json"])
    assert_ok(threaded)
    answer = json.loads(threaded.stdout)
    assert answer["iterations"] == 40 and sum(m["visits"] for m in answer["moves"]) == 40
    assert answer["best_move"]["move"] in game.legal_moves()
    over = tmp_path / "over.json"
    save_record(game_to_record(finished_game(2, seed=2)), over)
    assert_one_line_error(
        invoke(["best-move", "--game", "candy-lab", str(over), "-i", "5"]), "the game is over"
    )


def test_tournament_on_duplicate_deals(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = invoke(["tournament", "--game", "candy-lab", "--agents", "heuristic,random",
                     "--players", "3", "--games", "6", "--seed", "4", "--out", str(out), "-q"])
    assert_ok(result)
    assert "6 games on 2 duplicate deals" in result.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games"] == 6 and summary["agents"] == ["heuristic", "random"]
    shares = {s["agent"]: s for s in summary["standings"]}
    assert shares["heuristic"]["seats_played"] == 6 and shares["random"]["seats_played"] == 12
    lines = (out / "games.jsonl").read_text().splitlines()
    assert len(lines) == 6
    seen_seats = set()
    for line in lines:
        record = json.loads(line)
        game = replay_record(record)
        seen_seats.add(record["agents"].index("heuristic"))
        assert game.is_over
    assert seen_seats == {0, 1, 2}


def test_duplicate_schedule_rotates_every_agent_round_every_deal() -> None:
    from csl_ai.candylab.duplicate import lineup, schedule

    assert lineup(["a", "b"], 4) == (0, 1, 1, 1)
    assert lineup(["a", "b", "c"], 4) == (0, 1, 2, 1)
    jobs = schedule(["a", "b"], 4, 10)
    assert len(jobs) == 12 and {j.deal for j in jobs} == {0, 1, 2}
    for d in range(3):
        seats_of_a = sorted(j.seats.index(0) for j in jobs if j.deal == d)
        assert seats_of_a == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--agents", "heuristic,random,random", "--players", "2"], "at most 2 agents"),
        (["--agents", "minimax"], "unknown agent"),
        (["--agents", "random", "--sides", "candy=B"],
         "--sides: not an option of a Candy Lab tournament"),
        (["--agents", "random", "--workers", "0", "--ray"], "--ray: --workers 0 plays without Ray"),
        (["--agents", "random", "--ray-token-file", "t"], "--ray-token-file: goes with --address"),
        (["--players", "2"], "--agents: missing"),
    ],
)
def test_tournament_refuses_bad_options(args: list[str], fragment: str) -> None:
    assert_one_line_error(invoke(["tournament", "--game", "candy-lab", *args]), fragment)


def test_a_tournament_of_too_few_deals_shows_no_interval(tmp_path: Path) -> None:
    """As in CSL's tournaments: the bootstrap over deals needs 4 deals; under that the
    standings say so and summary.json holds null intervals."""
    out = tmp_path / "few"
    result = invoke(["tournament", "--game", "candy-lab", "--agents", "heuristic,random",
                     "--players", "2", "--games", "2", "--seed", "4", "--out", str(out), "-q"])
    assert_ok(result)
    assert "No 95% intervals: 1 deal played" in result.stdout and "95% [" not in result.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert all(s["ci95"] is None for s in summary["standings"])


# --- analyze --------------------------------------------------------------------------
def _short_record(tmp_path: Path) -> tuple[Path, Game]:
    """A finished 2-player game between random and heuristic, saved."""
    game = play_game(CandyLabRules(players=2), [RandomAgent(1), HeuristicAgent()], seed=3)
    path = tmp_path / "short.json"
    save_record(game_to_record(game, agents=["random", "heuristic"]), path)
    return path, game


def test_analyze_reports_each_decision_in_json(tmp_path: Path) -> None:
    from csl_ai.candylab.analysis import candidates_of, decisions

    path, game = _short_record(tmp_path)
    args = ["analyze", "--game", "candy-lab", str(path), "-i", "8", "--seat", "1", "--json"]
    result = invoke(args)
    assert_ok(result)
    report = json.loads(result.stdout)
    assert report["game"] == "candy-lab" and report["iterations"] == 8 and report["level"] is None
    mine = [(d, candidates_of(g)) for d, g in decisions(game) if d.seat == 1]
    assert [r["move_index"] for r in report["decisions"]] == [d.index for d, _ in mine]
    for r, (d, candidates) in zip(report["decisions"], mine):
        assert r["played"] == game.move_text(d.move) and r["seat"] == 1
        assert r["candidates"] == candidates
        if candidates == 1:
            assert r["verdict"] == "forced" and r["engine"] is None and r["iterations"] == 0
            continue
        assert r["verdict"] in ("ok", "close", "blunder", "n/a")
        assert r["iterations"] == (32 if r["rechecked"] else 8)
        assert r["engine"] is not None and 0 <= r["best_win_probability"] <= 1
        if r["loss"] is not None:
            assert r["loss"] == pytest.approx(
                max(0.0, r["best_win_probability"] - r["played_win_probability"])
            )
        if r["agrees"]:
            assert r["loss"] == 0.0
    row = report["summary"][0]
    assert row["seat"] == 1 and row["decisions"] == len(mine)
    assert row["blunders"] == sum(r["verdict"] == "blunder" for r in report["decisions"])
    assert invoke(args).stdout == result.stdout, "the same seed, the same report"


def test_analyze_text_report_lists_every_decision_with_all(tmp_path: Path) -> None:
    path, game = _short_record(tmp_path)
    result = invoke(["analyze", "--game", "candy-lab", str(path), "-i", "6", "--seat", "0",
                     "--all", "--threshold", "0.2"])
    assert_ok(result)
    out = result.stdout
    assert out.startswith(f"Analysis of '{path}' (Candy Lab, 2 players, ")
    assert "at 6 iterations a decision" in out and "Seats: seat 0 random" in out
    assert "played → engine" in out and "Summary" in out
    assert "t1 #" in out and ("engine agrees" in out or " → " in out)
    assert "forced" in out


def test_analyze_refuses_a_broken_record_in_one_line(tmp_path: Path) -> None:
    path, _ = _short_record(tmp_path)
    record = json.loads(path.read_text())
    record["result"]["scores"][0] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    assert_one_line_error(
        invoke(["analyze", "--game", "candy-lab", str(bad), "-i", "5"]), "result.scores[0]: recorded"
    )
    record = json.loads(path.read_text())
    record["moves"][2] = "fly away"
    bad.write_text(json.dumps(record))
    result = invoke(["analyze", "--game", "candy-lab", str(bad), "-i", "5", "--json"])
    assert_one_line_error(result, "moves[2]: 'fly away'")
    assert json.loads(result.stdout)["error"]["kind"] == "InvalidRecordError"
    bad.write_text("{not json")
    assert_one_line_error(invoke(["analyze", "--game", "candy-lab", str(bad)]), "bad JSON")
    for args, fragment in [
        (["--level", "huge"], "--level: unknown level 'huge'"),
        (["--level", "fast", "-i", "5"], "--level and --iterations"),
        (["--seat", "2"], "--seat: seat 2 is not in this 2-player game"),
        (["--threads", "0"], "--threads"),
    ]:
        assert_one_line_error(invoke(["analyze", "--game", "candy-lab", str(path), *args]), fragment)


def test_a_record_of_the_other_game_says_how_to_read_it(tmp_path: Path) -> None:
    path, _ = _short_record(tmp_path)
    for command in ("replay", "analyze"):
        assert_one_line_error(invoke([command, str(path)]), "is a Candy Lab record: read it with --game candy-lab")
    csl_record = tmp_path / "csl.json"
    csl_record.write_text(json.dumps({"format": "csl-record", "version": 1}))
    assert_one_line_error(
        invoke(["replay", "--game", "candy-lab", str(csl_record)]),
        "is a Candy Spiders Leopards record: read it without --game candy-lab",
    )
