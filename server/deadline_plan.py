"""Which deadlines a room change leaves due (docs/architecture.md, "Time").

Every commit of the room service carries the deadlines its new record makes due, and the
ones it makes moot, so they are written in the same atomic step as the record
(``Commit.deadlines`` / ``Commit.clear``). Kinds:

* ``answer_timeout`` (key ``""``): an announcement under Muggins is waiting for answers; due
  the room's answer window after the announcement (docs/rules.md §5.2). Cleared when the
  announcement is settled.
* ``computer_turn`` (key: the seat): a seat the server's computer plays (a computer seat, or
  a human's seat during a stand-in) has something to do; due the bot delay after the change,
  carrying the version it was planned at (a firing for an older version does nothing) and,
  for a stand-in, ``"standin": true``. At a table of computers only, seat 0 also has
  this deadline when a game of a match that is not over has ended: it asks for the next
  game (:func:`computers_play_on`) (its move waits while nobody is at the table:
  ``server.computer_seats``). Cleared when that seat has nothing left to do.
* ``turn_clock`` (key: the seat): the room has a turn clock (room setting ``turn_seconds``)
  and a human seat has something to do (play, discard, announce or answer); due
  ``turn_seconds`` after the seat's turn began. The seat's clock restarts when the seat
  acts, or when it had nothing to do before, or when its task changed (a new deal, phase or
  announcement), or when the change restarts it (a person came back to a table left by
  everyone: the clock that ran out meanwhile starts again); otherwise it keeps running.
  Cleared when the seat has nothing to do.

* ``archive`` (key: the game number): the game just ended — finished (``game_over``) or
  abandoned (``game_abandoned``): the durable work of archiving it, due at once, carrying
  what the archive needs besides the room's log (``server.archive.outbox``); the same commit
  keeps the game's log entries in the room's outbox (``Commit.outbox``).
* ``abandon`` (key ``""``): a game in progress is abandoned if the room stays idle this long
  (``RoomService.abandon_after``: the room's TTL less a margin), so an unfinished game is
  archived before the room expires. Set when a game starts, cleared when it ends; the
  handler puts it off while the room has been written to since (``server.archive.worker``).

(``takeover`` deadlines are not made by commits but by presence: ``server.presence``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import engine

from .archive import outbox
from .store.base import Deadline, RoomRecord

ANSWER_TIMEOUT = "answer_timeout"
"""Deadline kind: the Muggins answer window of a room ran out (docs/rules.md §5.2)."""

COMPUTER_TURN = "computer_turn"
"""Deadline kind: a computer-played seat should act now (``server.computer_seats``)."""

TAKEOVER = "takeover"
"""Deadline kind: a human seat's player has been away for the room's takeover grace."""

TURN_CLOCK = "turn_clock"
"""Deadline kind: a human seat's turn clock ran out (room setting ``turn_seconds``)."""

ARCHIVE = "archive"
"""Deadline kind: an ended game waits to be archived (``server.archive``)."""

ABANDON = "abandon"
"""Deadline kind: the game in progress is abandoned if the room is still idle then."""


def answer_marker_of(state: engine.GameState) -> list[Any] | None:
    """Identity of the announcement awaiting answers, or None if there is none:
    ``[games_played, deal_number, owner seat, kind, announced]``."""
    pending = state.show_pending
    if state.phase != "show" or not pending:
        return None
    if pending.get("announced") is None or not pending.get("awaiting"):
        return None
    return [
        state.game_number - 1,
        state.deal_number,
        pending.get("seat"),
        pending.get("kind"),
        pending.get("announced"),
    ]


def has_work(state: engine.GameState | None, seat: int) -> bool:
    """Whether ``seat`` has something to do (a rematch does not count: nobody is ever made
    to ask for one)."""
    if state is None:
        return False
    return engine.has_move(state, seat)


def computers_play_on(record: RoomRecord, state: engine.GameState | None) -> bool:
    """Whether a table of computers only goes on to the next game of its match by itself:
    the game is over, the room plays a match that is not over (docs/rules.md §8), and every
    seat is a computer seat. Then seat 0's computer asks for the ``rematch`` (the match's
    next game); anywhere a person sits, a person asks for it ("Next game")."""
    return (
        state is not None and state.phase == "game_over" and state.match is not None
        and not state.match["over"] and bool(record.seats)
        and all(s.kind == "computer" for s in record.seats)
    )


def task_of(state: engine.GameState, seat: int) -> tuple[Any, ...]:
    """What ``seat`` is being asked to do, as a comparable value: the game, deal and phase,
    and under Muggins the announcement step. Two states with the same task for a seat that
    had work in both keep that seat's turn clock running."""
    pending = state.show_pending or {}
    step = (pending.get("seat"), pending.get("kind"), pending.get("announced") is None)
    return (state.game_number, state.deal_number, state.phase,
            step if state.phase == "show" else None)


@dataclass(frozen=True)
class Plan:
    """The deadlines of a commit and the room's new turn clock.

    Attributes:
        sets: deadlines to store.
        clear: ``"<kind>|<key>"`` slots to remove.
        clock: the record's new ``clock`` (seat as text -> Unix seconds).
    """

    sets: tuple[Deadline, ...]
    clear: tuple[str, ...]
    clock: dict[str, float]


def plan(
    record: RoomRecord,
    state: engine.GameState | None,
    events: list[dict[str, Any]],
    *,
    now: float,
    answer_window: float,
    bot_delay: float,
    turn_seconds: float | None = None,
    before: engine.GameState | None = None,
    actor: int | None = None,
    restart: tuple[int, ...] = (),
    abandon_after: float | None = None,
    rated: bool = False,
) -> Plan:
    """The deadlines to store and to clear with the commit of ``record``, and its clock.

    Args:
        record: the room as the commit leaves it (its ``clock`` is the clock before).
        state: ``engine.GameState.from_dict(record.state)`` (None before the game starts).
        events: the change's events (an ``announce`` starts the answer window).
        now: Unix time of the commit, seconds.
        answer_window: the room's Muggins answer window, seconds.
        bot_delay: the pause before a computer acts, seconds.
        turn_seconds: the room's turn clock in seconds, or None for none.
        before: the game state the change started from (None if the game just started).
        actor: the seat whose own action this change is, or None.
        restart: seats whose turn clock starts again now (as if they had acted).
        abandon_after: seconds of idleness after which a game in progress is abandoned
            (the ``abandon`` deadline a game's start sets), or None for none.
        rated: the room is rated: its stand-ins' moves and turn clocks carry ``"rated":
            true``, so they go on while nobody is at the table (docs/rules.md §9.3: a
            rated game does not wait for a player who left it).

    Returns:
        A :class:`Plan`; everything empty for a change that leaves nothing timed.
    """
    if state is None:
        return Plan((), (), {})
    sets: list[Deadline] = []
    clear: list[str] = []
    kinds = {e.get("type") for e in events}
    if "game_over" in kinds or "game_abandoned" in kinds:
        sets.append(outbox.archive_deadline(record, state, now))
        clear.append(f"{ABANDON}|")
        if record.abandoned:  # nothing else is due in a closed room
            clear.append(f"{ANSWER_TIMEOUT}|")
            for seat in range(len(record.seats)):
                clear += [f"{COMPUTER_TURN}|{seat}", f"{TURN_CLOCK}|{seat}"]
            return Plan(tuple(sets), tuple(clear), {})
    elif "game_start" in kinds and abandon_after is not None:
        sets.append(Deadline(record.id, ABANDON, now + abandon_after, "",
                             {"game": state.game_number}))
    if "announce" in kinds or "muggins_result" in kinds:
        marker = answer_marker_of(state)
        if marker is None:
            clear.append(f"{ANSWER_TIMEOUT}|")
        elif "announce" in kinds:
            sets.append(
                Deadline(record.id, ANSWER_TIMEOUT, now + answer_window, "",
                         {"marker": marker})
            )
    clock: dict[str, float] = {}
    play_on = computers_play_on(record, state)
    for seat, info in enumerate(record.seats):
        work = has_work(state, seat) or (play_on and seat == 0)
        if info.automated:
            if work:
                payload: dict[str, Any] = {"version": record.version}
                if info.kind == "human":
                    payload["standin"] = True
                    if rated:
                        payload["rated"] = True
                sets.append(
                    Deadline(record.id, COMPUTER_TURN, now + bot_delay, str(seat), payload)
                )
            else:
                clear.append(f"{COMPUTER_TURN}|{seat}")
        if not turn_seconds or info.automated or not work:
            if str(seat) in record.clock:
                clear.append(f"{TURN_CLOCK}|{seat}")
            continue
        due = record.clock.get(str(seat))
        if (
            due is None
            or seat == actor
            or seat in restart
            or before is None
            or not has_work(before, seat)
            or task_of(before, seat) != task_of(state, seat)
        ):
            due = now + float(turn_seconds)
            timed: dict[str, Any] = {"due": due, "rated": True} if rated else {"due": due}
            sets.append(Deadline(record.id, TURN_CLOCK, due, str(seat), timed))
        clock[str(seat)] = due
    return Plan(tuple(sets), tuple(clear), clock)
