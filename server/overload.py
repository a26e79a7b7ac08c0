"""Admission control: a bound on the client actions one process works on at once.

One process does about a thousand actions a second on one core (docs/performance.md).
Offered more, every action in flight shares the event loop with all the others: each one's
store round trips wait behind everybody's callbacks, it waits past ``redis_pool_timeout``
for a pooled connection or past ``redis_timeout_seconds`` for its answer to be read, fails
as ``store_unavailable`` / ``outcome_unknown``, and is sent again — the retries halved what
the process got done (measured at 2,000 paced rooms: 446 actions/s against 918 with longer
timeouts, and the event loop was never more than a few tens of milliseconds late, so how
late the loop runs does not show this; how many actions are in flight does).

:class:`ActionGate` lets at most ``max_inflight_actions`` client actions run at once; the
others wait their turn in order (at most ``max_waiting_actions`` of them; one more is
refused at once), and one that has waited ``action_queue_seconds`` is refused with
``reject busy`` and a ``retry_after`` (nothing applied; the client sends it
again with the same ``action_id``). What is admitted runs at full speed and is answered
quickly; a refusal costs a few tens of microseconds against about a millisecond for an
action.

Only actions that clients send pass the gate: deadlines (the turn clock, computer seats,
takeovers) are the server's own work and always run, so every game still moves on.
"""

from __future__ import annotations

import asyncio
import collections


class ActionGate:
    """At most ``max_inflight`` client actions at once; the rest queue for ``max_wait``.

    Args:
        max_inflight: actions that may be in flight at once (0: no gate, all admitted).
        max_wait: seconds an action may wait for its turn before it is refused.
        max_waiting: actions that may wait at once; one more is refused without waiting
            (a queue that is always full would make every admitted action wait
            ``max_wait``).

    Use::

        if not await gate.enter():
            ...  # refused: answer busy, retry_after=gate.max_wait
        try:
            ...  # the action
        finally:
            gate.leave()
    """

    __slots__ = ("max_inflight", "max_wait", "max_waiting", "inflight", "refused",
                 "queued_total", "_waiters", "_waiting")

    def __init__(self, max_inflight: int, max_wait: float, max_waiting: int = 256) -> None:
        self.max_inflight = max_inflight
        self.max_wait = max_wait
        self.max_waiting = max_waiting
        self.inflight = 0
        self.refused = 0
        self.queued_total = 0
        self._waiters: collections.deque[asyncio.Future[bool]] = collections.deque()
        self._waiting = 0

    @property
    def enabled(self) -> bool:
        """Whether the gate bounds anything (``max_inflight > 0``)."""
        return self.max_inflight > 0

    @property
    def waiting(self) -> int:
        """Actions waiting for their turn now."""
        return self._waiting

    async def enter(self) -> bool:
        """Wait for a turn: True once the action may run (call :meth:`leave` after it),
        False if it waited ``max_wait`` seconds without one, or if ``max_waiting`` actions
        are waiting already (refuse it; nothing to leave).

        Raises:
            asyncio.CancelledError: the caller was cancelled while waiting (no turn held).
        """
        if self.inflight < self.max_inflight and not self._waiting:
            self.inflight += 1
            return True
        if self._waiting >= self.max_waiting:
            self.refused += 1
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
            self.refused += 1
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
