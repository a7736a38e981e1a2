"""Random-playout speed of the rules core against a hand-written C floor (issue 40).

Prints, for 4 players with the default rules:
- ns for the trick phase of one round in the core (`_core.random_tricks_from_piles`, set
  up as in bench_core.py: random legal plays from given piles, each trick's sky card
  credited to its winner) and in the floor (`floor_tricks_from_piles`), and core / floor;
- ns per full random game in the core (`_core.random_games`: deal, allocation, weather
  bet, every trick of every round, end-of-round tallies, scores and winners) and in the
  floor (`floor_random_games`), and core / floor.

The floor (benchmarks/c_floor/floor.c) is the same rules written as plainly and as fast as
hand-written C allows, drawing its random numbers exactly as the core does (the same games
from the same seed; tests/test_c_floor.py checks it). It is compiled here with the C
compiler and flags Python reports for extension builds plus the extra flags setup.py gives
the core, and cached under build/c_floor/. A ratio near 1 says the core does no avoidable
work; targets (issue 40): tricks within 1.15x of the floor, a game within 1.25x.

Core and floor runs alternate, so a slow patch of the shared machine hits both; each figure
is the median of --repeats runs of about --seconds each, timed in this process's CPU time
(time.process_time). The ratio is the median of the paired per-run ratios.

    python benchmarks/bench_floor.py [--repeats 9] [--seconds 0.3] [--json]
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from bench_core import first_trick_state, size_for, start_state

from csl_ai import _core
from csl_ai.game import sky_cards_for
from csl_ai.rules import ALL_A, RulesConfig, StarOption

PLAYERS = 4
TRICKS_RATIO_TARGET = 1.15
GAME_RATIO_TARGET = 1.25

REPO = Path(__file__).resolve().parents[1]
FLOOR_SOURCE = REPO / "benchmarks" / "c_floor" / "floor.c"
FLOOR_CACHE = REPO / "build" / "c_floor"

GAME_COLUMNS = ("candy", "spider", "leopard", "star", "faceup", "facedown", "good_weather", "total")
"""Columns of one seat's row from floor_play_game."""
ROUND_COLUMNS = ("candy", "spider", "leopard", "star", "won")
"""Columns of one seat's row from floor_round_tricks."""


class FloorError(RuntimeError):
    """The floor could not be built."""


class NoCompilerError(FloorError):
    """No C compiler to build the floor with."""


def extension_compile_args() -> list[str]:
    """The extra flags setup.py gives the core for this environment (keep in step)."""
    if os.environ.get("CSL_DEBUG") == "1":
        return ["-O0", "-g"]
    if os.environ.get("CSL_PORTABLE") == "1":
        return ["-O3", "-fno-strict-aliasing", "-ffp-contract=off"]
    return ["-O3", "-fno-strict-aliasing", "-ffp-contract=off", "-march=native"]


def compiler() -> list[str]:
    """The C compiler Python builds extensions with; NoCompilerError when it is not installed."""
    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    if not cc or shutil.which(cc[0]) is None:
        raise NoCompilerError(f"no C compiler found (looked for {cc[0] if cc else 'cc'!r}; set CC)")
    return cc


def compile_flags() -> list[str]:
    """The compiler and flags the floor is built with: those setuptools gives the core's C
    (Python's CFLAGS and CCSHARED, then setup.py's extra flags)."""
    cflags = os.environ.get("CFLAGS") or sysconfig.get_config_var("CFLAGS") or ""
    ccshared = sysconfig.get_config_var("CCSHARED") or "-fPIC"
    return [*compiler(), *shlex.split(cflags), *shlex.split(ccshared), *extension_compile_args()]


def build_floor(cache: Path = FLOOR_CACHE) -> Path:
    """The floor's shared library, compiled once per source and command into cache."""
    flags = compile_flags()
    key = hashlib.sha256(FLOOR_SOURCE.read_bytes() + "\0".join(flags).encode()).hexdigest()[:16]
    library = cache / f"floor-{key}.so"
    if library.exists():
        return library
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        built = Path(tmp) / "floor.so"
        command = [*flags, "-shared", "-o", str(built), str(FLOOR_SOURCE)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise FloorError(f"compiling {FLOOR_SOURCE.name} failed:\n{done.stderr.strip()}")
        os.replace(built, library)
    return library


def load_floor(cache: Path = FLOOR_CACHE) -> ctypes.CDLL:
    """The compiled floor, with the argument types of its C API."""
    lib = ctypes.CDLL(str(build_floor(cache)))
    u64p = ctypes.POINTER(ctypes.c_uint64)
    u8p = ctypes.POINTER(ctypes.c_uint8)
    i32p = ctypes.POINTER(ctypes.c_int32)
    lib.floor_tricks_from_piles.argtypes = [u64p, u8p, u8p, ctypes.c_int, ctypes.c_long, ctypes.c_uint64, u64p]
    lib.floor_tricks_from_piles.restype = ctypes.c_long
    lib.floor_round_tricks.argtypes = [u64p, u8p, u8p, ctypes.c_int, ctypes.c_uint64, i32p]
    lib.floor_round_tricks.restype = ctypes.c_int
    lib.floor_random_games.argtypes = [u8p, u8p, ctypes.c_int, ctypes.c_long, ctypes.c_uint64]
    lib.floor_random_games.restype = ctypes.c_long
    lib.floor_play_game.argtypes = [u8p, u8p, ctypes.c_int, ctypes.c_uint64, i32p]
    lib.floor_play_game.restype = ctypes.c_int
    return lib


class Floor:
    """The floor's C API bound to one position: a new game (for whole games) or a state at
    the first trick of a round (for its trick phase), both of the default 4-player rules."""

    def __init__(self, lib: ctypes.CDLL, rules: RulesConfig, state: _core.CoreState) -> None:
        if rules.players != PLAYERS or rules.sides != ALL_A or rules.star_option is not StarOption.TWICE:
            raise ValueError("the floor plays 4 players with the default scoring rules")
        self.lib = lib
        cards = sky_cards_for(rules)
        game_order = state.sky_order
        line = state.line
        self.game_kinds = (ctypes.c_uint8 * len(game_order))(*(int(cards[i].kind) for i in game_order))
        self.game_counts = (ctypes.c_uint8 * len(game_order))(*(cards[i].count for i in game_order))
        self.line_kinds = (ctypes.c_uint8 * len(line))(*(int(cards[i].kind) for i in line))
        self.line_counts = (ctypes.c_uint8 * len(line))(*(cards[i].count for i in line))
        self.piles = (ctypes.c_uint64 * (PLAYERS * 3))(*(p for seat in state.piles for p in seat))
        self.leader = state.leader
        self.first_seat = state.first_player
        self.scratch = (ctypes.c_uint64 * PLAYERS)()
        self.is_new_game = state.phase == "deal" and state.round == 0
        self.is_first_trick = state.phase == "play" and state.line_pos == 0 and max(state.trick_cards) < 0

    def _require(self, ok: bool, what: str) -> None:
        if not ok:
            raise ValueError(f"the floor's position is not {what}")

    def tricks_from_piles(self, n_rounds: int, seed: int) -> int:
        """floor_tricks_from_piles: the trick phase of the bound round, n_rounds times."""
        self._require(self.is_first_trick, "a round's first trick")
        return self.lib.floor_tricks_from_piles(
            self.piles, self.line_kinds, self.line_counts, self.leader, n_rounds, seed, self.scratch
        )

    def round_tricks(self, seed: int) -> tuple[int, list[dict[str, int]]]:
        """One trick phase from its own seed: (last winner, per seat ROUND_COLUMNS)."""
        self._require(self.is_first_trick, "a round's first trick")
        out = (ctypes.c_int32 * (PLAYERS * len(ROUND_COLUMNS)))()
        last = self.lib.floor_round_tricks(self.piles, self.line_kinds, self.line_counts, self.leader, seed, out)
        return last, _rows(out, ROUND_COLUMNS)

    def random_games(self, n_games: int, seed: int) -> int:
        """floor_random_games: n_games from the first deal; the sum of the winners' masks."""
        self._require(self.is_new_game, "a new game")
        return self.lib.floor_random_games(self.game_kinds, self.game_counts, self.first_seat, n_games, seed)

    def play_game(self, seed: int) -> tuple[int, list[dict[str, int]]]:
        """One game from its own seed: (winners' mask, per seat GAME_COLUMNS)."""
        self._require(self.is_new_game, "a new game")
        out = (ctypes.c_int32 * (PLAYERS * len(GAME_COLUMNS)))()
        winners = self.lib.floor_play_game(self.game_kinds, self.game_counts, self.first_seat, seed, out)
        return winners, _rows(out, GAME_COLUMNS)


def _rows(out: ctypes.Array, columns: tuple[str, ...]) -> list[dict[str, int]]:
    width = len(columns)
    return [dict(zip(columns, out[s * width:(s + 1) * width])) for s in range(PLAYERS)]


@dataclass(frozen=True)
class Comparison:
    """One figure: core and floor ns per unit (medians), their paired ratio and its target."""

    unit: str
    core_ns: float
    floor_ns: float
    ratio: float
    target: float

    @property
    def met(self) -> bool:
        return self.ratio <= self.target


def _ns_per_unit(run: Callable[[int], object], count: int) -> float:
    start = time.process_time()
    run(count)
    return (time.process_time() - start) * 1e9 / count


def compare(unit: str, core: Callable[[int], object], floor: Callable[[int], object],
            repeats: int, seconds: float, target: float) -> Comparison:
    """Time core and floor in alternating runs; medians and the median paired ratio."""
    core_count, floor_count = size_for(core, seconds), size_for(floor, seconds)
    core_ns, floor_ns = [], []
    for _ in range(repeats):
        core_ns.append(_ns_per_unit(core, core_count))
        floor_ns.append(_ns_per_unit(floor, floor_count))
    ratio = statistics.median(c / f for c, f in zip(core_ns, floor_ns))
    return Comparison(unit, statistics.median(core_ns), statistics.median(floor_ns), ratio, target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9, help="timed runs per figure (median)")
    parser.add_argument("--seconds", type=float, default=0.3, help="length of one timed run")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args()
    if args.repeats < 1 or args.seconds <= 0:
        parser.error("--repeats must be >= 1 and --seconds > 0")
    try:
        lib = load_floor()
    except FloorError as exc:
        sys.exit(f"bench_floor: {exc}")

    rules = RulesConfig(players=PLAYERS)
    start = start_state(rules, args.seed)
    tricks_start = first_trick_state(rules, args.seed)
    game_floor = Floor(lib, rules, start)
    tricks_floor = Floor(lib, rules, tricks_start)
    seed = args.seed

    comparisons = [
        compare("round's tricks",
                lambda n: _core.random_tricks_from_piles(tricks_start, n, seed),
                lambda n: tricks_floor.tricks_from_piles(n, seed),
                args.repeats, args.seconds, TRICKS_RATIO_TARGET),
        compare("full game",
                lambda n: _core.random_games(start, n, seed),
                lambda n: game_floor.random_games(n, seed),
                args.repeats, args.seconds, GAME_RATIO_TARGET),
    ]

    if args.json:
        print(json.dumps({
            "players": PLAYERS,
            "repeats": args.repeats,
            "seconds": args.seconds,
            "compile_flags": compile_flags(),
            "figures": [{**asdict(c), "met": c.met} for c in comparisons],
        }, indent=2))
        return
    print(f"{PLAYERS} players, default rules; medians of {args.repeats} alternating runs of ~{args.seconds:g} s")
    print(f"floor built with: {shlex.join(compile_flags())}")
    print(f"{'':16}{'core ns':>10}{'floor ns':>10}{'core/floor':>12}")
    for c in comparisons:
        verdict = "met" if c.met else "NOT met"
        print(f"{c.unit:16}{c.core_ns:10.1f}{c.floor_ns:10.1f}{c.ratio:11.3f}x   "
              f"(target <= {c.target:g}x: {verdict})")


if __name__ == "__main__":
    main()
