"""OpenAPI 3.1 document of the HTTP API, generated from the models in :mod:`protocol.http`.

``python -m protocol.openapi`` rewrites ``docs/openapi.json``; ``python -m protocol.openapi
--check`` exits 1 when that file is out of date (a test does the same check and validates
the file with an OpenAPI 3.1 validator, ``@readme/openapi-parser``). The server serves the
same document at ``GET /openapi.json``.

Routes: ``POST /api/rooms``, ``GET /api/rooms/{room}``, ``GET /api/games/{game}``, the
players' routes (:mod:`protocol.openapi_players`: ``/api/players``, ``/api/players/me...``,
``/api/players/link``), ``GET /api/players/{player}``, ``GET /api/players/{player}/games``,
the ratings' routes (:mod:`protocol.ratings`: ``/api/leaderboards/{kind}``,
``/api/players/{player}/ratings``), ``GET /api/lobby`` (:mod:`protocol.lobby`), the passkey
routes (:mod:`protocol.passkeys`:
``/api/players/me/passkeys...``, ``/api/passkeys/options``, ``/api/passkeys/signin``),
``GET /healthz``, ``GET /readyz``, ``GET /metrics`` and ``GET /openapi.json``. The
WebSocket protocol on ``/ws`` is described by ``docs/asyncapi.json``
(:mod:`protocol.asyncapi`); the web client's pages (``/``, ``/r/{room}``, ``/p/{player}``,
``/leaderboard``, ``/replay/{game}``, ``/link/{code}``, ``/static/*``) are not
an API and are left out.

The schemas are the JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) pydantic writes for
the models, under ``components.schemas``; the request body of ``POST /api/rooms`` is the
``create_room`` message's schema without its ``type``.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

from . import lobby, moderation, openapi_players, openapi_social, ratings
from .codes import HttpErrorCode
from .generated import write_or_check
from .http import (
    PLAYER_ID_PATTERN,
    ArchivedGameBody,
    Health,
    HttpError,
    PlayerGamesPage,
    PlayerProfile,
    Readiness,
    RoomCreatedBody,
    RoomSummary,
)
from .messages import PROTOCOL_VERSION, ROOM_ID_PATTERN, CreateRoom
from .passkeys import ERRORS as PASSKEY_ERRORS
from .passkeys import NAMED as PASSKEY_NAMED
from .passkeys import passkey_paths
from .schema import named_schemas, reference_shared

OPENAPI_PATH = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"
"""Where the generated document lives in the repository."""

OPENAPI_VERSION = "3.1.0"
API_VERSION = "0.1.0"
"""The HTTP API's version (the package's)."""

REF = "#/components/schemas/{model}"

METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format (``server.metrics.CONTENT_TYPE``)."""

NAMED: dict[str, Any] = {
    "CreateRoom": CreateRoom,
    "RoomCreatedBody": RoomCreatedBody,
    "RoomSummary": RoomSummary,
    "ArchivedGameBody": ArchivedGameBody,
    "PlayerProfile": PlayerProfile,
    "PlayerGamesPage": PlayerGamesPage,
    "HttpError": HttpError,
    "HttpErrorCode": HttpErrorCode,
    "Health": Health,
    "Readiness": Readiness,
    **openapi_players.NAMED,
    **openapi_social.NAMED,
    **moderation.NAMED,
    **PASSKEY_NAMED,
    **ratings.NAMED,
    **lobby.NAMED,
}

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "BadOptions": ("400", "The body is not valid: not a JSON object, unknown fields, bad options, "
                   "room settings or computer seats; or a rated room (`room.rated`) with "
                   "options other than the standard game to 121 (`rated_options`) or a turn "
                   "clock outside 30–120 s (`rated_turn_clock`).",
                   ["bad_options", "rated_options", "rated_turn_clock"]),
    "TooLarge": ("413", "The body is longer than `max_body_bytes` (16 KiB by default; "
                 "`CRIBBAGE_MAX_BODY_BYTES`), refused by its `Content-Length` before it is "
                 "read (a chunked body is read only up to the limit).", ["too_large"]),
    "OriginNotAllowed": ("403", "The request comes from a web page whose `Origin` the server "
                         "does not allow (`allowed_origins`; by default the server's own "
                         "origin and loopback). A request without `Origin` (not a browser) "
                         "is allowed.", ["origin_not_allowed"]),
    "RequestIdReused": ("409", "The body's `request_id` already created a room with other "
                        "options, computers or room settings: nothing was created (send "
                        "the same request again, or choose a new id for another room).",
                        ["request_id_reused"]),
    "RoomNotFound": ("404", "No such room (or it expired after 24 h idle).", ["room_not_found"]),
    "StoreDown": (
        "503",
        "The room store (Redis) could not be reached: nothing changed "
        "(`store_unavailable`), or it stopped answering in the middle of a write, which may "
        "or may not have been made (`outcome_unknown`). Retry later.",
        ["store_unavailable", "outcome_unknown"],
    ),
    "Internal": ("500", "A server fault (logged); nothing changed.", ["internal"]),
    "GameNotFound": ("404", "No archived game has that id (a game is archived a moment "
                     "after it ends; later while the database is down).", ["game_not_found"]),
    "DatabaseDown": ("503", "The database of archived games could not be reached. Retry "
                     "later.", ["database_unavailable"]),
    "TooManyRooms": (
        "429",
        "This client address created more rooms in the last minute than the server allows "
        "(`rooms_per_minute`, 30 by default; rooms with only computer seats count too): "
        "nothing was created. Retry after the seconds in the `Retry-After` header "
        "(`error.retry_after` has them unrounded).",
        ["too_many_rooms"],
    ),
    "TooManyRoomReads": (
        "429",
        "This client address read more room summaries in the last minute than the server "
        "allows (`room_reads_per_minute`, 120 by default): nothing was read. Retry after "
        "the seconds in the `Retry-After` header (`error.retry_after` has them unrounded).",
        ["too_many_room_reads"],
    ),
    "TooManyGameReads": (
        "429",
        "This client address read more archived games in the last minute than the server "
        "allows (`game_reads_per_minute`, 60 by default; found or not, every request "
        "counts): nothing was read. Retry after the seconds in the `Retry-After` header "
        "(`error.retry_after` has them unrounded).",
        ["too_many_game_reads"],
    ),
    **PASSKEY_ERRORS,
    "PlayerNotFound": ("404", "No player has that id.", ["player_not_found"]),
    "PlayerDeleted": ("410", "The player deleted themself: their profile and history are "
                      "gone (their seats in other players' games show as a deleted player).",
                      ["player_deleted"]),
    "ProfilePrivate": ("403", "The player made their profile private: only a request with "
                       "their own `Authorization: Player ...` reads it.", ["profile_private"]),
    "BadPageRequest": ("400", "`limit` is not a whole number from 1 to "
                       "`history_max_page_size` (50 by default), or `cursor` is not one a "
                       "page gave.", ["bad_page_request"]),
    "TooManyHistoryReads": (
        "429",
        "This client address read more profiles and pages of games in the last minute than "
        "the server allows (`history_reads_per_minute`, 60 by default; found or not, every "
        "request counts): nothing was read. Retry after the seconds in the `Retry-After` "
        "header (`error.retry_after` has them unrounded).",
        ["too_many_history_reads"],
    ),
}
"""Error responses: name -> (status, description, the codes it may carry)."""
ERRORS.update(openapi_players.ERRORS)
ERRORS.update(openapi_social.ERRORS)
ERRORS.update(moderation.ERRORS)
ERRORS.update(ratings.ERRORS)
ERRORS.update(lobby.ERRORS)

EXAMPLE_OPTIONS = {"players": 2, "partnerships": False, "target": 121, "muggins": False,
                   "lowball": False, "backup10": False}
EXAMPLE_SETTINGS = {"hints": True, "answer_window": 15.0, "takeover_grace": 60.0,
                    "turn_seconds": None, "match": 1}


def component_schemas() -> dict[str, Any]:
    """``components.schemas``: the HTTP bodies and all they use, by name."""
    defs = reference_shared(named_schemas(NAMED, REF), ["HttpErrorCode"], REF)
    message = defs.pop("CreateRoom")
    body = copy.deepcopy(message)
    del body["properties"]["type"]
    body["required"] = [r for r in body.get("required", []) if r != "type"]
    if not body["required"]:
        del body["required"]
    body["title"] = "CreateRoomBody"
    body["description"] = (
        "The `create_room` message of the WebSocket protocol without its `type`: every "
        "field optional (defaults: 2 players, to 121, no variants, no computers, the "
        "server's room settings). `computers` maps a seat (as text) to a computer level; "
        "`room` holds the room settings. A field left out takes its default; null is not "
        "a value of any of them (`400 bad_options`; `create_room` over the WebSocket "
        "refuses it too). Muggins with Lowball is played without Muggins (the answer's "
        "`options` say so)."
    )
    defs["CreateRoomBody"] = body
    return dict(sorted(defs.items()))


def _json(ref: str, example: Any = None) -> dict[str, Any]:
    media: dict[str, Any] = {"schema": {"$ref": REF.format(model=ref)}}
    if example is not None:
        media["example"] = example
    return {"application/json": media}


def _error_response(name: str) -> dict[str, Any]:
    status, description, codes = ERRORS[name]
    codes_text = ", ".join(f"`{c}`" for c in codes)
    example: dict[str, Any] = {"code": codes[0], "message": "…"}
    response: dict[str, Any] = {"description": f"{description} `error.code`: {codes_text}."}
    if status == "429":
        example["retry_after"] = 1.5
        response["headers"] = {
            "Retry-After": {
                "description": "Seconds until a request may succeed (whole, rounded up).",
                "schema": {"type": "integer", "minimum": 1},
            }
        }
    response["content"] = _json("HttpError", {"error": example})
    return response


def _errors(*names: str) -> dict[str, Any]:
    return {ERRORS[n][0]: {"$ref": f"#/components/responses/{n}"} for n in names}


_PLAYER: dict[str, Any] = {
    "name": "player",
    "in": "path",
    "required": True,
    "description": "The player's public id (an id of another shape is simply not found).",
    "schema": {"type": "string", "pattern": PLAYER_ID_PATTERN},
}


def build_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document as plain data (see the module docstring)."""
    created_example = {
        "room": "k3JfQ9xa2B", "url": "http://127.0.0.1:8000/r/k3JfQ9xa2B",
        "options": EXAMPLE_OPTIONS, "creator_token": "b8y1Yk9mE7dUu3wZ0cQx2g",
        "room_settings": EXAMPLE_SETTINGS, "computers": {"1": "standard"},
    }
    paths = {
        "/api/rooms": {
            "post": {
                "operationId": "createRoom",
                "tags": ["rooms"],
                "summary": "Create a room",
                "description": (
                    "Creates a room (nobody sits down; join it over `/ws`). Computer players "
                    "named in `computers` sit at once; when they fill every seat the game "
                    "starts at once. The answer's `creator_token` proves the creator "
                    "(`set_computer` over `/ws`). With a `request_id`, the same request sent "
                    "again (after a 503 `outcome_unknown`, a lost answer, to any server "
                    "process, or as `create_room` over `/ws`) answers 201 with the same room "
                    "and creator token instead of making another."
                ),
                "requestBody": {
                    "required": False,
                    "description": "Empty, or a JSON object (at most `max_body_bytes`, 16 KiB "
                    "by default).",
                    "content": _json("CreateRoomBody", {
                        "options": {"players": 2, "target": 61},
                        "computers": {"1": "standard"},
                        "room": {"hints": True, "answer_window": 15, "takeover_grace": 60},
                    }),
                },
                "responses": {
                    "201": {
                        "description": "The room: its id, share link, effective options and "
                        "settings, the creator token and the computers seated.",
                        "content": _json("RoomCreatedBody", created_example),
                    },
                    **_errors("BadOptions", "OriginNotAllowed", "TooLarge",
                              "RequestIdReused", "TooManyRooms", "Internal", "StoreDown"),
                },
            }
        },
        "/api/rooms/{room}": {
            "get": {
                "operationId": "getRoom",
                "tags": ["rooms"],
                "summary": "A room's public summary",
                "description": "The public facts of a room: options, settings, status, "
                "version, seats (with presence) and times (Unix seconds).",
                "parameters": [{
                    "name": "room",
                    "in": "path",
                    "required": True,
                    "description": "The room id (an id of another shape is simply not found).",
                    "schema": {"type": "string", "pattern": ROOM_ID_PATTERN},
                    "example": "k3JfQ9xa2B",
                }],
                "responses": {
                    "200": {"description": "The room's summary.",
                            "content": _json("RoomSummary")},
                    **_errors("RoomNotFound", "TooManyRoomReads", "Internal", "StoreDown"),
                },
            }
        },
        "/api/games/{game}": {
            "get": {
                "operationId": "getArchivedGame",
                "tags": ["archive"],
                "summary": "An archived game, as a replay",
                "description": (
                    "A finished or abandoned game from the archive, in the replay file shape "
                    "the web client's `/replay` page reads (`format` `cribbage-replay`), its "
                    "versions redacted as for a spectator, with the game's seeds and every "
                    "deal's seed, commitment and hands, to check the shuffles "
                    "(docs/rules.md \"The shuffle\")."
                ),
                "parameters": [{
                    "name": "game",
                    "in": "path",
                    "required": True,
                    "description": "The game id (16 lowercase letters and digits 2-7).",
                    "schema": {"type": "string", "pattern": "^[a-z2-7]{16}$"},
                    "example": "q3zq6v2fkm4xw7ra",
                }],
                "responses": {
                    "200": {"description": "The archived game.",
                            "content": _json("ArchivedGameBody")},
                    **_errors("GameNotFound", "TooManyGameReads", "Internal", "DatabaseDown"),
                },
            }
        },
        **openapi_players.paths(_json, _errors),
        **openapi_social.paths(_json, _errors),
        **moderation.paths(_json, _errors),
        **passkey_paths(_json, _errors, ("BadPlayer",)),
        "/api/players/{player}": {
            "get": {
                "operationId": "getPlayerProfile",
                "tags": ["players"],
                "summary": "A player's profile and statistics",
                "description": (
                    "The player's name and statistics, every figure computed from the "
                    "archived events of their finished games: games played and won by table "
                    "kind, variant and target; skunks given and taken; points per deal as "
                    "dealer and as pone by source; average hand and crib; Back-up 10 moves; "
                    "Muggins points taken and lost; winning streaks. A private profile "
                    "answers only its player (`Authorization: Player ...`)."
                ),
                "parameters": [_PLAYER],
                "responses": {
                    "200": {"description": "The profile.", "content": _json("PlayerProfile")},
                    **_errors("BadPlayer", "PlayerNotFound", "PlayerDeleted",
                              "ProfilePrivate", "TooManyHistoryReads", "Internal",
                              "DatabaseDown"),
                },
            }
        },
        "/api/players/{player}/games": {
            "get": {
                "operationId": "getPlayerGames",
                "tags": ["players"],
                "summary": "A player's games, newest first",
                "description": (
                    "A page of the player's archived games, newest first: each with its "
                    "seats (partner and opponents, names or computer levels; a deleted "
                    "player shows as `deleted`), the result, the scores, table kind, target, "
                    "variants, the end and the game id (`GET /api/games/{game}`, the page "
                    "`/replay/{game}`). Follow `next` as `cursor` for older games."
                ),
                "parameters": [
                    _PLAYER,
                    {"name": "limit", "in": "query", "required": False,
                     "description": "Games on the page: 1 to `history_max_page_size` (50 by "
                     "default); without it `history_page_size` (20).",
                     "schema": {"type": "integer", "minimum": 1, "maximum": 50}},
                    {"name": "cursor", "in": "query", "required": False,
                     "description": "The `next` of the previous page.",
                     "schema": {"type": "string", "maxLength": 64}},
                ],
                "responses": {
                    "200": {"description": "The page.", "content": _json("PlayerGamesPage")},
                    **_errors("BadPageRequest", "BadPlayer", "PlayerNotFound", "PlayerDeleted",
                              "ProfilePrivate", "TooManyHistoryReads", "Internal",
                              "DatabaseDown"),
                },
            }
        },
        **ratings.paths(_json, _errors, _PLAYER),
        **lobby.paths(_json, _errors),
        "/healthz": {
            "get": {
                "operationId": "getHealth",
                "tags": ["operations"],
                "summary": "Liveness",
                "description": "The process is up; asks nothing of the store.",
                "responses": {"200": {"description": "Up.",
                                      "content": _json("Health", {"ok": True})}},
            }
        },
        "/readyz": {
            "get": {
                "operationId": "getReadiness",
                "tags": ["operations"],
                "summary": "Readiness",
                "description": "Whether the room store answers a PING within half a second.",
                "responses": {
                    "200": {"description": "The store answers.",
                            "content": _json("Readiness", {"ok": True, "store": "redis"})},
                    "503": {"description": "The store does not answer.",
                            "content": _json("Readiness", {"ok": False, "store": "redis"})},
                },
            }
        },
        "/metrics": {
            "get": {
                "operationId": "getMetrics",
                "tags": ["operations"],
                "summary": "Prometheus metrics",
                "description": "This process's metrics in the Prometheus text format "
                "(connections, rooms, actions by outcome and reject code, round trips, "
                "conflicts, store errors, deadlines, …; docs/performance.md).",
                "responses": {
                    "200": {
                        "description": "The metrics.",
                        "content": {METRICS_CONTENT_TYPE: {"schema": {"type": "string"}}},
                    }
                },
            }
        },
        "/openapi.json": {
            "get": {
                "operationId": "getOpenApi",
                "tags": ["operations"],
                "summary": "This document",
                "responses": {
                    "200": {
                        "description": "The OpenAPI document of the HTTP API.",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    }
                },
            }
        },
    }
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "cribbage-server HTTP API",
            "version": API_VERSION,
            "summary": "Create rooms, read a room's summary, health, readiness and metrics.",
            "description": (
                "Generated by `python -m protocol.openapi` from the pydantic models in "
                "`protocol/http.py` and `protocol/messages.py`; do not edit. The game itself "
                f"is played over the WebSocket `/ws` (`{PROTOCOL_VERSION}`: "
                "`docs/asyncapi.json`, `docs/protocol.md`). Every error answers "
                "`{\"error\": {\"code\", \"message\"}}`: `code` is stable (`HttpErrorCode`), "
                "`message` is for people."
            ),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [
            {"url": "/", "description": "The server serving this document."},
            {"url": "http://localhost:8000", "description": "`python -m server` (default)."},
        ],
        "tags": [
            {"name": "rooms", "description": "Rooms (the game is played over `/ws`)."},
            {"name": "archive", "description": "Finished and abandoned games, kept."},
            {"name": "players", "description": "Players: an identity without sign-up, "
             "on every device (docs/protocol.md, \"Players\")."},
            {"name": "passkeys", "description": "Passkeys (WebAuthn) that bring a player "
             "back where the browser forgot it."},
            {"name": "ratings", "description": "Ratings per table kind and leaderboards "
             "(docs/protocol.md, \"Ratings and leaderboards\")."},
            {"name": "operations", "description": "Health, readiness, metrics."},
            {"name": "moderation", "description": "The moderators' API, behind "
             "`admin_token` (docs/operations.md, \"Moderation\")."},
        ],
        "paths": paths,
        "components": {
            "schemas": component_schemas(),
            "securitySchemes": {**openapi_players.security_schemes(),
                                "admin": moderation.SCHEME},
            "responses": {name: _error_response(name) for name in ERRORS},
        },
    }


@cache
def document() -> dict[str, Any]:
    """:func:`build_document`, built once per process (``GET /openapi.json``; do not
    mutate)."""
    return build_document()


def render() -> str:
    """The document file's exact text."""
    return json.dumps(build_document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: write the document, or with ``--check`` compare it. Returns exit code."""
    return write_or_check(argv, __doc__.splitlines()[0], OPENAPI_PATH, render, "protocol.openapi")


if __name__ == "__main__":
    raise SystemExit(main())
