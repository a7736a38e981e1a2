"""The rules and the stakes in words: what a player reads in `csl rules`, at a ``?`` prompt,
and beside each sky card of the line.

Nothing here draws: `rules_sections` returns (heading, plain text) pairs,
`scoring_cards` the scoring cards in play as data (words and point tables) and
`sky_worth_text` short phrases, so the terminal (`csl play`, `csl rules`) and the browser
(`csl serve`) show the same words and numbers. Every number comes from the engine's own
scoring (`csl_ai.scoring.score_tallies`), never from a second copy of the point tables,
so the words cannot drift from what the engine counts.

The worth of a sky card to a seat is the change in that seat's total if the round ended
now and the seat had also taken that card: the cards won earlier this round are settled
as the round's end settles them (RULES.md §3.5: face up, or face down for a declarer of
good weather, whose bet then fails), the other seats' cards stay as they stand (they
matter for the candy majority), and nobody wins anything more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from csl_ai.errors import IllegalMoveError
from csl_ai.game import Game, GameResult, Phase
from csl_ai.rules import Kind, RulesConfig, Side, SkyCard, SkyDeck, StarOption
from csl_ai.scoring import score_tallies

SPIDER_COUNTS: Final = 7
"""Spider counts with their own points: 0..5, then 6 or more."""
LEOPARD_COUNTS: Final = 8
"""Leopard counts with their own points: 0..6, then 7 or more."""

_PLURALS: Final = {Kind.CANDY: "candies", Kind.SPIDER: "spiders", Kind.LEOPARD: "leopards",
                   Kind.STAR: "stars"}  # fmt: skip
_SCORE_FIELDS: Final = {Kind.CANDY: "candy", Kind.SPIDER: "spider", Kind.LEOPARD: "leopard",
                        Kind.STAR: "star"}  # fmt: skip


# --- the rules in words ------------------------------------------------------------------
def rules_sections(rules: RulesConfig) -> list[tuple[str, str]]:
    """The rules a player needs for a game under `rules`, as (heading, plain text) pairs:
    the game, a round, tricks, good weather, the scoring of the sides in play, the end
    of the game, the notation and an example."""
    return [
        ("The game", _game_text(rules)),
        ("A round", _round_text(rules)),
        ("Tricks", _tricks_text()),
        ("Good weather", _weather_text(rules)),
        (f"Scoring ({_sides_label(rules)})", _scoring_text(rules)),
        ("End of the game", _end_text(rules)),
        ("Notation", _notation_text(rules)),
        ("Example", _example_text(rules)),
    ]


def _sides_label(rules: RulesConfig) -> str:
    pairs = zip(Kind, rules.sides, strict=True)
    return ", ".join(f"{kind.text} {side.value}" for kind, side in pairs)


def _game_text(rules: RulesConfig) -> str:
    spec = rules.spec
    aside = (
        f" Of the {3 * spec.ranks} rain cards, one is set aside face down each round, unseen."
        if spec.set_aside
        else ""
    )
    return (
        f"{rules.players} players, {spec.rounds} rounds. Rain cards come in three colours, "
        f"blue, red and green, ranked 1 to {spec.ranks}; blue is trump. Each round "
        f"{spec.line_size} sky cards are dealt face up in a line, and each player gets a hand "
        f"of {spec.hand_size} rain cards.{aside} You collect sky cards by winning tricks: "
        "candies, spiders, leopards and shooting stars, each scored by its own scoring card."
    )


def _round_text(rules: RulesConfig) -> str:
    spec = rules.spec
    sizes = ", ".join(str(n) for n in spec.group_sizes)
    return (
        f"1. The sky line is split into {len(spec.group_sizes)} groups of {sizes} cards, "
        "group 1 first.\n"
        f"2. Allocation: everyone, secretly and at once, splits their hand into one pile per "
        f"group, each pile as big as its group ({sizes} cards). Piles are final.\n"
        "3. Good weather: everyone, at once, bets on good weather or not (yes/no); the bets "
        "are then shown.\n"
        "4. Tricks: group by group, one trick per sky card in line order. In a group's "
        "tricks you play from that group's pile.\n"
        "5. The round ends: good weather bets are settled, and the First player card passes "
        "to the next seat."
    )


def _tricks_text() -> str:
    return (
        "The holder of the First player card leads the round's first trick; after that the "
        "winner of a trick leads the next one, also the first of the next group. The leader "
        "plays any card of their pile; the others follow in seat order and must play the "
        "led colour if their pile holds it, otherwise any card. If any blue card was played "
        "the highest blue wins (blue is trump); otherwise the highest card of the led colour "
        "wins. The winner takes that trick's sky card face up."
    )


def _weather_text(rules: RulesConfig) -> str:
    weather, face_down = _weather_points(rules)
    return (
        "Bet yes and win no sky card this round: you get a Good weather card, "
        f"+{weather} points. Bet yes and win any sky card: every sky card you "
        f"won this round is turned face down, {face_down} points each, and counts for "
        "nothing else. Bet no: your cards stay face up."
    )


def _scoring_text(rules: RulesConfig) -> str:
    weather, face_down = _weather_points(rules)
    lines = [
        _FACE_UP_ONLY,
        "Candy " + rules.side(Kind.CANDY).value + ": " + _candy_text(rules),
        "Spider " + rules.side(Kind.SPIDER).value + ": " + _count_table_text(
            rules, Kind.SPIDER, SPIDER_COUNTS
        ),
        "Leopard " + rules.side(Kind.LEOPARD).value + ": " + _count_table_text(
            rules, Kind.LEOPARD, LEOPARD_COUNTS
        ),
        "Shooting star " + rules.side(Kind.STAR).value + ": " + _star_text(rules),
        f"Good weather: +{weather} per Good weather card. "
        f"Face-down sky cards: {face_down} each.",
    ]
    return "\n".join(lines)


_FACE_UP_ONLY: Final = "Only face-up sky cards count; a ×2 card (C2, S2, L2) counts 2."


def _candy_text(rules: RulesConfig) -> str:
    if rules.side(Kind.CANDY) is Side.A:
        return (
            "you score the candies of every player who has strictly fewer candies than you "
            "(a tied player adds nothing). E.g. with 5, 5, 2 and 1 candies: each 5 scores "
            "2 + 1 = 3, the 2 scores 1, the 1 scores 0."
        )
    ranked = _candy_ranks_text(rules)
    return (
        "players are ranked by candies, most first; tied players share a rank and the next "
        "count takes the next rank (5, 5, 2, 1 candies: 1st, 1st, 2nd, 3rd). Everyone is "
        f"ranked, even with 0 candies. Points by rank: {ranked}."
    )


def _candy_ranks_text(rules: RulesConfig) -> str:
    """Candy B's points by rank, e.g. ``1st 3, 2nd 10, 3rd 6``."""
    return ", ".join(
        f"{_ordinal(rank)} {points}" for rank, points in enumerate(_candy_rank_points(rules), 1)
    )


def _count_table(rules: RulesConfig, kind: Kind, counts: int) -> tuple[tuple[str, int], ...]:
    """(count, points) for 0..counts-1 elements of a kind, the last one labelled ``n+``."""
    return tuple(
        (f"{n}+" if n == counts - 1 else str(n), _solo_points(rules, kind, n))
        for n in range(counts)
    )


def _count_table_text(rules: RulesConfig, kind: Kind, counts: int) -> str:
    table = _count_table(rules, kind, counts)
    parts = [f"{label}: {points}" for label, points in table[:-1]]
    parts.append(f"{counts - 1} or more: {table[-1][1]}")
    return f"points by your {_PLURALS[kind]}, " + ", ".join(parts) + "."


def _star_text(rules: RulesConfig) -> str:
    one, two = _star_points(rules)
    if rules.side(Kind.STAR) is Side.B:
        three = "you win the game outright, whatever the points (the card itself scores 0)"
    elif rules.star_option is StarOption.TWICE:
        three = (
            "the card scores twice your candy + spider + leopard points "
            "(17 points of those: +34, 51 in all)"
        )
    else:
        three = (
            "your candy + spider + leopard points are doubled (17 points of those: 34 in all; "
            "option 'double')"
        )
    never = "" if rules.side(Kind.STAR) is Side.B else (
        " Good weather and face-down points are never doubled."
    )
    return f"1 star: {one}, 2 stars: {two}, all 3: {three}.{never}"


def _end_text(rules: RulesConfig) -> str:
    outright = (
        "A player holding all 3 shooting stars face up wins outright. "
        if rules.side(Kind.STAR) is Side.B
        else ""
    )
    return (
        f"After round {rules.spec.rounds} the scores are added up. {outright}The highest total "
        "wins. Ties: the fewest sky cards held (face up and face down together) wins, then "
        "the most Good weather cards; a tie still standing is a shared win."
    )


def _notation_text(rules: RulesConfig) -> str:
    spec = rules.spec
    cards, piles = _NOTATION_EXAMPLES[(spec.ranks, spec.group_sizes)]
    return (
        f"Rain cards: a colour letter and a rank, {cards} (B blue, R red, G green; ranks "
        f"1 to {spec.ranks}). Piles: one per group in group order, separated by '|': "
        f"{piles}. Sky cards: C candy, S spider, L leopard with the count they show, "
        "C1 or C2 (a card with two candies), and * a shooting star. The sky line is written "
        "by groups, e.g. 'group 1: C1 S2 L1   group 2: * C2 S1'; in `csl play` each card "
        "is followed by what it is worth to you now (S2 +10: taking it would add 10 points "
        "to your total). A good weather bet is yes or no."
    )


_NOTATION_EXAMPLES: Final = {
    (12, (3, 3, 3)): ("B7 R10 G3", "B7 R2 G5 | B1 R9 G9 | B3 R4 G12"),
    (6, (3, 3, 3)): ("B5 R2 G3", "B5 R2 G6 | B1 R4 G3 | B3 R6 G1"),
    (6, (3, 3)): ("B5 R2 G3", "B5 R2 G6 | B1 R4 G3"),
    (12, (3, 4)): ("B7 R10 G3", "B7 R2 G5 | B1 R9 G9 G11"),
}
"""Cards and piles written for each player count's ranks and group sizes."""


def _example_text(rules: RulesConfig) -> str:
    spider = _solo_points(rules, Kind.SPIDER, 2)
    leopard = _solo_points(rules, Kind.LEOPARD, 4)
    return (
        "The trick for S2: seat 0 leads R5, seat 1 has red and must follow, R3; seat 2 "
        "has no red and plays B2. Blue is trump, so seat 2 wins and takes S2 face up: two "
        f"spiders. With those two spiders alone, spider {rules.side(Kind.SPIDER).value} "
        f"scores {spider}; two L2 cards (4 leopards) score {leopard} on leopard "
        f"{rules.side(Kind.LEOPARD).value}."
    )


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _scoring_rules(rules: RulesConfig) -> RulesConfig:
    """The rules with the default deck: the point tables do not depend on the deck, and the
    default one holds every count the tables reach."""
    return RulesConfig(
        players=rules.players, sides=rules.sides, star_option=rules.star_option,
        deck=SkyDeck.default(),
    )  # fmt: skip


def _cards_for(kind: Kind, elements: int) -> int:
    """The fewest cards that show that many elements of a kind (stars are single)."""
    return elements if kind is Kind.STAR else (elements + 1) // 2


def _solo_points(rules: RulesConfig, kind: Kind, n: int) -> int:
    """The points of a kind's card for a seat holding n elements of it and nothing else,
    the others holding nothing (the engine's scoring)."""
    scoring = _scoring_rules(rules)
    players = scoring.players
    elements = [[0] * len(Kind) for _ in range(players)]
    elements[0][kind] = n
    faceup = [_cards_for(kind, n)] + [0] * (players - 1)
    result = score_tallies(scoring, elements, faceup, [0] * players, [0] * players)
    return int(getattr(result.scores[0], _SCORE_FIELDS[kind]))


def _star_points(rules: RulesConfig) -> tuple[int, int]:
    """The star card's points for 1 and for 2 shooting stars."""
    return _solo_points(rules, Kind.STAR, 1), _solo_points(rules, Kind.STAR, 2)


def _weather_points(rules: RulesConfig) -> tuple[int, int]:
    """The points of one Good weather card and of one face-down sky card."""
    scoring = _scoring_rules(rules)
    players = scoring.players
    elements = [[0] * len(Kind) for _ in range(players)]
    one = [1] + [0] * (players - 1)
    line = score_tallies(scoring, elements, [0] * players, one, one).scores[0]
    return line.good_weather, line.face_down


def _candy_rank_points(rules: RulesConfig) -> list[int]:
    """Candy B's points for ranks 1..players (players holding players-1 .. 0 candies)."""
    scoring = _scoring_rules(rules)
    players = scoring.players
    counts = [players - 1 - s for s in range(players)]
    elements = [[c, 0, 0, 0] for c in counts]
    faceup = [_cards_for(Kind.CANDY, c) for c in counts]
    result = score_tallies(scoring, elements, faceup, [0] * players, [0] * players)
    return [line.candy for line in result.scores]


# --- the scoring cards as data ------------------------------------------------------------
@dataclass(frozen=True)
class ScoringCard:
    """One card of the scoring in play, as a side panel shows it: what it scores, in a
    sentence or two, and for spiders and leopards the points by count."""

    kind: str
    """``candy``, ``spider``, ``leopard``, ``star``, or ``weather`` (good weather bets and
    face-down cards)."""
    side: str | None
    """The side in play, ``A`` or ``B``; None for good weather, which has no sides."""
    title: str
    text: str
    table: tuple[tuple[str, int], ...] | None = None
    """(count, points) from a count of 0 up; the last count, ``6+``, means that many or more."""


SCORING_NOTE: Final = (
    f"{_FACE_UP_ONLY} Blue is trump: the highest blue wins a trick, else the highest card of "
    "the colour led; follow the colour led if your pile holds it."
)
"""The reminder under the scoring cards: what counts, and who wins a trick."""


def scoring_cards(rules: RulesConfig) -> list[ScoringCard]:
    """The scoring cards of the sides in play (RULES.md §4), candy, spider, leopard and
    shooting star, then good weather: every number from the engine's scoring."""
    return [
        ScoringCard("candy", rules.side(Kind.CANDY).value, "Candy", _candy_card_text(rules)),
        _count_card(rules, Kind.SPIDER, "Spider", SPIDER_COUNTS),
        _count_card(rules, Kind.LEOPARD, "Leopard", LEOPARD_COUNTS),
        ScoringCard("star", rules.side(Kind.STAR).value, "Shooting star", _star_card_text(rules)),
        ScoringCard("weather", None, "Good weather", _weather_card_text(rules)),
    ]


def _candy_card_text(rules: RulesConfig) -> str:
    if rules.side(Kind.CANDY) is Side.A:
        return (
            "You score the candies of every player who has strictly fewer candies than you "
            "(a tied player adds nothing)."
        )
    return (
        "Players are ranked by candies, most first (ties share a rank). "
        f"Points by rank: {_candy_ranks_text(rules)}."
    )


def _count_card(rules: RulesConfig, kind: Kind, title: str, counts: int) -> ScoringCard:
    last = counts - 1
    return ScoringCard(
        kind.text,
        rules.side(kind).value,
        title,
        f"Points by your face-up {_PLURALS[kind]}; {last}+ means {last} or more.",
        _count_table(rules, kind, counts),
    )


def _star_card_text(rules: RulesConfig) -> str:
    one, two = _star_points(rules)
    if rules.side(Kind.STAR) is Side.B:
        three = "you win the game outright"
    elif rules.star_option is StarOption.TWICE:
        three = "the card scores twice your candy + spider + leopard points"
    else:
        three = "your candy + spider + leopard points count double"
    return f"1 star: {one}, 2 stars: {two}. All 3: {three}."


def _weather_card_text(rules: RulesConfig) -> str:
    weather, face_down = _weather_points(rules)
    return (
        f"Bet that you win no sky card this round: +{weather} if you win none; otherwise "
        f"every sky card you won this round turns face down ({face_down} each, counting for "
        "nothing else)."
    )


# --- what a sky card is worth ------------------------------------------------------------
@dataclass(frozen=True)
class _Tallies:
    """Every seat's scoring tallies: face-up elements, face-up and face-down cards, good
    weather cards."""

    elements: tuple[tuple[int, ...], ...]
    faceup: tuple[int, ...]
    facedown: tuple[int, ...]
    weather: tuple[int, ...]

    def score(self, rules: RulesConfig) -> GameResult:
        return score_tallies(rules, self.elements, self.faceup, self.facedown, self.weather)


@dataclass(frozen=True)
class _Worth:
    """What one sky card would do for a seat: the points, and what the phrase needs."""

    points: int
    card: SkyCard
    count_before: int
    face_down: bool
    breaks_bet: bool
    outright: bool


def _check_seat(game: Game, seat: int) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < game.players:
        raise IllegalMoveError(f"seat {seat!r} is not in this {game.players}-player game")


def _round_in_play(game: Game) -> bool:
    """True while the last round's wins are not yet settled into the tallies."""
    return bool(game.rounds) and game.phase in (Phase.ALLOCATE, Phase.WEATHER, Phase.PLAY)


def _settled(game: Game, extra: tuple[int, int] | None = None) -> _Tallies:
    """The tallies if the round ended now, with `extra` = (seat, sky card) also won."""
    core = game.core
    elements = [list(row) for row in core.elements]
    faceup = list(core.faceup_cards)
    facedown = list(core.facedown_cards)
    weather = list(core.good_weather)
    if _round_in_play(game):
        log = game.rounds[-1]
        won: list[list[int]] = [[] for _ in range(game.players)]
        for trick in log.tricks:
            if trick.complete and trick.winner is not None and trick.sky is not None:
                won[trick.winner].append(trick.sky)
        if extra is not None:
            won[extra[0]].append(extra[1])
        for seat in range(game.players):
            if log.declarations[seat]:
                if won[seat]:
                    facedown[seat] += len(won[seat])
                else:
                    weather[seat] += 1
                continue
            for sky in won[seat]:
                card = game.sky_cards[sky]
                elements[seat][card.kind] += card.count
                faceup[seat] += 1
    return _Tallies(
        tuple(tuple(row) for row in elements), tuple(faceup), tuple(facedown), tuple(weather)
    )


def _won_this_round(game: Game) -> set[int]:
    """Line positions of the current round already won (none once the round is settled
    and the next one not dealt: then every card is won)."""
    if not game.rounds:
        return set()
    log = game.rounds[-1]
    if not _round_in_play(game):
        return set(range(len(log.line)))
    return {t.index for t in log.tricks if t.complete}


def _worths(game: Game, seat: int) -> list[_Worth | None]:
    _check_seat(game, seat)
    if not game.rounds:
        return []
    log = game.rounds[-1]
    won = _won_this_round(game)
    base = _settled(game)
    base_total = base.score(game.rules).scores[seat].total
    declared = bool(log.declarations[seat]) and _round_in_play(game)
    bet_alive = declared and base.weather[seat] > game.core.good_weather[seat]
    out: list[_Worth | None] = []
    for position, sky in enumerate(log.line):
        if position in won:
            out.append(None)
            continue
        result = _settled(game, (seat, sky)).score(game.rules)
        card = game.sky_cards[sky]
        out.append(
            _Worth(
                points=result.scores[seat].total - base_total,
                card=card,
                count_before=base.elements[seat][card.kind],
                face_down=declared,
                breaks_bet=bet_alive,
                outright=result.outright == seat,
            )
        )
    return out


def sky_worth(game: Game, seat: int) -> list[int | None]:
    """For each sky card of the current round's line (in line order): how many points
    seat's total would change by if seat took that card, the round ending now (see the
    module's docstring); None for a card someone has already won this round."""
    return [None if w is None else w.points for w in _worths(game, seat)]


def sky_worth_text(game: Game, seat: int) -> list[str | None]:
    """A short phrase per sky card of the line, e.g. ``your 4th leopard: +10``,
    ``your 3rd and 4th spiders: -2``, ``breaks your good weather bet: -9``; None for a
    card already won this round."""
    return [None if w is None else _phrase(w) for w in _worths(game, seat)]


def _phrase(worth: _Worth) -> str:
    points = _signed(worth.points)
    if worth.breaks_bet:
        return f"breaks your good weather bet: {points}"
    if worth.face_down:
        return f"face down (good weather bet): {points}"
    kind, before = worth.card.kind, worth.count_before
    if worth.card.count == 1:
        what = f"your {_ordinal(before + 1)} {kind.text}"
    else:
        what = f"your {_ordinal(before + 1)} and {_ordinal(before + 2)} {_PLURALS[kind]}"
    if worth.outright:
        return f"{what}: you win outright"
    return f"{what}: {points}"


def _signed(points: int) -> str:
    return f"{points:+d}" if points else "0"


__all__: Sequence[str] = (
    "SCORING_NOTE",
    "ScoringCard",
    "rules_sections",
    "scoring_cards",
    "sky_worth",
    "sky_worth_text",
)
