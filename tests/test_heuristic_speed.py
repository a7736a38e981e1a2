"""The fast hand evaluation of `HeuristicAgent` decides and values exactly as the slow one
it replaced.

`_SlowHeuristic` keeps a verbatim copy of the methods as they were before the
allocation was vectorised (per-pile `pile_scores` for every pile of every group, the
tables built afresh for each sky card); each agent class is compared with the same class
over that copy, at random positions of 2..5 players with random sides and star options,
and over whole seeded games. `GOLDEN_MOVES` pins every move of fixed seeded games to the
digest recorded before the second round of speed work (issue 13: forced plays, memos of
the table and the hand, one gather for the splits), so no speed change can alter a move.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence

import numpy as np
import pytest
from gamegen import random_rules, step

from csl_ai import _core
from csl_ai.agents import play_game
from csl_ai.game import Game, Observation, Phase
from csl_ai.evaluation import SeatTable, expected_points, kind_points_table, split_table
from csl_ai.heuristic import _STRENGTH, HeuristicAgent, no_decision, strength_key
from csl_ai.moves import Allocate, Move, Play
from csl_ai.notation import BLUE, MAX_RANK, N_RAIN, card_colour, cards_of, mask_of
from csl_ai.rules import Kind, RulesConfig, Side, StarOption
from csl_ai.zoo import ZOO_AGENTS

PLAYER_COUNTS = (2, 3, 4, 5)
AGENT_CLASSES: tuple[type[HeuristicAgent], ...] = (HeuristicAgent, *ZOO_AGENTS.values())


class _SlowHeuristic(HeuristicAgent):
    """The evaluation as it was before it was made fast, copied unchanged."""

    def table(self, obs: Observation) -> SeatTable:
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
        return SeatTable(
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

    def _relative(self, table: SeatTable, elems: list[list[int]]) -> float:
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

    def sky_value(self, table: SeatTable, sky: int) -> float:
        cached = table.values.get(sky)
        if cached is not None:
            return cached
        p = self.params
        card = table.obs.rules.game_deck.cards[sky]
        seat = table.obs.seat
        if card.kind is Kind.STAR:
            value = self.star_value(table)
        elif card.kind is Kind.CANDY:
            after = [list(e) for e in table.elems]
            after[seat][card.kind] += card.count
            value = self._relative(table, after) - self._relative(table, table.elems)
            value = max(value, 0.0) + p.candy_bonus + p.candy_future * table.future
        else:
            tab = kind_points_table(card.kind, table.sides[card.kind])
            have = table.elems[seat][card.kind]
            left = max(0, table.unclaimed_elements[card.kind] - card.count)
            q = min(1.0, p.future_share / table.obs.players)
            value = expected_points(tab, have + card.count, left, q) - expected_points(
                tab, have, left, q
            )
        table.values[sky] = value
        return value

    def star_value(self, table: SeatTable) -> float:
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
        n = table.obs.players
        rows, _, _ = _core.score_tallies(
            n, table.sides, 0, [tuple(e) for e in table.elems], [0] * n, [0] * n, [0] * n
        )
        return sum(rows[seat][:3])

    def card_powers(self, table: SeatTable) -> dict[int, float]:
        p = self.params
        hand = table.obs.hand
        others = table.obs.rules.spec.rain_cards & ~hand
        win: dict[int, float] = {}
        i = table.obs.players - 2
        for card in cards_of(hand):
            hi = _slow_higher_same(card, others)
            if card_colour(card) == BLUE:
                win[card] = p.blue_decay[i] ** hi
            else:
                win[card] = p.side_top[i] * p.side_decay[i] ** hi
        return win

    def group_values(self, table: SeatTable) -> list[list[float]]:
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

    def pile_scores(
        self, values: Sequence[float], cards: Sequence[int], win: Mapping[int, float]
    ) -> tuple[float, float, float]:
        p = self.params
        colours = {card_colour(c) for c in cards}
        blues = sum(1 for c in cards if card_colour(c) == BLUE)
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
        win = self.card_powers(table)
        sizes = table.obs.rules.spec.group_sizes
        hand = cards_of(table.obs.hand)
        values = self.group_values(table)
        splits, combos = split_table(sizes)
        worth = np.zeros(len(splits))
        risk = np.zeros(len(splits))
        tricks = np.zeros(len(splits))
        for g, size in enumerate(sizes):
            scores = np.array(
                [
                    self.pile_scores(values[g], [hand[i] for i in combo], win)
                    for combo in combos[size]
                ]
            )
            worth += scores[splits[:, g], 0]
            risk += scores[splits[:, g], 1]
            tricks += scores[splits[:, g], 2]
        return worth, self.weather_worth(risk, tricks)

    def _allocate(self, table: SeatTable) -> tuple[tuple[int, ...], bool]:
        p = self.params
        worth, weather = self.split_values(table)
        noise = np.random.default_rng(self._rng.getrandbits(64)).random(len(worth)) * 1e-6
        normal = int(np.argmax(worth + noise))
        safe = int(np.argmax(weather + noise))
        if weather[safe] > worth[normal] + p.weather_margin:
            chosen, is_weather = safe, True
        else:
            chosen, is_weather = normal, False
        return _slow_split_piles(table.obs, chosen), is_weather

    def allocation_values(self, obs: Observation) -> dict[tuple[int, ...], float]:
        if obs.phase is not Phase.ALLOCATE or obs.allocation is not None:
            raise no_decision(self.name, obs)
        worth, weather = self.split_values(self.table(obs))
        best = np.maximum(worth, weather).tolist()
        splits, masks = _slow_pile_masks(obs)
        columns = [masks[g][splits[:, g]].tolist() for g in range(len(masks))]
        return {tuple(piles): v for *piles, v in zip(*columns, best, strict=True)}

    def weather_worth(self, risk: np.ndarray, tricks: np.ndarray) -> np.ndarray:
        p = self.params
        clean = np.exp(-p.weather_risk_scale * risk)
        return p.weather_points * clean - p.face_down_points * tricks

    def plan_values(self, table: SeatTable, piles: Sequence[int]) -> tuple[float, float]:
        win = self.card_powers(table)
        values = self.group_values(table)
        totals = np.zeros(3)
        for g, pile in enumerate(piles):
            totals += self.pile_scores(values[g], cards_of(pile), win)
        weather = self.weather_worth(totals[1:2], totals[2:3])
        return float(totals[0]), float(weather[0])


_COLOUR_MASK = tuple(((1 << MAX_RANK) - 1) << (MAX_RANK * c) for c in range(3))


def _slow_higher_same(card: int, pool: int) -> int:
    colour_mask = _COLOUR_MASK[card_colour(card)]
    above = colour_mask & ~((1 << (card + 1)) - 1)
    return (pool & above).bit_count()


def _slow_pile_masks(obs: Observation) -> tuple[np.ndarray, list[np.ndarray]]:
    sizes = obs.rules.spec.group_sizes
    hand = cards_of(obs.hand)
    splits, combos = split_table(sizes)
    masks = [
        np.array([mask_of([hand[i] for i in combo]) for combo in combos[size]], dtype=np.int64)
        for size in sizes
    ]
    return splits, masks


def _slow_split_piles(obs: Observation, k: int) -> tuple[int, ...]:
    splits, masks = _slow_pile_masks(obs)
    return tuple(int(masks[g][splits[k, g]]) for g in range(len(masks)))


REFERENCE: dict[type[HeuristicAgent], type[HeuristicAgent]] = {
    HeuristicAgent: _SlowHeuristic,
    **{cls: type(f"Slow{cls.__name__}", (cls, _SlowHeuristic), {}) for cls in ZOO_AGENTS.values()},
}
"""Each agent class over the slow evaluation: its own overrides on top of the old code."""


def _positions(players: int, games: int, seed: int) -> list[tuple[Observation, int]]:
    """(observation, decision seed) at every decision of random games with random rules,
    for every seat that may move."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        game = Game(random_rules(rng, players), seed=rng.randrange(10**6))
        while not game.is_over:
            for seat in game.pending_seats():
                out.append((game.observation(seat), rng.randrange(10**6)))
            step(game, rng)
    return out


def test_each_reference_is_its_class_over_the_slow_code() -> None:
    for cls, ref in REFERENCE.items():
        assert issubclass(ref, cls) and issubclass(ref, _SlowHeuristic)
        assert ref.__mro__.index(_SlowHeuristic) == ref.__mro__.index(HeuristicAgent) - 1
    slow_methods = {name for name, value in vars(_SlowHeuristic).items() if callable(value)}
    assert {name for name in slow_methods if not hasattr(HeuristicAgent, name)} == {"_relative"}


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_allocation_values_equal_the_slow_ones(players: int) -> None:
    checked = 0
    for obs, _ in _positions(players, 4, 700 + players):
        if obs.phase is not Phase.ALLOCATE or obs.allocation is not None:
            continue
        for cls in (HeuristicAgent, ZOO_AGENTS["trumps"], ZOO_AGENTS["leopards"]):
            fast = cls(1).allocation_values(obs)
            slow = REFERENCE[cls](1).allocation_values(obs)
            assert fast.keys() == slow.keys()
            assert all(abs(fast[k] - v) <= 1e-9 for k, v in slow.items())
        checked += 1
    assert checked >= 4 * players


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_every_decision_and_split_value_equals_the_slow_one(players: int) -> None:
    counts = {phase: 0 for phase in Phase}
    for obs, seed in _positions(players, 3, 900 + players):
        phase = obs.phase
        counts[phase] += 1
        for cls in AGENT_CLASSES:
            fast, slow = cls(seed), REFERENCE[cls](seed)
            if phase is Phase.ALLOCATE and obs.allocation is None:
                fw, fx = fast.split_values(fast.table(obs))
                sw, sx = slow.split_values(slow.table(obs))
                np.testing.assert_allclose(fw, sw, rtol=0, atol=1e-9)
                np.testing.assert_allclose(fx, sx, rtol=0, atol=1e-9)
            if phase is Phase.WEATHER and obs.allocation is not None:
                f = fast.plan_values(fast.table(obs), obs.allocation)
                s = slow.plan_values(slow.table(obs), obs.allocation)
                assert f == pytest.approx(s, rel=0, abs=1e-9)
            if phase is Phase.PLAY and obs.to_move == obs.seat:
                ft, st = fast.table(obs), slow.table(obs)
                for sky in obs.current.line:
                    assert abs(fast.won_value(ft, sky) - slow.won_value(st, sky)) <= 1e-9
            assert fast.act(obs) == slow.act(obs), (cls.name, obs.phase)
    assert counts[Phase.ALLOCATE] and counts[Phase.WEATHER] and counts[Phase.PLAY]


def _moves(rules: RulesConfig, agents: Sequence[HeuristicAgent], seed: int) -> list[Move]:
    moves: list[Move] = []
    play_game(rules, agents, seed, on_move=lambda _g, _s, move: moves.append(move))
    return moves


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_seeded_games_are_move_for_move_those_of_the_slow_code(players: int) -> None:
    rng = random.Random(1100 + players)
    for game in range(len(AGENT_CLASSES) + 2):
        rules = random_rules(rng, players)
        seed = rng.randrange(10**6)
        if game < 2:
            classes = [HeuristicAgent] * players
        else:
            first = game - 2
            classes = [AGENT_CLASSES[(first + s) % len(AGENT_CLASSES)] for s in range(players)]
        fast = _moves(rules, [cls(seed + s) for s, cls in enumerate(classes)], seed)
        slow = _moves(rules, [REFERENCE[cls](seed + s) for s, cls in enumerate(classes)], seed)
        assert fast == slow


GOLDEN_MOVES: dict[int, str] = {
    2: "2cd8a848deb34a6ea20e700fae106ab1ffa90fb9cf2d3e7d25e2d813c97a78d4",
    3: "bd334769479fc7431b0829edb9e2bf555382aedae886a4fbf6fb4154fd40cc5c",
    4: "828ca45b61f4349651142ea6ed8c33b5ec27086813148409dc81e071a85781c0",
    5: "779843355c476485d09e87bc233ab0619f6754031a9d7c0a48719d55c76ed3ff",
}
"""sha256 of `_golden_digest(players)`'s moves, recorded from the agents as of commit
d0e5654, before the second round of speed work."""


def _golden_rules(players: int, i: int) -> RulesConfig:
    """Rules of golden game i: sides, star option and first seat cycle with i."""
    return RulesConfig(
        players=players,
        sides=tuple(Side.B if (i >> k) & 1 else Side.A for k in range(4)),  # type: ignore[arg-type]
        star_option=(StarOption.TWICE, StarOption.DOUBLE)[(i >> 4) & 1],
        first_seat=i % players,
    )


def _move_key(seat: int, move: Move) -> str:
    if isinstance(move, Play):
        return f"{seat}p{move.card};"
    if isinstance(move, Allocate):
        return f"{seat}a{','.join(map(str, move.piles))};"
    return f"{seat}d{int(move.good_weather)};"


def _golden_digest(players: int) -> str:
    """Every move of 20 seeded games: 14 between heuristic agents, 6 mixing in the zoo."""
    digest = hashlib.sha256()
    for i in range(20):
        if i < 14:
            classes = [HeuristicAgent] * players
        else:
            classes = [AGENT_CLASSES[(i + s) % len(AGENT_CLASSES)] for s in range(players)]
        agents = [cls(100 * i + s) for s, cls in enumerate(classes)]
        play_game(
            _golden_rules(players, 7 * i + 3),
            agents,
            1000 + i,
            on_move=lambda _g, seat, move: digest.update(_move_key(seat, move).encode()),
        )
    return digest.hexdigest()


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_seeded_games_are_move_for_move_the_recorded_ones(players: int) -> None:
    assert _golden_digest(players) == GOLDEN_MOVES[players], (
        f"{players}-player heuristic and zoo games no longer make the recorded moves"
    )


def test_strength_orders_cards_as_key() -> None:
    for a in range(N_RAIN):
        for b in range(N_RAIN):
            assert (_STRENGTH[a] < _STRENGTH[b]) == (strength_key(a) < strength_key(b))
            assert (_STRENGTH[a] == _STRENGTH[b]) == (strength_key(a) == strength_key(b))
