"""Agents: legal moves only, determinism by seed, heuristic sanity, specs and play_game."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import pytest
from gamegen import Checked

from csl_ai.agents import (
    AGENT_KINDS,
    LEVEL_SCALE,
    LEVELS,
    Agent,
    AgentSpecError,
    HeuristicAgent,
    HeuristicParams,
    IsmctsAgent,
    PimcAgent,
    RandomAgent,
    level_iterations,
    level_limit,
    level_range_text,
    make_agent,
    play_game,
)
from csl_ai.cli.app import Level
from csl_ai.errors import CslError, IllegalMoveError
from csl_ai.game import Game, Observation
from csl_ai.moves import Allocate, Declare, Move, Play
from csl_ai.notation import card_colour, parse_card, parse_cards, parse_piles
from csl_ai.outsiders import OUTSIDER_SPECS
from csl_ai.rules import PLAYER_SPECS, RulesConfig
from csl_ai.search import SearchLimit
from csl_ai.seeds import decision_seed

PLAYER_COUNTS = tuple(sorted(PLAYER_SPECS))
ALWAYS_DECLARE = dataclasses.replace(HeuristicParams(), weather_margin=-1e9)


def game_moves(rules: RulesConfig, agents: Sequence[Agent], seed: int) -> list[tuple[int, Move]]:
    """Every (seat, move) of a game played by agents, in order."""
    moves: list[tuple[int, Move]] = []
    play_game(rules, agents, seed, on_move=lambda _g, seat, move: moves.append((seat, move)))
    return moves


def trick_best(plays: Sequence[int]) -> int | None:
    """The winning card of a partial trick (independent of the agents' own helper)."""
    if not plays:
        return None
    blues = [c for c in plays if card_colour(c) == 0]
    if blues:
        return max(blues)
    return max(c for c in plays if card_colour(c) == card_colour(plays[0]))


def would_win(card: int, plays: Sequence[int]) -> bool:
    """Whether card, added to a partial trick, would be winning it."""
    return trick_best([*plays, card]) == card


# --- legality ------------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_random_agents_play_only_legal_moves(players: int) -> None:
    rules = RulesConfig(players=players)
    for game_seed in range(6):
        agents = [Checked(RandomAgent(game_seed * 10 + s)) for s in range(players)]
        game = play_game(rules, agents, game_seed)
        assert game.is_over
        assert (
            sum(len(a.moves) for a in agents)
            == (2 + rules.spec.hand_size) * players * rules.spec.rounds
        )


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_heuristic_agents_play_only_legal_moves(players: int) -> None:
    rules = RulesConfig(players=players)
    for game_seed in range(8):
        params = ALWAYS_DECLARE if game_seed % 2 else HeuristicParams()
        agents = [
            Checked(HeuristicAgent(game_seed + s, params if s == 0 else HeuristicParams()))
            for s in range(players)
        ]
        assert play_game(rules, agents, 100 + game_seed).is_over


@pytest.mark.parametrize("sides", ["candy=B,spider=B,leopard=B,star=B", "star=B", "leopard=B"])
def test_heuristic_is_legal_under_other_sides(sides: str) -> None:
    from csl_ai.rules import parse_sides

    for players in PLAYER_COUNTS:
        rules = RulesConfig(players=players, sides=parse_sides(sides))
        agents = [Checked(HeuristicAgent(s)) for s in range(players)]
        assert play_game(rules, agents, 7).is_over


def test_random_allocation_is_uniform_over_legal_allocations() -> None:
    """3 players: 20 allocations; the shuffle-and-cut draw must hit each about equally."""
    game = Game(RulesConfig(players=3), seed=3)
    obs = game.observation(0)
    legal = obs.legal_moves()
    assert len(legal) == 20
    agent = RandomAgent(5)
    draws = 4000
    counts = {move: 0 for move in legal}
    for _ in range(draws):
        counts[agent.act(obs)] += 1
    expected = draws / len(legal)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < 43.8  # chi-square, 19 degrees of freedom, p = 0.001


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_heuristic_allocation_is_its_best_valued_split(players: int) -> None:
    """allocation_values (the search's allocation order) rates every legal split, and the
    agent's own allocation is the best rated."""
    for seed in range(3):
        obs = Game(RulesConfig(players=players), seed=seed).observation(seed % players)
        agent = HeuristicAgent(seed=seed)
        values = agent.allocation_values(obs)
        assert set(values) == {m.piles for m in obs.legal_moves()}
        move = agent.act(obs)
        assert isinstance(move, Allocate)
        assert values[move.piles] == pytest.approx(max(values.values()), abs=1e-5)
    game = Game(RulesConfig(players=players), seed=0)
    game.apply(HeuristicAgent(seed=0).act(game.observation(0)), 0)
    with pytest.raises(CslError):
        HeuristicAgent().allocation_values(game.observation(0))


def test_agents_refuse_when_not_their_decision() -> None:
    game = Game(RulesConfig(players=4), seed=1)
    game.apply(RandomAgent(0).act(game.observation(0)), 0)
    for agent in (RandomAgent(0), HeuristicAgent(0)):
        with pytest.raises(CslError, match="seat 0 is not to decide in the allocate phase"):
            agent.act(game.observation(0))
    for seat in range(1, 4):
        game.apply(RandomAgent(seat).act(game.observation(seat)), seat)
    for seat in range(4):
        game.apply(Declare(False), seat)
    waiting = (game.to_move + 1) % 4
    obs = game.observation(waiting)
    for agent in (RandomAgent(0), HeuristicAgent(0)):
        with pytest.raises(CslError, match=f"seat {waiting} is not to decide"):
            agent.act(obs)


# --- determinism ---------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_same_seeds_same_game(players: int) -> None:
    rules = RulesConfig(players=players)

    def agents(base: int) -> list[Agent]:
        return [
            RandomAgent(base + s) if s % 2 else HeuristicAgent(base + s) for s in range(players)
        ]

    first = game_moves(rules, agents(10), 42)
    assert game_moves(rules, agents(10), 42) == first
    assert game_moves(rules, agents(11), 42) != first


def test_decision_seeds_differ_per_decision_and_repeat() -> None:
    rules = RulesConfig(players=4)
    seeds: dict[int, list[int]] = {s: [] for s in range(4)}

    class Recorder:
        name = "recorder"

        def __init__(self, inner: Agent) -> None:
            self.inner = inner

        def act(self, obs: Observation) -> Move:
            seeds[obs.seat].append(decision_seed(99, obs))
            assert decision_seed(99, obs) == seeds[obs.seat][-1]
            assert decision_seed(100, obs) != seeds[obs.seat][-1]
            return self.inner.act(obs)

    play_game(rules, [Recorder(RandomAgent(s)) for s in range(4)], 5)
    all_seeds = [x for row in seeds.values() for x in row]
    assert len(all_seeds) == 4 * 4 * 11
    assert len(set(all_seeds)) == len(all_seeds)
    assert all(0 <= x < 2**63 for x in all_seeds)


# --- heuristic sanity ------------------------------------------------------------------------

# A 4-player deal, piles given per seat; seat 0 leads trick 0 with R5.
PILES = (
    "R5 G2 G3 | R1 G4 G5 | B1 B2 G6",
    "R3 R9 G1 | R2 G7 G8 | B3 B4 G9",
    "R4 R6 G10 | R7 G11 G12 | B5 B6 B7",
    "R8 R10 R11 | R12 B8 B9 | B10 B11 B12",
)


def crafted_game(declarations: Sequence[bool], sky_order: Sequence[int] | None = None) -> Game:
    """The PILES deal, allocated and declared, seat 0 having led R5."""
    piles = [parse_piles(text) for text in PILES]
    game = Game(
        RulesConfig(players=4),
        seed=0,
        auto_deal=False,
        sky_order=list(range(36)) if sky_order is None else list(sky_order),
    )
    game.deal([p[0] | p[1] | p[2] for p in piles])
    for seat in range(4):
        game.apply(Allocate(piles[seat]), seat)
    for seat in range(4):
        game.apply(Declare(declarations[seat]), seat)
    game.apply(Play(parse_card("R5")), 0)
    return game


def test_declarer_with_a_choice_plays_a_losing_card() -> None:
    """Seat 1 must follow red with R3 or R9; the line's first sky card is a candy."""
    obs = crafted_game([False, True, False, False]).observation(1)
    assert {m for m in obs.legal_moves()} == {Play(parse_card("R3")), Play(parse_card("R9"))}
    assert HeuristicAgent(0).act(obs) == Play(parse_card("R3"))


def test_non_declarer_fights_for_a_candy() -> None:
    obs = crafted_game([False, False, False, False]).observation(1)
    assert HeuristicAgent(0).act(obs) == Play(parse_card("R9"))


def test_last_seat_wins_a_candy_with_its_cheapest_winner() -> None:
    """Seat 3, last in the trick (R5 R9 R6 so far), holds R8 R10 R11: R10 is the cheapest win."""
    game = crafted_game([False, False, False, False])
    game.apply(Play(parse_card("R9")), 1)
    game.apply(Play(parse_card("R6")), 2)
    assert HeuristicAgent(0).act(game.observation(3)) == Play(parse_card("R10"))


def test_last_seat_sheds_its_highest_card_on_an_unwanted_trick() -> None:
    """Seat 3 declared: it cannot lose the trick with any red, so it sheds the highest (R11)."""
    game = crafted_game([False, False, False, True])
    game.apply(Play(parse_card("R3")), 1)
    game.apply(Play(parse_card("R4")), 2)
    assert HeuristicAgent(0).act(game.observation(3)) == Play(parse_card("R11"))


@pytest.mark.parametrize("order", ["candy first", "stars first", "spiders first"])
def test_weak_hand_declares_good_weather_and_strong_hand_does_not(order: str) -> None:
    sky_order = {
        "candy first": list(range(36)),
        "stars first": list(range(35, -1, -1)),
        "spiders first": list(range(11, 36)) + list(range(11)),
    }[order]
    weak = parse_cards("R1 R2 R3 R4 R5 G1 G2 G3 G4")
    rest = [c for c in range(36) if not (weak >> c) & 1]
    strong = parse_cards("B8 B9 B10 B11 B12 R11 R12 G11 G12")
    others = [c for c in rest if not (strong >> c) & 1]
    hands = [weak, strong, sum(1 << c for c in others[:9]), sum(1 << c for c in others[9:])]
    game = Game(RulesConfig(players=4), seed=0, auto_deal=False, sky_order=sky_order)
    game.deal(hands)
    agents = [HeuristicAgent(s) for s in range(4)]
    for seat in range(4):
        game.apply(agents[seat].act(game.observation(seat)), seat)
    assert agents[0].act(game.observation(0)) == Declare(True)
    assert agents[1].act(game.observation(1)) == Declare(False)


class TrickWatcher:
    """A heuristic whose every card play is checked against a rule about the trick."""

    def __init__(self, agent: HeuristicAgent) -> None:
        self.agent = agent
        self.name = agent.name
        self.checked = 0

    def act(self, obs: Observation) -> Move:
        move = self.agent.act(obs)
        if isinstance(move, Play):
            self.check(obs, move)
        return move

    def check(self, obs: Observation, move: Play) -> None:
        raise NotImplementedError


class DeclarerWatcher(TrickWatcher):
    """While its good-weather bet stands, a declarer never takes a trick it could lose."""

    def check(self, obs: Observation, move: Play) -> None:
        current = obs.current
        if current.declarations[obs.seat] is not True:
            return
        if any(t.winner == obs.seat for t in current.tricks):
            return
        trick = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None
        plays = [c for _, c in trick.plays] if trick else []
        if not plays:
            return
        legal = [m.card for m in obs.legal_moves() if isinstance(m, Play)]
        if any(not would_win(c, plays) for c in legal):
            self.checked += 1
            assert not would_win(move.card, plays), f"declarer took a trick it could lose: {move}"


class CandyWatcher(TrickWatcher):
    """Last to play on a candy, not declared, able to win: it wins with its cheapest winner."""

    def check(self, obs: Observation, move: Play) -> None:
        current = obs.current
        trick = current.tricks[-1] if current.tricks and not current.tricks[-1].complete else None
        if trick is None or len(trick.plays) != obs.players - 1 or current.declarations[obs.seat]:
            return
        sky = obs.rules.game_deck.cards[current.line[trick.index]]
        if sky.kind.text != "candy":
            return
        plays = [c for _, c in trick.plays]
        winners = [
            m.card for m in obs.legal_moves() if isinstance(m, Play) and would_win(m.card, plays)
        ]
        if winners:
            self.checked += 1
            cheapest = min(winners, key=lambda c: (card_colour(c) == 0, c % 12))
            assert move.card == cheapest, f"won a candy with {move}, cheaper winner available"


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_declarers_play_to_lose_and_cheap_wins(players: int) -> None:
    rules = RulesConfig(players=players)
    declarer_checks = candy_checks = 0
    for game_seed in range(12):
        declarer = DeclarerWatcher(HeuristicAgent(game_seed, ALWAYS_DECLARE))
        candy = [CandyWatcher(HeuristicAgent(game_seed * 7 + s)) for s in range(1, players)]
        play_game(rules, [declarer, *candy], game_seed)
        declarer_checks += declarer.checked
        candy_checks += sum(w.checked for w in candy)
    assert declarer_checks >= 5
    assert candy_checks >= 5


def test_heuristic_beats_random_clearly() -> None:
    """One heuristic and three random bots, seats rotated over the same 25 deals.

    A fair share is 25%; the heuristic wins about 76% (400 games of the benchmark). The
    bar of 50% is six standard errors (of 100 games) below that and six above fair.
    """
    rules = RulesConfig(players=4)
    share = 0.0
    games = 0
    for deal in range(25):
        for seat in range(4):
            agents: list[Agent] = [RandomAgent(deal * 10 + s) for s in range(4)]
            agents[seat] = HeuristicAgent(deal)
            share += play_game(rules, agents, 1000 + deal).result().win_share(seat)
            games += 1
    assert games == 100
    assert share / games > 0.5


# --- specs -----------------------------------------------------------------------------------


def test_agents_satisfy_the_protocol() -> None:
    assert isinstance(RandomAgent(0), Agent)
    assert isinstance(HeuristicAgent(0), Agent)
    assert isinstance(PimcAgent(100, 0), Agent)
    assert AGENT_KINDS == ("random", "heuristic", "pimc", "ismcts", "style")
    assert dict(LEVELS) == {"fast": 1_000, "normal": 10_000, "strong": 50_000}


@pytest.mark.parametrize(
    ("spec", "cls", "name"),
    [
        ("random", RandomAgent, "random"),
        (" Heuristic ", HeuristicAgent, "heuristic"),
        ("pimc", PimcAgent, "pimc:iters=10000"),
        ("pimc:iters=500", PimcAgent, "pimc:iters=500"),
        ("pimc:ms=20", PimcAgent, "pimc:ms=20"),
        ("pimc:iters=300,threads=2", PimcAgent, "pimc:iters=300,threads=2"),
    ],
)
def test_make_agent_fast_specs(spec: str, cls: type, name: str) -> None:
    agent = make_agent(spec, seed=3)
    assert type(agent) is cls
    assert agent.name == name
    assert type(make_agent(agent.name)) is cls


def test_pimc_spec_limits() -> None:
    agent = make_agent("pimc:iters=300,ms=50.5,threads=2", seed=4)
    assert isinstance(agent, PimcAgent)
    limit = agent.limit
    assert (limit.iterations, limit.time_ms, limit.threads, limit.seed) == (300, 50.5, 2, 4)
    assert agent.name == "pimc:iters=300,ms=50.5,threads=2"


@pytest.mark.parametrize(
    ("spec", "iterations", "time_ms", "threads", "name"),
    [
        ("ismcts", 10_000, None, 1, "ismcts:normal"),
        ("ismcts:fast", 1_000, None, 1, "ismcts:fast"),
        ("ismcts:strong", 50_000, None, 1, "ismcts:strong"),
        ("ISMCTS:Normal,threads=2", 10_000, None, 2, "ismcts:normal,threads=2"),
        ("ismcts:iters=5000,threads=2", 5_000, None, 2, "ismcts:iters=5000,threads=2"),
        ("ismcts:ms=250", None, 250, 1, "ismcts:ms=250"),
        ("ismcts:iters=800, ms=100", 800, 100, 1, "ismcts:iters=800,ms=100"),
    ],
)
def test_make_agent_ismcts_specs(
    spec: str, iterations: int | None, time_ms: float | None, threads: int, name: str
) -> None:
    agent = make_agent(spec, seed=9)
    assert isinstance(agent, IsmctsAgent)
    assert agent.limit.iterations == iterations
    assert agent.limit.time_ms == time_ms
    assert agent.limit.threads == threads
    assert agent.limit.seed == 9
    assert agent.name == name
    again = make_agent(agent.name, seed=9)
    assert isinstance(again, IsmctsAgent) and again.limit == agent.limit


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("foo", "unknown agent 'foo' (expected random, heuristic, pimc, ismcts, style), a zoo bot"),
        ("", "unknown agent '' (expected random, heuristic, pimc, ismcts, style)"),
        ("outsider:nobody", "unknown outsider 'outsider:nobody' (expected outsider:counter, outsider:hunter)"),
        ("outsider", "unknown outsider 'outsider'"),
        (
            "ismcts:iters=x",
            "bad option 'iters=x' in 'ismcts:iters=x': iters must be a positive integer",
        ),
        (
            "ismcts:iters=0",
            "bad option 'iters=0' in 'ismcts:iters=0': iters must be a positive integer",
        ),
        ("ismcts:iters=-5", "bad option 'iters=-5' in 'ismcts:iters=-5'"),
        ("ismcts:ms=0", "bad option 'ms=0' in 'ismcts:ms=0': ms must be a positive number"),
        ("ismcts:ms=nan", "bad option 'ms=nan' in 'ismcts:ms=nan'"),
        ("ismcts:threads=two", "bad option 'threads=two' in 'ismcts:threads=two'"),
        ("ismcts:turbo", "bad option 'turbo' in 'ismcts:turbo': expected fast, normal, strong"),
        ("ismcts:", "bad option '' in 'ismcts:'"),
        ("ismcts:fast,strong", "bad option 'strong' in 'ismcts:fast,strong': give one level"),
        ("ismcts:fast,iters=10", "bad option 'iters=10' in 'ismcts:fast,iters=10': give one level"),
        ("ismcts:iters=10,fast", "bad option 'fast' in 'ismcts:iters=10,fast': give one level"),
        ("ismcts:iters=10,iters=20", "iters given twice"),
        ("pimc:fast", "bad option 'fast' in 'pimc:fast': expected iters=N, ms=N or threads=N"),
        ("pimc:depth=3", "bad option 'depth=3' in 'pimc:depth=3'"),
        ("random:iters=5", "bad option 'iters=5' in 'random:iters=5': random takes no options"),
        ("heuristic:x", "bad option 'x' in 'heuristic:x': heuristic takes no options"),
    ],
)
def test_make_agent_errors(spec: str, message: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, CslError)


@pytest.mark.parametrize("spec", OUTSIDER_SPECS)
def test_make_agent_builds_each_outsider(spec: str) -> None:
    agent = make_agent(f" {spec.upper()} ", seed=5)
    assert agent.name == spec
    game = play_game(RulesConfig(players=3), [agent, make_agent(spec, seed=6), RandomAgent(7)], 11)
    assert game.is_over


def test_make_agent_rejects_non_text() -> None:
    with pytest.raises(AgentSpecError, match="agent spec must be text"):
        make_agent(7)  # type: ignore[arg-type]


def test_make_agent_reports_limits_the_search_refuses() -> None:
    with pytest.raises(AgentSpecError, match="bad agent spec 'ismcts:threads=1000'"):
        make_agent("ismcts:threads=1000")


def test_search_agent_limits_are_checked() -> None:
    with pytest.raises(CslError, match="needs iterations or time_ms"):
        PimcAgent(None)
    with pytest.raises(CslError, match="iterations must be a positive integer"):
        PimcAgent(0)
    with pytest.raises(CslError, match="time_ms must be a positive number"):
        PimcAgent(None, time_ms=math.inf)
    with pytest.raises(CslError, match="threads must be an integer"):
        PimcAgent(10, threads=0)
    with pytest.raises(CslError, match=r"seed must be an integer 0\.\.2\*\*64-1"):
        PimcAgent(10, seed=-1)
    with pytest.raises(CslError, match=r"seed must be an integer 0\.\.2\*\*64-1"):
        PimcAgent(10, seed=2**64)
    with pytest.raises(AgentSpecError, match="unknown level 'turbo'"):
        IsmctsAgent.at_level("turbo")
    with pytest.raises(AgentSpecError, match="no level budget for 6 players"):
        level_iterations("normal", 6)


def test_a_level_holds_its_time_so_its_iterations_follow_the_player_count() -> None:
    assert [level_iterations("normal", n) for n in (2, 3, 4, 5)] == [40_000, 36_000, 44_000, 31_000]
    assert [level_iterations("fast", n) for n in (2, 3, 4, 5)] == [4_000, 3_600, 4_400, 3_100]
    assert level_limit("strong", 4, seed=3).iterations == 220_000
    assert level_range_text("normal") == "31,000-44,000"
    scales = f"{min(LEVEL_SCALE.values()):g} to {max(LEVEL_SCALE.values()):g} times as many iterations"
    assert scales in " ".join(str(getattr(Level.__metadata__[0], "help", "")).split())
    agent = IsmctsAgent.at_level("fast", seed=1)
    assert agent.level == "fast" and agent.limit.iterations == LEVELS["fast"]
    for players in (2, 4):
        game = Game(RulesConfig(players=players), seed=5)
        agent.act(game.observation(0))
        assert agent.last_result is not None
        # a level stops once its answer is settled (tests/test_settled.py), never past its budget
        assert 0 < agent.last_result.iterations <= level_iterations("fast", players)
    explicit = IsmctsAgent(SearchLimit(iterations=700, seed=1))
    assert explicit.level is None and explicit.limit_for(4).iterations == 700


# --- play_game -------------------------------------------------------------------------------


def test_play_game_needs_one_agent_per_seat() -> None:
    with pytest.raises(CslError, match="a 4-player game needs 4 agents, got 3"):
        play_game(RulesConfig(players=4), [RandomAgent(s) for s in range(3)], 1)


def test_play_game_names_an_agent_that_moves_illegally() -> None:
    class Stubborn:
        name = "stubborn"

        def act(self, obs: Observation) -> Move:
            return Declare(True)

    agents: list[Agent] = [RandomAgent(0), Stubborn(), RandomAgent(2)]
    with pytest.raises(IllegalMoveError) as info:
        play_game(RulesConfig(players=3), agents, 1)
    text = str(info.value)
    assert "agent 'stubborn' at seat 1" in text
    assert "illegal move yes" in text
    assert "cannot declare now" in text


def test_play_game_returns_a_finished_game_with_the_seeded_deal() -> None:
    rules = RulesConfig(players=2)
    game = play_game(rules, [RandomAgent(1), HeuristicAgent(2)], 77)
    assert game.is_over and game.seed == 77
    fresh = Game(rules, seed=77)
    assert game.rounds[0].hands == fresh.rounds[0].hands
    assert game.rounds[0].line == fresh.rounds[0].line
    assert len(game.rounds) == rules.spec.rounds


# --- search agents ---------------------------------------------------------------------------


@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_search_agents_play_legal_games(players: int) -> None:
    rules = RulesConfig(players=players)
    agents: list[Checked] = [
        Checked(make_agent("ismcts:iters=40", seed=1)),
        Checked(make_agent("pimc:iters=40", seed=2)),
    ] + [Checked(HeuristicAgent(s)) for s in range(2, players)]
    assert play_game(rules, agents, 300 + players).is_over
    ismcts = agents[0].agent
    assert isinstance(ismcts, IsmctsAgent) and ismcts.last_result is not None


def test_seeded_search_agents_replay_the_same_game() -> None:
    rules = RulesConfig(players=4)

    def agents(seed: int) -> list[Agent]:
        return [
            make_agent("ismcts:iters=60", seed=seed),
            make_agent("pimc:iters=60", seed=seed + 1),
            HeuristicAgent(seed),
            make_agent("ismcts:iters=60", seed=seed + 2),
        ]

    first = game_moves(rules, agents(5), 12)
    assert game_moves(rules, agents(5), 12) == first
    assert game_moves(rules, agents(6), 12) != first


def test_ismcts_agent_uses_its_config_and_a_seed_per_decision() -> None:
    from csl_ai.search import SearchConfig, SearchLimit

    agent = IsmctsAgent(SearchLimit(iterations=50, seed=8), SearchConfig(utility="points"))
    assert agent.name == "ismcts:iters=50"
    game = Game(RulesConfig(players=3), seed=4)
    obs = game.observation(0)
    move = agent.act(obs)
    assert move in obs.legal_moves()
    result = agent.last_result
    assert result is not None and result.utility == "points" and result.iterations == 50
    assert agent.act(obs) == move
