"""The `csl` command line through typer's CliRunner: every command, a whole game played
through stdin, machine-readable answers checked against the rules, and malformed input of
every kind failing with one line on stderr and exit code 2.
"""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from csl_ai.analysis import Replayer
from csl_ai.cli import app
from csl_ai.cli.bench import api_games, core_games, core_round_tricks, search_speed
from csl_ai.cli.play import PlayOptions, PlaySession, new_session
from csl_ai.game import Game, Observation, Phase
from csl_ai.moves import Move, Play, move_from_json
from csl_ai.notation import card_str, cards_of
from csl_ai.position import observation_to_position, position_to_json
from csl_ai.records import game_to_record, load_record, replay_record, save_record
from csl_ai.rules import RulesConfig

runner = CliRunner()

PLAY_OPTIONS = PlayOptions(players=2, humans="0", ai="heuristic", seed=2025)
PLAY_ARGS = ["play", "--players", "2", "--humans", "0", "--ai", "heuristic", "--seed", "2025"]
"""The command line that `PLAY_OPTIONS` describes."""


def invoke(args: list[str], stdin: str | None = None) -> Result:
    return runner.invoke(app, args, input=stdin)


def assert_ok(result: Result) -> None:
    assert result.exit_code == 0, (
        f"exit {result.exit_code}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    )


def assert_one_line_error(result: Result, *fragments: str, code: int = 2) -> str:
    """The command failed with code and exactly one ``csl: error:`` line naming fragments."""
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


# --- driving the game loop -----------------------------------------------------------------


def off_colour_card(game: Game, seat: int) -> int | None:
    """A card of seat's current pile that the must-follow rule forbids now, if any."""
    pile = game.piles(seat)[game.core.group]
    illegal = pile & ~game.core.legal_plays()
    return cards_of(illegal)[0] if illegal else None


class Scripted:
    """Answers a session's prompts with the first legal move, after chosen wrong answers.

    It makes one allocation with wrong pile sizes, asks for help once, and the first time
    the human must follow, tries an off-colour card first. `lines` is everything typed.
    """

    def __init__(self) -> None:
        self.session: PlaySession | None = None
        self.lines: list[str] = []
        self.errors: list[str] = []
        self.asked_help = False
        self.broke_follow = False
        self.broke_sizes = False

    def __call__(self, prompt: str) -> str:
        assert self.session is not None
        game = self.session.game
        seat = game.to_move
        assert seat in self.session.humans
        if not self.asked_help:
            self.asked_help = True
            return self._type("?")
        if game.phase is Phase.ALLOCATE and not self.broke_sizes:
            self.broke_sizes = True
            self.errors.append("pile 1 must hold 3 cards")
            hand = cards_of(game.hand(seat))
            piles = (hand[:2], hand[2:5], hand[5:])
            return self._type(" | ".join(" ".join(map(card_str, pile)) for pile in piles))
        if game.phase is Phase.PLAY and not self.broke_follow:
            card = off_colour_card(game, seat)
            if card is not None:
                self.broke_follow = True
                self.errors.append("must follow")
                return self._type(card_str(card))
        return self._type(str(game.legal_moves(seat)[0]))

    def _type(self, line: str) -> str:
        self.lines.append(line)
        return line


def scripted_session(options: PlayOptions, script: Scripted) -> tuple[PlaySession, io.StringIO]:
    out = io.StringIO()
    session = new_session(options, Console(file=out, width=100), script)
    script.session = session
    return session, out


def test_play_session_runs_a_whole_game_and_refuses_bad_input() -> None:
    script = Scripted()
    session, out = scripted_session(PLAY_OPTIONS, script)
    session.run()
    text = out.getvalue()
    assert session.game.is_over
    assert script.broke_follow and script.broke_sizes, "the seeded game must offer both mistakes"
    for error in script.errors:
        assert error in text
    assert text.count("Not accepted:") == len(script.errors)
    assert "Split your hand into one pile per group" in text
    assert "Final scores" in text
    human_moves = sum(1 for line in script.lines if line != "?") - len(script.errors)
    forced = text.count("Only one legal card: ")
    assert forced > 0, "forced card plays are played for the human, with a line saying so"
    assert human_moves + forced == 4 * (1 + 1 + 9)


def test_csl_play_whole_game_through_stdin(tmp_path: Path) -> None:
    script = Scripted()
    expected, _ = scripted_session(PLAY_OPTIONS, script)
    expected.run()
    record_path = tmp_path / "game.json"
    result = invoke([*PLAY_ARGS, "--record", str(record_path)], "\n".join(script.lines) + "\n")
    assert_ok(result)
    assert "Not accepted: bad allocation" in result.stdout
    assert "must follow" in result.stdout
    assert "Final scores" in result.stdout
    assert f"Saved the game to {record_path}" in result.stdout
    game = replay_record(load_record(record_path))
    assert game.is_over
    assert game.result() == expected.game.result()
    assert load_record(record_path)["agents"] == ["human", "heuristic"]


def test_csl_play_saves_the_game_when_input_ends(tmp_path: Path) -> None:
    record_path = tmp_path / "cut.json"
    script = Scripted()
    session, _ = scripted_session(PLAY_OPTIONS, script)
    with pytest.raises(EOFError):
        session.ask = _limited(script, 6)
        session.run()
    result = invoke([*PLAY_ARGS, "--record", str(record_path)], "\n".join(script.lines) + "\n")
    assert result.exit_code == 1
    assert "Input ended before the game did." in result.stdout
    assert f"Saved the unfinished game to {record_path}" in result.stdout
    game = replay_record(load_record(record_path))
    assert not game.is_over and game.phase is Phase.PLAY
    replayed = invoke(["replay", str(record_path)])
    assert_ok(replayed)
    assert "The record stops before the end of the game." in replayed.stdout


def _limited(ask: Callable[[str], str], n: int) -> Callable[[str], str]:
    """ask for the first n prompts, then end of input."""
    count = iter(range(n))

    def limited(prompt: str) -> str:
        if next(count, None) is None:
            raise EOFError
        return ask(prompt)

    return limited


def test_csl_play_quit_saves_and_exits_zero(tmp_path: Path) -> None:
    record_path = tmp_path / "quit.json"
    result = invoke([*PLAY_ARGS, "--record", str(record_path)], "quit\n")
    assert_ok(result)
    assert f"Saved the unfinished game to {record_path}" in result.stdout
    record = load_record(record_path)
    assert record["meta"]["status"] == "quit"
    assert not replay_record(record).is_over


def test_csl_play_with_only_ai_seats_needs_no_input(tmp_path: Path) -> None:
    record_path = tmp_path / "watch.json"
    result = invoke(
        [
            "play",
            "-n",
            "3",
            "--humans",
            "none",
            "--ai",
            "random",
            "--seed",
            "1",
            "--record",
            str(record_path),
            "--sides",
            "candy=B,leopard=B",
        ]
    )
    assert_ok(result)
    game = replay_record(load_record(record_path))
    assert game.is_over and game.rules.sides_text() == "candy=B,spider=A,leopard=B,star=A"
    assert "Final scores" in result.stdout


def test_csl_play_keeps_a_secret_deals_seed_until_the_game_is_over(tmp_path: Path) -> None:
    """The seed rebuilds every hidden card: an unfinished game never shows it, a finished
    one shows it last (and the record holds it)."""
    cut = tmp_path / "cut.json"
    result = invoke(["play", "-n", "4", "--ai", "random", "--record", str(cut)], "quit\n")
    assert_ok(result)
    seed = load_record(cut)["seed"]
    assert str(seed) not in result.stdout
    assert "seed" not in result.stdout

    done = tmp_path / "done.json"
    args = ["play", "-n", "3", "--humans", "none", "--ai", "random", "--record", str(done)]
    result = invoke(args)
    assert_ok(result)
    seed = load_record(done)["seed"]
    before_end, _, end = result.stdout.partition("Final scores")
    assert str(seed) not in before_end
    assert f"This deal again: --seed {seed}" in end


@pytest.mark.parametrize("command", [[], ["play"], ["best-move"], ["analyze"], ["serve"]])
def test_help_shows_flags_without_a_value_type(command: list[str]) -> None:
    """A flag takes no value: help must not show ``--hint <bool>`` (``--hint true`` is refused)."""
    result = invoke([*command, "--help"])
    assert_ok(result)
    assert "<bool>" not in result.stdout and "--help" in result.stdout
    assert "<int" in result.stdout or not command


def test_csl_play_hint_shows_ranked_moves_at_the_ais_level(tmp_path: Path) -> None:
    lines = ["hint", "quit"]
    args = ["play", "-n", "2", "--ai", "ismcts:iters=60", "--seed", "2025", "--hint"]
    result = invoke([*args, "--record", str(tmp_path / "h.json")], "\n".join(lines) + "\n")
    assert_ok(result)
    assert result.stdout.count("AI suggests") == 2
    words = " ".join(result.stdout.split())
    assert words.count("60 iterations at the AI seats' level)") == 2
    assert "visits" in result.stdout and "points" in result.stdout
    assert_one_line_error(invoke([*args, "--hint-iterations", "60"]), "--hint-iterations")


# --- records: replay and analyze ---------------------------------------------------------


def finished_record(tmp_path: Path, players: int = 3, seed: int = 5) -> Path:
    from csl_ai.agents import make_agent, play_game

    rules = RulesConfig(players=players)
    agents = [make_agent("heuristic", seed=seed + s) for s in range(players)]
    game = play_game(rules, agents, seed=seed)
    path = tmp_path / f"record-{players}p-{seed}.json"
    save_record(game_to_record(game, agents=["heuristic"] * players), path)
    return path


def test_replayer_re_enacts_the_recorded_game(tmp_path: Path) -> None:
    reference = replay_record(load_record(finished_record(tmp_path)))
    replayer = Replayer(reference)
    decisions = list(replayer)
    assert len(decisions) == 6 * (3 + 3 + 6 * 3)
    assert replayer.game.result() == reference.result()


def test_csl_replay_shows_every_trick_and_the_scores(tmp_path: Path) -> None:
    path = finished_record(tmp_path)
    result = invoke(["replay", str(path)])
    assert_ok(result)
    assert "every step checks out" in result.stdout
    assert result.stdout.count("Trick ") == 6 * 6
    assert "Final scores" in result.stdout
    summary = invoke(["replay", "--summary", str(path)])
    assert_ok(summary)
    assert "Trick " not in summary.stdout and "Final scores" in summary.stdout


def test_csl_replay_names_the_first_illegal_step(tmp_path: Path) -> None:
    path = finished_record(tmp_path)
    record = json.loads(path.read_text())
    trick = record["rounds"][1]["tricks"][2]
    seat, card = trick["plays"][1]
    hand = record["rounds"][1]["hands"][seat].split()
    other = next(c for c in hand if c != card)
    trick["plays"][1] = [seat, other]
    path.write_text(json.dumps(record))
    assert_one_line_error(invoke(["replay", str(path)]), "rounds[1].tricks[2]")


def test_csl_analyze_reports_each_decision_of_a_seat(tmp_path: Path) -> None:
    path = finished_record(tmp_path)
    result = invoke(["analyze", str(path), "--seat", "1", "--iterations", "40", "--json"])
    assert_ok(result)
    report = json.loads(result.stdout)
    decisions = report["decisions"]
    assert len(decisions) == 6 * (1 + 1 + 6)
    assert {d["seat"] for d in decisions} == {1}
    for d in decisions:
        assert d["forced"] == (d["candidates"] == 1)
        if d["forced"]:
            assert d["loss"] is None and d["engine"] is None
        elif d["loss"] is not None:
            assert 0.0 <= d["loss"] <= 1.0
            assert d["loss"] == pytest.approx(
                max(0.0, d["best_win_probability"] - d["played_win_probability"])
            )
    plays = [d for d in decisions if d["phase"] == "play" and not d["forced"]]
    assert plays and all(d["loss"] is not None for d in plays), (
        "every legal card is a searched candidate"
    )
    assert report["summary"][0]["decisions"] == len(decisions)
    table = invoke(["analyze", str(path), "--seat", "0", "--iterations", "40", "--all"])
    assert_ok(table)
    assert "Summary" in table.stdout and "r1 t1" in table.stdout


def test_csl_analyze_flags_only_losses_beyond_both_intervals(tmp_path: Path) -> None:
    path = finished_record(tmp_path)
    args = ["analyze", str(path), "--seat", "0", "--iterations", "60"]
    report = json.loads(invoke([*args, "--json"]).stdout)
    assert report["level"] is None and report["iterations"] == 60
    assert report["recheck_iterations"] == 240
    flagged = []
    for d in report["decisions"]:
        assert d["verdict"] in ("blunder", "close", "ok", "forced", "n/a")
        if d["verdict"] == "blunder":
            assert d["loss"] >= report["threshold"]
            assert d["best_ci95"][0] > d["played_ci95"][1]
        if d["verdict"] == "close":
            assert d["rechecked"] and d["iterations"] == 240
        if d["verdict"] in ("blunder", "close"):
            flagged.append(d)
    assert flagged, "60 iterations against heuristic play should flag something"
    assert report["summary"][0]["blunders"] + report["summary"][0]["close"] == len(flagged)
    text = invoke(args)
    assert_ok(text)
    assert "at 60 iterations a decision" in " ".join(text.stdout.split()), "rich wraps long record paths"
    assert "On the table at each blunder and close call" in text.stdout
    context = text.stdout.split("On the table at each blunder and close call", 1)[1]
    assert ("Pile for group" in context) or ("Hand: " in context) or ("Piles: " in context)
    assert "sky" in context


def test_csl_analyze_searches_at_a_level(tmp_path: Path) -> None:
    path = str(finished_record(tmp_path))
    result = invoke(["analyze", path, "--seat", "2", "--level", "fast", "--json"])
    assert_ok(result)
    report = json.loads(result.stdout)
    assert (report["level"], report["iterations"]) == ("fast", 3600), "fast at 3 players"
    assert_one_line_error(
        invoke(["analyze", path, "--level", "fast", "--iterations", "50"]),
        "--level and --iterations",
    )
    assert_one_line_error(invoke(["analyze", path, "--level", "blitz"]), "--level", "blitz")


# --- best-move ---------------------------------------------------------------------------------


def position_file(
    tmp_path: Path, players: int = 4, seed: int = 3, plays: int = 6
) -> tuple[Path, Game, int]:
    """A position at a card play of a seeded random game, and that game and seat."""
    game = Game(RulesConfig(players=players), seed=seed)
    rng = random.Random(seed)
    played = 0
    while game.phase is not Phase.PLAY or played < plays:
        seat = game.to_move
        played += game.phase is Phase.PLAY
        game.apply(rng.choice(game.legal_moves(seat)), seat)
    seat = game.to_move
    path = tmp_path / "position.json"
    path.write_text(position_to_json(observation_to_position(game.observation(seat))))
    return path, game, seat


def test_best_move_json_is_legal_and_complete(tmp_path: Path) -> None:
    path, game, seat = position_file(tmp_path)
    result = invoke(["best-move", str(path), "--iterations", "300", "--seed", "1", "--json"])
    assert_ok(result)
    answer: dict[str, Any] = json.loads(result.stdout)
    legal = set(game.legal_moves(seat))
    sizes = game.rules.spec.group_sizes
    assert answer["seat"] == seat
    assert move_from_json(answer["best_move"], sizes) in legal
    moves = [move_from_json(m["move"], sizes) for m in answer["moves"]]
    equal = [move_from_json(x, sizes) for m in answer["moves"] for x in m["same_as"]]
    assert sorted(moves + equal, key=repr) == sorted(legal, key=repr)   # every legal card: searched, or equal to one
    assert sum(m["visits"] for m in answer["moves"]) > 0
    for m in answer["moves"]:
        assert 0.0 <= m["win_probability"] <= 1.0
        low, high = m["ci95"]
        assert low <= high
    assert result.stderr == ""


def test_best_move_names_its_level(tmp_path: Path) -> None:
    from csl_ai.agents import LEVELS, level_iterations

    path = str(position_file(tmp_path)[0])
    default = invoke(["best-move", path, "--seed", "1"])
    assert_ok(default)
    assert "level normal, " in default.stdout
    fast = json.loads(invoke(["best-move", path, "--level", "fast", "--json"]).stdout)
    assert (fast["level"], fast["budget"]) == ("fast", level_iterations("fast", 4))
    # a level stops once the rest of its budget could not change its move
    assert fast["iterations"] == fast["budget"] or (fast["settled"] and 0 < fast["iterations"] < fast["budget"])
    explicit = json.loads(invoke(["best-move", path, "-i", "50", "--json"]).stdout)
    assert (explicit["level"], explicit["iterations"], explicit["budget"], explicit["settled"]) == (None, 50, 50, False)
    for option in (["--iterations", "50"], ["--time-ms", "10"]):
        assert_one_line_error(
            invoke(["best-move", path, "--level", "strong", *option]), f"--level and {option[0]}"
        )
    help_text = invoke(["best-move", "--help"]).stdout
    for level, iterations in LEVELS.items():
        assert level in help_text and f"{iterations:,}" in help_text


def test_a_level_searches_as_many_iterations_as_its_player_count_gives(tmp_path: Path) -> None:
    from csl_ai.agents import LEVELS, level_iterations

    seen = set()
    for players in (2, 3, 5):
        path = str(position_file(tmp_path, players=players, seed=3, plays=0)[0])  # a lead: a choice
        fast = json.loads(invoke(["best-move", path, "--level", "fast", "--json"]).stdout)
        assert (fast["level"], fast["budget"]) == ("fast", level_iterations("fast", players))
        assert fast["budget"] > LEVELS["fast"] and 0 < fast["iterations"] <= fast["budget"]
        seen.add(fast["budget"])
    assert len(seen) == 3, "each player count searches its own number of iterations"


def test_best_move_reads_stdin_and_prints_a_table(tmp_path: Path) -> None:
    path, game, seat = position_file(tmp_path, players=3, seed=8, plays=2)
    result = invoke(["best-move", "-", "--iterations", "200", "--seed", "2"], path.read_text())
    assert_ok(result)
    assert f"Seat {seat}, play phase" in result.stdout
    legal_text = {str(m) for m in game.legal_moves(seat)}
    best = result.stdout.split("Best move: ", 1)[1].split()[0]
    assert best in legal_text
    assert all(isinstance(m, Play) for m in game.legal_moves(seat))


# --- bench and help ----------------------------------------------------------------------------


def test_bench_figures_are_positive() -> None:
    figures = [
        core_games(4, 2000, 2),
        core_round_tricks(4, 20000, 2),
        api_games(2, 3, 1),
        *search_speed(50, 1),
    ]
    assert len(figures) == 6
    for figure in figures:
        assert figure.median > 0 and len(figure.samples) >= 1


def test_csl_bench_core_json() -> None:
    result = invoke(["bench", "--no-search", "--json", "--repeats", "1"])
    assert_ok(result)
    data = json.loads(result.stdout)
    names = [f["name"] for f in data["figures"]]
    assert names == [
        "core random games 4p",
        "core round of tricks 4p",
        "Python API random games 4p",
    ]
    assert data["core_over_api"] > 1


def test_help_lists_every_command() -> None:
    result = invoke(["--help"])
    assert_ok(result)
    for command in ("play", "best-move", "replay", "analyze", "bench", "tournament", "selfplay"):
        assert command in result.stdout
    assert_ok(invoke(["best-move", "--help"]))
    assert "win_probability" in invoke(["best-move", "--help"]).stdout


# --- malformed input: one line, exit 2 -------------------------------------------------------


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _with_header(path: Path, key: str, value: object) -> str:
    """A copy of a record or position file with one header field changed."""
    data = json.loads(path.read_text())
    data[key] = value
    return _write(path.parent, f"header-{key}.json", json.dumps(data))


def _bad_position_card(tmp_path: Path) -> str:
    path, _, _ = position_file(tmp_path)
    data = json.loads(path.read_text())
    data["hand"] = (
        "X9 " + " ".join(data["hand"].split()[1:])
        if isinstance(data["hand"], str)
        else data["hand"]
    )
    return _write(tmp_path, "badcard.json", json.dumps(data))


BAD_INPUTS: list[tuple[str, Callable[[Path], list[str]], tuple[str, ...]]] = [
    ("replay missing file", lambda t: ["replay", str(t / "nope.json")], ("nope.json",)),
    ("replay bad JSON", lambda t: ["replay", _write(t, "bad.json", "{not json")], ("JSON",)),
    (
        "replay wrong header",
        lambda t: ["replay", _with_header(finished_record(t), "format", "pgn")],
        ("format", "pgn"),
    ),
    (
        "replay wrong version",
        lambda t: ["replay", _with_header(finished_record(t), "version", 99)],
        ("version", "99"),
    ),
    ("analyze missing file", lambda t: ["analyze", str(t / "gone.json")], ("gone.json",)),
    ("best-move missing file", lambda t: ["best-move", str(t / "nope.json")], ("nope.json",)),
    ("best-move bad JSON", lambda t: ["best-move", _write(t, "bad.json", "[1, 2")], ("JSON",)),
    (
        "best-move wrong header",
        lambda t: ["best-move", _with_header(position_file(t)[0], "format", "csl-record")],
        ("format", "csl-record"),
    ),
    ("best-move bad card", lambda t: ["best-move", _bad_position_card(t)], ("X9",)),
    (
        "best-move zero iterations",
        lambda t: ["best-move", str(position_file(t)[0]), "--iterations", "0"],
        ("--iterations",),
    ),
    ("play bad sides", lambda t: ["play", "--sides", "candy=Q"], ("candy=Q",)),
    ("play unknown kind", lambda t: ["play", "--sides", "snake=A"], ("snake",)),
    (
        "play bad deck TOML",
        lambda t: ["play", "--deck", _write(t, "d.toml", "[candy\nsingle=")],
        ("TOML",),
    ),
    (
        "play short deck",
        lambda t: [
            "play",
            "--deck",
            _write(
                t,
                "d.toml",
                "[candy]\nsingle = 8\ndouble = 3\n"
                "[spider]\nsingle = 8\ndouble = 3\n"
                "[leopard]\nsingle = 8\ndouble = 2\n"
                "[star]\nsingle = 3\n",
            ),
        ],
        ("35 cards",),
    ),
    ("play missing deck", lambda t: ["play", "--deck", str(t / "no.toml")], ("no.toml",)),
    ("play 7 players", lambda t: ["play", "--players", "7"], ("players", "7")),
    ("play players not a number", lambda t: ["play", "--players", "many"], ("--players",)),
    (
        "play human seat out of range",
        lambda t: ["play", "-n", "2", "--humans", "2"],
        ("--humans", "seat 2"),
    ),
    ("play bad agent", lambda t: ["play", "--ai", "deepblue"], ("deepblue",)),
    ("play bad star option", lambda t: ["play", "--star-option", "triple"], ("--star-option",)),
    (
        "play first seat out of range",
        lambda t: ["play", "-n", "3", "--first-seat", "3"],
        ("first_seat",),
    ),
    (
        "play record folder missing",
        lambda t: ["play", "--record", str(t / "no" / "g.json")],
        ("--record", "does not exist"),
    ),
    (
        "best-move seed beyond 64 bits",
        lambda t: ["best-move", str(position_file(t)[0]), "--seed", str(2**64)],
        ("--seed", "must be 0..18446744073709551615"),
    ),
    (
        "play record file exists",
        lambda t: ["play", "--record", _write(t, "notes.txt", "precious")],
        ("--record", "notes.txt", "already exists"),
    ),
    ("unknown option", lambda t: ["play", "--colour", "blue"], ("--colour",)),
    ("no command", lambda t: [], ("missing command",)),
    ("unknown command", lambda t: ["fly"], ("fly",)),
    ("missing argument", lambda t: ["replay"], ("RECORD",)),
]


@pytest.mark.parametrize("case", BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, case: tuple[str, Callable[[Path], list[str]], tuple[str, ...]]
) -> None:
    _, make_args, fragments = case
    assert_one_line_error(invoke(make_args(tmp_path), ""), *fragments)


JSON_ERRORS: list[tuple[str, Callable[[Path], list[str]], str, tuple[str, ...]]] = [
    (
        "bad position file",
        lambda t: ["best-move", _bad_position_card(t), "--json"],
        "InvalidPositionError",
        ("X9",),
    ),
    (
        "bad option value",
        lambda t: ["best-move", str(position_file(t)[0]), "--json", "--iterations", "many"],
        "BadParameter",
        ("--iterations",),
    ),
    (
        "bad record",
        lambda t: ["analyze", _with_header(finished_record(t), "version", 99), "--json"],
        "InvalidRecordError",
        ("version", "99"),
    ),
    (
        "level and iterations",
        lambda t: ["analyze", str(finished_record(t)), "--json", "--level", "fast", "-i", "9"],
        "CliInputError",
        ("--level and --iterations",),
    ),
    ("missing record", lambda t: ["analyze", str(t / "gone.json"), "--json"], "", ("gone.json",)),
]


@pytest.mark.parametrize("case", JSON_ERRORS, ids=[case[0] for case in JSON_ERRORS])
def test_errors_under_json_are_json_on_stdout(
    tmp_path: Path, case: tuple[str, Callable[[Path], list[str]], str, tuple[str, ...]]
) -> None:
    _, make_args, kind, fragments = case
    result = invoke(make_args(tmp_path), "")
    line = assert_one_line_error(result, *fragments)
    answer = json.loads(result.stdout)
    assert set(answer) == {"error"}
    error = answer["error"]
    assert error["message"] == line.removeprefix("csl: error: ")
    assert error["exit_code"] == result.exit_code == 2
    assert error["kind"] == kind or (not kind and error["kind"])


def test_errors_without_json_leave_stdout_empty(tmp_path: Path) -> None:
    result = invoke(["best-move", _bad_position_card(tmp_path)])
    assert_one_line_error(result, "X9")
    assert result.stdout == ""


def test_analyze_seat_out_of_range(tmp_path: Path) -> None:
    assert_one_line_error(
        invoke(["analyze", str(finished_record(tmp_path)), "--seat", "9"]), "--seat"
    )


def test_best_move_for_a_seat_without_a_decision(tmp_path: Path) -> None:
    _, game, seat = position_file(tmp_path)
    other = (seat + 1) % game.players
    path = _write(
        tmp_path, "other.json", position_to_json(observation_to_position(game.observation(other)))
    )
    assert_one_line_error(invoke(["best-move", path]), "no decision")


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--debug", "replay", str(tmp_path / "nope.json")])
    assert result.exit_code != 0
    assert result.exception is not None and not isinstance(result.exception, SystemExit)


class _FailingAgent:
    """An agent that breaks on its third decision."""

    name = "failing"

    def __init__(self) -> None:
        self.calls = 0

    def act(self, obs: Observation) -> Move:
        self.calls += 1
        if self.calls == 3:
            raise RuntimeError("engine exploded")
        return obs.legal_moves()[0]


def test_a_failure_mid_game_is_exit_1_and_the_game_is_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import csl_ai.agents as agents

    monkeypatch.setattr(agents, "make_agent", lambda spec, seed=None: _FailingAgent())
    record_path = tmp_path / "crash.json"
    result = invoke(
        ["play", "-n", "2", "--humans", "none", "--seed", "4", "--record", str(record_path)]
    )
    assert_one_line_error(result, "engine exploded", code=1)
    record = load_record(record_path)
    assert record["meta"]["status"] == "failed"
    assert not replay_record(record).is_over


def test_main_entry_point_exits_with_the_status() -> None:
    from csl_ai.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", "/nonexistent/record.json"])
    assert exit_info.value.code == 2


def test_python_m_csl_ai_in_a_real_process() -> None:
    import os
    import subprocess
    import sys

    import csl_ai

    root = str(Path(csl_ai.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "csl_ai", "play", "--players", "7"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == ["csl: error: players must be an integer 2..5, got 7"]


def test_near_ties_are_marked_too_close_to_call() -> None:
    from csl_ai.cli.render import close_to_best
    from csl_ai.moves import Play
    from csl_ai.search import MoveStats, SearchResult

    def stats(card: int, low: float, high: float) -> MoveStats:
        return MoveStats(Play(card), 100, (low + high) / 2, (low, high), (low + high) / 2, 20.0, 100)

    result = SearchResult(
        seat=0, best_move=Play(1),
        moves=(stats(1, 0.40, 0.46), stats(2, 0.39, 0.45), stats(3, 0.20, 0.30)),
        iterations=300, worlds_sampled=300, elapsed_s=0.1,
    )  # fmt: skip
    assert [m.move for m in close_to_best(result)] == [Play(2)]
    example = str(Path(__file__).resolve().parents[1] / "docs" / "position-example.json")
    out = invoke(["best-move", example, "--iterations", "20000", "--seed", "1"])
    assert_ok(out)
    best_line = next(line for line in out.stdout.splitlines() if line.startswith("Best move: "))
    assert "too close to call with" in best_line
    assert "≈" in out.stdout


def test_csl_play_never_replaces_a_file_unasked(tmp_path: Path) -> None:
    """--record refuses an existing file, which stays as it was; the game being resumed
    may be saved back to its own file."""
    notes = tmp_path / "notes.txt"
    notes.write_text("precious")
    assert_one_line_error(invoke(["play", "-n", "2", "--ai", "random", "--record", str(notes)], "quit\n"))
    assert notes.read_text() == "precious"
    cut = tmp_path / "cut.json"
    assert_ok(invoke(["play", "-n", "2", "--ai", "random", "--seed", "3", "--record", str(cut)], "quit\n"))
    assert_one_line_error(invoke(["play", "-n", "2", "--ai", "random", "--record", str(cut)], "quit\n"))
    resumed = invoke(["play", "--resume", str(cut), "--record", str(cut)], "quit\n")
    assert_ok(resumed)
    assert load_record(cut)["seed"] == 3


# --- issue 38: terminal frictions ------------------------------------------------------------


def test_best_move_given_a_game_record_says_so_and_names_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = finished_record(tmp_path, players=2, seed=4)
    monkeypatch.chdir(tmp_path)
    line = assert_one_line_error(
        invoke(["best-move", record.name]),
        "this is a game record, not a position",
        f"csl analyze {record.name}",
        f"csl replay {record.name}",
    )
    assert "unknown field" not in line
    piped = invoke(["best-move", "-"], record.read_text())
    assert_one_line_error(piped, "this is a game record, not a position", "csl analyze FILE")


def _close_result(n_close: int) -> Any:
    """A search result whose best move has n_close others within its interval."""
    from csl_ai.search import MoveStats, SearchResult

    def stats(card: int, low: float, high: float) -> MoveStats:
        return MoveStats(Play(card), 100, (low + high) / 2, (low, high), (low + high) / 2, 20.0, 100)

    moves = [stats(0, 0.40, 0.46)]
    moves += [stats(1 + i % 34, 0.39 - 0.0001 * i, 0.45 - 0.0001 * i) for i in range(n_close)]
    moves.append(stats(35, 0.10, 0.20))
    return SearchResult(
        seat=0, best_move=Play(0), moves=tuple(moves), iterations=300, worlds_sampled=300,
        elapsed_s=0.1,
    )  # fmt: skip


def test_many_near_ties_are_counted_and_the_next_best_named() -> None:
    from csl_ai.cli.render import best_move_text

    assert best_move_text(_close_result(2)).plain == "B1 — too close to call with B2, B3"
    many = best_move_text(_close_result(207)).plain
    assert many == (
        "B1 — too close to call with 207 other moves (within the noise); the next best: "
        "B2, B3, B4"
    )
    assert "more" not in many


def test_legends_wrap_at_the_terminal_width_not_the_tables() -> None:
    from csl_ai.cli.render import search_table, tallies_table

    counts = "points (count): face-up elements of the kind, good weather cards, face-down cards"
    close = "≈ too close to call with the best move (95% intervals overlap)"

    game = Game(RulesConfig(players=2), seed=1)
    names = ["You", "seat 1"]
    for width, one_line in ((160, True), (50, False)):
        out = io.StringIO()
        console = Console(file=out, width=width)
        console.print(tallies_table(game, names, "Standings so far"))
        console.print(search_table(_close_result(2)))
        lines = [line.rstrip() for line in out.getvalue().splitlines()]
        assert (counts in lines) is one_line, out.getvalue()
        assert (close in lines) is one_line, out.getvalue()
        assert max(len(line) for line in lines) <= width


def test_csl_serve_stopped_by_ctrl_c_is_not_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C is how a server is stopped: a "stopped" line and exit 0. SIGTERM stays an
    error exit (143), as for every command."""
    import uvicorn

    from csl_ai.cli.common import TerminationSignal

    def interrupted(self: object, sockets: object = None) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(uvicorn.Server, "run", interrupted)
    result = invoke(["serve", "--port", "0"])
    assert_ok(result)
    assert result.stdout.splitlines()[-1] == "csl serve: stopped"
    assert result.stderr == ""

    def terminated(self: object, sockets: object = None) -> None:
        raise TerminationSignal(15)

    monkeypatch.setattr(uvicorn.Server, "run", terminated)
    result = invoke(["serve", "--port", "0"])
    assert result.exit_code == 143
    assert result.stdout.splitlines()[-1] == "csl serve: stopped"
    assert result.stderr.splitlines() == ["csl: error: terminated by SIGTERM"]


def test_the_reviews_analysis_and_csl_analyze_default_to_one_level() -> None:
    from csl_ai.agents import DEFAULT_LEVEL, LEVELS
    from csl_ai.cli.app import search_budget
    from csl_ai.web.review import DEFAULT_ANALYSIS_LEVEL, analysis_iterations

    assert search_budget(None, None) == (DEFAULT_LEVEL, None) == ("normal", None)
    assert DEFAULT_ANALYSIS_LEVEL == DEFAULT_LEVEL
    levels = {name: f"ismcts:{name}" for name in LEVELS}
    assert analysis_iterations(levels, None, 4)[0] == "normal"
