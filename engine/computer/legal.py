"""Legal actions computed from a seat's view alone (for clients such as ``cribbage-bot``).

A client over the wire holds only its seat's ``view`` (a snapshot plus JSON patches), never
the game state, so it cannot call :func:`engine.legal_actions`. :func:`legal_from_view`
gives the same list from the view: everything it needs is in what the seat may see
(docs/rules.md §2.3 deal sizes, §3.2 the compulsory play, §5 Muggins).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from ..show import answer_actions
from .common import rank_of, value_of


def legal_from_view(view: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Every action the view's seat may take now; the same list (same order) as
    ``engine.legal_actions(state, view["seat"])`` for the state the view was made from.

    Args:
        view: ``engine.view(state, seat)`` (or the same document kept up to date by patches)
            for a seated player; ``None`` (game not started) or a spectator's view gives ``[]``.

    Returns:
        Plain action dicts: discards (every combination of 2 cards with two players, else 1),
        plays (every held card that keeps the count at 31 or under, on the seat's turn),
        ``announce`` 0..29 for the owner of the pending Muggins step, the three answers
        (with the announcement's ``ref``) for an opponent still awaited, ``rematch`` after
        game over; ``[]`` when the seat has nothing to do.
    """
    if not view or view.get("seat") is None:
        return []
    seat = view["seat"]
    phase = view.get("phase")
    hand = list(view.get("hand") or ())
    if phase == "discard":
        if view["discarded"][seat]:
            return []
        k = 2 if view["players"] == 2 else 1
        return [{"type": "discard", "cards": list(c)} for c in combinations(hand, k)]
    if phase == "play":
        if view.get("turn") != seat:
            return []
        room = 31 - int(view.get("count") or 0)
        return [{"type": "play", "card": c} for c in hand if value_of(rank_of(c)) <= room]
    if phase == "show":
        pending = (view.get("show") or {}).get("pending")
        if not pending:
            return []
        if pending.get("announced") is None:
            if pending.get("seat") == seat:
                return [{"type": "announce", "points": p} for p in range(30)]
            return []
        if seat in (pending.get("awaiting") or ()):
            return answer_actions(pending.get("ref"))
        return []
    if phase == "game_over":
        return [{"type": "rematch"}]
    return []
