"""Rich rendering of cards, sky lines, tricks, tallies, scores and search statistics.

Rain cards print in their colour (blue, red, green); sky cards in a colour per kind.
`GameView` watches a `Game` and prints whatever happened since it last looked, so the
same view narrates a live game (`csl play`) and a replayed record (`csl replay`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from csl_ai.game import Phase
from csl_ai.notation import card_colour, card_str, cards_of, sky_str
from csl_ai.rules import Kind, RulesConfig, SkyCard

if TYPE_CHECKING:
    from csl_ai.game import Game, Observation, RoundLog, ScoreLine, Trick
    from csl_ai.search import MoveStats, SearchResult

CARD_STYLES: Final = ("bold blue", "bold red", "bold green")
"""Style of a rain card by colour index (blue, red, green)."""
SKY_STYLES: Final = {
    Kind.CANDY: "magenta",
    Kind.SPIDER: "cyan",
    Kind.LEOPARD: "yellow",
    Kind.STAR: "bold bright_yellow",
}


def card_text(card: int) -> Text:
    """One rain card, coloured: ``B7`` in blue."""
    return Text(card_str(card), style=CARD_STYLES[card_colour(card)])


def cards_text(mask: int, empty: str = "-") -> Text:
    """A set of rain cards, ascending, each coloured."""
    cards = cards_of(mask)
    if not cards:
        return Text(empty, style="dim")
    return Text(" ").join(card_text(card) for card in cards)


def piles_text(piles: Sequence[int]) -> Text:
    """Piles as ``B7 R2 G5 | B1 R9 G9 | ...``, coloured."""
    return Text(" | ", style="dim").join(cards_text(pile) for pile in piles)


def sky_text(card: SkyCard) -> Text:
    """One sky card in notation (``C2``, ``*``), coloured by kind."""
    return Text(sky_str(card), style=SKY_STYLES[card.kind])


def sky_cards_text(cards: Sequence[SkyCard], empty: str = "-") -> Text:
    """Sky cards in order, space separated."""
    if not cards:
        return Text(empty, style="dim")
    return Text(" ").join(sky_text(card) for card in cards)


def groups_of(line: Sequence[int], group_sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """The line split into its groups, in order."""
    groups = []
    start = 0
    for size in group_sizes:
        groups.append(tuple(line[start : start + size]))
        start += size
    return groups


def line_text(game: Game, line: Sequence[int]) -> Text:
    """A round's sky line by groups: ``group 1: C1 S2 L1   group 2: ...``."""
    out = Text()
    for g, group in enumerate(groups_of(line, game.rules.spec.group_sizes)):
        if g:
            out.append("   ")
        out.append(f"group {g + 1}: ", style="dim")
        out.append_text(sky_cards_text([game.sky_cards[sky] for sky in group]))
    return out


SCORE_HEADERS: Final = ("candy", "spider", "leopard", "star", "good weather", "face down")
"""The point columns of every score table, in `ScoreLine` order (then ``total``)."""
COUNTS_CAPTION: Final = (
    "points (count): face-up elements of the kind, good weather cards, face-down cards"
)


def tally_counts(game: Game) -> list[tuple[int, ...]]:
    """Per seat, what each score column counts: face-up elements by kind, good weather
    cards, face-down cards (cards won in a round in play count from its end)."""
    core = game.core
    return [
        (*core.elements[seat], core.good_weather[seat], core.facedown_cards[seat])
        for seat in range(game.players)
    ]


def _score_table(
    title: str,
    names: Sequence[str],
    lines: Sequence[ScoreLine],
    counts: Sequence[Sequence[int]] | None,
    winners: Sequence[int] = (),
) -> Table:
    """The one layout of standings and final scores: points by column and the total; with
    counts, each cell reads ``points (count)``."""
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("seat")
    for kind, header in zip(Kind, SCORE_HEADERS, strict=False):
        table.add_column(header, justify="right", style=SKY_STYLES[kind])
    for header in SCORE_HEADERS[len(Kind) :]:
        table.add_column(header, justify="right")
    table.add_column("total", justify="right", style="bold")
    for seat, line in enumerate(lines):
        points = (line.candy, line.spider, line.leopard, line.star, line.good_weather,
                  line.face_down)  # fmt: skip
        if counts is None:
            cells = [str(p) for p in points]
        else:
            cells = [f"{p} ({n})" for p, n in zip(points, counts[seat], strict=True)]
        table.add_row(
            Text(names[seat], style="bold green" if seat in winners else ""),
            *cells,
            str(line.total),
        )
    return table


def with_legend(table: Table, legend: str) -> Group:
    """table with a legend under it that wraps at the terminal's width, not the table's
    (a table's caption wraps to the table: a wide terminal would still fold it)."""
    return Group(table, Text(legend, style="table.caption"))


def tallies_table(game: Game, names: Sequence[str], title: str) -> Group:
    """The standings as they are: each seat's points by column and total, in the layout
    of `scores_table`, with the legend of what each column counts."""
    return with_legend(
        _score_table(title, names, game.scores(), tally_counts(game)), COUNTS_CAPTION
    )


def scores_table(
    scores: Sequence[ScoreLine],
    winners: Sequence[int],
    names: Sequence[str],
    outright: int | None = None,
    *,
    game: Game | None = None,
) -> Table | Group:
    """The final scores in the layout of `tallies_table`, winners in green and named under
    the table; with the finished game, each cell also shows what it counts (and the
    legend says so)."""
    table = _score_table(
        "Final scores", names, scores, None if game is None else tally_counts(game), winners
    )
    if outright is not None:
        result = (
            f"{names[outright]} {verb(names[outright], 'win')} outright with all 3 shooting stars"
        )
    elif len(winners) == 1:
        result = f"{names[winners[0]]} {verb(names[winners[0]], 'win')}"
    else:
        result = "Shared win: " + ", ".join(names[s] for s in winners)
    table.caption = Text(result, style="bold green")
    table.caption_justify = "left"
    return table if game is None else with_legend(table, COUNTS_CAPTION)


def round_wins_text(game: Game, names: Sequence[str]) -> Text | None:
    """The sky cards won so far in the round in play (settled at its end), or None
    outside the trick phase."""
    if game.is_over or game.phase is not Phase.PLAY:
        return None
    log = game.rounds[-1]
    out = Text("Won this round so far (counted when the round ends): ")
    parts = []
    for seat in range(game.players):
        won = won_this_round(game, log, seat)
        part = Text(f"{names[seat]} ")
        part.append_text(sky_cards_text(won, empty="nothing"))
        if log.declarations[seat]:
            part.append(" (good weather bet)", style="dim")
        parts.append(part)
    return out + Text("; ").join(parts)


def worth_line_text(game: Game, seat: int, names: Sequence[str]) -> Text:
    """The current round's sky line by groups, each card followed by its worth to seat
    now (``S2 +10``) or, once won, by its winner."""
    from csl_ai.explain import sky_worth

    log = game.rounds[-1]
    worth = sky_worth(game, seat)
    winners = {t.index: t.winner for t in log.tricks if t.complete}
    out = Text()
    position = 0
    for g, group in enumerate(groups_of(log.line, game.rules.spec.group_sizes)):
        if g:
            out.append("   ")
        out.append(f"group {g + 1}: ", style="dim")
        for i, sky in enumerate(group):
            if i:
                out.append("  ")
            out.append_text(sky_text(game.sky_cards[sky]))
            value = worth[position]
            if value is not None:
                out.append(f" {value:+d}" if value else " 0", style=_worth_style(value))
            elif position in winners and winners[position] is not None:
                out.append(f" ({names[winners[position]]})", style="dim")
            position += 1
    return out


def _worth_style(value: int) -> str:
    return "green" if value > 0 else "red" if value < 0 else "dim"


def worth_table(game: Game, seat: int, names: Sequence[str]) -> Table:
    """The current round's sky line card by card: its group, what it is worth to seat now
    (`csl_ai.explain.sky_worth_text`) or who won it."""
    from csl_ai.explain import sky_worth, sky_worth_text

    log = game.rounds[-1]
    values = sky_worth(game, seat)
    phrases = sky_worth_text(game, seat)
    winners = {t.index: t.winner for t in log.tricks if t.complete}
    sizes = game.rules.spec.group_sizes
    group_of = [g for g, size in enumerate(sizes) for _ in range(size)]
    table = Table(show_edge=False, pad_edge=False, box=None)
    table.add_column("trick", justify="right", style="dim")
    table.add_column("group", justify="right", style="dim")
    table.add_column("sky")
    table.add_column("worth to you now (if the round ended with it yours)")
    for position, sky in enumerate(log.line):
        phrase, value = phrases[position], values[position]
        if phrase is None or value is None:
            winner = winners.get(position)
            cell = Text(f"won by {names[winner]}" if winner is not None else "won", style="dim")
        else:
            cell = Text(phrase, style=_worth_style(value))
        table.add_row(
            str(position + 1), str(group_of[position] + 1), sky_text(game.sky_cards[sky]), cell
        )
    return table


def print_rules(console: Console, rules: RulesConfig) -> None:
    """The rules for these rules options (`csl_ai.explain.rules_sections`), heading by heading."""
    from csl_ai.explain import rules_sections

    for i, (heading, body) in enumerate(rules_sections(rules)):
        if i:
            console.print()
        console.print(Text(heading, style="bold underline"))
        for paragraph in body.split("\n"):
            console.print(Text(paragraph))


def trick_text(game: Game, trick: Trick, names: Sequence[str]) -> Text:
    """A trick's plays so far, and its winner and sky card once complete."""
    out = Text(", ").join(
        Text(f"{names[seat]} ").append_text(card_text(card)) for seat, card in trick.plays
    )
    if trick.complete:
        assert trick.winner is not None and trick.sky is not None
        out.append("  → ")
        out.append(names[trick.winner], style="bold")
        out.append(f" {verb(names[trick.winner], 'take')} ")
        out.append_text(sky_text(game.sky_cards[trick.sky]))
    return out


def verb(name: str, word: str) -> str:
    """The verb agreeing with a seat's name: ``You take``, ``seat 1 takes``."""
    return word if name == "You" else word + "s"


def won_this_round(game: Game, log: RoundLog, seat: int) -> list[SkyCard]:
    """The sky cards seat has won in the round of log so far, in trick order."""
    return [game.sky_cards[t.sky] for t in log.tricks if t.winner == seat and t.sky is not None]


def round_summary(game: Game, log: RoundLog, names: Sequence[str]) -> list[Text]:
    """Per seat: sky cards won this round, and the fate of a good weather declaration."""
    lines = []
    for seat in range(game.players):
        won = won_this_round(game, log, seat)
        line = Text(f"{names[seat]}: ")
        line.append_text(sky_cards_text(won, empty="nothing"))
        if log.declarations[seat]:
            if won:
                line.append(
                    "  good weather broken: these cards are face down (-2 each)", style="red"
                )
            else:
                line.append("  good weather honoured (+7)", style="green")
        lines.append(line)
    return lines


def position_text(obs: Observation) -> Text:
    """What the seat of a position holds: its hand, or its pile and the trick so far."""
    core = obs.public_view().core
    if obs.phase is Phase.PLAY and obs.allocation is not None:
        out = Text(f"Pile for group {core.group + 1}: ").append_text(
            cards_text(core.piles[obs.seat][core.group])
        )
        trick = obs.current.tricks[-1] if obs.current.tricks else None
        if trick is not None and not trick.complete:
            out.append("; on the table: ")
            out.append_text(
                Text(", ").join(
                    Text(f"seat {s} ").append_text(card_text(c)) for s, c in trick.plays
                )
            )
        return out
    if obs.allocation is not None:
        return Text("Piles: ").append_text(piles_text(obs.allocation))
    return Text("Hand: ").append_text(cards_text(obs.hand))


def percent(p: float) -> str:
    """A probability as a percentage with one decimal."""
    return f"{100 * p:.1f}%"


def ci_text(stats: MoveStats) -> str:
    """Half the width of a move's 95% interval on its win probability, as a percentage
    (``-`` with fewer than 2 visits)."""
    if stats.visits < 2:
        return "-"
    low, high = stats.win_ci95
    return percent(max(0.0, (high - low) / 2))


def close_to_best(result: SearchResult) -> list[MoveStats]:
    """The other candidates not clearly worse than the best move: their 95% interval on the
    mean utility reaches the best one's (both bounded)."""
    low = result.moves[0].ci95[0]
    if not math.isfinite(low):
        return []
    return [m for m in result.moves[1:] if math.isfinite(m.ci95[1]) and m.ci95[1] >= low]


CLOSE_NAMED: Final = 3
"""Most moves named as too close to call with the best one; past that, a count and the
best few."""


CLOSE_CAPTION: Final = "≈ too close to call with the best move (95% intervals overlap)"


def close_call_text(result: SearchResult) -> Text:
    """The moves too close to call with the best one, as said after it: `` — too close to
    call with R1``, or past `CLOSE_NAMED` of them, how many and the next best few:
    `` — too close to call with 207 other moves (within the noise); the next best: X, Y,
    Z``; empty when the best move stands out."""
    text = Text()
    close = close_to_best(result)
    if not close:
        return text
    if len(close) <= CLOSE_NAMED:
        text.append(" — too close to call with ")
    else:
        text.append(
            f" — too close to call with {len(close)} other moves (within the noise); "
            "the next best: "
        )
    for i, stats in enumerate(close[:CLOSE_NAMED]):
        if i:
            text.append(", ")
        text.append_text(move_text(stats.move))
    return text


def best_move_text(result: SearchResult) -> Text:
    """The best move, and the moves too close to call with it (`close_call_text`)."""
    return move_text(result.best_move) + close_call_text(result)


def search_table(
    result: SearchResult, top: int | None = None, title: str | None = None
) -> Table | Group:
    """Ranked candidate moves: visits, win probability ± 95% interval, expected points;
    ≈ marks a move too close to call with the best one (the intervals overlap)."""
    close = {id(m) for m in close_to_best(result)}
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("#", justify="right")
    table.add_column("move")
    table.add_column("visits", justify="right")
    table.add_column("win", justify="right")
    table.add_column("± 95%", justify="right")
    table.add_column("points", justify="right")
    table.add_column("")
    rows = result.moves if top is None else result.moves[:top]
    for rank, stats in enumerate(rows, start=1):
        shown = Text.assemble(move_text(stats.move))
        for same in stats.same_as:   # moves that play exactly as it (searched as one)
            shown.append(" = ", style="dim")
            shown.append_text(move_text(same))
        table.add_row(
            str(rank),
            shown,
            str(stats.visits),
            percent(stats.win_probability),
            ci_text(stats),
            f"{stats.expected_points:.1f}",
            "≈" if id(stats) in close else "",
        )
    if close:
        return with_legend(table, CLOSE_CAPTION)
    return table


def move_text(move: object) -> Text:
    """A move in notation, cards coloured."""
    from csl_ai.moves import Allocate, Play

    if isinstance(move, Play):
        return card_text(move.card)
    if isinstance(move, Allocate):
        return piles_text(move.piles)
    return Text(str(move))


class GameView:
    """Narrates a game: call `sync` after every move and it prints what is new.

    A trick is printed once complete, on one line. A round's end prints what each seat
    won and the standings, read from the game's tallies, so `sync` must run after every
    move (tallies move on with the next round's tricks). `private` is the set of seats
    whose hands and piles are shown: every seat in a replay, none in `csl play` (whose
    prompts show a human their own cards).
    """

    def __init__(
        self,
        console: Console,
        names: Sequence[str],
        private: frozenset[int] = frozenset(),
        line_view: Callable[[Game], Text] | None = None,
    ) -> None:
        self.console = console
        self.names = list(names)
        self.private = private
        self.line_view = line_view
        """How a new round's sky line is shown (default `line_text`; `csl play` adds each
        card's worth to its lone human)."""
        self._started = 0
        self._finished = 0
        self._tricks = 0
        self._declared = False
        self._over = False

    def sync(self, game: Game) -> None:
        """Print every event since the last call: deals, declarations, tricks, round ends."""
        while self._started < len(game.rounds) or self._started > self._finished:
            if self._started == self._finished:
                self._start_round(game, self._started)
            index = self._started - 1
            self._sync_round(game, index)
            if not _round_finished(game, index):
                break
            self._finish_round(game, index)
        if game.is_over and not self._over:
            self._over = True
            result = game.result()
            self.console.print()
            self.console.print(
                scores_table(result.scores, result.winners, self.names, result.outright, game=game)
            )

    def rewind(self, game: Game) -> None:
        """Take game's state as already told, printing nothing: after a takeback (which
        moves the game back) or when a saved game is resumed."""
        self._started = len(game.rounds)
        self._finished = sum(1 for index in range(len(game.rounds)) if _round_finished(game, index))
        log = game.rounds[-1] if game.rounds else None
        self._tricks = sum(1 for t in log.tricks if t.complete) if log is not None else 0
        self._declared = log is not None and all(d is not None for d in log.declarations)
        self._over = game.is_over

    def _start_round(self, game: Game, index: int) -> None:
        log = game.rounds[index]
        spec = game.rules.spec
        self._started = index + 1
        self._tricks = 0
        self._declared = False
        self.console.print()
        self.console.rule(
            f"Round {index + 1} of {spec.rounds} (first lead: {self.names[log.first_player]})",
            align="left",
        )
        if self.line_view is not None and index == len(game.rounds) - 1:
            self.console.print(self.line_view(game))
        else:
            self.console.print(line_text(game, log.line))
        for seat in sorted(self.private):
            hand = log.hands[seat]
            if hand is not None:
                self.console.print(Text(f"{self.names[seat]} hand: ").append_text(cards_text(hand)))

    def _sync_round(self, game: Game, index: int) -> None:
        log = game.rounds[index]
        if not self._declared and all(d is not None for d in log.declarations):
            self._declared = True
            for seat in sorted(self.private):
                piles = log.allocations[seat]
                if piles is not None:
                    self.console.print(
                        Text(f"{self.names[seat]} piles: ").append_text(piles_text(piles))
                    )
            declared = [self.names[s] for s in range(game.players) if log.declarations[s]]
            self.console.print(
                "Good weather declared by: " + (", ".join(declared) if declared else "nobody")
            )
        while self._tricks < len(log.tricks) and log.tricks[self._tricks].complete:
            trick = log.tricks[self._tricks]
            head = Text(f"Trick {trick.index + 1} (group {trick.group + 1}, ")
            head.append_text(sky_text(game.sky_cards[log.line[trick.index]]))
            head.append("): ")
            self.console.print(head + trick_text(game, trick, self.names))
            self._tricks += 1

    def _finish_round(self, game: Game, index: int) -> None:
        log = game.rounds[index]
        self._finished = index + 1
        self.console.print(Text(f"End of round {index + 1}:", style="bold"))
        for line in round_summary(game, log, self.names):
            self.console.print(Text("  ") + line)
        if not game.is_over:
            title = f"Standings after round {index + 1}"
            self.console.print(tallies_table(game, self.names, title))


def _round_finished(game: Game, index: int) -> bool:
    """True once every trick of round index is complete."""
    log = game.rounds[index]
    return len(log.tricks) == game.rules.spec.line_size and log.tricks[-1].complete
