"""The moderators' HTTP API (issue 21 point 4; docs/operations.md "Moderation"): the bodies
and the part of the OpenAPI document spliced into :mod:`protocol.openapi`.

Every route is under ``/api/admin/`` and needs ``Authorization: Bearer <admin_token>``; an
``X-Moderator`` header names the moderator in the audit log (1-64 visible characters;
``admin`` without it). With no ``admin_token`` set the routes answer ``404 admin_off``.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from .messages import ROOM_ID_PATTERN

REPORT_ID_PATTERN = r"^[0-9a-f]{16}$"


def _check_audit_text(text: str) -> str:
    """A moderator's free text (a sanction's reason, a report's resolution): any line
    breaks and tabs, but no other control character (NUL cannot be kept in PostgreSQL) and
    no lone surrogate (not UTF-8)."""
    for ch in text:
        category = unicodedata.category(ch)
        if (category == "Cc" and ch not in "\t\n\r") or category == "Cs":
            raise ValueError(f"the text cannot hold the character U+{ord(ch):04X}")
    return text


AuditText = Annotated[str, Field(max_length=500), AfterValidator(_check_audit_text)]
"""Up to 500 characters for the audit log: lines and tabs, no other control characters."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class _Open(BaseModel):
    """A body the server writes (kept messages are the store's plain data)."""

    model_config = ConfigDict(extra="forbid")


class Report(_Open):
    """A report of a chat message, with the room's kept messages around it."""

    id: str = Field(pattern=REPORT_ID_PATTERN)
    at: str = Field(description="When it was filed, ISO 8601, UTC.")
    reporter: str = Field(description="The reporting player's id.")
    room: str = Field(pattern=ROOM_ID_PATTERN)
    message_id: int = Field(ge=0)
    author: str | None = Field(description="The author's player id (even when their "
                               "profile is private), null for none.")
    message: dict[str, Any] = Field(description="The message as the room kept it: the "
                                    "`chat` message's fields and `by`, the author's id.")
    context: list[dict[str, Any]] = Field(description="Up to 10 messages before it and 5 "
                                          "after, the message included, oldest first.")
    reason: Literal["abuse", "spam", "cheating", "other"]
    note: str | None
    status: Literal["open", "resolved"]
    resolved_at: str | None
    resolved_by: str | None
    resolution: str | None


class ReportsBody(_Open):
    """``GET /api/admin/reports``: oldest first."""

    reports: list[Report]


class ResolveBody(_Model):
    """``POST /api/admin/reports/{report}/resolve``."""

    resolution: AuditText | None = Field(None, description="What was done, for the audit log.")


class SanctionRequest(_Model):
    """``POST /api/admin/sanctions``: silence a player's chat everywhere, or ban a player or
    an address (or a network, CIDR) from the server."""

    kind: Literal["silence", "ban_player", "ban_address"]
    target: str = Field(min_length=1, max_length=64, pattern=r"^[!-~]+$",
                        description="A player id, or an IP address or network (printable "
                        "ASCII, no spaces).")
    seconds: float | None = Field(
        None, gt=0, le=31_536_000,
        description="How long; null (bans only): until lifted. A silence needs it.")
    reason: AuditText | None = None


class Sanction(_Open):
    """A silence or a ban."""

    id: int
    kind: Literal["silence", "ban_player", "ban_address"]
    target: str
    at: str
    until: str | None = Field(description="Its end, ISO 8601; null until lifted.")
    reason: str | None
    moderator: str
    lifted_at: str | None


class SanctionsBody(_Open):
    """``GET /api/admin/sanctions``: the ones in force, oldest first."""

    sanctions: list[Sanction]


class HiddenBody(_Open):
    """``POST /api/admin/rooms/{room}/messages/{message}/hide``."""

    room: str
    message: int
    hidden: Literal[True]


class ClosedBody(_Open):
    """``POST /api/admin/rooms/{room}/close``."""

    room: str
    closed: Literal[True]
    already: bool = Field(description="It was closed before this request.")


class RoomTalkBody(_Open):
    """``GET /api/admin/rooms/{room}/chat``: the messages the room keeps, with authors."""

    room: str
    messages: list[dict[str, Any]]


class AuditEntry(_Open):
    """One moderator action."""

    id: int
    at: str
    moderator: str
    action: Literal["hide", "silence", "unsilence", "close_room", "ban", "unban", "resolve"]
    target: str
    detail: dict[str, Any]


class AuditBody(_Open):
    """``GET /api/admin/log``: newest first."""

    entries: list[AuditEntry]


NAMED: dict[str, Any] = {
    "Report": Report, "ReportsBody": ReportsBody, "ResolveBody": ResolveBody,
    "SanctionRequest": SanctionRequest, "Sanction": Sanction, "SanctionsBody": SanctionsBody,
    "HiddenBody": HiddenBody, "ClosedBody": ClosedBody, "RoomTalkBody": RoomTalkBody,
    "AuditBody": AuditBody,
}

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "AdminNotFound": ("404", "The admin API is off (no `admin_token` set: `admin_off`), or "
                      "no such report, sanction, room, message or player.",
                      ["admin_off", "report_not_found", "sanction_not_found",
                       "room_not_found", "message_not_found", "player_not_found"]),
    "BadAdminToken": ("401", "No `Authorization: Bearer <admin_token>`, or a wrong one.",
                      ["bad_admin_token"]),
    "BadAdminRequest": ("400", "The body, a query parameter or `X-Moderator` is not valid, "
                        "or a sanction that cannot be (a silence without `seconds`; an "
                        "address that is not one, a network with host bits set or wider "
                        "than an IPv4 /16 or an IPv6 /32).",
                        ["bad_request", "bad_sanction"]),
    "OriginOrBanned": ("403", "The request comes from a web page whose `Origin` the server "
                       "does not allow (`origin_not_allowed`), or the client address is "
                       "banned (`banned`).", ["origin_not_allowed", "banned"]),
}

SECURITY = [{"admin": []}]

SCHEME = {"type": "http", "scheme": "bearer",
          "description": "The moderators' token (`admin_token`, docs/operations.md "
          "\"Moderation\")."}

_MODERATOR = {"name": "X-Moderator", "in": "header", "required": False,
              "description": "Who acts, for the audit log (default `admin`): 1-64 "
              "printable characters.",
              "schema": {"type": "string", "maxLength": 64}}
_ROOM = {"name": "room", "in": "path", "required": True, "schema": {"type": "string"},
         "example": "k3JfQ9xa2B"}
_REPORT = {"name": "report", "in": "path", "required": True, "schema": {"type": "string"},
           "example": "5f1c0a9e3b7d2c48"}


def paths(json: Any, errors: Any) -> dict[str, Any]:
    """The admin paths (``json(model, example)`` and ``errors(*names)`` are
    :mod:`protocol.openapi`'s helpers)."""
    base = ("AdminNotFound", "BadAdminToken", "Internal", "DatabaseDown")

    def op(op_id: str, summary: str, ok: dict[str, Any], *, params: list | None = None,
           body: tuple[str, dict] | None = None, extra: tuple[str, ...] = (),
           description: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"operationId": op_id, "tags": ["moderation"],
                               "summary": summary, "security": SECURITY,
                               "parameters": [_MODERATOR, *(params or [])],
                               "responses": {**ok, **errors(*base, *extra)}}
        if description:
            out["description"] = description
        if body:
            out["requestBody"] = {"required": body[0] == "SanctionRequest",
                                  "content": json(*body)}
        return out

    return {
        "/api/admin/reports": {"get": op(
            "listReports", "Reports waiting for a moderator",
            {"200": {"description": "Oldest first.", "content": json("ReportsBody")}},
            params=[{"name": "status", "in": "query", "required": False,
                     "schema": {"enum": ["open", "resolved", "all"], "default": "open"}},
                    {"name": "limit", "in": "query", "required": False,
                     "schema": {"type": "integer", "minimum": 1, "maximum": 200,
                                "default": 50}}],
            extra=("BadAdminRequest",))},
        "/api/admin/reports/{report}": {"get": op(
            "getReport", "One report",
            {"200": {"description": "The report.", "content": json("Report")}},
            params=[_REPORT])},
        "/api/admin/reports/{report}/resolve": {"post": op(
            "resolveReport", "Mark a report resolved",
            {"200": {"description": "The report, resolved.", "content": json("Report")}},
            params=[_REPORT], body=("ResolveBody", {"resolution": "hid it; silenced a day"}),
            extra=("BadAdminRequest", "TooLarge"))},
        "/api/admin/rooms/{room}/chat": {"get": op(
            "getRoomTalk", "The messages a room keeps, with their authors",
            {"200": {"description": "Oldest first.", "content": json("RoomTalkBody")}},
            params=[_ROOM], extra=("StoreDown",))},
        "/api/admin/rooms/{room}/messages/{message}/hide": {"post": op(
            "hideMessage", "Hide a message for everyone",
            {"200": {"description": "Hidden: the table got `chat_hidden`; joining clients "
                     "and the archive no longer have it.", "content": json("HiddenBody")}},
            params=[_ROOM, {"name": "message", "in": "path", "required": True,
                            "schema": {"type": "integer", "minimum": 1}}],
            extra=("StoreDown",))},
        "/api/admin/rooms/{room}/close": {"post": op(
            "closeRoom", "Close a room",
            {"200": {"description": "Closed: the table got `room_closed` (and "
                     "`game_abandoned` for a game in progress).",
                     "content": json("ClosedBody")}},
            params=[_ROOM], extra=("StoreDown",))},
        "/api/admin/sanctions": {
            "get": op("listSanctions", "The silences and bans in force",
                      {"200": {"description": "Oldest first.",
                               "content": json("SanctionsBody")}}),
            "post": op("addSanction", "Silence a player, or ban a player or an address",
                       {"201": {"description": "In force on every server process within "
                                "`moderation_refresh_seconds` (at once on this one).",
                                "content": json("Sanction")}},
                       body=("SanctionRequest", {"kind": "silence",
                                                 "target": "b7kq2m4xw5zt3ra6",
                                                 "seconds": 86400, "reason": "insults"}),
                       extra=("BadAdminRequest", "TooLarge")),
        },
        "/api/admin/sanctions/{sanction}": {"delete": op(
            "liftSanction", "Lift a silence or a ban",
            {"200": {"description": "Lifted.", "content": json("Sanction")}},
            params=[{"name": "sanction", "in": "path", "required": True,
                     "schema": {"type": "integer"}}])},
        "/api/admin/log": {"get": op(
            "getAuditLog", "The audit log of moderator actions",
            {"200": {"description": "Newest first.", "content": json("AuditBody")}},
            params=[{"name": "limit", "in": "query", "required": False,
                     "schema": {"type": "integer", "minimum": 1, "maximum": 500,
                                "default": 100}},
                    {"name": "before", "in": "query", "required": False,
                     "schema": {"type": "integer"},
                     "description": "Entries with ids below this (the next page)."}],
            extra=("BadAdminRequest",))},
    }
