"""The ratings' HTTP routes (``ROUTES``, spliced into ``server.app``): docs/protocol.md
"Ratings and leaderboards" and "Limits"; ``protocol.ratings``.

* ``GET /api/leaderboards/{kind}?around=<player>``: the top 100 of a table kind and, with
  ``around``, that player's place (``protocol.ratings.Leaderboard``); ``404
  bad_table_kind``; ``429 too_many_leaderboard_reads`` (``leaderboard_reads_per_minute`` per
  address, every request counts); ``503 database_unavailable``. A private player is on the
  board without a name.
* ``GET /api/players/{player}/ratings``: the player's ratings, their newest changes and the
  rated games they abandoned (``protocol.ratings.PlayerRatings``); the errors of the
  profile (``server.history.http``: its read budget, private, deleted, not found).
* ``GET /leaderboard``: the web client's page.
"""

from __future__ import annotations

import logging
import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.http import PLAYER_ID_PATTERN

from ..history.http import _database_down, _error, _player, page
from ..limits import charge_address_read
from ..players.auth import ApiError
from .board import around, player_ratings, top
from .counts import MIN_GAMES
from .model import TABLE_KINDS

log = logging.getLogger(__name__)


async def _charge(request: Request) -> Response | None:
    """Charge one leaderboard read to the client's address; a 429 answer when spent."""
    return await charge_address_read(
        request, "leaderboard_reads",
        request.state.services.settings.leaderboard_reads_per_minute,
        "too_many_leaderboard_reads",
        "this address read too many leaderboards; retry after Retry-After seconds")


async def leaderboard(request: Request) -> Response:
    """``GET /api/leaderboards/{kind}``: 200 ``Leaderboard``; 400 ``bad_around_player``, 404
    ``bad_table_kind``, 429 ``too_many_leaderboard_reads``, 503 ``database_unavailable``."""
    refused = await _charge(request)
    if refused is not None:
        return refused
    kind = request.path_params["kind"]
    if kind not in TABLE_KINDS:
        return _error(404, "bad_table_kind", "the table kind is one of 2, 3, 4, 2x2")
    who = request.query_params.get("around")
    if who is not None and not re.fullmatch(PLAYER_ID_PATTERN, who):
        return _error(400, "bad_around_player", "around is not a player id")
    db = request.state.services.database
    me = near = None
    try:
        best = await top(db, kind)
        if who is not None:
            me, near = await around(db, kind, who)
    except Exception as exc:  # noqa: BLE001 (the database failed)
        return _database_down(exc)
    return JSONResponse({"table_kind": kind, "min_games": MIN_GAMES, "top": best,
                         "around": near, "me": me})


async def ratings_of(request: Request) -> Response:
    """``GET /api/players/{player}/ratings``: 200 ``PlayerRatings``; the errors of the
    profile (``server.history.http.profile``)."""
    settings = request.state.services.settings
    try:
        row, refused = await _player(request)
        if refused is not None:
            return refused
        assert row is not None
        found = await player_ratings(
            request.state.services.database, row["id"],
            provisional=settings.rating_provisional_games,
            history=settings.rating_history_size)
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 (the database failed)
        return _database_down(exc)
    return JSONResponse({"player": row["id"], **found})


ROUTES = [
    Route("/api/leaderboards/{kind}", leaderboard, methods=["GET"]),
    Route("/api/players/{player}/ratings", ratings_of, methods=["GET"]),
    Route("/leaderboard", page, methods=["GET"]),
]
"""The routes ``server.app`` splices in."""
