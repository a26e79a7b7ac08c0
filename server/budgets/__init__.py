"""Budgets per client address (docs/protocol.md "Limits"): token buckets charged in one
atomic step, counted in this process (:class:`MemoryBudgets`) or across every process of a
deployment on Redis or a Redis Cluster (:class:`RedisBudgets`), keyed by
:func:`address_key` (an IPv4 address, or an IPv6 client's /64)."""

from .base import Budget, Budgets, Ticket, address_key
from .memory import AddressQuota, MemoryBudgets
from .redis import RedisBudgets

__all__ = ["AddressQuota", "Budget", "Budgets", "MemoryBudgets", "RedisBudgets", "Ticket",
           "address_key"]
