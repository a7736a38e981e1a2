"""The `csl` command: typer commands that parse, call into csl_ai and print.

Heavy modules (the search, agents, records) are imported inside each command, so
`csl --help` is quick and works whatever is installed. Every error goes through
`csl_ai.cli.common.CslGroup`: one line on stderr, exit 2 for bad input, 1 for a failure.
"""

from __future__ import annotations

import importlib
import json
from typing import Annotated

import typer
from rich.console import Console

from csl_ai import __version__
from csl_ai.cli.common import (
    MAX_ITERATIONS,
    MAX_TIME_MS,
    STATE,
    DECK_HELP,
    CliInputError,
    CslGroup,
    check_positive,
    json_errors,
)
from csl_ai.cli.candylab_cmd import GAME_HELP, GameName
from csl_ai.errors import short_repr
from csl_ai.rules import StarOption

BEST_MOVE_JSON_HELP = """
With --json, stdout holds one JSON object (SearchResult.to_json() and the level) and
nothing else; an error is {"error": {"kind", "message", "exit_code"}} there instead:

    level           the level searched at ("fast", "normal", "strong"; null for
                    --iterations or --time-ms)
    seat            the seat the position is for
    best_move       the chosen move (a move object)
    moves           every candidate searched, best first:
      move            a move object
      visits          times the search tried it
      mean_utility    mean utility (win share plus a small margin term)
      ci95            [low, high] 95% interval of mean_utility (null if unbounded)
      win_probability estimated chance of winning (the search's mean win share
                      calibrated on finished games; see csl_ai/calibration.py)
      raw_win_probability
                      the search's own mean win share (null when not calibrated)
      expected_points estimated final points
      worlds          sampled worlds it was tried in
    iterations      search iterations run
    worlds_sampled  determinized worlds sampled
    elapsed_s       wall time of the search in seconds
    algorithm       "ismcts" or "pimc"
    utility         "win" or "points"
    threads         search threads used
    nodes           tree nodes created
    beliefs         how the search models each other seat, from its bets and card plays
                    in finished rounds: seat, models ({"random": p, "rules": p,
                    "exact": p}, the posterior chance of each player model: a random
                    player, a sensible one, one playing exactly by the search's rules),
                    decisions (moves scored)

A move object is {"type": "play", "card": "B7"},
{"type": "allocate", "piles": ["B7 R2 G5", "B1 R9 G9", "B3 R4 G12"]}
or {"type": "weather", "good_weather": true}.
"""

Threads = Annotated[
    int,
    typer.Option(
        "--threads",
        help="Search threads (with --seed the answer repeats for the same thread count; "
        "another count may differ on close calls).",
    ),
]
"""The --threads option of every command that searches."""

Level = Annotated[
    str | None,
    typer.Option(
        "--level",
        help="Search budget by the AI's levels: fast, normal (the default) or strong, the "
        "time of 1,000, 10,000 and 50,000 iterations of the search that played every round "
        "out (3.1 to 4.4 times as many iterations now, by player count).",
    ),
]
"""The --level option of the commands that judge moves (the levels of csl_ai.agents.LEVELS)."""

app = typer.Typer(
    name="csl",
    cls=CslGroup,
    help="Candy Spiders Leopards: play against the AI, ask it for the best move, "
    "replay and analyse games.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
    context_settings={"help_option_names": ["-h", "--help"]},
)


MAX_THREADS = 256
"""Most search threads (as SearchLimit allows)."""
MAX_REPEATS = 1000


def check_seed(seed: int | None) -> None:
    """Raise CliInputError for a search seed the search cannot take (it has 64 bits: a
    larger one would repeat a smaller one's answer)."""
    if seed is not None and not 0 <= seed < 2**64:
        raise CliInputError(f"--seed: must be 0..{2**64 - 1}, got {short_repr(seed)}")


def check_time_ms(time_ms: float | None) -> None:
    """Raise CliInputError unless time_ms is None or in (0, MAX_TIME_MS]."""
    if time_ms is not None and not 0 < time_ms <= MAX_TIME_MS:
        raise CliInputError(
            f"--time-ms: must be more than 0 and at most {MAX_TIME_MS:,.0f} (a day), got {time_ms!r}"
        )


def search_budget(
    level: str | None, iterations: int | None, time_ms: float | None = None
) -> tuple[str | None, int | None]:
    """The level or iteration budget a command searches with: the level named, or the
    default level when no other budget is given (its iterations follow the position's
    player count, so the iterations are None then); --level excludes --iterations and
    --time-ms."""
    from csl_ai.agents import DEFAULT_LEVEL, LEVELS, level_range_text

    if level is not None:
        if level not in LEVELS:
            raise CliInputError(
                f"--level: unknown level {short_repr(level)} (expected {', '.join(LEVELS)})"
            )
        for option, value in (("--iterations", iterations), ("--time-ms", time_ms)):
            if value is not None:
                raise CliInputError(
                    f"--level and {option}: give one budget "
                    f"(a level is {level_range_text(level)} iterations)"
                )
        return level, None
    if iterations is None and time_ms is None:
        return DEFAULT_LEVEL, None
    return None, iterations


def _console() -> Console:
    return Console(highlight=False)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"csl {__version__}")
        raise typer.Exit()


@app.callback()
def _global_options(
    debug: Annotated[
        bool, typer.Option("--debug", help="Show the full traceback of an error.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Candy Spiders Leopards: play against the AI, get the best move, replay and analyse games."""
    STATE.debug = debug


@app.command()
def play(
    players: Annotated[int, typer.Option("--players", "-n", help="Players, 2 to 5.")] = 4,
    humans: Annotated[
        str,
        typer.Option("--humans", help="Seats played by people, e.g. 0,2 ('none' to watch the AI)."),
    ] = "0",
    ai: Annotated[
        str,
        typer.Option(
            "--ai",
            help="The AI for the other seats: random, heuristic, pimc[:iters=N], "
            "ismcts[:fast|normal|strong|iters=N|ms=N][,threads=N].",
        ),
    ] = "ismcts:normal",
    sides: Annotated[
        str,
        typer.Option(
            "--sides", help="Scoring card sides, e.g. candy=A,spider=B (unnamed kinds: A)."
        ),
    ] = "",
    star_option: Annotated[
        StarOption, typer.Option("--star-option", help="Shooting star A with all 3 stars.")
    ] = StarOption.TWICE,
    deck: Annotated[str | None, typer.Option("--deck", help=DECK_HELP)] = None,
    seed: Annotated[
        int | None, typer.Option(
            "--seed",
            help="Seed for the deal and the AI. Without it the deal is secret and its "
            "seed is shown when the game is over.",
        )
    ] = None,
    hint: Annotated[
        bool,
        typer.Option(
            "--hint",
            help="Show the AI's recommendation before each of your decisions (it searches "
            "at the AI seats' level).",
        ),
    ] = False,
    record: Annotated[
        str | None,
        typer.Option(
            "--record",
            help="Where to save the game record, a file that does not exist yet (default: "
            "a new csl-game-TIME.json in $CSL_RECORDS_DIR, else $XDG_DATA_HOME/csl/records, "
            "else ~/.local/share/csl/records).",
        ),
    ] = None,
    first_seat: Annotated[int, typer.Option("--first-seat", help="Seat leading round 1.")] = 0,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            metavar="RECORD",
            help="Continue a saved unfinished game (rules, seats and seed from the record), "
            "saving it back to that file (refused while another csl process plays it).",
        ),
    ] = None,
    game: Annotated[GameName, typer.Option("--game", help=GAME_HELP)] = GameName.CSL,
) -> None:
    """Play a whole game in the terminal against the AI.

    At a prompt type a card (B7), piles (B7 R2 G5 | B1 R9 G9 | B3 R4 G12) or yes/no;
    ? or rules for the rules and help, hint for the AI's advice (at the AI's level),
    board, score, undo (take back your last decision), quit to stop. The record is saved
    at the end, and also when the game is cut short (Ctrl-C, end of input, quit);
    --resume continues it.
    """
    if game is GameName.CANDY_LAB:
        from csl_ai.cli import candylab_cmd

        candylab_cmd.refuse_options("Candy Lab", {
            "--sides": bool(sides), "--star-option": star_option is not StarOption.TWICE,
            "--deck": deck is not None,
        })
        setup_given = [
            flag for flag, given in (
                ("--players", players != 4), ("--humans", humans != "0"),
                ("--ai", ai != "ismcts:normal"), ("--seed", seed is not None),
                ("--first-seat", first_seat != 0),
            ) if given
        ]
        code = candylab_cmd.play_command(
            players=players, humans=humans, ai=ai, seed=seed, record=record,
            first_seat=first_seat, console=_console(), hint=hint, resume=resume,
            setup_given=setup_given,
        )
        if code:
            raise typer.Exit(code)
        return
    from csl_ai.cli.play import PlayOptions, play_command

    options = PlayOptions(
        players=players,
        humans=humans,
        ai=ai,
        sides=sides,
        star_option=star_option,
        deck=deck,
        seed=seed,
        hint=hint,
        record=record,
        first_seat=first_seat,
        resume=resume,
    )
    code = play_command(options, _console())
    if code:
        raise typer.Exit(code)


@app.command("best-move", epilog=BEST_MOVE_JSON_HELP)
def best_move(
    position: Annotated[
        str, typer.Argument(metavar="POSITION.json", help="Position file, or - for stdin.")
    ],
    level: Level = None,
    iterations: Annotated[
        int | None,
        typer.Option(
            "--iterations", "-i", help="Search iterations instead of a level (at most 10^12)."
        ),
    ] = None,
    time_ms: Annotated[
        float | None,
        typer.Option("--time-ms", help="Search time in ms instead of a level (at most a day)."),
    ] = None,
    threads: Threads = 1,
    seed: Annotated[int | None, typer.Option("--seed", help="Search seed (reproducible).")] = None,
    top: Annotated[int, typer.Option("--top", help="Candidates to list (table only).")] = 10,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print only the JSON answer on stdout.")
    ] = False,
    game: Annotated[
        GameName,
        typer.Option(
            "--game", help=GAME_HELP + " For candy-lab, POSITION is an unfinished game record."
        ),
    ] = GameName.CSL,
) -> None:
    """Rank the moves of a position: visits, win probability ± 95% interval, expected points.

    The search runs at the AI's normal level unless --level, --iterations or --time-ms
    say otherwise (with both --iterations and --time-ms, it stops at whichever comes first).
    """
    from csl_ai.agents import level_limit
    from csl_ai.position import load_position
    from csl_ai.search import SearchLimit, search

    if as_json:
        json_errors()
    check_positive(iterations, "--iterations", MAX_ITERATIONS)
    check_positive(threads, "--threads", MAX_THREADS)
    check_positive(top, "--top")
    check_seed(seed)
    check_time_ms(time_ms)
    if game is GameName.CANDY_LAB:
        from csl_ai.cli import candylab_cmd

        candylab_cmd.best_move_command(
            position, level=level, iterations=iterations, time_ms=time_ms, seed=seed, top=top,
            as_json=as_json, console=_console(), threads=threads,
        )
        return
    level, iterations = search_budget(level, iterations, time_ms)
    obs = load_position(position)
    if not obs.legal_moves():
        raise CliInputError(
            f"position {position!r}: seat {obs.seat} has no decision to make "
            f"({obs.phase.value} phase, seat {obs.to_move} to move)"
        )
    if level is not None:
        limit = level_limit(level, obs.rules.players, seed, threads)
    else:
        limit = SearchLimit(iterations=iterations, time_ms=time_ms, threads=threads, seed=seed)
    result = search(obs, limit)
    if as_json:
        typer.echo(json.dumps({"level": level, **result.to_json()}, indent=2))
        return
    from csl_ai.cli.render import best_move_text, position_text, search_table
    from csl_ai.cli.review import budget_text

    console = _console()
    console.print(
        f"Seat {result.seat}, {obs.phase.value} phase: {budget_text(level, result.iterations)}, "
        f"{result.worlds_sampled:,} worlds, {result.elapsed_s:.2f} s."
    )
    if result.settled:
        console.print(
            f"The search stopped after {result.iterations:,} of its {limit.iterations:,} iterations: "
            "the rest could not have changed the best move.",
            soft_wrap=True,
        )
    elif limit.iterations is not None and limit.time_ms is None and 0 < result.iterations < limit.iterations:
        console.print(
            f"The search stopped early, at its memory ceiling ({result.nodes:,} tree nodes).",
            soft_wrap=True,
        )
    console.print(position_text(obs))
    console.print("Best move: ", best_move_text(result), sep="")
    console.print(search_table(result, top=top))
    if result.beliefs:
        console.print(
            "Models of the others (chance of a random player / of one playing exactly by the "
            "rules, decisions seen): "
            + ", ".join(
                f"seat {b.seat} {b.randomness:.0%} / {b.exactness:.0%} ({b.decisions})"
                for b in result.beliefs
            )
        )
    if len(result.moves) > top:
        console.print(f"... {len(result.moves) - top} more candidates (--top N to list more)")


@app.command()
def replay(
    record: Annotated[str, typer.Argument(metavar="RECORD.json", help="Game record file.")],
    summary: Annotated[
        bool, typer.Option("--summary", help="Only check it and show the final scores.")
    ] = False,
    game: Annotated[GameName, typer.Option("--game", help=GAME_HELP)] = GameName.CSL,
) -> None:
    """Check a game record step by step and show it trick by trick."""
    if game is GameName.CANDY_LAB:
        from csl_ai.cli import candylab_cmd

        candylab_cmd.replay_command(record, _console(), summary)
        return
    from csl_ai.cli.review import replay_command

    replay_command(record, _console(), summary)


@app.command()
def analyze(
    record: Annotated[str, typer.Argument(metavar="RECORD.json", help="Game record file.")],
    seat: Annotated[int | None, typer.Option("--seat", help="Only this seat's decisions.")] = None,
    level: Level = None,
    iterations: Annotated[
        int | None,
        typer.Option(
            "--iterations", "-i", help="Search iterations per decision instead of a level."
        ),
    ] = None,
    threads: Threads = 1,
    seed: Annotated[int, typer.Option("--seed", help="Search seed.")] = 0,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", help="Least win probability a blunder loses (beyond both intervals)."
        ),
    ] = 0.05,
    show_all: Annotated[
        bool,
        typer.Option("--all", help="List every decision, not only blunders and close calls."),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print only a JSON report on stdout.")
    ] = False,
    game: Annotated[
        GameName,
        typer.Option(
            "--game", help=GAME_HELP + " For candy-lab, RECORD is a candylab-record and "
            "--level is its search's (fast, normal, strong: 100, 400, 1,600 iterations)."
        ),
    ] = GameName.CSL,
) -> None:
    """A blunder report: the engine's choice beside each move played, and the win probability lost.

    Each decision is searched from the deciding seat's view at that moment, at the AI's
    normal level unless --level or --iterations says otherwise. Loss = the engine's move's
    win probability minus the played move's (0 if the played move scored higher).

    A blunder loses at least --threshold and the engine's move's 95% interval lies wholly
    above the played move's. A loss as large whose intervals overlap is searched again with
    4 times the budget; if they still overlap it is a close call, not a blunder. Blunders
    and close calls are listed with what was on the table (--all lists every decision).

    An allocation the search did not evaluate is valued by the weather search that follows
    it (~). A decision with one legal move is forced and not searched. With --json, stdout
    holds the report (each decision's verdict, win probabilities, 95% intervals and loss).
    """
    from csl_ai.cli.review import analyze_command

    if as_json:
        json_errors()
    check_positive(iterations, "--iterations", MAX_ITERATIONS)
    check_positive(threads, "--threads", MAX_THREADS)
    check_seed(seed)
    if not 0 <= threshold <= 1:
        raise CliInputError(f"--threshold: must be between 0 and 1, got {threshold!r}")
    if game is GameName.CANDY_LAB:
        from csl_ai.cli import candylab_cmd

        candylab_cmd.analyze_command(
            record, seat=seat, level=level, iterations=iterations, seed=seed,
            threshold=threshold, as_json=as_json, show_all=show_all, console=_console(),
            threads=threads,
        )
        return
    level, budget = search_budget(level, iterations)
    analyze_command(
        record, _console(), seat, level, budget, threads, seed, threshold, as_json, show_all
    )


@app.command()
def bench(
    full: Annotated[
        bool, typer.Option("--full", help="Longer measurements, steadier medians.")
    ] = False,
    no_search: Annotated[bool, typer.Option("--no-search", help="Core figures only.")] = False,
    threads: Threads = 1,
    repeats: Annotated[
        int | None, typer.Option("--repeats", help="Runs per figure (default 3, --full 5).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON.")] = False,
    signature: Annotated[
        bool,
        typer.Option(
            "--signature",
            help="Print the bench signature: one number that hashes what a fixed set of "
            "seeded searches and games chose (a refactoring keeps it).",
        ),
    ] = False,
) -> None:
    """Core and search speed: medians of repeated runs (quick by default).

    Core: full random 4-player games per second and ns per round of tricks, in C; the same
    games through the Python API, and the ratio. Search: iterations per second at three
    fixed positions with a fixed seed. --signature: the bench signature instead.
    """
    from dataclasses import replace

    if signature:
        from csl_ai.signature import bench_signature

        sig = bench_signature()
        if as_json:
            typer.echo(json.dumps({
                "signature": sig.hex, "searches": sig.searches, "games": sig.games,
                "nodes": sig.nodes, "elapsed_s": round(sig.elapsed_s, 3),
            }, indent=2))
        else:
            typer.echo(
                f"signature {sig.hex}  ({sig.searches} searches, {sig.games} games, "
                f"{sig.nodes:,} nodes, {sig.elapsed_s:.1f} s)"
            )
        return

    from rich.table import Table

    from csl_ai.cli.bench import FULL, QUICK, run_bench, speed_ratio

    check_positive(threads, "--threads", MAX_THREADS)
    check_positive(repeats, "--repeats", MAX_REPEATS)
    size = FULL if full else QUICK
    if repeats is not None:
        size = replace(size, repeats=repeats)
    figures = run_bench(size, include_search=not no_search, threads=threads)
    ratio = speed_ratio(figures)
    if as_json:
        typer.echo(
            json.dumps(
                {"figures": [f.to_json() for f in figures], "core_over_api": ratio}, indent=2
            )
        )
        return
    title = f"csl bench{' --full' if full else ''}: medians of {size.repeats} runs"
    if not no_search:
        title += f", searches of {size.search_iterations} iterations"
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column("measure")
    table.add_column("median", justify="right")
    table.add_column("unit")
    table.add_column("range", justify="right")
    for f in figures:
        table.add_row(
            f.name, f"{f.median:,.0f}", f.unit, f"{min(f.samples):,.0f} – {max(f.samples):,.0f}"
        )
    console = _console()
    console.print(table)
    if ratio is not None:
        console.print(f"core / Python API games per second: {ratio:,.0f}x")


def _register_plugins() -> None:
    """Add the tournament, selfplay, train, rules, serve and engine commands when their
    modules are present."""
    for name in (
        "csl_ai.cli.tournament_cmd",
        "csl_ai.cli.train_cmd",
        "csl_ai.cli.rules_cmd",
        "csl_ai.cli.serve_cmd",
        "csl_ai.cli.engine_cmd",
    ):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name == name:
                continue
            raise
        module.register(app)


_register_plugins()
