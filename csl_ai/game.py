"""The typed Python face of the core: `Game`, a game under way, and its moves.

A `Game` owns one C state (`csl_ai._core.CoreState`) and the public history that the
C state does not keep (who played what in which trick). It also keeps, as it goes, each
seat's public state (`PublicView`), so that an observation costs the same at any point
of a game instead of replaying the whole history. Simultaneous decisions — the
allocation and the good-weather bet — are taken one seat at a time in the core; an
`Observation` hides every choice a seat could not have seen, so the order is invisible.

The value types (`Phase`, `Trick`, `RoundLog`, `ScoreLine`, `GameResult`) and the
helpers that build a C state live in `csl_ai.gametypes`; `Observation` and `PublicView`
in `csl_ai.observation`. Both are re-exported here, so `from csl_ai.game import X`
works for all of them.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence

from csl_ai import _core
from csl_ai.errors import IllegalMoveError, InvalidPositionError
from csl_ai.gametypes import (
    _DECLARES,
    _ERRORS,
    _PHASES,
    COLOUR_NAMES,
    SCORE_COLUMNS,
    GameResult,
    Phase,
    RoundLog,
    ScoreLine,
    Trick,
    _play_moves,
    new_core,
    sky_cards_for,
)
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import MAX_RANK, format_cards, format_piles
from csl_ai.observation import Observation, PublicView, pile_plays, played_from_piles
from csl_ai.rules import RulesConfig
from csl_ai.seeds import fresh_seed

__all__ = [
    "COLOUR_NAMES",
    "SCORE_COLUMNS",
    "Game",
    "GameResult",
    "Observation",
    "Phase",
    "PublicView",
    "RoundLog",
    "ScoreLine",
    "Trick",
    "new_core",
    "pile_plays",
    "played_from_piles",
    "sky_cards_for",
]


class Game:
    """A game under way: rules, the C state, and the public history.

    With `auto_deal` (the default) each round is dealt from the game's own seeded
    random stream as soon as the previous one ends; otherwise call `deal`.
    """

    def __init__(
        self,
        rules: RulesConfig | None = None,
        *,
        seed: int | None = None,
        sky_order: Sequence[int] | None = None,
        auto_deal: bool = True,
    ) -> None:
        self.rules = rules if rules is not None else RulesConfig()
        self.seed = seed if seed is not None else fresh_seed()
        self._rng = random.Random(self.seed)
        self.sky_cards = sky_cards_for(self.rules)
        if sky_order is None:
            order = list(range(len(self.sky_cards)))
            self._rng.shuffle(order)
        else:
            order = list(sky_order)
            if sorted(order) != list(range(len(self.sky_cards))):
                raise IllegalMoveError(
                    f"sky_order must be a permutation of 0..{len(self.sky_cards) - 1}"
                )
        self.core = new_core(self.rules, order)
        self.rounds: list[RoundLog] = []
        self._round_plays: list[tuple[int, int, int]] = []
        """(seat, card, group) of every card played this round, in order."""
        self.auto_deal = auto_deal
        self._reset_public()
        if auto_deal:
            self.deal()

    def _reset_public(self) -> None:
        """Forget the public state kept for observations (rebuilt on demand)."""
        spec = self.rules.spec
        n = self.rules.players
        zero = (0,) * len(spec.group_sizes)
        self._rain_cards = spec.rain_cards
        self._zero_rows = (zero,) * n
        self._full_rows = tuple(
            tuple(zero if s == seat else spec.group_sizes for s in range(n)) for seat in range(n)
        )
        """_full_rows[seat]: hidden counts from seat's view before any card is played."""
        self._past: tuple[int, _core.CoreState, tuple[int, ...]] | None = None
        self._trackers: dict[int, _SeatTracker] = {}
        self._seen_rounds: dict[int, list[RoundLog]] = {}

    # --- state ------------------------------------------------------------------------
    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def phase(self) -> Phase:
        return _PHASES[self.core.phase]

    @property
    def is_over(self) -> bool:
        return self.core.is_over

    @property
    def round(self) -> int:
        """The current round (0-based); equals the number of rounds once over."""
        return self.core.round

    @property
    def to_move(self) -> int:
        """The seat whose decision the game waits for (-1 while waiting for a deal or over)."""
        return self.core.to_move

    @property
    def sky_order(self) -> tuple[int, ...]:
        return self.core.sky_order

    @property
    def line(self) -> tuple[int, ...]:
        """Sky card ids of the current round's line."""
        return self.rounds[-1].line if self.rounds else ()

    @property
    def current_trick(self) -> Trick | None:
        """The trick in progress (None between tricks or outside the trick phase)."""
        if self.rounds and self.rounds[-1].tricks and not self.rounds[-1].tricks[-1].complete:
            return self.rounds[-1].tricks[-1]
        return None

    def pending_seats(self) -> tuple[int, ...]:
        """Seats that still have to allocate (or declare) in a simultaneous phase."""
        core = self.core
        phase = core.phase
        if phase == "allocate":
            return _missing(self.rules.players, core.allocated_mask)
        if phase == "weather":
            return _missing(self.rules.players, core.weather_done_mask)
        return (core.to_move,) if phase == "play" else ()

    def hand(self, seat: int) -> int:
        return self.core.hands[seat]

    def piles(self, seat: int) -> tuple[int, ...]:
        """The cards left in each of seat's piles this round."""
        return self.core.piles[seat]

    # --- moves ------------------------------------------------------------------------
    def deal(self, hands: Sequence[int] | None = None, set_aside: int = 0) -> None:
        """Deal the next round: the given hands, or a random deal from the game's stream."""
        if self.phase is not Phase.DEAL:
            raise IllegalMoveError("the round has already been dealt")
        first = self.core.first_player
        if hands is None:
            self.core.deal_random(self._rng.getrandbits(64))
        else:
            err = self.core.deal([int(h) for h in hands], int(set_aside))
            if err:
                raise IllegalMoveError(f"bad deal: {_ERRORS.get(err, err)}")
        self._round_plays = []
        self.rounds.append(
            RoundLog(
                line=self.core.line,
                first_player=first,
                hands=list(self.core.hands),
                set_aside=self.core.set_aside,
                allocations=[None] * self.players,
                declarations=[None] * self.players,
            )
        )

    def legal_moves(self, seat: int | None = None) -> list[Move]:
        """Every legal move for seat (default: the seat to move)."""
        seat = self.to_move if seat is None else seat
        phase = self.phase
        if phase is Phase.ALLOCATE and seat in self.pending_seats():
            return [Allocate.trusted(p) for p in self.core.allocations(self.core.hands[seat])]
        if phase is Phase.WEATHER and seat in self.pending_seats():
            return list(_DECLARES)
        if phase is Phase.PLAY and seat == self.to_move:
            return _play_moves(self.core.legal_plays())
        return []

    def is_legal(self, move: Move, seat: int | None = None) -> bool:
        try:
            self._check(move, self.to_move if seat is None else seat)
        except IllegalMoveError:
            return False
        return True

    def _check(self, move: Move, seat: int) -> None:
        """Raise IllegalMoveError saying why move is not legal for seat now."""
        phase = self.phase
        if not 0 <= seat < self.players:
            raise IllegalMoveError(f"seat {seat!r} is not in this {self.players}-player game")
        if isinstance(move, Play):
            if phase is not Phase.PLAY:
                raise IllegalMoveError(f"cannot play {move} now: the game is in the {phase.value} phase")
            if seat != self.to_move:
                raise IllegalMoveError(f"it is seat {self.to_move}'s turn to play, not seat {seat}'s")
            if (self.core.legal_plays() >> move.card) & 1:
                return
            pile = self.core.piles[seat][self.core.group]
            if not (pile >> move.card) & 1:
                raise IllegalMoveError(
                    f"{move} is not in seat {seat}'s pile for group {self.core.group + 1} "
                    f"({format_cards(pile)})"
                )
            if not (self.core.legal_plays() >> move.card) & 1:
                led = COLOUR_NAMES[self.core.led_colour]
                raise IllegalMoveError(f"{move} does not follow: seat {seat} must follow {led}")
        elif isinstance(move, Allocate):
            if phase is not Phase.ALLOCATE:
                raise IllegalMoveError(f"cannot allocate now: the game is in the {phase.value} phase")
            if seat not in self.pending_seats():
                raise IllegalMoveError(f"seat {seat} has already allocated this round")
            sizes = self.rules.spec.group_sizes
            if len(move.piles) != len(sizes) or any(
                p.bit_count() != n for p, n in zip(move.piles, sizes)
            ):
                raise IllegalMoveError(
                    f"piles must hold {', '.join(map(str, sizes))} cards, got {format_piles(move.piles)!r}"
                )
            union = count = 0
            for p in move.piles:
                union |= p
                count += p.bit_count()
            hand = self.core.hands[seat]
            if union != hand or count != hand.bit_count():
                raise IllegalMoveError(
                    f"piles {format_piles(move.piles)!r} are not a split of your hand ({format_cards(hand)})"
                )
        elif isinstance(move, Declare):
            if phase is not Phase.WEATHER:
                raise IllegalMoveError(f"cannot declare now: the game is in the {phase.value} phase")
            if seat not in self.pending_seats():
                raise IllegalMoveError(f"seat {seat} has already declared this round")
        else:
            raise IllegalMoveError(f"not a move: {move!r}")

    def apply(self, move: Move, seat: int | None = None) -> None:
        """Apply a move for seat (default: the seat to move); IllegalMoveError says why not."""
        core = self.core
        seat = core.to_move if seat is None else seat
        if (
            isinstance(move, Play)
            and core.phase == "play"
            and seat == core.to_move
            and (core.legal_plays() >> move.card) & 1
        ):
            self._apply_play(move.card, self.rounds[-1])
        else:
            self._check(move, seat)
            log = self.rounds[-1]
            if isinstance(move, Play):
                self._apply_play(move.card, log)
            elif isinstance(move, Allocate):
                err = core.allocate(seat, move.piles)
                if err:
                    raise IllegalMoveError(_ERRORS.get(err, str(err)))
                log.allocations[seat] = tuple(move.piles)
            else:
                err = core.declare(seat, move.good_weather)
                if err:
                    raise IllegalMoveError(_ERRORS.get(err, str(err)))
                log.declarations[seat] = move.good_weather
        if self.auto_deal and core.phase == "deal":
            self.deal()

    def _apply_play(self, card: int, log: RoundLog) -> None:
        """Play card for the seat to move (already checked legal) and log it."""
        core = self.core
        seat = core.to_move
        tricks = log.tricks
        trick = tricks[-1] if tricks and tricks[-1].winner is None else None
        if trick is None:
            round_, index, group, leader, before = core.round, core.line_pos, core.group, seat, ()
        else:
            round_, index, group = trick.round, trick.index, trick.group
            leader, before = trick.leader, trick.plays
        err = core.play(card)
        if err:
            raise IllegalMoveError(_ERRORS.get(err, str(err)))
        plays = (*before, (seat, card))
        if len(plays) == self.rules.players:
            sky = log.line[index]
            done = Trick(round_, index, group, leader, plays, winner=core.last_winner, sky=sky)
        else:
            done = Trick(round_, index, group, leader, plays)
        if trick is None:
            tricks.append(done)
        else:
            tricks[-1] = done
        self._round_plays.append((seat, card, group))

    # --- results ----------------------------------------------------------------------
    def scores(self) -> tuple[ScoreLine, ...]:
        """Scores as they stand (final once the game is over)."""
        return tuple(ScoreLine(*row) for row in self.core.scores())

    def result(self) -> GameResult:
        if not self.is_over:
            raise IllegalMoveError("the game is not over")
        winners = self.core.winners()
        outright = self.core.outright_winner()
        return GameResult(
            scores=self.scores(),
            winners=tuple(s for s in range(self.players) if (winners >> s) & 1),
            outright=outright if outright >= 0 else None,
        )

    def copy(self) -> Game:
        other = Game.__new__(Game)
        other.rules = self.rules
        other.seed = self.seed
        other._rng = random.Random()
        other._rng.setstate(self._rng.getstate())
        other.sky_cards = self.sky_cards
        other.core = self.core.copy()
        other.rounds = [
            RoundLog(r.line, r.first_player, list(r.hands), r.set_aside, list(r.allocations),
                     list(r.declarations), list(r.tricks))
            for r in self.rounds
        ]
        other._round_plays = list(self._round_plays)
        other.auto_deal = self.auto_deal
        other._reset_public()
        return other

    # --- what a seat knows --------------------------------------------------------------
    def observation(self, seat: int) -> Observation:
        """Exactly what seat knows now (RULES.md §5), with its PublicView ready.

        Rounds before the current one are cached per seat (they no longer change), and the
        view comes from the public state kept as the game goes, so an observation costs
        the same early and late in a game.
        """
        n = self.rules.players
        if not 0 <= seat < n:
            raise InvalidPositionError(f"seat {seat!r} is not in this {n}-player game")
        core = self.core
        phase = _PHASES[core.phase]
        over = phase is Phase.OVER
        logs = self.rounds
        past = len(logs) - 1
        seen = self._seen_rounds.get(seat)
        if seen is None:
            seen = self._seen_rounds[seat] = []
        while len(seen) < past:
            seen.append(_seat_log(logs[len(seen)], seat, n, True))
        rounds = seen[:past]
        if logs:
            rounds.append(_seat_log(logs[-1], seat, n, over or phase is Phase.PLAY))
        if phase is Phase.ALLOCATE:
            pending = _missing(n, core.allocated_mask)
        elif phase is Phase.WEATHER:
            pending = _missing(n, core.weather_done_mask)
        else:
            pending = ()
        obs = Observation(self.rules, seat, tuple(rounds), over, pending)
        if logs and phase is not Phase.DEAL:
            object.__setattr__(obs, "_view", self._public_view(obs))
        return obs

    def _past_public(self) -> tuple[_core.CoreState, tuple[int, ...]]:
        """The public C state after the rounds before the current one, and the unseen sky.

        Shared by every seat: past rounds are replayed with every pile hidden, as
        `_replay_public` does. The unseen sky cards follow the dealt lines in id order,
        so the state is rebuilt (once per round) when a new line is dealt.
        """
        count = len(self.rounds)
        if self._past is not None and self._past[0] == count:
            return self._past[1], self._past[2]
        n = self.players
        dealt = [sky for r in self.rounds for sky in r.line]
        dealt_set = set(dealt)
        unseen_sky = tuple(s for s in range(len(self.sky_cards)) if s not in dealt_set)
        core = new_core(self.rules, dealt + list(unseen_sky))
        zeros = (0,) * len(self.rules.spec.group_sizes)
        err = 0
        for r in self.rounds[:-1]:
            err |= core.set_hidden_round([0] * n)
            for s in range(n):
                err |= core.force_allocated(s, zeros)
            for s in range(n):
                err |= core.declare(s, bool(r.declarations[s]))
            for trick in r.tricks:
                for _s, card in trick.plays:
                    err |= core.reveal_play(card)
        if err:
            raise AssertionError("the game's own history does not replay")
        self._past = (count, core, unseen_sky)
        return core, unseen_sky

    def _public_view(self, obs: Observation) -> PublicView:
        """obs's PublicView from the state kept as the game goes: what `_replay_public`
        builds from obs, in time independent of the length of the history."""
        seat = obs.seat
        own = obs.rounds[-1]
        if self.core.phase in ("play", "over"):
            plays = self._round_plays
            tracker = self._trackers.get(seat)
            if tracker is None or tracker.plays is not plays:
                past, unseen_sky = self._past_public()
                core = _round_core(past, seat, own, obs.pending)
                base = self._rain_cards & ~(own.hands[seat] or 0)
                tracker = _SeatTracker(plays, core, self._full_rows[seat], base, unseen_sky)
                self._trackers[seat] = tracker
            if tracker.done < len(plays):
                tracker.catch_up(seat)
            core = tracker.core.copy()
            hidden_counts, voids = tracker.rows()
            unseen_sky = tracker.unseen_sky
            unseen = tracker.unseen_base & ~core.played
        else:
            past, unseen_sky = self._past_public()
            core = _round_core(past, seat, own, obs.pending)
            hidden_counts = self._full_rows[seat]
            voids = self._zero_rows
            unseen = self._rain_cards & ~(own.hands[seat] or 0) & ~core.played
        if obs.over:
            hidden_counts, unseen = self._zero_rows, 0
        return PublicView(core, hidden_counts, voids, unseen, unseen_sky)


@functools.cache
def _missing(n: int, mask: int) -> tuple[int, ...]:
    """The seats 0..n-1 whose bit is not set in mask."""
    return tuple(s for s in range(n) if not (mask >> s) & 1)


def _seat_log(r: RoundLog, seat: int, n: int, declarations_public: bool) -> RoundLog:
    """Round r as seat sees it: others' hands and piles hidden, and others' weather bets
    while they are still secret."""
    hidden: list[int | None] = [None] * n
    hands = list(hidden)
    hands[seat] = r.hands[seat]
    allocations: list[tuple[int, ...] | None] = [None] * n
    allocations[seat] = r.allocations[seat]
    if declarations_public:
        declarations = list(r.declarations)
    else:
        declarations = list(hidden)
        declarations[seat] = r.declarations[seat]
    return RoundLog(r.line, r.first_player, hands, None, allocations, declarations, list(r.tricks))


def _round_core(
    past: _core.CoreState, seat: int, r: RoundLog, pending: tuple[int, ...]
) -> _core.CoreState:
    """The current round's start from seat's view: the deal, the allocations and the weather
    bets seat knows of, applied to a copy of past exactly as `_replay_public` applies them."""
    n = len(r.hands)
    core = past.copy()
    hands = [0] * n
    hands[seat] = r.hands[seat] or 0
    err = core.set_hidden_round(hands)
    allocation = r.allocations[seat]
    if allocation is not None:
        still_allocating = r.declarations[seat] is None and bool(pending) and seat not in pending
        zeros = (0,) * len(allocation)
        for s in range(n):
            if s == seat:
                err |= core.allocate(s, allocation)
            elif not (still_allocating and s in pending):
                err |= core.force_allocated(s, zeros)
        if core.phase != "allocate":
            if all(d is not None for d in r.declarations):
                for s in range(n):
                    err |= core.declare(s, bool(r.declarations[s]))
            elif r.declarations[seat] is not None:
                err |= core.declare(seat, bool(r.declarations[seat]))
    if err:
        raise AssertionError("the game's own history does not replay")
    return core


class _SeatTracker:
    """One seat's public C state in the trick phase of a round, advanced play by play."""

    __slots__ = ("plays", "core", "unseen_base", "unseen_sky", "done", "hidden", "voids", "_rows")

    def __init__(
        self,
        plays: list[tuple[int, int, int]],
        core: _core.CoreState,
        hidden: tuple[tuple[int, ...], ...],
        unseen_base: int,
        unseen_sky: tuple[int, ...],
    ) -> None:
        self.plays = plays
        """The game's (seat, card, group) list of the round followed."""
        self.core = core
        self.unseen_base = unseen_base
        """Rain cards in use outside the seat's hand (PublicView.unseen before any play)."""
        self.unseen_sky = unseen_sky
        self.done = 0
        """How many of plays are applied to core."""
        self.hidden = [list(row) for row in hidden]
        self.voids = [[0] * len(row) for row in hidden]
        self._rows: tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]] | None = None

    def rows(self) -> tuple[tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]]:
        """(hidden counts, voids) as PublicView holds them."""
        if self._rows is None:
            self._rows = (tuple(map(tuple, self.hidden)), tuple(map(tuple, self.voids)))
        return self._rows

    def catch_up(self, seat: int) -> None:
        """Apply the plays made since the last call, as `_replay_public` replays them."""
        core = self.core
        voids = self.voids
        hidden = self.hidden
        err = 0
        for s, card, group in self.plays[self.done :]:
            if s == seat:
                err |= core.play(card)
                continue
            led = core.led_colour
            err |= core.reveal_play(card)
            if led >= 0 and card // MAX_RANK != led:
                voids[s][group] |= 1 << led
            hidden[s][group] -= 1
        if err:
            raise AssertionError("the game's own history does not replay")
        self.done = len(self.plays)
        self._rows = None
