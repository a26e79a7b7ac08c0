"""What each seat may see of a room version: views and redacted events, computed once.

A :class:`VersionData` is one version of a room as this process knows it. Its
:meth:`~VersionData.view` is the wire view of a seat — ``engine.view`` plus the server's
``turn_clock`` — and :meth:`~VersionData.events_for` the version's events as that seat may
see them (:func:`redact`). Both are computed once per (version, seat) and shared by every
connection of that seat, and by the patches computed from them: they must never be mutated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import engine
from protocol.events import redact as redact_event

from .store.base import RoomRecord


def redact(event: dict[str, Any], seat: int | None) -> dict[str, Any]:
    """An event (engine or server) as ``seat`` (None: a spectator) may see it:
    ``protocol.events.redact``, the one default-deny table of what each seat sees of every
    event type (a ``timed_out`` discard's cards are hidden from the other seats, like the
    engine's ``discard`` event). The result shares what it does not redact with ``event``
    (the server never mutates events; it encodes them)."""
    return redact_event(event, seat, copy=False)


def turn_clock(record: RoomRecord) -> dict[str, int]:
    """The view's ``turn_clock``: seat (as text) -> Unix time in ms by which that seat must
    act (``{}`` without a turn clock)."""
    return {seat: int(round(due * 1000)) for seat, due in record.clock.items()}


def seat_infos(
    record: RoomRecord, presence: dict[int, int], takeovers: dict[int, int] | None = None
) -> list[dict[str, Any]]:
    """Public seat facts of a room, as ``SeatInfo`` plain data: ``{"seat", "taken", "name",
    "kind", "connected", "level", "computer_standin", "takeover_at", "abandoned"}``
    (``abandoned``: ``SeatRecord.abandoned``, a rated room's seat left during this game;
    ``level``: a
    computer seat's level, or ``standard`` for a human seat while a computer stands in for
    it; ``takeover_at``: from ``takeovers``, seat -> Unix ms at which the computer takes
    over the away seat, for a disconnected human seat without a stand-in, else None)."""
    takeovers = takeovers or {}
    out = []
    for i, s in enumerate(record.seats):
        connected = presence.get(i, 0) > 0
        away = s.kind == "human" and not s.standin and not connected
        out.append({
            "seat": i,
            "taken": s.taken,
            "name": s.name,
            "kind": s.kind,
            "connected": connected,
            "level": s.playing_level,
            "computer_standin": s.standin,
            "takeover_at": takeovers.get(i) if away else None,
            "abandoned": s.abandoned,
        })
    return out


@dataclass
class VersionData:
    """One version of a room as this process knows it, with per-seat caches.

    Attributes:
        record: the room at this version.
        events: the version's full events (empty when unknown, e.g. a version first seen in
            a snapshot read from the store).
        seats_changed: whether this version changed the seats.
        backlog: events of earlier versions this process missed and read back from the
            room's log (``[(version, events)]``, oldest first), so that a connection that
            has to be sent a snapshot still gets what happened in between.
        previous: the room's version just before this one when this process knew it (its
            views let this version's views share their unchanged parts, see ``engine.view``'s
            ``since``); only the newest version keeps that link, so versions do not chain up
            in memory.
    """

    record: RoomRecord
    events: list[dict[str, Any]]
    seats_changed: bool
    _state: engine.GameState | None = None
    backlog: list[tuple[int, list[dict[str, Any]]]] = field(default_factory=list)
    previous: VersionData | None = None
    _views: dict[int | None, dict[str, Any] | None] = field(default_factory=dict)
    _engine_views: dict[int | None, dict[str, Any]] = field(default_factory=dict)
    _events: dict[int | None, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def version(self) -> int:
        """The room version."""
        return self.record.version

    def state(self) -> engine.GameState | None:
        """The game state (None before the game starts), decoded once (never mutate it)."""
        if self._state is None and self.record.state is not None:
            self._state = engine.GameState.from_dict(self.record.state)
        return self._state

    def view(self, seat: int | None) -> dict[str, Any] | None:
        """The wire view of ``seat``: ``engine.view(state, seat)`` plus ``turn_clock``
        (None before the game starts), computed once."""
        if seat not in self._views:
            state = self.state()
            if state is None:
                self._views[seat] = None
            else:
                since = None
                prev = self.previous
                if prev is not None and prev._state is not None:
                    before = prev._engine_views.get(seat)
                    if before is not None:
                        since = (prev._state, before)
                base: dict[str, Any] = engine.view(state, seat, since)  # type: ignore[assignment]
                clock = turn_clock(self.record)
                if since is not None and clock == since[1].get("turn_clock"):
                    clock = since[1]["turn_clock"]  # the same object: a diff skips it
                # engine.view's top-level dict is new on every call: the wire view is that
                # dict with ``turn_clock`` added (engine.view ignores the extra key when the
                # next version's view is built from it).
                base["turn_clock"] = clock
                self._engine_views[seat] = base
                self._views[seat] = base
        return self._views[seat]

    def retire(self) -> None:
        """A newer version arrived: drop what only this version's own frames need (the
        wire views and redacted events, rebuilt on demand if a late session asks), keeping
        the state and engine views the next version's views are computed from."""
        self._views.clear()
        self._events.clear()

    def events_for(self, seat: int | None) -> list[dict[str, Any]]:
        """The events as ``seat`` may see them."""
        if seat not in self._events:
            self._events[seat] = [redact(e, seat) for e in self.events]
        return self._events[seat]

    def missed_since(self, seat: int | None, after: int) -> list[dict[str, Any]] | None:
        """``[{"version", "events"}]`` for the versions after ``after`` up to this one, the
        events as ``seat`` may see them, or None when this process does not know them all."""
        if after >= self.version:
            return []
        if after < self.version - 1 and (
            not self.backlog or self.backlog[0][0] > after + 1
        ):
            return None
        out = [{"version": v, "events": [redact(e, seat) for e in events]}
               for v, events in self.backlog if v > after]
        out.append({"version": self.version, "events": self.events_for(seat)})
        return out
