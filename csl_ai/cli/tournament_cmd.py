"""The `csl tournament` and `csl selfplay` commands (added to the app by `register`).

Both parse their options, build a `TournamentConfig` and hand it to
`csl_ai.tournament.harness`; the harness and Ray are imported only when a command runs.
A run that fails (Ray unreachable, workers dying beyond the retries, a game raising, a
results file that cannot be written) prints one line and exits 1; bad options exit 2,
and are all refused before the run is announced; Ctrl-C exits 130 (SIGTERM 143, SIGHUP
129). Finished games are kept in every case, and ``--resume DIR`` continues from them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer
from rich.console import Console

from csl_ai.cli.candylab_cmd import GAME_HELP, GameName
from csl_ai.cli.common import (
    DECK_HELP,
    EXIT_FAILURE,
    CliInputError,
    check_agent_budget,
    check_positive,
    fail,
    interrupt_exit_code,
    interrupt_text,
)
from csl_ai.errors import path_label
from csl_ai.rules import RulesConfig, StarOption, deck_from_arg, parse_sides
from csl_ai.seeds import fresh_seed

if TYPE_CHECKING:
    from csl_ai.tournament.harness import RunOptions
    from csl_ai.tournament.runner import TournamentConfig
    from csl_ai.tournament.stats import Summary

DEFAULT_PLAYERS = 4
DEFAULT_TOURNAMENT_GAMES = 400
DEFAULT_SELFPLAY_GAMES = 100
MAX_GAMES = 10_000_000
MAX_WORKERS = 10_000
MAX_BATCH = 100_000

RAY_NOTE = """
Ray plays the games with --address (an existing cluster), with --ray, and with --workers
2 or more (the default on a machine of 2 cores or more) once the first games show that
Ray would finish sooner, its start-up (about 5 s) included. Otherwise (--workers 0 or 1,
or a short run) they are played in this process without Ray, and the run says so.
"""

TOURNAMENT_EPILOG = """
Each deal is replayed with the seats rotated so that every agent plays every seat of it
(duplicate deals); --games is rounded up to whole deals. With more agents than players,
each deal seats a different subset so that every agent plays equally often.

DIR receives tournament.json (the options), games.jsonl (one line per finished game,
with its full record, appended as games finish), then summary.json and winshare.png.
Interrupted (Ctrl-C, a crash, even SIGKILL)? `csl tournament --resume DIR` plays only
the games still missing, once every line of games.jsonl is checked against
tournament.json (agents, rules, deck, seeds, schedule); a line of another tournament
stops it. --address HOST:PORT joins a cluster with token authentication (what `ray start
--head` turns on) with the token of --ray-token-file, RAY_AUTH_TOKEN or ~/.ray/auth_token.

--game candy-lab: Candy Lab agents (random, heuristic, ismcts[:LEVEL|iters=N]) at 2 to 4
players, played and resumed the same way (not --sides, --star-option, --deck); DIR holds
tournament.json, games.jsonl (one candylab-record a line) and summary.json.
""" + RAY_NOTE

SELFPLAY_EPILOG = """
DIR receives tournament.json, games.jsonl (one game record per line) and, with
--training-rows, training.jsonl: one row per decision (schema csl-training-rows,
version 1): a numeric feature vector of the observation, every legal move as a code, the
search's visits, win probability and expected points for the moves it tried, and the
game's outcome for that seat (docs/training-rows.md; read it into numpy with
csl_ai.tournament.rows.load_training_rows).
""" + RAY_NOTE

# Options shared by both commands. Those that fix the games default to None so that a
# resumed run can tell they were given (and refuse them).
Players = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option("--players", "-n", help=f"Players per game, 2 to 5 (default {DEFAULT_PLAYERS})."),
]
Out = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--out", "-o", metavar="DIR", help="Directory for the results."),
]
Seed = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option("--seed", help="Seed of every deal and agent (default: random, saved)."),
]
Workers = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option(
        "--workers",
        "-w",
        help="Games played at once (default: all cores); 0 or 1: in this process, without Ray.",
    ),
]
AlwaysRay = Annotated[
    bool,
    typer.Option("--ray", help="Play on Ray even when this process would finish sooner."),
]
Address = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--address", help="Use a running Ray cluster: auto, HOST:PORT or ray://HOST:10001."),
]
TokenFile = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option(
        "--ray-token-file",
        metavar="FILE",
        help="The cluster's authentication token (`ray get-auth-token` on its head prints it), "
        "for --address HOST:PORT; default RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token.",
    ),
]
Batch = Annotated[
    Optional[int],  # noqa: UP007
    typer.Option("--batch", help="Games per Ray task (default: automatic)."),
]
Resume = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--resume", metavar="DIR", help="Continue the run kept in DIR."),
]
Sides = Annotated[
    Optional[str],  # noqa: UP007
    typer.Option("--sides", help="Scoring card sides, e.g. candy=A,spider=B."),
]
Star = Annotated[
    Optional[StarOption],  # noqa: UP007
    typer.Option("--star-option", help="Shooting star A with all 3 stars."),
]
Deck = Annotated[Optional[str], typer.Option("--deck", help=DECK_HELP)]  # noqa: UP007
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")]


def split_agent_specs(text: str) -> tuple[str, ...]:
    """Agent specs from ``"ismcts:iters=5000,threads=2,heuristic,random"``.

    An item after a comma is an option of the spec before it when it reads ``name=value``
    or is a level name (``fast``); anything else (``heuristic``, ``pimc:iters=10``)
    starts a new spec.
    """
    from csl_ai.agents import LEVELS

    specs: list[str] = []
    for item in text.split(","):
        part = item.strip()
        if not part:
            raise CliInputError(f"--agents: empty agent spec in {text!r}")
        is_option = ":" not in part and ("=" in part or part.lower() in LEVELS)
        if is_option and specs:
            specs[-1] = f"{specs[-1]},{part}"
        else:
            specs.append(part)
    return tuple(specs)


def _rules(players: int | None, sides: str | None, star: StarOption | None, deck: str | None) -> RulesConfig:
    return RulesConfig(
        players=players if players is not None else DEFAULT_PLAYERS,
        sides=parse_sides(sides or ""),
        star_option=star or StarOption.TWICE,
        deck=deck_from_arg(deck),
    )


def refuse_with_resume(given: Mapping[str, object], resume: str, out: str | None) -> None:
    """A resumed run keeps its options: refuse any that would change its games."""
    for option, value in given.items():
        if value is not None:
            raise CliInputError(
                f"{option}: a resumed run keeps its options; they are in "
                f"{str(Path(resume) / 'tournament.json')!r}"
            )
    if out is not None and Path(out) != Path(resume):
        raise CliInputError(f"--out: give --out or --resume, not two directories ({out!r}, {resume!r})")


def run_options(
    workers: int | None,
    address: str | None,
    batch: int | None,
    quiet: bool,
    token_file: str | None = None,
    always_ray: bool = False,
) -> RunOptions:
    """The harness's run options from the command line, checked."""
    from csl_ai.tournament import harness

    if workers is not None and not 0 <= workers <= MAX_WORKERS:
        raise CliInputError(f"--workers: must be 0 (no Ray) to {MAX_WORKERS:,}, got {workers!r}")
    check_positive(batch, "--batch", MAX_BATCH)
    if token_file is not None:
        if not address:
            raise CliInputError("--ray-token-file: goes with --address HOST:PORT")
        if not Path(token_file).is_file():
            raise CliInputError(f"--ray-token-file: {path_label(token_file)} is not a file")
    if always_ray and workers == 0:
        raise CliInputError("--ray: --workers 0 plays without Ray; give one or the other")
    return harness.RunOptions(
        workers=workers,
        address=address,
        batch=batch,
        progress=not quiet,
        token_file=token_file,
        always_ray=always_ray,
    )


def check_cluster_or_fail(options: RunOptions) -> None:
    """Refuse, before the run is announced, a cluster that cannot be joined (one line, exit 1)."""
    from csl_ai.tournament import harness
    from csl_ai.tournament.runner import TournamentRunError

    try:
        harness.check_cluster(options)
    except TournamentRunError as e:
        fail(str(e), EXIT_FAILURE)


def _check_new_run(config: TournamentConfig, out: str, agent_option: str) -> None:
    """Everything about a new run that can be refused before it is announced: the agent
    specs and their search budgets, and the results directory."""
    from csl_ai.agents import make_agent
    from csl_ai.tournament.harness import ResultsDir
    from csl_ai.tournament.runner import check_agents

    check_agents(config)
    for spec in config.agents:
        check_agent_budget(make_agent(spec, 0), agent_option)
    ResultsDir.check_new(out)


def _announce(config: TournamentConfig, out: str) -> None:
    """Say on stderr what will be played and the seed that replays it (once all is checked)."""
    note = f" (asked {config.games}, rounded up to whole deals)" if config.total_games != config.games else ""
    Console(stderr=True, highlight=False).print(
        f"{config.total_games} games{note}: {config.deals} deals x {config.rotations} seatings, "
        f"{config.players} players, seed {config.seed} -> {out}"
    )


def _run(
    config: TournamentConfig | None,
    out: str | None,
    resume: str | None,
    options: RunOptions,
    mode: str,
) -> tuple[Summary, Path]:
    """Start (config into out) or resume through the harness; failures become exit codes."""
    from csl_ai.tournament import harness
    from csl_ai.tournament.runner import TournamentRunError

    console = Console(stderr=True, highlight=False)
    directory = Path(resume if resume is not None else out or "")
    try:
        if resume is not None:
            summary = harness.resume(resume, options, console=console, mode=mode)
        elif config is not None:
            summary = harness.start(config, directory, options, console=console)
        else:
            raise CliInputError("--out: missing, or --resume DIR")
    except TournamentRunError as e:
        fail(str(e), EXIT_FAILURE)
    except KeyboardInterrupt as e:
        fail(
            f"{interrupt_text(e)}; finished games are kept in {str(directory)!r}: "
            f"continue with --resume {str(directory)!r}",
            interrupt_exit_code(e),
        )
    return summary, directory


def _result_files(directory: Path) -> str:
    """The files a run left in its folder, in the order they are first written:
    ``tournament.json, games.jsonl, summary.json, winshare.png`` for a tournament."""
    from csl_ai.tournament.results import (
        CONFIG_FILE,
        GAMES_FILE,
        PLOT_FILE,
        SUMMARY_FILE,
        TRAINING_FILE,
    )

    names = (CONFIG_FILE, GAMES_FILE, TRAINING_FILE, SUMMARY_FILE, PLOT_FILE)
    return ", ".join(name for name in names if (directory / name).exists())


def register(app: typer.Typer) -> None:
    """Add the `tournament` and `selfplay` commands to app."""

    @app.command(epilog=TOURNAMENT_EPILOG)
    def tournament(
        agents: Annotated[
            Optional[str],  # noqa: UP007
            typer.Option(
                "--agents",
                help="Agent specs, comma-separated: e.g. ismcts:normal,heuristic,random,pimc "
                "(options stay with their agent: ismcts:iters=5000,threads=2,random).",
            ),
        ] = None,
        players: Players = None,
        games: Annotated[
            Optional[int],  # noqa: UP007
            typer.Option("--games", "-g", help=f"Games to play (default {DEFAULT_TOURNAMENT_GAMES})."),
        ] = None,
        out: Out = None,
        seed: Seed = None,
        workers: Workers = None,
        address: Address = None,
        ray_token_file: TokenFile = None,
        ray: AlwaysRay = False,
        batch: Batch = None,
        resume: Resume = None,
        sides: Sides = None,
        star_option: Star = None,
        deck: Deck = None,
        quiet: Quiet = False,
        game: Annotated[GameName, typer.Option("--game", help=GAME_HELP)] = GameName.CSL,
    ) -> None:
        """Play agents against each other on duplicate deals and rank them with 95% intervals."""
        if resume is not None and game is GameName.CSL:
            from csl_ai.candylab.tournament import holds_candylab_run

            game = GameName.CANDY_LAB if holds_candylab_run(resume) else game
        if game is GameName.CANDY_LAB:
            from csl_ai.cli import candylab_cmd

            candylab_cmd.refuse_options("a Candy Lab tournament", {
                "--sides": sides is not None, "--star-option": star_option is not None,
                "--deck": deck is not None,
            })
            candylab_cmd.tournament_command(
                agents=agents, players=players, games=games, out=out, seed=seed,
                workers=workers, quiet=quiet, console=Console(highlight=False),
                address=address, ray_token_file=ray_token_file, always_ray=ray, batch=batch,
                resume=resume,
            )
            return
        from csl_ai.tournament.runner import TournamentConfig

        config: TournamentConfig | None = None
        options = run_options(workers, address, batch, quiet, ray_token_file, ray)
        if resume is not None:
            given = {"--agents": agents, "--players": players, "--games": games, "--seed": seed,
                     "--sides": sides, "--star-option": star_option, "--deck": deck}
            refuse_with_resume(given, resume, out)
        else:
            if out is None:
                raise CliInputError("--out: missing (where to write the results), or --resume DIR")
            if agents is None:
                raise CliInputError("--agents: missing, e.g. --agents ismcts:normal,heuristic,random")
            check_positive(games, "--games", MAX_GAMES)
            config = TournamentConfig(
                agents=split_agent_specs(agents),
                rules=_rules(players, sides, star_option, deck),
                games=games if games is not None else DEFAULT_TOURNAMENT_GAMES,
                seed=seed if seed is not None else fresh_seed(31),
            )
            _check_new_run(config, out, "--agents")
            check_cluster_or_fail(options)
            _announce(config, out)
        summary, directory = _run(config, out, resume, options, "tournament")
        stdout = Console(highlight=False)
        stdout.print(summary.table())
        note = summary.interval_note()
        if note is not None:
            stdout.print(note)
        stdout.print(summary.head_to_head_table())
        stdout.print(f"Results in {str(directory)!r}: {_result_files(directory)}", soft_wrap=True)

    @app.command(epilog=SELFPLAY_EPILOG)
    def selfplay(
        agent: Annotated[
            Optional[str],  # noqa: UP007
            typer.Option("--agent", help="The agent spec that plays every seat, e.g. ismcts:fast."),
        ] = None,
        players: Players = None,
        games: Annotated[
            Optional[int],  # noqa: UP007
            typer.Option("--games", "-g", help=f"Games to play (default {DEFAULT_SELFPLAY_GAMES})."),
        ] = None,
        out: Out = None,
        training_rows: Annotated[
            bool, typer.Option("--training-rows", help="Also write one training row per decision.")
        ] = False,
        seed: Seed = None,
        workers: Workers = None,
        address: Address = None,
        ray_token_file: TokenFile = None,
        ray: AlwaysRay = False,
        batch: Batch = None,
        resume: Resume = None,
        sides: Sides = None,
        star_option: Star = None,
        deck: Deck = None,
        quiet: Quiet = False,
    ) -> None:
        """Play one agent against itself and keep the games (and training rows) for learning."""
        from csl_ai.tournament.runner import TournamentConfig

        config: TournamentConfig | None = None
        options = run_options(workers, address, batch, quiet, ray_token_file, ray)
        if resume is not None:
            given = {"--agent": agent, "--players": players, "--games": games, "--seed": seed,
                     "--sides": sides, "--star-option": star_option, "--deck": deck,
                     "--training-rows": True if training_rows else None}
            refuse_with_resume(given, resume, out)
        else:
            if out is None:
                raise CliInputError("--out: missing (where to write the games), or --resume DIR")
            if agent is None:
                raise CliInputError("--agent: missing, e.g. --agent ismcts:fast")
            check_positive(games, "--games", MAX_GAMES)
            config = TournamentConfig(
                agents=(agent.strip(),),
                rules=_rules(players, sides, star_option, deck),
                games=games if games is not None else DEFAULT_SELFPLAY_GAMES,
                seed=seed if seed is not None else fresh_seed(31),
                mode="selfplay",
                training_rows=training_rows,
            )
            _check_new_run(config, out, "--agent")
            check_cluster_or_fail(options)
            _announce(config, out)
        summary, directory = _run(config, out, resume, options, "selfplay")
        typer.echo(f"{summary.games} games in {str(directory)!r}: {_result_files(directory)}")
