"""The search's settings: when to stop (SearchLimit) and how to search (SearchConfig).

Every tuned constant of the search is a SearchConfig field with a short docstring; the
evidence for each default is in docs/tuning.md. policy_settings turns a config into the
playout rules' settings as the core takes them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from csl_ai.calibration import WinCalibration
from csl_ai.errors import CslError
from csl_ai.game import Observation
from csl_ai.policy import CardPolicy
from csl_ai.rules import Kind, Side
from csl_ai.seeds import MASK64
from csl_ai.value import VALUE_FEATURES

Algorithm = Literal["ismcts", "pimc"]
Utility = Literal["win", "points"]
PlayoutPolicy = Literal["rules", "random"]
OpponentBeliefs = Literal["posterior", "fixed"]
CardPolicyKind = Literal["rules", "learned"]



class SearchSettingsError(CslError):
    """A SearchLimit or SearchConfig value out of range."""


@dataclass(frozen=True)
class SearchLimit:
    """When to stop, on how many threads, from which seed.

    With both limits the search stops at whichever comes first. With a seed and an
    iteration limit (and no time limit) the result is identical run after run for the same
    number of threads; another thread count searches other streams and may answer otherwise
    where moves are close.
    """

    iterations: int | None = None
    """Total iterations over all threads (ISMCTS: one world and one playout each; PIMC: one
    playout each, whole worlds only)."""
    time_ms: float | None = None
    """Wall-clock budget of the decision, in milliseconds, for each thread: what the set-up
    before the threads start takes (the pool of inferred worlds) counts against it."""
    threads: int = 1
    """Root-parallel searches, each on its own thread with its own seeded stream; their root
    statistics are summed in thread order."""
    seed: int | None = None
    """Base seed; None draws one from the operating system (not reproducible)."""

    def __post_init__(self) -> None:
        if self.iterations is None and self.time_ms is None:
            raise SearchSettingsError("SearchLimit needs iterations or time_ms")
        if self.iterations is not None and (
            not _is_int(self.iterations) or self.iterations < 1
        ):
            raise SearchSettingsError(
                f"iterations must be a positive integer, got {self.iterations!r}"
            )
        if self.time_ms is not None and (
            isinstance(self.time_ms, bool)
            or not isinstance(self.time_ms, (int, float))
            or not 0 < self.time_ms < math.inf
        ):
            raise SearchSettingsError(f"time_ms must be a positive number, got {self.time_ms!r}")
        if not _is_int(self.threads) or not 1 <= self.threads <= 256:
            raise SearchSettingsError(f"threads must be an integer 1..256, got {self.threads!r}")
        if self.seed is not None and (not _is_int(self.seed) or not 0 <= self.seed <= MASK64):
            raise SearchSettingsError(f"seed must be an integer 0..2**64-1, got {self.seed!r}")


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
    split_weights: tuple[tuple[float, ...], ...] = (
        (0.0211, -0.0197, 0.6196, -2.2782),
        (0.0637, -0.0705, 1.8406, -1.4022),
        (0.1036, -0.15, 2.1806, -1.2673),
        (0.0823, -0.0891, 2.6317, -1.9738),
    )
    """Per player count 2..5: the allocation model's weights, one per split feature
    (csrc/playout.pxi split_features: value-weighted danger, value-weighted top card,
    colours missing beside a trump, piles holding a trump). A conditional logit fitted
    to the splits of the heuristic agent and zoo:cautious
    (`python benchmarks/fit_split_model.py --games 30` prints them);
    it explains the held-out zoo bots' splits as well (1.0-1.9 nats an allocation over a
    uniform split). A seat that bet on good weather is left uniform: its split serves
    another plan, and the fit found nothing there."""
    split_mixture: tuple[float, float, float] = (0.2, 0.4, 0.4)
    """Heads-up, the prior shares of the mixture by which the other seat's split is drawn
    from the table of all splits of its (known) hand, in the worlds once it has split and
    in the tree while it is still to split; the shares then follow how well each part
    explains its splits of the finished rounds (the split posterior). The parts: any
    split alike; the heuristic agent's worth of the split (softmax with split_worth_beta;
    its good-weather plan's worth for a seat that bet); the allocation model (split_weights;
    alike for a seat that bet). A seat's random chance r adds r of "alike" on top."""
    split_worth_beta: float = 16.0
    """Heads-up, the heuristic worth's softmax inverse temperature, per point."""
    tree_split_mixture: tuple[int, ...] = (4,)
    """Player counts at which each other seat still to split draws its split in the tree
    from a split mixture (others_split_mixture, its shares by the split posterior) instead of
    the playout rules' split; 3 and 5 players take it too. Its hand is sampled, so the
    split is drawn in C over every split of that hand, exactly (mixture_allocate: any split
    alike, the heuristic's worth of its normal plan, the allocation model at that player
    count, the rules' split); with split_mixture_pool the worlds of the bet and the round's
    first card get splits so drawn too. Heads-up split_mixture does this from the known hand.
    4 players, 10,000 iterations, paired against it off: heuristic (tuning) +11.6
    (+5.9..+17.1, 400 games); held out zoo:trumps +5.3, zoo:bettor +7.3, ismcts:iters=1000
    +1.3, rules bots +0.1, random +0.1; zoo:stars -0.3 and zoo:leopards +2.5 (their first
    reading chose others_split_worth_beta). At 3 and 5 players +7.0 and +8.0 against the
    heuristic but -3.0 and -3.8 against the held-out zoo:trumps (300 games each): a gain
    shown only against the heuristic, so it is off there (docs/tuning.md, twentieth session)."""
    others_split_mixture: tuple[float, float, float, float] = (0.2, 0.3, 0.2, 0.3)
    """With tree_split_mixture, the prior shares of its parts (3 to 5 players): any split
    alike, the heuristic's worth, the allocation model, and the playout rules' own split
    (the strongest cards to the group worth most)."""
    others_split_worth_beta: float = 6.0
    """With tree_split_mixture, the heuristic worth's softmax inverse temperature at 3 to 5
    players, per point (split_worth_beta heads-up). At 16 the worth part is sharp enough to
    be confidently wrong about bots that split like the heuristic only in some rounds:
    against zoo:stars and zoo:leopards -4.3 and -3.9 (300 and 400 games), at 6 -0.3 and
    +2.5, against the heuristic +13.8 and +11.6."""
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
    play_mixture_reuse: int = 4
    """With play_split_mixture, pool worlds made from each sampled deal,
    each with its own splits of the same hands (the mixture's tables are made once a hand,
    so 4 costs about a quarter of 1: 25.5 against 40.5 ms a searched decision)."""
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
    rounds remain, and the learned value of the tallies (csl_ai.value, value_weights)
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
    value_weights: tuple[tuple[tuple[float, ...], ...], ...] = (
        (  # 2 players, by rounds left
            (0.6733, 0.0168, 0.0122, 0.0734, 0.1023, -0.1299, 0.2258, -0.0368, -0.0503, 1.3056, 0.3467, 0.3686, 0.5855, 0.6548, -0.0611),
            (0.5403, -0.005, 0.0032, 0.0354, 0.0293, 0.0633, 0.2314, -0.0895, 0.0392, 1.1314, 0.2808, 0.4615, 0.5684, 0.4242, -0.0252),
            (0.3245, -0.0725, -0.0105, -0.0212, -0.025, 0.0714, 0.0099, -0.0574, 0.038, 0.8249, 0.3336, 0.4615, 0.4958, 0.0394, 0.4139),
        ),
        (  # 3 players, by rounds left
            (0.7462, 0.1749, -0.0002, 0.1912, 0.1192, 0.0886, 0.1603, -0.0041, 0.1741, 1.1298, 0.0, 0.0, 0.0, 0.0, 0.0),
            (0.584, 0.2115, 0.0675, 0.2047, 0.1568, 0.1154, 0.1619, -0.0132, 0.1525, 0.9513, 0.0, 0.0, 0.0, 0.0, 0.0),
            (0.4541, 0.1954, 0.0819, 0.1909, 0.1491, 0.1421, 0.1471, -0.0052, 0.124, 0.7441, 0.0, 0.0, 0.0, 0.0, 0.0),
            (0.3254, 0.1388, 0.0586, 0.1369, 0.1582, 0.1527, 0.0576, -0.0101, 0.0862, 0.6138, 0.0, 0.0, 0.0, 0.0, 0.0),
            (0.2558, 0.1122, 0.06, 0.0882, 0.1474, 0.2131, 0.0654, 0.015, -0.1161, 0.5681, 0.0, 0.0, 0.0, 0.0, 0.0),
        ),
        (  # 4 players, by rounds left
            (1.1264, 0.352, 0.0242, 0.3111, 0.2003, 0.1093, 0.2701, 0.0249, 0.1762, 1.233, 0.0, 0.0, 0.0, 0.0, 0.0),
            (0.9599, 0.3841, 0.11, 0.3022, 0.2968, 0.0973, 0.2879, 0.034, 0.1697, 1.0387, 0.0, 0.0, 0.0, 0.0, 0.0),
            (0.7055, 0.2946, 0.0673, 0.2368, 0.2788, 0.0952, 0.2139, -0.0029, 0.0666, 0.9695, 0.0, 0.0, 0.0, 0.0, 0.0),
        ),
        (  # 5 players, by rounds left
            (1.5686, 0.4187, -0.0001, 0.3251, 0.2248, 0.1224, 0.337, 0.0375, 0.1887, 1.3532, 0.0, 0.0, 0.0, 0.0, 0.0),
            (1.412, 0.5223, 0.1193, 0.3922, 0.3185, 0.0939, 0.3955, 0.0493, 0.1869, 1.3175, 0.0, 0.0, 0.0, 0.0, 0.0),
            (1.2772, 0.515, 0.1438, 0.3853, 0.3679, 0.0813, 0.4039, 0.0867, 0.1113, 1.1146, 0.0, 0.0, 0.0, 0.0, 0.0),
            (1.1283, 0.456, 0.1099, 0.35, 0.3822, 0.1314, 0.688, 0.0479, -0.0025, 0.6701, 0.0, 0.0, 0.0, 0.0, 0.0),
        ),
    )
    """Per player count 2..5, one row per rounds left (1 first) of the learned value's
    weights (csl_ai.value.VALUE_FEATURES order), fitted to games of the tuning bots by
    `python benchmarks/fit_value_model.py --games 40000`. The split features (a random
    split of the sky cards to come) have weight zero at 3 to 5 players: they explain the
    bots' games better there too, yet at 4 players the search lost 3.2 points with them
    (47.5% against 50.7%, -6.0..-0.3, 2,000 paired games; docs/tuning.md)."""
    value_points_weights: tuple[tuple[tuple[float, ...], ...], ...] = (
        (  # 2 players, by rounds left
            (0.696, 10.618, -0.435, -0.506, -0.15, -0.105, -1.522, 1.779, 0.024, -0.208, -0.47, 10.068, 10.48, 11.447, 11.285, 0.229),
            (1.982, 10.116, -0.151, -0.157, -0.003, -0.1, 0.624, 1.77, -0.115, -0.054, -1.803, 7.125, 9.939, 10.341, 10.956, 2.291),
            (3.965, 8.596, -0.115, -0.038, 0.516, 0.638, 0.598, 1.404, 0.021, -0.364, -2.702, 5.394, 7.248, 8.909, 11.823, 1.714),
        ),
        (  # 3 players, by rounds left
            (2.581, 10.85, 3.196, 0.726, 2.89, 1.982, 1.662, 2.273, 0.194, 3.879, -1.594, 0.0, 0.0, 0.0, 0.0, 0.0),
            (6.102, 9.74, 3.871, 1.511, 3.347, 2.666, 1.862, 3.183, 0.325, 3.319, -2.563, 0.0, 0.0, 0.0, 0.0, 0.0),
            (10.413, 7.949, 3.603, 1.678, 3.013, 2.64, 1.863, 2.973, 0.771, 2.75, -4.476, 0.0, 0.0, 0.0, 0.0, 0.0),
            (15.029, 5.492, 2.617, 1.482, 2.073, 2.421, 0.953, 2.578, 1.543, 1.991, -6.244, 0.0, 0.0, 0.0, 0.0, 0.0),
            (16.667, 4.598, 2.209, 1.745, 0.749, 2.948, 1.344, 2.487, 3.1, -1.845, -4.826, 0.0, 0.0, 0.0, 0.0, 0.0),
        ),
        (  # 4 players, by rounds left
            (2.999, 10.784, 3.205, 0.933, 2.914, 1.941, 0.757, 3.129, 0.384, 3.202, -0.864, 0.0, 0.0, 0.0, 0.0, 0.0),
            (8.037, 8.948, 3.47, 1.339, 2.595, 2.814, 0.562, 3.406, 0.933, 2.727, -2.462, 0.0, 0.0, 0.0, 0.0, 0.0),
            (12.839, 6.231, 2.816, 1.224, 1.424, 2.737, 0.059, 3.949, 1.259, 0.552, -1.914, 0.0, 0.0, 0.0, 0.0, 0.0),
        ),
        (  # 5 players, by rounds left
            (2.255, 10.807, 2.566, 0.597, 2.259, 1.283, 0.631, 2.191, 0.288, 2.39, -0.077, 0.0, 0.0, 0.0, 0.0, 0.0),
            (5.188, 10.318, 3.531, 1.198, 2.759, 2.254, 0.074, 3.374, 0.561, 2.531, -1.021, 0.0, 0.0, 0.0, 0.0, 0.0),
            (8.56, 9.048, 3.543, 1.33, 2.535, 2.615, -0.774, 4.471, 0.867, 2.055, -1.892, 0.0, 0.0, 0.0, 0.0, 0.0),
            (11.311, 7.877, 3.404, 1.416, 1.872, 2.886, 0.05, 6.173, 0.475, 0.756, -1.185, 0.0, 0.0, 0.0, 0.0, 0.0),
        ),
    )
    """The same per player count and rounds left: the intercept and weights of the learned
    value's line to a seat's final points (what the search reports as expected points
    when the value stands for the later rounds), from the same fit."""
    weather_threshold: float = 1.2
    """The rules declare good weather when the hand's danger is below this."""
    weather_blue: float = 1.0
    """Danger of a blue card: weather_blue + rank / ranks."""
    weather_power: float = 3.0
    """Danger of another card: (rank / ranks) ** weather_power."""
    candy_value: float = 2.0
    """What one candy element is worth to the rules when they judge a sky card."""
    star_three_value_a: float = 30.0
    """Worth of a third shooting star on side A (doubles the other points)."""
    star_three_value_b: float = 100.0
    """Worth of a third shooting star on side B (an outright win)."""
    potential_decay: float = 0.5
    """Look-ahead discount when the rules value elements that pay off one or two later."""
    void_bonus: float = 1.0
    """Prior bonus per colour missing from a pile that holds a trump (allocation order)."""
    win_calibration: WinCalibration | None = WinCalibration(
        (
            (0.302, 0.8629, 0.2094, 1.0291, 0.1787),
            (0.1136, 0.9124, -0.0522, 1.2146, 0.3206),
            (-0.0086, 1.1042, 0.0964, 1.1792, -0.0068),
            (-0.3879, 0.9322, 0.0014, 0.7689, -0.106),
        )
    )
    """The map from the mean win share to a chance of winning, per player count, budget and
    whether a later round follows (csl_ai.calibration). Fitted on 71,590 searched decisions
    against the heuristic agent and zoo:cautious at 1,000, 10,000 and 30,000 iterations
    (`python benchmarks/fit_calibration.py --budgets 1000,10000,30000 --deals 30`); against
    a budget-only map fitted on the same decisions the stage terms lowered the Brier score
    out of fold and on all 8 held-out sets (docs/tuning.md). It applies to ISMCTS with
    rule playouts and the "win" utility; None: the raw mean win share is reported. The
    3- to 5-player rows were refitted when the learned value took over the later rounds
    there (`python benchmarks/fit_calibration.py --players 4 --save decisions4.json`,
    19,684 decisions, 281 s; `--players 3,5`, 16,886 and 26,043 decisions, 917 s;
    docs/tuning.md, fourteenth session), and the 2-player row when it took them over
    heads-up (`--players 2`, 10,333 decisions, 84 s; fifteenth session); the 4-player row
    again for the split mixture (`--players 4`, 19,642 decisions, 313 s; twentieth), and
    for it at the bet and in the card play (19,718 decisions, 738 s on shared cores;
    twenty-first)."""
    search_forced: bool = False
    """Search even when there is a single legal move (else answer at once, 0 iterations)."""
    initial_nodes: int = 1 << 16
    """Node pool per thread under a time limit (it doubles when full)."""

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
            "weather_blue", "weather_power", "candy_value", "star_three_value_a",
            "star_three_value_b", "potential_decay", "void_bonus", "opponent_randomness",
            "belief_tremble", "belief_bet_tremble", "exact_prior", "exact_tremble", "exact_epsilon",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SearchSettingsError(f"{name} must be a finite number, got {value!r}")
        for name in ("margin_scale", "points_scale"):
            if getattr(self, name) <= 0:
                raise SearchSettingsError(f"{name} must be positive, got {getattr(self, name)!r}")
        _check_weight_rows("split_weights", self.split_weights, 4)
        horizon = self.value_horizon
        if (
            not isinstance(horizon, (tuple, list)) or len(horizon) != 4
            or not all(_is_int(h) and 0 <= h <= 5 for h in horizon)
        ):
            raise SearchSettingsError(
                f"value_horizon must be 4 round counts 0..5 (2..5 players), got {horizon!r}"
            )
        object.__setattr__(self, "value_horizon", tuple(horizon))
        for name, width in (("value_weights", len(VALUE_FEATURES)), ("value_points_weights", len(VALUE_FEATURES) + 1)):
            tables = getattr(self, name)
            _check_value_weights(name, tables, width)
            object.__setattr__(
                self, name, tuple(tuple(tuple(float(v) for v in row) for row in rows) for rows in tables)
            )
        if self.win_calibration is not None and not isinstance(self.win_calibration, WinCalibration):
            raise SearchSettingsError(
                f"win_calibration must be a WinCalibration or None, got {self.win_calibration!r}"
            )
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
        object.__setattr__(self, "split_weights", tuple(tuple(row) for row in self.split_weights))
        for name, parts in (("split_mixture", 3), ("others_split_mixture", 4)):
            mixture = getattr(self, name)
            if (
                not isinstance(mixture, (tuple, list)) or len(mixture) != parts
                or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1 for v in mixture)
                or not math.isclose(sum(mixture), 1.0, abs_tol=1e-9)
            ):
                raise SearchSettingsError(f"{name} must be {parts} shares in [0, 1] summing to 1, got {mixture!r}")
            object.__setattr__(self, name, tuple(float(v) for v in mixture))
        for name in ("split_worth_beta", "others_split_worth_beta"):
            beta = getattr(self, name)
            if not (isinstance(beta, (int, float)) and not isinstance(beta, bool) and 0 <= beta <= 1e3):
                raise SearchSettingsError(f"{name} must be in [0, 1000], got {beta!r}")
        for name, low, high in (
            ("split_mixture_pool", 0, 65536), ("play_mixture_pool", 1, 65536), ("play_mixture_reuse", 1, 64),
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
        if not _is_int(self.initial_nodes) or self.initial_nodes < 64:
            raise SearchSettingsError(f"initial_nodes must be an integer >= 64, got {self.initial_nodes!r}")


def _check_weight_rows(name: str, rows: object, width: int) -> None:
    """SearchSettingsError unless rows is 4 rows (2..5 players) of `width` finite numbers."""
    if (
        not isinstance(rows, (tuple, list))
        or len(rows) != 4
        or any(not isinstance(row, (tuple, list)) or len(row) != width for row in rows)
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for row in rows
            for v in row
        )
    ):
        raise SearchSettingsError(f"{name} must be 4 rows (2..5 players) of {width} finite numbers")


def _check_value_weights(name: str, tables: object, width: int) -> None:
    """SearchSettingsError unless tables is 4 tables (2..5 players), each 1..6 rows (by
    rounds left) of `width` finite numbers."""
    if (
        not isinstance(tables, (tuple, list))
        or len(tables) != 4
        or any(not isinstance(rows, (tuple, list)) or not 1 <= len(rows) <= 6 for rows in tables)
        or any(not isinstance(row, (tuple, list)) or len(row) != width for rows in tables for row in rows)
        or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for rows in tables
            for row in rows
            for v in row
        )
    ):
        raise SearchSettingsError(
            f"{name} must be 4 tables (2..5 players) of 1 to 6 rows of {width} finite numbers"
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)



def policy_settings(obs: Observation, config: SearchConfig) -> dict[str, Any]:
    """The rule policy's settings for obs's rules, as the core takes them."""
    star_b = obs.rules.side(Kind.STAR) is Side.B
    return {
        "epsilon": config.playout_epsilon,
        "weather_threshold": config.weather_threshold,
        "weather_blue": config.weather_blue,
        "weather_power": config.weather_power,
        "candy_value": config.candy_value,
        "star_three_value": config.star_three_value_b if star_b else config.star_three_value_a,
        "potential_decay": config.potential_decay,
    }

