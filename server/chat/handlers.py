"""The WebSocket handlers of table talk (``server.session.HANDLERS`` registers them): each
takes the session and the decoded message and leaves the work to the process's
:class:`server.chat.service.ChatService` (``session.chat``); a refusal is an ``error``
with the message's type in ``ref`` (and ``retry_after`` for the limits)."""

from __future__ import annotations

from typing import Any

from .. import frames
from .service import ChatError


def _refused(session: Any, exc: ChatError, kind: str) -> None:
    chat = getattr(session, "chat", None)
    if chat is not None:
        chat.refused[exc.code] += 1
    session.error(exc.code, exc.message, kind, exc.retry_after)


class _NoChat:
    """A session without a chat service (tools that make sessions by hand)."""

    def __getattr__(self, name: str) -> Any:
        async def refuse(*args: Any) -> Any:
            raise ChatError("not_joined", "this server has no table talk")
        return refuse


def _chat(session: Any) -> Any:
    chat = getattr(session, "chat", None)
    return chat if chat is not None else _NoChat()


async def on_chat(session: Any, message: Any) -> None:
    """``chat`` -> the ``chat`` frame every reader gets (or an ``error``)."""
    try:
        await _chat(session).say(session, message.preset, message.text)
    except ChatError as exc:
        _refused(session, exc, "chat")


async def on_chat_mute(session: Any, message: Any) -> None:
    """``chat_mute`` -> ``chat_muted`` (or an ``error``)."""
    try:
        done = await _chat(session).mute(session, message.message, message.block)
    except ChatError as exc:
        _refused(session, exc, "chat_mute")
        return
    session.send(frames.chat_muted(**done))


async def on_chat_unmute(session: Any, message: Any) -> None:
    """``chat_unmute`` -> ``chat_muted`` with ``muted`` false (or an ``error``)."""
    try:
        done = await _chat(session).unmute(session, message.player)
    except ChatError as exc:
        _refused(session, exc, "chat_unmute")
        return
    session.send(frames.chat_muted(**done))


async def on_chat_report(session: Any, message: Any) -> None:
    """``chat_report`` -> ``chat_reported`` (or an ``error``)."""
    try:
        report = await _chat(session).report(session, message.message, message.reason,
                                           message.note)
    except ChatError as exc:
        _refused(session, exc, "chat_report")
        return
    session.send(frames.chat_reported(message.message, report))
