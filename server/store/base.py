"""The room store interface and the data it keeps.

A room is one :class:`RoomRecord` plus a version number, an exactly-once record of applied
action ids, an append-only log, the presence of each seat and a channel that carries every
accepted change to the processes that serve the room. Deadlines (``server.timers``) are kept
by the store too, so any process can fire them.

Two implementations: :class:`server.store.memory.MemoryStore` (one process, zero setup) and
:class:`server.store.redis.RedisStore` (any number of processes on one Redis).

Failures of the backend (Redis down, frozen or unreachable) surface as exactly two
exceptions, so callers can answer clients honestly (docs/protocol.md, "Store outages"):
:class:`StoreUnavailable` (nothing was changed) and :class:`OutcomeUnknown` (a write was
sent and may or may not have been applied).
"""

from __future__ import annotations

import hashlib
import json
import secrets
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from protocol import jsontext

SeatKind = Literal["open", "human", "computer"]


class StoreError(Exception):
    """The store could not do what was asked (see the two subclasses)."""


class StoreUnavailable(StoreError):
    """The store could not be reached, or did not answer a read: nothing was changed."""


class OutcomeUnknown(StoreError):
    """A write was sent but its answer never came: it may or may not have been applied.

    Every write the room service makes is safe to repeat (an action id is applied at most
    once; a commit carries the version it was computed from), so the way to learn the
    outcome is to repeat the request once the store answers again.
    """


@dataclass(frozen=True)
class SeatRecord:
    """One seat of a room as stored.

    Attributes:
        name: display name of whoever took it (None while open).
        token_hash: SHA-256 hex of the seat token (None while open). The token itself is
            never stored.
        kind: ``open``, ``human`` or ``computer``.
        level: a computer seat's level (``easy`` or ``standard``); None for other seats.
        standin: a human seat played meanwhile by a ``standard`` computer (its player has
            been away longer than the room's takeover grace, or let the turn clock run out
            too often), until the owner comes back with the seat token
            (``server.computer_seats``).
        standin_reason: why the stand-in started: ``away`` (no connection for the takeover
            grace) or ``turn_clock`` (the turn clock ran out too many times in a row);
            None when there is no stand-in.
        player: the public id of the player (``server.players``) who took a human seat, or
            None for a seat taken with no player (a client that presents none: the seat
            token alone then holds it), an open seat or a computer. The archive keeps it
            with the game (``game_seats.player_id``).
        abandoned: in a rated room, a computer stood in for this human seat during the
            current game (its player was away past the takeover grace, or let the turn
            clock run out too often): the game counts as the leaver's loss even if they
            come back (docs/rules.md §9.3). Cleared when the room's next game starts.
    """

    name: str | None = None
    token_hash: str | None = None
    kind: SeatKind = "open"
    level: str | None = None
    standin: bool = False
    standin_reason: str | None = None
    player: str | None = None
    abandoned: bool = False

    @property
    def automated(self) -> bool:
        """Whether the server's computer plays this seat now (a computer seat or a
        stand-in for an absent human)."""
        return self.kind == "computer" or (self.kind == "human" and self.standin)

    @property
    def playing_level(self) -> str | None:
        """The level the server's computer plays this seat at, or None if it does not."""
        if self.kind == "computer":
            return self.level or "standard"
        if self.kind == "human" and self.standin:
            return "standard"
        return None

    @property
    def taken(self) -> bool:
        """Whether somebody holds the seat."""
        return self.kind != "open"


def _seat_dict(seat: SeatRecord) -> dict[str, Any]:
    """A seat as stored: ``player`` only when the seat has one, ``abandoned`` only when
    true (records stored before seats carried them read the same)."""
    data = {"name": seat.name, "token_hash": seat.token_hash, "kind": seat.kind,
            "level": seat.level, "standin": seat.standin,
            "standin_reason": seat.standin_reason}
    if seat.player is not None:
        data["player"] = seat.player
    if seat.abandoned:
        data["abandoned"] = True
    return data


@dataclass(frozen=True)
class RoomRecord:
    """Everything the server keeps about one room (stored as one JSON document).

    Attributes:
        id: short room id (letters and digits).
        version: 0 at creation, +1 per accepted change (seat taken, action applied).
        options: engine options as plain data (as asked for; the view shows effective ones).
        seats: one :class:`SeatRecord` per seat.
        state: ``engine.GameState.to_dict()``, or None until every seat is taken.
        seed: the engine seed (secret; 128 random bits as hex). Never sent to clients.
        creator_hash: SHA-256 hex of the creator token returned by room creation.
        created, updated: Unix times in seconds.
        settings: room-level settings as plain data (``server.room_settings``); ``{}`` for
            rooms stored before settings existed (the defaults then apply).
        clock: the turn clock (room setting ``turn_seconds``): seat (as text) -> Unix time
            in seconds by which that human seat must act, for every seat that has something
            to do while the clock runs; ``{}`` when the room has no turn clock.
        timeouts: seat (as text) -> how many times in a row the turn clock ran out for that
            seat (reset when the seat acts itself).
        game_from: the version whose change started the current game (0 before the first
            game starts): the room's history of this game is the log from there.
        request: for a room created with a client's ``request_id``, a digest of what was
            asked for (options, settings, computers): a repeat of the request with
            something else is refused (``request_id_reused``); ``""`` otherwise (and then
            left out of the stored JSON).
        game_started: Unix time of that change (0.0 before the first game, and for rooms
            stored before it was kept).
        abandoned: the game in progress was abandoned (the room stayed idle until shortly
            before its expiry, ``server.archive``): it is archived as such and no action is
            accepted any more.
    """

    id: str
    version: int
    options: dict[str, Any]
    seats: tuple[SeatRecord, ...]
    state: dict[str, Any] | None
    seed: str
    creator_hash: str
    created: float
    updated: float
    settings: dict[str, Any] = field(default_factory=dict)
    clock: dict[str, float] = field(default_factory=dict)
    timeouts: dict[str, int] = field(default_factory=dict)
    game_from: int = 0
    request: str = ""
    game_started: float = 0.0
    abandoned: bool = False
    closed: bool = False
    """A moderator closed the room (``RoomService.close_room``): no join, no action."""

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready; shares ``options`` and ``state`` with the record)."""
        data: dict[str, Any] = {
            "id": self.id,
            "version": self.version,
            "options": self.options,
            "seats": [_seat_dict(s) for s in self.seats],
            "state": self.state,
            "seed": self.seed,
            "creator_hash": self.creator_hash,
            "created": self.created,
            "updated": self.updated,
            "settings": self.settings,
            "clock": self.clock,
            "timeouts": self.timeouts,
            "game_from": self.game_from,
        }
        if self.request:
            data["request"] = self.request
        if self.game_started:
            data["game_started"] = self.game_started
        if self.abandoned:
            data["abandoned"] = True
        if self.closed:
            data["closed"] = True
        return data

    def to_json(self) -> str:
        """Compact JSON text of :meth:`to_dict`."""
        return jsontext.dumps(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoomRecord:
        """Inverse of :meth:`to_dict`. Raises ``KeyError``/``TypeError`` on bad data."""
        seats = tuple(SeatRecord(**s) for s in data["seats"])
        return cls(**{**data, "seats": seats})

    @classmethod
    def from_json(cls, text: str | bytes) -> RoomRecord:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(jsontext.loads(text))

    def evolve(self, **changes: Any) -> RoomRecord:
        """A copy with ``changes`` applied (dataclasses.replace)."""
        return replace(self, **changes)

    @property
    def status(self) -> Literal["waiting", "playing", "game_over"]:
        """``waiting`` until the game starts, ``game_over`` after it ends, else ``playing``."""
        if self.state is None:
            return "waiting"
        return "game_over" if self.state.get("phase") == "game_over" else "playing"

    @property
    def game_number(self) -> int:
        """The game in progress (1, then +1 per rematch); 0 before the first one starts."""
        if self.state is None:
            return 0
        return int(self.state.get("game_number", 1))


@dataclass(frozen=True)
class Deadline:
    """Something due to happen to a room at a given time (see ``server.timers``).

    Attributes:
        room: room id.
        kind: what to do, e.g. ``answer_timeout``; a handler is registered per kind.
        due: Unix time in seconds.
        key: distinguishes several deadlines of one kind in a room ("" if only one);
            scheduling (room, kind, key) again replaces the earlier one.
        payload: plain data for the handler.
    """

    room: str
    kind: str
    due: float
    key: str = ""
    payload: dict[str, Any] = field(default_factory=dict)

    @property
    def member(self) -> str:
        """The deadline's identity: ``room|kind|key``."""
        return f"{self.room}|{self.kind}|{self.key}"

    @property
    def slot(self) -> str:
        """The deadline's identity within its room: ``kind|key``."""
        return f"{self.kind}|{self.key}"

    def to_json(self) -> str:
        """Compact JSON text."""
        return jsontext.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> Deadline:
        """Inverse of :meth:`to_json`."""
        return cls(**jsontext.loads(text))


def action_key(seat: int, action_id: str) -> str:
    """The exactly-once key of a seat's action id: ``"<seat>:<action id>"``.

    The key's stored value also names the game it was applied in: action ids are scoped per
    game (docs/protocol.md, "Actions, acks, exactly-once"), so an id recorded in an earlier
    game does not count as applied, except that a ``rematch`` (applied in the game it
    ended) is still recognised once the new game has started (:func:`counts_as_done`).
    """
    return f"{seat}:{action_id}"


def action_digest(action: dict[str, Any]) -> str:
    """A short fingerprint of an action (16 hex digits of SHA-256 of its canonical JSON),
    stored with its id so that an id re-used for a *different* action is recognised."""
    text = json.dumps(action, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Done:
    """An action key found recorded: the version it made, its action's digest and the game
    it was applied in."""

    key: str
    version: int
    digest: str
    game: int

    @classmethod
    def parse(cls, key: str, value: str) -> Done:
        """From the stored ``"<version>|<digest>|<game>"``."""
        version, digest, game = (value.split("|") + ["", "0"])[:3]
        return cls(key, int(version), digest, int(game or 0))


def counts_as_done(done_game: int, game: int, previous_ok: bool) -> bool:
    """Whether an action id recorded in game ``done_game`` is the same action now that the
    room is at game ``game`` (ids are scoped per game; ``previous_ok`` for a ``rematch``,
    which was applied in the game before the one it started)."""
    return done_game == game or (previous_ok and done_game == game - 1)


@dataclass(frozen=True)
class Commit:
    """One atomic change to a room.

    Attributes:
        record: the new record; ``record.version`` must be ``expected_version + 1``.
        expected_version: the version the change was computed from.
        action_key: :func:`action_key` to record for exactly-once, or None.
        log_entry: what to append to the room's log (plain data; holds the change's full
            events under ``"events"``).
        events: the full (unredacted) events of the change, for the room's channel.
        seats_changed: whether the seats changed (sent along to clients).
        deadlines: deadlines of this room to store (each replaces one with the same
            ``member``), written in the same atomic step as the record.
        clear: ``"<kind>|<key>"`` of deadlines of this room to remove in that same step.
        state: ``record.state`` as the engine's ``GameState`` when the committer has it, or
            None. Never stored; a store may hand it (with ``record``) to this process's own
            listeners so they need not decode the published message (see
            ``server.broker.PublishedMessages``). Nobody may mutate it.
        action_digest: :func:`action_digest` of the action, stored with ``action_key``.
        action_game: the game the action is applied in (stored with ``action_key``).
        previous_game_ok: a key recorded in game ``action_game - 1`` also counts as done
            (:func:`counts_as_done`; for ``rematch``).
        outbox: ``(game number, first version)`` when this change ends a game (finished or
            abandoned): in the same atomic step the store keeps a copy of the room's log
            entries from ``first version`` to this one as that game's outbox entry, until
            the archive takes it (:meth:`RoomStore.outbox`, :meth:`RoomStore.finish_outbox`;
            docs/architecture.md, "The archive").
        ttl_seconds: the room's expiry after this change, instead of the store's idle TTL
            (the abandonment keeps the room's original expiry).
    """

    record: RoomRecord
    expected_version: int
    action_key: str | None
    log_entry: dict[str, Any]
    events: list[dict[str, Any]]
    seats_changed: bool = False
    state: Any = None
    deadlines: tuple[Deadline, ...] = ()
    clear: tuple[str, ...] = ()
    action_digest: str = ""
    action_game: int = 0
    previous_game_ok: bool = False
    outbox: tuple[int, int] | None = None
    ttl_seconds: int | None = None


@dataclass(frozen=True)
class CommitResult:
    """What became of a :class:`Commit`.

    Attributes:
        status: ``ok`` (written), ``conflict`` (the version had moved; nothing written),
            ``duplicate`` (the action key was already recorded; nothing written) or
            ``missing`` (no such room).
        version: the room's version after the commit (ok), the current one (conflict), or
            the version the earlier application of the action made (duplicate).
        digest: for ``duplicate``, the digest stored with the earlier application.
    """

    status: Literal["ok", "conflict", "duplicate", "missing"]
    version: int
    digest: str = ""


@dataclass(frozen=True)
class Claim:
    """A deadline claimed by one process; ``lease`` identifies the claim (it is the Unix
    time until which nobody else may claim it)."""

    deadline: Deadline
    lease: float


def update_message(commit: Commit) -> dict[str, Any]:
    """The message a commit publishes on the room's channel, as plain data.

    ``{"t": "u", "v": version, "events": [...], "seats_changed": bool, "room": record}``.
    """
    return {
        "t": "u",
        "v": commit.record.version,
        "events": commit.events,
        "seats_changed": commit.seats_changed,
        "room": commit.record.to_dict(),
    }


def presence_message(
    room: str, seat: int, connected: bool, takeover_at: int | None = None
) -> dict[str, Any]:
    """The message published when a seat's presence crosses zero (or its takeover deadline
    is stored again when a person comes back to an empty table), as plain data:
    ``{"t": "p", "room", "seat", "connected"}`` plus ``"takeover_at"`` (Unix ms) when a
    ``takeover`` deadline was stored for the seat in the same step (listeners add the seat's
    name)."""
    message: dict[str, Any] = {"t": "p", "room": room, "seat": seat, "connected": connected}
    if takeover_at is not None:
        message["takeover_at"] = takeover_at
    return message


def chat_message(room: str, entry: dict[str, Any]) -> dict[str, Any]:
    """The message published for a chat message: ``{"t": "c", "room", "m": entry}`` (the
    entry with its ``id``)."""
    return {"t": "c", "room": room, "m": entry}


class RoomGone(StoreError):
    """The room does not exist (expired, or never made)."""


def due_ms(due: float) -> int:
    """A due time (Unix seconds) as the wire gives it: Unix milliseconds, rounded."""
    return int(due * 1000 + 0.5)


ParkOutcome = Literal["present", "moved", "parked"]
"""What :meth:`RoomStore.park_unless_present` did: ``present`` (a person is connected to
the room: nothing done, the handler goes on), ``moved`` (the deadline was rescheduled or
taken since the claim: nothing done, nothing to do) or ``parked``."""


def park(deadline: Deadline, resume_after: float, until: float) -> Deadline:
    """The parked copy of a claimed deadline, set aside while nobody is at the table
    (docs/architecture.md, "A table left by everyone").

    Its due time is ``until`` (far: the room expires first, normally); its payload keeps the
    original one and adds ``"parked": resume_after`` (seconds) and ``"wake": [head, tail]``,
    the deadline's JSON text split where its due time goes: when a person connects to the
    room again the store writes ``head + <now + resume_after> + tail`` in its place (the
    original payload plus ``"woken": true``), in the same atomic step as the presence (so
    ``server/lua/presence.lua`` needs no JSON encoder and no float survives a re-encoding).
    """
    payload = {k: v for k, v in deadline.payload.items() if k not in ("parked", "wake")}
    woken = {**payload, "woken": True}
    head = jsontext.dumps({"room": deadline.room, "kind": deadline.kind})[:-1] + ',"due":'
    tail = f',"key":{jsontext.dumps(deadline.key)},"payload":{jsontext.dumps(woken)}}}'
    return Deadline(deadline.room, deadline.kind, until, deadline.key,
                    {**payload, "parked": float(resume_after), "wake": [head, tail]})


def woken(parked: Deadline, now: float) -> Deadline | None:
    """The deadline a parked one (:func:`park`) becomes when a person comes back at Unix
    time ``now``; None for a deadline that is not parked."""
    wake = parked.payload.get("wake")
    after = parked.payload.get("parked")
    if not isinstance(wake, list) or len(wake) != 2 or not isinstance(after, int | float):
        return None
    return Deadline.from_json(f"{wake[0]}{float(now + after)!r}{wake[1]}")


def takeover_times(deadlines: list[Deadline]) -> dict[int, int]:
    """Seat -> the due time (Unix ms) of its pending ``takeover`` deadline, from a room's
    deadlines (parked ones left out: they wait for a person to come back)."""
    out: dict[int, int] = {}
    for d in deadlines:
        if d.kind == "takeover" and "parked" not in d.payload and d.key.isdigit():
            out[int(d.key)] = due_ms(d.due)
    return out


PresenceCounts = dict[int, int]
"""Open connections per seat (seats without any may be absent)."""


class RoomStore(ABC):
    """Storage of rooms, their logs, presence and deadlines.

    Every method is a coroutine. A backend failure raises :class:`StoreUnavailable` (reads,
    and writes that surely did nothing) or :class:`OutcomeUnknown` (writes that may have been
    applied); nothing else is raised for a missing room except where said.

    Presence (docs/architecture.md, "Presence"): every server process is an *owner* with an
    id of its own, and writes, per room and seat, the absolute number of connections it
    holds (never a +1/-1 counter, so nothing can drift). A seat's presence is the sum over
    owners. Each owner renews a registration (:meth:`owner_heartbeat`); an owner that stops
    (a killed process) is found by :meth:`expired_owners` and its entries removed room by
    room (:meth:`set_presence` with ``full=True`` and no counts), by any process.
    """

    # -- rooms -----------------------------------------------------------------------------
    @abstractmethod
    async def create(self, record: RoomRecord) -> bool:
        """Store a new room at version 0. Returns False if the id is already used."""

    @abstractmethod
    async def load(
        self, room_id: str, action_key: str | None = None
    ) -> tuple[RoomRecord | None, Done | None]:
        """Read a room (None if missing or expired) and what is recorded for ``action_key``
        (None if nothing; the caller applies :func:`counts_as_done`)."""

    @abstractmethod
    async def version(self, room_id: str) -> int | None:
        """The room's current version (None if missing); cheaper than :meth:`load`."""

    @abstractmethod
    async def versions(self, room_ids: list[str]) -> list[int | None]:
        """:meth:`version` of several rooms in one round trip."""

    @abstractmethod
    async def commit(self, commit: Commit) -> CommitResult:
        """Atomically: if the action key is not recorded as done (:func:`counts_as_done`)
        and the room is at ``expected_version``,
        write the record, record the action key (with its digest), append the log entry,
        store and clear the commit's deadlines, publish :func:`update_message` on the room's
        channel and refresh the room's expiry.

        Raises:
            StoreUnavailable: nothing was sent. OutcomeUnknown: sent, answer lost.
        """

    @abstractmethod
    async def log(
        self, room_id: str, after: int = 0, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The room's log entries with version > ``after``, oldest first, at most ``limit``
        (all if None). Each is the commit's ``log_entry`` plus ``"v"`` (its version)."""

    # -- presence -------------------------------------------------------------------------
    @abstractmethod
    async def set_presence(
        self,
        room_id: str,
        owner: str,
        counts: PresenceCounts,
        *,
        full: bool = False,
        takeovers: dict[int, Deadline] | None = None,
        now: float | None = None,
    ) -> PresenceCounts | None:
        """Write ``owner``'s connection counts for seats of a room, atomically.

        Args:
            room_id: the room.
            owner: the writing process's owner id.
            counts: seat -> connections this owner holds now (0 removes the entry).
            full: ``counts`` is everything this owner holds in the room: entries of other
                seats of this owner are removed too (used to re-assert or to reap).
            takeovers: seat -> the ``takeover`` deadline to store if that seat's total falls
                to 0 with this write (seats not listed get none); a seat whose total rises
                above 0 has its ``takeover`` deadline removed.

        A seat whose total crosses 0 (either way) gets a :func:`presence_message` on the
        room's channel, in the same atomic step (with ``takeover_at`` when its takeover
        deadline was stored).

        A person back at an empty table: when the room's total over all seats goes from 0
        to more, every *parked* deadline of the room (:meth:`park_unless_present`) is made
        due again, ``now`` plus its ``parked`` seconds, as :func:`woken` gives it; a parked
        ``takeover`` is announced with a :func:`presence_message` (``connected`` false,
        ``takeover_at``). All in the same atomic step.

        Args:
            now: Unix time of the write (for woken deadlines; default: the store's clock).

        Returns:
            The totals per seat after the write, or None when the room does not exist.
        """

    @abstractmethod
    async def presence(self, room_id: str) -> PresenceCounts:
        """Total connections per seat, summed over owners."""

    @abstractmethod
    async def set_watchers(self, room_id: str, owner: str, count: int, cap: int = 0
                           ) -> int | None:
        """Write how many connections of ``owner`` watch the room without a seat (an
        absolute count, like presence: a lost or repeated write is put right by the next),
        checking the room's cap in the same atomic step.

        Args:
            count: the owner's spectators of the room now (0 removes its entry).
            cap: with ``cap`` > 0, a count larger than the owner's stored one is refused
                when the room's total over all owners would then exceed ``cap``
                (``max_spectators_per_room``).

        Returns:
            The room's total after the write; -1 when refused (nothing written); None when
            the room does not exist (nothing written).
        """

    @abstractmethod
    async def watchers(self, room_id: str) -> dict[str, int]:
        """Owner id -> the spectators it holds in the room (for reaping and for tests)."""

    @abstractmethod
    async def presence_owners(self, room_id: str) -> dict[str, PresenceCounts]:
        """Owner id -> its counts per seat (for reaping and for tests)."""

    @abstractmethod
    async def owner_heartbeat(
        self, owner: str, now: float, rooms: list[str], register: bool = False
    ) -> bool:
        """Renew ``owner``'s registration at Unix time ``now`` and add ``rooms`` to the rooms
        it may hold presence in (so a reaper finds them).

        Args:
            register: create the registration if it does not exist (a process's first
                heartbeat under a new owner id); otherwise a missing one stays missing.

        Returns:
            Whether the owner was registered before this call. False without ``register``
            means it was declared dead and is being reaped: the process must re-assert its
            presence under a *new* owner id, since a reaper may still be removing the old
            one's entries.
        """

    @abstractmethod
    async def expired_owners(self, before: float) -> list[str]:
        """Owners whose last heartbeat is older than ``before`` (Unix seconds), and owners
        being reaped (their reaper may have died; :meth:`claim_owner` decides)."""

    @abstractmethod
    async def claim_owner(
        self, owner: str, before: float, now: float, lease_until: float
    ) -> list[str] | None:
        """Atomically take an owner for reaping until ``lease_until``: one whose heartbeat
        is older than ``before``, or one whose previous reaper's lease ended by ``now``.

        Returns:
            The rooms it may hold presence in, or None when it is not up for reaping.
        """

    @abstractmethod
    async def forget_owner(self, owner: str) -> None:
        """Drop a reaped owner (its reaping entry and its rooms)."""

    @abstractmethod
    async def forget_owner_rooms(self, owner: str, rooms: list[str]) -> None:
        """Drop rooms from the rooms an owner may hold presence in (it holds none there)."""

    # -- deadlines -------------------------------------------------------------------------
    @abstractmethod
    async def schedule(self, deadline: Deadline) -> None:
        """Add a deadline, replacing any with the same ``member``."""

    @abstractmethod
    async def cancel(self, room: str, kind: str, key: str = "") -> None:
        """Remove a deadline if present."""

    @abstractmethod
    async def claim_due(self, now: float, lease_until: float, limit: int = 100) -> list[Claim]:
        """Atomically claim up to ``limit`` deadlines due at ``now``: each becomes invisible
        to other claimers until ``lease_until`` (then it can be claimed again, in case the
        claimer died)."""

    @abstractmethod
    async def extend(self, claim: Claim, lease_until: float) -> Claim | None:
        """Renew a claim's lease to ``lease_until``; None if the deadline was rescheduled,
        removed or claimed by someone else meanwhile."""

    @abstractmethod
    async def complete(self, claim: Claim) -> None:
        """Remove a claimed deadline, unless it was rescheduled meanwhile."""

    @abstractmethod
    async def park_unless_present(self, claim: Claim, parked: Deadline) -> ParkOutcome:
        """Atomically: if no seat of the room has a connection and the claimed deadline's
        slot still holds ``claim``, put ``parked`` (:func:`park`) in its place.

        A table left by everyone waits for its people: a handler that would make the
        server's computer act for a person (a takeover, a stand-in's move, a turn clock)
        parks its deadline instead of acting while nobody is there, and the next
        connection to the room wakes it (:meth:`set_presence`). Checking presence and
        parking in one step means a person who connects meanwhile is never missed: either
        the park sees them (``present``) or their connection wakes the parked deadline.

        Returns:
            ``present``, ``moved`` or ``parked`` (:data:`ParkOutcome`).
        """

    @abstractmethod
    async def deadlines(self, room_id: str) -> list[Deadline]:
        """The room's pending deadlines (claimed ones too; parked ones included)."""

    # -- the archive's outbox (docs/architecture.md, "The archive") -------------------------
    @abstractmethod
    async def outbox(self, room_id: str, game: int) -> list[dict[str, Any]] | None:
        """The log entries a commit with ``Commit.outbox`` kept for game ``game`` (oldest
        first, each as :meth:`log` gives them), or None when none is kept (taken already,
        or the room is gone)."""

    @abstractmethod
    async def finish_outbox(self, claim: Claim, game: int) -> bool:
        """Atomically :meth:`complete` the archive deadline ``claim`` and drop game
        ``game``'s outbox entry — only while the claim is still this one (else nothing, and
        False: another process holds it now and finishes it)."""

    @abstractmethod
    async def hold(self, room_id: str, until: float) -> bool:
        """Keep the room (every key of it) until at least Unix time ``until``: its expiry
        is pushed back if it would come sooner (never brought forward). Returns whether the
        room exists."""

    # -- table talk (server.chat) ------------------------------------------------------
    @abstractmethod
    async def chat_post(self, room_id: str, entry: dict[str, Any], keep: int,
                        per_second: int = 0) -> int | None:
        """Say a chat message in a room: number it (1, 2, … per room), keep the room's last
        ``keep`` messages and publish ``chat_message(room_id, entry)`` on the room's
        channel, atomically. ``entry`` is the message without its ``id`` (plain JSON data).

        Returns:
            The message's id; None when the room said ``per_second`` messages within this
            Unix second already (0: no limit) and nothing was kept. The players' talk and
            the spectators' own (``entry["audience"] == "spectators"``, during a game) are
            counted apart: spectators never use up the players' budget.

        Raises:
            RoomGone: no such room (expired or never made).
            StoreUnavailable, OutcomeUnknown: as for :meth:`commit` (a message sent again
            after ``OutcomeUnknown`` may be said twice: chat is not an action).
        """

    @abstractmethod
    async def chat_recent(self, room_id: str) -> list[dict[str, Any]]:
        """The room's kept messages, oldest first, without those a moderator hid (each with
        its ``id``); ``[]`` for a room without any (or gone)."""

    @abstractmethod
    async def chat_hide(self, room_id: str, message_id: int) -> bool:
        """Hide a message for everyone: left out of :meth:`chat_recent` from now on, and
        ``{"t": "h", "room", "id"}`` published on the room's channel. Returns whether it
        was newly hidden."""

    # -- the rest --------------------------------------------------------------------------
    async def token_secret(self) -> bytes:
        """The secret that signs player tokens, shared by every process on this store.

        The in-process store makes one random secret per store; the Redis store keeps one in
        Redis (created once, ``SET NX``) so every process recognises the others' tokens.

        Returns:
            32 or more bytes.
        """
        if not hasattr(self, "_token_secret"):
            self._token_secret = secrets.token_bytes(32)
        return self._token_secret

    @abstractmethod
    async def ping(self) -> bool:
        """Whether the backend answers (never raises; bounded in time)."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections."""
