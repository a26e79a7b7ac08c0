"""The players' part of the OpenAPI document (issue 18; docs/protocol.md "Players"):
paths, named models and error responses, spliced into :mod:`protocol.openapi`."""

from __future__ import annotations

from typing import Any

from .http import (
    ClaimLinkBody,
    CreatePlayerBody,
    LinkCodeBody,
    PlayerBody,
    PlayerCreatedBody,
    PlayerExportBody,
    UpdatePlayerBody,
)

NAMED: dict[str, Any] = {
    "CreatePlayerBody": CreatePlayerBody,
    "UpdatePlayerBody": UpdatePlayerBody,
    "PlayerBody": PlayerBody,
    "PlayerCreatedBody": PlayerCreatedBody,
    "LinkCodeBody": LinkCodeBody,
    "ClaimLinkBody": ClaimLinkBody,
    "PlayerExportBody": PlayerExportBody,
}

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "BadPlayer": ("401", "No `Authorization: Player <id>.<secret>` header, not that format, "
                  "no such player, a wrong secret, or a deleted player (`bad_player`; the "
                  "answer carries `WWW-Authenticate: Player`); or a player a moderator "
                  "banned (`banned`).", ["bad_player", "banned"]),
    "BadPlayerBody": ("400", "The body is not a JSON object of the documented fields, or "
                      "a name that is not a display name or reads like one of the table's "
                      "own labels (docs/protocol.md, \"Seat names\"): nothing changed.",
                      ["bad_request", "bad_name"]),
    "BadCode": ("404", "No live code is that (never made, expired, used, or a wrong "
                "letter: `bad_code`), or the code had `link_code_tries` (5) wrong tries "
                "and is dead (`too_many_tries`). Every wrong try counts against the "
                "address's `code_tries_per_hour`.", ["bad_code", "too_many_tries"]),
    "BadCodeBody": ("400", "The body is not a JSON object with a `code` text: nothing was "
                    "tried.", ["bad_request"]),
    "TooManyPlayers": ("429", "This client address made `players_per_hour` (20) players in "
                       "the last hour: nothing was made. Retry after `Retry-After` seconds.",
                       ["too_many_players"]),
    "TooManyLinkCodes": ("429", "This player made `link_codes_per_hour` (10) codes in the "
                         "last hour: nothing was made.", ["too_many_link_codes"]),
    "TooManyCodeTries": ("429", "This client address entered `code_tries_per_hour` (30) "
                         "wrong codes in the last hour: the code was not tried.",
                         ["too_many_code_tries"]),
}

SECURITY = [{"player": []}]


def security_schemes() -> dict[str, Any]:
    """``components.securitySchemes``: the player credential."""
    return {"player": {
        "type": "apiKey", "in": "header", "name": "Authorization",
        "description": "`Player <id>.<secret>`: the id and a secret of the player, as "
        "`POST /api/players` (or `POST /api/players/link`) gave them.",
    }}


def paths(json: Any, errors: Any) -> dict[str, Any]:
    """The players' paths (``json(model, example)`` and ``errors(*names)`` are
    :mod:`protocol.openapi`'s helpers)."""
    made = {"id": "q3zq6v2fkm4xw7ra", "secret": "m2c4xq7zt5wq2ra6d3b7s4k5e2f6g7h3",
            "name": "Anna", "language": "da"}
    me = {"id": "q3zq6v2fkm4xw7ra", "name": "Anna", "language": "da", "private": False,
          "created_at": "2026-12-03T10:00:00+00:00"}
    return {
        "/api/players": {"post": {
            "operationId": "createPlayer", "tags": ["players"], "summary": "Make a player",
            "description": "A new player (no sign-up) and its first secret, shown this once: "
            "keep `{id, secret}` and present them as `Authorization: Player <id>.<secret>` "
            "or in `hello.player`.",
            "requestBody": {"required": False,
                            "content": json("CreatePlayerBody", {"name": "Anna",
                                                                 "language": "da"})},
            "responses": {
                "201": {"description": "The player and its secret.",
                        "content": json("PlayerCreatedBody", made)},
                **errors("BadPlayerBody", "OriginOrBanned", "TooLarge", "TooManyPlayers",
                         "Internal", "DatabaseDown"),
            },
        }},
        "/api/players/me": {
            "get": {
                "operationId": "getMe", "tags": ["players"], "summary": "The player",
                "security": SECURITY,
                "responses": {"200": {"description": "The player as it sees itself.",
                                      "content": json("PlayerBody", me)},
                              **errors("BadPlayer", "Internal", "DatabaseDown")},
            },
            "patch": {
                "operationId": "updateMe", "tags": ["players"],
                "summary": "Change name, language, private profile", "security": SECURITY,
                "requestBody": {"required": True,
                                "content": json("UpdatePlayerBody", {"private": True})},
                "responses": {"200": {"description": "The player afterwards.",
                                      "content": json("PlayerBody", me)},
                              **errors("BadPlayerBody", "BadPlayer", "TooLarge", "Internal",
                                       "DatabaseDown")},
            },
            "delete": {
                "operationId": "deleteMe", "tags": ["players"],
                "summary": "Delete the player", "security": SECURITY,
                "description": "The identity is gone: secret, name and language, every "
                "device's credential and code; the player's archived seats keep the id with "
                "no name (\"a deleted player\"). It cannot be undone.",
                "responses": {"204": {"description": "Deleted."},
                              **errors("BadPlayer", "Internal", "DatabaseDown")},
            },
        },
        "/api/players/me/export": {"get": {
            "operationId": "exportMe", "tags": ["players"],
            "summary": "Everything held about the player", "security": SECURITY,
            "responses": {"200": {"description": "The player's data (a download).",
                                  "content": json("PlayerExportBody")},
                          **errors("BadPlayer", "Internal", "DatabaseDown")},
        }},
        "/api/players/me/link": {"post": {
            "operationId": "makeLinkCode", "tags": ["players"],
            "summary": "A one-time code for another device", "security": SECURITY,
            "description": "8 letters (shown ABCD-EFGH) and the link `/link/<code>`: "
            "entered on another device (`POST /api/players/link`) within "
            "`link_code_ttl_seconds` (10 min), once, they give it this player.",
            "responses": {"201": {"description": "The code.", "content": json(
                "LinkCodeBody", {"code": "K7QM-4TZP",
                                 "url": "http://127.0.0.1:8000/link/K7QM-4TZP",
                                 "expires_at": "2026-12-03T10:10:00+00:00"})},
                          **errors("BadPlayer", "TooManyLinkCodes", "Internal",
                                   "DatabaseDown")},
        }},
        "/api/players/link": {"post": {
            "operationId": "claimLinkCode", "tags": ["players"],
            "summary": "Become the player of a one-time code",
            "description": "A new secret of the code's player for this device; the code "
            "is used up.",
            "requestBody": {"required": True,
                            "content": json("ClaimLinkBody", {"code": "K7QM-4TZP"})},
            "responses": {"200": {"description": "The player and this device's secret.",
                                  "content": json("PlayerCreatedBody", made)},
                          **errors("BadCode", "BadCodeBody", "OriginNotAllowed", "TooLarge",
                                   "TooManyCodeTries", "Internal", "DatabaseDown")},
        }},
    }
