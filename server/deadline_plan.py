"""Which deadlines a room change leaves due (docs/architecture.md "Time").

Every commit of the room service carries the deadlines its new record makes due, and the
ones it makes moot, so they are written in the same atomic step as the record
(``Commit.deadlines`` / ``Commit.clear``). Kinds:

* ``answer_timeout`` (key ``""``): an announcement under Muggins is waiting for answers; due
  the room's answer window after the announcement (docs/rules.md §5.2). Cleared when the
  announcement is settled.
* ``computer_turn`` (key: the seat): a seat the server's computer plays (a computer seat, or
  a human's seat during a stand-in) has something to do; due the bot delay after the change.
  Cleared when that seat has nothing left to do.

(``takeover`` deadlines are not made by commits but by disconnections:
``server.computer_seats``.)
"""

from __future__ import annotations

from typing import Any

import engine

from .store.base import Deadline, RoomRecord

ANSWER_TIMEOUT = "answer_timeout"
"""Deadline kind: the Muggins answer window of a room ran out (docs/rules.md §5.2)."""

COMPUTER_TURN = "computer_turn"
"""Deadline kind: a computer-played seat should act now (``server.computer_seats``)."""

TAKEOVER = "takeover"
"""Deadline kind: a human seat's player has been away for the room's takeover grace."""


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


def has_work(state: engine.GameState, seat: int) -> bool:
    """Whether a computer playing ``seat`` has something to do (a rematch does not count:
    a computer never asks for one)."""
    return any(a.get("type") != "rematch" for a in engine.legal_actions(state, seat))


def plan(
    record: RoomRecord,
    state: engine.GameState | None,
    events: list[dict[str, Any]],
    *,
    now: float,
    answer_window: float,
    bot_delay: float,
) -> tuple[tuple[Deadline, ...], tuple[str, ...]]:
    """The deadlines to store and to clear with the commit of ``record``.

    Args:
        record: the room as the commit leaves it.
        state: ``engine.GameState.from_dict(record.state)`` (None before the game starts).
        events: the change's events (an ``announce`` starts the answer window).
        now: Unix time of the commit, seconds.
        answer_window: the room's Muggins answer window, seconds.
        bot_delay: the pause before a computer acts, seconds.

    Returns:
        ``(deadlines to store, "<kind>|<key>" slots to clear)``; both empty for a change
        that leaves nothing timed (most changes of rooms without computers or Muggins).
    """
    if state is None:
        return (), ()
    sets: list[Deadline] = []
    clear: list[str] = []
    kinds = {e.get("type") for e in events}
    if "announce" in kinds or "muggins_result" in kinds:
        marker = answer_marker_of(state)
        if marker is None:
            clear.append(f"{ANSWER_TIMEOUT}|")
        elif "announce" in kinds:
            sets.append(
                Deadline(record.id, ANSWER_TIMEOUT, now + answer_window, "",
                         {"marker": marker})
            )
    for seat, info in enumerate(record.seats):
        if not info.automated:
            continue
        if has_work(state, seat):
            sets.append(
                Deadline(record.id, COMPUTER_TURN, now + bot_delay, str(seat),
                         {"version": record.version})
            )
        else:
            clear.append(f"{COMPUTER_TURN}|{seat}")
    return tuple(sets), tuple(clear)
