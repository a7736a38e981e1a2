"""benchmarks/tune_search.py's paired comparison: --save keeps each game, --against
takes the difference game by game and refuses a broken file with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import tune_search  # noqa: E402


def test_paired_difference_is_taken_game_by_game(tmp_path: Path) -> None:
    base = {(d, r): 0.5 for d in range(10) for r in range(4)}
    games = {key: share + (0.25 if key[0] < 5 else 0.0) for key, share in base.items()}
    games[(99, 0)] = 1.0
    path = tmp_path / "base.json"
    deals = {"players": 4, "base": 777, "opponent": "heuristic"}
    path.write_text(json.dumps({"deals": deals, "games": [[d, r, s] for (d, r), s in base.items()]}))
    assert tune_search.load_games(path) == (deals, base)
    line = tune_search.paired_line(games, base, path)
    assert "+12.5 points" in line and "over 40 games in common" in line
    lo, hi = (float(x) for x in line.split("[")[1].split("]")[0].replace(" ", "").split(","))
    assert 0.0 <= lo < 12.5 < hi <= 25.0
    assert "no game in common" in tune_search.paired_line({(50, 0): 1.0}, base, path)


def test_broken_against_file_is_one_line_exit_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "tune_search.py"), "--deals", "1", "--against", str(broken)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert "--against" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_against_a_file_of_other_deals_is_refused(tmp_path: Path) -> None:
    """Deal d of another seed base, player count or opponent is another game: comparing
    them would be silently wrong, so the run refuses before playing."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"deals": {"players": 4, "base": 9000, "opponent": "heuristic"},
                                 "games": [[0, 0, 1.0]]}))
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "tune_search.py"), "--deals", "1", "--against", str(other)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert "other deals" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


def test_the_rules_opponent_plays_the_playout_rules_without_random_moves() -> None:
    """--opponent rules: every decision the rules' own (as the search models the others
    with no random move), the same for any seed."""
    from csl_ai.game import Game
    from csl_ai.rules import RulesConfig
    from csl_ai.search import SearchConfig, heuristic_move

    game = Game(RulesConfig(players=4), seed=5)
    bots = [tune_search.opponent("rules", seed) for seed in range(4)]
    exact = SearchConfig(playout_epsilon=0.0)
    while not game.is_over:
        seat = game.pending_seats()[0] if game.to_move is None else game.to_move
        obs = game.observation(seat)
        move = bots[seat].act(obs)
        assert move == heuristic_move(obs, 12345, exact) and move in game.legal_moves(seat)
        game.apply(move, seat)
    assert tune_search.opponent("heuristic", 1).name == "heuristic"


def _save(path: Path, base: int, games: dict[tuple[int, int], float]) -> Path:
    deals = {"players": 4, "base": base, "opponent": "heuristic"}
    path.write_text(json.dumps({"deals": deals, "games": [[d, r, s] for (d, r), s in games.items()]}))
    return path


def test_pool_paired_keeps_each_rows_deals_apart(tmp_path: Path) -> None:
    """Two rows pooled: the mean over all their games, and deal 3 of one row is not deal 3
    of the other (with rows merged by deal index the interval would be far too narrow)."""
    import pool_paired

    old = {(d, r): 0.5 for d in range(8) for r in range(4)}
    up = {key: 0.75 for key in old}
    pairs = [
        (_save(tmp_path / "a_new.json", 1, up), (_save(tmp_path / "a_old.json", 1, old),)),
        (_save(tmp_path / "b_new.json", 2, dict(old)), (_save(tmp_path / "b_old.json", 2, old),)),
    ]
    by_deal = pool_paired.paired_rows(pairs)
    assert len(by_deal) == 16 and sum(len(v) for v in by_deal.values()) == 64
    line = pool_paired.pooled_line(by_deal)
    assert line.startswith("+12.5 (") and line.endswith("over 64 games")
    lo, hi = (float(x) for x in line.split("(")[1].split(")")[0].split(".."))
    assert 0.0 < lo < 12.5 < hi < 25.0


def test_pool_paired_refuses_other_deals_with_one_line(tmp_path: Path) -> None:
    games = {(0, 0): 1.0, (1, 0): 0.0}
    new = _save(tmp_path / "new.json", 1, games)
    old = _save(tmp_path / "old.json", 2, games)
    result = subprocess.run(
        [sys.executable, str(BENCHMARKS / "pool_paired.py"), f"{new}:{old}"],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert "other deals" in result.stderr and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


def test_pool_paired_compares_with_the_mean_of_baseline_streams(tmp_path: Path) -> None:
    import pool_paired

    new = _save(tmp_path / "new.json", 1, {(0, 0): 1.0, (1, 0): 0.5, (2, 0): 0.0})
    stream0 = _save(tmp_path / "s0.json", 1, {(0, 0): 1.0, (1, 0): 0.0, (2, 0): 0.0})
    stream1 = _save(tmp_path / "s1.json", 1, {(0, 0): 0.0, (1, 0): 0.0, (2, 0): 0.0, (3, 0): 1.0})
    pair = pool_paired.parse_pair(f"{new}:{stream0},{stream1}")
    by_deal = pool_paired.paired_rows([pair])
    assert by_deal == {(0, 0): [0.5], (0, 1): [0.5], (0, 2): [0.0]}
