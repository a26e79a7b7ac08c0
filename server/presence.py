"""Presence that cannot leak: who is connected to each seat, per server process.

Design (docs/architecture.md, "Presence"): every server process is an *owner* with an id of
its own. For each room and seat it writes the **absolute** number of connections it holds
(``RoomStore.set_presence``), never a +1/-1 counter: a lost or repeated write cannot make a
count drift, and a process's entries always say what it holds. A seat's presence is the sum
over owners; when that sum crosses 0 the store publishes a ``presence`` message and stores
(or removes) the seat's ``takeover`` deadline in the same atomic step.

A table left by everyone waits for its people: while no seat of a room has a connection,
the deadlines that would make the server's computer act for a person are parked
(``Sweeper.park_unless_present``); the write that gives the room a connection again wakes
them in the same atomic step (``RoomStore.set_presence``), whichever write it is — a join, a
re-assertion after a stall.

An owner keeps a registration alive with a heartbeat every third of
``presence_lease_seconds``. A process that dies stops heartbeating; every other process
looks for expired owners on each beat, and one of them (the one whose atomic claim wins)
removes the dead owner's entries room by room — the seats it held go away for everyone and
takeovers are scheduled as for a clean disconnect. An owner that was only *stalled* (and
declared dead) finds its registration gone at its next beat and re-asserts everything under
a new owner id, so a reaper still at work on the old id cannot remove the new entries.

Before an owner first writes presence in a room, the room is added to the owner's set of
rooms (what the reaper walks); a room is taken out of the set only at a heartbeat, when the
owner holds nothing there, and a connection to a room being taken out waits for that to
finish and adds it back.

Spectators are counted the same way, per owner and absolute (``RoomStore.set_watchers``),
for the cap ``max_spectators_per_room``: :meth:`Presence.watch` checks this process's own
count first (exact) and then the room's total over every owner in the store, in the same
atomic step as the write; a dead owner's spectators count until it is reaped. When the store
cannot be reached the cap holds per process only (fail open: the join itself then fails or
succeeds on its own).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable

from .settings import Settings
from .store.base import RoomRecord, RoomStore, StoreError

log = logging.getLogger(__name__)

RecordLookup = Callable[[str], RoomRecord | None]
"""The latest record of a room this process knows, or None (for takeover deadlines)."""


def new_owner_id() -> str:
    """A fresh owner id: 12 hex digits of randomness."""
    return secrets.token_hex(6)


class Presence:
    """This process's connections per room and seat, kept in the store under an owner id.

    Args:
        store: the room store.
        service: the room service (takeover deadlines, the clock, fresh records).
        settings: ``presence_lease_seconds``.
    """

    def __init__(self, store: RoomStore, service, settings: Settings) -> None:  # noqa: ANN001
        self.store = store
        self.service = service
        self.settings = settings
        self.owner = new_owner_id()
        self.counts: dict[str, dict[int, int]] = {}
        """room -> seat -> connections of this process."""
        self.watching: dict[str, int] = {}
        """room -> this process's spectators of it."""
        self._registered: set[str] = set()
        self._removing: set[str] = set()
        self._removed = asyncio.Event()
        self._started = False
        self.reaped = 0
        """Owners (dead processes) this process reaped since start."""

    @property
    def lease(self) -> float:
        """Seconds after its last heartbeat that an owner counts as dead."""
        return float(self.settings.presence_lease_seconds)

    async def start(self) -> None:
        """Register this process's owner id (best effort: a store that is down now is
        retried by the next heartbeat)."""
        try:
            await self.store.owner_heartbeat(self.owner, self.service.clock(), [], True)
            self._started = True
        except StoreError:
            pass

    def held(self, room_id: str, seat: int) -> int:
        """Connections this process holds for the seat."""
        return self.counts.get(room_id, {}).get(seat, 0)

    async def connect(self, room_id: str, seat: int) -> None:
        """A connection of this process now holds ``seat`` of the room.

        Raises:
            StoreError: the store failed (the local count stays; the next heartbeat
                re-asserts it).
        """
        seats = self.counts.setdefault(room_id, {})
        seats[seat] = seats.get(seat, 0) + 1
        await self._ensure_registered(room_id)
        await self.store.set_presence(room_id, self.owner, {seat: seats[seat]},
                                      now=self.service.clock())

    async def disconnect(self, room_id: str, seat: int, record: RoomRecord | None) -> None:
        """A connection of this process no longer holds ``seat`` of the room.

        Args:
            record: the room as this process last knew it, to plan the seat's takeover if
                this was its last connection anywhere (None: no takeover planned now; the
                next write for the room plans one).

        Raises:
            StoreError: the store failed (the local count is updated anyway).
        """
        seats = self.counts.get(room_id, {})
        left = max(0, seats.get(seat, 0) - 1)
        if left:
            seats[seat] = left
        else:
            seats.pop(seat, None)
        if not seats:
            self.counts.pop(room_id, None)
        takeovers = {}
        if record is not None and left == 0:
            deadline = self.service.takeover_deadline(record, seat, self.service.clock())
            if deadline is not None:
                takeovers[seat] = deadline
        await self.store.set_presence(room_id, self.owner, {seat: left}, takeovers=takeovers,
                                      now=self.service.clock())

    async def watch(self, room_id: str, cap: int) -> bool:
        """One more connection of this process watches the room, unless that would take
        the room past ``cap`` spectators (0: no cap): checked against this process's own
        count, then against the room's total in the store (atomically with the write).

        Returns:
            False when refused (nothing counted). A store that cannot be reached counts for
            this process only (the next write for the room puts the store right).
        """
        mine = self.watching.get(room_id, 0)
        if cap and mine >= cap:
            return False
        self.watching[room_id] = mine + 1
        try:
            await self._ensure_registered(room_id)
            total = await self.store.set_watchers(
                room_id, self.owner, self.watching.get(room_id, 0), cap)
        except StoreError:
            return True
        if total == -1:
            self._unwatch_count(room_id)
            return False
        return True

    async def unwatch(self, room_id: str) -> None:
        """A connection of this process stopped watching the room (best effort: a store
        that cannot be reached is put right by the next write, or by the reaper)."""
        left = self._unwatch_count(room_id)
        try:
            await self.store.set_watchers(room_id, self.owner, left)
        except StoreError:
            pass

    def _unwatch_count(self, room_id: str) -> int:
        left = max(0, self.watching.get(room_id, 0) - 1)
        if left:
            self.watching[room_id] = left
        else:
            self.watching.pop(room_id, None)
        return left

    async def _ensure_registered(self, room_id: str) -> None:
        """Add the room to this owner's rooms in the store before any presence is written
        there (so a reaper can always find it)."""
        while room_id in self._removing:
            await self._removed.wait()
        if room_id in self._registered:
            return
        known = await self.store.owner_heartbeat(
            self.owner, self.service.clock(), [room_id], not self._started
        )
        self._started = True
        self._registered.add(room_id)
        if not known:
            await self._reassert()

    async def heartbeat(self) -> None:
        """Renew this owner's registration; forget rooms it holds nothing in; re-assert
        everything under a new owner id if it was declared dead meanwhile.

        Raises:
            StoreError: the store failed (try again at the next beat).
        """
        now = self.service.clock()
        known = await self.store.owner_heartbeat(self.owner, now, [], not self._started)
        if not self._started:
            self._started = True
            known = True
            await self._reassert(new_id=False)
        if not known:
            log.warning("presence owner %s was declared dead; re-asserting", self.owner)
            await self._reassert()
            return
        idle = [r for r in self._registered
                if not self.counts.get(r) and not self.watching.get(r)]
        if not idle:
            return
        self._removing.update(idle)
        self._removed.clear()
        try:
            await self.store.forget_owner_rooms(self.owner, idle)
            self._registered.difference_update(idle)
        finally:
            self._removing.difference_update(idle)
            self._removed.set()

    async def _reassert(self, new_id: bool = True) -> None:
        """Write everything this process holds again (under a new owner id if asked)."""
        if new_id:
            self.owner = new_owner_id()
        rooms = sorted(set(self.counts) | set(self.watching))
        await self.store.owner_heartbeat(self.owner, self.service.clock(), rooms, True)
        self._registered = set(rooms)
        for room_id in rooms:
            seats = dict(self.counts.get(room_id, {}))
            await self.store.set_presence(room_id, self.owner, seats, full=True,
                                          now=self.service.clock())
            if self.watching.get(room_id):
                await self.store.set_watchers(room_id, self.owner, self.watching[room_id])

    async def reap(self) -> int:
        """Remove the presence of owners that stopped heartbeating (dead processes): each
        seat they held loses those connections, with presence messages and takeovers as for
        clean disconnects.

        Returns:
            How many owners this call reaped.

        Raises:
            StoreError: the store failed (the owner stays claimed until its reap lease
                ends, then anyone reaps it again).
        """
        now = self.service.clock()
        before = now - self.lease
        count = 0
        for owner in await self.store.expired_owners(before):
            if owner == self.owner:
                continue
            rooms = await self.store.claim_owner(owner, before, now, now + 4 * self.lease)
            if rooms is None:
                continue
            for room_id in rooms:
                record, _ = await self.store.load(room_id)
                if record is None:
                    continue
                takeovers = self.service.takeovers(record, self.service.clock())
                await self.store.set_presence(room_id, owner, {}, full=True,
                                              takeovers=takeovers, now=self.service.clock())
                await self.store.set_watchers(room_id, owner, 0)
            await self.store.forget_owner(owner)
            log.info("reaped the presence of stopped server process %s (%d rooms)", owner,
                     len(rooms))
            count += 1
        self.reaped += count
        return count

    async def close(self) -> None:
        """A clean stop: remove this process's presence everywhere and its registration
        (best effort; what is left is reaped when the lease ends)."""
        now = self.service.clock()
        for room_id, seats in list(self.counts.items()):
            try:
                record, _ = await self.store.load(room_id)
                takeovers = self.service.takeovers(record, now) if record else {}
                await self.store.set_presence(room_id, self.owner, {s: 0 for s in seats},
                                              takeovers=takeovers, now=now)
            except StoreError:
                return
        self.counts.clear()
        for room_id in list(self.watching):
            try:
                await self.store.set_watchers(room_id, self.owner, 0)
            except StoreError:
                return
        self.watching.clear()
        try:
            rooms = await self.store.claim_owner(self.owner, now + 1e9, now, now)
            if rooms is not None:
                await self.store.forget_owner(self.owner)
        except StoreError:
            pass
