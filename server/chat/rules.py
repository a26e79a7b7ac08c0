"""Who hears whom at a table (docs/protocol.md, "Chat"); pure functions.

A chat entry, as the room store keeps it (``RoomStore.chat_post``)::

    {"id": 7, "at": 1764700000000, "name": "Ada", "seat": 0 | None,
     "player": "<id>" | None, "by": "<id>", "audience": "table" | "spectators",
     "preset": "good_game" | None, "text": str | None, "game": 1}

``by`` is the author's player id, kept for mutes, reports and moderators and never sent to
readers; ``player`` is the same id when the author's profile is public, else None.
"""

from __future__ import annotations

from typing import Any, Literal

Audience = Literal["table", "spectators"]

HIDDEN_FIELDS = ("by",)
"""Fields of a stored entry that readers never get."""


def audience(seated: bool, status: str) -> Audience:
    """Who hears a message: everyone (``table``) for a seated player, or for anyone while no
    game is on (``status`` ``waiting`` or ``game_over``); the spectators only for a
    spectator while a game is on (``playing``): no kibitzing."""
    if seated or status != "playing":
        return "table"
    return "spectators"


def reads(entry: dict[str, Any], seated: bool, hearing_off: set[str] | frozenset[str],
          me: str | None) -> bool:
    """Whether a reader gets ``entry``.

    Args:
        entry: a stored chat entry.
        seated: the reader sits at the table (or their player does, on another connection).
        hearing_off: the players whose messages the reader does not get (muted, or blocked
            either way).
        me: the reader's player id (their own messages always reach them).
    """
    if seated and entry.get("audience") != "table":
        return False
    author = entry.get("by")
    return author is None or author == me or author not in hearing_off


def public(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as readers get it (``protocol.messages.ChatMessage``): without ``by``."""
    return {k: v for k, v in entry.items() if k not in HIDDEN_FIELDS}


def seated_players(record: Any) -> frozenset[str]:
    """The players holding a human seat of a room (``RoomRecord``); empty for None."""
    if record is None:
        return frozenset()
    return frozenset(s.player for s in record.seats if s.kind == "human" and s.player)


def context(entries: list[dict[str, Any]], message_id: int, before: int = 10,
            after: int = 5) -> list[dict[str, Any]]:
    """The messages around ``message_id`` (up to ``before`` earlier and ``after`` later,
    the message itself included) for a report; ``[]`` if it is not among ``entries``."""
    ids = [e.get("id") for e in entries]
    if message_id not in ids:
        return []
    i = ids.index(message_id)
    return entries[max(0, i - before): i + after + 1]
