"""Computer-played seats: computer players, and stand-ins for dropped players.

The server's computer plays a seat that was given to a computer (``SeatRecord.kind ==
"computer"``, at its level) and, at level ``standard``, a human seat whose player has been
disconnected longer than the room's takeover grace (``SeatRecord.standin``), until the owner
comes back with the seat token.

Both are driven by deadlines stored with the room (docs/architecture.md "Time"), never by
sleeping tasks:

* ``computer_turn`` (key: seat) is written by the commit that leaves a computer-played seat
  with something to do (``server.deadline_plan``), due the bot delay later. The sweeper
  claims it and :meth:`ComputerSeats.turn` reads the room, gives the decision function the
  seat's ``engine.view`` and ``engine.legal_actions`` **only** (:func:`seat_knowledge`,
  :func:`ask`), and submits the chosen action through :meth:`RoomService.act` — the same
  validation and compare-and-write as a human's action — with the action id
  ``auto-<version decided at>`` and ``expected_version``: a second claim of the same
  deadline (another process, an expired lease) gets the duplicate answer, and a room that
  moved on meanwhile makes the computer decide again from the newer view.
* ``takeover`` (key: seat) is written when a human seat's last connection closes
  (:meth:`ComputerSeats.seat_disconnected`), due the room's ``takeover_grace`` later, and
  removed when a connection comes back (:meth:`ComputerSeats.seat_connected`). When it fires
  and the seat still has no connection, :meth:`RoomService.set_standin` commits the
  stand-in; the owner's ``join`` with the seat token ends it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import engine
from engine.computer import decide as engine_decide

from .deadline_plan import COMPUTER_TURN, TAKEOVER
from .rooms import COMPUTER, RoomError, RoomService
from .store.base import Deadline
from .timers import Sweeper

log = logging.getLogger(__name__)

DecideFn = Callable[..., dict[str, Any] | None]
"""``decide(view, legal, level, *, seed) -> action | None`` (``engine.computer.decide``)."""

MAX_DECISIONS = 10
"""Times a computer decides again when the room moved on under it, per deadline."""


def seat_knowledge(
    state_data: dict[str, Any], seat: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """What a seat may know: ``(engine.view(state, seat), engine.legal_actions(state, seat))``.

    Args:
        state_data: the stored game state (``GameState.to_dict()``, secrets included).
        seat: the seat.

    Returns:
        Fresh plain data (dicts, lists, str, int, bool, None); nothing in it refers to the
        state, which is dropped when this returns.
    """
    state = engine.GameState.from_dict(state_data)
    return engine.view(state, seat), engine.legal_actions(state, seat)


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
    """Plays computer-played seats when their deadlines come due; manages takeovers.

    Args:
        service: the room service (the only write path).
        sweeper: registers the ``computer_turn`` and ``takeover`` handlers with it.
        decide: the decision function (default ``engine.computer.decide``; tests wrap it).
    """

    def __init__(
        self, service: RoomService, sweeper: Sweeper, decide: DecideFn | None = None
    ) -> None:
        self.service = service
        self.sweeper = sweeper
        self.decide: DecideFn = decide or engine_decide
        sweeper.register(COMPUTER_TURN, self.turn)
        sweeper.register(TAKEOVER, self.takeover)

    async def turn(self, deadline: Deadline) -> None:
        """A computer-played seat's deadline is due: decide from its view and act.

        Does nothing when the room is gone, the seat is no longer computer-played (the
        owner came back) or has nothing to do. Engine refusals are logged (they would be a
        bug: the action is one of the seat's legal actions).
        """
        seat = int(deadline.key)
        for _ in range(MAX_DECISIONS):
            record, _ = await self.service.store.load(deadline.room)
            if record is None or record.state is None or not 0 <= seat < len(record.seats):
                return
            level = record.seats[seat].playing_level
            if level is None:
                return
            view, legal = seat_knowledge(record.state, seat)
            version = record.version
            del record
            action = ask(self.decide, view, legal, level, f"{deadline.room}:{version}:{seat}")
            if action is None:
                return
            try:
                await self.service.act(
                    deadline.room, seat, COMPUTER, f"auto-{version}", action,
                    expected_version=version,
                )
                return
            except RoomError as exc:
                if exc.code == "conflict":
                    continue
                log.info("computer seat %s of %s could not act: %s", seat, deadline.room, exc)
                return
            except engine.RulesError as exc:
                log.warning("computer seat %s of %s chose a refused action %s: %s",
                            seat, deadline.room, action, exc)
                return
        log.warning("computer seat %s of %s gave up: the room kept changing", seat,
                    deadline.room)

    async def takeover(self, deadline: Deadline) -> None:
        """A human seat's takeover grace ran out: if it still has no connection, a
        ``standard`` computer stands in for it."""
        seat = int(deadline.key)
        presence = await self.service.store.presence(deadline.room)
        if presence.get(seat, 0) > 0:
            return
        await self.service.set_standin(deadline.room, seat, True)

    async def seat_disconnected(self, room_id: str, seat: int) -> None:
        """The seat's last connection closed: record its takeover deadline (the room's
        ``takeover_grace`` seconds from now) if it is a human seat of a game in progress."""
        try:
            record = await self.service.load(room_id)
        except RoomError:
            return
        if not 0 <= seat < len(record.seats) or record.seats[seat].kind != "human":
            return
        if record.status != "playing" or record.seats[seat].standin:
            return
        grace = float(self.service.room_settings(record)["takeover_grace"])
        due = time.time() + grace
        await self.service.store.schedule(Deadline(room_id, TAKEOVER, due, str(seat)))
        self.sweeper.wake_at(due)

    async def seat_connected(self, room_id: str, seat: int) -> None:
        """A connection of the seat came (back): its takeover deadline is void."""
        await self.service.store.cancel(room_id, TAKEOVER, str(seat))
