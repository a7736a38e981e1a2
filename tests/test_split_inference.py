"""The round's public record the split models read: the cards each seat played from each
pile, and the allocation model's split features."""

from __future__ import annotations


from csl_ai.agents import make_agent
from csl_ai.game import Game, Observation
from csl_ai.notation import card_colour
from csl_ai.rules import RulesConfig
from csl_ai.game import played_from_piles
from csl_ai.search import SearchConfig, world_sampler
from csl_ai.search.core import played_this_round
from csl_ai.search.setup import prepared_engine


def trick_position(players: int = 4, tricks: int = 0, seed: int = 11) -> Observation:
    """Seat 0 to play with a choice, at least `tricks` tricks into a round of heuristic play."""
    return trick_game(players, tricks, seed)[0]


def trick_game(players: int = 4, tricks: int = 0, seed: int = 11) -> tuple[Observation, Game]:
    """trick_position, and the game it comes from."""
    agents = [make_agent("heuristic", seed * 7 + s) for s in range(players)]
    game = Game(RulesConfig(players=players), seed=seed)
    while not game.is_over:
        seat = game.to_move
        obs = game.observation(seat)
        if (
            game.phase.value == "play"
            and seat == 0
            and len(obs.current.tricks) >= tricks
            and len(obs.legal_moves()) > 1
        ):
            return obs, game
        game.apply(agents[seat].act(obs), seat)
    raise AssertionError("no such position in the seeded game")


def whole_piles(world, obs: Observation, seat: int) -> tuple[int, ...]:
    played = played_from_piles(obs)[seat]
    return tuple(p | q for p, q in zip(world.piles[seat], played, strict=True))


def test_played_from_piles_puts_each_card_under_its_group() -> None:
    obs = trick_position(tricks=4)
    by_pile = played_from_piles(obs)
    played = [0] * obs.players
    for trick in obs.current.tricks:
        for seat, card in trick.plays:
            played[seat] |= 1 << card
    assert [sum(row) for row in by_pile] == played == played_this_round(obs)
    sizes = obs.rules.spec.group_sizes
    for i, trick in enumerate(obs.current.tricks):
        group = next(g for g in range(len(sizes)) if i < sum(sizes[: g + 1]))
        for seat, card in trick.plays:
            assert (by_pile[seat][group] >> card) & 1


def test_split_features_count_voids_and_trumps() -> None:
    """f[2]: colours missing from a pile that holds a trump; f[3]: piles holding a trump."""
    obs = trick_position()
    engine = prepared_engine(obs, SearchConfig())
    state = obs.public_view().core
    hand = sum(world_sampler(obs).sample(1, 1)[0].piles[1])
    cards = [c for c in range(64) if (hand >> c) & 1]
    piles = (sum(1 << c for c in cards[:3]), sum(1 << c for c in cards[3:6]), sum(1 << c for c in cards[6:]))
    f = engine.split_features(state, 1, piles)
    trump_piles = [p for p in piles if any((p >> c) & 1 and card_colour(c) == 0 for c in range(64))]
    missing = sum(
        sum(1 for colour in (1, 2) if not any((p >> c) & 1 and card_colour(c) == colour for c in range(64)))
        for p in trump_piles
    )
    assert f[3] == len(trump_piles)
    assert f[2] == missing
