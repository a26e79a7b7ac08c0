"""What the commit that ends a game records for the archive (docs/architecture.md, "The
archive").

The change that ends a game — ``game_over`` (finished) or ``game_abandoned`` — carries an
``archive`` deadline (key: the game number, due at once) whose payload holds what the
archive needs besides the game's log: the room's creation time, the game's number, versions,
start and end, options and room settings, the seats as they were at the end, and the game's
seed (docs/rules.md "The shuffle"; the cut's and the deals' seeds derive from it). The same
commit keeps the game's log entries in the room's outbox (``Commit.outbox``). Any process's
sweeper claims the deadline (``server.archive.worker``).
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import engine
from engine import rng
from engine.state import plain_copy

from ..store.base import Deadline, RoomRecord

ARCHIVE = "archive"
"""The deadline kind (``server.deadline_plan.ARCHIVE``)."""


def game_id(room_id: str, room_created: float, game_number: int) -> str:
    """The public id of an archived game: 16 characters (base32 of SHA-256 of its unique
    key ``room|room creation|game number``; about 80 bits), the same in every process, so
    it is known the moment the game ends, before it is archived."""
    key = f"{room_id}|{room_created!r}|{int(game_number)}".encode()
    return base64.b32encode(hashlib.sha256(key).digest()).decode("ascii")[:16].lower()


def seat_data(record: RoomRecord) -> list[dict[str, Any]]:
    """The seats of a room as the archive keeps them: seat, name, kind, computer level,
    whether a computer stood in (at the end), the player (None for a seat taken with no
    player), and whether the seat was abandoned during the game (a rated room's leaver:
    ``SeatRecord.abandoned``, docs/rules.md §9.3; the game is that seat's side's loss)::

        [{"seat": 0, "name": "Ann", "kind": "human", "level": None, "standin": False,
          "player": "abcdefghijklmnop", "abandoned": False}, ...]
    """
    return [
        {"seat": i, "name": s.name, "kind": s.kind, "level": s.level,
         "standin": s.standin, "player": s.player, "abandoned": s.abandoned}
        for i, s in enumerate(record.seats)
    ]


def archive_deadline(record: RoomRecord, state: engine.GameState, now: float) -> Deadline:
    """The ``archive`` deadline of the commit that ends the room's current game.

    Args:
        record: the room as that commit leaves it (``abandoned`` set for an abandonment).
        state: its game state.
        now: Unix time of the commit, seconds.

    The payload's ``match`` is the room's match as this game leaves it (a copy of
    ``state.match``, :class:`engine.shapes.Match`, this game scored into it when it
    finished), or None for a single game (best of 1).
    """
    number = state.game_number
    payload = {
        "game": number,
        "id": game_id(record.id, record.created, number),
        "status": "abandoned" if record.abandoned else "finished",
        "room_created": record.created,
        "first": record.game_from,
        "last": record.version,
        "started": record.game_started or record.created,
        "ended": now,
        "options": record.options,
        "settings": record.settings,
        "seats": seat_data(record),
        "game_seed": rng.game_seed(state.seed, number).hex(),
        "match": plain_copy(state.match),
    }
    return Deadline(record.id, ARCHIVE, now, str(number), payload)
