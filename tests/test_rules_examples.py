"""The printed rules' worked examples and the rules mechanics of RULES.md, one by one.

Scoring examples go through `csl_ai.scoring.score_tallies` (the C core's scoring);
trick, lead and good-weather examples drive a real `Game` with chosen deals so the
cards land in the right piles. Expected values are written out from the rulebook and
RULES.md, never computed by the code under test.
"""

from __future__ import annotations

import random
from functools import reduce
from operator import or_

import pytest

from csl_ai.errors import IllegalMoveError
from csl_ai.game import Game, GameResult, Phase, ScoreLine
from csl_ai.moves import Allocate, Declare, Play
from csl_ai.notation import cards_of, parse_card, parse_cards, parse_piles
from csl_ai.rules import Kind, RulesConfig, Side, SkyCard, SkyDeck, StarOption, parse_sides
from csl_ai.scoring import TallyError, score_tallies

C1, C2 = SkyCard(Kind.CANDY, 1), SkyCard(Kind.CANDY, 2)
S1, S2 = SkyCard(Kind.SPIDER, 1), SkyCard(Kind.SPIDER, 2)
L1, L2 = SkyCard(Kind.LEOPARD, 1), SkyCard(Kind.LEOPARD, 2)
STAR = SkyCard(Kind.STAR, 1)

EXAMPLE_DECK = SkyDeck.from_counts(
    {C1: 8, C2: 6, S1: 8, S2: 3, L1: 5, L2: 3, STAR: 3}, name="rulebook-examples"
)
"""A 36-card deck with enough candies for the printed examples (16 and 17 candies in one
game; the default deck of RULES.md §1.1 holds 14)."""


def rules_for(
    players: int = 4, sides: str = "", star: StarOption = StarOption.TWICE
) -> RulesConfig:
    """Rules on the example deck with the sides given as text (missing kinds A)."""
    return RulesConfig(
        players=players, sides=parse_sides(sides), star_option=star, deck=EXAMPLE_DECK
    )


def score(
    rules: RulesConfig,
    elements: list[tuple[int, int, int, int]],
    faceup: list[int] | None = None,
    facedown: list[int] | None = None,
    weather: list[int] | None = None,
) -> GameResult:
    """Score tallies; by default every element is on its own face-up card."""
    n = rules.players
    return score_tallies(
        rules,
        elements,
        faceup if faceup is not None else [sum(row) for row in elements],
        facedown if facedown is not None else [0] * n,
        weather if weather is not None else [0] * n,
    )


def column(result: GameResult, name: str) -> list[int]:
    return [getattr(line, name) for line in result.scores]


def candies(*counts: int) -> list[tuple[int, int, int, int]]:
    return [(c, 0, 0, 0) for c in counts]


def spiders(*counts: int) -> list[tuple[int, int, int, int]]:
    return [(0, s, 0, 0) for s in counts]


def leopards(*counts: int) -> list[tuple[int, int, int, int]]:
    return [(0, 0, le, 0) for le in counts]


# --- scoring: the printed examples ------------------------------------------------------


def test_candy_a_example() -> None:
    """Rio, Haru, Etsuko, Yoshi: 8, 4, 3, 1 candies score 8 (4+3+1), 4 (3+1), 1 and 0."""
    result = score(rules_for(), candies(8, 4, 3, 1))
    assert column(result, "candy") == [8, 4, 1, 0]
    assert column(result, "total") == [8, 4, 1, 0]
    assert result.winners == (0,)


def test_candy_a_tied_players_add_nothing() -> None:
    """Only strictly fewer candies count: a tied player adds nothing."""
    assert column(score(rules_for(), candies(5, 5, 2, 0)), "candy") == [2, 2, 0, 0]


def test_candy_b_example() -> None:
    """6, 6, 3, 2 candies: ranks 1, 1, 2, 3 score 3, 3, 10, 6."""
    result = score(rules_for(sides="candy=B"), candies(6, 6, 3, 2))
    assert column(result, "candy") == [3, 3, 10, 6]
    assert result.winners == (2,)


def test_candy_b_ranks_a_player_with_no_candy() -> None:
    """5, 3, 1, 0: every player is ranked, the one with 0 candies 4th (0 points)."""
    assert column(score(rules_for(sides="candy=B"), candies(0, 5, 3, 1)), "candy") == [0, 3, 10, 6]


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ((6, 5, 3, 2, 1), [3, 10, 6, 0, 0]),
        ((6, 6, 3, 2, 0), [3, 3, 10, 6, 0]),
        ((1, 2, 3, 5, 6), [0, 0, 6, 10, 3]),
    ],
)
def test_candy_b_five_players_fifth_rank_scores_zero(
    counts: tuple[int, ...], expected: list[int]
) -> None:
    result = score(rules_for(players=5, sides="candy=B"), candies(*counts))
    assert column(result, "candy") == expected


def test_spider_a_example() -> None:
    assert column(score(rules_for(), spiders(1, 2, 3, 4)), "spider") == [3, 10, 4, 2]


def test_spider_b_example() -> None:
    result = score(rules_for(sides="spider=B"), spiders(1, 2, 3, 4))
    assert column(result, "spider") == [10, 3, 2, 1]


def test_leopard_a_example() -> None:
    assert column(score(rules_for(), leopards(1, 2, 2, 4)), "leopard") == [0, 10, 10, 20]


def test_leopard_b_example() -> None:
    result = score(rules_for(sides="leopard=B"), leopards(0, 2, 3, 4))
    assert column(result, "leopard") == [0, 0, 15, 0]


SPIDER_TABLE = {Side.A: [0, 3, 10, 4, 2, 10, 1], Side.B: [0, 10, 3, 2, 1, 10, 1]}
LEOPARD_TABLE = {Side.A: [0, 0, 10, 0, 20, 0, 30, 0], Side.B: [0, 0, 0, 15, 0, 0, 30, 0]}


@pytest.mark.parametrize("side", [Side.A, Side.B])
def test_spider_table_capped_at_six(side: Side) -> None:
    """Spider points by count 0..14: the 6+ column holds for 6 and more."""
    rules = RulesConfig(players=4, sides=(Side.A, side, Side.A, Side.A))
    for s in range(15):
        expected = SPIDER_TABLE[side][min(s, 6)]
        assert column(score(rules, spiders(s, 0, 0, 0)), "spider")[0] == expected, s


@pytest.mark.parametrize("side", [Side.A, Side.B])
def test_leopard_table_capped_at_seven(side: Side) -> None:
    """Leopard points by count 0..14: the 7+ column holds for 7 and more."""
    rules = RulesConfig(players=4, sides=(Side.A, Side.A, side, Side.A))
    for le in range(15):
        expected = LEOPARD_TABLE[side][min(le, 7)]
        assert column(score(rules, leopards(le, 0, 0, 0)), "leopard")[0] == expected, le


RIO = (4, 3, 2, 3)
"""4 candies (3 points: the others hold 3, 0, 0), 3 spiders (4), 2 leopards (10), 3 stars."""
RIO_TABLE = [RIO, (3, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)]


def test_shooting_star_a_example_twice() -> None:
    """3 + 4 + 10 = 17, and 3 stars: the star card gains 34 more; total 51."""
    result = score(rules_for(), RIO_TABLE)
    assert result.scores[0] == ScoreLine(3, 4, 10, 34, 0, 0, 51)


def test_shooting_star_a_example_double_option() -> None:
    """The "double" option: the three cards' 17 is doubled, the star card adds 17; total 34."""
    result = score(rules_for(star=StarOption.DOUBLE), RIO_TABLE)
    assert result.scores[0] == ScoreLine(3, 4, 10, 17, 0, 0, 34)


@pytest.mark.parametrize(("star", "bonus"), [(StarOption.TWICE, 34), (StarOption.DOUBLE, 17)])
def test_shooting_star_a_never_doubles_weather_or_face_down(star: StarOption, bonus: int) -> None:
    result = score(rules_for(star=star), RIO_TABLE, facedown=[1, 0, 0, 0], weather=[1, 0, 0, 0])
    assert result.scores[0] == ScoreLine(3, 4, 10, bonus, 7, -2, 17 + bonus + 7 - 2)


@pytest.mark.parametrize(
    ("sides", "stars", "points"),
    [
        ("", 0, 0), ("", 1, 0), ("", 2, -5),
        ("star=B", 0, 0), ("star=B", 1, 0), ("star=B", 2, -10), ("star=B", 3, 0),
    ],
)
def test_shooting_star_small_counts(sides: str, stars: int, points: int) -> None:
    """Side A: t=2 costs 5; side B: t=2 costs 10; t=3 on side B scores 0 points itself."""
    table = [(0, 2, 0, stars), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)]
    result = score(rules_for(sides=sides), table)
    assert result.scores[0].star == points
    assert result.scores[0].total == 10 + points


def test_shooting_star_a_three_stars_and_nothing_else_scores_nothing() -> None:
    assert score(rules_for(), [(0, 0, 0, 3)] + [(0, 0, 0, 0)] * 3).scores[0].star == 0


def test_shooting_star_b_three_stars_win_outright_with_fewer_points() -> None:
    table = [(0, 0, 0, 3), (0, 2, 4, 0), (5, 5, 2, 0), (0, 0, 0, 0)]
    result = score(rules_for(sides="star=B"), table, weather=[0, 0, 0, 3])
    assert [line.total for line in result.scores] == [0, 30, 20, 21]
    assert result.winners == (0,)
    assert result.outright == 0
    assert result.win_share(0) == 1.0 and result.win_share(1) == 0.0


def test_shooting_star_a_three_stars_is_no_outright_win() -> None:
    table = [(0, 0, 0, 3), (0, 2, 4, 0), (0, 0, 0, 0), (0, 0, 0, 0)]
    result = score(rules_for(), table)
    assert result.outright is None
    assert result.winners == (1,)


def test_good_weather_example() -> None:
    """Rio honoured one declaration (7) and failed one with 2 cards (-2 each): 3 points."""
    result = score(rules_for(), [(0, 0, 0, 0)] * 4, facedown=[2, 0, 0, 0], weather=[1, 0, 0, 0])
    assert result.scores[0] == ScoreLine(0, 0, 0, 0, 7, -4, 3)
    assert result.winners == (0,)


# --- ties --------------------------------------------------------------------------------


def test_tie_broken_by_fewest_sky_cards_face_down_included() -> None:
    """Seat 0: one ×2 spider card (10). Seat 1: two good weather cards and 2 face-down
    cards (14 - 4 = 10): 2 cards against 1, so seat 0 wins before good weather counts."""
    table = [(0, 2, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)]
    result = score(
        rules_for(), table, faceup=[1, 0, 0, 0], facedown=[0, 2, 0, 0], weather=[0, 2, 0, 0]
    )
    assert [line.total for line in result.scores[:2]] == [10, 10]
    assert result.winners == (0,)


def test_tie_broken_by_fewest_face_up_cards() -> None:
    """Both have 2 spiders (10): one ×2 card beats two ×1 cards."""
    table = [(0, 2, 0, 0), (0, 2, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)]
    result = score(rules_for(), table, faceup=[2, 1, 0, 0])
    assert result.winners == (1,)


def test_tie_then_broken_by_most_good_weather() -> None:
    """Seat 0: one ×1 spider (3) + good weather (7); seat 1: one ×2 spider (10): one card each."""
    table = [(0, 1, 0, 0), (0, 2, 0, 0), (0, 0, 0, 0), (0, 0, 0, 0)]
    result = score(rules_for(), table, faceup=[1, 1, 0, 0], weather=[1, 0, 0, 0])
    assert [line.total for line in result.scores[:2]] == [10, 10]
    assert result.winners == (0,)


def test_tie_that_stands_is_a_shared_win() -> None:
    table = [(0, 2, 0, 0), (0, 0, 0, 0), (0, 2, 0, 0), (0, 1, 0, 0)]
    result = score(rules_for(), table, faceup=[1, 0, 1, 1])
    assert result.winners == (0, 2)
    assert [result.win_share(s) for s in range(4)] == [0.5, 0.0, 0.5, 0.0]


def test_three_way_shared_win() -> None:
    result = score(rules_for(), [(0, 0, 0, 0)] * 4, weather=[1, 1, 0, 1])
    assert result.winners == (0, 1, 3)
    assert [result.win_share(s) for s in range(4)] == pytest.approx([1 / 3, 1 / 3, 0.0, 1 / 3])


# --- the scoring API's checks -----------------------------------------------------------


def seat0(row: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Elements where seat 0 holds row and the other three seats nothing."""
    return [row] + [(0, 0, 0, 0)] * 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"elements": [(0, 0, 0, 0)] * 3}, "elements: must hold 4 rows"),
        ({"elements": seat0((0, 0, 0))}, "elements[0]: must hold 4 counts"),
        ({"elements": seat0((0, -1, 0, 0))}, "elements[0][1]: must be a non-negative"),
        ({"elements": seat0((0, 0, 0, 4)), "faceup_cards": [4, 0, 0, 0]}, "4 star elements"),
        ({"elements": seat0((15, 0, 0, 0)), "faceup_cards": [15, 0, 0, 0]}, "15 candy elements"),
        ({"elements": seat0((4, 0, 0, 0)), "faceup_cards": [1, 0, 0, 0]}, "[0]: 1 face-up"),
        ({"elements": seat0((2, 0, 0, 0)), "faceup_cards": [3, 0, 0, 0]}, "[0]: 3 face-up"),
        ({"good_weather": [4, 0, 0, 0], "facedown_cards": [1, 0, 0, 0]}, "weather[0]: 4 honoured"),
        ({"good_weather": [0, True, 0, 0]}, "weather[1]: must be a non-negative integer, got True"),
        ({"facedown_cards": [20, 17, 0, 0]}, "37 sky cards held"),
        ({"faceup_cards": "0000"}, "faceup_cards: must be a sequence"),
    ],
)
def test_score_tallies_rejects_impossible_tallies(kwargs: dict[str, object], message: str) -> None:
    args: dict[str, object] = {
        "elements": [(0, 0, 0, 0)] * 4,
        "faceup_cards": [0] * 4,
        "facedown_cards": [0] * 4,
        "good_weather": [0] * 4,
    }
    args.update(kwargs)
    with pytest.raises(TallyError) as info:
        score_tallies(RulesConfig(players=4), **args)  # type: ignore[arg-type]
    assert message in str(info.value)


# --- real games with chosen deals -------------------------------------------------------


def dealt_game(players: int, piles_text: list[str], *, sky_order: list[int] | None = None,
               first_seat: int = 0, set_aside: str = "") -> Game:
    """A game whose first round deals these piles (one text per seat), allocated, undeclared."""
    rules = RulesConfig(players=players, first_seat=first_seat)
    n_sky = len(rules.game_deck.cards)
    game = Game(rules, seed=7, sky_order=sky_order or list(range(n_sky)), auto_deal=False)
    deal_piles(game, piles_text, set_aside)
    return game


def deal_piles(game: Game, piles_text: list[str], set_aside: str = "") -> None:
    sizes = game.rules.spec.group_sizes
    piles = [parse_piles(text, sizes) for text in piles_text]
    game.deal([reduce(or_, p) for p in piles], parse_cards(set_aside))
    for seat, p in enumerate(piles):
        game.apply(Allocate(p), seat)


def declare_all(game: Game, declarations: list[bool] | None = None) -> None:
    for seat in range(game.players):
        game.apply(Declare(bool(declarations and declarations[seat])), seat)


def random_move(game: Game, seat: int, rng: random.Random) -> Allocate | Declare | Play:
    """A uniformly random legal move for seat (an allocation by shuffling the hand)."""
    if game.phase is Phase.ALLOCATE:
        cards = cards_of(game.hand(seat))
        rng.shuffle(cards)
        piles, start = [], 0
        for size in game.rules.spec.group_sizes:
            piles.append(reduce(or_, (1 << c for c in cards[start:start + size])))
            start += size
        return Allocate(tuple(piles))
    move = rng.choice(game.legal_moves(seat))
    assert not isinstance(move, Allocate)
    return move


def play_cards(game: Game, cards: str) -> None:
    """Play these cards in order, each by the seat to move."""
    for text in cards.split():
        game.apply(Play(parse_card(text)))


WEATHER_EXAMPLE_1 = [
    "G1 G3 G6 | B2 B3 B4 | B5 B6 B7",
    "B1 R1 R12 | B8 B9 B10 | B11 B12 R2",
    "G2 G4 G5 | R3 R4 R5 | R6 R7 R8",
    "G7 G8 G9 | R9 R10 R11 | G10 G11 G12",
]
WEATHER_EXAMPLE_2 = [
    "G1 G2 G3 | B2 B3 B5 | B6 B8 B9",
    "B1 B4 R1 | B10 B11 B12 | R4 R5 R6",
    "B7 R2 R3 | R7 R8 R9 | R10 R11 R12",
    "G10 G11 G12 | G4 G5 G6 | G7 G8 G9",
]


def test_weather_rule_example_1_highest_of_led_colour() -> None:
    """A green 6, B red 12, C green 2, D green 7, green led: D wins; the red 12 does not count."""
    game = dealt_game(4, WEATHER_EXAMPLE_1)
    declare_all(game)
    play_cards(game, "G6 R12 G2 G7")
    trick = game.rounds[0].tricks[0]
    assert trick.plays == tuple(
        (seat, parse_card(card)) for seat, card in enumerate(("G6", "R12", "G2", "G7"))
    )
    assert trick.winner == 3
    assert trick.sky == game.rounds[0].line[0]
    assert game.core.round_won == (0, 0, 0, 1)
    assert game.to_move == 3


def test_weather_rule_example_2_blue_is_trump() -> None:
    """A green 1, B blue 4, C blue 7, D green 10, green led: C wins with the highest blue."""
    game = dealt_game(4, WEATHER_EXAMPLE_2)
    declare_all(game)
    play_cards(game, "G1 B4 B7 G10")
    assert game.rounds[0].tricks[0].winner == 2
    assert game.core.round_won == (0, 0, 1, 0)
    assert game.to_move == 2


MUST_FOLLOW_DEAL = [
    "R10 R11 R12 | B4 B5 B6 | B7 B8 B9",
    "B1 G1 R1 | B10 B11 B12 | R4 R5 R6",
    "B2 G2 G3 | R7 R8 R9 | G4 G5 G6",
    "B3 R2 R3 | G7 G8 G9 | G10 G11 G12",
]


def test_leader_may_play_any_card_of_the_pile() -> None:
    game = dealt_game(4, MUST_FOLLOW_DEAL)
    declare_all(game)
    assert game.legal_moves(0) == [Play(parse_card(c)) for c in ("R10", "R11", "R12")]


def test_must_follow_the_led_colour_when_the_pile_holds_it() -> None:
    game = dealt_game(4, MUST_FOLLOW_DEAL)
    declare_all(game)
    play_cards(game, "R12")
    assert game.legal_moves(1) == [Play(parse_card("R1"))]
    for other in ("B1", "G1"):
        assert not game.is_legal(Play(parse_card(other)), 1)
        with pytest.raises(IllegalMoveError, match="must follow red"):
            game.apply(Play(parse_card(other)), 1)
        assert game.core.copy().play(parse_card(other)) == 6
    play_cards(game, "R1")
    assert game.current_trick is not None and len(game.current_trick.plays) == 2


def test_a_pile_void_of_the_led_colour_may_play_any_card() -> None:
    """Seat 2 holds reds in another pile, but its pile for this group has none."""
    game = dealt_game(4, MUST_FOLLOW_DEAL)
    declare_all(game)
    play_cards(game, "R12 R1")
    assert game.legal_moves(2) == [Play(parse_card(c)) for c in ("B2", "G2", "G3")]
    play_cards(game, "G3")
    assert game.legal_moves(3) == [Play(parse_card(c)) for c in ("R2", "R3")]
    play_cards(game, "R3")
    assert game.rounds[0].tricks[0].winner == 0


LEAD_DEAL_2P = [
    "R1 R2 R3 | B1 B2 B3 | G1 G2 G3",
    "R4 R5 R6 | G4 G5 G6 | B4 B5 B6",
]
"""Seat 1 wins group 1 (higher reds), seat 0 group 2 (blue over green), seat 1 group 3."""


@pytest.mark.parametrize("seed", range(5))
def test_trick_winner_leads_the_next_trick_and_the_next_group(seed: int) -> None:
    game = dealt_game(2, LEAD_DEAL_2P)
    declare_all(game)
    rng = random.Random(seed)
    while game.phase is Phase.PLAY:
        game.apply(rng.choice(game.legal_moves()))
    tricks = game.rounds[0].tricks
    assert [t.winner for t in tricks] == [1, 1, 1, 0, 0, 0, 1, 1, 1]
    assert [t.leader for t in tricks] == [0, 1, 1, 1, 0, 0, 0, 1, 1]
    assert [t.group for t in tricks] == [0, 0, 0, 1, 1, 1, 2, 2, 2]


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_first_player_card_moves_clockwise(players: int) -> None:
    """Round r is led by (first_seat + r) % n, whoever won the last trick before it."""
    for first_seat in range(players):
        game = Game(RulesConfig(players=players, first_seat=first_seat), seed=100 + first_seat)
        rng = random.Random(first_seat)
        while not game.is_over:
            seat = game.to_move
            game.apply(random_move(game, seat, rng), seat)
        leaders = [r.tricks[0].leader for r in game.rounds]
        assert leaders == [(first_seat + r) % players for r in range(len(game.rounds))]
        assert [r.first_player for r in game.rounds] == leaders


GOOD_WEATHER_DEAL_2P = [
    "G1 G2 G3 | B1 B2 B3 | B4 B5 B6",
    "R1 R2 R3 | G4 G5 G6 | R4 R5 R6",
]
"""Seat 0 wins every trick: green led over void reds, then blue over green and red."""

TWO_WINS_DEAL_2P = [
    "B1 B2 B3 | G4 G5 G6 | B4 R5 R6",
    "B5 B6 R1 | G1 G2 G3 | R2 R3 R4",
]
"""Seat 1 wins exactly the two tricks where it plays B5 and B6, in any order of play."""

FIRST_LINE_2P = (0, 8, 11, 19, 22, 30, 33, 34, 35)
SKY_ORDER_2P = list(FIRST_LINE_2P) + [i for i in range(36) if i not in FIRST_LINE_2P]
"""First line: C1 C2 S1 S2 L1 L2 * * * (default deck ids), so every kind is in play."""


def play_out_round(game: Game, seed: int) -> None:
    rng = random.Random(seed)
    while game.phase is Phase.PLAY:
        game.apply(rng.choice(game.legal_moves()))


def line_elements(game: Game, round_index: int) -> tuple[int, ...]:
    totals = [0, 0, 0, 0]
    for sky in game.rounds[round_index].line:
        card = game.sky_cards[sky]
        totals[card.kind] += card.count
    return tuple(totals)


@pytest.mark.parametrize("declare0", [False, True])
@pytest.mark.parametrize("declare1", [False, True])
def test_good_weather_honoured_and_failed(declare0: bool, declare1: bool) -> None:
    """Seat 0 wins all 9 sky cards, seat 1 none. A failed declaration turns all 9 face
    down (no elements, -2 each); an honoured one earns a good weather card (7)."""
    game = dealt_game(2, GOOD_WEATHER_DEAL_2P, sky_order=SKY_ORDER_2P)
    declare_all(game, [declare0, declare1])
    play_out_round(game, 3)
    assert game.phase is Phase.DEAL and game.round == 1
    core = game.core
    assert line_elements(game, 0) == (3, 3, 3, 3)
    assert core.elements == ((0, 0, 0, 0) if declare0 else (3, 3, 3, 3), (0, 0, 0, 0))
    assert core.faceup_cards == (0 if declare0 else 9, 0)
    assert core.facedown_cards == (9 if declare0 else 0, 0)
    assert core.good_weather == (0, 1 if declare1 else 0)
    scores = game.scores()
    assert scores[0].face_down == (-18 if declare0 else 0)
    assert scores[0].good_weather == 0
    assert scores[1].good_weather == (7 if declare1 else 0)
    assert scores[1].face_down == 0


def test_good_weather_example_in_a_real_game() -> None:
    """Seat 1 honours a declaration in round 1, fails one with 2 sky cards in round 2: 3 points."""
    game = dealt_game(2, GOOD_WEATHER_DEAL_2P, sky_order=SKY_ORDER_2P)
    declare_all(game, [False, True])
    play_out_round(game, 1)
    deal_piles(game, TWO_WINS_DEAL_2P)
    declare_all(game, [False, True])
    play_out_round(game, 2)
    assert game.rounds[1].tricks[0].leader == 1
    assert sum(t.winner == 1 for t in game.rounds[1].tricks) == 2
    assert game.core.good_weather[1] == 1 and game.core.facedown_cards[1] == 2
    assert game.scores()[1] == ScoreLine(0, 0, 0, 0, 7, -4, 3)


# --- card counts --------------------------------------------------------------------------

RAIN_1_6 = parse_cards(" ".join(f"{c}{r}" for c in "BRG" for r in range(1, 7)))
RAIN_1_12 = parse_cards(" ".join(f"{c}{r}" for c in "BRG" for r in range(1, 13)))

CARD_COUNTS = {
    2: (RAIN_1_6, 9, (3, 3, 3), 9, 4, 0, 36),
    3: (RAIN_1_6, 6, (3, 3), 6, 6, 0, 36),
    4: (RAIN_1_12, 9, (3, 3, 3), 9, 4, 0, 36),
    5: (RAIN_1_12, 7, (3, 4), 7, 5, 1, 35),
}
"""RULES.md §2: rain cards in use, hand, piles, sky cards a round, rounds, set aside, sky deck."""


@pytest.mark.parametrize("players", sorted(CARD_COUNTS))
def test_card_counts(players: int) -> None:
    rain, hand, piles, line, rounds, set_aside, deck = CARD_COUNTS[players]
    assert bin(rain).count("1") == (18 if players <= 3 else 36)
    rules = RulesConfig(players=players)
    game = Game(rules, seed=players)
    core = game.core
    assert (core.rain_in_use, core.hand_size, core.group_sizes, core.line_size, core.n_rounds) == (
        rain, hand, piles, line, rounds,
    )
    assert len(game.sky_cards) == deck
    rng = random.Random(players)
    while not game.is_over:
        seat = game.to_move
        game.apply(random_move(game, seat, rng), seat)
    assert len(game.rounds) == rounds
    seen_sky: list[int] = []
    for log in game.rounds:
        assert [bin(h).count("1") for h in log.hands] == [hand] * players
        assert log.set_aside is not None and bin(log.set_aside).count("1") == set_aside
        assert reduce(or_, log.hands) | log.set_aside == rain
        assert sum(bin(h).count("1") for h in log.hands) + set_aside == bin(rain).count("1")
        for alloc in log.allocations:
            assert alloc is not None and tuple(bin(p).count("1") for p in alloc) == piles
        assert len(log.line) == line and len(log.tricks) == line
        played = [card for trick in log.tricks for _seat, card in trick.plays]
        assert len(played) == players * hand
        assert reduce(or_, (1 << c for c in played)) & log.set_aside == 0
        seen_sky.extend(log.line)
    assert sorted(seen_sky) == list(range(deck))


def test_five_player_sky_deck_drops_one_single_candy() -> None:
    for deck in (SkyDeck.default(), EXAMPLE_DECK):
        full = deck.counts()
        assert RulesConfig(players=4, deck=deck).game_deck.counts() == full
        five_deck = RulesConfig(players=5, deck=deck).game_deck
        assert len(five_deck.cards) == 35
        five = five_deck.counts()
        assert five[C1] == full[C1] - 1
        del five[C1], full[C1]
        assert five == full


def test_score_tallies_matches_a_played_game() -> None:
    """The scoring API and a finished game agree on the same tallies."""
    rules = RulesConfig(players=4, sides=parse_sides("candy=B,leopard=B"))
    game = Game(rules, seed=11)
    game.core.play_random(5)
    assert game.core.is_over
    core = game.core
    expected = GameResult(
        scores=tuple(ScoreLine(*row) for row in core.scores()),
        winners=tuple(s for s in range(4) if (core.winners() >> s) & 1),
        outright=None,
    )
    tallies = (core.elements, core.faceup_cards, core.facedown_cards, core.good_weather)
    assert score_tallies(rules, *tallies) == expected


def test_score_tallies_rejects_non_rules() -> None:
    with pytest.raises(TallyError, match="rules: must be a RulesConfig"):
        score_tallies(4, [], [], [], [])  # type: ignore[arg-type]


def test_example_deck_is_a_valid_box() -> None:
    EXAMPLE_DECK.validate()
    assert EXAMPLE_DECK.elements_per_kind()[Kind.CANDY] >= 17
