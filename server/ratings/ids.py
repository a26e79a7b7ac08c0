"""The public id of a match (like ``server.archive.outbox.game_id`` for a game)."""

from __future__ import annotations

import base64
import hashlib


def match_id(room_id: str, room_created: float, match_number: int) -> str:
    """16 characters: base32 of SHA-256 of ``match|room|room creation|match number`` — the
    same in every process, known as soon as the match starts."""
    key = f"match|{room_id}|{room_created!r}|{int(match_number)}".encode()
    return base64.b32encode(hashlib.sha256(key).digest()).decode("ascii")[:16].lower()
