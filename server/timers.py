"""Deadlines as data, and the sweeper that fires them.

A deadline is ``(room, kind, due time, key, payload)`` (:class:`server.store.Deadline`),
kept by the store (a sorted set in Redis, a heap in memory), never a sleeping task, so any
process may die at any moment without losing one. Every process runs a :class:`Sweeper`:
every ``sweep_interval_seconds`` it claims the due deadlines atomically and runs the handler
registered for each deadline's kind. A claim is a short lease (``deadline_lease_seconds``,
5 s by default), renewed every third of it while the handler runs: if the claimer dies, the
deadline becomes claimable again by another process within one lease. Handlers change rooms
only through the room service, whose version checks make a repeated firing harmless.

Kinds registered here: ``answer_timeout`` (the Muggins answer window, docs/rules.md §5.2).
Other kinds (``computer_turn``, ``turn_clock``, ``takeover``: ``server.computer_seats``)
register with :meth:`Sweeper.register`.

Deadlines are written with the commit that makes them due (``server.deadline_plan``); the
sweeper is told of the ones this process stored (:meth:`Sweeper.wake_at`) so it does not
wait for its next tick, and finds the others' on its regular sweeps.

A table left by everyone waits for its people: a handler about to make the server's
computer act for a person calls :meth:`Sweeper.park_unless_present` first, which sets the
deadline aside while no seat of the room has a connection; the next connection to the room
makes it due again (``RoomStore.park_unless_present``, docs/architecture.md "A table left by
everyone").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from .rooms import ANSWER_TIMEOUT, RoomService, answer_marker
from .settings import Settings
from .store.base import Claim, Deadline, RoomRecord, RoomStore, StoreError, park

log = logging.getLogger(__name__)

Handler = Callable[[Deadline], Awaitable[None]]
"""Runs a due deadline. Exceptions are logged; the deadline is completed regardless."""


class ClaimRef:
    """The claim of a deadline whose handler runs on its own (:meth:`Sweeper.register_own`):
    ``current`` is the claim as last renewed (what completing it needs)."""

    __slots__ = ("_held",)

    def __init__(self, held: list[Claim]) -> None:
        self._held = held

    @property
    def current(self) -> Claim:
        """The claim as last renewed."""
        return self._held[0]


OwnHandler = Callable[[ClaimRef], Awaitable[None]]
"""Runs a due deadline off the sweep (its own task) and completes (or reschedules) the
claim itself; the sweeper only renews the lease while it runs."""


class Sweeper:
    """Claims due deadlines from the store and runs their handlers.

    Args:
        store: where deadlines are kept.
        service: the room service handlers act through.
        settings: sweep interval and lease length.
    """

    def __init__(self, store: RoomStore, service: RoomService, settings: Settings) -> None:
        self.store = store
        self.service = service
        self.settings = settings
        self.handlers: dict[str, Handler] = {ANSWER_TIMEOUT: self._answer_timeout}
        self.own_handlers: dict[str, OwnHandler] = {}
        self.detached: set[str] = set()
        """Kinds whose handlers the sweep starts and does not wait for (:meth:`register`)."""
        self._own_tasks: set[asyncio.Task[None]] = set()
        self.fired = 0
        """Deadlines run since start."""
        self.retried = 0
        """Deadlines left to run again because the store failed under their handler."""
        self.lateness: list[float] = []
        """How late (seconds after due) the last deadlines ran, newest last."""
        self.parked = 0
        """Deadlines set aside since start because nobody was at their table."""
        self._held: dict[str, list[Claim]] = {}
        """Deadline member -> the claim its running handler holds (renewals replace it)."""
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_due = float("inf")
        service.deadline_listeners.append(self.wake_at)

    def wake_at(self, due: float) -> None:
        """Sweep at Unix time ``due`` (seconds) at the latest, instead of the next tick.

        Called on the event loop (by the room service after a commit stored deadlines).
        """
        delay = due - self.service.clock()
        if delay <= 0:
            self._wake.set()
            return
        if delay >= self.settings.sweep_interval_seconds or due >= self._timer_due:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_due = due
        self._timer = asyncio.get_running_loop().call_later(delay, self._fire_timer)

    def _fire_timer(self) -> None:
        self._timer = None
        self._timer_due = float("inf")
        self._wake.set()

    def register(self, kind: str, handler: Handler, detached: bool = False) -> None:
        """Run ``handler`` for deadlines of ``kind`` (replaces an earlier handler).

        Args:
            detached: run each such deadline in a task of its own that the sweep does not
                wait for (a handler that may wait long, like a computer move queued for a
                computer process, must not hold up the other deadlines of the process).
                Its lease is renewed and its claim completed as for any other; the next
                sweep does not claim it again while it runs (the lease hides it).
        """
        self.handlers[kind] = handler
        if detached:
            self.detached.add(kind)
        else:
            self.detached.discard(kind)

    def register_own(self, kind: str, handler: OwnHandler) -> None:
        """Run deadlines of ``kind`` each in a task of its own, never waited for by the sweep
        (work that may be slow, like writing to the database, must not hold up the timers
        of the tables). The lease is renewed while the handler runs; the handler completes
        or reschedules the claim itself (``ClaimRef.current``); if it fails or the process
        dies, the lease runs out and the deadline is claimed again."""
        self.own_handlers[kind] = handler

    async def schedule(self, deadline: Deadline) -> None:
        """Store a deadline (replacing one with the same room, kind and key)."""
        await self.store.schedule(deadline)

    async def cancel(self, room: str, kind: str, key: str = "") -> None:
        """Remove a deadline if it is still pending."""
        await self.store.cancel(room, kind, key)

    async def sweep_once(self, now: float | None = None) -> int:
        """Claim and run every deadline due at ``now`` (default: the clock), concurrently;
        wait for their handlers, except those of :meth:`register_own` and detached kinds.

        Returns:
            How many deadlines were run.
        """
        now = self.service.clock() if now is None else now
        claims = await self.store.claim_due(now, now + self.settings.deadline_lease_seconds)
        mine = []
        for claim in claims:
            kind = claim.deadline.kind
            if kind in self.own_handlers:
                self._start(self._run_own(claim))
            elif kind in self.detached:
                self._start(self._run(claim))
            else:
                mine.append(claim)
        if mine:
            await asyncio.gather(*(self._run(claim) for claim in mine))
        return len(claims)

    def _start(self, job: Coroutine[Any, Any, None]) -> None:
        """Run ``job`` in a task the sweep does not wait for (cancelled by :meth:`stop`)."""
        task = asyncio.create_task(job)
        self._own_tasks.add(task)
        task.add_done_callback(self._own_tasks.discard)

    async def _run_own(self, claim: Claim) -> None:
        """Run a deadline of a :meth:`register_own` kind, renewing its lease meanwhile."""
        held = [claim]
        renew = asyncio.create_task(self._renew(held, self.settings.deadline_lease_seconds))
        try:
            await self.own_handlers[claim.deadline.kind](ClaimRef(held))
            self.fired += 1
        except StoreError:
            self.retried += 1
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("deadline %s failed", claim.deadline.member)
        finally:
            renew.cancel()

    async def _run(self, claim: Claim) -> None:
        """Run one claimed deadline's handler, renewing the claim's lease while it runs,
        then complete the claim (unless the deadline was rescheduled meanwhile).

        A handler that fails because the store failed leaves the claim to expire: the
        deadline runs again (here or elsewhere) once its lease ends, so an outage delays it
        by a lease but never loses it.
        """
        handler = self.handlers.get(claim.deadline.kind)
        held = [claim]
        member = claim.deadline.member
        self._held[member] = held
        renew = asyncio.create_task(self._renew(held, self.settings.deadline_lease_seconds))
        try:
            if handler is None:
                log.warning("no handler for deadline kind %r", claim.deadline.kind)
            else:
                await handler(claim.deadline)
            self.fired += 1
            self.lateness.append(max(0.0, self.service.clock() - claim.deadline.due))
            del self.lateness[:-256]
        except StoreError:
            # The store's outage is logged once by its health; the lease brings it back.
            self.retried += 1
            return
        except Exception:
            log.exception("deadline %s failed", claim.deadline.member)
        finally:
            renew.cancel()
            if self._held.get(member) is held:
                del self._held[member]
        try:
            await self.store.complete(held[0])
        except StoreError:
            pass  # the lease ends and someone runs it again; handlers are idempotent

    async def _renew(self, held: list[Claim], lease: float) -> None:
        """Extend the claim in ``held[0]`` every third of a lease until cancelled (the
        renewed claim replaces it, so the caller completes the right lease)."""
        while True:
            await asyncio.sleep(lease / 3)
            try:
                renewed = await self.store.extend(held[0], self.service.clock() + lease)
            except StoreError:
                continue
            if renewed is None:
                return  # rescheduled or taken by someone else: nothing left to hold
            held[0] = renewed

    async def park_unless_present(self, deadline: Deadline, resume_after: float) -> bool:
        """Before the server's computer acts for a person: if nobody is connected to the
        room, set this (running) deadline aside until someone is, atomically
        (``RoomStore.park_unless_present``).

        Args:
            deadline: the deadline whose handler is running now.
            resume_after: seconds after the next connection to the room at which it is due
                again (the takeover grace, the bot delay, 0 for a turn clock).

        Returns:
            True when the handler must do nothing now (parked, or the deadline was
            rescheduled meanwhile), False when a person is connected (go on). A deadline
            this sweeper is not running (a handler called directly) is never parked.

        Raises:
            StoreError: the store failed (the lease brings the deadline back).
        """
        held = self._held.get(deadline.member)
        if held is None:
            return False
        until = self.service.clock() + float(self.settings.room_ttl_seconds)
        outcome = await self.store.park_unless_present(
            held[0], park(deadline, resume_after, until)
        )
        if outcome == "parked":
            self.parked += 1
            log.info("nobody at table %s: deadline %s waits for its people", deadline.room,
                     deadline.slot)
        return outcome != "present"

    async def run(self) -> None:
        """Sweep until :meth:`stop` (or cancellation)."""
        failures = 0
        while not self._stopping.is_set():
            self._wake.clear()
            pause = self.settings.sweep_interval_seconds
            try:
                await self.sweep_once()
                failures = 0
            except asyncio.CancelledError:
                raise
            except StoreError:
                # A store that is down fails every sweep: its health logs the outage once;
                # back off up to 1 s so a dead store is not hammered.
                failures += 1
                pause = min(1.0, pause * 2 ** min(failures, 4))
            except Exception:
                failures += 1
                log.exception("sweep failed")
                pause = min(1.0, pause * 2 ** min(failures, 4))
            if self._stopping.is_set():
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), pause)

    def start(self) -> None:
        """Start :meth:`run` as a background task."""
        self._task = asyncio.create_task(self.run(), name="deadline-sweeper")

    async def stop(self) -> None:
        """Stop the background task (let the sweep in progress finish, up to 2 s).

        (Not a bare ``cancel()``: a cancellation that lands inside a Redis call can be
        swallowed by the client library, which would leave the task running.)
        """
        self._stopping.set()
        self._wake.set()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._task), 2.0)
            except (TimeoutError, asyncio.CancelledError):
                self._task.cancel()
            except Exception:
                log.exception("sweeper ended with an error")
            self._task = None
        for task in list(self._own_tasks):  # their claims' leases bring them back elsewhere
            task.cancel()
        if self._own_tasks:
            await asyncio.gather(*self._own_tasks, return_exceptions=True)

    async def _answer_timeout(self, deadline: Deadline) -> None:
        """The answer window ran out: apply ``answer_timeout`` if that same announcement is
        still waiting for answers (docs/rules.md §5.2)."""
        marker = deadline.payload.get("marker")

        def still_due(record: RoomRecord) -> bool:
            return marker is not None and answer_marker(record) == marker

        await self.service.apply_system(deadline.room, {"type": "answer_timeout"}, still_due)
