"""Run inside a server container (``docker exec -i CONTAINER python - ROOM...``, by
tests/containers): prints, as one JSON object, each room's status, version, log and the
id its current game has (or will have) in the archive, read
with the server's own store from the store the container's settings name (Redis or a
Redis Cluster). Not collected by pytest (no ``test_`` prefix)."""

from __future__ import annotations

import asyncio
import json
import sys

from server.app import redis_client, redis_cluster_client
from server.archive.outbox import game_id
from server.settings import Settings
from server.store.cluster import ClusterRedisStore
from server.store.redis import RedisStore


async def main(rooms: list[str]) -> None:
    settings = Settings()
    if settings.redis_cluster:
        store: RedisStore = ClusterRedisStore(
            redis_cluster_client(settings), settings.key_prefix,
            buckets=settings.redis_cluster_buckets)
    else:
        store = RedisStore(redis_client(settings), settings.key_prefix)
    out = {}
    try:
        for room in rooms:
            record, _ = await store.load(room)
            out[room] = {"status": record.status if record else None,
                         "version": record.version if record else None,
                         "log": await store.log(room),
                         "game_id": (game_id(room, record.created, record.game_number)
                                     if record else None)}
    finally:
        await store.close()
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
