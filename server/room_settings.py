"""Room-level settings: hints, the Muggins answer window, the takeover grace, the turn clock.

Chosen at room creation (``POST /api/rooms`` body ``"room"``, ``create_room`` message field
``room``); stored with the room (``RoomRecord.settings``) and shown in the snapshot and the
room summary as ``room_settings``. As plain data::

    {"hints": true, "answer_window": 15.0, "takeover_grace": 60.0, "turn_seconds": null,
     "match": 1}

``answer_window`` (seconds, docs/rules.md §5.2) defaults to the server's
``answer_window_seconds``; ``takeover_grace`` (seconds) is how long a human seat may stay
disconnected before a ``standard`` computer plays it (default 60); ``turn_seconds`` is the
turn clock: seconds a human seat has to play, discard, announce or answer before the
server's ``standard`` computer acts for it once (null: no turn clock, the default);
``match`` is the number of games the room's match is the best of (1: a single game, the
default; 3, 5 or 7: docs/rules.md §8).
"""

from __future__ import annotations

from typing import Any

from .settings import Settings

DEFAULT_TAKEOVER_GRACE = 60.0
"""Seconds a human seat may stay disconnected before a computer stands in."""

MAX_SECONDS = 24 * 3600.0
"""Upper bound of every duration (a room expires after a day idle anyway)."""

MATCH_LENGTHS = (1, 3, 5, 7)
"""``match``: a single game (1) or a match, best of 3, 5 or 7 (docs/rules.md §8)."""

MIN_TURN_SECONDS = 1.0
"""Shortest turn clock (the web page offers 30, 60 and 120 s)."""


def resolve(requested: dict[str, Any] | None, settings: Settings) -> dict[str, Any]:
    """The settings a new room gets: the requested ones over the defaults.

    Args:
        requested: ``{"hints"?: bool, "answer_window"?: seconds | None,
            "takeover_grace"?: seconds | None, "turn_seconds"?: seconds | None,
            "match"?: 1 | 3 | 5 | 7 | None}`` (None or missing: the default; for
            ``turn_seconds`` the default is no turn clock, for ``match`` 1, a single game).
        settings: the server settings (default answer window and grace).

    Returns:
        ``{"hints": bool, "answer_window": float, "takeover_grace": float,
        "turn_seconds": float | None, "match": int}``.

    Raises:
        ValueError: a value of the wrong type or out of range (durations must be
            > 0 and at most a day; a turn clock at least 1 s).
    """
    req = dict(requested or {})
    unknown = set(req) - {"hints", "answer_window", "takeover_grace", "turn_seconds", "match"}
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
    turn = req.get("turn_seconds")
    if turn is not None:
        if isinstance(turn, bool) or not isinstance(turn, int | float):
            raise ValueError("room.turn_seconds must be a number of seconds or null")
        if not MIN_TURN_SECONDS <= turn <= MAX_SECONDS:
            raise ValueError(
                f"room.turn_seconds must be {MIN_TURN_SECONDS:g} to {MAX_SECONDS:g} s, or null"
            )
        turn = float(turn)
    out["turn_seconds"] = turn
    match = req.get("match")
    if match is None:
        match = 1
    if isinstance(match, bool) or match not in MATCH_LENGTHS:
        raise ValueError("room.match must be 1, 3, 5 or 7 (games, best of)")
    out["match"] = match
    return out


def of_room(stored: dict[str, Any] | None, settings: Settings,
            defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """A stored room's effective settings (rooms stored before settings existed, or with
    some missing, get the defaults). Never raises.

    ``defaults``: ``resolve(None, settings)`` when the caller keeps it (it is copied, never
    changed)."""
    base = dict(defaults) if defaults is not None else resolve(None, settings)
    if stored:
        for key in base:
            if key in stored:
                base[key] = stored[key]
    return base
