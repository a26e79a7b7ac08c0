"""The room service: the single write path of every room.

Every change to a room — a seat taken, a player's action, a computer's move, a timer's
system action, a stand-in starting or ending — is a *change function* run by one
transaction loop, :meth:`RoomService.transact`:

1. read the room (from this process's cache of followed rooms, else from the store, with
   what is recorded for the action id when there is one);
2. call the change function with the room and the time: it is pure (no ``await``, no
   clock, no I/O), checks what it must and returns a :class:`Change` (the next version's
   seats, game state and events), a :class:`NoChange`, or raises ``RoomError`` /
   ``engine.RulesError``;
3. plan the deadlines the new record leaves due (``server.deadline_plan``) and commit it
   with one atomic compare-version store operation that also records the action id, logs,
   publishes and writes those deadlines;
4. on a version conflict, read again and go back to 2 (a short random backoff; ``busy``
   after :data:`MAX_ATTEMPTS`). A change computed from a cached record that the function
   refuses is retried once from a fresh read before the refusal counts.

Exactly-once: an action id is recorded with the commit that applies it (with a digest of
the action and the game it was applied in). A re-sent id is answered with the first
outcome; the same id with a different action is refused (``action_id_reused``).

Store failures: ``StoreUnavailable`` (nothing happened) and ``OutcomeUnknown`` (a commit was
sent and its answer lost) from the store are retried once from a fresh read — safe, since a
repeated commit is either a duplicate or a conflict — then passed on to the caller, as
``OutcomeUnknown`` if any attempt's outcome was unknown.

The clock is injected (``clock``), so timing tests need no real sleeps.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import random
import secrets
import string
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

import engine
import engine.computer

from . import room_settings
from .deadline_plan import (
    ANSWER_TIMEOUT,
    ARCHIVE,
    COMPUTER_TURN,
    TAKEOVER,
    answer_marker_of,
    plan,
)
from .names import imitated_label, same_name
from .settings import Settings
from .store.base import (
    Commit,
    Deadline,
    Done,
    OutcomeUnknown,
    RoomRecord,
    RoomStore,
    SeatRecord,
    StoreUnavailable,
    action_digest,
    action_key,
    counts_as_done,
)
from .tokens import TokenIssuer

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 20
"""Commits tried per change before giving up with ``busy`` (conflicts are rare and short)."""

STORE_RETRIES = 1
"""Times a change is retried from a fresh read after a store failure before the failure is
passed on (each store call already waits at most the Redis timeout)."""

LEVELS = engine.computer.LEVELS
"""The computer players' levels: ``easy``, ``standard``, ``expert`` (``engine.computer``)."""

__all__ = [
    "ANSWER_TIMEOUT", "COMPUTER", "COMPUTER_TURN", "LEVELS", "ActResult", "Change",
    "JoinResult", "NoChange", "Outcome", "RecordCache", "Room", "RoomError", "RoomService",
    "answer_marker",
]

GameFactory = Callable[..., tuple[engine.GameState, list[dict]]]
"""Starts a game from options and a seed (default ``engine.new_game``; tests stack decks):
``factory(options, seed)``, and ``factory(options, seed, match=N)`` when the room plays a
match, best of N (room setting ``match`` 3, 5 or 7; docs/rules.md §8)."""

CommitHook = Callable[[RoomRecord, list[dict]], Awaitable[None]]
"""Called after each accepted change with the new record and its (full) events, and after
a room is created with its version-0 record and no events (``server.lobby``)."""

DeadlineListener = Callable[[float], None]
"""Told the earliest due time (Unix seconds) of the deadlines a commit of this process
stored (the local sweeper uses it to wake up in time)."""

Clock = Callable[[], float]
"""Unix time in seconds."""


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
            ``already_seated``, ``bad_name``, ``name_taken``, ``not_started``,
            ``bad_options``, ``busy``,
            ``action_id_reused``; ``conflict`` only from :meth:`RoomService.act` with
            ``expected_version`` (the room moved on).
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


def derived_room_id(digest: bytes) -> str:
    """A room id made from 32 bytes (``TokenIssuer.keyed`` of a request id): 10 letters and
    digits, as :func:`new_room_id` makes them, the same for the same bytes."""
    number = int.from_bytes(digest, "big")
    chars = []
    for _ in range(10):
        number, index = divmod(number, len(_ROOM_ID_ALPHABET))
        chars.append(_ROOM_ID_ALPHABET[index])
    return "".join(chars)


def request_digest(options: dict[str, Any], settings: dict[str, Any],
                   computers: dict[int, str]) -> str:
    """What a room creation asked for, as 16 hex digits (SHA-256 of its canonical JSON):
    the effective options, the resolved room settings and the computers' seats."""
    text = json.dumps({"options": options, "room": settings,
                       "computers": {str(k): v for k, v in sorted(computers.items())}},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


CREATE_ATTEMPTS = 10
"""Room ids tried for one creation (a fresh id is taken only if its id is free)."""


def new_seed() -> str:
    """A fresh engine seed: 128 random bits as hex."""
    return secrets.token_hex(16)


# -- what change functions see and return ---------------------------------------------------

class Room:
    """A room as read for a change: its record and (decoded once, on first use) its game
    state. Neither may be mutated."""

    __slots__ = ("record", "_state", "fresh")

    def __init__(
        self, record: RoomRecord, state: engine.GameState | None = None, fresh: bool = True
    ) -> None:
        self.record = record
        self._state = state
        self.fresh = fresh
        """Whether the record was just read from the store (not this process's cache)."""

    @property
    def state(self) -> engine.GameState | None:
        """The game state, or None before the game starts."""
        if self._state is None and self.record.state is not None:
            self._state = engine.GameState.from_dict(self.record.state)
        return self._state


_UNCHANGED: Any = object()


@dataclass
class Change:
    """The next version of a room, as a change function decides it.

    Attributes:
        events: the change's full (unredacted) events.
        cause: what made it, for the room's log (``{"seat", "id", "action"}`` for an
            action; ``{"join": name, "seat"}``, ...). The log entry is ``cause`` plus
            ``"events"``.
        seats: the new seats, or None when they did not change.
        state: the new game state (default: unchanged).
        actor: the seat whose own action this is (restarts its turn clock), or None.
        timeouts: the new ``RoomRecord.timeouts`` (default: unchanged).
        clear: deadline slots (``"<kind>|<key>"``) to remove besides the planned ones.
        restart: seats whose turn clock starts again with this change
            (``server.deadline_plan.plan``).
        result: what :meth:`RoomService.transact` returns as ``Outcome.result``.
        abandoned: the change abandons the game in progress (``server.archive.worker``).
        closed: the change closes the room for good (:meth:`RoomService.close_room`).
        ttl_seconds: the room's expiry after this change instead of the idle TTL.
    """

    events: list[dict[str, Any]]
    cause: dict[str, Any]
    seats: tuple[SeatRecord, ...] | None = None
    state: Any = _UNCHANGED
    actor: int | None = None
    timeouts: dict[str, int] | None = None
    clear: tuple[str, ...] = ()
    restart: tuple[int, ...] = ()
    result: Any = None
    abandoned: bool = False
    closed: bool = False
    ttl_seconds: int | None = None


@dataclass(frozen=True)
class NoChange:
    """A change function's answer when there is nothing to commit; ``result`` is passed
    on as ``Outcome.result``."""

    result: Any = None


ChangeFn = Callable[[Room, float], "Change | NoChange"]
"""A change function: ``fn(room, now) -> Change | NoChange``; pure; may raise
``RoomError`` or ``engine.RulesError`` (nothing is committed then)."""


@dataclass(frozen=True)
class ActionRef:
    """The action id a change applies, for exactly-once.

    Attributes:
        seat: the acting seat.
        action_id: the client's id.
        digest: ``action_digest(action)``.
        rematch: the action is a ``rematch`` (an id recorded in the previous game counts).
    """

    seat: int
    action_id: str
    digest: str
    rematch: bool = False

    @property
    def key(self) -> str:
        """The store's exactly-once key."""
        return action_key(self.seat, self.action_id)


@dataclass(frozen=True)
class Outcome:
    """What :meth:`RoomService.transact` did.

    Attributes:
        record: the room after the change (or as read, when nothing changed; None for a
            duplicate action id).
        version: the version the change made; for a duplicate, the version the first
            application made; when nothing changed, the version read.
        changed: whether a new version was committed now.
        duplicate: the action id had been applied before (nothing was done now).
        events: the committed change's full events (empty otherwise).
        state: the room's game state after the change (None with ``record`` None or before
            the game starts).
        result: the change function's ``result``.
    """

    record: RoomRecord | None
    version: int
    changed: bool
    duplicate: bool = False
    events: list[dict[str, Any]] = field(default_factory=list)
    state: engine.GameState | None = None
    result: Any = None


@dataclass(frozen=True)
class JoinResult:
    """The outcome of :meth:`RoomService.join`.

    Attributes:
        record: the room after the join.
        seat: the seat taken or resumed, or None for a spectator.
        resumed: True when the seat was already held by this token.
        events: the join's full events when it committed a change (a seat taken, the game
            started, a stand-in ended), else empty.
    """

    record: RoomRecord
    seat: int | None
    resumed: bool
    events: list[dict[str, Any]] = field(default_factory=list)


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


class RecordCache:
    """The latest known record (and decoded state) of the rooms this process follows.

    Only followed rooms are kept (``server.fanout.LocalRooms`` follows a room while it has a
    local session, and stops when its last one leaves, dropping what was kept), and at most
    ``limit`` of them: past that the least recently used record is dropped (its room is then
    read from the store, as an unfollowed one is). So the cache is bounded both by this
    process's connections and by the ``record_cache_rooms`` setting.

    Args:
        limit: most records kept.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._followed: set[str] = set()
        self._kept: OrderedDict[str, tuple[RoomRecord, engine.GameState | None]] = (
            OrderedDict()
        )

    def follow(self, room_id: str) -> None:
        """Start keeping the room's latest record."""
        self._followed.add(room_id)

    def unfollow(self, room_id: str) -> None:
        """Stop keeping it (and drop what was kept)."""
        self._followed.discard(room_id)
        self._kept.pop(room_id, None)

    def get(self, room_id: str) -> tuple[RoomRecord, engine.GameState | None] | None:
        """``(record, state or None)`` if kept."""
        hit = self._kept.get(room_id)
        if hit is not None:
            self._kept.move_to_end(room_id)
        return hit

    def put(self, record: RoomRecord, state: engine.GameState | None = None) -> None:
        """Keep ``record`` if its room is followed and it is newer than what is kept (or
        the same version with the decoded state where none was kept); drop the least
        recently used record past ``limit``."""
        if record.id not in self._followed:
            return
        cur = self._kept.get(record.id)
        if (
            cur is None
            or cur[0].version < record.version
            or (cur[0].version == record.version and cur[1] is None and state is not None)
        ):
            self._kept[record.id] = (record, state)
        self._kept.move_to_end(record.id)
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)

    @property
    def followed(self) -> int:
        """Rooms followed."""
        return len(self._followed)

    def __len__(self) -> int:
        """Records kept (at most ``limit``)."""
        return len(self._kept)


class RoomService:
    """Creates rooms, seats players and applies actions, through one store.

    Args:
        store: where rooms live.
        settings: server settings (room TTL, answer window, bot delay, turn clock).
        game_factory: how a game starts (default ``engine.new_game(options, seed)``).
        seed_factory: where engine seeds come from (default :func:`new_seed`).
        tokens: makes and recognises player, seat and creator tokens (default: a
            :class:`server.tokens.TokenIssuer` with a secret of this process only; the app
            gives it the deployment's shared secret).
        clock: Unix time in seconds (default ``time.time``; tests pass a fake one).
    """

    def __init__(
        self,
        store: RoomStore,
        settings: Settings,
        *,
        game_factory: GameFactory | None = None,
        seed_factory: Callable[[], str] | None = None,
        tokens: TokenIssuer | None = None,
        clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.tokens = tokens or TokenIssuer(secrets.token_bytes(32))
        self.settings = settings
        self._room_defaults: dict[str, Any] | None = None
        """``room_settings.resolve(None, settings)``, made on first use."""
        self.game_factory = game_factory or (
            lambda opts, seed, match=1: engine.new_game(opts, seed, match=match))
        self.seed_factory = seed_factory or new_seed
        self.clock = clock
        self.commit_hooks: list[CommitHook] = []
        self.banned: Callable[[str | None], bool] = lambda player: False
        """Whether a moderator banned a player (``server.moderation``'s cache; the app sets
        it): a banned player's seat is not taken back, not even with its seat token."""
        self.deadline_listeners: list[DeadlineListener] = []
        self.cache = RecordCache(settings.record_cache_rooms)
        self.presence: Any = None
        """This process's ``server.presence.Presence`` (set by the app): connections come
        and go through :meth:`seat_connected` / :meth:`seat_disconnected`."""
        self.conflicts = 0
        """Commits refused for a version conflict (and retried) since start."""
        self.abandon_after = abandon_after(settings)
        """Seconds a room with a game in progress may stay idle before that game is
        abandoned and archived as such (``server.archive``)."""

    # -- the transaction loop -------------------------------------------------------------
    async def transact(
        self,
        room_id: str,
        change: ChangeFn,
        *,
        action: ActionRef | None = None,
        cached: bool = True,
        missing_ok: bool = False,
    ) -> Outcome | None:
        """Run ``change`` on the room and commit what it returns, retrying on conflicts.

        Args:
            room_id: the room.
            change: the change function (see :data:`ChangeFn`).
            action: the action id the change applies (exactly-once), if any.
            cached: start from this process's cached record when it has one (a refusal or a
                conflict then retries from a fresh read).
            missing_ok: return None for a missing room instead of raising.

        Returns:
            An :class:`Outcome` (None only for a missing room with ``missing_ok``).

        Raises:
            RoomError: what the change function raised; ``room_not_found``; ``busy``
                after :data:`MAX_ATTEMPTS` conflicts; ``action_id_reused``.
            engine.RulesError: what the change function raised (from a fresh read).
            StoreUnavailable: the store could not be reached; nothing was done.
            OutcomeUnknown: a commit's outcome is unknown (repeat the request to learn it).
        """
        key = action.key if action is not None else None
        hit = self.cache.get(room_id) if cached else None
        record, state = hit if hit is not None else (None, None)
        conflicts = 0
        failures = 0
        unknown = False
        while True:
            fresh = record is None
            if fresh:
                try:
                    record, done = await self.store.load(room_id, key)
                except StoreUnavailable:
                    if unknown:
                        raise OutcomeUnknown("the store stopped answering") from None
                    raise
                state = None
                if record is None:
                    if missing_ok:
                        return None
                    raise RoomError("room_not_found", f"no room {room_id!r}")
                if done is not None and action is not None:
                    dup = self._duplicate(done, record.game_number, action)
                    if dup is not None:
                        return dup
            room = Room(record, state, fresh)
            now = self.clock()
            try:
                decided = change(room, now)
            except (RoomError, engine.RulesError) as exc:
                if fresh or (isinstance(exc, RoomError) and exc.code == "busy"):
                    raise
                record = state = None  # maybe the cache was stale: decide again, fresh
                continue
            if isinstance(decided, NoChange):
                return Outcome(room.record, room.record.version, False, state=room.state,
                               result=decided.result)
            self._rated_rules(room, decided)
            new, new_state, commit = self._prepare(room, decided, now, action)
            try:
                result = await self.store.commit(commit)
            except (StoreUnavailable, OutcomeUnknown) as exc:
                unknown = unknown or isinstance(exc, OutcomeUnknown)
                failures += 1
                if failures > STORE_RETRIES:
                    if unknown and isinstance(exc, StoreUnavailable):
                        raise OutcomeUnknown(str(exc)) from exc
                    raise
                await self._backoff(failures)
                record = state = None
                continue
            if result.status == "ok":
                self._committed(new, new_state, commit)
                await self._after_commit(new, decided.events)
                return Outcome(new, result.version, True, events=decided.events,
                               state=new_state, result=decided.result)
            if result.status == "duplicate" and action is not None:
                dup = self._duplicate(
                    Done(action.key, result.version, result.digest, record.game_number),
                    record.game_number, action,
                )
                assert dup is not None
                return dup
            if result.status == "missing":
                if missing_ok:
                    return None
                raise RoomError("room_not_found", f"no room {room_id!r}")
            conflicts += 1
            self.conflicts += 1
            if conflicts >= MAX_ATTEMPTS:
                raise RoomError("busy", "the room is too busy; try again")
            await self._backoff(conflicts)
            record = state = None

    @staticmethod
    def _duplicate(done: Done, game: int, action: ActionRef) -> Outcome | None:
        """The outcome of an action id found recorded, or None if it does not count (an
        id of an earlier game)."""
        if not counts_as_done(done.game, game, action.rematch):
            return None
        if done.digest and done.digest != action.digest:
            raise RoomError(
                "action_id_reused",
                f"action id {action.action_id!r} was used for another action in this game",
            )
        return Outcome(None, done.version, False, duplicate=True)

    def _prepare(
        self, room: Room, change: Change, now: float, action: ActionRef | None
    ) -> tuple[RoomRecord, engine.GameState | None, Commit]:
        """The new record and the commit of ``change`` (deadlines and turn clock planned)."""
        old = room.record
        if change.state is _UNCHANGED:
            new_state = room.state
            state_data = old.state
        else:
            new_state = change.state
            state_data = new_state.to_dict(copy=False) if new_state is not None else None
        new = old.evolve(
            version=old.version + 1,
            seats=change.seats if change.seats is not None else old.seats,
            state=state_data,
            updated=now,
            timeouts=change.timeouts if change.timeouts is not None else old.timeouts,
        )
        if any(e.get("type") == "game_start" for e in change.events):
            new = new.evolve(game_from=new.version, game_started=now)
        if change.abandoned:
            new = new.evolve(abandoned=True)
        if change.closed:
            new = new.evolve(closed=True)
        chosen = self.room_settings(new)
        turn_seconds = chosen.get("turn_seconds")
        planned = plan(
            new, new_state, change.events, now=now,
            answer_window=float(chosen["answer_window"]),
            bot_delay=self.settings.bot_delay_seconds,
            turn_seconds=turn_seconds,
            before=room.state if turn_seconds else None,
            actor=change.actor,
            restart=change.restart,
            abandon_after=self.abandon_after,
            rated=bool(chosen.get("rated")),
        )
        if planned.clock != new.clock:
            new = new.evolve(clock=planned.clock)
        clear = planned.clear + tuple(c for c in change.clear if c not in planned.clear)
        commit = Commit(
            record=new,
            expected_version=old.version,
            action_key=action.key if action else None,
            log_entry={**change.cause, "events": change.events},
            events=change.events,
            seats_changed=change.seats is not None,
            state=new_state,
            deadlines=planned.sets,
            clear=clear,
            action_digest=action.digest if action else "",
            action_game=old.game_number,
            previous_game_ok=bool(action and action.rematch),
            outbox=(new.game_number, new.game_from)
            if any(d.kind == ARCHIVE for d in planned.sets) else None,
            ttl_seconds=change.ttl_seconds,
        )
        return new, new_state, commit

    def _committed(
        self, record: RoomRecord, state: engine.GameState | None, commit: Commit
    ) -> None:
        self.cache.put(record, state)
        if commit.deadlines:
            first = min(d.due for d in commit.deadlines)
            for listener in self.deadline_listeners:
                try:
                    listener(first)
                except Exception:
                    log.exception("deadline listener failed")

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

    # -- reading ---------------------------------------------------------------------------
    async def load(self, room_id: str) -> RoomRecord:
        """The room's current record (read from the store).

        Raises:
            RoomError: ``room_not_found``. StoreUnavailable: the store is down.
        """
        record, _ = await self.store.load(room_id)
        if record is None:
            raise RoomError("room_not_found", f"no room {room_id!r}")
        self.cache.put(record)
        return record

    def remember(self, record: RoomRecord, state: engine.GameState | None = None) -> None:
        """Keep ``record`` as the latest known state of its room, if followed (see
        :class:`RecordCache`)."""
        self.cache.put(record, state)

    def room_settings(self, record: RoomRecord) -> dict[str, Any]:
        """The room's effective settings (``server.room_settings``)."""
        defaults = self._room_defaults
        if defaults is None:
            defaults = self._room_defaults = room_settings.resolve(None, self.settings)
        return room_settings.of_room(record.settings, self.settings, defaults)

    # -- rooms -----------------------------------------------------------------------------
    async def create_room(
        self,
        options: dict[str, Any],
        computers: dict[int, str] | None = None,
        room: dict[str, Any] | None = None,
        request_id: str | None = None,
        language: str | None = None,
    ) -> tuple[RoomRecord, str]:
        """Create a room, with computer players at some seats.

        Args:
            options: engine options as plain data (see ``engine.GameOptions``).
            computers: seat -> level (``easy`` / ``standard``) of the seats given to
                computer players now. When they fill every seat the game starts at once.
            room: room settings (``server.room_settings.resolve``); None for the defaults.
            request_id: the client's id for this request (docs/protocol.md,
                ``create_room``), or None. With one, asking again (from any process, after
                ``outcome_unknown`` or a lost answer) gives the same room and creator
                token: both are derived from the id under the deployment's secret
                (``TokenIssuer.keyed``), so the room's own key is the record of the request
                (on a Redis Cluster in the room's own slot) and nothing else is stored but
                a digest of what was asked for (``RoomRecord.request``). A repeat whose
                computers are not all seated yet (the first attempt failed between the
                room and its computers) seats them.
            language: the table's language when ``room`` names none (the creator's
                ``hello.language``; ``server.room_settings``).

        Returns:
            ``(record, creator_token)``: the record after the computers sat down.

        Raises:
            RoomError: ``bad_options`` (bad engine options, room settings, computer seat or
                level), ``rated_options`` / ``rated_turn_clock`` (a rated room with other
                options than the standard game to 121, or a turn clock outside 30–120 s:
                ``server.room_settings``), ``request_id_reused`` (the id made a room with
                other options, settings or computers), ``busy``. StoreUnavailable,
                OutcomeUnknown: the store failed (nothing was made, or maybe the room: ask
                again with the same ``request_id`` to know).
        """
        try:
            opts = engine.GameOptions.from_dict(dict(options))
        except (ValueError, TypeError) as exc:
            raise RoomError("bad_options", str(exc)) from None
        try:
            chosen = room_settings.resolve(room, self.settings, opts.effective().to_dict(),
                                           language)
        except room_settings.RoomSettingsError as exc:
            raise RoomError(exc.code, str(exc)) from None
        bots = {int(k): v for k, v in (computers or {}).items()}
        for seat, level in bots.items():
            if not 0 <= seat < opts.players:
                raise RoomError("bad_options", f"no seat {seat} for a computer player")
            if level not in LEVELS:
                raise RoomError("bad_options", "computer level must be easy, standard or expert")
        effective = opts.effective().to_dict()
        digest = ""
        if request_id is None:
            creator = self.tokens.issue("creator")
        else:
            digest = request_digest(effective, chosen, bots)
            creator = self.tokens.derive(b"create_room:" + request_id.encode(), "creator")
        creator_hash = hash_token(creator)
        now = self.clock()
        for attempt in range(CREATE_ATTEMPTS):
            if request_id is None:
                room_id = new_room_id()
            else:
                room_id = derived_room_id(self.tokens.keyed(
                    b"room_id:%d:" % attempt + request_id.encode()))
            record = RoomRecord(
                id=room_id,
                version=0,
                options=effective,
                seats=tuple(SeatRecord() for _ in range(opts.players)),
                state=None,
                seed=self.seed_factory(),
                creator_hash=creator_hash,
                created=now,
                updated=now,
                settings=chosen,
                request=digest,
            )
            if await self.store.create(record):
                await self._after_commit(record, [])
                break
            if request_id is None:
                continue
            existing, _ = await self.store.load(room_id)
            if existing is None:  # expired between the two: take the id now
                if await self.store.create(record):
                    await self._after_commit(record, [])
                    break
                existing, _ = await self.store.load(room_id)
            if existing is not None and token_matches(creator, existing.creator_hash):
                # This request made it (only the secret and this id give that token).
                if existing.request != digest:
                    raise RoomError("request_id_reused", "this request_id already created "
                                    "a room with other options, settings or computers")
                return await self._finish_computers(existing, bots), creator
            # Another room holds this id (about 1 in 2^59): the request's next id.
        else:  # pragma: no cover
            raise RoomError("busy", "could not allocate a room id")
        if bots:
            record = await self._finish_computers(record, bots)
        return record, creator

    async def _finish_computers(self, record: RoomRecord, bots: dict[int, str]) -> RoomRecord:
        """Seat the requested computers not seated yet — all of them for a new room; for a
        repeated creation those the first attempt did not get to — and return the room as
        it is now. A seat found taken means a commit of this creation whose answer was
        lost (the room service's retry, or a repeat racing this one) seated it: nobody else
        knows the room yet."""
        missing = {seat: level for seat, level in bots.items()
                   if not (record.seats[seat].kind == "computer"
                           and record.seats[seat].level == level)}
        if not missing:
            return record
        try:
            return await self._seat_computers(record.id, missing)
        except RoomError as exc:
            if exc.code != "seat_taken":
                raise
            # A repeat racing this one seated them first.
            fresh, _ = await self.store.load(record.id)
            if fresh is None:
                raise RoomError("room_not_found", "the room expired") from None
            return fresh

    async def set_computer(
        self, room_id: str, seat: int, level: str, creator_token: str
    ) -> RoomRecord:
        """Give an empty seat to a computer player (only the room's creator may).

        Returns:
            The record after the change (the game starts if that was the last free seat).

        Raises:
            RoomError: ``room_not_found``, ``bad_token`` (not the creator's token),
                ``bad_seat``, ``seat_taken``, ``bad_options`` (unknown level), ``busy``.
        """
        if level not in LEVELS:
            raise RoomError("bad_options", "computer level must be easy, standard or expert")
        return await self._seat_computers(room_id, {seat: level}, creator_token)

    async def _seat_computers(
        self, room_id: str, bots: dict[int, str], creator_token: str | None = None
    ) -> RoomRecord:
        def change(room: Room, now: float) -> Change:
            record = room.record
            if creator_token is not None and not token_matches(
                creator_token, record.creator_hash
            ):
                raise RoomError("bad_token", "only the room's creator may seat a computer")
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
            return self._seats_change(
                record, seats, events,
                {"computers": {str(k): v for k, v in bots.items()}},
            )

        outcome = await self.transact(room_id, change, cached=False)
        assert outcome is not None and outcome.record is not None
        return outcome.record

    def _seats_change(
        self,
        record: RoomRecord,
        seats: list[SeatRecord],
        events: list[dict[str, Any]],
        cause: dict[str, Any],
        result: Any = None,
    ) -> Change:
        """A change of seats, starting the game when the last seat is taken (its start
        events follow ``events``)."""
        change = Change(events, cause, seats=tuple(seats), result=result)
        if record.state is None and all(s.taken for s in seats):
            options = engine.GameOptions.from_dict(record.options)
            best_of = self.room_settings(record).get("match", 1)
            if best_of == 1:
                game, start_events = self.game_factory(options, record.seed)
            else:
                game, start_events = self.game_factory(options, record.seed, match=best_of)
            change.state = game
            change.events = events + list(start_events)
        return change

    async def join(
        self, room_id: str, seat: int | None, token: str, name: str, *, token_given: bool = False,
        player: str | None = None, player_token: str | None = None,
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
            player: the id of the connection's player (``server.players``), or None. A free
                seat taken with a player records it (``SeatRecord.player``) and is bound to
                ``player_token``; a player holds at most one seat of a room.
            player_token: the player's seat token of this seat (derived from room, seat
                and player by the session): it resumes the player's seat from any of its
                connections, without the token the seat was first given to the client.

        Returns:
            A :class:`JoinResult`. Taking the last free seat starts the game
            (``engine.new_game`` with the room's seed); resuming a seat a computer stands in
            for ends the stand-in.

        Raises:
            RoomError: ``room_not_found``, ``bad_seat``, ``seat_taken``, ``bad_token``,
                ``already_seated``, ``busy``; taking a free seat of a rated room without a
                player, ``player_required`` (resuming a seat or watching needs none);
                taking a free seat, ``bad_name`` (the name
                reads like one of the table's own labels, ``server.names.imitated_label``)
                or ``name_taken`` (it reads like another seat's name,
                ``server.names.same_name``). StoreUnavailable, OutcomeUnknown.
        """
        token_hash = hash_token(token)
        owned_hash = hash_token(player_token) if player is not None and player_token else None

        def change(room: Room, now: float) -> Change | NoChange:
            record = room.record
            if record.closed:
                raise RoomError("room_closed", "a moderator closed this room")
            if seat is None:
                return NoChange((None, False))
            if not 0 <= seat < len(record.seats):
                raise RoomError("bad_seat", f"seats are 0..{len(record.seats) - 1}")
            current = record.seats[seat]
            if current.taken:
                if current.kind == "human" and (
                        token_matches(token, current.token_hash) or (
                            owned_hash is not None and current.player == player
                            and token_matches(player_token, current.token_hash))):
                    if current.player and self.banned(current.player):
                        raise RoomError("banned", "a moderator banned this seat's player")
                    if not current.standin:
                        return NoChange((seat, True))
                    # The owner is back: the computer's stand-in ends.
                    return self._standin_change(record, seat, False, result=(seat, True))
                if token_given and current.kind == "human":
                    raise RoomError("bad_token", f"that token does not hold seat {seat}")
                raise RoomError("seat_taken", f"seat {seat} is taken by someone else")
            if player is None and self.room_settings(record)["rated"]:
                raise RoomError(
                    "player_required", "a rated room's seats take players only: say hello "
                    "with your player (hello.player) and join again, or watch",
                )
            if any(s.kind == "human" and (s.token_hash == token_hash or (
                    player is not None and s.player == player)) for s in record.seats):
                raise RoomError(
                    "already_seated", "this token already holds a seat in this room"
                )
            if imitated_label(name):
                raise RoomError(
                    "bad_name", f"{name!r} reads like one of the table's own labels "
                    "(You, Computer, Seat 2, …, in English, Danish or Swedish); choose "
                    "another name",
                )
            if any(s.taken and s.name and same_name(s.name, name) for s in record.seats):
                raise RoomError(
                    "name_taken", f"another seat at this table is already called {name!r} "
                    "(or a name that reads the same); choose another name",
                )
            seats = list(record.seats)
            seats[seat] = SeatRecord(name=name, token_hash=owned_hash or token_hash,
                                     kind="human", player=player)
            events: list[dict[str, Any]] = [{"type": "seat_taken", "seat": seat, "name": name}]
            return self._seats_change(
                record, seats, events, {"seat": seat, "join": name}, result=(seat, False)
            )

        outcome = await self.transact(room_id, change, cached=False)
        assert outcome is not None and outcome.record is not None
        taken, resumed = outcome.result
        return JoinResult(outcome.record, taken, resumed, outcome.events)

    def _standin_change(
        self,
        record: RoomRecord,
        seat: int,
        active: bool,
        *,
        reason: str | None = None,
        result: Any = None,
    ) -> Change:
        """The change that starts (``active``) or ends a computer's stand-in for ``seat``.

        In a rated room a stand-in that starts during a game also marks the seat
        abandoned for that game (``SeatRecord.abandoned``, docs/rules.md §9.3) with the
        event ``{"type": "seat_abandoned", "seat", "name", "reason"}`` after the
        ``computer_standin`` one; ending the stand-in keeps the mark."""
        seats = list(record.seats)
        info = seats[seat]
        abandon = (active and not info.abandoned and record.status == "playing"
                   and bool(self.room_settings(record)["rated"]))
        seats[seat] = replace(
            info, standin=active, standin_reason=reason if active else None,
            abandoned=info.abandoned or abandon,
        )
        events: list[dict[str, Any]] = [{"type": "computer_standin", "seat": seat,
                                         "name": info.name, "active": active}]
        cause: dict[str, Any] = {"seat": seat, "standin": active}
        if abandon:
            events.append({"type": "seat_abandoned", "seat": seat, "name": info.name,
                           "reason": reason or "away"})
            cause["abandoned"] = True
        return Change(
            events, cause, seats=tuple(seats),
            clear=() if active else (f"{COMPUTER_TURN}|{seat}",), result=result,
        )

    def _rated_rules(self, room: Room, change: Change) -> None:
        """What rated play adds to a change, in the same commit (docs/rules.md §9.3):

        * a change that starts a game clears every seat's ``abandoned`` mark;
        * a change that ends a game of a match that this game did not decide
          (``GameState.match`` not None and not ``over``), with an abandoned seat, goes on
          with the engine's system action ``{"type": "forfeit", "sides": [side, ...]}``
          (the abandoned seats' sides, ascending), which ends the match: its events follow
          the game's.

        Changes ``change`` in place (its ``seats``, ``state`` and ``events``)."""
        seats = change.seats if change.seats is not None else room.record.seats
        if not any(s.abandoned for s in seats):
            return
        types = {e.get("type") for e in change.events}
        if "game_start" in types:
            change.seats = tuple(replace(s, abandoned=False) for s in seats)
            return
        if "game_over" not in types or change.state is _UNCHANGED or change.state is None:
            return
        match = getattr(change.state, "match", None)
        if not match or match.get("over"):
            return  # a single game, or the game decided the match: ratings see the seats
        options = engine.GameOptions.from_dict(room.record.options)
        sides = sorted({options.side_of(i) for i, s in enumerate(seats) if s.abandoned})
        action = {"type": "forfeit", "sides": sides}
        try:
            state, events = engine.apply(change.state, None, action)
        except engine.RulesError as exc:  # a bug: the engine takes a forfeit at game over
            log.error("room %s: the match's forfeit %s was refused: %s", room.record.id,
                      action, exc)
            return
        change.state = state
        change.events = change.events + list(events)
        change.cause = {**change.cause, "forfeit": sides}

    async def set_standin(
        self, room_id: str, seat: int, active: bool, *, reason: str = "away"
    ) -> RoomRecord | None:
        """Start or end a computer's stand-in for a human seat.

        Starting (``active``) needs a human seat of a game in progress that is not already
        stood in for; ending needs a stood-in seat. The change is a commit with the server
        event ``{"type": "computer_standin", "seat", "name", "active"}`` (each process turns
        it into a ``presence`` frame with ``computer_standin``).

        Args:
            reason: why a stand-in starts (``away`` or ``turn_clock``).

        Returns:
            The new record, or None when there was nothing to change (or no such room).

        Raises:
            RoomError: ``busy``. StoreUnavailable, OutcomeUnknown.
        """

        def change(room: Room, now: float) -> Change | NoChange:
            record = room.record
            if not 0 <= seat < len(record.seats):
                return NoChange()
            info = record.seats[seat]
            if info.kind != "human" or info.standin == active:
                return NoChange()
            if active and (record.status != "playing" or record.abandoned):
                return NoChange()
            return self._standin_change(record, seat, active, reason=reason)

        outcome = await self.transact(room_id, change, cached=False, missing_ok=True)
        return outcome.record if outcome is not None and outcome.changed else None

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
                version.

        Returns:
            :class:`ActResult`. An action by the owner of a seat a computer stands in for
            ends the stand-in in the same commit; it also resets the seat's turn-clock
            timeouts.

        Raises:
            RoomError: ``room_not_found``, ``bad_token``, ``not_started``, ``busy``,
                ``action_id_reused``, ``conflict`` (only with ``expected_version``).
            engine.RulesError: the engine refused the action (the room is unchanged).
            StoreUnavailable: nothing was done. OutcomeUnknown: re-send to learn.
        """
        human = token is not COMPUTER

        def change(room: Room, now: float) -> Change:
            record = room.record
            if expected_version is not None and record.version != expected_version:
                raise RoomError("conflict", f"the room is at version {record.version}")
            if not 0 <= seat < len(record.seats):
                raise RoomError("bad_token", "the token does not hold this seat")
            info = record.seats[seat]
            if not human:
                if not info.automated:
                    raise RoomError("bad_token", "the computer does not play this seat now")
            elif not isinstance(token, str) or not token_matches(token, info.token_hash):
                raise RoomError("bad_token", "the token does not hold this seat")
            if record.state is None:
                raise RoomError("not_started", "the game starts when every seat is taken")
            if record.closed:
                raise RoomError("room_closed", "a moderator closed this room")
            if record.abandoned:
                raise RoomError("game_abandoned", "the game was abandoned; the room is closed")
            new_state, events = engine.apply(room.state, seat, action)
            result = Change(events, {"seat": seat, "id": action_id, "action": action},
                            state=new_state, actor=seat)
            if human and str(seat) in record.timeouts:
                result.timeouts = {k: v for k, v in record.timeouts.items() if k != str(seat)}
            if human and info.standin:
                back = self._standin_change(record, seat, False)
                result.seats = back.seats
                result.events = back.events + events
                result.clear = back.clear
            return result

        ref = ActionRef(seat, action_id, action_digest(action), action.get("type") == "rematch")
        outcome = await self.transact(
            room_id, change, action=ref, cached=expected_version is None
        )
        assert outcome is not None
        if outcome.duplicate:
            return ActResult(outcome.version, True)
        return ActResult(outcome.version, False, outcome.record, outcome.events, outcome.state)

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
            RoomError: ``busy``. StoreUnavailable, OutcomeUnknown.
        """

        def change(room: Room, now: float) -> Change | NoChange:
            if record_closed(room.record) or not still_due(room.record):
                return NoChange()
            try:
                new_state, events = engine.apply(room.state, None, action)
            except engine.RulesError as exc:
                log.info("system action %s refused in %s: %s", action, room_id, exc)
                return NoChange()
            return Change(events, {"seat": None, "action": action}, state=new_state)

        outcome = await self.transact(room_id, change, cached=False, missing_ok=True)
        return outcome.version if outcome is not None and outcome.changed else None

    async def close_room(self, room_id: str) -> bool:
        """Close a room for good, for a moderator (docs/operations.md, "Moderation").

        One commit through the write path: the events ``game_abandoned`` (when a game is in
        progress: it is archived as abandoned) and ``room_closed`` reach the table, the room
        takes no join (``room_closed``) and no action (``reject room_closed``) any more,
        leaves the lobby, and expires an hour later (or sooner, as it would have).

        Returns:
            True when this call closed it; False when it was closed already.

        Raises:
            RoomError: ``room_not_found``. StoreUnavailable, OutcomeUnknown.
        """
        ttl = int(self.settings.room_ttl_seconds)

        def change(room: Room, now: float) -> Change | NoChange:
            record = room.record
            if record.closed:
                return NoChange(False)
            events: list[dict[str, Any]] = []
            abandon = record.status == "playing" and not record.abandoned
            if abandon:
                events.append({"type": "game_abandoned", "game_number": record.game_number})
            events.append({"type": "room_closed", "reason": "moderator"})
            return Change(events, {"close": "moderator"}, abandoned=abandon, closed=True,
                          result=True, ttl_seconds=max(1, min(3600, ttl)))

        outcome = await self.transact(room_id, change, cached=False)
        assert outcome is not None
        return bool(outcome.result)

    # -- presence --------------------------------------------------------------------------
    async def seat_connected(self, room_id: str, seat: int) -> None:
        """A connection of this process now holds ``seat`` of the room (presence, and the
        seat's takeover deadline removed if it was empty).

        Raises:
            StoreError: the store failed (the next presence heartbeat writes it again).
        """
        await self.presence.connect(room_id, seat)

    async def seat_disconnected(
        self, room_id: str, seat: int, record: RoomRecord | None
    ) -> None:
        """A connection of this process no longer holds ``seat``; if that was the seat's
        last connection anywhere, its takeover deadline is stored in the same step
        (``record``: the room as last known, to plan it).

        Raises:
            StoreError: the store failed (the next heartbeat re-asserts this process's
                counts).
        """
        await self.presence.disconnect(room_id, seat, record)

    def takeover_deadline(self, record: RoomRecord, seat: int, now: float) -> Deadline | None:
        """The ``takeover`` deadline of a seat whose last connection closes now, or None
        when none is due: only a human seat of a game in progress that no computer stands
        in for is taken over, the room's ``takeover_grace`` seconds from ``now``. In a
        rated room the deadline says ``"rated": true``: it is not parked while nobody is at
        the table (docs/rules.md §9.3)."""
        if not 0 <= seat < len(record.seats):
            return None
        info = record.seats[seat]
        if (info.kind != "human" or info.standin or record.status != "playing"
                or record.abandoned):
            return None
        chosen = self.room_settings(record)
        grace = float(chosen["takeover_grace"])
        payload: dict[str, Any] = {"grace": grace}
        if chosen.get("rated"):
            payload["rated"] = True  # a rated game does not wait for its people (§9.3)
        return Deadline(record.id, TAKEOVER, now + grace, str(seat), payload)

    def takeovers(self, record: RoomRecord, now: float) -> dict[int, Deadline]:
        """:meth:`takeover_deadline` of every seat that has one."""
        out = {}
        for seat in range(len(record.seats)):
            deadline = self.takeover_deadline(record, seat, now)
            if deadline is not None:
                out[seat] = deadline
        return out


def record_closed(record: RoomRecord) -> bool:
    """Whether no game action applies to the room: no game yet, or it was abandoned."""
    return record.state is None or record.abandoned


def abandon_after(settings: Settings) -> float:
    """Seconds of idleness after which a game in progress is abandoned: the room's TTL less
    ``archive_abandon_margin_seconds``, and at least half the TTL (docs/architecture.md,
    "The archive")."""
    ttl = float(settings.room_ttl_seconds)
    return max(ttl / 2, ttl - float(settings.archive_abandon_margin_seconds))


def answer_marker(record: RoomRecord) -> list[Any] | None:
    """Identity of the announcement awaiting answers in a room, or None if there is none:
    ``[games_played, deal_number, owner seat, kind, announced]``."""
    if record.state is None:
        return None
    return answer_marker_of(engine.GameState.from_dict(record.state))
