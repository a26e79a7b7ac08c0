"""Round trip of a played card over ``/ws``, against Redis, next to a bare WebSocket echo.

One run, from the repository root::

    python bench/ws_roundtrip.py                 # levels 1, 50, 200; about 2.5 minutes
    python bench/ws_roundtrip.py --levels 1,50 --seconds 5 --warmup 2   # quicker

What it does (everything on loopback; every loop bounded in count and time):

1. Starts two processes with uvicorn's default stack (uvloop, httptools,
   websockets-sansio) and no permessage-deflate: the cribbage server
   (``python -m server --redis-url ... --key-prefix bench:<random>:``) and the bare
   starlette echo ``bench/echo_server.py``.
2. For each level N (default 1, 50, 200), first the **echo**: N pairs of connections
   (2N connections); in each pair the two connections take turns sending a frame the size
   of a ``play`` act and waiting for it to come back, so one message is in flight per pair.
   Then the **game**: N 2-player rooms (2N connections, ``protocol.client.Client``), each
   seat playing legal moves computed from its own view only — discard the first cards of
   ``hand``, on its turn play the first card of ``hand`` that keeps the count at 31 or
   under, seat 0 asks for a rematch at game over — so games run on for the whole window.
   Only ``play`` actions are timed: from just before the ``act`` frame is sent to the
   moment the client's reader sees the acting seat's **own ``update``** carrying that play
   (the ``ack`` follows it; its time is reported too). Each phase warms up for
   ``--warmup`` seconds, then records for ``--seconds``.
3. **Redis round trips per accepted action**: a third server process is pointed at a small
   counting TCP proxy in this process (``redis://127.0.0.1:<proxy>/0`` → the real Redis),
   and ``--count-rooms`` rooms play for ``--count-seconds``. The proxy parses every request
   (RESP) the server sends, so it counts top-level commands by name (``EVALSHA`` resolved
   to the ``server/lua`` script) and round trips (a request sent after the previous reply
   came back: a pipeline or a script is one). It sees only that server's connections, so
   other users of the same Redis do not pollute the count (``INFO`` deltas are printed
   beside it as a cross-check, and do include other users). The proxy is not in the path
   of the timed phases.
4. Stops everything and deletes the keys under its prefix.

Results are printed (and written as JSON with ``--json PATH``). See docs/performance.md,
"WebSocket round trip".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import hashlib
import json
import os
import platform
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import redis  # noqa: E402
import websockets  # noqa: E402

from protocol.client import Client, ClientError  # noqa: E402

CARD_VALUES = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}
CARD_VALUES.update({str(d): d for d in range(2, 10)})

PLAY_FRAME = json.dumps(
    {"type": "act", "action_id": "0123abcd-17", "action": {"type": "play", "card": "5H"}},
    separators=(",", ":"),
)

_children: list[subprocess.Popen] = []


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# --------------------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SERVER_TREE = ROOT  # where the cribbage server's code is run from (--server-rev)


def start_process(
    cmd: list[str], name: str, tree: Path | None = None
) -> tuple[subprocess.Popen, Path]:
    logfile = Path(tempfile.gettempdir()) / f"ws_roundtrip-{name}-{os.getpid()}.log"
    out = open(logfile, "wb")  # noqa: SIM115 (kept open for the child)
    tree = tree or ROOT
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tree), *filter(None, [os.environ.get("PYTHONPATH")])]))
    proc = subprocess.Popen(cmd, cwd=tree, stdout=out, stderr=subprocess.STDOUT, env=env)
    log(f"{name}: pid {proc.pid}, log {logfile}")
    _children.append(proc)
    return proc, logfile


def wait_ready(proc: subprocess.Popen, port: int, logfile: Path, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"process exited ({proc.returncode}); log:\n{logfile.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"not ready on port {port} after {timeout}s; log:\n{logfile.read_text()}")


def stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def stop_children() -> None:
    for proc in _children:
        with contextlib.suppress(Exception):
            stop_process(proc)


def proc_cpu_seconds(pid: int) -> float | None:
    """utime + stime of a process (all threads), from /proc."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def self_cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def mapped_libs(pid: int) -> list[str]:
    """Which of uvloop / httptools are loaded in a process (from /proc/<pid>/maps)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return []
    return [lib for lib in ("uvloop", "httptools") if f"/{lib}/" in maps]


# --------------------------------------------------------------------------- statistics
def pct(samples: list[float], p: float) -> float | None:
    if not samples:
        return None
    s = sorted(samples)
    k = max(0, min(len(s) - 1, int(round(p / 100 * len(s) + 0.5)) - 1))
    return s[k]


@dataclass
class Window:
    """The recording window of one phase, and the CPU used by each process in it."""

    start: float
    end: float
    pids: dict[str, int]
    cpu0: dict[str, float | None] = field(default_factory=dict)
    cpu1: dict[str, float | None] = field(default_factory=dict)

    def inside(self, t: float) -> bool:
        return self.start <= t < self.end

    def snap(self) -> dict[str, float | None]:
        out: dict[str, float | None] = {"client": self_cpu_seconds()}
        for name, pid in self.pids.items():
            out[name] = proc_cpu_seconds(pid)
        return out

    def cpu_share(self) -> dict[str, float | None]:
        span = self.end - self.start
        return {
            k: (None if self.cpu0.get(k) is None or self.cpu1.get(k) is None
                else (self.cpu1[k] - self.cpu0[k]) / span)
            for k in self.cpu0
        }


async def run_window(win: Window, label: str, progress: Any) -> None:
    """Take CPU snapshots at the window's edges and print progress every 5 s."""
    await asyncio.sleep(max(0.0, win.start - time.perf_counter()))
    win.cpu0 = win.snap()
    next_print = win.start + 5
    while time.perf_counter() < win.end:
        await asyncio.sleep(min(0.5, max(0.0, win.end - time.perf_counter())))
        if time.perf_counter() >= next_print and time.perf_counter() < win.end:
            log(f"  {label}: {time.perf_counter() - win.start:4.1f}s recorded, {progress()}")
            next_print += 5
    win.cpu1 = win.snap()


# --------------------------------------------------------------------------- echo baseline
async def echo_level(url: str, pairs: int, args: argparse.Namespace, pids: dict) -> dict:
    sem = asyncio.Semaphore(args.connect_concurrency)

    async def open_one() -> Any:
        async with sem:
            return await websockets.connect(
                url, open_timeout=10, compression=None, max_size=4 * 1024 * 1024
            )

    t = time.monotonic()
    conns = await asyncio.wait_for(
        asyncio.gather(*(open_one() for _ in range(2 * pairs))), args.setup_timeout
    )
    log(f"  echo: {len(conns)} connections open in {time.monotonic() - t:.1f}s")
    w0 = time.perf_counter() + args.warmup
    win = Window(w0, w0 + args.seconds, pids)
    samples: list[float] = []
    errors = 0

    async def pair_loop(a: Any, b: Any) -> None:
        nonlocal errors
        i = 0
        while time.perf_counter() < win.end and i < args.max_ops_per_loop:
            ws = b if i & 1 else a
            i += 1
            t0 = time.perf_counter()
            try:
                await ws.send(PLAY_FRAME)
                reply = await asyncio.wait_for(ws.recv(), args.act_timeout)
            except Exception:
                errors += 1
                return
            t1 = time.perf_counter()
            json.loads(reply)
            if win.inside(t0):
                samples.append(t1 - t0)

    await asyncio.gather(
        run_window(win, f"echo {pairs}", lambda: f"{len(samples)} messages"),
        *(pair_loop(conns[2 * k], conns[2 * k + 1]) for k in range(pairs)),
    )
    await asyncio.wait_for(
        asyncio.gather(*(c.close() for c in conns), return_exceptions=True), 20
    )
    return {
        "pairs": pairs,
        "messages": len(samples),
        "per_second": len(samples) / args.seconds,
        "p50_ms": _ms(pct(samples, 50)),
        "p99_ms": _ms(pct(samples, 99)),
        "errors": errors,
        "cpu": win.cpu_share(),
        "server_cpu_us_per_message": per_op(win, "server", len(samples)),
        "client_cpu_us_per_message": per_op(win, "client", len(samples)),
    }


def per_op(win: Window, who: str, ops: int) -> float | None:
    """CPU microseconds of ``who`` in the window per operation counted in it."""
    share = win.cpu_share().get(who)
    if share is None or not ops:
        return None
    return share * (win.end - win.start) / ops * 1e6


def _ms(x: float | None) -> float | None:
    return None if x is None else x * 1000


# --------------------------------------------------------------------------- game level
class BenchClient(Client):
    """The protocol client, counting the snapshots it gets after joining (the server sends one
    instead of an update when it could not deliver versions in order within 5 s)."""

    snapshots = 0

    def _handle(self, frame: dict) -> None:
        if frame.get("type") == "snapshot":
            self.snapshots += 1
        super()._handle(frame)


def card_value(card: str) -> int:
    return CARD_VALUES[card[0]]


def next_move(c: Client) -> dict | None:
    """A legal action for this seat, from its view only (None: nothing to do now)."""
    v = c.view
    if v is None or c.seat is None:
        return None
    me = c.seat
    phase = v.get("phase")
    if phase == "discard":
        if not v["discarded"][me] and len(v["hand"]) > 4:
            return {"type": "discard", "cards": v["hand"][: len(v["hand"]) - 4]}
        return None
    if phase == "play":
        if v.get("turn") == me:
            room = 31 - v["count"]
            for card in v["hand"]:
                if card_value(card) <= room:
                    return {"type": "play", "card": card}
        return None
    if phase == "game_over" and me == 0:
        return {"type": "rematch"}
    return None


@dataclass
class GameStats:
    play_update: list[float] = field(default_factory=list)
    play_ack: list[float] = field(default_factory=list)
    other_ack: list[float] = field(default_factory=list)  # discards and rematches
    accepted: int = 0
    plays: int = 0
    rejects: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    games_finished: int = 0

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


async def open_rooms(url: str, rooms: int, args: argparse.Namespace) -> list[Client]:
    sem = asyncio.Semaphore(max(1, args.connect_concurrency // 2))

    async def one(i: int) -> list[Client]:
        async with sem:
            a = await BenchClient.connect(url, name=f"a{i}", record=False, validate=False,
                                          timeout=10)
            b = await BenchClient.connect(url, name=f"b{i}", record=False, validate=False,
                                          timeout=10)
            created = await a.create_room({"players": 2})
            await a.join(created["room"], 0, timeout=10)
            await b.join(created["room"], 1, timeout=10)
            return [a, b]

    groups = await asyncio.wait_for(
        asyncio.gather(*(one(i) for i in range(rooms))), args.setup_timeout
    )
    return [c for g in groups for c in g]


async def play_window(
    clients: list[Client], label: str, args: argparse.Namespace, pids: dict, seconds: float,
    w0: float,
) -> tuple[GameStats, Window]:
    win = Window(w0, w0 + seconds, pids)
    st = GameStats()

    async def seat_loop(c: Client) -> None:
        me = c.seat
        n = 0
        while time.perf_counter() < win.end and n < args.max_ops_per_loop:
            n += 1
            remaining = win.end - time.perf_counter()
            if remaining <= 0:
                break
            try:
                await c.wait_until(lambda cl: next_move(cl) is not None or cl.closed.is_set(),
                                   timeout=min(remaining, args.act_timeout))
            except TimeoutError:
                if time.perf_counter() < win.end:
                    st.error("stalled")
                continue
            if c.closed.is_set():
                st.error("closed")
                return
            action = next_move(c)
            if action is None:
                continue
            aid = c.new_action_id()
            marks: dict[str, float] = {}
            is_play = action["type"] == "play"
            upd_fut = None
            if is_play:
                card = action["card"]

                def own_update(f: dict, card: str = card, marks: dict = marks) -> bool:
                    if f.get("type") != "update":
                        return False
                    for e in f.get("events", ()):
                        if e.get("type") == "play" and e.get("seat") == me and e["card"] == card:
                            marks["update"] = time.perf_counter()
                            return True
                    return False

                upd_fut = c._expect(own_update)

            def answer(f: dict, aid: str = aid, marks: dict = marks) -> bool:
                # One act is in flight per connection, so an ``error`` about an ``act``
                # (e.g. ``internal``) is this action's answer.
                hit = (f.get("type") in ("ack", "reject") and f.get("action_id") == aid) or (
                    f.get("type") == "error" and f.get("ref") == "act")
                if hit:
                    marks["answer"] = time.perf_counter()
                return hit

            t0 = time.perf_counter()
            try:
                reply = await c.request(
                    {"type": "act", "action_id": aid, "action": action}, answer, args.act_timeout
                )
            except TimeoutError:
                st.error("act_timeout")
                continue
            except ClientError as exc:
                if exc.code == "closed":
                    st.error("closed")
                    return
                st.error(f"error {exc.code}")  # the move is tried again with a new id
                continue
            except Exception as exc:
                st.error(type(exc).__name__)
                return
            finally:
                if upd_fut is not None and not upd_fut.done():
                    upd_fut.cancel()
            if reply["type"] == "reject":
                st.rejects[reply["code"]] = st.rejects.get(reply["code"], 0) + 1
                continue
            if not win.inside(t0):
                continue
            st.accepted += 1
            if action["type"] == "rematch":
                st.games_finished += 1
            if not is_play:
                st.other_ack.append(marks["answer"] - t0)
            if is_play:
                st.plays += 1
                if "update" in marks:
                    st.play_update.append(marks["update"] - t0)
                else:
                    st.error("play_without_own_update")
                st.play_ack.append(marks["answer"] - t0)

    await asyncio.gather(
        run_window(win, label, lambda: f"{st.plays} plays, {st.accepted} actions, "
                   f"errors {st.errors or 0}"),
        *(seat_loop(c) for c in clients),
    )
    return st, win


async def close_clients(clients: list[Client]) -> None:
    await asyncio.wait_for(
        asyncio.gather(*(c.close() for c in clients), return_exceptions=True), 30
    )


async def game_level(url: str, rooms: int, args: argparse.Namespace, pids: dict) -> dict:
    t = time.monotonic()
    clients = await open_rooms(url, rooms, args)
    log(f"  game: {rooms} rooms ({len(clients)} connections) seated in "
        f"{time.monotonic() - t:.1f}s")
    try:
        st, win = await play_window(
            clients, f"game {rooms}", args, pids, args.seconds, time.perf_counter() + args.warmup
        )
    finally:
        problems = sum(len(c.problems) for c in clients)
        snapshots = sum(getattr(c, "snapshots", 0) for c in clients) - len(clients)
        await close_clients(clients)
    return {
        "rooms": rooms,
        "plays": st.plays,
        "actions": st.accepted,
        "plays_per_second": st.plays / args.seconds,
        "actions_per_second": st.accepted / args.seconds,
        "games_finished": st.games_finished,
        "update_p50_ms": _ms(pct(st.play_update, 50)),
        "update_p99_ms": _ms(pct(st.play_update, 99)),
        "ack_p50_ms": _ms(pct(st.play_ack, 50)),
        "ack_p99_ms": _ms(pct(st.play_ack, 99)),
        "rejects": st.rejects,
        "errors": st.errors,
        "client_problems": problems,
        "late_snapshots": snapshots,
        "other_ack_p50_ms": _ms(pct(st.other_ack, 50)),
        "other_ack_p99_ms": _ms(pct(st.other_ack, 99)),
        "play_update_max_ms": _ms(max(st.play_update, default=None)),
        "plays_over_1s": sum(1 for x in st.play_update if x > 1.0),
        "cpu": win.cpu_share(),
        "server_cpu_us_per_action": per_op(win, "server", st.accepted),
        "client_cpu_us_per_action": per_op(win, "client", st.accepted),
    }


# --------------------------------------------------------------------------- Redis counting
class CountingProxy:
    """A TCP proxy to Redis that parses requests (RESP arrays) to count commands by name and
    round trips (the first request written after the previous reply, per connection)."""

    def __init__(self, upstream_host: str, upstream_port: int, scripts: dict[str, str]) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.scripts = scripts  # sha1 -> script name
        self.commands: dict[str, int] = {}
        self.round_trips = 0
        self.connections = 0
        self.server: asyncio.base_events.Server | None = None
        self.tasks: set[asyncio.Task] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    def snapshot(self) -> tuple[int, dict[str, int]]:
        return self.round_trips, dict(self.commands)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        state = {"waiting": False}
        t1 = asyncio.create_task(self._client_to_redis(reader, up_w, state))
        t2 = asyncio.create_task(self._redis_to_client(up_r, writer, state))
        self.tasks.update((t1, t2))
        try:
            await asyncio.wait({t1, t2}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (t1, t2):
                t.cancel()
                self.tasks.discard(t)
            for w in (writer, up_w):
                with contextlib.suppress(Exception):
                    w.close()

    async def _client_to_redis(self, reader, up_w, state) -> None:
        buf = bytearray()
        while True:
            data = await reader.read(65536)
            if not data:
                return
            if not state["waiting"]:
                state["waiting"] = True
                self.round_trips += 1
            buf += data
            consumed = self._parse(buf)
            if consumed:
                del buf[:consumed]
            up_w.write(data)
            await up_w.drain()

    async def _redis_to_client(self, up_r, writer, state) -> None:
        while True:
            data = await up_r.read(65536)
            if not data:
                return
            state["waiting"] = False
            writer.write(data)
            await writer.drain()

    def _parse(self, buf: bytearray) -> int:
        """Count every complete request in ``buf``; returns the bytes consumed."""
        pos = 0
        n = len(buf)
        while pos < n:
            if buf[pos] != 0x2A:  # '*'; inline commands (not sent by redis-py)
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    return pos
                name = bytes(buf[pos:eol]).split(b" ", 1)[0].decode(errors="replace").upper()
                self._count(name, None)
                pos = eol + 2
                continue
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                return pos
            count = int(buf[pos + 1:eol])
            p = eol + 2
            parts: list[bytes] = []
            complete = True
            for i in range(count):
                eol = buf.find(b"\r\n", p)
                if eol < 0:
                    complete = False
                    break
                length = int(buf[p + 1:eol])
                start = eol + 2
                if start + length + 2 > n:
                    complete = False
                    break
                if i < 2:
                    parts.append(bytes(buf[start:start + length]))
                p = start + length + 2
            if not complete:
                return pos
            name = parts[0].decode(errors="replace").upper() if parts else "?"
            self._count(name, parts[1].decode(errors="replace") if len(parts) > 1 else None)
            pos = p
        return pos

    def _count(self, name: str, arg: str | None) -> None:
        if name == "EVALSHA" and arg is not None:
            name = f"EVALSHA {self.scripts.get(arg.lower(), arg[:8])}"
        self.commands[name] = self.commands.get(name, 0) + 1


def lua_shas() -> dict[str, str]:
    out = {}
    for path in sorted((SERVER_TREE / "server" / "lua").glob("*.lua")):
        out[hashlib.sha1(path.read_text(encoding="utf-8").encode()).hexdigest()] = path.name
    return out


def redis_info(r: redis.Redis) -> dict[str, Any]:
    stats = r.info("stats")
    cmd = r.info("commandstats")
    return {
        "total_commands_processed": stats.get("total_commands_processed"),
        "commandstats": {k.removeprefix("cmdstat_"): v.get("calls", 0) for k, v in cmd.items()},
    }


def diff_counts(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    keys = sorted(set(a) | set(b))
    return {k: b.get(k, 0) - a.get(k, 0) for k in keys if b.get(k, 0) != a.get(k, 0)}


async def count_phase(
    args: argparse.Namespace, prefix: str, r: redis.Redis, host: str, port: int, db: int
) -> dict:
    query = "?" + args.redis_url.split("?", 1)[1] if "?" in args.redis_url else ""
    proxy = CountingProxy(host, port, lua_shas())
    proxy_port = await proxy.start()
    srv_port = free_port()
    proc, logfile = start_process(
        [sys.executable, "-m", "server", "--port", str(srv_port),
         "--redis-url", f"redis://127.0.0.1:{proxy_port}/{db}{query}", "--key-prefix", prefix,
         "--log-level", "warning"],
        "count-server", SERVER_TREE,
    )
    try:
        await asyncio.to_thread(wait_ready, proc, srv_port, logfile)
        url = f"ws://127.0.0.1:{srv_port}/ws"
        clients = await open_rooms(url, args.count_rooms, args)
        log(f"  count: {args.count_rooms} rooms seated through the proxy "
            f"({proxy.connections} server connections to Redis so far)")
        snap: dict[str, Any] = {}
        w0 = time.perf_counter() + args.warmup

        async def edges() -> None:
            await asyncio.sleep(max(0.0, w0 - time.perf_counter()))
            snap["p0"] = proxy.snapshot()
            snap["i0"] = await asyncio.to_thread(redis_info, r)
            await asyncio.sleep(max(0.0, w0 + args.count_seconds - time.perf_counter()))
            snap["p1"] = proxy.snapshot()
            snap["i1"] = await asyncio.to_thread(redis_info, r)

        try:
            # The window's clients count actions whose act was sent inside it; the proxy
            # snapshots bracket the same span (both start after the same warm-up).
            (st, win), _ = await asyncio.gather(
                play_window(clients, f"count {args.count_rooms}", args, {"server": proc.pid},
                            args.count_seconds, w0),
                edges(),
            )
        finally:
            await close_clients(clients)
    finally:
        stop_process(proc)
        await proxy.close()
    rt0, c0 = snap["p0"]
    rt1, c1 = snap["p1"]
    cmds = diff_counts(c0, c1)
    sweeper = sum(v for k, v in cmds.items() if k.startswith("EVALSHA claim"))
    total_cmds = sum(cmds.values())
    rts = rt1 - rt0
    acts = st.accepted
    info_total = snap["i1"]["total_commands_processed"] - snap["i0"]["total_commands_processed"]
    info_cmds = diff_counts(snap["i0"]["commandstats"], snap["i1"]["commandstats"])
    return {
        "rooms": args.count_rooms,
        "seconds": args.count_seconds,
        "accepted_actions": acts,
        "plays": st.plays,
        "round_trips": rts,
        "commands": cmds,
        "sweeper_commands": sweeper,
        "round_trips_per_action": rts / acts if acts else None,
        "round_trips_per_action_excl_sweeper": (rts - sweeper) / acts if acts else None,
        "commands_per_action": total_cmds / acts if acts else None,
        "info_total_commands_delta": info_total,
        "info_commandstats_delta": info_cmds,
        "errors": st.errors,
        "rejects": st.rejects,
    }


# --------------------------------------------------------------------------- main
def cleanup_keys(r: redis.Redis, prefix: str) -> int:
    deleted = 0
    cursor = 0
    for _ in range(100_000):  # bounded
        cursor, keys = r.scan(cursor=cursor, match=f"{prefix}*", count=1000)
        if keys:
            deleted += r.unlink(*keys)
        if cursor == 0:
            break
    return deleted


def ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else a / b


def fmt(x: float | None, spec: str = ".2f") -> str:
    return "—" if x is None else format(x, spec)


async def run(args: argparse.Namespace) -> dict:
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    parsed = redis.connection.parse_url(args.redis_url)
    host, port, db = parsed.get("host", "127.0.0.1"), parsed.get("port", 6379), parsed.get("db", 0)
    r = redis.Redis(host=host, port=port, db=db, socket_timeout=10)
    r.ping()
    redis_pid = r.info("server").get("process_id")
    prefix = f"bench:{secrets.token_hex(4)}:"

    echo_port, game_port = free_port(), free_port()
    echo_proc, echo_log = start_process(
        [sys.executable, str(ROOT / "bench" / "echo_server.py"), "--port", str(echo_port)], "echo"
    )
    game_proc, game_log = start_process(
        [sys.executable, "-m", "server", "--port", str(game_port), "--redis-url",
         args.redis_url, "--key-prefix", prefix, "--log-level", "warning"],
        "server", SERVER_TREE,
    )
    result: dict[str, Any] = {"levels": [], "prefix": prefix}
    try:
        await asyncio.to_thread(wait_ready, echo_proc, echo_port, echo_log)
        await asyncio.to_thread(wait_ready, game_proc, game_port, game_log)
        stacks = {"echo": mapped_libs(echo_proc.pid), "server": mapped_libs(game_proc.pid)}
        log(f"echo server pid {echo_proc.pid} port {echo_port}, loaded: {stacks['echo']}")
        log(f"cribbage server pid {game_proc.pid} port {game_port}, Redis {args.redis_url} "
            f"prefix {prefix!r}, loaded: {stacks['server']}")
        result["stacks"] = stacks
        for n in levels:
            log(f"level {n}: echo, {n} pairs")
            pids = {"server": echo_proc.pid}
            echo = await echo_level(f"ws://127.0.0.1:{echo_port}/ws", n, args, pids)
            log(f"  echo {n}: p50 {fmt(echo['p50_ms'], '.3f')} ms, p99 "
                f"{fmt(echo['p99_ms'], '.3f')} ms, {echo['per_second']:.0f} msg/s")
            log(f"level {n}: game, {n} rooms")
            pids = {"server": game_proc.pid}
            if redis_pid:
                pids["redis"] = int(redis_pid)
            game = await game_level(f"ws://127.0.0.1:{game_port}/ws", n, args, pids)
            log(f"  game {n}: play→own update p50 {fmt(game['update_p50_ms'], '.3f')} ms, "
                f"p99 {fmt(game['update_p99_ms'], '.3f')} ms, {game['actions_per_second']:.0f} "
                f"actions/s ({game['plays_per_second']:.0f} plays/s)")
            result["levels"].append({"n": n, "echo": echo, "game": game})
            for name, proc in (("echo", echo_proc), ("server", game_proc)):
                if proc.poll() is not None:
                    raise SystemExit(f"{name} server died")
        if args.count_rooms > 0:
            log(f"Redis round trips: {args.count_rooms} rooms through a counting proxy")
            result["redis"] = await count_phase(args, prefix, r, host, port, db)
            red = result["redis"]
            log(f"  {red['accepted_actions']} accepted actions, {red['round_trips']} round trips "
                f"({red['sweeper_commands']} of them sweeper claims), commands {red['commands']}")
    finally:
        stop_process(game_proc)
        stop_process(echo_proc)
        with contextlib.suppress(Exception):
            result["keys_deleted"] = cleanup_keys(r, prefix)
            log(f"deleted {result['keys_deleted']} keys under {prefix!r}")
    return result


def report(result: dict, args: argparse.Namespace) -> None:
    print()
    print("| level | echo p50 / p99 ms | echo msg/s | play→own update p50 / p99 ms | "
          "(→ack p50 / p99) | actions/s (plays/s) | p50 ratio | p99 ratio | rate ratio | "
          "failed acts |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for lv in result["levels"]:
        e, g = lv["echo"], lv["game"]
        print(
            f"| {lv['n']} | {fmt(e['p50_ms'], '.3f')} / {fmt(e['p99_ms'], '.3f')} | "
            f"{e['per_second']:,.0f} | {fmt(g['update_p50_ms'], '.3f')} / "
            f"{fmt(g['update_p99_ms'], '.3f')} | {fmt(g['ack_p50_ms'], '.3f')} / "
            f"{fmt(g['ack_p99_ms'], '.3f')} | {g['actions_per_second']:,.0f} "
            f"({g['plays_per_second']:,.0f}) | "
            f"{fmt(ratio(g['update_p50_ms'], e['p50_ms']), '.1f')}× | "
            f"{fmt(ratio(g['update_p99_ms'], e['p99_ms']), '.1f')}× | "
            f"{fmt(ratio(g['actions_per_second'], e['per_second']), '.2f')}× | "
            f"{sum(g['errors'].values())} |"
        )
    print()
    print("CPU (fraction of one core during each recorded window):")
    for lv in result["levels"]:
        e, g = lv["echo"], lv["game"]
        show = lambda d: ", ".join(f"{k} {fmt(v, '.2f')}" for k, v in d.items())  # noqa: E731
        print(f"  level {lv['n']}: echo [{show(e['cpu'])}]; game [{show(g['cpu'])}]")
        if g["errors"] or g["rejects"] or e["errors"] or g["client_problems"]:
            print(f"    errors: echo {e['errors']}, game {g['errors']}, rejects {g['rejects']}, "
                  f"client problems {g['client_problems']}")
        print(f"    server CPU per accepted action {fmt(g['server_cpu_us_per_action'], '.0f')} µs"
              f" (client {fmt(g['client_cpu_us_per_action'], '.0f')} µs); echo server CPU per "
              f"message {fmt(e['server_cpu_us_per_message'], '.0f')} µs "
              f"(client {fmt(e['client_cpu_us_per_message'], '.0f')} µs)")
    red = result.get("redis")
    if red:
        print()
        print(f"Redis, {red['rooms']} rooms for {red['seconds']}s through the counting proxy: "
              f"{red['accepted_actions']} accepted actions ({red['plays']} plays), "
              f"{red['round_trips']} round trips, of which {red['sweeper_commands']} sweeper "
              f"claims (every 0.1 s, not per action).")
        per = fmt(red["round_trips_per_action_excl_sweeper"], ".3f")
        print(f"  round trips per accepted action: {per} (with the sweeper: "
              f"{fmt(red['round_trips_per_action'], '.3f')}); top-level commands per action "
              f"{fmt(red['commands_per_action'], '.3f')}; by name: {red['commands']}")
        print(f"  INFO delta over the same span (all clients of this Redis, script-internal "
              f"calls included in commandstats): total_commands_processed "
              f"{red['info_total_commands_delta']}, commandstats {red['info_commandstats_delta']}")


def git_info(rev: str | None) -> dict[str, Any]:
    """The commit the server runs from, and (working tree) whether its code has local edits."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    commit = git("rev-parse", rev or "HEAD")
    if rev:
        return {"commit": commit, "describe": f"git archive of {rev} ({commit[:10]})"}
    dirty = git("status", "--porcelain", "--", "server", "engine", "protocol").splitlines()
    return {
        "commit": commit,
        "dirty_files": dirty,
        "describe": f"working tree at {commit[:10]}"
        + (f" with {len(dirty)} locally changed file(s) under server/ engine/ protocol/"
           if dirty else ""),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,50,200", help="concurrent rooms / echo pairs")
    parser.add_argument("--seconds", type=float, default=12.0, help="recorded seconds per phase")
    parser.add_argument("--warmup", type=float, default=5.0, help="unrecorded seconds first")
    parser.add_argument("--count-rooms", type=int, default=50,
                        help="rooms in the Redis counting phase (0: skip it)")
    parser.add_argument("--count-seconds", type=float, default=8.0)
    parser.add_argument("--redis-url", default=os.environ.get(
        "CRIBBAGE_REDIS_URL", "redis://127.0.0.1:6379/0"))
    parser.add_argument("--act-timeout", type=float, default=60.0,
                        help="longest wait for an answer (a late one is still timed)")
    parser.add_argument("--setup-timeout", type=float, default=120.0)
    parser.add_argument("--connect-concurrency", type=int, default=32)
    parser.add_argument("--max-ops-per-loop", type=int, default=1_000_000,
                        help="cap on actions/messages per connection loop")
    parser.add_argument("--max-minutes", type=float, default=15.0,
                        help="hard stop for the whole run")
    parser.add_argument("--no-uvloop", action="store_true", help="client on plain asyncio")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--server-rev", help="run the server from this git revision (extracted "
                        "with git archive to a temporary directory) instead of the working tree")
    args = parser.parse_args(argv)
    global SERVER_TREE
    tmp_tree: tempfile.TemporaryDirectory | None = None
    git = git_info(args.server_rev)
    if args.server_rev:
        tmp_tree = tempfile.TemporaryDirectory(prefix="ws_roundtrip-tree-")
        archive = subprocess.run(["git", "archive", git["commit"]], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp_tree.name], input=archive, check=True)
        SERVER_TREE = Path(tmp_tree.name)

    def hard_stop(signum: int, frame: Any) -> None:
        stop_children()
        raise SystemExit(f"hard stop after {args.max_minutes} minutes")

    signal.signal(signal.SIGALRM, hard_stop)
    signal.alarm(int(args.max_minutes * 60))
    started = datetime.datetime.now(datetime.UTC)
    load0 = os.getloadavg()
    log(f"start {started:%Y-%m-%d %H:%M:%S} UTC; {os.cpu_count()} CPUs; load average {load0}")
    log(f"python {platform.python_version()}, websockets {websockets.__version__}, "
        f"client loop: {'asyncio' if args.no_uvloop else 'uvloop'}")
    log(f"server code: {git['describe']}")
    t = time.monotonic()
    try:
        if args.no_uvloop:
            result = asyncio.run(run(args))
        else:
            import uvloop

            result = uvloop.run(run(args))
    finally:
        stop_children()
        signal.alarm(0)
        if tmp_tree is not None:
            tmp_tree.cleanup()
    load1 = os.getloadavg()
    result.update(
        started=started.isoformat(), seconds_total=time.monotonic() - t,
        loadavg_start=load0, loadavg_end=load1, cpus=os.cpu_count(), git=git,
        command=" ".join([Path(sys.executable).name, *sys.argv]),
    )
    report(result, args)
    log(f"done in {result['seconds_total']:.0f}s; load average at end {load1}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
