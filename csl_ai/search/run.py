"""search(): one decision searched on threads, its root statistics turned into a result."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence

from csl_ai import _core
from csl_ai.errors import InvalidPositionError
from csl_ai.game import Observation
from csl_ai.moves import Move, Play
from csl_ai.rules import Kind, Side
from csl_ai.search.config import SearchConfig, SearchLimit, SearchSettingsError
from csl_ai.search.core import move_of
from csl_ai.search.others import infer_worlds, seat_beliefs, with_split_shares
from csl_ai.search.result import MoveStats, SearchResult
from csl_ai.search.setup import prepared_engine
from csl_ai.seeds import fresh_seed, pool_seed, thread_seed
from csl_ai.threads import run_workers, split_budget

_MAX_START_NODES = 1 << 20
"""Largest node pool a thread starts with; past it the pool doubles as needed."""
MAX_TREE_BYTES = 4 << 30
"""Ceiling on the memory of one search's trees, all threads together (each thread gets an
equal share): a search that reaches it stops early with what it has, so a huge iteration
or time budget cannot take the machine's memory."""
MAX_ITERATIONS = 1 << 62
"""Most iterations one search accepts (the C counters are 64-bit)."""
INITIAL_NODES = 1 << 16
"""Node pool per thread under a time limit (it doubles when full)."""


def _share_interval(total: float, squares: float, visits: int) -> tuple[float, float]:
    """The normal 95% interval of a mean win share, clipped to [0, 1] ([0, 1] under 2 visits)."""
    if visits < 2:
        return (0.0, 1.0)
    mean = total / visits
    half = 1.96 * math.sqrt(max(0.0, (squares - total * total / visits) / (visits - 1)) / visits)
    return (max(0.0, mean - half), min(1.0, mean + half))


def _with_own_chance(shares: Sequence[float], seat: int, own: float) -> tuple[float, ...]:
    """shares (one mean win share per seat, summing to 1) with seat's replaced by own and the
    others scaled to fill the rest (equally where they had none)."""
    others = [s for i, s in enumerate(shares) if i != seat]
    rest = sum(others)
    out = []
    for i, s in enumerate(shares):
        if i == seat:
            out.append(own)
        else:
            out.append((1.0 - own) * (s / rest if rest > 0 else 1.0 / len(others)))
    return tuple(out)


def _same_as(engine: _core.SearchEngine, i: int) -> tuple[Move, ...]:
    """The moves candidate i stands for besides itself (equal cards at a card-play root)."""
    return tuple(Play(c) for c in engine.same_as(i))


def _chance_map(obs: Observation, config: SearchConfig, iterations: int) -> Callable[[float], float] | None:
    """The config's win calibration for this search (None where none applies: another
    algorithm, playout or utility, or no map)."""
    calibration = config.fitted.win_calibration
    if calibration is None or config.algorithm != "ismcts" or config.playout != "rules" or config.utility != "win":
        return None
    return calibration.chance_map(obs.players, iterations, len(obs.rounds) - 1, obs.rules.sides[Kind.STAR] is Side.B)


def search(
    obs: Observation,
    limit: SearchLimit,
    config: SearchConfig = SearchConfig(),
    worlds: Sequence[_core.CoreState] | None = None,
    *,
    stop: threading.Event | None = None,
) -> SearchResult:
    """Search the decision of obs's seat; InvalidPositionError if it has none or no world fits.

    worlds: search these determinizations instead of sampled ones (a diagnostic: given the
    true deal it measures what perfect inference over the hidden cards could gain, see
    benchmarks/tune_search.py --oracle); InvalidPositionError if one is not a world of obs.

    The search threads' trees together stay within MAX_TREE_BYTES: a search that reaches
    it stops early and answers from the iterations it made. KeyboardInterrupt (or another
    exception raised by a signal handler) during the search stops every thread and is
    raised again. stop: an event another thread may set to end the search at once; it
    then answers from the iterations made (the first candidate in prior order, unvisited,
    if none was).
    """
    if limit.iterations is not None and limit.iterations > MAX_ITERATIONS:
        raise SearchSettingsError(f"iterations must be at most {MAX_ITERATIONS:,}")
    started = time.perf_counter()
    beliefs = seat_beliefs(obs, config)
    engine = prepared_engine(obs, config, beliefs)
    kind = engine.root_kind
    if engine.n_candidates == 1 and not engine.same_as(0) and not config.search_forced:
        only = move_of(kind, engine.candidate(0))
        return SearchResult(
            seat=obs.seat,
            best_move=only,
            moves=(MoveStats(only, 0, 0.0, (-math.inf, math.inf), 0.0, 0.0, 0),),
            iterations=0,
            worlds_sampled=0,
            elapsed_s=time.perf_counter() - started,
            algorithm=config.algorithm,
            utility=config.utility,
            threads=limit.threads,
            beliefs=beliefs,
            budget=limit.iterations,
        )
    seed = limit.seed if limit.seed is not None else fresh_seed(64)
    pool_cpu = time.thread_time()
    infer_worlds(engine, obs, config, pool_seed(seed), beliefs, limit.iterations)
    pool_cpu = time.thread_time() - pool_cpu
    beliefs = with_split_shares(engine, obs, config, beliefs)
    if worlds is not None:
        try:
            engine.set_worlds(worlds)
        except ValueError as e:
            raise InvalidPositionError(f"worlds for seat {obs.seat}: {e}") from None
    threads = limit.threads
    budgets = split_budget(limit.iterations, threads) if limit.iterations is not None else [0] * threads
    seconds = limit.time_ms / 1000.0 if limit.time_ms is not None else 0.0
    if seconds > 0.0:
        seconds = max(seconds - (time.perf_counter() - started), 0.001)
    share = MAX_TREE_BYTES // threads
    workers = []
    for t in range(threads):
        if limit.iterations is not None and budgets[t] == 0:
            continue
        if config.algorithm == "pimc":
            capacity = 16
        elif limit.iterations is not None:
            capacity = min(2 * budgets[t] + 64, _MAX_START_NODES)
        else:
            capacity = INITIAL_NODES
        workers.append((_core.SearchWorker(engine, thread_seed(seed, t), capacity, share), budgets[t]))
    settled = limit.stop_when_settled and limit.iterations is not None
    if settled and len(workers) > 1:   # the threads settle on their summed answer
        group = _core.SettleGroup([b for _w, b in workers], engine.n_candidates)
        for index, (worker, _budget) in enumerate(workers):
            worker.join_settling(group, index)
    run_workers(workers, seconds, stop, settled)
    totals: dict[int, list[float]] = {}
    seat_totals: dict[int, tuple[float, list[float]]] = {}
    for worker, _budget in workers:
        for i, row in worker.root_stats().items():
            acc = totals.setdefault(i, [0, 0.0, 0.0, 0.0, 0.0])
            for j in range(5):
                acc[j] += row[j]
        for i, (squares, shares) in worker.root_seat_stats().items():
            old_squares, old_shares = seat_totals.get(i, (0.0, [0.0] * len(shares)))
            seat_totals[i] = (old_squares + squares, [a + b for a, b in zip(old_shares, shares, strict=True)])
    scale = config.points_scale if config.utility == "points" else 1.0
    iterations = sum(w.iterations for w, _b in workers)
    chance = _chance_map(obs, config, iterations)
    stats = []
    for i in sorted(totals):
        visits, su, su2, sw, sp = totals[i]
        mean = su / visits
        if visits >= 2:
            var = max(0.0, (su2 - su * su / visits) / (visits - 1))
            half = 1.96 * math.sqrt(var / visits)
            ci = ((mean - half) * scale, (mean + half) * scale)
        else:
            ci = (-math.inf, math.inf)
        move = move_of(kind, engine.candidate(i))
        squares, shares = seat_totals[i]
        raw = sw / visits
        win, win_ci = raw, _share_interval(sw, squares, int(visits))
        seat_chances = tuple(s / visits for s in shares)
        if chance is not None:
            win, win_ci = chance(raw), (chance(win_ci[0]), chance(win_ci[1]))
            seat_chances = _with_own_chance(seat_chances, obs.seat, win)
        stats.append((i, MoveStats(
            move, int(visits), mean * scale, ci, win, sp / visits, int(visits),
            raw_win_probability=raw if chance is not None else None, win_ci95=win_ci,
            seat_win_probabilities=seat_chances, same_as=_same_as(engine, i),
        )))
    if config.algorithm == "pimc":
        stats.sort(key=lambda e: (-e[1].mean_utility, -e[1].visits, e[0]))
    else:
        stats.sort(key=lambda e: (-e[1].visits, -e[1].mean_utility, e[0]))
    ordered = tuple(m for _i, m in stats) or (
        MoveStats(move_of(kind, engine.candidate(0)), 0, 0.0, (-math.inf, math.inf), 0.0, 0.0, 0),
    )
    return SearchResult(
        seat=obs.seat,
        best_move=ordered[0].move,
        moves=ordered,
        iterations=iterations,
        worlds_sampled=sum(w.worlds for w, _b in workers),
        elapsed_s=time.perf_counter() - started,
        algorithm=config.algorithm,
        utility=config.utility,
        threads=threads,
        nodes=sum(w.nodes for w, _b in workers),
        cpu_s=pool_cpu + sum(w.cpu_s for w, _b in workers),
        beliefs=beliefs,
        budget=limit.iterations,
        settled=any(w.settled for w, _b in workers),
    )
