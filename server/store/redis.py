"""Room store on Redis (production; any number of server processes share it).

Keys of one room share the hash tag ``{<room id>}`` so a Redis Cluster keeps them on one
shard:

* ``<prefix>room:{<id>}:state``: hash ``v`` (version) and ``data`` (the room record JSON).
* ``<prefix>room:{<id>}:actions``: hash ``"<seat>:<action id>"`` -> version it made.
* ``<prefix>room:{<id>}:log``: stream, one entry per accepted change (``v``, ``e`` JSON).
* ``<prefix>room:{<id>}:presence``: hash seat -> open connections.
* ``<prefix>room:{<id>}:deadlines``: sorted set ``"<kind>|<key>"`` -> due time (Unix
  seconds; the lease end once claimed).
* ``<prefix>room:{<id>}:deadline_data``: hash ``"<kind>|<key>"`` -> deadline JSON.
* channel ``<prefix>room:{<id>}:chan``: every accepted change and presence change.

All the room's keys expire ``ttl`` seconds after the room's last write. Each accepted change
is one ``EVALSHA`` of ``server/lua/commit.lua``: compare version, write, record the action
id, append to the log, write and clear the room's deadlines, publish, refresh expiry, in one
round trip — so a deadline (a computer seat's turn, the Muggins answer window) exists if and
only if the change that made it due was committed.

``<prefix>deadlines`` is the global index the sweepers scan: a sorted set room id -> that
room's earliest deadline, kept up to date by the same scripts. The sweeper's ``claim.lua``
reads it and claims the due deadlines of each due room, in one round trip.

Redis Cluster: a room's keys share one slot, but the index does not (no hash tag), and the
scripts that touch both are cross-slot. On a cluster the index would be written after the
commit (or sharded, one index per slot) and the claim split into the index read and one
claim per room; the per-room keys stay the truth, the index only a way to find them.
"""

from __future__ import annotations

import json
import secrets
from importlib import resources
from typing import Any

from redis.asyncio import Redis

from ..broker import PublishedMessages, channel_name
from .base import (
    Claim,
    Commit,
    CommitResult,
    Deadline,
    RoomRecord,
    RoomStore,
    presence_message,
)

_STATUS = {0: "ok", 1: "conflict", 2: "duplicate", 3: "missing"}


def _lua(name: str) -> str:
    return resources.files("server").joinpath("lua", name).read_text(encoding="utf-8")


class RedisStore(RoomStore):
    """Rooms in Redis.

    Args:
        redis: a ``redis.asyncio.Redis`` client created with ``decode_responses=True``.
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
        self._commit = redis.register_script(_lua("commit.lua"))
        self._create = redis.register_script(_lua("create.lua"))
        self._presence = redis.register_script(_lua("presence.lua"))
        self._claim = redis.register_script(_lua("claim.lua"))
        self._complete = redis.register_script(_lua("complete.lua"))
        self._schedule = redis.register_script(_lua("schedule.lua"))
        self._dl_index = f"{prefix}deadlines"

    def key(self, room_id: str, what: str) -> str:
        """The key ``<prefix>room:{<id>}:<what>``."""
        return f"{self.prefix}room:{{{room_id}}}:{what}"

    def _keys(self, room_id: str) -> list[str]:
        return [
            *(self.key(room_id, k) for k in ("state", "actions", "log", "presence")),
            *self._dl_keys(room_id),
        ]

    def _dl_keys(self, room_id: str) -> list[str]:
        """The room's deadline keys and the global index."""
        return [
            self.key(room_id, "deadlines"),
            self.key(room_id, "deadline_data"),
            self._dl_index,
        ]

    async def create(self, record: RoomRecord) -> bool:
        """See :meth:`RoomStore.create`."""
        ok = await self._create(
            keys=[self.key(record.id, "state")], args=[record.to_json(), self.ttl]
        )
        return bool(ok)

    async def load(
        self, room_id: str, action_key: str | None = None
    ) -> tuple[RoomRecord | None, int | None]:
        """See :meth:`RoomStore.load` (one round trip, pipelined)."""
        if action_key:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hget(self.key(room_id, "state"), "data")
                pipe.hget(self.key(room_id, "actions"), action_key)
                data, done = await pipe.execute()
        else:
            data = await self.redis.hget(self.key(room_id, "state"), "data")
            done = None
        record = RoomRecord.from_json(data) if data else None
        return record, (int(done) if done is not None else None)

    async def action_version(self, room_id: str, action_key: str) -> int | None:
        """See :meth:`RoomStore.action_version`."""
        done = await self.redis.hget(self.key(room_id, "actions"), action_key)
        return int(done) if done is not None else None

    async def commit(self, commit: Commit) -> CommitResult:
        """See :meth:`RoomStore.commit`: one EVALSHA of ``commit.lua``."""
        room_id = commit.record.id
        head = json.dumps(
            {
                "t": "u",
                "v": commit.record.version,
                "events": commit.events,
                "seats_changed": commit.seats_changed,
            },
            separators=(",", ":"),
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
            ops = json.dumps(
                {
                    "set": [[d.slot, repr(float(d.due)), d.to_json()] for d in commit.deadlines],
                    "clear": list(commit.clear),
                },
                separators=(",", ":"),
            )
        status, version = await self._commit(
            keys=self._keys(room_id),
            args=[
                commit.expected_version,
                record_json,
                commit.action_key or "",
                json.dumps(commit.log_entry, separators=(",", ":")),
                head,
                channel_name(self.prefix, room_id),
                self.ttl,
                self.log_limit,
                room_id,
                ops,
            ],
        )
        result = CommitResult(_STATUS[int(status)], int(version))  # type: ignore[arg-type]
        if text is not None and result.status != "ok":
            self.published.discard(text)  # type: ignore[union-attr]  (never published)
        return result

    async def log(self, room_id: str) -> list[dict[str, Any]]:
        """See :meth:`RoomStore.log`."""
        entries = await self.redis.xrange(self.key(room_id, "log"))
        return [{"v": int(f["v"]), **json.loads(f["e"])} for _, f in entries]

    async def presence_change(
        self, room_id: str, seat: int, delta: int, name: str | None
    ) -> int:
        """See :meth:`RoomStore.presence_change` (one script call)."""
        on = json.dumps(presence_message(room_id, seat, True, name))
        off = json.dumps(presence_message(room_id, seat, False, name))
        after = await self._presence(
            keys=[self.key(room_id, "presence"), self.key(room_id, "state")],
            args=[seat, delta, channel_name(self.prefix, room_id), on, off, self.ttl],
        )
        return int(after)

    async def presence(self, room_id: str) -> dict[int, int]:
        """See :meth:`RoomStore.presence`."""
        raw = await self.redis.hgetall(self.key(room_id, "presence"))
        return {int(k): int(v) for k, v in raw.items()}

    async def schedule(self, deadline: Deadline) -> None:
        """See :meth:`RoomStore.schedule` (one script call, ``schedule.lua``)."""
        await self._schedule(
            keys=self._dl_keys(deadline.room),
            args=[deadline.room, deadline.slot, repr(float(deadline.due)), deadline.to_json(),
                  self.ttl],
        )

    async def cancel(self, room: str, kind: str, key: str = "") -> None:
        """See :meth:`RoomStore.cancel` (one script call, ``schedule.lua``)."""
        await self._schedule(
            keys=self._dl_keys(room), args=[room, f"{kind}|{key}", "", "", self.ttl]
        )

    async def claim_due(self, now: float, lease_until: float, limit: int = 100) -> list[Claim]:
        """See :meth:`RoomStore.claim_due` (one script call; ``limit`` counts rooms)."""
        raw = await self._claim(
            keys=[self._dl_index],
            args=[repr(float(now)), repr(float(lease_until)), limit, self.prefix],
        )
        return [Claim(Deadline.from_json(d), lease_until) for d in raw]

    async def complete(self, claim: Claim) -> None:
        """See :meth:`RoomStore.complete`."""
        await self._complete(
            keys=self._dl_keys(claim.deadline.room),
            args=[claim.deadline.slot, repr(float(claim.lease)), claim.deadline.room],
        )

    async def token_secret(self) -> bytes:
        """The deployment's token secret, kept in Redis under ``<prefix>server:token-secret``.

        The first process to ask creates it (``SET NX``, no expiry); every other process
        reads the same one, so a token issued by one process is recognised by all.
        """
        key = f"{self.prefix}server:token-secret"
        await self.redis.set(key, secrets.token_hex(32), nx=True)
        value = await self.redis.get(key)
        return bytes.fromhex(value)

    async def ping(self) -> bool:
        """Whether Redis answers PING."""
        try:
            return bool(await self.redis.ping())
        except Exception:
            return False

    async def close(self) -> None:
        """Close the client's connections."""
        await self.redis.aclose()
