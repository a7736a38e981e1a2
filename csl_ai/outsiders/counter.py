"""`CounterAgent` ("outsider:counter"): a card-counting trick economist, written blind.

Two estimates drive every decision:

- the *worth* of each sky card to a seat: the change in that seat's final score if it
  takes the card, under the sides in play, from every seat's current tallies. Each kind
  is scored by its real table, looking ahead to what the unseen supply can still add
  (a decayed best reachable count), candies by soft ranks against the others' projected
  counts; a failed or pending good-weather bet is priced exactly (-9, then -2). A card
  is also worth denying to the seat it helps most, more so when that seat leads;
- the chance that a card wins a trick, from the unseen cards (hypergeometric draws of
  each later seat's pile, shown voids removed), the weather rule and who still plays.

Allocation scores every split by pairing each pile's card strengths with its group's
worths (voids next to trumps count); play maximises chance-to-win times worth plus the
value of the cards kept for the rest of the group; good weather is bet when the chance
of taking no trick makes +7 beat the hand's expected haul.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from itertools import combinations

from csl_ai.bits import bits
from csl_ai.errors import CslError
from csl_ai.game import Observation, Phase
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.rules import Kind, RulesConfig, Side, StarOption

_RANKS = 12
_COLOUR_MASK = (0xFFF, 0xFFF << 12, 0xFFF << 24)
_BLUE = 0

_SPIDER = {Side.A: (0, 3, 10, 4, 2, 10, 1), Side.B: (0, 10, 3, 2, 1, 10, 1)}
_LEOPARD = {Side.A: (0, 0, 10, 0, 20, 0, 30, 0), Side.B: (0, 0, 0, 15, 0, 0, 30, 0)}
_CANDY_B = (3, 10, 6, 0, 0)
_STAR_TWO = {Side.A: -5, Side.B: -10}
_STAR_B_WIN = 80.0
"""What three stars on side B (an outright win) are worth in points to this bot."""

_DECAY = 0.7
"""Per element still to collect: how much a reachable count is discounted."""
_FAIL_FIRST = -9.0
"""A declarer's first sky card: the +7 lost and the card turned face down."""
_FAIL_MORE = -2.0
_DUCKER = 0.15
"""How likely a declarer still clean is to beat a card it could beat."""
_DENY_HIGH = {2: 1.0, 3: 0.6, 4: 0.5, 5: 0.4}
_FOLLOW_FACTOR = 0.7
"""A non-blue card's chance to be played where it can win, as a share of its lead strength."""
_CLEAN_POWER = {2: 4.0, 3: 2.0, 4: 1.5, 5: 1.5}
"""Fewer opponents can steer more tricks onto a declarer: its clean chance is raised to this."""
_GW_FAIL_COST = 3.0
"""Expected loss of a failed bet: about one and a half cards turned face down."""


class CounterError(CslError):
    """The counter bot was asked to act where it has no decision."""


def _above(card: int) -> int:
    """Cards of the same colour ranked above card."""
    return _COLOUR_MASK[card // _RANKS] & ~((2 << card) - 1)


def _beats(a: int, b: int, led: int) -> bool:
    """Whether card a beats card b on a trick led in colour led (weather rule)."""
    ca, cb = a // _RANKS, b // _RANKS
    if ca == cb:
        return a > b
    if ca == _BLUE:
        return True
    if cb == _BLUE:
        return False
    return ca == led


@lru_cache(maxsize=None)
def _comb(n: int, k: int) -> int:
    """n choose k, 0 outside 0..n (cached: the hypergeometric draws reuse a few)."""
    return math.comb(n, k) if 0 <= k <= n else 0


def _beat_prob(pool: int, h: int, led: int, best: int) -> float:
    """Chance that a pile of h cards drawn from pool can beat best on a trick led in led."""
    n = pool.bit_count()
    h = min(h, n)
    if h <= 0:
        return 0.0
    total = _comb(n, h)

    def none(k: int) -> float:
        return _comb(n - k, h) / total

    higher = (pool & _above(best)).bit_count()
    if led == _BLUE:
        return 1.0 - none(higher)
    n_led = (pool & _COLOUR_MASK[led]).bit_count()
    if best // _RANKS == led:
        trumps = (pool & _COLOUR_MASK[_BLUE]).bit_count()
        return 1.0 - none(higher) + none(n_led) - none(n_led + trumps)
    return none(n_led) - none(n_led + higher)


Follower = tuple[int, int, float]
"""(pool of cards the seat may hold, cards in its pile, how keen it is to win)."""


def _win_prob(card: int, led: int, best: int, followers: list[Follower]) -> float:
    """Chance that card wins the trick: it beats what is down and no follower beats it."""
    if led < 0:
        led = card // _RANKS
    elif best >= 0 and not _beats(card, best, led):
        return 0.0
    p = 1.0
    for pool, h, keen in followers:
        p *= 1.0 - keen * _beat_prob(pool, h, led, card)
    return p


def _pairing(strengths: list[float], worths: list[float]) -> float:
    """Best expected haul: strongest cards against the most valuable tricks."""
    s = sorted(strengths, reverse=True)
    w = sorted(worths, reverse=True)
    return sum(a * b for a, b in zip(s, w))


@lru_cache(maxsize=4096)
def _reach(table: tuple[float, ...], x: int, supply: int, decay: float) -> float:
    """Best decayed table value reachable from x with at most supply more elements."""
    last = len(table) - 1
    best = table[min(x, last)]
    f = 1.0
    for j in range(1, supply + 1):
        f *= decay
        best = max(best, f * table[min(x + j, last)])
    return best


def _soft_more(d: float, sigma: float) -> float:
    """Chance of ending strictly ahead with a lead of d (exact once sigma is 0)."""
    if sigma <= 0.0:
        return 1.0 if d > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-1.7 * (d - 0.5) / sigma))


def exact_scores(rules: RulesConfig, rows: list[list[int]], facedown: list[int],
                 weather: list[int]) -> list[float]:
    """Every seat's total from tallies (RULES.md §4); an outright win counts as 1000."""
    sides = rules.sides
    candies = [r[Kind.CANDY] for r in rows]
    ranks = sorted(set(candies), reverse=True)
    out = []
    for s, (c, sp, le, st) in enumerate(rows):
        if sides[Kind.CANDY] is Side.A:
            candy = sum(o for o in candies if o < c)
        else:
            candy = _CANDY_B[ranks.index(c)] if ranks.index(c) < len(_CANDY_B) else 0
        base = candy + _SPIDER[sides[Kind.SPIDER]][min(sp, 6)]
        base += _LEOPARD[sides[Kind.LEOPARD]][min(le, 7)]
        star = 0.0
        if st == 2:
            star = _STAR_TWO[sides[Kind.STAR]]
        elif st >= 3:
            if sides[Kind.STAR] is Side.B:
                star = 1000.0
            else:
                star = base * (2 if rules.star_option is StarOption.TWICE else 1)
        out.append(base + star + 7 * weather[s] - 2 * facedown[s])
    return out


class _Worth:
    """Sky card worths for every seat at one decision (tallies and the supply still to come)."""

    def __init__(self, rules: RulesConfig, rows: list[list[int]], supply: list[int],
                 declared: list[bool], won_now: list[int], scores: list[float], me: int) -> None:
        self.rules = rules
        self.n = rules.players
        self.rows = rows
        self.supply = supply
        self.declared = declared
        self.won_now = won_now
        self.me = me
        self.spider = tuple(float(v) for v in _SPIDER[rules.sides[Kind.SPIDER]])
        self.leopard = tuple(float(v) for v in _LEOPARD[rules.sides[Kind.LEOPARD]])
        share = supply[Kind.CANDY] / self.n
        self.candy_extra = share
        self.star_chance = min(0.6, 1.6 / self.n)
        self.candy_sigma = math.sqrt(2.0 * share) + 0.35 if supply[Kind.CANDY] else 0.0
        others = [s for s in range(self.n) if s != me]
        top = max(others, key=lambda s: scores[s])
        high = _DENY_HIGH[self.n]
        self.deny = [0.0 if s == me else (high if s == top or scores[s] >= scores[me] else high / 2)
                     for s in range(self.n)]
        self._cache: dict[tuple[int, int, int], float] = {}

    def _candy(self, s: int, mine: int) -> float:
        """Seat s's projected candy points with mine candies."""
        rows, n = self.rows, self.n
        sigma = self.candy_sigma
        if self.rules.sides[Kind.CANDY] is Side.A:
            return sum((rows[o][0] + self.candy_extra) * _soft_more(mine - rows[o][0], sigma)
                       for o in range(n) if o != s)
        if sigma == 0.0:
            counts = [mine if o == s else rows[o][0] for o in range(n)]
            ranks = sorted(set(counts), reverse=True)
            return float(_CANDY_B[ranks.index(mine)])
        dist = [1.0]
        for o in range(n):
            if o == s:
                continue
            p = _soft_more(rows[o][0] - mine, sigma)
            nxt = [0.0] * (len(dist) + 1)
            for k, q in enumerate(dist):
                nxt[k] += q * (1 - p)
                nxt[k + 1] += q * p
            dist = nxt
        return sum(q * _CANDY_B[k] for k, q in enumerate(dist) if k < len(_CANDY_B))

    def _base(self, s: int, row: list[int]) -> float:
        """Projected candy + spider + leopard points of seat s holding row."""
        sup = self.supply
        return (self._candy(s, row[0])
                + _reach(self.spider, row[1], sup[1], _DECAY)
                + _reach(self.leopard, row[2], sup[2], _DECAY))

    def _star(self, s: int, row: list[int]) -> float:
        """Projected shooting star points of seat s holding row: keep what it has, or
        chase the third star, won one by one with a fixed chance, a -5/-10 if it fails."""
        side = self.rules.sides[Kind.STAR]
        t = row[3]
        two = float(_STAR_TWO[side])
        now = two if t == 2 else 0.0
        need = 3 - t
        if t >= 3:
            need = 0
        if need > self.supply[3]:
            return now
        if side is Side.B:
            three = _STAR_B_WIN
        else:
            mult = 2.0 if self.rules.star_option is StarOption.TWICE else 1.0
            three = mult * max(self._base(s, row), 15.0)
        if need == 0:
            return three
        hit = self.star_chance ** need
        fail = two if t >= 1 else 0.5 * two
        return max(now, hit * three + (1.0 - hit) * fail)

    def gain(self, s: int, kind: int, count: int) -> float:
        """What taking a card of kind (count elements) changes in seat s's projected score."""
        if self.declared[s]:
            return _FAIL_FIRST if self.won_now[s] == 0 else _FAIL_MORE
        key = (s, kind, count)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        row = self.rows[s]
        new = list(row)
        new[kind] += count
        if kind == Kind.STAR:
            value = self._star(s, new) - self._star(s, row)
        else:
            value = self._base(s, new) - self._base(s, row)
            if self.rules.sides[Kind.STAR] is Side.A and row[3] + self.supply[3] >= 3:
                value += self._star(s, new) - self._star(s, row)
        self._cache[key] = value
        return value

    def worth(self, kind: int, count: int) -> float:
        """Worth of a sky card to this bot: its own gain plus denying the keenest seat
        (with 2 players, exactly what the other seat would otherwise get, good or bad)."""
        mine = self.gain(self.me, kind, count)
        if self.n == 2:
            return mine + self.gain(1 - self.me, kind, count)
        deny = max((self.deny[s] * self.gain(s, kind, count) for s in range(self.n) if s != self.me),
                   default=0.0)
        return mine + max(0.0, deny)


class CounterAgent:
    """Card counter and trick economist (see the module docstring)."""

    name: str = "outsider:counter"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> Move:
        """The bot's move for whichever decision obs asks of its seat."""
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            return self._allocate(obs)
        if phase is Phase.WEATHER and obs.current.declarations[obs.seat] is None:
            return Declare(self._declare(obs))
        if phase is Phase.PLAY and obs.public_view().core.to_move == obs.seat:
            return Play(self._play(obs))
        raise CounterError(f"{self.name}: seat {obs.seat} has no decision to make now")

    # --- shared estimates ---------------------------------------------------------------
    def _worth(self, obs: Observation, after: int) -> _Worth:
        """Worths at this point, the supply being the unseen deck and the line after `after`."""
        rules = obs.rules
        n = rules.players
        view = obs.public_view()
        core = view.core
        cards = rules.game_deck.cards
        rows = [list(r) for r in core.elements]
        facedown = list(core.facedown_cards)
        weather = list(core.good_weather)
        current = obs.current
        declared = [bool(d) for d in current.declarations]
        won_now = [0] * n
        for trick in current.tricks:
            if trick.winner is None or trick.sky is None:
                continue
            won_now[trick.winner] += 1
            if not declared[trick.winner]:
                card = cards[trick.sky]
                rows[trick.winner][card.kind] += card.count
        for s in range(n):
            if declared[s]:
                if won_now[s]:
                    facedown[s] += won_now[s]
                else:
                    weather[s] += 1
        supply = [0, 0, 0, 0]
        for sky in (*view.unseen_sky, *current.line[after + 1:]):
            card = cards[sky]
            supply[card.kind] += card.count
        scores = exact_scores(rules, rows, facedown, weather)
        return _Worth(rules, rows, supply, declared, won_now, scores, obs.seat)

    @staticmethod
    def _line_worths(obs: Observation, worth: _Worth, start: int, stop: int) -> list[float]:
        cards = obs.rules.game_deck.cards
        return [worth.worth(cards[sky].kind, cards[sky].count) for sky in obs.current.line[start:stop]]

    # --- allocation ---------------------------------------------------------------------
    def _card_strengths(self, obs: Observation) -> dict[int, dict[int, tuple[float, float]]]:
        """Per group size, per card of the hand: (strength if led, strength as a trump)."""
        n = obs.players
        pool = obs.public_view().unseen
        out: dict[int, dict[int, tuple[float, float]]] = {}
        for h in set(obs.rules.spec.group_sizes):
            followers = [(pool, h, 1.0)] * (n - 1)
            table = {}
            for card in bits(obs.hand):
                lead = _win_prob(card, -1, -1, followers)
                trump = 0.0
                if card // _RANKS == _BLUE:
                    trump = 0.5 * sum(_win_prob(card, led, -1, followers) for led in (1, 2))
                table[card] = (lead, trump)
            out[h] = table
        return out

    @staticmethod
    def _pile_profile(pile: int, table: dict[int, tuple[float, float]]) -> tuple[list[float], float]:
        """(expected win chance of each card in the pile, chance the pile takes no trick)."""
        missing = sum(1 for c in (1, 2) if not pile & _COLOUR_MASK[c])
        blues = sorted((c for c in bits(pile) if c // _RANKS == _BLUE), reverse=True)
        eff = []
        clean = 1.0
        for card in bits(pile):
            lead, trump = table[card]
            if card // _RANKS == _BLUE:
                chance = (0.0, 0.6, 0.85)[missing] * 0.6 ** blues.index(card)
                eff.append(max(lead, chance * trump))
                clean *= 1.0 - (0.5 * lead + 0.5 * trump)
            else:
                eff.append(_FOLLOW_FACTOR * lead)
                clean *= 1.0 - 0.6 * lead
        return eff, clean

    def _allocate(self, obs: Observation) -> Allocate:
        """The split with the best expected haul, or the cleanest one when betting pays more."""
        sizes = obs.rules.spec.group_sizes
        worth = self._worth(obs, 0)
        starts = [sum(sizes[:g]) for g in range(len(sizes))]
        worths = [self._line_worths(obs, worth, starts[g], starts[g] + sizes[g])
                  for g in range(len(sizes))]
        strengths = self._card_strengths(obs)
        power = _CLEAN_POWER[obs.players]
        cache: dict[tuple[int, int], tuple[float, float]] = {}

        def pile_value(g: int, pile: int) -> tuple[float, float]:
            key = (g, pile)
            got = cache.get(key)
            if got is None:
                eff, clean = self._pile_profile(pile, strengths[sizes[g]])
                got = cache[key] = (_pairing(eff, worths[g]), clean)
            return got

        best: list[tuple[float, tuple[int, ...]]] = []
        best_gw: list[tuple[float, tuple[int, ...]]] = []
        for piles in _splits(bits(obs.hand), sizes):
            value = 0.0
            clean = 1.0
            for g, pile in enumerate(piles):
                v, c = pile_value(g, pile)
                value += v
                clean *= c
            best.append((value, piles))
            best_gw.append((_bet_value(clean ** power), piles))
        top = max(v for v, _ in best)
        top_gw = max(v for v, _ in best_gw)
        pool = best_gw if top_gw > top else best
        mark = max(top, top_gw)
        choices = [p for v, p in pool if v >= mark - 1e-9]
        return Allocate.trusted(self._rng.choice(choices))

    def _declare(self, obs: Observation) -> bool:
        """Bet good weather when the chance of a clean round makes +7 beat the expected haul."""
        piles = obs.allocation
        assert piles is not None
        sizes = obs.rules.spec.group_sizes
        worth = self._worth(obs, 0)
        strengths = self._card_strengths(obs)
        value = 0.0
        clean = 1.0
        start = 0
        for g, pile in enumerate(piles):
            eff, c = self._pile_profile(pile, strengths[sizes[g]])
            value += _pairing(eff, self._line_worths(obs, worth, start, start + sizes[g]))
            clean *= c
            start += sizes[g]
        return _bet_value(clean ** _CLEAN_POWER[obs.players]) > value

    # --- card play ----------------------------------------------------------------------
    def _play(self, obs: Observation) -> int:
        """The card maximising chance-to-win times worth plus what the kept cards can still win."""
        view = obs.public_view()
        core = view.core
        n = obs.players
        me = obs.seat
        g = core.group
        pos = core.line_pos
        legal = bits(core.legal_plays())
        if len(legal) == 1:
            return legal[0]
        worth = self._worth(obs, pos)
        sizes = obs.rules.spec.group_sizes
        group_end = sum(sizes[: g + 1])
        now = self._line_worths(obs, worth, pos, pos + 1)[0]
        later = self._line_worths(obs, worth, pos + 1, group_end)

        trick = core.trick_cards
        led = core.led_colour
        best = -1
        order = [(core.leader + i) % n for i in range(n)]
        for s in order:
            card = trick[s]
            if card >= 0 and (best < 0 or _beats(card, best, led)):
                best = card
        declared = obs.current.declarations
        clean = [True] * n
        for t in obs.current.tricks:
            if t.winner is not None:
                clean[t.winner] = False
        followers: list[Follower] = []
        future: list[Follower] = []
        for s in range(n):
            if s == me:
                continue
            pool = view.unseen
            for c in range(3):
                if view.voids[s][g] >> c & 1:
                    pool &= ~_COLOUR_MASK[c]
            keen = _DUCKER if declared[s] and clean[s] else 1.0
            h = view.hidden_counts[s][g]
            if trick[s] < 0:
                followers.append((pool, h, keen))
                future.append((pool, h - 1, keen))
            else:
                future.append((pool, h, keen))

        pile = core.piles[me][g]
        kept_strength = {c: _win_prob(c, -1, -1, future) for c in bits(pile)}

        scored = []
        for card in legal:
            p = _win_prob(card, led, best, followers)
            rest = [kept_strength[c] for c in bits(pile) if c != card]
            value = p * now + _pairing(rest, later)
            scored.append((value, -kept_strength[card], card))
        top = max(v for v, _, _ in scored)
        near = [(k, c) for v, k, c in scored if v >= top - 1e-9]
        cheapest = max(k for k, _ in near)
        return self._rng.choice([c for k, c in near if k == cheapest])


def _bet_value(clean: float) -> float:
    """Expected points of a good weather bet taking no trick with chance clean."""
    return 7.0 * clean - _GW_FAIL_COST * (1.0 - clean)


def _splits(cards: list[int], sizes: tuple[int, ...]) -> list[tuple[int, ...]]:
    """Every split of cards into piles of the given sizes, as card masks in group order."""
    if len(sizes) == 1:
        mask = 0
        for c in cards:
            mask |= 1 << c
        return [(mask,)]
    out = []
    for first in combinations(cards, sizes[0]):
        rest = [c for c in cards if c not in first]
        mask = 0
        for c in first:
            mask |= 1 << c
        for tail in _splits(rest, sizes[1:]):
            out.append((mask, *tail))
    return out
