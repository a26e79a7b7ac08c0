"""Admission control: refuse a client's action early when the process is past its capacity.

One process does about a thousand actions a second on one core (docs/performance.md).
Offered more, it falls behind in one of two ways, and :class:`ActionGate` watches both:

* **Too many actions in flight** (Redis). Every action in flight shares the event loop with
  all the others: each one's store round trips wait behind everybody's callbacks, it waits
  past ``redis_pool_timeout`` for a pooled connection or past ``redis_timeout_seconds`` for
  its answer to be read, fails as ``store_unavailable`` / ``outcome_unknown``, and is sent
  again — the retries halved what the process got done (at 2,000 paced rooms: 446 actions/s,
  against 918 with longer timeouts), while the event loop was never much late. So at most
  ``max_inflight_actions`` client actions run at once; the others wait their turn in order
  (at most ``max_waiting_actions`` of them; one more is refused at once), and one that has
  waited ``action_queue_seconds`` is refused.
* **An event loop that runs late** (the in-memory store). Its actions never wait on
  anything, so none is ever in flight for long; the backlog is in the loop's own queue
  instead, and a 50 ms probe timer woke more than a second late at 2,000 paced rooms. So
  when the probe wakes later than ``overload_lag_seconds``, new client actions are refused
  for the next ``action_queue_seconds``.

A refused action is answered ``reject busy`` with ``retry_after`` (``action_queue_seconds``);
nothing of it was applied, and the client sends it again with the same ``action_id``. A
refusal costs a few tens of microseconds against about a millisecond for an action, so what
is admitted runs at full speed and is answered quickly.

Only actions that clients send pass the gate: deadlines (the turn clock, computer seats,
takeovers) are the server's own work and always run, so every game still moves on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections import Counter

#: Seconds between the loop probe's wake-ups.
PROBE_PERIOD_SECONDS = 0.05


class ActionGate:
    """At most ``max_inflight`` client actions at once, the rest queued for ``max_wait``;
    none while the event loop runs later than ``max_lag``.

    Args:
        max_inflight: actions that may be in flight at once (0: no bound).
        max_wait: seconds an action may wait for its turn before it is refused; also how
            long a late probe keeps new actions refused, and the ``retry_after`` of a
            refusal.
        max_waiting: actions that may wait at once; one more is refused without waiting
            (a queue that is always full would make every admitted action wait
            ``max_wait``).
        max_lag: seconds; a probe timer that wakes later than this shuts the gate for
            ``max_wait`` (0: the loop is not watched).

    Use::

        if not await gate.enter():
            ...  # refused: answer busy, retry_after=gate.max_wait
        try:
            ...  # the action
        finally:
            gate.leave()

    ``refused`` counts refusals by reason: ``waited`` (``max_wait`` in the queue),
    ``queue_full`` (``max_waiting`` already waiting), ``loop_late`` (the probe).
    """

    __slots__ = ("max_inflight", "max_wait", "max_waiting", "max_lag", "inflight",
                 "refused", "queued_total", "shut_until", "lag", "_waiters", "_waiting",
                 "_task")

    def __init__(self, max_inflight: int, max_wait: float, max_waiting: int = 256,
                 max_lag: float = 0.0) -> None:
        self.max_inflight = max_inflight
        self.max_wait = max_wait
        self.max_waiting = max_waiting
        self.max_lag = max_lag
        self.inflight = 0
        self.refused: Counter[str] = Counter()
        self.queued_total = 0
        self.shut_until = 0.0
        self.lag = 0.0
        self._waiters: collections.deque[asyncio.Future[bool]] = collections.deque()
        self._waiting = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def enabled(self) -> bool:
        """Whether the gate can refuse anything."""
        return self.max_inflight > 0 or self.max_lag > 0

    @property
    def waiting(self) -> int:
        """Actions waiting for their turn now."""
        return self._waiting

    # -- the loop probe ----------------------------------------------------------------------
    def observe(self, lateness: float, now: float) -> None:
        """Record one probe that woke ``lateness`` seconds late at ``now``
        (``time.monotonic()``): later than ``max_lag`` shuts the gate for ``max_wait``."""
        self.lag = lateness
        if self.max_lag > 0 and lateness > self.max_lag:
            self.shut_until = now + self.max_wait

    async def _probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            started = loop.time()
            await asyncio.sleep(PROBE_PERIOD_SECONDS)
            late = loop.time() - started - PROBE_PERIOD_SECONDS
            self.observe(late if late > 0 else 0.0, time.monotonic())

    def start(self) -> None:
        """Start the loop probe (nothing when ``max_lag`` is 0)."""
        if self.max_lag > 0 and self._task is None:
            self._task = asyncio.create_task(self._probe(), name="overload-probe")

    async def stop(self) -> None:
        """Stop the loop probe."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    # -- turns -------------------------------------------------------------------------------
    async def enter(self) -> bool:
        """Wait for a turn: True once the action may run (call :meth:`leave` after it),
        False if it is refused (nothing to leave): the loop is late, ``max_waiting``
        actions are waiting already, or it waited ``max_wait`` seconds without a turn.

        Raises:
            asyncio.CancelledError: the caller was cancelled while waiting (no turn held).
        """
        if self.shut_until and time.monotonic() < self.shut_until:
            self.refused["loop_late"] += 1
            return False
        if self.max_inflight <= 0 or (self.inflight < self.max_inflight
                                      and not self._waiting):
            self.inflight += 1
            return True
        if self._waiting >= self.max_waiting:
            self.refused["queue_full"] += 1
            return False
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[bool] = loop.create_future()
        self._waiters.append(fut)
        self._waiting += 1
        self.queued_total += 1
        timer = loop.call_later(self.max_wait, self._expire, fut)
        try:
            admitted = await fut
        except asyncio.CancelledError:
            if fut.cancelled() or not fut.done():
                self._waiting -= 1  # still queued: leave() will skip it
                fut.cancel()
            elif fut.result():
                self.leave()  # handed a turn in the same instant: pass it on
            raise
        finally:
            timer.cancel()
        if not admitted:
            self.refused["waited"] += 1
        return admitted

    def _expire(self, fut: asyncio.Future[bool]) -> None:
        if not fut.done():
            self._waiting -= 1
            fut.set_result(False)

    def leave(self) -> None:
        """End an admitted action's turn: hand it to the longest-waiting action."""
        while self._waiters:
            fut = self._waiters.popleft()
            if not fut.done():
                self._waiting -= 1
                fut.set_result(True)  # the turn passes on; inflight is unchanged
                return
        self.inflight -= 1
