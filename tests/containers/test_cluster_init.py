"""deploy/redis-cluster-init.sh (the redis-init job of docker-compose.cluster.yml) run on
this machine against six local ``redis-server --cluster-enabled yes`` nodes — no container
engine needed: it makes fresh nodes one cluster; run again it only checks; and it finds a
cluster broken where ``cluster_state:ok`` says nothing (issue 17: the old job exited 0 on
``cluster_state:ok`` and so repaired nothing)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from crib_cluster import LocalCluster, _cli

SCRIPT = Path(__file__).resolve().parents[2] / "deploy" / "redis-cluster-init.sh"


def init(cluster: LocalCluster, timeout: int = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(SCRIPT), *(f"127.0.0.1:{p}" for p in cluster.ports)],
        capture_output=True, text=True, timeout=timeout + 30,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "INIT_TIMEOUT": str(timeout)})


@pytest.fixture
def nodes(tmp_path: Path) -> Iterator[LocalCluster]:
    """Six cluster-enabled nodes, not yet joined (every one stopped after)."""
    c = LocalCluster(tmp_path / "nodes")
    try:
        for port in c.ports:
            c._start_node(port)  # started only: joining them is the script's job
        end = time.monotonic() + 10
        for port in c.ports:
            while True:
                try:
                    if _cli(port, "ping").strip() == "PONG":
                        break
                except subprocess.SubprocessError:
                    pass
                assert time.monotonic() < end, f"node {port} did not start"
                time.sleep(0.05)
        yield c
    finally:
        c.stop()


def test_init_makes_a_cluster_checks_it_and_finds_what_cluster_state_ok_hides(
        nodes: LocalCluster) -> None:
    made = init(nodes)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "creating the cluster" in made.stdout
    nodes.wait_ok()
    primaries = nodes.primaries()
    assert len(primaries) == 3

    again = init(nodes)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already form a cluster; checking it" in again.stdout
    assert "creating" not in again.stdout

    # A replica dies: every shard still serves, cluster_state stays ok — and the script
    # says the cluster is not whole.
    replica = nodes.replica_of(next(iter(primaries)))
    nodes.kill(replica)
    others = [p for p in nodes.ports if p != replica]
    end = time.monotonic() + 15
    while "fail" not in _cli(others[0], "cluster", "nodes").split(f":{replica}@")[1].split()[1]:
        assert time.monotonic() < end, "the replica was not marked failed"
        time.sleep(0.2)
    assert "cluster_state:ok" in _cli(others[0], "cluster", "info")
    broken = init(nodes, timeout=3)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "not whole" in broken.stderr
    assert f"127.0.0.1:{replica}: no answer" in broken.stderr
    assert f"node 127.0.0.1:{replica} is slave,fail" in broken.stderr
    assert "has no replica" in broken.stderr
