"""The mutes' HTTP routes (docs/protocol.md "Chat"; ``docs/openapi.json``):

* ``GET /api/players/me/mutes`` -> ``200 {"mutes": [{"player", "name", "muted_at"}]}``
  (newest first).
* ``PUT /api/players/me/mutes/{player}`` -> ``200 {"player", "muted": true}`` (the same
  again when it was there).
* ``DELETE /api/players/me/mutes/{player}`` -> ``204`` (also when there was no mute).

They need ``Authorization: Player <id>.<secret>`` (``401 bad_player``). ``404
player_not_found`` (no such player, or a deleted one, to mute), ``400 bad_mute`` (oneself),
``409 too_many_mutes`` (``max_mutes``), ``503 database_unavailable``. A mute made here
reaches the player's connections on this process at once, and the others' at their next
``hello``.
"""

from __future__ import annotations

import logging
import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.http import PLAYER_ID_PATTERN

from ..players.auth import ApiError, database_unavailable, player_from_request
from .mutes import MuteError

log = logging.getLogger(__name__)


def _chat(request: Request):  # noqa: ANN202
    chat = getattr(request.state.services, "chat", None)
    if chat is None or chat.mutes is None:
        raise database_unavailable()
    return chat


def _target(request: Request) -> str:
    target = request.path_params["player"]
    if not re.fullmatch(PLAYER_ID_PATTERN, target):
        raise ApiError(404, "player_not_found", "no such player")
    return target


async def list_mutes(request: Request) -> Response:
    """``GET /api/players/me/mutes``."""
    player = await player_from_request(request)
    try:
        mutes = await _chat(request).mutes.muted_by(player.id)
    except ApiError:
        raise
    except Exception as exc:
        log.warning("mutes not read: %s", exc)
        raise database_unavailable() from exc
    return JSONResponse({"mutes": mutes})


async def mute(request: Request) -> Response:
    """``PUT`` / ``DELETE /api/players/me/mutes/{player}`` (``Allow`` lists both)."""
    player = await player_from_request(request)
    target = _target(request)
    chat = _chat(request)
    try:
        if request.method == "PUT":
            await chat.mutes.mute(player.id, target, chat.settings.max_mutes)
        else:
            await chat.mutes.unmute(player.id, target)
        still = await chat.mutes.not_heard(player.id)
    except MuteError as exc:
        status = {"bad_mute": 400, "too_many_mutes": 409}.get(exc.code, 404)
        raise ApiError(status, exc.code, exc.message) from None
    except Exception as exc:
        log.warning("mute not changed: %s", exc)
        raise database_unavailable() from exc
    chat.heard_again(player.id, still)
    if request.method == "PUT":
        return JSONResponse({"player": target, "muted": True})
    return Response(status_code=204)


ROUTES = [
    Route("/api/players/me/mutes", list_mutes, methods=["GET"]),
    Route("/api/players/me/mutes/{player}", mute, methods=["PUT", "DELETE"]),
]
"""The routes ``server.app`` splices in."""
