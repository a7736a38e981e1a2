"""Candy Lab's determinized ISMCTS (csl_ai.candylab.search) and its worlds and players.

The worlds a search samples must be consistent with the deciding seat's observation (the
observation of a sampled world is the observation itself); the search must only ever
answer a legal move, find a move that wins at once, and repeat itself for a seed.
"""

from __future__ import annotations

import pytest

from csl_ai.candylab import CandyLabRules, Catalogue, Game, custom_state
from csl_ai.candylab import moves as mv
from csl_ai.candylab.agents import HeuristicAgent, RandomAgent
from csl_ai.candylab.catalogue import catalogue_from_arg
from csl_ai.candylab.game import observe
from csl_ai.candylab.players import (
    LEVELS,
    AgentSpecError,
    SearchAgent,
    make_agent,
    parse_spec,
)
from csl_ai.candylab.search import (
    MAX_ITERATIONS,
    CandyLabSearchError,
    SearchConfig,
    SearchLimit,
    search,
)
from csl_ai.candylab.worlds import move_key, sample_worlds
from csl_ai.limits import SearchSettingsError

CAT = Catalogue.default()


def positions(n: int, seed: int, every: int = 5, cat: Catalogue = CAT):
    """Observations of the seat to move along a game between a heuristic and random
    players (every few decisions), with the game."""
    game = Game(CandyLabRules(players=n, catalogue=cat), seed=seed)
    agents = [HeuristicAgent() if p % 2 else RandomAgent(seed + p) for p in range(n)]
    step = 0
    while not game.is_over:
        obs = game.observation(game.current)
        if step % every == 0:
            yield game, obs
        game.play(agents[game.current].act(obs))
        step += 1


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("cat", [CAT, catalogue_from_arg("wild")], ids=["default", "wild"])
def test_sampled_worlds_are_consistent_with_the_observation(n: int, cat: Catalogue) -> None:
    """A world keeps the seat's hand, the table, every size and what the seat knows of
    each hand: the seat would see in it exactly what it sees."""
    checked = 0
    for seed in range(4):
        for game, _ in positions(n, seed, every=2, cat=cat):
            for seat in range(n):
                obs = game.observation(seat)
                world = sample_worlds(obs, 1, seed * 10 + seat)[0]
                again = observe(
                    game.rules, world, seat, obs.events, game._box_seen[seat], obs.known
                )
                assert again == obs
                for p in range(n + 1):
                    assert obs.known[p] & ~world.hands[p] == 0
                checked += 1
    assert checked > 50


def test_worlds_keep_a_face_up_card_another_seat_drew() -> None:
    """A card seen drawn face up stays in the drawer's hand in every world."""
    rules = CandyLabRules(players=2)
    for seed in range(40):
        game = Game(rules, seed=seed)
        agents = [HeuristicAgent(), HeuristicAgent()]
        while not game.is_over:
            seat = game.current
            move = agents[seat].act(game.observation(seat))
            face_up = mv.kind(move) == mv.DRAW and mv.arg_a(move) < 3
            card = game.state.face_up[mv.arg_a(move)] if face_up else -1
            game.play(move)
            if face_up and not game.is_over:
                obs = game.observation(1 - seat)
                assert obs.known[seat] >> card & 1
                for world in sample_worlds(obs, 20, seed):
                    assert world.hands[seat] >> card & 1
                return
    pytest.fail("no face-up draw in 40 games")


@pytest.mark.parametrize("playout", ["random", "heuristic"])
def test_search_never_answers_an_illegal_move(playout: str) -> None:
    """Over positions of 2, 3 and 4 players along random and heuristic games, the answer
    and every root move are legal for the seat to move."""
    config = SearchConfig(playout=playout)
    searched = 0
    for n in (2, 3, 4):
        for seed in range(3):
            for game, obs in positions(n, 100 + seed, every=7):
                result = search(obs, SearchLimit(iterations=12, seed=seed), config)
                legal = set(game.legal_moves())
                assert result.best_move in legal
                assert {m.move for m in result.moves} <= legal
                assert sum(m.visits for m in result.moves) == result.iterations
                searched += 1
    assert searched > 30


def _forced_win_state():
    """2 players, seat 0 to move: one blue bar left on the belt, seat 0 holds a blue order.
    Playing it ends the game (the last bar: Golden Sugar) with seat 0 ahead; seat 0 now
    trails, and seat 1 holds a blue order too."""
    rules = CandyLabRules(players=2)
    cat = rules.catalogue
    orders = {
        text: [i for i, o in enumerate(cat.orders) if o.text == text]
        for text in ("B", "O", "P", "OO")
    }
    last = next(i for i, b in enumerate(cat.bars) if b.text == "B3:none")
    rest = [i for i in range(len(cat.bars)) if i != last]
    mine: list[int] = []
    points = 0
    for b in rest:
        if points + cat.bar_value[b] <= 18:
            mine.append(b)
            points += cat.bar_value[b]
    theirs = [b for b in rest if b not in mine]
    hand0 = [orders["B"][0], orders["OO"][0]]
    hand1 = [orders["B"][1], orders["O"][0], orders["P"][0]]
    used = set(hand0) | set(hand1)
    free = [i for i in range(len(cat.orders)) if i not in used]
    state = custom_state(
        rules,
        belt=[last],
        hands=[hand0, hand1],
        bars=[mine, theirs],
        face_up=free[:3],
        pile=free[3:],
        current=0,
        seed=5,
    )
    return rules, state, mv.play(orders["B"][0], 0)


def test_search_finds_the_move_that_wins_at_once() -> None:
    rules, state, winning = _forced_win_state()
    game = Game(rules, state=state)
    assert game.scores()[0] < game.scores()[1]
    obs = game.observation(0)
    assert winning in obs.legal_moves and len(obs.legal_moves) > 3
    for playout in ("random", "heuristic"):
        result = search(obs, SearchLimit(iterations=200, seed=3), SearchConfig(playout=playout))
        assert result.best_move == winning
        best = result.moves[0]
        assert best.move == winning and best.mean_return == 1.0 and best.win_chance == 1.0
    game.play(winning)
    assert game.is_over and game.winners() == [0]


def test_search_repeats_for_a_seed() -> None:
    game, obs = next(iter(positions(3, 11, every=9)))
    while len(obs.legal_moves) < 2:
        game.play(obs.legal_moves[0])
        obs = game.observation(game.current)
    limit = SearchLimit(iterations=150, seed=42)
    first = search(obs, limit)
    again = search(obs, limit)
    assert first.moves == again.moves and first.best_move == again.best_move
    assert first.iterations == again.iterations == 150
    assert first.nodes == again.nodes


def test_threads_share_the_budget_and_repeat_for_a_seed() -> None:
    """Root-parallel threads: the iterations are shared among the trees, the root visits
    add up to them, every root move is legal, and a seed repeats the answer."""
    game, obs = next(iter(positions(4, 3, every=7)))
    while len(obs.legal_moves) < 2:
        game.play(obs.legal_moves[0])
        obs = game.observation(game.current)
    limit = SearchLimit(iterations=301, seed=9, threads=3)
    first = search(obs, limit)
    assert first.iterations == 301 and sum(m.visits for m in first.moves) == 301
    assert {m.move for m in first.moves} <= set(obs.legal_moves)
    assert len({move_key(game.rules.catalogue, m.move) for m in first.moves}) == len(first.moves)
    again = search(obs, limit)
    assert again.moves == first.moves
    timed = search(obs, SearchLimit(time_ms=60, seed=1, threads=2))
    assert timed.iterations >= 2 and timed.elapsed_s < 2.0
    with pytest.raises(SearchSettingsError, match="threads"):
        SearchLimit(iterations=5, threads=0)


def test_time_limit_stops_the_search() -> None:
    _, obs = next(iter(positions(2, 4)))
    result = search(obs, SearchLimit(time_ms=50, seed=1))
    assert result.iterations >= 1 and result.elapsed_s < 2.0


def test_one_legal_move_is_answered_without_searching() -> None:
    for game, obs in positions(2, 8, every=1):
        if len(obs.legal_moves) == 1:
            result = search(obs, SearchLimit(iterations=100, seed=1))
            assert result.best_move == obs.legal_moves[0] and result.iterations == 0
            return
    pytest.fail("no forced decision in the game")


def test_a_seat_not_to_move_cannot_search() -> None:
    game = Game(CandyLabRules(players=2), seed=1)
    with pytest.raises(CandyLabSearchError, match="no decision"):
        search(game.observation(1), SearchLimit(iterations=10, seed=1))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({}, "iterations or time_ms"),
        ({"iterations": 0}, "iterations"),
        ({"iterations": True}, "iterations"),
        ({"time_ms": -1}, "time_ms"),
        ({"iterations": 5, "seed": -1}, "seed"),
    ],
)
def test_search_limits_are_checked(kwargs: dict, message: str) -> None:
    with pytest.raises(SearchSettingsError, match=message):
        SearchLimit(**kwargs)


def test_a_budget_past_the_counters_is_refused() -> None:
    _, obs = next(iter(positions(2, 4)))
    with pytest.raises(CandyLabSearchError, match="at most"):
        search(obs, SearchLimit(iterations=MAX_ITERATIONS + 1, seed=1))


def test_play_keys_name_a_combination_not_an_id() -> None:
    """Two cards of one combination in a hidden hand make one tree node."""
    rules, state, winning = _forced_win_state()
    cat = rules.catalogue
    blues = [i for i, o in enumerate(cat.orders) if o.text == "B"]
    assert move_key(state.cat, mv.play(blues[0], 0)) == move_key(state.cat, mv.play(blues[1], 0))
    assert move_key(state.cat, mv.draw(0)) == mv.draw(0)


# --- players by spec ------------------------------------------------------------------
def test_agent_specs() -> None:
    assert parse_spec("random") == ("random", None)
    assert parse_spec("heuristic") == ("heuristic", None)
    kind, budget = parse_spec("ismcts:iters=50")
    assert kind == "ismcts" and budget and budget.iterations == 50 and budget.time_ms is None
    _, budget = parse_spec("ismcts:ms=20,playout=random")
    assert budget and budget.time_ms == 20 and budget.iterations is None
    assert budget.playout == "random"
    _, budget = parse_spec("ismcts:strong,threads=4")
    assert budget and budget.threads == 4 and budget.iterations == LEVELS["strong"]
    _, budget = parse_spec("ismcts:fast")
    assert budget and budget.iterations == LEVELS["fast"]
    _, budget = parse_spec("ismcts")
    assert budget and budget.iterations == LEVELS["normal"]
    for bad, message in [
        ("minimax", "unknown agent"),
        ("ismcts:iters=0", "iters"),
        ("ismcts:iters=x", "iters"),
        ("ismcts:turbo", "unknown level"),
        ("ismcts:fast,iters=5", "not both"),
        ("ismcts:depth=3", "unknown option"),
        ("ismcts:threads=0", "threads"),
        ("ismcts:threads=999", "threads"),
        ("random:x", "no options"),
        ("ismcts:playout=smart", "playout"),
    ]:
        with pytest.raises(AgentSpecError, match=message):
            parse_spec(bad)


def test_seeded_search_agents_replay_a_game() -> None:
    rules = CandyLabRules(players=2)

    def play() -> list[int]:
        agents = [make_agent("ismcts:iters=8", seed=1), make_agent("random", seed=2)]
        game = Game(rules, seed=9)
        while not game.is_over:
            game.play(agents[game.current].act(game.observation(game.current)))
        return game.moves

    assert play() == play()
    agent = make_agent("ismcts:iters=8", seed=1)
    assert isinstance(agent, SearchAgent) and agent.name == "ismcts:iters=8"
