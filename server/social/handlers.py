"""The WebSocket handlers of challenges (``server.session.HANDLERS`` registers them): each
takes the session and the decoded message, and leaves the work to the process's
:class:`server.social.service.SocialService` (``session.social``)."""

from __future__ import annotations

from typing import Any

from ..rooms import RoomError


def _social(session: Any) -> Any:
    social = getattr(session, "social", None)
    if social is None:
        raise RoomError("player_required", "this server keeps no players")
    return social


async def on_challenge(session: Any, message: Any) -> None:
    """``challenge`` -> ``challenge_sent`` (or an ``error``)."""
    await _social(session).challenge(session, message)


async def on_challenge_answer(session: Any, message: Any) -> None:
    """``challenge_answer`` -> ``challenge_accepted`` / ``challenge_declined`` (or an
    ``error``)."""
    await _social(session).answer(session, message)
