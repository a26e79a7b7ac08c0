"""The players' HTTP API (docs/protocol.md, "Players"; ``docs/openapi.json``).

* ``POST /api/players`` ``{name?, language?}`` -> ``201 {id, secret, name, language}``;
  ``429 too_many_players`` past the address's ``players_per_hour``.
* ``GET /api/players/me`` -> ``200 {id, name, language, private, created_at}``.
* ``PATCH /api/players/me`` ``{name?, language?, private?}`` -> ``200`` the same; ``400
  bad_name`` (the rules of seat names, ``server.names``), ``400 bad_request``.
* ``DELETE /api/players/me`` -> ``204``: the identity is gone (``PlayerStore.delete``).
* ``GET /api/players/me/export`` -> ``200`` everything held about the player (JSON,
  downloaded as ``cribbage-player-<id>.json``).
* ``POST /api/players/me/link`` -> ``201 {code, url, expires_at}``: a one-time code (and
  the link ``/link/<code>``) for another device; ``429 too_many_link_codes`` past the
  player's ``link_codes_per_hour``.
* ``POST /api/players/link`` ``{code}`` -> ``200 {id, secret, name, language}``: a new
  credential of the code's player for this device; ``404 bad_code``, ``404
  too_many_tries`` (the code is dead), ``429 too_many_code_tries`` (the address entered
  ``code_tries_per_hour`` wrong codes).
* ``GET /link/{code}``: the web table's page, which claims the code; ``GET /you``: the web
  table's page of the player this browser is (name, language, codes, data).

``/me`` routes need ``Authorization: Player <id>.<secret>`` (``401 bad_player``). A database
that cannot be reached is ``503 database_unavailable``; bodies over ``max_body_bytes`` are
``413 too_large``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from protocol.codec import validation_text
from protocol.http import ClaimLinkBody, CreatePlayerBody, UpdatePlayerBody

from ..budgets import Budget
from ..limits import client_address, retry_after_header
from ..names import imitated_label
from ..web.body import BodyError, BodyTooLarge, read_json_object
from .auth import (
    ApiError,
    database_unavailable,
    player_from_request,
    player_store,
    too_large,
)
from .store import LinkError, Player, shown_code

log = logging.getLogger(__name__)


def hourly(name: str, per_hour: int) -> Budget:
    """A budget of ``per_hour`` events an hour, all of them at once at most."""
    return Budget(name, per_hour / 60.0, float(per_hour))


def _services(request: Request) -> Any:
    return request.state.services


def _too_many(code: str, message: str, wait: float) -> ApiError:
    return ApiError(429, code, message, {"Retry-After": retry_after_header(wait)},
                    retry_after=round(wait, 3))


def _origin_refused(request: Request) -> bool:
    policy = _services(request).origins
    return not policy.allows(request.headers.get("origin"), request.headers.get("host"))


async def _body(request: Request, model: type[BaseModel]) -> Any:
    """The request's JSON body as ``model`` (an empty body is ``{}``).

    Raises:
        ApiError: 413 ``too_large``, 400 ``bad_name`` (a ``name`` that is not a display
            name), 400 ``bad_request``.
    """
    limit = _services(request).settings.max_body_bytes
    try:
        data = await read_json_object(request, limit)
    except BodyTooLarge as exc:
        raise too_large(exc) from None
    except BodyError as exc:
        raise ApiError(400, "bad_request", str(exc)) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        if "name" in model.model_fields and any(
                err["loc"][:1] == ("name",) and err["type"] != "extra_forbidden"
                for err in exc.errors()):
            raise ApiError(400, "bad_name", "that name is not a display name: 1-32 "
                           "characters, at least one visible, no control or format "
                           "characters") from None
        raise ApiError(400, "bad_request", validation_text(exc)) from None


def _check_name(name: str | None) -> None:
    if name is not None and imitated_label(name):
        raise ApiError(400, "bad_name", f"{name!r} reads like one of the table's own labels "
                       "(You, Computer, Seat 2, …, in English, Danish or Swedish); choose "
                       "another name")


def _base_url(request: Request) -> str:
    settings = _services(request).settings
    if settings.public_url:
        return settings.public_url.rstrip("/")
    return f"{request.url.scheme}://{request.url.netloc}"


def _created(player: Player, secret: str) -> dict[str, Any]:
    return {"id": player.id, "secret": secret, "name": player.name,
            "language": player.language}


async def _take(request: Request, budget: Budget, key: str) -> Any:
    """A ticket of ``budget`` for ``key`` (None when the process has no limits)."""
    limits = _services(request).limits
    if limits is None:
        return None
    return await limits.take(budget, key)


def _refused(request: Request, code: str) -> None:
    limits = _services(request).limits
    if limits is not None:
        limits.refused[code] += 1


def _address(request: Request) -> str:
    limits = _services(request).limits
    address = client_address(request.scope)
    return limits.key(address) if limits is not None else address


async def create_player(request: Request) -> Response:
    """``POST /api/players``: a new player and its first secret (201)."""
    if _origin_refused(request):
        raise ApiError(403, "origin_not_allowed",
                       "pages of this origin may not make players here (allowed_origins)")
    moderation = getattr(_services(request), "moderation", None)
    if moderation is not None and moderation.sanctions.address_banned(_address(request)):
        raise ApiError(403, "banned", "a moderator banned this address")
    body = await _body(request, CreatePlayerBody)
    _check_name(body.name)
    settings = _services(request).settings
    ticket = await _take(request, hourly("players", settings.players_per_hour),
                         _address(request))
    if ticket is not None and not ticket.taken:
        _refused(request, "too_many_players")
        raise _too_many("too_many_players", "this address made too many players; retry "
                        "after Retry-After seconds", ticket.wait)
    store = player_store(request)
    try:
        player, secret = await store.create(body.name, body.language)
    except Exception as exc:
        if ticket is not None:
            await ticket.refund()
        log.warning("player not made: %s", exc)
        raise database_unavailable() from exc
    return JSONResponse(_created(player, secret), status_code=201)


async def get_me(request: Request) -> Response:
    """``GET /api/players/me``: the player of the request."""
    player = await player_from_request(request)
    return JSONResponse(player.public())


async def patch_me(request: Request) -> Response:
    """``PATCH /api/players/me``: change name, language, private."""
    player = await player_from_request(request)
    body = await _body(request, UpdatePlayerBody)
    changes = {k: getattr(body, k) for k in body.model_fields_set}
    for key in ("language", "private"):
        if key in changes and changes[key] is None:
            raise ApiError(400, "bad_request", f"{key} cannot be null")
    _check_name(changes.get("name"))
    try:
        updated = await player_store(request).update(player.id, **changes)
    except Exception as exc:
        log.warning("player not changed: %s", exc)
        raise database_unavailable() from exc
    if updated is None:
        raise ApiError(401, "bad_player", "the player was deleted meanwhile",
                       {"WWW-Authenticate": "Player"})
    return JSONResponse(updated.public())


async def delete_me(request: Request) -> Response:
    """``DELETE /api/players/me``: delete the player's identity (204)."""
    player = await player_from_request(request)
    try:
        await player_store(request).delete(player.id)
    except Exception as exc:
        log.warning("player not deleted: %s", exc)
        raise database_unavailable() from exc
    return Response(status_code=204)


async def export_me(request: Request) -> Response:
    """``GET /api/players/me/export``: everything held about the player, as a download."""
    player = await player_from_request(request)
    try:
        data = await player_store(request).export(player.id)
    except Exception as exc:
        log.warning("player not exported: %s", exc)
        raise database_unavailable() from exc
    if data is None:
        raise ApiError(401, "bad_player", "no such player", {"WWW-Authenticate": "Player"})
    body = {"format": "cribbage-player-export", "format_version": 1,
            "exported_at": datetime.now(UTC).isoformat(), **data}
    return JSONResponse(body, headers={
        "Content-Disposition": f'attachment; filename="cribbage-player-{player.id}.json"'})


async def make_link(request: Request) -> Response:
    """``POST /api/players/me/link``: a one-time code for another device (201)."""
    player = await player_from_request(request)
    settings = _services(request).settings
    ticket = await _take(request, hourly("link_codes", settings.link_codes_per_hour),
                         f"player:{player.id}")
    if ticket is not None and not ticket.taken:
        _refused(request, "too_many_link_codes")
        raise _too_many("too_many_link_codes", "this player made too many codes; retry "
                        "after Retry-After seconds", ticket.wait)
    try:
        made = await player_store(request).create_link_code(
            player.id, settings.link_code_ttl_seconds)
    except Exception as exc:
        if ticket is not None:
            await ticket.refund()
        log.warning("link code not made: %s", exc)
        raise database_unavailable() from exc
    code = shown_code(made.code)
    return JSONResponse({"code": code, "url": f"{_base_url(request)}/link/{code}",
                         "expires_at": made.expires_at.isoformat()}, status_code=201)


async def claim_link(request: Request) -> Response:
    """``POST /api/players/link``: claim a one-time code: a new credential of its player."""
    if _origin_refused(request):
        raise ApiError(403, "origin_not_allowed",
                       "pages of this origin may not claim codes here (allowed_origins)")
    body = await _body(request, ClaimLinkBody)
    settings = _services(request).settings
    ticket = await _take(request, hourly("code_tries", settings.code_tries_per_hour),
                         _address(request))
    if ticket is not None and not ticket.taken:
        _refused(request, "too_many_code_tries")
        raise _too_many("too_many_code_tries", "this address entered too many wrong codes; "
                        "retry after Retry-After seconds", ticket.wait)
    try:
        player, secret = await player_store(request).claim_link_code(
            body.code, settings.link_code_tries)
    except LinkError as exc:
        raise ApiError(404, exc.code, exc.message) from None
    except Exception as exc:
        if ticket is not None:
            await ticket.refund()
        log.warning("link code not claimed: %s", exc)
        raise database_unavailable() from exc
    if ticket is not None:  # a right code costs nothing
        await ticket.refund()
    return JSONResponse(_created(player, secret))


async def link_page(request: Request) -> Response:
    """``GET /link/{code}`` and ``GET /you``: the web table's page (it claims the code /
    shows the player's own page)."""
    from ..app import STATIC_DIR

    page = STATIC_DIR / "index.html"
    if page.is_file():
        return FileResponse(page, media_type="text/html")
    return PlainTextResponse("no web client installed\n", status_code=404)


ME = {"GET": get_me, "HEAD": get_me, "PATCH": patch_me, "DELETE": delete_me}


async def me(request: Request) -> Response:
    """``/api/players/me``: one route for its three methods, so that a 405 lists them all
    in ``Allow``."""
    return await ME[request.method](request)


ROUTES = [
    Route("/api/players", create_player, methods=["POST"]),
    Route("/api/players/link", claim_link, methods=["POST"]),
    Route("/api/players/me", me, methods=["GET", "PATCH", "DELETE"]),
    Route("/api/players/me/export", export_me, methods=["GET"]),
    Route("/api/players/me/link", make_link, methods=["POST"]),
    Route("/link/{code}", link_page, methods=["GET"]),
    Route("/you", link_page, methods=["GET"]),
]
"""The players' routes (``server.app`` puts them before any ``/api/players/{id}``)."""
