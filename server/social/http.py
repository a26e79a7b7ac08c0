"""The blocks' HTTP routes (docs/protocol.md "Challenges, blocks and online now";
``docs/openapi.json``), spliced into ``server.app`` before ``/api/players/{id}``:

* ``GET /api/players/me/blocks`` -> ``200 {"blocks": [{"player", "name", "blocked_at"}]}``
  (newest first).
* ``PUT /api/players/me/blocks/{player}`` -> ``200 {"player", "blocked": true}`` (the same
  again when it was there); pending challenges between the two are declined.
* ``DELETE /api/players/me/blocks/{player}`` -> ``204`` (also when there was no block).

They need ``Authorization: Player <id>.<secret>`` (``401 bad_player``). ``404
player_not_found`` (no such player, or a deleted one, to block), ``400 bad_block`` (oneself),
``409 too_many_blocks`` (``max_blocks``), ``503 database_unavailable``.
"""

from __future__ import annotations

import logging
import re

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.http import PLAYER_ID_PATTERN

from ..players.auth import ApiError, database_unavailable, player_from_request
from .blocks import BlockError

log = logging.getLogger(__name__)


def _social(request: Request):  # noqa: ANN202
    social = getattr(request.state.services, "social", None)
    if social is None:
        raise database_unavailable()
    return social


def _target(request: Request) -> str:
    target = request.path_params["player"]
    if not re.fullmatch(PLAYER_ID_PATTERN, target):
        raise ApiError(404, "player_not_found", "no such player")
    return target


async def list_blocks(request: Request) -> Response:
    """``GET /api/players/me/blocks``."""
    player = await player_from_request(request)
    try:
        blocks = await _social(request).blocks.blocked_by(player.id)
    except ApiError:
        raise
    except Exception as exc:
        log.warning("blocks not read: %s", exc)
        raise database_unavailable() from exc
    return JSONResponse({"blocks": blocks})


async def put_block(request: Request) -> Response:
    """``PUT /api/players/me/blocks/{player}``."""
    player = await player_from_request(request)
    target = _target(request)
    social = _social(request)
    try:
        await social.blocks.block(player.id, target, social.settings.max_blocks)
    except BlockError as exc:
        status = {"bad_block": 400, "too_many_blocks": 409}.get(exc.code, 404)
        raise ApiError(status, exc.code, exc.message) from None
    except Exception as exc:
        log.warning("block not made: %s", exc)
        raise database_unavailable() from exc
    try:
        await social.decline_between(player.id, target)
    except Exception as exc:  # noqa: BLE001 (they expire; an accept checks blocks again)
        log.warning("challenges not declined after a block: %s", exc)
    return JSONResponse({"player": target, "blocked": True})


async def delete_block(request: Request) -> Response:
    """``DELETE /api/players/me/blocks/{player}``."""
    player = await player_from_request(request)
    target = _target(request)
    try:
        await _social(request).blocks.unblock(player.id, target)
    except Exception as exc:
        log.warning("block not removed: %s", exc)
        raise database_unavailable() from exc
    return Response(status_code=204)


async def block(request: Request) -> Response:
    """``/api/players/me/blocks/{player}``: one route for both methods (``Allow`` lists
    them)."""
    if request.method == "PUT":
        return await put_block(request)
    return await delete_block(request)


ROUTES = [
    Route("/api/players/me/blocks", list_blocks, methods=["GET"]),
    Route("/api/players/me/blocks/{player}", block, methods=["PUT", "DELETE"]),
]
"""The routes ``server.app`` splices in."""
