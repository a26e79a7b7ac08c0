"""A process's periodic upkeep: one background loop, bounded work per beat.

Every third of ``presence_lease_seconds`` (2 s by default):

* renew this process's presence registration and reap the presence of processes that
  stopped (``server.presence``);
* every ``catchup_interval_seconds``, read the versions of the rooms this process follows
  and catch up any it is behind on (``server.fanout.LocalRooms.check_versions``);
* every ``purge_interval_seconds`` (at most once a beat), drop expired rooms of the
  in-memory store (at most 5,000 a beat; an expiry heap makes it cheap,
  ``server.store.memory.MemoryStore.purge``);
* every ``gc_full_pass_seconds``, the garbage collector's complete pass
  (``server.gcpolicy``).

Store failures are not logged here (the store's health logs one line per outage); the loop
simply tries again at the next beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from .fanout import LocalRooms
from .gcpolicy import GcPolicy
from .presence import Presence
from .settings import Settings
from .store.base import RoomStore, StoreError

log = logging.getLogger(__name__)


class Upkeep:
    """The upkeep loop of one process.

    Args:
        store: the room store (purged when it is the in-memory one).
        presence: this process's presence.
        rooms: this process's fan-out.
        settings: intervals.
        gc: the process's garbage-collector policy (None: Python's defaults).
    """

    def __init__(
        self, store: RoomStore, presence: Presence, rooms: LocalRooms, settings: Settings,
        gc: GcPolicy | None = None,
    ) -> None:
        self.gc = gc
        self.store = store
        self.presence = presence
        self.rooms = rooms
        self.settings = settings
        self.beats = 0
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()

    @property
    def interval(self) -> float:
        """Seconds between beats."""
        return float(self.settings.presence_lease_seconds) / 3

    async def beat(self) -> None:
        """One round of upkeep (each part on its own; a failing part does not stop the
        others)."""
        self.beats += 1
        with contextlib.suppress(StoreError):
            await self.presence.heartbeat()
        with contextlib.suppress(StoreError):
            await self.presence.reap()
        every = max(1, round(self.settings.catchup_interval_seconds / self.interval))
        if self.beats % every == 0:
            with contextlib.suppress(StoreError):
                await self.rooms.check_versions()
        purge = getattr(self.store, "purge", None)
        every = max(1, round(self.settings.purge_interval_seconds / self.interval))
        if purge is not None and self.beats % every == 0:
            purge()
        if self.gc is not None:
            every = max(1, round(self.settings.gc_full_pass_seconds / self.interval))
            if self.beats % every == 0:
                self.gc.full_pass()

    async def run(self) -> None:
        """Beat until :meth:`stop`."""
        while not self._stopping.is_set():
            started = time.monotonic()
            try:
                await self.beat()
            except Exception:
                log.exception("upkeep failed")
            pause = max(0.05, self.interval - (time.monotonic() - started))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), pause)

    def start(self) -> None:
        """Start :meth:`run` as a background task."""
        self._task = asyncio.create_task(self.run(), name="upkeep")

    async def stop(self) -> None:
        """Stop the loop (the beat in progress may finish, up to 2 s)."""
        self._stopping.set()
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2.0)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
            self._task = None
