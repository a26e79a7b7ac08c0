"""One server process's quick match (docs/architecture.md "Quick match").

**Waiting.** A ``queue_join`` puts an entry (player, queue, a fresh ticket, name, rating,
joined, this process's owner id) in the store, replacing the player's entry anywhere: a
player waits in one queue, from one connection, at a time (the connection whose wait was
replaced gets ``queue_left`` ``replaced``). The connection is remembered here
(:class:`Waiter`). Every ``queue_poll_interval_seconds`` the process polls the store in
one round trip: its heartbeat, the results of its waiters' tickets, their current
tickets and their queues' counts; it sends ``matched`` for a result, ``queue_left`` for a
wait that is gone without one, and ``queue_status`` every ``queue_status_interval_seconds``
(and once when the computer offer starts). A connection that closes takes its entry out
at once; a process that dies stops heartbeating and its entries are dropped by the matcher
once the heartbeat is ``queue_owner_lease_seconds`` old.

**Matching.** Every ``queue_match_interval_seconds`` each process tries to take (or renew)
the matcher's lease; the one that holds it reads the whole store, groups each queue
(:func:`server.matchmaking.matching.group`, honouring :attr:`Matchmaker.blocked`), and
records the tables in one atomic step (``claim``): a plan (match id, queue, the seats'
players and tickets) is recorded, and its players taken out of the queue, only if every
one of them is still waiting with that ticket, and only while this process holds the
lease. Then, for each recorded plan, it makes the room (``RoomService.create_room`` with
the request id ``quickmatch-<match id>``: the same room however often it is asked), seats
each player in their seat (``RoomService.join`` with the player's derived seat token, so
the player's own ``join`` resumes the seat) and stores each player's result (``done``).
A process that dies after ``claim`` leaves the plan in ``pending``; whoever holds the lease
next finishes every plan older than :data:`PENDING_TAKEOVER_SECONDS` the same way — every
step is safe to repeat — so a match is made once and nobody is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .. import frames
from ..rooms import RoomError
from ..store.base import StoreError
from . import matching
from .matching import Blocked, Waiting
from .store import Entry, QueueStore
from .tables import Table

log = logging.getLogger(__name__)

PENDING_TAKEOVER_SECONDS = 5.0
"""A recorded plan this old whose room is not ready is finished by the lease holder (its
maker died, or is slow: finishing twice is harmless)."""

RESULT_KEEP_SECONDS = 600.0
"""How long a player's result waits in the store to be taken by their process."""

CLAIM_BATCH = 100
"""Plans recorded per claim (one atomic script each)."""

FINISH_CONCURRENCY = 16
"""Rooms one process makes at once."""

RATING_CACHE_SECONDS = 60.0
"""How long a rating read from the database is reused for later ``queue_join`` s."""


@dataclass
class Waiter:
    """A connection of this process waiting in a queue."""

    session: Any
    entry: Entry
    table: Table
    status_at: float = 0.0
    offered: bool = False
    cancelled: bool = False
    count: int = 0


@dataclass
class Stats:
    """What the matcher did (for tests, the bench and logs)."""

    rounds: int = 0
    matched_players: int = 0
    rooms: int = 0
    taken_over: int = 0
    stale_dropped: int = 0
    match_seconds: float = 0.0
    """CPU (process time) spent in :func:`matching.group`."""
    grouped_players: int = 0
    waits: list[float] = field(default_factory=list)
    """Seconds from joining to the match being recorded, per matched player."""


class Matchmaker:
    """This process's quick match (see the module docstring).

    Args:
        store: the queues.
        service: the room service (rooms, seats, tokens, the clock).
        settings: the ``queue_*`` settings.
        ratings: ``async (player, table kind) -> mu | None`` (None: no rating; the default
            reads nothing: everybody is a newcomer).
        blocked: ``blocked(a, b)`` (default: nobody is blocked); the block store is wired
            in by setting :attr:`blocked` (a synchronous check) or :attr:`blocks` (a batch
            read, below).
        blocks: ``async (players) -> {(a, b), ...}``: the blocks among a round's waiting
            players (``a`` blocked ``b``), read once per matching round (None: none read);
            a failure skips the round (nobody is matched without their blocks known).
    """

    def __init__(self, store: QueueStore, service: Any, settings: Any,
                 ratings: Callable[[str, str], Any] | None = None,
                 blocked: Blocked = matching.never_blocked,
                 blocks: Callable[[list[str]], Awaitable[set[tuple[str, str]]]] | None = None,
                 ) -> None:
        self.store = store
        self.service = service
        self.settings = settings
        self.ratings = ratings
        self.blocked: Blocked = blocked
        self.blocks = blocks
        self.owner = secrets.token_hex(6)
        self.waiters: dict[str, Waiter] = {}
        """ticket -> the waiting connection."""
        self.by_session: dict[int, str] = {}
        """id(session) -> its ticket."""
        self.stats = Stats()
        self._inflight: set[str] = set()
        self._rating_cache: dict[tuple[str, str], tuple[float, float | None]] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._finishing: set[asyncio.Task[None]] = set()
        self._stopping = asyncio.Event()
        self._finish_gate = asyncio.Semaphore(FINISH_CONCURRENCY)

    def clock(self) -> float:
        return float(self.service.clock())

    # -- a connection's requests -------------------------------------------------------
    async def rating_of(self, player: str, table: Table) -> float:
        """The rating matched on for ``player`` at ``table`` (1000 unrated or unknown)."""
        if not table.rated or self.ratings is None:
            return matching.NEWCOMER_RATING
        key = (player, table.kind)
        now = time.monotonic()
        cached = self._rating_cache.get(key)
        if cached is not None and cached[0] > now:
            return matching.match_rating(cached[1])
        try:
            mu = await self.ratings(player, table.kind)
        except Exception as exc:  # the database is down: match as a newcomer meanwhile
            log.warning("quick match: no rating for %s (%s)", player, exc)
            return matching.match_rating(cached[1] if cached else None)
        if len(self._rating_cache) > 50_000:
            self._rating_cache.clear()
        self._rating_cache[key] = (now + RATING_CACHE_SECONDS, mu)
        return matching.match_rating(mu)

    async def join(self, session: Any, table: Table) -> Waiter:
        """Put ``session``'s player in ``table``'s queue (replacing any wait of theirs).

        Raises:
            StoreError: the store failed (nothing queued, or maybe: the session may ask
                again).
        """
        player = session.player
        rating = await self.rating_of(player, table)
        previous = self.by_session.pop(id(session), None)
        if previous is not None:
            self.waiters.pop(previous, None)
        now = self.clock()
        entry = Entry(player=player, queue=table.key, ticket=secrets.token_hex(8),
                      name=session.name or "Player", rating=rating, joined=now,
                      owner=self.owner)
        old, placed = await self.store.join(entry, now)
        if placed is not None:
            # A match of this player's was made that no connection of theirs heard of
            # (theirs went first): this connection is told of it, not queued again.
            entry = Entry(player=player, queue=table.key, ticket=placed, name=entry.name,
                          rating=rating, joined=now, owner=self.owner)
            waiter = Waiter(session, entry, table)
            self.waiters[placed] = waiter
            self.by_session[id(session)] = placed
            await self.poll()
            return waiter
        waiter = Waiter(session, entry, table)
        self.waiters[entry.ticket] = waiter
        self.by_session[id(session)] = entry.ticket
        if old is not None and old.ticket in self.waiters and old.ticket != entry.ticket:
            replaced = self.waiters.pop(old.ticket)
            self.by_session.pop(id(replaced.session), None)
            if replaced.session is not session:
                replaced.session.send(queue_left(replaced, "replaced"))
        waiter.count = await self.store.count(table.key)
        waiter.status_at = now
        session.send(queue_status(waiter, now, self.settings))
        return waiter

    def waiting(self, session: Any) -> Waiter | None:
        """The wait of ``session``, if any."""
        ticket = self.by_session.get(id(session))
        return self.waiters.get(ticket) if ticket is not None else None

    async def leave(self, session: Any) -> str:
        """``queue_leave``: ``"left"`` (out of the queue; ``queue_left`` sent), ``"matched"``
        (too late: the match is made or being made; ``matched`` is sent, now or at the next
        poll) or ``"none"`` (not waiting).

        Raises:
            StoreError: the store failed (the wait stands).
        """
        waiter = self.waiting(session)
        if waiter is None:
            return "none"
        entry = waiter.entry
        if await self.store.leave([(entry.player, entry.ticket)]):
            self._forget(waiter)
            session.send(queue_left(waiter, "cancelled"))
            return "left"
        poll = await self.store.poll(self.owner, self.clock(), [entry.ticket],
                                     [entry.player], [])
        result = poll.results.get(entry.ticket)
        if result is None:
            self._forget(waiter)
            session.send(queue_left(waiter, "cancelled"))
            return "left"
        waiter.cancelled = True
        if "pending" not in result:
            self._deliver(waiter, result)
        return "matched"

    async def disconnected(self, session: Any) -> None:
        """The connection closed: its wait ends at once (best effort; a store that does not
        answer drops it when this process's heartbeat stops... or at the next poll)."""
        waiter = self.waiting(session)
        if waiter is None:
            return
        self._forget(waiter)
        with contextlib.suppress(StoreError):
            await self.store.leave([(waiter.entry.player, waiter.entry.ticket)])

    async def accept_computer(self, session: Any) -> dict[str, Any] | None:
        """``queue_accept_computer``: out of the queue and into a room of the same table
        against the ``standard`` computer (every other seat). Returns the result sent
        with ``matched``, or None when it was too late (the match with people is made and
        will be sent).

        Raises:
            RoomError: ``not_queued`` (not waiting), ``no_computer_offer`` (the offer has
                not started). StoreError.
        """
        waiter = self.waiting(session)
        if waiter is None:
            raise RoomError("not_queued", "this connection is not waiting in a queue")
        if self.clock() - waiter.entry.joined < self.settings.queue_computer_offer_seconds:
            raise RoomError("no_computer_offer", "the computer is offered after "
                            f"{self.settings.queue_computer_offer_seconds:g} s of waiting")
        entry = waiter.entry
        if not await self.store.leave([(entry.player, entry.ticket)]):
            waiter.cancelled = True
            return None
        self._forget(waiter)
        table = waiter.table
        computers = {seat: "standard" for seat in range(1, table.players)}
        record, _ = await self.service.create_room(
            table.options(), computers=computers, room=table.room(),
            request_id=f"quickmatch-c-{entry.ticket}")
        name = await self._seat(record.id, 0, entry.player, entry.name)
        result = {"room": record.id, "seat": 0, "seat_token": self.seat_token(
            record.id, 0, entry.player), "match": f"c-{entry.ticket}", "queue": entry.queue,
            "players": [name] + [None] * (table.players - 1), "computer": True}
        self._deliver(waiter, result, forget=False)
        return result

    def _forget(self, waiter: Waiter) -> None:
        self.waiters.pop(waiter.entry.ticket, None)
        if self.by_session.get(id(waiter.session)) == waiter.entry.ticket:
            self.by_session.pop(id(waiter.session), None)

    def _deliver(self, waiter: Waiter, result: dict[str, Any], forget: bool = True) -> None:
        if forget:
            self._forget(waiter)
        if "error" in result:
            waiter.session.send(queue_left(waiter, "failed"))
            return
        waiter.session.send(matched_frame(waiter, result, waiter.session.base_url))

    # -- polling -----------------------------------------------------------------------
    async def poll(self) -> None:
        """One poll of this process's waits (see the module docstring)."""
        if not self.waiters:
            return
        now = self.clock()
        waiters = list(self.waiters.values())
        for start in range(0, len(waiters), 500):
            chunk = waiters[start:start + 500]
            tickets = [w.entry.ticket for w in chunk]
            players = [w.entry.player for w in chunk]
            queues = sorted({w.entry.queue for w in chunk})
            got = await self.store.poll(self.owner, now, tickets, players, queues)
            for w in chunk:
                if self.waiters.get(w.entry.ticket) is not w:
                    continue
                result = got.results.get(w.entry.ticket)
                if result is not None:
                    if "pending" not in result:
                        self._deliver(w, result)
                    continue
                if got.entries.get(w.entry.player) != w.entry.ticket:
                    self._forget(w)
                    reason = "cancelled" if w.cancelled else (
                        "replaced" if got.entries.get(w.entry.player) else "expired")
                    w.session.send(queue_left(w, reason))
                    continue
                w.count = got.counts.get(w.entry.queue, w.count)
                offer = now - w.entry.joined >= self.settings.queue_computer_offer_seconds
                if (now - w.status_at >= self.settings.queue_status_interval_seconds
                        or (offer and not w.offered)):
                    w.offered = w.offered or offer
                    w.status_at = now
                    w.session.send(queue_status(w, now, self.settings))

    # -- matching ----------------------------------------------------------------------
    async def match(self) -> int:
        """One round of matching, if this process holds (or takes) the lease.

        Returns:
            Plans recorded in this round (their rooms are being made in the background).
        """
        interval = self.settings.queue_match_interval_seconds
        if not await self.store.lease(self.owner, max(1.0, 4 * interval)):
            return 0
        self.stats.rounds += 1
        now = self.clock()
        snap = await self.store.snapshot()
        dead_before = now - self.settings.queue_owner_lease_seconds
        live_owners = {o for o, beat in snap.owners.items() if beat >= dead_before}
        live_owners.add(self.owner)
        stale = [(e.player, e.ticket) for e in snap.entries if e.owner not in live_owners]
        in_use = {e.owner for e in snap.entries}
        forget = [o for o, beat in snap.owners.items()
                  if beat < now - 600 and o not in in_use and o != self.owner]
        for match_id, plan in snap.pending.items():
            if match_id not in self._inflight and now - plan.get("made", 0) > (
                    PENDING_TAKEOVER_SECONDS):
                self.stats.taken_over += 1
                self._spawn_finish(plan)
        queues: dict[str, list[Entry]] = {}
        for e in snap.entries:
            if e.owner in live_owners:
                queues.setdefault(e.queue, []).append(e)
        blocked = self.blocked
        if self.blocks is not None and queues:
            try:
                pairs = await self.blocks(sorted({e.player for es in queues.values()
                                                  for e in es}))
            except Exception as exc:
                log.warning("quick match: blocks not read (%s); no matching this round", exc)
                return 0
            check = self.blocked

            def blocked(a: str, b: str) -> bool:
                return (a, b) in pairs or check(a, b)

        plans: list[dict[str, Any]] = []
        started = time.process_time()
        for key, entries in queues.items():
            try:
                table = Table.from_key(key)
            except ValueError:
                continue
            by_player = {e.player: e for e in entries}
            tables = matching.group(
                [Waiting(e.player, e.rating, e.joined) for e in entries], table.players,
                now, blocked)
            self.stats.grouped_players += len(entries)
            for seated in tables:
                plans.append({
                    "id": secrets.token_hex(8), "queue": key, "made": now,
                    "seats": [{"player": w.player, "ticket": by_player[w.player].ticket,
                               "name": by_player[w.player].name,
                               "joined": by_player[w.player].joined} for w in seated]})
        self.stats.match_seconds += time.process_time() - started
        if not plans and not stale and not forget:
            return 0
        recorded = 0
        for start in range(0, max(1, len(plans)), CLAIM_BATCH):
            batch = plans[start:start + CLAIM_BATCH]
            claimed = await self.store.claim(self.owner, batch, stale if start == 0 else [],
                                             forget if start == 0 else [],
                                             RESULT_KEEP_SECONDS)
            if claimed is None:
                return recorded  # the lease moved on: the next holder matches them
            if start == 0:
                self.stats.stale_dropped += len(stale)
            ids = set(claimed)
            for plan in batch:
                if plan["id"] in ids:
                    recorded += 1
                    self.stats.matched_players += len(plan["seats"])
                    if len(self.stats.waits) < 100_000:
                        self.stats.waits.extend(now - s["joined"] for s in plan["seats"])
                    self._spawn_finish(plan)
        return recorded

    def _spawn_finish(self, plan: dict[str, Any]) -> None:
        self._inflight.add(plan["id"])
        task = asyncio.ensure_future(self._finish_guarded(plan))
        self._finishing.add(task)
        task.add_done_callback(self._finishing.discard)

    async def _finish_guarded(self, plan: dict[str, Any]) -> None:
        try:
            async with self._finish_gate:
                await self.finish(plan)
        except StoreError as exc:
            log.info("quick match %s: store failed (%s); the next round finishes it",
                     plan["id"], exc)
        except Exception:
            log.exception("quick match %s failed", plan["id"])
        finally:
            self._inflight.discard(plan["id"])

    async def finish(self, plan: dict[str, Any]) -> None:
        """Make a recorded plan's room, seat its players, store their results (every step
        safe to repeat, from any process).

        Raises:
            StoreError: the store failed (the plan stays pending; the lease holder
                finishes it later).
        """
        table = Table.from_key(plan["queue"])
        try:
            record, _ = await self.service.create_room(
                table.options(), computers={}, room=table.room(),
                request_id=f"quickmatch-{plan['id']}")
        except RoomError as exc:
            log.warning("quick match %s: no room (%s)", plan["id"], exc.code)
            await self.store.done(plan["id"], {s["ticket"]: {"error": exc.code}
                                               for s in plan["seats"]}, RESULT_KEEP_SECONDS)
            return
        names: list[str | None] = []
        for seat, s in enumerate(plan["seats"]):
            names.append(await self._seat(record.id, seat, s["player"], s["name"]))
        results = {s["ticket"]: {
            "room": record.id, "seat": seat, "match": plan["id"], "queue": plan["queue"],
            "seat_token": self.seat_token(record.id, seat, s["player"]),
            "players": names, "computer": False,
        } for seat, s in enumerate(plan["seats"])}
        await self.store.done(plan["id"], results, RESULT_KEEP_SECONDS)
        self.stats.rooms += 1

    def seat_token(self, room_id: str, seat: int, player: str) -> str:
        """The player's seat token of a seat (what ``server.session`` derives at ``join``)."""
        return self.service.tokens.derive(f"player-seat|{room_id}|{seat}|{player}".encode())

    async def _seat(self, room_id: str, seat: int, player: str, name: str) -> str:
        """Seat ``player`` (or find them seated: a repeat) at ``seat``; the name taken (the
        player's, or with a number after it when another seat reads the same)."""
        token = self.seat_token(room_id, seat, player)
        tries = [name] + [f"{name[:28]} {n}" for n in range(2, 5)] + [f"Player {seat + 1}x"]
        for attempt in tries:
            try:
                result = await self.service.join(room_id, seat, token, attempt,
                                                 player=player, player_token=token)
            except RoomError as exc:
                if exc.code in ("name_taken", "bad_name"):
                    continue
                raise
            return result.record.seats[seat].name or attempt
        raise RoomError("name_taken", "no name could be found for the seat")

    # -- loops -------------------------------------------------------------------------
    async def _loop(self, interval: float, step: Callable[[], Any]) -> None:
        while not self._stopping.is_set():
            try:
                await step()
            except StoreError:
                pass
            except Exception:
                log.exception("quick match loop failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), interval)

    def start(self) -> None:
        """Start the poll and match loops."""
        self._tasks = [
            asyncio.create_task(self._loop(self.settings.queue_poll_interval_seconds,
                                           self.poll), name="quickmatch-poll"),
            asyncio.create_task(self._loop(self.settings.queue_match_interval_seconds,
                                           self.match), name="quickmatch-match"),
        ]

    async def stop(self) -> None:
        """Stop the loops; take this process's waits out of the queues (best effort)."""
        self._stopping.set()
        for task in self._tasks:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 2.0)
        for task in list(self._finishing):
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, 2.0)
        pairs = [(w.entry.player, w.entry.ticket) for w in self.waiters.values()]
        with contextlib.suppress(StoreError):
            await self.store.leave(pairs)
        self.waiters.clear()
        self.by_session.clear()


# -- frames ---------------------------------------------------------------------------
def queue_status(waiter: Waiter, now: float, settings: Any) -> dict[str, Any]:
    """The ``queue_status`` frame of a wait."""
    waited = now - waiter.entry.joined
    return frames.queue_status(waiter.entry.queue, waiter.table.to_dict(), waiter.count,
                               waited, waited >= settings.queue_computer_offer_seconds)


def queue_left(waiter: Waiter, reason: str) -> dict[str, Any]:
    """The ``queue_left`` frame of a wait."""
    return frames.queue_left(waiter.entry.queue, reason)


def matched_frame(waiter: Waiter, result: dict[str, Any], base_url: str) -> dict[str, Any]:
    """The ``matched`` frame of a result."""
    return frames.matched(result["queue"], Table.from_key(result["queue"]).to_dict(),
                          result["room"],
                          result["seat"], result["seat_token"],
                          f"{base_url}/r/{result['room']}", result["match"],
                          result["players"], bool(result.get("computer")))
