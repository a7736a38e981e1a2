"""The search's settings: when to stop (SearchLimit, shared with Candy Lab: csl_ai.limits)
and how to search (SearchConfig).

Every tuned constant of the search is a SearchConfig field with a short docstring; the
evidence for each default is in docs/tuning.md. policy_settings turns a config into the
playout rules' settings as the core takes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from csl_ai.game import Observation
from csl_ai.policy import CardPolicy
from csl_ai.search.fitted import FittedModels
from csl_ai.rules import Kind, Side
from csl_ai.errors import CslError
from csl_ai.limits import SearchLimit, SearchSettingsError, _is_int

Algorithm = Literal["ismcts", "pimc"]
Utility = Literal["win", "points"]
PlayoutPolicy = Literal["rules", "random"]
OpponentBeliefs = Literal["posterior", "fixed"]
CardPolicyKind = Literal["rules", "learned"]



@dataclass(frozen=True)
class SearchConfig:
    """The algorithm and every tuned constant of the search, in one place."""

    algorithm: Algorithm = "ismcts"
    """"ismcts" (information-set MCTS) or "pimc" (flat determinized Monte Carlo)."""
    utility: Utility = "win"
    """"win": win share (1/k for a k-way shared win) plus margin_weight times the clamped
    point margin over the best other seat; "points": the seat's own final points."""
    playout: PlayoutPolicy = "rules"
    """"rules": the no-peek rule policy (also the others' hidden choices in the tree);
    "random": uniformly random moves and a coin-flip weather bet."""
    exploration: float = 0.7
    """UCB exploration constant, in utility units (win share scale). At 10,000 iterations
    against three heuristic bots (800 games, base 777; tune_search.py) 0.4, 0.7 and 1.0 won
    47.1%, 47.8% and 49.6%: flat within the noise (the same 0.7 search read 50.7% on the
    same deals with another playout stream)."""
    margin_weight: float = 0.02
    """Weight of the point-margin tie-break in the "win" utility."""
    margin_scale: float = 40.0
    """Points of margin that saturate the tie-break term (it is clamped to [-1, 1])."""
    points_scale: float = 50.0
    """Points that count as one utility unit when utility="points" (keeps UCB in scale)."""
    widening_base: float = 6.0
    """Allocations open at the root before any visit (progressive widening)."""
    widening_coef: float = 5.0
    """Open allocations grow by widening_coef * N ** widening_alpha (N = root visits).
    Against three heuristic bots at 10,000 iterations (the same 400 games; tune_search.py)
    coefficients 0.4, 1, 2.5 and 5 won 39.4%, 42.0%, 45.5% and 47.0%: good splits lie deep
    in the prior order, and a wide search needs the budget (at 3,000 iterations 2.5 won
    39.3%, 1 won 46.5%)."""
    widening_alpha: float = 0.5
    halving_min_worlds: int = 8
    """Worlds each allocation gets in the first halving round; m is the largest count
    (at most all allocations) with m * ceil(log2 m) * halving_min_worlds <= iterations.
    At 10,000 iterations (m = 156), 3 (m about 370) did as well and 24 (m about 60) lost
    5 points when only the allocation was searched."""
    pimc_candidates: int = 24
    """PIMC evaluates only the first this-many allocations in prior order (all weather bets
    and card plays)."""
    playout_epsilon: float = 0.2
    """Chance that the rule policy plays a uniformly random legal move instead (keeps
    playouts from being one fixed line). Against three heuristic bots at 3,000 iterations
    (400 games, same deals; benchmarks/tune_search.py) 0.2 won 46.5% where 0.1 won 41.9% and
    0.03 40.5%."""
    opponent_randomness: float = 0.5
    """How the other seats are modelled where the rules play for them (the playouts, and
    their hidden allocations and bets in the tree): as a uniformly random player with this
    chance, else by the rules. Each of their moves is then random with chance
    r + (1 - r) * playout_epsilon and each of their bets a coin toss with chance r. The
    search does not know whom it
    plays, and a model of sensible opponents alone misreads random ones: it settled for
    low-scoring plans that a random player's lucky run beat. At 10,000 iterations
    (tune_search.py) against three random bots 0, 0.5 and 1 won 87.0%, 91.5% and 90.5%
    (400 games, base 20000), and 0 and 0.5 won 88.7% and 90.0% over 800 other deals (base
    30000); against
    three heuristic bots 0.5 won 46.7% against 47.3% for 0 (the same 800 games, base 777).
    Drawing one type per seat per iteration instead (a random player for the whole
    iteration) measured alike (89.5%, 91.6% and 48.3% on those games) but its benchmark
    curve stopped rising after 3,000 iterations, so the mixture stays per move."""
    opponent_beliefs: OpponentBeliefs = "posterior"
    """"posterior": each other seat's chance of playing like a random player (and exactly by
    the rules) is its posterior given its splits, bets and card plays in the finished rounds
    (csl_ai.beliefs), with opponent_randomness (and exact_prior) as the prior; "fixed":
    opponent_randomness for every seat, and no exact model."""
    belief_tremble: float = 0.5
    """In the posterior, the rules model's chance of any legal card instead of its own: wide,
    since the rules stand for every sensible player, not only this program."""
    belief_bet_tremble: float = 0.1
    """In the posterior, the rules model's chance of either weather bet instead of its own;
    also the tremble of bet inference."""
    exact_prior: float = 0.1
    """In the posterior, the prior chance (out of the rules' share) that a seat plays
    exactly by the rules: each of its splits, bets and cards is the rules' own but with
    chance exact_tremble. With its posterior chance the search plays the seat's cards in
    the tree by the rules instead of UCB, splits its sampled hand by the rules before the
    round's first card, and gives its playout moves exact_epsilon of randomness. Against
    three bots that play the rules exactly (4 players, 10,000 iterations, 2,000 games) it
    won 77.6% against 69.2% without, paired +8.5 (+6.3..+10.5); against heuristic, random
    and held-out zoo:leopards bots, whose exact share falls to near 0 in the first round,
    -0.8, +0.1 and +0.3, all within the noise (docs/tuning.md, eighteenth session). 0: off."""
    exact_tremble: float = 0.02
    """The exact model's chance of any legal card or bet instead of the rules' own."""
    exact_epsilon: float = 0.01
    """A seat's chance of a random playout move where it is believed to play exactly."""
    split_mixture: tuple[tuple[float, float, float, float], ...] = (
        (0.2, 0.4, 0.4, 0.0),
        (0.2, 0.3, 0.2, 0.3),
        (0.2, 0.3, 0.2, 0.3),
        (0.2, 0.3, 0.2, 0.3),
    )
    """Per player count 2..5, the prior shares of the split mixture by which another seat's
    split is drawn: any split alike; the heuristic agent's worth of the split (a softmax
    with split_worth_beta; its good-weather plan's worth for a seat that bet); the
    allocation model (fitted.split_weights; alike for a seat that bet); the playout rules'
    own split (3 to 5 players only: heads-up its share is 0). Heads-up the split is drawn
    from the table of all splits of the known other hand, in the worlds once it has split
    and in the tree while it is still to split; at 3 to 5 players see tree_split_mixture.
    The shares then follow how well each part explains the seat's splits of the finished
    rounds (the split posterior); a seat's random chance r adds r of "alike" on top. At 3
    to 5 players without the rules' part, bots that play the rules exactly read -7.8."""
    split_worth_beta: tuple[float, ...] = (16.0, 6.0, 6.0, 6.0)
    """Per player count 2..5, the split mixture's worth part: the softmax's inverse
    temperature, per point. At 3 to 5 players 16 is sharp enough to be confidently wrong
    about bots that split like the heuristic only in some rounds: against zoo:stars and
    zoo:leopards -4.3 and -3.9 (300 and 400 games), at 6 -0.3 and +2.5, against the
    heuristic +13.8 and +11.6."""
    tree_split_mixture: tuple[int, ...] = (4, 5)
    """Player counts at which each other seat still to split draws its split in the tree
    from a split mixture (split_mixture, its shares by the split posterior) instead of
    the playout rules' split; 3 players takes it too. Its hand is sampled, so the
    split is drawn in C over every split of that hand, exactly (mixture_allocate: any split
    alike, the heuristic's worth of its normal plan, the allocation model at that player
    count, the rules' split); with split_mixture_pool the worlds of the bet and the round's
    first card get splits so drawn too. Heads-up split_mixture does this from the known hand.
    4 players, 10,000 iterations, paired against it off: heuristic (tuning) +11.6
    (+5.9..+17.1, 400 games); held out zoo:trumps +5.3, zoo:bettor +7.3, ismcts:iters=1000
    +1.3, rules bots +0.1, random +0.1; zoo:stars -0.3 and zoo:leopards +2.5 (their first
    reading chose split_worth_beta). At 3 and 5 players +7.0 and +8.0 against the
    heuristic but -3.0 and -3.8 against the held-out zoo:trumps (300 games each; twentieth
    session). Against the blind outsiders (normal's iterations, all 32 scorings, paired):
    5 players +2.5 (+0.1..+4.8, 2,000 games, every row above zero), so it is on there; 3
    players +0.2 (900 games), so off (docs/tuning.md, thirty-sixth session)."""
    split_mixture_pool: int = 1024
    """With tree_split_mixture, the worlds drawn once (their splits by the mixture) for the
    weather bet and the round's first card, where every iteration would otherwise draw its
    own (a draw per iteration would cost four times the search there); 0: those decisions
    keep the sampler's uniform splits, as before. 4 players, 10,000 iterations, paired
    against 0: heuristic (tuning) +2.0 (-1.0..+5.4, 400 games); held out zoo:bettor +5.5
    (+2.5..+8.7), zoo:trumps +3.3 (-0.3..+7.3, 300 games each), random +0.2 (-1.2..+1.5,
    400); no measurable cost (docs/tuning.md, twenty-first session)."""
    play_split_mixture: tuple[int, ...] = (4,)
    """Player counts (3 to 5) at which, after the round's first card, each other seat's split
    of its sampled hand in the worlds is drawn by its split mixture given the round's play
    (csrc/splits.pxi mixture_fit: only the splits that hold the cards it played from each
    pile and none of a colour it has shown a pile lacks, exactly by weight; the parts
    reweighed by how likely each made such a split), in a pool of play_mixture_pool
    worlds; else those worlds keep the sampler's uniform splits. 4 players, 10,000
    iterations, on top of split_mixture_pool, paired: heuristic (tuning) -0.8, held out
    zoo:bettor +1.7 and zoo:trumps +3.0 (300-400 games each; alone, without reuse, +1.6
    and +2.2 against the heuristic and zoo:bettor); 1.4 times the CPU a decision, where
    twice the iterations gained +0.2 (docs/tuning.md, twenty-first session)."""
    play_mixture_pool: int = 1024
    """With play_split_mixture, the worlds drawn per card-play search."""
    mixture_reuse: int = 8
    """In the pools of split_mixture_pool and play_mixture_pool, the worlds made from each
    sampled deal of hands, each with its own splits of them (a seat's mixture tables are
    made once a hand, so most of a pool's cost goes with its deals; docs/tuning.md)."""
    inference_pool: int = 2048
    """Heads-up, the worlds drawn per search, the other seat's split in each from its
    table (split_mixture)."""
    card_policy: CardPolicyKind = "rules"
    """How the playouts (and the others' rule moves in the tree) play a card: "rules" (the
    fixed rules above) or "learned" (a softmax over the legal cards learned from the
    search's own self-play, csl_ai.policy; weights card_weights, or the shipped file)."""
    card_weights: tuple[float, ...] | None = None
    """Weights of the learned card policy (csl_ai.policy.CARD_FEATURES order); None: the
    weights shipped in csl_ai/data/card_policy.json."""
    value_horizon: tuple[int, ...] = (3, 5, 3, 4)
    """Per player count 2..5: a playout stops at the end of a round once at most this many
    rounds remain, and the learned value of the tallies (csl_ai.value, fitted.value_weights)
    stands for them; 0: the playout rules deal and play every later round out to the
    game's end. By default it stands for every later round. Against three heuristic bots
    at 10,000 iterations (tune_search.py, paired on the same games) it read +3.0 points at
    4 players (50.7% against 47.7%, +0.4..+5.7, 2,000 games; -1.2 on average over the
    strength benchmark's seven 4-player rows), +3.8 and +0.8 at 3 (-1.7..+9.3 over 600
    games, -3.4..+4.8 over 900 others) and +1.3 at 5 (-2.5..+5.3, 1,000 games), each for
    about two thirds of the CPU; at equal CPU (15,000 iterations) +2.7 at 4. Heads-up, with
    the tallies alone it lost 20 points (62.1% against 82.3%: the fit read an honoured
    bet's points as a lead); with the split features, which see the sky cards still to
    come, +0.1 (-2.8..+2.8, 1,200 games) for 71% of the CPU, and +1.1 (-1.8..+3.8) at
    14,000 iterations, equal CPU (docs/tuning.md, fourteenth and fifteenth sessions)."""
    fitted: FittedModels = FittedModels.shipped()
    """The fitted models: the allocation model's weights, the learned value's and the win
    calibration (csl_ai.search.fitted; shipped in csl_ai/data/, each file naming the
    command that made it). The calibration applies to ISMCTS with rule playouts and the
    "win" utility; fitted.replace(win_calibration=None) reports the raw mean win share."""
    weather_threshold: float = 1.2
    """The rules declare good weather when the hand's danger is below this."""
    weather_blue: float = 1.0
    """Danger of a blue card: weather_blue + rank / ranks."""
    weather_power: float = 3.0
    """Danger of another card: (rank / ranks) ** weather_power."""
    candy_value: float = 2.0
    """What one candy element is worth to the rules when they judge a sky card."""
    star_three_value: tuple[float, float] = (30.0, 100.0)
    """Worth of a third shooting star to the rules, on side A (it doubles the other
    points) and on side B (an outright win)."""
    potential_decay: float = 0.5
    """Look-ahead discount when the rules value elements that pay off one or two later."""
    void_bonus: float = 1.0
    """Prior bonus per colour missing from a pile that holds a trump (allocation order)."""
    search_forced: bool = False
    """Search even when there is a single legal move (else answer at once, 0 iterations)."""

    def __post_init__(self) -> None:
        choices = {
            "algorithm": ("ismcts", "pimc"),
            "utility": ("win", "points"),
            "playout": ("rules", "random"),
            "opponent_beliefs": ("posterior", "fixed"),
            "card_policy": ("rules", "learned"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise SearchSettingsError(
                    f"{name} must be one of {', '.join(map(repr, allowed))}, got {getattr(self, name)!r}"
                )
        for name in (
            "exploration", "margin_weight", "margin_scale", "points_scale", "widening_base",
            "widening_coef", "widening_alpha", "playout_epsilon", "weather_threshold",
            "weather_blue", "weather_power", "candy_value", "potential_decay", "void_bonus", "opponent_randomness",
            "belief_tremble", "belief_bet_tremble", "exact_prior", "exact_tremble", "exact_epsilon",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SearchSettingsError(f"{name} must be a finite number, got {value!r}")
        for name in ("margin_scale", "points_scale"):
            if getattr(self, name) <= 0:
                raise SearchSettingsError(f"{name} must be positive, got {getattr(self, name)!r}")
        if not isinstance(self.fitted, FittedModels):
            raise SearchSettingsError(f"fitted must be a FittedModels, got {self.fitted!r}")
        horizon = self.value_horizon
        if (
            not isinstance(horizon, (tuple, list)) or len(horizon) != 4
            or not all(_is_int(h) and 0 <= h <= 5 for h in horizon)
        ):
            raise SearchSettingsError(
                f"value_horizon must be 4 round counts 0..5 (2..5 players), got {horizon!r}"
            )
        object.__setattr__(self, "value_horizon", tuple(horizon))
        for name in ("tree_split_mixture", "play_split_mixture"):
            counts = getattr(self, name)
            if (
                not isinstance(counts, (tuple, list))
                or not all(_is_int(c) and 2 <= c <= 5 for c in counts)
            ):
                raise SearchSettingsError(
                    f"{name} must be a list of player counts 2..5, got {counts!r}"
                )
            object.__setattr__(self, name, tuple(sorted(set(counts))))
        object.__setattr__(self, "split_mixture", _split_mixture(self.split_mixture))
        object.__setattr__(self, "split_worth_beta", _per_players(
            "split_worth_beta", self.split_worth_beta, lambda v: 0 <= v <= 1e3, "in [0, 1000]"
        ))
        object.__setattr__(self, "star_three_value", _numbers("star_three_value", self.star_three_value, 2))
        for name, low, high in (
            ("split_mixture_pool", 0, 65536), ("play_mixture_pool", 1, 65536), ("mixture_reuse", 1, 64),
            ("inference_pool", 1, 65536),
        ):
            value = getattr(self, name)
            if not _is_int(value) or not low <= value <= high:
                raise SearchSettingsError(f"{name} must be an integer {low}..{high}, got {value!r}")
        for name in (
            "playout_epsilon", "opponent_randomness", "belief_tremble", "belief_bet_tremble",
            "exact_prior", "exact_tremble", "exact_epsilon",
        ):
            if not 0 <= getattr(self, name) <= 1:
                raise SearchSettingsError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        for name in ("exploration", "widening_base", "widening_coef", "widening_alpha", "margin_weight"):
            if getattr(self, name) < 0:
                raise SearchSettingsError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.card_weights is not None:
            try:
                object.__setattr__(self, "card_weights", CardPolicy(tuple(self.card_weights)).weights)
            except (CslError, TypeError) as e:
                raise SearchSettingsError(f"card_weights: {e}") from None
        if not _is_int(self.pimc_candidates) or self.pimc_candidates < 1:
            raise SearchSettingsError(f"pimc_candidates must be a positive integer, got {self.pimc_candidates!r}")
        if not _is_int(self.halving_min_worlds) or self.halving_min_worlds < 1:
            raise SearchSettingsError(
                f"halving_min_worlds must be a positive integer, got {self.halving_min_worlds!r}"
            )


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _numbers(name: str, values: object, n: int) -> tuple[float, ...]:
    """values as n finite floats; SearchSettingsError otherwise."""
    if not isinstance(values, (tuple, list)) or len(values) != n or not all(_finite(v) for v in values):
        raise SearchSettingsError(f"{name} must be {n} finite numbers, got {values!r}")
    return tuple(float(v) for v in values)


def _per_players(name: str, values: object, ok: Any, what: str) -> tuple[float, ...]:
    """values as one float per player count 2..5, each ok; SearchSettingsError otherwise."""
    if (
        not isinstance(values, (tuple, list)) or len(values) != 4
        or not all(_finite(v) and ok(v) for v in values)
    ):
        raise SearchSettingsError(f"{name} must be 4 numbers (2..5 players), each {what}, got {values!r}")
    return tuple(float(v) for v in values)


def _split_mixture(rows: object) -> tuple[tuple[float, float, float, float], ...]:
    """rows as 4 rows (2..5 players) of 4 shares in [0, 1] summing to 1, the heads-up row's
    last (the rules' split) 0; SearchSettingsError otherwise."""
    if (
        not isinstance(rows, (tuple, list)) or len(rows) != 4
        or any(not isinstance(r, (tuple, list)) or len(r) != 4 for r in rows)
        or not all(_finite(v) and 0 <= v <= 1 for r in rows for v in r)
        or not all(math.isclose(sum(r), 1.0, abs_tol=1e-9) for r in rows)
        or rows[0][3] != 0
    ):
        raise SearchSettingsError(
            "split_mixture must be 4 rows (2..5 players) of 4 shares in [0, 1] summing to 1 "
            f"(alike, worth, model, rules; heads-up the rules' share 0), got {rows!r}"
        )
    return tuple((float(r[0]), float(r[1]), float(r[2]), float(r[3])) for r in rows)




def policy_settings(obs: Observation, config: SearchConfig) -> dict[str, Any]:
    """The rule policy's settings for obs's rules, as the core takes them."""
    star_b = obs.rules.side(Kind.STAR) is Side.B
    return {
        "epsilon": config.playout_epsilon,
        "weather_threshold": config.weather_threshold,
        "weather_blue": config.weather_blue,
        "weather_power": config.weather_power,
        "candy_value": config.candy_value,
        "star_three_value": config.star_three_value[1 if star_b else 0],
        "potential_decay": config.potential_decay,
    }


__all__ = [
    "Algorithm",
    "CardPolicyKind",
    "OpponentBeliefs",
    "PlayoutPolicy",
    "SearchConfig",
    "SearchLimit",
    "SearchSettingsError",
    "Utility",
    "policy_settings",
]
