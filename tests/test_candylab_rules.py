"""Candy Lab: the rulebook's worked examples and rules, one by one, through the rules core.

Each test cites the rulebook passage (``../shared/seeds/candy-lab-rulebook-en.txt``) or the
ruling (docs/candy-lab-rules.md, ``CL-n``) it checks. Positions are built with
`custom_state` so that the bars and cards land where the example needs them; expected
values are written out from the rulebook, never computed by the code under test.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from csl_ai.bits import bits
from csl_ai.candylab import (
    CandyLabRules,
    Catalogue,
    CatalogueError,
    Game,
    apply,
    custom_state,
    deal,
    is_legal,
    is_over,
    legal_moves,
    scores,
    winners,
)
from csl_ai.candylab import moves as mv
from csl_ai.candylab.catalogue import catalogue_from_arg
from csl_ai.candylab.core import bar_points
from csl_ai.candylab.game import HIDDEN
from csl_ai.candylab.state import (
    DRAWING,
    EFFECTS,
    LAST_BAR,
    LAST_CARD,
    MAIN,
    OVER,
    RETURNING,
    State,
)
from csl_ai.errors import IllegalMoveError, InvalidPositionError, RulesError

CAT = Catalogue.default()
WILD_CAT = catalogue_from_arg("wild")


class Box:
    """Finds ids by their text in a catalogue, each id handed out once."""

    def __init__(self, cat: Catalogue) -> None:
        self.cat = cat
        self.used_orders: set[int] = set()
        self.used_bars: set[int] = set()

    def order(self, text: str) -> int:
        """An unused order card showing text (either reading)."""
        for i, card in enumerate(self.cat.orders):
            if i not in self.used_orders and card.text in (text, text[::-1]):
                self.used_orders.add(i)
                return i
        raise LookupError(text)

    def bar(self, text: str) -> int:
        """An unused bar like ``"B1:draw"``."""
        for i, bar in enumerate(self.cat.bars):
            if i not in self.used_bars and bar.text == text:
                self.used_bars.add(i)
                return i
        raise LookupError(text)


def position(
    box: Box,
    players: int,
    *,
    belt: Sequence[int],
    hands: dict[int, Sequence[int]] | None = None,
    bars: dict[int, Sequence[int]] | None = None,
    stacks: dict[int, Sequence[int]] | None = None,
    face_up: Sequence[int] | None = None,
    pile: Sequence[int] | None = None,
    third_hand: Sequence[int] = (),
    rest_bars: int | None = None,
    current: int = 0,
    seed: int = 1,
) -> State:
    """A state with the parts given; orders not placed go to the pile (top last) or, when
    the pile is given, to the box; bars not placed go to the right end of the belt, or to
    seat rest_bars."""
    rules = CandyLabRules(players=players, catalogue=box.cat)
    hands = hands or {}
    bars = bars or {}
    stacks = stacks or {}
    placed_orders = set(third_hand) | set(pile or ()) | set(face_up or ())
    for group in (hands, stacks):
        for ids in group.values():
            placed_orders |= set(ids)
    free_orders = [i for i in range(len(box.cat.orders)) if i not in placed_orders]
    if face_up is None:
        face_up = free_orders[:3]
        free_orders = free_orders[3:]
    box_ids: list[int] = []
    if pile is None:
        pile = free_orders
    else:
        box_ids = free_orders
    placed_bars = set(belt)
    for ids in bars.values():
        placed_bars |= set(ids)
    free_bars = [i for i in range(len(box.cat.bars)) if i not in placed_bars]
    belt = list(belt)
    bar_lists = {seat: list(bars.get(seat, ())) for seat in range(players)}
    if rest_bars is None:
        belt += free_bars
    else:
        bar_lists[rest_bars] += free_bars
    return custom_state(
        rules,
        belt=belt,
        hands=[list(hands.get(seat, ())) for seat in range(players)],
        pile=list(pile),
        face_up=list(face_up),
        bars=[bar_lists[seat] for seat in range(players)],
        stacks=[list(stacks.get(seat, ())) for seat in range(players)],
        third_hand=list(third_hand),
        box=box_ids,
        current=current,
        seed=seed,
    )


def plays(s: State) -> list[tuple[int, int]]:
    """(order, start) of every PLAY move."""
    return [(mv.arg_a(m), mv.arg_b(m)) for m in legal_moves(s) if mv.kind(m) == mv.PLAY]


def kinds(s: State) -> set[int]:
    return {mv.kind(m) for m in legal_moves(s)}


def colours(s: State) -> str:
    return "".join("BOPW"[s.cat.bar_colour[b]] for b in s.belt)


# --- components and setup ---------------------------------------------------------------
def test_default_catalogue_matches_the_component_list() -> None:
    """Components: 42 order cards (12 of 1 bar worth 3, 18 of 2 worth 2, 12 of 3 worth 1),
    27 candy bars in 3 colours, 9 of each; CL-3: no wild bar in the default box."""
    sizes = [card.size for card in CAT.orders]
    assert (sizes.count(1), sizes.count(2), sizes.count(3)) == (12, 18, 12)
    assert {card.size: card.points for card in CAT.orders} == {1: 3, 2: 2, 3: 1}
    assert len(CAT.bars) == 27
    assert [sum(1 for b in CAT.bars if b.colour == c) for c in range(4)] == [9, 9, 9, 0]
    assert {b.effect.text for b in CAT.bars} == {
        "none", "draw", "discard_hand", "return_bar", "discard_played", "swap_hands"
    }
    assert WILD_CAT.wild_bars == 3 and len(WILD_CAT.bars) == 27


@pytest.mark.parametrize(("players", "hand", "third"), [(2, 6, 6), (3, 5, 0), (4, 5, 0)])
def test_setup_deals_hands_third_hand_and_three_face_up(players: int, hand: int, third: int) -> None:
    """Setup 1-4: all bars on the belt; 5 cards each (6 with 2 players, plus a third hand of
    6); the top three of the draw pile face up."""
    s = deal(CandyLabRules(players=players), seed=7)
    assert sorted(s.belt) == list(range(27))
    assert [s.hands[p].bit_count() for p in range(players)] == [hand] * players
    assert s.hands[players].bit_count() == third
    assert all(c >= 0 for c in s.face_up)
    assert len(s.pile) == 42 - players * hand - third - 3
    assert s.current == 0 and s.phase == MAIN


def test_the_same_seed_gives_the_same_deal() -> None:
    """CL-33: chance comes from the seed."""
    rules = CandyLabRules(players=3)
    assert deal(rules, 5).key() == deal(rules, 5).key()
    assert deal(rules, 5).key() != deal(rules, 6).key()


def test_first_seat_and_clockwise_order() -> None:
    """How to Play: "Players take turns in clockwise order"; CL-6: the first player is a
    rules setting."""
    assert deal(CandyLabRules(players=3, first_seat=2), 1).current == 2
    box = Box(CAT)
    only = box.bar("O3:none")
    s = position(box, 3, belt=[box.bar("B3:none")], bars={2: [only]}, current=2)
    apply(s, mv.give_back(only, mv.RIGHT))
    for _ in range(3):
        apply(s, mv.draw(mv.FACE_DOWN))
    assert s.phase == MAIN and s.current == 0


# --- A. playing a card ------------------------------------------------------------------
def test_a_card_reads_in_either_direction() -> None:
    """Notes: "the combination shown on a card could be blue / orange / pink or pink /
    orange / blue" (CL-7)."""
    box = Box(CAT)
    card = box.order("BOP")
    belt = [box.bar("P3:none"), box.bar("O3:none"), box.bar("B3:none"), box.bar("P2:none")]
    s = position(box, 2, belt=belt, hands={0: [card]}, rest_bars=1)
    assert colours(s) == "POBP"
    assert plays(s) == [(card, 0)]
    belt2 = [box.bar("B2:none"), box.bar("O2:none"), box.bar("P1:draw")]
    s2 = position(box, 2, belt=belt2, hands={0: [card]}, rest_bars=1)
    assert plays(s2) == [(card, 0)]


def test_the_bars_must_be_next_to_each_other() -> None:
    """Notes: "The candy bars must be next to each other to be retrieved" (CL-7)."""
    box = Box(CAT)
    card = box.order("BO")
    belt = [box.bar("B3:none"), box.bar("P3:none"), box.bar("O3:none")]
    s = position(box, 2, belt=belt, hands={0: [card]}, rest_bars=1)
    assert plays(s) == []
    # B, P, O is not B, O, P either: a card's sequence, not its colours in any order
    card3 = box.order("BOP")
    s3 = position(Box(CAT), 2, belt=belt, hands={0: [card3]}, rest_bars=1)
    assert plays(s3) == []


def test_retrieving_closes_up_the_belt() -> None:
    """A.2-3: retrieve the combination, then close up the remaining bars (CL-9)."""
    box = Box(CAT)
    card = box.order("OP")
    left, o, p, right = (box.bar(t) for t in ("B3:none", "O3:none", "P3:none", "B2:none"))
    s = position(box, 2, belt=[left, o, p, right], hands={0: [card]}, rest_bars=1)
    apply(s, mv.play(card, 1))
    assert s.belt == [left, right]
    assert s.bars[0] == 1 << o | 1 << p
    assert s.stacks[0] == [card] and not s.hands[0] >> card & 1
    assert s.phase == MAIN and s.current == 1  # no symbol on these bars: the turn ends


def test_a_card_without_its_run_cannot_be_played() -> None:
    """A.1-2 and C: a card is played only to fulfil an order (CL-7, CL-24)."""
    box = Box(CAT)
    card = box.order("PP")
    s = position(box, 2, belt=[box.bar("B3:none"), box.bar("O3:none")], hands={0: [card]}, rest_bars=1)
    assert kinds(s) == {mv.DRAW}
    game = Game(CandyLabRules(players=2), state=s)
    with pytest.raises(IllegalMoveError, match="not legal"):
        game.play(mv.play(card, 0))


def test_wild_bars_replace_any_colour() -> None:
    """Notes: "Multicolored candy bars are wild: they can replace any color" (CL-8)."""
    box = Box(WILD_CAT)
    card = box.order("BOP")
    belt = [box.bar("B3:none"), box.bar("W2:none"), box.bar("P3:none")]
    s = position(box, 2, belt=belt, hands={0: [card]}, rest_bars=1)
    assert plays(s) == [(card, 0)]
    single = box.order("O")
    s1 = position(Box(WILD_CAT), 2, belt=[belt[1]], hands={0: [single]}, rest_bars=1)
    assert plays(s1) == [(single, 0)]


def test_a_wild_position_on_a_card_takes_any_bar() -> None:
    """CL-3, CL-8: a catalogue may show a multicoloured bar on an order card."""
    text = CAT.to_toml().replace('bars = "B P"\ncount = 3', 'bars = "B P"\ncount = 2') + (
        '\n[[order]]\nbars = "B W"\ncount = 1\n'
    )
    cat = Catalogue.from_toml(text)
    box = Box(cat)
    card = box.order("BW")
    s = position(box, 2, belt=[box.bar("O3:none"), box.bar("B3:none")], hands={0: [card]}, rest_bars=1)
    assert plays(s) == [(card, 0)]


def test_the_last_bars_give_the_golden_sugar_and_no_effects() -> None:
    """A.4: "unless you retrieved the last candy bars in play"; End of Game: that player
    wins the Golden Sugar card, +3 (CL-11)."""
    box = Box(CAT)
    card = box.order("BO")
    run = [box.bar("B1:discard_hand"), box.bar("O1:swap_hands")]
    s = position(box, 2, belt=run, hands={0: [card], 1: [box.order("P")]}, rest_bars=1)
    before = s.hands[1]
    apply(s, mv.play(card, 0))
    assert is_over(s) and s.end == LAST_BAR and s.golden == 0
    assert s.hands[1] == before and s.hands[0] == 0  # no discard, no swap
    assert scores(s)[0] == 1 + 1 + 2 + 3


# --- effects ----------------------------------------------------------------------------
def test_the_rulebook_effects_example() -> None:
    """Effects Example: three bars, one of each colour; discard a card from another
    player's hand, return a pink bar of another player "regardless of its value" to an
    end, draw face up or face down, in the order of your choice (CL-12, CL-15, CL-16)."""
    box = Box(CAT)
    card = box.order("BOP")
    b, o, p = box.bar("B1:discard_hand"), box.bar("O1:draw"), box.bar("P1:return_bar")
    opp_pink3, opp_pink2, opp_blue = box.bar("P3:none"), box.bar("P2:none"), box.bar("B3:none")
    opp_hand = [box.order("B"), box.order("OO"), box.order("BB")]
    s = position(
        box, 2, belt=[box.bar("O3:none"), b, o, p],
        hands={0: [card], 1: opp_hand}, bars={1: [opp_pink3, opp_pink2, opp_blue]},
    )
    apply(s, mv.play(card, 1))
    assert s.phase == EFFECTS and s.current == 0
    # all three effects are open first: any order
    assert {mv.arg_a(m) for m in legal_moves(s)} == {b, o, p}
    # 1. discard from the other player's hand: a random card to the box
    apply(s, mv.effect(b, 1))
    assert s.hands[1].bit_count() == 2 and s.box.bit_count() == 1
    assert s.box & mask(opp_hand)
    # 2. return a pink bar: only the opponent's pink bars, either value, either end
    returns = {(mv.arg_b(m), mv.arg_c(m)) for m in legal_moves(s) if mv.arg_a(m) == p}
    assert returns == {(opp_pink3, 0), (opp_pink3, 1), (opp_pink2, 0), (opp_pink2, 1)}
    apply(s, mv.effect(p, opp_pink3, mv.RIGHT))
    assert s.belt[-1] == opp_pink3 and not s.bars[1] >> opp_pink3 & 1
    # 3. draw a face-up card: it is replaced at once from the draw pile
    top = s.pile[-1]
    up = s.face_up[0]
    apply(s, mv.effect(o, 0))
    assert s.hands[0] >> up & 1 and s.face_up[0] == top
    assert s.phase == MAIN and s.current == 1
    # the player's three bars are in front of them; the belt closed up
    assert s.bars[0] == mask([b, o, p])


def mask(ids: Sequence[int]) -> int:
    m = 0
    for i in ids:
        m |= 1 << i
    return m


def test_draw_face_down_takes_the_top_card() -> None:
    """Effects: "Draw the top card of the draw pile" (CL-14)."""
    box = Box(CAT)
    card = box.order("B")
    draw_bar = box.bar("B1:draw")
    s = position(box, 3, belt=[draw_bar, box.bar("O3:none")], hands={0: [card]})
    top = s.pile[-1]
    apply(s, mv.play(card, 0))
    apply(s, mv.effect(draw_bar, mv.FACE_DOWN))
    assert s.hands[0] == 1 << top and s.pile[-1] != top


def test_discard_the_last_card_played() -> None:
    """Effects: "Discard the last card played by another player ... it will not count
    toward the final score. This has no effect on the player's candy bars" (CL-17)."""
    box = Box(CAT)
    card = box.order("O")
    bin_bar = box.bar("O2:discard_played")
    older, last = box.order("B"), box.order("PP")
    opp_bar = box.bar("B3:none")
    s = position(
        box, 2, belt=[bin_bar, box.bar("O3:none")], hands={0: [card]},
        stacks={1: [older, last]}, bars={1: [opp_bar]},
    )
    assert scores(s)[1] == 3 + 2 + 3
    apply(s, mv.play(card, 0))
    assert legal_moves(s) == [mv.effect(bin_bar, 1)]
    apply(s, mv.effect(bin_bar, 1))
    assert s.stacks[1] == [older] and s.box >> last & 1 and s.box_public >> last & 1
    assert s.bars[1] == 1 << opp_bar
    assert scores(s)[1] == 3 + 3


def test_an_effect_that_cannot_be_carried_out_does_nothing() -> None:
    """Effects: "If an effect cannot be carried out, nothing happens" (CL-13)."""
    box = Box(CAT)
    card = box.order("O")
    bin_bar = box.bar("O2:discard_played")
    s = position(box, 3, belt=[bin_bar, box.bar("P3:none")], hands={0: [card]})
    apply(s, mv.play(card, 0))
    assert legal_moves(s) == [mv.effect(bin_bar, mv.NONE)]
    before = s.copy()
    apply(s, mv.effect(bin_bar, mv.NONE))
    assert s.stacks == before.stacks and s.box == before.box
    assert s.current == 1


def test_an_effect_that_can_be_carried_out_must_be() -> None:
    """CL-13: the "nothing happens" move is offered only when no target allows it; the
    targets are other players only (CL-19)."""
    box = Box(CAT)
    card = box.order("B")
    disc = box.bar("B2:discard_hand")
    s = position(
        box, 4, belt=[disc, box.bar("O3:none")],
        hands={0: [card, box.order("O")], 2: [box.order("P")]},
    )
    apply(s, mv.play(card, 0))
    assert legal_moves(s) == [mv.effect(disc, 2)]


def test_return_bar_takes_only_the_same_colour() -> None:
    """Effects: "The candy bar returned to play must be the same color as the candy bar
    that triggered the effect"; CL-16: a wild bar is its own colour."""
    box = Box(WILD_CAT)
    card = box.order("P")
    trigger = box.bar("P1:return_bar")
    theirs = [box.bar("W2:none"), box.bar("B3:none"), box.bar("P3:none")]
    s = position(box, 2, belt=[trigger, box.bar("O3:none")], hands={0: [card]}, bars={1: theirs})
    apply(s, mv.play(card, 0))
    assert {mv.arg_b(m) for m in legal_moves(s)} == {theirs[2]}
    box2 = Box(WILD_CAT)
    card2 = box2.order("B")
    wild_trigger = box2.bar("W1:return_bar")
    theirs2 = [box2.bar("W2:none"), box2.bar("B3:none")]
    s2 = position(
        box2, 2, belt=[wild_trigger, box2.bar("O3:none")], hands={0: [card2]}, bars={1: theirs2}
    )
    apply(s2, mv.play(card2, 0))
    assert {mv.arg_b(m) for m in legal_moves(s2)} == {theirs2[0]}


def test_swap_hands() -> None:
    """Effects: "Swap your hand with that of another player" (CL-18)."""
    box = Box(CAT)
    card = box.order("B")
    swap = box.bar("B1:swap_hands")
    mine = [box.order("O"), box.order("PP")]
    theirs = [box.order("BO")]
    s = position(box, 3, belt=[swap, box.bar("O3:none")], hands={0: [card, *mine], 1: theirs})
    apply(s, mv.play(card, 0))
    # seat 2 holds nothing, but the swap moves cards (mine go to it): a legal target
    assert sorted(mv.arg_b(m) for m in legal_moves(s)) == [1, 2]
    apply(s, mv.effect(swap, 1))
    assert s.hands[0] == mask(theirs) and s.hands[1] == mask(mine)


def test_swap_with_no_cards_left_keeps_one_random_card() -> None:
    """Effects: "This effect can be activated by a player who has no cards left. In that
    case, the player subjected to the effect keeps one random card" (CL-18)."""
    kept = set()
    for seed in range(12):
        box = Box(CAT)
        card = box.order("B")
        swap = box.bar("B1:swap_hands")
        theirs = [box.order("O"), box.order("PP"), box.order("BO")]
        s = position(
            box, 2, belt=[swap, box.bar("O3:none")], hands={0: [card], 1: theirs}, seed=seed
        )
        apply(s, mv.play(card, 0))
        assert s.hands[0] == 0
        apply(s, mv.effect(swap, 1))
        assert s.hands[1].bit_count() == 1 and s.hands[1] & mask(theirs)
        assert s.hands[0] | s.hands[1] == mask(theirs)
        kept.add(s.hands[1])
    assert len(kept) > 1  # random, not always the same card


def test_swap_with_the_third_hand_in_a_two_player_game() -> None:
    """Two-Player Game: the swap may be with the opposing player OR the third hand; CL-18:
    the third hand is not a player, so an empty-handed player takes all of it."""
    box = Box(CAT)
    card = box.order("B")
    swap = box.bar("B1:swap_hands")
    third = [box.order("O"), box.order("OO"), box.order("P")]
    opp = [box.order("PP")]
    s = position(
        box, 2, belt=[swap, box.bar("O3:none")], hands={0: [card], 1: opp}, third_hand=third
    )
    apply(s, mv.play(card, 0))
    # seat 1 holds one card: an empty-handed swap would leave it that card, moving nothing
    assert [mv.arg_b(m) for m in legal_moves(s)] == [2]
    apply(s, mv.effect(swap, 2))
    assert s.hands[0] == mask(third) and s.hands[2] == 0 and s.hands[1] == mask(opp)


def test_the_game_ends_when_an_effect_draws_the_last_card() -> None:
    """End of Game and CL-20, CL-26: the game ends immediately, the other effects are lost."""
    box = Box(CAT)
    card = box.order("BO")
    draw_bar, disc = box.bar("B1:draw"), box.bar("O1:discard_hand")
    last = box.order("P")
    s = position(
        box, 2, belt=[draw_bar, disc, box.bar("P3:none")], hands={0: [card], 1: [box.order("O")]},
        pile=[last],
    )
    apply(s, mv.play(card, 0))
    apply(s, mv.effect(draw_bar, mv.FACE_DOWN))
    assert is_over(s) and s.end == LAST_CARD and s.golden == -1
    assert legal_moves(s) == [] and s.hands[1].bit_count() == 1


# --- B. returning bars ------------------------------------------------------------------
def test_the_rulebook_action_b_example() -> None:
    """B Example: "You decide to return 3 candy bars of value 1 into play. This action lets
    you draw 3 cards (1+1+1), from among the face-up or face-down cards ... The effects of
    the candy bars returned to play do not apply" (CL-22, CL-23)."""
    box = Box(CAT)
    mine = [box.bar("B1:discard_hand"), box.bar("O1:swap_hands"), box.bar("P1:draw")]
    stuck = box.order("PP")
    s = position(
        box, 3, belt=[box.bar("B3:none"), box.bar("O3:none")], rest_bars=2,
        hands={0: [stuck], 1: [box.order("O")]}, bars={0: mine},
    )
    assert plays(s) == [] and kinds(s) == {mv.GIVE_BACK}
    apply(s, mv.give_back(mine[0], mv.LEFT))
    assert s.phase == RETURNING and mv.STOP in legal_moves(s)
    apply(s, mv.give_back(mine[1], mv.RIGHT))
    apply(s, mv.give_back(mine[2], mv.LEFT))
    # split between the two ends, in the order returned
    assert s.belt[:2] == [mine[2], mine[0]] and s.belt[-1] == mine[1]
    assert s.phase == DRAWING and s.draws_left == 3
    assert s.hands[1].bit_count() == 1  # the discard_hand effect did not apply
    up = s.face_up[1]
    apply(s, mv.draw(1))
    apply(s, mv.draw(mv.FACE_DOWN))
    assert s.current == 0 and s.draws_left == 1
    apply(s, mv.draw(mv.FACE_DOWN))
    assert s.hands[0].bit_count() == 4 and s.hands[0] >> up & 1
    # "You must wait until your next turn to play a card": the turn has passed
    assert s.phase == MAIN and s.current == 1


def test_action_b_is_open_whenever_you_wish() -> None:
    """B: "Whenever you wish" - even with a card that could be played (CL-21)."""
    box = Box(CAT)
    card = box.order("B")
    s = position(box, 2, belt=[box.bar("B3:none")], hands={0: [card]}, bars={0: [box.bar("O3:none")]})
    assert kinds(s) == {mv.PLAY, mv.GIVE_BACK}


def test_action_b_returns_at_most_three_bars_and_draws_their_values() -> None:
    """B: "return one to three of your candy bars" and "draw a number of cards equal to
    the sum of the values" (CL-22, CL-23)."""
    box = Box(CAT)
    mine = [box.bar("B3:none"), box.bar("O3:none"), box.bar("P3:none"), box.bar("B2:none")]
    s = position(box, 2, belt=[box.bar("O2:none")], bars={0: mine})
    for bar in mine[:3]:
        apply(s, mv.give_back(bar, mv.RIGHT))
    assert s.phase == DRAWING and s.draws_left == 9 and s.bars[0] == 1 << mine[3]
    s2 = position(Box(CAT), 2, belt=[mine[3]], bars={0: mine[:3]})
    apply(s2, mv.give_back(mine[0], mv.LEFT))
    apply(s2, mv.STOP)
    assert s2.phase == DRAWING and s2.draws_left == 3


# --- C. drawing one card ----------------------------------------------------------------
def test_action_c_only_when_no_card_can_be_played_and_no_bar_returned() -> None:
    """C: "Draw a single card, if and only if you cannot play a card and have no more
    candy bars to return to play"; CL-24: face up or face down."""
    box = Box(CAT)
    stuck = box.order("PP")
    s = position(box, 2, belt=[box.bar("B3:none"), box.bar("O3:none")], hands={0: [stuck]}, rest_bars=1)
    moves = legal_moves(s)
    assert {mv.kind(m) for m in moves} == {mv.DRAW}
    assert mv.draw(mv.FACE_DOWN) in moves and len(moves) >= 2
    apply(s, mv.draw(mv.FACE_DOWN))
    assert s.hands[0].bit_count() == 2 and s.current == 1


def test_the_game_ends_on_the_last_face_down_card() -> None:
    """End of Game: "When a player draws the last face-down card of the draw pile. In this
    case, no player wins the Golden Sugar card" (CL-25)."""
    box = Box(CAT)
    last = box.order("P")
    s = position(box, 2, belt=[box.bar("B3:none")], hands={0: [box.order("OO")]}, pile=[last], rest_bars=1)
    apply(s, mv.draw(mv.FACE_DOWN))
    assert is_over(s) and s.end == LAST_CARD and s.golden == -1 and s.pile == []


def test_refilling_the_face_up_row_with_the_last_card_ends_the_game() -> None:
    """CL-25: "replace it with a card from the draw pile" draws the last face-down card."""
    box = Box(CAT)
    last = box.order("P")
    s = position(box, 2, belt=[box.bar("B3:none")], hands={0: [box.order("OO")]}, pile=[last], rest_bars=1)
    apply(s, mv.draw(0))
    assert is_over(s) and s.end == LAST_CARD and s.face_up[0] == last


# --- scores -------------------------------------------------------------------------------
def test_scores_add_bars_orders_and_the_golden_sugar() -> None:
    """End of Game: "adding up the points of your candy bars and the Order cards
    fulfilled"; the Golden Sugar is +3 (CL-27)."""
    box = Box(CAT)
    s = position(
        box, 3, belt=[box.bar("B1:draw")],
        bars={0: [box.bar("B3:none"), box.bar("O2:none")], 1: [box.bar("P1:draw")]},
        stacks={0: [box.order("BOP"), box.order("B")], 1: [box.order("OO")]},
        hands={2: [box.order("P")]},
    )
    s.golden = 1
    assert scores(s) == [3 + 2 + 1 + 3, 1 + 2 + 3, 0]


def test_ties_go_to_the_most_bar_points_then_are_shared() -> None:
    """End of Game: "In case of a tie, the player with the most candy bar points wins. In
    case of another tie, the players share the title" (CL-28)."""
    box = Box(CAT)
    s = position(
        box, 3, belt=[box.bar("B1:draw")],
        bars={0: [box.bar("B3:none")], 1: [box.bar("O1:draw")], 2: [box.bar("P3:none")]},
        stacks={0: [box.order("OO")], 1: [box.order("B"), box.order("BBO")], 2: [box.order("PP")]},
    )
    assert scores(s) == [5, 5, 5]
    assert winners(s) == [0, 2]
    s.golden = 1  # the Golden Sugar is a card, not a bar: no help in the tie-break
    assert scores(s)[1] == 8 and winners(s) == [1]
    s.golden = -1
    s.bars[0] = 1 << box.bar("B2:none")
    assert bar_points(s, 0) == 2 and winners(s) == [2]


# --- equivalent moves, information, replay ---------------------------------------------------
def test_equivalent_cards_are_offered_once_and_both_accepted() -> None:
    """CL-32: two cards of the same combination make the same moves."""
    box = Box(CAT)
    a, b = box.order("B"), box.order("B")
    s = position(box, 2, belt=[box.bar("B3:none")], hands={0: [a, b]}, rest_bars=1)
    assert plays(s) == [(min(a, b), 0)]
    assert is_legal(s, mv.play(max(a, b), 0))
    apply(s, mv.play(max(a, b), 0))
    assert s.stacks[0] == [max(a, b)]


def test_observations_hide_hands_pile_third_hand_and_random_discards() -> None:
    """CL-29, CL-31: a seat sees its hand, sizes of the rest, and only the cards it saw."""
    game = Game(CandyLabRules(players=2), seed=3)
    s = game.state
    obs = game.observation(1)
    assert obs.hand == s.hands[1] and obs.hand_sizes == (6, 6) and obs.third_hand_size == 6
    assert obs.unseen() & s.hands[0] == s.hands[0] and not obs.unseen() & s.hands[1]
    assert obs.legal_moves == () and game.observation(0).legal_moves
    # play a face-down draw by seat 0: seat 1 sees the move, not the card
    while not game.is_over:
        seat = game.current
        moves = game.legal_moves()
        down = [m for m in moves if m == mv.draw(mv.FACE_DOWN)]
        if down and seat == 0:
            game.play(down[0])
            break
        game.play(moves[-1])
    last0 = game.observation(0).events[-1]
    last1 = game.observation(1).events[-1]
    assert last0.move == last1.move == mv.draw(mv.FACE_DOWN)
    assert last0.taken >= 0 and last1.taken == HIDDEN


def test_a_game_replays_exactly_from_its_seed_and_moves() -> None:
    """CL-33: a game replays exactly from its seed and its moves."""
    from csl_ai.candylab.agents import HeuristicAgent, RandomAgent, play_game

    rules = CandyLabRules(players=3)
    game = play_game(rules, [HeuristicAgent(), RandomAgent(1), RandomAgent(2)], seed=11)
    again = Game.replay(rules, 11, game.moves)
    assert again.state.key() == game.state.key() and again.scores() == game.scores()
    with pytest.raises(IllegalMoveError, match=r"^moves\[0\]: "):
        Game.replay(rules, 12, [mv.play(0, 40)])


def test_game_rejects_bad_moves_with_one_line() -> None:
    game = Game(CandyLabRules(players=2), seed=1)
    for bad in ("play", 1.5, True, -1, mv.effect(3, 1)):
        with pytest.raises(IllegalMoveError) as info:
            game.play(bad)  # type: ignore[arg-type]
        assert "\n" not in str(info.value)


def test_custom_state_rejects_impossible_positions() -> None:
    rules = CandyLabRules(players=2)
    s = deal(rules, 1)
    parts = dict(
        belt=s.belt, hands=[bits(s.hands[0]), bits(s.hands[1])], pile=s.pile,
        face_up=s.face_up, third_hand=bits(s.hands[2]),
    )
    custom_state(rules, **parts)  # type: ignore[arg-type]
    with pytest.raises(InvalidPositionError, match="also in"):
        custom_state(rules, **{**parts, "pile": s.pile + [s.face_up[0]]})  # type: ignore[arg-type]
    with pytest.raises(InvalidPositionError, match="nowhere"):
        custom_state(rules, **{**parts, "pile": s.pile[1:]})  # type: ignore[arg-type]
    with pytest.raises(InvalidPositionError, match="bars"):
        custom_state(rules, **{**parts, "belt": s.belt[1:]})  # type: ignore[arg-type]


# --- the catalogue file ---------------------------------------------------------------------
def test_catalogue_round_trips() -> None:
    """CL-4: the file and JSON forms read back to the same catalogue."""
    for cat in (CAT, WILD_CAT):
        assert Catalogue.from_toml(cat.to_toml()) == cat
        assert Catalogue.from_dict(cat.to_dict()) == cat
    rules = CandyLabRules(players=2, first_seat=1, catalogue=WILD_CAT)
    assert CandyLabRules.from_dict(rules.to_dict()) == rules
    for name in ('my "box" \\ 2', "two\nlines\x7f", "bo\u00eete \U0001f36c"):
        odd = Catalogue(CAT.orders, CAT.bars, name)
        assert Catalogue.from_toml(odd.to_toml()) == odd


BAD_CATALOGUES = [
    ("name = ", "bad TOML"),
    ('name = "x"\n', "order: missing"),
    ('wrong = 1\n', "unknown field 'wrong'"),
    ("[[order]]\nbars = 'BXO'\ncount = 1\n[[bar]]\n", "unknown colour letter 'X'"),
    ("[[order]]\nbars = 'BOPB'\ncount = 1\n[[bar]]\n", "1 to 3 bars"),
    ("[[order]]\nbars = 'B'\n[[bar]]\n", r"order\[0\]\.count: missing"),
    ("[[order]]\nbars = 'B'\ncount = 0\n[[bar]]\n", "integer 1..42"),
    ("[[order]]\nbars = 'B'\ncount = 42\n[[bar]]\ncolour = 'red'\n", r"bar\[0\]\.value: missing"),
    (
        "[[order]]\nbars = 'B'\ncount = 42\n[[bar]]\ncolour = 'red'\nvalue = 1\neffect = 'none'\n"
        "count = 27\n",
        r"bar\[0\]\.colour: must be blue, orange, pink or wild, got 'red'",
    ),
    ("order = 3\nbar = []\n", "order: must be a list of tables"),
    ("[[order]]\nbars = 7\ncount = 1\n[[bar]]\n", r"order\[0\]\.bars: must be colour letters"),
    ("name = ''\n", "name: must be a non-empty string"),
]


@pytest.mark.parametrize(("text", "message"), BAD_CATALOGUES)
def test_a_broken_catalogue_gives_one_line(text: str, message: str) -> None:
    """CL-4: every fault is one CatalogueError line naming the field."""
    with pytest.raises(CatalogueError, match=message) as info:
        Catalogue.from_toml(text, source="cat.toml")
    assert str(info.value).startswith("cat.toml: ") and "\n" not in str(info.value)


def test_catalogue_counts_are_checked(tmp_path: Path) -> None:
    """CL-4: a box holds exactly 42 orders (12/18/12) and 27 bars."""
    text = CAT.to_toml()
    cases = [
        (text.replace('bars = "B"\ncount = 4', 'bars = "B"\ncount = 3'), "41 order cards"),
        (
            text.replace('bars = "B"\ncount = 4', 'bars = "B"\ncount = 3').replace(
                'bars = "B B"\ncount = 3', 'bars = "B B"\ncount = 4'
            ),
            "11 order cards of 1 bar",
        ),
        (text.replace('effect = "none"\ncount = 1', 'effect = "none"\ncount = 2', 1), "28 candy bars"),
        (text.replace("value = 3", "value = 6", 1), r"value: must be an integer 1\.\.5"),
        (text.replace('effect = "draw"', 'effect = "steal"', 1), "effect: must be one of"),
    ]
    for bad, message in cases:
        path = tmp_path / "box.toml"
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(CatalogueError, match=message) as info:
            Catalogue.load(path)
        assert "\n" not in str(info.value) and "box.toml" in str(info.value)
    (tmp_path / "latin.toml").write_bytes(b"name = '\xe9'")
    with pytest.raises(CatalogueError, match="not UTF-8"):
        catalogue_from_arg(tmp_path / "latin.toml")
    with pytest.raises(CatalogueError, match="cannot read"):
        catalogue_from_arg(tmp_path / "missing.toml")


def test_rules_are_validated() -> None:
    with pytest.raises(RulesError, match="players"):
        CandyLabRules(players=5)
    with pytest.raises(RulesError, match="first_seat"):
        CandyLabRules(players=2, first_seat=2)
    with pytest.raises(RulesError, match=r"rules\.players"):
        CandyLabRules.from_dict({"players": "3"})
    assert OVER == 4  # the phases the docs name
