"""The engine actions as the protocol takes them: ``act``'s ``action``, and the shape of every
entry of a view's ``legal`` list and of a hint's ``best``.

These models validate what a client sends, so they are a little more lenient than what the
engine emits (a card may be ``"10h"``; an announcement any whole number, so that the engine
answers ``bad_points`` rather than the codec ``bad_action``); the engine's own definitions
are in :mod:`engine.shapes`, and a test checks the two agree field for field.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    """Unknown fields are refused and types are strict (as in :mod:`protocol.messages`)."""

    model_config = ConfigDict(extra="forbid", strict=True)


CardText = Annotated[str, Field(min_length=2, max_length=3, examples=["5H", "TD"])]
"""A card as text, rank then suit (``docs/rules.md`` "Cards")."""


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
    ref: int | None = Field(default=None, ge=0, description="view.show.pending.ref")


class RematchAction(_Model):
    """After game over: a new game in the same room, same seats and options."""

    type: Literal["rematch"]


class AnswerTimeoutAction(_Model):
    """System action (the answer window ran out). A seat sending it gets ``system_only``."""

    type: Literal["answer_timeout"]


Action = Annotated[
    DiscardAction
    | PlayAction
    | AnnounceAction
    | AnswerAction
    | RematchAction
    | AnswerTimeoutAction,
    Field(discriminator="type"),
]
"""An engine action (``docs/rules.md`` "Actions")."""
