"""Who a request is: the player of ``Authorization: Player <id>.<secret>``.

The format (docs/protocol.md, "Players"): the scheme ``Player`` (any case), one space, the
player's id (16 of ``[a-z2-7]``), a dot, the secret (32 of ``[a-z2-7]``), e.g.
``Authorization: Player abcdefghijklmnop.abcdefghijklmnopqrstuvwxyz234567``. The same
``<id>.<secret>`` pair is ``hello.player`` on the WebSocket (as ``{"id", "secret"}``).

Where the store is: every process's :class:`server.players.store.PlayerStore` is
``services.players`` (``request.state.services.players``, built by the app's lifespan);
:func:`player_store` reads it.

Errors are :class:`ApiError` (a starlette ``HTTPException`` with a stable code); the app
answers them as ``{"error": {"code", "message"}}`` with their status (``server.app``
registers :func:`api_error_response`).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, Response

from ..web.body import CLOSE, BodyTooLarge
from .store import Player, PlayerStore

log = logging.getLogger(__name__)

AUTH_PATTERN = re.compile(r"^player ([a-z2-7]{16})\.([a-z2-7]{32})$", re.IGNORECASE)
"""The ``Authorization`` header's value (the scheme's case does not matter; id and secret
are lower case)."""


class ApiError(HTTPException):
    """An HTTP error with a stable code (``protocol.codes``).

    Args:
        status: the HTTP status.
        code: the error code (``bad_player``, ``database_unavailable``...).
        message: for people.
        headers: extra headers (``WWW-Authenticate``, ``Retry-After``).
        extra: more fields of the error object (``retry_after``).
    """

    def __init__(self, status: int, code: str, message: str,
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(status_code=status, detail=message, headers=headers)
        self.code = code
        self.message = message
        self.extra = extra


def bad_player(message: str = "no such player, or a wrong secret") -> ApiError:
    """The 401 of a missing or wrong player credential (``bad_player``)."""
    return ApiError(401, "bad_player", message, {"WWW-Authenticate": "Player"})


def too_large(error: BodyTooLarge) -> ApiError:
    """The 413 of a body over ``max_body_bytes`` (``too_large``); the connection is closed
    after it (``server.web.body.CLOSE``)."""
    return ApiError(413, "too_large", str(error), dict(CLOSE))


def database_unavailable() -> ApiError:
    """The 503 of a database that cannot be reached (``database_unavailable``)."""
    return ApiError(503, "database_unavailable", "the database cannot be reached; try again")


async def api_error_response(request: Request, exc: Exception) -> Response:
    """The app's handler of :class:`ApiError`: ``{"error": {"code", "message", ...}}``."""
    assert isinstance(exc, ApiError)
    body = {"code": exc.code, "message": exc.message, **exc.extra}
    return JSONResponse({"error": body}, status_code=exc.status_code, headers=exc.headers)


def player_store(conn: HTTPConnection) -> PlayerStore:
    """The process's player store (``request.state.services.players``).

    Raises:
        ApiError: 503 ``database_unavailable`` when the process has none.
    """
    store = getattr(conn.state.services, "players", None)
    if store is None:
        raise database_unavailable()
    return store


def parse_credential(value: str | None) -> tuple[str, str] | None:
    """``Player <id>.<secret>`` -> ``(id, secret)``, or None when it is not that."""
    match = AUTH_PATTERN.match((value or "").strip())
    if match is None:
        return None
    return match.group(1), match.group(2)


async def player_from_request(request: HTTPConnection) -> Player:
    """The player the request's ``Authorization: Player <id>.<secret>`` names.

    Raises:
        ApiError: 401 ``bad_player`` (no header, not that format, no such player, a
            deleted one, or a wrong secret), 401 ``banned`` (a moderator banned the
            player), 503 ``database_unavailable``.
    """
    credential = parse_credential(request.headers.get("authorization"))
    if credential is None:
        raise bad_player("send Authorization: Player <id>.<secret>")
    store = player_store(request)
    try:
        player = await store.authenticate(*credential)
    except Exception as exc:
        log.warning("player authentication failed: %s", exc)
        raise database_unavailable() from exc
    if player is None:
        raise bad_player()
    moderation = getattr(request.state.services, "moderation", None)
    if moderation is not None and moderation.sanctions.player_banned(player.id):
        raise ApiError(401, "banned", "a moderator banned this player")
    return player


async def optional_player(request: HTTPConnection) -> Player | None:
    """Like :func:`player_from_request`, but None when there is no ``Authorization``
    header at all (a wrong one is still 401 ``bad_player``)."""
    if not request.headers.get("authorization"):
        return None
    return await player_from_request(request)
