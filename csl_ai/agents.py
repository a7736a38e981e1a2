"""Agents: players behind one interface, ``act(observation) -> move``.

An agent sees only what its seat may see (an `Observation`) and answers with one of the
observation's legal moves. Four kinds:

- `RandomAgent`: uniform among the legal moves (the floor any AI must clear);
- `HeuristicAgent`: a fast rule-based player (hand strength for the allocation, good
  weather with a weak hand, cheap follows); the sparring partner of the benchmarks;
- `PimcAgent`: flat determinized Monte Carlo (perfect-information Monte Carlo) through
  `csl_ai.search` with ``algorithm="pimc"``;
- `IsmctsAgent`: information-set MCTS through `csl_ai.search`, at a named level of
  `LEVELS` or under an explicit iteration or time limit.

`make_agent` builds any of them from a short text spec (``"ismcts:iters=5000,threads=2"``)
and `play_game` plays a whole game between agents. A seeded search agent derives a seed
per decision from its base seed and where the decision falls in the game, so a game
between seeded agents under iteration limits replays identically.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Final, Protocol, runtime_checkable

import numpy as np

from csl_ai import _core
from csl_ai.errors import CslError, IllegalMoveError
from csl_ai.game import Game, Observation, Phase, PublicView
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import BLUE, MAX_RANK
from csl_ai.rules import Kind, RulesConfig, Side, StarOption
from csl_ai.search import SearchConfig, SearchLimit, SearchResult, search


class AgentSpecError(CslError):
    """An agent spec (``"ismcts:iters=5000"``) that names no agent or has a bad option."""


@runtime_checkable
class Agent(Protocol):
    """A player: a name for tables and records, and a move for each observation."""

    name: str

    def act(self, obs: Observation) -> Move:
        """One of ``obs.legal_moves()`` for the observing seat."""
        ...


AGENT_KINDS: Final[tuple[str, ...]] = ("random", "heuristic", "pimc", "ismcts")
"""The agent names `make_agent` understands, in the order error messages list them."""

LEVELS: Final[Mapping[str, int]] = {"fast": 1_000, "normal": 10_000, "strong": 50_000}
"""ISMCTS iterations per decision at each named level."""

DEFAULT_LEVEL: Final = "normal"
"""The level of a bare ``"ismcts"`` spec."""

DEFAULT_PIMC_ITERATIONS: Final = 10_000
"""Determinized playouts per decision of a bare ``"pimc"`` spec."""

PIMC_CONFIG: Final = SearchConfig(algorithm="pimc")
"""The search configuration of `PimcAgent`."""

_SEED_BITS: Final = 63


def _no_decision(agent: str, obs: Observation) -> CslError:
    return CslError(
        f"agent {agent!r} has no move to make: seat {obs.seat} is not to decide in the "
        f"{obs.phase.value} phase"
    )


def decision_seed(base: int, obs: Observation) -> int:
    """A seed for one decision: a hash of the base seed and where the decision falls.

    The decision is located by seat, round, phase, cards played so far in the round, the
    seat's hand and the round's line, so every decision of a game gets its own seed and
    replaying the game gives the same seeds.
    """
    current = obs.current
    plays = sum(len(trick.plays) for trick in current.tricks)
    key = (
        f"{base}|{obs.seat}|{len(obs.rounds)}|{obs.phase.value}|{plays}|"
        f"{obs.hand}|{','.join(map(str, current.line))}"
    )
    digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - _SEED_BITS)


# --- random -------------------------------------------------------------------------------


class RandomAgent:
    """Uniform among the legal moves.

    An allocation is drawn by shuffling the hand and cutting it into the group sizes,
    which is uniform over the legal allocations without building all 1680 of them.
    """

    name: str = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> Move:
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            cards = _cards(obs.hand)
            self._rng.shuffle(cards)
            piles = []
            start = 0
            for size in obs.rules.spec.group_sizes:
                piles.append(_mask(cards[start : start + size]))
                start += size
            return Allocate(tuple(piles))
        decided = (phase is Phase.ALLOCATE) or (
            phase is Phase.WEATHER and obs.current.declarations[obs.seat] is not None
        )
        moves = [] if decided else obs.legal_moves()
        if not moves:
            raise _no_decision(self.name, obs)
        return self._rng.choice(moves)


# --- heuristic ------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeuristicParams:
    """The tuned constants of `HeuristicAgent`, in one place.

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


@cache
def _kind_table(kind: Kind, side: int) -> tuple[int, ...]:
    """Points of spider or leopard by element count 0..20, read from the core's scoring."""
    table = []
    for n in range(21):
        elems = [0, 0, 0, 0]
        elems[kind] = n
        rows, _, _ = _core.score_tallies(
            2, (side, side, side, side), 0, [tuple(elems), (0, 0, 0, 0)], [0, 0], [0, 0], [0, 0]
        )
        table.append(rows[0][int(kind)])
    return tuple(table)


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _mask(cards: Sequence[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def _colour(card: int) -> int:
    return card // MAX_RANK


def _key(card: int) -> tuple[int, int]:
    """Play strength order: any red or green below any blue, then by rank."""
    return (1 if card < MAX_RANK else 0, card % MAX_RANK)


_COLOUR_MASK: Final = tuple(((1 << MAX_RANK) - 1) << (MAX_RANK * c) for c in range(3))


def _higher_same(card: int, pool: int) -> int:
    """How many cards of pool are of card's colour and rank above it."""
    colour_mask = _COLOUR_MASK[_colour(card)]
    above = colour_mask & ~((1 << (card + 1)) - 1)
    return (pool & above).bit_count()


@dataclass
class _Table:
    """Public tallies as one seat sees them, projected to the end of the round."""

    obs: Observation
    view: PublicView
    elems: list[list[int]]
    """Face-up elements per seat, plus this round's for seats whose cards stay face up."""
    round_won: list[int]
    declared: list[bool | None]
    unclaimed_stars: int
    unclaimed_elements: tuple[int, int, int, int]
    """Elements of each kind on sky cards not yet won (this round's rest and later rounds)."""
    future: float
    """Share of the game's sky cards not yet won (0 in the last trick)."""
    sides: tuple[int, int, int, int]
    star_twice: bool
    values: dict[int, float] = field(default_factory=dict)


class HeuristicAgent:
    """A fast rule-based player that uses only its observation.

    - Sky cards are valued in points from the seat's current tallies: candy by its
      marginal points against the others plus a bonus (always somewhat good); spider and
      leopard by how the card moves the table's mean over the elements still to come
      (a seat expecting 1/players of them), so overshooting a count is seen coming;
      shooting stars by side, by whether all three are still reachable for it, and by
      denying a rival who could reach them.
    - Allocation: every split of the hand is scored by expected tricks of each pile
      (from card strength against the cards others hold) times the worth of its group;
      a second score rates each split for losing every trick, and the better plan wins.
    - Good weather is declared when the piles are weak enough that the expected +7
      beats normal play; a declarer then plays to lose every trick.
    - Cheap follows: win a wanted sky card with the cheapest card likely to hold, else
      play low; shed the highest card that does not win when the sky card is unwanted.
    """

    name: str = "heuristic"

    def __init__(self, seed: int | None = None, params: HeuristicParams = DEFAULT_PARAMS) -> None:
        self.seed = seed
        self.params = params
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> Move:
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            table = self._table(obs)
            return Allocate(self._allocate(table)[0])
        if phase is Phase.WEATHER and obs.current.declarations[obs.seat] is None:
            table = self._table(obs)
            allocation = obs.allocation
            if allocation is None:
                raise _no_decision(self.name, obs)
            normal, weather = self._plan_values(table, allocation)
            return Declare(weather > normal + self.params.weather_margin)
        if phase is Phase.PLAY and obs.to_move == obs.seat:
            return Play(self._play(self._table(obs)))
        raise _no_decision(self.name, obs)

    # --- what the table looks like ----------------------------------------------------
    def _table(self, obs: Observation) -> _Table:
        view = obs.public_view()
        core = view.core
        n = obs.players
        deck = obs.rules.game_deck.cards
        current = obs.current
        elems = [list(row) for row in core.elements]
        round_won = [0] * n
        round_elems = [[0, 0, 0, 0] for _ in range(n)]
        claimed_positions = 0
        for trick in current.tricks:
            if trick.winner is None or trick.sky is None:
                continue
            claimed_positions += 1
            card = deck[trick.sky]
            round_won[trick.winner] += 1
            round_elems[trick.winner][card.kind] += card.count
        declared = list(current.declarations)
        for s in range(n):
            if declared[s] is not True:
                for k in range(4):
                    elems[s][k] += round_elems[s][k]
        rest = list(current.line[claimed_positions:]) + list(view.unseen_sky)
        unclaimed_stars = sum(1 for sky in rest if deck[sky].kind is Kind.STAR)
        unclaimed = [0, 0, 0, 0]
        for sky in rest:
            unclaimed[deck[sky].kind] += deck[sky].count
        sides = tuple(0 if side is Side.A else 1 for side in obs.rules.sides)
        return _Table(
            obs=obs,
            view=view,
            elems=elems,
            round_won=round_won,
            declared=declared,
            unclaimed_stars=unclaimed_stars,
            unclaimed_elements=(unclaimed[0], unclaimed[1], unclaimed[2], unclaimed[3]),
            future=max(0, len(rest) - 1) / len(deck),
            sides=(sides[0], sides[1], sides[2], sides[3]),
            star_twice=obs.rules.star_option is StarOption.TWICE,
        )

    def _relative(self, table: _Table, elems: list[list[int]]) -> float:
        """My kind points minus the mean of the others' (weather and face-down left out)."""
        n = len(elems)
        rows, _, _ = _core.score_tallies(
            n,
            table.sides,
            0 if table.star_twice else 1,
            [tuple(e) for e in elems],
            [0] * n,
            [0] * n,
            [0] * n,
        )
        seat = table.obs.seat
        mine = float(sum(rows[seat][:4]))
        others = sum(float(sum(rows[s][:4])) for s in range(n) if s != seat) / (n - 1)
        return mine - others

    def _sky_value(self, table: _Table, sky: int) -> float:
        """Worth to this seat of winning sky card `sky` (before any weather bet)."""
        cached = table.values.get(sky)
        if cached is not None:
            return cached
        p = self.params
        card = table.obs.rules.game_deck.cards[sky]
        seat = table.obs.seat
        if card.kind is Kind.STAR:
            value = self._star_value(table)
        elif card.kind is Kind.CANDY:
            after = [list(e) for e in table.elems]
            after[seat][card.kind] += card.count
            value = self._relative(table, after) - self._relative(table, table.elems)
            value = max(value, 0.0) + p.candy_bonus + p.candy_future * table.future
        else:
            tab = _kind_table(card.kind, table.sides[card.kind])
            have = table.elems[seat][card.kind]
            left = max(0, table.unclaimed_elements[card.kind] - card.count)
            q = min(1.0, p.future_share / table.obs.players)
            value = _expected_points(tab, have + card.count, left, q) - _expected_points(
                tab, have, left, q
            )
        table.values[sky] = value
        return value

    def _star_value(self, table: _Table) -> float:
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
            base = max(float(self._kind_points(table, s)), p.star_a_floor)
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

    def _kind_points(self, table: _Table, seat: int) -> int:
        n = table.obs.players
        rows, _, _ = _core.score_tallies(
            n, table.sides, 0, [tuple(e) for e in table.elems], [0] * n, [0] * n, [0] * n
        )
        return sum(rows[seat][:3])

    def _won_value(self, table: _Table, sky: int) -> float:
        """Worth of winning sky now, counting this seat's good-weather bet."""
        seat = table.obs.seat
        if table.declared[seat] is True:
            return (
                self.params.declared_fresh
                if table.round_won[seat] == 0
                else self.params.declared_failed
            )
        return self._sky_value(table, sky)

    # --- allocation and weather -------------------------------------------------------
    def _card_powers(self, table: _Table) -> dict[int, float]:
        """Per card of the hand: the chance it wins the trick it is played to.

        Self-play showed nearly the same chances whether the holder tries to win or to
        lose, so one estimate serves both plans."""
        p = self.params
        hand = table.obs.hand
        others = table.obs.rules.spec.rain_cards & ~hand
        win: dict[int, float] = {}
        i = table.obs.players - 2
        for card in _cards(hand):
            hi = _higher_same(card, others)
            if _colour(card) == BLUE:
                win[card] = p.blue_decay[i] ** hi
            else:
                win[card] = p.side_top[i] * p.side_decay[i] ** hi
        return win

    def _group_values(self, table: _Table) -> list[list[float]]:
        """Worth of each sky card of the round's line, best first, group by group."""
        spec = table.obs.rules.spec
        line = table.obs.current.line
        out = []
        start = 0
        for size in spec.group_sizes:
            out.append(
                sorted(
                    (self._sky_value(table, sky) for sky in line[start : start + size]),
                    reverse=True,
                )
            )
            start += size
        return out

    def _pile_scores(
        self, values: Sequence[float], cards: Sequence[int], win: Mapping[int, float]
    ) -> tuple[float, float, float]:
        """(expected worth of the group's sky cards won, -log chance of winning none,
        expected tricks won while trying to lose)."""
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

    def _allocate(self, table: _Table) -> tuple[tuple[int, ...], bool]:
        """The best split of the hand, and whether it is the good-weather plan.

        Scores are sums over piles, so each possible pile is scored once per group and
        the splits (`_split_table`) are compared with numpy.
        """
        p = self.params
        win = self._card_powers(table)
        sizes = table.obs.rules.spec.group_sizes
        hand = _cards(table.obs.hand)
        values = self._group_values(table)
        splits, combos = _split_table(sizes)
        worth = np.zeros(len(splits))
        risk = np.zeros(len(splits))
        tricks = np.zeros(len(splits))
        for g, size in enumerate(sizes):
            scores = np.array(
                [
                    self._pile_scores(values[g], [hand[i] for i in combo], win)
                    for combo in combos[size]
                ]
            )
            worth += scores[splits[:, g], 0]
            risk += scores[splits[:, g], 1]
            tricks += scores[splits[:, g], 2]
        weather = self._weather_worth(risk, tricks)
        noise = np.random.default_rng(self._rng.getrandbits(64)).random(len(splits)) * 1e-6
        normal = int(np.argmax(worth + noise))
        safe = int(np.argmax(weather + noise))
        if weather[safe] > worth[normal] + p.weather_margin:
            chosen, is_weather = safe, True
        else:
            chosen, is_weather = normal, False
        piles = tuple(
            _mask([hand[i] for i in combos[size][splits[chosen, g]]])
            for g, size in enumerate(sizes)
        )
        return piles, is_weather

    def _weather_worth(self, risk: np.ndarray, tricks: np.ndarray) -> np.ndarray:
        """Worth of declaring: +7 if no trick is won, -2 per sky card won otherwise."""
        p = self.params
        clean = np.exp(-p.weather_risk_scale * risk)
        return p.weather_points * clean - p.face_down_points * tricks

    def _plan_values(self, table: _Table, piles: Sequence[int]) -> tuple[float, float]:
        """(worth of normal play, worth of declaring good weather) with these piles."""
        win = self._card_powers(table)
        values = self._group_values(table)
        totals = np.zeros(3)
        for g, pile in enumerate(piles):
            totals += self._pile_scores(values[g], _cards(pile), win)
        weather = self._weather_worth(totals[1:2], totals[2:3])
        return float(totals[0]), float(weather[0])

    # --- card play --------------------------------------------------------------------
    def _play(self, table: _Table) -> int:
        p = self.params
        obs = table.obs
        core = table.view.core
        seat = obs.seat
        n = obs.players
        legal = _cards(core.legal_plays())
        if len(legal) == 1:
            return legal[0]
        current = obs.current
        trick = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None
        plays = [card for _, card in trick.plays] if trick is not None else []
        group = core.group
        spec = obs.rules.spec
        end = sum(spec.group_sizes[: group + 1])
        pos = core.line_pos
        value = self._won_value(table, current.line[pos])
        later_wanted = any(self._won_value(table, sky) > 0 for sky in current.line[pos + 1 : end])
        pool = spec.rain_cards & ~obs.hand & ~core.played
        later_seats = [(seat + i) % n for i in range(1, n - len(plays))]
        hidden = sum(table.view.hidden_counts[s][group] for s in later_seats)
        share = min(1.0, hidden / max(1, pool.bit_count()))
        led = _colour(plays[0]) if plays else -1
        best = _trick_best(plays)

        def hold(card: int) -> float:
            """Chance no later seat beats card (if it is winning now)."""
            if not later_seats:
                return 1.0
            higher = _higher_same(card, pool)
            beaten_by_colour = float((1 - share) ** higher)
            if _colour(card) == BLUE:
                return beaten_by_colour
            blues = (pool & _COLOUR_MASK[BLUE]).bit_count()
            return beaten_by_colour * float((1 - share * p.void_chance) ** blues)

        winners = [c for c in legal if best is None or _beats(c, best, led)]
        losers = [c for c in legal if c not in winners]
        lowest = min(legal, key=_key)
        if value > 0:
            if not plays:
                chances = {c: hold(c) for c in legal}
                top = max(chances.values())
                if top < p.lead_min and later_wanted:
                    return lowest
                return min((c for c in legal if chances[c] >= top - 0.05), key=_key)
            if winners:
                if not later_seats:
                    return min(winners, key=_key)
                chances = {c: hold(c) for c in winners}
                safe = [c for c in winners if chances[c] >= p.hold_ok]
                if safe:
                    return min(safe, key=_key)
                return max(winners, key=lambda c: (chances[c], _key(c)))
            return min(legal, key=_key) if later_wanted else max(legal, key=_key)
        if losers:
            return min(losers, key=_key) if later_wanted else max(losers, key=_key)
        if not later_seats:
            return max(legal, key=_key)
        return min(legal, key=lambda c: (hold(c), _key(c)))


@cache
def _expected_points(tab: tuple[int, ...], have: int, left: int, q: float) -> float:
    """Mean points of the table at have + F, F ~ Binomial(left, q) more elements."""
    total = 0.0
    for f in range(left + 1):
        total += (
            math.comb(left, f) * q**f * (1 - q) ** (left - f) * tab[min(have + f, len(tab) - 1)]
        )
    return total


@cache
def _split_table(sizes: tuple[int, ...]) -> tuple[np.ndarray, dict[int, list[tuple[int, ...]]]]:
    """Every split of hand positions 0..n-1 into piles of these sizes.

    Returns (splits, combos): ``combos[k]`` lists the k-subsets of positions and
    ``splits[i, g]`` is the index in ``combos[sizes[g]]`` of split i's pile g.
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


def _trick_best(plays: Sequence[int]) -> int | None:
    """The card winning a trick so far (weather rule), None before the lead."""
    if not plays:
        return None
    blues = [c for c in plays if _colour(c) == BLUE]
    if blues:
        return max(blues)
    led = _colour(plays[0])
    return max(c for c in plays if _colour(c) == led)


def _beats(card: int, best: int, led: int) -> bool:
    """Whether card, played now, would take the trick from best."""
    if _colour(card) == BLUE:
        return _colour(best) != BLUE or card > best
    return _colour(best) != BLUE and _colour(card) == led and card > best


# --- search agents ----------------------------------------------------------------------------


def _limit_spec(kind: str, iterations: int | None, time_ms: float | None, threads: int) -> str:
    """The make_agent spec for a search agent with these limits."""
    options = []
    if iterations is not None:
        options.append(f"iters={iterations}")
    if time_ms is not None:
        options.append(f"ms={_number_text(time_ms)}")
    if threads != 1:
        options.append(f"threads={threads}")
    return f"{kind}:{','.join(options)}" if options else kind


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


class PimcAgent:
    """Flat determinized Monte Carlo: `search` with ``algorithm="pimc"``.

    Each decision samples worlds consistent with the observation, plays each candidate
    out in them, and picks the best average; with a seed, every decision gets its own
    seed from `decision_seed`. Bad limits raise the search's SearchSettingsError.
    """

    def __init__(
        self,
        iterations: int | None = DEFAULT_PIMC_ITERATIONS,
        seed: int | None = None,
        *,
        time_ms: float | None = None,
        threads: int = 1,
    ) -> None:
        self.limit = SearchLimit(iterations=iterations, time_ms=time_ms, threads=threads, seed=seed)
        self.name = _limit_spec("pimc", iterations, time_ms, threads)
        self.last_result: SearchResult | None = None

    def act(self, obs: Observation) -> Move:
        limit = self.limit
        if limit.seed is not None:
            limit = replace(limit, seed=decision_seed(limit.seed, obs))
        result = search(obs, limit, PIMC_CONFIG)
        self.last_result = result
        return result.best_move


class IsmctsAgent:
    """Information-set MCTS through `csl_ai.search` under a SearchLimit.

    ``limit.seed`` is the base seed: each decision searches with `decision_seed` of it,
    so a seeded agent under an iteration limit plays the same game every time.
    """

    def __init__(
        self, limit: SearchLimit, config: SearchConfig | None = None, *, name: str | None = None
    ) -> None:
        self.limit = limit
        self.config = config if config is not None else SearchConfig()
        self.name = name or _limit_spec("ismcts", limit.iterations, limit.time_ms, limit.threads)
        self.last_result: SearchResult | None = None

    @classmethod
    def at_level(cls, level: str, seed: int | None = None, threads: int = 1) -> IsmctsAgent:
        """The agent of a named level (`LEVELS`)."""
        if level not in LEVELS:
            raise AgentSpecError(f"unknown level {level!r} (expected {', '.join(LEVELS)})")
        limit = SearchLimit(iterations=LEVELS[level], threads=threads, seed=seed)
        name = f"ismcts:{level}" + (f",threads={threads}" if threads != 1 else "")
        return cls(limit, name=name)

    def act(self, obs: Observation) -> Move:
        limit = self.limit
        if limit.seed is not None:
            limit = replace(limit, seed=decision_seed(limit.seed, obs))
        result = search(obs, limit, self.config)
        self.last_result = result
        return result.best_move


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- specs ------------------------------------------------------------------------------------

_OPTIONS: Final[Mapping[str, tuple[str, ...]]] = {
    "random": (),
    "heuristic": (),
    "pimc": ("iters", "ms", "threads"),
    "ismcts": ("iters", "ms", "threads", *LEVELS),
}


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """The agent a spec names: ``random``, ``heuristic``, ``pimc[:iters=N]`` or
    ``ismcts[:fast|normal|strong|iters=N|ms=N]`` with options joined by commas
    (``ismcts:iters=5000,threads=2``); AgentSpecError on anything else."""
    if not isinstance(spec, str):
        raise AgentSpecError(f"agent spec must be text like 'ismcts:fast', got {spec!r}")
    kind, colon, rest = spec.strip().partition(":")
    kind = kind.strip().lower()
    if kind not in _OPTIONS:
        raise AgentSpecError(f"unknown agent {kind!r} (expected {', '.join(AGENT_KINDS)})")
    values = _parse_options(spec, kind, rest) if colon else {}
    if kind == "random":
        return RandomAgent(seed)
    if kind == "heuristic":
        return HeuristicAgent(seed)
    iterations = values.get("iters")
    time_ms = values.get("ms")
    threads = int(values.get("threads", 1))
    level = next((name for name in LEVELS if name in values), None)
    try:
        if kind == "pimc":
            if iterations is None and time_ms is None:
                iterations = DEFAULT_PIMC_ITERATIONS
            return PimcAgent(
                None if iterations is None else int(iterations),
                seed,
                time_ms=time_ms,
                threads=threads,
            )
        if iterations is None and time_ms is None:
            return IsmctsAgent.at_level(level or DEFAULT_LEVEL, seed, threads)
        limit = SearchLimit(
            iterations=None if iterations is None else int(iterations),
            time_ms=time_ms,
            threads=threads,
            seed=seed,
        )
        return IsmctsAgent(limit)
    except AgentSpecError:
        raise
    except CslError as e:
        raise AgentSpecError(f"bad agent spec {spec!r}: {e}") from None


def _parse_options(spec: str, kind: str, text: str) -> dict[str, float]:
    """Options after the colon as {name: value}; a level name maps to 1."""
    allowed = _OPTIONS[kind]
    values: dict[str, float] = {}
    items = [item.strip() for item in text.split(",")]
    for item in items:
        bad = f"bad option {item!r} in {spec!r}"
        if not allowed:
            raise AgentSpecError(f"{bad}: {kind} takes no options")
        name, eq, raw = (part.strip() for part in item.partition("="))
        name = name.lower()
        if name in LEVELS and name in allowed and not eq:
            if any(level in values for level in LEVELS) or "iters" in values or "ms" in values:
                raise AgentSpecError(f"{bad}: give one level, or iters/ms, not both")
            values[name] = 1
            continue
        if name not in allowed or name in LEVELS or not eq:
            raise AgentSpecError(f"{bad}: expected {_expected(kind)}")
        if name in values:
            raise AgentSpecError(f"{bad}: {name} given twice")
        if name in ("iters", "ms") and any(level in values for level in LEVELS):
            raise AgentSpecError(f"{bad}: give one level, or iters/ms, not both")
        values[name] = _option_value(name, raw, bad)
    return values


def _expected(kind: str) -> str:
    if kind == "pimc":
        return "iters=N, ms=N or threads=N"
    return f"{', '.join(LEVELS)}, iters=N, ms=N or threads=N"


def _option_value(name: str, raw: str, bad: str) -> float:
    if name == "ms":
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not (value > 0 and math.isfinite(value)):
            raise AgentSpecError(f"{bad}: ms must be a positive number of milliseconds")
        return value
    if not raw.isdigit() or int(raw) < 1:
        raise AgentSpecError(f"{bad}: {name} must be a positive integer")
    return int(raw)


# --- playing a game -------------------------------------------------------------------------


def _move_text(move: object) -> str:
    return str(move) if isinstance(move, (Play, Allocate, Declare)) else repr(move)


def play_game(
    rules: RulesConfig,
    agents: Sequence[Agent],
    seed: int,
    on_move: Callable[[Game, int, Move], None] | None = None,
) -> Game:
    """Play a whole game between agents (agents[s] plays seat s) and return it, over.

    The deal comes from ``Game(rules, seed=seed)``. `on_move(game, seat, move)` is called
    after each move is applied. An illegal move raises IllegalMoveError naming the agent,
    its seat and the move.
    """
    if len(agents) != rules.players:
        raise CslError(
            f"agents: a {rules.players}-player game needs {rules.players} agents, got {len(agents)}"
        )
    game = Game(rules, seed=seed)
    while not game.is_over:
        seat = game.to_move
        agent = agents[seat]
        move = agent.act(game.observation(seat))
        try:
            game.apply(move, seat)
        except IllegalMoveError as e:
            raise IllegalMoveError(
                f"agent {agent.name!r} at seat {seat} chose an illegal move {_move_text(move)}: {e}"
            ) from None
        if on_move is not None:
            on_move(game, seat, move)
    return game
