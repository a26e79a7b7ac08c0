"""The archive's deadline handlers: write ended games to the database, abandon idle games.

``archive`` (one per ended game, due at once; ``server.archive.outbox``): claimed by any
process's sweeper and run in a task of its own (``Sweeper.register_own``), never on the
sweep itself, at most ``archive_concurrency`` at once per process:

1. read the game's log entries from the room's outbox;
2. write the game in one idempotent SQL transaction (``server.archive.writer``), at most
   ``archive_timeout_seconds``;
3. complete the claim and drop the outbox entry in one atomic store step
   (``RoomStore.finish_outbox``);
4. hand a game written now to the grader (``server.archive.grader``: graded in a process
   pool, off the event loop; the claim does not wait for it).

If the database fails, the deadline is rescheduled with a back-off (0.5 s doubling up to
``archive_retry_max_seconds``) and the room is held (``RoomStore.hold``) so that it does not
expire before its archive is written — for at most ``archive_hold_seconds`` after the game
ended. A process that dies anywhere in between leaves the claim's lease to run out: another
process repeats the steps, and step 2 finds the game written and writes nothing.

``abandon`` (one per game in progress, ``server.deadline_plan``): when a room has stayed idle
``RoomService.abandon_after`` seconds (its TTL less a margin) its game is abandoned — a commit
through the room service with the server event ``game_abandoned`` that closes the room to
actions, carries the ``archive`` deadline (status ``abandoned``) and keeps the room's
original expiry; a room written to meanwhile has its deadline put off to the new time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from typing import Any

from ..database import Database, stop_if_cancelling
from ..deadline_plan import ABANDON, ARCHIVE
from ..rooms import Change, NoChange, Room, RoomService
from ..settings import Settings
from ..store.base import Deadline, RoomStore
from ..timers import ClaimRef, Sweeper
from .grader import owner_of
from .rows import game_rows
from .writer import write_game

log = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 0.5
"""The first pause before archiving a game is tried again after the database failed."""


class Archiver:
    """Archives ended games and abandons idle ones (see the module docstring).

    Args:
        service: the room service (the abandonment is a room change).
        sweeper: registers the ``archive`` and ``abandon`` handlers.
        db: the database.
        settings: the ``archive_*`` settings.
    """

    def __init__(
        self, service: RoomService, sweeper: Sweeper, db: Database, settings: Settings
    ) -> None:
        self.service = service
        self.store: RoomStore = service.store
        self.db = db
        self.settings = settings
        self._slots = asyncio.Semaphore(settings.archive_concurrency)
        self._migrating: asyncio.Task[None] | None = None
        self.written = 0
        """Games this process wrote."""
        self.duplicates = 0
        """Games this process found archived already (a repeated claim)."""
        self.failures = 0
        """Tries that failed on the database (each is tried again later)."""
        self.lost = 0
        """Ended games whose outbox entry was gone before they were archived (held past
        ``archive_hold_seconds``)."""
        self.abandoned = 0
        """Games this process abandoned."""
        self.last_lag = 0.0
        """Seconds from the end of the last game this process archived to its archive."""
        self.grader: Any = None
        """The :class:`server.archive.grader.Grader` told of every game written here (None:
        games are graded when first read)."""
        self._pending: dict[str, tuple[float, float]] = {}
        """Deadline member -> (the Unix time its game ended, when this process last tried
        it), from its first try here until it is archived (or tried elsewhere for long)."""
        sweeper.register_own(ARCHIVE, self.archive)
        sweeper.register(ABANDON, self.abandon)

    def _waiting(self) -> list[float]:
        """When the games this process is trying to archive ended (a game last tried here
        longer ago than two back-offs and three leases is dropped: another process has
        it)."""
        now = self.service.clock()
        forget = (2 * self.settings.archive_retry_max_seconds
                  + 3 * self.settings.deadline_lease_seconds + 1)
        for member, (_, touched) in list(self._pending.items()):
            if now - touched > forget:
                del self._pending[member]
        return [ended for ended, _ in self._pending.values()]

    @property
    def lag(self) -> float:
        """Seconds since the end of the oldest game this process is trying to archive (0
        when none): how far the archive is behind the tables."""
        waiting = self._waiting()
        if not waiting:
            return 0.0
        return max(0.0, self.service.clock() - min(waiting))

    @property
    def pending(self) -> int:
        """Ended games this process is trying to archive (including between tries)."""
        return len(self._waiting())

    # -- start-up ------------------------------------------------------------------------
    def start(self) -> None:
        """Migrate the database in the background (retrying while it fails): the server
        serves tables meanwhile, and archives wait for it."""
        self._migrating = asyncio.create_task(self._migrate_until_done(), name="db-migrate")

    async def _migrate_until_done(self) -> None:
        pause = FIRST_RETRY_SECONDS
        while not self.db.migrated:
            try:
                await self.db.migrate()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                stop_if_cancelling(exc)  # (a task being stopped stops here all the same)
                log.warning("database not migrated yet (%s); trying again in %.0f s",
                            exc, pause)
            await asyncio.sleep(pause)
            pause = min(self.settings.archive_retry_max_seconds, pause * 2)

    async def stop(self) -> None:
        """Stop migrating (the sweeper stops the archive tasks)."""
        if self._migrating is not None:
            self._migrating.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._migrating
            self._migrating = None

    # -- archive -------------------------------------------------------------------------
    async def archive(self, ref: ClaimRef) -> None:
        """The ``archive`` handler (see the module docstring).

        Raises:
            StoreError: the room store failed (the claim's lease brings it back).
        """
        deadline = ref.current.deadline
        payload = deadline.payload
        game = int(deadline.key)
        self._pending[deadline.member] = (float(payload.get("ended", 0.0)),
                                          self.service.clock())
        done = False
        try:
            async with self._slots:
                entries = await self.store.outbox(deadline.room, game)
                if entries is None:
                    self.lost += 1
                    log.error("archive: room %s game %d has no outbox entry left; not archived",
                              deadline.room, game)
                    await self.store.complete(ref.current)
                    done = True
                    return
                if entries and entries[0].get("v") != payload.get("first"):
                    log.warning("archive: room %s game %d: the room's log no longer starts "
                                "at the game's first version (%s, not %s); archived as kept",
                                deadline.room, game, entries[0].get("v"), payload.get("first"))
                talk = await self._talk(deadline.room, game)
                try:
                    async with asyncio.timeout(self.settings.archive_timeout_seconds):
                        if not self.db.migrated:
                            await self.db.migrate()
                        rows = game_rows(deadline.room, payload, entries, time.time())
                        rows["chat"] = talk
                        written = await write_game(self.db, rows)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    await self._failed(ref, exc)
                    return
                if written:
                    self.written += 1
                    if self.grader is not None:
                        self.grader.schedule(rows["game"]["id"],
                                             owner_of(rows["seats"]))
                else:
                    self.duplicates += 1
                self.last_lag = max(0.0, self.service.clock() - float(payload.get("ended", 0)))
                await self.store.finish_outbox(ref.current, game)
                done = True
        finally:
            if done:
                self._pending.pop(deadline.member, None)

    async def _talk(self, room_id: str, game: int) -> list[dict[str, Any]]:
        """The room's kept chat messages of game ``game`` (the first game's also those said
        before it started), as stored.

        Raises:
            StoreError: the room store failed (the claim's lease brings the archive back).
        """
        kept = await self.store.chat_recent(room_id)
        games = {game, 0} if game == 1 else {game}
        return [e for e in kept if e.get("game") in games]

    async def _failed(self, ref: ClaimRef, exc: BaseException) -> None:
        """The database failed: try again after a back-off, keeping the room meanwhile."""
        self.failures += 1
        deadline = ref.current.deadline
        attempts = int(deadline.payload.get("attempts", 0)) + 1
        if attempts == 1 or attempts % 20 == 0:
            log.warning("archive: room %s game %s not written (try %d): %s",
                        deadline.room, deadline.key, attempts, exc)
        delay = min(self.settings.archive_retry_max_seconds,
                    FIRST_RETRY_SECONDS * 2 ** (attempts - 1))
        now = self.service.clock()
        ended = float(deadline.payload.get("ended", now))
        keep = min(ended + self.settings.archive_hold_seconds,
                   now + 2 * delay + 3 * self.settings.deadline_lease_seconds + 60)
        if keep > now:
            await self.store.hold(deadline.room, keep)
        await self.store.schedule(replace(
            deadline, due=now + delay, payload={**deadline.payload, "attempts": attempts}))

    # -- abandon -------------------------------------------------------------------------
    async def abandon(self, deadline: Deadline) -> None:
        """The ``abandon`` handler: abandon the room's game if the room has been idle long
        enough, else put the deadline off to when it will have been."""
        idle = self.service.abandon_after
        ttl = float(self.settings.room_ttl_seconds)
        wanted = deadline.payload.get("game")

        def change(room: Room, now: float) -> Change | NoChange:
            record = room.record
            if (record.status != "playing" or record.abandoned
                    or (wanted is not None and record.game_number != wanted)):
                return NoChange(None)
            due = record.updated + idle
            if now < due:
                return NoChange(due)
            event: dict[str, Any] = {"type": "game_abandoned", "game_number": record.game_number}
            return Change([event], {"abandon": record.game_number}, abandoned=True,
                          ttl_seconds=max(1, int(record.updated + ttl - now)))

        outcome = await self.service.transact(deadline.room, change, cached=False,
                                              missing_ok=True)
        if outcome is None:
            return
        if outcome.changed:
            self.abandoned += 1
        elif outcome.result is not None:
            await self.store.schedule(replace(deadline, due=float(outcome.result)))
