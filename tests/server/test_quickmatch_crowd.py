"""2,000 simulated players queue for mixed tables across two server processes on Redis
(issue 20, "Tests and figures"): every player matched exactly once, nobody in two rooms,
every room complete. (With one process killed with -9 mid-way: test_quickmatch_kill.py;
on the suite's local Redis Cluster: test_quickmatch_cluster.py.)"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from crib_wire import ProcessServer, start_all
from quickmatch_crowd import (
    SERVER_ENV,
    Person,
    check_rooms,
    close_all,
    connect,
    make_players,
    people_for,
    queue,
    wait_matched,
)
from redis.asyncio import Redis

from server.database import database_url
from server.store.redis import RedisStore

REDIS_URL = "redis://127.0.0.1:6379/0"
PLAYERS = 2000


def start_servers(url: str, prefix: str, tmp: Path, **env: str) -> list[ProcessServer]:
    env = {**SERVER_ENV, "CRIBBAGE_DATA_DIR": str(tmp), **env}
    servers = [ProcessServer(url, prefix, tmp / f"server{i}.log", **env) for i in range(2)]
    return start_all(servers)


async def crowd(servers: list[ProcessServer], store, tmp: Path, kill: bool) -> dict:
    made = await make_players(database_url(None, str(tmp)), PLAYERS)
    people = people_for(made, len(servers))
    gate = asyncio.Semaphore(64)
    try:
        await asyncio.gather(*(connect(p, servers[p.server].ws, gate) for p in people))
        # Paced: 100 players join every 50 ms, so the matcher works while players arrive.
        waves = [people[i::20] for i in range(20)]
        killed_at = None
        for n, wave in enumerate(waves):
            await asyncio.gather(*(queue(p, gate) for p in wave))
            await asyncio.sleep(0.05)
            if kill and n == len(waves) // 2:
                servers[1].kill()
                killed_at = n
                await rescue(people, servers[0], gate, waves[: n + 1])
        await wait_matched(people, 60)
        if kill:
            assert killed_at is not None
            await play_on(people, servers[0])
        return await check_rooms(people, store)
    finally:
        await close_all(people)


async def rescue(people: list[Person], survivor: ProcessServer, gate: asyncio.Semaphore,
                 queued: list[list[Person]]) -> None:
    """The people of the killed process connect again, to the survivor; those who had
    queued and not heard of a match queue again there (a recorded match of theirs is then
    sent to them, never a second one)."""
    done = {p.index for wave in queued for p in wave}
    lost = [p for p in people if p.server == 1]
    for p in lost:
        p.collect()
        p.server = 0
    await asyncio.gather(*(connect(p, survivor.ws, gate) for p in lost))
    await asyncio.gather(*(queue(p, gate) for p in lost
                           if p.index in done and not p.matched))


async def play_on(people: list[Person], survivor: ProcessServer) -> None:
    """Everybody (the matched of the killed process included) joins their room on the
    survivor and finds the game going, in their seat."""

    async def join(p: Person) -> None:
        assert p.client is not None
        m = p.matched[0]
        try:
            await p.client.join(m["room"], m["seat"])
        except Exception as exc:
            raise AssertionError((p.index, p.server, m, repr(exc))) from exc
        assert p.client.seat == m["seat"] and p.client.status == "playing"

    for i in range(0, len(people), 100):
        await asyncio.gather(*(join(p) for p in people[i:i + 100]))


async def test_2000_players_are_each_matched_once(redis_prefix: str, tmp_path: Path,
                                                  kill: bool = False) -> None:
    started = time.monotonic()
    servers = start_servers(REDIS_URL, redis_prefix, tmp_path)
    redis = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        found = await crowd(servers, RedisStore(redis, redis_prefix), tmp_path, kill)
        assert found["rooms"] == 300 + 200 + 100 + 100 + 75
        for s in servers:
            log = s.log.read_text() if s.log and s.log.exists() else ""
            assert "Traceback" not in log, log[-3000:]
    finally:
        await redis.aclose()
        for s in servers:
            s.stop()
    assert time.monotonic() - started < 90
