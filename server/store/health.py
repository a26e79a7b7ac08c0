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


class ShardHealth(StoreHealth):
    """Outage bookkeeping of a store spread over several Redis nodes (Redis Cluster).

    A node that fails starts an outage of its own (one warning naming it) and ends it at
    the first call to it that works (one line). The store counts as down while any node
    is; ``failures`` and ``outages`` add up over nodes (an outage here is a period in which
    some node was down). Calls to the other nodes do not end a node's outage, so a shard
    that is failing over does not make the log flap.
    """

    def __init__(self, name: str, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(name, clock)
        self.down_nodes: dict[str, tuple[float, int]] = {}
        """Node name -> (when its outage began, calls failed since)."""

    UNKNOWN_LOG_SECONDS = 5.0
    """Least time between two log lines about failures of calls whose node is unknown."""

    def failed(self, exc: BaseException, node: str | None = None) -> None:  # type: ignore[override]
        """A call to ``node`` failed with ``exc``. A failure whose node is not known (a
        pipelined read the client library does not name a node for) is counted and logged
        at most every :data:`UNKNOWN_LOG_SECONDS`, but starts no outage: the writes, whose
        node is always known, do."""
        self.failures += 1
        if node is None:
            now = self._clock()
            if now - getattr(self, "_unknown_logged", -1e9) >= self.UNKNOWN_LOG_SECONDS:
                self._unknown_logged = now
                log.warning("%s call failed: %s: %s", self.name, type(exc).__name__, exc)
            return
        since, count = self.down_nodes.get(node, (self._clock(), 0))
        if count == 0:
            log.warning("%s node %s unavailable: %s: %s", self.name, node,
                        type(exc).__name__, exc)
        self.down_nodes[node] = (since, count + 1)
        if self.down_since is None:
            self.down_since = since
            self.outages += 1

    def succeeded(self, node: str | None = None) -> None:  # type: ignore[override]
        """A call to ``node`` worked (None: a call whose node is not known; ends nothing)."""
        if node is None or node not in self.down_nodes:
            return
        since, count = self.down_nodes.pop(node)
        log.warning("%s node %s back after %.1f s (%d calls failed meanwhile)",
                    self.name, node, self._clock() - since, count)
        if not self.down_nodes:
            self.down_since = None

    def forget(self, nodes: set[str]) -> None:
        """Drop the outages of nodes that no longer serve any slot (a failed master whose
        replica took over): the store is not down on their account."""
        for node in set(self.down_nodes) - nodes:
            since, count = self.down_nodes.pop(node)
            log.warning("%s node %s no longer serves slots (replaced after %.1f s, %d calls "
                        "failed)", self.name, node, self._clock() - since, count)
        if not self.down_nodes:
            self.down_since = None
