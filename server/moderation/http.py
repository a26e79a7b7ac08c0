"""The moderators' HTTP routes (``/api/admin/...``; docs/operations.md "Moderation",
``protocol.moderation``, ``docs/openapi.json``).

* ``GET /api/admin/reports?status=open|resolved|all&limit=`` -> ``{"reports": [...]}``;
  ``GET /api/admin/reports/{report}``; ``POST /api/admin/reports/{report}/resolve``
  ``{resolution?}``.
* ``GET /api/admin/rooms/{room}/chat`` -> the room's kept messages with their authors;
  ``POST /api/admin/rooms/{room}/messages/{message}/hide``; ``POST
  /api/admin/rooms/{room}/close``.
* ``GET /api/admin/sanctions``; ``POST /api/admin/sanctions`` ``{kind, target, seconds?,
  reason?}`` -> ``201``; ``DELETE /api/admin/sanctions/{sanction}``.
* ``GET /api/admin/log?limit=&before=`` -> ``{"entries": [...]}``, newest first.

Every route needs ``Authorization: Bearer <admin_token>`` (compared in constant time;
``401 bad_admin_token``); without ``admin_token`` they all answer ``404 admin_off``. The
``X-Moderator`` header names who acts in the audit log (``admin`` without it). Every
action is written to the audit log; logged at INFO on ``server.moderation``.
"""

from __future__ import annotations

import hmac
import logging
import re
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from protocol.moderation import REPORT_ID_PATTERN, ResolveBody, SanctionRequest

from ..players.auth import ApiError, database_unavailable
from ..players.http import _body
from ..rooms import RoomError
from .store import ModerationError

log = logging.getLogger("server.moderation")


def _moderation(request: Request) -> Any:
    services = request.state.services
    token = services.settings.admin_token
    if not token:
        raise ApiError(404, "admin_off", "the admin API is off on this server "
                       "(admin_token is not set)")
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
            value.strip().encode(), token.encode()):
        raise ApiError(401, "bad_admin_token", "send Authorization: Bearer <admin_token>",
                       {"WWW-Authenticate": "Bearer"})
    moderation = getattr(services, "moderation", None)
    if moderation is None:
        raise database_unavailable()
    return moderation


def _moderator(request: Request) -> str:
    raw = request.headers.get("x-moderator")
    if raw is None:
        return "admin"
    name = raw.strip()
    if not name or len(name) > 64 or not name.isprintable():
        raise ApiError(400, "bad_request", "X-Moderator is 1-64 printable characters")
    return name


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ApiError(400, "bad_request", f"{name} is a whole number from {low} to {high}")
    return int(raw)


async def _sql(call: Any) -> Any:
    try:
        return await call
    except (ApiError, ModerationError):
        raise
    except Exception as exc:
        log.warning("moderation: database failed: %s", exc)
        raise database_unavailable() from exc


def _refused(exc: ModerationError) -> ApiError:
    return ApiError(exc.status, exc.code, exc.message)


async def list_reports(request: Request) -> Response:
    """``GET /api/admin/reports``."""
    moderation = _moderation(request)
    status = request.query_params.get("status", "open")
    if status not in ("open", "resolved", "all"):
        raise ApiError(400, "bad_request", "status is open, resolved or all")
    limit = _int(request, "limit", 50, 1, 200)
    reports = await _sql(moderation.store.reports(None if status == "all" else status, limit))
    return JSONResponse({"reports": reports})


def _report_id(request: Request) -> str:
    report_id = request.path_params["report"]
    if not re.fullmatch(REPORT_ID_PATTERN, report_id):
        raise ApiError(404, "report_not_found", "no such report")
    return report_id


async def get_report(request: Request) -> Response:
    """``GET /api/admin/reports/{report}``."""
    moderation = _moderation(request)
    try:
        return JSONResponse(await _sql(moderation.store.report(_report_id(request))))
    except ModerationError as exc:
        raise _refused(exc) from None


async def resolve_report(request: Request) -> Response:
    """``POST /api/admin/reports/{report}/resolve``."""
    moderation = _moderation(request)
    report_id = _report_id(request)
    body = await _body(request, ResolveBody)
    moderator = _moderator(request)
    try:
        report = await _sql(moderation.store.resolve(report_id, moderator, body.resolution))
    except ModerationError as exc:
        raise _refused(exc) from None
    log.info("moderation: %s resolved report %s", moderator, report_id)
    return JSONResponse(report)


async def room_talk(request: Request) -> Response:
    """``GET /api/admin/rooms/{room}/chat``."""
    moderation = _moderation(request)
    room = request.path_params["room"]
    record, _ = await moderation.chat.store.load(room)
    if record is None:
        raise ApiError(404, "room_not_found", "no such room (or it expired)")
    messages = await moderation.chat.recent(room)
    return JSONResponse({"room": room, "messages": messages})


async def hide_message(request: Request) -> Response:
    """``POST /api/admin/rooms/{room}/messages/{message}/hide``."""
    moderation = _moderation(request)
    room = request.path_params["room"]
    raw = request.path_params["message"]
    if not raw.isdigit() or not 1 <= int(raw) <= 2**53:
        raise ApiError(404, "message_not_found", "no such message")
    moderator = _moderator(request)
    hidden = await moderation.chat.hide(room, int(raw))
    if not hidden:
        raise ApiError(404, "message_not_found", "the room keeps no such message, and no "
                       "archived game of it has it")
    await _sql(moderation.store.log(moderator, "hide", f"{room}/{raw}",
                                    {"room": room, "message": int(raw)}))
    moderation.actions["hide"] += 1
    log.info("moderation: %s hid message %s of room %s", moderator, raw, room)
    return JSONResponse({"room": room, "message": int(raw), "hidden": True})


async def close_room(request: Request) -> Response:
    """``POST /api/admin/rooms/{room}/close``."""
    moderation = _moderation(request)
    room = request.path_params["room"]
    moderator = _moderator(request)
    try:
        closed = await moderation.rooms.close_room(room)
    except RoomError as exc:
        if exc.code == "room_not_found":
            raise ApiError(404, exc.code, exc.message) from None
        raise ApiError(503, "store_unavailable", f"the room is busy ({exc.code}); "
                       "nothing changed, try again") from None
    await _sql(moderation.store.log(moderator, "close_room", room,
                                    {"room": room, "already": not closed}))
    moderation.actions["close_room"] += 1
    log.info("moderation: %s closed room %s", moderator, room)
    return JSONResponse({"room": room, "closed": True, "already": not closed})


async def sanctions(request: Request) -> Response:
    """``GET`` / ``POST /api/admin/sanctions``."""
    moderation = _moderation(request)
    if request.method == "GET":
        return JSONResponse({"sanctions": await _sql(moderation.store.active())})
    body = await _body(request, SanctionRequest)
    if body.kind == "silence" and body.seconds is None:
        raise ApiError(400, "bad_sanction", "a silence needs seconds (at most a year)")
    moderator = _moderator(request)
    try:
        made = await _sql(moderation.store.sanction(body.kind, body.target, body.seconds,
                                                    body.reason, moderator))
    except ModerationError as exc:
        raise _refused(exc) from None
    moderation.actions[body.kind] += 1
    log.info("moderation: %s %s %s for %s s", moderator, body.kind, made["target"],
             body.seconds)
    await moderation.sanctions.refresh()
    return JSONResponse(made, status_code=201)


async def lift_sanction(request: Request) -> Response:
    """``DELETE /api/admin/sanctions/{sanction}``."""
    moderation = _moderation(request)
    raw = request.path_params["sanction"]
    if not raw.isdigit() or int(raw) > 2**53:
        raise ApiError(404, "sanction_not_found", "no such sanction")
    moderator = _moderator(request)
    try:
        lifted = await _sql(moderation.store.lift(int(raw), moderator))
    except ModerationError as exc:
        raise _refused(exc) from None
    moderation.actions["lift"] += 1
    log.info("moderation: %s lifted sanction %s", moderator, raw)
    await moderation.sanctions.refresh()
    return JSONResponse(lifted)


async def audit_log(request: Request) -> Response:
    """``GET /api/admin/log``."""
    moderation = _moderation(request)
    limit = _int(request, "limit", 100, 1, 500)
    before = request.query_params.get("before")
    if before is not None and not (before.isdigit() and int(before) <= 2**53):
        raise ApiError(400, "bad_request", "before is an entry's id")
    entries = await _sql(moderation.store.audit(limit, int(before) if before else None))
    return JSONResponse({"entries": entries})


ROUTES = [
    Route("/api/admin/reports", list_reports, methods=["GET"]),
    Route("/api/admin/reports/{report}", get_report, methods=["GET"]),
    Route("/api/admin/reports/{report}/resolve", resolve_report, methods=["POST"]),
    Route("/api/admin/rooms/{room}/chat", room_talk, methods=["GET"]),
    Route("/api/admin/rooms/{room}/messages/{message}/hide", hide_message, methods=["POST"]),
    Route("/api/admin/rooms/{room}/close", close_room, methods=["POST"]),
    Route("/api/admin/sanctions", sanctions, methods=["GET", "POST"]),
    Route("/api/admin/sanctions/{sanction}", lift_sanction, methods=["DELETE"]),
    Route("/api/admin/log", audit_log, methods=["GET"]),
]
"""The routes ``server.app`` splices in."""
