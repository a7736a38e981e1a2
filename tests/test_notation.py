"""Card, pile, sky card, weather and move notation: exact round trips and every error."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from csl_ai.errors import CslError, NotationError
from csl_ai.moves import (
    MOVE_KINDS,
    Allocate,
    Declare,
    Move,
    Play,
    move_from_json,
    move_to_json,
    parse_move,
)
from csl_ai.notation import (
    ALL_CARDS,
    N_RAIN,
    card_colour,
    card_index,
    card_rank,
    card_str,
    cards_of,
    format_cards,
    format_piles,
    format_sky_cards,
    mask_of,
    parse_card,
    parse_cards,
    parse_piles,
    parse_sky,
    parse_sky_cards,
    parse_weather,
    sky_str,
    weather_str,
)
from csl_ai.rules import Kind, SkyCard

masks = st.integers(min_value=0, max_value=ALL_CARDS)


@st.composite
def pile_tuples(draw: st.DrawFn) -> tuple[int, ...]:
    """Disjoint piles (some possibly empty) cut from a random order of the 36 cards."""
    order = draw(st.permutations(range(N_RAIN)))
    sizes = draw(st.lists(st.integers(min_value=0, max_value=6), min_size=1, max_size=6))
    piles, start = [], 0
    for size in sizes:
        piles.append(mask_of(order[start : start + size]))
        start += size
    return tuple(piles)


# --- rain cards ---------------------------------------------------------------------------


def test_card_numbering_matches_the_core() -> None:
    assert card_str(0) == "B1"
    assert card_str(11) == "B12"
    assert card_str(12) == "R1"
    assert card_str(23) == "R12"
    assert card_str(24) == "G1"
    assert card_str(35) == "G12"
    assert card_index(0, 7) == 6
    assert card_index(2, 12) == 35


@pytest.mark.parametrize("card", range(N_RAIN))
def test_every_card_round_trips(card: int) -> None:
    text = card_str(card)
    assert parse_card(text) == card
    assert parse_card(text.lower()) == card
    assert card_index(card_colour(card), card_rank(card)) == card
    assert text[0] == "BRG"[card_colour(card)]
    assert int(text[1:]) == card_rank(card)


@pytest.mark.parametrize(
    ("text", "card"), [("B7", 6), ("r12", 23), (" G3 ", 26), ("\tb1\n", 0), ("g10", 33)]
)
def test_parse_card_accepts(text: str, card: int) -> None:
    assert parse_card(text) == card


@pytest.mark.parametrize(
    "text",
    ["B0", "B13", "X5", "B07", "", " ", "B", "7", "B 7", "B7x", "BB7", "B-1", "B1.0", "7B", "B٣"],
)
def test_parse_card_rejects(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_card(text)
    assert repr(text) in str(info.value)


def test_parse_card_rejects_non_text() -> None:
    with pytest.raises(NotationError, match="7"):
        parse_card(7)  # type: ignore[arg-type]


@pytest.mark.parametrize(("colour", "rank"), [(3, 1), (-1, 1), (0, 0), (0, 13), (True, 1)])
def test_card_index_rejects(colour: int, rank: int) -> None:
    with pytest.raises(NotationError, match=r"colour|rank"):
        card_index(colour, rank)


@pytest.mark.parametrize("card", [-1, 36, 64, True, 3.0, "B7"])
def test_card_functions_reject_bad_index(card: object) -> None:
    for function in (card_str, card_colour, card_rank):
        with pytest.raises(NotationError, match="card index"):
            function(card)  # type: ignore[arg-type]


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        parse_card("Z9")
    assert issubclass(NotationError, CslError)


# --- card sets ----------------------------------------------------------------------------


@given(masks)
def test_random_masks_round_trip(mask: int) -> None:
    text = format_cards(mask)
    assert parse_cards(text) == mask
    assert format_cards(parse_cards(text)) == text
    assert mask_of(cards_of(mask)) == mask
    assert len(cards_of(mask)) == mask.bit_count()


@given(st.lists(st.integers(min_value=0, max_value=N_RAIN - 1), unique=True))
def test_cards_of_is_ascending(cards: list[int]) -> None:
    assert cards_of(mask_of(cards)) == sorted(cards)


def test_format_cards_is_canonical_order() -> None:
    mask = mask_of([parse_card(t) for t in ["G1", "B12", "R3", "B2"]])
    assert format_cards(mask) == "B2 B12 R3 G1"
    assert format_cards(0) == ""


@pytest.mark.parametrize(
    "text", ["B2 B12 R3 G1", "g1,r3,b12,b2", "  G1 ,R3  B12, B2 ", "B2\tB12\nR3 G1"]
)
def test_parse_cards_separators(text: str) -> None:
    assert format_cards(parse_cards(text)) == "B2 B12 R3 G1"


def test_parse_cards_blank_is_empty_set() -> None:
    assert parse_cards("") == 0
    assert parse_cards("   ") == 0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("B1 b1", "given twice"),
        ("B1 R2 B1", "given twice"),
        ("B1,,R2", "bad card ''"),
        (",B1", "bad card ''"),
        ("B1 B13", "bad card 'B13'"),
        ("B1 | R2", "bad card '|'"),
    ],
)
def test_parse_cards_rejects(text: str, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_cards(text)
    message = str(info.value)
    assert fragment in message
    assert repr(text) in message


@pytest.mark.parametrize("mask", [-1, ALL_CARDS + 1, True, "B1", 1.0])
def test_cards_of_rejects_bad_mask(mask: object) -> None:
    with pytest.raises(NotationError, match="card mask"):
        cards_of(mask)  # type: ignore[arg-type]


def test_mask_of_rejects_duplicates_and_bad_cards() -> None:
    with pytest.raises(NotationError, match="B7 given twice"):
        mask_of([6, 1, 6])
    with pytest.raises(NotationError, match="card index"):
        mask_of([36])


# --- piles --------------------------------------------------------------------------------


def test_parse_piles_example() -> None:
    text = "B7 R2 G5 | B1 R9 G9 | B3 R4 G12"
    piles = parse_piles(text, (3, 3, 3))
    assert piles == (
        mask_of([6, 13, 28]),
        mask_of([0, 20, 32]),
        mask_of([2, 15, 35]),
    )
    assert format_piles(piles) == text
    assert format_piles(parse_piles("r2 g5 b7|G9,B1,R9|b3 g12 r4")) == text


@given(pile_tuples())
def test_random_piles_round_trip(piles: tuple[int, ...]) -> None:
    text = format_piles(piles)
    assert parse_piles(text) == piles
    assert parse_piles(text, [p.bit_count() for p in piles]) == piles
    assert format_piles(parse_piles(text)) == text
    assert text.count("|") == len(piles) - 1


@pytest.mark.parametrize(
    ("text", "sizes", "fragment"),
    [
        ("B7 R2 G5 | B7 R9 G9 | B3 R4 G12", None, "card B7 is in two piles"),
        ("B7 R2 G5 | B1 R9 G9 | B3 R4 G12", (3, 3), "expected 2 piles, got 3"),
        ("B7 R2 G5 | B1 R9 G9 | B3 R4 G12", (3, 3, 3, 3), "expected 4 piles, got 3"),
        ("B7 R2 | B1 R9 G9 G5 | B3 R4 G12", (3, 3, 3), "pile 1 must hold 3 cards, got 2"),
        ("B7 R2 G5 | B1 R9 G9", (3, 4), "pile 2 must hold 4 cards, got 3"),
        ("B7 R2 G5 | B1 R9 X9", None, "pile 2: bad card 'X9'"),
        ("B7 R2 G5 | B1 B1 G9", None, "pile 2: card B1 given twice"),
        ("", (3, 3), "expected 2 piles, got 1"),
    ],
)
def test_parse_piles_rejects(text: str, sizes: tuple[int, ...] | None, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_piles(text, sizes)
    message = str(info.value)
    assert fragment in message
    assert repr(text) in message


def test_format_piles_rejects_no_piles() -> None:
    with pytest.raises(NotationError, match="at least one pile"):
        format_piles(())


def test_parse_piles_rejects_non_text() -> None:
    with pytest.raises(NotationError, match="piles must be text"):
        parse_piles(None)  # type: ignore[arg-type]


# --- sky cards ----------------------------------------------------------------------------

SKY_TEXTS = {
    "C1": SkyCard(Kind.CANDY, 1),
    "C2": SkyCard(Kind.CANDY, 2),
    "S1": SkyCard(Kind.SPIDER, 1),
    "S2": SkyCard(Kind.SPIDER, 2),
    "L1": SkyCard(Kind.LEOPARD, 1),
    "L2": SkyCard(Kind.LEOPARD, 2),
    "*": SkyCard(Kind.STAR, 1),
}


@pytest.mark.parametrize(("text", "card"), SKY_TEXTS.items())
def test_sky_cards_round_trip(text: str, card: SkyCard) -> None:
    assert sky_str(card) == text
    assert parse_sky(text) == card
    assert parse_sky(f" {text.lower()} ") == card


def test_sky_card_lists_round_trip() -> None:
    cards = tuple(SKY_TEXTS.values())[::-1]
    text = format_sky_cards(cards)
    assert text == "* L2 L1 S2 S1 C2 C1"
    assert parse_sky_cards(text) == cards
    assert parse_sky_cards("") == ()


@pytest.mark.parametrize("text", ["C3", "C0", "*1", "**", "X1", "", "C", "1", "T1", "C 1"])
def test_parse_sky_rejects(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_sky(text)
    assert repr(text) in str(info.value)


def test_sky_str_rejects_non_card() -> None:
    with pytest.raises(NotationError, match="not a sky card"):
        sky_str("C1")  # type: ignore[arg-type]


# --- weather ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [("yes", True), ("Y", True), ("TRUE", True), (" no ", False), ("n", False), ("False", False)],
)
def test_parse_weather(text: str, value: bool) -> None:
    assert parse_weather(text) is value
    assert weather_str(value) == ("yes" if value else "no")
    assert parse_weather(weather_str(value)) is value


@pytest.mark.parametrize("text", ["maybe", "", "1", "0", "yess", "ye s"])
def test_parse_weather_rejects(text: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_weather(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("value", [1, 0, "yes", None])
def test_weather_str_rejects_non_bool(value: object) -> None:
    with pytest.raises(NotationError, match="True or False"):
        weather_str(value)  # type: ignore[arg-type]


# --- moves --------------------------------------------------------------------------------


def test_move_text_and_kind() -> None:
    play = Play(parse_card("B7"))
    allocate = Allocate(parse_piles("B7 R2 G5 | B1 R9 G9"))
    declare = Declare(False)
    assert (str(play), play.kind) == ("B7", "play")
    assert (str(allocate), allocate.kind) == ("B7 R2 G5 | B1 R9 G9", "allocate")
    assert (str(declare), declare.kind) == ("no", "weather")
    assert str(Declare(True)) == "yes"
    assert allocate.cards == parse_cards("B7 R2 G5 B1 R9 G9")
    assert {m.kind for m in (play, allocate, declare)} == set(MOVE_KINDS)
    assert all(isinstance(m, Move) for m in (play, allocate, declare))


def test_moves_are_hashable_values() -> None:
    assert Play(6) == Play(6)
    assert Allocate([1, 2]) == Allocate((1, 2))  # type: ignore[arg-type]
    assert len({Play(6), Play(6), Declare(True), Allocate((1, 2)), Allocate([1, 2])}) == 3  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "kind", "move"),
    [
        ("r12", "play", Play(23)),
        ("B7 R2 G5 | B1 R9 G9", "allocate", Allocate((mask_of([6, 13, 28]), mask_of([0, 20, 32])))),
        ("YES", "weather", Declare(True)),
        ("n", "weather", Declare(False)),
    ],
)
def test_parse_move(text: str, kind: str, move: Move) -> None:
    assert parse_move(text, kind) == move
    assert parse_move(str(move), kind) == move


def test_parse_move_checks_group_sizes() -> None:
    assert parse_move("B7 R2 G5 | B1 R9 G9 G1", "allocate", (3, 4)).kind == "allocate"
    with pytest.raises(NotationError, match="pile 2 must hold 4 cards"):
        parse_move("B7 R2 G5 | B1 R9 G9", "allocate", (3, 4))


@pytest.mark.parametrize(("text", "kind"), [("B7", "bid"), ("B7", "Play"), ("yes", "")])
def test_parse_move_rejects_unknown_kind(text: str, kind: str) -> None:
    with pytest.raises(NotationError, match=f"unknown move kind {kind!r}"):
        parse_move(text, kind)


@pytest.mark.parametrize(
    ("text", "kind"), [("B13", "play"), ("B1 | B1", "allocate"), ("?", "weather")]
)
def test_parse_move_rejects_bad_text(text: str, kind: str) -> None:
    with pytest.raises(NotationError) as info:
        parse_move(text, kind)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda: Play(36), "card index"),
        (lambda: Play(True), "card index"),
        (lambda: Allocate(()), "at least one pile"),
        (lambda: Allocate((3, 1)), "card B1 is in two piles"),
        (lambda: Allocate((ALL_CARDS + 1,)), "card mask"),
        (
            lambda: Allocate("B1 R2"),  # type: ignore[arg-type]
            "sequence of card masks",
        ),
        (
            lambda: Declare(1),  # type: ignore[arg-type]
            "good_weather must be True or False",
        ),
    ],
)
def test_malformed_moves_rejected(make: object, fragment: str) -> None:
    with pytest.raises(NotationError, match=fragment):
        make()  # type: ignore[operator]


def test_move_json_examples() -> None:
    assert move_to_json(Play(6)) == {"type": "play", "card": "B7"}
    assert move_to_json(Allocate(parse_piles("B7 R2 G5 | B1 R9 G9"))) == {
        "type": "allocate",
        "piles": ["B7 R2 G5", "B1 R9 G9"],
    }
    assert move_to_json(Declare(True)) == {"type": "weather", "good_weather": True}


moves = st.one_of(
    st.builds(Play, st.integers(min_value=0, max_value=N_RAIN - 1)),
    st.builds(Allocate, pile_tuples()),
    st.builds(Declare, st.booleans()),
)


@given(moves)
def test_random_moves_round_trip_through_json_and_text(move: Move) -> None:
    data = json.loads(json.dumps(move_to_json(move)))
    assert move_from_json(data) == move
    assert data["type"] == move.kind
    assert parse_move(str(move), move.kind) == move


def test_move_from_json_checks_group_sizes() -> None:
    data = {"type": "allocate", "piles": ["B7 R2 G5", "B1 R9 G9"]}
    assert move_from_json(data, (3, 3)) == Allocate(parse_piles("B7 R2 G5 | B1 R9 G9"))
    with pytest.raises(NotationError, match=r"^move\.piles: expected 3 piles, got 2"):
        move_from_json(data, (3, 3, 3))


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        ("B7", "move: must be an object"),
        ({}, "move.type: missing"),
        ({"type": "bid", "card": "B7"}, "move.type: must be"),
        ({"type": "play"}, "move.card: missing"),
        ({"type": "play", "card": "B13"}, "move.card: bad card 'B13'"),
        ({"type": "play", "card": 6}, "move.card: must be a card like 'B7', got 6"),
        ({"type": "play", "card": "B7", "seat": 1}, "move: unknown field 'seat' for a play move"),
        ({"type": "play", "good_weather": True}, "unknown field 'good_weather'"),
        ({"type": "allocate", "piles": "B7 R2 G5 | B1"}, "move.piles: must be a list"),
        ({"type": "allocate", "piles": ["B7", 3]}, "move.piles[1]: must be cards"),
        ({"type": "allocate", "piles": ["B7", "R1 | R2"]}, "move.piles[1]: must be cards"),
        ({"type": "allocate", "piles": ["B7", "R1 X2"]}, "move.piles[1]: bad card 'X2'"),
        ({"type": "allocate", "piles": ["B7 R1", "R1"]}, "move.piles: card R1 is in two piles"),
        ({"type": "allocate", "piles": []}, "move.piles: an allocation needs at least one pile"),
        ({"type": "weather", "good_weather": "yes"}, "move.good_weather: must be true or false"),
        ({"type": "weather", "good_weather": 1}, "move.good_weather: must be true or false"),
    ],
)
def test_move_from_json_rejects(data: object, fragment: str) -> None:
    with pytest.raises(NotationError) as info:
        move_from_json(data)
    assert fragment in str(info.value)


def test_move_from_json_uses_given_path() -> None:
    with pytest.raises(NotationError, match=r"^moves\[3\]\.card: "):
        move_from_json({"type": "play", "card": "Q1"}, path="moves[3]")


def test_move_to_json_rejects_non_move() -> None:
    with pytest.raises(NotationError, match="not a move"):
        move_to_json("B7")  # type: ignore[arg-type]
