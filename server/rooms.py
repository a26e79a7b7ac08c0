"""The room service: the single write path of every room.

Every change to a room (a seat taken, a player's action, a timer's system action) goes
through :class:`RoomService`: read the room, check the seat token, apply with the engine,
commit with a version check (one atomic store operation that also records the action id,
appends to the log and publishes to the room's channel), and retry from a fresh read when
another change landed first. Nothing else writes a room.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import engine

from .settings import Settings
from .store.base import Commit, Deadline, RoomRecord, RoomStore, SeatRecord

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 20
"""Commits tried per change before giving up with ``busy`` (conflicts are rare and short)."""

ANSWER_TIMEOUT = "answer_timeout"
"""Deadline kind: the Muggins answer window of a room ran out (RULES.md §5.2)."""

GameFactory = Callable[[engine.GameOptions, str], tuple[engine.GameState, list[dict]]]
"""Starts a game from options and a seed (default ``engine.new_game``; tests stack decks)."""

CommitHook = Callable[[RoomRecord, list[dict]], Awaitable[None]]
"""Called after each accepted change with the new record and its (full) events."""


class RoomError(Exception):
    """A request the room service refuses; nothing changed.

    Attributes:
        code: ``room_not_found``, ``bad_seat``, ``seat_taken``, ``bad_token``,
            ``not_started``, ``bad_options``, ``busy``.
        message: human-readable.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def hash_token(token: str) -> str:
    """SHA-256 hex of a token (what rooms store instead of the token)."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, token_hash: str | None) -> bool:
    """Whether ``token`` hashes to ``token_hash`` (constant-time compare)."""
    if not token or not token_hash:
        return False
    return hmac.compare_digest(hash_token(token), token_hash)


def new_token() -> str:
    """A fresh seat/player token: 128 random bits, url-safe base64 (22 characters)."""
    return secrets.token_urlsafe(16)


def new_room_id() -> str:
    """A fresh room id: 10 url-safe characters (60 random bits)."""
    return secrets.token_urlsafe(8)[:10]


def new_seed() -> str:
    """A fresh engine seed: 128 random bits as hex."""
    return secrets.token_hex(16)


@dataclass(frozen=True)
class JoinResult:
    """The outcome of :meth:`RoomService.join`.

    Attributes:
        record: the room after the join.
        seat: the seat taken or resumed, or None for a spectator.
        resumed: True when the seat was already held by this token.
    """

    record: RoomRecord
    seat: int | None
    resumed: bool


@dataclass(frozen=True)
class ActResult:
    """The outcome of an accepted action.

    Attributes:
        version: the version the action made.
        duplicate: True when this was a re-sent action id applied before (then
            ``record`` is None and ``events`` empty).
        record: the room after the action.
        events: the action's full (unredacted) events.
    """

    version: int
    duplicate: bool
    record: RoomRecord | None = None
    events: list[dict[str, Any]] = field(default_factory=list)


class RoomService:
    """Creates rooms, seats players and applies actions, through one store.

    Args:
        store: where rooms live.
        settings: server settings (room TTL, answer window).
        game_factory: how a game starts (default ``engine.new_game(options, seed)``).
        seed_factory: where engine seeds come from (default :func:`new_seed`).
    """

    def __init__(
        self,
        store: RoomStore,
        settings: Settings,
        *,
        game_factory: GameFactory | None = None,
        seed_factory: Callable[[], str] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.game_factory = game_factory or (lambda opts, seed: engine.new_game(opts, seed))
        self.seed_factory = seed_factory or new_seed
        self.commit_hooks: list[CommitHook] = [self._schedule_answer_window]
        self._cache: dict[str, RoomRecord] = {}

    # -- cache of records of rooms this process follows ---------------------------------
    def remember(self, record: RoomRecord) -> None:
        """Keep ``record`` as the latest known state of its room (if newer)."""
        cur = self._cache.get(record.id)
        if cur is None or cur.version < record.version:
            self._cache[record.id] = record

    def forget(self, room_id: str) -> None:
        """Drop the cached record of a room (when no local connection follows it)."""
        self._cache.pop(room_id, None)

    # -- rooms -------------------------------------------------------------------------
    async def create_room(self, options: dict[str, Any]) -> tuple[RoomRecord, str]:
        """Create an empty room.

        Args:
            options: engine options as plain data (see ``engine.GameOptions``).

        Returns:
            ``(record, creator_token)``.

        Raises:
            RoomError: ``bad_options``.
        """
        try:
            opts = engine.GameOptions.from_dict(dict(options))
        except (ValueError, TypeError) as exc:
            raise RoomError("bad_options", str(exc)) from None
        creator = new_token()
        now = time.time()
        for _ in range(10):
            record = RoomRecord(
                id=new_room_id(),
                version=0,
                options=opts.to_dict(),
                seats=tuple(SeatRecord() for _ in range(opts.players)),
                state=None,
                seed=self.seed_factory(),
                creator_hash=hash_token(creator),
                created=now,
                updated=now,
            )
            if await self.store.create(record):
                return record, creator
        raise RoomError("busy", "could not allocate a room id")  # pragma: no cover

    async def load(self, room_id: str) -> RoomRecord:
        """The room's current record.

        Raises:
            RoomError: ``room_not_found``.
        """
        record, _ = await self.store.load(room_id)
        if record is None:
            raise RoomError("room_not_found", f"no room {room_id!r}")
        self.remember(record)
        return record

    async def join(
        self, room_id: str, seat: int | None, token: str, name: str, *, token_given: bool = False
    ) -> JoinResult:
        """Take or resume a seat, or watch.

        Args:
            room_id: the room.
            seat: the seat to take (a free one) or resume (one bound to ``token``); None to
                watch as a spectator.
            token: the token to bind a free seat to / to prove a taken one.
            name: display name for a seat taken now.
            token_given: the client named the token explicitly (a mismatch on a taken seat
                is then ``bad_token`` rather than ``seat_taken``).

        Returns:
            A :class:`JoinResult`. Taking the last free seat starts the game
            (``engine.new_game`` with the room's seed).

        Raises:
            RoomError: ``room_not_found``, ``bad_seat``, ``seat_taken``, ``bad_token``,
                ``busy``.
        """
        for attempt in range(MAX_ATTEMPTS):
            record = await self.load(room_id)
            if seat is None:
                return JoinResult(record, None, False)
            if not 0 <= seat < len(record.seats):
                raise RoomError("bad_seat", f"seats are 0..{len(record.seats) - 1}")
            current = record.seats[seat]
            if current.taken:
                if token_matches(token, current.token_hash):
                    return JoinResult(record, seat, True)
                if token_given:
                    raise RoomError("bad_token", f"that token does not hold seat {seat}")
                raise RoomError("seat_taken", f"seat {seat} is taken by someone else")
            seats = list(record.seats)
            seats[seat] = SeatRecord(name=name, token_hash=hash_token(token), kind="human")
            events: list[dict[str, Any]] = [{"type": "seat_taken", "seat": seat, "name": name}]
            state = record.state
            if state is None and all(s.taken for s in seats):
                game, start_events = self.game_factory(
                    engine.GameOptions.from_dict(record.options), record.seed
                )
                state = game.to_dict()
                events.extend(start_events)
            new = record.evolve(
                version=record.version + 1, seats=tuple(seats), state=state, updated=time.time()
            )
            result = await self.store.commit(
                Commit(
                    record=new,
                    expected_version=record.version,
                    action_key=None,
                    log_entry={"seat": seat, "join": name, "events": events},
                    events=events,
                    seats_changed=True,
                )
            )
            if result.status == "ok":
                self.remember(new)
                await self._after_commit(new, events)
                return JoinResult(new, seat, False)
            if result.status == "missing":
                raise RoomError("room_not_found", f"no room {room_id!r}")
            await self._backoff(attempt)
        raise RoomError("busy", "the room is too busy; try again")

    async def act(
        self, room_id: str, seat: int, token: str, action_id: str, action: dict[str, Any]
    ) -> ActResult:
        """Apply a seat's action exactly once.

        Args:
            room_id: the room.
            seat: the acting seat.
            token: the seat token (checked against the room's stored hash).
            action_id: client-chosen id; a re-sent id is answered with the first result.
            action: an engine action (plain data).

        Returns:
            :class:`ActResult`.

        Raises:
            RoomError: ``room_not_found``, ``bad_token``, ``not_started``, ``busy``.
            engine.RulesError: the engine refused the action (the room is unchanged).
        """
        key = f"{seat}:{action_id}"
        record = self._cache.get(room_id)
        fresh = record is None
        if record is None:
            record, done = await self.store.load(room_id, key)
            if done is not None:
                return ActResult(done, True)
        attempt = 0
        while True:
            try:
                if record is None:
                    raise RoomError("room_not_found", f"no room {room_id!r}")
                new, events = self._apply_seat(record, seat, token, action)
            except (RoomError, engine.RulesError):
                if fresh:
                    # Perhaps the refusal is a re-sent action that already went through.
                    if record is not None:
                        done = await self.store.action_version(room_id, key)
                        if done is not None:
                            return ActResult(done, True)
                    raise
                record, done = await self.store.load(room_id, key)
                fresh = True
                if done is not None:
                    return ActResult(done, True)
                continue
            result = await self.store.commit(
                Commit(
                    record=new,
                    expected_version=record.version,
                    action_key=key,
                    log_entry={"seat": seat, "id": action_id, "action": action},
                    events=events,
                )
            )
            if result.status == "ok":
                self.remember(new)
                await self._after_commit(new, events)
                return ActResult(result.version, False, new, events)
            if result.status == "duplicate":
                return ActResult(result.version, True)
            if result.status == "missing":
                raise RoomError("room_not_found", f"no room {room_id!r}")
            attempt += 1
            if attempt >= MAX_ATTEMPTS:
                raise RoomError("busy", "the room is too busy; try again")
            await self._backoff(attempt)
            record, done = await self.store.load(room_id, key)
            fresh = True
            if done is not None:
                return ActResult(done, True)

    def _apply_seat(
        self, record: RoomRecord, seat: int, token: str, action: dict[str, Any]
    ) -> tuple[RoomRecord, list[dict]]:
        if not 0 <= seat < len(record.seats) or not token_matches(
            token, record.seats[seat].token_hash
        ):
            raise RoomError("bad_token", "the token does not hold this seat")
        if record.state is None:
            raise RoomError("not_started", "the game starts when every seat is taken")
        state = engine.GameState.from_dict(record.state)
        new_state, events = engine.apply(state, seat, action)
        new = record.evolve(
            version=record.version + 1, state=new_state.to_dict(), updated=time.time()
        )
        return new, events

    async def apply_system(
        self,
        room_id: str,
        action: dict[str, Any],
        still_due: Callable[[RoomRecord], bool],
    ) -> int | None:
        """Apply a system action (seat None), e.g. ``answer_timeout`` from a timer.

        Args:
            room_id: the room.
            action: the engine action.
            still_due: called with the fresh record; the action is applied only if it says
                True (so a stale deadline does nothing).

        Returns:
            The new version, or None when the room is gone, the action was no longer due or
            the engine refused it.

        Raises:
            RoomError: ``busy``.
        """
        for attempt in range(MAX_ATTEMPTS):
            record, _ = await self.store.load(room_id)
            if record is None or record.state is None or not still_due(record):
                return None
            try:
                new_state, events = engine.apply(
                    engine.GameState.from_dict(record.state), None, action
                )
            except engine.RulesError as exc:
                log.info("system action %s refused in %s: %s", action, room_id, exc)
                return None
            new = record.evolve(
                version=record.version + 1, state=new_state.to_dict(), updated=time.time()
            )
            result = await self.store.commit(
                Commit(
                    record=new,
                    expected_version=record.version,
                    action_key=None,
                    log_entry={"seat": None, "action": action},
                    events=events,
                )
            )
            if result.status == "ok":
                self.remember(new)
                await self._after_commit(new, events)
                return result.version
            if result.status == "missing":
                return None
            await self._backoff(attempt)
        raise RoomError("busy", "the room is too busy")

    async def _after_commit(self, record: RoomRecord, events: list[dict]) -> None:
        for hook in self.commit_hooks:
            try:
                await hook(record, events)
            except Exception:
                log.exception("commit hook failed for room %s", record.id)

    @staticmethod
    async def _backoff(attempt: int) -> None:
        if attempt:
            await asyncio.sleep(random.uniform(0, 0.002 * min(attempt, 10)))

    # -- Muggins answer window ------------------------------------------------------------
    async def _schedule_answer_window(self, record: RoomRecord, events: list[dict]) -> None:
        """After an ``announce`` event, schedule the room's answer window (RULES.md §5.2)."""
        if not any(e.get("type") == "announce" for e in events) or record.state is None:
            return
        marker = answer_marker(record)
        if marker is None:
            return
        await self.store.schedule(
            Deadline(
                room=record.id,
                kind=ANSWER_TIMEOUT,
                due=time.time() + self.settings.answer_window_seconds,
                payload={"marker": marker},
            )
        )


def answer_marker(record: RoomRecord) -> list[Any] | None:
    """Identity of the announcement awaiting answers in a room, or None if there is none:
    ``[games_played, deal_number, owner seat, kind, announced]``."""
    if record.state is None:
        return None
    pub = engine.view(engine.GameState.from_dict(record.state), None)
    if pub.get("phase") != "show":
        return None
    pending = (pub.get("show") or {}).get("pending")
    if not pending or pending.get("announced") is None or not pending.get("awaiting"):
        return None
    return [
        pub.get("games_played"),
        pub.get("deal_number"),
        pending.get("seat"),
        pending.get("kind"),
        pending.get("announced"),
    ]
