"""The JSON a viewer may see of a game: the board, its steps, the rules, the scores.

A live game is drawn from one human seat's view: everything comes from that seat's
`Observation` and its public view (`Observation.public_view`), the same knowledge the AI
seats search from, so no other seat's hand, piles, set-aside card or secret bet can leak
into a state. The full board of every seat (`board_json` with ``viewer=None``) is drawn
only for the review of a record. docs/web-api.md describes every field.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Final

from csl_ai.errors import TallyError
from csl_ai.explain import SCORING_NOTE, ScoringCard, scoring_cards
from csl_ai.game import Game, Observation, Phase, RoundLog, ScoreLine, Trick
from csl_ai.moves import Allocate, Declare, Move
from csl_ai.notation import COLOUR_LETTERS, MAX_RANK, card_str, cards_of, sky_str
from csl_ai.rules import Kind, RulesConfig, SkyCard
from csl_ai.scoring import score_tallies

KIND_NAMES: Final = tuple(kind.text for kind in Kind)


def rules_json(rules: RulesConfig) -> dict[str, Any]:
    """The rules of a game as the page shows them (docs/web-api.md: Rules)."""
    spec = rules.spec
    return {
        "players": rules.players,
        "sides": {kind.text: side.value for kind, side in zip(Kind, rules.sides, strict=True)},
        "star_option": rules.star_option.value,
        "deck": rules.deck.name,
        "first_seat": rules.first_seat,
        "hand_size": spec.hand_size,
        "group_sizes": list(spec.group_sizes),
        "rounds": spec.rounds,
        "ranks": spec.ranks,
        "scoring": [scoring_card_json(card) for card in _scoring_cards(rules)],
        "scoring_note": SCORING_NOTE,
    }


@functools.lru_cache(maxsize=64)
def _scoring_cards(rules: RulesConfig) -> tuple[ScoringCard, ...]:
    """The scoring cards of a game's rules, worked out once (every state carries them)."""
    return tuple(scoring_cards(rules))


def scoring_card_json(card: ScoringCard) -> dict[str, Any]:
    """One scoring card (docs/web-api.md: Rules)."""
    table = None
    if card.table is not None:
        table = [{"count": count, "points": points} for count, points in card.table]
    return {"kind": card.kind, "side": card.side, "title": card.title, "text": card.text, "table": table}


def score_json(line: ScoreLine | Sequence[int]) -> dict[str, int]:
    """A score line by kind, with its total."""
    if isinstance(line, ScoreLine):
        return line.as_dict()
    return dict(zip(ScoreLine.__dataclass_fields__, (int(v) for v in line), strict=True))


def cards_json(mask: int) -> list[str]:
    """A card set as a list of card texts, ascending."""
    return [card_str(card) for card in cards_of(mask)]


def move_text(move: Move) -> str:
    """The canonical text of a move (``B7``, ``B1 R2 G3 | ...``, ``yes``)."""
    return str(move)


def move_kind(move: Move) -> str:
    if isinstance(move, Allocate):
        return "allocate"
    if isinstance(move, Declare):
        return "weather"
    return "play"


def trick_json(
    trick: Trick, sky_cards: Sequence[SkyCard], line: Sequence[int] | None = None
) -> dict[str, Any]:
    """One trick (docs/web-api.md: Trick). line: its round's sky line, which names the sky
    card of a trick still in progress (the engine's `Trick.sky` is set once it is won)."""
    led = trick.led_colour
    sky = trick.sky
    if sky is None and line is not None:
        sky = line[trick.index]
    return {
        "index": trick.index,
        "group": trick.group,
        "leader": trick.leader,
        "plays": [{"seat": seat, "card": card_str(card)} for seat, card in trick.plays],
        "led_colour": COLOUR_LETTERS[led] if led is not None else None,
        "winner": trick.winner,
        "sky": sky_str(sky_cards[sky]) if sky is not None else None,
    }


def _line_json(
    log: RoundLog,
    sky_cards: Sequence[SkyCard],
    group_sizes: Sequence[int],
    worth: Sequence[int | None] | None = None,
    worth_text: Sequence[str | None] | None = None,
) -> list[dict[str, Any]]:
    taken = {t.index: t.winner for t in log.tricks if t.winner is not None}
    groups = [g for g, size in enumerate(group_sizes) for _ in range(size)]
    items = []
    for i, sky in enumerate(log.line):
        card = sky_cards[sky]
        items.append(
            {
                "index": i,
                "group": groups[i],
                "card": sky_str(card),
                "kind": card.kind.text,
                "count": card.count,
                "taken_by": taken.get(i),
                "worth": worth[i] if worth is not None and i not in taken else None,
                "worth_text": worth_text[i] if worth_text is not None and i not in taken else None,
            }
        )
    return items


def _voids(log: RoundLog, players: int, groups: int) -> list[list[list[str]]]:
    """Per seat, per group: the colours the seat has shown it lacks this round."""
    shown = [[0] * groups for _ in range(players)]
    for trick in log.tricks:
        if not trick.plays:
            continue
        led = trick.plays[0][1] // MAX_RANK
        for seat, card in trick.plays[1:]:
            if card // MAX_RANK != led:
                shown[seat][trick.group] |= 1 << led
    return [
        [[COLOUR_LETTERS[c] for c in range(3) if (mask >> c) & 1] for mask in row] for row in shown
    ]


def _taken(
    rounds: Sequence[RoundLog], players: int, sky_cards: Sequence[SkyCard], finished: int
) -> list[list[dict[str, Any]]]:
    """Per seat, the sky cards won; a round among the first `finished` turns a declarer's
    wins face down."""
    out: list[list[dict[str, Any]]] = [[] for _ in range(players)]
    for r, log in enumerate(rounds):
        for trick in log.tricks:
            if trick.winner is None or trick.sky is None:
                continue
            card = sky_cards[trick.sky]
            face_down = r < finished and bool(log.declarations[trick.winner])
            out[trick.winner].append(
                {
                    "card": sky_str(card),
                    "kind": card.kind.text,
                    "count": card.count,
                    "round": r,
                    "face_up": not face_down,
                }
            )
    return out


def _round_elements(
    log: RoundLog, players: int, sky_cards: Sequence[SkyCard], finished: bool
) -> list[list[int]]:
    """Per seat, the elements by kind on the sky cards won in the round of log while it
    is not finished (all zero once it is: they are settled into the tallies then)."""
    out = [[0] * len(Kind) for _ in range(players)]
    if finished:
        return out
    for trick in log.tricks:
        if trick.winner is not None and trick.sky is not None:
            card = sky_cards[trick.sky]
            out[trick.winner][card.kind] += card.count
    return out


def _round_finished(log: RoundLog, line_size: int) -> bool:
    return len(log.tricks) == line_size and log.tricks[-1].complete


def round_results(
    rules: RulesConfig, rounds: Sequence[RoundLog], sky_cards: Sequence[SkyCard]
) -> list[dict[str, Any]]:
    """What each finished round of rounds did to every seat (docs/web-api.md: RoundResult):
    its bet and whether it held, the sky cards won and those turned face down, the round's
    points and the score at its end. Only finished rounds: everything in them is public."""
    n = rules.players
    line_size = rules.spec.line_size
    elements = [[0] * len(Kind) for _ in range(n)]
    face_up = [0] * n
    face_down = [0] * n
    honoured = [0] * n
    before = [0] * n
    out: list[dict[str, Any]] = []
    for r, log in enumerate(rounds):
        if not _round_finished(log, line_size):
            break
        won: list[list[SkyCard]] = [[] for _ in range(n)]
        for trick in log.tricks:
            if trick.winner is not None and trick.sky is not None:
                won[trick.winner].append(sky_cards[trick.sky])
        for s in range(n):
            if log.declarations[s]:
                if won[s]:
                    face_down[s] += len(won[s])
                else:
                    honoured[s] += 1
            else:
                face_up[s] += len(won[s])
                for card in won[s]:
                    elements[s][card.kind] += card.count
        try:
            scores = score_tallies(rules, elements, face_up, face_down, honoured).scores
        except TallyError:  # pragma: no cover - a real game's tallies always score
            break
        seats = []
        for s in range(n):
            bet = bool(log.declarations[s])
            texts = [sky_str(card) for card in won[s]]
            seats.append(
                {
                    "seat": s,
                    "good_weather": bet,
                    "held": (not won[s]) if bet else None,
                    "won": texts,
                    "face_down": texts if bet else [],
                    "points": scores[s].total - before[s],
                    "score": score_json(scores[s]),
                }
            )
            before[s] = scores[s].total
        out.append({"round": r, "seats": seats})
    return out


def board_json(
    game: Game,
    viewer: int | None,
    seats: Sequence[dict[str, Any]],
    *,
    to_move: int | None = None,
    worth: tuple[Sequence[int | None], Sequence[str | None]] | None = None,
) -> dict[str, Any]:
    """The table as viewer sees it (docs/web-api.md: Board); every seat open with
    viewer=None (a review frame). seats holds each seat's ``seat, human, agent, level``."""
    rules = game.rules
    spec = rules.spec
    n = rules.players
    groups = len(spec.group_sizes)
    phase = game.phase
    obs: Observation | None = None
    if viewer is None:
        rounds: Sequence[RoundLog] = game.rounds
        core = game.core
        hidden = [[0] * groups for _ in range(n)]
        pending = set(game.pending_seats()) if phase in (Phase.ALLOCATE, Phase.WEATHER) else set()
    else:
        obs = game.observation(viewer)
        rounds = obs.rounds
        view = obs.public_view()
        core = view.core
        hidden = [list(row) for row in view.hidden_counts]
        pending = set(obs.pending)
    if not rounds:
        raise ValueError("no round has been dealt")
    log = rounds[-1]
    sky_cards = game.sky_cards
    log_finished = _round_finished(log, spec.line_size)
    finished_rounds = len(rounds) - (0 if log_finished else 1)
    taken = _taken(rounds, n, sky_cards, finished_rounds)
    round_elements = _round_elements(log, n, sky_cards, log_finished)
    voids = _voids(log, n, groups)
    scores = core.scores()
    elements = core.elements
    weather_cards = core.good_weather
    in_tricks = phase in (Phase.PLAY, Phase.OVER)
    seat_views = []
    for s in range(n):
        visible = viewer is None or s == viewer
        allocated = phase is not Phase.ALLOCATE or s not in pending
        if phase in (Phase.ALLOCATE,):
            declared = False
        elif phase is Phase.WEATHER:
            declared = s not in pending
        else:
            declared = True
        if phase is Phase.DEAL:
            allocated = declared = True
        hand: list[str] | None = None
        piles: list[list[str]] | None = None
        if visible:
            dealt = log.hands[s] or 0
            if log.allocations[s] is not None:
                left = core.piles[s]
                piles = [cards_json(p) for p in left]
                still = 0
                for p in left:
                    still |= p
                hand = cards_json(still)
            else:
                hand = cards_json(dealt)
        bet = log.declarations[s]
        seat_views.append(
            {
                **seats[s],
                "hand": hand,
                "piles": piles,
                "hidden_counts": [0] * groups if visible else hidden[s],
                "allocated": allocated,
                "declared": declared,
                "good_weather": bet if (visible or in_tricks or phase is Phase.DEAL) else None,
                "voids": voids[s],
                "taken": taken[s],
                "elements": dict(zip(KIND_NAMES, elements[s], strict=True)),
                "round_elements": dict(zip(KIND_NAMES, round_elements[s], strict=True)),
                "good_weather_cards": weather_cards[s],
                "score": score_json(scores[s]),
            }
        )
    current = game.current_trick
    trick = trick_json(current, sky_cards, log.line) if current is not None else None
    set_aside = None
    if viewer is None and log.set_aside:
        set_aside = card_str(log.set_aside.bit_length() - 1)
    playing = phase is Phase.PLAY
    return {
        "round": len(rounds) - 1,
        "phase": phase.value,
        "to_move": to_move if viewer is not None else (None if game.to_move < 0 else game.to_move),
        "first_player": log.first_player,
        "line": _line_json(
            log, sky_cards, spec.group_sizes, *(worth if worth is not None else (None, None))
        ),
        "group": game.core.group if playing else None,
        "trick": trick,
        "tricks": [trick_json(t, sky_cards, log.line) for t in log.tricks],
        "leader": _leader(game) if playing else None,
        "past_rounds": [
            {
                "round": r,
                "first_player": past.first_player,
                "line": _line_json(past, sky_cards, spec.group_sizes),
                "tricks": [trick_json(t, sky_cards, past.line) for t in past.tricks],
                "declarations": list(past.declarations),
            }
            for r, past in enumerate(rounds[:-1])
        ],
        "seats": seat_views,
        "set_aside": set_aside,
        "round_results": round_results(rules, rounds, sky_cards),
    }


def _leader(game: Game) -> int:
    """Who leads the trick in progress, or the next one."""
    current = game.current_trick
    return current.leader if current is not None else game.to_move


def result_json(game: Game) -> dict[str, Any] | None:
    """Final scores and winners once the game is over, else None."""
    if not game.is_over:
        return None
    result = game.result()
    return {
        "scores": [line.as_dict() for line in result.scores],
        "winners": list(result.winners),
        "outright": result.outright,
    }


__all__: Sequence[str] = (
    "board_json",
    "cards_json",
    "move_kind",
    "move_text",
    "result_json",
    "round_results",
    "rules_json",
    "score_json",
    "scoring_card_json",
    "trick_json",
)
