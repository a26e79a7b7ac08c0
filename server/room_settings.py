"""Room-level settings: hints allowed, the Muggins answer window, the takeover grace.

Chosen at room creation (``POST /api/rooms`` body ``"room"``, ``create_room`` message field
``room``); stored with the room (``RoomRecord.settings``) and shown in the snapshot and the
room summary as ``room_settings``. As plain data::

    {"hints": true, "answer_window": 15.0, "takeover_grace": 60.0}

``answer_window`` (seconds, docs/rules.md §5.2) defaults to the server's
``answer_window_seconds``; ``takeover_grace`` (seconds) is how long a human seat may stay
disconnected before a ``standard`` computer plays it (default 60).
"""

from __future__ import annotations

from typing import Any

from .settings import Settings

DEFAULT_TAKEOVER_GRACE = 60.0
"""Seconds a human seat may stay disconnected before a computer stands in."""

MAX_SECONDS = 24 * 3600.0
"""Upper bound of both durations (a room expires after a day idle anyway)."""


def resolve(requested: dict[str, Any] | None, settings: Settings) -> dict[str, Any]:
    """The settings a new room gets: the requested ones over the defaults.

    Args:
        requested: ``{"hints"?: bool, "answer_window"?: seconds | None,
            "takeover_grace"?: seconds | None}`` (None or missing: the default).
        settings: the server settings (default answer window).

    Returns:
        ``{"hints": bool, "answer_window": float, "takeover_grace": float}``.

    Raises:
        ValueError: a value of the wrong type or out of range (durations must be
            > 0 and at most a day).
    """
    req = dict(requested or {})
    unknown = set(req) - {"hints", "answer_window", "takeover_grace"}
    if unknown:
        raise ValueError(f"unknown room settings: {sorted(unknown)}")
    hints = req.get("hints")
    if hints is None:
        hints = True
    if not isinstance(hints, bool):
        raise ValueError("room.hints must be true or false")
    out: dict[str, Any] = {"hints": hints}
    defaults = {
        "answer_window": float(settings.answer_window_seconds),
        "takeover_grace": float(settings.takeover_grace_seconds),
    }
    for name, default in defaults.items():
        value = req.get(name)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"room.{name} must be a number of seconds")
        if not 0 < value <= MAX_SECONDS:
            raise ValueError(f"room.{name} must be more than 0 and at most {MAX_SECONDS:g} s")
        out[name] = float(value)
    return out


def of_room(stored: dict[str, Any] | None, settings: Settings) -> dict[str, Any]:
    """A stored room's effective settings (rooms stored before settings existed, or with
    some missing, get the defaults). Never raises."""
    base = resolve(None, settings)
    for key in base:
        if stored and key in stored:
            base[key] = stored[key]
    return base
