"""The lobby service: keeps the index in step with the rooms, serves its followers.

**Writing.** :meth:`Lobby.on_commit` is a commit hook of the room service
(``RoomService.commit_hooks``, also called when a room is created): for a commit that
concerns the lobby (``server.lobby.entry.concerns``: a public room waiting for players,
or the change that starts its game) it rebuilds the room's entry from the committed record
— with the seated players' ratings at the table's kind, read from the ``ratings`` table —
and writes it, or its removal, to the index with the record's version and expiry
(``LobbyIndex.put``). The write is made by a task after the commit, so the write path never
waits for the database or the index; the version check puts writes made out of order
right, and an index write lost with a dying process is put right by the next commit of the
room, or by :meth:`Lobby.verify` (an entry that no longer matches its room's version), or by
the expiry of the room.

**Following.** Connections follow the lobby with ``lobby_subscribe`` (:meth:`subscribe`).
While this process has followers one task polls the index every ``lobby_poll_seconds``
(one small read when nothing changed; ``LobbyIndex.read``), diffs what it reads against
what it read before, and sends each follower the changes that pass its filters as one
``lobby_update`` (so a burst of changes within a poll is one frame). Every
:data:`VERIFY_SECONDS` it also checks the listed rooms' versions against the store
(:meth:`verify`). Limits: ``max_lobby_subscriptions_per_address`` and
``max_lobby_subscriptions_per_player`` connections following at once, on this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from typing import Any

from .. import frames
from ..store.base import RoomRecord, StoreError
from .entry import FILTERS, concerns, entry_of, matches, ordered, players_of, table_kind
from .index import LobbyIndex

log = logging.getLogger(__name__)

VERIFY_SECONDS = 5.0
"""How often a polling process checks the listed rooms against their records."""

RATINGS_TIMEOUT_SECONDS = 2.0
"""How long an entry waits for the seated players' ratings (then it is written without)."""


class LobbyLimit(Exception):
    """A ``lobby_subscribe`` over a limit; nothing changed.

    Attributes:
        code: ``too_many_lobby_subscriptions`` or ``too_many_player_lobby_subscriptions``.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Lobby:
    """The lobby of one server process (see the module docstring).

    Args:
        index: the shared index.
        service: the room service (room settings, the store for :meth:`verify`, the TTL).
        settings: server settings (the limits, ``lobby_poll_seconds``, ``room_ttl_seconds``).
        database: the ``server.database.Database`` holding the ratings, or None (entries
            then have no ratings).
    """

    def __init__(self, index: LobbyIndex, service: Any, settings: Any,
                 database: Any = None) -> None:
        self.index = index
        self.service = service
        self.settings = settings
        self.database = database
        self._followers: dict[Any, dict[str, Any]] = {}
        """session -> its filters."""
        self._by_address: Counter[str] = Counter()
        self._by_player: Counter[str] = Counter()
        self._entries: dict[str, dict[str, Any]] | None = None
        """What the poller last read: room id -> entry (None before the first read)."""
        self._version: int | None = None
        self._poller: asyncio.Task[None] | None = None
        self._writes: set[asyncio.Task[None]] = set()
        self._lock = asyncio.Lock()
        self._verified = 0.0
        self.writes = 0
        """Index writes made (for tests and metrics)."""

    # -- writing -------------------------------------------------------------------------
    async def on_commit(self, record: RoomRecord, events: list[dict]) -> None:
        """The room service's commit hook: start the entry's write when the commit
        concerns the lobby (never raises, never waits)."""
        settings = self.service.room_settings(record)
        if not concerns(record, settings, events):
            return
        task = asyncio.create_task(self.write(record))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def write(self, record: RoomRecord) -> bool:
        """Write the room's entry (or its removal) as ``record`` gives it. Returns whether
        it was written (False: a newer version was; or the index could not be reached,
        logged)."""
        settings = self.service.room_settings(record)
        entry = entry_of(record, settings)
        if entry is not None and players_of(record):
            shown, private = await self._ratings(record)
            entry = entry_of(record, settings, shown, private)
        expires = float(record.updated) + float(self.settings.room_ttl_seconds)
        try:
            done = await self.index.put(record.id, record.version, entry, expires)
        except StoreError as exc:
            log.warning("lobby: room %s not written (%s)", record.id, exc)
            return False
        self.writes += 1
        return done

    async def _ratings(self, record: RoomRecord) -> tuple[dict[str, int], set[str]]:
        """The seated players' shown ratings at the room's table kind, and which of them
        keep their profile private (shown in the lobby by name only: no id, no rating);
        when the database cannot tell in time, no ratings and every player private."""
        seated = set(players_of(record))
        if self.database is None:
            return {}, set()
        from sqlalchemy import select

        from ..database.schema import players, ratings

        kind = table_kind(record.options)
        try:
            async with asyncio.timeout(RATINGS_TIMEOUT_SECONDS):
                async with self.database.connect() as conn:
                    rows = (await conn.execute(select(
                        ratings.c.player_id, ratings.c.display).where(
                        ratings.c.table_kind == kind,
                        ratings.c.player_id.in_(seated)))).all()
                    private = {r[0] for r in (await conn.execute(select(players.c.id).where(
                        players.c.id.in_(seated), players.c.private.is_(True)))).all()}
        except Exception as exc:  # noqa: BLE001 (the database failed: no ratings shown)
            log.info("lobby: ratings of room %s not read (%s)", record.id, exc)
            return {}, seated
        return {r[0]: int(r[1]) for r in rows if r[0] not in private}, private

    async def drain(self) -> None:
        """Wait for the index writes started so far (tests; a clean stop)."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    # -- reading -------------------------------------------------------------------------
    async def tables(self, filters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """The listed tables that pass ``filters``, newest first (``GET /api/lobby``):
        read from the index, checked against the rooms' versions first.

        Raises:
            StoreUnavailable: the index or the store cannot be reached."""
        _, entries = await self.index.read()
        entries = await self.verify(entries or [])
        return ordered(entries, filters)

    async def verify(self, entries: list[dict[str, Any]], keep_moved: bool = False
                     ) -> list[dict[str, Any]]:
        """The entries whose rooms are still at the entry's version (one read of every
        listed room's version). An entry whose room moved on (an index write lost, or still
        on its way) is written again from the room's record and left out of the answer
        (with ``keep_moved``, kept: the poller then sends the rewrite as a change, rather
        than a removal and an addition); one whose room is gone is removed.

        Raises:
            StoreUnavailable: the store cannot be reached."""
        if not entries:
            return []
        versions = await self.service.store.versions([e["room"] for e in entries])
        kept = []
        for entry, version in zip(entries, versions, strict=True):
            if version == entry["version"]:
                kept.append(entry)
                continue
            with contextlib.suppress(StoreError):
                record, _ = await self.service.store.load(entry["room"])
                if record is not None:
                    await self.write(record)
                    if keep_moved:
                        kept.append(entry)
                else:
                    await self.index.put(entry["room"], entry["version"] + 1, None,
                                         time.time() + 60.0)
        return kept

    # -- following -----------------------------------------------------------------------
    async def subscribe(self, session: Any, filters: dict[str, Any]) -> None:
        """Make ``session`` a follower with ``filters`` (again: new filters) and send it
        the ``lobby`` frame.

        Raises:
            LobbyLimit: its address or its player follows the lobby on as many
                connections as allowed (nothing changed).
            StoreUnavailable: the index cannot be read (nothing changed)."""
        filters = {k: filters.get(k) for k in FILTERS}
        async with self._lock:  # (the counts are checked and taken in one step)
            if session not in self._followers:
                self._check_limits(session)
            if self._entries is None:
                await self._poll_once()
            if session not in self._followers:
                self._by_address[session.address] += 1
                if getattr(session, "player", None) is not None:
                    self._by_player[session.player] += 1
            self._followers[session] = filters
            session.send(frames.lobby(ordered(list((self._entries or {}).values()), filters)))
        if self._poller is None or self._poller.done():
            self._poller = asyncio.create_task(self._poll(), name="lobby-poller")

    def _check_limits(self, session: Any) -> None:
        """Raise :class:`LobbyLimit` when ``session`` may not follow one more."""
        address, player = session.address, getattr(session, "player", None)
        cap = self.settings.max_lobby_subscriptions_per_address
        if cap and self._by_address[address] >= cap:
            raise LobbyLimit("too_many_lobby_subscriptions", "this address follows the "
                             f"lobby on {cap} connections already")
        cap = self.settings.max_lobby_subscriptions_per_player
        if player is not None and cap and self._by_player[player] >= cap:
            raise LobbyLimit("too_many_player_lobby_subscriptions", "this player follows "
                             f"the lobby on {cap} connections already")

    def unsubscribe(self, session: Any) -> None:
        """Stop ``session`` following (nothing when it does not)."""
        if self._followers.pop(session, None) is None:
            return
        self._by_address[session.address] -= 1
        if self._by_address[session.address] <= 0:
            del self._by_address[session.address]
        player = getattr(session, "player", None)
        if player is not None:
            self._by_player[player] -= 1
            if self._by_player[player] <= 0:
                del self._by_player[player]

    @property
    def followers(self) -> int:
        """Connections of this process following the lobby."""
        return len(self._followers)

    async def _poll(self) -> None:
        """While there are followers: read, diff, send; then forget what was read."""
        pause = float(self.settings.lobby_poll_seconds)
        try:
            while self._followers:
                await asyncio.sleep(pause)
                try:
                    async with self._lock:
                        await self._poll_once()
                except StoreError as exc:
                    log.info("lobby: index not read (%s)", exc)
                except Exception:
                    log.exception("lobby poll failed")
        finally:
            if not self._followers:
                self._entries = None
                self._version = None

    async def _poll_once(self) -> None:
        """One read of the index; what changed goes to the followers. Call with the lock.

        Raises:
            StoreUnavailable: the index cannot be read."""
        version, entries = await self.index.read(self._version)
        now = time.monotonic()
        if entries is None and now - self._verified < VERIFY_SECONDS:
            return
        if entries is None:
            entries = list((self._entries or {}).values())
        if now - self._verified >= VERIFY_SECONDS:
            self._verified = now
            with contextlib.suppress(StoreError):
                entries = await self.verify(entries, keep_moved=True)
        fresh = {e["room"]: e for e in entries}
        old, self._entries, self._version = self._entries, fresh, version
        if old is None:
            return
        added = [e for r, e in fresh.items() if r not in old]
        changed = [e for r, e in fresh.items() if r in old and old[r] != e]
        removed = [r for r in old if r not in fresh]
        if not (added or changed or removed):
            return
        for session, filters in list(self._followers.items()):
            frame = frames.lobby_update(
                ordered(added, filters), ordered(changed, filters),
                [r for r in removed if matches(old[r], filters)])
            if frame["added"] or frame["changed"] or frame["removed"]:
                session.send(frame)

    async def close(self) -> None:
        """Stop polling; wait for the writes in flight."""
        self._followers.clear()
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(BaseException):
                await self._poller
        await self.drain()
        await self.index.close()
