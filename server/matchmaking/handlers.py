"""The quick-match messages of a WebSocket session (``server.session`` dispatches
``queue_join``, ``queue_leave`` and ``queue_accept_computer`` here).

Limits (docs/protocol.md "Limits"): each ``queue_join`` spends one event of the player's
budget (``queue_joins_per_minute``, ``too_many_queue_joins``) and one of the client
address's (``queue_joins_per_minute_per_address``, ``too_many_address_queue_joins``), both
counted over every process on Redis (``server.budgets``); a join refused for another
reason gives both back.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as m

from .. import frames
from ..budgets import Budget
from ..rooms import RoomError
from ..store.base import StoreError
from .tables import Table, TableError


def _budgets(settings: Any) -> tuple[Budget, Budget]:
    return (Budget("queue_joins", settings.queue_joins_per_minute),
            Budget("queue_joins_address", settings.queue_joins_per_minute_per_address))


async def queue_join(session: Any, message: m.QueueJoin) -> None:
    """``queue_join``: wait for a table (answered by ``queue_status``)."""
    mm = session.matchmaking
    if mm is None or session.player is None:
        session.error("queue_needs_player", "quick match is for players: say hello with "
                      "your player (hello.player)", "queue_join")
        return
    try:
        table = Table.from_dict(message.table.model_dump())
    except TableError as exc:
        raise RoomError(exc.code, str(exc)) from None
    tickets = []
    limits = session.limits
    if limits is not None:
        per_player, per_address = _budgets(session.settings)
        for budget, key, code in ((per_player, f"player:{session.player}",
                                   "too_many_queue_joins"),
                                  (per_address, session.address,
                                   "too_many_address_queue_joins")):
            ticket = await limits.take(budget, key)
            if not ticket.taken:
                for taken in tickets:
                    await taken.refund()
                session._count(code)
                session.error(code, "too many queue joins; wait retry_after seconds",
                              "queue_join", round(ticket.wait, 3))
                return
            tickets.append(ticket)
    try:
        await mm.join(session, table)
    except (RoomError, StoreError):
        for taken in tickets:
            await taken.refund()
        raise


async def queue_leave(session: Any, message: m.QueueLeave) -> None:
    """``queue_leave``: stop waiting (``queue_left``; ``matched`` if too late). Not waiting:
    ``queue_left`` ``cancelled`` all the same, with an empty ``queue`` (the wait is over
    either way)."""
    mm = session.matchmaking
    if mm is None or await mm.leave(session) == "none":
        session.send(frames.queue_left("", "cancelled"))


async def queue_accept_computer(session: Any, message: m.QueueAcceptComputer) -> None:
    """``queue_accept_computer``: play the computer instead (``matched``)."""
    mm = session.matchmaking
    if mm is None:
        raise RoomError("not_queued", "this connection is not waiting in a queue")
    await mm.accept_computer(session)
