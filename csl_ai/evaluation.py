"""The hand evaluation behind the heuristic agent, the zoo and the search's model of how
a sensible seat splits its hand.

Everything here reads only one seat's observation. Sky cards are valued in points of
(my score - the mean of the others' scores) from the seat's tallies (`HandEvaluator.sky_value`);
each card of the hand gets a chance to win the trick it is played to (`card_powers`);
every split of the hand into the round's piles is scored by the tricks each pile can
expect to win times the worth of its group, and a second score rates each split for
losing every trick after a good-weather bet (`split_values`, `allocation_plans`).

`HandEvaluator` holds the tuned constants (`HeuristicParams`) and a few memos; its
methods are the hooks that `csl_ai.heuristic.HeuristicAgent` and the zoo's styles build
on (a style changes the worth of a sky card or of a split by overriding one). The
split tables (`split_table`, `pile_masks`, `split_piles`) and the spider and leopard
points (`kind_points_table`, `expected_points`) are plain functions.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Final

import numpy as np

from csl_ai import _core
from csl_ai.bits import bits, mask_of
from csl_ai.errors import CslError
from csl_ai.game import Observation, Phase, PublicView
from csl_ai.notation import BLUE, MAX_RANK, N_RAIN
from csl_ai.rules import Kind, RulesConfig, Side, SkyCard, StarOption


@dataclass(frozen=True)
class HeuristicParams:
    """The tuned constants of the hand evaluation (`HandEvaluator`) and of the heuristic
    agent's card play and bets (`csl_ai.heuristic.HeuristicAgent`), in one place.

    Values of sky cards are in points of (my score - the mean of the others' scores);
    probabilities are rough per-card estimates, not exact.
    """

    candy_bonus: float = 1.5
    """Added to every candy's marginal points: candies keep paying as the others collect."""
    candy_future: float = 1.0
    """Further candy bonus, scaled by the share of sky cards still to come."""
    star_chance: float = 0.3
    """Chance of collecting each further shooting star a seat still needs for all three."""
    star_b_win: float = 60.0
    """Worth of an outright win (3 stars on side B) in points."""
    star_a_floor: float = 20.0
    """Least worth assumed for the candy+spider+leopard points that 3 stars on side A double."""
    declared_fresh: float = -12.0
    """Worth of winning a sky card after declaring good weather with nothing won yet."""
    declared_failed: float = -2.0
    """Worth of winning a sky card after the good-weather bet is already lost."""
    blue_decay: tuple[float, ...] = (0.82, 0.74, 0.86, 0.82)
    """Chance a blue wins the trick it is played to is this to the power of the higher
    blues others hold (the top blue always wins); one value per player count 2..5,
    fitted to heuristic self-play."""
    side_top: tuple[float, ...] = (0.5, 0.33, 0.22, 0.17)
    """Chance the top red or green card wins the trick it is played to, per player count."""
    side_decay: tuple[float, ...] = (0.72, 0.58, 0.8, 0.75)
    """Factor per higher card of its colour others hold, per player count."""
    trump_synergy: float = 0.12
    """Extra expected tricks per blue in a pile that lacks a red or green (it can trump)."""
    top_k_share: float = 0.5
    """Blend between winning the best sky cards of a group (1) and an average one (0)."""
    duck_share: float = 0.3
    """Share of a sky card's negative worth counted when planning: unwanted tricks can often be ducked."""
    one_colour_danger: float = 1.3
    """Danger factor for a pile of one colour (no discard is possible in it)."""
    weather_risk_scale: float = 0.65
    """Scale on the summed per-card risks: cards' dangers are not independent (a declarer
    picks when to shed each card), fitted so the chance of a clean round matches self-play."""
    weather_points: float = 7.0
    """Worth of an honoured good weather card."""
    face_down_points: float = 2.0
    """Points lost per sky card won after declaring (the card is turned face down)."""
    weather_margin: float = 0.0
    """Good weather is declared when its worth beats normal play by more than this."""
    future_share: float = 1.0
    """Spider and leopard are valued by the table's mean over the elements still to come,
    of which a seat expects this share times 1/players (fitted in self-play: 1.0 beats
    0.5 and 0.8 clearly, 1.3 is no better)."""
    hold_ok: float = 0.75
    """A following winner this likely to hold is good enough: the cheapest such is played."""
    lead_min: float = 0.2
    """Below this chance of holding, a lead for a wanted sky card saves strength instead."""
    void_chance: float = 0.35
    """Chance a later seat is out of the led colour and so can trump."""


DEFAULT_PARAMS: Final = HeuristicParams()
"""The tuned constants of the heuristic agent (and of the search's model of a sensible seat)."""


@cache
def kind_points_table(kind: Kind, side: int) -> tuple[int, ...]:
    """Points of spider or leopard (`kind`) on `side` (0 for A, 1 for B) by element count
    0..20, read from the core's scoring."""
    table = []
    for n in range(21):
        elems = [0, 0, 0, 0]
        elems[kind] = n
        rows, _, _ = _core.score_tallies(
            2, (side, side, side, side), 0, [tuple(elems), (0, 0, 0, 0)], [0, 0], [0, 0], [0, 0]
        )
        table.append(rows[0][int(kind)])
    return tuple(table)


@cache
def expected_points(tab: tuple[int, ...], have: int, left: int, q: float) -> float:
    """Mean points of the points table `tab` (`kind_points_table`) at have + F elements,
    F ~ Binomial(left, q) more elements (the count is capped at the table's end)."""
    total = 0.0
    for f in range(left + 1):
        total += (
            math.comb(left, f) * q**f * (1 - q) ** (left - f) * tab[min(have + f, len(tab) - 1)]
        )
    return total


@cache
def _count_gain(kind: int, side: int, have: int, count: int, left: int, q: float) -> float:
    """Mean points a spider or leopard card of `count` elements adds to `have` of them,
    with `left` more still to come of which each is had with chance q."""
    tab = kind_points_table(kind, side)
    return expected_points(tab, have + count, left, q) - expected_points(tab, have, left, q)




def _colour(card: int) -> int:
    return card // MAX_RANK


_COLOUR_MASK: Final = tuple(((1 << MAX_RANK) - 1) << (MAX_RANK * c) for c in range(3))


_ABOVE: Final = tuple(
    _COLOUR_MASK[card // MAX_RANK] & ~((1 << (card + 1)) - 1) for card in range(N_RAIN)
)
"""Per card, the mask of the cards of its colour ranked above it."""


def higher_same(card: int, pool: int) -> int:
    """How many cards of the mask pool are of card's colour and rank above it."""
    return (pool & _ABOVE[card]).bit_count()


_MEMO_SIZE: Final = 256
"""Entries a memo of this module keeps before it starts afresh."""


class _RulesFacts:
    """What `HandEvaluator.table` reads from a game's rules, fetched once per rules
    object (`_rules_facts`): the deck by sky card id, each card's kind and count as
    ints, the sides as 0/1, and a memo of the elements left on the sky cards not yet won."""

    __slots__ = ("rules", "deck", "kinds", "counts", "sides", "star_twice", "_unclaimed")

    def __init__(self, rules: RulesConfig) -> None:
        self.rules = rules
        self.deck: tuple[SkyCard, ...] = rules.game_deck.cards
        self.kinds = tuple(int(card.kind) for card in self.deck)
        self.counts = tuple(card.count for card in self.deck)
        a, b, c, d = (0 if side is Side.A else 1 for side in rules.sides)
        self.sides = (a, b, c, d)
        self.star_twice = rules.star_option is StarOption.TWICE
        self._unclaimed: dict[
            tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, int, int, int], int]
        ] = {}

    def unclaimed(
        self, line_rest: tuple[int, ...], undealt: tuple[int, ...]
    ) -> tuple[tuple[int, int, int, int], int]:
        """(elements of each kind, shooting stars) on the sky cards not yet won: the rest
        of the round's line and the cards not yet dealt."""
        key = (line_rest, undealt)
        found = self._unclaimed.get(key)
        if found is None:
            elements = [0, 0, 0, 0]
            stars = 0
            for sky in (*line_rest, *undealt):
                kind = self.kinds[sky]
                elements[kind] += self.counts[sky]
                stars += kind == Kind.STAR
            if len(self._unclaimed) >= _MEMO_SIZE:
                self._unclaimed.clear()
            found = (elements[0], elements[1], elements[2], elements[3]), stars
            self._unclaimed[key] = found
        return found


_FACTS: dict[int, _RulesFacts] = {}
"""`_RulesFacts` by id of their rules (the facts keep the rules alive, so ids stay theirs)."""


def _rules_facts(rules: RulesConfig) -> _RulesFacts:
    """The `_RulesFacts` of rules, made on first use."""
    facts = _FACTS.get(id(rules))
    if facts is None or facts.rules is not rules:
        if len(_FACTS) >= _MEMO_SIZE:
            _FACTS.clear()
        facts = _FACTS[id(rules)] = _RulesFacts(rules)
    return facts


@dataclass
class SeatTable:
    """Public tallies as one seat sees them, projected to the end of the round
    (`HandEvaluator.table`); the evaluation's memos for this position live on it too."""

    obs: Observation
    view: PublicView
    elems: list[list[int]]
    """Face-up elements per seat, plus this round's for seats whose cards stay face up."""
    round_won: list[int]
    """Sky cards each seat has won this round."""
    declared: list[bool | None]
    """Each seat's good-weather declaration this round (None while undecided)."""
    unclaimed_stars: int
    """Shooting stars on sky cards not yet won."""
    unclaimed_elements: tuple[int, int, int, int]
    """Elements of each kind on sky cards not yet won (this round's rest and later rounds)."""
    future: float
    """Share of the game's sky cards not yet won (0 in the last trick)."""
    sides: tuple[int, int, int, int]
    """Side of candy, spider, leopard and star: 0 for A, 1 for B."""
    star_twice: bool
    """Whether three stars on side A count the other kinds twice (`StarOption.TWICE`)."""
    values: dict[int, float] = field(default_factory=dict)
    """`HandEvaluator.sky_value` by sky card id, as computed."""
    deck: tuple[SkyCard, ...] = ()
    """The game's sky cards by id (``obs.rules.game_deck.cards``, fetched once)."""
    relative_now: float | None = None
    """This seat's `_relative_points` at the current elements, once computed."""
    elements: tuple[tuple[int, ...], ...] | None = None
    """`elems` as tuples, once built (`_elements`)."""
    kind_points: tuple[int, ...] | None = None
    """`HandEvaluator.kind_points` of every seat, once computed."""


class HandEvaluator:
    """One seat's evaluation of its hand and of the sky cards, under `params`.

    - Sky cards are valued in points from the seat's current tallies: candy by its
      marginal points against the others plus a bonus (always somewhat good); spider and
      leopard by how the card moves the table's mean over the elements still to come
      (a seat expecting 1/players of them), so overshooting a count is seen coming;
      shooting stars by side, by whether all three are still reachable for it, and by
      denying a rival who could reach them.
    - Splits: every split of the hand is scored by expected tricks of each pile (from
      card strength against the cards others hold) times the worth of its group; a
      second score rates each split for losing every trick after a good-weather bet.

    An evaluator remembers the sky card values of the last table seen before any trick
    of a round was won and the card powers of the last hand, so one evaluator should
    serve one seat at a time (a fresh one costs nothing). Subclasses change a style by
    overriding a method (`sky_value`, `won_value`, `split_values`).
    """

    def __init__(self, params: HeuristicParams = DEFAULT_PARAMS) -> None:
        self.params = params
        self._values_memo: tuple[tuple[object, ...], dict[int, float]] | None = None
        """(what the sky card values depend on, the values) of the last table seen before
        any trick of a round was won: the allocation, the weather bet and the first trick
        of a round value the same table."""
        self._powers_memo: tuple[tuple[object, ...], dict[int, float]] | None = None
        """(hand, rules, params) and `card_powers` of the last hand."""

    # --- what the table looks like ----------------------------------------------------
    def table(self, obs: Observation) -> SeatTable:
        """The public tallies as obs's seat sees them, with the sky cards this round has
        already given out counted for their winners (unless turned face down)."""
        view = obs.public_view()
        core = view.core
        n = obs.players
        facts = _rules_facts(obs.rules)
        kinds = facts.kinds
        counts = facts.counts
        current = obs.current
        elements = core.elements
        elems = [list(row) for row in elements]
        round_won = [0] * n
        declared = list(current.declarations)
        claimed_positions = 0
        as_core = True
        for trick in current.tricks:
            winner = trick.winner
            sky = trick.sky
            if winner is None or sky is None:
                continue
            claimed_positions += 1
            round_won[winner] += 1
            if declared[winner] is not True:
                elems[winner][kinds[sky]] += counts[sky]
                as_core = False
        unseen_sky = view.unseen_sky
        line_rest = current.line[claimed_positions:]
        unclaimed_elements, unclaimed_stars = facts.unclaimed(line_rest, unseen_sky)
        future = max(0, len(line_rest) + len(unseen_sky) - 1) / len(facts.deck)
        values: dict[int, float] = {}
        if not claimed_positions:
            key = (obs.rules, obs.seat, self.params, elements, line_rest, unseen_sky)
            memo = self._values_memo
            if memo is not None and memo[0] == key:
                values = memo[1]
            else:
                self._values_memo = (key, values)
        return SeatTable(
            obs=obs,
            view=view,
            elems=elems,
            round_won=round_won,
            declared=declared,
            unclaimed_stars=unclaimed_stars,
            unclaimed_elements=unclaimed_elements,
            future=future,
            sides=facts.sides,
            star_twice=facts.star_twice,
            values=values,
            deck=facts.deck,
            elements=elements if as_core else None,
        )

    # --- what a sky card is worth ------------------------------------------------------
    def sky_value(self, table: SeatTable, sky: int) -> float:
        """Worth to this seat of winning sky card `sky` (an id into the game's deck), before
        any weather bet; remembered on the table."""
        cached = table.values.get(sky)
        if cached is not None:
            return cached
        p = self.params
        card = table.deck[sky] if table.deck else table.obs.rules.game_deck.cards[sky]
        seat = table.obs.seat
        if card.kind is Kind.STAR:
            value = self.star_value(table)
        elif card.kind is Kind.CANDY:
            elements = _elements(table)
            mode = 0 if table.star_twice else 1
            if table.relative_now is None:
                table.relative_now = _relative_points(table.sides, mode, elements)[seat]
            row = elements[seat]
            after = (*elements[:seat], (row[0] + card.count, *row[1:]), *elements[seat + 1 :])
            value = _relative_points(table.sides, mode, after)[seat] - table.relative_now
            value = max(value, 0.0) + p.candy_bonus + p.candy_future * table.future
        else:
            kind = int(card.kind)
            left = max(0, table.unclaimed_elements[kind] - card.count)
            q = min(1.0, p.future_share / table.obs.players)
            have = table.elems[seat][kind]
            value = _count_gain(kind, table.sides[kind], have, card.count, left, q)
        table.values[sky] = value
        return value

    def star_value(self, table: SeatTable) -> float:
        """Worth of a shooting star: side points, the chance of all three, and denial."""
        p = self.params
        seat = table.obs.seat
        side_b = table.sides[Kind.STAR] == 1
        pair_cost = -10.0 if side_b else -5.0
        mine = table.elems[seat][Kind.STAR]
        rest = table.unclaimed_stars

        def worth_of_three(s: int) -> float:
            if side_b:
                return p.star_b_win
            base = max(float(self.kind_points(table, s)), p.star_a_floor)
            return 2 * base if table.star_twice else base

        def chance(have: int, left: int) -> float:
            need = 3 - have
            return p.star_chance**need if need <= left else 0.0

        def points(t: int) -> float:
            return pair_cost if t == 2 else 0.0

        w = worth_of_three(seat)
        value = points(mine + 1) - points(mine)
        if mine + 1 >= 3:
            value += w
        else:
            value += w * (chance(mine + 1, rest - 1) - chance(mine, rest))
        for s in range(table.obs.players):
            theirs = table.elems[s][Kind.STAR]
            if s != seat and theirs >= 1:
                value += worth_of_three(s) * chance(theirs, rest) / (1 if side_b else 2)
        return value

    def kind_points(self, table: SeatTable, seat: int) -> int:
        """Seat's candy, spider and leopard points at the table's elements."""
        if table.kind_points is None:
            table.kind_points = _kind_sums(table.sides, 0, _elements(table), 3)
        return table.kind_points[seat]

    def won_value(self, table: SeatTable, sky: int) -> float:
        """Worth of winning sky now, counting this seat's good-weather bet."""
        seat = table.obs.seat
        if table.declared[seat] is True:
            return (
                self.params.declared_fresh
                if table.round_won[seat] == 0
                else self.params.declared_failed
            )
        return self.sky_value(table, sky)

    # --- splits and the weather bet ---------------------------------------------------
    def card_powers(self, table: SeatTable) -> dict[int, float]:
        """Per card of the hand: the chance it wins the trick it is played to.

        Self-play showed nearly the same chances whether the holder tries to win or to
        lose, so one estimate serves both plans."""
        p = self.params
        obs = table.obs
        hand = obs.hand
        key = (hand, obs.rules, p)
        memo = self._powers_memo
        if memo is not None and memo[0] == key:
            return memo[1]
        others = obs.rules.spec.rain_cards & ~hand
        win: dict[int, float] = {}
        i = obs.players - 2
        blue_decay, side_top, side_decay = p.blue_decay[i], p.side_top[i], p.side_decay[i]
        for card in bits(hand):
            hi = (others & _ABOVE[card]).bit_count()
            if card // MAX_RANK == BLUE:
                win[card] = blue_decay**hi
            else:
                win[card] = side_top * side_decay**hi
        self._powers_memo = (key, win)
        return win

    def group_values(self, table: SeatTable) -> list[list[float]]:
        """Worth of each sky card of the round's line, best first, group by group."""
        spec = table.obs.rules.spec
        line = table.obs.current.line
        out = []
        start = 0
        for size in spec.group_sizes:
            out.append(
                sorted(
                    (self.sky_value(table, sky) for sky in line[start : start + size]),
                    reverse=True,
                )
            )
            start += size
        return out

    def ducked_group_values(self, table: SeatTable) -> list[list[float]]:
        """`group_values` as the split scores count them: a negative worth times
        ``params.duck_share`` (an unwanted trick can often be ducked)."""
        duck = self.params.duck_share
        return [[v if v > 0 else duck * v for v in group] for group in self.group_values(table)]

    def pile_scores(
        self, values: Sequence[float], cards: Sequence[int], win: Mapping[int, float]
    ) -> tuple[float, float, float]:
        """Scores of one pile of `cards` for a group whose sky cards are worth `values`
        (best first), with `win` from `card_powers`: (expected worth of the group's sky
        cards won, -log chance of winning none, expected tricks won while trying to lose)."""
        p = self.params
        colours = {_colour(c) for c in cards}
        blues = sum(1 for c in cards if _colour(c) == BLUE)
        lacks_side = not ({1, 2} <= colours)
        expected = sum(win[c] for c in cards) + (p.trump_synergy * blues if lacks_side else 0.0)
        expected = min(expected, float(len(values)))
        values = [v if v > 0 else p.duck_share * v for v in values]
        top = sum(v * min(1.0, max(0.0, expected - i)) for i, v in enumerate(values))
        mean = expected * sum(values) / len(values)
        worth = p.top_k_share * top + (1 - p.top_k_share) * mean
        factor = p.one_colour_danger if len(colours) == 1 else 1.0
        dangers = [min(0.99, win[c] * factor) for c in cards]
        risk = -sum(math.log(1 - d) for d in dangers)
        return worth, risk, sum(dangers)

    def split_values(self, table: SeatTable) -> tuple[np.ndarray, np.ndarray]:
        """(worth of normal play, worth of the good-weather plan) of every split of the hand,
        in `split_table` order. Scores are sums over piles: the card-only parts of each
        possible pile come from `_pile_parts` once per pile size, the group's worth from
        `_pile_worths`, and the splits are summed with numpy in `pile_scores`' order
        (one gather by `_split_picks`, then pile by pile)."""
        win = self.card_powers(table)
        sizes = table.obs.rules.spec.group_sizes
        hand = bits(table.obs.hand)
        values = self.group_values(table)
        parts = {size: self._pile_parts(hand, size, win) for size in dict.fromkeys(sizes)}
        keys = [(size, len(values[g])) for g, size in enumerate(sizes)]
        worths = {
            key: self._pile_worths(
                [values[g] for g in range(len(sizes)) if keys[g] == key], parts[key[0]][0]
            )
            for key in dict.fromkeys(keys)
        }
        seen = dict.fromkeys(worths, 0)
        pieces = []
        for key in keys:
            pieces.append(worths[key][seen[key]])
            seen[key] += 1
        pieces.extend(np.ravel(part) for part in parts.values())
        totals = _row_sum(np.concatenate(pieces).take(_split_picks(sizes)))
        return totals[0], self.weather_worth(totals[1], totals[2])

    def _pile_parts(self, hand: Sequence[int], size: int, win: Mapping[int, float]) -> np.ndarray:
        """Rows (expected tricks, -log chance of winning none, expected tricks while trying
        to lose) of every pile of `size` hand positions (`split_table`'s combos): the parts
        of `pile_scores` that do not depend on the group, by the same float operations in
        the same order, so the values are identical."""
        p = self.params
        picks, blues_lacking = _pile_indexes(tuple(_colour(c) for c in hand), size)
        powers = [win[c] for c in hand]
        plain = [min(0.99, w) for w in powers]
        single = [min(0.99, w * p.one_colour_danger) for w in powers]
        logs = [math.log(1 - d) for d in plain] + [math.log(1 - d) for d in single]
        parts = _row_sum(np.array((powers + powers, logs, plain + single)).take(picks))
        parts[0] += p.trump_synergy * blues_lacking
        np.negative(parts[1], out=parts[1])
        return parts

    def _pile_worths(self, groups: Sequence[Sequence[float]], expected: np.ndarray) -> np.ndarray:
        """Expected worth of each group's sky cards (``groups[g]``, best first, all of one
        length) won by piles that expect `expected` tricks: `pile_scores`' worth,
        vectorised over groups and piles (row g for ``groups[g]``)."""
        p = self.params
        length = len(groups[0])
        capped = np.minimum(expected, float(length))
        ducked = [[v if v > 0 else p.duck_share * v for v in vs] for vs in groups]
        rows = np.array([[*row, sum(row)] for row in ducked])
        shares = np.minimum(1.0, np.maximum(0.0, capped - _steps(length)))
        terms = rows[:, :length, None] * shares
        top = np.zeros((len(groups), len(expected)))
        for term in terms.transpose(1, 0, 2):
            top += term
        mean = capped * rows[:, length:] / length
        return p.top_k_share * top + (1 - p.top_k_share) * mean

    def allocation_values(self, obs: Observation) -> dict[tuple[int, ...], float]:
        """Every legal split of obs's hand (a tuple of pile masks) with the worth of its
        better plan (normal play or good weather), in points; the search orders the
        allocations it tries by it. CslError unless obs's seat is to allocate."""
        splits, worth, weather = self.allocation_plans(obs)
        return dict(zip(splits, np.maximum(worth, weather).tolist(), strict=True))

    def allocation_plans(self, obs: Observation) -> tuple[list[tuple[int, ...]], np.ndarray, np.ndarray]:
        """(every legal split of obs's hand as a tuple of pile masks, the worth of normal
        play with each, the worth of the good-weather plan with each), in points, in
        `split_table` order: the search's model of how a sensible seat splits its hand
        reads them. CslError unless obs's seat is to allocate."""
        if obs.phase is not Phase.ALLOCATE or obs.allocation is not None:
            raise CslError(
                f"no split to value: seat {obs.seat} is not to allocate in the "
                f"{obs.phase.value} phase"
            )
        worth, weather = self.split_values(self.table(obs))
        splits, masks = pile_masks(obs)
        columns = [masks[g][splits[:, g]].tolist() for g in range(len(masks))]
        return list(zip(*columns, strict=True)), worth, weather

    def weather_worth(self, risk: np.ndarray, tricks: np.ndarray) -> np.ndarray:
        """Worth of declaring good weather for plans with these summed pile risks and
        expected tricks (arrays alike): ``weather_points`` (7) times the chance of a clean
        round, less ``face_down_points`` (2) per expected sky card won."""
        p = self.params
        clean = np.exp(-p.weather_risk_scale * risk)
        return p.weather_points * clean - p.face_down_points * tricks

    def plan_values(self, table: SeatTable, piles: Sequence[int]) -> tuple[float, float]:
        """(worth of normal play, worth of declaring good weather) with these piles (one
        card mask per group, as `Allocate.piles`)."""
        win = self.card_powers(table)
        values = self.group_values(table)
        worth = risk = tricks = 0.0
        for g, pile in enumerate(piles):
            pile_worth, pile_risk, pile_tricks = self.pile_scores(values[g], bits(pile), win)
            worth += pile_worth
            risk += pile_risk
            tricks += pile_tricks
        weather = self.weather_worth(np.array((risk,)), np.array((tricks,)))
        return worth, float(weather[0])


def _elements(table: SeatTable) -> tuple[tuple[int, ...], ...]:
    """table.elems as tuples (built once per table)."""
    if table.elements is None:
        table.elements = tuple(map(tuple, table.elems))
    return table.elements


@lru_cache(maxsize=4096)
def _kind_sums(
    sides: tuple[int, ...], star_a_mode: int, elements: tuple[tuple[int, ...], ...], columns: int
) -> tuple[int, ...]:
    """Per seat, its points in the first `columns` score columns (candy, spider, leopard,
    star) for these face-up elements (a row per seat), by the core's scoring. Cached:
    every seat at a trick sees the same elements."""
    players = len(elements)
    zeros = [0] * players
    rows, _, _ = _core.score_tallies(players, sides, star_a_mode, elements, zeros, zeros, zeros)
    return tuple(sum(row[:columns]) for row in rows)


@lru_cache(maxsize=4096)
def _relative_points(
    sides: tuple[int, ...], star_a_mode: int, elements: tuple[tuple[int, ...], ...]
) -> tuple[float, ...]:
    """Per seat, its kind points minus the mean of the others' (weather and face-down
    left out) for these face-up elements."""
    points = _kind_sums(sides, star_a_mode, elements, 4)
    total = sum(points)
    others = len(points) - 1
    return tuple(float(mine) - float(total - mine) / others for mine in points)


@cache
def _combo_array(n: int, k: int) -> np.ndarray:
    """The k-subsets of positions 0..n-1 as rows, in `split_table`'s combos order."""
    return np.array(list(itertools.combinations(range(n), k)), dtype=np.intp).reshape(-1, k)


@cache
def _pile_indexes(colours: tuple[int, ...], size: int) -> tuple[np.ndarray, np.ndarray]:
    """For every pile of `size` positions of a hand of these card colours, in
    `_combo_array` order: (picks, blues). ``picks[j, q]`` indexes, for each pile, its j-th
    card in row q of a (3, 2 * len(colours)) table of per-card values followed by their
    one-colour variants, taking the variant when the pile is of one colour; ``blues`` is
    the pile's blues if it lacks a red or a green (it can trump), else 0."""
    n = len(colours)
    combos = _combo_array(n, size)
    picked = np.array(colours, dtype=np.intp)[combos]
    one_colour = (picked == picked[:, :1]).all(axis=1).astype(np.intp)
    lacks_side = ~((picked == 1).any(axis=1) & (picked == 2).any(axis=1))
    blues = (picked == BLUE).sum(axis=1)
    cards = (combos + n * one_colour[:, None]).T
    picks = cards[:, None, :] + 2 * n * np.arange(3, dtype=np.intp)[None, :, None]
    return np.ascontiguousarray(picks), np.where(lacks_side, blues, 0)


def _row_sum(rows: np.ndarray) -> np.ndarray:
    """rows[0] + rows[1] + ..., added in that order (the order `pile_scores` sums in)."""
    total = rows[0].copy()
    for row in rows[1:]:
        total += row
    return total


@cache
def _steps(length: int) -> np.ndarray:
    """0.0, 1.0, ..., length - 1 as a column."""
    return np.arange(length, dtype=np.float64)[:, None]


@cache
def _split_picks(sizes: tuple[int, ...]) -> np.ndarray:
    """Indexes that gather, for every split of `split_table(sizes)`, its piles' scores from
    the flat table `split_values` builds: each group's pile worths (group by group), then
    `_pile_parts` of each pile size (in order of first use). ``[g, q, i]`` is split i's
    pile for group g in row q of (worth, risk, tricks)."""
    splits, combos = split_table(sizes)
    piles = {size: len(combos[size]) for size in sizes}
    worth_at = list(itertools.accumulate((piles[size] for size in sizes), initial=0))
    distinct = list(dict.fromkeys(sizes))
    parts_at = dict(
        zip(
            distinct,
            itertools.accumulate((3 * piles[size] for size in distinct), initial=worth_at[-1]),
            strict=False,
        )
    )
    rows = []
    for g, size in enumerate(sizes):
        column = splits[:, g]
        risk_at = parts_at[size] + piles[size]
        rows.append((column + worth_at[g], column + risk_at, column + risk_at + piles[size]))
    return np.ascontiguousarray(np.array(rows, dtype=np.intp))


@cache
def split_table(sizes: tuple[int, ...]) -> tuple[np.ndarray, dict[int, list[tuple[int, ...]]]]:
    """Every split of hand positions 0..n-1 into piles of these sizes.

    Returns (splits, combos): ``combos[k]`` lists the k-subsets of positions and
    ``splits[i, g]`` is the index in ``combos[sizes[g]]`` of split i's pile g. Cached per
    sizes and shared: read it, never change it.
    """
    n = sum(sizes)
    combos = {k: list(itertools.combinations(range(n), k)) for k in set(sizes)}
    index = {k: {c: i for i, c in enumerate(cs)} for k, cs in combos.items()}
    rows: list[list[int]] = []

    def extend(rest: tuple[int, ...], g: int, row: list[int]) -> None:
        if g == len(sizes):
            rows.append(row)
            return
        for pile in itertools.combinations(rest, sizes[g]):
            left = tuple(i for i in rest if i not in pile)
            extend(left, g + 1, row + [index[sizes[g]][pile]])

    extend(tuple(range(n)), 0, [])
    return np.array(rows, dtype=np.intp), combos


def pile_masks(obs: Observation) -> tuple[np.ndarray, list[np.ndarray]]:
    """(splits, masks) for obs's hand: ``splits`` as in `split_table`, ``masks[g][j]`` the
    card mask of the j-th pile of group g's size."""
    sizes = obs.rules.spec.group_sizes
    hand = bits(obs.hand)
    splits, _ = split_table(sizes)
    card_bits = np.array([1 << c for c in hand], dtype=np.int64)
    masks = [card_bits[_combo_array(len(hand), size)].sum(axis=1) for size in sizes]
    return splits, masks


def split_piles(obs: Observation, k: int) -> tuple[int, ...]:
    """The piles (card masks, group by group) of split k of obs's hand, in `split_table`
    order."""
    sizes = obs.rules.spec.group_sizes
    hand = bits(obs.hand)
    splits, combos = split_table(sizes)
    return tuple(
        mask_of([hand[i] for i in combos[size][pile]])
        for size, pile in zip(sizes, splits[k].tolist(), strict=True)
    )


__all__: Sequence[str] = (
    "DEFAULT_PARAMS",
    "HandEvaluator",
    "HeuristicParams",
    "SeatTable",
    "expected_points",
    "higher_same",
    "kind_points_table",
    "pile_masks",
    "split_piles",
    "split_table",
)
