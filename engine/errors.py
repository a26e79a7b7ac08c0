"""The engine's rules error and its stable codes (see docs/rules.md, "Errors")."""

from __future__ import annotations

WRONG_PHASE = "wrong_phase"
NOT_YOUR_TURN = "not_your_turn"
ALREADY_DISCARDED = "already_discarded"
WRONG_DISCARD_COUNT = "wrong_discard_count"
CARD_NOT_IN_HAND = "card_not_in_hand"
COUNT_OVER_31 = "count_over_31"
BAD_CARD = "bad_card"
BAD_ACTION = "bad_action"
BAD_SEAT = "bad_seat"
BAD_POINTS = "bad_points"
ALREADY_ANNOUNCED = "already_announced"
NOT_AN_OPPONENT = "not_an_opponent"
ALREADY_ANSWERED = "already_answered"
NOTHING_TO_ANSWER = "nothing_to_answer"
GAME_OVER = "game_over"
SYSTEM_ONLY = "system_only"
STALE_ANSWER = "stale_answer"

CODES = frozenset(
    {
        WRONG_PHASE, NOT_YOUR_TURN, ALREADY_DISCARDED, WRONG_DISCARD_COUNT, CARD_NOT_IN_HAND,
        COUNT_OVER_31, BAD_CARD, BAD_ACTION, BAD_SEAT, BAD_POINTS, ALREADY_ANNOUNCED,
        NOT_AN_OPPONENT, ALREADY_ANSWERED, NOTHING_TO_ANSWER, GAME_OVER, SYSTEM_ONLY,
        STALE_ANSWER,
    }
)
"""Every code :class:`RulesError` may carry."""

MEANINGS: dict[str, str] = {
    WRONG_PHASE: "the action does not belong to the current phase",
    NOT_YOUR_TURN: "another seat is to act (the play; an announcement by anyone but the owner)",
    ALREADY_DISCARDED: "this seat has already laid its cards away this deal",
    WRONG_DISCARD_COUNT: "not the number of cards this deal asks for",
    CARD_NOT_IN_HAND: "the card is not held by this seat (or is repeated)",
    COUNT_OVER_31: "the card would take the count past 31",
    BAD_CARD: "the text is not a card",
    BAD_ACTION: "unknown action type or malformed fields",
    BAD_SEAT: "no such seat",
    BAD_POINTS: "an announcement outside 0..29",
    ALREADY_ANNOUNCED: "the owner has already announced the pending count",
    NOT_AN_OPPONENT: "partners and the owner never answer an announcement (docs/rules.md §5.2)",
    ALREADY_ANSWERED: "this seat has already answered the pending announcement",
    NOTHING_TO_ANSWER: "no announcement is waiting for answers",
    GAME_OVER: "the game has ended; only rematch is accepted",
    SYSTEM_ONLY: "a system action sent by a seat, or a seat action sent as system",
    STALE_ANSWER: "an answer whose ref names an announcement that is no longer pending",
}
"""Each code's meaning, one line (docs/rules.md, "Errors", says more)."""


class RulesError(Exception):
    """An action the rules do not allow; the state it was applied to is left untouched.

    Attributes:
        code: a stable machine-readable code, one of :data:`CODES` (``"not_your_turn"``,
            ``"count_over_31"``, ...); the server forwards it to clients as-is.
        message: a human-readable explanation (English; wording may change).
    """

    def __init__(self, code: str, message: str) -> None:
        if code not in CODES:
            raise ValueError(f"unknown rules error code {code!r}")
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def to_dict(self) -> dict:
        """Plain data: ``{"code": str, "message": str}``."""
        return {"code": self.code, "message": self.message}
