"""The blocks' part of the OpenAPI document (issue 20; docs/protocol.md "Challenges, blocks
and online now"): paths, named models and error responses, spliced into
:mod:`protocol.openapi`."""

from __future__ import annotations

from typing import Any

from .http import BlockBody, BlocksBody, MuteBody, MutesBody

NAMED: dict[str, Any] = {"BlocksBody": BlocksBody, "BlockBody": BlockBody,
                         "MutesBody": MutesBody, "MuteBody": MuteBody}

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "BadBlock": ("400", "A player cannot block themself: nothing changed.", ["bad_block"]),
    "TooManyBlocks": ("409", "The player blocked `max_blocks` (500) players already: "
                      "nothing changed; unblock some first.", ["too_many_blocks"]),
    "BadMute": ("400", "A player cannot mute themself: nothing changed.", ["bad_mute"]),
    "TooManyMutes": ("409", "The player muted `max_mutes` (500) players already: "
                     "nothing changed; unmute some first.", ["too_many_mutes"]),
}

SECURITY = [{"player": []}]

TARGET = {
    "name": "player", "in": "path", "required": True,
    "description": "The other player's id (16 lowercase letters and digits 2-7).",
    "schema": {"type": "string"}, "example": "b7kq2m4xw5zt3ra6",
}


def paths(json: Any, errors: Any) -> dict[str, Any]:
    """The blocks' paths (``json(model, example)`` and ``errors(*names)`` are
    :mod:`protocol.openapi`'s helpers)."""
    return {
        "/api/players/me/blocks": {"get": {
            "operationId": "listBlocks", "tags": ["players"],
            "summary": "The players this player blocked", "security": SECURITY,
            "responses": {"200": {"description": "Newest first.", "content": json(
                "BlocksBody", {"blocks": [{"player": "b7kq2m4xw5zt3ra6", "name": "Bo",
                                           "blocked_at": "2026-12-03T10:00:00+00:00"}]})},
                          **errors("BadPlayer", "Internal", "DatabaseDown")},
        }},
        "/api/players/me/blocks/{player}": {
            "put": {
                "operationId": "blockPlayer", "tags": ["players"],
                "summary": "Block a player", "security": SECURITY, "parameters": [TARGET],
                "description": "They cannot challenge this player (nor be challenged by "
                "them), are never matched with them and cannot sit at a table where they "
                "sit. Pending challenges between the two are declined. Idempotent.",
                "responses": {"200": {"description": "Blocked.", "content": json(
                    "BlockBody", {"player": "b7kq2m4xw5zt3ra6", "blocked": True})},
                              **errors("BadBlock", "BadPlayer", "PlayerNotFound",
                                       "TooManyBlocks", "Internal", "DatabaseDown")},
            },
            "delete": {
                "operationId": "unblockPlayer", "tags": ["players"],
                "summary": "Unblock a player", "security": SECURITY, "parameters": [TARGET],
                "responses": {"204": {"description": "Not blocked (also when it was not)."},
                              **errors("BadPlayer", "Internal", "DatabaseDown")},
            },
        },
        "/api/players/me/mutes": {"get": {
            "operationId": "listMutes", "tags": ["players"],
            "summary": "The players this player muted at the table", "security": SECURITY,
            "responses": {"200": {"description": "Newest first.", "content": json(
                "MutesBody", {"mutes": [{"player": "b7kq2m4xw5zt3ra6", "name": "Bo",
                                         "muted_at": "2026-12-03T10:00:00+00:00"}]})},
                          **errors("BadPlayer", "Internal", "DatabaseDown")},
        }},
        "/api/players/me/mutes/{player}": {
            "put": {
                "operationId": "mutePlayer", "tags": ["players"],
                "summary": "Mute a player", "security": SECURITY, "parameters": [TARGET],
                "description": "Their table talk is no longer delivered to this player "
                "(docs/protocol.md \"Chat\"); they are not told. Idempotent.",
                "responses": {"200": {"description": "Muted.", "content": json(
                    "MuteBody", {"player": "b7kq2m4xw5zt3ra6", "muted": True})},
                              **errors("BadMute", "BadPlayer", "PlayerNotFound",
                                       "TooManyMutes", "Internal", "DatabaseDown")},
            },
            "delete": {
                "operationId": "unmutePlayer", "tags": ["players"],
                "summary": "Hear a muted player again", "security": SECURITY,
                "parameters": [TARGET],
                "responses": {"204": {"description": "Not muted (also when it was not)."},
                              **errors("BadPlayer", "Internal", "DatabaseDown")},
            },
        },
    }
