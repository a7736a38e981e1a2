"""The figures bench_strength.py reports beside the win share, as small testable functions.

- Calibration of a search agent's own win estimate: Brier score, mean estimate against
  realised share, and a table by estimate decile with each decile's interval over deals.
- Good-weather bets: what each bet was worth against the same sky cards left face up
  (`bets_of` replays the finished game with that one declaration withdrawn, so the
  engine's own rules and scoring decide every number).
- Intervals: a percentile bootstrap over deals, the unit the duplicate format repeats,
  and the per-deal paired differences of the test agent against its opponents on the
  same cards.

Everything but `rescore` and `bets_of` works on plain numbers, so worker processes can
send back picklable values and the parent can summarise them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from csl_ai.game import Game, GameResult
from csl_ai.moves import Allocate, Declare, Play

BOOTSTRAP_RESAMPLES = 2_000
BOOTSTRAP_SEED = 12345
DECILES = 10


# --- intervals --------------------------------------------------------------------------------


def deal_bootstrap(
    values_by_deal: Mapping[int, Sequence[float]],
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> tuple[float, float] | None:
    """95% percentile interval of the mean of all values, resampling whole deals.

    Deals with no values are left out (they would add nothing but a zero denominator);
    None when fewer than two deals hold values, since no interval can be drawn.
    """
    per_deal = [(sum(v), len(v)) for v in values_by_deal.values() if len(v)]
    if len(per_deal) < 2:
        return None
    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        total = count = 0.0
        for _ in range(len(per_deal)):
            s, n = per_deal[rng.randrange(len(per_deal))]
            total += s
            count += n
        means.append(total / count)
    means.sort()
    return (means[int(0.025 * (len(means) - 1))], means[math.ceil(0.975 * (len(means) - 1))])


def paired_by_deal(
    test: Mapping[tuple[int, int], float], opponents: Mapping[tuple[int, int], Sequence[float]]
) -> dict[int, list[float]]:
    """Per deal, one difference per seat: the test agent's value at (deal, seat) minus the
    mean of the opponents' values at that same (deal, seat) in the other rotations.

    Same deal and seat means the same hands and sky lines, so the difference is free of
    the cards' luck; cells missing on either side are skipped.
    """
    differences: dict[int, list[float]] = {}
    for (deal, seat), value in sorted(test.items()):
        others = opponents.get((deal, seat))
        if others:
            differences.setdefault(deal, []).append(value - sum(others) / len(others))
    return differences


@dataclass(frozen=True)
class PairedFigure:
    """One measure of the test agent against its opponents on the same cards."""

    test: float
    """Mean over the (deal, seat) cells of the test agent's value."""
    opponents: float
    """Mean over the same cells of the opponents' mean value there."""
    difference: float
    """test - opponents."""
    ci95: tuple[float, float] | None
    """Bootstrap over deals of the difference."""


def paired_figure(
    test: Mapping[tuple[int, int], float], opponents: Mapping[tuple[int, int], Sequence[float]]
) -> PairedFigure:
    """The test agent's mean, the opponents' mean on the same cells, and their paired
    difference with a 95% interval over deals (cells present on both sides only)."""
    cells = [cell for cell in test if opponents.get(cell)]
    if not cells:
        return PairedFigure(math.nan, math.nan, math.nan, None)
    test_mean = sum(test[cell] for cell in cells) / len(cells)
    opponents_mean = sum(sum(opponents[c]) / len(opponents[c]) for c in cells) / len(cells)
    differences = paired_by_deal(test, opponents)
    return PairedFigure(
        test_mean, opponents_mean, mean_of(differences), deal_bootstrap(differences)
    )


def mean_of(values_by_deal: Mapping[int, Sequence[float]]) -> float:
    """The mean of all values pooled (NaN when there are none)."""
    count = sum(len(v) for v in values_by_deal.values())
    return sum(sum(v) for v in values_by_deal.values()) / count if count else math.nan


# --- calibration ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Calibration:
    """How (estimate, outcome) pairs agree: outcome is the realised win share (0, 1/k, 1)."""

    count: int
    mean_estimate: float
    realised: float
    brier: float

    @property
    def difference(self) -> float:
        """Mean estimate minus realised share (positive: over-confident)."""
        return self.mean_estimate - self.realised


@dataclass(frozen=True)
class CalibrationBin:
    """The pairs whose estimate falls in [low, high) (the last bin also holds 1.0)."""

    low: float
    high: float
    count: int
    mean_estimate: float
    realised: float

    @property
    def difference(self) -> float:
        return self.mean_estimate - self.realised


def brier(pairs: Sequence[tuple[float, float]]) -> float:
    """Mean squared error of the estimates against the outcomes (NaN with no pairs)."""
    if not pairs:
        return math.nan
    return sum((estimate - outcome) ** 2 for estimate, outcome in pairs) / len(pairs)


def calibration(pairs: Sequence[tuple[float, float]]) -> Calibration | None:
    """Count, mean estimate, realised share and Brier score; None with no pairs."""
    if not pairs:
        return None
    n = len(pairs)
    return Calibration(
        count=n,
        mean_estimate=sum(e for e, _ in pairs) / n,
        realised=sum(o for _, o in pairs) / n,
        brier=brier(pairs),
    )


def bin_of(estimate: float, bins: int) -> int:
    """The bin of [0, 1] an estimate falls in: [low, high), the last bin also holding 1.0."""
    return min(bins - 1, max(0, math.floor(estimate * bins)))


def calibration_bins(
    pairs: Sequence[tuple[float, float]], bins: int = DECILES
) -> list[CalibrationBin]:
    """The pairs split by estimate into `bins` equal bins of [0, 1]; empty bins included
    (count 0, NaN means) so tables from different sets line up."""
    members: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for estimate, outcome in pairs:
        members[bin_of(estimate, bins)].append((estimate, outcome))
    table = []
    for index, chosen in enumerate(members):
        n = len(chosen)
        table.append(
            CalibrationBin(
                low=index / bins,
                high=(index + 1) / bins,
                count=n,
                mean_estimate=sum(e for e, _ in chosen) / n if n else math.nan,
                realised=sum(o for _, o in chosen) / n if n else math.nan,
            )
        )
    return table


def decile_intervals(
    pairs_by_deal: Mapping[int, Sequence[tuple[float, float]]], bins: int = DECILES
) -> list[tuple[float, float] | None]:
    """Per estimate bin (as calibration_bins), the 95% interval of its mean estimate minus
    its realised share, resampling whole deals: the decisions of one game share one outcome
    and the games of one deal share its cards, so decisions are not independent draws.
    None for a bin with values from fewer than two deals."""
    per_bin: list[dict[int, list[float]]] = [{} for _ in range(bins)]
    for deal, pairs in pairs_by_deal.items():
        for estimate, outcome in pairs:
            per_bin[bin_of(estimate, bins)].setdefault(deal, []).append(estimate - outcome)
    return [deal_bootstrap(members) for members in per_bin]


# --- good-weather bets --------------------------------------------------------------------------


@dataclass(frozen=True)
class Bet:
    """One good-weather declaration and its worth to the declaring seat.

    value = the seat's final total minus its total had it not declared that round with
    the same sky cards won: +7 for an honoured bet; for a failed one, what turning those
    cards face down cost (or saved, when face up they would have scored badly).
    """

    seat: int
    round: int
    honoured: bool
    value: int


def rescore(game: Game, withdrawn: Collection[tuple[int, int]] = ()) -> GameResult:
    """The result of a finished game replayed move for move, except that each (seat,
    round) in `withdrawn` declares no good weather.

    A declaration changes no trick (the weather rule reads only the cards), so every
    seat wins the same sky cards; only the good weather check and the scoring differ,
    and the engine does both.
    """
    if not game.is_over:
        raise ValueError("rescore needs a finished game")
    replay = Game(game.rules, seed=game.seed, sky_order=game.sky_order, auto_deal=False)
    for round_index, log in enumerate(game.rounds):
        if any(hand is None for hand in log.hands):
            raise ValueError(f"round {round_index}: a hand is missing")
        replay.deal([hand or 0 for hand in log.hands], log.set_aside or 0)
        for seat, piles in enumerate(log.allocations):
            if piles is None:
                raise ValueError(f"round {round_index}: seat {seat} has no allocation")
            replay.apply(Allocate(piles), seat)
        for seat, declared in enumerate(log.declarations):
            replay.apply(Declare(bool(declared) and (seat, round_index) not in withdrawn), seat)
        for trick in log.tricks:
            for seat, card in trick.plays:
                replay.apply(Play(card), seat)
    return replay.result()


def bets_of(game: Game) -> tuple[Bet, ...]:
    """Every good-weather declaration of a finished game, in round then seat order."""
    totals = [line.total for line in game.result().scores]
    bets = []
    for round_index, log in enumerate(game.rounds):
        winners = {trick.winner for trick in log.tricks}
        for seat, declared in enumerate(log.declarations):
            if not declared:
                continue
            without = rescore(game, {(seat, round_index)}).scores[seat].total
            bets.append(Bet(seat, round_index, seat not in winners, totals[seat] - without))
    return tuple(bets)


@dataclass(frozen=True)
class BetSummary:
    """The bets of a group of seats (the test agent's, or its opponents' pooled)."""

    seat_rounds: int
    """Rounds played by those seats: the chances to bet."""
    bets: int
    honoured: int
    last_round: int
    """Bets made in the game's last round."""
    mean_value: float
    ci95: tuple[float, float] | None
    """Bootstrap over deals of the mean value per bet."""

    @property
    def per_round(self) -> float:
        return self.bets / self.seat_rounds if self.seat_rounds else math.nan

    @property
    def honoured_share(self) -> float:
        return self.honoured / self.bets if self.bets else math.nan

    @property
    def last_round_share(self) -> float:
        return self.last_round / self.bets if self.bets else math.nan


def summarise_bets(
    bets_by_deal: Mapping[int, Sequence[Bet]], seat_rounds: int, last_round: int
) -> BetSummary:
    """Bets per round, honoured share, share in round index `last_round`, and the mean
    value per bet with a 95% interval over deals."""
    every = [bet for bets in bets_by_deal.values() for bet in bets]
    values = {deal: [float(bet.value) for bet in bets] for deal, bets in bets_by_deal.items()}
    return BetSummary(
        seat_rounds=seat_rounds,
        bets=len(every),
        honoured=sum(bet.honoured for bet in every),
        last_round=sum(bet.round == last_round for bet in every),
        mean_value=mean_of(values),
        ci95=deal_bootstrap(values),
    )
