"""The chance to win a two-player game from a pair of scores, the play's value of a kept
four, the chance that a rational opponent keeps a four and the crib it makes with a
rational opponent's throw (issue 22; docs/rules.md §4.3).

Both read :mod:`.expert_data`, numbers made by ``bench/expert_tables.py`` from games of
``standard`` against ``standard`` played through the engine (see there for how, and for
what it costs: a few minutes, once; nothing is built at run time). Decoding them is a
base64 string to an ``array`` per table at import, well under a millisecond.
"""

from __future__ import annotations

import base64
import sys
from array import array
from itertools import combinations_with_replacement

from . import expert_data


def _decode(text: str) -> array:
    values = array("H")
    values.frombytes(base64.b64decode("".join(text.split())))
    if sys.byteorder == "little":
        values.byteswap()  # stored big-endian
    return values


_WIN = {121: _decode(expert_data.WIN_121), 61: _decode(expert_data.WIN_61)}
_PEG = _decode(expert_data.PEG)
_KEEP = _decode(expert_data.KEEP)
_CRIB = _decode(expert_data.CRIB)
_SHAPES = {s: i for i, s in enumerate(combinations_with_replacement(range(1, 14), 4))}
_PAIRS = {s: i for i, s in enumerate(combinations_with_replacement(range(1, 14), 2))}

PONE_SHOW: tuple[float, ...] = tuple(expert_data.PONE_SHOW)
"""Distribution of the pone's show (its hand), in holes: ``PONE_SHOW[x]`` = P(x)."""

DEALER_SHOW: tuple[float, ...] = tuple(expert_data.DEALER_SHOW)
"""Distribution of the dealer's show (hand + crib), in holes."""

TARGETS = tuple(_WIN)
"""The targets with a table (docs/rules.md §1.3)."""


def pone_chance(pone: int, dealer: int, target: int = 121) -> float:
    """The pone's chance to win a 2-player game, the deal about to begin.

    Args:
        pone / dealer: the holes of the pone and of the dealer (0 or more).
        target: 121 or 61.

    Returns:
        0.0..1.0: 1.0 when the pone has reached the target, 0.0 when only the dealer has.

    Raises:
        KeyError: a target without a table.
    """
    if pone >= target:
        return 1.0
    if dealer >= target:
        return 0.0
    return _WIN[target][max(pone, 0) * target + max(dealer, 0)] / 65535.0


def win_chance(mine: int, theirs: int, i_deal: bool, target: int = 121) -> float:
    """This seat's chance to win from ``mine`` against ``theirs`` holes, when the next deal is
    its own (``i_deal``) or the opponent's. See :func:`pone_chance`."""
    if mine >= target:
        return 1.0
    if theirs >= target:
        return 0.0
    if i_deal:
        return 1.0 - pone_chance(theirs, mine, target)
    return pone_chance(mine, theirs, target)


def play_value(ranks: list[int] | tuple[int, ...], dealer: bool) -> tuple[float, float]:
    """The average pegs of the play ``(this seat's, the opponent's)`` with a kept four of
    these ranks (1..13), as dealer or as pone, against every four the opponent may keep
    (weighed by the chance that ``standard`` keeps it), both seats playing as ``standard``
    does (a table, not a search)."""
    i = _SHAPES[tuple(sorted(ranks))] * 4 + (2 if dealer else 0)
    return _PEG[i] / 1000.0, _PEG[i + 1] / 1000.0


def crib_ranks(ranks: list[int] | tuple[int, ...], i_deal: bool) -> float:
    """The average rank count of a crib (pairs, fifteens, runs; no flush or nobs), in
    holes, that this seat throws two cards of these ranks (1..13) to, the opponent's two
    being what ``standard`` throws in its role and the starter any other card: this seat's
    own crib (``i_deal``: the pone's throw) or the opponent's (its own throw as dealer).

    Raises:
        KeyError: not two ranks of 1..13.
    """
    return _CRIB[_PAIRS[tuple(sorted(ranks))] * 2 + (1 if i_deal else 0)] / 1000.0


def keep_chance(ranks: list[int] | tuple[int, ...], dealer: bool) -> float:
    """The chance that ``standard`` keeps four cards of these ranks (1..13) when they are
    among the six it is dealt, as dealer or as pone (a table measured over random hands;
    bench/expert_tables.py). 0.0..1.0; a hand of six holds 15 fours, so about 1/15 on
    average.

    Raises:
        KeyError: not four ranks of 1..13.
    """
    i = _SHAPES[tuple(sorted(ranks))] * 2 + (1 if dealer else 0)
    return _KEEP[i] / 65535.0


_COMB = ((1, 0, 0, 0, 0), (1, 1, 0, 0, 0), (1, 2, 1, 0, 0), (1, 3, 3, 1, 0), (1, 4, 6, 4, 1))
_BY_HELD: dict[tuple[int, int], list[tuple[tuple[int, ...], tuple[tuple[int, int], ...], int]]] = {}


def _shapes_with(held: int, played: int) -> list:
    """Every shape of ``held`` ranks with its ranks' multiplicities and the keep table's
    index of the four it makes with ``played`` (0: none laid, with ``held`` 4)."""
    key = (held, played)
    got = _BY_HELD.get(key)
    if got is None:
        got = []
        for shape in combinations_with_replacement(range(1, 14), held):
            mult = tuple((r, shape.count(r)) for r in sorted(set(shape)))
            four = tuple(sorted((*shape, played))) if played else shape
            got.append((shape, mult, _SHAPES[four] * 2))
        _BY_HELD[key] = got
    return got


def keep_weights(counts: list[int] | tuple[int, ...], played: tuple[int, ...],
                 dealer: bool) -> list[tuple[tuple[int, ...], float]]:
    """The opponent's possible rank shapes of ``4 - len(played)`` cards (``played``: the
    ranks it has laid, none or one) with their weights: how many ways ``counts`` (unseen
    cards by rank, index 1..13, at most 4 each) make the shape, times :func:`keep_chance`
    of the four. Shapes of weight 0 are left out.

    Raises:
        ValueError: ``played`` holds more than one rank.
    """
    if len(played) > 1:
        raise ValueError("keep_weights takes at most one laid rank")
    table = _shapes_with(4 - len(played), played[0] if played else 0)
    off = 1 if dealer else 0
    keep = _KEEP
    comb = _COMB
    out = []
    for shape, mult, i in table:
        w = 1
        for r, m in mult:
            w *= comb[counts[r]][m]
            if not w:
                break
        if w:
            k = keep[i + off]
            if k:
                out.append((shape, w * k / 65535.0))
    return out
