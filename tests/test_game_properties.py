"""Property tests over many random games of every player count, checked in plain Python.

Three layers: (1) an independent pure-Python scorer (RULES.md §4) against the C core on
random tallies, for all 16 side combinations and both star options; (2) thousands of
C random playouts (`CoreState.play_random`) checked for conservation and scoring;
(3) random games through the Python `Game`, whose full history is replayed here to
recompute tricks, leads, must-follow, tallies, scores and winners, and whose
observations are checked for hidden information and legal moves.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence
from functools import reduce
from operator import or_

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from csl_ai import _core
from csl_ai.game import Game, Phase, new_core
from csl_ai.moves import Allocate, Declare, Move
from csl_ai.notation import cards_of, parse_piles
from csl_ai.rules import Kind, RulesConfig, Side, StarOption
from csl_ai.scoring import score_tallies

PLAYER_COUNTS = (2, 3, 4, 5)
SIDE_COMBOS = tuple(itertools.product((Side.A, Side.B), repeat=4))
STAR_OPTIONS = tuple(StarOption)

Tally = tuple[int, int, int, int]


# --- the reference scorer (RULES.md §4, written independently of the core) -------------

REF_SPIDER = {Side.A: (0, 3, 10, 4, 2, 10, 1), Side.B: (0, 10, 3, 2, 1, 10, 1)}
REF_LEOPARD = {Side.A: (0, 0, 10, 0, 20, 0, 30, 0), Side.B: (0, 0, 0, 15, 0, 0, 30, 0)}
REF_CANDY_B = (3, 10, 6, 0, 0)


def reference_scores(
    rules: RulesConfig,
    elements: Sequence[Tally],
    faceup: Sequence[int],
    facedown: Sequence[int],
    weather: Sequence[int],
) -> list[tuple[int, ...]]:
    """Per seat: (candy, spider, leopard, star, good_weather, face_down, total)."""
    candy_side, spider_side, leopard_side, star_side = rules.sides
    candies = [row[0] for row in elements]
    distinct = sorted(set(candies), reverse=True)
    rows = []
    for s, (c, sp, le, t) in enumerate(elements):
        if candy_side is Side.A:
            candy = sum(other for other in candies if other < c)
        else:
            candy = REF_CANDY_B[distinct.index(c)]
        spider = REF_SPIDER[spider_side][min(sp, 6)]
        leopard = REF_LEOPARD[leopard_side][min(le, 7)]
        base = candy + spider + leopard
        if t == 2:
            star = -5 if star_side is Side.A else -10
        elif t >= 3 and star_side is Side.A:
            star = 2 * base if rules.star_option is StarOption.TWICE else base
        else:
            star = 0
        good, down = 7 * weather[s], -2 * facedown[s]
        rows.append((candy, spider, leopard, star, good, down, base + star + good + down))
    return rows


def reference_winners(
    rules: RulesConfig,
    elements: Sequence[Tally],
    totals: Sequence[int],
    faceup: Sequence[int],
    facedown: Sequence[int],
    weather: Sequence[int],
) -> tuple[tuple[int, ...], int | None]:
    """(winning seats, outright seat): 3 stars on side B, else total, fewest cards, most weather."""
    if rules.sides[Kind.STAR] is Side.B:
        for s, row in enumerate(elements):
            if row[Kind.STAR] >= 3:
                return (s,), s
    keys = [(totals[s], -(faceup[s] + facedown[s]), weather[s]) for s in range(len(totals))]
    best = max(keys)
    return tuple(s for s, key in enumerate(keys) if key == best), None


def check_against_reference(
    rules: RulesConfig,
    elements: Sequence[Tally],
    faceup: Sequence[int],
    facedown: Sequence[int],
    weather: Sequence[int],
    core_rows: Sequence[Sequence[int]],
    core_winners: tuple[int, ...],
    core_outright: int | None,
) -> None:
    expected = reference_scores(rules, elements, faceup, facedown, weather)
    assert [tuple(row) for row in core_rows] == expected
    for row in core_rows:
        assert row[6] == sum(row[:6])
    winners, outright = reference_winners(
        rules, elements, [row[6] for row in expected], faceup, facedown, weather
    )
    assert core_winners == winners
    assert core_outright == outright


# --- (1) reference scorer against the core on random tallies ---------------------------


@st.composite
def tallies(draw: st.DrawFn, players: int) -> tuple[list[Tally], list[int], list[int], list[int]]:
    """Tallies some game could end with: every sky card of the deck goes to a seat face
    up, face down, or (for face-down rounds' leftovers) nowhere; concentrated deals are
    likely so that 3 stars, ties and capped counts all turn up."""
    rules = RulesConfig(players=players)
    cards = rules.game_deck.cards
    favourite = draw(st.integers(0, players - 1))
    owner = st.one_of(st.just(favourite), st.integers(0, players - 1))
    elements = [[0, 0, 0, 0] for _ in range(players)]
    faceup = [0] * players
    facedown = [0] * players
    for card in cards:
        seat = draw(owner)
        if draw(st.integers(0, 9)) == 0:
            facedown[seat] += 1
        else:
            faceup[seat] += 1
            elements[seat][card.kind] += card.count
    rounds = rules.spec.rounds
    weather = [draw(st.integers(0, rounds - (1 if facedown[s] else 0))) for s in range(players)]
    return [tuple(row) for row in elements], faceup, facedown, weather  # type: ignore[misc]


@pytest.mark.parametrize("star", STAR_OPTIONS, ids=lambda o: o.value)
@pytest.mark.parametrize("sides", SIDE_COMBOS, ids=lambda s: "".join(side.value for side in s))
@settings(max_examples=25)
@given(data=st.data())
def test_reference_scorer_agrees_with_core(
    sides: tuple[Side, Side, Side, Side], star: StarOption, data: st.DataObject
) -> None:
    players = data.draw(st.sampled_from(PLAYER_COUNTS), label="players")
    rules = RulesConfig(players=players, sides=sides, star_option=star)
    elements, faceup, facedown, weather = data.draw(tallies(players), label="tallies")
    result = score_tallies(rules, elements, faceup, facedown, weather)
    rows = [tuple(line.as_dict().values()) for line in result.scores]
    check_against_reference(
        rules, elements, faceup, facedown, weather, rows, result.winners, result.outright
    )
    raw_rows, mask, outright = _core.score_tallies(
        players,
        [0 if side is Side.A else 1 for side in sides],
        0 if star is StarOption.TWICE else 1,
        elements, faceup, facedown, weather,
    )
    assert raw_rows == [list(r) for r in rows]
    assert mask == sum(1 << s for s in result.winners)
    assert outright == (-1 if result.outright is None else result.outright)
    assert sum(result.win_share(s) for s in range(players)) == pytest.approx(1.0)


# --- (2) C random playouts --------------------------------------------------------------

PLAYOUTS_PER_EXAMPLE = 100


@pytest.mark.parametrize("players", PLAYER_COUNTS)
@settings(max_examples=40)
@given(
    sides=st.sampled_from(SIDE_COMBOS),
    star=st.sampled_from(STAR_OPTIONS),
    first_seat=st.integers(0, 4),
    seed=st.integers(0, 2**63 - 1),
)
def test_core_random_playouts(
    players: int, sides: tuple[Side, Side, Side, Side], star: StarOption, first_seat: int, seed: int
) -> None:
    """Every sky card is won, tallies fit the deck, scores match the reference scorer."""
    rules = RulesConfig(
        players=players, sides=sides, star_option=star, first_seat=first_seat % players
    )
    spec = rules.spec
    deck = rules.game_deck
    order = list(range(len(deck.cards)))
    random.Random(seed).shuffle(order)
    start = new_core(rules, order)
    in_deck = deck.elements_per_kind()
    for i in range(PLAYOUTS_PER_EXAMPLE):
        core = start.copy()
        core.play_random((seed + i) % 2**64)
        assert core.is_over and core.round == spec.rounds
        assert core.first_player == (first_seat % players + spec.rounds) % players
        elements = core.elements
        faceup, facedown, weather = core.faceup_cards, core.facedown_cards, core.good_weather
        assert sum(faceup) + sum(facedown) == len(deck.cards)
        for kind in Kind:
            held = sum(row[kind] for row in elements)
            if sum(facedown) == 0:
                assert held == in_deck[kind]
            else:
                assert held <= in_deck[kind]
        for s in range(players):
            stars = elements[s][Kind.STAR]
            others = elements[s][:3]
            assert stars + sum((e + 1) // 2 for e in others) <= faceup[s] <= stars + sum(others)
            assert weather[s] + (1 if facedown[s] else 0) <= spec.rounds
        assert core.played | core.set_aside == spec.rain_cards
        assert bin(core.set_aside).count("1") == spec.set_aside
        assert all(p == 0 for row in core.piles for p in row)
        mask = core.winners()
        outright = core.outright_winner()
        check_against_reference(
            rules, elements, faceup, facedown, weather, core.scores(),
            tuple(s for s in range(players) if (mask >> s) & 1), None if outright < 0 else outright,
        )


def _play_first_legal_rounds(core: _core.CoreState, rounds: int) -> None:
    for r in range(rounds):
        assert core.deal_random(1000 + r) == 0
        for s in range(core.players):
            assert core.allocate(s, core.allocations(core.hands[s])[0]) == 0
        for s in range(core.players):
            assert core.declare(s, False) == 0
        while core.phase == "play":
            assert core.play(cards_of(core.legal_plays())[0]) == 0


TRAP_PILES = [
    "G10 G11 G12 | G4 G5 G6 | G7 G8 G9",
    "B1 B2 B3 | B4 B5 B6 | B7 B8 B9",
    "R1 R2 R3 | R4 R5 R6 | R7 R8 R9",
    "G1 G2 G3 | R10 R11 R12 | B10 B11 B12",
]
"""Seat 1 holds only blues, so every trick holds a blue and seat 0 (only greens) never wins;
seat 3 leads the last round and its first pile is green, so G10-G12 meet B1-B3."""


@pytest.mark.parametrize("checked", [False, True], ids=["playout", "checked"])
def test_random_playout_trick_winner_is_the_weather_rule(checked: bool) -> None:
    """The C playout loop must apply the weather rule like the checked path: a low blue
    beats a high card of the led colour. Last round of a 4-player game, seat 0 can win nothing."""
    rules = RulesConfig(players=4)
    core = new_core(rules, list(range(36)))
    _play_first_legal_rounds(core, 3)
    assert core.round == 3 and core.first_player == 3
    piles = [parse_piles(text, (3, 3, 3)) for text in TRAP_PILES]
    assert core.deal([reduce(or_, p) for p in piles]) == 0
    for s, p in enumerate(piles):
        assert core.allocate(s, p) == 0
    for s in range(4):
        assert core.declare(s, False) == 0
    before = core.faceup_cards
    for seed in range(100):
        playout = core.copy()
        if checked:
            rng = random.Random(seed)
            while playout.phase == "play":
                assert playout.play(rng.choice(cards_of(playout.legal_plays()))) == 0
        else:
            playout.play_random(seed)
        assert playout.is_over
        won = [after - b for after, b in zip(playout.faceup_cards, before)]
        assert won[0] == 0, f"seed {seed}: seat 0 won {won[0]} sky cards with greens against blues"
        assert sum(won) == 9


# --- (3) random games through the Python Game --------------------------------------------


def random_move(game: Game, seat: int, rng: random.Random) -> Move:
    """A random legal move: a shuffled split of the hand, a 35% good weather bet, a legal card."""
    phase = game.phase
    if phase is Phase.ALLOCATE:
        cards = cards_of(game.hand(seat))
        rng.shuffle(cards)
        piles, start = [], 0
        for size in game.rules.spec.group_sizes:
            piles.append(reduce(or_, (1 << c for c in cards[start:start + size])))
            start += size
        return Allocate(tuple(piles))
    if phase is Phase.WEATHER:
        return Declare(rng.random() < 0.35)
    return rng.choice(game.legal_moves(seat))


def weather_rule_winner(plays: Sequence[tuple[int, int]]) -> int:
    """The seat whose card wins: the highest blue, else the highest of the led colour."""
    led = plays[0][1] // 12
    blues = [(card, seat) for seat, card in plays if card // 12 == 0]
    pool = blues or [(card, seat) for seat, card in plays if card // 12 == led]
    return max(pool)[1]


def check_history(game: Game) -> tuple[list[Tally], list[int], list[int], list[int]]:
    """Check every round of a finished game against the rules; return the tallies recomputed."""
    rules = game.rules
    spec = rules.spec
    n = rules.players
    group_of = [g for g, size in enumerate(spec.group_sizes) for _ in range(size)]
    elements = [[0, 0, 0, 0] for _ in range(n)]
    faceup, facedown, weather = [0] * n, [0] * n, [0] * n
    lines: list[int] = []
    previous_winner: int | None = None
    for r, log in enumerate(game.rounds):
        assert log.first_player == (rules.first_seat + r) % n
        assert reduce(or_, log.hands) | (log.set_aside or 0) == spec.rain_cards
        lines.extend(log.line)
        remaining = [list(alloc) for alloc in log.allocations]  # type: ignore[arg-type]
        for s, alloc in enumerate(log.allocations):
            assert alloc is not None and reduce(or_, alloc) == log.hands[s]
        played = Counter(card for trick in log.tricks for _s, card in trick.plays)
        assert set(played) == set(cards_of(spec.rain_cards & ~(log.set_aside or 0)))
        assert set(played.values()) == {1}
        won: list[list[int]] = [[] for _ in range(n)]
        assert [t.index for t in log.tricks] == list(range(spec.line_size))
        for t, trick in enumerate(log.tricks):
            assert trick.group == group_of[t] and trick.round == r
            leader = log.first_player if t == 0 else previous_winner
            assert trick.leader == leader
            assert [s for s, _c in trick.plays] == [(leader + i) % n for i in range(n)]
            led = trick.plays[0][1] // 12
            for s, card in trick.plays:
                pile = remaining[s][trick.group]
                where = f"round {r} trick {t} seat {s}"
                assert (pile >> card) & 1, f"{where}: played a card not in its pile"
                holds_led = any(c // 12 == led for c in cards_of(pile))
                assert card // 12 == led or not holds_led, f"{where}: did not follow"
                remaining[s][trick.group] = pile & ~(1 << card)
            assert trick.winner == weather_rule_winner(trick.plays)
            assert trick.sky == log.line[t]
            won[trick.winner].append(trick.sky)
            previous_winner = trick.winner
        assert all(p == 0 for piles in remaining for p in piles)
        assert sorted(sky for seat_won in won for sky in seat_won) == sorted(log.line)
        for s in range(n):
            declared = log.declarations[s]
            assert declared is not None
            if declared and not won[s]:
                weather[s] += 1
            elif declared:
                facedown[s] += len(won[s])
            else:
                faceup[s] += len(won[s])
                for sky in won[s]:
                    card = game.sky_cards[sky]
                    elements[s][card.kind] += card.count
    assert sorted(lines) == list(range(len(game.sky_cards)))
    return [tuple(row) for row in elements], faceup, facedown, weather  # type: ignore[misc]


def play_random_game(rules: RulesConfig, seed: int) -> Game:
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        seat = rng.choice(game.pending_seats())
        game.apply(random_move(game, seat, rng), seat)
    return game


@pytest.mark.parametrize("players", PLAYER_COUNTS)
@settings(max_examples=100)
@given(
    sides=st.sampled_from(SIDE_COMBOS),
    star=st.sampled_from(STAR_OPTIONS),
    first_seat=st.integers(0, 4),
    seed=st.integers(0, 2**63 - 1),
)
def test_python_games_follow_the_rules(
    players: int, sides: tuple[Side, Side, Side, Side], star: StarOption, first_seat: int, seed: int
) -> None:
    """Replay each game's history in Python: tricks, leads, must-follow, every rain card
    once per round, every sky card won once; tallies, scores and winners recomputed."""
    rules = RulesConfig(
        players=players, sides=sides, star_option=star, first_seat=first_seat % players
    )
    game = play_random_game(rules, seed)
    elements, faceup, facedown, weather = check_history(game)
    core = game.core
    assert [tuple(row) for row in core.elements] == elements
    assert list(core.faceup_cards) == faceup
    assert list(core.facedown_cards) == facedown
    assert list(core.good_weather) == weather
    result = game.result()
    rows = [tuple(line.as_dict().values()) for line in result.scores]
    check_against_reference(
        rules, elements, faceup, facedown, weather, rows, result.winners, result.outright
    )
    assert result == score_tallies(rules, elements, faceup, facedown, weather)


def check_observation(game: Game, seat: int) -> None:
    """The observation holds exactly seat's knowledge (RULES.md §5): its replayed public
    view holds no card of another seat's hand or piles, nor the set-aside, nor the order
    of the sky cards still to come."""
    obs = game.observation(seat)
    n = game.players
    assert obs.seat == seat and len(obs.rounds) == len(game.rounds)
    simultaneous = game.phase in (Phase.ALLOCATE, Phase.WEATHER)
    for r, (seen, real) in enumerate(zip(obs.rounds, game.rounds)):
        current = r == len(game.rounds) - 1 and not game.is_over
        assert seen.set_aside is None
        assert seen.line == real.line and seen.first_player == real.first_player
        assert seen.tricks == real.tricks
        for s in range(n):
            if s == seat:
                assert seen.hands[s] == real.hands[s]
                assert seen.allocations[s] == real.allocations[s]
                assert seen.declarations[s] == real.declarations[s]
            else:
                assert seen.hands[s] is None and seen.allocations[s] is None
                if current and simultaneous:
                    assert seen.declarations[s] is None
                else:
                    assert seen.declarations[s] == real.declarations[s]
    view = obs.public_view()
    dealt = [sky for log in game.rounds for sky in log.line]
    assert view.unseen_sky == tuple(sorted(set(range(len(game.sky_cards))) - set(dealt)))
    assert view.core.sky_order == tuple(dealt) + view.unseen_sky
    for s in range(n):
        if s != seat:
            assert view.core.hands[s] == 0
            assert all(p == 0 for p in view.core.piles[s])
    assert view.core.set_aside == 0
    if not game.is_over:
        current_log = game.rounds[-1]
        own = current_log.hands[seat]
        assert own is not None
        assert view.unseen == game.rules.spec.rain_cards & ~own & ~game.core.played
    if seat in game.pending_seats():
        assert obs.phase is game.phase
        assert obs.to_move == seat
        assert obs.legal_moves() == game.legal_moves(seat)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
@settings(max_examples=6)
@given(seed=st.integers(0, 2**63 - 1), first_seat=st.integers(0, 4))
def test_observations_hide_other_seats(players: int, seed: int, first_seat: int) -> None:
    """At every decision of a random game: the seat to move and one other seat's views."""
    rules = RulesConfig(players=players, first_seat=first_seat % players)
    game = Game(rules, seed=seed)
    rng = random.Random(seed)
    while not game.is_over:
        seat = rng.choice(game.pending_seats())
        check_observation(game, seat)
        check_observation(game, rng.randrange(players))
        game.apply(random_move(game, seat, rng), seat)
    for s in range(players):
        check_observation(game, s)


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_observation_offers_no_moves_to_a_seat_that_has_chosen(players: int) -> None:
    """In a simultaneous phase, a seat that has already allocated (or declared) has no
    decision: its observation must say so, as Game.legal_moves(seat) does."""
    game = Game(RulesConfig(players=players), seed=players)
    rng = random.Random(players)
    last = players - 1
    game.apply(random_move(game, last, rng), last)
    assert game.phase is Phase.ALLOCATE and last not in game.pending_seats()
    assert game.legal_moves(last) == []
    assert game.observation(last).legal_moves() == []
    for s in range(players - 1):
        game.apply(random_move(game, s, rng), s)
    game.apply(Declare(True), last)
    assert game.phase is Phase.WEATHER and game.legal_moves(last) == []
    assert game.observation(last).legal_moves() == []


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_same_seed_same_game(players: int) -> None:
    """A game is a pure function of its seed and moves (needed for replay and tests)."""
    a = play_random_game(RulesConfig(players=players), 99)
    b = play_random_game(RulesConfig(players=players), 99)
    assert [r.tricks for r in a.rounds] == [r.tricks for r in b.rounds]
    assert a.result() == b.result()
