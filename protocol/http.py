"""Bodies of the HTTP API (docs/protocol.md, "HTTP"), as pydantic models.

* ``POST /api/rooms`` answers ``201`` :class:`RoomCreatedBody`;
* ``GET /api/rooms/{id}`` answers ``200`` :class:`RoomSummary`;
* an error answers :class:`HttpError` (``400``, ``404``, ``413``, ``429``, ``500``,
  ``503``);
* ``GET /healthz`` answers :class:`Health`, ``GET /readyz`` :class:`Readiness`.

``docs/openapi.json`` (``protocol.openapi``) describes these routes with these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .codes import HttpErrorCode
from .messages import Level, RoomSettings, SeatInfo
from .shapes import Options


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RoomSummary(_Model):
    """``GET /api/rooms/{id}``: the public facts of a room."""

    room: str
    options: Options
    room_settings: RoomSettings
    status: Literal["waiting", "playing", "game_over"]
    version: int = Field(ge=0, description="The room's version (+1 per accepted change).")
    seats: list[SeatInfo]
    seats_taken: int = Field(ge=0, le=4)
    games_played: int = Field(ge=0, description="Rematches so far (0 in the first game).")
    created: float = Field(description="Unix time, seconds.")
    updated: float = Field(description="Unix time of the last change, seconds.")


class RoomCreatedBody(_Model):
    """``POST /api/rooms``: the ``room_created`` message without its ``type``."""

    room: str
    url: str
    options: Options
    creator_token: str
    room_settings: RoomSettings
    computers: dict[str, Level] = Field(description="Seat (as text) -> computer level.")


class HttpErrorDetail(_Model):
    """What went wrong: a stable ``code`` and a message for people."""

    code: HttpErrorCode
    message: str
    retry_after: float | None = Field(
        default=None, ge=0,
        description="with 429 (`too_many_rooms`, `too_many_room_reads`): seconds until a "
        "request may succeed "
        "(also in the Retry-After header, rounded up to whole seconds)",
    )


class HttpError(_Model):
    """Any HTTP error answer."""

    error: HttpErrorDetail


class Health(_Model):
    """``GET /healthz``: the process is up (always ``{"ok": true}``)."""

    ok: Literal[True]


class Readiness(_Model):
    """``GET /readyz``: whether the room store answers (``200`` with ``ok`` true, else
    ``503`` with ``ok`` false) and which store the process uses."""

    ok: bool
    store: Literal["redis", "memory"] = Field(
        description="redis: rooms in Redis (CRIBBAGE_REDIS_URL); memory: in this process"
    )


ROOM_SUMMARY_ADAPTER: TypeAdapter[RoomSummary] = TypeAdapter(RoomSummary)
"""Validates a ``GET /api/rooms/{id}`` body."""
