"""Fixtures of the server tests: a Redis key prefix per test, servers on loopback ports."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
import redis
from crib_wire import REDIS_URL, ProcessServer, RedisServer, ThreadServer, start_all

from server.settings import Settings


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A random key prefix; every key under it is deleted after the test."""
    prefix = f"test:{secrets.token_hex(6)}:"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def make_server(redis_prefix: str) -> Iterator[Callable[..., ThreadServer]]:
    """Start in-thread servers: ``make_server(redis=True, **settings)``."""
    started: list[ThreadServer] = []

    def make(redis: bool = True, app_kwargs: dict[str, Any] | None = None,
             **overrides: Any) -> ThreadServer:
        values: dict[str, Any] = {"key_prefix": redis_prefix}
        if redis:
            values["redis_url"] = REDIS_URL
        values.update(overrides)
        server = ThreadServer(Settings(**values), **(app_kwargs or {})).start()
        started.append(server)
        return server

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def server(make_server: Callable[..., ThreadServer]) -> ThreadServer:
    """One server on Redis."""
    return make_server()


@pytest.fixture
def process_servers(redis_prefix: str) -> Iterator[Callable[[int], list[ProcessServer]]]:
    """Start n ``python -m server`` processes on one Redis and one key prefix."""
    started: list[ProcessServer] = []

    def make(n: int) -> list[ProcessServer]:
        servers = [ProcessServer(REDIS_URL, redis_prefix) for _ in range(n)]
        started.extend(servers)
        return start_all(servers)

    yield make
    for s in started:
        s.stop()


@pytest.fixture
async def clients() -> AsyncIterator[list[Any]]:
    """A list to put clients in; all are closed after the test."""
    made: list[Any] = []
    yield made
    for c in made:
        await c.close()


@pytest.fixture
def own_redis(tmp_path) -> Iterator[RedisServer]:
    """A Redis of this test's own (AOF, fsync always) on a free port; stopped after."""
    server = RedisServer(tmp_path).start()
    yield server
    server.stop()
