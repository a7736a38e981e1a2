"""The search and the third shooting star (issue 36, item 3): positions where the answer is
decided by the stars, checked by exact scoring before the search is asked.

Every position is built by playing a scripted game (no seat ever declares good weather, so
every sky card won stays face up) and searched from its JSON position, as `csl best-move`
searches it. In most, the deciding seat D = 0 plays last in a trick whose sky card is a
shooting star, led by seat O = 1 with the top red of the round's last group; D holds no red
in that pile, only the top blue (which takes the star, "take") and a low green (which lets
O's red take it, "duck"). One trick is left after it, forced in every world: after a duck,
D takes its sky card with the top blue; after a take, D leads the low green and one of the
other seats, which only hold blues now, takes it. So each move's outcome is fixed in every
world the search can sample, up to who takes the last sky card after a take: `outcome`
scores each such ending with the game's scoring. In the last case the star is the next
trick's and D must keep its top blue for it (`_keep_group`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence

import pytest

from csl_ai.game import Game, GameResult, Phase
from csl_ai.moves import Allocate, Declare, Play
from csl_ai.notation import BLUE, GREEN, RED, card_index, parse_sky
from csl_ai.position import observation_to_position, position_from_dict, position_to_json
from csl_ai.rules import Kind, RulesConfig, Side
from csl_ai.scoring import score_tallies
from csl_ai.search import SearchLimit, SearchResult, search

D, O = 0, 1
"""The deciding seat, and the seat that leads (and, unless D takes it, wins) the star's trick."""
ITERATIONS = 3000
SEEDS = (1, 2, 3)

SIDE_B_STAR = (Side.A, Side.A, Side.A, Side.B)
ALL_A = (Side.A, Side.A, Side.A, Side.A)


# --- building a position by playing a scripted game --------------------------------------------


GroupScript = Callable[[int, int], list[dict[int, int]]]
"""(players, group index) -> the plays of the decision round's last group."""


def _tokens(text: str) -> list[tuple[str, int | None]]:
    """'C2@0 *@1 * L2' -> [('C2', 0), ('*', 1), ('*', None), ('L2', None)]."""
    out: list[tuple[str, int | None]] = []
    for token in text.split():
        sky, _, winner = token.partition("@")
        out.append((sky, int(winner) if winner else None))
    return out


def _sky_order(rules: RulesConfig, lines: Sequence[Sequence[str]]) -> list[int]:
    """The sky order dealing these lines first (each card the lowest unused id of its kind
    and count), then every card left in id order."""
    free: dict[object, list[int]] = {}
    for i, card in enumerate(rules.game_deck.cards):
        free.setdefault(card, []).append(i)
    order = []
    for line in lines:
        for text in line:
            ids = free[parse_sky(text)]
            assert ids, f"the deck has no {text} left"
            order.append(ids.pop(0))
    order += sorted(i for ids in free.values() for i in ids)
    return order


def _generated_group(n: int, group: int, winners: Sequence[int | None]) -> list[dict[int, int]]:
    """The plays of a group's 3 tricks with these winners: trick j of the group is played
    in colour (blue, red, green)[j] with ranks n*group+1 .. n*group+n, the winner holding the
    top one; every pile holds one card of each colour, so every play follows suit."""
    tricks = []
    for j, winner in enumerate(winners):
        colour = (BLUE, RED, GREEN)[j]
        ranks = iter(range(n * group + 1, n * group + n))
        tricks.append({
            seat: card_index(colour, n * group + n if seat == winner else next(ranks)) for seat in range(n)
        })
    return tricks


def _star_group(n: int, group: int) -> list[dict[int, int]]:
    """The last group of the decision round: O leads and wins its first trick with the top
    green, then leads the top red in the star's trick, which every other seat follows but D,
    who holds the top blue and a low green; seat 3 (4 players) or 2 (3 players) showed no
    green in the first trick. The third trick is left to be played."""
    r = [n * group + k for k in range(1, n + 1)]

    def c(colour: int, rank: int) -> int:
        return card_index(colour, rank)

    if n == 4:
        return [
            {O: c(GREEN, r[3]), 2: c(GREEN, r[2]), 3: c(RED, r[0]), D: c(GREEN, r[1])},
            {O: c(RED, r[3]), 2: c(RED, r[2]), 3: c(RED, r[1]), D: c(BLUE, r[3])},
            {O: c(BLUE, r[2]), 2: c(BLUE, r[1]), 3: c(BLUE, r[0]), D: c(GREEN, r[0])},
        ]
    assert n == 3
    return [
        {O: c(GREEN, r[2]), 2: c(RED, r[0]), D: c(GREEN, r[1])},
        {O: c(RED, r[2]), 2: c(RED, r[1]), D: c(BLUE, r[2])},
        {O: c(BLUE, r[1]), 2: c(BLUE, r[0]), D: c(GREEN, r[0])},
    ]


def _keep_group(n: int, group: int) -> list[dict[int, int]]:
    """A last group (4 players) whose star is its second trick: O leads its top blue but
    one, seats 2 and 3 show no blue (they discard greens), and D, holding the top blue, a
    low blue and the top green, must follow blue: the top blue now, or the low one to keep
    the top blue for the star's trick."""
    assert n == 4
    r = [n * group + k for k in range(1, n + 1)]

    def c(colour: int, rank: int) -> int:
        return card_index(colour, rank)

    return [
        {O: c(BLUE, r[2]), 2: c(GREEN, r[2]), 3: c(GREEN, r[1]), D: c(BLUE, r[0])},
        {O: c(BLUE, r[1]), 2: c(RED, r[2]), 3: c(GREEN, r[0]), D: c(BLUE, r[3])},
        {O: c(RED, r[3]), 2: c(RED, r[1]), 3: c(RED, r[0]), D: c(GREEN, r[3])},
    ]


def _play_round(game: Game, tricks: Sequence[dict[int, int]], winners: Sequence[int | None]) -> None:
    """Deal the round whose plays are `tricks` (each seat's piles follow from them), nobody
    bets, and play them; a trick with winner None is the decision: play stops at D's turn."""
    n = game.players
    sizes = game.rules.spec.group_sizes
    piles: list[list[int]] = [[0] * len(sizes) for _ in range(n)]
    t = 0
    for g, size in enumerate(sizes):
        for _ in range(size):
            for seat, card in tricks[t].items():
                piles[seat][g] |= 1 << card
            t += 1
    game.deal([sum(p) for p in piles])
    for seat in range(n):
        game.apply(Allocate(tuple(piles[seat])), seat)
    for seat in range(n):
        game.apply(Declare(False), seat)
    for t, (plays, winner) in enumerate(zip(tricks, winners, strict=True)):
        while not (game.rounds[-1].tricks and game.rounds[-1].tricks[-1].index == t
                   and game.rounds[-1].tricks[-1].complete):
            if winner is None and game.to_move == D:
                return
            game.apply(Play(plays[game.to_move]))
        assert game.rounds[-1].tricks[t].winner == winner, (game.round, t)


def build(
    players: int, sides: Sequence[Side], rounds: Sequence[str], group: GroupScript | None = None
) -> Game:
    """The game at D's decision. rounds: one line per round played, tokens SKY@WINNER in
    line order; the last is the decision round, whose last group's plays are `group`'s
    (default _star_group): its tricks from the decision on are written without a winner,
    and O wins the trick before (so O leads the next). Later rounds get the deck's other
    cards."""
    rules = RulesConfig(players=players, sides=tuple(sides))  # type: ignore[arg-type]
    lines = [_tokens(text) for text in rounds]
    spec = rules.spec
    tricks_per_round = sum(spec.group_sizes)
    assert all(len(line) == tricks_per_round for line in lines)
    winners_now = [w for _s, w in lines[-1]]
    decision = winners_now.index(None)
    assert set(winners_now[decision:]) == {None} and winners_now[decision - 1] == O
    assert decision >= tricks_per_round - 3
    game = Game(rules, seed=0, sky_order=_sky_order(rules, [[s for s, _w in line] for line in lines]),
                auto_deal=False)
    for k, line in enumerate(lines):
        winners = [w for _s, w in line]
        groups = len(spec.group_sizes) - (1 if k == len(lines) - 1 else 0)
        tricks = [play for g in range(groups)
                  for play in _generated_group(players, g, winners[3 * g:3 * g + 3])]
        if k == len(lines) - 1:
            tricks += (group or _star_group)(players, len(spec.group_sizes) - 1)
        _play_round(game, tricks, winners)
    assert game.phase is Phase.PLAY and game.to_move == D
    assert game.current_trick is not None and game.current_trick.index == decision
    return game


def star_moves(game: Game) -> tuple[Play, Play]:
    """(take, duck): D's top blue and its low green, its only legal moves."""
    n, last_group = game.players, len(game.rules.spec.group_sizes) - 1
    plays = _star_group(n, last_group)
    take, duck = Play(plays[1][D]), Play(plays[2][D])
    assert set(game.legal_moves(D)) == {take, duck}
    assert set(game.observation(D).legal_moves()) == {take, duck}
    return take, duck


# --- exact outcomes ---------------------------------------------------------------------------


def outcome(game: Game, *winners: int) -> GameResult:
    """The final result of the game at the decision (in its last round) when the tricks
    left (the one under way included) go to these winners, by the game's scoring."""
    rules, n = game.rules, game.players
    deck = rules.game_deck.cards
    elements = [[0] * len(Kind) for _ in range(n)]
    cards = [0] * n
    line = game.rounds[-1].line
    assert len(winners) == len(line) - sum(1 for t in game.rounds[-1].tricks if t.winner is not None)
    won = [(t.winner, t.sky) for r in game.rounds for t in r.tricks if t.winner is not None]
    won += list(zip(winners, line[len(line) - len(winners):], strict=True))
    for seat, sky in won:
        assert seat is not None and sky is not None
        elements[seat][deck[sky].kind] += deck[sky].count
        cards[seat] += 1
    return score_tallies(rules, elements, cards, [0] * n, [0] * n)


def played_out(game: Game, move: Play, seed: int = 0) -> GameResult:
    """The game after D plays move, every later decision by random legal moves (the rest of
    the round is forced)."""
    copy = game.copy()
    copy.apply(move, D)
    rng = random.Random(seed)
    while not copy.is_over:
        if copy.phase is Phase.DEAL:
            copy.deal()
            continue
        seat = rng.choice(copy.pending_seats())
        copy.apply(rng.choice(copy.legal_moves(seat)), seat)
    return copy.result()


def check_last_round(game: Game, take: Play, duck: Play) -> tuple[list[GameResult], GameResult]:
    """(the results after a take, one per seat that may take the last trick; the result
    after a duck), checked against the real game played out both ways."""
    others = [s for s in range(game.players) if s != D]
    after_take = [outcome(game, D, s) for s in others]
    after_duck = outcome(game, O, D)
    assert played_out(game, take) in after_take
    assert played_out(game, duck) == after_duck
    return after_take, after_duck


Policy = Callable[[Game, int], "list[Play] | None"]


def endings(game: Game, policy: Policy) -> list[Game]:
    """The game at the end of the round in every way the round can be played out from here:
    each seat plays the moves policy(game, seat) gives, or any legal move where it gives None."""
    if game.phase is not Phase.PLAY:
        return [game]
    seat = game.to_move
    moves = policy(game, seat)
    out = []
    for move in game.legal_moves(seat) if moves is None else moves:
        assert game.is_legal(move, seat)
        copy = game.copy()
        copy.apply(move, seat)
        out += endings(copy, policy)
    return out


# --- the search -------------------------------------------------------------------------------


def searched(game: Game, seed: int) -> SearchResult:
    """D's decision searched as `csl best-move` searches it: from the position's JSON text,
    with the default settings."""
    obs = game.observation(D)
    position = position_from_dict(json.loads(position_to_json(observation_to_position(obs))))
    assert position == obs
    return search(position, SearchLimit(iterations=ITERATIONS, seed=seed))


def assert_chooses(result: SearchResult, best: Play, other: Play) -> None:
    by_move = {m.move: m for m in result.moves}
    assert set(by_move) == {best, other}
    summary = {str(m.move): (m.visits, round(m.win_probability, 3)) for m in result.moves}
    assert result.best_move == best, summary
    assert by_move[best].win_probability > by_move[other].win_probability, summary


# --- 1. deny, side B ----------------------------------------------------------------------------

DENY_LAST = {
    # D (seat 0) gathers C2 C2 C2 S2 L2 L2: candy 8 (its 6 candies against 3 + 5 + 0),
    # spider 10, leopard 20: 38. Seat 1 holds two stars (-10) and two leopards; seats 2
    # and 3 end with 3..5 candies, 6 spiders and 3..5 leopards (at most 4 points).
    4: (
        "*@1 C2@0 C1@2 S1@3 L1@2 *@1 S2@0 C1@3 S1@2",
        "C2@0 L2@0 C1@2 S1@3 S2@2 L1@3 C1@3 S1@2 L1@2",
        "C2@0 L2@0 C1@2 S1@3 S2@3 L1@3 C1@3 S1@2 L1@2",
        "C1@2 S1@2 L1@3 C1@2 S1@3 L1@1 L1@1 * L2",
    ),
    # The same hoard for D: 8 + 10 + 20. Seat 1: two stars, 4 candies; seat 2 all the rest
    # (4 candies, 12 spiders, 8..10 leopards: 1 point).
    3: (
        "*@1 C2@0 C1@1 S1@2 L1@2 S1@2",
        "*@1 C2@0 C1@1 S1@2 L1@2 S2@2",
        "C2@0 L2@0 S1@2 L1@2 S1@2 L1@2",
        "L2@0 S2@0 C1@2 S1@2 L1@2 S2@2",
        "C1@2 C1@2 S1@2 L1@2 S1@2 L1@2",
        "C1@2 L1@2 C1@1 C1@1 * L2",
    ),
}


@pytest.mark.parametrize("players", [4, 3])
def test_deny_side_b_last_round(players: int) -> None:
    """Last round, star side B, seat 1 holds two stars and leads the third's trick. Taking
    it leaves D first by 28+ points whoever takes the last L2; ducking would win D that L2
    (six leopards, +10 points) but gives seat 1 the third star: an outright win."""
    game = build(players, SIDE_B_STAR, DENY_LAST[players])
    take, duck = star_moves(game)
    after_take, after_duck = check_last_round(game, take, duck)
    assert all(r.winners == (D,) and r.outright is None for r in after_take)
    assert after_duck.outright == O and after_duck.winners == (O,)
    assert after_duck.scores[D].total == max(r.scores[D].total for r in after_take) + 10
    for seed in SEEDS:
        assert_chooses(searched(game, seed), take, duck)


DENY_EARLIER = {
    # Round 2 of 4: D holds C2 C2 S2 L2 (about 23 points), seat 1 two stars and two
    # leopards, seats 2 and 3 a few cards each.
    2: (
        "*@1 C2@0 C1@2 S1@3 L1@2 *@1 S2@0 C1@3 S1@2",
        "C2@0 L2@0 C1@2 S1@3 S2@2 L1@1 L1@1 * L2",
    ),
    # Round 3 of 4: D holds C2 C2 C2 S2 L2 L2 (38 points), seat 1 two stars and two leopards.
    1: (
        *DENY_LAST[4][:2],
        "C2@0 L2@0 C1@2 S1@3 S2@3 L1@1 L1@1 * L2",
    ),
}


@pytest.mark.parametrize("rounds_left", [2, 1])
def test_deny_side_b_earlier_round(rounds_left: int) -> None:
    """As above with rounds still to come, where the search reads the learned value at the
    round's end: ducking gives seat 1 three face-up stars, an outright win whatever follows;
    after the take no seat can ever hold three stars."""
    game = build(4, SIDE_B_STAR, DENY_EARLIER[rounds_left])
    assert game.rules.spec.rounds - 1 - game.round == rounds_left
    take, duck = star_moves(game)
    for seed in range(3):
        assert played_out(game, duck, seed).outright == O
        assert played_out(game, take, seed).outright is None
    for seed in SEEDS:
        assert_chooses(searched(game, seed), take, duck)


# --- 2. take, side B ----------------------------------------------------------------------------

TAKE_B = (
    # D holds two stars and nothing else (-10). Seat 2: 8 candies (6 points), 2 spiders
    # (10), 4 leopards (20): 36. Seat 3: 6 candies, 10 spiders, 8 leopards (1); seat 1 two
    # leopards (10). The last sky card is S2: after a duck D ends on -10 + 10 = 0.
    "*@0 C2@2 C1@3 S1@3 L1@3 *@0 L2@2 C1@3 S1@3",
    "C2@2 L2@2 C1@3 S1@3 S2@2 L1@3 C1@3 S1@3 L1@3",
    "C2@2 C1@2 C1@2 S1@3 S2@3 L1@3 C1@3 S1@3 L1@3",
    "L2@3 S1@3 L1@3 C1@3 S1@3 L1@1 L1@1 * S2",
)


def test_take_side_b_last_round() -> None:
    """Last round, star side B, D holds two stars and can take the third: an outright win.
    Ducking would win D the last S2 (+10) but leave it at 0 points, far behind seat 2."""
    game = build(4, SIDE_B_STAR, TAKE_B)
    take, duck = star_moves(game)
    after_take, after_duck = check_last_round(game, take, duck)
    assert all(r.outright == D and r.winners == (D,) for r in after_take)
    assert after_duck.outright is None and D not in after_duck.winners
    assert after_duck.scores[D].total == 0
    for seed in SEEDS:
        assert_chooses(searched(game, seed), take, duck)


def test_take_side_b_earlier_round() -> None:
    """The same in round 3 of 4: the third star is an outright win whatever follows."""
    game = build(4, SIDE_B_STAR, (*TAKE_B[:2], "C2@2 C1@2 C1@2 S1@3 S2@3 L1@1 L1@1 * S2"))
    assert game.rules.spec.rounds - 1 - game.round == 1
    take, duck = star_moves(game)
    for seed in range(3):
        assert played_out(game, take, seed).outright == D
        assert played_out(game, duck, seed).outright is None
    for seed in SEEDS:
        assert_chooses(searched(game, seed), take, duck)


# --- 3. side A ----------------------------------------------------------------------------------

TAKE_A = (
    # D holds two stars (-5) and L2 L2 (20). Seat 2: 8 candies (6), 2 spiders (10), 4
    # leopards (20): 36; seat 3: 4 candies (2), 10 spiders (1), 6 leopards (30): 33; seat 1
    # two candies. The last sky card is S2: after a duck D has 20 + 10 - 5 = 25.
    "*@0 L2@0 C2@2 C1@3 S1@3 *@0 L2@0 L1@3 S1@3",
    "C2@2 C2@2 C1@2 S1@3 S2@2 L1@3 C1@3 S1@3 L1@3",
    "L2@2 L1@2 C1@2 S1@3 S2@3 L1@3 C1@3 S1@3 L1@3",
    "L1@2 S1@3 L1@3 C1@3 S1@3 C1@1 C1@1 * S2",
)


def test_take_third_star_side_a() -> None:
    """Last round, star side A (twice): the third star turns D's 20 - 5 into 20 + 40 = 60,
    first whoever takes the last card; ducking wins D the S2 instead (25 points): behind
    seats 2 (36) and 3 (33)."""
    game = build(4, ALL_A, TAKE_A)
    take, duck = star_moves(game)
    after_take, after_duck = check_last_round(game, take, duck)
    assert all(r.winners == (D,) and r.scores[D].total == 60 for r in after_take)
    assert after_duck.scores[D].total == 25 and D not in after_duck.winners
    for seed in SEEDS:
        assert_chooses(searched(game, seed), take, duck)


AVOID_A = (
    # D holds one star, C2 C2 C2 (6 candies against 2 + 3 + 3: 8 points), L2 L2 (20) and
    # S2 S2 S2 (six spiders: 1): 29. Seat 3 holds the other star, 3 candies (2), one spider
    # (3) and 4 leopards (20): 25. Seat 2: 3 candies, 6 spiders, 3 leopards (3); seat 1: two
    # candies and 3 leopards (0). The last sky card is S1, worth nothing to D (7 spiders: 1).
    "*@0 C2@0 L2@0 S2@0 *@3 C1@3 L2@3 S1@3 L1@1",
    "C2@0 L2@0 S2@0 C1@3 L1@3 L1@1 C1@2 S1@2 L1@2",
    "C2@0 S2@0 C1@3 L1@3 L1@1 C1@2 S1@2 L1@2 S1@2",
    "C1@2 S1@2 L1@2 S1@2 S1@2 C1@1 C1@1 * S1",
)


def test_avoid_second_star_side_a() -> None:
    """Last round, star side A: seat 3 holds a star, so D (one star) can never have three;
    a second star costs it 5 points, 29 - 5 = 24 behind seat 3's 25 (or 32 with the last
    S1), while ducking keeps 29, first."""
    game = build(4, ALL_A, AVOID_A)
    take, duck = star_moves(game)
    after_take, after_duck = check_last_round(game, take, duck)
    assert all(r.scores[D].total == 24 and D not in r.winners for r in after_take)
    assert after_duck.scores[D].total == 29 and after_duck.winners == (D,)
    for seed in SEEDS:
        assert_chooses(searched(game, seed), duck, take)


DENY_LATER = {
    # The cards and seats of DENY_LAST[4] and DENY_EARLIER[1], the last group reordered: L2,
    # then the star, then L1.
    0: (*DENY_LAST[4][:3], "C1@2 S1@2 L1@3 C1@2 S1@3 L1@1 L2 * L1"),
    1: (*DENY_LAST[4][:2], "C2@0 L2@0 C1@2 S1@3 S2@3 L1@1 L2 * L1"),
}


@pytest.mark.parametrize("rounds_left", [0, 1])
def test_deny_side_b_star_in_a_later_trick(rounds_left: int) -> None:
    """Star side B, seat 1 (two stars) leads B11 for the L2 and the star is the next
    trick's. B12 wins D the L2 (six leopards, +10) but then seat 1 takes the star with its
    B10 whatever D leads (B10 follows B9 and trumps G12): an outright win. B9 keeps B12 for
    the star's trick, which D then takes in every world: seats 2 and 3 showed no blue in
    this pile, so B10 is seat 1's; whatever seat 1 leads, D plays B12 (blue or red led) or
    G12, the top green (green led: the only blue left is the leader's). In the last round D
    is then first on points whoever takes the L2 and the last L1."""
    game = build(4, SIDE_B_STAR, DENY_LATER[rounds_left], _keep_group)
    assert game.rules.spec.rounds - 1 - game.round == rounds_left
    keep, spend = Play(card_index(BLUE, 9)), Play(card_index(BLUE, 12))
    assert set(game.legal_moves(D)) == set(game.observation(D).legal_moves()) == {keep, spend}
    b10 = Play(card_index(BLUE, 10))

    def d_takes_the_star(g: Game, seat: int) -> list[Play] | None:
        return [spend] if seat == D and g.is_legal(spend, D) else None

    def o_takes_the_star(g: Game, seat: int) -> list[Play] | None:
        return [b10] if seat == O and g.is_legal(b10, O) else None

    kept, spent = game.copy(), game.copy()
    kept.apply(keep, D)
    spent.apply(spend, D)
    star = game.current_trick.index + 1  # type: ignore[union-attr]
    assert all(g.rounds[-1].tricks[star].winner == D for g in endings(kept, d_takes_the_star))
    assert all(g.rounds[-1].tricks[star].winner == O for g in endings(spent, o_takes_the_star))
    if rounds_left == 0:
        assert all(outcome(game, s, D, t).winners == (D,) for s in range(4) for t in range(4))
        assert all(g.result().outright == O for g in endings(spent, o_takes_the_star))
    for seed in SEEDS:
        assert_chooses(searched(game, seed), keep, spend)
