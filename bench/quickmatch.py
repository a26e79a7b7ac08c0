"""Quick match: the time to a match with 2,000 players waiting, and the matching's cost per
player (issue 20, "Tests and figures"; docs/performance.md "Quick match").

Two parts:

* **Over the wire.** Two ``python -m server`` processes on a Redis (a key prefix of its
  own, deleted at the end) and a shared SQLite file; ``--players`` players (made straight
  in the database), one WebSocket connection each, half on each process, all connected
  first; then every one sends ``queue_join`` at once (the mix of tables of
  ``tests/server/quickmatch_crowd.py``: 2 players, 2 rated, 3, 4 and 4 in partnerships),
  so the queues hold all of them (a ``queue_join`` answered ``store_unavailable`` — the
  process's Redis pool busy with the burst — is sent again, as a client does). Per
  player: the time from sending ``queue_join`` to receiving ``matched`` (the room made
  and every seat taken), p50/p99/max, and the whole crowd's time; ``--rounds`` crowds
  in all, for the spread.
* **The matching function alone** (``server.matchmaking.matching.group``, the CPU the
  lease holder spends per round): 2,000 waiting players of one queue with ratings drawn
  normal around 1000 (sd 200) and waits up to 30 s, CPU (process time) per call and per
  player, for tables of 2, 3 and 4.

From the repository root (Redis on 127.0.0.1:6379)::

    python bench/quickmatch.py --players 2000

``--json PATH`` writes the figures too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "server")]

from crib_wire import ProcessServer  # noqa: E402
from quickmatch_crowd import (  # noqa: E402
    MIX,
    SERVER_ENV,
    close_all,
    connect,
    make_players,
    people_for,
    queue,
    wait_matched,
)
from redis.asyncio import Redis  # noqa: E402

from server.database import database_url  # noqa: E402
from server.matchmaking.matching import Waiting, group  # noqa: E402


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def crowd_round(servers: list[ProcessServer], tmp: Path, n: int) -> dict[str, Any]:
    made = await make_players(database_url(None, str(tmp)), n)
    people = people_for(made, len(servers))
    gate = asyncio.Semaphore(64)
    try:
        await asyncio.gather(*(connect(p, servers[p.server].ws, gate) for p in people))
        started = time.monotonic()

        # All at once; a join refused for a moment (store_unavailable: the process's Redis
        # pool was busy) is sent again, as a client does; the time counts from the first.
        await asyncio.gather(*(queue(p) for p in people))
        await wait_matched(people, 120)
        done = time.monotonic() - started
        waits = [p.matched_at - p.queued_at for p in people]
    finally:
        await close_all(people)
    return {"players": n, "p50_ms": round(1000 * pct(waits, 0.5), 1),
            "p99_ms": round(1000 * pct(waits, 0.99), 1),
            "max_ms": round(1000 * max(waits), 1), "all_matched_s": round(done, 2)}


def matching_cost(n: int, repeats: int = 20) -> dict[str, Any]:
    rng = random.Random(1)
    out = {}
    for size in (2, 3, 4):
        times = []
        seated = 0
        for _ in range(repeats):
            players = [Waiting(f"p{i}", rng.gauss(1000, 200), rng.uniform(0, 30))
                       for i in range(n)]
            t0 = time.process_time()
            tables = group(players, size, 30.0)
            times.append(time.process_time() - t0)
            seated += sum(len(t) for t in tables)
        per_call = statistics.median(times)
        out[str(size)] = {"per_call_ms": round(1000 * per_call, 2),
                          "per_player_us": round(1e6 * per_call / n, 2),
                          "seated_share": round(seated / (repeats * n), 3)}
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--players", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.players != sum(c for _, c in MIX):
        raise SystemExit(f"--players must be {sum(c for _, c in MIX)} (the crowd's mix)")
    prefix = f"bench:qm:{secrets.token_hex(4)}:"
    figures: dict[str, Any] = {"matching": matching_cost(args.players)}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        env = {**SERVER_ENV, "CRIBBAGE_DATA_DIR": str(tmp),
               "CRIBBAGE_QUEUE_JOINS_PER_MINUTE": "0"}
        servers = [ProcessServer(args.redis_url, prefix, tmp / f"s{i}.log", **env)
                   for i in range(2)]
        try:
            for s in servers:
                s.start()
            figures["rounds"] = [await crowd_round(servers, tmp, args.players)
                                 for _ in range(args.rounds)]
        finally:
            for s in servers:
                s.stop()
            redis = Redis.from_url(args.redis_url)
            keys = [k async for k in redis.scan_iter(match=f"{prefix}*", count=1000)]
            for i in range(0, len(keys), 500):
                await redis.delete(*keys[i:i + 500])
            await redis.aclose()
    print(json.dumps(figures, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
