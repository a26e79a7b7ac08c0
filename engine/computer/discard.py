"""Choosing the discard to the crib by expected value (issue 4; docs/rules.md §2.3, §4.2).

For each legal discard the ``standard`` player computes

* the **hand** part exactly: the average count of the four kept cards over every starter it
  cannot see (46 with two players, 47 with three or four), fifteens, pairs, runs, flush and
  nobs included;
* the **crib** part from a table: the average count of a crib holding the discarded card(s)
  plus random other cards and a random starter (ranks exactly over the rest of the pack,
  flush and nobs by their chances). It ignores that real opponents do not throw at random —
  the usual "discard table" simplification — and is built once, lazily (~60 ms).

The value of a choice is ``hand + w * crib`` with ``w = +1`` when the crib belongs to the
seat's side (the dealer or, in partnerships, the dealer's partner), ``w = -1`` when it
belongs to the only opposing side, and ``w = -1 / (number of opposing players)`` with three
or four playing alone (points given to one of several opponents hurt less). In Lowball
(docs/rules.md §7) the player minimises the same value.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations_with_replacement
from math import comb

from ..cards import SUITS
from .common import FIVE_RANKS, rank_counts, rank_of, suit_counts, suit_of, unseen_cards

_JACK = 11


def _crib_rank_average(discard_ranks: tuple[int, ...], others: int) -> float:
    """Average rank-only count of a crib: the discards plus ``others`` random cards + starter."""
    avail = [4] * 14
    avail[0] = 0
    for r in discard_ranks:
        avail[r] -= 1
    pool = sum(avail)
    total = 0.0
    for extra in combinations_with_replacement(range(1, 14), others + 1):
        weight = 1
        for r in set(extra):
            weight *= comb(avail[r], extra.count(r))
        if weight:
            total += weight * FIVE_RANKS[tuple(sorted(discard_ranks + extra))]
    return total / comb(pool, others + 1)


@cache
def crib_average(discards: tuple[str, ...]) -> float:
    """Expected count of the crib the ``discards`` go to, with random other cards.

    Args:
        discards: 2 card texts (two players) or 1 (three or four players). The crib gets
            ``4 - len(discards)`` random other cards and a random starter from the other
            ``52 - len(discards)`` cards.

    Returns:
        Expected crib count in holes (docs/rules.md §4.2: crib flush only with the starter).
        Memoised on the card texts; the rank part is shared by every suit combination.
    """
    ranks = tuple(sorted(rank_of(c) for c in discards))
    return _with_suits(discards, _rank_part(ranks, 4 - len(discards)))


@cache
def crib_suit_part(discards: tuple[str, ...]) -> float:
    """The flush and his nobs part of :func:`crib_average` (holes): the crib's suits
    with random other cards and a random starter (docs/rules.md §4.2)."""
    return _with_suits(discards, 0.0)


def _with_suits(discards: tuple[str, ...], value: float) -> float:
    """``value`` plus the crib's flush and his nobs chances (see :func:`crib_average`)."""
    others = 4 - len(discards)
    pool = 52 - len(discards)
    suits = [suit_of(c) for c in discards]
    # Flush: every crib card and the starter of one suit (docs/rules.md §4.2).
    if len(set(suits)) == 1:
        same = 13 - len(suits)
        value += 5 * comb(same, others + 1) / comb(pool, others + 1)
    # Nobs from a discarded jack: the starter is of its suit.
    suit_left = {s: 13 - suits.count(s) for s in SUITS}
    for c, s in zip(discards, suits, strict=True):
        if rank_of(c) == _JACK:
            value += suit_left[s] / pool
    # Nobs from a random jack among the others: P(it is in the crib) * P(starter matches).
    for s in SUITS:
        jack_is_discarded = any(rank_of(c) == _JACK and suit_of(c) == s for c in discards)
        if not jack_is_discarded:
            value += others / pool * (suit_left[s] - 1) / (pool - 1)
    return value


@cache
def _rank_part(ranks: tuple[int, ...], others: int) -> float:
    return _crib_rank_average(ranks, others)


def hand_average(kept: list[str], unseen: list[str]) -> float:
    """Exact expected show count of ``kept`` over every starter in ``unseen``.

    Args:
        kept: the four card texts kept for the show.
        unseen: every card the seat cannot see (each equally likely to be the starter).

    Returns:
        Expected count in holes (docs/rules.md §4.2), flush and nobs included.
    """
    n = len(unseen)
    ranks = [rank_of(c) for c in kept]
    counts = rank_counts(unseen)
    total = 0
    for r in range(1, 14):
        if counts[r]:
            total += counts[r] * FIVE_RANKS[tuple(sorted((*ranks, r)))]
    suits_unseen = suit_counts(unseen)
    suits = [suit_of(c) for c in kept]
    expected = total / n
    if len(set(suits)) == 1:
        expected += 4 + suits_unseen[suits[0]] / n
    for c, s in zip(kept, suits, strict=True):
        if rank_of(c) == _JACK:
            expected += suits_unseen[s] / n
    return expected


def crib_weight(view: dict) -> float:
    """Weight of the crib's points in this seat's discard value (see the module doc)."""
    sides = view["sides"]
    seat = view["seat"]
    if sides[view["dealer"]] == sides[seat]:
        return 1.0
    opposing = len(set(sides)) - 1
    return -1.0 / max(opposing, 1)


def rank_discards(view: dict, legal: list[dict]) -> list[dict]:
    """Every legal discard with its expected points, best first.

    Args:
        view: the seat's view in the ``discard`` phase.
        legal: the seat's legal actions (``{"type": "discard", "cards": [...]}``).

    Returns:
        One dict per legal discard, best first for this seat's goal (most points, or fewest
        in Lowball): ``{"action": <the legal action>, "cards": [...], "expected": float,
        "hand": float, "crib": float}`` — ``expected = hand + w * crib`` in holes, ``hand``
        the kept cards' average show count, ``crib`` the crib's average count.
    """
    hand = list(view["hand"])
    unseen = unseen_cards(view)
    weight = crib_weight(view)
    lowball = bool((view.get("options") or {}).get("lowball"))
    rows = []
    for action in legal:
        if action.get("type") != "discard":
            continue
        thrown = list(action["cards"])
        kept = [c for c in hand if c not in thrown]
        if len(kept) != 4:
            continue
        h = hand_average(kept, unseen)
        cr = crib_average(tuple(sorted(thrown)))
        rows.append(
            {
                "action": action,
                "cards": thrown,
                "expected": round(h + weight * cr, 3),
                "hand": round(h, 3),
                "crib": round(cr, 3),
                "_key": h + weight * cr,
            }
        )
    rows.sort(key=lambda row: row["_key"], reverse=not lowball)
    for row in rows:
        del row["_key"]
    return rows
