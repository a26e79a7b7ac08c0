"""The budget interface: what a budget is, the ticket a charge gives back, and the keys.

A :class:`Budget` is a token bucket per key: ``per_minute`` events a minute on average and
``burst`` at once (by default the whole minute's worth). :meth:`Budgets.take` checks and
charges one event in **one atomic step** and answers a :class:`Ticket`: taken (``wait`` 0)
or refused (``wait``: seconds until one would be). A caller that charges *before* it knows
whether the event counts — a ``join`` is a refused join only once the room has said no —
takes the ticket first and :meth:`Ticket.refund` s it when the event turns out not to count,
so concurrent requests can never all pass a check that none of them has paid for yet.

Keys are client addresses made coarse by :func:`address_key`: an IPv6 host usually holds a
whole /64, so a budget per exact IPv6 address would give it millions of budgets.
"""

from __future__ import annotations

import ipaddress
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """One budget: a token bucket per key.

    Attributes:
        name: names the budget in keys and logs (``rooms``, ``failed_joins``, ...); letters,
            digits and ``_``.
        per_minute: events a key may spend per minute on average (the refill rate); 0
            turns the budget off (every take passes).
        burst: events a key may spend at once (the bucket's size); None: ``per_minute``.
    """

    name: str
    per_minute: float
    burst: float | None = None

    @property
    def off(self) -> bool:
        """Whether the budget is turned off (``per_minute`` 0)."""
        return self.per_minute <= 0

    @property
    def capacity(self) -> float:
        """The bucket's size, in events."""
        return float(self.per_minute if self.burst is None else self.burst)

    @property
    def rate(self) -> float:
        """Refill, in events per second."""
        return self.per_minute / 60.0


class Ticket:
    """The answer of :meth:`Budgets.take`.

    Attributes:
        wait: 0.0 when the event was taken (and is now charged); otherwise the seconds
            until the key could spend one, and nothing was charged.
    """

    __slots__ = ("wait", "_refund")

    def __init__(self, wait: float, refund: Callable[[], Awaitable[None]] | None = None
                 ) -> None:
        self.wait = wait
        self._refund = refund if wait == 0.0 else None

    @property
    def taken(self) -> bool:
        """Whether the event was taken."""
        return self.wait == 0.0

    async def refund(self) -> None:
        """Give the event back (it did not count after all); at most once, and nothing for a
        refused ticket. Best effort: a store that cannot be reached keeps it charged."""
        refund, self._refund = self._refund, None
        if refund is not None:
            await refund()


TAKEN_FREE = Ticket(0.0)
"""The ticket of a budget that is off: taken, nothing to give back."""


class Budgets(ABC):
    """Where budgets are counted: this process (:class:`server.budgets.MemoryBudgets`) or
    every process on one Redis or Redis Cluster (:class:`server.budgets.RedisBudgets`)."""

    @abstractmethod
    async def take(self, budget: Budget, key: str) -> Ticket:
        """Check and charge one event of ``key``'s ``budget`` in one atomic step.

        Returns:
            A :class:`Ticket`: taken (``wait`` 0; refund it if the event turns out not to
            count), or refused (``wait`` > 0 seconds; nothing charged).

        Never raises for a store outage (an implementation on a store falls back to a
        budget of this process; see :class:`server.budgets.RedisBudgets`).
        """

    async def close(self) -> None:  # noqa: B027 - nothing to close by default
        """Release what the budgets hold (nothing by default)."""


def address_key(address: str, ipv6_prefix: int = 64) -> str:
    """The budget key of a client address: an IPv4 address as it is, an IPv6 address as
    its network of ``ipv6_prefix`` bits (``2001:db8:1:2::/64``), an IPv4-mapped IPv6
    address (``::ffff:203.0.113.7``) as its IPv4 address; anything else (``unknown``: a Unix
    socket) as it is.

    Args:
        address: the client address (``server.proxies``: an IP address or ``unknown``).
        ipv6_prefix: bits of an IPv6 address that name one client (1-128; the setting
            ``ipv6_prefix_length``, default 64: one home or host).
    """
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        if ipv6_prefix < 128:
            return str(ipaddress.IPv6Network(f"{ip}/{ipv6_prefix}", strict=False))
    return str(ip)
