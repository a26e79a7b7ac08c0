"""Fan-out of room messages to the processes that have connections in a room.

Every accepted change is published by the store on the room's channel (``update_message``),
and presence changes likewise (``presence_message``). A process subscribes to a room's
channel while it has at least one local connection in that room, and hands each message to
its local listener (``server.sessions.LocalRooms``), which builds each connection's frame.

* :class:`MemoryBroker`: in one process; the memory store delivers to it directly.
* :class:`RedisBroker`: one Redis pub/sub connection per process.
* :class:`ShardedRedisBroker`: on a Redis Cluster, sharded pub/sub, one connection per
  shard that holds a followed room.
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
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from protocol import jsontext

from .store.base import StoreUnavailable

log = logging.getLogger(__name__)

SUBSCRIBE_TIMEOUT_SECONDS = 2.0
"""How long a subscription may take, all of it: on a Redis Cluster finding the shard,
connecting to it, sending ``SSUBSCRIBE`` and its confirmation (a join's answer waits for
it: docs/protocol.md "Store outages")."""

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


class _Shard:
    """One pub/sub connection to one primary of a Redis Cluster, and its reader."""

    def __init__(self, name: str, client: Redis) -> None:
        self.name = name
        self.client = client
        self.pubsub = client.pubsub(ignore_subscribe_messages=False)
        self.channels: set[str] = set()
        self.task: asyncio.Task[None] | None = None
        self.dead = False


class ShardedRedisBroker(Broker):
    """Sharded pub/sub on a Redis Cluster (``SSUBSCRIBE``; the store publishes with
    ``SPUBLISH``): a room's messages travel only on the shard that holds the room.

    One pub/sub connection per primary that holds a followed room, each with its own reader
    task, so a slow or failing shard does not delay the others. When a shard's connection
    fails (its primary died) or the shard tells it a channel moved (``sunsubscribe`` from
    the server after a failover or a resharding), the channels it carried are *lost*: the
    broker refreshes the cluster's slot map and subscribes them again on the slot's current
    primary, retrying every :data:`RESUBSCRIBE_PAUSE_SECONDS` until that works, and then
    calls :attr:`on_resubscribed` for each room — the same catch-up as after a reconnect of
    :class:`RedisBroker`, but only for the rooms of the shard that failed.

    Args:
        cluster: the process's ``RedisCluster`` client (for the slot map).
        channel: the room id -> channel function of the store's layout
            (``ClusterKeys.channel``).
        timeout: socket timeouts of the pub/sub connections (``redis_timeout_seconds``).
    """

    RESUBSCRIBE_PAUSE_SECONDS = 0.25

    def __init__(self, cluster: Any, channel: Callable[[str], str], timeout: float = 1.0
                 ) -> None:
        self._cluster = cluster
        self._channel = channel
        self._timeout = timeout
        self._listeners: dict[str, Listener] = {}
        self._rooms_by_channel: dict[str, str] = {}
        self._pending: dict[str, list[asyncio.Future[None]]] = {}
        self._shards: dict[str, _Shard] = {}
        self._shard_of: dict[str, _Shard] = {}
        self._lost: set[str] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.published = PublishedMessages(self._listeners.__contains__)
        """Give to this process's ``ClusterRedisStore`` (its ``published``)."""
        self.reconnects = 0
        """Shard connections lost (or channels moved away) since start."""

    async def start(self) -> None:
        """Start the task that subscribes lost channels again."""
        self._task = asyncio.create_task(self._resubscriber(), name="shard-resubscriber")

    async def _shard(self, channel: str) -> _Shard:
        """The live shard connection of the primary that holds ``channel``'s slot."""
        await self._cluster.initialize()
        node = self._cluster.get_node_from_key(channel)
        shard = self._shards.get(node.name)
        if shard is None or shard.dead:
            shard = _Shard(node.name, Redis(
                host=node.host, port=node.port, decode_responses=True,
                socket_timeout=self._timeout, socket_connect_timeout=self._timeout,
                health_check_interval=5,
                # No retries of the client library's own (its default retries a refused or
                # silent connection with backoff, for seconds): the subscription has one
                # deadline, and the resubscriber tries again.
                retry=Retry(NoBackoff(), 0),
            ))
            self._shards[node.name] = shard
        return shard

    async def _ssubscribe(self, channel: str) -> None:
        """Subscribe ``channel`` on its shard and wait for the confirmation, all within
        :data:`SUBSCRIBE_TIMEOUT_SECONDS` (finding the shard may refresh the slot map, and
        connecting to a primary that is frozen or gone may hang on each step of redis-py's
        handshake: a join must not wait for that).

        Raises:
            TimeoutError: not confirmed in time. A shard whose connection was being made
                (or the command sent) when time ran out is dropped as lost: the state of a
                redis-py connection interrupted there is unknown.
            RedisError, OSError: the shard could not be reached.
        """
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        shard: _Shard | None = None
        sent = False
        try:
            async with asyncio.timeout(SUBSCRIBE_TIMEOUT_SECONDS):
                shard = await self._shard(channel)
                self._pending.setdefault(channel, []).append(fut)
                self._shard_of[channel] = shard
                shard.channels.add(channel)
                try:
                    await shard.pubsub.ssubscribe(channel)
                except (RedisError, OSError) as exc:
                    shard.channels.discard(channel)
                    self._shard_lost(shard, exc)  # the connection is broken for all its rooms
                    raise
                sent = True
                if shard.task is None:
                    shard.task = asyncio.create_task(self._reader(shard),
                                                     name=f"shard-reader-{shard.name}")
                await fut
        except BaseException as exc:
            waiting = self._pending.get(channel, [])
            if fut in waiting:
                waiting.remove(fut)
            if shard is not None and not sent and not shard.dead:
                # Interrupted inside redis-py (connecting, handshaking, sending): drop the
                # connection; the shard's other rooms are subscribed again by the
                # resubscriber, on a fresh one.
                shard.channels.discard(channel)
                self._shard_lost(shard, exc if isinstance(exc, Exception)
                                 else TimeoutError("subscription interrupted"))
            raise

    async def subscribe(self, room_id: str, listener: Listener) -> None:
        """See :meth:`Broker.subscribe` (waits up to :data:`SUBSCRIBE_TIMEOUT_SECONDS`).

        Raises:
            StoreUnavailable: the shard could not be reached or did not confirm in time.
        """
        channel = self._channel(room_id)
        self._listeners[room_id] = listener
        self._rooms_by_channel[channel] = room_id
        try:
            await self._ssubscribe(channel)
        except BaseException as exc:
            # Undone whatever ended it (an error, the deadline, a cancellation), so that no
            # listener of a session that is not there stays behind.
            self._listeners.pop(room_id, None)
            self._rooms_by_channel.pop(channel, None)
            self._lost.discard(channel)
            shard = self._shard_of.pop(channel, None)
            if shard is not None:
                shard.channels.discard(channel)
                if not shard.dead:
                    await self._sunsubscribe(shard, channel)
            if isinstance(exc, RedisError | OSError | TimeoutError):
                raise StoreUnavailable(f"could not subscribe to {channel}: {exc}") from exc
            raise

    async def _sunsubscribe(self, shard: _Shard, channel: str) -> None:
        """``SUNSUBSCRIBE`` on the shard, giving up (silently) after the socket timeout: a
        frozen shard must not hold the caller (the channel goes with the connection)."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(shard.pubsub.sunsubscribe(channel), self._timeout)

    async def unsubscribe(self, room_id: str) -> None:
        """See :meth:`Broker.unsubscribe`."""
        channel = self._channel(room_id)
        self._listeners.pop(room_id, None)
        self._rooms_by_channel.pop(channel, None)
        self._lost.discard(channel)
        shard = self._shard_of.pop(channel, None)
        if shard is not None and not shard.dead:
            shard.channels.discard(channel)
            await self._sunsubscribe(shard, channel)

    def _dispatch(self, shard: _Shard, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        channel = msg.get("channel")
        if kind == "ssubscribe":
            waiting = self._pending.pop(channel, [])
            for fut in waiting:
                if not fut.done():
                    fut.set_result(None)
            if channel in self._lost:
                self._lost.discard(channel)
                room_id = self._rooms_by_channel.get(channel)
                if room_id is not None and self.on_resubscribed is not None:
                    try:
                        self.on_resubscribed(room_id)
                    except Exception:
                        log.exception("resubscribe hook failed for %s", room_id)
            return
        if kind == "sunsubscribe":
            if channel in self._rooms_by_channel and self._shard_of.get(channel) is shard:
                # Not asked for: the slot moved to another primary (a failover, a
                # resharding). Subscribe again where it lives now.
                log.info("shard %s dropped %s (slot moved); resubscribing", shard.name, channel)
                shard.channels.discard(channel)
                shard.pubsub.shard_channels.pop(channel, None)
                self._shard_of.pop(channel, None)
                self._lost.add(channel)
                self.reconnects += 1
                self._wake.set()
            return
        if kind != "smessage":
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

    async def _reader(self, shard: _Shard) -> None:
        while not self._stopping and not shard.dead:
            try:
                if not shard.pubsub.subscribed:
                    await asyncio.sleep(0.2)
                    continue
                msg = await shard.pubsub.get_message(timeout=0.2)
                if msg is not None:
                    self._dispatch(shard, msg)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._stopping:
                    return
                self._shard_lost(shard, exc)
                return

    def _shard_lost(self, shard: _Shard, exc: BaseException) -> None:
        """A shard's connection failed: every channel it carried is subscribed again on its
        slot's current primary (found once the slot map shows the failover)."""
        shard.dead = True
        self.reconnects += 1
        if self._shards.get(shard.name) is shard:
            del self._shards[shard.name]
        moved = [c for c in shard.channels if self._shard_of.get(c) is shard]
        # One warning per working connection lost; retries on a node that is still down
        # (the slot map not yet showing the failover) only at debug level.
        log.log(logging.WARNING if shard.task is not None else logging.DEBUG,
                "pub/sub connection to shard %s lost (%s); resubscribing %d rooms",
                shard.name, exc, len(moved))
        for channel in moved:
            self._shard_of.pop(channel, None)
            if channel in self._rooms_by_channel:
                self._lost.add(channel)
        for futs in (self._pending.pop(c, []) for c in moved):
            for fut in futs:
                if not fut.done():
                    fut.set_exception(ConnectionError(f"shard {shard.name} lost"))
        shard.channels.clear()
        asyncio.ensure_future(self._close_shard(shard))
        self._wake.set()

    @staticmethod
    async def _close_shard(shard: _Shard) -> None:
        with contextlib.suppress(Exception):
            await shard.pubsub.aclose()
        with contextlib.suppress(Exception):
            await shard.client.aclose()

    async def _resubscriber(self) -> None:
        """Subscribe lost channels again until none is left (then wait for more)."""
        while not self._stopping:
            if not self._lost:
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), 1.0)
                continue
            with contextlib.suppress(Exception):
                await self._cluster.nodes_manager.initialize()  # learn the new primaries
            for channel in list(self._lost):
                if self._stopping or channel not in self._rooms_by_channel:
                    self._lost.discard(channel)
                    continue
                if channel in self._shard_of:
                    continue  # being subscribed again already
                try:
                    await self._ssubscribe(channel)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    self._shard_of.pop(channel, None)
                    self._lost.add(channel)  # the new primary is not known yet: later
                    break
            if self._lost:
                await asyncio.sleep(self.RESUBSCRIBE_PAUSE_SECONDS)

    async def close(self) -> None:
        """Stop the readers and close every shard connection."""
        self._stopping = True
        self._wake.set()
        tasks = [t for t in [self._task, *(s.task for s in self._shards.values())]
                 if t is not None]
        for task in tasks:
            try:
                await asyncio.wait_for(asyncio.shield(task), 2.0)
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
            except Exception:
                log.exception("shard pub/sub task ended with an error")
        for shard in list(self._shards.values()):
            await self._close_shard(shard)
        self._shards.clear()
