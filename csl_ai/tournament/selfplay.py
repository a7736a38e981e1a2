"""Training rows from self-play: one row per decision, for later learning.

A row holds what the deciding seat knew (a fixed-length numeric feature vector, below),
every legal move as a small integer code, what the search thought of the moves it tried
(visits, win probability and expected points, from the agent's ``last_result``, a
`csl_ai.search.SearchResult`; an agent without a search gives its chosen move one visit),
and how the game ended for that seat. docs/training-rows.md documents every field, the
codes and an example; `csl_ai.tournament.rows` reads a file of rows into numpy arrays::

    {"job": 17, "step": 42, "schema": "csl-training-rows", "version": 1,
     "seat": 2, "players": 4, "round": 1, "phase": "play", "features": [...],
     "legal_moves": 3, "legal": [6, 18, 30], "action": 6, "search": true,
     "moves": [{"type": "play", "card": "B7"}, ...], "codes": [6, 30],
     "visits": [812, 140], "win_probability": [0.61, 0.4], "expected_points": [31.2, 27.9],
     "chosen": {"type": "play", "card": "B7"},
     "outcome": {"win_share": 0.5, "points": 31, "rank": 1}}

Move codes (`move_code`): a card play is the card's index, a weather bet 0 (no good
weather) or 1 (good weather), an allocation the base-3 number whose digit i is the pile of
the i-th lowest card of the hand (allocation rows also hold that ``hand``). ``legal``
lists the codes of every legal move: cards ascending, weather ``[0, 1]``, allocations in
the core's enumeration order (``CoreState.allocations``). ``step`` numbers the decisions
of one game in the order they were taken; every row starts with ``{"job":…,"step":…,``
(the harness reads that key without parsing the row). A card play with more than one
legal card also holds ``card_features``: ``{"cards": [...], "features": [[...], ...]}``,
each legal card's features for the learned card policy (`csl_ai.policy.CARD_FEATURES`),
from which `csl train` fits it.

The feature vector (`FEATURE_LAYOUT` gives each block's name and length, `FEATURE_NAMES`
every entry's name). Cards are 36 slots, index = colour*12 + rank-1 (blue, red, green);
seats are relative to the deciding seat (0 = itself, 1 = the next clockwise, ...), seats
beyond the player count are 0. Counts are raw; nothing is rescaled except ``progress``.

- ``hand``: cards the seat still holds; ``pile0..pile2``: its remaining cards per pile
  (all 0 before it allocates); ``played``: cards played this round, the current trick
  included; ``trick``: cards of the trick in progress; ``unseen``: rain cards in use it
  has not seen; ``in_use``: the rain cards of this player count.
- ``led``: the led colour of the trick in progress, one-hot.
- ``seats``: per seat, 10 entries: present, face-up candy, spider, leopard and star
  elements, face-down cards, honoured good-weather cards, sky cards won this round,
  declaration known, declared good weather.
- ``score``: per seat, the total its face-up cards and bonuses score now.
- ``to_move`` and ``first_player``: one-hot seats.
- ``line``: per position of the round's line (up to 9), 6 entries: candy, spider,
  leopard and star elements of its sky card, already won, the trick being played.
- ``phase``: allocate, weather, play (one-hot); ``players``: 2..5 (one-hot).
- ``progress``: round / rounds, group / groups, line position / line size (0..1).
- ``sky_unseen``: elements per kind (candy, spider, leopard, star) of the sky cards not
  yet dealt into any line.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from csl_ai.agents import Agent
from csl_ai.errors import NotationError
from csl_ai.game import SCORE_COLUMNS, Observation, Phase
from csl_ai.moves import Allocate, Declare, Move, Play, move_to_json
from csl_ai.notation import cards_of
from csl_ai.policy import card_features
from csl_ai.search import SearchConfig, policy_settings
from csl_ai.rules import Kind

if TYPE_CHECKING:
    from csl_ai.tournament.runner import GameOutcome

SCHEMA: Final = "csl-training-rows"
SCHEMA_VERSION: Final = 1
"""Version of the row layout (docs/training-rows.md); a change to any field raises it."""
CARDS: Final = 36
MAX_SEATS: Final = 5
MAX_GROUPS: Final = 3
MAX_LINE: Final = 9
SEAT_FIELDS: Final = (
    "present", "candy", "spider", "leopard", "star",
    "face_down", "good_weather", "won_this_round", "declared_known", "declared",
)
LINE_FIELDS: Final = ("candy", "spider", "leopard", "star", "won", "current")
PHASES: Final = (Phase.ALLOCATE, Phase.WEATHER, Phase.PLAY)

FEATURE_LAYOUT: Final[tuple[tuple[str, int], ...]] = (
    ("hand", CARDS),
    *((f"pile{g}", CARDS) for g in range(MAX_GROUPS)),
    ("played", CARDS),
    ("trick", CARDS),
    ("unseen", CARDS),
    ("in_use", CARDS),
    ("led", 3),
    ("seats", MAX_SEATS * len(SEAT_FIELDS)),
    ("score", MAX_SEATS),
    ("to_move", MAX_SEATS),
    ("first_player", MAX_SEATS),
    ("line", MAX_LINE * len(LINE_FIELDS)),
    ("phase", len(PHASES)),
    ("players", 4),
    ("progress", 3),
    ("sky_unseen", 4),
)
"""Blocks of the feature vector, in order: (name, length)."""

FEATURE_SIZE: Final = sum(n for _, n in FEATURE_LAYOUT)



def _names() -> tuple[str, ...]:
    names: list[str] = []
    for block, size in FEATURE_LAYOUT:
        if block == "seats":
            names += [f"seats[{s}].{f}" for s in range(MAX_SEATS) for f in SEAT_FIELDS]
        elif block == "line":
            names += [f"line[{i}].{f}" for i in range(MAX_LINE) for f in LINE_FIELDS]
        else:
            names += [f"{block}[{i}]" for i in range(size)]
    return tuple(names)


FEATURE_NAMES: Final = _names()
"""The name of every entry of the feature vector (``seats[1].candy``, ``hand[7]``)."""


def _bits(mask: int) -> list[int]:
    return [(mask >> i) & 1 for i in range(CARDS)]


def _one_hot(index: int, size: int) -> list[int]:
    return [1 if i == index else 0 for i in range(size)]


def observation_features(obs: Observation) -> list[float]:
    """The feature vector of an observation (see the module doc); length FEATURE_SIZE."""
    view = obs.public_view()
    core = view.core
    rules = obs.rules
    spec = rules.spec
    n, seat = obs.players, obs.seat
    current = obs.current
    deck = rules.game_deck.cards
    phase = Phase(core.phase)

    def rel(s: int) -> int:
        return (s - seat) % n

    piles = list(core.piles[seat]) if obs.allocation is not None else []
    held = 0
    for pile in piles:
        held |= pile
    if obs.allocation is None:
        held = obs.hand
    played = 0
    trick = 0
    for t in current.tricks:
        for _s, card in t.plays:
            played |= 1 << card
            if not t.complete:
                trick |= 1 << card
    in_progress = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None

    out: list[float] = []
    out += _bits(held)
    for g in range(MAX_GROUPS):
        out += _bits(piles[g] if g < len(piles) else 0)
    out += _bits(played) + _bits(trick) + _bits(view.unseen) + _bits(spec.rain_cards)
    led = in_progress.led_colour if in_progress is not None else None
    out += _one_hot(led if led is not None else -1, 3)

    seats = [[0] * len(SEAT_FIELDS) for _ in range(MAX_SEATS)]
    for s in range(n):
        row = seats[rel(s)]
        declared = current.declarations[s]
        row[:] = [
            1, *core.elements[s], core.facedown_cards[s], core.good_weather[s], core.round_won[s],
            0 if declared is None else 1, 1 if declared else 0,
        ]
    out += [v for row in seats for v in row]
    totals = [0] * MAX_SEATS
    total_col = SCORE_COLUMNS.index("total")
    for s, row in enumerate(core.scores()):
        totals[rel(s)] = row[total_col]
    out += totals
    to_move = core.to_move if phase is Phase.PLAY else seat
    out += _one_hot(rel(to_move), MAX_SEATS) + _one_hot(rel(current.first_player), MAX_SEATS)

    won_positions = {t.index for t in current.tricks if t.complete}
    line = []
    for i in range(MAX_LINE):
        if i < len(current.line):
            sky = deck[current.line[i]]
            elems = [sky.count if sky.kind is kind else 0 for kind in Kind]
            current_pos = 1 if in_progress is not None and in_progress.index == i else 0
            line += [*elems, 1 if i in won_positions else 0, current_pos]
        else:
            line += [0] * len(LINE_FIELDS)
    out += line
    out += [1 if phase is p else 0 for p in PHASES]
    out += _one_hot(n - 2, 4)
    out += [
        round(core.round / spec.rounds, 4),
        round(core.group / len(spec.group_sizes), 4) if phase is Phase.PLAY else 0.0,
        round(core.line_pos / spec.line_size, 4) if phase is Phase.PLAY else 0.0,
    ]
    sky_unseen = [0, 0, 0, 0]
    for sky_id in view.unseen_sky:
        sky_unseen[deck[sky_id].kind] += deck[sky_id].count
    out += sky_unseen
    return out


def split_code(piles: Sequence[int], hand: Sequence[int]) -> int:
    """The code of an allocation: sum of pile(card) * 3**i over the hand's cards, hand
    ascending, i the card's place in it (so digit i in base 3 is the pile of card i)."""
    place = {card: i for i, card in enumerate(hand)}
    code = 0
    for group, pile in enumerate(piles):
        for card in cards_of(pile):
            code += group * 3 ** place[card]
    return code


def split_codes(splits: Sequence[Sequence[int]], hand: Sequence[int]) -> list[int]:
    """`split_code` of many allocations of one hand, in their order (each pile's part cached,
    since a hand's 1680 splits share 84 piles)."""
    place = {card: i for i, card in enumerate(hand)}
    part: dict[int, int] = {}

    def weight(pile: int) -> int:
        value = part.get(pile)
        if value is None:
            value = part[pile] = sum(3 ** place[card] for card in cards_of(pile))
        return value

    return [sum(group * weight(pile) for group, pile in enumerate(piles)) for piles in splits]


def move_code(move: Move, hand: Sequence[int] = ()) -> int:
    """A move's code in training rows: a card's index, a weather bet 0/1, an allocation's
    `split_code` over hand (its cards ascending)."""
    if isinstance(move, Play):
        return move.card
    if isinstance(move, Declare):
        return int(move.good_weather)
    if isinstance(move, Allocate):
        return split_code(move.piles, hand)
    raise NotationError(f"not a move: {move!r}")


def legal_codes(obs: Observation) -> tuple[list[int], list[int]]:
    """(codes of every legal move of the seat, the hand the allocation codes refer to).

    Cards ascending, weather [0, 1], allocations in the core's enumeration order; the hand
    is empty outside the allocation phase."""
    core = obs.public_view().core
    phase = obs.phase
    if phase is Phase.ALLOCATE:
        hand = cards_of(obs.hand)
        return split_codes(core.allocations(obs.hand), hand), hand
    if phase is Phase.WEATHER:
        return [0, 1], []
    return (cards_of(int(core.legal_plays())) if obs.to_move == obs.seat else []), []


def _estimate(value: float, visits: int, digits: int) -> float | None:
    """A search's estimate for a move, rounded; None for a move it never visited."""
    return round(float(value), digits) if visits > 0 else None


@dataclass(frozen=True)
class Decision:
    """One decision an agent took, before the game's outcome is known."""

    step: int
    seat: int
    players: int
    round: int
    phase: str
    features: list[float]
    hand: list[int]
    legal: list[int]
    action: int
    search: bool
    moves: list[dict[str, Any]]
    codes: list[int]
    visits: list[int]
    win_probability: list[float | None] | None
    expected_points: list[float | None] | None
    chosen: dict[str, Any]
    card_features: dict[str, Any] | None = None


class DecisionRecorder:
    """Wraps an agent and records each of its decisions as a `Decision`.

    Recorders of one game share a step counter so their rows merge in play order.
    """

    def __init__(self, agent: Agent, steps: Iterator[int] | None = None) -> None:
        self.agent = agent
        self.name = agent.name
        self.steps = steps if steps is not None else itertools.count()
        self.decisions: list[Decision] = []

    def act(self, obs: Observation) -> Move:
        features = observation_features(obs)
        legal, hand = legal_codes(obs)
        cards = None
        if obs.phase is Phase.PLAY and len(legal) > 1:
            names, rows = card_features(obs, policy_settings(obs, SearchConfig()))
            cards = {"cards": names, "features": rows}
        before = getattr(self.agent, "last_result", None)
        move = self.agent.act(obs)
        result = getattr(self.agent, "last_result", None)
        searched = result is not None and result is not before
        win: list[float | None] | None = None
        points: list[float | None] | None = None
        if result is not None and searched:
            tried, visits, win, points = [], [], [], []
            for stats in result.moves:
                # moves that play as one were searched as one: each gets its statistics,
                # the visits shared among them (the policy target stays the search's)
                group = (stats.move, *stats.same_as)
                share, extra = divmod(int(stats.visits), len(group))
                raw = stats.raw_win_probability if stats.raw_win_probability is not None else stats.win_probability
                for k, move_k in enumerate(group):
                    tried.append(move_k)
                    visits.append(share + (1 if k < extra else 0))
                    win.append(_estimate(raw, stats.visits, 4))
                    points.append(_estimate(stats.expected_points, stats.visits, 3))
        else:
            tried, visits = [move], [1]
        self.decisions.append(
            Decision(
                step=next(self.steps),
                seat=obs.seat,
                players=obs.players,
                round=len(obs.rounds) - 1,
                phase=obs.phase.value,
                features=features,
                hand=hand,
                legal=legal,
                action=move_code(move, hand),
                search=searched,
                moves=[move_to_json(m) for m in tried],
                codes=[move_code(m, hand) for m in tried],
                visits=visits,
                win_probability=win,
                expected_points=points,
                chosen=move_to_json(move),
                card_features=cards,
            )
        )
        return move


def training_rows(recorders: Sequence[DecisionRecorder], outcome: GameOutcome) -> list[dict[str, Any]]:
    """Every recorded decision of a finished game as a row, in play order
    (docs/training-rows.md; job and step stay the first two fields)."""
    decisions = sorted((d for r in recorders for d in r.decisions), key=lambda d: d.step)
    return [
        {
            "job": outcome.job,
            "step": d.step,
            "schema": SCHEMA,
            "version": SCHEMA_VERSION,
            "seat": d.seat,
            "players": d.players,
            "round": d.round,
            "phase": d.phase,
            "features": d.features,
            **({"hand": d.hand} if d.phase == Phase.ALLOCATE.value else {}),
            "legal_moves": len(d.legal),
            "legal": d.legal,
            "action": d.action,
            "search": d.search,
            "moves": d.moves,
            "codes": d.codes,
            "visits": d.visits,
            "win_probability": d.win_probability,
            "expected_points": d.expected_points,
            "chosen": d.chosen,
            **({"card_features": d.card_features} if d.card_features is not None else {}),
            "outcome": {
                "win_share": outcome.win_shares[d.seat],
                "points": outcome.totals[d.seat],
                "rank": outcome.ranks[d.seat],
            },
        }
        for d in decisions
    ]
