"""The pure part of quick match: which waiting players sit down together, and where.

**The rating used.** A player's rating at the table's kind (``2``, ``3``, ``4``, ``2x2``),
read from the ``ratings`` table when they join the queue, on the Elo-like scale of the
board but from the mean, not the conservative estimate: ``1000 + 50 x (mu - 25)``
(:func:`match_rating`); a newcomer (no row) is 1000. An unrated queue ignores ratings:
everybody is 1000 there, so it matches in order of arrival.

**The accepted gap** (:func:`gap`): a player who has waited ``w`` seconds accepts a table
whose players' ratings span at most

    gap(w) = min(GAP_START + GAP_PER_SECOND x w, GAP_MAX) = min(100 + 20 w, 800) points

— 100 points at once (about a 64 % favourite in Elo's terms), 300 after 10 s, 500 after
20 s, anybody within 800 after 35 s. A table is acceptable when its span (highest minus
lowest rating) is within the gap of *every* player at it, so the newest arrival's narrow
gap protects them too.

**The grouping** (:func:`group`): players are taken in order of arrival (the longest
waiting first, ties by player id). Each one not yet placed is an anchor: the others not yet
placed are tried nearest in rating first (ties: the longer waiting), and one is added when
the span stays within the gap of everybody at the table so far and of the candidate, and
the candidate is blocked by nobody at it (both directions of ``blocked``); the first
``size`` found make a table. An anchor for whom no table is found stays waiting (its gap
widens). The cost is ``O(n log n)`` for the sort plus, per anchor, the candidates walked
outwards from it until the gaps stop them (bounded by ``size`` when the ratings are
close): bench/quickmatch.py measures it per player.

**The seats** (:func:`seat`): deterministic from the table. Partnerships (four players):
the strongest and the weakest are partners (seats 0 and 2), the middle two the other
side (1 and 3), so the sides are as even as the four allow. Other tables: by rating,
highest first, ties by player id (seat 0 deals first after the cut anyway).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

GAP_START = 100.0
"""The accepted rating span at once (points of the displayed scale)."""

GAP_PER_SECOND = 20.0
"""How much the accepted span widens per second waited."""

GAP_MAX = 800.0
"""The widest accepted span (reached after 35 s)."""

NEWCOMER_RATING = 1000.0
"""A player with no rating at the table's kind (and everybody in an unrated queue)."""

Blocked = Callable[[str, str], bool]
"""``blocked(a, b)``: whether player ``a`` blocked player ``b`` (asked both ways)."""


def never_blocked(a: str, b: str) -> bool:
    """The default ``blocked``: nobody blocks anybody."""
    return False


def gap(waited: float) -> float:
    """The rating span a player who has waited ``waited`` seconds accepts (see the module
    docstring): ``min(100 + 20 w, 800)``; a negative wait counts as 0."""
    return min(GAP_START + GAP_PER_SECOND * max(0.0, waited), GAP_MAX)


def match_rating(mu: float | None) -> float:
    """The rating matched on: ``1000 + 50 (mu - 25)``; None (no rating) -> 1000."""
    if mu is None:
        return NEWCOMER_RATING
    return NEWCOMER_RATING + 50.0 * (mu - 25.0)


@dataclass(frozen=True)
class Waiting:
    """One player in a queue, as the matcher sees it.

    Attributes:
        player: the player's public id.
        rating: :func:`match_rating` at the table's kind (1000 in an unrated queue).
        joined: when they joined the queue (Unix seconds).
    """

    player: str
    rating: float
    joined: float


def group(waiting: Sequence[Waiting], size: int, now: float,
          blocked: Blocked = never_blocked) -> list[list[Waiting]]:
    """Tables of ``size`` players out of one queue's ``waiting`` (see the module docstring).

    Args:
        waiting: the queue's players (each once).
        size: players per table (2, 3 or 4).
        now: the time (Unix seconds) the waits are measured to.
        blocked: ``blocked(a, b)``; two players of whom either blocked the other never sit
            at one table.

    Returns:
        The tables, each a list of ``size`` players in seat order (:func:`seat`); a player
        is in at most one. Players not in any keep waiting.
    """
    if size < 2:
        raise ValueError("a table has at least 2 players")
    by_rating = sorted(waiting, key=lambda w: (w.rating, w.joined, w.player))
    ratings = [w.rating for w in by_rating]
    index = {id(w): i for i, w in enumerate(by_rating)}
    placed = [False] * len(by_rating)
    tables: list[list[Waiting]] = []
    for anchor in sorted(waiting, key=lambda w: (w.joined, w.player)):
        a = index[id(anchor)]
        if placed[a]:
            continue
        chosen = _table_for(a, by_rating, ratings, placed, size, now, blocked)
        if chosen is None:
            continue
        for i in chosen:
            placed[i] = True
        tables.append(seat([by_rating[i] for i in chosen], size))
    return tables


def _table_for(a: int, by_rating: list[Waiting], ratings: list[float], placed: list[bool],
               size: int, now: float, blocked: Blocked) -> list[int] | None:
    """The indexes of a table for the anchor ``a``, or None."""
    anchor = by_rating[a]
    lo = hi = anchor.rating
    limit = gap(now - anchor.joined)  # the narrowest gap of the table so far
    chosen = [a]
    left, right = a - 1, a + 1
    # The candidates can only lie within the anchor's own gap of its rating.
    first = bisect.bisect_left(ratings, anchor.rating - limit)
    last = bisect.bisect_right(ratings, anchor.rating + limit)
    while len(chosen) < size:
        while left >= first and placed[left]:
            left -= 1
        while right < last and placed[right]:
            right += 1
        has_left, has_right = left >= first, right < last
        if not has_left and not has_right:
            return None
        if has_left and has_right:
            dl = anchor.rating - ratings[left]
            dr = ratings[right] - anchor.rating
            if dl < dr or (dl == dr and _earlier(by_rating[left], by_rating[right])):
                pick, left = left, left - 1
            else:
                pick, right = right, right + 1
        elif has_left:
            pick, left = left, left - 1
        else:
            pick, right = right, right + 1
        cand = by_rating[pick]
        span = max(hi, cand.rating) - min(lo, cand.rating)
        if span > limit:
            # Walking outwards only widens the span on this side; the other side may still
            # fit, so narrow the window to the anchor's side that is left.
            if cand.rating < anchor.rating:
                first = pick + 1
            else:
                last = pick
            continue
        if span > gap(now - cand.joined):
            continue
        if any(blocked(by_rating[c].player, cand.player)
               or blocked(cand.player, by_rating[c].player) for c in chosen):
            continue
        chosen.append(pick)
        lo, hi = min(lo, cand.rating), max(hi, cand.rating)
        limit = min(limit, gap(now - cand.joined))
    return chosen


def _earlier(x: Waiting, y: Waiting) -> bool:
    return (x.joined, x.player) < (y.joined, y.player)


def seat(players: Sequence[Waiting], size: int) -> list[Waiting]:
    """The players of one table in seat order (see the module docstring)."""
    ranked = sorted(players, key=lambda w: (-w.rating, w.player))
    if size == 4 and len(ranked) == 4:
        # Seats 0 and 2 are one side, 1 and 3 the other (docs/rules.md §1.2).
        return [ranked[0], ranked[1], ranked[3], ranked[2]]
    return ranked
