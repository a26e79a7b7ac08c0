"""Saying, muting, reporting and hiding table talk (:class:`ChatService`).

The WebSocket handlers (``server.chat.handlers``) call it with the session; the fan-out
(``server.fanout``) delivers what the room store publishes. Nothing here waits for SQL on
the way of a message: a session learns whom its player does not hear once, at ``hello``
(:meth:`ChatService.not_heard`), and a moderator's silence is read from the in-process
cache of sanctions.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from ..rooms import RoomError
from ..store.base import RoomGone
from . import rules
from .limits import PlayerRate
from .mutes import MuteError, MuteStore

log = logging.getLogger(__name__)


class ChatError(Exception):
    """A chat request refused; nothing changed.

    Attributes:
        code: a stable code of ``protocol.codes`` (``chat_off``, ``chat_presets_only``,
            ``chat_too_long``, ``chat_needs_player``, ``chat_silenced``,
            ``chat_rate_limited``, ``room_chat_busy``, ``message_not_found``,
            ``report_limited``, ``not_joined``, ``database_unavailable``, …).
        message: for people.
        retry_after: seconds to wait, for the limits; else None.
    """

    def __init__(self, code: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.retry_after = retry_after


class NoSanctions:
    """Sanctions when the site has no moderation: nobody is silenced."""

    def silenced_until(self, player: str) -> float | None:
        """Always None."""
        return None


class ChatService:
    """Table talk of one process.

    Args:
        store: the room store (``chat_post``, ``chat_recent``, ``chat_hide``).
        settings: the process's settings (``chat_keep``, ``chat_max_chars``,
            ``chat_player_rate``, ``chat_player_burst``, ``chat_room_rate``, ``max_mutes``).
        room_settings: a record's effective room settings (``RoomService.room_settings``).
        mutes: the SQL mutes, or None (no database: nobody can be muted).
        blocks: the social service's ``BlockStore``, or None.
        clock: Unix seconds.
    """

    def __init__(self, store: Any, settings: Any, room_settings: Callable[[Any], dict],
                 mutes: MuteStore | None = None, blocks: Any = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.settings = settings
        self.room_settings = room_settings
        self.mutes = mutes
        self.blocks = blocks
        self.sanctions: Any = NoSanctions()
        """Who is silenced (``server.moderation``'s cache when the site has one)."""
        self.reports: Any = None
        """Where reports are filed (``server.moderation``'s store), or None."""
        self.archive_hide: Callable[[str, int], Any] | None = None
        """Hides a message in the archive too (``server.archive``), or None."""
        self.rate = PlayerRate(settings.chat_player_rate, settings.chat_player_burst)
        self.said = 0
        """Messages said through this process since start (``/metrics``)."""
        self.reported = 0
        """Reports filed through this process since start."""
        self.refused: Counter[str] = Counter()
        """Chat requests refused through this process, by code (``/metrics``)."""
        self._clock = clock
        self._lanes: dict[tuple[str, str], tuple[int, int]] = {}
        """(room, audience) -> (Unix second, messages this process saw the room take in
        it, or the whole budget once the store refused one)."""
        self._sessions: dict[str, set[Any]] = {}
        """Player id -> this process's sessions of that player (a mute reaches them all)."""

    # -- sessions ------------------------------------------------------------------------
    def register(self, session: Any) -> None:
        """A session said hello with a player (its mutes are loaded)."""
        self._sessions.setdefault(session.player, set()).add(session)

    def unregister(self, session: Any) -> None:
        """A session ended."""
        held = self._sessions.get(session.player)
        if held is not None:
            held.discard(session)
            if not held:
                del self._sessions[session.player]

    def heard_again(self, player: str, not_heard: set[str]) -> None:
        """``player``'s mutes changed elsewhere (over HTTP): their sessions on this process
        take the new set of players they do not hear."""
        for s in self._sessions.get(player, ()):
            s.not_heard = set(not_heard)

    async def not_heard(self, player: str) -> set[str]:
        """The players whose messages ``player`` does not get (muted, or blocked either
        way); an empty set when the database cannot be reached (logged)."""
        if self.mutes is None:
            return set()
        try:
            return await self.mutes.not_heard(player)
        except Exception as exc:  # noqa: BLE001 (hello goes on: everyone is heard)
            log.warning("mutes not read at hello: %s", exc)
            return set()

    # -- saying ----------------------------------------------------------------------------
    def _at_table(self, session: Any) -> tuple[Any, Any, dict[str, Any]]:
        local = session.local
        latest = local.latest() if local is not None else None
        if latest is None:
            raise ChatError("not_joined", "join a room first")
        record = latest.record
        return local, record, self.room_settings(record)

    @staticmethod
    def seated(session: Any, record: Any) -> bool:
        """Whether the session sits at the table, or its player does on another connection
        (a player never reads the spectators' talk of their own game)."""
        if session.seat is not None:
            return True
        return session.player is not None and session.player in rules.seated_players(record)

    async def say(self, session: Any, preset: str | None, text: str | None) -> int:
        """Say a preset phrase or free text at the session's table.

        Returns:
            The message's id (every reader, the author included, gets its ``chat``).

        Raises:
            ChatError: ``not_joined``, ``chat_needs_player``, ``bad_chat`` (neither or both
                of preset and text), ``chat_off``, ``chat_presets_only``,
                ``chat_too_long``, ``chat_silenced``, ``chat_rate_limited``,
                ``room_chat_busy``, ``room_closed``.
            StoreUnavailable, OutcomeUnknown: the room store failed.
        """
        _, record, settings = self._at_table(session)
        if session.player is None:
            raise ChatError("chat_needs_player", "only players may chat: say hello with a "
                            "player (POST /api/players makes one)")
        if record.closed:
            raise ChatError("room_closed", "a moderator closed this room")
        if (preset is None) == (text is None):
            raise ChatError("bad_chat", "send exactly one of preset and text")
        mode = settings.get("chat", "free")
        if mode == "off":
            raise ChatError("chat_off", "this table's chat is off")
        if text is not None:
            if mode != "free":
                raise ChatError("chat_presets_only", "this table takes preset phrases only")
            if len(text) > self.settings.chat_max_chars:
                raise ChatError("chat_too_long", "at most "
                                f"{self.settings.chat_max_chars} characters")
        until = self.sanctions.silenced_until(session.player)
        now = self._clock()
        if until is not None and until > now:
            raise ChatError("chat_silenced", "a moderator silenced this player for now",
                            round(until - now, 3))
        wait = self.rate.take(session.player)
        if wait:
            raise ChatError("chat_rate_limited", "too many messages; wait retry_after "
                            "seconds", round(wait, 3))
        seated = self.seated(session, record)
        seat = session.seat
        if seat is None and seated:
            seat = next((i for i, s in enumerate(record.seats)
                         if s.kind == "human" and s.player == session.player), None)
        entry = {
            "at": int(now * 1000), "name": session.name or "?", "seat": seat,
            "player": None if getattr(session, "private", False) else session.player,
            "by": session.player, "audience": rules.audience(seated, record.status),
            "preset": preset, "text": text, "game": record.game_number,
        }
        lane = entry["audience"]
        limit = int(self.settings.chat_room_rate if lane == "table"
                    else self.settings.chat_spectator_rate)
        second = int(now)
        key = (record.id, lane)
        at, taken = self._lanes.get(key, (second, 0))
        if at != second:
            taken = 0
        if limit and taken >= limit:
            # This process alone saw the lane's whole budget taken this second, so the room
            # store would refuse too: a flood costs no store call (issue 21's bench).
            raise ChatError("room_chat_busy", "this table's talk is at its limit; wait "
                            "retry_after seconds", round(second + 1 - now, 3))
        try:
            said = await self.store.chat_post(record.id, entry, self.settings.chat_keep,
                                              limit)
        except RoomGone:
            raise RoomError("room_not_found", f"no room {record.id!r}") from None
        if len(self._lanes) > 10_000:  # forget the lanes of past seconds
            self._lanes = {k: v for k, v in self._lanes.items() if v[0] == second}
        if said is None:
            self._lanes[key] = (second, limit)  # the room's budget is spent this second
            raise ChatError("room_chat_busy", "this table's talk is at its limit; wait "
                            "retry_after seconds", round(max(0.001, second + 1 - now), 3))
        self._lanes[key] = (second, taken + 1)
        self.said += 1
        return said

    # -- reading ---------------------------------------------------------------------------
    async def recent_for(self, session: Any, record: Any) -> list[dict[str, Any]] | None:
        """The room's kept messages this session may read, as readers get them (oldest
        first); ``[]`` when the table's chat is off or the store cannot be read."""
        if self.room_settings(record).get("chat", "free") == "off":
            return []
        try:
            kept = await self.store.chat_recent(record.id)
        except Exception as exc:  # noqa: BLE001 (a join goes on without the talk)
            log.warning("chat of %s not read: %s", record.id, exc)
            return []
        seated = self.seated(session, record)
        return [rules.public(e) for e in kept
                if rules.reads(e, seated, session.not_heard, session.player)]

    async def _find(self, session: Any, message_id: int) -> tuple[Any, dict[str, Any],
                                                                    list[dict[str, Any]]]:
        _, record, _ = self._at_table(session)
        kept = await self.store.chat_recent(record.id)
        seated = self.seated(session, record)
        for entry in kept:
            if entry.get("id") == message_id and rules.reads(entry, seated, frozenset(),
                                                             session.player):
                return record, entry, kept
        raise ChatError("message_not_found", "this room keeps no such message")

    # -- mutes and reports -----------------------------------------------------------------
    def _needs_player(self, session: Any) -> str:
        if session.player is None:
            raise ChatError("chat_needs_player", "only players may mute or report: say "
                            "hello with a player")
        return session.player

    async def mute(self, session: Any, message_id: int, block: bool) -> dict[str, Any]:
        """Mute (or block) the author of a message of the session's room.

        Returns:
            ``{"player", "name", "muted": True, "blocked"}`` (for ``chat_muted``).

        Raises:
            ChatError: ``chat_needs_player``, ``not_joined``, ``message_not_found``,
                ``bad_mute`` (one's own message), ``too_many_mutes``, ``too_many_blocks``,
                ``database_unavailable``.
        """
        me = self._needs_player(session)
        _, entry, _ = await self._find(session, message_id)
        author = entry.get("by")
        if not author or author == me:
            raise ChatError("bad_mute", "that is your own message")
        try:
            if block:
                if self.blocks is None:
                    raise ChatError("database_unavailable", "this server keeps no blocks")
                await self.blocks.block(me, author, self.settings.max_blocks)
            else:
                if self.mutes is None:
                    raise ChatError("database_unavailable", "this server keeps no mutes")
                await self.mutes.mute(me, author, self.settings.max_mutes)
        except ChatError:
            raise
        except MuteError as exc:
            raise ChatError(exc.code, exc.message) from None
        except Exception as exc:
            code = getattr(exc, "code", None)
            if isinstance(code, str) and code in ("player_not_found", "too_many_blocks",
                                                  "bad_block"):
                raise ChatError(code, str(exc)) from None
            log.warning("mute not made: %s", exc)
            raise ChatError("database_unavailable", "the database cannot be reached; try "
                            "again") from None
        for s in self._sessions.get(me, ()):
            s.not_heard.add(author)
        if block:  # both ways at once: the blocked player's connections here stop hearing me
            for s in self._sessions.get(author, ()):
                s.not_heard.add(me)
        return {"player": author, "name": entry.get("name"), "muted": True, "blocked": block}

    async def unmute(self, session: Any, player: str) -> dict[str, Any]:
        """Hear ``player`` again (a block stays: ``DELETE /api/players/me/blocks/{id}``).

        Returns:
            ``{"player", "name": None, "muted": False, "blocked"}``.

        Raises:
            ChatError: ``chat_needs_player``, ``database_unavailable``.
        """
        me = self._needs_player(session)
        if self.mutes is None:
            raise ChatError("database_unavailable", "this server keeps no mutes")
        try:
            await self.mutes.unmute(me, player)
            still = await self.mutes.not_heard(me)
        except Exception as exc:
            log.warning("mute not removed: %s", exc)
            raise ChatError("database_unavailable", "the database cannot be reached; try "
                            "again") from None
        self.heard_again(me, still)
        return {"player": player, "name": None, "muted": player in still,
                "blocked": player in still}

    async def report(self, session: Any, message_id: int, reason: str,
                     note: str | None) -> str:
        """Report a message of the session's room for the moderators, with the room's kept
        messages around it (``rules.context``).

        Returns:
            The report's id.

        Raises:
            ChatError: ``chat_needs_player``, ``not_joined``, ``message_not_found``,
                ``bad_mute`` (one's own message), ``report_limited``,
                ``database_unavailable`` (no moderation store, or it failed).
        """
        me = self._needs_player(session)
        record, entry, kept = await self._find(session, message_id)
        if entry.get("by") == me:
            raise ChatError("bad_mute", "that is your own message")
        if self.reports is None:
            raise ChatError("database_unavailable", "this server takes no reports")
        try:
            report = await self.reports.file(me, record.id, entry,
                                             rules.context(kept, message_id), reason, note)
            self.reported += 1
            return report
        except Exception as exc:
            wait = getattr(exc, "retry_after", None)
            if wait is not None:
                raise ChatError("report_limited", "too many reports; wait retry_after "
                                "seconds", round(float(wait), 3)) from None
            log.warning("report not filed: %s", exc)
            raise ChatError("database_unavailable", "the database cannot be reached; try "
                            "again") from None

    # -- moderators ------------------------------------------------------------------------
    async def hide(self, room_id: str, message_id: int) -> bool:
        """Hide a message for everyone: the room's readers are told (``chat_hidden``), it is
        left out of what joining clients get, and out of the archived game's talk.

        Returns:
            Whether it was hidden anywhere now (the live room or the archive): False for a
            message neither keeps, or one already hidden.

        Raises:
            StoreUnavailable, OutcomeUnknown: the room store failed.
        """
        kept = await self.store.chat_recent(room_id)
        live = False
        if any(e.get("id") == int(message_id) for e in kept):
            live = await self.store.chat_hide(room_id, int(message_id))
        archived = False
        if self.archive_hide is not None:
            archived = bool(await self.archive_hide(room_id, int(message_id)))
        return live or archived

    async def recent(self, room_id: str) -> list[dict[str, Any]]:
        """The room's kept messages as stored (``by`` included: for moderators)."""
        return await self.store.chat_recent(room_id)
