"""The `csl rules` command: the rules of a game under the chosen options (added by `register`).

The words come from `csl_ai.explain.rules_sections`, the point tables in them from the
engine's scoring, so what it prints is what the engine counts; `csl play` shows the same
text at a ``?`` prompt.
"""

from __future__ import annotations

from typing import Annotated

import typer

from csl_ai.rules import StarOption


def register(app: typer.Typer) -> None:
    """Add the `rules` command to app."""

    @app.command("rules")
    def rules_command(
        players: Annotated[int, typer.Option("--players", "-n", help="Players, 2 to 5.")] = 4,
        sides: Annotated[
            str,
            typer.Option(
                "--sides",
                help="Scoring card sides, e.g. candy=A,spider=B (unnamed kinds: A).",
            ),
        ] = "",
        star_option: Annotated[
            StarOption, typer.Option("--star-option", help="Shooting star A with all 3 stars.")
        ] = StarOption.TWICE,
    ) -> None:
        """The rules: a round, tricks, good weather, the scoring of the sides in play, the
        notation and an example."""
        from rich.console import Console

        from csl_ai.cli.render import print_rules
        from csl_ai.rules import Kind, RulesConfig, Side, parse_sides

        rules = RulesConfig(players=players, sides=parse_sides(sides), star_option=star_option)
        console = Console(highlight=False)
        star = f", star option {rules.star_option.value}" if rules.side(Kind.STAR) is Side.A else ""
        console.print(
            f"Candy Spiders Leopards, {rules.players} players, sides {rules.sides_text()}{star}",
            style="bold",
            soft_wrap=True,
        )
        print_rules(console, rules)
