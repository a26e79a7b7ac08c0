"""Room store on Redis (production; any number of server processes share it).

Keys of one room share the hash tag ``{<room id>}`` so a Redis Cluster keeps them on one
shard:

* ``<prefix>room:{<id>}:state``: hash ``v`` (version) and ``data`` (the room record JSON).
* ``<prefix>room:{<id>}:actions``: hash ``"<game>:<seat>:<action id>"`` ->
  ``"<version>|<digest>"`` (exactly-once, and re-used ids recognised).
* ``<prefix>room:{<id>}:log``: stream, one entry per accepted change, with the entry id
  ``<version>-0`` (so the log is read by version) and the field ``e`` (the entry's JSON,
  full events included).
* ``<prefix>room:{<id>}:presence``: hash ``"<seat>|<owner>"`` -> connections that server
  process holds for that seat (docs/architecture.md, "Presence").
* ``<prefix>room:{<id>}:watchers``: hash ``<owner>`` -> that server process's spectators of
  the room (``max_spectators_per_room``).
* ``<prefix>room:{<id>}:deadlines``: sorted set ``"<kind>|<key>"`` -> due time (Unix
  seconds; the lease end once claimed).
* ``<prefix>room:{<id>}:deadline_data``: hash ``"<kind>|<key>"`` -> deadline JSON.
* channel ``<prefix>room:{<id>}:chan``: every accepted change and presence change.

Process-wide keys: ``<prefix>deadlines`` (the index the sweepers scan: room id -> that room's
earliest deadline, kept up to date by the same scripts), ``<prefix>{owners}:live`` (owner
id -> its last heartbeat), ``<prefix>{owners}:reaping`` (owners being reaped -> reap lease
end), ``<prefix>{owners}:rooms:<owner>`` (the rooms an owner may hold presence in), and
``<prefix>server:token-secret``.

All of a room's keys expire ``ttl`` seconds after the room's last write. Each accepted change
is one ``EVALSHA`` of ``server/lua/commit.lua``: check the action id, compare the version,
write, record the action id, append to the log, write and clear the room's deadlines,
publish, refresh expiry, in one round trip — so a deadline (a computer seat's turn, the
Muggins answer window, the turn clock) exists if and only if the change that made it due
was committed.

Failures: a read that fails raises :class:`StoreUnavailable`; a write raises
:class:`StoreUnavailable` only when it surely never reached Redis (no connection could be
made or taken from the pool), and :class:`OutcomeUnknown` once its command was sent and no
answer came (Redis may still apply it). Writes are sent on a connection leased explicitly
(:class:`server.store.lane.WriteLane`, connections of the client's pool kept between
writes), so the two cases are told apart exactly, and never retried by the client library
(the room service decides).

Redis Cluster: this layout is for one Redis (or a primary with replicas). The deadline index
has no hash tag and ``claim.lua`` builds rooms' keys itself, so on a Redis Cluster the
scripts would be cross-slot; :class:`server.store.cluster.ClusterRedisStore` keeps the same
data in a bucketed layout instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError, RedisError

from protocol import jsontext

from ..broker import PublishedMessages, channel_name
from .base import (
    Claim,
    Commit,
    CommitResult,
    Deadline,
    Done,
    OutcomeUnknown,
    ParkOutcome,
    PresenceCounts,
    RoomGone,
    RoomRecord,
    RoomStore,
    StoreUnavailable,
)
from .health import StoreHealth
from .lane import WriteLane

_STATUS = {0: "ok", 1: "conflict", 2: "duplicate", 3: "missing"}
_T = TypeVar("_T")

PING_TIMEOUT_SECONDS = 0.5
"""How long :meth:`RedisStore.ping` waits for PONG (``/readyz`` must answer quickly)."""


def _lua(name: str) -> str:
    return resources.files("server").joinpath("lua", name).read_text(encoding="utf-8")


class RedisStore(RoomStore):
    """Rooms in Redis.

    Args:
        redis: a ``redis.asyncio.Redis`` client created with ``decode_responses=True``
            (the app gives it short socket timeouts and no client-side retries).
        prefix: prepended to every key and channel (tests use a random one).
        ttl_seconds: idle expiry of a room (default 24 h).
        log_limit: approximate cap of log entries kept per room.
        published: where to note the exact text of each update message this store
            publishes, with its plain data, so that this process's
            :class:`~server.broker.RedisBroker` hands it to listeners without decoding it
            (``RedisBroker.published``); None to skip.
    """

    def __init__(
        self,
        redis: Redis,
        prefix: str = "",
        ttl_seconds: int = 86400,
        log_limit: int = 5000,
        published: PublishedMessages | None = None,
    ) -> None:
        self.redis = redis
        self.published = published
        self.prefix = prefix
        self.ttl = int(ttl_seconds)
        self.log_limit = log_limit
        self.health = StoreHealth("redis")
        self._lane: WriteLane | None = None
        if isinstance(redis, Redis):
            # Half the pool at most stays with the writes; reads always have the rest.
            pool = redis.connection_pool
            self._lane = WriteLane(pool, keep=min(64, pool.max_connections // 2))
        self._commit = self._script("commit.lua")
        self._create = self._script("create.lua")
        self._presence = self._script("presence.lua")
        self._watchers = self._script("watchers.lua")
        self._claim = self._script("claim.lua")
        self._complete = self._script("complete.lua")
        self._park = self._script("park.lua")
        self._schedule = self._script("schedule.lua")
        self._extend = self._script("extend.lua")
        self._heartbeat = self._script("owner_heartbeat.lua")
        self._claim_owner = self._script("owner_claim.lua")
        self._outbox_done = self._script("outbox_done.lua")
        self._hold = self._script("hold.lua")
        self._chat_post = self._script("chat_post.lua")
        self._chat_hide = self._script("chat_hide.lua")
        self._dl_index = f"{prefix}deadlines"
        self._owners = f"{prefix}{{owners}}:live"
        self._reaping = f"{prefix}{{owners}}:reaping"

    def _script(self, name: str) -> AsyncScript:
        """Register one of ``server/lua/``'s scripts."""
        return self.redis.register_script(_lua(name))

    # -- keys ------------------------------------------------------------------------------
    def key(self, room_id: str, what: str) -> str:
        """The key ``<prefix>room:{<id>}:<what>``."""
        return f"{self.prefix}room:{{{room_id}}}:{what}"

    def channel(self, room_id: str) -> str:
        """The room's pub/sub channel (:func:`server.broker.channel_name`)."""
        return channel_name(self.prefix, room_id)

    def _index(self, room_id: str) -> str:
        """The deadline index the room's earliest deadline is kept in (one for all rooms)."""
        return self._dl_index

    def _keys(self, room_id: str) -> list[str]:
        return [
            *(self.key(room_id, k) for k in ("state", "actions", "log", "presence")),
            *self._dl_keys(room_id),
            self.key(room_id, "outbox"),
        ]

    def _dl_keys(self, room_id: str) -> list[str]:
        """The room's deadline keys and the index."""
        return [
            self.key(room_id, "deadlines"),
            self.key(room_id, "deadline_data"),
            self._index(room_id),
        ]

    def _owner_rooms(self, owner: str) -> str:
        return f"{self.prefix}{{owners}}:rooms:{owner}"

    # -- calling Redis ---------------------------------------------------------------------
    async def _failed(self, exc: BaseException) -> None:
        """Note a failure; at the start of an outage drop the pool's idle connections (after
        a Redis restart each of them would otherwise fail once more when next used)."""
        starting = not self.health.down
        self.health.failed(exc)
        if starting:
            if self._lane is not None:
                with contextlib.suppress(Exception):
                    await self._lane.drop_idle()
            with contextlib.suppress(Exception):
                await self.redis.connection_pool.disconnect(inuse_connections=False)

    async def _read(self, call: Callable[[], Awaitable[_T]]) -> _T:
        """Run a read (or a write that is safe to lose): any failure is StoreUnavailable.

        (RuntimeError is what uvloop raises for a write on a transport that closed under
        the connection, as when a Redis node is killed.)"""
        try:
            result = await call()
        except (TimeoutError, RedisError, OSError, RuntimeError) as exc:
            await self._failed(exc)
            raise StoreUnavailable(str(exc)) from exc
        self.health.succeeded()
        return result

    async def _write(
        self, script: AsyncScript, keys: list[str], args: list[Any], durable: bool = False
    ) -> Any:
        """Run a script that writes, telling "never sent" from "sent, answer lost".

        ``durable``: a room change the client is told of (the cluster store waits for a
        replica; one Redis has none to wait for).

        Raises:
            StoreUnavailable: no connection could be had (nothing was sent).
            OutcomeUnknown: the command was sent and no answer came back.
        """
        lane = self._lane
        if lane is None:
            raise RuntimeError("RedisStore needs a redis.asyncio.Redis client")
        try:
            conn = await lane.take()
        except (TimeoutError, RedisError, OSError, RuntimeError) as exc:
            await self._failed(exc)
            raise StoreUnavailable(str(exc)) from exc
        try:
            try:
                result = await lane.call(
                    conn, "EVALSHA", script.sha, len(keys), *keys, *args)
            except NoScriptError:
                # Not run (the script cache was flushed, e.g. Redis restarted): send it whole.
                result = await lane.call(conn, "EVAL", script.script, len(keys), *keys, *args)
        except (TimeoutError, RedisError, OSError, RuntimeError, asyncio.CancelledError) as exc:
            # Close the connection: a late answer must not be read as the next command's.
            await lane.put(conn, close=True)
            if isinstance(exc, asyncio.CancelledError):
                raise
            if isinstance(exc, RedisError) and not _is_connection_error(exc):
                raise  # a script error: a bug, not an outage
            await self._failed(exc)
            raise OutcomeUnknown(str(exc)) from exc
        await lane.put(conn)
        self.health.succeeded()
        return result

    # -- rooms -----------------------------------------------------------------------------
    async def create(self, record: RoomRecord) -> bool:
        """See :meth:`RoomStore.create`."""
        ok = await self._write(
            self._create, [self.key(record.id, "state")], [record.to_json(), self.ttl],
            durable=True,
        )
        return bool(ok)

    async def load(
        self, room_id: str, action_key: str | None = None
    ) -> tuple[RoomRecord | None, Done | None]:
        """See :meth:`RoomStore.load` (one round trip, pipelined)."""

        async def call() -> tuple[Any, Any]:
            if not action_key:
                return await self.redis.hget(self.key(room_id, "state"), "data"), None
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hget(self.key(room_id, "state"), "data")
                pipe.hget(self.key(room_id, "actions"), action_key)
                data, found = await pipe.execute()
            return data, found

        data, found = await self._read(call)
        record = RoomRecord.from_json(data) if data else None
        done = Done.parse(action_key, found) if action_key and found else None
        return record, done

    async def version(self, room_id: str) -> int | None:
        """See :meth:`RoomStore.version`."""
        value = await self._read(lambda: self.redis.hget(self.key(room_id, "state"), "v"))
        return int(value) if value is not None else None

    async def versions(self, room_ids: list[str]) -> list[int | None]:
        """See :meth:`RoomStore.versions` (one pipelined round trip)."""
        if not room_ids:
            return []

        async def call() -> list[Any]:
            async with self.redis.pipeline(transaction=False) as pipe:
                for room_id in room_ids:
                    pipe.hget(self.key(room_id, "state"), "v")
                return await pipe.execute()

        values = await self._read(call)
        return [int(v) if v is not None else None for v in values]

    async def commit(self, commit: Commit) -> CommitResult:
        """See :meth:`RoomStore.commit`: one EVALSHA of ``commit.lua``."""
        room_id = commit.record.id
        head = jsontext.dumps(
            {
                "t": "u",
                "v": commit.record.version,
                "events": commit.events,
                "seats_changed": commit.seats_changed,
            }
        )
        head = head[:-1] + ',"room":'
        record_json = commit.record.to_json()
        text = None
        if self.published is not None:
            # What commit.lua publishes (head .. record .. "}"), noted before the call: the
            # message can reach this process's subscription before the script's reply.
            text = head + record_json + "}"
            noted = self.published.add(room_id, text, {
                "t": "u",
                "v": commit.record.version,
                "events": commit.events,
                "seats_changed": commit.seats_changed,
                "record": commit.record,
                "state": commit.state,
            })
            if not noted:
                text = None
        ops = ""
        if commit.deadlines or commit.clear:
            ops = jsontext.dumps(
                {
                    "set": [[d.slot, repr(float(d.due)), d.to_json()] for d in commit.deadlines],
                    "clear": list(commit.clear),
                }
            )
        try:
            status, version, digest = await self._write(
                self._commit,
                self._keys(room_id),
                [
                    commit.expected_version,
                    record_json,
                    commit.action_key or "",
                    jsontext.dumps(commit.log_entry),
                    head,
                    self.channel(room_id),
                    self.ttl if commit.ttl_seconds is None else max(1, int(commit.ttl_seconds)),
                    self.log_limit,
                    room_id,
                    ops,
                    commit.action_digest,
                    commit.action_game,
                    "1" if commit.previous_game_ok else "0",
                    str(commit.outbox[0]) if commit.outbox else "",
                    str(commit.outbox[1]) if commit.outbox else "",
                ],
                durable=True,
            )
        except StoreUnavailable:
            if text is not None:
                self.published.discard(text)  # type: ignore[union-attr]  (never published)
            raise
        result = CommitResult(
            _STATUS[int(status)], int(version), str(digest or "")  # type: ignore[arg-type]
        )
        if text is not None and result.status != "ok":
            self.published.discard(text)  # type: ignore[union-attr]  (never published)
        return result

    async def log(
        self, room_id: str, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """See :meth:`RoomStore.log` (entry ids are ``<version>-0``: one XRANGE)."""
        entries = await self._read(
            lambda: self.redis.xrange(
                self.key(room_id, "log"), min=f"{int(after) + 1}-0", max="+", count=limit
            )
        )
        return [{"v": int(entry_id.partition("-")[0]), **jsontext.loads(f["e"])}
                for entry_id, f in entries]

    # -- presence -------------------------------------------------------------------------
    async def set_presence(
        self,
        room_id: str,
        owner: str,
        counts: PresenceCounts,
        *,
        full: bool = False,
        takeovers: dict[int, Deadline] | None = None,
        now: float | None = None,
    ) -> PresenceCounts | None:
        """See :meth:`RoomStore.set_presence` (one script call, ``presence.lua``)."""
        args = jsontext.dumps({
            "counts": {str(s): int(n) for s, n in counts.items()},
            "full": bool(full),
            "takeovers": {str(s): [repr(float(d.due)), d.to_json()]
                          for s, d in (takeovers or {}).items()},
        })
        keys = [self.key(room_id, "presence"), self.key(room_id, "state"),
                *self._dl_keys(room_id)]
        after = await self._write(
            self._presence, keys,
            [owner, args, self.channel(room_id), self.ttl, room_id,
             "" if now is None else repr(float(now))],
        )
        if not after:
            return None
        return {int(s): int(n) for s, n in jsontext.loads(after).items() if int(n) > 0}

    async def presence(self, room_id: str) -> PresenceCounts:
        """See :meth:`RoomStore.presence`."""
        totals: PresenceCounts = {}
        for seat_counts in (await self.presence_owners(room_id)).values():
            for seat, n in seat_counts.items():
                totals[seat] = totals.get(seat, 0) + n
        return {s: n for s, n in totals.items() if n > 0}

    async def set_watchers(self, room_id: str, owner: str, count: int, cap: int = 0
                           ) -> int | None:
        """See :meth:`RoomStore.set_watchers` (one script call, ``watchers.lua``)."""
        total = int(await self._write(
            self._watchers,
            [self.key(room_id, "watchers"), self.key(room_id, "state")],
            [owner, int(count), int(cap), self.ttl],
        ))
        return None if total == -2 else total

    async def watchers(self, room_id: str) -> dict[str, int]:
        """See :meth:`RoomStore.watchers`."""
        raw = await self._read(lambda: self.redis.hgetall(self.key(room_id, "watchers")))
        return {owner: int(n) for owner, n in raw.items()}

    async def presence_owners(self, room_id: str) -> dict[str, PresenceCounts]:
        """See :meth:`RoomStore.presence_owners`."""
        raw = await self._read(lambda: self.redis.hgetall(self.key(room_id, "presence")))
        out: dict[str, PresenceCounts] = {}
        for field, value in raw.items():
            seat, _, owner = field.partition("|")
            out.setdefault(owner, {})[int(seat)] = int(value)
        return out

    async def owner_heartbeat(
        self, owner: str, now: float, rooms: list[str], register: bool = False
    ) -> bool:
        """See :meth:`RoomStore.owner_heartbeat` (one script call)."""
        known = await self._write(
            self._heartbeat,
            [self._owners, self._owner_rooms(owner)],
            [owner, repr(float(now)), "1" if register else "0", max(self.ttl, 3600), *rooms],
        )
        return bool(int(known))

    async def expired_owners(self, before: float) -> list[str]:
        """See :meth:`RoomStore.expired_owners` (also owners whose reaper died)."""
        now = repr(float(before))

        async def call() -> list[Any]:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrangebyscore(self._owners, "-inf", f"({now}")
                pipe.zrangebyscore(self._reaping, "-inf", "+inf", withscores=True)
                return await pipe.execute()

        expired, reaping = await self._read(call)
        return list(expired) + [owner for owner, _ in reaping]

    async def claim_owner(
        self, owner: str, before: float, now: float, lease_until: float
    ) -> list[str] | None:
        """See :meth:`RoomStore.claim_owner` (one script call)."""
        rooms = await self._write(
            self._claim_owner,
            [self._owners, self._reaping, self._owner_rooms(owner)],
            [owner, repr(float(before)), repr(float(now)), repr(float(lease_until))],
        )
        return None if rooms is None else list(rooms)

    async def forget_owner(self, owner: str) -> None:
        """See :meth:`RoomStore.forget_owner`."""

        async def call() -> None:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrem(self._reaping, owner)
                pipe.delete(self._owner_rooms(owner))
                await pipe.execute()

        await self._read(call)

    async def forget_owner_rooms(self, owner: str, rooms: list[str]) -> None:
        """See :meth:`RoomStore.forget_owner_rooms`."""
        if rooms:
            await self._read(lambda: self.redis.srem(self._owner_rooms(owner), *rooms))

    # -- deadlines -------------------------------------------------------------------------
    async def schedule(self, deadline: Deadline) -> None:
        """See :meth:`RoomStore.schedule` (one script call, ``schedule.lua``)."""
        await self._write(
            self._schedule,
            self._dl_keys(deadline.room),
            [deadline.room, deadline.slot, repr(float(deadline.due)), deadline.to_json(),
             self.ttl],
        )

    async def cancel(self, room: str, kind: str, key: str = "") -> None:
        """See :meth:`RoomStore.cancel` (one script call, ``schedule.lua``)."""
        await self._write(
            self._schedule, self._dl_keys(room), [room, f"{kind}|{key}", "", "", self.ttl]
        )

    async def claim_due(self, now: float, lease_until: float, limit: int = 100) -> list[Claim]:
        """See :meth:`RoomStore.claim_due` (one script call; ``limit`` counts rooms)."""
        raw = await self._write(
            self._claim,
            [self._dl_index],
            [repr(float(now)), repr(float(lease_until)), limit, self.prefix],
        )
        return [Claim(Deadline.from_json(d), lease_until) for d in raw]

    async def extend(self, claim: Claim, lease_until: float) -> Claim | None:
        """See :meth:`RoomStore.extend` (one script call, ``extend.lua``)."""
        d = claim.deadline
        ok = await self._write(
            self._extend,
            [self.key(d.room, "deadlines"), self._index(d.room)],
            [d.slot, repr(float(claim.lease)), repr(float(lease_until)), d.room],
        )
        return Claim(d, lease_until) if int(ok) else None

    async def complete(self, claim: Claim) -> None:
        """See :meth:`RoomStore.complete`."""
        await self._write(
            self._complete,
            self._dl_keys(claim.deadline.room),
            [claim.deadline.slot, repr(float(claim.lease)), claim.deadline.room],
        )

    async def park_unless_present(self, claim: Claim, parked: Deadline) -> ParkOutcome:
        """See :meth:`RoomStore.park_unless_present` (one script call, ``park.lua``)."""
        room = claim.deadline.room
        outcome = await self._write(
            self._park,
            [self.key(room, "presence"), *self._dl_keys(room)],
            [claim.deadline.slot, repr(float(claim.lease)), repr(float(parked.due)),
             parked.to_json(), self.ttl, room],
        )
        return str(outcome)  # type: ignore[return-value]

    async def deadlines(self, room_id: str) -> list[Deadline]:
        """See :meth:`RoomStore.deadlines`."""
        raw = await self._read(lambda: self.redis.hgetall(self.key(room_id, "deadline_data")))
        return sorted((Deadline.from_json(v) for v in raw.values()), key=lambda d: d.due)

    # -- the archive's outbox ---------------------------------------------------------------
    async def outbox(self, room_id: str, game: int) -> list[dict[str, Any]] | None:
        """See :meth:`RoomStore.outbox` (one ``HGET``)."""
        raw = await self._read(lambda: self.redis.hget(self.key(room_id, "outbox"), str(game)))
        if raw is None:
            return None
        flat = jsontext.loads(raw)
        return [{"v": int(flat[i]), **flat[i + 1]} for i in range(0, len(flat), 2)]

    async def finish_outbox(self, claim: Claim, game: int) -> bool:
        """See :meth:`RoomStore.finish_outbox` (one script call, ``outbox_done.lua``)."""
        d = claim.deadline
        done = await self._write(
            self._outbox_done,
            [*self._dl_keys(d.room), self.key(d.room, "outbox")],
            [d.slot, repr(float(claim.lease)), d.room, str(game)],
        )
        return bool(int(done))

    async def hold(self, room_id: str, until: float) -> bool:
        """See :meth:`RoomStore.hold` (one script call, ``hold.lua``)."""
        seconds = max(1, int(until - time.time()) + 1)
        keys = [self.key(room_id, k) for k in ("state", "actions", "log", "presence",
                                                "deadlines", "deadline_data", "outbox")]
        return bool(int(await self._write(self._hold, keys, [seconds])))

    # -- table talk ------------------------------------------------------------------------
    async def chat_post(self, room_id: str, entry: dict[str, Any], keep: int,
                        per_second: int = 0) -> int | None:
        """See :meth:`RoomStore.chat_post` (one script call, ``chat_post.lua``; the room's
        ``chat`` list, ``chat_seq`` and this second's ``chat_rate:<s>`` key, or
        ``chat_rate_spectators:<s>`` for the spectators' own talk)."""
        text = jsontext.dumps(entry)
        second = int(time.time())
        lane = "chat_rate" if entry.get("audience") != "spectators" else "chat_rate_spectators"
        keys = [self.key(room_id, "state"), self.key(room_id, "chat"),
                self.key(room_id, "chat_seq"), self.key(room_id, f"{lane}:{second}")]
        got = int(await self._write(self._chat_post, keys, [
            "," + text[1:] if text != "{}" else "}", int(keep), self.ttl,
            self.channel(room_id), room_id, int(per_second)]))
        if got == 0:
            raise RoomGone(f"room {room_id} does not exist")
        return None if got < 0 else got

    async def chat_recent(self, room_id: str) -> list[dict[str, Any]]:
        """See :meth:`RoomStore.chat_recent` (the ``chat`` list and ``chat_hidden`` set)."""
        async def call() -> list[Any]:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.lrange(self.key(room_id, "chat"), 0, -1)
                pipe.smembers(self.key(room_id, "chat_hidden"))
                return await pipe.execute()
        raw, hidden = await self._read(call)
        gone = {int(h) for h in hidden}
        out = [jsontext.loads(item) for item in raw]
        return [e for e in out if e.get("id") not in gone]

    async def chat_hide(self, room_id: str, message_id: int) -> bool:
        """See :meth:`RoomStore.chat_hide` (one script call, ``chat_hide.lua``)."""
        return bool(int(await self._write(
            self._chat_hide, [self.key(room_id, "chat_hidden")],
            [int(message_id), self.ttl, self.channel(room_id), room_id])))

    # -- the rest --------------------------------------------------------------------------
    async def token_secret(self) -> bytes:
        """The deployment's token secret, kept in Redis under ``<prefix>server:token-secret``.

        The first process to ask creates it (``SET NX``, no expiry); every other process
        reads the same one, so a token issued by one process is recognised by all.

        Raises:
            StoreUnavailable: Redis cannot be reached.
        """
        key = f"{self.prefix}server:token-secret"

        async def call() -> str:
            await self.redis.set(key, secrets.token_hex(32), nx=True)
            return await self.redis.get(key)

        return bytes.fromhex(await self._read(call))

    async def ping(self) -> bool:
        """Whether Redis answers PING within :data:`PING_TIMEOUT_SECONDS`."""
        try:
            return bool(await asyncio.wait_for(self.redis.ping(), PING_TIMEOUT_SECONDS))
        except Exception:
            return False

    async def close(self) -> None:
        """Close the client's connections."""
        await self.redis.aclose()


def _is_connection_error(exc: RedisError) -> bool:
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return isinstance(exc, RedisConnectionError | RedisTimeoutError)
