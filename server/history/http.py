"""The history's HTTP routes (``ROUTES``, spliced into ``server.app``): docs/protocol.md
"HTTP" and "Limits".

* ``GET /api/players/{player}``: the profile (``protocol.http.PlayerProfile``);
* ``GET /api/players/{player}/games?limit=&cursor=``: a page of the player's games, newest
  first (``protocol.http.PlayerGamesPage``);
* ``GET /p/{player}`` and ``GET /replay/{game}``: the web client's pages.

Errors: ``404 player_not_found`` (no such player); ``410 player_deleted`` (the player
deleted themself: the profile is gone for everyone); ``403 profile_private`` (the player
made it private, and the request is not theirs: ``Authorization: Player ...``, checked by
``server.players.auth``; a wrong credential there is ``401 bad_player``) — private rather
than "not found": player ids are random, so telling that one exists gives nothing away, and
the page can say why;
``400 bad_page_request`` (``limit`` not 1..``history_max_page_size``, a cursor that is not
one); ``429 too_many_history_reads`` (``history_reads_per_minute`` per address, every
request counts, found or not); ``503 database_unavailable``.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from sqlalchemy import select
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.http import PLAYER_ID_PATTERN

from ..archive.grader import player_accuracy
from ..database.schema import players
from ..limits import charge_address_read
from ..players.auth import ApiError, optional_player
from .games import player_games
from .stats import player_statistics

log = logging.getLogger(__name__)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


async def _viewer(request: Request) -> str | None:
    """The id of the player the request authenticates (``Authorization: Player ...``), or
    None without the header.

    Raises:
        server.players.auth.ApiError: 401 ``bad_player`` for a wrong credential, 503.
    """
    player = await optional_player(request)
    return player.id if player is not None else None


async def _charge(request: Request) -> Response | None:
    """Charge one history read to the client's address; a 429 answer when spent."""
    return await charge_address_read(
        request, "history_reads", request.state.services.settings.history_reads_per_minute,
        "too_many_history_reads",
        "this address read too many profiles and histories; retry after Retry-After seconds")


async def _player(request: Request) -> tuple[dict[str, Any] | None, Response | None]:
    """The path's player row, or the error answer (charge, not found, deleted, private)."""
    refused = await _charge(request)
    if refused is not None:
        return None, refused
    player_id = request.path_params["player"]
    if not re.fullmatch(PLAYER_ID_PATTERN, player_id):
        return None, _error(404, "player_not_found", "no such player")
    db = request.state.services.database
    query = select(players.c.id, players.c.name, players.c.private, players.c.deleted_at
                   ).where(players.c.id == player_id)
    async with db.connect() as conn:
        row = (await conn.execute(query)).mappings().first()
    if row is None:
        return None, _error(404, "player_not_found", "no such player")
    if row["deleted_at"] is not None:
        return None, _error(410, "player_deleted", "this player deleted themself")
    if row["private"] and await _viewer(request) != player_id:
        return None, _error(403, "profile_private", "this player's profile is private")
    return dict(row), None


async def _online(request: Request, player_id: str) -> bool | None:
    """Whether the player is online now (``server.social.online``); None when the store
    cannot tell."""
    social = getattr(request.state.services, "social", None)
    if social is None:
        return None
    try:
        return await social.online.is_online(player_id)
    except Exception as exc:  # noqa: BLE001 (the profile is shown without it)
        log.warning("online not read: %s", exc)
        return None


def _database_down(exc: Exception) -> Response:
    log.warning("history read failed: %s", exc)
    return _error(503, "database_unavailable", "the database cannot be reached; try again")


async def profile(request: Request) -> Response:
    """``GET /api/players/{player}``: 200 ``PlayerProfile``; 404 ``player_not_found``, 410
    ``player_deleted``, 403 ``profile_private``, 429 ``too_many_history_reads``, 503
    ``database_unavailable``."""
    try:
        row, refused = await _player(request)
        if refused is not None:
            return refused
        assert row is not None
        stats = await player_statistics(request.state.services.database, row["id"])
        accuracy = await player_accuracy(request.state.services.database, row["id"])
        online = await _online(request, row["id"])
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 (the database failed)
        return _database_down(exc)
    return JSONResponse({"player": row["id"], "name": row["name"],
                         "private": bool(row["private"]), "online": online,
                         "statistics": stats, "accuracy": accuracy})


async def games_page(request: Request) -> Response:
    """``GET /api/players/{player}/games?limit=&cursor=``: 200 ``PlayerGamesPage``; the
    errors of :func:`profile`, and 400 ``bad_page_request``."""
    settings = request.state.services.settings
    limit_text = request.query_params.get("limit")
    cursor = request.query_params.get("cursor") or None
    limit = settings.history_page_size
    if limit_text is not None:
        if not re.fullmatch(r"[0-9]{1,4}", limit_text) or not (
                1 <= int(limit_text) <= settings.history_max_page_size):
            return _error(400, "bad_page_request", "limit must be a whole number from 1 to "
                          f"{settings.history_max_page_size}")
        limit = int(limit_text)
    try:
        row, refused = await _player(request)
        if refused is not None:
            return refused
        assert row is not None
        try:
            page = await player_games(request.state.services.database, row["id"],
                                      limit=limit, cursor=cursor)
        except ValueError:
            return _error(400, "bad_page_request", "cursor is not one a page gave")
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 (the database failed)
        return _database_down(exc)
    return JSONResponse(page)


async def page(request: Request) -> Response:
    """``GET /p/{player}``, ``GET /replay/{game}``: the web client's page."""
    from ..app import index

    return await index(request)


ROUTES = [
    Route("/api/players/{player}", profile, methods=["GET"]),
    Route("/api/players/{player}/games", games_page, methods=["GET"]),
    # Any id at all, a "/" in it too: the page says it is not found, in its language.
    Route("/p/{player:path}", page, methods=["GET"]),
    Route("/replay/{game:path}", page, methods=["GET"]),
]
"""The routes ``server.app`` splices in."""
