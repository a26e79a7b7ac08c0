"""The fan-out to a room's spectators: one shared frame per version, served after the players.

Every spectator of a room sees the same public view, so the frame a version gives them is
the same for all who last saw the same version: :class:`SpectatorFeed` builds it once (the
``update`` with its patch, or a ``snapshot``), encodes it once per encoding, and hands the
same text or bytes to each spectator's send queue. It runs as a task of its own, started
when a version arrives after the room's players have been sent theirs
(``server.fanout.LocalRooms``), and gives the event loop back every :data:`BATCH`
spectators, so the players' frames, acts and acks of this room and every other room on the
process go on between batches.

It never falls behind the room: a round serves the newest version, and a version that
arrives meanwhile ends the round early (the spectators not yet served skip to the newer one).
A spectator that missed versions — skipped this way, or whose connection did not take its
frames (more than :data:`BACKLOG` still queued: it reads slowly) — gets a ``snapshot`` of
the newest version carrying the public events it missed (``missed``, when this process
still has them), once its queue has room; never a queue of stale updates. Presence frames
are shared the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from protocol.patch import diff

from . import frames
from .store.base import RoomRecord
from .views import VersionData, redact

if TYPE_CHECKING:
    from .session import Session

BATCH = 64
"""Spectators served before the feed gives the event loop back."""

BACKLOG = 4
"""A spectator with more frames than this still queued is skipped (it reads slowly); it
catches up with a snapshot once it has read them."""

KEEP_EVENTS = 64
"""Versions whose public events the feed keeps for the ``missed`` of a catching-up
snapshot."""

PRESENCE_KEPT = 32
"""Presence frames waiting for the feed at most (older ones give way; a spectator that
missed one gets a snapshot, whose seats say who is connected)."""

RETRY_SECONDS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""Waits before serving again spectators that were skipped for a full queue."""


class SpectatorFeed:
    """The spectators of one room in this process (see the module docstring).

    Args:
        room_id: the room.
        room_settings: the room settings of a record (for snapshots).
        seats: the seats of a record with this process's presence (for snapshots and
            updates that change seats).
    """

    def __init__(
        self,
        room_id: str,
        room_settings: Callable[[RoomRecord], dict[str, Any]],
        seats: Callable[[RoomRecord], list[dict[str, Any]]],
    ) -> None:
        self.room_id = room_id
        self.room_settings = room_settings
        self.seats = seats
        self.watchers: set[Session] = set()
        self.offered = -1
        """The newest version offered (what this feed owes its spectators)."""
        self.frames_sent = 0
        """Frames handed to spectators' send queues (each shared by many)."""
        self.encodings = 0
        """Frames encoded (once per version, group and encoding)."""
        self.skipped = 0
        """Times a spectator was skipped for a full queue."""
        self._latest: VersionData | None = None
        self._events: deque[tuple[int, list[dict[str, Any]]]] = deque(maxlen=KEEP_EVENTS)
        self._presence: deque[dict[str, Any]] = deque(maxlen=PRESENCE_KEPT)
        self._todo: set[Session] = set()
        """Spectators that may be behind: all of them after a new version, the new ones,
        and those skipped."""
        self._stale: set[Session] = set()
        """Spectators that missed a presence frame: their next frame is a snapshot."""
        self._task: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    # -- from the room ---------------------------------------------------------------------
    def add(self, session: Session) -> None:
        """A connection watches the room (after its join's snapshot)."""
        self.watchers.add(session)
        self._todo.add(session)
        self._kick()

    def discard(self, session: Session) -> None:
        """A connection stopped watching."""
        self.watchers.discard(session)
        self._todo.discard(session)
        self._stale.discard(session)

    def offer(self, data: VersionData) -> None:
        """A version of the room, after the players were sent theirs (never blocks)."""
        for version, events in data.backlog:
            self._remember(version, [redact(e, None) for e in events])
        if data.events:
            self._remember(data.version, data.events_for(None))
        if data.version >= self.offered:
            self._latest = data
            self.offered = data.version
            self._todo = set(self.watchers)
            self._kick()

    def offer_presence(self, frame: dict[str, Any]) -> None:
        """A presence frame for every spectator."""
        if self.watchers:
            self._presence.append(frame)
            self._kick()

    def close(self) -> None:
        """The room has no connection left here: stop."""
        self.watchers.clear()
        if self._task is not None:
            self._task.cancel()

    def _remember(self, version: int, events: list[dict[str, Any]]) -> None:
        if not self._events or self._events[-1][0] < version:
            self._events.append((version, events))

    # -- serving ---------------------------------------------------------------------------
    def _kick(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())
        else:
            self._wake.set()

    async def _run(self) -> None:
        retries = 0
        while True:
            while self._presence:
                await self._presence_round(self._presence.popleft())
            latest = self._latest
            todo = self._todo & self.watchers
            if latest is None or not todo:
                return
            self._todo = set()
            left = await self._round(latest, todo)
            self._todo |= left
            if left and self._todo == left and not self._presence:
                # Only slow spectators are left: give their connections time to drain
                # (or a new version or presence frame to come) before trying them again.
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._wake.wait(), RETRY_SECONDS[min(retries, len(RETRY_SECONDS) - 1)])
                retries += 1
            else:
                retries = 0

    async def _round(self, data: VersionData, todo: set[Session]) -> set[Session]:
        """Serve ``data`` to the spectators in ``todo`` that are behind it; returns those
        that could not take it (full queues, or a newer version came first)."""
        version = data.version
        groups: dict[tuple[int, bool], list[Session]] = {}
        for s in todo:
            stale = s in self._stale
            if s.last_version < version or stale:
                groups.setdefault((s.last_version, stale), []).append(s)
        order = [(key, s) for key, members in groups.items() for s in members]
        view = data.view(None)
        left: set[Session] = set()
        messages: dict[tuple[int, bool], dict[str, Any]] = {}
        encoded: dict[tuple[tuple[int, bool], str], str | bytes] = {}
        for i, (key, s) in enumerate(order):
            if i and i % BATCH == 0:
                await asyncio.sleep(0)  # the players' work and other rooms' go first
                if self._latest is not data:  # a newer version came: skip to it
                    left.update(m for _, m in order[i:] if m in self.watchers)
                    return left
            if s not in self.watchers:
                continue
            message = messages.get(key)
            if message is None:
                message = messages[key] = self._frame(data, key[0], key[1], s.last_view, view)
            frame = encoded.get((key, s.codec.encoding))
            if frame is None:
                frame = encoded[(key, s.codec.encoding)] = s.codec.encode(message)
                self.encodings += 1
            if s.send_frame(frame, BACKLOG):
                self.frames_sent += 1
                s.watched(version, view)
                self._stale.discard(s)
            else:
                self.skipped += 1
                left.add(s)
        return left

    def _frame(self, data: VersionData, last: int, stale: bool,
               last_view: dict[str, Any] | None, view: dict[str, Any] | None
               ) -> dict[str, Any]:
        """The frame for spectators who last saw version ``last``: the next ``update``, or
        a ``snapshot`` with the public events since ``last`` when known."""
        record = data.record
        if last == data.version - 1 and not stale:
            return frames.update(
                self.room_id, data.version, record.status, data.events_for(None),
                diff(last_view, view), self.seats(record) if data.seats_changed else None,
            )
        return frames.snapshot(
            record, None, self.room_settings(record), self.seats(record), view,
            missed=self._missed(data, last),
        )

    def _missed(self, data: VersionData, last: int) -> list[dict[str, Any]] | None:
        """The public events of the versions after ``last`` up to ``data``'s, or None when
        this process does not have them all."""
        if last >= data.version:
            return [] if last == data.version else None
        kept = [(v, e) for v, e in self._events if last < v <= data.version]
        versions = [v for v, _ in kept]
        if versions and versions[0] == last + 1 and versions == list(
                range(last + 1, last + 1 + len(versions))) and versions[-1] == data.version:
            return [{"version": v, "events": e} for v, e in kept]
        return data.missed_since(None, last)

    async def _presence_round(self, frame: dict[str, Any]) -> None:
        encoded: dict[str, str | bytes] = {}
        for i, s in enumerate(list(self.watchers)):
            if i and i % BATCH == 0:
                await asyncio.sleep(0)
                if s not in self.watchers:
                    continue
            data = encoded.get(s.codec.encoding)
            if data is None:
                data = encoded[s.codec.encoding] = s.codec.encode(frame)
                self.encodings += 1
            if s.send_frame(data, BACKLOG):
                self.frames_sent += 1
            else:
                self.skipped += 1
                self._stale.add(s)
                self._todo.add(s)

    async def wait_idle(self) -> None:
        """Until the feed has nothing left to do now (tests)."""
        while self._task is not None and not self._task.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(self._task)
