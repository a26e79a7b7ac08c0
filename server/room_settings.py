"""Room-level settings: hints, the Muggins answer window, the takeover grace, the turn clock,
the match length, rated play, and whether the table is public (and its language).

Chosen at room creation (``POST /api/rooms`` body ``"room"``, ``create_room`` message field
``room``); stored with the room (``RoomRecord.settings``) and shown in the snapshot and the
room summary as ``room_settings``. As plain data::

    {"hints": true, "answer_window": 15.0, "takeover_grace": 60.0, "turn_seconds": null,
     "match": 1, "rated": false, "public": false, "language": "en", "chat": "free"}

``answer_window`` (seconds, docs/rules.md §5.2) defaults to the server's
``answer_window_seconds``; ``takeover_grace`` (seconds) is how long a human seat may stay
disconnected before a ``standard`` computer plays it (default 60); ``turn_seconds`` is the
turn clock: seconds a human seat has to play, discard, announce or answer before the
server's ``standard`` computer acts for it once (null: no turn clock, the default);
``match`` is the match length, best of 1 (a single game, the default), 3, 5 or 7
(docs/rules.md §9.1); ``rated`` makes the room's games count for the players' ratings;
``public`` lists the table in the lobby while it waits for players (``server.lobby``; the
default is a private table, reached by its share link only); ``language`` is the table's
language (``en``, ``da`` or ``sv``: what the lobby shows, for players who want to play in
it; default the creator's: ``hello.language``, else ``en``); ``chat`` is the table's talk
(``server.chat``): ``off``, ``presets`` (preset phrases only) or ``free`` (presets and free
text), by default ``free``, and ``presets`` at a rated table and a quick-match table.

A rated room (docs/rules.md §9, docs/protocol.md "Rated rooms") is played to the standard
rules: 121 holes, no Lowball, no Back-up 10 and no Muggins (the ACC's tournament game;
refused with ``rated_options``), and always with the turn clock: 60 s unless asked for,
30 to 120 s allowed (else ``rated_turn_clock``; the server settings ``rated_turn_seconds``,
``rated_turn_seconds_min`` and ``rated_turn_seconds_max``). Its human seats take players
only (``player_required``, ``server.rooms``).
"""

from __future__ import annotations

from typing import Any

from .settings import Settings

DEFAULT_TAKEOVER_GRACE = 60.0
"""Seconds a human seat may stay disconnected before a computer stands in."""

MAX_SECONDS = 24 * 3600.0
"""Upper bound of every duration (a room expires after a day idle anyway)."""

MIN_TURN_SECONDS = 1.0
"""Shortest turn clock (the web page offers 30, 60 and 120 s)."""

MATCH_LENGTHS = (1, 3, 5, 7)
"""The match lengths a room may have: best of 1 (a single game), 3, 5 or 7 games
(docs/rules.md §9.1)."""

RATED_OPTIONS = {"target": 121, "lowball": False, "backup10": False, "muggins": False}
"""The engine options a rated room must have (docs/rules.md §9.2): the standard game to
121, with neither variant and without Muggins; players and partnerships are free."""

CHAT_MODES = ("off", "presets", "free")
"""A table's talk (``server.chat``): none, preset phrases only, or presets and free text."""

LANGUAGES = ("en", "da", "sv")
"""The languages a table may have (those of the web client's catalogues)."""

KNOWN = frozenset({"hints", "answer_window", "takeover_grace", "turn_seconds", "match",
                   "rated", "public", "language", "chat"})
"""The room settings there are."""


class RoomSettingsError(ValueError):
    """Room settings a room cannot have; nothing was made.

    Attributes:
        code: the stable code (``bad_options``: a bad value; ``rated_options``: a rated
            room with options other than the standard game to 121; ``rated_turn_clock``: a
            rated room with a turn clock outside the server's ``rated_turn_seconds_min``
            to ``rated_turn_seconds_max``, 30 to 120 s by default).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def resolve(requested: dict[str, Any] | None, settings: Settings,
            options: dict[str, Any] | None = None, language: str | None = None
            ) -> dict[str, Any]:
    """The settings a new room gets: the requested ones over the defaults.

    Args:
        requested: ``{"hints"?: bool, "answer_window"?: seconds | None,
            "takeover_grace"?: seconds | None, "turn_seconds"?: seconds | None,
            "match"?: 1 | 3 | 5 | 7 | None, "rated"?: bool | None}`` (None or missing: the
            default; for ``turn_seconds`` the default is no turn clock, or the server's
            ``rated_turn_seconds`` (60) in a rated room; ``match`` 1; ``rated`` false;
            ``"public"?: bool`` false; ``"language"?: "en" | "da" | "sv"``: ``language``).
        settings: the server settings (default answer window and grace, the rated turn
            clock's default and bounds).
        options: the room's effective engine options (``engine.GameOptions.effective``
            as plain data), checked for a rated room; None: the defaults (standard, 121).

    Returns:
        ``{"hints": bool, "answer_window": float, "takeover_grace": float,
        "turn_seconds": float | None, "match": int, "rated": bool}``.

    Raises:
        RoomSettingsError: ``bad_options``, a value of the wrong type or out of range
            (durations must be > 0 and at most a day; a turn clock at least 1 s; a match of
            1, 3, 5 or 7); ``rated_options``, a rated room with other options than the
            standard game to 121 (docs/rules.md §9.2); ``rated_turn_clock``, a rated room
            with a turn clock outside ``rated_turn_seconds_min``–``rated_turn_seconds_max``
            (30–120 s); ``bad_options`` for a ``language`` that is not one of
            :data:`LANGUAGES`.
    """
    try:
        return _resolve(requested, settings, options, language)
    except RoomSettingsError:
        raise
    except ValueError as exc:
        raise RoomSettingsError("bad_options", str(exc)) from None


def _resolve(requested: dict[str, Any] | None, settings: Settings,
             options: dict[str, Any] | None, language: str | None = None) -> dict[str, Any]:
    req = dict(requested or {})
    unknown = set(req) - KNOWN
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
    match = req.get("match")
    if match is None:
        match = 1
    if isinstance(match, bool) or match not in MATCH_LENGTHS:
        raise ValueError("room.match must be 1, 3, 5 or 7 (best of that many games)")
    rated = req.get("rated")
    if rated is None:
        rated = False
    if not isinstance(rated, bool):
        raise ValueError("room.rated must be true or false")
    if rated:
        chosen = {**RATED_OPTIONS, **(options or {})}
        off = [f"{k}={chosen[k]!r}" for k, v in RATED_OPTIONS.items() if chosen[k] != v]
        if off:
            raise RoomSettingsError(
                "rated_options", "a rated room plays the standard game to 121 without "
                f"Muggins, Lowball or Back-up 10 (docs/rules.md §9.2); not {', '.join(off)}")
        if req.get("hints") is True:
            raise RoomSettingsError(
                "rated_options", "a rated game is played without the computer's hints "
                "(docs/rules.md §9.2); leave hints out or false")
        out["hints"] = False
        if turn is None:
            turn = float(settings.rated_turn_seconds)
        low = float(settings.rated_turn_seconds_min)
        high = float(settings.rated_turn_seconds_max)
        if not low <= turn <= high:
            raise RoomSettingsError(
                "rated_turn_clock", f"a rated room's turn clock is {low:g} to {high:g} s "
                f"(default {float(settings.rated_turn_seconds):g}), not {turn:g}")
    out["turn_seconds"] = turn
    out["match"] = int(match)
    out["rated"] = rated
    public = req.get("public")
    if public is None:
        public = False
    if not isinstance(public, bool):
        raise ValueError("room.public must be true or false")
    chosen_language = req.get("language")
    if chosen_language is None:
        chosen_language = language if language in LANGUAGES else "en"
    if chosen_language not in LANGUAGES:
        raise ValueError("room.language must be one of en, da, sv")
    out["public"] = public
    out["language"] = chosen_language
    chat = req.get("chat")
    if chat is None:
        chat = "presets" if rated else "free"
    if chat not in CHAT_MODES:
        raise ValueError("room.chat must be one of off, presets, free")
    out["chat"] = chat
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
