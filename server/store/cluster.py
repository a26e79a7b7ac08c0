"""Room store on a Redis Cluster (``--redis-cluster``): rooms spread over its shards.

The single-Redis layout (:mod:`server.store.redis`) keeps one global deadline index and lets
``claim.lua`` build rooms' keys from it; on a cluster both are cross-slot. Here every room
belongs to one of ``buckets`` buckets (a CRC-32 of its id, modulo the bucket count), and
every key of a room carries its bucket's hash tag, so all of them — and the bucket's own
deadline index — sit in one hash slot:

* ``<prefix>room:{r<bucket>}:<id>:state`` / ``:actions`` / ``:log`` / ``:presence`` /
  ``:deadlines`` / ``:deadline_data``: as in the single-Redis layout;
* ``<prefix>room:{r<bucket>}:<id>:chan``: the room's *sharded* pub/sub channel
  (``SPUBLISH``, served by the shard that holds the room; :class:`server.broker.
  ShardedRedisBroker`);
* ``<prefix>deadlines:{r<bucket>}``: the bucket's deadline index (room id -> earliest due);
* ``<prefix>{owners}:*`` and ``<prefix>server:token-secret``: as in the single layout (the
  owner keys share the tag ``{owners}``, one slot; the secret is one key).

Every script touches one slot and is given every key it touches (none is built inside a
script), so each write is still one ``EVALSHA``, sent to the slot's primary. Claiming due
deadlines is two steps: read every bucket's index (one pipelined round trip per shard,
shards in parallel), then one ``claim_room.lua`` per due room.

Durability across a failover: replication is asynchronous, so a primary killed right after
a commit could lose it to its promoted replica. A room change (``commit``, ``create``) is
therefore sent with ``WAIT 1 <redis_cluster_wait_ms>`` in the same round trip: the answer
comes once the shard's replica has the change. If the primary dies before that, the answer
is lost and the caller gets :class:`OutcomeUnknown` (the client repeats the action id and
learns the truth from the promoted replica). If the wait times out (the replica is down or
far behind), the change is acknowledged anyway and counted in ``unreplicated``: a shard
whose replica does not answer has no replica to promote either, so availability is kept;
such a primary is not waited for during the next :data:`LONE_SECONDS`.

Errors: a ``MOVED`` answer (the slot moved, e.g. after a failover) updates the slot map and
the script is sent to the new primary (it was not run); ``ASK`` is followed once;
``CLUSTERDOWN``, ``TRYAGAIN``, ``READONLY`` and no connection raise
:class:`StoreUnavailable` (nothing was run); a connection lost after sending raises
:class:`OutcomeUnknown`. Connection failures refresh the slot map in the background.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import zlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MaxConnectionsError,
    MovedError,
    NoScriptError,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)

from .base import Claim, Deadline, OutcomeUnknown, StoreUnavailable
from .health import ShardHealth
from .redis import RedisStore, _lua

log = logging.getLogger(__name__)
_T = TypeVar("_T")

MAX_REDIRECTS = 5
"""``MOVED``/``ASK``/``NOSCRIPT`` answers followed for one write before giving up."""

LONE_SECONDS = 5.0
"""A primary whose replica did not confirm a change in time is not waited for again for
this long (a shard without a working replica must not pay the wait on every change)."""

REFRESH_MIN_SECONDS = 0.2
"""Least time between two background refreshes of the slot map."""


def bucket_of(room_id: str, buckets: int) -> int:
    """The bucket of a room: CRC-32 of its id modulo ``buckets`` (stable everywhere)."""
    return zlib.crc32(room_id.encode()) % buckets


class ClusterKeys:
    """Key and channel names of the bucketed layout (shared by store and broker).

    Args:
        prefix: the ``key_prefix`` setting.
        buckets: the ``redis_cluster_buckets`` setting (the same in every process).
    """

    def __init__(self, prefix: str = "", buckets: int = 256) -> None:
        self.prefix = prefix
        self.buckets = buckets

    def tag(self, bucket: int) -> str:
        """The hash tag of a bucket, e.g. ``{r042}``."""
        return f"{{r{bucket:03d}}}"

    def room(self, room_id: str) -> str:
        """The common start of a room's keys: ``<prefix>room:{r<bucket>}:<id>``."""
        return f"{self.prefix}room:{self.tag(bucket_of(room_id, self.buckets))}:{room_id}"

    def key(self, room_id: str, what: str) -> str:
        """A key of a room: ``<prefix>room:{r<bucket>}:<id>:<what>``."""
        return f"{self.room(room_id)}:{what}"

    def channel(self, room_id: str) -> str:
        """The room's sharded channel: ``<prefix>room:{r<bucket>}:<id>:chan``."""
        return f"{self.room(room_id)}:chan"

    def index(self, bucket: int) -> str:
        """A bucket's deadline index: ``<prefix>deadlines:{r<bucket>}``."""
        return f"{self.prefix}deadlines:{self.tag(bucket)}"

    def room_index(self, room_id: str) -> str:
        """The deadline index of the room's bucket."""
        return self.index(bucket_of(room_id, self.buckets))


class ClusterRedisStore(RedisStore):
    """Rooms on a Redis Cluster (see the module docstring for the layout and errors).

    Args:
        redis: a ``redis.asyncio.cluster.RedisCluster`` created with
            ``decode_responses=True`` and no retries of its own (the app's
            :func:`server.app.redis_cluster_client`).
        prefix, ttl_seconds, log_limit, published: as for :class:`RedisStore`.
        buckets: the ``redis_cluster_buckets`` setting.
        wait_ms: the ``redis_cluster_wait_ms`` setting (0: no ``WAIT``).
    """

    def __init__(
        self,
        redis: RedisCluster,
        prefix: str = "",
        ttl_seconds: int = 86400,
        log_limit: int = 5000,
        published: Any = None,
        buckets: int = 256,
        wait_ms: int = 250,
    ) -> None:
        self.keys = ClusterKeys(prefix, buckets)
        super().__init__(redis, prefix, ttl_seconds, log_limit, published)  # type: ignore[arg-type]
        self.health = ShardHealth("redis cluster")
        self.wait_ms = int(wait_ms)
        self._claim_room = self._script("claim_room.lua")
        self._index_slots = [
            (self.keys.index(b), redis.keyslot(self.keys.index(b))) for b in range(buckets)
        ]
        self.unreplicated = 0
        """Room changes acknowledged although no replica confirmed them in time."""
        self._lone: dict[str, float] = {}
        """Primary -> until when (monotonic) it is not waited for (its replica did not
        confirm in time)."""
        self._refreshing: asyncio.Task[None] | None = None
        self._refreshed_at = 0.0
        timeout = float(getattr(redis, "connection_kwargs", {}).get("socket_timeout") or 1.0)
        self.read_deadline = 2 * timeout
        """Seconds a read may take in all (learning the slot map when the client has none,
        connecting, the command): twice the socket timeout, a connection and an answer.
        Past it the read is StoreUnavailable (a frozen shard, or the client library's own
        relaxed timeouts, must not hold a join or an HTTP request)."""

    def _script(self, name: str) -> AsyncScript:
        """A script of ``server/lua/``, with its ``PUBLISH`` made ``SPUBLISH`` (sharded
        pub/sub: the message stays on the room's shard)."""
        text = _lua(name).replace("redis.call('PUBLISH',", "redis.call('SPUBLISH',")
        return AsyncScript(self.redis, text)

    # -- keys ------------------------------------------------------------------------------
    def key(self, room_id: str, what: str) -> str:
        """The key ``<prefix>room:{r<bucket>}:<id>:<what>``."""
        return self.keys.key(room_id, what)

    def channel(self, room_id: str) -> str:
        """The room's sharded channel."""
        return self.keys.channel(room_id)

    def _index(self, room_id: str) -> str:
        """The deadline index of the room's bucket."""
        return self.keys.room_index(room_id)

    # -- calling the cluster ---------------------------------------------------------------
    async def _failed(self, exc: BaseException, node: ClusterNode | None = None) -> None:  # type: ignore[override]
        """Note a failure of ``node`` (or of the node the client library names on the
        error) and refresh the slot map in the background."""
        node = node or getattr(exc, "connection", None)
        name = node.name if isinstance(node, ClusterNode) else None
        self.health.failed(exc, name)
        if isinstance(node, ClusterNode):
            with contextlib.suppress(Exception):
                await node.disconnect_free_connections()
        self._refresh_soon()

    def _refresh_soon(self) -> None:
        """Refresh the slot map (``CLUSTER SLOTS``) in the background, at most every
        :data:`REFRESH_MIN_SECONDS`; forget the outages of nodes no longer primaries."""
        now = time.monotonic()
        if self._refreshing is not None and not self._refreshing.done():
            return
        if now - self._refreshed_at < REFRESH_MIN_SECONDS:
            return
        self._refreshed_at = now

        async def refresh() -> None:
            with contextlib.suppress(Exception):
                await self.redis.nodes_manager.initialize()
                primaries = {n.name for n in self.redis.get_primaries()}
                self.health.forget(primaries)

        self._refreshing = asyncio.ensure_future(refresh())

    async def _ready(self) -> None:
        """Make sure the client knows the slot map (the first call, or after it was
        dropped on a failure), within :attr:`read_deadline`."""
        try:
            async with asyncio.timeout(self.read_deadline):
                await self.redis.initialize()
        except (TimeoutError, RedisError, OSError, RuntimeError) as exc:
            self.health.failed(exc)
            raise StoreUnavailable(f"no node of the cluster answers: {exc}") from exc

    async def _read(self, call: Callable[[], Awaitable[_T]]) -> _T:
        """Run a read, within :attr:`read_deadline` in all: any failure is
        StoreUnavailable (the node is noted if known). (A read cut short by the deadline
        leaves nothing behind: redis-py drops a connection whose answer it did not read.)"""
        await self._ready()
        try:
            async with asyncio.timeout(self.read_deadline):
                result = await call()
        except (TimeoutError, RedisError, OSError, RuntimeError, AttributeError) as exc:
            # (AttributeError: a connection closed under the call by the client library,
            # which closes them all on CLUSTERDOWN.)
            await self._failed(exc)
            raise StoreUnavailable(str(exc)) from exc
        return result

    async def _write(
        self, script: AsyncScript, keys: list[str], args: list[Any], durable: bool = False
    ) -> Any:
        """Run a script on the primary of its keys' slot (see the module docstring).

        Raises:
            StoreUnavailable: nothing was run (no connection, ``CLUSTERDOWN``, ``TRYAGAIN``,
                ``READONLY``, the slot uncovered, too many redirections).
            OutcomeUnknown: the script was sent and no answer came back.
        """
        await self._ready()
        nodes = self.redis.nodes_manager
        slot = self.redis.keyslot(keys[0])
        asking: ClusterNode | None = None
        whole = False
        for _ in range(MAX_REDIRECTS):
            try:
                node = asking or nodes.get_node_from_slot(slot)
            except SlotNotCoveredError as exc:
                await self._failed(exc)
                raise StoreUnavailable(str(exc)) from exc
            wait = (durable and self.wait_ms > 0
                    and self._lone.get(node.name, 0.0) <= time.monotonic())
            try:
                conn = node.acquire_connection()
            except MaxConnectionsError as exc:
                raise StoreUnavailable(f"no free connection to {node.name}") from exc
            try:
                await node.disconnect_if_needed(conn)
                await conn.connect()
            except (TimeoutError, RedisError, OSError, RuntimeError) as exc:
                node.release(conn)
                await self._failed(exc, node)
                raise StoreUnavailable(str(exc)) from exc
            commands: list[tuple[Any, ...]] = []
            if asking is not None:
                commands.append(("ASKING",))
            if whole:
                commands.append(("EVAL", script.script, len(keys), *keys, *args))
            else:
                commands.append(("EVALSHA", script.sha, len(keys), *keys, *args))
            if wait:
                commands.append(("WAIT", 1, self.wait_ms))
            replies: list[Any] = []
            try:
                await conn.send_packed_command(conn.pack_commands(commands))
                for _command in commands:
                    try:
                        replies.append(await conn.read_response())
                    except ResponseError as exc:  # an error answer: the stream is intact
                        replies.append(exc)
            except (TimeoutError, RedisError, OSError, RuntimeError, AttributeError,
                    asyncio.CancelledError) as exc:
                # (AttributeError: the client library closed every connection meanwhile, as it
                # does on CLUSTERDOWN, and this one lost its socket under us.)
                # Drop the connection: a late answer must not be read as the next command's.
                with contextlib.suppress(Exception):
                    await conn.disconnect()
                node.release(conn)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                await self._failed(exc, node)
                raise OutcomeUnknown(str(exc)) from exc
            node.release(conn)
            reply = replies[1 if asking is not None else 0]
            asking = None
            if isinstance(reply, NoScriptError):
                whole = True  # not run (a new primary's script cache is empty): send it whole
                continue
            if isinstance(reply, AskError) and not isinstance(reply, MovedError):
                asking = nodes.get_node(host=reply.host, port=reply.port)
                if asking is None:
                    await nodes.move_slot(reply)
                    asking = nodes.get_node(host=reply.host, port=reply.port)
                continue
            if isinstance(reply, MovedError):
                await nodes.move_slot(reply)  # not run: the slot has a new primary
                continue
            if isinstance(reply, ClusterDownError | TryAgainError) or (
                isinstance(reply, ResponseError) and str(reply).startswith("READONLY")
            ):
                await self._failed(reply, node)
                raise StoreUnavailable(str(reply)) from reply
            if isinstance(reply, ResponseError):
                raise reply  # a script error: a bug, not an outage
            if wait:
                acked = replies[-1]
                if not isinstance(acked, int) or acked < 1:
                    self.unreplicated += 1
                    self._lone[node.name] = time.monotonic() + LONE_SECONDS
                    if self.unreplicated == 1 or self.unreplicated % 1000 == 0:
                        log.warning("redis cluster: %d room changes acknowledged without a "
                                    "replica's confirmation (%s)", self.unreplicated,
                                    node.name)
            self.health.succeeded(node.name)
            return reply
        raise StoreUnavailable(f"too many redirections for slot {slot}")

    # -- deadlines -------------------------------------------------------------------------
    async def claim_due(self, now: float, lease_until: float, limit: int = 100) -> list[Claim]:
        """See :meth:`RoomStore.claim_due`: read every bucket's index (one pipeline per
        shard, shards in parallel; a shard that fails is skipped this time), then claim each
        due room's deadlines with ``claim_room.lua``. ``limit`` counts rooms.

        Raises:
            StoreUnavailable / OutcomeUnknown: every shard, or every claim, failed.
        """
        await self._ready()
        by_node: dict[str, list[str]] = {}
        try:
            for key, slot in self._index_slots:
                node = self.redis.nodes_manager.get_node_from_slot(slot)
                by_node.setdefault(node.name, []).append(key)
        except SlotNotCoveredError as exc:
            await self._failed(exc)
            raise StoreUnavailable(str(exc)) from exc
        due_until = repr(float(now))

        async def scan(keys: list[str]) -> list[tuple[str, list[str]]]:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrangebyscore(key, "-inf", due_until, start=0, num=limit)
                found = await pipe.execute()
            return list(zip(keys, found, strict=True))

        scans = await asyncio.gather(
            *(self._read(lambda keys=keys: scan(keys)) for keys in by_node.values()),
            return_exceptions=True,
        )
        rooms: list[tuple[str, str]] = []
        errors: list[BaseException] = []
        for result in scans:
            if isinstance(result, BaseException):
                if not isinstance(result, StoreUnavailable):
                    raise result
                errors.append(result)
                continue
            for index, found in result:
                rooms.extend((index, room) for room in found)
        if errors and len(errors) == len(scans):
            raise errors[0]
        rooms = rooms[:limit]
        lease = repr(float(lease_until))
        claimed = await asyncio.gather(
            *(self._write(self._claim_room,
                          [self.key(room, "deadlines"), self.key(room, "deadline_data"), index],
                          [due_until, lease, room])
              for index, room in rooms),
            return_exceptions=True,
        )
        out: list[Claim] = []
        failed: list[BaseException] = []
        for result in claimed:
            if isinstance(result, BaseException):
                if not isinstance(result, StoreUnavailable | OutcomeUnknown):
                    raise result
                failed.append(result)  # an unknown claim's deadlines come back after a lease
                continue
            out.extend(Claim(Deadline.from_json(d), lease_until) for d in result)
        if failed and not out and len(failed) == len(claimed):
            raise failed[0]
        return out

    # -- the rest --------------------------------------------------------------------------
    async def ping(self) -> bool:
        """Whether the cluster answers PING (any node) within half a second."""
        try:
            await asyncio.wait_for(self.redis.initialize(), 0.5)
            return bool(await asyncio.wait_for(self.redis.ping(), 0.5))
        except Exception:
            return False
