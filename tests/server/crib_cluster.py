"""A local Redis Cluster for tests: three primaries with one replica each, on free loopback
ports, in a temporary directory (``redis-server --cluster-enabled yes``, then
``redis-cli --cluster create ... --cluster-replicas 1``). Stopped (every process it started)
by :meth:`LocalCluster.stop`.

(Imported by the test modules of this directory as ``crib_cluster``.)
"""

from __future__ import annotations

import random
import socket
import subprocess
import time
from pathlib import Path

NODE_TIMEOUT_MS = 1000
"""``cluster-node-timeout``: a primary that does not answer this long is failed over."""


def cluster_port() -> int:
    """A loopback port free now whose cluster bus port (+10000) is free too."""
    while True:
        port = random.randint(20000, 40000)
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
            return port
        except OSError:
            continue


def _cli(port: int, *args: str, timeout: float = 5) -> str:
    return subprocess.run(["redis-cli", "-p", str(port), *args], capture_output=True,
                          text=True, timeout=timeout, check=True).stdout


class LocalCluster:
    """Six ``redis-server`` processes made into one cluster (3 primaries, 3 replicas)."""

    def __init__(self, directory: Path, nodes: int = 6) -> None:
        self.dir = directory
        self.ports = [cluster_port() for _ in range(nodes)]
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        """The URL of one node (any node lets a client find the others)."""
        return f"redis://127.0.0.1:{self.ports[0]}"

    def _start_node(self, port: int) -> None:
        d = self.dir / str(port)
        d.mkdir(parents=True, exist_ok=True)
        self.procs[port] = subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(d),
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
             "--cluster-node-timeout", str(NODE_TIMEOUT_MS), "--appendonly", "yes",
             "--cluster-require-full-coverage", "no",
             "--save", "", "--daemonize", "no", "--logfile", str(d / "redis.log")],
            stdout=subprocess.DEVNULL)

    def start(self) -> LocalCluster:
        for port in self.ports:
            self._start_node(port)
        end = time.monotonic() + 10
        for port in self.ports:
            while True:
                try:
                    if _cli(port, "ping").strip() == "PONG":
                        break
                except subprocess.SubprocessError:
                    pass
                if time.monotonic() > end:
                    raise RuntimeError(f"redis-server on {port} did not start")
                time.sleep(0.05)
            # Redis 7 syncs a new replica diskless, and by default waits 5 s first for more
            # replicas to share that one transfer; each primary here has one replica only,
            # so the wait bought nothing but 5 s of every test's set-up.
            _cli(port, "config", "set", "repl-diskless-sync-delay", "0")
        subprocess.run(
            ["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
             "--cluster-replicas", "1", "--cluster-yes"],
            capture_output=True, text=True, timeout=30, check=True)
        self.wait_ok()
        return self

    def wait_ok(self, timeout: float = 15, ports: list[int] | None = None,
                replicas: bool = True) -> None:
        """Wait until every live node says ``cluster_state:ok``, each of its three
        primaries holds slots and (``replicas``) has its replica connected."""
        end = time.monotonic() + timeout
        for port in ports or [p for p in self.ports if self.alive(p)]:
            while True:
                try:
                    info = _cli(port, "cluster", "info")
                    primaries = self.primaries(port)
                    if "cluster_state:ok" in info and len(primaries) == 3 and all(
                        "state=online" in _cli(p, "info", "replication")
                        for p in primaries if self.alive(p) and replicas
                    ):
                        break
                except subprocess.SubprocessError:
                    pass
                if time.monotonic() > end:
                    raise RuntimeError(f"cluster not ok on {port}")
                time.sleep(0.1)

    def wait_promoted(self, replica: int, timeout: float = 20) -> None:
        """Wait until ``replica`` serves slots as a primary and the cluster is ok again."""
        end = time.monotonic() + timeout
        while replica not in self.primaries(replica):
            if time.monotonic() > end:
                raise RuntimeError(f"{replica} was not promoted")
            time.sleep(0.1)
        self.wait_ok(max(1.0, end - time.monotonic()), replicas=False)

    def alive(self, port: int) -> bool:
        proc = self.procs.get(port)
        return proc is not None and proc.poll() is None

    def primaries(self, via: int | None = None) -> dict[int, str]:
        """Primary port -> its slot ranges, as node ``via`` sees it (failed ones left out)."""
        via = via or next(p for p in self.ports if self.alive(p))
        out: dict[int, str] = {}
        for line in _cli(via, "cluster", "nodes").splitlines():
            parts = line.split()
            flags = parts[2].split(",")
            if "master" in flags and "fail" not in flags and len(parts) > 8:
                out[int(parts[1].split("@")[0].rsplit(":", 1)[1])] = " ".join(parts[8:])
        return out

    def replica_of(self, primary: int) -> int:
        """The port of ``primary``'s replica."""
        lines = _cli(primary, "cluster", "nodes").splitlines()
        me = next(line.split()[0] for line in lines if "myself" in line.split()[2])
        for line in lines:
            parts = line.split()
            if "slave" in parts[2] and parts[3] == me:
                return int(parts[1].split("@")[0].rsplit(":", 1)[1])
        raise LookupError(f"no replica of {primary}")

    def kill(self, port: int) -> None:
        """``kill -9`` one node."""
        proc = self.procs[port]
        proc.kill()
        proc.wait(10)

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
