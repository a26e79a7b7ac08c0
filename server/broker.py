"""Fan-out of room messages to the processes that have connections in a room.

Every accepted change is published by the store on the room's channel (``update_message``),
and presence changes likewise (``presence_message``). A process subscribes to a room's
channel while it has at least one local connection in that room, and hands each message to
its local listener (``server.sessions.LocalRooms``), which builds each connection's frame.

* :class:`MemoryBroker`: in one process; the memory store delivers to it directly.
* :class:`RedisBroker`: one Redis pub/sub connection per process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from protocol import jsontext

from .store.base import StoreUnavailable

log = logging.getLogger(__name__)

SUBSCRIBE_TIMEOUT_SECONDS = 2.0
"""How long a subscription waits for Redis to confirm it."""

Listener = Callable[[dict[str, Any]], None]
"""Called with each message of a room, in channel order, on the event loop. Must not block.

An update message is :func:`server.store.base.update_message`'s plain data, except that one
this process published itself may come as noted in :class:`PublishedMessages`: the
``RoomRecord`` under ``"record"`` (and the engine state under ``"state"``) instead of
``"room"``. Listeners must not mutate messages."""


def channel_name(prefix: str, room_id: str) -> str:
    """The pub/sub channel of a room: ``<prefix>room:{<id>}:chan``."""
    return f"{prefix}room:{{{room_id}}}:chan"


class PublishedMessages:
    """The update messages this process published lately, by their exact text.

    ``RedisStore.commit`` notes each message before publishing it, with its plain data plus
    the committed ``RoomRecord`` (``"record"``) and engine state (``"state"``, or None).
    When the same text comes back on this process's subscription, :class:`RedisBroker`
    hands that data to the listener instead of decoding the JSON and rebuilding the record
    and state: the text is byte for byte what was committed, so the data is too. Only
    messages of rooms this process follows are noted (``follows``); any that never come
    back (unsubscribed meanwhile, a lost connection) are forgotten after ``limit`` newer
    ones.
    """

    def __init__(self, follows: Callable[[str], bool], limit: int = 1024) -> None:
        self._follows = follows
        self._limit = limit
        self._messages: OrderedDict[str, dict[str, Any]] = OrderedDict()

    def add(self, room_id: str, text: str, message: dict[str, Any]) -> bool:
        """Note a message of ``room_id`` about to be published as ``text``; False (and not
        noted) when this process does not follow the room."""
        if not self._follows(room_id):
            return False
        self._messages[text] = message
        if len(self._messages) > self._limit:
            self._messages.popitem(last=False)
        return True

    def discard(self, text: str) -> None:
        """Forget a message that was not published after all."""
        self._messages.pop(text, None)

    def take(self, text: str) -> dict[str, Any] | None:
        """The data of a noted message published as exactly ``text`` (then forgotten)."""
        return self._messages.pop(text, None)


class Broker(ABC):
    """Subscribe this process to rooms' channels.

    Attributes:
        on_resubscribed: called with a room id when its subscription was lost (the broker's
            connection dropped) and is active again: messages published meanwhile were
            lost, and the listener should catch up from the store.
    """

    on_resubscribed: Callable[[str], None] | None = None

    @abstractmethod
    async def start(self) -> None:
        """Start receiving (called once at startup)."""

    @abstractmethod
    async def subscribe(self, room_id: str, listener: Listener) -> None:
        """Deliver the room's messages to ``listener`` from now on (one listener per room).

        Returns once the subscription is active, so that a read of the room made afterwards
        cannot miss a later message.
        """

    @abstractmethod
    async def unsubscribe(self, room_id: str) -> None:
        """Stop delivering the room's messages."""

    @abstractmethod
    async def close(self) -> None:
        """Stop receiving and release connections."""


class MemoryBroker(Broker):
    """In-process broker; :meth:`deliver` is called by the memory store on each publish."""

    def __init__(self) -> None:
        self._listeners: dict[str, Listener] = {}

    async def start(self) -> None:
        """Nothing to start."""

    async def subscribe(self, room_id: str, listener: Listener) -> None:
        """See :meth:`Broker.subscribe`."""
        self._listeners[room_id] = listener

    async def unsubscribe(self, room_id: str) -> None:
        """See :meth:`Broker.unsubscribe`."""
        self._listeners.pop(room_id, None)

    def deliver(self, room_id: str, message: dict[str, Any]) -> None:
        """Hand a published message to the room's listener, if any."""
        listener = self._listeners.get(room_id)
        if listener is not None:
            try:
                listener(message)
            except Exception:  # a listener bug must not break the publisher
                log.exception("room listener failed for %s", room_id)

    async def close(self) -> None:
        """Forget all listeners."""
        self._listeners.clear()


class RedisBroker(Broker):
    """Redis pub/sub: one connection, one reader task, channels added and removed as local
    connections come and go."""

    def __init__(self, redis: Redis, prefix: str = "") -> None:
        self._redis = redis
        self._prefix = prefix
        self._pubsub = redis.pubsub(ignore_subscribe_messages=False)
        self._listeners: dict[str, Listener] = {}
        self._rooms_by_channel: dict[str, str] = {}
        self._pending: dict[str, list[asyncio.Future[None]]] = {}
        self._task: asyncio.Task[None] | None = None
        self._home = f"{prefix}proc:{uuid.uuid4().hex}"
        self.published = PublishedMessages(self._listeners.__contains__)
        """Give to this process's ``RedisStore`` (its ``published``)."""
        self._stopping = False
        self._connected = False
        self._lost: set[str] = set()
        self.reconnects = 0
        """Times the pub/sub connection was lost and made again since start."""

    async def start(self) -> None:
        """Open the pub/sub connection (on a channel private to this process, so the
        connection always exists) and start the reader task. Does not fail when Redis is
        down: the reader keeps trying (``/readyz`` reports the outage)."""
        try:
            await self._pubsub.subscribe(self._home)
            self._connected = True
        except Exception as exc:
            log.warning("Redis pub/sub not available yet: %s", exc)
        self._task = asyncio.create_task(self._reader(), name="redis-broker-reader")

    async def subscribe(self, room_id: str, listener: Listener) -> None:
        """See :meth:`Broker.subscribe`; waits for Redis to confirm (up to
        :data:`SUBSCRIBE_TIMEOUT_SECONDS`).

        Raises:
            StoreUnavailable: Redis could not be reached or did not confirm in time (the
                room is not followed).
        """
        channel = channel_name(self._prefix, room_id)
        self._listeners[room_id] = listener
        self._rooms_by_channel[channel] = room_id
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.setdefault(channel, []).append(fut)
        try:
            await self._pubsub.subscribe(channel)
            await asyncio.wait_for(fut, SUBSCRIBE_TIMEOUT_SECONDS)
        except (RedisError, OSError, TimeoutError) as exc:
            self._listeners.pop(room_id, None)
            self._rooms_by_channel.pop(channel, None)
            self._pending.pop(channel, None)
            with contextlib.suppress(Exception):
                await self._pubsub.unsubscribe(channel)
            raise StoreUnavailable(f"could not subscribe to {channel}: {exc}") from exc

    async def unsubscribe(self, room_id: str) -> None:
        """See :meth:`Broker.unsubscribe`."""
        channel = channel_name(self._prefix, room_id)
        self._listeners.pop(room_id, None)
        self._rooms_by_channel.pop(channel, None)
        with contextlib.suppress(Exception):
            await self._pubsub.unsubscribe(channel)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        channel = msg.get("channel")
        if isinstance(channel, bytes):
            channel = channel.decode()
        if kind == "subscribe":
            waiting = self._pending.pop(channel, [])
            for fut in waiting:
                if not fut.done():
                    fut.set_result(None)
            if not waiting and channel in self._rooms_by_channel:
                self._lost.add(channel)  # a re-subscription nobody asked for: a reconnect
            if channel in self._lost:
                # Subscribed again after the connection dropped: what was published in
                # between is lost to this process, so the room catches up.
                self._lost.discard(channel)
                room_id = self._rooms_by_channel.get(channel)
                if room_id is not None and self.on_resubscribed is not None:
                    try:
                        self.on_resubscribed(room_id)
                    except Exception:
                        log.exception("resubscribe hook failed for %s", room_id)
            return
        if kind != "message":
            return
        room_id = self._rooms_by_channel.get(channel)
        listener = self._listeners.get(room_id) if room_id else None
        if listener is None:
            return
        data = msg["data"]
        try:
            message = self.published.take(data) if isinstance(data, str) else None
            listener(message if message is not None else jsontext.loads(data))
        except Exception:
            log.exception("room listener failed for %s", room_id)

    async def _reader(self) -> None:
        failing = False
        while not self._stopping:
            try:
                if not self._connected:
                    await self._pubsub.subscribe(self._home)
                    self._connected = True
                msg = await self._pubsub.get_message(timeout=0.2)
                if failing:
                    failing = False
                    log.warning("pub/sub connection back; catching up %d rooms",
                                len(self._lost))
                if msg is not None:
                    self._dispatch(msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not failing:
                    # One line per outage; every room's subscription has to be made again,
                    # and what is published until then never reaches this process.
                    failing = True
                    self.reconnects += 1
                    log.warning("pub/sub connection lost (%s); reconnecting", exc)
                self._lost.update(self._rooms_by_channel)
                await asyncio.sleep(0.2)

    async def close(self) -> None:
        """Stop the reader and close the pub/sub connection.

        The reader is asked to stop rather than cancelled first: a cancellation landing
        inside a redis-py call can be swallowed, leaving the task running.
        """
        self._stopping = True
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2.0)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
            except Exception:
                log.exception("pub/sub reader ended with an error")
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()
