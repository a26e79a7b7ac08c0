"""Ranks of a finished game or match for the rating update (pure; issue 19 point 2).

The contract (ISSUE19.md, helper "ratings"): the winner first; at 3 or 4 playing alone the
others by their final score (a match: by games won, then game points, then spread); a side
with an abandoned seat (or, in a match, a side that forfeited it) ranks last, as a loss;
equal keys tie (openskill takes equal ranks as a tie). Ranks are dense: 1, 2, 3...
"""

from __future__ import annotations

from typing import Any


def _dense(keys: list[tuple[Any, ...]]) -> list[int]:
    order = sorted(set(keys))
    return [order.index(k) + 1 for k in keys]


def game_ranks(result: dict[str, Any], sides: int, abandoned: set[int]) -> list[int]:
    """Per side (0..sides-1), its rank in a finished game.

    Args:
        result: the ``game_over`` event's fields (``winner``, ``scores``, ``losers``).
        sides: the number of sides.
        abandoned: sides with a seat whose player abandoned the game.

    Returns:
        ``[rank per side]``, 1 = first.
    """
    winner = result.get("winner")
    scores = list(result.get("scores") or [0] * sides)
    losers = set(result.get("losers") or ())
    keys = []
    for side in range(sides):
        beaten = side != winner if winner is not None else side in losers
        keys.append((side in abandoned, beaten, -int(scores[side]) if beaten else 0))
    return _dense(keys)


def match_ranks(match: dict[str, Any], sides: int, abandoned: set[int]) -> list[int]:
    """Per side, its rank in a match that is over (``GameState.match``, ISSUE19.md):
    forfeited or abandoned sides last, the winner first, the others by wins, then game
    points, then spread."""
    winner = match.get("winner")
    last = abandoned | set(match.get("forfeited") or ())
    wins = list(match.get("wins") or [0] * sides)
    points = list(match.get("points") or [0] * sides)
    spread = list(match.get("spread") or [0] * sides)
    keys = [(side in last, side != winner, -int(wins[side]), -int(points[side]),
             -int(spread[side])) for side in range(sides)]
    return _dense(keys)
