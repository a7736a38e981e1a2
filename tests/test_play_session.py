"""`csl play` on top of `csl_ai.session.Table`: undo, board, score and rules at a prompt,
resume, the records folder, the hint's level, one score-table layout, and `csl rules`."""

from __future__ import annotations

import io
import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner, Result

from csl_ai.cli import app
from csl_ai.cli.play import (
    PlayOptions,
    PlaySession,
    QuitGame,
    moves_made,
    new_session,
)
from csl_ai.records import load_record, replay_record
from csl_ai.session import Table, TableOptions

runner = CliRunner()


def invoke(args: list[str], lines: list[str] | None = None) -> Result:
    return runner.invoke(app, args, input=None if lines is None else "\n".join(lines) + "\n")


def words(text: str) -> str:
    """Text with every run of white space one space (rich wraps long lines)."""
    return " ".join(text.split())


def one_line_error(result: Result, *fragments: str) -> str:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("csl: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


class Typist:
    """Answers a session's prompts: a script's words at given prompts (1-based), else a
    legal move of the seat to decide, drawn from a seeded stream. `lines` is all typed."""

    def __init__(self, seed: int = 0, script: dict[int, str] | None = None) -> None:
        self.session: PlaySession | None = None
        self.rng = random.Random(seed)
        self.script = dict(script or {})
        self.lines: list[str] = []
        self.hooks: dict[int, Callable[[PlaySession], None]] = {}

    def __call__(self, prompt: str) -> str:
        assert self.session is not None
        n = len(self.lines) + 1
        if n in self.hooks:
            self.hooks[n](self.session)
        line = self.script.get(n)
        if line is None:
            line = str(self.rng.choice(self.session.game.legal_moves()))
        self.lines.append(line)
        return line


def session_for(
    options: PlayOptions, typist: Typist, width: int = 100
) -> tuple[PlaySession, io.StringIO]:
    out = io.StringIO()
    session = new_session(options, Console(file=out, width=width), typist)
    typist.session = session
    return session, out


# --- undo ----------------------------------------------------------------------------------
def test_undo_takes_back_the_move_and_the_ai_replies_and_the_game_goes_on() -> None:
    options = PlayOptions(players=2, humans="0", ai="heuristic", seed=7)
    typist = Typist(seed=1, script={1: "undo", 6: "undo"})
    seen: dict[str, object] = {}

    def before_decision(session: PlaySession) -> None:
        seen["record"] = session.table.record()
        seen["moves"] = moves_made(session.game)

    def before_undo(session: PlaySession) -> None:
        seen["after_reply"] = moves_made(session.game)

    def after_undo(session: PlaySession) -> None:
        assert session.table.record() == seen["record"]
        assert moves_made(session.game) == seen["moves"]

    typist.hooks = {5: before_decision, 6: before_undo, 7: after_undo}
    session, out = session_for(options, typist)
    session.run()
    text = words(out.getvalue())
    assert "Nothing to undo" in text
    undone = seen["after_reply"] - seen["moves"] - 1  # type: ignore[operator]
    assert undone > 0, "the AI must have answered the decision taken back"
    assert f"Taken back: your {typist.lines[4]}, and the {undone} moves made after it." in text
    assert session.game.is_over
    assert replay_record(session.table.record()).result() == session.game.result()


class UndoAtRoundTwo(Typist):
    """Types ``undo`` at the first prompt of round 2, then plays on; notes the round of
    that prompt and of the next."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.rounds: list[int] = []

    def __call__(self, prompt: str) -> str:
        assert self.session is not None
        round_now = self.session.game.round
        if len(self.rounds) == 1:
            self.rounds.append(round_now)
        if round_now == 1 and not self.rounds:
            self.rounds.append(round_now)
            self.lines.append("undo")
            return "undo"
        return super().__call__(prompt)


def test_undo_goes_back_across_a_round_end_and_the_view_follows() -> None:
    options = PlayOptions(players=3, humans="1", ai="heuristic", seed=4)
    typist = UndoAtRoundTwo(seed=3)
    session, out = session_for(options, typist)
    session.run()
    assert typist.rounds == [1, 0], "undo at round 2's first prompt goes back into round 1"
    text = out.getvalue()
    assert text.count("End of round 1:") == 2, "round 1's end is told again after the takeback"
    assert text.count("Round 2 of 6") == 2
    assert session.game.is_over


# --- board, score, rules at a prompt ---------------------------------------------------------
def test_board_score_and_rules_at_a_prompt() -> None:
    options = PlayOptions(players=4, humans="0", ai="random", seed=3, sides="spider=B")
    script = {1: "board", 2: "score", 3: "?", 6: "board", 7: "rules", 8: "quit"}
    typist = Typist(seed=2, script=script)
    session, out = session_for(options, typist)
    with pytest.raises(QuitGame):
        session.run()
    text = words(out.getvalue())
    assert "worth to you now (if the round ended with it yours)" in text
    assert "trick group sky" in text and " your 1st " in text
    assert "Your hand:" in text and "Standings in round 1" in text
    assert "points (count)" in text
    assert "Spider B: points by your spiders, 0: 0, 1: 10, 2: 3" in text
    assert "Split your hand into one pile per group" in text
    assert "'undo' (take back your last decision)" in text
    assert "Your piles, cards left:" in text
    assert text.count("Notation") == 2


def test_the_sky_line_shows_each_cards_worth_to_the_human() -> None:
    from csl_ai.explain import sky_worth

    options = PlayOptions(players=2, humans="0", ai="heuristic", seed=11)
    typist = Typist(seed=5, script={2: "quit"})
    session, out = session_for(options, typist)
    worth = sky_worth(session.game, 0)
    with pytest.raises(QuitGame):
        session.run()
    first = out.getvalue().split("worth to you now: ")[1].split("your hand")[0]
    shown = [token for token in first.split() if token[0] in "+-0"]
    assert shown == [f"{w:+d}" if w else "0" for w in worth]


# --- refused input, worded to the person at the prompt ---------------------------------------
class Blunderer(Typist):
    """Types the mistakes a person makes, each once when the game offers it, then plays
    on: a split with a card swapped for one not in the hand, ``maybe`` at the weather
    prompt, a card from another group's pile, a card that does not follow. `refused`
    notes each mistake with what the message must name."""

    def __init__(self) -> None:
        super().__init__(seed=4)
        self.refused: dict[str, str] = {}

    def __call__(self, prompt: str) -> str:
        from csl_ai.notation import card_str, cards_of, format_cards

        assert self.session is not None
        game = self.session.game
        seat = game.to_move
        line = None
        if game.phase.value == "allocate" and "split" not in self.refused:
            hand = cards_of(game.hand(seat))
            stray = next(c for c in range(36) if not (game.hand(seat) >> c) & 1)
            typed = [stray, *hand[1:]]
            sizes = game.rules.spec.group_sizes
            piles, start = [], 0
            for size in sizes:
                piles.append(" ".join(card_str(c) for c in typed[start : start + size]))
                start += size
            line = " | ".join(piles)
            self.refused["split"] = f"{card_str(stray)} is not in it, {card_str(hand[0])} is left out"
        elif game.phase.value == "weather" and "weather" not in self.refused:
            line = "maybe"
            self.refused["weather"] = "answer yes (bet on good weather) or no; y, n, true and false"
        elif game.phase.value == "play":
            piles = game.piles(seat)
            group = game.core.group
            elsewhere = [c for g, p in enumerate(piles) if g != group for c in cards_of(p)]
            off = cards_of(piles[group] & ~game.core.legal_plays())
            if "pile" not in self.refused and elsewhere:
                line = card_str(elsewhere[0])
                self.refused["pile"] = (
                    f"{line} is in your pile for group "
                    f"{next(g for g, p in enumerate(piles) if (p >> elsewhere[0]) & 1) + 1}"
                )
            elif "follow" not in self.refused and off:
                line = card_str(off[0])
                legal = format_cards(game.core.legal_plays())
                self.refused["follow"] = f"{line} does not follow: you must follow"
                self.refused["follow with"] = f"with {legal}"
        if line is None:
            return super().__call__(prompt)
        self.lines.append(line)
        return line


def test_a_refused_move_names_the_cards_and_speaks_to_you() -> None:
    """Issue 38: the stray and the missing card of a bad split are named, the weather
    prompt says what it accepts, and a card refused in play is about "your" pile, never
    "seat 0's"."""
    options = PlayOptions(players=2, humans="0", ai="heuristic", seed=2025)
    typist = Blunderer()
    session, out = session_for(options, typist, width=300)
    session.run()
    refusals = [line for line in out.getvalue().splitlines() if line.startswith("Not accepted:")]
    assert set(typist.refused) == {"split", "weather", "pile", "follow", "follow with"}
    assert len(refusals) == 4, refusals
    for name, fragment in typist.refused.items():
        assert any(fragment in line for line in refusals), (name, fragment, refusals)
    assert not any("seat 0" in line for line in refusals), refusals
    assert session.game.is_over


# --- the hint's level ------------------------------------------------------------------------
def test_the_hint_searches_at_the_ai_seats_level() -> None:
    options = PlayOptions(players=2, humans="0", ai="ismcts:iters=80", seed=6)
    typist = Typist(script={1: "hint", 2: "quit"})
    session, out = session_for(options, typist, width=200)
    with pytest.raises(QuitGame):
        session.run()
    assert session.table.hint_limit().iterations == 80
    assert "80 iterations at the AI seats' level)" in words(out.getvalue())
    normal = Table.new(TableOptions(players=2, humans=(0,), ai="ismcts:normal", seed=1))
    assert normal.hint_level_text() == "the AI seats' level, normal"
    heuristic = Table.new(TableOptions(players=2, humans=(0,), ai="heuristic", seed=1))
    assert heuristic.hint_level_text() == "the default level, normal (the AI seats do not search)"
    assert heuristic.hint_limit().iterations == 40_000


# --- resume and the records folder -----------------------------------------------------------
def _whole_game_lines(options: PlayOptions, seed: int) -> list[str]:
    typist = Typist(seed=seed)
    session, _ = session_for(options, typist)
    session.run()
    return typist.lines


def test_resume_finishes_a_saved_game_as_playing_it_through(tmp_path: Path) -> None:
    """The search agents seed each decision from the game seed and the position, so a
    resumed game plays on as the original did."""
    options = PlayOptions(players=3, humans="0", ai="ismcts:iters=30", seed=12)
    lines = _whole_game_lines(options, seed=8)
    args = ["play", "-n", "3", "--ai", "ismcts:iters=30", "--seed", "12"]
    whole = tmp_path / "whole.json"
    assert invoke([*args, "--record", str(whole)], lines).exit_code == 0
    cut = tmp_path / "cut.json"
    first = invoke([*args, "--record", str(cut)], [*lines[:9], "quit"])
    assert first.exit_code == 0
    assert f"Continue it with: csl play --resume {cut}" in words(first.stdout)
    assert not replay_record(load_record(cut)).is_over
    resumed = invoke(["play", "--resume", str(cut)], lines[9:])
    assert resumed.exit_code == 0, resumed.stdout + resumed.stderr
    assert "Resumed: round" in resumed.stdout
    assert f"Saved the game to {cut}" in words(resumed.stdout)
    done, reference = load_record(cut), load_record(whole)
    assert done["rounds"] == reference["rounds"] and done["result"] == reference["result"]
    assert done["agents"] == reference["agents"] and done["meta"]["status"] == "finished"


def test_resume_refuses_what_cannot_be_continued(tmp_path: Path) -> None:
    finished = tmp_path / "done.json"
    args = ["play", "-n", "2", "--humans", "none", "--ai", "random", "--seed", "1"]
    assert invoke([*args, "--record", str(finished)]).exit_code == 0
    one_line_error(invoke(["play", "--resume", str(finished)]), "done.json", "over")

    cut = tmp_path / "cut.json"
    quit_early = invoke(["play", "-n", "2", "--ai", "random", "--record", str(cut)], ["quit"])
    assert quit_early.exit_code == 0
    record = json.loads(cut.read_text())
    del record["agents"]
    no_agents = tmp_path / "no-agents.json"
    no_agents.write_text(json.dumps(record))
    one_line_error(invoke(["play", "--resume", str(no_agents)]), "no-agents.json", "agents")

    broken = tmp_path / "broken.json"
    broken.write_text(cut.read_text()[:-20])
    one_line_error(invoke(["play", "--resume", str(broken)]), "broken.json")
    one_line_error(invoke(["play", "--resume", str(tmp_path / "none.json")]), "none.json")
    one_line_error(invoke(["play", "--resume", str(cut), "-n", "3"]), "--resume", "--players")
    assert load_record(cut)["meta"]["status"] == "quit", "a refused resume leaves the file alone"


def test_records_go_to_the_records_folder_and_the_path_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "my games"
    monkeypatch.setenv("CSL_RECORDS_DIR", str(folder))
    monkeypatch.chdir(tmp_path)
    result = invoke(["play", "-n", "2", "--ai", "random", "--seed", "1"], ["quit"])
    assert result.exit_code == 0
    saved = list(folder.glob("csl-game-*.json"))
    assert len(saved) == 1
    assert f"The game is saved to {saved[0]}" in words(result.stdout)
    assert f"Saved the unfinished game to {saved[0]}" in words(result.stdout)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my games"], "nothing saved here"


# --- one score-table layout -----------------------------------------------------------------
def _header_after(text: str, title: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    return [cell.strip() for cell in lines[start + 1].split("┃")]


def test_standings_and_final_scores_share_one_layout() -> None:
    options = PlayOptions(players=2, humans="none", ai="heuristic", seed=9)
    session, out = session_for(options, Typist(), width=120)
    session.run()
    text = out.getvalue()
    standings = _header_after(text, "Standings after round 1")
    final = _header_after(text, "Final scores")
    assert standings == final
    assert standings == [
        "seat", "candy", "spider", "leopard", "star", "good weather", "face down", "total"
    ]  # fmt: skip
    assert text.count("points (count)") == session.game.rules.spec.rounds
    result = session.game.result()
    last = text.split("Final scores")[1]
    for seat, line in enumerate(result.scores):
        row = next(r for r in last.splitlines() if r.startswith(session.names[seat]))
        assert row.split("│")[-1].strip() == str(line.total)
        assert row.split("│")[2].strip().startswith(f"{line.spider} (")


# --- csl rules -----------------------------------------------------------------------------
def test_csl_rules_prints_the_scoring_of_the_sides_in_play() -> None:
    result = invoke(["rules", "--players", "3", "--sides", "spider=B,star=B"])
    assert result.exit_code == 0, result.stderr
    text = words(result.stdout)
    assert "Spider B: points by your spiders, 0: 0, 1: 10, 2: 3, 3: 2, 4: 1, 5: 10" in text
    assert "Spider A" not in text and "Candy A" in text
    assert "win the game outright" in text and "C1 S2 L1" in text
    one_line_error(invoke(["rules", "--players", "7"]), "players")
    one_line_error(invoke(["rules", "--sides", "spider=C"]), "spider=C")
