"""2,000 simulated players queue for mixed tables across two server processes on the
suite's local Redis Cluster (three primaries, a replica each; tests/server/crib_cluster.py):
every player matched exactly once, nobody in two rooms, every room complete — the queues'
keys share one hash tag, so every step is one script in one slot."""

from __future__ import annotations

from pathlib import Path

import pytest
from crib_cluster import LocalCluster
from test_quickmatch_crowd import crowd, start_servers

from server.app import redis_cluster_client
from server.settings import Settings
from server.store.cluster import ClusterRedisStore


@pytest.fixture
def cluster(tmp_path: Path):
    c = LocalCluster(tmp_path / "cluster")
    try:
        c.start()
        yield c
    finally:
        c.stop()


async def test_2000_players_are_each_matched_once_on_a_redis_cluster(
        cluster: LocalCluster, tmp_path: Path) -> None:
    prefix = "qm:"
    servers = start_servers(cluster.url, prefix, tmp_path, CRIBBAGE_REDIS_CLUSTER="1")
    client = redis_cluster_client(Settings(redis_url=cluster.url, redis_cluster=True))
    try:
        found = await crowd(servers, ClusterRedisStore(client, prefix), tmp_path, False)
        assert found["rooms"] == 775
    finally:
        await client.aclose()
        for s in servers:
            s.stop()
