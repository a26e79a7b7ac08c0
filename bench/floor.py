"""The floor: the least a server on this stack must do per played card (``bench/latency.py``).

A tiny starlette app under uvicorn with the product's options (``server.app.uvicorn_kwargs``:
uvicorn's default stack — uvloop, httptools, websockets-sansio — and no permessage-deflate).
Rooms have 2 connections. Each client frame (a ``play`` act, the size of the product's) makes
one accepted change of its room, written and fanned out the way the product does it, and
nothing else: no rules, no views, no diffs, no validation beyond ``json.loads``.

Two stores, chosen with ``--store`` (the two small servers of issue 9):

* ``redis`` (the floor of the product on Redis): one cached Lua script (``EVALSHA``, redis-py
  asyncio, a ``BlockingConnectionPool`` like the product's) does the compare-and-set of the
  room's version, ``HSET``s the frame as the room's data, ``XADD``s it to the room's log
  stream and ``PUBLISH``es the update on the room's channel. With ``--lane`` the script is
  sent on the product's write lane (``server/store/lane.py``: connections kept between
  writes, the command packed in C) instead of through ``AsyncScript`` — the
  ``floor-lane`` variant of ``bench/latency.py``. The process holds one redis-py
  pub/sub connection subscribed to the channel of every room it has connections in; the
  update is sent to the room's 2 connections when the message comes back through that
  subscription, never straight after the script.
* ``memory`` (the floor of the product's zero-setup in-memory store): the same steps in this
  process — compare-and-set on the room's version, append to a bounded log, put the message
  on an in-process queue — and one dispatcher task (the stand-in for the subscription
  reader) takes it off the queue and sends it to the room's connections.

Wire, JSON text frames (no subprotocol needed; ``cribbage.v1.json`` is accepted if offered):

* connect ``/ws?room=<id>&seat=<0|1>``; the server subscribes to the room (first connection)
  and answers ``{"type":"joined","room":...,"seat":...,"version":v}``;
* client → ``{"type":"act","action_id":"…","action":{"type":"play","card":"5H"}}``;
* both connections ← ``{"type":"update","version":v,"seat":s,"act":<the act frame>}`` — the
  acting seat's copy is also its answer (the product sends an update and then an ``ack``;
  the floor sends one frame per connection, 2 per action).

A frame that is not a JSON object with an ``action_id`` gets ``{"type":"error"}`` and
changes nothing. ``GET /healthz`` answers ``{"ok": true}``.

Redis keys, all under ``--key-prefix`` and expiring an hour after the room's first
connection: ``<prefix>floor:{<room>}:state`` (hash ``v``, ``data``),
``<prefix>floor:{<room>}:log`` (stream, ~5000 entries), channel
``<prefix>floor:{<room>}:chan``::

    python bench/floor.py --port 8766 --store redis --redis-url redis://127.0.0.1:6379/0 \\
        --key-prefix bench:abcd:
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket

log = logging.getLogger("floor")

LOG_LIMIT = 5000
KEY_TTL_SECONDS = 3600
MAX_ATTEMPTS = 20

# Compare-and-set of the room's version, then XADD and PUBLISH (the product's commit.lua
# does the same steps plus its bookkeeping: action ids, deadlines, expiry refreshes).
COMMIT_LUA = """
local cur = tonumber(redis.call('HGET', KEYS[1], 'v') or '-1')
if cur ~= tonumber(ARGV[1]) then return {1, cur} end
local v = cur + 1
redis.call('HSET', KEYS[1], 'v', v, 'data', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', 'v', v, 'e', ARGV[2])
redis.call('PUBLISH', ARGV[3],
  '{"type":"update","version":' .. v .. ',"seat":' .. ARGV[4] .. ',"act":' .. ARGV[2] .. '}')
return {0, v}
"""

# A room's keys on its first connection: version 0 and an empty log, both expiring.
INIT_LUA = """
redis.call('HSETNX', KEYS[1], 'v', 0)
redis.call('EXPIRE', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('XADD', KEYS[2], '*', 'v', 0, 'e', '{}')
  redis.call('EXPIRE', KEYS[2], ARGV[1])
end
return tonumber(redis.call('HGET', KEYS[1], 'v'))
"""


class Room:
    """A room this process has connections in."""

    __slots__ = ("id", "conns", "version", "log", "channel", "keys")

    def __init__(self, room_id: str, prefix: str) -> None:
        self.id = room_id
        self.conns: list[WebSocket] = []
        self.version = 0
        self.log: collections.deque[tuple[int, str]] = collections.deque(maxlen=LOG_LIMIT)
        self.channel = f"{prefix}floor:{{{room_id}}}:chan"
        self.keys = [f"{prefix}floor:{{{room_id}}}:state", f"{prefix}floor:{{{room_id}}}:log"]


async def fan_out(room: Room | None, text: str) -> None:
    """Send one update to every connection of the room (a closed one is skipped)."""
    if room is None:
        return
    for ws in room.conns:
        with contextlib.suppress(Exception):
            await ws.send_text(text)


class MemoryHub:
    """Rooms, their store and their broker in this process."""

    def __init__(self) -> None:
        self.rooms: dict[str, Room] = {}
        self.queue: asyncio.Queue[tuple[Room, str]] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self.task = asyncio.create_task(self._dispatch())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task

    async def _dispatch(self) -> None:
        while True:
            room, text = await self.queue.get()
            await fan_out(room, text)

    async def join(self, room_id: str, ws: WebSocket) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            room = self.rooms[room_id] = Room(room_id, "")
        room.conns.append(ws)
        return room

    async def leave(self, room: Room, ws: WebSocket) -> None:
        with contextlib.suppress(ValueError):
            room.conns.remove(ws)
        if not room.conns:
            self.rooms.pop(room.id, None)

    async def act(self, room: Room, seat: int, text: str) -> None:
        # The compare-and-set: read and write happen with no await in between, so no other
        # change of the room can come between them.
        v = room.version = room.version + 1
        room.log.append((v, text))
        self.queue.put_nowait(
            (room, f'{{"type":"update","version":{v},"seat":{seat},"act":{text}}}')
        )


class RedisHub:
    """Rooms in Redis; one pub/sub connection and one reader task for the process."""

    def __init__(self, url: str, prefix: str, lane: bool = False) -> None:
        from redis.asyncio import BlockingConnectionPool, Redis

        from server.store.lane import WriteLane

        self.prefix = prefix
        self.redis = Redis.from_pool(
            BlockingConnectionPool.from_url(
                url, decode_responses=True, max_connections=256, timeout=5.0
            )
        )
        self.commit = self.redis.register_script(COMMIT_LUA)
        self.init = self.redis.register_script(INIT_LUA)
        self.lane = WriteLane(self.redis.connection_pool) if lane else None
        self.pubsub = self.redis.pubsub()
        self.rooms: dict[str, Room] = {}
        self.by_channel: dict[str, Room] = {}
        self.pending: dict[str, asyncio.Future[None]] = {}
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self.redis.script_load(COMMIT_LUA)  # the lane sends EVALSHA only
        # A channel of this process only, so the connection exists before any room does.
        await self.pubsub.subscribe(f"{self.prefix}floor:proc:{id(self)}")
        self.task = asyncio.create_task(self._reader())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        await self.redis.aclose()

    async def _reader(self) -> None:
        while True:
            try:
                msg = await self.pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("pub/sub reader: %s", exc)
                await asyncio.sleep(0.5)
                continue
            if msg is None:
                continue
            kind = msg["type"]
            if kind == "message":
                await fan_out(self.by_channel.get(msg["channel"]), msg["data"])
            elif kind == "subscribe":
                fut = self.pending.pop(msg["channel"], None)
                if fut is not None and not fut.done():
                    fut.set_result(None)

    async def join(self, room_id: str, ws: WebSocket) -> Room:
        room = self.rooms.get(room_id)
        if room is None:
            room = self.rooms[room_id] = Room(room_id, self.prefix)
            self.by_channel[room.channel] = room
            fut = self.pending[room.channel] = asyncio.get_running_loop().create_future()
            await self.pubsub.subscribe(room.channel)
            await asyncio.wait_for(fut, 10.0)
        room.version = int(await self.init(keys=room.keys, args=[KEY_TTL_SECONDS]))
        room.conns.append(ws)
        return room

    async def leave(self, room: Room, ws: WebSocket) -> None:
        with contextlib.suppress(ValueError):
            room.conns.remove(ws)
        if not room.conns and self.rooms.get(room.id) is room:
            del self.rooms[room.id]
            self.by_channel.pop(room.channel, None)
            with contextlib.suppress(Exception):
                await self.pubsub.unsubscribe(room.channel)

    async def act(self, room: Room, seat: int, text: str) -> None:
        for _ in range(MAX_ATTEMPTS):
            args = [room.version, text, room.channel, seat, LOG_LIMIT]
            if self.lane is None:
                status, v = await self.commit(keys=room.keys, args=args)
            else:
                conn = await self.lane.take()
                try:
                    status, v = await self.lane.call(
                        conn, "EVALSHA", self.commit.sha, len(room.keys), *room.keys, *args)
                except BaseException:
                    await self.lane.put(conn, close=True)
                    raise
                await self.lane.put(conn)
            room.version = int(v)
            if int(status) == 0:
                return
        log.warning("room %s: no commit after %d attempts", room.id, MAX_ATTEMPTS)


def create_app(store: str, redis_url: str, prefix: str, lane: bool = False) -> Starlette:
    """The floor app on the given store (``"redis"`` or ``"memory"``); ``lane``: write on
    the product's :class:`server.store.lane.WriteLane` instead of ``AsyncScript``."""
    hub: Any = RedisHub(redis_url, prefix, lane) if store == "redis" else MemoryHub()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await hub.start()
        try:
            yield
        finally:
            await hub.stop()

    async def ws_endpoint(websocket: WebSocket) -> None:
        offered = list(websocket.scope.get("subprotocols") or [])
        try:
            room_id = websocket.query_params["room"]
            seat = int(websocket.query_params.get("seat", "0"))
        except (KeyError, ValueError):
            await websocket.close(code=1008)
            return
        await websocket.accept(subprotocol=offered[0] if offered else None)
        room = await hub.join(room_id, websocket)
        try:
            await websocket.send_text(json.dumps(
                {"type": "joined", "room": room_id, "seat": seat, "version": room.version}))
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                text = message.get("text")
                if text is None:
                    continue
                try:
                    frame = json.loads(text)
                    ok = isinstance(frame, dict) and isinstance(frame.get("action_id"), str)
                except ValueError:
                    ok = False
                if not ok:
                    await websocket.send_text('{"type":"error","code":"bad_frame"}')
                    continue
                await hub.act(room, seat, text)
        finally:
            await hub.leave(room, websocket)

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "store": store})

    return Starlette(
        routes=[WebSocketRoute("/ws", ws_endpoint), Route("/healthz", healthz)],
        lifespan=lifespan,
    )


def main(argv: list[str] | None = None) -> None:
    """Run the floor under uvicorn with the product's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--store", choices=("redis", "memory"), default="redis")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--key-prefix", default="bench:floor:")
    parser.add_argument("--lane", action="store_true",
                        help="write on the product's write lane (server/store/lane.py)")
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    uvicorn.run(
        create_app(args.store, args.redis_url, args.key_prefix, args.lane),
        host=args.host,
        port=args.port,
        ws_per_message_deflate=False,
        ws_max_size=1 << 20,
        lifespan="on",
        log_level=args.log_level,
    )


if __name__ == "__main__":
    main()
