"""A process's periodic upkeep: one background loop, bounded work per beat.

Every third of ``presence_lease_seconds`` (2 s by default):

* renew this process's presence registration and reap the presence of processes that
  stopped (``server.presence``);
* every ``catchup_interval_seconds``, read the versions of the rooms this process follows
  and catch up any it is behind on (``server.fanout.LocalRooms.check_versions``);
* every ``purge_interval_seconds``, drop expired rooms of the in-memory store;
* keep the garbage collector's full passes short (:func:`tend_gc`): collect the young
  generations and move the survivors — rooms' records, states and views, which live for a
  whole game — out of the collector's sight (``gc.freeze``); once every
  ``gc_full_pass_seconds`` bring everything back and collect it all, so no reference
  cycle is kept for long.

Store failures are not logged here (the store's health logs one line per outage); the loop
simply tries again at the next beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time

from .fanout import LocalRooms
from .presence import Presence
from .settings import Settings
from .store.base import RoomStore, StoreError

log = logging.getLogger(__name__)


def tend_gc(full: bool = False) -> None:
    """Keep the cyclic garbage collector's full passes short.

    A full pass walks every container object the process holds; a server holding hundreds
    of rooms holds hundreds of thousands, so each pass stopped the event loop for hundreds
    of milliseconds (docs/performance.md). Most of them are long-lived (a room's record,
    state and views last a game) and acyclic; the few reference cycles are short-lived.
    So: collect the young generations (which frees the cycles that died young), then move
    every survivor to the permanent generation (``gc.freeze``), where full passes do not
    look. Frozen objects are still freed by reference counting as usual; only a cycle that
    dies after being frozen waits for the next ``full`` call, which unfreezes everything
    and collects it all.

    Args:
        full: also do the rare complete pass (unfreeze, collect every generation).
    """
    if full:
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()


class Upkeep:
    """The upkeep loop of one process.

    Args:
        store: the room store (purged when it is the in-memory one).
        presence: this process's presence.
        rooms: this process's fan-out.
        settings: intervals.
    """

    def __init__(
        self, store: RoomStore, presence: Presence, rooms: LocalRooms, settings: Settings
    ) -> None:
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
        if self.settings.gc_freeze:
            every = max(1, round(self.settings.gc_full_pass_seconds / self.interval))
            tend_gc(full=self.beats % every == 0)

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
