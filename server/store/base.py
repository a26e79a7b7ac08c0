"""The room store interface and the data it keeps.

A room is one :class:`RoomRecord` (JSON) plus a version number, an exactly-once record of
applied action ids, an append-only log, a presence count per seat and a channel that carries
every accepted change to the processes that serve the room. Deadlines (``server.timers``)
are kept by the store too, so any process can fire them.

Two implementations: :class:`server.store.memory.MemoryStore` (one process, zero setup) and
:class:`server.store.redis.RedisStore` (any number of processes on one Redis).
"""

from __future__ import annotations

import json
import secrets
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

SeatKind = Literal["open", "human", "computer"]


@dataclass(frozen=True)
class SeatRecord:
    """One seat of a room as stored.

    Attributes:
        name: display name of whoever took it (None while open).
        token_hash: SHA-256 hex of the seat token (None while open). The token itself is
            never stored.
        kind: ``open``, ``human`` or ``computer``.
        level: a computer seat's level (``easy`` or ``standard``); None for other seats.
        standin: a human seat whose player has been away longer than the room's takeover
            grace, played meanwhile by a ``standard`` computer until the owner comes back
            with the seat token (``server.computer_seats``).
    """

    name: str | None = None
    token_hash: str | None = None
    kind: SeatKind = "open"
    level: str | None = None
    standin: bool = False

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


@dataclass(frozen=True)
class RoomRecord:
    """Everything the server keeps about one room (stored as one JSON document).

    Attributes:
        id: short url-safe room id.
        version: 0 at creation, +1 per accepted change (seat taken, action applied).
        options: engine options as plain data (as asked for; the view shows effective ones).
        seats: one :class:`SeatRecord` per seat.
        state: ``engine.GameState.to_dict()``, or None until every seat is taken.
        seed: the engine seed (secret; 128 random bits as hex). Never sent to clients.
        creator_hash: SHA-256 hex of the creator token returned by room creation.
        created, updated: Unix times in seconds.
        settings: room-level settings as plain data (``server.room_settings``):
            ``{"hints": bool, "answer_window": seconds, "takeover_grace": seconds}``;
            ``{}`` for rooms stored before settings existed (the defaults then apply).
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

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON-ready; shares ``options`` and ``state`` with the record)."""
        return {
            "id": self.id,
            "version": self.version,
            "options": self.options,
            "seats": [
                {"name": s.name, "token_hash": s.token_hash, "kind": s.kind, "level": s.level,
                 "standin": s.standin}
                for s in self.seats
            ],
            "state": self.state,
            "seed": self.seed,
            "creator_hash": self.creator_hash,
            "created": self.created,
            "updated": self.updated,
            "settings": self.settings,
        }

    def to_json(self) -> str:
        """Compact JSON text of :meth:`to_dict`."""
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RoomRecord:
        """Inverse of :meth:`to_dict`. Raises ``KeyError``/``TypeError`` on bad data."""
        seats = tuple(SeatRecord(**s) for s in data["seats"])
        return cls(**{**data, "seats": seats})

    @classmethod
    def from_json(cls, text: str | bytes) -> RoomRecord:
        """Inverse of :meth:`to_json`."""
        return cls.from_dict(json.loads(text))

    def evolve(self, **changes: Any) -> RoomRecord:
        """A copy with ``changes`` applied (dataclasses.replace)."""
        return replace(self, **changes)

    @property
    def status(self) -> Literal["waiting", "playing", "game_over"]:
        """``waiting`` until the game starts, ``game_over`` after it ends, else ``playing``."""
        if self.state is None:
            return "waiting"
        return "game_over" if self.state.get("phase") == "game_over" else "playing"


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
        return json.dumps(asdict(self), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Deadline:
        """Inverse of :meth:`to_json`."""
        return cls(**json.loads(text))


@dataclass(frozen=True)
class Commit:
    """One atomic change to a room.

    Attributes:
        record: the new record; ``record.version`` must be ``expected_version + 1``.
        expected_version: the version the change was computed from.
        action_key: ``"<seat>:<action id>"`` to record for exactly-once, or None.
        log_entry: what to append to the room's log (plain data).
        events: the full (unredacted) events of the change, for the room's channel.
        seats_changed: whether the seats changed (sent along to clients).
        deadlines: deadlines of this room to store (each replaces one with the same
            ``member``), written in the same atomic step as the record.
        clear: ``"<kind>|<key>"`` of deadlines of this room to remove in that same step.
        state: ``record.state`` as the engine's ``GameState`` when the committer has it, or
            None. Never stored; a store may hand it (with ``record``) to this process's own
            listeners so they need not decode the published message (see
            ``server.broker.PublishedMessages``). Nobody may mutate it.
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


@dataclass(frozen=True)
class CommitResult:
    """What became of a :class:`Commit`.

    Attributes:
        status: ``ok`` (written), ``conflict`` (the version had moved; nothing written),
            ``duplicate`` (the action key was already recorded; nothing written) or
            ``missing`` (no such room).
        version: the room's version after the commit (ok), the current one (conflict), or
            the version the earlier application of the action made (duplicate).
    """

    status: Literal["ok", "conflict", "duplicate", "missing"]
    version: int


@dataclass(frozen=True)
class Claim:
    """A deadline claimed by one process; ``lease`` identifies the claim for completion."""

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


def presence_message(room: str, seat: int, connected: bool, name: str | None) -> dict[str, Any]:
    """The message published when a seat's presence changes, as plain data."""
    return {"t": "p", "room": room, "seat": seat, "connected": connected, "name": name}


class RoomStore(ABC):
    """Storage of rooms, their logs, presence and deadlines.

    Every method is a coroutine and may raise the backend's connection errors (e.g.
    ``redis.exceptions.ConnectionError``); none raises for a missing room except where said.
    """

    @abstractmethod
    async def create(self, record: RoomRecord) -> bool:
        """Store a new room at version 0. Returns False if the id is already used."""

    @abstractmethod
    async def load(
        self, room_id: str, action_key: str | None = None
    ) -> tuple[RoomRecord | None, int | None]:
        """Read a room (None if missing or expired) and, if ``action_key`` is given, the
        version recorded for that action (None if it was never applied)."""

    @abstractmethod
    async def action_version(self, room_id: str, action_key: str) -> int | None:
        """The version recorded for an applied action key, or None."""

    @abstractmethod
    async def commit(self, commit: Commit) -> CommitResult:
        """Atomically: if the room is at ``expected_version`` and the action key is new,
        write the record, record the action key, append the log entry, store and clear the
        commit's deadlines, publish :func:`update_message` on the room's channel and
        refresh the room's expiry."""

    @abstractmethod
    async def log(self, room_id: str) -> list[dict[str, Any]]:
        """The room's log entries, oldest first (for tests, replays and debugging)."""

    @abstractmethod
    async def presence_change(
        self, room_id: str, seat: int, delta: int, name: str | None
    ) -> int:
        """Add ``delta`` (+1/-1) to the seat's connection count; when it goes from 0 to 1 or
        back to 0, publish :func:`presence_message`. Returns the new count (never < 0)."""

    @abstractmethod
    async def presence(self, room_id: str) -> dict[int, int]:
        """Connection count per seat (seats with no connection may be absent)."""

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
    async def complete(self, claim: Claim) -> None:
        """Remove a claimed deadline, unless it was rescheduled meanwhile."""

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
        """Whether the backend answers."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections."""
