"""A game at a table: who sits where, the AI's moves, hints, takebacks, saving and resuming.

`Table` is the part of `csl play` (terminal) and `csl serve` (browser) that knows nothing
of either: the caller asks whose turn it is (`Table.waiting_for`), lets the AI seats
move one decision at a time (`Table.ai_step`, so a view can show each card as it
falls; or `Table.ai_turn`, whose search a caller that must not block runs elsewhere,
then `Table.apply_ai`), applies a human's move (`Table.play`) and takes it back
(`Table.undo`). The hint searches at the AI seats' own level, so advice and opposition
are one strength.

A table is rebuilt from its record (`Table.resume`): the record holds the rules, the
seed, every move and who sat where, and the AI seats are seeded from the game seed, so
a resumed game plays on exactly as the original would have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from csl_ai.errors import CslError, IllegalMoveError
from csl_ai.game import Game, Observation, Phase
from csl_ai.moves import Move
from csl_ai.rules import RulesConfig, StarOption, deck_from_arg, parse_sides
from csl_ai.seeds import fresh_seed, labelled_seed

if TYPE_CHECKING:
    from csl_ai.agents import Agent
    from csl_ai.search import SearchConfig, SearchLimit, SearchResult

HUMAN: Final = "human"
"""The record's name for a seat played by a person."""
DEFAULT_AI: Final = "ismcts:normal"


class TableError(CslError):
    """A table that cannot be set up or resumed as asked (seats, AI spec, record)."""


@dataclass(frozen=True)
class TableOptions:
    """How to set up a new game at a table."""

    players: int = 4
    humans: tuple[int, ...] = (0,)
    ai: str | Sequence[str] = DEFAULT_AI
    """One agent spec for every AI seat, or one per AI seat in seat order."""
    sides: str = ""
    star_option: StarOption = StarOption.TWICE
    deck: str | None = None
    """A deck name or file (`csl_ai.rules.deck_from_arg`); None: the default deck."""
    seed: int | None = None
    """The deal's seed; None draws a secret one."""
    first_seat: int = 0


@dataclass(frozen=True)
class AiStep:
    """One decision an AI seat made: who, what, and its search (None for a non-search agent)."""

    seat: int
    move: Move
    result: SearchResult | None


@dataclass(frozen=True)
class AiTurn:
    """An AI seat's decision still to make: the seat, its agent and what it sees.

    `think` runs the agent (the search) and touches no table, so a caller that must not
    block (the web table) runs it elsewhere, then hands its step to `Table.apply_ai`.
    """

    seat: int
    agent: Agent
    obs: Observation

    def think(self) -> AiStep:
        move = self.agent.act(self.obs)
        return AiStep(self.seat, move, getattr(self.agent, "last_result", None))


@dataclass(frozen=True)
class _Snapshot:
    """The game before a human decision, kept for `Table.undo`."""

    game: Game
    seat: int
    forced: bool


class Table:
    """One game, with people at some seats and AI agents at the others."""

    def __init__(self, game: Game, specs: Sequence[str], *, meta: Mapping[str, Any] | None = None) -> None:
        """`specs[seat]` is `HUMAN` or an agent spec; AI agents are seeded from the game seed."""
        from csl_ai.agents import make_agent

        if len(specs) != game.players:
            raise TableError(f"{len(specs)} seat specs for a {game.players}-player game")
        self.game = game
        self.specs: tuple[str, ...] = tuple(specs)
        self.agents: dict[int, Agent] = {
            seat: make_agent(spec, seed=labelled_seed(game.seed, f"agent{seat}"))
            for seat, spec in enumerate(specs)
            if spec != HUMAN
        }
        self.meta: dict[str, Any] = dict(meta or {})
        self._history: list[_Snapshot] = []
        self._hints = 0

    # --- setting up ---------------------------------------------------------------------
    @classmethod
    def new(cls, options: TableOptions) -> Table:
        """A freshly dealt game (RulesError, DeckError or TableError for bad options)."""
        rules = RulesConfig(
            players=options.players,
            sides=parse_sides(options.sides),
            star_option=options.star_option,
            deck=deck_from_arg(options.deck),
            first_seat=options.first_seat,
        )
        humans = tuple(sorted(set(options.humans)))
        if len(humans) != len(options.humans):
            raise TableError(f"a human seat is given twice in {list(options.humans)}")
        for seat in humans:
            if not 0 <= seat < rules.players:
                raise TableError(
                    f"human seat {seat} is not in a {rules.players}-player game "
                    f"(seats 0..{rules.players - 1})"
                )
        ai_seats = [s for s in range(rules.players) if s not in humans]
        if isinstance(options.ai, str):
            ai_specs = [options.ai] * len(ai_seats)
        else:
            ai_specs = list(options.ai)
            if len(ai_specs) != len(ai_seats):
                raise TableError(
                    f"{len(ai_specs)} AI specs for {len(ai_seats)} AI seats ({ai_seats})"
                )
        if any(spec == HUMAN for spec in ai_specs):
            raise TableError(f"{HUMAN!r} is not an AI; list human seats in humans")
        seed = options.seed if options.seed is not None else fresh_seed()
        specs = [HUMAN] * rules.players
        for seat, spec in zip(ai_seats, ai_specs, strict=True):
            specs[seat] = spec
        return cls(Game(rules, seed=seed), specs)

    @classmethod
    def resume(cls, record: Mapping[str, Any]) -> Table:
        """The table of a saved game, ready to go on where it stopped.

        InvalidRecordError for a record that does not check out; TableError for one that
        does not say who sat where (its ``agents``) or whose game is over.
        """
        from csl_ai.records import replay_record

        game = replay_record(record, auto_deal=True)
        if game.is_over:
            raise TableError("this game is over: there is nothing to resume")
        agents = record.get("agents")
        if (
            not isinstance(agents, list)
            or len(agents) != game.players
            or not all(isinstance(a, str) for a in agents)
        ):
            raise TableError("the record does not say who played each seat (its 'agents')")
        meta = record.get("meta")
        table = cls(game, agents, meta=meta if isinstance(meta, Mapping) else None)
        table._catch_up_agents()
        return table

    def _catch_up_agents(self) -> None:
        """Move each AI agent that draws from its own random stream (those without a
        search limit, which seed every decision from the position instead) past the
        decisions it made before the game was saved, so it plays on as it would have."""
        from csl_ai.analysis import Replayer

        stateful = {s: a for s, a in self.agents.items() if getattr(a, "limit", None) is None}
        if not stateful:
            return
        replayer = Replayer(self.game)
        for decision in replayer:
            agent = stateful.get(decision.seat)
            if agent is not None:
                agent.act(replayer.game.observation(decision.seat))

    # --- who is to move -----------------------------------------------------------------
    @property
    def humans(self) -> frozenset[int]:
        return frozenset(s for s, spec in enumerate(self.specs) if spec == HUMAN)

    @property
    def to_move(self) -> int | None:
        """The seat to decide now (None when the game is over)."""
        return None if self.game.is_over else self.game.to_move

    @property
    def waiting_for(self) -> int | None:
        """The human seat whose decision the game waits for (None: an AI's turn, or over)."""
        seat = self.to_move
        return seat if seat is not None and seat in self.humans else None

    def forced_move(self) -> Move | None:
        """The only legal move of the seat to move, when it has exactly one (a card it
        must play); allocations and bets always leave a choice."""
        if self.game.is_over or self.game.phase is not Phase.PLAY:
            return None
        legal = self.game.legal_moves()
        return legal[0] if len(legal) == 1 else None

    # --- moving -------------------------------------------------------------------------
    def ai_turn(self) -> AiTurn | None:
        """The decision the AI seat to move has to make; None if a human is to move or the
        game is over."""
        seat = self.to_move
        if seat is None or seat in self.humans:
            return None
        return AiTurn(seat, self.agents[seat], self.game.observation(seat))

    def apply_ai(self, step: AiStep) -> None:
        """Apply the move an AI seat decided (`AiTurn.think`)."""
        self.game.apply(step.move, step.seat)

    def ai_step(self) -> AiStep | None:
        """Let the AI seat to move make one decision; None if a human is to move or the
        game is over."""
        turn = self.ai_turn()
        if turn is None:
            return None
        step = turn.think()
        self.apply_ai(step)
        return step

    def play(self, move: Move, seat: int | None = None) -> None:
        """Apply a human's move (IllegalMoveError says why one is refused)."""
        waiting = self.waiting_for
        if waiting is None:
            if self.game.is_over:
                raise IllegalMoveError("the game is over")
            raise IllegalMoveError(f"it is seat {self.to_move}'s turn, and that seat is an AI")
        if seat is not None and seat != waiting:
            raise IllegalMoveError(f"it is seat {waiting}'s turn, not seat {seat}'s")
        before = self.game.copy()
        forced = self.forced_move() is not None
        self.game.apply(move, waiting)
        self._history.append(_Snapshot(before, waiting, forced))

    def can_undo(self, seat: int | None = None) -> bool:
        """Whether a human decision (not a forced card) can be taken back; with seat, one
        of that seat's (the last real choice must be its own)."""
        last = self.last_choice()
        return last is not None and (seat is None or last == seat)

    def last_choice(self) -> int | None:
        """The seat whose decision `undo` would take back (None: nothing to take back)."""
        for snap in reversed(self._history):
            if not snap.forced:
                return snap.seat
        return None

    def undo(self) -> int | None:
        """Take back the last human decision that was a real choice, with every move made
        after it (forced cards and AI moves); returns the seat now to decide again, or
        None when there is nothing to take back."""
        while self._history:
            snap = self._history.pop()
            if not snap.forced:
                self.game = snap.game
                return snap.seat
        return None

    # --- advice ---------------------------------------------------------------------------
    def _searching_agent(self) -> Agent | None:
        """The first AI seat's agent that searches (it has a limit and a config)."""
        for seat in sorted(self.agents):
            agent = self.agents[seat]
            if getattr(agent, "limit", None) is not None and hasattr(agent, "config"):
                return agent
        return None

    def hint_limit(self, seed: int | None = None, threads: int = 1) -> SearchLimit:
        """The budget of a hint: that of the AI seats when they search, else the default level."""
        from csl_ai.agents import DEFAULT_LEVEL, level_limit

        agent = self._searching_agent()
        players = self.game.players
        if agent is None:
            return level_limit(DEFAULT_LEVEL, players, seed, threads)
        limit_for = getattr(agent, "limit_for", None)
        limit = limit_for(players) if limit_for is not None else agent.limit  # type: ignore[attr-defined]
        return replace(limit, seed=seed, threads=threads)

    def hint_level_text(self) -> str:
        """Whose strength a hint searches at, in words: the AI seats' level when they
        search (named when it is one of `csl_ai.agents.LEVELS`), else the default level."""
        from csl_ai.agents import DEFAULT_LEVEL

        agent = self._searching_agent()
        if agent is None:
            return f"the default level, {DEFAULT_LEVEL} (the AI seats do not search)"
        limit = self.hint_limit()
        if limit.time_ms is not None:
            return f"the AI seats' level, {limit.time_ms:,.0f} ms"
        level = getattr(agent, "level", None)
        return "the AI seats' level" + (f", {level}" if level is not None else "")

    def hint_search(
        self, seat: int | None = None, threads: int = 1
    ) -> tuple[Observation, SearchLimit, SearchConfig]:
        """What a hint searches, without searching: the waiting human's observation, the
        AI seats' budget with a fresh hint seed, and their settings (the default search's
        when no AI seat searches). A caller that must not block (the web table) runs
        `csl_ai.search.search` on these elsewhere."""
        from csl_ai.search import SearchConfig

        waiting = self.waiting_for
        if waiting is None or (seat is not None and seat != waiting):
            raise IllegalMoveError("no human decision to advise on now")
        self._hints += 1
        limit = self.hint_limit(labelled_seed(self.game.seed, f"hint{self._hints}"), threads)
        agent = self._searching_agent()
        config = SearchConfig() if agent is None else agent.config  # type: ignore[attr-defined]
        return self.game.observation(waiting), limit, config

    def hint(self, seat: int | None = None, threads: int = 1) -> SearchResult:
        """The AI's view of a human's decision, searched at the AI seats' level and settings."""
        from csl_ai.search import search

        return search(*self.hint_search(seat, threads))

    # --- saving ---------------------------------------------------------------------------
    def record(self, meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The game so far as a record (finished or not), with who sat where."""
        from csl_ai.records import game_to_record

        merged = {**self.meta, "humans": sorted(self.humans), **(meta or {})}
        return game_to_record(self.game, agents=list(self.specs), meta=merged)

    def save(
        self, path: Path, meta: Mapping[str, Any] | None = None, *, exclusive: bool = False
    ) -> None:
        """Write the record atomically (RecordWriteError, UnsafeOutputError); exclusive:
        create path, which must name nothing yet, never replacing anything
        (OutputExistsError when another process created it meanwhile)."""
        from csl_ai.records import save_record

        save_record(self.record(meta), path, exclusive=exclusive)


__all__: Sequence[str] = (
    "DEFAULT_AI",
    "HUMAN",
    "AiStep",
    "AiTurn",
    "Table",
    "TableError",
    "TableOptions",
)
