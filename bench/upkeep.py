"""What a server process's upkeep costs: the presence heartbeat, the reaper's look for dead
processes and the periodic version check of followed rooms (``server.upkeep``).

One process (this one) follows N rooms on a real Redis (127.0.0.1:6379, a random key
prefix deleted afterwards), holds one seat connection in each, and runs upkeep beats back
to back. Printed per N: CPU time and wall time per beat, Redis round trips per beat, and
what that is per second at the default beat (every 2 s, a version check every 4 s)::

    python bench/upkeep.py                 # N = 100, 1000, 5000
    python bench/upkeep.py --rooms 200 --beats 20

Compare with the cost of one accepted action (``bench/latency.py``, docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import time

from redis.asyncio import Redis

from server.broker import MemoryBroker
from server.fanout import LocalRoom, LocalRooms
from server.presence import Presence
from server.rooms import RoomService
from server.settings import Settings
from server.store.redis import RedisStore
from server.upkeep import Upkeep


async def measure(rooms: int, beats: int, url: str) -> dict[str, float]:
    prefix = f"bench-upkeep:{secrets.token_hex(4)}:"
    redis = Redis.from_url(url, decode_responses=True)
    store = RedisStore(redis, prefix)
    settings = Settings(redis_url=url, key_prefix=prefix)
    service = RoomService(store, settings)
    local = LocalRooms(MemoryBroker(), service)
    presence = Presence(store, service, settings)
    await presence.start()
    try:
        for _ in range(rooms):
            record, _ = await service.create_room({"players": 2})
            room = local.rooms[record.id] = LocalRoom(record.id)  # followed, up to date
            room.ingest(record, [], False)
            await presence.connect(record.id, 0)
        upkeep = Upkeep(store, presence, local, settings)
        calls = {"n": 0}
        original = redis.execute_command

        async def counted(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            calls["n"] += 1
            return await original(*args, **kwargs)

        redis.execute_command = counted  # type: ignore[method-assign]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for beat in range(beats):
            upkeep.beats = beat
            await presence.heartbeat()
            await presence.reap()
            if beat % 2 == 0:  # the version check runs every other beat by default
                await local.check_versions()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        return {"rooms": rooms, "cpu_ms_per_beat": 1000 * cpu / beats,
                "wall_ms_per_beat": 1000 * wall / beats,
                "cpu_percent_at_default": 100 * (cpu / beats) / upkeep.interval}
    finally:
        keys = [k async for k in redis.scan_iter(match=f"{prefix}*", count=1000)]
        for i in range(0, len(keys), 500):
            await redis.delete(*keys[i:i + 500])
        await redis.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", default="100,1000,5000", help="comma-separated N")
    parser.add_argument("--beats", type=int, default=30)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    print(f"{'rooms':>6} {'CPU ms/beat':>12} {'wall ms/beat':>13} {'CPU % of a core':>16}")
    for n in (int(x) for x in args.rooms.split(",")):
        r = asyncio.run(measure(n, args.beats, args.redis_url))
        print(f"{r['rooms']:>6} {r['cpu_ms_per_beat']:>12.2f} {r['wall_ms_per_beat']:>13.2f}"
              f" {r['cpu_percent_at_default']:>16.3f}")


if __name__ == "__main__":
    main()
