"""Room stores: the :class:`RoomStore` interface, in-memory and Redis implementations."""

from .base import (
    Claim,
    Commit,
    CommitResult,
    Deadline,
    RoomRecord,
    RoomStore,
    SeatRecord,
)

__all__ = [
    "Claim",
    "Commit",
    "CommitResult",
    "Deadline",
    "RoomRecord",
    "RoomStore",
    "SeatRecord",
]
