"""The garbage collector, tuned for a server that holds many long-lived rooms.

What was wrong (docs/performance.md, "Where the tail came from"): CPython's cyclic
collector walks every container object in a full pass, and a server with hundreds of rooms
holds hundreds of thousands of them — each room's record, game state and views, which live
for a whole game — so full passes stopped the event loop for hundreds of milliseconds.
Freezing those objects (``gc.freeze``) keeps full passes away, but young passes then grew
long too: CPython starts a young pass when *allocations minus deallocations* pass a
threshold, and a server that replaces each room's objects with new ones at every action
frees about as many objects as it makes, so the young generation filled with tens of
thousands of live objects between passes (tens of milliseconds each).

So :class:`GcPolicy` runs the collector on a clock instead of on allocation counts: the
automatic collector is off; every ``gc_young_interval_seconds`` (50 ms) it collects the
young generations — what was made in those 50 ms, a few milliseconds of work at most — and
freezes the survivors, out of every later pass's sight. Frozen objects are still freed by
reference counting, as usual; only a reference cycle that dies after being frozen waits,
for the complete pass made every ``gc_full_pass_seconds`` (unfreeze, collect everything,
freeze again; counted in ``/metrics``).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc

_active = 0
"""Policies running in this process (the collector is switched back on when none is)."""


class GcPolicy:
    """Young collections on a clock, survivors frozen; the rare complete pass.

    Args:
        interval: seconds between young collections.
    """

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.young_passes = 0
        """Young collections done since start."""
        self.full_passes = 0
        """Complete passes done since start."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Collect and freeze what exists now (modules, models, start-up state), switch
        the automatic collector off and start the clock."""
        global _active
        gc.collect()
        gc.freeze()
        gc.disable()
        _active += 1
        self._task = asyncio.create_task(self._run(), name="gc-policy")

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.young_pass()

    def young_pass(self) -> None:
        """Collect the young generations, then freeze what survived."""
        gc.collect(1)
        gc.freeze()
        self.young_passes += 1

    def full_pass(self) -> None:
        """The rare complete pass: unfreeze, collect every generation, freeze again."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.full_passes += 1

    async def stop(self) -> None:
        """Stop the clock; the automatic collector is back when no policy runs."""
        global _active
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
            _active -= 1
            if _active == 0:
                gc.enable()
