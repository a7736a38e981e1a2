"""What a world drawn for one seat must satisfy to be consistent with its observation.

The constraints are recomputed from the game's own history, independently of
`PublicView`, so the sampler and the inferences that reshape its worlds are checked
against the rules rather than against themselves.
"""

from __future__ import annotations

import dataclasses

from csl_ai import _core
from csl_ai.game import Game, Observation, Phase
from csl_ai.rules import PLAYER_SPECS


def colour_mask(colour: int) -> int:
    return 0xFFF << (12 * colour)


def popcount(mask: int) -> int:
    return bin(mask).count("1")


# --- what the observer knows, from the history -------------------------------------------------


@dataclasses.dataclass
class Known:
    """The hidden-card constraints of one seat's view, derived from the game's history."""

    own: int
    own_piles: tuple[int, ...] | None
    played_by: list[int]
    remaining: list[list[int]]
    voids: list[list[int]]
    unseen: int
    aside: int
    seen_lines: list[int]


def known(game: Game, seat: int) -> Known:
    spec = PLAYER_SPECS[game.players]
    current = game.rounds[-1]
    own = current.hands[seat]
    assert own is not None
    played_by = [0] * game.players
    remaining = [list(spec.group_sizes) for _ in range(game.players)]
    voids = [[0] * len(spec.group_sizes) for _ in range(game.players)]
    for trick in current.tricks:
        led = trick.plays[0][1] // 12
        for s, card in trick.plays:
            played_by[s] |= 1 << card
            remaining[s][trick.group] -= 1
            if card // 12 != led:
                voids[s][trick.group] |= 1 << led
    played = 0
    for mask in played_by:
        played |= mask
    seen_lines = [sky for r in game.rounds for sky in r.line]
    return Known(
        own=own,
        own_piles=current.allocations[seat],
        played_by=played_by,
        remaining=remaining,
        voids=voids,
        unseen=spec.rain_cards & ~own & ~played,
        aside=spec.set_aside,
        seen_lines=seen_lines,
    )


def check_world(world: _core.CoreState, obs: Observation, k: Known) -> None:
    """Everything a sampled world must satisfy to be consistent with obs."""
    seat = obs.seat
    view = obs.public_view().core
    phase = Phase(view.phase)
    assert world.phase == view.phase
    assert world.round == view.round and world.to_move == view.to_move
    assert world.trick_cards == view.trick_cards and world.played == view.played
    assert world.elements == view.elements and world.declared_mask == view.declared_mask
    assert world.allocated_mask == view.allocated_mask
    assert world.weather_done_mask == view.weather_done_mask
    assert world.hands[seat] == k.own
    n_sky = len(world.sky_order)
    assert list(world.sky_order[: len(k.seen_lines)]) == k.seen_lines
    assert sorted(world.sky_order[len(k.seen_lines):]) == sorted(
        set(range(n_sky)) - set(k.seen_lines)
    )
    hidden = 0
    total = 0
    for s in range(obs.players):
        if s == seat:
            if k.own_piles is None:
                assert phase is Phase.ALLOCATE and all(p == 0 for p in world.piles[s])
            else:
                assert k.own_piles is not None
                for g, pile in enumerate(world.piles[s]):
                    assert pile == k.own_piles[g] & ~k.played_by[s]
            continue
        if phase is Phase.ALLOCATE and not (view.allocated_mask >> s) & 1:
            hand = world.hands[s]
            assert popcount(hand) == PLAYER_SPECS[obs.players].hand_size
            assert all(p == 0 for p in world.piles[s])
            assert not (world.allocated_mask >> s) & 1
            hidden |= hand
            total += popcount(hand)
            continue
        union = 0
        for g, pile in enumerate(world.piles[s]):
            assert popcount(pile) == k.remaining[s][g], (s, g)
            for colour in range(3):
                if (k.voids[s][g] >> colour) & 1:
                    assert pile & colour_mask(colour) == 0, (s, g, colour)
            union |= pile
            total += popcount(pile)
        assert world.hands[s] == union | k.played_by[s]
        hidden |= union
    hidden |= world.set_aside
    total += popcount(world.set_aside)
    assert popcount(world.set_aside) == k.aside
    assert hidden == k.unseen and total == popcount(k.unseen)
