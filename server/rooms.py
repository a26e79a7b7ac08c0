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
import string
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import engine

from . import room_settings
from .deadline_plan import ANSWER_TIMEOUT, COMPUTER_TURN, answer_marker_of, plan
from .settings import Settings
from .store.base import Commit, CommitResult, RoomRecord, RoomStore, SeatRecord
from .tokens import TokenIssuer

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 20
"""Commits tried per change before giving up with ``busy`` (conflicts are rare and short)."""

LEVELS = ("easy", "standard")
"""Computer levels (``engine.computer.decide``)."""

__all__ = [
    "ANSWER_TIMEOUT", "COMPUTER", "COMPUTER_TURN", "LEVELS", "ActResult", "JoinResult",
    "RoomError", "RoomService", "answer_marker",
]

GameFactory = Callable[[engine.GameOptions, str], tuple[engine.GameState, list[dict]]]
"""Starts a game from options and a seed (default ``engine.new_game``; tests stack decks)."""

CommitHook = Callable[[RoomRecord, list[dict]], Awaitable[None]]
"""Called after each accepted change with the new record and its (full) events."""

DeadlineListener = Callable[[float], None]
"""Told the earliest due time (Unix seconds) of the deadlines a commit of this process
stored (the local sweeper uses it to wake up in time)."""


class ComputerCredential:
    """The credential the server's computer players act with (:data:`COMPUTER`).

    It authorises an action for a seat only while the fresh room record says the server's
    computer plays that seat (a computer seat, or a stand-in for an absent human); it is
    never sent anywhere.
    """

    def __repr__(self) -> str:
        return "COMPUTER"


COMPUTER = ComputerCredential()
"""Pass as ``token`` to :meth:`RoomService.act` for a computer-played seat."""


class RoomError(Exception):
    """A request the room service refuses; nothing changed.

    Attributes:
        code: ``room_not_found``, ``bad_seat``, ``seat_taken``, ``bad_token``,
            ``not_started``, ``bad_options``, ``busy``; ``conflict`` only from
            :meth:`RoomService.act` with ``expected_version`` (the room moved on).
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


_ROOM_ID_ALPHABET = string.ascii_letters + string.digits


def new_room_id() -> str:
    """A fresh room id: 10 letters and digits (about 59.5 random bits).

    Letters and digits only, so an id never starts with ``-`` (which a command line such
    as ``cribbage-bot URL ROOM SEAT`` would read as an option) and reads well in a link.
    """
    return "".join(secrets.choice(_ROOM_ID_ALPHABET) for _ in range(10))


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
        state: ``record.state`` as the engine's :class:`engine.GameState` (never to be
            mutated), or None with ``record``.
    """

    version: int
    duplicate: bool
    record: RoomRecord | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    state: engine.GameState | None = None


class RoomService:
    """Creates rooms, seats players and applies actions, through one store.

    Args:
        store: where rooms live.
        settings: server settings (room TTL, answer window).
        game_factory: how a game starts (default ``engine.new_game(options, seed)``).
        seed_factory: where engine seeds come from (default :func:`new_seed`).
        tokens: makes and recognises player, seat and creator tokens (default: a
            :class:`server.tokens.TokenIssuer` with a secret of this process only; the app
            gives it the deployment's shared secret).
    """

    def __init__(
        self,
        store: RoomStore,
        settings: Settings,
        *,
        game_factory: GameFactory | None = None,
        seed_factory: Callable[[], str] | None = None,
        tokens: TokenIssuer | None = None,
    ) -> None:
        self.store = store
        self.tokens = tokens or TokenIssuer(secrets.token_bytes(32))
        self.settings = settings
        self.game_factory = game_factory or (lambda opts, seed: engine.new_game(opts, seed))
        self.seed_factory = seed_factory or new_seed
        self.commit_hooks: list[CommitHook] = []
        self.deadline_listeners: list[DeadlineListener] = []
        self._cache: dict[str, tuple[RoomRecord, engine.GameState | None]] = {}

    # -- cache of records of rooms this process follows ---------------------------------
    def remember(self, record: RoomRecord, state: engine.GameState | None = None) -> None:
        """Keep ``record`` as the latest known state of its room (if newer).

        Args:
            record: the room.
            state: ``record.state`` as a :class:`engine.GameState` if the caller has it
                (the next action on the room then starts from it instead of decoding
                ``record.state`` again). The engine never mutates a state it is given,
                and nothing else may.
        """
        cur = self._cache.get(record.id)
        if (
            cur is None
            or cur[0].version < record.version
            or (cur[0].version == record.version and cur[1] is None and state is not None)
        ):
            self._cache[record.id] = (record, state)

    def forget(self, room_id: str) -> None:
        """Drop the cached record of a room (when no local connection follows it)."""
        self._cache.pop(room_id, None)

    # -- rooms -------------------------------------------------------------------------
    async def create_room(
        self,
        options: dict[str, Any],
        computers: dict[int, str] | None = None,
        room: dict[str, Any] | None = None,
    ) -> tuple[RoomRecord, str]:
        """Create a room, with computer players at some seats.

        Args:
            options: engine options as plain data (see ``engine.GameOptions``).
            computers: seat -> level (``easy`` / ``standard``) of the seats given to
                computer players now. When they fill every seat the game starts at once.
            room: room settings (``server.room_settings.resolve``); None for the defaults.

        Returns:
            ``(record, creator_token)``: the record after the computers sat down.

        Raises:
            RoomError: ``bad_options`` (bad engine options, room settings, computer seat or
                level), ``busy``.
        """
        try:
            opts = engine.GameOptions.from_dict(dict(options))
            chosen = room_settings.resolve(room, self.settings)
        except (ValueError, TypeError) as exc:
            raise RoomError("bad_options", str(exc)) from None
        bots = {int(k): v for k, v in (computers or {}).items()}
        for seat, level in bots.items():
            if not 0 <= seat < opts.players:
                raise RoomError("bad_options", f"no seat {seat} for a computer player")
            if level not in LEVELS:
                raise RoomError("bad_options", "computer level must be easy or standard")
        creator = self.tokens.issue()
        now = time.time()
        for _ in range(10):
            record = RoomRecord(
                id=new_room_id(),
                version=0,
                options=opts.effective().to_dict(),
                seats=tuple(SeatRecord() for _ in range(opts.players)),
                state=None,
                seed=self.seed_factory(),
                creator_hash=hash_token(creator),
                created=now,
                updated=now,
                settings=chosen,
            )
            if await self.store.create(record):
                break
        else:  # pragma: no cover
            raise RoomError("busy", "could not allocate a room id")
        if bots:
            record = await self._seat_computers(record.id, bots)
        return record, creator

    def room_settings(self, record: RoomRecord) -> dict[str, Any]:
        """The room's effective settings (``server.room_settings``)."""
        return room_settings.of_room(record.settings, self.settings)

    async def set_computer(
        self, room_id: str, seat: int, level: str, creator_token: str
    ) -> RoomRecord:
        """Give an empty seat to a computer player (only the room's creator may).

        Args:
            room_id: the room.
            seat: an open seat.
            level: ``easy`` or ``standard``.
            creator_token: the ``creator_token`` returned when the room was created.

        Returns:
            The record after the change (the game starts if that was the last free seat).

        Raises:
            RoomError: ``room_not_found``, ``bad_token`` (not the creator's token),
                ``bad_seat``, ``seat_taken``, ``bad_options`` (unknown level), ``busy``.
        """
        if level not in LEVELS:
            raise RoomError("bad_options", "computer level must be easy or standard")
        record = await self.load(room_id)
        if not token_matches(creator_token, record.creator_hash):
            raise RoomError("bad_token", "only the room's creator may seat a computer")
        return await self._seat_computers(room_id, {seat: level})

    async def _seat_computers(self, room_id: str, bots: dict[int, str]) -> RoomRecord:
        for attempt in range(MAX_ATTEMPTS):
            record = await self.load(room_id)
            seats = list(record.seats)
            events: list[dict[str, Any]] = []
            for seat, level in sorted(bots.items()):
                if not 0 <= seat < len(seats):
                    raise RoomError("bad_seat", f"seats are 0..{len(seats) - 1}")
                if seats[seat].taken:
                    raise RoomError("seat_taken", f"seat {seat} is taken")
                name = f"Computer ({level})"
                seats[seat] = SeatRecord(name=name, kind="computer", level=level)
                events.append({"type": "seat_taken", "seat": seat, "name": name,
                               "kind": "computer", "level": level})
            new, result = await self._commit_seats(
                record, seats, events,
                {"computers": {str(k): v for k, v in bots.items()}, "events": events},
            )
            if result.status == "ok":
                return new
            if result.status == "missing":
                raise RoomError("room_not_found", f"no room {room_id!r}")
            await self._backoff(attempt)
        raise RoomError("busy", "the room is too busy; try again")

    async def set_standin(self, room_id: str, seat: int, active: bool) -> RoomRecord | None:
        """Start or end a computer's stand-in for a human seat.

        Starting (``active``) needs a human seat of a game in progress that is not already
        stood in for; ending needs a stood-in seat. The change is a commit with the server
        event ``{"type": "computer_standin", "seat", "name", "active"}`` (each process turns
        it into a ``presence`` frame with ``computer_standin``).

        Returns:
            The new record, or None when there was nothing to change (or no such room).

        Raises:
            RoomError: ``busy``.
        """
        for attempt in range(MAX_ATTEMPTS):
            record, _ = await self.store.load(room_id)
            if record is None or not 0 <= seat < len(record.seats):
                return None
            info = record.seats[seat]
            if info.kind != "human" or info.standin == active:
                return None
            if active and record.status != "playing":
                return None
            new, result = await self._commit_standin(record, seat, active)
            if result.status == "ok":
                return new
            if result.status == "missing":
                return None
            await self._backoff(attempt)
        raise RoomError("busy", "the room is too busy; try again")

    async def _commit_standin(
        self, record: RoomRecord, seat: int, active: bool
    ) -> tuple[RoomRecord, CommitResult]:
        seats = list(record.seats)
        seats[seat] = replace(seats[seat], standin=active)
        events = [{"type": "computer_standin", "seat": seat, "name": seats[seat].name,
                   "active": active}]
        new = record.evolve(version=record.version + 1, seats=tuple(seats), updated=time.time())
        state = engine.GameState.from_dict(new.state) if new.state is not None else None
        clear = () if active else (f"{COMPUTER_TURN}|{seat}",)
        result = await self._commit(
            record, new, state, events, action_key=None,
            log_entry={"seat": seat, "standin": active, "events": events},
            seats_changed=True, extra_clear=clear,
        )
        return new, result

    async def _commit_seats(
        self,
        record: RoomRecord,
        seats: list[SeatRecord],
        events: list[dict[str, Any]],
        log_entry: dict[str, Any],
    ) -> tuple[RoomRecord, CommitResult]:
        """Commit new ``seats`` for ``record`` as the next version, starting the game when
        the last seat is taken (its start events are appended to ``events``).

        Returns:
            ``(new_record, result)``: ``result.status`` is ``ok``, ``conflict`` or
            ``missing``; the caller retries on a conflict.
        """
        game, start_events = self._maybe_start(record, seats)
        events.extend(start_events)
        new = record.evolve(
            version=record.version + 1, seats=tuple(seats),
            state=game.to_dict() if game is not None else record.state,
            updated=time.time(),
        )
        result = await self._commit(
            record, new, game, events, action_key=None, log_entry=log_entry,
            seats_changed=True,
        )
        return new, result

    def _maybe_start(
        self, record: RoomRecord, seats: list[SeatRecord]
    ) -> tuple[engine.GameState | None, list[dict[str, Any]]]:
        """Start the game if ``seats`` are all taken and it has not started."""
        if record.state is None and all(s.taken for s in seats):
            game, start_events = self.game_factory(
                engine.GameOptions.from_dict(record.options), record.seed
            )
            return game, list(start_events)
        return None, []

    async def _commit(
        self,
        old: RoomRecord,
        new: RoomRecord,
        state: engine.GameState | None,
        events: list[dict[str, Any]],
        *,
        action_key: str | None,
        log_entry: dict[str, Any],
        seats_changed: bool = False,
        extra_clear: tuple[str, ...] = (),
    ) -> CommitResult:
        """Commit ``new`` over ``old`` with the deadlines it leaves due (one atomic store
        operation), then run the commit hooks and tell the deadline listeners."""
        now = time.time()
        if state is None and new.state is not None:
            state = engine.GameState.from_dict(new.state)
        sets, clear = plan(
            new, state, events, now=now,
            answer_window=float(self.room_settings(new)["answer_window"]),
            bot_delay=self.settings.bot_delay_seconds,
        )
        result = await self.store.commit(
            Commit(
                record=new,
                expected_version=old.version,
                action_key=action_key,
                log_entry=log_entry,
                events=events,
                seats_changed=seats_changed,
                state=state,
                deadlines=sets,
                clear=clear + tuple(c for c in extra_clear if c not in clear),
            )
        )
        if result.status == "ok":
            self.remember(new, state)
            if sets:
                first = min(d.due for d in sets)
                for listener in self.deadline_listeners:
                    try:
                        listener(first)
                    except Exception:
                        log.exception("deadline listener failed")
            await self._after_commit(new, events)
        return result

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
                if current.kind == "human" and token_matches(token, current.token_hash):
                    if not current.standin:
                        return JoinResult(record, seat, True)
                    # The owner is back: the computer's stand-in ends.
                    new, result = await self._commit_standin(record, seat, False)
                    if result.status == "ok":
                        return JoinResult(new, seat, True)
                    if result.status == "missing":
                        raise RoomError("room_not_found", f"no room {room_id!r}")
                    await self._backoff(attempt)
                    continue
                if token_given and current.kind == "human":
                    raise RoomError("bad_token", f"that token does not hold seat {seat}")
                raise RoomError("seat_taken", f"seat {seat} is taken by someone else")
            token_hash = hash_token(token)
            if any(s.kind == "human" and s.token_hash == token_hash for s in record.seats):
                raise RoomError(
                    "already_seated", "this token already holds a seat in this room"
                )
            seats = list(record.seats)
            seats[seat] = SeatRecord(name=name, token_hash=token_hash, kind="human")
            events: list[dict[str, Any]] = [{"type": "seat_taken", "seat": seat, "name": name}]
            new, result = await self._commit_seats(
                record, seats, events, {"seat": seat, "join": name, "events": events}
            )
            if result.status == "ok":
                return JoinResult(new, seat, False)
            if result.status == "missing":
                raise RoomError("room_not_found", f"no room {room_id!r}")
            await self._backoff(attempt)
        raise RoomError("busy", "the room is too busy; try again")

    async def act(
        self,
        room_id: str,
        seat: int,
        token: str | ComputerCredential,
        action_id: str,
        action: dict[str, Any],
        *,
        expected_version: int | None = None,
    ) -> ActResult:
        """Apply a seat's action exactly once.

        Args:
            room_id: the room.
            seat: the acting seat.
            token: the seat token (checked against the room's stored hash), or
                :data:`COMPUTER` for a seat the server's computer plays (checked against the
                fresh record: a computer seat, or a human seat during a stand-in).
            action_id: client-chosen id; a re-sent id is answered with the first result.
            action: an engine action (plain data).
            expected_version: apply only to this version of the room: when the room has
                moved on, raise ``conflict`` instead of re-applying the action to the newer
                version (a computer decides again from the newer view).

        Returns:
            :class:`ActResult`.

        Raises:
            RoomError: ``room_not_found``, ``bad_token``, ``not_started``, ``busy``,
                ``conflict`` (only with ``expected_version``).
            engine.RulesError: the engine refused the action (the room is unchanged).
        """
        key = f"{seat}:{action_id}"
        cached = self._cache.get(room_id) if expected_version is None else None
        record, state = cached if cached is not None else (None, None)
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
                if expected_version is not None and record.version != expected_version:
                    raise RoomError("conflict", f"the room is at version {record.version}")
                new, new_state, events = self._apply_seat(record, seat, token, action, state)
            except (RoomError, engine.RulesError):
                if fresh:
                    # Perhaps the refusal is a re-sent action that already went through.
                    if record is not None:
                        done = await self.store.action_version(room_id, key)
                        if done is not None:
                            return ActResult(done, True)
                    raise
                record, done = await self.store.load(room_id, key)
                state = None
                fresh = True
                if done is not None:
                    return ActResult(done, True)
                continue
            result = await self._commit(
                record, new, new_state, events, action_key=key,
                log_entry={"seat": seat, "id": action_id, "action": action},
            )
            if result.status == "ok":
                return ActResult(result.version, False, new, events, new_state)
            if result.status == "duplicate":
                return ActResult(result.version, True)
            if result.status == "missing":
                raise RoomError("room_not_found", f"no room {room_id!r}")
            if expected_version is not None:
                raise RoomError("conflict", f"the room is at version {result.version}")
            attempt += 1
            if attempt >= MAX_ATTEMPTS:
                raise RoomError("busy", "the room is too busy; try again")
            await self._backoff(attempt)
            record, done = await self.store.load(room_id, key)
            state = None
            fresh = True
            if done is not None:
                return ActResult(done, True)

    def _apply_seat(
        self, record: RoomRecord, seat: int, token: str | ComputerCredential,
        action: dict[str, Any], state: engine.GameState | None = None,
    ) -> tuple[RoomRecord, engine.GameState, list[dict]]:
        """Check the seat's credential and apply its action to ``record``.

        ``state``: ``record.state`` already decoded (from the cache), or None."""
        if not 0 <= seat < len(record.seats):
            raise RoomError("bad_token", "the token does not hold this seat")
        info = record.seats[seat]
        if token is COMPUTER:
            if not info.automated:
                raise RoomError("bad_token", "the computer does not play this seat now")
        elif not isinstance(token, str) or not token_matches(token, info.token_hash):
            raise RoomError("bad_token", "the token does not hold this seat")
        if record.state is None:
            raise RoomError("not_started", "the game starts when every seat is taken")
        if state is None:
            state = engine.GameState.from_dict(record.state)
        new_state, events = engine.apply(state, seat, action)
        # The record's state shares its containers with new_state: neither is ever mutated
        # (the engine never mutates a state it is given), so a copy is not needed.
        new = record.evolve(
            version=record.version + 1, state=new_state.to_dict(copy=False), updated=time.time()
        )
        return new, new_state, events

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
            result = await self._commit(
                record, new, new_state, events, action_key=None,
                log_entry={"seat": None, "action": action},
            )
            if result.status == "ok":
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

def answer_marker(record: RoomRecord) -> list[Any] | None:
    """Identity of the announcement awaiting answers in a room, or None if there is none:
    ``[games_played, deal_number, owner seat, kind, announced]``."""
    if record.state is None:
        return None
    return answer_marker_of(engine.GameState.from_dict(record.state))
