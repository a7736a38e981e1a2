"""The C floor (benchmarks/c_floor/floor.c) plays the same rules as the core.

Two kinds of evidence. The floor draws its random numbers exactly as the core does, so from
the same seed both must play the very same games: every tally, score and winner agrees
(these tests pin the core's draw scheme; if it changes, floor.c must follow). And from
independent seeds the two must agree in distribution, whatever the draw scheme: per-seat
means and frequencies of final scores, wins, stars, face-down cards, good weather and
tricks won, each within 5 standard errors of the difference.
"""

from __future__ import annotations

import json
import math
import random
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_core import first_trick_state, start_state  # noqa: E402
from bench_floor import PLAYERS, Floor, NoCompilerError, extension_compile_args, load_floor  # noqa: E402

from csl_ai import _core  # noqa: E402
from csl_ai.game import Game  # noqa: E402
from csl_ai.rules import RulesConfig  # noqa: E402

RULES = RulesConfig(players=PLAYERS)
SIGMAS = 5.0
SAMPLES = 40_000
FLOOR_SEEDS = 10**9
"""The floor's games in the distribution tests take seeds from here, the core's from 0."""


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory):
    try:
        return load_floor(tmp_path_factory.mktemp("c_floor"))
    except NoCompilerError as exc:
        pytest.skip(str(exc))


def last_round_trick_state(seed: int) -> _core.CoreState:
    """A state at the first trick of the last round, reached by random legal moves: a
    random finish from it ends the game, leaving that round's tricks in round_won."""
    rng = random.Random(seed)
    game = Game(RULES, seed=seed)
    while not (game.core.round == RULES.spec.rounds - 1 and game.phase.value == "play"):
        game.apply(rng.choice(game.legal_moves()))
    return game.core.copy()


def core_game(start: _core.CoreState, seed: int) -> tuple[int, list[dict[str, int]]]:
    """CoreState.play_random from start: (winners' mask, per seat the floor's columns)."""
    state = start.copy()
    state.play_random(seed)
    rows = []
    for seat, score in enumerate(state.scores()):
        candy, spider, leopard, star = state.elements[seat]
        rows.append({
            "candy": candy, "spider": spider, "leopard": leopard, "star": star,
            "faceup": state.faceup_cards[seat], "facedown": state.facedown_cards[seat],
            "good_weather": state.good_weather[seat], "total": score[-1],
        })
    return state.winners(), rows


def core_round_tricks(start: _core.CoreState, seed: int) -> tuple[int, list[int]]:
    """The last round's tricks from start by the core: (last winner, tricks won per seat)."""
    state = start.copy()
    state.play_random(seed)
    return state.last_winner, list(state.round_won)


def within_sigmas(name: str, core: Sequence[float], floor: Sequence[float]) -> None:
    """Assert two independent samples' means differ by at most SIGMAS standard errors."""
    def mean_var(xs: Sequence[float]) -> tuple[float, float]:
        m = sum(xs) / len(xs)
        return m, sum((x - m) ** 2 for x in xs) / (len(xs) - 1)

    core_mean, core_var = mean_var(core)
    floor_mean, floor_var = mean_var(floor)
    se = math.sqrt(core_var / len(core) + floor_var / len(floor))
    if se == 0.0:
        assert core_mean == floor_mean, name
        return
    z = (core_mean - floor_mean) / se
    assert abs(z) <= SIGMAS, f"{name}: core {core_mean:.4f}, floor {floor_mean:.4f} ({z:+.1f} sigma)"


# --- the same games from the same seed ---------------------------------------------------------


@pytest.mark.parametrize("deck_seed", [1, 2, 3])
def test_random_games_checksum_matches_the_core(lib, deck_seed: int) -> None:
    start = start_state(RULES, deck_seed)
    floor = Floor(lib, RULES, start)
    for seed in (0, 1, 12345):
        assert floor.random_games(20_000, seed) == _core.random_games(start, 20_000, seed)


def test_every_game_tally_matches_the_core(lib) -> None:
    start = start_state(RULES, 7)
    floor = Floor(lib, RULES, start)
    for seed in range(2_000):
        assert floor.play_game(seed) == core_game(start, seed), f"game seed {seed}"


@pytest.mark.parametrize("position_seed", [1, 2, 3, 4])
def test_tricks_from_piles_checksum_matches_the_core(lib, position_seed: int) -> None:
    start = first_trick_state(RULES, position_seed)
    floor = Floor(lib, RULES, start)
    for seed in (0, 1, 12345):
        assert floor.tricks_from_piles(100_000, seed) == _core.random_tricks_from_piles(start, 100_000, seed)


def test_every_round_of_tricks_matches_the_core(lib) -> None:
    start = last_round_trick_state(5)
    floor = Floor(lib, RULES, start)
    for seed in range(2_000):
        last, rows = floor.round_tricks(seed)
        assert (last, [row["won"] for row in rows]) == core_round_tricks(start, seed), f"seed {seed}"


# --- the same distributions from independent seeds ---------------------------------------------


def test_game_outcomes_agree_in_distribution(lib) -> None:
    start = start_state(RULES, 11)
    floor = Floor(lib, RULES, start)
    core_games = [core_game(start, seed) for seed in range(SAMPLES)]
    floor_games = [floor.play_game(FLOOR_SEEDS + seed) for seed in range(SAMPLES)]
    for seat in range(PLAYERS):
        def column(games, name):
            return [rows[seat][name] for _, rows in games]

        def win_share(games):
            return [((w >> seat) & 1) / bin(w).count("1") for w, _ in games]

        within_sigmas(f"seat {seat} total", column(core_games, "total"), column(floor_games, "total"))
        within_sigmas(f"seat {seat} win share", win_share(core_games), win_share(floor_games))
        for name in ("facedown", "good_weather", "candy"):
            within_sigmas(f"seat {seat} {name}", column(core_games, name), column(floor_games, name))
        for stars in range(4):
            within_sigmas(f"seat {seat} with {stars} stars",
                          [s == stars for s in column(core_games, "star")],
                          [s == stars for s in column(floor_games, "star")])

    def three_star_totals(games):
        return [row["total"] for _, rows in games for row in rows if row["star"] == 3]

    within_sigmas("total of a seat with all three stars", three_star_totals(core_games),
                  three_star_totals(floor_games))


def test_trick_phase_agrees_in_distribution(lib) -> None:
    start = last_round_trick_state(9)
    floor = Floor(lib, RULES, start)
    core_rounds = [core_round_tricks(start, seed) for seed in range(SAMPLES)]
    floor_rounds = [floor.round_tricks(FLOOR_SEEDS + seed) for seed in range(SAMPLES)]
    for seat in range(PLAYERS):
        within_sigmas(f"seat {seat} tricks won",
                      [won[seat] for _, won in core_rounds],
                      [rows[seat]["won"] for _, rows in floor_rounds])
        within_sigmas(f"seat {seat} takes the last trick",
                      [last == seat for last, _ in core_rounds],
                      [last == seat for last, _ in floor_rounds])


@pytest.mark.parametrize("env", [{}, {"CSL_PORTABLE": "1"}, {"CSL_DEBUG": "1"}])
def test_the_floor_is_built_with_the_flags_setup_gives_the_core(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("CSL_PORTABLE", "CSL_DEBUG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    setup_py = (Path(__file__).resolve().parents[1] / "setup.py").read_text()
    assert f"compile_args = {json.dumps(extension_compile_args())}" in setup_py
