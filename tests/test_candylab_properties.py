"""Candy Lab property tests over random games of 2, 3 and 4 players, on the default box and
the wild one, between random and heuristic players.

Every state along every game is checked against an independent recount: every move
offered is legal and distinct, the 42 order cards and 27 bars are each in exactly one
place, the scores equal a recount from the catalogue, the phase's bookkeeping holds, the
end is one of the rulebook's two (CL-11, CL-25) and comes within 66 turns (CL-25). A game
replays exactly from its seed and moves (CL-33), and an observation is the same whatever
the cards its seat cannot see (CL-29 to CL-31).
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from csl_ai.bits import bits
from csl_ai.candylab import (
    CandyLabRules,
    Catalogue,
    CatalogueError,
    Game,
    apply,
    deal,
    is_legal,
    legal_moves,
    scores,
    winners,
)
from csl_ai.candylab import moves as mv
from csl_ai.candylab.agents import HeuristicAgent, RandomAgent, play_game
from csl_ai.candylab.catalogue import Effect, catalogue_from_arg
from csl_ai.candylab.game import HIDDEN, Event, observe
from csl_ai.candylab.state import (
    DRAWING,
    EFFECTS,
    LAST_BAR,
    LAST_CARD,
    MAIN,
    NOT_OVER,
    OVER,
    RETURNING,
    State,
)

CATALOGUES = (Catalogue.default(), catalogue_from_arg("wild"))
MAX_TURNS = 42 + 24
"""CL-25: at most 42 plays and 24 turns that draw (the largest draw pile, 3 players)."""

seeds = st.integers(min_value=0, max_value=2**63 - 1)
players = st.sampled_from((2, 3, 4))
catalogues = st.sampled_from(CATALOGUES)


def rules_of(n: int, cat: Catalogue) -> CandyLabRules:
    return CandyLabRules(players=n, catalogue=cat)


# --- the independent checks ---------------------------------------------------------------
def recount(s: State) -> list[int]:
    """Scores from the catalogue's objects (CL-27), not the core's flat tables."""
    cat = s.cat
    out = []
    for p in range(s.players):
        total = sum(cat.bars[b].value for b in bits(s.bars[p]))
        total += sum(cat.orders[c].points for c in s.stacks[p])
        out.append(total + (3 if s.golden == p else 0))
    return out


def check_state(s: State) -> None:
    """Every order and bar in exactly one place; scores; the phase's bookkeeping; the end."""
    cat = s.cat
    n = s.players
    places = [bits(h) for h in s.hands] + [s.pile, [c for c in s.face_up if c >= 0]]
    places += [list(stack) for stack in s.stacks] + [bits(s.box)]
    orders = [c for place in places for c in place]
    assert sorted(orders) == list(range(len(cat.orders)))
    assert s.box_public & ~s.box == 0
    assert n == 2 or s.hands[n] == 0
    bar_ids = list(s.belt) + [b for p in range(n) for b in bits(s.bars[p])]
    assert sorted(bar_ids) == list(range(len(cat.bars)))
    assert scores(s) == recount(s)
    assert s.turn <= MAX_TURNS
    if s.phase == OVER:
        assert s.end in (LAST_BAR, LAST_CARD)
        if s.end == LAST_BAR:
            assert s.belt == [] and 0 <= s.golden < n
        else:
            assert s.pile == [] and s.golden == -1
        assert legal_moves(s) == []
        win = winners(s)
        best = max(scores(s))
        assert all(scores(s)[p] == best for p in win)
        return
    assert s.end == NOT_OVER and s.belt and s.pile and s.golden == -1
    if s.phase == MAIN:
        assert s.pending == 0 and s.returned == 0 and s.draws_left == 0
    elif s.phase == EFFECTS:
        assert s.pending and s.pending & ~s.bars[s.current] == 0
        assert all(cat.bars[b].effect is not Effect.NONE for b in bits(s.pending))
    elif s.phase == RETURNING:
        assert 1 <= s.returned < 3 and s.bars[s.current] and s.draws_left >= s.returned
    else:
        assert s.phase == DRAWING and s.draws_left > 0


def check_moves(s: State, moves: list[int]) -> None:
    """Moves offered: some while the game goes on, distinct, each one legal."""
    assert moves, "no legal move in a game that is not over"
    assert len(set(moves)) == len(moves)
    p = s.current
    for m in moves:
        assert is_legal(s, m)
        k = mv.kind(m)
        if k == mv.PLAY:
            assert s.phase == MAIN and s.hands[p] >> mv.arg_a(m) & 1
        elif k == mv.GIVE_BACK:
            assert s.phase in (MAIN, RETURNING) and s.bars[p] >> mv.arg_a(m) & 1
        elif k == mv.DRAW:
            source = mv.arg_a(m)
            assert source == mv.FACE_DOWN or s.face_up[source] >= 0
        elif k == mv.EFFECT:
            assert s.phase == EFFECTS and s.pending >> mv.arg_a(m) & 1
    if s.phase == MAIN and any(mv.kind(m) == mv.DRAW for m in moves):
        # action C only when no card can be played and no bar returned (CL-24)
        assert all(mv.kind(m) == mv.DRAW for m in moves) and not s.bars[p]


def make_agents(n: int, seed: int, kinds: list[bool]) -> list[HeuristicAgent | RandomAgent]:
    return [
        HeuristicAgent() if heuristic else RandomAgent(seed + seat)
        for seat, heuristic in zip(range(n), kinds, strict=False)
    ]


# --- properties -----------------------------------------------------------------------------
@settings(max_examples=400)
@given(seed=seeds, n=players, cat=catalogues, heuristic=st.lists(st.booleans(), min_size=4, max_size=4))
def test_every_state_of_every_game_keeps_the_rules(
    seed: int, n: int, cat: Catalogue, heuristic: list[bool]
) -> None:
    """Moves legal, cards and bars conserved, scores recounted, the end as ruled."""
    rules = rules_of(n, cat)
    game = Game(rules, seed=seed)
    agents = make_agents(n, seed, heuristic)
    s = game.state
    check_state(s)
    while not game.is_over:
        moves = legal_moves(s)
        check_moves(s, moves)
        seat = game.current
        move = agents[seat].act(game.observation(seat))
        assert move in moves
        before = s.copy()
        trial = s.copy()
        apply(trial, move)
        assert s.key() == before.key()  # a copy is independent of its original
        game.play(move)
        assert s.key() == trial.key()  # and replays the same chance
        check_state(s)
    check_state(s)


@settings(max_examples=200)
@given(seed=seeds, n=players, cat=catalogues, heuristic=st.lists(st.booleans(), min_size=4, max_size=4))
def test_a_game_replays_exactly_from_seed_and_moves(
    seed: int, n: int, cat: Catalogue, heuristic: list[bool]
) -> None:
    """CL-33: the same seed and moves give the same states, events and scores."""
    rules = rules_of(n, cat)
    game = play_game(rules, make_agents(n, seed, heuristic), seed)
    again = Game.replay(rules, seed, game.moves)
    assert again.state.key() == game.state.key()
    assert again.log == game.log
    assert again.scores() == game.scores() == recount(game.state)
    assert deal(rules, seed).key() == Game(rules, seed=seed).state.key()


def redeal_hidden(s: State, seat: int, box_seen: int, rng: random.Random) -> State:
    """A copy of s with every card seat cannot see shuffled among the places it cannot
    see (other hands, the third hand, the draw pile, the box unseen), sizes kept."""
    t = s.copy()
    n = s.players
    others = [p for p in range(n + 1) if p != seat]
    unseen_box = s.box & ~(box_seen | s.box_public)
    pool = [c for p in others for c in bits(s.hands[p])] + list(s.pile) + bits(unseen_box)
    rng.shuffle(pool)
    i = 0
    for p in others:
        size = s.hands[p].bit_count()
        t.hands[p] = sum(1 << c for c in pool[i : i + size])
        i += size
    t.pile = pool[i : i + len(s.pile)]
    i += len(s.pile)
    t.box = (s.box & ~unseen_box) | sum(1 << c for c in pool[i:])
    return t


@settings(max_examples=150)
@given(seed=seeds, n=players, cat=catalogues, heuristic=st.lists(st.booleans(), min_size=4, max_size=4))
def test_observations_never_show_hidden_cards(
    seed: int, n: int, cat: Catalogue, heuristic: list[bool]
) -> None:
    """CL-29 to CL-31: a seat's observation does not change when the cards it cannot see
    are dealt otherwise, and its events name only the cards it saw."""
    rules = rules_of(n, cat)
    game = Game(rules, seed=seed)
    agents = make_agents(n, seed, heuristic)
    rng = random.Random(seed)
    step = 0
    while True:
        if step % 3 == 0 or game.is_over:
            for seat in range(n):
                obs = game.observation(seat)
                assert obs.hand == game.state.hands[seat]
                assert obs.unseen() & game.state.hands[seat] == 0
                for p in range(n + 1):
                    if p != seat:
                        assert game.state.hands[p] & ~obs.unseen() == 0
                box_seen = game._box_seen[seat]
                other = redeal_hidden(game.state, seat, box_seen, rng)
                for p in range(n + 1):  # what it knows of a hand is there
                    assert obs.known[p] & ~game.state.hands[p] == 0
                assert obs.known[seat] == 0
                assert observe(rules, other, seat, obs.events, box_seen, obs.known) == obs
                for event in obs.events:
                    _check_event_visibility(game, seat, event)
        if game.is_over:
            break
        seat = game.current
        game.play(agents[seat].act(game.observation(seat)))
        step += 1


def _check_event_visibility(game: Game, seat: int, event: Event) -> None:
    """Face-down draws are seen by the drawer, random discards by their owner, the card
    kept in a swap by the target (CL-15, CL-18, CL-29)."""
    cat = game.rules.catalogue
    k = mv.kind(event.move)
    if k == mv.DRAW and mv.arg_a(event.move) == mv.FACE_DOWN:
        assert (event.taken != HIDDEN) == (event.actor == seat)
    if k == mv.EFFECT and mv.arg_b(event.move) != mv.NONE:
        symbol = cat.bar_effect[mv.arg_a(event.move)]
        target = mv.arg_b(event.move)
        if symbol == Effect.DRAW and target == mv.FACE_DOWN:
            assert (event.taken != HIDDEN) == (event.actor == seat)
        elif symbol == Effect.DISCARD_HAND:
            assert (event.taken != HIDDEN) == (target == seat)
        elif symbol == Effect.SWAP_HANDS and event.taken != -1:
            assert target == seat


@settings(max_examples=150)
@given(seed=seeds, n=players, cat=catalogues)
def test_heuristic_games_keep_the_rules_and_end(
    seed: int, n: int, cat: Catalogue
) -> None:
    """Heuristic-only games (which reach the last-bar end) keep the rules too."""
    game = play_game(rules_of(n, cat), [HeuristicAgent() for _ in range(n)], seed)
    check_state(game.state)
    assert game.state.turn <= MAX_TURNS


def _mutations() -> st.SearchStrategy[object]:
    leaf = st.one_of(
        st.none(), st.booleans(), st.integers(-3, 50), st.text(max_size=6),
        st.sampled_from(["B", "W", "B O P", "blue", "wild", "draw", "swap_hands"]),
    )
    return st.recursive(
        leaf,
        lambda inner: st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6,
    )


@settings(max_examples=200)
@given(
    section=st.sampled_from(["order", "bar", "name", "extra"]),
    index=st.integers(0, 30),
    key=st.sampled_from(["bars", "count", "colour", "value", "effect", "other"]),
    value=_mutations(),
)
def test_a_broken_catalogue_is_always_a_catalogue_error(
    section: str, index: int, key: str, value: object
) -> None:
    """CL-4: whatever a catalogue holds, loading it succeeds or raises CatalogueError with
    one line; never another exception."""
    data = Catalogue.default().to_dict()
    if section in ("order", "bar"):
        tables = data[section]
        tables[index % len(tables)][key] = value
    else:
        data[section] = value
    try:
        Catalogue.from_dict(data)
    except CatalogueError as e:
        assert "\n" not in str(e)
