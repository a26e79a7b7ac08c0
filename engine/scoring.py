"""Counting hands, cribs and the cards of the play.

Public functions:

* :func:`score_hand` counts a four-card hand or crib with the starter, as in the show
  (ACC rules; docs/rules.md §4.2).
* :func:`score_pegging` scores the card just laid in the play (ACC rules; docs/rules.md §3.5).
* :func:`hand_total` is :func:`score_hand`'s total without checks or breakdown, for hot loops.

Both scorers return a :class:`Score`: the total and a breakdown of :class:`ScoreItem`.

How the show count is made fast (see docs/performance.md, "Scoring every hand"): fifteens,
pairs and runs depend only on the five ranks, so their points come from a table indexed by
the ranks, filled on first use from :func:`_rank_items` (the one definition of those rules);
the flush, his nobs and the check for a repeated card are a few suit comparisons. The
itemised breakdown of a show count is only built when :attr:`Score.items` is first read, from
the same :func:`_rank_items` and :func:`_suit_items`, so ``total == sum(item.points)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations, product

from . import shapes
from .cards import Card, parse_cards

FIFTEEN = "fifteen"
PAIR = "pair"
RUN = "run"
FLUSH = "flush"
NOBS = "nobs"
THIRTY_ONE = "thirty_one"

PAIR_POINTS = {2: 2, 3: 6, 4: 12}
"""Points for a pair, a pair royal and a double pair royal."""

JACK = 11


@dataclass(frozen=True, slots=True)
class ScoreItem:
    """One scoring combination.

    Attributes:
        kind: ``"fifteen"``, ``"pair"`` (2, 3 or 4 of a rank: a pair, pair royal or double
            pair royal), ``"run"``, ``"flush"``, ``"nobs"`` or, in the play,
            ``"thirty_one"``.
        cards: the cards that make it.
        points: what it scores, in holes.
    """

    kind: str
    cards: tuple[Card, ...]
    points: int

    def to_dict(self) -> shapes.ScoreItem:
        """Plain data (:class:`engine.shapes.ScoreItem`): ``{"kind": str, "cards": [str, ...],
        "points": int}``."""
        return {"kind": self.kind, "cards": [str(c) for c in self.cards], "points": self.points}


class Score:
    """A count: :attr:`total` holes and the :attr:`items` that make it up.

    A value object: treat it as read-only. Two scores are equal when their totals and items
    are equal.

    Args:
        total: the points, in holes.
        items: the :class:`ScoreItem` breakdown; its points sum to ``total``.
    """

    __slots__ = ("total", "_items")

    total: int

    def __init__(self, total: int, items: Iterable[ScoreItem] = ()) -> None:
        self.total = total
        self._items: tuple[ScoreItem, ...] = tuple(items)

    @property
    def items(self) -> tuple[ScoreItem, ...]:
        """The breakdown: a tuple of :class:`ScoreItem` whose points sum to :attr:`total`."""
        return self._items

    def to_dict(self) -> dict:
        """Plain data: ``{"total": int, "items": [item dicts]}``."""
        return {"total": self.total, "items": [i.to_dict() for i in self.items]}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Score):
            return NotImplemented
        return self.total == other.total and self.items == other.items

    def __hash__(self) -> int:
        return hash((self.total, self.items))

    def __repr__(self) -> str:
        return f"Score(total={self.total!r}, items={self.items!r})"


class _ShowScore(Score):
    """The :class:`Score` of :func:`score_hand`: the breakdown is built on first access.

    ``score_hand`` creates it without calling ``__init__`` (that is the cheap path) and sets
    ``total``, ``_cards`` (the four hand cards then the starter) and ``_crib``; ``_items``
    stays unset until :attr:`items` is read.
    """

    __slots__ = ("_cards", "_crib")

    __init__ = object.__init__  # type: ignore[assignment]  # no arguments: slots set by caller

    _cards: tuple[Card, Card, Card, Card, Card]
    _crib: bool

    @property
    def items(self) -> tuple[ScoreItem, ...]:
        """The breakdown (built from the cards on first access, then kept)."""
        try:
            return self._items
        except AttributeError:
            *hand, starter = self._cards
            items = (*_rank_items(self._cards), *_suit_items(hand, starter, self._crib))
            self._items = items
            return items


def _as_cards(cards: Iterable[Card | str]) -> list[Card]:
    return [c if isinstance(c, Card) else Card.parse(c) for c in cards]


def _rank_items(cards: Sequence[Card]) -> list[ScoreItem]:
    """Fifteens, pairs and runs among ``cards`` (the parts of a count that depend on rank).

    Args:
        cards: the cards counted together (the hand then the starter, in the show).

    Returns:
        Every fifteen (each distinct set of cards worth 15, 2 points), one ``pair`` item per
        rank held two or more times (2, 6 or 12 points), and every distinct run of three or
        more (one card of each rank, its length in points). docs/rules.md §4.2.
    """
    items: list[ScoreItem] = []
    values = [c.value for c in cards]
    n = len(cards)
    for size in range(2, n + 1):
        for idx in combinations(range(n), size):
            if sum(values[i] for i in idx) == 15:
                items.append(ScoreItem(FIFTEEN, tuple(cards[i] for i in idx), 2))
    by_rank: dict[int, list[Card]] = {}
    for c in cards:
        by_rank.setdefault(c.rank, []).append(c)
    for rank in sorted(by_rank):
        group = by_rank[rank]
        if len(group) >= 2:
            items.append(ScoreItem(PAIR, tuple(group), PAIR_POINTS[len(group)]))
    # Runs: find maximal sequences of consecutive ranks of length >= 3; each choice of one
    # card per rank is a distinct run (a double run counts twice, and so on).
    ranks = sorted(by_rank)
    start = 0
    while start < len(ranks):
        end = start
        while end + 1 < len(ranks) and ranks[end + 1] == ranks[end] + 1:
            end += 1
        length = end - start + 1
        if length >= 3:
            groups = [by_rank[r] for r in ranks[start : end + 1]]
            for choice in product(*groups):
                items.append(ScoreItem(RUN, choice, length))
        start = end + 1
    return items


def _suit_items(hand: Sequence[Card], starter: Card, crib: bool) -> list[ScoreItem]:
    """Flush and his nobs for a four-card ``hand`` with ``starter`` (docs/rules.md §4.2)."""
    items: list[ScoreItem] = []
    suit = hand[0].suit
    if all(c.suit == suit for c in hand):
        if starter.suit == suit:
            items.append(ScoreItem(FLUSH, (*hand, starter), 5))
        elif not crib:
            items.append(ScoreItem(FLUSH, tuple(hand), 4))
    for c in hand:
        if c.rank == JACK and c.suit == starter.suit:
            items.append(ScoreItem(NOBS, (c,), 1))
    return items


# --- The rank table -------------------------------------------------------------------------
#
# Fifteens, pairs and runs depend only on the five ranks; which cards can be his nobs or a
# repeated card depends only on where those ranks sit. So _RANK_TABLE[ra][rb][rc][rd][rs]
# (the hand's ranks in the order given, then the starter's) is a leaf
# ``(points, same_rank, hand_jacks)``, and only suits are left to compare:
#
# * points: fifteens + pairs + runs, from _rank_items (the one definition of those rules),
#   computed once per multiset of ranks (6,175 of them), kept in _RANK_POINTS;
# * same_rank: the position pairs (i, j) holding equal ranks, whose suits must differ (the
#   only way five cards can repeat one);
# * hand_jacks: the positions (0..3) of jacks in the hand, his nobs if of the starter's suit.
#
# Nested lists index faster than any dict key can be built. Branches are made on first use
# (None until then), a hand's 13 leaves at a time, and equal leaves are shared: the full
# table (13 ** 4 hand orders x 13 starters) takes about 5 MB and 1 s to build.

_LeafT = tuple[int, tuple[tuple[int, int], ...], tuple[int, ...]]
_RANK_TABLE: list = [None] * 14
_RANK_POINTS: dict[int, int] = {}
_MULTISET_KEY = (0, *(5**r for r in range(13)))
"""A multiset of ranks is keyed by the sum of 5 ** (rank - 1): a rank occurs at most 4 times."""
_LEAVES: dict[_LeafT, _LeafT] = {}
_POSITION_PAIRS = tuple(combinations(range(5), 2))


def _rank_points(ranks: tuple[int, ...]) -> int:
    """Fifteens + pairs + runs for five ranks (1..13), from :func:`_rank_items`.

    Five of one rank cannot be dealt; it gets 0 (score_hand rejects it as a repeated card
    before the points are used).
    """
    next_suit: dict[int, int] = {}
    cards = []
    for rank in ranks:  # any distinct suits will do: only ranks count here
        suit = next_suit.get(rank, 0)
        if suit == 4:
            return 0
        cards.append(Card(rank, "CDHS"[suit]))
        next_suit[rank] = suit + 1
    return sum(item.points for item in _rank_items(cards))


def _rank_leaves(ra: int, rb: int, rc: int, rd: int) -> list:
    """Build, store and return the last level of :data:`_RANK_TABLE` for a hand's ranks.

    Returns:
        A list indexed by the starter's rank (1..13; index 0 unused) of leaves
        ``(points, same_rank, hand_jacks)``.
    """
    hand = (ra, rb, rc, rd)
    hand_same = tuple((i, j) for i, j in _POSITION_PAIRS if j < 4 and hand[i] == hand[j])
    hand_jacks = tuple(i for i in range(4) if hand[i] == JACK)
    hand_key = sum(_MULTISET_KEY[r] for r in hand)
    leaves: list = [None]
    for rs in range(1, 14):
        key = hand_key + _MULTISET_KEY[rs]
        points = _RANK_POINTS.get(key)
        if points is None:
            points = _RANK_POINTS[key] = _rank_points((*hand, rs))
        same_rank = hand_same
        if rs in hand:
            same_rank += tuple((i, 4) for i in range(4) if hand[i] == rs)
        leaf = (points, same_rank, hand_jacks)
        leaves.append(_LEAVES.setdefault(leaf, leaf))
    node = _RANK_TABLE
    for rank in (ra, rb, rc):
        if node[rank] is None:
            node[rank] = [None] * 14
        node = node[rank]
    node[rd] = leaves
    return leaves


def _checked_cards(
    hand: Iterable[Card | str], starter: Card | str
) -> tuple[tuple[Card, Card, Card, Card], Card]:
    """Validate and convert the arguments of :func:`score_hand` (the slow, general path).

    Raises:
        ValueError: not four cards, bad text or a non-card, or the five are not all different.
    """
    if isinstance(hand, (str, bytes)):
        raise ValueError("a hand is a sequence of four cards, not one string")
    if isinstance(hand, Iterator):  # only reaches here after a failed unpacking consumed it
        raise ValueError("a hand has 4 cards")
    try:
        cards = _as_cards(hand)
    except TypeError:
        raise ValueError(f"a hand is a sequence of four cards, not {type(hand).__name__}") from None
    start = starter if isinstance(starter, Card) else Card.parse(starter)
    if len(cards) != 4:
        raise ValueError(f"a hand has 4 cards, not {len(cards)}")
    if len({*cards, start}) != 5:
        raise ValueError("a hand and its starter must be five different cards")
    a, b, c, d = (Card(x.rank, x.suit) if type(x) is not Card else x for x in cards)
    return (a, b, c, d), start if type(start) is Card else Card(start.rank, start.suit)


def score_hand(hand: Iterable[Card | str], starter: Card | str, *, crib: bool = False) -> Score:
    """Count a hand or crib in the show.

    Fifteens 2 each; pairs 2 each (pair royal 6, double pair royal 12); every distinct run of
    three or more scores its length; a flush of the four hand cards scores 4, or 5 with the
    starter — in the crib only the five-card flush counts; his nobs (a jack of the starter's
    suit in the hand) scores 1. Sources: ACC rules, docs/rules.md §4.2.

    Args:
        hand: four cards (``Card`` or card text such as ``"5H"``), in any order.
        starter: the starter (``Card`` or card text); a jack starter is never his nobs (it is
            his heels, scored at the cut, not here).
        crib: count as a crib (a four-card flush scores nothing).

    Returns:
        :class:`Score` with ``total`` (0..29 holes; never 19, 25, 26 or 27) and the ``items``
        breakdown (kinds ``fifteen``, ``pair``, ``run``, ``flush``, ``nobs``), which is built
        on first access and always sums to ``total``.

    Raises:
        ValueError: not four cards, a repeated card, the starter among them, or bad text.
    """
    # Fast path: a tuple or list of four Card objects and a Card starter. Anything else
    # (card texts, subclasses, wrong lengths, junk) goes through _checked_cards.
    try:
        a, b, c, d = hand  # type: ignore[misc]
    except (TypeError, ValueError):
        (a, b, c, d), starter = _checked_cards(hand, starter)
    else:
        if not (
            type(a) is Card
            and type(b) is Card
            and type(c) is Card
            and type(d) is Card
            and type(starter) is Card
        ):
            (a, b, c, d), starter = _checked_cards((a, b, c, d), starter)
    ra = a.rank
    rb = b.rank
    rc = c.rank
    rd = d.rank
    rs = starter.rank
    try:
        points, same_rank, hand_jacks = _RANK_TABLE[ra][rb][rc][rd][rs]
    except TypeError:  # that branch of the table is not built yet (None)
        points, same_rank, hand_jacks = _rank_leaves(ra, rb, rc, rd)[rs]
    five = (a, b, c, d, starter)
    if same_rank:  # equal ranks: their suits must differ
        for i, j in same_rank:
            if five[i].suit == five[j].suit:
                raise ValueError(f"a hand and its starter must be five different cards ({five[i]})")
    suit = a.suit
    if b.suit == suit and c.suit == suit and d.suit == suit:  # flush (docs/rules.md §4.2)
        if starter.suit == suit:
            points += 5
        elif not crib:
            points += 4
    if hand_jacks:  # his nobs: a jack in the hand of the starter's suit
        for i in hand_jacks:
            if five[i].suit == starter.suit:
                points += 1
    score = _ShowScore()
    score.total = points
    score._cards = five
    score._crib = crib
    return score


def hand_total(hand: Sequence[Card], starter: Card, crib: bool = False) -> int:
    """The total of :func:`score_hand` without checks or breakdown, for hot loops.

    Args:
        hand: four distinct ``Card`` objects (not checked: callers pass valid hands).
        starter: a fifth distinct ``Card``.
        crib: count as a crib.

    Returns:
        The count in holes (0..29), the same as ``score_hand(hand, starter, crib=crib).total``
        (docs/rules.md §4.2).
    """
    a, b, c, d = hand
    ra, rb, rc, rd, rs = a.rank, b.rank, c.rank, d.rank, starter.rank
    try:
        points, _, hand_jacks = _RANK_TABLE[ra][rb][rc][rd][rs]
    except TypeError:  # that branch of the table is not built yet (None)
        points, _, hand_jacks = _rank_leaves(ra, rb, rc, rd)[rs]
    suit = a.suit
    if b.suit == suit and c.suit == suit and d.suit == suit:
        if starter.suit == suit:
            points += 5
        elif not crib:
            points += 4
    for i in hand_jacks:
        if hand[i].suit == starter.suit:
            points += 1
    return points


def score_pegging(pile: Iterable[Card | str]) -> Score:
    """Score the last card laid in the play.

    The count reaching 15 scores 2 and reaching 31 scores 2; the last card pairing the one
    before it scores 2, three of a rank in a row 6, four 12; the last ``k >= 3`` cards forming
    a run in any order score ``k`` (the longest such run). Go and last card are not scored here.
    Sources: ACC rules, docs/rules.md §3.5.

    Args:
        pile: the cards of the current count (since the last reset), oldest first.

    Returns:
        :class:`Score` for the last card (``total`` 0 when it scores nothing or the pile is empty).

    Raises:
        ValueError: the count passes 31, a card repeats, or a text is not a card.
    """
    cards = _as_cards(pile)
    if len(set(cards)) != len(cards):
        raise ValueError("a card appears twice in the pile")
    count = sum(c.value for c in cards)
    if count > 31:
        raise ValueError(f"the count cannot pass 31 (it would be {count})")
    if not cards:
        return Score(0, ())
    items: list[ScoreItem] = []
    last = cards[-1]
    if count == 15:
        items.append(ScoreItem(FIFTEEN, tuple(cards), 2))
    elif count == 31:
        items.append(ScoreItem(THIRTY_ONE, tuple(cards), 2))
    same = 1
    while same < len(cards) and cards[-1 - same].rank == last.rank:
        same += 1
    if same >= 2:
        items.append(ScoreItem(PAIR, tuple(cards[-same:]), PAIR_POINTS[same]))
    for k in range(len(cards), 2, -1):
        ranks = sorted(c.rank for c in cards[-k:])
        if all(ranks[i + 1] == ranks[i] + 1 for i in range(k - 1)):
            items.append(ScoreItem(RUN, tuple(cards[-k:]), k))
            break
    return Score(sum(i.points for i in items), tuple(items))


__all__ = [
    "Score",
    "ScoreItem",
    "score_hand",
    "score_pegging",
    "hand_total",
    "parse_cards",
]
