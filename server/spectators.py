"""The fan-out to a room's spectators: one shared frame per version, served after the players.

Every spectator of a room sees the same public view, so the frame a version gives them is
the same for all who last saw the same version: :class:`SpectatorFeed` builds it once (the
``update`` with its patch, or a ``snapshot``), encodes it once per encoding and frames it
once as WebSocket bytes (``server.wsguard.prepared_frame``), and hands the same bytes to
every spectator (written to the socket at once when nothing is queued before them, no task
switch per spectator; else queued). It runs as a task of its own, woken when a version
arrives after the room's players have been sent theirs (``server.fanout.LocalRooms``), and
gives the event loop back every :data:`BATCH` spectators, so the players' frames, acts and
acks of this room and of every other room on the process go on between batches.

Versions are served in order, each as an ``update``, as long as the feed keeps up. When it
falls more than :data:`MAX_LAG` versions behind (versions come faster than thousands of
spectators can be sent them), it skips to the newest: spectators then get one ``snapshot``
carrying the public events of the versions they missed (``missed``), never a queue of stale
updates. A spectator whose connection does not take its frame (its socket buffer is full, or
more than :data:`BACKLOG` frames wait in its queue: it reads slowly) is skipped and brought
up to date the same way once it reads again. Presence frames are shared the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from protocol.patch import diff

from . import frames
from .chat import rules as chat_rules
from .store.base import RoomRecord
from .views import VersionData, redact
from .wsguard import prepared_frame

if TYPE_CHECKING:
    from .session import Session

BATCH = 16
"""Spectators served before the feed gives the event loop back (some 16 µs each, mostly the
socket write: a player's frame or act waits at most about a quarter of a millisecond for a
batch, at each step it takes through the event loop)."""

MAX_LAG = 8
"""Versions the feed may have waiting before it skips to the newest."""

BACKLOG = 4
"""A spectator with more frames than this still queued is skipped (it reads slowly); it
catches up with a snapshot once it has read them."""

KEEP_EVENTS = 64
"""Versions whose public events the feed keeps for the ``missed`` of a catching-up
snapshot."""

CHAT_KEPT = 64
"""Chat messages waiting for the feed at most (older ones give way: the room's rate,
``chat_room_rate``, keeps far fewer waiting)."""

PRESENCE_KEPT = 32
"""Presence frames waiting for the feed at most (older ones give way; a spectator that
missed one gets a snapshot, whose seats say who is connected)."""

RETRY_SECONDS = (0.05, 0.1, 0.2, 0.5, 1.0, 2.0)
"""Waits before serving again spectators that were skipped for a full queue (a new version
or presence frame ends the wait)."""


@dataclass
class _Version:
    """One version as spectators see it, taken when it was offered (before a newer version
    lets the room's cache drop its views)."""

    data: VersionData
    view: dict[str, Any] | None
    events: list[dict[str, Any]]


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
        """Frames handed to spectators (each shared by many)."""
        self.encodings = 0
        """Frames encoded (once per version, group and encoding)."""
        self.skipped = 0
        """Times a spectator was skipped: its connection took no frame."""
        self.lagged = 0
        """Times the feed skipped versions to catch up with the room."""
        self._latest: _Version | None = None
        self._pending: deque[_Version] = deque()
        self._events: deque[tuple[int, list[dict[str, Any]]]] = deque(maxlen=KEEP_EVENTS)
        self._presence: deque[dict[str, Any]] = deque(maxlen=PRESENCE_KEPT)
        self._chat: deque[dict[str, Any]] = deque(maxlen=CHAT_KEPT)
        self.seated: Callable[[], frozenset[str]] = frozenset
        """The players seated at the table now (a spectating connection of theirs does not
        read the spectators' talk): ``server.fanout`` gives the room's."""
        self._todo: set[Session] = set()
        """Spectators that may be behind the newest version without a new version to
        serve: new ones, and those skipped."""
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
        events = data.events_for(None)
        if data.events:
            self._remember(data.version, events)
        if data.version > self.offered:
            self.offered = data.version
            self._latest = _Version(data, data.view(None), events)
            self._pending.append(self._latest)
            self._kick()

    def offer_presence(self, frame: dict[str, Any]) -> None:
        """A presence frame for every spectator."""
        if self.watchers:
            self._presence.append(frame)
            self._kick()

    def offer_chat(self, entry: dict[str, Any]) -> None:
        """A chat message (a stored entry, ``server.chat.rules``) for the spectators who may
        read it."""
        if self.watchers:
            self._chat.append(entry)
            self._kick()

    def close(self) -> None:
        """The room has no connection left here: stop."""
        self.watchers.clear()
        self._pending.clear()
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
            while self._chat:
                await self._chat_round(self._chat.popleft())
            if self._pending:
                if len(self._pending) > MAX_LAG:  # behind the room: skip to the newest
                    self.lagged += 1
                    newest = self._pending[-1]
                    self._pending.clear()
                    self._pending.append(newest)
                version = self._pending.popleft()
                todo = set(self.watchers)
                retries = 0
            else:
                version = self._latest  # type: ignore[assignment]
                todo = self._todo & self.watchers
                if version is None or not todo:
                    return
            self._todo = set()
            left = await self._round(version, todo)
            self._todo |= left
            if left and not self._pending and not self._presence and not self._chat:
                # Only spectators that took no frame are left: give their connections time
                # to drain (a new version or presence frame ends the wait).
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        self._wake.wait(), RETRY_SECONDS[min(retries, len(RETRY_SECONDS) - 1)])
                retries += 1

    async def _round(self, version: _Version, todo: set[Session]) -> set[Session]:
        """Serve ``version`` to the spectators in ``todo`` that are behind it; returns those
        that did not get it (their connection took no frame, or the feed fell behind)."""
        number = version.data.version
        groups: dict[tuple[int, bool], list[Session]] = {}
        for s in todo:
            stale = s in self._stale
            if s.last_version < number or stale:
                groups.setdefault((s.last_version, stale), []).append(s)
        order = [(key, s) for key, members in groups.items() for s in members]
        left: set[Session] = set()
        messages: dict[tuple[int, bool], dict[str, Any]] = {}
        encoded: dict[tuple[tuple[int, bool], str], tuple[str | bytes, bytes]] = {}
        for i, (key, s) in enumerate(order):
            if i and i % BATCH == 0:
                await asyncio.sleep(0)  # the players' work and other rooms' go first
                if len(self._pending) > MAX_LAG:  # fallen behind: skip to the newest
                    left.update(m for _, m in order[i:] if m in self.watchers)
                    return left
            if s not in self.watchers:
                continue
            message = messages.get(key)
            if message is None:
                message = messages[key] = self._frame(version, key[0], key[1], s.last_view)
            frame = encoded.get((key, s.codec.encoding))
            if frame is None:
                text = s.codec.encode(message)
                frame = encoded[(key, s.codec.encoding)] = (text, prepared_frame(text))
                self.encodings += 1
            if s.send_shared(*frame, BACKLOG):
                self.frames_sent += 1
                s.watched(number, version.view)
                self._stale.discard(s)
            else:
                self.skipped += 1
                left.add(s)
        return left

    def _frame(self, version: _Version, last: int, stale: bool,
               last_view: dict[str, Any] | None) -> dict[str, Any]:
        """The frame for spectators who last saw version ``last``: the next ``update``, or
        a ``snapshot`` with the public events since ``last`` when known."""
        data = version.data
        record = data.record
        if last == data.version - 1 and not stale:
            return frames.update(
                self.room_id, data.version, record.status, version.events,
                diff(last_view, version.view),
                self.seats(record) if data.seats_changed else None,
            )
        return frames.snapshot(
            record, None, self.room_settings(record), self.seats(record), version.view,
            missed=self._missed(data, last),
        )

    def _missed(self, data: VersionData, last: int) -> list[dict[str, Any]] | None:
        """The public events of the versions after ``last`` up to ``data``'s, or None when
        this process does not have them all."""
        if last >= data.version:
            return [] if last == data.version else None
        kept = [(v, e) for v, e in self._events if last < v <= data.version]
        if [v for v, _ in kept] == list(range(last + 1, data.version + 1)):
            return [{"version": v, "events": e} for v, e in kept]
        return data.missed_since(None, last)

    async def _chat_round(self, entry: dict[str, Any]) -> None:
        """Send a chat message to every spectator who may read it: one frame, encoded once
        per encoding. A spectator whose connection takes no frame misses it (talk is not
        state: nothing to catch up)."""
        frame = frames.chat(self.room_id, entry)
        seated = self.seated()
        encoded: dict[str, tuple[str | bytes, bytes]] = {}
        for i, s in enumerate(list(self.watchers)):
            if i and i % BATCH == 0:
                await asyncio.sleep(0)
                if s not in self.watchers:
                    continue
            if not chat_rules.reads(entry, s.player is not None and s.player in seated,
                                    s.not_heard, s.player):
                continue
            data = encoded.get(s.codec.encoding)
            if data is None:
                text = s.codec.encode(frame)
                data = encoded[s.codec.encoding] = (text, prepared_frame(text))
                self.encodings += 1
            if s.send_shared(*data, BACKLOG):
                self.frames_sent += 1
            else:
                self.skipped += 1

    async def _presence_round(self, frame: dict[str, Any]) -> None:
        encoded: dict[str, tuple[str | bytes, bytes]] = {}
        for i, s in enumerate(list(self.watchers)):
            if i and i % BATCH == 0:
                await asyncio.sleep(0)
                if s not in self.watchers:
                    continue
            data = encoded.get(s.codec.encoding)
            if data is None:
                text = s.codec.encode(frame)
                data = encoded[s.codec.encoding] = (text, prepared_frame(text))
                self.encodings += 1
            if s.send_shared(*data, BACKLOG):
                self.frames_sent += 1
            else:
                self.skipped += 1
                self._stale.add(s)
                self._todo.add(s)
