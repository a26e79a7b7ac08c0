"""One line per store outage, not a traceback per request.

Every call a store makes to its backend reports here: :meth:`StoreHealth.failed` with the
error, :meth:`StoreHealth.succeeded` after a call that worked. The first failure of an
outage logs one warning; the first success after it logs one line with the outage's length
and how many calls failed. The counters feed ``/metrics`` (``server.metrics``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

log = logging.getLogger("server.store")


class StoreHealth:
    """Outage bookkeeping of one store.

    Attributes:
        failures: backend calls that failed since the process started.
        outages: outages seen since the process started.
        down_since: ``time.monotonic()`` when the current outage began, or None.
    """

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.failures = 0
        self.outages = 0
        self.down_since: float | None = None
        self._outage_failures = 0
        self._clock = clock

    @property
    def down(self) -> bool:
        """Whether the last backend call failed."""
        return self.down_since is not None

    def failed(self, exc: BaseException) -> None:
        """A backend call failed with ``exc`` (logged only if it starts an outage)."""
        self.failures += 1
        self._outage_failures += 1
        if self.down_since is None:
            self.down_since = self._clock()
            self.outages += 1
            log.warning("%s store unavailable: %s: %s", self.name, type(exc).__name__, exc)

    def succeeded(self) -> None:
        """A backend call worked (ends the current outage, if any, with one log line)."""
        if self.down_since is not None:
            log.warning(
                "%s store back after %.1f s (%d calls failed meanwhile)",
                self.name, self._clock() - self.down_since, self._outage_failures,
            )
            self.down_since = None
            self._outage_failures = 0
