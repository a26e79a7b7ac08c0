"""Computer-played seats: computer players, stand-ins for absent players, the turn clock.

The server's computer plays a seat that was given to a computer (``SeatRecord.kind ==
"computer"``, at its level) and, at level ``standard``, a human seat whose player has been
away longer than the room's takeover grace or let the turn clock run out too often
(``SeatRecord.standin``), until the owner comes back with the seat token. It also acts once
for a human seat whose turn clock ran out.

All of it is driven by deadlines stored with the room (docs/architecture.md "Time"), never
by sleeping tasks, and every move is a change function run by
:meth:`RoomService.transact` — the same validation and compare-and-write as a human's
action:

* ``computer_turn`` (key: seat) is written by the commit that leaves a computer-played seat
  with something to do (``server.deadline_plan``), due the bot delay later, carrying that
  commit's version. :meth:`ComputerSeats.turn` acts only on that very version: the decision
  function gets the seat's ``engine.view`` and ``engine.legal_actions`` **only**
  (:func:`seat_knowledge`, :func:`ask`) with a seed made of public facts, so a second firing
  of the same deadline (another process, an expired lease) finds the room moved on and does
  nothing.
* ``turn_clock`` (key: seat) is written by the commit that starts a human seat's turn when
  the room has ``turn_seconds``; :meth:`ComputerSeats.turn_clock` acts for the seat once if
  its clock still shows that due time, with the event ``{"type": "timed_out", "seat",
  "action"}``; after ``turn_timeouts_before_standin`` timeouts in a row a ``standard``
  computer stands in for the seat (reason ``turn_clock``).
* ``takeover`` (key: seat) is written atomically with the presence change that leaves a
  human seat of a game in progress with no connection (``server.presence``), due the room's
  ``takeover_grace`` later, and removed when a connection comes back. When it fires and the
  seat still has no connection, :meth:`RoomService.set_standin` commits the stand-in; the
  owner's ``join`` with the seat token (or any action of theirs) ends it.

A table left by everyone waits for its people (docs/architecture.md, "A table left by
everyone"): the computer acts for a person — a takeover, a stand-in's move, a turn clock's
move — only while at least one seat of the room has a connection. While none has, those
handlers park their deadline (:meth:`server.timers.Sweeper.park_unless_present`) and the
game waits; the first connection to the room makes them due again: a takeover the room's
full ``takeover_grace`` later (announced with its ``takeover_at``), a stand-in's move the
bot delay later, and a turn clock that ran out meanwhile starts again from its full
``turn_seconds`` (a commit with no events). Computer seats play their own turns as ever, so
a game stops at the next move a person must make. Except in a rated game (docs/rules.md
§9.3): there a player who left loses, so its deadlines say ``"rated": true`` and are never
parked — the takeover comes after the grace and the stand-in plays the seat to the end,
whoever is connected.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import engine
from engine.computer import decide as engine_decide
from engine.computer import suggest as engine_suggest
from protocol.messages import SERVER_ACTION_ID_PREFIX

from .deadline_plan import COMPUTER_TURN, TAKEOVER, TURN_CLOCK, computers_play_on
from .rooms import Change, NoChange, Room, RoomService
from .store.base import Deadline
from .timers import Sweeper
from .workers.priority import PriorityPool

log = logging.getLogger(__name__)

DecideFn = Callable[..., dict[str, Any] | None]
"""``decide(view, legal, level, *, seed) -> action | None`` (``engine.computer.decide``)."""

OFF_LOOP_LEVELS = frozenset({"expert"})
"""Levels whose decisions run in the computer processes (``computer_processes``), off the
event loop, so that a search never delays the other rooms of the process (issue 22)."""


def seat_knowledge(
    state: engine.GameState | dict[str, Any], seat: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What a seat may know: ``(engine.view(state, seat), engine.legal_actions(state, seat))``.

    Args:
        state: the game state (or its stored plain data, secrets included).
        seat: the seat.

    Returns:
        Fresh plain data (dicts, lists, str, int, bool, None); nothing in it refers to the
        state.
    """
    if isinstance(state, dict):
        state = engine.GameState.from_dict(state)
    return engine.view(state, seat), engine.legal_actions(state, seat)


def _expert_suggestion(view: dict[str, Any], legal: list[dict[str, Any]]) -> dict[str, Any]:
    """``engine.computer.suggest`` at level ``expert`` (a function a computer process runs)."""
    return dict(engine_suggest(view, legal, level="expert"))


def ask(
    decide: DecideFn,
    view: dict[str, Any],
    legal: list[dict[str, Any]],
    level: str,
    seed: str,
) -> dict[str, Any] | None:
    """The one place the server calls the decision function: with the seat's view, its
    legal actions, the level and a seed made of public facts — nothing else.

    Returns:
        The chosen action (a member of ``legal``) or None.
    """
    return decide(view, legal, level, seed=seed)


class ComputerSeats:
    """Plays computer-played seats when their deadlines come due; the turn clock; takeovers.

    Args:
        service: the room service (the only write path).
        sweeper: registers the ``computer_turn``, ``turn_clock`` and ``takeover`` handlers.
        decide: the decision function (default ``engine.computer.decide``; tests wrap it).
    """

    def __init__(
        self, service: RoomService, sweeper: Sweeper, decide: DecideFn | None = None,
        processes: int = 0,
    ) -> None:
        self.service = service
        self.sweeper = sweeper
        self.decide: DecideFn = decide or engine_decide
        self.processes = processes if decide is None else 0  # a test's decide stays here
        """Worker processes for the :data:`OFF_LOOP_LEVELS` (0: decide on the event loop)."""
        self.pool = PriorityPool(self.processes) if self.processes else None
        """The computer processes, people's work first (made at the first job)."""
        self.off_loop = 0
        """Decisions made in the computer processes since start."""
        # With computer processes a move may wait its turn there: the sweep must not wait
        # for it (every other deadline of this process would wait too).
        sweeper.register(COMPUTER_TURN, self.turn, detached=self.processes > 0)
        sweeper.register(TURN_CLOCK, self.turn_clock)
        sweeper.register(TAKEOVER, self.takeover)

    def _move(self, room: Room, seat: int, level: str, seed: str) -> tuple[
        dict[str, Any], engine.GameState, list[dict[str, Any]]
    ] | None:
        """Decide and apply the computer's move for ``seat``: ``(action, state, events)``,
        or None when the seat has nothing to do. A computer never asks for a rematch, except
        seat 0 of a table of computers only between the games of a match
        (:func:`server.deadline_plan.computers_play_on`)."""
        view, legal = seat_knowledge(room.state, seat)  # type: ignore[arg-type]
        legal = [a for a in legal if a.get("type") != "rematch"]
        if not legal and seat == 0 and computers_play_on(room.record, room.state):
            action = {"type": "rematch"}
            new_state, events = engine.apply(room.state, seat, action)  # type: ignore[arg-type]
            return action, new_state, events
        if not legal:
            return None
        action = ask(self.decide, view, legal, level, seed)
        if action is None:
            return None
        new_state, events = engine.apply(room.state, seat, action)  # type: ignore[arg-type]
        return action, new_state, events

    # -- the computer processes -----------------------------------------------------------
    async def close(self) -> None:
        """Stop the computer processes (at the end of the app's lifespan)."""
        if self.pool is not None:
            await self.pool.close()

    async def advise(self, view: dict[str, Any], legal: list[dict[str, Any]]
                     ) -> dict[str, Any]:
        """A hint: the ``expert`` player's suggestion for a seat (``engine.computer.suggest``
        with the seat's view and legal actions only), made in a computer process when there
        are any, so that a flood of hints delays no other room.

        Returns:
            The suggestion (``engine.shapes.Suggestion``: never a Muggins count).
        """
        if self.pool is not None:
            try:
                return await self.pool.run(_expert_suggestion, view, legal, urgent=True)
            except BrokenProcessPool:
                log.warning("the computer processes died; this hint is made on the loop")
        return _expert_suggestion(view, legal)

    async def _move_off_loop(self, room_id: str, seat: int, version: Any
                               ) -> tuple[int, dict[str, Any]] | None:
        """For a seat played at an :data:`OFF_LOOP_LEVELS` level: read the room, and decide
        in a computer process from the seat's view and legal actions (:func:`ask`, as on
        the loop). Returns ``(version, action)``, or None to decide on the loop (another
        level, the room moved on, nothing to do, or the processes failed: logged)."""
        if self.pool is None:
            return None
        record = await self.service.load(room_id)
        if (record.version != version or record.state is None
                or not 0 <= seat < len(record.seats)):
            return None
        level = record.seats[seat].playing_level
        if level not in OFF_LOOP_LEVELS:
            return None
        view, legal = seat_knowledge(record.state, seat)
        legal = [a for a in legal if a.get("type") != "rematch"]
        if not legal:
            return None
        seed = f"{room_id}:{record.version}:{seat}"
        # A room where a person plays goes before rooms the computer plays alone
        # (PriorityPool): a seat a stand-in plays for an absent person waits for nobody.
        urgent = any(not s.automated for s in record.seats)
        try:
            action = await self.pool.run(ask, engine_decide, view, legal, level, seed,
                                         urgent=urgent)
        except BrokenProcessPool:
            log.warning("the computer processes died; this move is decided on the loop")
            return None
        if action is None:
            return None
        self.off_loop += 1
        return record.version, action

    async def turn(self, deadline: Deadline) -> None:
        """A computer-played seat's deadline is due: decide from its view and act, if the
        room is still at the version the deadline was planned at. At the
        :data:`OFF_LOOP_LEVELS` the decision is made first, in a computer process, from the
        room as read; the commit then applies it only if the room is still at that very
        version (the same check as every computer move)."""
        seat = int(deadline.key)
        version = deadline.payload.get("version")
        if (deadline.payload.get("standin") and not deadline.payload.get("rated")
                and await self.sweeper.park_unless_present(
                    deadline, self.service.settings.bot_delay_seconds)):
            return
        decided = await self._move_off_loop(deadline.room, seat, version)

        def change(room: Room, now: float) -> Change | NoChange:
            record = room.record
            if record.version != version or record.state is None:
                return NoChange()
            if not 0 <= seat < len(record.seats):
                return NoChange()
            level = record.seats[seat].playing_level
            if level is None:
                return NoChange()
            if decided is not None and decided[0] == record.version:
                action = decided[1]
                new_state, events = engine.apply(room.state, seat, action)  # type: ignore[arg-type]
                move: Any = (action, new_state, events)
            else:
                move = self._move(room, seat, level,
                                  f"{deadline.room}:{record.version}:{seat}")
            if move is None:
                return NoChange()
            action, new_state, events = move
            return Change(
                events,
                {"seat": seat, "id": f"{SERVER_ACTION_ID_PREFIX}{record.version}",
                 "action": action},
                state=new_state, actor=seat,
            )

        try:
            await self.service.transact(deadline.room, change, cached=False, missing_ok=True)
        except engine.RulesError as exc:  # a bug: the action was one of the legal ones
            log.warning("computer seat %s of %s made a refused move: %s", seat,
                        deadline.room, exc)

    async def turn_clock(self, deadline: Deadline) -> None:
        """A human seat's turn clock ran out: the ``standard`` computer acts for it once
        (event ``timed_out``), if the seat's clock still shows this deadline's time."""
        seat = int(deadline.key)
        due = deadline.payload.get("due")
        limit = self.service.settings.turn_timeouts_before_standin
        restart = bool(deadline.payload.get("woken"))
        if not deadline.payload.get("rated") and await self.sweeper.park_unless_present(
                deadline, 0.0):
            return

        def change(room: Room, now: float) -> Change | NoChange:
            record = room.record
            if record.state is None or not 0 <= seat < len(record.seats):
                return NoChange()
            if record.clock.get(str(seat)) != due or record.seats[seat].automated:
                return NoChange()
            if restart:
                # The clock ran out while nobody was at the table: it starts again now, with
                # every other clock that ran out meanwhile (one version, no events).
                late = tuple(sorted({seat} | {int(k) for k, v in record.clock.items()
                                              if v <= now and k.isdigit()}))
                return Change([], {"seat": seat, "clock": "restarted"}, restart=late)
            move = self._move(room, seat, "standard",
                              f"{deadline.room}:{record.version}:{seat}:clock")
            if move is None:
                return NoChange()
            action, new_state, events = move
            count = int(record.timeouts.get(str(seat), 0)) + 1
            result = Change(
                [{"type": "timed_out", "seat": seat, "action": action}, *events],
                {"seat": seat, "timed_out": True, "action": action},
                state=new_state, actor=seat,
                timeouts={**record.timeouts, str(seat): count},
            )
            if limit and count >= limit and record.seats[seat].kind == "human":
                standin = self.service._standin_change(
                    record, seat, True, reason="turn_clock"
                )
                result.seats = standin.seats
                result.events = result.events + standin.events
            return result

        try:
            await self.service.transact(deadline.room, change, cached=False, missing_ok=True)
        except engine.RulesError as exc:
            log.warning("turn clock of seat %s of %s made a refused move: %s", seat,
                        deadline.room, exc)

    async def takeover(self, deadline: Deadline) -> None:
        """A human seat's takeover grace ran out: if it still has no connection, a
        ``standard`` computer stands in for it."""
        seat = int(deadline.key)
        presence = await self.service.store.presence(deadline.room)
        if presence.get(seat, 0) > 0:
            return
        grace = deadline.payload.get("grace")
        if not isinstance(grace, int | float) or isinstance(grace, bool):
            grace = self.service.settings.takeover_grace_seconds
        if not deadline.payload.get("rated") and await self.sweeper.park_unless_present(
                deadline, float(grace)):
            return
        await self.service.set_standin(deadline.room, seat, True, reason="away")
