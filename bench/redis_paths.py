"""CPU per scripted write on four ways of sending it with redis-py's asyncio client.

The product sends every room change as one ``EVALSHA`` (docs/performance.md, "Third
pass: the write lane, views that share, and the accounting"). This bench measures what the
client side of one such call costs this process, with ``--tasks`` coroutines each sending
``--calls`` calls of a small Lua script (keys and arguments the size of a commit's), on a
``BlockingConnectionPool`` configured like the product's (1 s socket timeouts, no retries)
unless said otherwise:

* ``floor``: ``AsyncScript.__call__`` (``Redis.evalsha`` through the client: the pool,
  redis-py's Python packer, its retry wrapper) on a pool without socket timeouts — exactly
  how ``bench/floor.py`` writes;
* ``script``: the same on the product's pool (1 s socket timeouts);
* ``pool``: a connection taken from the pool per call, ``send_command`` + ``read_response``,
  released — how ``server/store/redis.py`` wrote before the write lane;
* ``lane``: :class:`server.store.lane.WriteLane` — how it writes now.

It prints process CPU time (user + system, this process only: Redis runs elsewhere) per
call, the median of ``--repeats`` runs interleaved over the four ways::

    python bench/redis_paths.py --redis-url redis://127.0.0.1:6379/0
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from redis.asyncio import BlockingConnectionPool, Redis  # noqa: E402
from redis.asyncio.retry import Retry  # noqa: E402
from redis.backoff import NoBackoff  # noqa: E402

from server.store.lane import WriteLane  # noqa: E402

SCRIPT = """
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
redis.call('HSET', KEYS[1], 'v', v + 1, 'data', ARGV[2])
return {0, v + 1, ARGV[3]}
"""


def client(url: str, floor: bool = False) -> Redis:
    """A client like the product's (``server.app.redis_client``), or like the floor's."""
    if floor:
        return Redis.from_pool(BlockingConnectionPool.from_url(
            url, decode_responses=True, max_connections=256, timeout=5.0))
    return Redis.from_pool(BlockingConnectionPool.from_url(
        url, decode_responses=True, max_connections=256, timeout=1.0,
        socket_timeout=1.0, socket_connect_timeout=1.0, retry=Retry(NoBackoff(), 0)))


async def run(way: str, url: str, prefix: str, tasks: int, calls: int, record: str) -> float:
    """CPU µs per call of ``way`` (``floor``, ``script``, ``pool`` or ``lane``)."""
    redis = client(url, floor=way == "floor")
    script = redis.register_script(SCRIPT)
    await script(keys=[f"{prefix}warm"], args=[0, record, "x"])
    pool = redis.connection_pool
    lane = WriteLane(pool, keep=64)

    async def one(i: int) -> None:
        keys = [f"{prefix}{{r{i}}}:state", f"{prefix}{{r{i}}}:actions",
                f"{prefix}{{r{i}}}:log", f"{prefix}{{r{i}}}:presence"]
        args = [1, record, "g:0:abc", '{"e":1}', '{"t":"u"', "chan", 86400, 5000, f"r{i}"]
        for _ in range(calls):
            if way in ("floor", "script"):
                await script(keys=keys, args=args)
            elif way == "pool":
                conn = await pool.get_connection()
                try:
                    await conn.send_command("EVALSHA", script.sha, len(keys), *keys, *args)
                    await conn.read_response()
                finally:
                    await pool.release(conn)
            else:
                conn = await lane.take()
                await lane.call(conn, "EVALSHA", script.sha, len(keys), *keys, *args)
                await lane.put(conn)

    start = time.process_time()
    await asyncio.gather(*(one(i) for i in range(tasks)))
    cpu = time.process_time() - start
    await lane.drop_idle()
    await redis.aclose()
    return cpu / (tasks * calls) * 1e6


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    p.add_argument("--tasks", type=int, default=50, help="coroutines writing at once")
    p.add_argument("--calls", type=int, default=400, help="calls per coroutine per run")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--record-bytes", type=int, default=6000,
                   help="size of the record argument (a room record's JSON is ~6 KB)")
    args = p.parse_args()
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    prefix = f"bench:paths:{secrets.token_hex(4)}:"
    record = "x" * args.record_bytes
    ways = ("floor", "script", "pool", "lane")
    results: dict[str, list[float]] = {w: [] for w in ways}
    print(f"{os.cpu_count()} CPUs, python {sys.version.split()[0]}, {args.tasks} tasks x "
          f"{args.calls} calls, {args.repeats} rounds", flush=True)
    for r in range(args.repeats):
        for way in ways:
            results[way].append(await run(way, args.redis_url, prefix, args.tasks,
                                          args.calls, record))
        print(f"round {r + 1}: " + ", ".join(f"{w} {results[w][-1]:.0f} µs" for w in ways),
              flush=True)
    redis = Redis.from_url(args.redis_url)
    keys = [k async for k in redis.scan_iter(match=f"{prefix}*")]
    if keys:
        await redis.delete(*keys)
    await redis.aclose()
    base = statistics.median(results["floor"])
    print("\n| way | CPU per call (median) | ÷ floor |\n|---|---:|---:|")
    for way in ways:
        m = statistics.median(results[way])
        print(f"| {way} | {m:.0f} µs | {m / base:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
