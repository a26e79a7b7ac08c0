"""The garbage collector, tuned for a server that holds many long-lived rooms.

CPython's cyclic collector promotes objects that survive young collections and, every so
often, walks *all* of them in a full pass. A server with hundreds of rooms holds hundreds
of thousands of container objects — each room's record, game state and views, which live
for a whole game and hold no reference cycles — so every full pass stopped the event loop
for hundreds of milliseconds, and a young pass over what piled up between passes for tens
(docs/performance.md, "Where the tail came from").

:class:`GcPolicy` moves what survives young collections out of the collector's sight:
after each collection of the middle generation it schedules ``gc.freeze()`` on the event
loop, so the middle and old generations never grow large and every pass stays short.
Frozen objects are still freed by reference counting, as usual; only a reference cycle
that dies after being frozen waits — for the complete pass that :meth:`GcPolicy.full_pass`
makes every ``gc_full_pass_seconds`` (unfreeze, collect everything, freeze again).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from typing import Any


class GcPolicy:
    """Freezes the survivors of young collections; runs the rare complete pass.

    Args:
        loop: the event loop the freeze is scheduled on.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.freezes = 0
        """Freezes done since start."""
        self.full_passes = 0
        """Complete passes done since start."""
        self._pending = False

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        # Runs inside the collector: only schedule (the freeze runs once it has finished).
        if phase == "stop" and info.get("generation", 0) >= 1 and not self._pending:
            self._pending = True
            self.loop.call_soon(self._freeze)

    def _freeze(self) -> None:
        self._pending = False
        gc.freeze()
        self.freezes += 1

    def start(self) -> None:
        """Freeze what exists now (modules, models, start-up state) and from now on the
        survivors of every middle-generation collection."""
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._on_gc)

    def full_pass(self) -> None:
        """The rare complete pass: unfreeze, collect every generation, freeze again."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.full_passes += 1

    def stop(self) -> None:
        """Stop freezing (what is frozen stays frozen)."""
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._on_gc)
