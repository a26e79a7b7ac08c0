"""Helpers for the server tests: servers on loopback ports, scripted players, audits.

(Imported by the test modules of this directory as ``crib_wire``; pytest puts this directory
on ``sys.path``.)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

import engine
from protocol.client import Client
from server.app import create_app, uvicorn_kwargs
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
CARD_RE = re.compile(r"^[A2-9TJQK][CDHS]$")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThreadServer:
    """The app under a real uvicorn (default stack, no deflate) in a background thread."""

    def __init__(self, settings: Settings, **app_kwargs: Any) -> None:
        self.app = create_app(settings, **app_kwargs)
        # The server's own uvicorn options (guarded HTTP protocol, trusted proxies, ...) on
        # a free loopback port.
        options = {**uvicorn_kwargs(settings), "host": "127.0.0.1", "port": 0}
        config = uvicorn.Config(self.app, log_level="warning", **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.port = 0
        self.loop: asyncio.AbstractEventLoop | None = None

    def _run(self) -> None:
        async def serve() -> None:
            self.loop = asyncio.get_running_loop()
            await self.server.serve()

        asyncio.run(serve())

    def start(self) -> ThreadServer:
        self.thread.start()
        end = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > end or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        if self.thread.is_alive() and self.loop is not None:
            import io
            out = io.StringIO()
            for task in asyncio.all_tasks(self.loop):
                task.print_stack(file=out)
            raise RuntimeError("server did not stop:\n" + out.getvalue())


class ProcessServer:
    """``python -m server`` in a subprocess (for the two-process tests).

    ``env`` sets ``CRIBBAGE_*`` settings; ``log`` (a path) collects its stderr.
    """

    def __init__(self, redis_url: str, prefix: str, log: Path | None = None, **env: str
                 ) -> None:
        self.port = free_port()
        self.env = {**os.environ, "CRIBBAGE_KEY_PREFIX": prefix, **env}
        self.args = [sys.executable, "-m", "server", "--port", str(self.port),
                     "--redis-url", redis_url, "--log-level", "warning"]
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = log
        self.launched = 0.0

    def start(self) -> ProcessServer:
        return self.launch().wait_ready()

    def launch(self) -> ProcessServer:
        """Start the process without waiting for it to be ready (:meth:`wait_ready`)."""
        err = open(self.log, "ab") if self.log is not None else None  # noqa: SIM115
        try:
            self.proc = subprocess.Popen(self.args, cwd=ROOT, env=self.env, stderr=err)
        finally:
            if err is not None:
                err.close()
        self.launched = time.monotonic()
        return self

    def wait_ready(self) -> ProcessServer:
        """Wait until the launched process answers ``/readyz`` (15 s from its launch)."""
        assert self.proc is not None, "launch() first"
        end = self.launched + 15
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError("server process exited")
            try:
                if httpx.get(f"{self.http}/readyz", timeout=0.5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("server process did not become ready")

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def kill(self) -> None:
        """``kill -9``: the process dies at once, running no clean-up."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


def start_all(servers: list[ProcessServer]) -> list[ProcessServer]:
    """Start ``servers`` side by side, then wait until each is ready: a process spends about
    a second of CPU importing the app before it listens, so on two cores two processes
    start in about the time of one (the archive's migration takes a lock, so processes
    starting together on one database are fine: ``server.database.engine``). If one cannot
    start, every one is stopped before the error is raised."""
    try:
        for s in servers:
            s.launch()
        for s in servers:
            s.wait_ready()
    except BaseException:
        for s in servers:  # none left running when one cannot start
            s.stop()
        raise
    return servers


class RedisServer:
    """A Redis of a test's own on a free loopback port (AOF with ``appendfsync always``, so
    a restart keeps every acknowledged write), in a temporary directory."""

    def __init__(self, directory: Path, aof: bool = True) -> None:
        self.port = free_port()
        self.dir = directory
        self.aof = aof
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        args = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.dir), "--save", "", "--daemonize", "no",
                "--logfile", str(self.dir / "redis.log")]
        if self.aof:
            args += ["--appendonly", "yes", "--appendfsync", "always"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        end = time.monotonic() + 10
        while time.monotonic() < end:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        """``kill -9`` (an AOF with fsync always keeps what was acknowledged)."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def restart(self, down: float = 0.1) -> None:
        self.kill()
        time.sleep(down)
        self.start()

    def freeze(self) -> None:
        """SIGSTOP: Redis holds its connections open and answers nothing."""
        if self.proc:
            self.proc.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        if self.proc:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self.thaw()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


# -- a scripted player that decides from its view only ------------------------------------

def card_value(card: str) -> int:
    """Counting value of a card text."""
    return engine.Card.parse(card).value


def choose(view: dict[str, Any] | None, rng: random.Random, *, muggins_calls: bool = False
           ) -> dict[str, Any] | None:
    """A legal action for the seat whose view this is, or None if it has nothing to do.

    Discards and plays are random legal ones; under Muggins it announces the true count
    (sometimes one too many or too few, to exercise calls) and answers ``accept`` (or, with
    ``muggins_calls``, the right call on a wrong announcement).
    """
    if view is None:
        return None
    seat = view["seat"]
    phase = view["phase"]
    hand = view["hand"]
    if phase == "discard" and not view["discarded"][seat]:
        k = 2 if view["players"] == 2 else 1
        return {"type": "discard", "cards": rng.sample(hand, k)}
    if phase == "play" and view["turn"] == seat:
        fits = [c for c in hand if card_value(c) + view["count"] <= 31]
        if fits:
            return {"type": "play", "card": rng.choice(fits)}
        return None
    if phase == "show":
        pending = view["show"]["pending"]
        if not pending:
            return None
        if pending["seat"] == seat and pending["announced"] is None:
            true = engine.score_hand(
                pending["cards"], view["starter"], crib=pending["kind"] == "crib"
            ).total
            points = true + rng.choice([0, 0, 0, 1, -1])
            return {"type": "announce", "points": max(0, min(29, points))}
        if pending["announced"] is not None and seat in pending["awaiting"]:
            call = "accept"
            if muggins_calls:
                true = engine.score_hand(
                    pending["cards"], view["starter"], crib=pending["kind"] == "crib"
                ).total
                if pending["announced"] < true:
                    call = "muggins"
                elif pending["announced"] > true:
                    call = "overcount"
            answer: dict[str, Any] = {"type": "answer", "call": call}
            if pending.get("ref") is not None:
                answer["ref"] = pending["ref"]  # refused as stale_answer if settled meanwhile
            return answer
    return None


async def play_seat(client: Client, rng: random.Random, *, muggins_calls: bool = False,
                    timeout: float = 20.0) -> list[dict[str, Any]]:
    """Play this client's seat until game over. Returns every ack/reject it got."""
    answers = []
    while True:
        await client.wait_until(
            lambda c: c.view is not None
            and (c.view["phase"] == "game_over"
                 or choose(c.view, rng, muggins_calls=muggins_calls) is not None),
            timeout,
        )
        if client.view["phase"] == "game_over":
            return answers
        action = choose(client.view, rng, muggins_calls=muggins_calls)
        assert action is not None
        seen = client.version
        answer = await client.act(action)
        answers.append(answer)
        if answer["type"] == "reject" and action["type"] == "answer" and answer["code"] in (
            "nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent",
            "game_over", "stale_answer",
        ):
            # Another opponent's call settled the announcement first (docs/rules.md §5.2).
            await client.wait_until(lambda c, seen=seen: c.version > seen, timeout)
            continue
        assert answer["type"] == "ack", (action, answer, client.view)


async def seat_players(url: str, options: dict[str, Any], *, encoding: str = "json",
                       urls: list[str] | None = None, spectator: bool = False
                       ) -> tuple[str, list[Client], Client | None]:
    """Create a room and sit one client per seat (seat i on ``urls[i % len(urls)]``).

    Returns ``(room id, clients by seat, spectator client or None)``.
    """
    urls = urls or [url]
    host = await Client.connect(urls[0], name="host", encoding=encoding)
    created = await host.create_room(options)
    room = created["room"]
    watcher = None
    if spectator:
        watcher = await Client.connect(urls[-1], name="watcher", encoding=encoding)
        await watcher.join(room, None)
    clients = [host]
    for seat in range(1, options["players"]):
        clients.append(
            await Client.connect(urls[seat % len(urls)], name=f"p{seat}", encoding=encoding)
        )
    for seat, c in enumerate(clients):
        await c.join(room, seat)
    return room, clients, watcher


async def play_game(clients: list[Client], seed: int = 0, *, muggins_calls: bool = False,
                    timeout: float = 20.0) -> None:
    """Play every seat concurrently until game over; fails on any reject."""
    await asyncio.wait_for(
        asyncio.gather(*(play_seat(c, random.Random(seed * 10 + i), muggins_calls=muggins_calls)
                         for i, c in enumerate(clients))),
        timeout * 6,
    )
    for c in clients:
        await c.wait_until(lambda c: c.status == "game_over", timeout)


def events_of(client: Client, kind: str | None = None) -> list[dict[str, Any]]:
    """All events the client received in updates (of one type if given)."""
    out = []
    for f in client.frames:
        if f["type"] == "update":
            out.extend(e for e in f["events"] if kind is None or e["type"] == kind)
    return out


# -- hidden-information audit --------------------------------------------------------------

def _cards_in(value: Any, skip_keys: frozenset[str] = frozenset()) -> set[str]:
    found: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if CARD_RE.match(v):
                found.add(v)
        elif isinstance(v, dict):
            stack.extend(x for k, x in v.items() if k not in skip_keys)
        elif isinstance(v, list):
            stack.extend(v)
    return found


def hidden_from(seat: int | None, version: int, clients: list[Client]) -> set[str]:
    """Cards ``seat`` may not see at ``version``: other seats' cards still held, and in the
    discard and play phases other seats' discards (the crib), per the seated clients'
    own views at that version."""
    hidden: set[str] = set()
    for c in clients:
        if c.seat == seat:
            continue
        view = c.views.get(version)
        if view is None:
            continue
        hidden.update(view["hand"])
        if view["phase"] in ("discard", "play"):
            hidden.update(view["my_discards"])
    return hidden


def deal_cards(version: int, clients: list[Client]) -> set[str]:
    """Every card of the deal in progress at ``version`` that the seated clients know of:
    their hands, kept cards and discards, and the starter."""
    cards: set[str] = set()
    for c in clients:
        view = c.views.get(version)
        if view is None:
            continue
        cards.update(view["hand"], view["kept"], view["my_discards"])
        if view["starter"]:
            cards.add(view["starter"])
    return cards


def audit_frames(observer: Client, clients: list[Client]) -> int:
    """Check every frame ``observer`` received for a card it could not yet see.

    For a frame at version v, the hidden set is :func:`hidden_from` at v; the events of an
    update that come before a ``deal`` event (the end of the previous deal, when everything
    is shown) may hold only that deal's cards (:func:`deal_cards` at v-1). ``last_show``
    (last deal's counted hands) is public and skipped. Also checks that
    a ``deal`` event shows no other seat's hand and a ``discard`` event no other seat's
    cards. Returns the number of frames checked; raises AssertionError on a leak.
    """
    seat = observer.seat
    checked = 0
    for frame in observer.frames:
        if frame["type"] not in ("snapshot", "update"):
            continue
        v = frame["version"]
        now = hidden_from(seat, v, clients)
        before = deal_cards(v - 1, clients)
        if frame["type"] == "snapshot":
            leaked = _cards_in(frame["view"], frozenset(["last_show"])) & now
            assert not leaked, f"seat {seat} snapshot v{v} leaks {leaked}"
        else:
            events = frame["events"]
            cut = max((i for i, e in enumerate(events) if e["type"] == "deal"), default=None)
            for i, e in enumerate(events):
                if e["type"] == "deal":
                    others = {k for k in e["hands"] if seat is None or k != str(seat)}
                    assert not others, f"seat {seat} sees deal hands {others} at v{v}"
                if e["type"] == "discard" and e["seat"] != seat:
                    assert e.get("cards") is None, f"seat {seat} sees a discard at v{v}"
                if cut is not None and i < cut:
                    # The end of the previous deal: only that deal's cards may appear.
                    # (The crib may hold a card from the pack with 3 players.)
                    if e["type"] in ("cut_for_deal", "game_start") or (
                        e["type"] == "show_hand" and e["kind"] == "crib"
                    ) or (e["type"] == "peg" and e["source"] == "crib"):
                        continue
                    leaked = _cards_in(e) - before
                else:
                    leaked = _cards_in(e) & now
                assert not leaked, f"seat {seat} event {e['type']} v{v} leaks {leaked}"
            for op in frame["patch"]:
                if op.get("path", "").startswith("/last_show"):
                    continue
                value = op.get("value")
                if op.get("path") == "" and isinstance(value, dict):
                    value = {k: x for k, x in value.items() if k != "last_show"}
                leaked = _cards_in(value) & now
                assert not leaked, f"seat {seat} patch {op['path']} v{v} leaks {leaked}"
        checked += 1
    return checked


# -- server-side replay (audits of rooms with computer seats) ---------------------------------

class ReplayedSeat:
    """A seat's views at every version, rebuilt from a room's log (quacks like a
    :class:`Client` for :func:`audit_frames`: ``seat`` and ``views``)."""

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.views: dict[int, dict[str, Any] | None] = {}


def replay_room(server: ThreadServer, room: str) -> list[ReplayedSeat]:
    """Rebuild every seat's view at every version of ``room`` by replaying its log with the
    engine from the room's options and seed (read from the server's store)."""
    store = server.app.state.services.store

    async def read() -> tuple[Any, list[dict[str, Any]]]:
        record, _ = await store.load(room)
        return record, await store.log(room)

    future = asyncio.run_coroutine_threadsafe(read(), server.loop)
    record, log = future.result(10)
    seats = [ReplayedSeat(s) for s in range(len(record.seats))]
    state = None
    for entry in log:
        events = entry.get("events") or []
        if state is None and any(e.get("type") == "game_start" for e in events):
            state, _ = engine.new_game(engine.GameOptions.from_dict(record.options), record.seed)
        elif "action" in entry:
            state, _ = engine.apply(state, entry["seat"], entry["action"])
        for s in seats:
            s.views[entry["v"]] = engine.view(state, s.seat) if state is not None else None
    return seats


class PostgresServer:
    """A PostgreSQL of a test's own on a free loopback port (never the shared one on 5432),
    in a fresh data folder owned by the ``postgres`` user (PostgreSQL refuses to run as
    root): ``initdb`` once, then ``start`` / ``stop`` (``pg_ctl``, about 2 s each)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="crib-pg-"))
        shutil.chown(self.dir, "postgres")
        self.dir.chmod(0o700)
        self._as_postgres(["initdb", "-D", str(self.dir), "-A", "trust", "-U", "postgres"])

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _as_postgres(self, args: list[str]) -> None:
        command = " ".join(shlex.quote(a) for a in args)
        subprocess.run(["su", "postgres", "-c", command], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)

    def start(self) -> PostgresServer:
        options = f"-p {self.port} -k {self.dir} -h 127.0.0.1"
        self._as_postgres(["pg_ctl", "-D", str(self.dir), "-o", options,
                           "-l", str(self.dir / "log"), "-w", "start"])
        return self

    def stop(self) -> None:
        """A fast shutdown (connections are closed; the next start recovers nothing)."""
        with contextlib.suppress(subprocess.CalledProcessError):
            self._as_postgres(["pg_ctl", "-D", str(self.dir), "-m", "fast", "-w", "stop"])

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


async def kill_pool_worker(executor: Any, pid: int) -> None:
    """SIGKILL process ``pid`` of a ``ProcessPoolExecutor`` and wait (at most 5 s) until
    the executor notices by itself that it is broken."""
    os.kill(pid, signal.SIGKILL)
    for _ in range(500):
        if getattr(executor, "_broken", False):
            break
        await asyncio.sleep(0.01)
    assert executor._broken
