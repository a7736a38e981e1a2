"""`csl serve` under load: concurrent scripted games through a real uvicorn server.

The server runs in its own process on a free port of 127.0.0.1 (records in a temporary
folder); each game is played by its own client thread over HTTP (httpx): a human seat
that answers at once (the first pile split, no good weather, the first legal card)
against AI seats at ``ismcts:fast``, stepping the AI one decision at a time as the page
does. Prints decisions per second, the p50/p95 latency of the reply to a human move and
to an AI step (the step includes the AI's search and any wait for a free search slot)
and to a step that plays a human's forced card, and the number of errors, which must be 0.

    python benchmarks/bench_serve.py [--games 20] [--players 2] [--level fast]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

SERVER_SCRIPT = """
import sys, uvicorn
from csl_ai.cli.serve_cmd import bind_socket
from csl_ai.web import create_app
sock = bind_socket("127.0.0.1", 0)
print(sock.getsockname()[1], flush=True)
config = uvicorn.Config(create_app(), log_level="warning", access_log=False)
uvicorn.Server(config).run(sockets=[sock])
"""


@dataclass
class Tally:
    """What the client threads measured, merged under a lock."""

    human_s: list[float] = field(default_factory=list)
    ai_s: list[float] = field(default_factory=list)
    auto_s: list[float] = field(default_factory=list)
    """Steps that played a human's forced card (no search)."""
    errors: list[str] = field(default_factory=list)
    games_over: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def human_move(state: dict[str, Any]) -> dict[str, Any]:
    board = state["board"]
    if board["phase"] == "allocate":
        hand = board["seats"][state["viewer"]]["hand"]
        piles, start = [], 0
        for size in state["rules"]["group_sizes"]:
            piles.append(" ".join(hand[start : start + size]))
            start += size
        return {"type": "allocate", "piles": piles}
    if board["phase"] == "weather":
        return {"type": "weather", "good_weather": False}
    return {"type": "play", "card": state["legal"][0]}


def play_one(base: str, seed: int, players: int, level: str, tally: Tally) -> None:
    """One whole game over HTTP; every reply that is not 2xx counts as an error."""
    human: list[float] = []
    ai: list[float] = []
    auto: list[float] = []
    finished = False
    try:
        # As the page does: every POST says it sends JSON (the server refuses others).
        headers = {"Content-Type": "application/json"}
        with httpx.Client(base_url=base, timeout=120, headers=headers) as client:
            r = client.post(
                "/api/games", json={"players": players, "humans": [0], "ai": level, "seed": seed}
            )
            r.raise_for_status()
            state = r.json()
            while state["status"] == "playing":
                gid = state["id"]
                started = time.perf_counter()
                if state["next"] == "step":
                    r = client.post(f"/api/games/{gid}/step")
                    r.raise_for_status()
                    by = r.json()["step"]["by"]
                    (ai if by == "ai" else auto).append(time.perf_counter() - started)
                else:
                    r = client.post(f"/api/games/{gid}/move", json={"move": human_move(state)})
                    r.raise_for_status()
                    human.append(time.perf_counter() - started)
                state = r.json()["state"]
            finished = True
    except (httpx.HTTPError, KeyError, ValueError) as e:
        with tally.lock:
            tally.errors.append(f"game {seed}: {type(e).__name__}: {str(e)[:200]}")
    with tally.lock:
        tally.human_s.extend(human)
        tally.ai_s.extend(ai)
        tally.auto_s.extend(auto)
        tally.games_over += finished


def percentile(values: list[float], p: float) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]


def start_server(records: str) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "CSL_RECORDS_DIR": records}
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(base + "/api/options", timeout=5).raise_for_status()
            return proc, base
        except httpx.TransportError:
            if time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("bench_serve: the server did not start") from None
            time.sleep(0.1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="concurrent games (default 20)")
    parser.add_argument("--players", type=int, default=2, choices=(2, 3, 4, 5))
    parser.add_argument("--level", default="fast", help="AI level of every AI seat")
    args = parser.parse_args()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    with tempfile.TemporaryDirectory(prefix="csl-bench-serve-") as records:
        proc, base = start_server(records)
        try:
            tally = Tally()
            threads = [
                threading.Thread(target=play_one, args=(base, seed, args.players, args.level, tally))
                for seed in range(1, args.games + 1)
            ]
            started = time.perf_counter()
            for th in threads:
                th.start()
            for th in threads:
                th.join()
            wall = time.perf_counter() - started
            saved = len([n for n in os.listdir(records) if n.endswith(".json")])
        finally:
            proc.terminate()
            proc.wait(30)
    decisions = len(tally.human_s) + len(tally.ai_s) + len(tally.auto_s)
    print(
        f"bench_serve: {args.games} concurrent {args.players}-player games, human seat 0 "
        f"vs ismcts:{args.level}, on {cpus} CPUs"
    )
    print(f"decisions: {decisions} in {wall:.1f} s = {decisions / wall:.1f} moves/s "
          f"({tally.games_over} games finished, {saved} records saved)")
    for label, values in (
        ("human move reply", tally.human_s),
        ("AI step reply", tally.ai_s),
        ("forced-card step reply", tally.auto_s),
    ):
        print(
            f"{label}: p50 {percentile(values, 50) * 1000:.0f} ms, "
            f"p95 {percentile(values, 95) * 1000:.0f} ms (n={len(values)})"
        )
    print(f"errors: {len(tally.errors)}")
    for error in tally.errors[:5]:
        print(f"  {error}")
    return 1 if tally.errors else 0


if __name__ == "__main__":
    sys.exit(main())
