"""The lobby index: the entries of the public tables waiting for players, shared by every
server process of a deployment (docs/architecture.md "The lobby").

Per room it keeps the entry (``server.lobby.entry``), the last room version written for
it (so writes made out of order — two processes committing versions 3 and 4 of one room
and writing the index after their commits, 4 first — never put an older picture back: a
write of a version not newer than the last is dropped) and an expiry (the room's own:
an entry, and the version kept for it, go when the room would). Every change that alters
the entries adds one to the index's *version*, a number readers poll to learn cheaply
whether anything changed.

:class:`LobbyIndex` is the interface; :class:`MemoryLobbyIndex` keeps it in this process
(the memory store's deployment of one process); ``server.lobby.redis_index`` in Redis.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

Clock = Callable[[], float]
"""Unix time in seconds."""


class LobbyIndex(ABC):
    """The lobby's entries (see the module docstring). Every method is a coroutine and
    raises ``server.store.base.StoreUnavailable`` when the backend cannot be reached."""

    @abstractmethod
    async def put(self, room_id: str, version: int, entry: dict[str, Any] | None,
                  expires_at: float) -> bool:
        """Write what the room's ``version`` says: its entry, or (``entry`` None) that it
        is not listed — unless a version at least as new was written already.

        Args:
            expires_at: Unix seconds at which the room (and so what is kept for it)
                expires.

        Returns:
            Whether it was written (False: an older or equal version; nothing done).
        """

    @abstractmethod
    async def read(self, known: int | None = None) -> tuple[int, list[dict[str, Any]] | None]:
        """The index's version and, unless it is ``known``, every entry (in no order).
        Entries of expired rooms are dropped first (a change of the version).

        Returns:
            ``(version, entries)``; ``entries`` None when the version is ``known``."""

    async def close(self) -> None:  # noqa: B027 (optional: most indexes hold nothing)
        """Release what the index holds (nothing by default)."""


class MemoryLobbyIndex(LobbyIndex):
    """The index in this process's memory.

    Args:
        clock: Unix time (expiry)."""

    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._entries: dict[str, dict[str, Any]] = {}
        self._seen: dict[str, int] = {}
        self._expiry: dict[str, float] = {}
        self.version = 0

    async def put(self, room_id: str, version: int, entry: dict[str, Any] | None,
                  expires_at: float) -> bool:
        """See :meth:`LobbyIndex.put`."""
        self._prune()
        if version <= self._seen.get(room_id, -1):
            return False
        self._seen[room_id] = version
        self._expiry[room_id] = expires_at
        if entry is None:
            if self._entries.pop(room_id, None) is not None:
                self.version += 1
        else:
            self._entries[room_id] = entry
            self.version += 1
        return True

    async def read(self, known: int | None = None) -> tuple[int, list[dict[str, Any]] | None]:
        """See :meth:`LobbyIndex.read`."""
        self._prune()
        if known == self.version:
            return self.version, None
        return self.version, list(self._entries.values())

    def _prune(self) -> None:
        now = self.clock()
        for room_id in [r for r, t in self._expiry.items() if t <= now]:
            del self._expiry[room_id]
            self._seen.pop(room_id, None)
            if self._entries.pop(room_id, None) is not None:
                self.version += 1
