"""The lobby's HTTP route (``ROUTES``, spliced into ``server.app``): docs/protocol.md
"Public tables and the lobby" and "Limits".

* ``GET /api/lobby?players=2&partnerships=false&language=da&rated=false`` (every filter
  optional): ``200 {"tables": [LobbyTable, ...]}``, the same entries a ``lobby`` frame
  lists (newest first, at most 200); ``400 bad_lobby_filter``; ``429 too_many_lobby_reads``
  (``lobby_reads_per_minute`` per address, every request counts); ``503
  store_unavailable``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ..limits import charge_address_read
from .entry import FILTERS

_BOOLS = {"true": True, "false": False}
_VALUES: dict[str, dict[str, Any]] = {
    "players": {"2": 2, "3": 3, "4": 4},
    "partnerships": _BOOLS,
    "language": {"en": "en", "da": "da", "sv": "sv"},
    "rated": _BOOLS,
}


def filters_of(query: Any) -> dict[str, Any] | None:
    """The filters of a query string (``FILTERS``), or None when one is not allowed (an
    unknown name, a value not listed, a name twice)."""
    out: dict[str, Any] = {}
    for name in query.keys():
        values = query.getlist(name)
        if name not in FILTERS or len(values) != 1 or values[0] not in _VALUES[name]:
            return None
        out[name] = _VALUES[name][values[0]]
    return out


async def lobby(request: Request) -> Response:
    """``GET /api/lobby``: 200 ``{"tables": [...]}``; 400 ``bad_lobby_filter``; 429
    ``too_many_lobby_reads``; 503 ``store_unavailable`` (the app's handler)."""
    services = request.state.services
    refused = await charge_address_read(
        request, "lobby_reads", services.settings.lobby_reads_per_minute,
        "too_many_lobby_reads",
        "this address read the lobby too often; retry after Retry-After seconds, or follow "
        "it over the WebSocket (lobby_subscribe)")
    if refused is not None:
        return refused
    filters = filters_of(request.query_params)
    if filters is None:
        return JSONResponse({"error": {
            "code": "bad_lobby_filter", "message": "the filters are players=2|3|4, "
            "partnerships=true|false, language=en|da|sv and rated=true|false, each once"}},
            status_code=400)
    return JSONResponse({"tables": await services.lobby.tables(filters)})


ROUTES = [
    Route("/api/lobby", lobby, methods=["GET"]),
]
"""The routes ``server.app`` splices in."""
