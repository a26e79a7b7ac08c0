"""The per-process fan-out: room changes to this process's connections.

:class:`LocalRooms` subscribes this process to the channel of every room that has a local
session and hands each published change to those sessions (views and redacted events are
computed once per version and seat, ``server.views``). It also keeps them whole when
messages are lost:

* after the broker re-subscribes (a pub/sub reconnect, e.g. Redis restarted), every room it
  re-subscribed to catches up from the store: the current record and the log entries since
  the last version this process delivered, so each session gets what it missed (a
  snapshot that carries the missed events);
* periodically (``catchup_interval_seconds``) the versions of all followed rooms are read in
  one round trip and any room behind catches up the same way, so a lost message is healed
  without waiting for the next action.

Presence frames are coalesced per room (``presence_frame_interval_seconds``): a change is
sent at once when the room sent none within the interval, else once at the interval's end,
with each changed seat's state as it is then (so the last state is always sent); a session
gets no frame that tells it nothing new (``Session.on_presence``). A seat whose connection
leaves and joins in a loop no longer sends the table a frame per change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import engine

from . import frames
from .broker import Broker
from .chat import rules as chat_rules
from .rooms import RoomService
from .spectators import SpectatorFeed
from .store.base import RoomRecord, StoreError, StoreUnavailable, takeover_times
from .views import VersionData, seat_infos

if TYPE_CHECKING:
    from .session import Session

log = logging.getLogger(__name__)

VERSION_BATCH = 250
"""Rooms whose versions one round trip of a version check reads."""

CATCH_UP_CONCURRENCY = 16
"""Rooms caught up at once by a version check (after a Redis restart every room may be
behind; the store is not asked for thousands of logs at the same moment)."""


class LocalRoom:
    """The sessions of one room in this process, and the room's recent versions.

    :attr:`sessions` are served one by one, at once (players, and connections still
    joining); spectators, once joined, by the room's :attr:`feed`
    (``server.spectators.SpectatorFeed``), after the players and with one shared frame.
    """

    KEEP_VERSIONS = 2
    """Versions kept per room: the newest, and the one before (its state and views let the
    newest share their unchanged parts). A session further behind gets a snapshot. Few
    long-lived objects per room keep the garbage collector's full passes short
    (docs/performance.md)."""

    def __init__(
        self, room_id: str,
        room_settings: Callable[[RoomRecord], dict[str, Any]] | None = None,
    ) -> None:
        self.room_id = room_id
        self.room_settings = room_settings or (lambda record: {})
        """The room settings of a record (``RoomService.room_settings``; for spectators'
        snapshots)."""
        self.sessions: set[Session] = set()
        self.feed: SpectatorFeed | None = None
        """The spectators' feed (made for the first spectator)."""
        self.presence: dict[int, int] = {}
        self.takeovers: dict[int, int] = {}
        """Seat -> when the computer takes over that away seat (Unix ms), as last told."""
        self.versions: OrderedDict[int, VersionData] = OrderedDict()
        self._latest: VersionData | None = None
        self.catching_up = False
        self.catch_up_again = False
        self.presence_changed: set[int] = set()
        """Seats whose presence changed since the room's last presence frames."""
        self.presence_sent_at = float("-inf")
        self.presence_timer: asyncio.TimerHandle | None = None

    def ingest(
        self,
        record: RoomRecord,
        events: list[dict[str, Any]],
        seats_changed: bool,
        state: engine.GameState | None = None,
        backlog: list[tuple[int, list[dict[str, Any]]]] | None = None,
    ) -> VersionData:
        """Remember a version (or return the one already known).

        ``state``: ``record.state`` as a :class:`engine.GameState` when the caller has it
        (saves decoding it again)."""
        data = self.versions.get(record.version)
        if data is None:
            data = VersionData(record, events, seats_changed, state, backlog or [])
            self.versions[record.version] = data
            if self._latest is None or record.version > self._latest.version:
                self._latest = data
            prev = self.versions.get(record.version - 1)
            if prev is not None:
                prev.previous = None
                prev.retire()
                data.previous = prev
            while len(self.versions) > self.KEEP_VERSIONS:
                self.versions.popitem(last=False)
        else:
            if data._state is None and state is not None:
                data._state = state
            if not data.events and events:
                data.events = events
        return data

    def latest(self) -> VersionData | None:
        """The newest known version, if any."""
        if self._latest is not None and self._latest.version in self.versions:
            return self._latest
        self._latest = self.versions[max(self.versions)] if self.versions else None
        return self._latest

    @property
    def latest_version(self) -> int:
        """The newest known version (-1 if none)."""
        latest = self.latest()
        return latest.version if latest is not None else -1

    @property
    def delivered(self) -> int:
        """The oldest version any of this room's sessions has been sent, or its spectator
        feed been given (-1 if none): a room whose store version is newer has sessions that
        missed something. (A spectator that reads slowly is the feed's to bring up to date,
        not the store's.)"""
        versions = [s.last_version for s in self.sessions if s.last_version >= 0]
        if self.feed is not None and self.feed.watchers and self.feed.offered >= 0:
            versions.append(self.feed.offered)
        return min(versions, default=self.latest_version)

    @property
    def empty(self) -> bool:
        """Whether no connection of this process follows the room."""
        return not self.sessions and (self.feed is None or not self.feed.watchers)

    def watch(self, session: Session) -> None:
        """A session that joined as a spectator is served by the feed from now on."""
        self.sessions.discard(session)
        if self.feed is None:
            self.feed = SpectatorFeed(self.room_id, self.room_settings, self.seats)
            self.feed.seated = self.seated_players
        self.feed.add(session)

    def drop(self, session: Session) -> None:
        """A session left the room."""
        self.sessions.discard(session)
        if self.feed is not None:
            self.feed.discard(session)

    def seats(self, record: RoomRecord) -> list[dict[str, Any]]:
        """Seat facts with this process's view of presence (and of takeover times)."""
        return seat_infos(record, self.presence, self.takeovers)

    def seated_players(self) -> frozenset[str]:
        """The players holding a human seat, as of the newest known version."""
        latest = self.latest()
        return chat_rules.seated_players(latest.record if latest is not None else None)

    def seat_held(self, seat: int) -> bool:
        """Whether a local session holds ``seat``."""
        return any(s.seat == seat for s in self.sessions)


class _RoomLock:
    """A room's lock in one process, how many hold or wait for it, and the last failed
    subscription (``time.monotonic()`` of the failure, the error): joins that waited for an
    attempt that failed get its answer at once (docs/protocol.md "Store outages")."""

    __slots__ = ("lock", "users", "failed")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0
        self.failed: tuple[float, StoreUnavailable] | None = None


class LocalRooms:
    """Subscriptions of this process to rooms with local sessions, and the fan-out."""

    def __init__(self, broker: Broker, service: RoomService,
                 presence_interval: float = 0.0) -> None:
        self.broker = broker
        self.service = service
        self.presence_interval = presence_interval
        """Seconds between a room's presence frames (0: one frame per change)."""
        self.rooms: dict[str, LocalRoom] = {}
        self._locks: dict[str, _RoomLock] = {}
        """One lock per room being attached or detached: a room whose subscription waits
        (its shard down) holds up only the joins of that room."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.catch_ups = 0
        """Rooms caught up from the store since start (missed messages healed)."""
        broker.on_resubscribed = self._resubscribed

    async def attach(self, room_id: str, session: Session) -> LocalRoom:
        """Add a session to a room, subscribing this process to the room first if needed.

        Returns once the subscription is active, so a read of the room made afterwards
        cannot miss a later change.

        Raises:
            StoreUnavailable: the subscription failed or was not confirmed in time (the
                broker's deadline, ``server.broker.SUBSCRIBE_TIMEOUT_SECONDS``).
        """
        asked = time.monotonic()
        async with self._room_lock(room_id) as entry:
            local = self.rooms.get(room_id)
            if local is None:
                failed = entry.failed
                if failed is not None and failed[0] >= asked:
                    # A subscription tried while this join waited has just failed: the
                    # same answer now, not a second deadline after the first.
                    raise StoreUnavailable(f"room {room_id}: {failed[1]}")
                local = LocalRoom(room_id, self.service.room_settings)
                self.rooms[room_id] = local
                self.service.cache.follow(room_id)
                try:
                    await self.broker.subscribe(
                        room_id, lambda msg: self._on_message(local, msg)
                    )
                except BaseException as exc:
                    del self.rooms[room_id]
                    self.service.cache.unfollow(room_id)
                    if isinstance(exc, StoreUnavailable):
                        entry.failed = (time.monotonic(), exc)
                    raise
                with contextlib.suppress(StoreError):
                    local.presence = await self.service.store.presence(room_id)
                    local.takeovers = takeover_times(
                        await self.service.store.deadlines(room_id))
            local.sessions.add(session)
            return local

    async def detach(self, room_id: str, session: Session) -> None:
        """Remove a session; unsubscribe when it was the room's last local session."""
        async with self._room_lock(room_id):
            local = self.rooms.get(room_id)
            if local is None:
                return
            local.drop(session)
            if local.empty:
                if local.presence_timer is not None:
                    local.presence_timer.cancel()
                    local.presence_timer = None
                if local.feed is not None:
                    local.feed.close()
                del self.rooms[room_id]
                self.service.cache.unfollow(room_id)
                with contextlib.suppress(Exception):
                    await self.broker.unsubscribe(room_id)

    @contextlib.asynccontextmanager
    async def _room_lock(self, room_id: str) -> Any:
        """Hold the room's lock (made on first use, dropped when nobody holds or waits);
        yields its :class:`_RoomLock`."""
        entry = self._locks.get(room_id)
        if entry is None:
            entry = self._locks[room_id] = _RoomLock()
        entry.users += 1
        try:
            async with entry.lock:
                yield entry
        finally:
            entry.users -= 1
            if not entry.users and self._locks.get(room_id) is entry:
                del self._locks[room_id]

    # -- from the room's channel ----------------------------------------------------------
    def _on_message(self, local: LocalRoom, msg: dict[str, Any]) -> None:
        kind = msg.get("t")
        if kind == "u":
            # A message this process published itself may come with the committed record
            # and engine state (server.broker.PublishedMessages) instead of "room".
            record = msg.get("record")
            if record is None:
                record = RoomRecord.from_dict(msg["room"])
            state = msg.get("state")
            self.service.remember(record, state)
            latest = local.latest_version
            data = local.ingest(
                record, msg.get("events", []), bool(msg.get("seats_changed")), state
            )
            if latest >= 0 and record.version > latest + 1:
                # A gap: some message never reached this process. Catch up from the log.
                self.spawn(self.catch_up(local.room_id))
                return
            self._deliver(local, data)
        elif kind == "c":
            entry = msg.get("m")
            if isinstance(entry, dict):
                for session in list(local.sessions):
                    session.on_chat(local, entry)
                if local.feed is not None and local.feed.watchers:
                    local.feed.offer_chat(entry)
        elif kind == "h":
            frame = frames.chat_hidden(local.room_id, int(msg["id"]))
            for session in list(local.sessions):
                session.send(frame)
            if local.feed is not None and local.feed.watchers:
                local.feed.offer_presence(frame)  # shared like presence, to every spectator
        elif kind == "p":
            seat = int(msg["seat"])
            connected = bool(msg.get("connected"))
            local.presence[seat] = 1 if connected else 0
            at = msg.get("takeover_at")
            if isinstance(at, int | float) and not connected:
                local.takeovers[seat] = int(at)
            else:
                local.takeovers.pop(seat, None)
            self._presence(local, seat, connected)

    def _deliver(self, local: LocalRoom, data: VersionData) -> None:
        """Send the version to the room's players at once, then hand it to the spectator
        feed (which serves the spectators in its own task, after them)."""
        for session in list(local.sessions):
            session.on_version(local, data)
        if local.feed is not None and local.feed.watchers:
            local.feed.offer(data)
        for event in data.events:
            if event.get("type") == "computer_standin":
                seat = int(event["seat"])
                active = bool(event.get("active"))
                local.takeovers.pop(seat, None)  # taken over, or back
                # A stand-in starts or ends: tell the table (presence carries the flag).
                self._presence(local, seat, local.presence.get(seat, 0) > 0)
                info = data.record.seats[seat] if 0 <= seat < len(data.record.seats) else None
                if (active and info is not None and info.standin_reason == "away"
                        and local.seat_held(seat)):
                    # The seat was taken over for absence while its player was (re)joining
                    # here: the player is back, so the stand-in ends.
                    self.spawn(self._end_standin(local.room_id, seat))

    async def _end_standin(self, room_id: str, seat: int) -> None:
        with contextlib.suppress(Exception):
            await self.service.set_standin(room_id, seat, False)

    def _presence(self, local: LocalRoom, seat: int, connected: bool) -> None:
        """A seat's presence (``local.presence``) or stand-in changed: its frame goes out
        now, or at the end of the room's interval if the room sent frames within it."""
        local.presence_changed.add(seat)
        if local.presence_timer is not None:
            return  # the frames due at the interval's end will carry it
        loop = asyncio.get_running_loop()
        due = local.presence_sent_at + self.presence_interval
        if self.presence_interval <= 0 or loop.time() >= due:
            self._send_presence(local)
        else:
            local.presence_timer = loop.call_at(due, self._send_presence, local)

    def _send_presence(self, local: LocalRoom) -> None:
        """Send the room's changed seats' presence as it is now (``connected`` from
        ``local.presence``, the name and stand-in flag from the newest record)."""
        local.presence_timer = None
        if self.rooms.get(local.room_id) is not local:
            return
        local.presence_sent_at = asyncio.get_running_loop().time()
        changed, local.presence_changed = local.presence_changed, set()
        latest = local.latest()
        record = latest.record if latest is not None else None
        for seat in sorted(changed):
            info = record.seats[seat] if record and 0 <= seat < len(record.seats) else None
            connected = local.presence.get(seat, 0) > 0
            standin = bool(info and info.standin)
            frame = frames.presence(
                local.room_id, seat, connected, info.name if info else None, standin,
                None if connected or standin else local.takeovers.get(seat),
                bool(info and info.abandoned),
            )
            for session in list(local.sessions):
                session.on_presence(frame)
            if local.feed is not None:
                local.feed.offer_presence(frame)

    # -- keeping whole ----------------------------------------------------------------------
    def spawn(self, coro: Any) -> None:
        """Run a coroutine in the background (kept referenced until it ends)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _resubscribed(self, room_id: str) -> None:
        """The broker re-subscribed to a room after losing its connection: catch up."""
        if room_id in self.rooms:
            self.spawn(self.catch_up(room_id))

    async def catch_up(self, room_id: str) -> bool:
        """Bring the room's local sessions up to the store's current version, with the
        events they missed (read from the room's log). A call while one is running makes
        that one go round again, so no request is lost.

        Returns:
            True when a newer version was found and delivered.
        """
        local = self.rooms.get(room_id)
        if local is None:
            return False
        if local.catching_up:
            local.catch_up_again = True
            return False
        local.catching_up = True
        delivered_any = False
        try:
            while True:
                local.catch_up_again = False
                delivered_any = await self._catch_up_once(local) or delivered_any
                if not local.catch_up_again or self.rooms.get(room_id) is not local:
                    return delivered_any
        except StoreError:
            return delivered_any
        finally:
            local.catching_up = False

    async def _catch_up_once(self, local: LocalRoom) -> bool:
        room_id = local.room_id
        record, _ = await self.service.store.load(room_id)
        if record is None:
            return False
        with contextlib.suppress(StoreError):
            presence = await self.service.store.presence(room_id)
            if any(presence.get(s, 0) != local.presence.get(s, 0)
                   for s in set(presence) | set(local.presence)):
                local.takeovers = takeover_times(await self.service.store.deadlines(room_id))
            for seat in set(presence) | set(local.presence):
                now_on = presence.get(seat, 0) > 0
                was_on = local.presence.get(seat, 0) > 0
                local.presence[seat] = presence.get(seat, 0)
                if now_on != was_on:
                    self._presence(local, seat, now_on)
        after = max(local.delivered, 0)
        if record.version <= after:
            return False
        entries = await self.service.store.log(room_id, after)
        backlog = [(e["v"], e.get("events") or []) for e in entries if e["v"] < record.version]
        own = next((e.get("events") or [] for e in entries if e["v"] == record.version), [])
        self.service.remember(record)
        data = local.versions.get(record.version)
        if data is None or (backlog and not data.backlog):
            local.versions.pop(record.version, None)
            data = local.ingest(record, own, True, backlog=backlog)
        self.catch_ups += 1
        self._deliver(local, data)
        return True

    async def check_versions(self) -> int:
        """Read the versions of every followed room in one round trip and catch up those
        this process is behind on.

        Returns:
            How many rooms were caught up.

        Raises:
            StoreError: the store failed.
        """
        rooms = list(self.rooms)
        if not rooms:
            return 0
        versions: list[int | None] = []
        for i in range(0, len(rooms), VERSION_BATCH):
            # In batches, so a process with thousands of rooms never holds the event loop
            # for long (each batch is one round trip).
            versions += await self.service.store.versions(rooms[i:i + VERSION_BATCH])
        behind = [
            room_id for room_id, version in zip(rooms, versions, strict=True)
            if version is not None and room_id in self.rooms
            and version > self.rooms[room_id].delivered
        ]
        limit = asyncio.Semaphore(CATCH_UP_CONCURRENCY)

        async def one(room_id: str) -> bool:
            async with limit:
                return await self.catch_up(room_id)

        results = await asyncio.gather(*(one(r) for r in behind))
        return sum(1 for r in results if r)

    async def close(self) -> None:
        """Cancel background work."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
