"""Moderation (issue 21 point 4; docs/operations.md "Moderation").

* :mod:`.store` — reports, sanctions and the audit log in SQL;
* :mod:`.sanctions` — each process's cache of the silences and bans in force, refreshed
  every ``moderation_refresh_seconds``, and the closing of banned players' connections;
* :mod:`.http` — the moderators' API behind ``admin_token``.

:class:`Moderation` holds them for one process (``services.moderation``).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .sanctions import Sanctions
from .store import ModerationStore, ReportLimited

__all__ = ["Moderation", "ModerationStore", "ReportLimited", "Sanctions"]


class Moderation:
    """One process's moderation.

    Args:
        store: the SQL side.
        sanctions: the cache of sanctions in force.
        chat: the process's ``ChatService`` (hiding a message).
        rooms: the process's ``RoomService`` (closing a room through the write path).
    """

    def __init__(self, store: ModerationStore, sanctions: Sanctions, chat: Any,
                 rooms: Any) -> None:
        self.store = store
        self.sanctions = sanctions
        self.chat = chat
        self.rooms = rooms
        self.actions: Counter[str] = Counter()
        """Moderator actions taken through this process, by kind (``/metrics``)."""
