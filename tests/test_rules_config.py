"""Rules configuration and sky decks: RULES.md §1.1 and §2, file formats, every error."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from csl_ai.errors import DeckError, RulesError
from csl_ai.rules import (
    ALL_A,
    PLAYER_SPECS,
    Kind,
    RulesConfig,
    Side,
    SkyCard,
    SkyDeck,
    StarOption,
    deck_from_arg,
    format_sides,
    parse_sides,
    player_spec,
)

C1, C2 = SkyCard(Kind.CANDY, 1), SkyCard(Kind.CANDY, 2)
S1, S2 = SkyCard(Kind.SPIDER, 1), SkyCard(Kind.SPIDER, 2)
L1, L2 = SkyCard(Kind.LEOPARD, 1), SkyCard(Kind.LEOPARD, 2)
STAR = SkyCard(Kind.STAR, 1)
NON_STAR = (C1, C2, S1, S2, L1, L2)

DEFAULT_TOML = """\
name = "default"
[candy]
single = 8
double = 3
[spider]
single = 8
double = 3
[leopard]
single = 8
double = 3
[star]
single = 3
"""


def write(tmp_path: Path, text: str, name: str = "box.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@st.composite
def full_decks(draw: st.DrawFn) -> SkyDeck:
    """Valid 36-card decks: 3 stars, at least one single candy, 32 other random cards."""
    others = draw(st.lists(st.sampled_from(NON_STAR), min_size=32, max_size=32))
    name = draw(st.text(min_size=1).filter(str.strip))
    return SkyDeck((C1, *others, STAR, STAR, STAR), name)


# --- the default deck ---------------------------------------------------------------------


def test_default_deck_matches_rules_table() -> None:
    deck = SkyDeck.default()
    assert deck.name == "default"
    assert len(deck.cards) == 36
    assert deck.cards_per_kind() == {
        Kind.CANDY: 11,
        Kind.SPIDER: 11,
        Kind.LEOPARD: 11,
        Kind.STAR: 3,
    }
    assert deck.elements_per_kind() == {
        Kind.CANDY: 14,
        Kind.SPIDER: 14,
        Kind.LEOPARD: 14,
        Kind.STAR: 3,
    }
    assert deck.counts() == {C1: 8, C2: 3, S1: 8, S2: 3, L1: 8, L2: 3, STAR: 3}
    assert deck == SkyDeck.from_toml(DEFAULT_TOML)


def test_deck_order_is_canonical() -> None:
    deck = SkyDeck.default()
    expected = [C1] * 8 + [C2] * 3 + [S1] * 8 + [S2] * 3 + [L1] * 8 + [L2] * 3 + [STAR] * 3
    assert list(deck.cards) == expected
    assert SkyDeck(tuple(reversed(deck.cards))) == deck


def test_sky_card_validates_kind_and_count() -> None:
    assert SkyCard(0, 2).kind is Kind.CANDY  # type: ignore[arg-type]
    for kind, count in [(Kind.CANDY, 3), (Kind.SPIDER, 0), (Kind.LEOPARD, True), (Kind.STAR, 2)]:
        with pytest.raises(DeckError, match=repr(count)):
            SkyCard(kind, count)
    for bad_kind in (4, -1, "candy", False):
        with pytest.raises(DeckError, match="kind"):
            SkyCard(bad_kind, 1)  # type: ignore[arg-type]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_deck_for_up_to_four_players_is_the_whole_deck(players: int) -> None:
    deck = SkyDeck.default()
    assert deck.for_players(players) == deck


def test_deck_for_five_players_drops_one_single_candy() -> None:
    deck = SkyDeck.default()
    five = deck.for_players(5)
    assert len(five.cards) == 35
    assert five.counts() == {**deck.counts(), C1: 7}
    assert five.name == deck.name


def test_deck_for_bad_player_count() -> None:
    with pytest.raises(RulesError, match=r"players must be an integer 2\.\.5, got 6"):
        SkyDeck.default().for_players(6)


def test_deck_without_single_candy_cannot_serve_five_players() -> None:
    deck = SkyDeck((C2,) * 33 + (STAR,) * 3, "nocandy")
    with pytest.raises(DeckError, match="no single candy"):
        deck.for_players(5)


# --- TOML and JSON round trips ------------------------------------------------------------


def test_default_deck_toml_round_trips() -> None:
    deck = SkyDeck.default()
    assert SkyDeck.from_toml(deck.to_toml()) == deck


@given(full_decks())
def test_random_decks_round_trip(deck: SkyDeck) -> None:
    assert SkyDeck.from_toml(deck.to_toml()) == deck
    assert SkyDeck.from_dict(json.loads(json.dumps(deck.to_dict()))) == deck
    assert sum(deck.counts().values()) == 36


def test_load_reads_a_file_and_names_it_by_stem(tmp_path: Path) -> None:
    text = DEFAULT_TOML.replace('name = "default"\n', "").replace(
        "single = 8\ndouble = 3\n[spider]", "single = 9\ndouble = 2\n[spider]"
    )
    deck = SkyDeck.load(write(tmp_path, text, "mybox.toml"))
    assert deck.name == "mybox"
    assert deck.counts()[C1] == 9
    assert deck.counts()[C2] == 2
    assert deck.elements_per_kind()[Kind.CANDY] == 13


def test_deck_from_arg(tmp_path: Path) -> None:
    assert deck_from_arg(None) == SkyDeck.default()
    assert deck_from_arg("default") == SkyDeck.default()
    path = write(tmp_path, DEFAULT_TOML.replace('"default"', '"mine"'))
    assert deck_from_arg(str(path)).name == "mine"
    assert deck_from_arg(path).name == "mine"
    with pytest.raises(DeckError, match="cannot read"):
        deck_from_arg(str(tmp_path / "absent.toml"))


# --- broken deck files --------------------------------------------------------------------


def edit(old: str, new: str) -> str:
    assert old in DEFAULT_TOML
    return DEFAULT_TOML.replace(old, new, 1)


BROKEN_DECKS = [
    pytest.param("name = \n[candy]", "bad TOML", id="bad-toml"),
    pytest.param(edit("single = 8", "single = 7"), "has 35 cards", id="35-cards"),
    pytest.param(edit("single = 8", "single = 9"), "has 37 cards", id="37-cards"),
    pytest.param(
        edit("single = 8", "single = 7").replace("single = 3", "single = 4"),
        "has 4 shooting stars",
        id="4-stars",
    ),
    pytest.param(
        edit("single = 8", "single = 0").replace("double = 3", "double = 11", 1),
        "no single candy",
        id="no-single-candy",
    ),
    pytest.param(
        DEFAULT_TOML + "[dragon]\nsingle = 1\n", "dragon: unknown kind 'dragon'", id="unknown-kind"
    ),
    pytest.param(
        edit("double = 3", "double = 3\ntriple = 1"),
        "candy.triple: unknown field 'triple'",
        id="count-3",
    ),
    pytest.param(
        edit("single = 8", 'single = "8"'),
        "candy.single: must be an integer 0..36, got '8'",
        id="string-count",
    ),
    pytest.param(
        edit("single = 8", "single = 8.0"),
        "candy.single: must be an integer 0..36, got 8.0",
        id="float-count",
    ),
    pytest.param(
        edit("single = 8", "single = true"),
        "candy.single: must be an integer 0..36, got True",
        id="bool-count",
    ),
    pytest.param(
        edit("single = 8", "single = -1"),
        "candy.single: must be an integer 0..36, got -1",
        id="negative",
    ),
    pytest.param(
        edit("single = 8", "single = 99"),
        "candy.single: must be an integer 0..36, got 99",
        id="huge",
    ),
    pytest.param(
        DEFAULT_TOML + "double = 1\n", "star.double: unknown field 'double'", id="star-double"
    ),
    pytest.param(
        edit("[spider]\nsingle = 8\ndouble = 3\n", ""), "spider: missing table", id="missing-table"
    ),
    pytest.param(edit("double = 3\n", ""), "candy.double: missing", id="missing-key"),
    pytest.param(
        edit("[candy]\nsingle = 8\ndouble = 3\n", "candy = 11\n"),
        "candy: must be a table",
        id="not-a-table",
    ),
    pytest.param(
        edit('name = "default"', "name = 5"),
        "name: must be a non-empty string, got 5",
        id="bad-name",
    ),
]


@pytest.mark.parametrize(("text", "fragment"), BROKEN_DECKS)
def test_broken_deck_files(tmp_path: Path, text: str, fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(DeckError) as info:
        SkyDeck.load(path)
    message = str(info.value)
    assert fragment in message
    assert repr(str(path)) in message
    assert "\n" not in message


@pytest.mark.parametrize(("text", "fragment"), BROKEN_DECKS)
def test_broken_deck_text(text: str, fragment: str) -> None:
    with pytest.raises(DeckError, match=r"^deck text: ") as info:
        SkyDeck.from_toml(text)
    assert fragment in str(info.value)


def test_unreadable_deck_paths(tmp_path: Path) -> None:
    for path in (tmp_path / "absent.toml", tmp_path):
        with pytest.raises(DeckError, match="cannot read") as info:
            SkyDeck.load(path)
        assert repr(str(path)) in str(info.value)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe name")
    with pytest.raises(DeckError, match="not UTF-8"):
        SkyDeck.load(binary)


def test_validate_names_the_problem() -> None:
    deck = SkyDeck((C1,) * 33 + (STAR,) * 3, "x")
    deck.validate()
    with pytest.raises(DeckError, match=r"^here: deck 'x' has 35 cards"):
        deck.for_players(5).validate("here")
    with pytest.raises(DeckError, match="SkyCard"):
        SkyDeck(("C1",))  # type: ignore[arg-type]
    with pytest.raises(DeckError, match="name"):
        SkyDeck(deck.cards, "")


# --- player counts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "ranks", "hand", "groups", "rounds", "aside"),
    [
        (2, 6, 9, (3, 3, 3), 4, 0),
        (3, 6, 6, (3, 3), 6, 0),
        (4, 12, 9, (3, 3, 3), 4, 0),
        (5, 12, 7, (3, 4), 5, 1),
    ],
)
def test_player_specs_match_rules(
    players: int, ranks: int, hand: int, groups: tuple[int, ...], rounds: int, aside: int
) -> None:
    spec = PLAYER_SPECS[players]
    assert (spec.players, spec.ranks, spec.hand_size, spec.group_sizes, spec.rounds) == (
        players,
        ranks,
        hand,
        groups,
        rounds,
    )
    assert spec.set_aside == aside
    assert spec.line_size == hand == sum(groups)
    assert spec.rain_cards.bit_count() == 3 * ranks == players * hand + aside
    assert spec.sky_cards_used == len(RulesConfig(players=players).game_deck.cards)
    assert player_spec(players) is spec


def test_rain_cards_in_use() -> None:
    assert PLAYER_SPECS[2].rain_cards == 0b111111 | 0b111111 << 12 | 0b111111 << 24
    assert PLAYER_SPECS[4].rain_cards == (1 << 36) - 1


# --- sides --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "sides"),
    [
        ("", ALL_A),
        ("candy=A,spider=B,leopard=A,star=B", (Side.A, Side.B, Side.A, Side.B)),
        ("spider=b", (Side.A, Side.B, Side.A, Side.A)),
        (" STAR = B , Candy=b ", (Side.B, Side.A, Side.A, Side.B)),
    ],
)
def test_parse_sides(text: str, sides: tuple[Side, ...]) -> None:
    assert parse_sides(text) == sides


@pytest.mark.parametrize("sides", list(itertools.product(Side, repeat=4)))
def test_sides_text_round_trips_all_16(sides: Any) -> None:
    text = format_sides(sides)
    assert parse_sides(text) == sides
    assert RulesConfig(sides=sides).sides_text() == text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("candy", "bad sides item 'candy'"),
        ("candy=A,dragon=B", "unknown kind 'dragon'"),
        ("candy=C", "side must be A or B, got 'C'"),
        ("candy=A,candy=B", "candy given twice"),
        ("candy=A,", "bad sides item ''"),
        ("candy=A;spider=B", "side must be A or B, got 'A;spider=B'"),
    ],
)
def test_parse_sides_rejects(text: str, fragment: str) -> None:
    with pytest.raises(RulesError) as info:
        parse_sides(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


# --- RulesConfig --------------------------------------------------------------------------


def test_rules_config_defaults() -> None:
    rules = RulesConfig()
    assert rules.players == 4
    assert rules.sides == ALL_A
    assert rules.star_option is StarOption.TWICE
    assert rules.deck == SkyDeck.default()
    assert rules.first_seat == 0
    assert rules.spec is PLAYER_SPECS[4]
    assert rules.side(Kind.SPIDER) is Side.A
    assert rules.sides_text() == "candy=A,spider=A,leopard=A,star=A"


def test_rules_config_converts_strings() -> None:
    rules = RulesConfig(sides=("a", "B", "A", "b"), star_option="double")  # type: ignore[arg-type]
    assert rules.sides == (Side.A, Side.B, Side.A, Side.B)
    assert rules.star_option is StarOption.DOUBLE
    assert RulesConfig(players=5).game_deck == SkyDeck.default().for_players(5)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"players": 1}, "players must be an integer 2..5, got 1"),
        ({"players": 6}, "players must be an integer 2..5, got 6"),
        ({"players": True}, "got True"),
        ({"players": "4"}, "got '4'"),
        ({"first_seat": 4}, "first_seat: must be a seat 0..3, got 4"),
        ({"players": 2, "first_seat": 2}, "first_seat: must be a seat 0..1, got 2"),
        ({"first_seat": -1}, "got -1"),
        ({"sides": (Side.A,) * 3}, "one side per kind"),
        ({"sides": "AAAA"}, "parse_sides"),
        ({"sides": ("A", "A", "C", "A")}, "sides.leopard: must be 'A' or 'B', got 'C'"),
        ({"star_option": "triple"}, "star_option: must be 'twice' or 'double', got 'triple'"),
        ({"deck": "default"}, "deck must be a SkyDeck"),
    ],
)
def test_rules_config_rejects(kwargs: dict[str, Any], fragment: str) -> None:
    with pytest.raises(RulesError) as info:
        RulesConfig(**kwargs)
    assert fragment in str(info.value)


def test_rules_config_rejects_invalid_deck() -> None:
    with pytest.raises(DeckError, match=r"^deck: deck 'short' has 35 cards"):
        RulesConfig(deck=SkyDeck((C1,) * 32 + (STAR,) * 3, "short"))


def test_rules_to_dict_shape() -> None:
    assert RulesConfig(players=3, star_option=StarOption.DOUBLE, first_seat=2).to_dict() == {
        "players": 3,
        "sides": {"candy": "A", "spider": "A", "leopard": "A", "star": "A"},
        "star_option": "double",
        "first_seat": 2,
        "deck": {
            "name": "default",
            "cards": {
                "candy": {"single": 8, "double": 3},
                "spider": {"single": 8, "double": 3},
                "leopard": {"single": 8, "double": 3},
                "star": {"single": 3},
            },
        },
    }


@given(
    players=st.integers(min_value=2, max_value=5),
    sides=st.tuples(*[st.sampled_from(Side)] * 4),
    star_option=st.sampled_from(StarOption),
    seat=st.integers(min_value=0, max_value=4),
    deck=full_decks(),
)
def test_rules_dict_round_trip(
    players: int, sides: Any, star_option: StarOption, seat: int, deck: SkyDeck
) -> None:
    rules = RulesConfig(players, sides, star_option, deck, seat % players)
    data = json.loads(json.dumps(rules.to_dict()))
    assert RulesConfig.from_dict(data) == rules


def test_from_dict_fills_defaults() -> None:
    assert RulesConfig.from_dict({}) == RulesConfig()
    assert RulesConfig.from_dict({"players": 5, "sides": {"star": "B"}}) == RulesConfig(
        players=5, sides=(Side.A, Side.A, Side.A, Side.B)
    )


def good_dict(**changes: Any) -> dict[str, Any]:
    data = RulesConfig().to_dict()
    data.update(changes)
    return data


def deck_dict(kind: str, key: str, value: Any) -> dict[str, Any]:
    deck = SkyDeck.default().to_dict()
    deck["cards"][kind][key] = value
    return deck


@pytest.mark.parametrize(
    ("data", "error", "fragment"),
    [
        ([], RulesError, "rules: must be an object"),
        (good_dict(colour="blue"), RulesError, "rules: unknown field 'colour'"),
        (good_dict(players=7), RulesError, "rules.players: must be an integer 2..5, got 7"),
        (good_dict(players=4.0), RulesError, "rules.players: must be an integer 2..5, got 4.0"),
        (good_dict(sides="AAAA"), RulesError, "rules.sides: must be an object"),
        (
            good_dict(sides={"spider": "C"}),
            RulesError,
            "rules.sides.spider: must be 'A' or 'B', got 'C'",
        ),
        (
            good_dict(sides={"spider": 1}),
            RulesError,
            "rules.sides.spider: must be 'A' or 'B', got 1",
        ),
        (good_dict(sides={"dragon": "A"}), RulesError, "rules.sides: unknown kind 'dragon'"),
        (
            good_dict(star_option="TWICE"),
            RulesError,
            "rules.star_option: must be 'twice' or 'double'",
        ),
        (good_dict(star_option=None), RulesError, "rules.star_option: must be"),
        (good_dict(first_seat=4), RulesError, "rules.first_seat: must be a seat 0..3, got 4"),
        (good_dict(first_seat="0"), RulesError, "rules.first_seat: must be a seat 0..3, got '0'"),
        (good_dict(deck="default"), DeckError, "rules.deck: must be an object"),
        (good_dict(deck={"name": "x"}), DeckError, "rules.deck.cards: missing"),
        (good_dict(deck={"cards": {}, "extra": 1}), DeckError, "rules.deck: unknown field 'extra'"),
        (
            good_dict(deck=deck_dict("candy", "double", "3")),
            DeckError,
            "rules.deck.cards.candy.double: must be an integer",
        ),
        (
            good_dict(deck=deck_dict("spider", "triple", 1)),
            DeckError,
            "rules.deck.cards.spider.triple: unknown field",
        ),
        (
            good_dict(deck=deck_dict("star", "single", 4)),
            DeckError,
            "rules.deck: deck 'default' has 37 cards",
        ),
        (
            good_dict(deck=deck_dict("leopard", "single", 7)),
            DeckError,
            "rules.deck: deck 'default' has 35 cards",
        ),
    ],
)
def test_from_dict_names_the_field(data: Any, error: type[Exception], fragment: str) -> None:
    with pytest.raises(error) as info:
        RulesConfig.from_dict(data)
    assert str(info.value).startswith(fragment)
