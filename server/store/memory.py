"""In-process room store: the zero-setup default, and handy in unit tests.

Everything lives in dicts of this process; each operation runs without awaiting in between,
so it is atomic with respect to the event loop. Rooms expire after the TTL without writes
(checked lazily). Deadlines are a heap (with a dict of the live ones: a popped heap entry
that no longer matches is a cancelled or rescheduled copy); a commit's deadlines are written
in the same uninterrupted step as its record.
"""

from __future__ import annotations

import heapq
import json
import time
from typing import Any

from ..broker import MemoryBroker
from .base import (
    Claim,
    Commit,
    CommitResult,
    Deadline,
    RoomRecord,
    RoomStore,
    presence_message,
)


class _Room:
    __slots__ = ("record_json", "version", "actions", "log", "presence", "expires")

    def __init__(self, record: RoomRecord, expires: float) -> None:
        self.record_json = record.to_json()
        self.version = record.version
        self.actions: dict[str, int] = {}
        self.log: list[dict[str, Any]] = []
        self.presence: dict[int, int] = {}
        self.expires = expires


class MemoryStore(RoomStore):
    """Rooms in this process's memory.

    Args:
        broker: receives every published message (use the same one for the app).
        ttl_seconds: a room expires this long after its last write.
        log_limit: log entries kept per room (oldest dropped).
    """

    def __init__(
        self, broker: MemoryBroker, ttl_seconds: float = 86400, log_limit: int = 5000
    ) -> None:
        self.broker = broker
        self.ttl = ttl_seconds
        self.log_limit = log_limit
        self._rooms: dict[str, _Room] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._deadlines: dict[str, tuple[float, Deadline]] = {}
        self._seq = 0

    def _get(self, room_id: str) -> _Room | None:
        room = self._rooms.get(room_id)
        if room is not None and room.expires < time.time():
            del self._rooms[room_id]
            return None
        return room

    async def create(self, record: RoomRecord) -> bool:
        """See :meth:`RoomStore.create`."""
        if self._get(record.id) is not None:
            return False
        self._rooms[record.id] = _Room(record, time.time() + self.ttl)
        return True

    async def load(
        self, room_id: str, action_key: str | None = None
    ) -> tuple[RoomRecord | None, int | None]:
        """See :meth:`RoomStore.load`."""
        room = self._get(room_id)
        if room is None:
            return None, None
        done = room.actions.get(action_key) if action_key else None
        return RoomRecord.from_json(room.record_json), done

    async def action_version(self, room_id: str, action_key: str) -> int | None:
        """See :meth:`RoomStore.action_version`."""
        room = self._get(room_id)
        return room.actions.get(action_key) if room else None

    async def commit(self, commit: Commit) -> CommitResult:
        """See :meth:`RoomStore.commit`."""
        room = self._get(commit.record.id)
        if room is None:
            return CommitResult("missing", -1)
        if commit.action_key and commit.action_key in room.actions:
            return CommitResult("duplicate", room.actions[commit.action_key])
        if room.version != commit.expected_version:
            return CommitResult("conflict", room.version)
        version = commit.expected_version + 1
        room.record_json = commit.record.to_json()
        room.version = version
        if commit.action_key:
            room.actions[commit.action_key] = version
        room.log.append({"v": version, **commit.log_entry})
        if len(room.log) > self.log_limit:
            del room.log[: len(room.log) - self.log_limit]
        room.expires = time.time() + self.ttl
        for slot in commit.clear:
            self._deadlines.pop(f"{commit.record.id}|{slot}", None)
        for deadline in commit.deadlines:
            self._put(deadline)
        # Publish a copy made from the stored JSON, as Redis would: listeners never share
        # objects with the caller.
        message = {
            "t": "u",
            "v": version,
            "events": json.loads(json.dumps(commit.events)),
            "seats_changed": commit.seats_changed,
            "room": json.loads(room.record_json),
        }
        self.broker.deliver(commit.record.id, message)
        return CommitResult("ok", version)

    async def log(self, room_id: str) -> list[dict[str, Any]]:
        """See :meth:`RoomStore.log`."""
        room = self._get(room_id)
        return [dict(e) for e in room.log] if room else []

    async def presence_change(
        self, room_id: str, seat: int, delta: int, name: str | None
    ) -> int:
        """See :meth:`RoomStore.presence_change`."""
        room = self._get(room_id)
        if room is None:
            return 0
        before = room.presence.get(seat, 0)
        after = max(0, before + delta)
        room.presence[seat] = after
        if (before == 0) != (after == 0):
            self.broker.deliver(room_id, presence_message(room_id, seat, after > 0, name))
        return after

    async def presence(self, room_id: str) -> dict[int, int]:
        """See :meth:`RoomStore.presence`."""
        room = self._get(room_id)
        return dict(room.presence) if room else {}

    def _put(self, deadline: Deadline) -> None:
        self._deadlines[deadline.member] = (deadline.due, deadline)
        self._seq += 1
        heapq.heappush(self._heap, (deadline.due, self._seq, deadline.member))

    async def schedule(self, deadline: Deadline) -> None:
        """See :meth:`RoomStore.schedule`."""
        self._put(deadline)

    async def cancel(self, room: str, kind: str, key: str = "") -> None:
        """See :meth:`RoomStore.cancel`."""
        self._deadlines.pop(f"{room}|{kind}|{key}", None)

    async def claim_due(self, now: float, lease_until: float, limit: int = 100) -> list[Claim]:
        """See :meth:`RoomStore.claim_due`."""
        claims: list[Claim] = []
        while self._heap and self._heap[0][0] <= now and len(claims) < limit:
            due, _, member = heapq.heappop(self._heap)
            entry = self._deadlines.get(member)
            if entry is None or entry[0] != due:
                continue  # cancelled, rescheduled, or an older copy of a lease
            deadline = entry[1]
            self._deadlines[member] = (lease_until, deadline)
            self._seq += 1
            heapq.heappush(self._heap, (lease_until, self._seq, member))
            claims.append(Claim(deadline, lease_until))
        return claims

    async def complete(self, claim: Claim) -> None:
        """See :meth:`RoomStore.complete`."""
        entry = self._deadlines.get(claim.deadline.member)
        if entry is not None and entry[0] == claim.lease:
            del self._deadlines[claim.deadline.member]

    async def ping(self) -> bool:
        """Always True."""
        return True

    async def close(self) -> None:
        """Nothing to release."""
