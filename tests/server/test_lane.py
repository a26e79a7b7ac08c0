"""The write lane (server/store/lane.py) against a real Redis: connections are kept and
reused, a timed-out command's connection is never used again (its late answer cannot be
read as the next command's), a Redis restart under idle connections costs no failed write,
and the lane never holds more than ``keep`` or more than the pool allows."""

from __future__ import annotations

import asyncio
import time

import pytest
from crib_wire import RedisServer
from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import RedisError

from server.store.lane import WriteLane


def _client(url: str, max_connections: int = 16, timeout: float = 1.0) -> Redis:
    return Redis.from_pool(BlockingConnectionPool.from_url(
        url, decode_responses=True, max_connections=max_connections, timeout=timeout,
        socket_timeout=timeout, socket_connect_timeout=timeout))


async def test_connections_are_kept_and_reused(redis_prefix: str) -> None:
    redis = _client("redis://127.0.0.1:6379/0")
    pool = redis.connection_pool
    lane = WriteLane(pool, keep=2)
    key = f"{redis_prefix}lane"

    async def incr() -> int:
        conn = await lane.take()
        try:
            return int(await lane.call(conn, "INCR", key))
        finally:
            await lane.put(conn)

    assert [await incr() for _ in range(5)] == [1, 2, 3, 4, 5]
    assert len(pool._in_use_connections) == 1  # one connection, kept by the lane
    # Ten at once: the lane keeps two, the other eight go back to the pool.
    assert sorted(await asyncio.gather(*(incr() for _ in range(10)))) == list(range(6, 16))
    assert len(pool._in_use_connections) == 2
    kept = list(lane._idle)
    assert all(c.socket_timeout is None for c in kept)
    assert all(c.socket_timeout == 1.0 for c in pool._available_connections)
    await lane.drop_idle()
    assert not pool._in_use_connections
    await redis.delete(key)
    await redis.aclose()


async def test_a_timed_out_connection_is_closed(own_redis: RedisServer) -> None:
    redis = _client(own_redis.url, timeout=0.3)
    lane = WriteLane(redis.connection_pool, keep=4)
    conn = await lane.take()
    assert await lane.call(conn, "PING") == "PONG"
    own_redis.freeze()  # Redis holds the socket open and answers nothing
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError):
            await lane.call(conn, "ECHO", "late")
    finally:
        own_redis.thaw()
    assert time.monotonic() - started < 0.9
    await lane.put(conn, close=True)
    assert not lane._idle and not conn.is_connected
    await asyncio.sleep(0.3)  # the late "late" goes to the closed socket, not a kept one
    conn = await lane.take()
    assert await lane.call(conn, "ECHO", "next") == "next"
    await lane.put(conn)
    conn = await lane.take()  # the same connection, kept, with nothing stray on it
    assert await lane.call(conn, "ECHO", "again") == "again"
    await lane.put(conn)
    await lane.drop_idle()
    await redis.aclose()


async def test_a_restart_under_idle_connections_costs_no_failed_write(
    own_redis: RedisServer,
) -> None:
    redis = _client(own_redis.url)
    lane = WriteLane(redis.connection_pool, keep=4)
    conns = [await lane.take() for _ in range(3)]
    for conn in conns:
        assert await lane.call(conn, "PING") == "PONG"
    for conn in conns:
        await lane.put(conn)
    own_redis.restart(down=0.3)  # every kept socket is now closed by the old server
    await asyncio.sleep(0.3)
    for _ in range(3):  # each idle connection is checked and reconnected before use
        conn = await lane.take()
        assert await lane.call(conn, "PING") == "PONG"
        await lane.put(conn)
    await lane.drop_idle()
    await redis.aclose()


async def test_reconnecting_a_kept_connection_to_a_frozen_redis_is_bounded(
    own_redis: RedisServer,
) -> None:
    """A kept connection Redis closed is connected again before use; if Redis then accepts
    the connection but answers nothing (frozen), the handshake times out like a command
    (nothing was sent: the store calls it StoreUnavailable) instead of waiting forever."""
    redis = _client(own_redis.url, timeout=0.3)
    lane = WriteLane(redis.connection_pool, keep=4)
    conn = await lane.take()
    assert await lane.call(conn, "CLIENT", "SETNAME", "kept") == "OK"
    await lane.put(conn)
    killer = _client(own_redis.url)
    assert await killer.execute_command("CLIENT", "KILL", "SKIPME", "yes") >= 1
    await killer.aclose()
    await asyncio.sleep(0.2)  # the loop sees the kept socket's end
    own_redis.freeze()
    started = time.monotonic()
    try:
        with pytest.raises((RedisError, TimeoutError, OSError)):  # as _write expects
            await asyncio.wait_for(lane.take(), 5)
    finally:
        own_redis.thaw()
    assert time.monotonic() - started < 2.0
    assert not lane._idle
    conn = await lane.take()  # Redis answers again: a fresh connection
    assert await lane.call(conn, "PING") == "PONG"
    await lane.put(conn)
    await lane.drop_idle()
    await redis.aclose()
