"""`csl_ai.explain`: the rules in words and what each sky card of the line is worth.

The worth is checked two ways: by hand on lines built so that seat 0 wins every trick
(RULES.md §4's tables, read off by eye), and over random games against a scorer written
here from RULES.md alone, which is itself checked against the engine's final scores.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from csl_ai.errors import IllegalMoveError
from csl_ai.explain import SCORING_NOTE, ScoringCard, rules_sections, scoring_cards, sky_worth, sky_worth_text
from csl_ai.game import Game, Phase
from csl_ai.moves import parse_move
from csl_ai.notation import parse_cards
from csl_ai.rules import Kind, RulesConfig, Side, SkyCard, StarOption, parse_sides
from gamegen import random_rules, step

# --- a scorer written from RULES.md §4 alone -----------------------------------------------
SPIDER = {Side.A: (0, 3, 10, 4, 2, 10, 1), Side.B: (0, 10, 3, 2, 1, 10, 1)}
LEOPARD = {Side.A: (0, 0, 10, 0, 20, 0, 30, 0), Side.B: (0, 0, 0, 15, 0, 0, 30, 0)}
CANDY_B_BY_RANK = (3, 10, 6, 0, 0)

Tallies = tuple[list[list[int]], list[int], list[int]]
"""Per seat: face-up elements (candy, spider, leopard, star), face-down cards, good weather."""


def reference_totals(rules: RulesConfig, tallies: Tallies) -> list[int]:
    elements, facedown, weather = tallies
    candies = [row[Kind.CANDY] for row in elements]
    distinct = sorted(set(candies), reverse=True)
    totals = []
    for seat, (c, s, l, t) in enumerate(elements):
        if rules.side(Kind.CANDY) is Side.A:
            candy = sum(other for other in candies if other < c)
        else:
            candy = CANDY_B_BY_RANK[distinct.index(c)]
        spider = SPIDER[rules.side(Kind.SPIDER)][min(s, 6)]
        leopard = LEOPARD[rules.side(Kind.LEOPARD)][min(l, 7)]
        star = 0
        if rules.side(Kind.STAR) is Side.A:
            if t == 2:
                star = -5
            elif t == 3:
                factor = 2 if rules.star_option is StarOption.TWICE else 1
                star = factor * (candy + spider + leopard)
        elif t == 2:
            star = -10
        totals.append(candy + spider + leopard + star + 7 * weather[seat] - 2 * facedown[seat])
    return totals


def settled_tallies(game: Game, extra: tuple[int, int] | None = None) -> Tallies:
    """Every round's wins settled by the good weather rule, read from the round logs (the
    round in play settled as if it ended now), with extra = (seat, sky id) also won."""
    n = game.players
    elements = [[0, 0, 0, 0] for _ in range(n)]
    facedown, weather = [0] * n, [0] * n
    for index, log in enumerate(game.rounds):
        won: list[list[int]] = [[] for _ in range(n)]
        for trick in log.tricks:
            if trick.complete:
                won[trick.winner].append(trick.sky)
        if extra is not None and index == len(game.rounds) - 1:
            won[extra[0]].append(extra[1])
        for seat in range(n):
            if log.declarations[seat]:
                if won[seat]:
                    facedown[seat] += len(won[seat])
                else:
                    weather[seat] += 1
            else:
                for sky in won[seat]:
                    card = game.sky_cards[sky]
                    elements[seat][card.kind] += card.count
    return elements, facedown, weather


# --- lines where seat 0 wins every trick ----------------------------------------------------
def sky_id(rules: RulesConfig, card: SkyCard, used: set[int]) -> int:
    """An id of that card in the deck not used yet."""
    for i, c in enumerate(rules.game_deck.cards):
        if c == card and i not in used:
            used.add(i)
            return i
    raise AssertionError(f"no {card} left")


def sweeping_game(sides: str, line: Sequence[SkyCard], bet: bool = False) -> Game:
    """A 2-player game whose first line is `line` (9 cards) and in which seat 0 holds every
    blue card, so it wins every trick; seat 0 bets on good weather if bet."""
    rules = RulesConfig(players=2, sides=parse_sides(sides))
    used: set[int] = set()
    first = [sky_id(rules, card, used) for card in line]
    rest = [i for i in range(len(rules.game_deck.cards)) if i not in used]
    game = Game(rules, seed=1, sky_order=first + rest, auto_deal=False)
    hands = ("B1 B2 B3 B4 B5 B6 R4 R5 R6", "R1 R2 R3 G1 G2 G3 G4 G5 G6")
    game.deal([parse_cards(hand) for hand in hands])
    assert [game.sky_cards[s] for s in game.rounds[0].line] == list(line)
    game.apply(parse_move("B1 B2 B3 | B4 B5 B6 | R4 R5 R6", "allocate", (3, 3, 3)), 0)
    game.apply(parse_move("R1 R2 R3 | G1 G2 G3 | G4 G5 G6", "allocate", (3, 3, 3)), 1)
    game.apply(parse_move("yes" if bet else "no", "weather", None), 0)
    game.apply(parse_move("no", "weather", None), 1)
    return game


def win_tricks(game: Game, count: int) -> None:
    """Play count tricks: each seat plays its first legal card (seat 0 wins them all)."""
    for _ in range(count):
        for _ in range(game.players):
            game.apply(game.legal_moves()[0])
        assert game.rounds[-1].tricks[-1].winner == 0


S1, S2 = SkyCard(Kind.SPIDER, 1), SkyCard(Kind.SPIDER, 2)
L1, L2 = SkyCard(Kind.LEOPARD, 1), SkyCard(Kind.LEOPARD, 2)
C1, C2 = SkyCard(Kind.CANDY, 1), SkyCard(Kind.CANDY, 2)
STAR = SkyCard(Kind.STAR, 1)
LINE = (S1, S1, S2, L2, C1, STAR, STAR, STAR, L1)


def test_worth_by_hand_on_side_a() -> None:
    game = sweeping_game("", LINE)
    assert game.phase is Phase.PLAY
    # Nothing won: a spider is 0 -> 3, an S2 0 -> 10, an L2 0 -> 10, a lone L1 or star 0.
    assert sky_worth(game, 0) == [3, 3, 10, 10, 0, 0, 0, 0, 0]
    win_tricks(game, 1)  # seat 0 holds 1 spider
    worth = sky_worth(game, 0)
    assert worth[0] is None
    assert worth[1] == 10 - 3 and worth[2] == 4 - 3  # 2 spiders: 10; 3 spiders: 4
    assert sky_worth(game, 1)[1] == 3  # seat 1's first spider
    text = sky_worth_text(game, 0)
    assert text[0] is None
    assert text[1] == "your 2nd spider: +7"
    assert text[2] == "your 2nd and 3rd spiders: +1"
    assert text[3] == "your 1st and 2nd leopards: +10"
    win_tricks(game, 5)  # S1 S2 L2 C1 *: 4 spiders (2), 2 leopards (10), 1 candy (0), 1 star
    worth = sky_worth(game, 0)
    assert worth[6] == -5  # a 2nd star
    assert worth[8] == -10  # a 3rd leopard: 2 leopards score 10, 3 score 0
    win_tricks(game, 1)  # 2 stars: -5
    # the 3rd star scores twice candy + spider + leopard = 2 * (0 + 2 + 10), instead of -5
    assert sky_worth(game, 0)[7] == 24 + 5
    assert sky_worth_text(game, 0)[7] == "your 3rd star: +29"


def test_a_third_leopard_after_two_loses_the_two_leopards_points() -> None:
    game = sweeping_game("", (L2, L1, L1, S1, S1, S1, C1, C1, C2))
    win_tricks(game, 1)
    assert sky_worth(game, 0)[1] == -10  # 3 leopards score 0 on side A
    assert sky_worth_text(game, 0)[1] == "your 3rd leopard: -10"


def test_worth_by_hand_on_side_b() -> None:
    game = sweeping_game("candy=B,spider=B,leopard=B,star=B", LINE)
    # Side B: 1 spider 10, 2 spiders 3; leopards score from 3; 2 stars -10.
    assert sky_worth(game, 0)[:4] == [10, 10, 3, 0]
    # Candy B, 2 players both at 0 candies share rank 1 (3 points): a candy keeps seat 1 at 3.
    assert sky_worth(game, 1)[4] == 0
    win_tricks(game, 1)
    assert sky_worth(game, 0)[1] == 3 - 10
    win_tricks(game, 6)  # S1 S2 L2 C1 * *: two stars, -10
    assert sky_worth(game, 0)[7] == 10  # the 3rd star: the card scores 0, and the game is won
    assert sky_worth_text(game, 0)[7] == "your 3rd star: you win outright"


def test_candy_worth_depends_on_the_others_counts() -> None:
    game = sweeping_game("", (C1, C2, C1, S1, S1, S1, L1, L1, L1))
    win_tricks(game, 1)  # seat 0: 1 candy, seat 1: none
    # seat 1 taking C2 (2 candies) would pass seat 0: it scores seat 0's 1 candy.
    assert sky_worth(game, 1)[1] == 1
    # seat 0 taking C2 (3 candies): still only seat 1's 0 candies below it.
    assert sky_worth(game, 0)[1] == 0


def test_a_good_weather_bet_makes_every_card_cost_the_bet() -> None:
    game = sweeping_game("", LINE, bet=True)
    assert sky_worth(game, 0) == [-9] * 9  # +7 lost, -2 for the card
    assert sky_worth_text(game, 0)[0] == "breaks your good weather bet: -9"
    assert sky_worth(game, 1)[0] == 3  # seat 1 did not bet
    win_tricks(game, 1)
    assert sky_worth(game, 0)[1:] == [-2] * 8
    assert sky_worth_text(game, 0)[1] == "face down (good weather bet): -2"


def test_worth_is_none_for_won_cards_and_refuses_a_bad_seat() -> None:
    game = sweeping_game("", LINE)
    win_tricks(game, 3)
    assert sky_worth(game, 1)[:3] == [None, None, None]
    with pytest.raises(IllegalMoveError, match="seat 2"):
        sky_worth(game, 2)


# --- the property: the worth is the difference of two independent scorings ------------------
def test_worth_equals_the_difference_of_reference_scores_over_random_games() -> None:
    rng = random.Random(20250613)
    checked = 0
    for trial in range(24):
        players = rng.choice((2, 3, 4, 5))
        rules = random_rules(rng, players)
        game = Game(rules, seed=rng.randrange(2**32))
        stops = sorted(rng.sample(range(10, 200), 4))
        moves = 0
        while not game.is_over:
            step(game, rng)
            moves += 1
            if game.phase is Phase.DEAL or game.is_over:
                break
            if moves in stops:
                seat = rng.randrange(players)
                worth = sky_worth(game, seat)
                base = reference_totals(rules, settled_tallies(game))[seat]
                won = {t.index for t in game.rounds[-1].tricks if t.complete}
                for i, sky in enumerate(game.rounds[-1].line):
                    if i in won:
                        assert worth[i] is None
                        continue
                    with_card = reference_totals(rules, settled_tallies(game, (seat, sky)))
                    assert worth[i] == with_card[seat] - base, (trial, moves, seat, i)
                    checked += 1
        if game.is_over:
            totals = [line.total for line in game.scores()]
            assert reference_totals(rules, settled_tallies(game)) == totals, trial
            assert all(w is None for w in sky_worth(game, 0))
    assert checked > 100


# --- the rules in words ---------------------------------------------------------------------
def _text(rules: RulesConfig) -> str:
    return "\n".join(f"{head}\n{body}" for head, body in rules_sections(rules))


def test_rules_sections_cover_what_a_player_needs() -> None:
    sections = rules_sections(RulesConfig(players=4))
    headings = [head for head, _ in sections]
    assert headings[0] == "The game" and "Notation" in headings and "Example" in headings
    assert all(body.strip() for _, body in sections)
    text = _text(RulesConfig(players=4))
    fragments = (
        "must play the led colour",
        "blue is trump",
        "+7",
        "-2 points each",
        "B7 R2 G5 | B1 R9 G9 | B3 R4 G12",
        "C1 S2 L1",
        "* a shooting star",
        "Candy A",
        "Spider A: points by your spiders, 0: 0, 1: 3, 2: 10, 3: 4, 4: 2, 5: 10, 6 or more: 1.",
        "Leopard A: points by your leopards, 0: 0, 1: 0, 2: 10, 3: 0, 4: 20, 5: 0, 6: 30, "
        "7 or more: 0.",
        "2 stars: -5",
        "twice your candy + spider + leopard",
    )
    for fragment in fragments:
        assert fragment in text, fragment


def test_rules_sections_follow_the_sides_in_play() -> None:
    b_side = RulesConfig(players=3, sides=parse_sides("candy=B,spider=B,leopard=B,star=B"))
    text = _text(b_side)
    assert "Spider B: points by your spiders, 0: 0, 1: 10, 2: 3, 3: 2, 4: 1, 5: 10" in text
    assert "Leopard B: points by your leopards, 0: 0, 1: 0, 2: 0, 3: 15" in text
    assert "Points by rank: 1st 3, 2nd 10, 3rd 6." in text  # 3 players: three ranks
    assert "2 stars: -10" in text and "win the game outright" in text
    assert "Spider A" not in text and "Candy A" not in text
    assert "ranked 1 to 6" in text and "B5 R2 G6 | B1 R4 G3" in text
    double = _text(RulesConfig(players=5, star_option=StarOption.DOUBLE))
    assert "are doubled" in double and "B7 R2 G5 | B1 R9 G9 G11" in double
    assert "set aside" in double


def test_the_notation_examples_parse_under_their_rules() -> None:
    from csl_ai.notation import parse_piles

    for players in (2, 3, 4, 5):
        rules = RulesConfig(players=players)
        body = dict(rules_sections(rules))["Notation"]
        piles_text = body.split("separated by '|': ")[1].split(". Sky cards")[0]
        piles = parse_piles(piles_text, rules.spec.group_sizes)
        assert all(pile & ~rules.spec.rain_cards == 0 for pile in piles), players


def test_the_worked_examples_in_the_rules_text_score_as_the_engine_scores() -> None:
    from csl_ai.scoring import score_tallies

    def candies(sides: str, counts: list[int]) -> list[int]:
        rules = RulesConfig(players=len(counts), sides=parse_sides(sides))
        elements = [[c, 0, 0, 0] for c in counts]
        faceup = [(c + 1) // 2 for c in counts]
        zeros = [0] * len(counts)
        return [line.candy for line in score_tallies(rules, elements, faceup, zeros, zeros).scores]

    assert candies("", [5, 5, 2, 1]) == [3, 3, 1, 0]
    assert "each 5 scores 2 + 1 = 3, the 2 scores 1, the 1 scores 0" in _text(RulesConfig())
    assert candies("candy=B", [5, 5, 2, 1]) == [3, 3, 10, 6]
    b_text = _text(RulesConfig(sides=parse_sides("candy=B")))
    assert "(5, 5, 2, 1 candies: 1st, 1st, 2nd, 3rd)" in b_text
    for option, total in ((StarOption.TWICE, 51), (StarOption.DOUBLE, 34)):
        rules = RulesConfig(players=2, star_option=option)
        # 6 candies over 5 (5), 4 spiders (2), 2 leopards (10): 17 points, and 3 stars
        result = score_tallies(rules, [[6, 4, 2, 3], [5, 0, 0, 0]], [9, 3], [0, 0], [0, 0])
        line = result.scores[0]
        assert line.candy + line.spider + line.leopard == 17 and line.total == total
        assert f"{total} in all" in _text(rules)


# --- the scoring cards as data ----------------------------------------------------------------
def _engine_points(rules: RulesConfig, kind: Kind, n: int) -> int:
    """The points of kind for a seat holding n of its elements alone, by the engine."""
    from csl_ai.scoring import score_tallies

    elements = [[0] * len(Kind) for _ in range(rules.players)]
    elements[0][kind] = n
    zeros = [0] * rules.players
    faceup = [n if kind is Kind.STAR else (n + 1) // 2] + zeros[1:]
    line = score_tallies(rules, elements, faceup, zeros, zeros).scores[0]
    return int(getattr(line, kind.text))


@pytest.mark.parametrize("side", [Side.A, Side.B])
def test_scoring_card_tables_are_the_engines_points(side: Side) -> None:
    rules = RulesConfig(players=4, sides=parse_sides(f"spider={side.value},leopard={side.value}"))
    cards = {card.kind: card for card in scoring_cards(rules)}
    for kind, reference in ((Kind.SPIDER, SPIDER[side]), (Kind.LEOPARD, LEOPARD[side])):
        card = cards[kind.text]
        assert card.side == side.value and card.table is not None
        last = len(card.table) - 1
        assert [label for label, _ in card.table] == [*map(str, range(last)), f"{last}+"]
        for n, (_, points) in enumerate(card.table):
            assert points == _engine_points(rules, kind, n), (kind, n)
        # "n+": any count from the last one up scores as the last one
        assert all(_engine_points(rules, kind, n) == card.table[-1][1] for n in (last + 1, last + 2))
        assert tuple(points for _, points in card.table) == reference


def test_scoring_cards_follow_the_sides_and_the_star_option() -> None:
    a_side = scoring_cards(RulesConfig(players=4))
    assert [card.kind for card in a_side] == ["candy", "spider", "leopard", "star", "weather"]
    assert [card.side for card in a_side] == ["A", "A", "A", "A", None]
    assert all(card.title and card.text for card in a_side)
    assert [card.table is None for card in a_side] == [True, False, False, True, True]
    twice = {c.kind: c for c in a_side}["star"].text
    double = {c.kind: c for c in scoring_cards(RulesConfig(players=4, star_option=StarOption.DOUBLE))}
    assert twice != double["star"].text
    assert "twice" in twice and "double" in double["star"].text
    assert "2 stars: -5." in twice
    b_rules = RulesConfig(players=3, sides=parse_sides("candy=B,spider=B,leopard=B,star=B"))
    b_side = {card.kind: card for card in scoring_cards(b_rules)}
    assert all(b_side[kind.text].side == "B" for kind in Kind)
    assert "2 stars: -10." in b_side["star"].text and "outright" in b_side["star"].text
    assert f"2 stars: {_engine_points(b_rules, Kind.STAR, 2)}." in b_side["star"].text
    assert "Points by rank: 1st 3, 2nd 10, 3rd 6." in b_side["candy"].text
    five = {c.kind: c for c in scoring_cards(RulesConfig(players=5, sides=parse_sides("candy=B")))}
    assert "1st 3, 2nd 10, 3rd 6, 4th 0, 5th 0." in five["candy"].text
    from csl_ai.scoring import score_tallies

    one = [1, 0, 0]
    weather_line = score_tallies(b_rules, [[0] * 4] * 3, [0] * 3, one, one).scores[0]
    assert weather_line.good_weather == 7 and weather_line.face_down == -2
    assert f"+{weather_line.good_weather} if you win none" in b_side["weather"].text
    assert f"({weather_line.face_down} each" in b_side["weather"].text
    assert "trump" in SCORING_NOTE and "counts 2" in SCORING_NOTE
    with pytest.raises(AttributeError):
        b_side["spider"].title = "Other"  # type: ignore[misc]
    assert isinstance(b_side["spider"], ScoringCard)

