"""What the lobby says of a room: :func:`entry_of` (pure), and the filters.

An entry (``protocol.messages.LobbyTable`` as plain data)::

    {"room": "Ab3dE5gH7j", "url": "/r/Ab3dE5gH7j",
     "options": {"players": 2, "partnerships": false, "target": 121, "muggins": false,
                 "lowball": false, "backup10": false},
     "rated": false, "match": 1, "language": "da", "table_kind": "2",
     "seats": [{"seat": 0, "kind": "human", "name": "Ann", "player": "abcdefghijklmnop",
                "rating": 1512, "level": null},
               {"seat": 1, "kind": "open", "name": null, "player": null, "rating": null,
                "level": null}],
     "seats_free": 1, "version": 1, "created": 1764680000.0}
"""

from __future__ import annotations

from typing import Any

from ..store.base import RoomRecord

FILTERS = ("players", "partnerships", "language", "rated")
"""The filters a follower or ``GET /api/lobby`` may give (each keeps the entries whose
field of that name equals it; ``players`` and ``partnerships`` are the options')."""

MAX_TABLES = 200
"""Most entries a ``lobby`` frame or ``GET /api/lobby`` lists (the newest)."""


def table_kind(options: dict[str, Any]) -> str:
    """``2``, ``3``, ``4`` or ``2x2`` (four in partnerships): the kind ratings are kept
    for (``server.archive.rows.table_kind``)."""
    players = int(options.get("players", 2))
    return "2x2" if players == 4 and options.get("partnerships") else str(players)


def listed(record: RoomRecord, settings: dict[str, Any]) -> bool:
    """Whether the room belongs in the lobby: public, no game yet, a seat free.

    Args:
        settings: the room's effective settings (``RoomService.room_settings``)."""
    return (bool(settings.get("public")) and record.status == "waiting"
            and not record.abandoned and not record.closed
            and any(not s.taken for s in record.seats))


def concerns(record: RoomRecord, settings: dict[str, Any], events: list[dict]) -> bool:
    """Whether a commit of this room may change the lobby: a public room that is waiting,
    or the change that started its game (the one that takes it out). Every other commit
    (private rooms; the moves of a public room's game) costs the lobby nothing."""
    if not settings.get("public"):
        return False
    return record.status == "waiting" or any(e.get("type") == "game_start" for e in events)


def players_of(record: RoomRecord) -> list[str]:
    """The player ids of the room's human seats."""
    return [s.player for s in record.seats if s.kind == "human" and s.player]


def entry_of(record: RoomRecord, settings: dict[str, Any],
             ratings: dict[str, int] | None = None,
             private: set[str] | None = None) -> dict[str, Any] | None:
    """The room's lobby entry, or None when it is not listed (:func:`listed`).

    Args:
        settings: the room's effective settings.
        ratings: player id -> the rating shown at the room's table kind (players without
            one are left out: their ``rating`` is null).
        private: player ids of the seated players whose profile is private: listed by
            name only (``player`` and ``rating`` null), so the lobby does not tell who is
            at a table now."""
    if not listed(record, settings):
        return None
    ratings = ratings or {}
    hidden = private or set()
    seats = []
    for i, s in enumerate(record.seats):
        shown = s.player if s.player and s.player not in hidden else None
        seats.append({
            "seat": i, "kind": s.kind, "name": s.name, "player": shown,
            "rating": ratings.get(shown) if shown else None,
            "level": s.level if s.kind == "computer" else None,
        })
    options = dict(record.options)
    return {
        "room": record.id, "url": f"/r/{record.id}", "options": options,
        "rated": bool(settings.get("rated")), "match": int(settings.get("match", 1)),
        "language": settings.get("language", "en"), "table_kind": table_kind(options),
        "seats": seats, "seats_free": sum(1 for s in record.seats if not s.taken),
        "version": record.version, "created": record.created,
    }


def matches(entry: dict[str, Any], filters: dict[str, Any]) -> bool:
    """Whether ``entry`` passes every filter given (None: no filter of that name)."""
    for name, wanted in filters.items():
        if wanted is None:
            continue
        if name in ("players", "partnerships"):
            have = entry["options"].get(name, 2 if name == "players" else False)
        else:
            have = entry.get(name)
        if have != wanted:
            return False
    return True


def ordered(entries: list[dict[str, Any]], filters: dict[str, Any] | None = None
            ) -> list[dict[str, Any]]:
    """The entries that pass ``filters``, newest first (then by room id), at most
    :data:`MAX_TABLES`."""
    kept = [e for e in entries if matches(e, filters or {})]
    kept.sort(key=lambda e: (-float(e["created"]), e["room"]))
    return kept[:MAX_TABLES]
