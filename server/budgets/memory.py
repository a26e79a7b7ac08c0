"""Budgets counted in this process: a token bucket per key in a dict.

Each operation runs without an ``await`` in between, so a check and its charge are one step
for the event loop: no two requests can pass on the same last token.
"""

from __future__ import annotations

import time

from .base import TAKEN_FREE, Budget, Budgets, Ticket


class AddressQuota:
    """A token bucket per client address: ``per_minute`` events a minute, ``burst`` (all of
    them, by default) at once. Buckets that have refilled are dropped (at most once a
    minute), so memory follows the addresses active in the last minute.

    Args:
        per_minute: the budget; 0 means no limit (every check passes).
        burst: events at once; None: ``per_minute``.
    """

    def __init__(self, per_minute: float, burst: float | None = None) -> None:
        self.capacity = float(per_minute if burst is None else burst)
        self.rate = per_minute / 60.0
        self.buckets: dict[str, list[float]] = {}
        self._pruned = time.monotonic()

    def _tokens(self, address: str, now: float) -> list[float]:
        if now - self._pruned > 60.0:
            self._prune(now)
        bucket = self.buckets.get(address)
        if bucket is None:
            bucket = self.buckets[address] = [self.capacity, now]
        else:
            bucket[0] = min(self.capacity, bucket[0] + (now - bucket[1]) * self.rate)
            bucket[1] = now
        return bucket

    def _prune(self, now: float) -> None:
        self._pruned = now
        full = [a for a, (tokens, stamp) in self.buckets.items()
                if tokens + (now - stamp) * self.rate >= self.capacity]
        for address in full:
            del self.buckets[address]

    def wait(self, address: str, now: float | None = None) -> float:
        """Seconds until ``address`` may spend one event (0.0: now), spending nothing."""
        if not self.rate:
            return 0.0
        tokens = self._tokens(address, time.monotonic() if now is None else now)[0]
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def spend(self, address: str, now: float | None = None) -> float:
        """Check and spend one event of ``address``'s budget (one step).

        Returns:
            0.0 if it was within budget (and is now spent); else the seconds until it
            would be, and nothing is spent.
        """
        if not self.rate:
            return 0.0
        bucket = self._tokens(address, time.monotonic() if now is None else now)
        if bucket[0] >= 1.0:
            bucket[0] -= 1.0
            return 0.0
        return (1.0 - bucket[0]) / self.rate

    def refund(self, address: str, now: float | None = None) -> None:
        """Give back one event spent with :meth:`spend` (the budget goes no higher than
        full)."""
        if not self.rate:
            return
        bucket = self._tokens(address, time.monotonic() if now is None else now)
        bucket[0] = min(self.capacity, bucket[0] + 1.0)

    def charge(self, address: str, now: float | None = None) -> None:
        """Spend one event of ``address``'s budget even if none is left (the budget goes no
        lower than empty)."""
        if not self.rate:
            return
        bucket = self._tokens(address, time.monotonic() if now is None else now)
        bucket[0] = max(0.0, bucket[0] - 1.0)


class MemoryBudgets(Budgets):
    """Budgets of this process only: one :class:`AddressQuota` per budget.

    The in-memory store's budgets, the fallback of :class:`server.budgets.RedisBudgets`
    while Redis cannot be reached, and the home of budgets that guard this process rather
    than the store (new WebSocket connections per minute).
    """

    def __init__(self) -> None:
        self.quotas: dict[Budget, AddressQuota] = {}

    def quota(self, budget: Budget) -> AddressQuota:
        """The buckets of ``budget`` (made on first use)."""
        quota = self.quotas.get(budget)
        if quota is None:
            quota = self.quotas[budget] = AddressQuota(budget.per_minute, budget.burst)
        return quota

    def take_now(self, budget: Budget, key: str) -> Ticket:
        """:meth:`take` without an ``await``: for callers that must not yield."""
        if budget.off:
            return TAKEN_FREE
        quota = self.quota(budget)
        wait = quota.spend(key)
        if wait:
            return Ticket(wait)

        async def refund() -> None:
            quota.refund(key)

        return Ticket(0.0, refund)

    async def take(self, budget: Budget, key: str) -> Ticket:
        """See :meth:`Budgets.take`."""
        return self.take_now(budget, key)
