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
