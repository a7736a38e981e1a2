"""Training rows from self-play: one row per decision, for later learning.

A row holds what the deciding seat knew (a fixed-length numeric feature vector, below),
what the search thought of its moves (the visit count of every move it tried, from the
agent's ``last_result``, a `csl_ai.search.SearchResult`; an agent without a search gives
its chosen move one visit), and how the game ended for that seat::

    {"job": 17, "step": 42, "seat": 2, "round": 1, "phase": "play",
     "features": [...], "legal_moves": 5, "search": true,
     "moves": [{"type": "play", "card": "B7"}, ...], "visits": [812, 140, ...],
     "chosen": {"type": "play", "card": "B7"},
     "outcome": {"win_share": 0.5, "points": 31, "rank": 1}}

``step`` numbers the decisions of one game in the order they were taken. A card play
with more than one legal card also holds ``card_features``: ``{"cards": [...], "features":
[[...], ...]}``, each legal card's features for the learned card policy
(`csl_ai.policy.CARD_FEATURES`), from which `csl train` fits it.

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
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from csl_ai.agents import Agent
from csl_ai.game import SCORE_COLUMNS, Observation, Phase
from csl_ai.moves import Move, move_to_json
from csl_ai.policy import card_features
from csl_ai.search import SearchConfig, policy_settings
from csl_ai.rules import Kind

if TYPE_CHECKING:
    from csl_ai.tournament.runner import GameOutcome

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


def legal_move_count(obs: Observation) -> int:
    """How many legal moves the seat has, without building them (an allocation has up to 1680)."""
    phase = obs.phase
    if phase is Phase.ALLOCATE:
        sizes = obs.rules.spec.group_sizes
        count = math.factorial(sum(sizes))
        for size in sizes:
            count //= math.factorial(size)
        return count
    if phase is Phase.WEATHER:
        return 2
    return int(obs.public_view().core.legal_plays()).bit_count() if obs.to_move == obs.seat else 0


@dataclass(frozen=True)
class Decision:
    """One decision an agent took, before the game's outcome is known."""

    step: int
    seat: int
    round: int
    phase: str
    features: list[float]
    legal_moves: int
    moves: list[dict[str, Any]]
    visits: list[int]
    chosen: dict[str, Any]
    search: bool
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
        legal = legal_move_count(obs)
        cards = None
        if obs.phase is Phase.PLAY and legal > 1:
            names, rows = card_features(obs, policy_settings(obs, SearchConfig()))
            cards = {"cards": names, "features": rows}
        before = getattr(self.agent, "last_result", None)
        move = self.agent.act(obs)
        result = getattr(self.agent, "last_result", None)
        searched = result is not None and result is not before
        if result is not None and searched:
            moves = [move_to_json(stats.move) for stats in result.moves]
            visits = [int(stats.visits) for stats in result.moves]
        else:
            moves, visits = [move_to_json(move)], [1]
        self.decisions.append(
            Decision(
                step=next(self.steps),
                seat=obs.seat,
                round=len(obs.rounds) - 1,
                phase=obs.phase.value,
                features=features,
                legal_moves=legal,
                moves=moves,
                visits=visits,
                chosen=move_to_json(move),
                search=searched,
                card_features=cards,
            )
        )
        return move


def training_rows(recorders: Sequence[DecisionRecorder], outcome: GameOutcome) -> list[dict[str, Any]]:
    """Every recorded decision of a finished game as a row, in play order."""
    decisions = sorted((d for r in recorders for d in r.decisions), key=lambda d: d.step)
    return [
        {
            "job": outcome.job,
            "step": d.step,
            "seat": d.seat,
            "round": d.round,
            "phase": d.phase,
            "features": d.features,
            "legal_moves": d.legal_moves,
            "search": d.search,
            "moves": d.moves,
            "visits": d.visits,
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
