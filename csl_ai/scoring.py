"""Score end-of-game tallies without playing a game: a typed face over the core's scoring.

The C core scores a finished game from a few counts per seat (RULES.md §4): face-up
elements by kind, face-up and face-down sky cards, honoured good weather cards. This
module checks such tallies against what a game under the rules can produce, hands them
to the same C scoring a real game uses, and returns a `GameResult`, so a table written
down by hand (or a printed example) is scored exactly as the engine scores a game.
"""

from __future__ import annotations

from collections.abc import Sequence

from csl_ai import _core
from csl_ai.errors import TallyError
from csl_ai.game import GameResult, ScoreLine
from csl_ai.rules import Kind, RulesConfig, Side, StarOption


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _counts(values: object, length: int, where: str) -> tuple[int, ...]:
    """A sequence of `length` non-negative ints, or TallyError naming `where`."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TallyError(f"{where}: must be a sequence of {length} counts, got {values!r}")
    if len(values) != length:
        raise TallyError(f"{where}: must hold {length} counts, got {len(values)} in {values!r}")
    for i, v in enumerate(values):
        if not _is_count(v):
            raise TallyError(f"{where}[{i}]: must be a non-negative integer, got {v!r}")
    return tuple(values)


def _check_tallies(
    rules: RulesConfig,
    elements: tuple[tuple[int, ...], ...],
    faceup: tuple[int, ...],
    facedown: tuple[int, ...],
    weather: tuple[int, ...],
) -> None:
    """Raise TallyError unless some game under `rules` ends with these tallies."""
    spec = rules.spec
    deck = rules.game_deck
    in_deck = deck.elements_per_kind()
    for kind in Kind:
        total = sum(row[kind] for row in elements)
        if total > in_deck[kind]:
            raise TallyError(
                f"elements: {total} {kind.text} elements in all, but the deck holds {in_deck[kind]}"
            )
    for s, row in enumerate(elements):
        stars = row[Kind.STAR]
        others = [row[k] for k in (Kind.CANDY, Kind.SPIDER, Kind.LEOPARD)]
        fewest = stars + sum((e + 1) // 2 for e in others)
        most = stars + sum(others)
        if not fewest <= faceup[s] <= most:
            raise TallyError(
                f"faceup_cards[{s}]: {faceup[s]} face-up cards cannot show elements {row!r} "
                f"(they need {fewest}..{most} cards)"
            )
        failed_rounds = 1 if facedown[s] else 0
        if weather[s] + failed_rounds > spec.rounds:
            raise TallyError(
                f"good_weather[{s}]: {weather[s]} honoured declarations "
                f"{'and a failed one ' if failed_rounds else ''}in a {spec.rounds}-round game"
            )
    held = sum(faceup) + sum(facedown)
    if held > spec.sky_cards_used:
        raise TallyError(
            f"faceup_cards, facedown_cards: {held} sky cards held in all, "
            f"but a {rules.players}-player game deals {spec.sky_cards_used}"
        )


def score_tallies(
    rules: RulesConfig,
    elements: Sequence[Sequence[int]],
    faceup_cards: Sequence[int],
    facedown_cards: Sequence[int],
    good_weather: Sequence[int],
) -> GameResult:
    """Score a finished game from its tallies with the core's scoring (RULES.md §4).

    Per seat: `elements[s]` = face-up (candy, spider, leopard, star) elements (a ×2 card
    counts 2), `faceup_cards[s]` and `facedown_cards[s]` the sky cards held,
    `good_weather[s]` the honoured good weather cards. TallyError if the tallies are
    malformed or impossible under `rules` (counts the deck or the rounds cannot give).
    """
    if not isinstance(rules, RulesConfig):
        raise TallyError(f"rules: must be a RulesConfig, got {rules!r}")
    n = rules.players
    if isinstance(elements, (str, bytes)) or not isinstance(elements, Sequence):
        raise TallyError(f"elements: must be one row per seat, got {elements!r}")
    if len(elements) != n:
        raise TallyError(f"elements: must hold {n} rows for a {n}-player game, got {len(elements)}")
    rows = tuple(_counts(row, len(Kind), f"elements[{s}]") for s, row in enumerate(elements))
    faceup = _counts(faceup_cards, n, "faceup_cards")
    facedown = _counts(facedown_cards, n, "facedown_cards")
    weather = _counts(good_weather, n, "good_weather")
    _check_tallies(rules, rows, faceup, facedown, weather)
    sides = tuple(0 if side is Side.A else 1 for side in rules.sides)
    star_mode = 0 if rules.star_option is StarOption.TWICE else 1
    lines, winners, outright = _core.score_tallies(
        n, sides, star_mode, [list(r) for r in rows], list(faceup), list(facedown), list(weather)
    )
    return GameResult(
        scores=tuple(ScoreLine(*line) for line in lines),
        winners=tuple(s for s in range(n) if (winners >> s) & 1),
        outright=outright if outright >= 0 else None,
    )
