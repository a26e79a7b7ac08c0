"""The engine actions as the protocol takes them: ``act``'s ``action``, and the shape of every
entry of a view's ``legal`` list and of a hint's ``best``.

These models validate what a client sends. A card is the canonical text views use
(``engine.shapes.CARD_PATTERN``: ``"5H"``, ``"TD"``); a card text that does not match is
answered ``reject`` ``bad_card`` (``protocol.codec`` tells that fault from a wrong shape,
``bad_action``). An announcement may be any whole number from -1000 to 1000, so that the
engine answers ``bad_points`` rather than the codec ``bad_action``. The engine's own
definitions are in :mod:`engine.shapes`, and a test checks the two agree field for field.

:data:`Action` is every engine action (a view's ``legal`` and a hint's ``best`` use it);
:data:`ClientAction`, what ``act`` takes, leaves out the system actions
(``answer_timeout``, ``forfeit``), which only the server applies (a client sending one gets
``reject`` ``system_only``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.game import SYSTEM_ACTIONS
from engine.shapes import CARD_PATTERN


class _Model(BaseModel):
    """Unknown fields are refused and types are strict (as in :mod:`protocol.messages`)."""

    model_config = ConfigDict(extra="forbid", strict=True)


INT64_MAX = 2**63 - 1
"""The largest whole number a client field takes (a version, a ``ref``, a nonce): what both
encodings carry (msgpack's integers are 64-bit), so a JSON client cannot send what a
msgpack one could not."""

CardText = Annotated[str, Field(pattern=CARD_PATTERN, examples=["5H", "TD"])]
"""A card as text, rank then suit, canonical (``docs/rules.md`` "Cards")."""


class DiscardAction(_Model):
    """Lay cards away to the crib (2 with two players, 1 with three or four)."""

    type: Literal["discard"]
    cards: Annotated[list[CardText], Field(min_length=1, max_length=4)]


class PlayAction(_Model):
    """Lay a card in the play (only on your turn; the count may not pass 31)."""

    type: Literal["play"]
    card: CardText


class AnnounceAction(_Model):
    """Muggins: announce the count of the pending hand or crib you own (0..29)."""

    type: Literal["announce"]
    points: int = Field(ge=-1000, le=1000)


class AnswerAction(_Model):
    """Muggins: answer the pending announcement of an opponent.

    ``ref`` (optional) names the announcement answered (``view.show.pending.ref``); an
    answer whose announcement was already settled is then refused with ``stale_answer``
    instead of landing on the next announcement.
    """

    type: Literal["answer"]
    call: Literal["accept", "muggins", "overcount"]
    ref: int | None = Field(default=None, ge=0, le=INT64_MAX, description="view.show.pending.ref")


class RematchAction(_Model):
    """After game over: a new game in the same room, same seats and options."""

    type: Literal["rematch"]


class AnswerTimeoutAction(_Model):
    """System action (the answer window ran out). A seat sending it gets ``system_only``."""

    type: Literal["answer_timeout"]


class ForfeitAction(_Model):
    """System action (sides left a match: they lose it, docs/rules.md §8.5). A seat sending
    it gets ``system_only``."""

    type: Literal["forfeit"]
    sides: Annotated[list[Annotated[int, Field(ge=0, le=3)]], Field(max_length=4)]


Action = Annotated[
    DiscardAction
    | PlayAction
    | AnnounceAction
    | AnswerAction
    | RematchAction
    | AnswerTimeoutAction
    | ForfeitAction,
    Field(discriminator="type"),
]
"""An engine action (``docs/rules.md`` "Actions"), the system's included."""

ClientAction = Annotated[
    DiscardAction | PlayAction | AnnounceAction | AnswerAction | RematchAction,
    Field(discriminator="type"),
]
"""An action a seat may send in ``act``: every :data:`Action` but the system actions."""

SYSTEM_ACTION_TYPES: frozenset[str] = frozenset(SYSTEM_ACTIONS)
"""The ``type`` of each action only the server applies (``answer_timeout``, ``forfeit``)."""
