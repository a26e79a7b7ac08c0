"""Shared helpers for the computer players: card text, unseen cards, fast rank-only counts.

Everything here works on the plain data of a seat's ``view`` (card texts such as ``"5H"``,
``"TD"``), never on a game state. Counting follows docs/rules.md §3.5 (the play) and §4.2 (the
show); the rank-only tables are cross-checked against :func:`engine.scoring.hand_total` in
``tests/engine/test_computer.py``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import combinations_with_replacement
from math import comb

from ..cards import RANK_CHARS, SUITS, Card

PAIR_POINTS = (0, 0, 2, 6, 12)
"""Points for 1..4 of a rank together (pair 2, pair royal 6, double pair royal 12)."""


def rank_of(card: str) -> int:
    """Rank 1 (ace) .. 13 (king) of a card text such as ``"TD"``."""
    index = RANK_CHARS.find(card[0].upper()) if len(card) == 2 else -1
    return index + 1 if index >= 0 else Card.parse(card).rank


def suit_of(card: str) -> str:
    """Suit letter (``C D H S``) of a card text."""
    suit = card[-1].upper()
    return suit if len(card) == 2 and suit in SUITS else Card.parse(card).suit


def value_of(rank: int) -> int:
    """Counting value of a rank: ace 1, 2..10 face value, J Q K 10 (docs/rules.md §3.5)."""
    return 10 if rank >= 10 else rank


ALL_CARDS: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANK_CHARS)
"""The 52 card texts in canonical form."""


def unseen_cards(view: dict) -> list[str]:
    """Cards this seat cannot see: the pack, other hands, other discards, the crib.

    Args:
        view: ``engine.view(state, seat)`` for a seated player.

    Returns:
        Canonical card texts not in the seat's hand or kept cards, its own discards, the
        starter, the cards played this deal, or any hand shown or pending in this deal's show.
    """
    seen: set[str] = set()
    for key in ("hand", "kept", "my_discards"):
        seen.update(view.get(key) or ())
    if view.get("starter"):
        seen.add(view["starter"])
    for entry in view.get("played") or ():
        seen.add(entry["card"])
    show = view.get("show") or {}
    for counted in show.get("counted") or ():
        seen.update(counted.get("cards") or ())
    pending = show.get("pending")
    if pending:
        seen.update(pending.get("cards") or ())
    for cards in (show.get("hands") or {}).values():
        seen.update(cards or ())
    canon = {_canonical(c) for c in seen}
    return [c for c in ALL_CARDS if c not in canon]


def _canonical(card: str) -> str:
    if len(card) == 2 and card[0] in RANK_CHARS and card[1] in SUITS:
        return card
    return str(Card.parse(card))


def rank_counts(cards: Iterable[str]) -> list[int]:
    """How many of each rank: index 1..13 (index 0 unused)."""
    counts = [0] * 14
    for c in cards:
        counts[rank_of(c)] += 1
    return counts


def suit_counts(cards: Iterable[str]) -> dict[str, int]:
    """How many of each suit among ``cards``."""
    counts = dict.fromkeys(SUITS, 0)
    for c in cards:
        counts[suit_of(c)] += 1
    return counts


def rank_points(ranks: Sequence[int]) -> int:
    """Fifteens, pairs and runs among some ranks, as in the show (docs/rules.md §4.2).

    Args:
        ranks: ranks 1..13, any order, at most four of a rank.

    Returns:
        The points, without flush or nobs (they depend on suits).
    """
    ways = [1] + [0] * 15
    for r in ranks:
        v = value_of(r)
        for s in range(15, v - 1, -1):
            ways[s] += ways[s - v]
    points = 2 * ways[15]
    counts = [0] * 15
    for r in ranks:
        counts[r] += 1
    for c in counts:
        points += PAIR_POINTS[c] if c < 5 else 0
    run_len, run_mult = 0, 1
    for r in range(1, 15):
        if r <= 13 and counts[r]:
            run_len += 1
            run_mult *= counts[r]
        else:
            if run_len >= 3:
                points += run_len * run_mult
            run_len, run_mult = 0, 1
    return points


def _build_five_table() -> dict[tuple[int, ...], int]:
    table: dict[tuple[int, ...], int] = {}
    for ranks in combinations_with_replacement(range(1, 14), 5):
        if all(ranks.count(r) <= 4 for r in set(ranks)):
            table[ranks] = rank_points(ranks)
    return table


FIVE_RANKS: dict[tuple[int, ...], int] = _build_five_table()
"""Rank-only points of every sorted five-rank shape (6,175 entries, built at import, ~30 ms)."""


def pegging_points(ranks: Sequence[int], count: int) -> int:
    """Points for the last card laid on a pile (docs/rules.md §3.5), ranks only.

    Args:
        ranks: ranks of the cards of the current count, oldest first, last one just laid.
        count: the count after the last card (0..31).

    Returns:
        Fifteen or 31 (2), pair/pair royal/double pair royal with the cards just before
        (2/6/12), the longest run of 3+ among the most recent cards (its length). Not go or
        last card.
    """
    if not ranks:
        return 0
    points = 2 if count in (15, 31) else 0
    last = ranks[-1]
    same = 1
    n = len(ranks)
    while same < n and ranks[-1 - same] == last:
        same += 1
    points += PAIR_POINTS[min(same, 4)]
    for k in range(n, 2, -1):
        window = ranks[-k:]
        if len(set(window)) == k and max(window) - min(window) == k - 1:
            points += k
            break
    return points


def prob_holds_none(unseen: int, targets: int, held: int) -> float:
    """Chance that ``held`` cards dealt at random from ``unseen`` include none of ``targets``.

    The hypergeometric ``C(unseen - targets, held) / C(unseen, held)``; 1.0 when ``held``
    is 0 and 0.0 when the holding must include one.
    """
    if held <= 0 or targets <= 0:
        return 1.0
    if unseen - targets < held:
        return 0.0
    return comb(unseen - targets, held) / comb(unseen, held)
