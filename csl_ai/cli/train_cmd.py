"""The `csl train` command (added by `register`): the learned card policy by expert
iteration, or with ``--model value`` the learned value of later rounds fitted on a league.

It hands a `TrainConfig` to `csl_ai.tournament.train` (self-play and the policy's fit) or a
`ValueTrainConfig` to `csl_ai.tournament.league` (the league's games and the value's fit);
both play on the Ray harness (or in this process with ``--workers 0``), and Ray is imported
only when it runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from csl_ai.cli.common import CliInputError, check_positive, fail, interrupt_exit_code, interrupt_text

if TYPE_CHECKING:
    from csl_ai.tournament.harness import RunOptions

TRAIN_EPILOG = """
Each generation the search (ISMCTS at --iterations a decision) plays --games self-play
games at each player count with the current card policy in its playouts; the policy is
then refitted to the search's visit shares at every card decision with a choice. OUT
receives one self-play folder per generation and player count (games.jsonl,
training.jsonl) and card_policy.json, the weights with how they were made. The same seed
and options give the same weights, whatever --workers. To use the weights, copy the file
to csl_ai/data/card_policy.json (the shipped policy was made this way; its provenance
names the command's options).

With --model value it plays --games games of the league (the tuning bots, the zoo's star
hunter, style bots with the default and random knobs and the saved exploiters; sides and
star option drawn from all 32 scorings for every game) at each player count and fits the
value of later rounds to them (csl_ai.tournament.league); OUT receives the three model
files, the value's rows at those player counts replaced, ready for `--fitted OUT` in the
benchmarks or to copy over csl_ai/data/value_model.json.
"""


def _players(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise CliInputError(f"--players: expected counts like 2,3,4,5, got {text[:40]!r}") from None
    if not values or any(v not in (2, 3, 4, 5) for v in values):
        raise CliInputError(f"--players: each count must be 2..5, got {text[:40]!r}")
    if len(set(values)) != len(values):
        raise CliInputError(f"--players: each count once, got {text[:40]!r}")
    return values


def register(app: typer.Typer) -> None:
    """Add the `train` command to app."""

    @app.command(epilog=TRAIN_EPILOG)
    def train(
        out: Annotated[str, typer.Option("--out", help="New folder for the run and what it learns.")],
        model: Annotated[
            str, typer.Option("--model", help="What to learn: policy (the playouts' cards) or value (later rounds).")
        ] = "policy",
        players: Annotated[
            Optional[str],  # noqa: UP007
            typer.Option("--players", help="Player counts, comma-separated (default: 2,3,4,5 for the policy, 4 for the value)."),
        ] = None,
        games: Annotated[
            Optional[int],  # noqa: UP007
            typer.Option(
                "--games",
                help="Games per player count: self-play games a generation for the policy (default 200), "
                "league games for the value (default 12,000).",
            ),
        ] = None,
        generations: Annotated[
            int | None, typer.Option("--generations", help="The policy's rounds of self-play and fitting (default 2).")
        ] = None,
        iterations: Annotated[
            int | None, typer.Option("--iterations", help="The policy's search iterations per decision (default 2000).")
        ] = None,
        seed: Annotated[int, typer.Option("--seed", help="Fixes every game and so the weights.")] = 1,
        workers: Annotated[
            Optional[int],  # noqa: UP007
            typer.Option(
                "--workers",
                help="Local Ray CPUs (default: all; Ray starts once for the whole training); "
                "0 or 1 plays in this process, without Ray.",
            ),
        ] = None,
        address: Annotated[
            Optional[str],  # noqa: UP007
            typer.Option("--address", help="An existing Ray cluster: auto or HOST:PORT."),
        ] = None,
    ) -> None:
        """Learn the card policy of the playouts from the search's own self-play, or the
        value of later rounds from a league's games."""
        from csl_ai.tournament.harness import RunOptions

        if model not in ("policy", "value"):
            raise CliInputError(f"--model: expected policy or value, got {model[:40]!r}")
        if seed < 0:
            raise CliInputError(f"--seed: must be 0 or more, got {seed}")
        if workers is not None and workers < 0:
            raise CliInputError(f"--workers: must be 0 (no Ray) or more, got {workers}")
        options = RunOptions(workers=workers, address=address, progress=False)
        if Path(out).exists():
            raise CliInputError(f"--out: {out[:80]!r} already exists; choose a new folder")
        if model == "value":
            if generations is not None or iterations is not None:
                raise CliInputError("--generations and --iterations belong to the policy's training, not --model value")
            _train_value(out, _players(players or "4"), 12_000 if games is None else games, seed, options)
            return
        games = 200 if games is None else games
        generations = 2 if generations is None else generations
        iterations = 2000 if iterations is None else iterations
        players = players or "2,3,4,5"
        from csl_ai.tournament.train import Generation, TrainConfig, train as run_training

        check_positive(games, "--games", 1_000_000)
        check_positive(generations, "--generations", 50)
        check_positive(iterations, "--iterations", 10_000_000)
        config = TrainConfig(
            players=_players(players), games=games, generations=generations,
            iterations=iterations, seed=seed,
        )  # fmt: skip

        def report(g: Generation) -> None:
            typer.echo(
                f"generation {g.index}: {g.examples} card decisions, cross-entropy "
                f"{g.loss_before:.4f} -> {g.loss_after:.4f}, policy's top card is the "
                f"search's in {g.top_agreement:.1%}"
            )

        typer.echo(
            f"Training the card policy: {generations} generation(s) of {games} games at "
            f"{players} players, {iterations} iterations a decision, seed {seed} -> {out}"
        )
        try:
            policy, _history = run_training(config, out, options, report)
        except KeyboardInterrupt as e:
            fail(
                f"{interrupt_text(e)}; {out[:80]!r} holds the games played so far but no "
                "policy, and train does not resume: run it again with a new --out",
                interrupt_exit_code(e),
            )
        typer.echo(f"Weights in {out}/card_policy.json: " + ", ".join(
            f"{name} {w:+.2f}" for name, w in zip(_feature_names(), policy.weights, strict=True)
        ))


def _train_value(out: str, players: tuple[int, ...], games: int, seed: int, options: RunOptions) -> None:
    """csl train --model value: the league's games and the value's fit into out."""
    from csl_ai.tournament.league import RoundsLeftFit, ValueTrainConfig, train_value

    if not 10 <= games <= 1_000_000:
        raise CliInputError(f"--games: the value needs 10..1000000 league games, got {games}")
    config = ValueTrainConfig(players=players, games=games, seed=seed)
    counts = ",".join(map(str, players))
    command = f"csl train --model value --players {counts} --games {games} --seed {seed}"

    def report(fit: RoundsLeftFit) -> None:
        typer.echo(
            f"{fit.players} players, {fit.rounds_left} rounds left: {fit.fitted} boundaries fitted, "
            f"{fit.held_out} held out; held-out nats: uniform {fit.uniform_nats:.4f}, "
            f"shipped value {fit.shipped_nats:.4f}, league value {fit.nats:.4f}"
        )

    typer.echo(f"Training the value: {games} league games at {counts} players, seed {seed} -> {out}")
    try:
        train_value(config, out, command, options, report, say=typer.echo)
    except KeyboardInterrupt as e:
        fail(f"{interrupt_text(e)}; nothing was written to {out[:80]!r}", interrupt_exit_code(e))
    typer.echo(f"Models in {out}/ (value_model.json: the value's rows at {counts} players replaced).")


def _feature_names() -> tuple[str, ...]:
    from csl_ai.policy import CARD_FEATURES

    return CARD_FEATURES
