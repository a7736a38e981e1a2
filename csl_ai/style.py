"""Style bots: a rule-based player whose whole style is a short vector of numbers, built
from the scoring rules rather than from the heuristic's evaluation.

The heuristic and the zoo are one family (one hand evaluation, one decision changed per
bot), so tuning the search against them measures the family against itself. A
`StyleAgent` values each sky card by what it does to the exact score under the sides in
play (`csl_ai._core.score_tallies`): its own points against the others', how far it
looks at the elements still to come, how hard it hunts all three shooting stars, how
much it denies the seat that gains most. Its card play, bet and allocation follow from
that worth and from a few thresholds. Each number of `Style` is a knob an optimiser can
turn (`STYLE_SPACE`, benchmarks/exploit.py searches it for styles that beat the engine).

Specs for `csl_ai.agents.make_agent`: ``style`` (the default style), ``style:NAME`` (a
saved style, ``csl_ai/data/styles/NAME.json``), or ``style:candy=1.5,stars=2,...``
(any subset of the knobs; the rest keep their defaults).
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Final

from csl_ai import _core
from csl_ai.bits import bits
from csl_ai.errors import CslError
from csl_ai.evaluation import expected_points, higher_same, kind_points_table, split_piles, split_table
from csl_ai.files import read_input_text
from csl_ai.game import Observation, Phase
from csl_ai.heuristic import beats, no_decision, strength_key, trick_best
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import BLUE, MAX_RANK, N_RAIN
from csl_ai.rules import Kind, Side, StarOption

STYLES_DIR: Final = Path(__file__).resolve().parent / "data" / "styles"
"""Where saved styles live (``style:NAME``)."""

STYLE_FORMAT: Final = "csl-style"
STYLE_VERSION: Final = 1

OUTRIGHT_POINTS: Final = 60.0
"""Worth of an outright win (three stars on side B) in points."""
WEATHER_POINTS: Final = 7.0
FACE_DOWN_POINTS: Final = 2.0


class StyleError(CslError):
    """A style spec or a saved style file that cannot be read."""


@dataclass(frozen=True)
class Style:
    """The knobs of a `StyleAgent`; worths are in points of (mine - the others' mean)."""

    candy: float = 1.0
    """Weight on a candy card's worth."""
    spider: float = 1.0
    """Weight on a spider card's worth."""
    leopard: float = 1.0
    """Weight on a leopard card's worth."""
    stars: float = 1.0
    """Weight on a shooting star's worth, the hunt for all three included."""
    star_hope: float = 0.3
    """Chance assumed of winning each further star still needed for all three."""
    horizon: float = 0.5
    """Blend of a spider or leopard card's points now (0) and its mean over the elements
    still to come (1)."""
    deny: float = 0.3
    """Weight on the most any other seat would gain from the sky card."""
    want: float = 0.5
    """A trick is contested when its sky card is worth at least this."""
    save: float = 0.5
    """A strong card is kept for a later sky card of the group worth more than this
    share of it."""
    hold: float = 0.7
    """A winning card this likely to hold is good enough: the cheapest such is played."""
    trump: float = 1.0
    """Cost, in points, of spending the top blue on a trick (lower blues cost less)."""
    void: float = 0.35
    """Chance assumed that a later seat is out of the led colour and can trump."""
    shed: float = 0.7
    """Chance of shedding the highest card that loses (rather than the lowest) when the
    trick is unwanted."""
    bet: float = 0.0
    """Good weather is declared when its worth beats normal play by more than this."""


STYLE_SPACE: Final[Mapping[str, tuple[float, float]]] = {
    "candy": (0.0, 3.0),
    "spider": (0.0, 3.0),
    "leopard": (0.0, 3.0),
    "stars": (0.0, 4.0),
    "star_hope": (0.05, 0.8),
    "horizon": (0.0, 1.0),
    "deny": (0.0, 1.5),
    "want": (-2.0, 5.0),
    "save": (0.0, 1.5),
    "hold": (0.3, 0.98),
    "trump": (0.0, 8.0),
    "void": (0.0, 1.0),
    "shed": (0.0, 1.0),
    "bet": (-8.0, 8.0),
}
"""Each knob's bounds, as an optimiser searches them."""

DEFAULT_STYLE: Final = Style()
_FIELDS: Final = tuple(f.name for f in fields(Style))
_NAME: Final = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def style_of(params: Mapping[str, float]) -> Style:
    """The style with these knobs (the others at their defaults); StyleError on an
    unknown knob or a value outside `STYLE_SPACE`."""
    values: dict[str, float] = {}
    for name, value in params.items():
        if name not in STYLE_SPACE:
            raise StyleError(f"unknown style knob {name!r} (expected {', '.join(_FIELDS)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise StyleError(f"style knob {name}: must be a number, got {value!r}")
        low, high = STYLE_SPACE[name]
        if not low <= value <= high:
            raise StyleError(f"style knob {name}: {value!r} is outside [{low:g}, {high:g}]")
        values[name] = float(value)
    return replace(DEFAULT_STYLE, **values)


def style_spec(params: Mapping[str, float]) -> str:
    """The agent spec that plays this style (``style:candy=1.2,...``), exact to 6 digits."""
    style = style_of(params)
    return "style:" + ",".join(f"{name}={getattr(style, name):.6g}" for name in _FIELDS)


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise StyleError(f"style name must be lower-case letters, digits, '-' or '_', got {name!r}")
    return name


def save_style(name: str, params: Mapping[str, float], meta: Mapping[str, Any]) -> Path:
    """Write a style to ``STYLES_DIR/NAME.json`` (with what measured it, in meta)."""
    style = style_of(params)
    path = STYLES_DIR / f"{_check_name(name)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"format": STYLE_FORMAT, "version": STYLE_VERSION, "name": name, "style": asdict(style), "meta": dict(meta)}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def load_style(name: str) -> Style:
    """A saved style by name; StyleError when it is missing or malformed."""
    path = STYLES_DIR / f"{_check_name(name)}.json"
    if not path.is_file():
        known = ", ".join(saved_styles()) or "none saved"
        raise StyleError(f"no saved style {name!r} (known: {known})")
    try:
        data = json.loads(read_input_text(path, "style file", StyleError))
    except ValueError as e:
        raise StyleError(f"{path.name}: not a style file: {e}") from None
    if not isinstance(data, dict) or data.get("format") != STYLE_FORMAT or data.get("version") != STYLE_VERSION:
        raise StyleError(f"{path.name}: expected format {STYLE_FORMAT!r} version {STYLE_VERSION}")
    if not isinstance(data.get("style"), dict):
        raise StyleError(f"{path.name}: 'style' must be an object of knobs")
    return style_of(data["style"])


def saved_styles() -> tuple[str, ...]:
    """Names of the saved styles."""
    if not STYLES_DIR.is_dir():
        return ()
    return tuple(sorted(p.stem for p in STYLES_DIR.glob("*.json")))


def parse_style(text: str) -> Style:
    """The style of the part of a spec after ``style:`` (empty: the default)."""
    text = text.strip()
    if not text:
        return DEFAULT_STYLE
    if "=" not in text:
        return load_style(text.lower())
    params: dict[str, float] = {}
    for item in text.split(","):
        name, eq, raw = (part.strip() for part in item.partition("="))
        if not eq:
            raise StyleError(f"bad style option {item.strip()!r}: expected knob=number")
        if name in params:
            raise StyleError(f"style knob {name!r} given twice")
        try:
            params[name] = float(raw)
        except ValueError:
            raise StyleError(f"style knob {name}: {raw!r} is not a number") from None
    return style_of(params)


# --- the agent ---------------------------------------------------------------------------

_PLAYS: Final = tuple(Play(card) for card in range(N_RAIN))
_COLOUR_BITS: Final = tuple(((1 << MAX_RANK) - 1) << (MAX_RANK * c) for c in range(3))
_RANK_ORDER: Final = {card: strength_key(card) for card in range(N_RAIN)}


def _colour(card: int) -> int:
    return card // MAX_RANK


class StyleAgent:
    """A player of one `Style`: worth of sky cards from the exact scoring, cards' chances
    from the cards still out, a seeded choice where the style leaves one."""

    name = "style"

    def __init__(self, style: Style = DEFAULT_STYLE, seed: int | None = None) -> None:
        self.style = style
        self.seed = seed
        self._rng = random.Random(seed)

    def act(self, obs: Observation) -> Move:
        phase = obs.phase
        if phase is Phase.ALLOCATE and obs.allocation is None:
            return Allocate.trusted(self._allocate(obs))
        if phase is Phase.WEATHER and obs.current.declarations[obs.seat] is None:
            return Declare(self._declare(obs))
        if phase is Phase.PLAY and obs.to_move == obs.seat:
            legal = obs.public_view().core.legal_plays()
            if legal and not legal & (legal - 1):
                return _PLAYS[legal.bit_length() - 1]
            return _PLAYS[self._play(obs)]
        raise no_decision(self.name, obs)

    # --- worth of sky cards ---------------------------------------------------------------
    def _tallies(self, obs: Observation) -> tuple[list[list[int]], list[int], list[bool]]:
        """Face-up elements per seat (this round's wins counted unless their winner bet),
        sky cards won this round, and who declared good weather."""
        core = obs.public_view().core
        deck = obs.rules.game_deck.cards
        elems = [list(row) for row in core.elements]
        won = [0] * obs.players
        declared = [d is True for d in obs.current.declarations]
        for trick in obs.current.tricks:
            if trick.winner is None or trick.sky is None:
                continue
            won[trick.winner] += 1
            if not declared[trick.winner]:
                card = deck[trick.sky]
                elems[trick.winner][int(card.kind)] += card.count
        return elems, won, declared

    def _worths(self, obs: Observation, skies: Sequence[int]) -> dict[int, float]:
        """Worth to this seat of winning each sky card of skies, in points."""
        st = self.style
        rules = obs.rules
        n = obs.players
        seat = obs.seat
        deck = rules.game_deck.cards
        elems, won, declared = self._tallies(obs)
        if declared[seat]:
            cost = -(WEATHER_POINTS + FACE_DOWN_POINTS) if won[seat] == 0 else -FACE_DOWN_POINTS
            return dict.fromkeys(skies, cost)
        sides = tuple(0 if side is Side.A else 1 for side in rules.sides)
        mode = 0 if rules.star_option is StarOption.TWICE else 1

        def points(rows: list[list[int]]) -> list[float]:
            lines, _, outright = _core.score_tallies(n, sides, mode, rows, [0] * n, [0] * n, [0] * n)
            return [sum(line[:4]) + (OUTRIGHT_POINTS if outright == s else 0.0) for s, line in enumerate(lines)]

        base = points(elems)
        view = obs.public_view()
        current = obs.current
        claimed = sum(1 for t in current.tricks if t.winner is not None)
        still = [*current.line[claimed:], *view.unseen_sky]
        left = [0, 0, 0, 0]
        for sky in still:
            left[int(deck[sky].kind)] += deck[sky].count
        weights = (st.candy, st.spider, st.leopard, st.stars)
        out: dict[int, float] = {}
        for sky in skies:
            card = deck[sky]
            kind = int(card.kind)
            gains = []
            for s in range(n):
                rows = [list(r) for r in elems]
                rows[s][kind] += card.count
                after = points(rows)
                others = [after[o] - base[o] for o in range(n) if o != s]
                gains.append(after[s] - base[s] - (sum(others) / len(others)))
            mine = gains[seat]
            if kind in (Kind.SPIDER, Kind.LEOPARD) and st.horizon > 0:
                tab = kind_points_table(Kind(kind), sides[kind])
                rest = max(0, left[kind] - card.count)
                have = elems[seat][kind]
                later = expected_points(tab, have + card.count, rest, 1.0 / n) - expected_points(tab, have, rest, 1.0 / n)
                mine = (1 - st.horizon) * mine + st.horizon * later
            elif kind == Kind.STAR:
                mine += self._star_hunt(elems, seat, left[Kind.STAR], sides[Kind.STAR] == 1, base)
            worth = weights[kind] * mine
            rivals = [gains[o] for o in range(n) if o != seat]
            worth += st.deny * max(0.0, max(rivals))
            out[sky] = worth
        return out

    def _star_hunt(self, elems: list[list[int]], seat: int, stars_left: int, side_b: bool, base: list[float]) -> float:
        """How one more star moves this seat's chance of all three, in points."""
        if any(elems[o][Kind.STAR] for o in range(len(elems)) if o != seat):
            return 0.0
        have = elems[seat][Kind.STAR]
        if have + 1 >= 3:
            return 0.0
        jackpot = OUTRIGHT_POINTS if side_b else max(base[seat], 20.0)
        need_after, need_now = 3 - have - 1, 3 - have
        hope = self.style.star_hope
        after = hope**need_after if need_after <= stars_left - 1 else 0.0
        now = hope**need_now if need_now <= stars_left else 0.0
        return jackpot * (after - now)

    # --- chances of cards ------------------------------------------------------------------
    def _chance(self, card: int, pool: int, share: float) -> float:
        """Chance that no seat still to play beats card, when each card of pool is in
        their hands for this trick with chance share."""
        higher = higher_same(card, pool)
        chance = (1.0 - share) ** higher
        if _colour(card) != BLUE:
            blues = (pool & _COLOUR_BITS[BLUE]).bit_count()
            chance *= (1.0 - share * self.style.void) ** blues
        return chance

    # --- allocation and bet ------------------------------------------------------------------
    def _powers(self, obs: Observation) -> dict[int, float]:
        """Each hand card's chance of winning its trick, before any card is played."""
        spec = obs.rules.spec
        pool = spec.rain_cards & ~obs.hand
        hand_size = obs.hand.bit_count()
        share = min(0.95, max(spec.group_sizes) / hand_size)
        return {card: self._chance(card, pool, share) for card in bits(obs.hand)}

    def _split_scores(self, obs: Observation) -> list[float]:
        """Expected worth won by each split of the hand (`split_table` order): per group,
        its strongest cards against its best sky cards."""
        sizes = obs.rules.spec.group_sizes
        hand = bits(obs.hand)
        power = self._powers(obs)
        line = obs.current.line
        worth = self._worths(obs, line)
        groups: list[list[float]] = []
        start = 0
        for size in sizes:
            groups.append(sorted((worth[sky] for sky in line[start : start + size]), reverse=True))
            start += size
        splits, combos = split_table(sizes)
        pile_score: list[dict[int, float]] = []
        for g, size in enumerate(sizes):
            scores = {}
            for j, combo in enumerate(combos[size]):
                chances = sorted((power[hand[i]] for i in combo), reverse=True)
                scores[j] = sum(p * w for p, w in zip(chances, groups[g], strict=True))
            pile_score.append(scores)
        return [sum(pile_score[g][j] for g, j in enumerate(row)) for row in splits.tolist()]

    def _allocate(self, obs: Observation) -> tuple[int, ...]:
        scores = self._split_scores(obs)
        top = max(scores)
        best = [k for k, s in enumerate(scores) if s >= top - 1e-9]
        return split_piles(obs, self._rng.choice(best))

    def _declare(self, obs: Observation) -> bool:
        """Bet when a clean round's expected worth beats the piles' expected worth."""
        if obs.allocation is None:
            raise no_decision(self.name, obs)
        power = self._powers(obs)
        clean = math.prod(1.0 - p for p in power.values())
        tricks = sum(power.values())
        weather = WEATHER_POINTS * clean - FACE_DOWN_POINTS * tricks * (1.0 - clean)
        sizes = obs.rules.spec.group_sizes
        line = obs.current.line
        worth = self._worths(obs, line)
        normal = 0.0
        start = 0
        for size, pile in zip(sizes, obs.allocation, strict=True):
            values = sorted((worth[sky] for sky in line[start : start + size]), reverse=True)
            chances = sorted((power[c] for c in bits(pile)), reverse=True)
            normal += sum(p * w for p, w in zip(chances, values, strict=True))
            start += size
        return weather > normal + self.style.bet

    # --- card play ---------------------------------------------------------------------------
    def _play(self, obs: Observation) -> int:
        st = self.style
        view = obs.public_view()
        core = view.core
        n = obs.players
        seat = obs.seat
        legal = list(bits(core.legal_plays()))
        current = obs.current
        trick = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None
        plays = [card for _, card in trick.plays] if trick is not None else []
        spec = obs.rules.spec
        group = core.group
        end = sum(spec.group_sizes[: group + 1])
        pos = core.line_pos
        later = current.line[pos + 1 : end]
        worth = self._worths(obs, current.line[pos:end])
        value = worth[current.line[pos]]
        later_best = max((worth[s] for s in later), default=-math.inf)
        pool = spec.rain_cards & ~obs.hand & ~core.played
        later_seats = [(seat + i) % n for i in range(1, n - len(plays))]
        hidden = sum(view.hidden_counts[s][group] for s in later_seats)
        share = min(1.0, hidden / max(1, pool.bit_count())) if later_seats else 0.0
        strength = _RANK_ORDER.__getitem__

        def hold(card: int) -> float:
            return self._chance(card, pool, share) if later_seats else 1.0

        def cost(card: int) -> float:
            return st.trump * (card % MAX_RANK + 1) / MAX_RANK if _colour(card) == BLUE else 0.0

        best = trick_best(plays)
        led = _colour(plays[0]) if plays else -1
        winners = legal if best is None else [c for c in legal if beats(c, best, led)]
        losers = [c for c in legal if c not in winners]
        keep_for_later = later_best > 0 and st.save * later_best > value
        if value >= st.want:
            good = [c for c in winners if hold(c) >= st.hold]
            if good:
                card = min(good, key=lambda c: (cost(c), strength(c)))
                if not (keep_for_later and card == max(legal, key=strength)):
                    return card
            elif winners and not keep_for_later:
                gain, card = min(((value * hold(c) - cost(c), c) for c in winners), key=lambda o: (-o[0], strength(o[1])))
                if gain > 0:
                    return card
            return min(legal, key=strength)
        if losers:
            if self._rng.random() < st.shed and not (later_best >= st.want):
                return max(losers, key=strength)
            return min(losers, key=strength)
        return min(legal, key=lambda c: (hold(c), strength(c)))


def make_style_agent(text: str, seed: int | None = None) -> StyleAgent:
    """The agent of a spec's part after ``style:``."""
    return StyleAgent(parse_style(text), seed)


__all__: Sequence[str] = (
    "DEFAULT_STYLE",
    "STYLE_SPACE",
    "Style",
    "StyleAgent",
    "StyleError",
    "load_style",
    "make_style_agent",
    "parse_style",
    "save_style",
    "saved_styles",
    "style_of",
    "style_spec",
)
