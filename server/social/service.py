"""Challenges, blocks and online now, for the sessions of one process (issue 20 point 3).

:class:`SocialService` is what ``server.session`` calls (docs/protocol.md, "Challenges,
blocks and online now"):

* :meth:`connected` / :meth:`disconnected`: a connection whose ``hello`` presented a player
  comes and goes. The first connection of a player on this process makes the player online
  (``server.social.online``) and follows the player's channel (``Channels``); then the
  connection is told each challenge of the player's still open (``challenge_received`` /
  ``challenge_sent``) or accepted and still kept (``challenge_accepted``).
* :meth:`challenge` and :meth:`answer`: the ``challenge`` and ``challenge_answer``
  messages (``server.social.handlers`` registers them).
* :meth:`check_seat`: a player taking a seat at a table where someone they blocked, or who
  blocked them, sits is refused ``seat_blocked``.
* :meth:`sweep` (its own loop, about once a second): expire due challenges and announce
  them; :meth:`Online.heartbeat` on every third of the lease.

Every frame about a challenge goes to every connection of both players, through their
channels; each connection drops a repeat (the same challenge and status, :data:`TOLD`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from .. import frames
from ..budgets import Budget
from ..rooms import RoomError
from ..store.base import StoreError
from .blocks import BlockStore
from .challenges import ChallengeStore, Channels, new_challenge_id
from .online import Online

log = logging.getLogger(__name__)

TOLD = "_social_told"
"""The attribute of a session holding ``{challenge id: status}`` it was told."""

FRAME_OF = {"declined": frames.challenge_declined, "expired": frames.challenge_expired}


class SocialService:
    """Challenges, blocks and online now for this process.

    Args:
        settings: ``challenge_seconds``, the challenge limits, ``presence_lease_seconds``.
        rooms: the room service (creating an accepted challenge's room, loading a room).
        players: the ``PlayerStore`` (names, whether a player exists).
        blocks: the ``BlockStore``.
        online: this process's ``Online``.
        challenges: the ``ChallengeStore``.
        channels: the players' ``Channels``.
        limits: the process's ``AddressLimits`` (budgets), or None for no limits.
        clock: Unix seconds.
    """

    def __init__(self, settings: Any, rooms: Any, players: Any, blocks: BlockStore,
                 online: Online, challenges: ChallengeStore, channels: Channels,
                 limits: Any = None, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.rooms = rooms
        self.players = players
        self.blocks = blocks
        self.online = online
        self.challenges = challenges
        self.channels = channels
        self.limits = limits
        self.clock = clock
        self.sessions: dict[str, set[Any]] = {}
        """player -> this process's sessions of theirs."""
        self._task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._leaving: set[asyncio.Task[Any]] = set()
        """Quick-match waits being ended by an accepted challenge (kept until done)."""

    # -- connections -----------------------------------------------------------------------
    async def connected(self, session: Any) -> None:
        """A session said hello as ``session.player``: online, following, told what is
        open."""
        player = session.player
        held = self.sessions.setdefault(player, set())
        first = not held
        held.add(session)
        if first:
            await self.online.connect(player)
            try:
                await self.channels.follow(player, lambda msg: self._on_message(player, msg))
            except StoreError as exc:
                log.warning("not following the channel of a player: %s", exc)
        try:
            records = await self.challenges.of_player(player)
        except Exception as exc:  # noqa: BLE001 (told at the next connection)
            log.warning("challenges not read: %s", exc)
            return
        now = self.clock()
        for record in records:
            if record["status"] == "pending" or (
                    record["status"] == "accepted" and now < record["expires"] + 60):
                self.tell(session, record)

    async def disconnected(self, session: Any) -> None:
        """A session of ``session.player`` ended."""
        player = session.player
        held = self.sessions.get(player)
        if not held or session not in held:
            return
        held.discard(session)
        if held:
            return
        self.sessions.pop(player, None)
        await self.online.disconnect(player)
        with contextlib.suppress(Exception):
            await self.channels.unfollow(player)

    def _on_message(self, player: str, message: dict[str, Any]) -> None:
        record = message.get("challenge")
        if not isinstance(record, dict):
            return
        for session in list(self.sessions.get(player, ())):
            self.tell(session, record)

    def tell(self, session: Any, record: dict[str, Any]) -> None:
        """Send ``session`` the frame of the challenge's status, unless it was told it."""
        told = getattr(session, TOLD, None)
        if told is None:
            told = {}
            setattr(session, TOLD, told)
        status = record["status"]
        if told.get(record["id"]) == status:
            return
        told[record["id"]] = status
        mine = session.player == record["challenger"]["id"]
        info = _info(record)
        if status == "pending":
            session.send(frames.challenge_sent(info) if mine
                         else frames.challenge_received(info))
        elif status == "accepted":
            session.send(frames.challenge_accepted(info, record["room_id"], 0 if mine else 1))
            self._end_wait(session)
        else:
            session.send(FRAME_OF[status](info))

    def _end_wait(self, session: Any) -> None:
        """An accepted challenge ends the connection's quick-match wait, if it has one
        (issue 20: a player is matched into one room at most; ``queue_left`` is sent, or
        ``matched`` when that match was already made)."""
        matchmaking = getattr(session, "matchmaking", None)
        if matchmaking is None or matchmaking.waiting(session) is None:
            return
        task = asyncio.get_running_loop().create_task(matchmaking.leave(session))
        self._leaving.add(task)
        task.add_done_callback(self._leaving.discard)

    async def announce(self, record: dict[str, Any], session: Any = None) -> None:
        """Tell both players' connections (and ``session`` at once) the challenge's status;
        once published, an answered or expired challenge leaves the due set."""
        if session is not None:
            self.tell(session, record)
        published = True
        for side in ("challenger", "challenged"):
            try:
                await self.channels.publish(record[side]["id"], {"challenge": record})
            except Exception as exc:  # noqa: BLE001 (the sweep announces it again)
                log.warning("challenge not published: %s", exc)
                published = False
        if published and record["status"] != "pending":
            with contextlib.suppress(Exception):
                await self.challenges.announced(record["id"])

    # -- challenge -------------------------------------------------------------------------
    async def _charge(self, budget: Budget, key: str) -> Any:
        if self.limits is None:
            return None
        return await self.limits.take(budget, key)

    async def challenge(self, session: Any, message: Any) -> None:
        """``challenge``: checks, limits, then the record, ``challenge_sent`` and the
        challenged player's ``challenge_received``.

        Raises:
            RoomError: ``player_required``, ``bad_challenge``, ``bad_options`` (not two
                players, or options a room cannot have), ``player_not_found``,
                ``player_blocked``, ``challenge_refused``, ``too_many_challenges``,
                ``too_many_address_challenges``, ``too_many_pending_challenges``,
                ``database_unavailable``.
        """
        me = session.player
        if me is None:
            raise RoomError("player_required", "only a player may challenge (say hello "
                            "with a player)")
        if message.to == me:
            raise RoomError("bad_challenge", "a player cannot challenge themself")
        options = message.options.model_dump()
        room = message.room.model_dump()
        if options["players"] != 2:
            raise RoomError("bad_options", "a challenge is for a table of two")
        _check_room(self.rooms, options, room)
        settings = self.settings
        challenge_id = None
        if message.request_id is not None:
            challenge_id = _derived_id(self.rooms, me, message.request_id)
            there = await self.challenges.get(challenge_id)
            if there is not None:  # a repeat: told its challenge as it is now
                getattr(session, TOLD, {}).pop(there["id"], None)
                self.tell(session, there)
                return
        try:
            target = await self.players.get(message.to)
            blocked = await self.blocks.either_blocked(me, message.to)
        except Exception as exc:
            log.warning("challenge checks failed: %s", exc)
            raise RoomError("database_unavailable", "the players' database cannot be "
                            "reached; try again") from exc
        if target is None or target.deleted:
            raise RoomError("player_not_found", "no such player")
        if blocked[0]:
            raise RoomError("player_blocked", "you blocked this player; unblock them to "
                            "challenge them")
        if blocked[1]:
            raise RoomError("challenge_refused", "this player takes no challenges from you")
        if settings.max_pending_challenges:
            mine = [r for r in await self.challenges.of_player(me)
                    if r["status"] == "pending" and r["challenger"]["id"] == me]
            if len(mine) >= settings.max_pending_challenges:
                self._refused(session, "too_many_pending_challenges")
                raise RoomError("too_many_pending_challenges", "you have "
                                f"{len(mine)} challenges waiting for an answer already")
        per_player = await self._charge(
            Budget("challenges", settings.challenges_per_minute), f"player:{me}")
        if per_player is not None and not per_player.taken:
            self._refused(session, "too_many_challenges")
            session.error("too_many_challenges", "you made too many challenges; wait "
                          "retry_after seconds", "challenge", round(per_player.wait, 3))
            return
        per_address = await self._charge(
            Budget("address_challenges", settings.address_challenges_per_minute),
            session.address)
        if per_address is not None and not per_address.taken:
            await per_player.refund()
            self._refused(session, "too_many_address_challenges")
            session.error("too_many_address_challenges", "this address made too many "
                          "challenges; wait retry_after seconds", "challenge",
                          round(per_address.wait, 3))
            return
        now = self.clock()
        record = {
            "id": challenge_id or new_challenge_id(),
            "challenger": {"id": me, "name": session.name},
            # A private player's id is never shown beside their name: one challenged by
            # id (from the leaderboard, say) is not named to the challenger.
            "challenged": {"id": target.id, "name": None if target.private else target.name},
            "options": options, "room": room, "created": now,
            "expires": now + float(settings.challenge_seconds),
            "status": "pending", "room_id": None, "answered": None,
        }
        try:
            record, _ = await self.challenges.create(record)
        except BaseException:
            for ticket in (per_player, per_address):
                if ticket is not None:
                    await ticket.refund()
            raise
        await self.announce(record, session)

    def _refused(self, session: Any, code: str) -> None:
        if self.limits is not None:
            self.limits.refused[code] += 1

    async def answer(self, session: Any, message: Any) -> None:
        """``challenge_answer``: accept (the room is made, once) or decline.

        Raises:
            RoomError: ``player_required``, ``challenge_not_found``, ``challenge_closed``,
                and what creating the room raises.
        """
        me = session.player
        if me is None:
            raise RoomError("player_required", "only a player may answer challenges")
        record = await self.challenges.get(message.id)
        if record is None or record["challenged"]["id"] != me:
            raise RoomError("challenge_not_found", "no such challenge to you")
        if record["status"] != "pending":
            self._closed(session, record)
            return
        if message.answer == "decline":
            after = await self.challenges.answer(record["id"], "declined")
        else:
            try:
                blocked = await self.blocks.blocked_between(
                    [me, record["challenger"]["id"]])
            except Exception:  # noqa: BLE001 (a database outage does not stop a table)
                blocked = set()
            if blocked:
                after = await self.challenges.answer(record["id"], "declined")
            else:
                made, _ = await self.rooms.create_room(
                    record["options"], room=record["room"],
                    request_id=_room_request_id(self.rooms, record["id"]))
                after = await self.challenges.answer(record["id"], "accepted", made.id)
        if after is None:
            raise RoomError("challenge_not_found", "no such challenge to you")
        if after["status"] == "expired":
            self._closed(session, after)
        await self.announce(after, session)

    async def decline_between(self, a: str, b: str) -> None:
        """Decline the pending challenges between two players (after a block)."""
        for record in await self.challenges.of_player(a):
            ids = {record["challenger"]["id"], record["challenged"]["id"]}
            if record["status"] == "pending" and ids == {a, b}:
                after = await self.challenges.answer(record["id"], "declined")
                if after is not None:
                    await self.announce(after)

    def _closed(self, session: Any, record: dict[str, Any]) -> None:
        """Answer ``error challenge_closed``, then the frame of the challenge as it is."""
        session.error("challenge_closed", f"the challenge is {record['status']} already; "
                      "nothing changed", "challenge_answer")
        getattr(session, TOLD, {}).pop(record["id"], None)
        self.tell(session, record)

    # -- blocks at tables ------------------------------------------------------------------
    async def check_seat(self, room_id: str, player: str) -> None:
        """Refuse ``player`` a seat in the room if someone seated there blocked them or was
        blocked by them (their own seat stays theirs). A database that cannot be reached
        lets the join go on (tables keep playing through a database outage).

        Raises:
            RoomError: ``seat_blocked``; ``room_not_found`` (from loading the room).
        """
        record = await self.rooms.load(room_id)
        seated = [s.player for s in record.seats if s.player]
        if not seated or player in seated:
            return
        try:
            pairs = await self.blocks.blocked_between([*seated, player])
        except Exception as exc:  # noqa: BLE001
            log.warning("blocks not checked: %s", exc)
            return
        if any(player in pair for pair in pairs):
            raise RoomError("seat_blocked", "you cannot sit at this table (a block between "
                            "you and a player here); you may watch")

    # -- the loop --------------------------------------------------------------------------
    async def sweep(self) -> int:
        """Expire the due challenges and announce every due one (raises store errors).

        Returns:
            How many were announced.
        """
        count = 0
        for cid in await self.challenges.due():
            record = await self.challenges.answer(cid, "expired")
            if record is None:
                await self.challenges.announced(cid)
                continue
            await self.announce(record)
            count += 1
        return count

    def start(self) -> None:
        """Start the loop (sweep about once a second, online heartbeat every third of the
        lease)."""
        self._task = asyncio.create_task(self._loop(), name="social")

    async def _loop(self) -> None:
        beat = float(self.settings.presence_lease_seconds) / 3
        next_beat = 0.0
        while not self._stopping.is_set():
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + beat
                with contextlib.suppress(Exception):
                    await self.online.heartbeat()
            try:
                await self.sweep()
            except Exception as exc:  # noqa: BLE001 (next round)
                log.debug("challenge sweep failed: %s", exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), min(1.0, beat))

    async def stop(self) -> None:
        """Stop the loop and remove this process's online leases."""
        self._stopping.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 3.0)
        await self.online.close()


def _info(record: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "challenger", "challenged", "options", "room", "created", "expires",
            "status", "room_id", "answered")
    return {k: record.get(k) for k in keys}


def _check_room(rooms: Any, options: dict[str, Any], room: dict[str, Any]) -> None:
    """Refuse options and settings a room cannot have, now rather than at the accept."""
    import engine

    from .. import room_settings

    try:
        opts = engine.GameOptions.from_dict(dict(options))
    except (ValueError, TypeError) as exc:
        raise RoomError("bad_options", str(exc)) from None
    try:
        room_settings.resolve(room, rooms.settings, opts.effective().to_dict())
    except room_settings.RoomSettingsError as exc:
        raise RoomError(exc.code, str(exc)) from None


def _derived_id(rooms: Any, player: str, request_id: str) -> str:
    """The challenge id of a player's ``request_id`` (the same on every process)."""
    raw = rooms.tokens.keyed(f"challenge|{player}|{request_id}".encode())
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    return "".join(alphabet[b % 32] for b in raw[:16])


def _room_request_id(rooms: Any, challenge_id: str) -> str:
    """The ``create_room`` request id of an accepted challenge: keyed by the deployment's
    secret, so nobody who knows the challenge id can ask for the room's creator token."""
    return "challenge-" + rooms.tokens.keyed(f"challenge-room|{challenge_id}".encode()).hex()[:40]
