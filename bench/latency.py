"""Latency and CPU per action of the cribbage server against the floor of the same stack.

The judge of issue 9. One run starts the product and the floor as separate server
processes, drives them with the same lean load client, interleaved over rounds, and prints
product ÷ floor ratios. From the repository root::

    python bench/latency.py --quick                 # smoke check, about 2 minutes
    python bench/latency.py                         # the full run, about 30 minutes
    python bench/latency.py --capacity              # the same plus the capacity search
    python bench/latency.py --closed 50 --paced '' --rounds 1 --variants product,floor
    python bench/latency.py --server-tree ../other-worktree   # judge another tree's server
    python bench/latency.py --json /tmp/latency.json          # also write everything as JSON

**The servers.** Each phase starts a fresh process (and, for Redis, a fresh key prefix
``bench:<random>:<phase>:``), so no phase inherits rooms, heap or deadlines from another:

* ``product``: ``python -m server --redis-url … --key-prefix …`` (rooms in Redis);
* ``product-memory``: ``python -m server`` without Redis (the in-process store);
* ``floor``: ``bench/floor.py --store redis``: one cached Lua compare-and-set + ``XADD`` +
  ``PUBLISH`` per frame, the update sent to the room's 2 connections when the message comes
  back through the process's redis-py pub/sub subscription;
* ``floor-memory``: ``bench/floor.py --store memory``: the same steps in process, through
  an in-process queue and one dispatcher task;
* ``floor-lane`` (only when named in ``--variants``): ``bench/floor.py --store redis
  --lane``, the floor writing on the product's write lane (``server/store/lane.py``)
  instead of redis-py's ``AsyncScript``: what the floor would cost with the same way of
  sending the script as the product.

All of them run under uvicorn's default stack (uvloop, httptools, websockets-sansio) without
permessage-deflate; the run checks ``/proc/<pid>/maps`` for uvloop and httptools.
``CRIBBAGE_*`` variables are removed from the servers' environment, so the flags alone
decide the store (``CRIBBAGE_DATA_DIR`` excepted: where the product's embedded SQLite
archive goes; the test suite points it at a temporary folder). The product's limits
(docs/protocol.md "Limits") are off unless
``--limits on``: the load comes from one address as fast as it is answered.
``--server-tree`` or ``--server-rev`` run the product from another checkout or commit; the
floor and the client always come from this one.

**The load.** ``--client-procs`` worker processes (``bench/loadclient.py``: raw asyncio
protocols over the ``websockets`` Sans-I/O layer, one ``json.loads`` per frame, an in-place
patch applier), rooms of 2 connections split between them:

* closed loop (``--closed``, default 1, 50, 200 rooms): one action in flight per room; the
  next is sent as soon as the previous one is answered and the seat to move has seen it.
  Reports accepted actions/s, server CPU per accepted action and played-card p50/p99.
* paced (``--paced``, default 500, 2,000 rooms): each room acts once a second (``--rate``),
  at random offsets within the second, the load of a real site; each room first sits out
  0–9 seconds (within the warm-up) so that deals (10 actions) do not end in step in every
  room. Reports
  played-card p50/p99/p99.9, server CPU (share of one core) and CPU per accepted action;
  missed ticks show a server too slow to answer within the second.
* product rooms play real games (``POST /api/rooms``, ``hello``/``join`` over ``/ws``,
  legal moves from each seat's own view: discards, plays, a rematch at game over); only
  ``play`` actions are timed, from just before the ``act`` is written until the acting
  seat decodes its own ``update`` carrying that card. Floor rooms send ``play``-sized acts
  in turn; the acting seat's update is its answer.

**What is measured in each phase.** After a warm-up (``--warmup``, 5 s, closed loop;
``--paced-warmup``, 20 s, paced: the product keeps each room's last 16 versions in memory,
so its heap reaches its working size only after some 16 actions per room) a window of
``--seconds`` (closed, 10 s) or ``--paced-seconds`` (paced, 20 s) opens: actions whose
``act`` is sent inside it (paced: whose second was given inside it) are counted when
answered, up to ``--grace`` seconds after it closes; an act still unanswered then counts as
an error, and a play at its age so far, so the tail shows it. CPU is ``utime + stime`` from
``/proc/<pid>/stat`` of the server, of every client worker and of Redis (shared with anyone
else using it) at the window's edges, plus the whole machine's busy time from
``/proc/stat``, so ``others`` shows how much of the two cores other jobs took meanwhile. A
worker that used more than 90% of a core is flagged: the client, not the server, may then
have limited the phase. The client's cyclic GC is frozen after set-up and off during a
phase (its longest collection is reported), so its own pauses do not add to the latencies.

**Rounds.** ``--rounds`` (default 3) repeats every level for every variant, interleaved
(round 1: closed 1 for product, floor, product-memory, floor-memory; closed 50 …; round 2 …).
Tables show medians over rounds; ratios are product ÷ floor (and product-memory ÷
floor-memory) of those medians. A phase during which other jobs took more than
``--max-others`` (half a core) is run again after ``--busy-wait`` seconds, up to
``--busy-retries`` (1; 0 with ``--quick``) times; the table marks rounds that stayed busy,
and the JSON keeps the attempts that were replaced.

**Capacity** (``--capacity``): for each of ``--capacity-variants``, paced probes of
``--capacity-seconds`` find the most rooms one process holds with played-card p99 below
``--capacity-p99-ms`` (100 ms), at least 95% of the offered actions answered and no errors:
doubling (or halving) from ``--capacity-start`` until the answer changes, then
``--capacity-steps`` bisections.

**Redis round trips** (``--count-redis``): the product and the Redis floor each run
``--count-rooms`` closed-loop rooms for ``--count-seconds`` through a counting proxy
(``bench/countproxy.py``), which counts that server's top-level Redis commands by name and
its round trips per accepted action.

**Probe** (``--probe``): every server runs under ``bench/probe.py``, which records the
cyclic garbage collector's pauses (``gc.callbacks``), the objects it tracks, and the event
loop's lag (a 10 ms ticker) inside the server process, reports them per phase, and counts
the tracked objects by type once each window has closed. It costs a little CPU, so leave it
off for the figures.

Everything is bounded: every wait has a timeout, ``--max-minutes`` stops the whole run,
every process started is stopped (SIGTERM, then SIGKILL), and every key under the run's
random prefix is deleted at the end of each phase and again at the end. Progress is printed
as it runs. See docs/performance.md, "Latency and CPU per action against the floor".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import json
import os
import platform
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
VARIANTS = {
    "product": ("product", "redis"),
    "floor": ("floor", "redis"),
    "product-memory": ("product", "memory"),
    "floor-memory": ("floor", "memory"),
    "floor-lane": ("floor", "redis"),
}
DEFAULT_VARIANTS = ("product", "floor", "product-memory", "floor-memory")
PAIRS = [("product", "floor"), ("product-memory", "floor-memory"), ("product", "floor-lane")]
RUN_T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')} +{time.monotonic() - RUN_T0:5.0f}s] {msg}", flush=True)


# --------------------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_ready(http: Any, url: str, seconds: float = 30.0) -> None:
    """Poll ``url`` (e.g. a server's ``/readyz``) with the ``httpx.AsyncClient`` ``http``
    every 0.1 s until it answers 200.

    Raises:
        SystemExit: no 200 within ``seconds``.
    """
    import httpx

    for _ in range(int(seconds * 10)):
        try:
            if (await http.get(url)).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)
    raise SystemExit(f"the server did not become ready ({url})")


def proc_cpu(pid: int | None) -> float | None:
    """utime + stime of a process (all its threads) in seconds, from /proc."""
    if not pid:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def proc_rss(pid: int | None) -> int | None:
    """Resident set size of a process, bytes (``VmRSS`` in ``/proc/<pid>/status``)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def machine_busy() -> float:
    """Busy CPU seconds of the whole machine (all cores), from /proc/stat."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ticks = [int(x) for x in fields[:8]]
    return (sum(ticks) - ticks[3] - ticks[4]) / CLK_TCK


def self_cpu() -> float:
    t = os.times()
    return t.user + t.system


def mapped_libs(pid: int) -> list[str]:
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return []
    return [lib for lib in ("uvloop", "httptools") if f"/{lib}/" in maps]


@dataclass
class Server:
    variant: str
    proc: subprocess.Popen
    port: int
    logfile: Path
    probe_file: Path | None = None

    @property
    def pid(self) -> int:
        return self.proc.pid


LIMITS: dict[str, dict[str, str]] = {
    # The load comes from one address and drives every connection as fast as it is
    # answered: with the limits on it would measure the limits.
    "off": {"CRIBBAGE_FRAME_RATE": "0", "CRIBBAGE_MAX_CONNECTIONS_PER_ADDRESS": "0",
            "CRIBBAGE_ROOMS_PER_MINUTE": "0", "CRIBBAGE_FAILED_JOINS_PER_MINUTE": "0",
            "CRIBBAGE_IDLE_SECONDS": "0", "CRIBBAGE_CONNECTIONS_PER_MINUTE": "0",
            "CRIBBAGE_WIRE_FRAME_RATE": "0", "CRIBBAGE_WIRE_BYTES_RATE": "0"},
    # Every limit at its default and every check made, except that the per-address caps
    # are raised to fit the bench's one address (docs/protocol.md "Limits"). Closed-loop
    # phases are then held to 20 frames/s per connection; use paced phases.
    "on": {"CRIBBAGE_MAX_CONNECTIONS_PER_ADDRESS": "1000000",
           "CRIBBAGE_ROOMS_PER_MINUTE": "1000000",
           "CRIBBAGE_CONNECTIONS_PER_MINUTE": "1000000"},
}
"""Settings of the product's limits for ``--limits`` (``CRIBBAGE_*`` variables)."""


class Runner:
    """Starts and stops every process of the run; knows where the server code lives."""

    def __init__(self, args: argparse.Namespace, server_tree: Path) -> None:
        self.args = args
        self.server_tree = server_tree
        self.children: list[subprocess.Popen] = []
        self.logdir = Path(tempfile.mkdtemp(prefix="bench-latency-"))
        self.stacks: dict[str, list[str]] = {}

    def env(self, tree: Path) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CRIBBAGE_")}
        if os.environ.get("CRIBBAGE_DATA_DIR"):  # where the embedded archive goes (tests)
            env["CRIBBAGE_DATA_DIR"] = os.environ["CRIBBAGE_DATA_DIR"]
        env["PYTHONPATH"] = os.pathsep.join(
            [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])])
        for item in self.args.server_env:
            key, _, value = item.partition("=")
            env[key] = value
        return env

    async def start_server(self, variant: str, prefix: str, redis_url: str | None = None
                           ) -> Server:
        kind, store = VARIANTS[variant]
        port = free_port()
        url = redis_url or self.args.redis_url
        logfile = self.logdir / f"{variant}-{port}.log"
        probe_file = None
        if kind == "product":
            cmd = ["-m", "server", "--host", "127.0.0.1", "--port", str(port),
                   "--log-level", "warning"]
            if store == "redis":
                cmd += ["--redis-url", url, "--key-prefix", prefix]
            if self.args.probe:
                probe_file = self.logdir / f"probe-{port}.json"
                cmd = [str(BENCH / "probe.py"), "--out", str(probe_file), "--", *cmd]
            tree = self.server_tree
        else:
            cmd = [str(BENCH / "floor.py"), "--port", str(port), "--store", store,
                   "--redis-url", url, "--key-prefix", prefix]
            if variant == "floor-lane":
                cmd.append("--lane")
            if self.args.probe:
                probe_file = self.logdir / f"probe-{port}.json"
                cmd = [str(BENCH / "probe.py"), "--out", str(probe_file), "--", *cmd]
            tree = ROOT
        out = open(logfile, "wb")  # noqa: SIM115 (the child keeps it)
        env = self.env(tree)
        if kind == "product":
            env.update(LIMITS[self.args.limits])
        proc = subprocess.Popen([sys.executable, *cmd], cwd=tree, env=env,
                                stdout=out, stderr=subprocess.STDOUT)
        out.close()
        self.children.append(proc)
        server = Server(variant, proc, port, logfile, probe_file)
        await asyncio.to_thread(self._wait_ready, server, store == "redis" and kind == "product")
        if variant not in self.stacks:
            self.stacks[variant] = mapped_libs(proc.pid)
            if self.stacks[variant] != ["uvloop", "httptools"]:
                log(f"WARNING: {variant} (pid {proc.pid}) has loaded only "
                    f"{self.stacks[variant]} of uvloop, httptools")
        return server

    def _wait_ready(self, server: Server, check_store: bool, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        path = "/readyz" if check_store else "/healthz"
        while time.monotonic() < end:
            if server.proc.poll() is not None:
                raise RuntimeError(f"{server.variant} exited ({server.proc.returncode}); log:\n"
                                   + server.logfile.read_text()[-3000:])
            try:
                with urllib.request.urlopen(
                        f"http://127.0.0.1:{server.port}{path}", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{server.variant} not ready on port {server.port} after {timeout}s")

    def stop(self, proc: subprocess.Popen, timeout: float = 15.0) -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        with contextlib.suppress(ValueError):
            self.children.remove(proc)

    def stop_all(self) -> None:
        for proc in list(self.children):
            with contextlib.suppress(Exception):
                self.stop(proc, 5.0)


class Workers:
    """The load client processes (``bench/loadclient.py``), one JSON line per message."""

    def __init__(self, runner: Runner, count: int) -> None:
        self.runner = runner
        self.count = count
        self.procs: list[asyncio.subprocess.Process] = []
        self.queues: list[asyncio.Queue[dict]] = []
        self.readers: list[asyncio.Task] = []
        self.progress: list[dict] = []

    async def start(self) -> None:
        for i in range(self.count):
            err = open(self.runner.logdir / f"client-{i}.log", "wb")  # noqa: SIM115
            proc = await asyncio.create_subprocess_exec(
                sys.executable, str(BENCH / "loadclient.py"), cwd=ROOT,
                env=self.runner.env(ROOT), stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=err, limit=1 << 26)
            err.close()
            self.procs.append(proc)
            q: asyncio.Queue[dict] = asyncio.Queue()
            self.queues.append(q)
            self.progress.append({})
            self.readers.append(asyncio.create_task(self._read(i, proc, q)))
        for i in range(self.count):
            await self.expect(i, "started", 30)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    async def _read(self, i: int, proc: asyncio.subprocess.Process, q: asyncio.Queue) -> None:
        assert proc.stdout is not None
        while True:
            line = await proc.stdout.readline()
            if not line:
                await q.put({"event": "eof"})
                return
            ev = json.loads(line)
            if ev.get("event") == "progress":
                self.progress[i] = ev
            else:
                await q.put(ev)

    async def send(self, i: int, cmd: dict) -> None:
        proc = self.procs[i]
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(cmd) + "\n").encode())
        await proc.stdin.drain()

    async def expect(self, i: int, event: str, timeout: float) -> dict:
        ev = await asyncio.wait_for(self.queues[i].get(), timeout)
        if ev.get("event") != event:
            raise RuntimeError(f"client {i}: expected {event}, got {ev}")
        return ev

    async def all(self, cmds: list[dict | None], event: str, timeout: float) -> list[dict | None]:
        """Send each worker its command (None: skip it) and wait for each one's ``event``."""
        for i, cmd in enumerate(cmds):
            if cmd is not None:
                await self.send(i, cmd)
        return list(await asyncio.gather(*(
            self.expect(i, event, timeout) if cmd is not None else _none()
            for i, cmd in enumerate(cmds))))

    def drain(self) -> None:
        """Forget events left over from an earlier phase (e.g. a late answer)."""
        for q in self.queues:
            while not q.empty():
                q.get_nowait()

    async def restart(self) -> None:
        """Stop every client process and start fresh ones (after a failed phase)."""
        await self.stop()
        self.procs, self.queues, self.readers, self.progress = [], [], [], []
        await self.start()

    async def stop(self) -> None:
        task = asyncio.current_task()
        patience = 2.0 if task is not None and task.cancelling() else 10.0
        for i, proc in enumerate(self.procs):
            if proc.returncode is None:
                with contextlib.suppress(Exception):
                    await self.send(i, {"cmd": "exit"})
        for proc in self.procs:
            try:
                await asyncio.wait_for(proc.wait(), patience)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        for t in self.readers:
            t.cancel()


async def _none() -> None:
    return None


# --------------------------------------------------------------------------- statistics
def pct(sorted_samples: list[float], p: float) -> float | None:
    """Nearest-rank percentile of already sorted samples."""
    if not sorted_samples:
        return None
    k = max(0, min(len(sorted_samples) - 1, -(-len(sorted_samples) * p // 100) - 1))
    return sorted_samples[int(k)]


def med(values: list[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def fmt(x: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "—" if x is None else format(x, spec) + suffix


def fms(x: float | None) -> str:
    """Milliseconds, with sensible precision."""
    if x is None:
        return "—"
    return f"{x:.3f}" if x < 1 else f"{x:.2f}" if x < 10 else f"{x:.1f}" if x < 100 else \
        f"{x:,.0f}"


# --------------------------------------------------------------------------- phases
class Bench:
    def __init__(self, args: argparse.Namespace, runner: Runner, workers: Workers,
                 r: redis.Redis, redis_pid: int | None, base_prefix: str) -> None:
        self.args = args
        self.runner = runner
        self.workers = workers
        self.r = r
        self.redis_pid = redis_pid
        self.base_prefix = base_prefix
        self.phases: list[dict] = []
        self.discarded: list[dict] = []  # attempts run again because the machine was busy
        self.seq = 0

    def cleanup(self, prefix: str) -> int:
        deleted = 0
        cursor = 0
        for _ in range(100_000):  # bounded
            cursor, keys = self.r.scan(cursor=cursor, match=f"{prefix}*", count=1000)
            if keys:
                deleted += self.r.unlink(*keys)
            if cursor == 0:
                break
        return deleted

    def snap(self, server_pid: int) -> dict[str, Any]:
        return {
            "t": time.monotonic(),
            "server": proc_cpu(server_pid),
            "clients": [proc_cpu(p) for p in self.workers.pids],
            "redis": proc_cpu(self.redis_pid),
            "main": self_cpu(),
            "machine": machine_busy(),
            "server_rss": proc_rss(server_pid),
        }

    async def phase(self, variant: str, mode: str, rooms: int, warmup: float, seconds: float,
                    round_no: int, label: str = "", redis_url: str | None = None,
                    on_edge: Any = None) -> dict:
        """Run one phase on a fresh server process; returns its figures.

        When other jobs took more than ``--max-others`` of a core during the window, the
        phase is run again after ``--busy-wait`` seconds, up to ``--busy-retries`` times;
        the busy attempts are kept in ``self.discarded``."""
        args = self.args
        for attempt in range(args.busy_retries + 1):
            res = await self._phase_once(variant, mode, rooms, warmup, seconds, round_no,
                                         label, redis_url, on_edge)
            res["attempt"] = attempt + 1
            others = res.get("others_cpu")
            res["busy"] = others is not None and others > args.max_others
            if not res["busy"] or attempt == args.busy_retries:
                break
            self.discarded.append(res)
            log(f"  other jobs took {others:.0%} of a core during the window (more than "
                f"{args.max_others:.0%}): running the phase again in {args.busy_wait:g}s")
            await asyncio.sleep(args.busy_wait)
        self.phases.append(res)
        return res

    async def _phase_once(self, variant: str, mode: str, rooms: int, warmup: float,
                          seconds: float, round_no: int, label: str, redis_url: str | None,
                          on_edge: Any) -> dict:
        kind, store = VARIANTS[variant]
        self.seq += 1
        prefix = f"{self.base_prefix}{self.seq}:"
        title = f"{label or f'round {round_no}'} {mode} {rooms} rooms, {variant}"
        log(f"{title}: starting the server")
        res: dict[str, Any] = {"variant": variant, "mode": mode, "rooms": rooms,
                               "round": round_no, "label": label, "seconds": seconds,
                               "warmup": warmup}
        server: Server | None = None
        try:
            server = await self.runner.start_server(variant, prefix, redis_url)
            res["server_pid"] = server.pid
            results, s0, s1 = await self._drive(server, kind, mode, rooms, warmup, seconds,
                                                on_edge, res)
        except Exception as exc:
            # A phase that cannot run (a server that does not start or dies, rooms that
            # cannot be set up in time) is recorded as failed; the run goes on with clean
            # client processes.
            res["failure"] = f"{type(exc).__name__}: {exc}"
            log(f"  PHASE FAILED: {res['failure']}")
            await self.workers.restart()
            results, s0, s1 = [], None, None
        finally:
            if server is not None:
                await asyncio.to_thread(self.runner.stop, server.proc)
            if store == "redis" or kind == "product":
                with contextlib.suppress(Exception):
                    res["keys_deleted"] = await asyncio.to_thread(self.cleanup, prefix)
        if s0 is not None and s1 is not None:
            self._figures(res, results, s0, s1, mode, rooms)
            if server is not None and server.probe_file is not None \
                    and server.probe_file.exists():
                import probe

                with contextlib.suppress(ValueError):
                    res["probe"] = probe.summarize(
                        json.loads(server.probe_file.read_text()), s0["t"], s1["t"])
        else:
            res.update(errors={"phase_failed": 1}, rejects={}, plays_timed=0, accepted=0,
                       missed_ticks=0, client_limited=False, p99_ms=None,
                       actions_per_second=None, window_seconds=seconds)
        log(f"  {variant}: " + one_line(res))
        return res

    async def _drive(self, server: Server, kind: str, mode: str, rooms: int, warmup: float,
                     seconds: float, on_edge: Any, res: dict) -> tuple[list[dict], dict, dict]:
        """Set the rooms up, run the window, close the rooms; (worker results, CPU at the
        window's start, at its end)."""
        args = self.args
        n = self.workers.count
        self.workers.drain()
        gather: asyncio.Future | None = None
        try:
            shares = [rooms // n + (1 if i < rooms % n else 0) for i in range(n)]
            firsts = [sum(shares[:i]) for i in range(n)]
            t = time.monotonic()
            setup_timeout = args.setup_timeout + rooms * 0.05
            await self.workers.all([
                {"cmd": "setup", "kind": kind, "port": server.port, "rooms": shares[i],
                 "first": firsts[i], "mode": mode, "tag": f"p{self.seq}r",
                 "concurrency": args.connect_concurrency, "timeout": args.act_timeout,
                 "setup_timeout": setup_timeout} if shares[i] else None
                for i in range(n)], "ready", setup_timeout + 10)
            res["setup_seconds"] = time.monotonic() - t
            log(f"  server pid {server.pid} port {server.port}: "
                f"{rooms} rooms ({2 * rooms} connections) ready in "
                f"{res['setup_seconds']:.1f}s; warming up {warmup:g}s, then {seconds:g}s "
                f"recorded")
            start = time.monotonic() + warmup
            end = start + seconds
            for i in range(n):
                self.workers.progress[i] = {}
            run_cmds = [
                {"cmd": "run", "start": start, "end": end, "mode": mode, "rate": args.rate,
                 "seed": self.seq * 100 + i, "grace": args.grace,
                 "act_timeout": args.act_timeout} if shares[i] else None
                for i in range(n)]
            gather = asyncio.ensure_future(self.workers.all(
                run_cmds, "result", warmup + seconds + args.grace + args.act_timeout + 30))
            await asyncio.sleep(max(0.0, start - time.monotonic()))
            s0 = self.snap(server.pid)
            if on_edge:
                on_edge("start")
            next_print = start + 5
            while time.monotonic() < end:
                await asyncio.sleep(min(0.25, max(0.0, end - time.monotonic())))
                if gather.done():
                    break
                if time.monotonic() >= next_print and time.monotonic() < end - 1:
                    prog = [p for p in self.workers.progress if p]
                    log(f"  {time.monotonic() - start:4.0f}s recorded: "
                        f"{sum(p.get('accepted', 0) for p in prog)} actions, "
                        f"{sum(p.get('plays', 0) for p in prog)} plays timed, "
                        f"{sum(p.get('errors', 0) for p in prog)} errors")
                    next_print += 5
            s1 = self.snap(server.pid)
            if on_edge:
                on_edge("end")
            if server.probe_file is not None:
                with contextlib.suppress(OSError):
                    os.kill(server.pid, signal.SIGUSR1)  # the probe's census, after the window
            results = [x for x in await gather if x is not None]
            if server.proc.poll() is not None:
                raise RuntimeError(f"{server.variant} died during the phase; log "
                                   f"{server.logfile}")
            return results, s0, s1
        finally:
            if gather is not None:
                if gather.done():
                    if not gather.cancelled():
                        gather.exception()  # retrieved (raised above if it matters)
                else:
                    gather.cancel()
            task = asyncio.current_task()
            if task is None or not task.cancelling():  # when stopping, the workers are killed
                with contextlib.suppress(Exception):
                    await self.workers.all(
                        [{"cmd": "close"} for _ in range(self.workers.count)], "closed", 60)

    def _figures(self, res: dict, results: list[dict], s0: dict, s1: dict, mode: str,
                 rooms: int) -> None:
        span = s1["t"] - s0["t"]
        nominal = res["seconds"]
        samples = sorted(x / 1000.0 for r in results for x in r["plays_us"])
        accepted = sum(r["accepted"] for r in results)
        errors: dict[str, int] = {}
        rejects: dict[str, int] = {}
        for r in results:
            for k, v in r["errors"].items():
                errors[k] = errors.get(k, 0) + v
            for k, v in r["rejects"].items():
                rejects[k] = rejects.get(k, 0) + v
        unanswered = sum(r["unanswered"] for r in results)
        if unanswered:
            errors["unanswered"] = unanswered

        def used(key: str) -> float | None:
            a, b = s0.get(key), s1.get(key)
            return None if a is None or b is None else b - a

        server = used("server")
        redis_cpu = used("redis")
        clients = [None if a is None or b is None else b - a
                   for a, b in zip(s0["clients"], s1["clients"], strict=True)]
        client_total = sum(c for c in clients if c is not None)
        main = used("main") or 0.0
        machine = used("machine") or 0.0
        ours = (server or 0.0) + client_total + main + (redis_cpu or 0.0)
        res.update({
            "window_seconds": span,
            "plays_timed": len(samples),
            "accepted": accepted,
            "accepted_plays": sum(r["accepted_plays"] for r in results),
            # Actions are counted over the nominal window, CPU over the snapshots' span (the
            # two differ by how late this process woke up): per action = rate ÷ rate.
            "actions_per_second": accepted / nominal,
            "offered_per_second": rooms * self.args.rate if mode == "paced" else None,
            "p50_ms": pct(samples, 50),
            "p99_ms": pct(samples, 99),
            "p999_ms": pct(samples, 99.9),
            "max_ms": samples[-1] if samples else None,
            "server_cpu": server / span if server is not None else None,
            "server_cpu_us_per_action":
                server / span / (accepted / nominal) * 1e6 if server and accepted else None,
            "client_cpu": client_total / span,
            "client_cpu_max_process": max((c or 0.0) for c in clients) / span,
            "client_cpu_us_per_action":
                client_total / span / (accepted / nominal) * 1e6 if accepted else None,
            "redis_cpu": redis_cpu / span if redis_cpu is not None else None,
            "machine_busy": machine / span,
            "others_cpu": max(0.0, machine - ours) / span,
            "loadavg": os.getloadavg(),
            "client_gc_max_ms": max((r["gc_max_ms"] for r in results), default=None),
            "games_finished": sum(r["games_finished"] for r in results),
            "missed_ticks": sum(r["missed_ticks"] for r in results),
            "snapshots": sum(r["snapshots"] for r in results),
            "server_rss_mib": (s1.get("server_rss") or 0) / 2**20 or None,
            "server_rss_growth_mib": (
                (s1["server_rss"] - s0["server_rss"]) / 2**20
                if s0.get("server_rss") and s1.get("server_rss") else None),
            "errors": errors,
            "rejects": rejects,
        })
        res["client_limited"] = res["client_cpu_max_process"] > 0.9

    # ------------------------------------------------------------------ plan
    async def run_levels(self) -> None:
        args = self.args
        levels = [("closed", n) for n in args.closed_levels] + \
                 [("paced", n) for n in args.paced_levels]
        total = len(levels) * len(args.variant_list) * args.rounds
        done = 0
        for round_no in range(1, args.rounds + 1):
            for mode, n in levels:
                for variant in args.variant_list:
                    done += 1
                    log(f"phase {done}/{total}")
                    if mode == "closed":
                        seconds, warmup = args.seconds, args.warmup
                    else:
                        seconds, warmup = args.paced_seconds, args.paced_warmup
                    await self.phase(variant, mode, n, warmup, seconds, round_no)

    async def capacity(self) -> dict[str, Any]:
        """Largest paced level per variant with p99 under the limit (see the docstring)."""
        args = self.args
        out: dict[str, Any] = {}
        for variant in args.capacity_variant_list:
            probes: dict[int, dict] = {}

            async def probe(n: int, variant: str = variant, probes: dict = probes) -> bool:
                res = await self.phase(variant, "paced", n, args.capacity_warmup,
                                       args.capacity_seconds, 0, label="capacity")
                # Every tick offers one action of any kind (discard, play, rematch).
                ok = (res["p99_ms"] is not None and res["p99_ms"] < args.capacity_p99_ms
                      and not res["errors"]
                      and res["accepted"] >= 0.95 * n * args.rate * res["seconds"])
                probes[n] = {"ok": ok, "p99_ms": res["p99_ms"], "p50_ms": res.get("p50_ms"),
                             "actions_per_second": res["actions_per_second"],
                             "server_cpu": res.get("server_cpu"), "errors": res["errors"],
                             "others_cpu": res.get("others_cpu"), "busy": res.get("busy")}
                log(f"  capacity {variant} {n} rooms: {'PASS' if ok else 'FAIL'} "
                    f"(p99 {fms(res['p99_ms'])} ms)")
                return ok

            lo: int | None = None  # most rooms that passed
            hi: int | None = None  # fewest rooms that failed
            n = args.capacity_start
            for _ in range(12):  # bounded
                if await probe(n):
                    lo = n
                    if hi is not None or n * 2 > args.capacity_max:
                        break
                    n *= 2
                else:
                    hi = n
                    if lo is not None or n // 2 < args.capacity_min:
                        break
                    n //= 2
            for _ in range(args.capacity_steps):
                if lo is None or hi is None or hi - lo <= max(10, lo // 20):
                    break
                mid = (lo + hi) // 2
                if await probe(mid):
                    lo = mid
                else:
                    hi = mid
            out[variant] = {"rooms": lo, "first_failing": hi, "probes": probes}
            log(f"capacity {variant}: {lo} rooms pass (p99 < {args.capacity_p99_ms:g} ms), "
                f"{hi} fail")
        return out

    async def count_redis(self) -> dict[str, Any]:
        """Redis commands and round trips per accepted action, through a counting proxy."""
        import floor
        from countproxy import CountingProxy, lua_dir_shas, script_shas

        args = self.args
        parsed = redis.connection.parse_url(args.redis_url)
        host, port = parsed.get("host", "127.0.0.1"), parsed.get("port", 6379)
        db = parsed.get("db", 0)
        shas = lua_dir_shas(self.runner.server_tree / "server" / "lua")
        shas.update(script_shas(("floor commit", floor.COMMIT_LUA),
                                ("floor init", floor.INIT_LUA)))
        out: dict[str, Any] = {}
        for variant in ("product", "floor"):
            proxy = CountingProxy(host, port, shas)
            proxy_port = await proxy.start()
            edges: dict[str, tuple[int, dict[str, int]]] = {}
            try:
                res = await self.phase(
                    variant, "closed", args.count_rooms, args.warmup, args.count_seconds, 0,
                    label="redis count", redis_url=f"redis://127.0.0.1:{proxy_port}/{db}",
                    on_edge=lambda edge, proxy=proxy, edges=edges: edges.__setitem__(
                        edge, proxy.snapshot()))
            finally:
                await proxy.close()
            (rt0, c0), (rt1, c1) = edges["start"], edges["end"]
            cmds = {k: c1.get(k, 0) - c0.get(k, 0) for k in sorted(set(c0) | set(c1))
                    if c1.get(k, 0) != c0.get(k, 0)}
            acts = res["accepted"]
            background = sum(v for k, v in cmds.items() if k.startswith("EVALSHA claim"))
            out[variant] = {
                "rooms": args.count_rooms,
                "accepted": acts,
                "round_trips": rt1 - rt0,
                "commands": cmds,
                "sweeper_claims": background,
                "round_trips_per_action": (rt1 - rt0) / acts if acts else None,
                "round_trips_per_action_without_sweeper":
                    (rt1 - rt0 - background) / acts if acts else None,
                "commands_per_action": sum(cmds.values()) / acts if acts else None,
                "server_cpu_us_per_action": res["server_cpu_us_per_action"],
            }
            log(f"  {variant}: {acts} accepted actions, {rt1 - rt0} round trips "
                f"({background} sweeper claims), commands {cmds}")
        return out


def one_line(res: dict) -> str:
    if res.get("failure"):
        return f"FAILED ({res['failure']})"
    errs = sum(res.get("errors", {}).values())
    s = (f"{fmt(res.get('actions_per_second'), ',.0f')} actions/s, play p50 "
         f"{fms(res.get('p50_ms'))} / p99 {fms(res.get('p99_ms'))}")
    if res.get("mode") == "paced":
        s += f" / p99.9 {fms(res.get('p999_ms'))}"
    s += (f" ms ({res.get('plays_timed', 0)} plays); server {fmt(res.get('server_cpu'), '.0%')} "
          f"of a core, {fmt(res.get('server_cpu_us_per_action'), ',.0f')} µs/action; client "
          f"{fmt(res.get('client_cpu'), '.0%')}; others {fmt(res.get('others_cpu'), '.0%')}")
    if res.get("server_rss_mib"):
        s += (f"; server RSS {res['server_rss_mib']:.0f} MiB "
              f"({res.get('server_rss_growth_mib') or 0:+.1f} in the window)")
    if errs or res.get("rejects"):
        s += f"; errors {res.get('errors')}, rejects {res.get('rejects')}"
    if res.get("missed_ticks"):
        s += f"; missed ticks {res['missed_ticks']}"
    if res.get("client_limited"):
        s += "; CLIENT BUSY (>90% of a core)"
    if (res.get("client_gc_max_ms") or 0) > 5:
        s += f"; client GC pause up to {res['client_gc_max_ms']:.0f} ms"
    return s


# --------------------------------------------------------------------------- report
METRICS = ("actions_per_second", "server_cpu_us_per_action", "p50_ms", "p99_ms", "p999_ms",
           "max_ms", "client_gc_max_ms", "server_cpu", "client_cpu", "client_cpu_max_process",
           "client_cpu_us_per_action", "redis_cpu", "others_cpu", "machine_busy")


def summarize(phases: list[dict], variants: list[str]) -> list[dict]:
    """Medians over rounds per (mode, rooms, variant), and product ÷ floor ratios."""
    levels: list[tuple[str, int]] = []
    for ph in phases:
        if ph["label"]:
            continue
        key = (ph["mode"], ph["rooms"])
        if key not in levels:
            levels.append(key)
    out = []
    for mode, rooms in levels:
        level: dict[str, Any] = {"mode": mode, "rooms": rooms, "variants": {}, "ratios": {}}
        for v in variants:
            runs = [p for p in phases if not p["label"] and p["mode"] == mode
                    and p["rooms"] == rooms and p["variant"] == v]
            if not runs:
                continue
            m = {k: med([r.get(k) for r in runs]) for k in METRICS}
            m["rounds"] = len(runs)
            m["plays_timed"] = sum(r.get("plays_timed", 0) for r in runs)
            m["errors"] = sum(sum(r.get("errors", {}).values()) for r in runs)
            m["rejects"] = sum(sum(r.get("rejects", {}).values()) for r in runs)
            m["missed_ticks"] = sum(r.get("missed_ticks", 0) for r in runs)
            m["client_limited_rounds"] = sum(1 for r in runs if r.get("client_limited"))
            m["failed_rounds"] = sum(1 for r in runs if r.get("failure"))
            m["busy_rounds"] = sum(1 for r in runs if r.get("busy"))
            m["p99_ms_rounds"] = [r.get("p99_ms") for r in runs]
            m["cpu_us_rounds"] = [r.get("server_cpu_us_per_action") for r in runs]
            level["variants"][v] = m
        for a, b in PAIRS:
            va, vb = level["variants"].get(a), level["variants"].get(b)
            if va and vb:
                level["ratios"][f"{a}/{b}"] = {
                    "p50": ratio(va["p50_ms"], vb["p50_ms"]),
                    "p99": ratio(va["p99_ms"], vb["p99_ms"]),
                    "p999": ratio(va["p999_ms"], vb["p999_ms"]),
                    "cpu_per_action": ratio(va["server_cpu_us_per_action"],
                                            vb["server_cpu_us_per_action"]),
                    "actions_per_second": ratio(va["actions_per_second"],
                                                vb["actions_per_second"]),
                }
        pm, pr = level["variants"].get("product-memory"), level["variants"].get("product")
        if pm and pr:
            level["ratios"]["product-memory/product"] = {
                "cpu_per_action": ratio(pm["server_cpu_us_per_action"],
                                        pr["server_cpu_us_per_action"]),
                "p99": ratio(pm["p99_ms"], pr["p99_ms"]),
            }
        out.append(level)
    return out


def print_report(summary: list[dict], result: dict) -> None:
    print()
    print(f"Load average at start {result['loadavg_start']}, at end {result['loadavg_end']} "
          f"({result['cpus']} CPUs). Medians over rounds; 'others' is the machine's busy time "
          f"not used by the servers, the client workers, Redis or this process.")
    for level in summary:
        mode, rooms = level["mode"], level["rooms"]
        print()
        if mode == "closed":
            print(f"### Closed loop, {rooms} room{'s' if rooms != 1 else ''} "
                  f"(one action in flight per room)")
            print()
            print("| server | actions/s | server CPU per action | play p50 / p99 | server CPU "
                  "| client CPU | Redis CPU | others | errors | rounds |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        else:
            print(f"### Paced, {rooms} rooms (each room acts once a second)")
            print()
            print("| server | actions/s | play p50 / p99 / p99.9 | server CPU | CPU per action "
                  "| client CPU | Redis CPU | others | missed ticks | errors | rounds |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for v, m in level["variants"].items():
            flag = " ⚠ client busy" if m["client_limited_rounds"] else ""
            busy = f" ({m['busy_rounds']} busy)" if m["busy_rounds"] else ""
            red = fmt(m["redis_cpu"], ".0%") if VARIANTS[v][1] == "redis" else "—"
            if mode == "closed":
                print(f"| {v} | {fmt(m['actions_per_second'], ',.0f')} | "
                      f"{fmt(m['server_cpu_us_per_action'], ',.0f', ' µs')} | "
                      f"{fms(m['p50_ms'])} / {fms(m['p99_ms'])} ms | "
                      f"{fmt(m['server_cpu'], '.0%')} | {fmt(m['client_cpu'], '.0%')}{flag} | "
                      f"{red} | {fmt(m['others_cpu'], '.0%')}{busy} | "
                      f"{m['errors'] + m['rejects']} | {m['rounds']} |")
            else:
                print(f"| {v} | {fmt(m['actions_per_second'], ',.0f')} | "
                      f"{fms(m['p50_ms'])} / {fms(m['p99_ms'])} / {fms(m['p999_ms'])} ms | "
                      f"{fmt(m['server_cpu'], '.0%')} | "
                      f"{fmt(m['server_cpu_us_per_action'], ',.0f', ' µs')} | "
                      f"{fmt(m['client_cpu'], '.0%')}{flag} | {red} | "
                      f"{fmt(m['others_cpu'], '.0%')}{busy} | {m['missed_ticks']} | "
                      f"{m['errors'] + m['rejects']} | {m['rounds']} |")
        for name, r in level["ratios"].items():
            if name == "product-memory/product":
                print(f"\n{name}: CPU per action {fmt(r['cpu_per_action'], '.2f', '×')}, "
                      f"p99 {fmt(r['p99'], '.2f', '×')}")
                continue
            extra = f", p99.9 {fmt(r['p999'], '.1f', '×')}" if mode == "paced" else ""
            print(f"\n**{name}**: p99 **{fmt(r['p99'], '.1f', '×')}**, CPU per action "
                  f"**{fmt(r['cpu_per_action'], '.1f', '×')}** (p50 {fmt(r['p50'], '.1f', '×')}"
                  f"{extra}; actions/s {fmt(r['actions_per_second'], '.2f', '×')})")
    if summary:
        print()
        print("### Ratios (product ÷ floor, medians over rounds)")
        print()
        lane = any("product/floor-lane" in level["ratios"] for level in summary)
        print("| level | p99 | CPU per action | memory: p99 | memory: CPU per action |"
              + (" ÷ floor-lane: p99 | ÷ floor-lane: CPU per action |" if lane else ""))
        print("|---|---:|---:|---:|---:|" + ("---:|---:|" if lane else ""))
        for level in summary:
            a = level["ratios"].get("product/floor", {})
            b = level["ratios"].get("product-memory/floor-memory", {})
            c = level["ratios"].get("product/floor-lane", {})
            print(f"| {level['mode']} {level['rooms']} | {fmt(a.get('p99'), '.1f', '×')} | "
                  f"{fmt(a.get('cpu_per_action'), '.1f', '×')} | "
                  f"{fmt(b.get('p99'), '.1f', '×')} | "
                  f"{fmt(b.get('cpu_per_action'), '.1f', '×')} |"
                  + (f" {fmt(c.get('p99'), '.1f', '×')} | "
                     f"{fmt(c.get('cpu_per_action'), '.1f', '×')} |" if lane else ""))
    cap = result.get("capacity")
    if cap:
        print()
        print(f"### Capacity (paced, p99 < {result['args']['capacity_p99_ms']:g} ms)")
        print()
        print("| server | rooms that pass | fewest that fail | probes (rooms: p99 ms) |")
        print("|---|---:|---:|---|")
        for v, c in cap.items():
            probes = ", ".join(f"{n}: {fms(p['p99_ms'])}{'' if p['ok'] else ' ✗'}"
                               f"{' (busy)' if p.get('busy') else ''}"
                               for n, p in sorted(c["probes"].items()))
            print(f"| {v} | {fmt(c['rooms'], ',')} | {fmt(c['first_failing'], ',')} | "
                  f"{probes} |")
    counts = result.get("redis_counts")
    if counts:
        print()
        print("### Redis per accepted action (counting proxy, closed loop)")
        print()
        for v, c in counts.items():
            print(f"* {v}: {c['accepted']} accepted actions, round trips per action "
                  f"{fmt(c['round_trips_per_action_without_sweeper'], '.3f')} (with the "
                  f"sweeper's claims {fmt(c['round_trips_per_action'], '.3f')}), top-level "
                  f"commands per action {fmt(c['commands_per_action'], '.3f')}: "
                  f"{c['commands']}")
    probes = [p for p in result["phases"] if p.get("probe")]
    if probes:
        print()
        print("### Probe inside each server (GC pauses, event-loop lag), per phase")
        print()
        print("| phase | GC collections (gen 0/1/2) | GC pause total / max | GC share of window "
              "| objects tracked (largest full collection) | loop lag p99 / max "
              "| lags > 50 ms |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for p in probes:
            pr = p["probe"]
            gc_ = pr.get("gc", {})
            lag = pr.get("lag", {})
            counts = "/".join(str(gc_.get(f"gen{g}_count", 0)) for g in (0, 1, 2))
            heap = max(gc_.get("objects_at_full_collections") or [0]) or (
                (pr.get("census") or {}).get("objects"))
            print(f"| {p['label'] or 'round ' + str(p['round'])} {p['mode']} {p['rooms']} "
                  f"{p['variant']} | {counts} | {fms(gc_.get('pause_total_ms'))} / "
                  f"{fms(gc_.get('pause_max_ms'))} ms | "
                  f"{fmt(gc_.get('window_share'), '.1%')} | {fmt(heap, ',')} | "
                  f"{fms(lag.get('p99_ms'))} / {fms(lag.get('max_ms'))} ms | "
                  f"{lag.get('over_50ms', 0)} |")
        print()
        print("Objects tracked by the collector after each window, by type (first 8):")
        for p in probes:
            census = p["probe"].get("census")
            if census:
                top = ", ".join(f"{name} {n:,}" for name, n in census["top_types"][:8])
                print(f"* {p['mode']} {p['rooms']} {p['variant']}: {census['objects']:,} "
                      f"({top})")


# --------------------------------------------------------------------------- main
def git_info(tree: Path, rev: str | None) -> dict[str, Any]:
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=tree, capture_output=True, text=True
                              ).stdout.strip()

    commit = git("rev-parse", rev or "HEAD")
    dirty = [] if rev else git("status", "--porcelain", "--", "server", "engine",
                               "protocol").splitlines()
    return {"tree": str(tree), "commit": commit, "dirty_files": dirty,
            "describe": (f"git archive of {rev} ({commit[:10]})" if rev else
                         f"{tree} at {commit[:10]}"
                         + (f" with {len(dirty)} locally changed file(s)" if dirty else ""))}


def parse_levels(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="See the module docstring (python -c 'help()' or the file) for what is measured.")
    p.add_argument("--quick", action="store_true",
                   help="smoke check: 1 round, closed 1,50, paced 500, short phases, no busy "
                   "retries (~2 min)")
    p.add_argument("--closed", default=None, help="closed-loop levels, rooms (default 1,50,200)")
    p.add_argument("--paced", default=None, help="paced levels, rooms (default 500,2000)")
    p.add_argument("--rate", type=float, default=1.0, help="paced actions per room per second")
    p.add_argument("--rounds", type=int, default=None, help="rounds (default 3)")
    p.add_argument("--seconds", type=float, default=None,
                   help="recorded seconds per closed-loop phase (default 10)")
    p.add_argument("--paced-seconds", type=float, default=None,
                   help="recorded seconds per paced phase (default 20)")
    p.add_argument("--warmup", type=float, default=None,
                   help="seconds before each closed-loop window (default 5)")
    p.add_argument("--paced-warmup", type=float, default=None,
                   help="seconds before each paced window (default 20: the product keeps "
                   "the last 16 versions of each room, so its heap reaches its steady size "
                   "only after about 16 actions per room)")
    p.add_argument("--grace", type=float, default=10.0,
                   help="seconds after a window for its acts to be answered")
    p.add_argument("--variants", default=",".join(DEFAULT_VARIANTS),
                   help="servers to run, in this order (default the first four; "
                        "floor-lane: the floor writing on the product's write lane)")
    p.add_argument("--client-procs", type=int, default=2, help="load client processes")
    p.add_argument("--connect-concurrency", type=int, default=16,
                   help="rooms set up at once per client process")
    p.add_argument("--act-timeout", type=float, default=30.0,
                   help="an act unanswered this long is an error")
    p.add_argument("--setup-timeout", type=float, default=60.0,
                   help="seconds to set rooms up (plus 0.05 s per room)")
    p.add_argument("--capacity", action="store_true", help="also search the capacity")
    p.add_argument("--capacity-variants", default="product,floor")
    p.add_argument("--capacity-p99-ms", type=float, default=100.0)
    p.add_argument("--capacity-start", type=int, default=250)
    p.add_argument("--capacity-min", type=int, default=10)
    p.add_argument("--capacity-max", type=int, default=8000)
    p.add_argument("--capacity-steps", type=int, default=3, help="bisections after doubling")
    p.add_argument("--capacity-seconds", type=float, default=15.0)
    p.add_argument("--capacity-warmup", type=float, default=15.0)
    p.add_argument("--count-redis", action="store_true",
                   help="also count Redis round trips per action through a proxy")
    p.add_argument("--count-rooms", type=int, default=50)
    p.add_argument("--count-seconds", type=float, default=8.0)
    p.add_argument("--probe", action="store_true",
                   help="run the product under bench/probe.py (GC pauses, event-loop lag)")
    p.add_argument("--limits", choices=sorted(LIMITS), default="off",
                   help="the product's limits (docs/protocol.md \"Limits\"): off (default), "
                   "or on at their defaults with the per-address caps raised to fit one "
                   "address; compare paced phases")
    p.add_argument("--redis-url", default=os.environ.get(
        "CRIBBAGE_REDIS_URL", "redis://127.0.0.1:6379/0"))
    p.add_argument("--server-tree", type=Path, default=None,
                   help="run the product from this checkout (default: this repository)")
    p.add_argument("--server-rev", default=None,
                   help="run the product from this git revision (git archive to a temp dir)")
    p.add_argument("--max-others", type=float, default=0.5,
                   help="a phase in which other jobs took more than this share of a core is "
                   "run again (see --busy-retries)")
    p.add_argument("--busy-retries", type=int, default=None,
                   help="how often a phase is run again when the machine was busy (default "
                   "1; 0 with --quick)")
    p.add_argument("--busy-wait", type=float, default=20.0,
                   help="seconds to wait before running a busy phase again")
    p.add_argument("--max-minutes", type=float, default=150.0, help="hard stop for the run")
    p.add_argument("--json", type=Path, default=None, help="also write everything here")
    p.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                   help="set a variable in the servers' environment (after CRIBBAGE_* are "
                   "removed), e.g. CRIBBAGE_GC_FULL_PASS_SECONDS=60; repeatable")
    p.add_argument("--keep-logs", action="store_true",
                   help="keep the servers' and clients' logs (kept anyway when a phase fails)")
    args = p.parse_args(argv)
    quick = args.quick
    args.closed = args.closed if args.closed is not None else ("1,50" if quick else "1,50,200")
    args.paced = args.paced if args.paced is not None else ("500" if quick else "500,2000")
    args.rounds = args.rounds or (1 if quick else 3)
    args.seconds = args.seconds or (4.0 if quick else 10.0)
    args.paced_seconds = args.paced_seconds or (6.0 if quick else 20.0)
    args.warmup = args.warmup if args.warmup is not None else (2.0 if quick else 5.0)
    if args.busy_retries is None:
        args.busy_retries = 0 if quick else 1
    if args.paced_warmup is None:
        args.paced_warmup = 4.0 if quick else 20.0
    if quick:
        args.grace = min(args.grace, 5.0)
    args.closed_levels = parse_levels(args.closed)
    args.paced_levels = parse_levels(args.paced)
    args.variant_list = [v.strip() for v in args.variants.split(",") if v.strip()]
    args.capacity_variant_list = [v.strip() for v in args.capacity_variants.split(",")
                                  if v.strip()]
    for v in args.variant_list + args.capacity_variant_list:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r} (choose from {', '.join(VARIANTS)})")
    return args


async def run(args: argparse.Namespace, runner: Runner, result: dict) -> None:
    parsed = redis.connection.parse_url(args.redis_url)
    r = redis.Redis(host=parsed.get("host", "127.0.0.1"), port=parsed.get("port", 6379),
                    db=parsed.get("db", 0), socket_timeout=10)
    r.ping()
    redis_pid = r.info("server").get("process_id")
    redis_pid = int(redis_pid) if redis_pid and Path(f"/proc/{redis_pid}").exists() else None
    base_prefix = f"bench:{secrets.token_hex(4)}:"
    result["prefix"] = base_prefix
    log(f"Redis {args.redis_url} (pid {redis_pid or 'not on this machine'}), key prefix "
        f"{base_prefix!r}; logs in {runner.logdir}")
    workers = Workers(runner, args.client_procs)
    bench = Bench(args, runner, workers, r, redis_pid, base_prefix)
    result["phases"] = bench.phases
    result["discarded_busy_phases"] = bench.discarded
    try:
        await workers.start()
        log(f"{args.client_procs} client processes: pids {workers.pids}")
        await bench.run_levels()
        result["summary"] = summarize(bench.phases, args.variant_list)
        if args.count_redis:
            log(f"Redis round trips: {args.count_rooms} closed-loop rooms through a proxy")
            result["redis_counts"] = await bench.count_redis()
        if args.capacity:
            log("capacity search")
            result["capacity"] = await bench.capacity()
    finally:
        result["stacks"] = runner.stacks
        await workers.stop()
        runner.stop_all()
        with contextlib.suppress(Exception):
            result["keys_deleted_at_end"] = bench.cleanup(base_prefix)
        r.close()


def server_checkout(args: argparse.Namespace
                    ) -> tuple[Path, dict[str, Any], tempfile.TemporaryDirectory | None]:
    """Where the server under test comes from (``--server-tree``, ``--server-rev``):
    ``(tree, git_info, temporary directory to clean up or None)``."""
    tmp_tree: tempfile.TemporaryDirectory | None = None
    server_tree = (args.server_tree or ROOT).resolve()
    git = git_info(server_tree, args.server_rev)
    if args.server_rev:
        tmp_tree = tempfile.TemporaryDirectory(prefix="bench-latency-tree-")
        archive = subprocess.run(["git", "archive", git["commit"]], cwd=server_tree,
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp_tree.name], input=archive, check=True)
        server_tree = Path(tmp_tree.name)
    return server_tree, git, tmp_tree


def run_bounded(run_it: Any, minutes: float, runner: Runner, result: dict[str, Any],
                tmp_tree: tempfile.TemporaryDirectory | None) -> bool:
    """Run the coroutine ``run_it()`` on uvloop (if installed) for at most ``minutes``,
    cancelled by SIGINT or SIGTERM; every process is stopped afterwards. Returns False (and
    notes the failure in ``result``) when it failed."""

    async def guarded() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        await asyncio.wait_for(run_it(), minutes * 60)

    ok = True
    try:
        try:
            import uvloop

            uvloop.run(guarded())
        except ImportError:
            asyncio.run(guarded())
    except (Exception, asyncio.CancelledError, KeyboardInterrupt) as exc:
        ok = False
        result["failure"] = f"{type(exc).__name__}: {exc}"
        log(f"RUN FAILED: {result['failure']}")
    finally:
        runner.stop_all()
        if tmp_tree is not None:
            tmp_tree.cleanup()
    return ok


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    server_tree, git, tmp_tree = server_checkout(args)
    sys.path.insert(0, str(BENCH))
    runner = Runner(args, server_tree)
    started = datetime.datetime.now(datetime.UTC)
    result: dict[str, Any] = {
        "started": started.isoformat(), "cpus": os.cpu_count(),
        "loadavg_start": os.getloadavg(), "python": platform.python_version(),
        "server_code": git, "command": " ".join(["python", *sys.argv]),
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
    }
    phases = (len(args.closed_levels) + len(args.paced_levels)) * len(args.variant_list) \
        * args.rounds
    est = args.rounds * len(args.variant_list) * (
        len(args.closed_levels) * (args.seconds + args.warmup + 6)
        + len(args.paced_levels) * (args.paced_seconds + args.paced_warmup + 10))
    log(f"start {started:%Y-%m-%d %H:%M:%S} UTC; {os.cpu_count()} CPUs; load average "
        f"{result['loadavg_start']}; python {result['python']}")
    log(f"product code: {git['describe']}; {phases} phases, roughly {est / 60:.0f} min "
        f"(more for large levels{', plus the capacity search' if args.capacity else ''})")

    ok = run_bounded(lambda: run(args, runner, result), args.max_minutes, runner, result,
                     tmp_tree)
    failed = [p for p in result.get("phases", []) if p.get("failure") and not p["label"]]
    if ok and not failed and not args.keep_logs:
        shutil.rmtree(runner.logdir, ignore_errors=True)
    else:
        log(f"server and client logs kept in {runner.logdir}")
    result["loadavg_end"] = os.getloadavg()
    result["seconds_total"] = time.monotonic() - RUN_T0
    if "summary" not in result and result.get("phases"):
        result["summary"] = summarize(result["phases"], args.variant_list)
    print_report(result.get("summary", []), result)
    log(f"done in {result['seconds_total']:.0f}s; load average at end {result['loadavg_end']}; "
        f"{result.get('keys_deleted_at_end', 0)} keys left under the prefix were deleted")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, default=str))
        log(f"wrote {args.json}")
    if failed:
        log(f"{len(failed)} phase(s) failed")
    return 0 if ok and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
