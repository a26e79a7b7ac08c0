"""Budgets counted across every server process on one Redis or a Redis Cluster.

One key per budget and client key, ``<prefix>budget:{<budget>:<key>}``: a hash of the
bucket's tokens and the time they were counted (``server/lua/budget.lua``, one ``EVALSHA``
that checks and charges in one atomic step on Redis's clock). The hash tag is the whole
``<budget>:<key>``, so on a Redis Cluster every bucket is one key in one slot and the buckets
spread over the shards; a full bucket has no key (it expires as it refills), so Redis holds
one small hash per address active in the last minute or so.

**When Redis cannot be reached** the budgets fall back to this process's own
(:class:`server.budgets.MemoryBudgets`, the same budget per process) for
:data:`RETRY_SECONDS` after each failure, then try Redis again. An outage is thus neither a
hole (every process still holds each address to the budget, so n processes to n times it)
nor a wall (nobody is refused for the outage itself; what the store cannot do fails on its
own with ``store_unavailable``). One line is logged when it starts and one when it ends.
"""

from __future__ import annotations

import asyncio
import logging
import time
from importlib import resources
from typing import Any

from redis.commands.core import AsyncScript

from .base import TAKEN_FREE, Budget, Budgets, Ticket
from .memory import MemoryBudgets

log = logging.getLogger(__name__)

RETRY_SECONDS = 1.0
"""After Redis failed a budget's call, this process counts on its own for this long."""

FAILURES = (TimeoutError, OSError, RuntimeError, AttributeError, asyncio.TimeoutError)
"""What a Redis call raises when Redis is down (with any ``redis.exceptions.RedisError``:
AttributeError and RuntimeError are what a connection closed under a call raises)."""


def _script() -> str:
    return resources.files("server").joinpath("lua", "budget.lua").read_text(encoding="utf-8")


class RedisBudgets(Budgets):
    """Budgets shared by every process on one Redis (``redis.asyncio.Redis``) or a Redis
    Cluster (``redis.asyncio.cluster.RedisCluster``): see the module docstring.

    Args:
        redis: the process's client (``decode_responses=True``, short timeouts, no retries:
            :func:`server.app.redis_client`).
        prefix: the ``key_prefix`` setting.
        fallback: the budgets used while Redis cannot be reached (default: new ones).
    """

    def __init__(self, redis: Any, prefix: str = "",
                 fallback: MemoryBudgets | None = None) -> None:
        from redis.exceptions import RedisError

        self.redis = redis
        self.prefix = prefix
        self.fallback = fallback or MemoryBudgets()
        self._script = AsyncScript(redis, _script())
        self._errors = (RedisError, *FAILURES)
        self._down_until = 0.0
        self.down = False
        """Whether the last call to Redis failed (the fallback counts meanwhile)."""
        self.fallbacks = 0
        """Takes counted by the fallback because Redis could not be reached."""

    def key(self, budget: Budget, key: str) -> str:
        """The Redis key of ``key``'s bucket of ``budget``."""
        return f"{self.prefix}budget:{{{budget.name}:{key}}}"

    async def _call(self, budget: Budget, key: str, cost: int) -> float:
        """Run ``budget.lua``; the wait it answers (0.0: done).

        Raises:
            the Redis client's errors (see :data:`FAILURES`).
        """
        answer = await self._script(
            keys=[self.key(budget, key)],
            args=[repr(budget.capacity), repr(budget.rate), cost],
        )
        return float(answer)

    def _failed(self, exc: BaseException) -> None:
        self._down_until = time.monotonic() + RETRY_SECONDS
        if not self.down:
            self.down = True
            log.warning("budgets: Redis cannot be reached (%s); each process counts its own "
                        "until it answers", exc)

    def _succeeded(self) -> None:
        if self.down:
            self.down = False
            log.warning("budgets: Redis answers again; budgets are shared again")

    async def take(self, budget: Budget, key: str) -> Ticket:
        """See :meth:`Budgets.take`: on Redis, or (while Redis cannot be reached) on this
        process's fallback budgets."""
        if budget.off:
            return TAKEN_FREE
        if self._down_until > time.monotonic():
            self.fallbacks += 1
            return self.fallback.take_now(budget, key)
        try:
            wait = await self._call(budget, key, 1)
        except self._errors as exc:
            self._failed(exc)
            self.fallbacks += 1
            return self.fallback.take_now(budget, key)
        self._succeeded()
        if wait:
            return Ticket(wait)

        async def refund() -> None:
            try:
                await self._call(budget, key, -1)
            except self._errors as exc:  # best effort: the event stays charged
                self._failed(exc)

        return Ticket(0.0, refund)
