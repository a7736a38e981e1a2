"""Hunter: an ambitious set collector that plays for the big scores and blocks others from them.

Written blind, from RULES.md and the public interface only. The bot keeps a plan value
for every seat: exact points under the sides in play (candy A/B, the spider and leopard
tables, shooting stars A/B with the two-star penalty, good weather and face-down cards),
plus the promise of thresholds still reachable with the sky elements yet to come, and the
chance of the third star for a seat that holds every star taken so far. A sky card is
worth what it does to that plan for whoever takes it: its own gain against the gain of
the seat that would take it instead, with the strongest rivals weighed heavily, so a seat
holding two stars or one card short of a big threshold is fought for every trick.

Card play counts cards: the unseen cards and the voids each seat has shown give, by a
hypergeometric draw, the chance that each of its cards holds the trick; it picks the card
that best serves the current trick and the tricks left in the group. The allocation
matches its strongest cards and trumps (with voids beside them) to the sky cards its plan
or its denials need and its weakest cards to those it wants to lose. It bets good weather
only when its piles are weak enough that it will likely win nothing.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from csl_ai.bits import bits
from csl_ai.errors import CslError
from csl_ai.game import Observation, Phase
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.rules import Kind, RulesConfig, Side, StarOption

RANKS = 12
BLUE = 0
COLOUR_MASK = tuple(((1 << RANKS) - 1) << (RANKS * c) for c in range(3))

SPIDER_TABLE = {Side.A: (0, 3, 10, 4, 2, 10, 1), Side.B: (0, 10, 3, 2, 1, 10, 1)}
LEOPARD_TABLE = {Side.A: (0, 0, 10, 0, 20, 0, 30, 0), Side.B: (0, 0, 0, 15, 0, 0, 30, 0)}
CANDY_B_POINTS = (3, 10, 6, 0, 0)
PAIR_PENALTY = {Side.A: -5.0, Side.B: -10.0}
GOOD_WEATHER = 7.0
FACE_DOWN = -2.0
STARS = 3

OUTRIGHT = 150.0
"""Plan value of winning outright with three stars on side B."""
THIRD_STAR_CHANCE = (0.06, 0.2, 0.5)
"""Chance of ending with three stars, by stars held, for a seat holding all taken so far."""
REACH = 0.6
"""How much a threshold one more element away is believed in; each further one again."""
RIVAL_MAX = 0.6
"""Weight of the leading rival (against the rivals' mean) in the bot's utility."""
DENIAL_MIN = 0.5
"""Weight of the rival who would gain most (against their mean) when pricing a trick."""


def _colour(card: int) -> int:
    return card // RANKS


def _strength(card: int) -> int:
    """Raw power of a card: blue above everything, then rank."""
    return card % RANKS + (RANKS if _colour(card) == BLUE else 0)


def _higher(card: int) -> int:
    """Mask of the cards of the same colour ranked above card."""
    return COLOUR_MASK[_colour(card)] & ~((1 << (card + 1)) - 1)


def _beats(card: int, best: int, led: int) -> bool:
    """Whether card takes the trick over best, the card winning it so far."""
    if _colour(card) == BLUE:
        return _colour(best) != BLUE or card > best
    if _colour(best) == BLUE:
        return False
    return _colour(card) == led and card > best


@cache
def _none_drawn(pool: int, marked: int, drawn: int) -> float:
    """Chance that drawn cards taken at random from pool include none of marked of them."""
    marked = min(marked, pool)
    if drawn <= 0:
        return 1.0
    if drawn > pool - marked:
        return 0.0
    return math.comb(pool - marked, drawn) / math.comb(pool, drawn)


def _match(strengths: Sequence[float], wants: Sequence[float]) -> float:
    """Best pairing of cards' winning chances with tricks' wants (strongest to most wanted)."""
    return sum(p * w for p, w in zip(sorted(strengths, reverse=True), sorted(wants, reverse=True)))


@dataclass
class _Board:
    """The public score state: what every seat would score, and what is still to come."""

    elems: list[list[int]]
    """Face-up elements per seat and kind (a declarer's cards of this round left out)."""
    face_down: list[int]
    weather: list[int]
    pending: list[bool]
    """Declared good weather this round and has won nothing yet."""
    won_now: list[bool]
    """Won a sky card this round (a declarer's cards then go face down)."""
    declared: list[bool]
    stars_gone: int
    remaining: list[int]
    """Elements of each kind not yet won by anyone (undealt or in the line)."""
    honour: float
    """Chance that a pending declaration is honoured, as the round goes on."""

    def give(self, kind: int, count: int, seat: int) -> _Board:
        """The board after seat takes a sky card of that kind and count."""
        elems = [row[:] for row in self.elems]
        face_down = self.face_down[:]
        pending = self.pending[:]
        if self.declared[seat]:
            face_down[seat] += 1
            pending[seat] = False
        else:
            elems[seat][kind] += count
        remaining = self.remaining[:]
        remaining[kind] -= count
        won_now = self.won_now[:]
        won_now[seat] = True
        return _Board(
            elems,
            face_down,
            self.weather,
            pending,
            won_now,
            self.declared,
            self.stars_gone + (kind == Kind.STAR),
            remaining,
            self.honour,
        )


class _Scorer:
    """Plan values of every seat under one set of rules (tables precomputed)."""

    def __init__(self, rules: RulesConfig) -> None:
        self.n = rules.players
        self.sides = rules.sides
        self.star_mult = 2.0 if rules.star_option is StarOption.TWICE else 1.0
        deck = rules.game_deck
        self.candy_total = deck.elements_per_kind()[Kind.CANDY]
        self.spider = self._plan_table(SPIDER_TABLE[rules.side(Kind.SPIDER)])
        self.leopard = self._plan_table(LEOPARD_TABLE[rules.side(Kind.LEOPARD)])
        self.pair_penalty = PAIR_PENALTY[rules.side(Kind.STAR)]
        self.star_b = rules.side(Kind.STAR) is Side.B
        self.candy_b = rules.side(Kind.CANDY) is Side.B
        self.candy_b_mean = sum(CANDY_B_POINTS[: self.n]) / self.n

    @staticmethod
    def _plan_table(table: tuple[int, ...]) -> list[list[float]]:
        """[x][rem]: the table's points at x plus the believed reach of a better count."""
        top = 40
        out = []
        for x in range(top):
            base = table[min(x, len(table) - 1)]
            row = []
            for rem in range(top):
                best = 0.0
                for j in range(1, min(rem, 7) + 1):
                    gain = (table[min(x + j, len(table) - 1)] - base) * REACH**j
                    best = max(best, gain)
                row.append(base + min(1.0, rem / 5) * best)
            out.append(row)
        return out

    def _candy(self, board: _Board) -> list[float]:
        """Candy points, softened early on since the counts will still move."""
        counts = [row[Kind.CANDY] for row in board.elems]
        left = min(1.0, board.remaining[Kind.CANDY] / max(1, self.candy_total))
        if self.candy_b:
            ranks = sorted(set(counts), reverse=True)
            exact = [CANDY_B_POINTS[ranks.index(c)] for c in counts]
            soft = min(0.8, left)
            return [(1 - soft) * e + soft * self.candy_b_mean for e in exact]
        soft = 0.5 * left
        share = board.remaining[Kind.CANDY] / self.n
        out = []
        for s, c in enumerate(counts):
            total = 0.0
            for t, o in enumerate(counts):
                if t == s:
                    continue
                d = c - o
                exact = o if d > 0 else 0.0
                hope = (0.0, 0.1, 0.3, 0.65, 0.85, 1.0)[max(-2, min(3, d)) + 2] * (o + share)
                total += (1 - soft) * exact + soft * hope
            out.append(total)
        return out

    def _star(self, held: int, gone: int, csl: float) -> float:
        """Stars' plan value: the bonus (or outright win) weighed by the chance of a third."""
        if self.star_b:
            bonus = OUTRIGHT
        else:
            bonus = self.star_mult * (csl if held >= STARS else max(csl, 20.0))
        if held >= STARS:
            return bonus
        fail = (0.0, 0.3 * self.pair_penalty, self.pair_penalty)[held]
        if gone == held:
            p = THIRD_STAR_CHANCE[held]
            return p * bonus + (1 - p) * fail
        return self.pair_penalty if held == 2 else 0.0

    def values(self, board: _Board) -> list[float]:
        """Each seat's plan value: points now plus what its sets may still become."""
        candy = self._candy(board)
        rem = board.remaining
        out = []
        for s in range(self.n):
            e = board.elems[s]
            csl = (
                candy[s]
                + self.spider[min(e[Kind.SPIDER], 39)][min(rem[Kind.SPIDER], 39)]
                + self.leopard[min(e[Kind.LEOPARD], 39)][min(rem[Kind.LEOPARD], 39)]
            )
            v = csl + self._star(e[Kind.STAR], board.stars_gone, csl)
            v += GOOD_WEATHER * board.weather[s] + FACE_DOWN * board.face_down[s]
            if board.pending[s]:
                v += GOOD_WEATHER * board.honour
            out.append(v)
        return out

    def utility(self, values: Sequence[float], me: int) -> float:
        """The bot's standing: its value against its rivals', the leader weighed most."""
        others = [v for s, v in enumerate(values) if s != me]
        return values[me] - (RIVAL_MAX * max(others) + (1 - RIVAL_MAX) * sum(others) / len(others))


@dataclass
class _Rules:
    """What the rules fix for the whole game, precomputed once."""

    scorer: _Scorer
    kinds: tuple[int, ...]
    counts: tuple[int, ...]
    group_of: tuple[int, ...]
    group_tricks: tuple[tuple[int, ...], ...]
    sizes: tuple[int, ...]
    rain: int


class HunterAgent:
    """Ambitious set collector and blocker (see the module docstring)."""

    name = "outsider:hunter"

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self._rng = random.Random(seed)
        self._cache: dict[RulesConfig, _Rules] = {}

    # --- the decision ------------------------------------------------------------------
    def act(self, obs: Observation) -> Move:
        """Allocate, declare or play, whichever this seat is asked."""
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            return self._allocate(obs)
        if phase is Phase.WEATHER and obs.current.declarations[obs.seat] is None:
            return Declare(self._declare(obs))
        if phase is Phase.PLAY:
            moves = obs.legal_moves()
            if moves:
                return self._play(obs, [m.card for m in moves if isinstance(m, Play)])
        raise CslError(f"{self.name}: seat {obs.seat} has no decision to make now")

    def _rules(self, rules: RulesConfig) -> _Rules:
        """Per-rules tables, built on first use."""
        found = self._cache.get(rules)
        if found is None:
            cards = rules.game_deck.cards
            spec = rules.spec
            group_of: list[int] = []
            tricks: list[tuple[int, ...]] = []
            for g, size in enumerate(spec.group_sizes):
                tricks.append(tuple(range(len(group_of), len(group_of) + size)))
                group_of.extend([g] * size)
            found = _Rules(
                _Scorer(rules),
                tuple(int(c.kind) for c in cards),
                tuple(c.count for c in cards),
                tuple(group_of),
                tuple(tricks),
                spec.group_sizes,
                spec.rain_cards,
            )
            self._cache[rules] = found
        return found

    # --- the public score state ----------------------------------------------------------
    def _board(self, obs: Observation, r: _Rules) -> _Board:
        """Replay the sky cards won so far into a board (the current round's as it stands)."""
        n = obs.players
        elems = [[0] * 4 for _ in range(n)]
        face_down = [0] * n
        weather = [0] * n
        pending = [False] * n
        won_now = [False] * n
        declared = [False] * n
        stars_gone = 0
        remaining = [0] * 4
        last = len(obs.rounds) - 1
        taken: set[int] = set()
        for i, rnd in enumerate(obs.rounds):
            current = i == last and not obs.over
            won: list[list[int]] = [[] for _ in range(n)]
            for trick in rnd.tricks:
                if trick.winner is not None and trick.sky is not None:
                    won[trick.winner].append(trick.sky)
                    taken.add(trick.sky)
            for s in range(n):
                bet = bool(rnd.declarations[s])
                stars_gone += sum(1 for sky in won[s] if r.kinds[sky] == Kind.STAR)
                if bet and won[s]:
                    face_down[s] += len(won[s])
                else:
                    for sky in won[s]:
                        elems[s][r.kinds[sky]] += r.counts[sky]
                    if bet:
                        if current:
                            pending[s] = True
                        else:
                            weather[s] += 1
                if current:
                    declared[s] = bet
                    won_now[s] = bool(won[s])
        view = obs.public_view()
        for sky in view.unseen_sky:
            remaining[r.kinds[sky]] += r.counts[sky]
        played = 0
        if obs.rounds and not obs.over:
            rnd = obs.rounds[-1]
            played = sum(1 for t in rnd.tricks if t.complete)
            for sky in rnd.line:
                if sky not in taken:
                    remaining[r.kinds[sky]] += r.counts[sky]
        honour = 0.5 + 0.5 * played / max(1, len(r.group_of))
        return _Board(
            elems, face_down, weather, pending, won_now, declared, stars_gone, remaining, honour
        )

    def _outcomes(self, board: _Board, sky: int, r: _Rules, me: int) -> list[float]:
        """The bot's utility if each seat in turn took this sky card."""
        scorer = r.scorer
        kind, count = r.kinds[sky], r.counts[sky]
        return [
            scorer.utility(scorer.values(board.give(kind, count, s)), me) for s in range(scorer.n)
        ]

    @staticmethod
    def _want(outcomes: Sequence[float], me: int, rivals: Sequence[int]) -> float:
        """How much better the bot does taking the card than a rival taking it, the rival
        who gains most weighed heavily (denial)."""
        if not rivals:
            return 0.0
        theirs = [outcomes[s] for s in rivals]
        other = DENIAL_MIN * min(theirs) + (1 - DENIAL_MIN) * sum(theirs) / len(theirs)
        return outcomes[me] - other

    # --- card counting -----------------------------------------------------------------
    @staticmethod
    def _holds_against(card: int, led: int, pool: int, hidden: int) -> float:
        """Chance that one seat, holding hidden cards drawn from pool, cannot beat card when
        led is the colour led (it must follow when it can, and can trump only when void)."""
        if hidden <= 0:
            return 1.0
        size = pool.bit_count()
        higher = (_higher(card) & pool).bit_count()
        if _colour(card) == BLUE:
            if led == BLUE:
                return _none_drawn(size, higher, hidden)
            led_cards = (COLOUR_MASK[led] & pool).bit_count()
            beat = _none_drawn(size, led_cards, hidden) - _none_drawn(size, led_cards + higher, hidden)
            return 1.0 - beat
        led_cards = (COLOUR_MASK[led] & pool).bit_count()
        blues = (COLOUR_MASK[BLUE] & pool).bit_count()
        beat = (1.0 - _none_drawn(size, higher, hidden)) + (
            _none_drawn(size, led_cards, hidden) - _none_drawn(size, led_cards + blues, hidden)
        )
        return max(0.0, 1.0 - beat)

    def _win_chance(
        self,
        card: int,
        led: int,
        best: int | None,
        later: Sequence[int],
        pools: Sequence[int],
        hidden: Sequence[int],
    ) -> float:
        """Chance that card takes the trick, given the best card so far and who plays after."""
        if best is not None and not _beats(card, best, led):
            return 0.0
        p = 1.0
        for s in later:
            p *= self._holds_against(card, led, pools[s], hidden[s])
        return p

    # --- allocation --------------------------------------------------------------------
    def _alloc_chance(self, card: int, pile: int, pool: int, size: int, opponents: int) -> float:
        """Chance that card wins a trick of its group, seen at allocation: blues count more
        beside voids (they can trump), other colours only when their colour is led."""
        if _colour(card) == BLUE:
            p = self._holds_against(card, BLUE, pool, size) ** opponents
            voids = sum(1 for c in (1, 2) if not pile & COLOUR_MASK[c])
            return p * (0.55 + 0.225 * voids)
        return 0.8 * self._holds_against(card, _colour(card), pool, size) ** opponents

    def _duck_risk(self, card: int, pool: int, size: int, opponents: int) -> float:
        """Chance that card wins a trick even when the bot tries to lose everything."""
        if _colour(card) == BLUE:
            return 0.2 + 0.8 * self._holds_against(card, BLUE, pool, size) ** opponents
        return 0.6 * self._holds_against(card, _colour(card), pool, size) ** opponents

    def _line_wants(self, obs: Observation, r: _Rules, board: _Board) -> list[float]:
        """Want of every sky card in the current line, as priced before play."""
        me = obs.seat
        rivals = [s for s in range(obs.players) if s != me]
        return [
            self._want(self._outcomes(board, sky, r, me), me, rivals) for sky in obs.current.line
        ]

    def _allocate(self, obs: Observation) -> Allocate:
        """The split whose piles best match card strength to what each group is worth."""
        r = self._rules(obs.rules)
        board = self._board(obs, r)
        wants = self._line_wants(obs, r, board)
        hand = obs.hand
        cards = bits(hand)
        pool = r.rain & ~hand
        opponents = obs.players - 1
        options: list[dict[int, tuple[float, float]]] = []
        for g, size in enumerate(r.sizes):
            group_wants = [wants[i] for i in r.group_tricks[g]]
            row: dict[int, tuple[float, float]] = {}
            for combo in itertools.combinations(cards, size):
                pile = sum(1 << c for c in combo)
                chances = [self._alloc_chance(c, pile, pool, size, opponents) for c in combo]
                safe = 1.0
                for c in combo:
                    safe *= 1.0 - self._duck_risk(c, pool, size, opponents)
                row[pile] = (_match(chances, group_wants), safe)
            options.append(row)
        splits = self._splits(options, hand)
        top = max(value for _, value, _ in splits)
        safest = max(splits, key=lambda split: split[2])
        if self._bet_pays(safest[2], top):
            return Allocate(safest[0])
        choices = [piles for piles, value, _ in splits if value >= top - 1e-9]
        return Allocate(self._rng.choice(choices))

    @staticmethod
    def _splits(
        options: list[dict[int, tuple[float, float]]], hand: int
    ) -> list[tuple[tuple[int, ...], float, float]]:
        """Every split of the hand into piles, with its play value and its chance of no win
        (the last pile is what the others leave)."""
        out: list[tuple[tuple[int, ...], float, float]] = []
        last = options[-1]

        def walk(g: int, used: int, piles: tuple[int, ...], value: float, safe: float) -> None:
            if g == len(options) - 1:
                pile = hand & ~used
                v, s = last[pile]
                out.append((piles + (pile,), value + v, safe * s))
                return
            for pile, (v, s) in options[g].items():
                if not pile & used:
                    walk(g + 1, used | pile, piles + (pile,), value + v, safe * s)

        walk(0, 0, (), 0.0, 1.0)
        return out

    @staticmethod
    def _bet_pays(safe: float, play_value: float) -> bool:
        """Whether betting good weather beats playing the hand for its tricks."""
        if safe < 0.45:
            return False
        bet = safe * GOOD_WEATHER - (1 - safe) * 3.0
        return bet > max(0.0, play_value) + 0.5

    # --- good weather ------------------------------------------------------------------
    def _declare(self, obs: Observation) -> bool:
        """Bet good weather only when the piles are weak enough to likely win nothing."""
        r = self._rules(obs.rules)
        board = self._board(obs, r)
        wants = self._line_wants(obs, r, board)
        piles = obs.allocation or ()
        pool = r.rain & ~obs.hand
        opponents = obs.players - 1
        safe = 1.0
        value = 0.0
        for g, pile in enumerate(piles):
            size = r.sizes[g]
            combo = bits(pile)
            for c in combo:
                safe *= 1.0 - self._duck_risk(c, pool, size, opponents)
            chances = [self._alloc_chance(c, pile, pool, size, opponents) for c in combo]
            value += _match(chances, [wants[i] for i in r.group_tricks[g]])
        return self._bet_pays(safe, value)

    # --- card play ---------------------------------------------------------------------
    def _play(self, obs: Observation, legal: list[int]) -> Play:
        """The card that best trades this trick's win chance against the group's later tricks."""
        if len(legal) == 1:
            return Play(legal[0])
        r = self._rules(obs.rules)
        me = obs.seat
        n = obs.players
        rnd = obs.current
        view = obs.public_view()
        board = self._board(obs, r)
        trick = rnd.tricks[-1] if rnd.tricks and not rnd.tricks[-1].complete else None
        index = trick.index if trick is not None else sum(1 for t in rnd.tricks if t.complete)
        group = r.group_of[index]
        plays = trick.plays if trick is not None else ()
        led = _colour(plays[0][1]) if plays else None
        best: int | None = None
        winner: int | None = None
        for seat, card in plays:
            if best is None or _beats(card, best, led if led is not None else _colour(card)):
                best, winner = card, seat
        first = plays[0][0] if plays else me
        order = [(first + k) % n for k in range(n)]
        later = order[order.index(me) + 1 :]
        rivals = [s for s in range(n) if s != me]

        outcomes = self._outcomes(board, rnd.line[index], r, me)
        if winner is None:
            want_now = self._want(outcomes, me, rivals)
        elif not later:
            want_now = outcomes[me] - outcomes[winner]
        else:
            want_now = outcomes[me] - 0.5 * outcomes[winner] - 0.5 * sum(
                outcomes[s] for s in later
            ) / len(later)

        pools = []
        hidden = []
        for s in range(n):
            void = 0
            for c in range(3):
                if view.voids[s][group] >> c & 1:
                    void |= COLOUR_MASK[c]
            pools.append(view.unseen & ~void)
            hidden.append(view.hidden_counts[s][group])
        future = [
            self._want(self._outcomes(board, rnd.line[i], r, me), me, rivals)
            for i in r.group_tricks[group]
            if i > index
        ]
        mine = (obs.allocation or ())[group]
        for t in rnd.tricks:
            for seat, card in t.plays:
                if seat == me:
                    mine &= ~(1 << card)

        scored = []
        for card in legal:
            lead = led if led is not None else _colour(card)
            now = self._win_chance(card, lead, best, later, pools, hidden)
            rest = [
                self._win_chance(c, _colour(c), None, rivals, pools, hidden)
                for c in bits(mine & ~(1 << card))
            ]
            score = now * want_now + _match(rest, future) - 0.01 * _strength(card)
            scored.append((score, card))
        top = max(s for s, _ in scored)
        return Play(self._rng.choice([c for s, c in scored if s >= top - 1e-9]))
