"""Candy Lab: the second game of the engine (2-4 players), its rules core and agents.

The rules as the engine plays them, with every ruling on what the rulebook leaves open,
are docs/candy-lab-rules.md (rulings ``CL-1`` ... cited in the code and tests).

Modules, each importing only those above it:

- ``catalogue``: the components as data (``Catalogue``; default ``catalogue.toml``);
- ``rules``: ``CandyLabRules`` (players, first seat, catalogue) and the printed constants;
- ``moves``: moves as packed ints (``play``, ``give_back``, ``draw``, ``effect``, ...);
- ``state``: the compact ``State`` (ids, bitmasks, short lists), ``deal``, ``custom_state``;
- ``core``: ``legal_moves``, ``apply``, ``is_over``, ``scores``, ``winners``, ``returns``;
- ``game``: the ``Game`` facade, its history and each seat's ``Observation``;
- ``agents``: ``RandomAgent``, ``HeuristicAgent``, ``play_game``;
- ``_core`` (compiled, csrc/cl_core.pyx): the rules, the heuristic player and the
  ISMCTS in C, a line-by-line image of ``core`` and ``agents.HeuristicAgent`` (tests keep
  them in step);
- ``worlds``: the worlds a search deals from an observation, and move keys;
- ``search``: the determinized ISMCTS's limits, settings and results (``search(obs, limit)``);
- ``players``: the search as an agent, and agents by spec (``make_agent("ismcts:normal")``);
- ``notation`` and ``records``: moves as text, and ``candylab-record`` game records;
- ``duplicate``: a tournament on duplicate deals: its schedule, seeds, games and standings;
- ``tournament``: where those games are played (this process or Ray, through CSL's
  tournament harness), a run's folder and its resume;
- ``analysis``: the blunder report of a record (``csl analyze --game candy-lab``).

The game interface (OpenSpiel's ``State`` in spirit), in ``core`` over a ``State``; the
compiled core keeps the same names and meanings (``cl_legal_moves``, ``cl_apply``,
``cl_returns`` over its ``ClState``):

==========================  ==========================================================
``deal(rules, seed)``       a new game's state; the same seed, the same deal
``state.copy()``            an independent copy (cheap: flat ints and short lists)
``current_player(state)``   the seat that decides now, ``-1`` when the game is over;
                            every decision is the current player's (no chance player)
``legal_moves(state)``      that seat's moves, packed ints, equivalent ones once (CL-32)
``apply(state, move)``      play a legal move in place; chance (random discards, the
                            card kept in a swap) is drawn from ``state.rng``, so a copy
                            replays the same outcomes; a search reseeds ``state.rng`` to
                            sample chance afresh. Returns the card the move showed, or -1
``is_over(state)``          whether the game has ended
``scores(state)``           each seat's points (bars + orders + Golden Sugar)
``winners(state)``          the winning seats (ties: most bar points, then shared)
``returns(state)``          each seat's share of the win (1/k for k winners, else 0)
==========================  ==========================================================

Hidden information: ``Game.observation(seat)`` is what that seat may know;
``Observation.unseen()`` is the mask of order cards it cannot place, which a
determinizing search deals into the other hands, the third hand, the draw pile and the
box (each of known size) to sample a world, consistent with the seat's events.
"""

from __future__ import annotations

from csl_ai.candylab.catalogue import (
    CandyBar,
    Catalogue,
    CatalogueError,
    Effect,
    OrderCard,
    catalogue_from_arg,
)
from csl_ai.candylab.core import (
    apply,
    current_player,
    is_legal,
    is_over,
    legal_moves,
    returns,
    scores,
    winners,
)
from csl_ai.candylab.game import Event, Game, Observation
from csl_ai.candylab.rules import CandyLabRules
from csl_ai.candylab.state import State, custom_state, deal

__all__ = [
    "CandyBar",
    "CandyLabRules",
    "Catalogue",
    "CatalogueError",
    "Effect",
    "Event",
    "Game",
    "Observation",
    "OrderCard",
    "State",
    "apply",
    "catalogue_from_arg",
    "current_player",
    "custom_state",
    "deal",
    "is_legal",
    "is_over",
    "legal_moves",
    "returns",
    "scores",
    "winners",
]
