"""In-process room store: the zero-setup default, and handy in unit tests.

Everything lives in dicts of this process; each operation runs without awaiting in between,
so it is atomic with respect to the event loop, and it keeps the same contract as the Redis
store (exactly-once keys with digests, presence per owner, deadlines written with the
commit, leases). It keeps the committed objects themselves — records (immutable), the
committed engine state and events — and hands them to readers and listeners without
copying or encoding them (only the log is kept encoded): nothing in the server mutates
them (the engine never mutates a state it is given), and that makes this store cheaper
than Redis per action.
Rooms expire after the TTL without writes: :meth:`MemoryStore.purge` drops
them in the background (the upkeep beat runs it; an expiry heap keeps it cheap) and a read
of an expired room finds nothing. Deadlines
are a heap (with a dict of the live ones: a popped heap entry that no longer matches is a
cancelled or rescheduled copy).

It never fails: it raises neither ``StoreUnavailable`` nor ``OutcomeUnknown``.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from typing import Any

from protocol import jsontext

from ..broker import MemoryBroker
from .base import (
    Claim,
    Commit,
    CommitResult,
    Deadline,
    Done,
    ParkOutcome,
    PresenceCounts,
    RoomGone,
    RoomRecord,
    RoomStore,
    chat_message,
    counts_as_done,
    due_ms,
    presence_message,
    woken,
)
from .health import StoreHealth


class _Room:
    __slots__ = ("record", "version", "actions", "log", "presence", "watchers", "expires",
                 "outbox", "chat", "chat_seq", "chat_hidden", "chat_rate")

    def __init__(self, record: RoomRecord, expires: float) -> None:
        self.record = record
        self.version = record.version
        self.actions: dict[str, str] = {}
        self.log: list[tuple[int, bytes]] = []
        self.outbox: dict[int, list[tuple[int, bytes]]] = {}
        self.presence: dict[tuple[int, str], int] = {}
        self.watchers: dict[str, int] = {}
        self.expires = expires
        self.chat: list[dict[str, Any]] = []
        self.chat_seq = 0
        self.chat_hidden: set[int] = set()
        self.chat_rate: dict[str, tuple[int, int]] = {}
        """(Unix second, messages said in it)."""

    def totals(self) -> PresenceCounts:
        out: PresenceCounts = {}
        for (seat, _), n in self.presence.items():
            out[seat] = out.get(seat, 0) + n
        return {s: n for s, n in out.items() if n > 0}


class MemoryStore(RoomStore):
    """Rooms in this process's memory.

    Args:
        broker: receives every published message (use the same one for the app).
        ttl_seconds: a room expires this long after its last write.
        log_limit: log entries kept per room (oldest dropped).
        clock: Unix time in seconds (tests pass a fake one).
    """

    def __init__(
        self,
        broker: MemoryBroker,
        ttl_seconds: float = 86400,
        log_limit: int = 5000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.broker = broker
        self.ttl = ttl_seconds
        self.log_limit = log_limit
        self.health = StoreHealth("memory")
        self._clock = clock
        self._rooms: dict[str, _Room] = {}
        self._heap: list[tuple[float, int, str]] = []
        self._expiry: list[tuple[float, str]] = []
        self._deadlines: dict[str, tuple[float, Deadline]] = {}
        self._seq = 0
        self._owners: dict[str, float] = {}
        self._reaping: dict[str, float] = {}
        self._owner_rooms: dict[str, set[str]] = {}

    def _get(self, room_id: str) -> _Room | None:
        room = self._rooms.get(room_id)
        if room is not None and room.expires < self._clock():
            self._drop(room_id)
            return None
        return room

    def _drop(self, room_id: str) -> None:
        self._rooms.pop(room_id, None)
        prefix = f"{room_id}|"
        for member in [m for m in self._deadlines if m.startswith(prefix)]:
            del self._deadlines[member]

    def purge(self, now: float | None = None, limit: int = 5_000) -> int:
        """Drop rooms idle longer than the TTL, with their deadlines, oldest first.

        Cheap enough for every upkeep beat: each room has one entry in an expiry heap
        (pushed at creation; a room written to since is pushed back with its new expiry
        when its entry comes up), so a beat looks only at rooms whose first expiry has
        passed, and the rooms' deadlines are scanned once per call, not once per room.

        Args:
            now: Unix time (default: the store's clock).
            limit: most rooms dropped by one call (the rest wait for the next beat, so one
                call never holds the event loop for long).

        Returns:
            How many rooms were dropped.
        """
        now = self._clock() if now is None else now
        dropped: set[str] = set()
        heap = self._expiry
        while heap and heap[0][0] < now and len(dropped) < limit:
            _, room_id = heapq.heappop(heap)
            room = self._rooms.get(room_id)
            if room is None:
                continue  # already dropped (read after it expired)
            if room.expires < now:
                del self._rooms[room_id]
                dropped.add(room_id)
            else:
                heapq.heappush(heap, (room.expires, room_id))
        if dropped:
            gone = [m for m in self._deadlines if m.partition("|")[0] in dropped]
            for member in gone:
                del self._deadlines[member]
        if len(self._heap) > 2 * len(self._deadlines) + 64:
            self._heap = [e for e in self._heap if e[2] in self._deadlines]
            heapq.heapify(self._heap)
        return len(dropped)

    @property
    def room_count(self) -> int:
        """Rooms held (expired ones not yet purged included)."""
        return len(self._rooms)

    # -- rooms -----------------------------------------------------------------------------
    async def create(self, record: RoomRecord) -> bool:
        """See :meth:`RoomStore.create`."""
        if self._get(record.id) is not None:
            return False
        room = _Room(record, self._clock() + self.ttl)
        self._rooms[record.id] = room
        heapq.heappush(self._expiry, (room.expires, record.id))
        return True

    async def load(
        self, room_id: str, action_key: str | None = None
    ) -> tuple[RoomRecord | None, Done | None]:
        """See :meth:`RoomStore.load`."""
        room = self._get(room_id)
        if room is None:
            return None, None
        value = room.actions.get(action_key) if action_key else None
        done = Done.parse(action_key, value) if action_key and value else None
        return room.record, done

    async def version(self, room_id: str) -> int | None:
        """See :meth:`RoomStore.version`."""
        room = self._get(room_id)
        return room.version if room else None

    async def versions(self, room_ids: list[str]) -> list[int | None]:
        """See :meth:`RoomStore.versions`."""
        return [await self.version(r) for r in room_ids]

    async def commit(self, commit: Commit) -> CommitResult:
        """See :meth:`RoomStore.commit`."""
        room = self._get(commit.record.id)
        if room is None:
            return CommitResult("missing", -1)
        value = room.actions.get(commit.action_key) if commit.action_key else None
        if value is not None:
            done = Done.parse(commit.action_key, value)  # type: ignore[arg-type]
            if counts_as_done(done.game, commit.action_game, commit.previous_game_ok):
                return CommitResult("duplicate", done.version, done.digest)
        if room.version != commit.expected_version:
            return CommitResult("conflict", room.version)
        version = commit.expected_version + 1
        room.record = commit.record
        room.version = version
        if commit.action_key:
            room.actions[commit.action_key] = (
                f"{version}|{commit.action_digest}|{commit.action_game}"
            )
        # Kept encoded: thousands of entries per room as Python objects would make every
        # full pass of the garbage collector long (docs/performance.md).
        room.log.append((version, jsontext.dumps_bytes(commit.log_entry)))
        if len(room.log) > self.log_limit:
            del room.log[: len(room.log) - self.log_limit]
        if commit.outbox is not None:
            game, first = commit.outbox
            room.outbox[game] = [e for e in room.log if e[0] >= first]
        ttl = self.ttl if commit.ttl_seconds is None else commit.ttl_seconds
        room.expires = self._clock() + ttl
        if commit.ttl_seconds is not None:  # sooner than its entry in the expiry heap
            heapq.heappush(self._expiry, (room.expires, commit.record.id))
        for slot in commit.clear:
            self._deadlines.pop(f"{commit.record.id}|{slot}", None)
        for deadline in commit.deadlines:
            self._put(deadline)
        # Published as the committed objects (as the Redis store's own process gets its
        # messages back, server.broker.PublishedMessages): nothing decodes or copies them.
        message = {
            "t": "u",
            "v": version,
            "events": commit.events,
            "seats_changed": commit.seats_changed,
            "record": commit.record,
            "state": commit.state,
        }
        self.broker.deliver(commit.record.id, message)
        return CommitResult("ok", version)

    async def log(
        self, room_id: str, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """See :meth:`RoomStore.log`."""
        room = self._get(room_id)
        if room is None:
            return []
        entries = [e for e in room.log if e[0] > after]
        if limit is not None:
            entries = entries[:limit]
        return [{"v": v, **jsontext.loads(data)} for v, data in entries]

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
        """See :meth:`RoomStore.set_presence`."""
        room = self._get(room_id)
        if room is None:
            return None
        before = room.totals()
        if full:
            for seat, who in [k for k in room.presence if k[1] == owner]:
                if seat not in counts:
                    del room.presence[(seat, who)]
        for seat, n in counts.items():
            if n > 0:
                room.presence[(seat, owner)] = n
            else:
                room.presence.pop((seat, owner), None)
        after = room.totals()
        for seat in sorted(set(before) | set(after)):
            if (seat in before) == (seat in after):
                continue
            takeover = None
            if seat in after:
                self._deadlines.pop(f"{room_id}|takeover|{seat}", None)
            elif takeovers and seat in takeovers:
                takeover = takeovers[seat]
                self._put(takeover)
            self.broker.deliver(room_id, presence_message(
                room_id, seat, seat in after, due_ms(takeover.due) if takeover else None))
        if not before and after:
            self._wake(room_id, self._clock() if now is None else now)
        return after

    def _wake(self, room_id: str, now: float) -> None:
        """A person is back at an empty table: the room's parked deadlines are due again
        (:func:`server.store.base.woken`); a woken takeover is announced."""
        prefix = f"{room_id}|"
        for _, parked in [e for m, e in self._deadlines.items() if m.startswith(prefix)]:
            again = woken(parked, now)
            if again is None:
                continue
            self._put(again)
            if again.kind == "takeover" and again.key.isdigit():
                self.broker.deliver(room_id, presence_message(
                    room_id, int(again.key), False, due_ms(again.due)))

    async def presence(self, room_id: str) -> PresenceCounts:
        """See :meth:`RoomStore.presence`."""
        room = self._get(room_id)
        return room.totals() if room else {}

    async def set_watchers(self, room_id: str, owner: str, count: int, cap: int = 0
                           ) -> int | None:
        """See :meth:`RoomStore.set_watchers`."""
        room = self._get(room_id)
        if room is None:
            return None
        mine = room.watchers.get(owner, 0)
        others = sum(room.watchers.values()) - mine
        if cap > 0 and count > mine and others + count > cap:
            return -1
        if count > 0:
            room.watchers[owner] = count
        else:
            room.watchers.pop(owner, None)
        return others + count

    async def watchers(self, room_id: str) -> dict[str, int]:
        """See :meth:`RoomStore.watchers`."""
        room = self._get(room_id)
        return dict(room.watchers) if room else {}

    async def presence_owners(self, room_id: str) -> dict[str, PresenceCounts]:
        """See :meth:`RoomStore.presence_owners`."""
        room = self._get(room_id)
        out: dict[str, PresenceCounts] = {}
        for (seat, owner), n in (room.presence.items() if room else ()):
            out.setdefault(owner, {})[seat] = n
        return out

    async def owner_heartbeat(
        self, owner: str, now: float, rooms: list[str], register: bool = False
    ) -> bool:
        """See :meth:`RoomStore.owner_heartbeat`."""
        known = owner in self._owners
        if not known and not register:
            return False
        self._owners[owner] = now
        self._owner_rooms.setdefault(owner, set()).update(rooms)
        return known

    async def expired_owners(self, before: float) -> list[str]:
        """See :meth:`RoomStore.expired_owners`."""
        return [o for o, t in self._owners.items() if t < before] + list(self._reaping)

    async def claim_owner(
        self, owner: str, before: float, now: float, lease_until: float
    ) -> list[str] | None:
        """See :meth:`RoomStore.claim_owner`."""
        if owner in self._owners:
            if self._owners[owner] >= before:
                return None
            del self._owners[owner]
        elif self._reaping.get(owner, float("inf")) > now:
            return None
        self._reaping[owner] = lease_until
        return sorted(self._owner_rooms.get(owner, ()))

    async def forget_owner(self, owner: str) -> None:
        """See :meth:`RoomStore.forget_owner`."""
        self._reaping.pop(owner, None)
        self._owner_rooms.pop(owner, None)

    async def forget_owner_rooms(self, owner: str, rooms: list[str]) -> None:
        """See :meth:`RoomStore.forget_owner_rooms`."""
        self._owner_rooms.get(owner, set()).difference_update(rooms)

    # -- deadlines -------------------------------------------------------------------------
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

    async def extend(self, claim: Claim, lease_until: float) -> Claim | None:
        """See :meth:`RoomStore.extend`."""
        member = claim.deadline.member
        entry = self._deadlines.get(member)
        if entry is None or entry[0] != claim.lease:
            return None
        self._deadlines[member] = (lease_until, entry[1])
        self._seq += 1
        heapq.heappush(self._heap, (lease_until, self._seq, member))
        return Claim(entry[1], lease_until)

    async def complete(self, claim: Claim) -> None:
        """See :meth:`RoomStore.complete`."""
        entry = self._deadlines.get(claim.deadline.member)
        if entry is not None and entry[0] == claim.lease:
            del self._deadlines[claim.deadline.member]

    async def park_unless_present(self, claim: Claim, parked: Deadline) -> ParkOutcome:
        """See :meth:`RoomStore.park_unless_present`."""
        room = self._get(claim.deadline.room)
        if room is not None and room.totals():
            return "present"
        entry = self._deadlines.get(claim.deadline.member)
        if entry is None or entry[0] != claim.lease:
            return "moved"
        self._put(parked)
        return "parked"

    async def deadlines(self, room_id: str) -> list[Deadline]:
        """See :meth:`RoomStore.deadlines`."""
        prefix = f"{room_id}|"
        return sorted((d for m, (_, d) in self._deadlines.items() if m.startswith(prefix)),
                      key=lambda d: d.due)

    # -- the archive's outbox ---------------------------------------------------------------
    async def outbox(self, room_id: str, game: int) -> list[dict[str, Any]] | None:
        """See :meth:`RoomStore.outbox`."""
        room = self._get(room_id)
        entries = room.outbox.get(game) if room is not None else None
        if entries is None:
            return None
        return [{"v": v, **jsontext.loads(data)} for v, data in entries]

    async def finish_outbox(self, claim: Claim, game: int) -> bool:
        """See :meth:`RoomStore.finish_outbox`."""
        entry = self._deadlines.get(claim.deadline.member)
        if entry is None or entry[0] != claim.lease:
            return False
        del self._deadlines[claim.deadline.member]
        room = self._rooms.get(claim.deadline.room)
        if room is not None:
            room.outbox.pop(game, None)
        return True

    async def hold(self, room_id: str, until: float) -> bool:
        """See :meth:`RoomStore.hold`."""
        room = self._get(room_id)
        if room is None:
            return False
        if room.expires < until:
            room.expires = until
        return True

    async def chat_post(self, room_id: str, entry: dict[str, Any], keep: int,
                        per_second: int = 0) -> int | None:
        """See :meth:`RoomStore.chat_post`."""
        room = self._get(room_id)
        if room is None:
            raise RoomGone(f"room {room_id} does not exist")
        if per_second > 0:
            second = int(self._clock())
            lane = str(entry.get("audience", "table"))
            at, n = room.chat_rate.get(lane, (0, 0))
            n = n + 1 if at == second else 1
            room.chat_rate[lane] = (second, n)
            if n > per_second:
                return None
        room.chat_seq += 1
        said = {"id": room.chat_seq, **entry}
        room.chat.append(said)
        del room.chat[:-max(1, int(keep))]
        self.broker.deliver(room_id, chat_message(room_id, said))
        return room.chat_seq

    async def chat_recent(self, room_id: str) -> list[dict[str, Any]]:
        """See :meth:`RoomStore.chat_recent`."""
        room = self._get(room_id)
        if room is None:
            return []
        return [dict(e) for e in room.chat if e["id"] not in room.chat_hidden]

    async def chat_hide(self, room_id: str, message_id: int) -> bool:
        """See :meth:`RoomStore.chat_hide`."""
        room = self._get(room_id)
        if room is None or message_id in room.chat_hidden:
            return False
        room.chat_hidden.add(int(message_id))
        self.broker.deliver(room_id, {"t": "h", "room": room_id, "id": int(message_id)})
        return True

    async def ping(self) -> bool:
        """Always True."""
        return True

    async def close(self) -> None:
        """Nothing to release."""
