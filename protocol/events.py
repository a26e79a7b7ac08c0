"""The server's own events, and the one redaction table for every event a client receives.

An ``update`` carries the engine's events (:data:`engine.shapes.Event`) and these server
events, each redacted for the connection's seat by :func:`redact`:

* ``seat_taken``: a seat was taken (by a human, or given to a computer player);
* ``computer_standin``: a computer's stand-in for an absent human player started or ended;
* ``seat_abandoned``: in a rated room, a computer started standing in for a human seat
  during a game: the game counts as that player's loss (docs/rules.md §9.3);
* ``timed_out``: a seat's turn clock ran out and the server's computer acted for it;
* ``game_abandoned``: the game in progress was abandoned (the room stayed idle until shortly
  before its expiry) and archived as such;
* ``room_closed``: a moderator closed the room (docs/operations.md, "Moderation"): no join
  and no action any more; a game in progress is abandoned (``game_abandoned`` comes first
  in the same update).

Redaction is default-deny (:func:`engine.redact_event`): :data:`REDACTIONS` lists, per event
type, the fields every seat sees and those only their owner sees; an unlisted field is
dropped and an unknown event type is reduced to ``{"type": ...}``. A ``timed_out`` event's
``action`` is public except a discard's ``cards``, which only the seat itself sees (others
get ``null``, as in the engine's ``discard`` event).
"""

from collections.abc import Mapping
from typing import Any, Literal

import typing_extensions as te
from pydantic import ConfigDict, Field, with_config

import engine
from engine import EventRedaction

from .actions import Action

_STRICT = ConfigDict(extra="forbid", strict=True)

Seat = te.Annotated[int, Field(ge=0, le=3)]


@with_config(_STRICT)
class SeatTakenEvent(te.TypedDict):
    """A seat was taken: by a human (``join``), or given to a computer player."""

    type: Literal["seat_taken"]
    seat: Seat
    name: te.Annotated[str, Field(description="The name the seat is known by at the table.")]
    kind: te.NotRequired[
        te.Annotated[Literal["computer"], Field(description="Present for a computer player.")]
    ]
    level: te.NotRequired[
        te.Annotated[
            Literal["easy", "standard", "expert"],
            Field(description="A computer player's level.")
        ]
    ]


@with_config(_STRICT)
class ComputerStandinEvent(te.TypedDict):
    """A computer's stand-in for an absent human player started (``active``) or ended."""

    type: Literal["computer_standin"]
    seat: Seat
    name: str | None
    active: bool


@with_config(_STRICT)
class SeatAbandonedEvent(te.TypedDict):
    """In a rated room a computer started standing in for a human seat during the game (its
    player was away past the takeover grace, or let the turn clock run out too often): the
    seat is abandoned for this game, which counts as that player's loss even if they come
    back (docs/rules.md §9.3); in a match, the match is forfeited when the game ends.
    Follows the ``computer_standin`` event in the same update."""

    type: Literal["seat_abandoned"]
    seat: Seat
    name: str | None
    reason: te.Annotated[
        Literal["away", "turn_clock"],
        Field(description="away: no connection for the takeover grace; turn_clock: the "
              "turn clock ran out too many times in a row"),
    ]


@with_config(_STRICT)
class HiddenDiscardAction(te.TypedDict):
    """A discard as other seats see it: which cards stays hidden."""

    type: Literal["discard"]
    cards: None


@with_config(_STRICT)
class TimedOutEvent(te.TypedDict):
    """A seat's turn clock ran out: the server's computer took ``action`` for it (the
    action's own events follow in the same update)."""

    type: Literal["timed_out"]
    seat: Seat
    action: te.Annotated[
        Action | HiddenDiscardAction,
        Field(
            description="The action taken for the seat; a discard's cards are null for "
            "every other seat."
        ),
    ]


@with_config(_STRICT)
class GameAbandonedEvent(te.TypedDict):
    """The game in progress was abandoned: its room stayed idle until shortly before it
    expired (docs/protocol.md, "The archive"). It is archived as abandoned, with its seeds;
    the room accepts no action any more (``game_abandoned``)."""

    type: Literal["game_abandoned"]
    game_number: te.Annotated[int, Field(ge=1)]


@with_config(_STRICT)
class RoomClosedEvent(te.TypedDict):
    """A moderator closed the room (docs/operations.md, "Moderation"): it takes no join and
    no action any more (``room_closed``); a game in progress was abandoned and is archived
    as such (the ``game_abandoned`` event comes first in the same update)."""

    type: Literal["room_closed"]
    reason: Literal["moderator"]


SERVER_EVENTS: tuple[type, ...] = (
    SeatTakenEvent, ComputerStandinEvent, SeatAbandonedEvent, TimedOutEvent,
    GameAbandonedEvent, RoomClosedEvent,
)
"""The server's event types (their ``type`` values: ``seat_taken``, ``computer_standin``,
``seat_abandoned``, ``timed_out``, ``game_abandoned``, ``room_closed``)."""

SERVER_EVENT_REDACTIONS: Mapping[str, EventRedaction] = {
    "seat_taken": EventRedaction(public=frozenset(("type", "seat", "name", "kind", "level"))),
    "computer_standin": EventRedaction(public=frozenset(("type", "seat", "name", "active"))),
    "seat_abandoned": EventRedaction(public=frozenset(("type", "seat", "name", "reason"))),
    "timed_out": EventRedaction(
        public=frozenset(("type", "seat", "action")), own=frozenset(("action.cards",))
    ),
    "game_abandoned": EventRedaction(public=frozenset(("type", "game_number"))),
    "room_closed": EventRedaction(public=frozenset(("type", "reason"))),
}
"""Per server event type, what each seat may see."""

REDACTIONS: Mapping[str, EventRedaction] = {
    **engine.EVENT_REDACTIONS, **SERVER_EVENT_REDACTIONS
}
"""Every event type a client may receive, engine and server, with what each seat sees."""


def redact(event: Mapping[str, Any], seat: int | None, *, copy: bool = True) -> dict[str, Any]:
    """Any event (engine or server) as ``seat`` may see it (``None``: a spectator); a fresh
    copy unless ``copy`` is False (then it shares what it does not redact with ``event``).
    :func:`engine.redact_event` with :data:`REDACTIONS`: unknown types come back as
    ``{"type": ...}`` only."""
    return engine.redact_event(event, seat, REDACTIONS, copy=copy)
