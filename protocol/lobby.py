"""The lobby's HTTP model (issue 20; ``server.lobby.http``; docs/protocol.md "Public tables
and the lobby") and its part of the OpenAPI document (:func:`paths`).

* ``GET /api/lobby`` answers :class:`LobbyBody`: the entries a ``lobby`` frame lists
  (``protocol.messages.LobbyTable``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from .messages import LobbyTable


class LobbyBody(BaseModel):
    """``GET /api/lobby``: the public tables waiting for players that pass the filters,
    newest first, at most 200 (the same entries as the WebSocket's ``lobby`` frame)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    tables: list[LobbyTable]


NAMED: dict[str, Any] = {"LobbyBody": LobbyBody}
"""The lobby's schemas in ``components.schemas``."""

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "BadLobbyFilter": ("400", "A filter that is not one of `players=2|3|4`, "
                       "`partnerships=true|false`, `language=en|da|sv`, `rated=true|false` "
                       "(each at most once): nothing was read.", ["bad_lobby_filter"]),
    "TooManyLobbyReads": (
        "429",
        "This client address read the lobby more often in the last minute than the server "
        "allows (`lobby_reads_per_minute`, 120 by default): nothing was read. Retry after "
        "the seconds in the `Retry-After` header (`error.retry_after` has them unrounded), "
        "or follow the lobby over the WebSocket (`lobby_subscribe`).",
        ["too_many_lobby_reads"],
    ),
}
"""The lobby's error responses: name -> (status, description, codes)."""


def _filter(name: str, description: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema}


def paths(json: Any, errors: Any) -> dict[str, Any]:
    """The lobby's paths of the OpenAPI document (``json(model)`` and ``errors(*names)``
    from :mod:`protocol.openapi`)."""
    boolean = {"type": "string", "enum": ["true", "false"]}
    return {
        "/api/lobby": {
            "get": {
                "operationId": "getLobby",
                "tags": ["rooms"],
                "summary": "The public tables waiting for players",
                "description": (
                    "Every public table (room setting `public`) that waits for players "
                    "and has a seat free: its options, settings, language and seats (free, "
                    "or who sits there, with their rating at the table's kind). Take a "
                    "seat with the ordinary `join` over `/ws`. To follow the list live, "
                    "send `lobby_subscribe` over `/ws` instead of asking again and again."
                ),
                "parameters": [
                    _filter("players", "Tables of this many players.",
                            {"type": "string", "enum": ["2", "3", "4"]}),
                    _filter("partnerships", "Four in partnerships (true) or not (false).",
                            boolean),
                    _filter("language", "Tables of this language.",
                            {"type": "string", "enum": ["en", "da", "sv"]}),
                    _filter("rated", "Rated tables (true) or unrated ones (false).", boolean),
                ],
                "responses": {
                    "200": {"description": "The tables.", "content": json("LobbyBody")},
                    **errors("BadLobbyFilter", "TooManyLobbyReads", "Internal", "StoreDown"),
                },
            }
        },
    }
