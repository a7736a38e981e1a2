"""Beliefs about the other seats: which kind of player each one is, from what it did.

The search models every other seat as a mixture of player models: a uniformly random
player, the no-peek playout rules (csl_ai.search) with a wide tremble, and the same rules
with a narrow one ("exact": a seat that plays just as they do, whom the search can then
model exactly). `opponent_beliefs` turns a seat's observed splits, bets and card plays into
a posterior over those models (Bayes' rule from a prior), and the search plays each seat
with its own posterior mixture.

The evidence is every finished round. Once a round is over each seat's piles are public
(every card of every pile is played), so each of its decisions can be scored exactly: the
round is replayed with the full deal and, before each decision, the rules are asked what
they would do. A bet's or card's likelihood is 1/L under the random model (L legal moves)
and (1 - tremble) [move = the rules' move] + tremble / L under the rules and the exact
model, each with its own tremble. The card tremble of the rules is wide because they stand
for every sensible player, not one program (the heuristic agent plays the rules' card at
65% of its choices, a random player at 42%); the bet tremble is narrow, since sensible
players agree on bets (the heuristic agent bets as the rules do 98% of the time, a random
player 48%). Forced moves weigh nothing. A split (one among up to 1,680) is scored for the
exact model alone: it is too sharp a test of a sensible player who is not exactly these
rules, so under the random and rules models every split is equally likely, while the exact
model expects the rules' own. The current round's decisions wait for its end, since they
depend on cards still hidden.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from csl_ai import _core
from csl_ai.game import Game, Observation, RoundLog, pile_plays, sky_cards_for
from csl_ai.moves import Allocate, Declare, Play
from csl_ai.rules import RulesConfig

MODELS: Final = ("random", "rules", "exact")
"""The player models a belief is spread over, in this order: a uniformly random player,
the rules with a wide tremble (any sensible player), and the rules with a narrow one (a
player that plays exactly as they do, whom the search can then model exactly)."""


@dataclass(frozen=True)
class SeatBelief:
    """The posterior over `MODELS` for one other seat."""

    seat: int
    probabilities: tuple[float, ...]
    """P(model | the seat's scored decisions), one per entry of MODELS."""
    decisions: int
    """Decisions with a choice that were scored (bets and card plays of finished rounds)."""
    splits: tuple[tuple[str, float], ...] = ()
    """Where the search drew this seat's split from its split mixture: each part's share
    (csl_ai.search.SPLIT_PARTS), before the seat's random chance; else empty."""

    @property
    def randomness(self) -> float:
        """The chance the search gives this seat of playing like a random player."""
        return self.probabilities[MODELS.index("random")]

    @property
    def exactness(self) -> float:
        """The chance the search gives this seat of playing exactly by the rules."""
        return self.probabilities[MODELS.index("exact")]

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "models": dict(zip(MODELS, self.probabilities, strict=True)),
            "decisions": self.decisions,
            **({"splits": dict(self.splits)} if self.splits else {}),
        }


@dataclass(frozen=True)
class _Evidence:
    """Per seat: the summed log-likelihood under each model, and the decisions scored."""

    log_likelihood: tuple[tuple[float, ...], ...]
    decisions: tuple[int, ...]


def opponent_beliefs(
    obs: Observation,
    policy: dict[str, float],
    prior_random: float,
    tremble: float,
    bet_tremble: float,
    prior_exact: float = 0.0,
    exact_tremble: float = 0.02,
) -> tuple[SeatBelief, ...]:
    """The posterior of every other seat (not obs.seat), seat order.

    policy: the rule policy's settings (as csl_ai.search passes them to the core, without
    epsilon); prior_random: the prior chance of the random model; tremble and bet_tremble:
    the rules model's chance of any legal card, or either bet, instead of its own;
    prior_exact: the prior chance of the exact model (taken from the rules' share), whose
    chance of any legal card or bet instead of the rules' own is exact_tremble.
    """
    finished = tuple(r for r in obs.rounds if _round_finished(r, obs.rules))
    key = tuple(_round_key(r) for r in finished)
    evidence = _evidence(
        obs.rules, key, tuple(sorted(policy.items())), tremble, bet_tremble, exact_tremble
    )
    prior = (prior_random, (1.0 - prior_random) * (1.0 - prior_exact), (1.0 - prior_random) * prior_exact)
    beliefs = []
    for seat in range(obs.players):
        if seat == obs.seat:
            continue
        logs = [
            (math.log(p) + ll) if p > 0 else -math.inf
            for p, ll in zip(prior, evidence.log_likelihood[seat], strict=True)
        ]
        top = max(logs)
        weights = [math.exp(x - top) if x > -math.inf else 0.0 for x in logs]
        total = sum(weights)
        beliefs.append(
            SeatBelief(seat, tuple(w / total for w in weights), evidence.decisions[seat])
        )
    return tuple(beliefs)


def _round_finished(r: RoundLog, rules: RulesConfig) -> bool:
    spec = rules.spec
    return len(r.tricks) == spec.line_size and all(
        len(t.plays) == rules.players for t in r.tricks
    )


def _round_key(r: RoundLog) -> tuple[Any, ...]:
    return (r.line, r.first_player, tuple(r.declarations), tuple(r.tricks))


@lru_cache(maxsize=256)
def _evidence(
    rules: RulesConfig,
    rounds: tuple[tuple[Any, ...], ...],
    policy_items: tuple[tuple[str, float], ...],
    tremble: float,
    bet_tremble: float,
    exact_tremble: float,
) -> _Evidence:
    """Score every bet and card play of the finished rounds (see the module docstring).

    Cached: within a round every decision of a game sees the same finished rounds.
    """
    n = rules.players
    policy = dict(policy_items)
    log_like = [[0.0] * len(MODELS) for _ in range(n)]
    decisions = [0] * n
    if not rounds:
        return _Evidence(tuple(tuple(x) for x in log_like), tuple(decisions))
    seen = [sky for line, *_rest in rounds for sky in line]
    n_sky = len(sky_cards_for(rules))
    order = seen + [s for s in range(n_sky) if s not in seen]
    game = Game(rules, sky_order=order, auto_deal=False)
    spec = rules.spec
    splits = math.factorial(spec.hand_size) // math.prod(math.factorial(g) for g in spec.group_sizes)

    def score(seat: int, legal: int, matches: bool, tremble: float) -> None:
        if legal < 2:
            return
        log_like[seat][0] += -math.log(legal)
        log_like[seat][1] += math.log((1.0 - tremble) * matches + tremble / legal)
        log_like[seat][2] += math.log((1.0 - exact_tremble) * matches + exact_tremble / legal)
        decisions[seat] += 1

    def score_split(seat: int, matches: bool) -> None:
        log_like[seat][0] += -math.log(splits)
        log_like[seat][1] += -math.log(splits)
        log_like[seat][2] += math.log((1.0 - exact_tremble) * matches + exact_tremble / splits)
        decisions[seat] += 1

    def rule_move(seat: int) -> Any:
        return _core.heuristic_move(game.core, seat, 0, epsilon=0.0, **policy)[1]

    for line, _first, declarations, tricks in rounds:
        piles = pile_plays(tricks, n, len(spec.group_sizes))
        hands = [sum(p) for p in piles]
        set_aside = spec.rain_cards & ~sum(hands) if n == 5 else 0
        game.deal(hands, set_aside)
        for seat in range(n):
            score_split(seat, rule_move(seat) == tuple(piles[seat]))
            game.apply(Allocate(tuple(piles[seat])), seat)
        for seat in range(n):
            declared = bool(declarations[seat])
            score(seat, 2, rule_move(seat) == declared, bet_tremble)
            game.apply(Declare(declared), seat)
        for trick in tricks:
            for seat, card in trick.plays:
                legal = game.core.legal_plays()
                count = legal.bit_count()
                if count > 1:
                    score(seat, count, rule_move(seat) == card, tremble)
                game.apply(Play(card), seat)
        if line != game.rounds[-1].line:
            raise AssertionError("replayed line differs from the observed one")
    return _Evidence(tuple(tuple(x) for x in log_like), tuple(decisions))


def randomness_by_seat(beliefs: Sequence[SeatBelief], players: int) -> list[float]:
    """The per-seat random-player chance for the search (0 for the searcher's own seat)."""
    return _by_seat(beliefs, players, "random")


def exactness_by_seat(beliefs: Sequence[SeatBelief], players: int) -> list[float]:
    """The per-seat exact-rules chance for the search (0 for the searcher's own seat)."""
    return _by_seat(beliefs, players, "exact")


def _by_seat(beliefs: Sequence[SeatBelief], players: int, model: str) -> list[float]:
    out = [0.0] * players
    index = MODELS.index(model)
    for belief in beliefs:
        out[belief.seat] = belief.probabilities[index]
    return out
