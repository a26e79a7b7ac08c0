"""Challenges (issue 20 point 3): one player asks another to a table.

A challenge is a record in the store (Redis or this process's memory), with its expiry as
data (docs/protocol.md, "Challenges, blocks and online now")::

    {"id": "<16 of [a-z2-7]>", "challenger": {"id", "name"}, "challenged": {"id", "name"},
     "options": {...engine options}, "room": {...room settings asked for},
     "created": <Unix s>, "expires": <Unix s>,
     "status": "pending" | "accepted" | "declined" | "expired",
     "room_id": <the room, once accepted> | null, "answered": <Unix s> | null}

A pending challenge whose ``expires`` has passed *is* expired, whoever looks first writes
so (:meth:`ChallengeStore.answer` turns ``pending`` into ``expired`` past it, whatever it
was asked), and an answer after it is refused. Status changes only from ``pending``, once,
atomically (a Lua script on the challenge's one key on Redis), so an accept and a decline
racing on two processes cannot both win.

Keys (Redis; every command and script touches one key, so a Redis Cluster needs no shared
slot):

* ``<prefix>challenge:{<id>}``: a hash: ``data`` (the JSON of the fixed part), ``status``,
  ``expires``, ``room_id``, ``answered``; kept :data:`KEEP_SECONDS` past its expiry (so a
  page that comes back late still learns the room of an accepted challenge).
* ``<prefix>challenges:{<player>}``: a sorted set of the player's challenges, made and
  received, by the time they are kept until (what a new connection of theirs is told).
* ``<prefix>challenges:due``: a sorted set of challenges not yet announced as over, by
  expiry: the timer, as data. Every process looks at it about once a second
  (``server.social.service.SocialService.sweep``), expires what is due and announces it;
  an answered challenge leaves it once its answer was published (so a process that dies
  between the answer and its announcement leaves it to be announced at its expiry: at
  least once; clients drop repeats by id and status).

Delivery is :class:`Channels`: one pub/sub channel per player (through the process's
``server.broker`` under the key ``p:<player>``), which a process follows while it holds a
connection of that player.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from typing import Any

KEEP_SECONDS = 120.0
"""How long a challenge is kept past its expiry."""

STATUSES = ("pending", "accepted", "declined", "expired")

_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def new_challenge_id() -> str:
    """A challenge id: 16 characters of ``[a-z2-7]`` (80 random bits)."""
    return "".join(secrets.choice(_BASE32) for _ in range(16))


def channel_key(player: str) -> str:
    """The broker key of a player's channel (``server.broker`` names the channel)."""
    return f"p:{player}"


class ChallengeStore:
    """Where challenges live (see the module docstring for the shapes).

    Args:
        clock: Unix seconds.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock

    async def create(self, record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Store a new challenge (``status`` pending), unless one with its id exists.

        Returns:
            ``(the stored record, whether it was new)``.
        """
        raise NotImplementedError

    async def get(self, challenge_id: str) -> dict[str, Any] | None:
        """The challenge, as of now (a pending one past its expiry reads as expired)."""
        raise NotImplementedError

    async def answer(self, challenge_id: str, status: str, room_id: str | None = None
                     ) -> dict[str, Any] | None:
        """Move a pending challenge to ``status`` (``accepted`` with ``room_id``,
        ``declined``, ``expired``) — or to ``expired`` when its time is up (an ``expired``
        asked for before then changes nothing). A challenge already answered stays as it
        is.

        Returns:
            The record after it (compare its ``status``), or None (no such challenge).
        """
        raise NotImplementedError

    async def of_player(self, player: str) -> list[dict[str, Any]]:
        """The player's challenges, made and received, still kept, oldest first."""
        raise NotImplementedError

    async def due(self, limit: int = 100) -> list[str]:
        """Ids of challenges not yet announced whose expiry has passed."""
        raise NotImplementedError

    async def announced(self, challenge_id: str) -> None:
        """The challenge's end was announced: out of the due set."""
        raise NotImplementedError

    @staticmethod
    def _now_status(record: dict[str, Any], now: float) -> dict[str, Any]:
        if record["status"] == "pending" and now >= record["expires"]:
            return {**record, "status": "expired"}
        return record


class MemoryChallenges(ChallengeStore):
    """Challenges in this process (no Redis)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock)
        self.records: dict[str, dict[str, Any]] = {}
        self.by_player: dict[str, dict[str, float]] = {}
        self.due_set: dict[str, float] = {}

    def _purge(self, now: float) -> None:
        for cid in [c for c, r in self.records.items()
                    if r["expires"] + KEEP_SECONDS <= now and c not in self.due_set]:
            self.records.pop(cid, None)
        for player, ids in list(self.by_player.items()):
            for cid in [c for c, until in ids.items() if until <= now]:
                ids.pop(cid, None)
            if not ids:
                self.by_player.pop(player, None)

    async def create(self, record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        now = self.clock()
        self._purge(now)
        there = self.records.get(record["id"])
        if there is not None:
            return self._now_status(dict(there), now), False
        self.records[record["id"]] = dict(record)
        until = record["expires"] + KEEP_SECONDS
        for side in ("challenger", "challenged"):
            self.by_player.setdefault(record[side]["id"], {})[record["id"]] = until
        self.due_set[record["id"]] = record["expires"]
        return dict(record), True

    async def get(self, challenge_id: str) -> dict[str, Any] | None:
        record = self.records.get(challenge_id)
        return self._now_status(dict(record), self.clock()) if record else None

    async def answer(self, challenge_id: str, status: str, room_id: str | None = None
                     ) -> dict[str, Any] | None:
        record = self.records.get(challenge_id)
        if record is None:
            return None
        now = self.clock()
        if record["status"] == "pending":
            want: str | None = status
            if now >= record["expires"]:
                want = "expired"
            elif status == "expired":
                want = None
            if want is not None:
                record.update(status=want, answered=now,
                              room_id=room_id if want == "accepted" else None)
        return dict(record)

    async def of_player(self, player: str) -> list[dict[str, Any]]:
        now = self.clock()
        self._purge(now)
        ids = sorted(self.by_player.get(player, {}), key=lambda c: self.records[c]["created"]
                     if c in self.records else 0)
        return [self._now_status(dict(self.records[c]), now) for c in ids
                if c in self.records]

    async def due(self, limit: int = 100) -> list[str]:
        now = self.clock()
        return sorted((c for c, at in self.due_set.items() if at <= now),
                      key=self.due_set.__getitem__)[:limit]

    async def announced(self, challenge_id: str) -> None:
        self.due_set.pop(challenge_id, None)


ANSWER_LUA = """
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return false end
if st == 'pending' then
  local expires = tonumber(redis.call('HGET', KEYS[1], 'expires'))
  local now = tonumber(ARGV[2])
  local want = ARGV[1]
  if now >= expires then want = 'expired' elseif want == 'expired' then want = '' end
  if want ~= '' then
    local room = ''
    if want == 'accepted' then room = ARGV[3] end
    redis.call('HSET', KEYS[1], 'status', want, 'answered', ARGV[2], 'room_id', room)
  end
end
return redis.call('HMGET', KEYS[1], 'data', 'status', 'room_id', 'answered')
"""
"""Move a pending challenge on (one key: ``challenge:{<id>}``). ARGV: the status asked
for, now (Unix s), the room (for ``accepted``). Returns ``[data, status, room_id,
answered]`` or false."""


class RedisChallenges(ChallengeStore):
    """Challenges in Redis or a Redis Cluster.

    Args:
        redis: a ``redis.asyncio.Redis`` or ``RedisCluster`` (``decode_responses``).
        prefix: the ``key_prefix`` setting.
    """

    def __init__(self, redis: Any, prefix: str, clock: Callable[[], float] = time.time
                 ) -> None:
        super().__init__(clock)
        self.redis = redis
        self.prefix = prefix
        self._answer = redis.register_script(ANSWER_LUA)

    def key(self, challenge_id: str) -> str:
        """``<prefix>challenge:{<id>}``."""
        return f"{self.prefix}challenge:{{{challenge_id}}}"

    def player_key(self, player: str) -> str:
        """``<prefix>challenges:{<player>}``."""
        return f"{self.prefix}challenges:{{{player}}}"

    @property
    def due_key(self) -> str:
        """``<prefix>challenges:due``."""
        return f"{self.prefix}challenges:due"

    @staticmethod
    def _record(data: str | None, status: str | None, room_id: str | None,
                answered: str | None) -> dict[str, Any] | None:
        if data is None or status is None:
            return None
        record = json.loads(data)
        record.update(status=status, room_id=room_id or None,
                      answered=float(answered) if answered else None)
        return record

    async def create(self, record: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        key = self.key(record["id"])
        fixed = {k: v for k, v in record.items()
                 if k not in ("status", "room_id", "answered")}
        keep = record["expires"] + KEEP_SECONDS
        made = await self.redis.hsetnx(key, "data", json.dumps(fixed, separators=(",", ":")))
        if not made:
            there = await self.get(record["id"])
            if there is not None:
                return there, False
        await self.redis.hset(key, mapping={"status": "pending",
                                            "expires": repr(float(record["expires"]))})
        await self.redis.expireat(key, int(keep) + 1)
        for side in ("challenger", "challenged"):
            pkey = self.player_key(record[side]["id"])
            await self.redis.zadd(pkey, {record["id"]: keep})
            await self.redis.expireat(pkey, int(keep) + 1, gt=True)
            await self.redis.expireat(pkey, int(keep) + 1, nx=True)
        await self.redis.zadd(self.due_key, {record["id"]: record["expires"]})
        return {**record, "status": "pending", "room_id": None, "answered": None}, True

    async def get(self, challenge_id: str) -> dict[str, Any] | None:
        values = await self.redis.hmget(self.key(challenge_id),
                                        ["data", "status", "room_id", "answered"])
        record = self._record(*values)
        return self._now_status(record, self.clock()) if record else None

    async def answer(self, challenge_id: str, status: str, room_id: str | None = None
                     ) -> dict[str, Any] | None:
        values = await self._answer(keys=[self.key(challenge_id)],
                                    args=[status, repr(self.clock()), room_id or ""])
        if not values:
            return None
        return self._record(*values)

    async def of_player(self, player: str) -> list[dict[str, Any]]:
        now = self.clock()
        pkey = self.player_key(player)
        await self.redis.zremrangebyscore(pkey, "-inf", now)
        ids = await self.redis.zrange(pkey, 0, 199)
        if not ids:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for cid in ids:
                pipe.hmget(self.key(cid), ["data", "status", "room_id", "answered"])
            rows = await pipe.execute()
        records = [r for r in (self._record(*row) for row in rows) if r is not None]
        records.sort(key=lambda r: r["created"])
        return [self._now_status(r, now) for r in records]

    async def due(self, limit: int = 100) -> list[str]:
        return list(await self.redis.zrangebyscore(self.due_key, "-inf", self.clock(),
                                                   start=0, num=limit))

    async def announced(self, challenge_id: str) -> None:
        await self.redis.zrem(self.due_key, challenge_id)


class Channels:
    """A pub/sub channel per player, through the process's broker.

    Args:
        broker: the process's ``server.broker.Broker`` (subscriptions).
        publish: sends one message (plain data) on a broker key's channel: the memory
            broker's ``deliver``, Redis ``PUBLISH`` or a cluster's ``SPUBLISH``
            (:func:`publisher`).
    """

    def __init__(self, broker: Any, publish: Callable[[str, dict[str, Any]], Any]) -> None:
        self.broker = broker
        self._publish = publish

    async def follow(self, player: str, listener: Callable[[dict[str, Any]], None]) -> None:
        """Hand the player's messages to ``listener`` from now on (raises what the broker
        raises: ``StoreUnavailable``)."""
        await self.broker.subscribe(channel_key(player), listener)

    async def unfollow(self, player: str) -> None:
        """Stop following the player's channel."""
        await self.broker.unsubscribe(channel_key(player))

    async def publish(self, player: str, message: dict[str, Any]) -> None:
        """Send ``message`` to every process that follows the player (raises store
        errors)."""
        result = self._publish(channel_key(player), message)
        if hasattr(result, "__await__"):
            await result


def publisher(broker: Any, redis: Any = None, prefix: str = "", cluster_keys: Any = None
              ) -> Callable[[str, dict[str, Any]], Any]:
    """The publish function of :class:`Channels` for the process's store: the memory
    broker (``redis`` None), Redis ``PUBLISH`` on ``server.broker.channel_name``, or with
    ``cluster_keys`` (``server.store.cluster.ClusterKeys``) ``SPUBLISH`` on its
    ``channel``."""
    if redis is None:
        return broker.deliver
    text = lambda message: json.dumps(message, separators=(",", ":"))  # noqa: E731
    if cluster_keys is not None:
        return lambda key, message: redis.spublish(cluster_keys.channel(key), text(message))
    from ..broker import channel_name

    return lambda key, message: redis.publish(channel_name(prefix, key), text(message))
