"""The rest of a two-player play, by ranks only: scoring, an opponent model and a search
(issue 22; docs/rules.md §3).

Suits never matter in the play, so everything here works on ranks 1..13. Three pieces:

* :func:`peg_points` — what the card just laid pegs (fifteen, 31, pairs, runs; docs/rules.md
  §3.5), the same as :func:`.common.pegging_points` but faster;
* :func:`model_play` — the card a typical opponent lays: the most points now, less a
  static guess of what it offers back (a count of 5 or 21 for a ten-card, a count a card
  brings to 15 or 31), keeping low cards when nothing scores; cheap enough for the inner
  loop of the search;
* :func:`search` — the best margin (my pegs minus the opponent's) from a position where both
  holdings are known (one determinised world): this seat maximises over its cards, the
  opponent follows :func:`model_play`; go, 31, the count reset and last card as in
  docs/rules.md §3.2–3.6. An optional ``leaf`` turns the final pegging scores into a chance
  to win instead (the game ends the moment a side reaches the target, §4.3).

:mod:`.expert` averages :func:`search` over the opponent holdings it samples.
"""

from __future__ import annotations

from collections.abc import Callable
from math import comb

VALUE = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)
"""Counting value by rank (index 1..13; ace 1, faces 10; docs/rules.md §3.5)."""

_PAIRS = (0, 0, 2, 6, 12, 12, 12, 12, 12)  # (more than four only in a model's guess)

# Static guess, per count after a card, of what the next player can make of it: a card of
# value 15 - c or 31 - c scores 2 (a ten-card is four ranks, so far likelier).
_DANGER = [0.0] * 32
for _c in range(32):
    _risk = 0.0
    for _need in (15 - _c, 31 - _c):
        if 1 <= _need <= 9:
            _risk += 0.7
        elif _need == 10:
            _risk += 1.6
    _DANGER[_c] = _risk
del _c, _risk, _need


def peg_points(pile: tuple[int, ...], count: int) -> int:
    """Points for the last rank of ``pile`` (oldest first), the count being ``count`` after it.

    Fifteen or 31 (2), pair / pair royal / double pair royal (2/6/12), the longest run of
    three or more among the most recent cards (its length); not go or last card
    (docs/rules.md §3.5).
    """
    n = len(pile)
    points = 2 if count == 15 or count == 31 else 0
    if n < 2:
        return points
    last = pile[-1]
    if pile[-2] == last:
        same = 2
        while same < n and pile[-1 - same] == last:
            same += 1
        return points + _PAIRS[same]
    if n >= 3:
        best = 0
        lo = hi = last
        seen = 1 << last
        for k in range(2, n + 1):
            r = pile[-k]
            bit = 1 << r
            if seen & bit:
                break
            seen |= bit
            if r < lo:
                lo = r
            elif r > hi:
                hi = r
            if k >= 3 and hi - lo == k - 1:
                best = k
        points += best
    return points


def model_play(hand: tuple[int, ...], pile: tuple[int, ...], count: int) -> int:
    """The rank a typical opponent lays from ``hand`` (ranks, at least one playable).

    Most points now, less :data:`_DANGER` of the count it leaves and a small premium on
    keeping low cards when nothing scores (they win gos); leads avoid a five. Deterministic:
    ties go to the higher rank.
    """
    best_rank = 0
    best_value = -1e9
    room = 31 - count
    for r in hand:
        v = VALUE[r]
        if v > room or r == best_rank:
            continue
        c = count + v
        pts = peg_points((*pile, r), c)
        value = pts - (_DANGER[c] if c < 31 else 0.0)
        if not pile:
            if r == 5:
                value -= 1.0
        if pts == 0 and v < 5:
            value -= 0.05 * (5 - v)
        if value > best_value or (value == best_value and r > best_rank):
            best_value = value
            best_rank = r
    return best_rank


Leaf = Callable[[int, int], float]
"""``leaf(my pegs, opponent's pegs)`` -> the value of the play's end (the margin by default)."""


def search(
    mine: tuple[int, ...],
    theirs: tuple[int, ...],
    count: int,
    pile: tuple[int, ...],
    my_turn: bool,
    last_me: bool | None,
    *,
    need_me: int = 999,
    need_them: int = 999,
    leaf: Leaf | None = None,
    win: float = 1.0,
    memo: dict | None = None,
    opp: Callable | None = None,
) -> float:
    """The value of the rest of the play with both holdings known.

    Args:
        mine / theirs: ranks still held by this seat and by the opponent.
        count: the count now (0..31), ``pile`` the ranks of the current count.
        my_turn: whose turn it is (the seat to lay next, before any go).
        last_me: who laid the last card of the current count (``None`` when nobody has).
        need_me / need_them: points each side still needs to reach the target: the game
            ends as soon as one of them gets there (docs/rules.md §4.3).
        leaf: turns the pegs made until the play ends into a value (the margin by default);
            a game won or lost in the play is ``win`` / ``-win`` there, or 1 / 0 with a
            ``leaf`` (a chance to win).
        win: the margin-mode value of a game won in the play.
        memo: a dict shared by calls for the same decision (positions repeat).
        opp: the opponent model, ``opp(its ranks, pile, count, my ranks) -> rank``
            (a :class:`StandardModel`); :func:`model_play` when ``None``.

    Returns:
        The maximum over this seat's choices of the value, the opponent playing ``opp``.
    """
    if memo is None:
        memo = {}
    return _node(mine, theirs, count, pile, my_turn, last_me, 0, 0,
                 need_me, need_them, leaf, win, memo, opp)


def _end(me: int, them: int, need_me: int, need_them: int, leaf: Leaf | None,
         win: float) -> float | None:
    if me >= need_me:
        return 1.0 if leaf is not None else win + me - them
    if them >= need_them:
        return 0.0 if leaf is not None else -win + me - them
    return None


def _node(mine, theirs, count, pile, my_turn, last_me, me, them, need_me, need_them,
          leaf, win, memo, opp):
    key = (mine, theirs, count, pile, my_turn, last_me,
           me - them if leaf is None and need_me + need_them > 1000 else (me, them))
    got = memo.get(key)
    if got is not None:
        return got
    room = 31 - count
    hand = mine if my_turn else theirs
    playable = [r for r in hand if VALUE[r] <= room]
    if not playable:
        other = theirs if my_turn else mine
        if any(VALUE[r] <= room for r in other):
            value = _node(mine, theirs, count, pile, not my_turn, last_me, me, them,
                          need_me, need_them, leaf, win, memo, opp)
        else:
            # Nobody can play: go to the last player, reset; the other leads if it can.
            if last_me:
                me += 1
            else:
                them += 1
            done = _end(me, them, need_me, need_them, leaf, win)
            if done is not None:
                value = done
            else:
                lead_me = not last_me
                if lead_me and not mine:
                    lead_me = False
                elif not lead_me and not theirs:
                    lead_me = True
                value = _node(mine, theirs, 0, (), lead_me, None, me, them,
                              need_me, need_them, leaf, win, memo, opp)
        memo[key] = value
        return value
    if my_turn:
        best = -1e18
        tried = 0
        for r in playable:
            bit = 1 << r
            if tried & bit:
                continue
            tried |= bit
            rest = list(mine)
            rest.remove(r)
            v = _after(tuple(rest), theirs, count, pile, r, True, me, them,
                       need_me, need_them, leaf, win, memo, opp)
            if v > best:
                best = v
        value = best
    else:
        # After this seat's go (the opponent laid the last card and lays again) the
        # opponent knows nobody follows it: a model sees no next player.
        seen = () if pile and last_me is False else mine
        r = model_play(theirs, pile, count) if opp is None else opp(theirs, pile, count, seen)
        rest = list(theirs)
        rest.remove(r)
        value = _after(mine, tuple(rest), count, pile, r, False, me, them,
                       need_me, need_them, leaf, win, memo, opp)
    memo[key] = value
    return value


def _after(mine, theirs, count, pile, r, by_me, me, them, need_me, need_them, leaf, win,
           memo, opp):
    """Lay rank ``r`` (by this seat when ``by_me``) and go on."""
    count += VALUE[r]
    pile = (*pile, r)
    pts = peg_points(pile, count)
    if by_me:
        me += pts
    else:
        them += pts
    done = _end(me, them, need_me, need_them, leaf, win)
    if done is not None:
        return done
    if not mine and not theirs:
        if count != 31:
            if by_me:
                me += 1
            else:
                them += 1
            done = _end(me, them, need_me, need_them, leaf, win)
            if done is not None:
                return done
        return float(me - them) if leaf is None else leaf(me, them)
    if count == 31:
        lead_me = not by_me
        if lead_me and not mine:
            lead_me = False
        elif not lead_me and not theirs:
            lead_me = True
        return _node(mine, theirs, 0, (), lead_me, None, me, them, need_me, need_them,
                     leaf, win, memo, opp)
    return _node(mine, theirs, count, pile, not by_me, by_me, me, them, need_me, need_them,
                 leaf, win, memo, opp)


def model_playout(mine: tuple[int, ...], theirs: tuple[int, ...], my_turn: bool,
                  choose: tuple[Callable, Callable] | None = None) -> tuple[int, int]:
    """The pegs ``(mine, theirs)`` of a whole play from a fresh count (``my_turn``: this
    seat leads), both seats following :func:`model_play`, or ``choose`` = (this seat's,
    the opponent's) ``f(hand, pile, count, other hand) -> rank`` (e.g. two
    :class:`StandardModel`). Used to build the discard's pegging table
    (bench/expert_tables.py)."""
    mine, theirs = list(mine), list(theirs)
    me = them = 0
    count = 0
    pile: tuple[int, ...] = ()
    last_me = None
    while mine or theirs:
        hand = mine if my_turn else theirs
        room = 31 - count
        if not any(VALUE[r] <= room for r in hand):
            other = theirs if my_turn else mine
            if any(VALUE[r] <= room for r in other):
                my_turn = not my_turn
                continue
            if last_me:
                me += 1
            else:
                them += 1
            count, pile = 0, ()
            my_turn = (not last_me) if (mine if not last_me else theirs) else bool(last_me)
            last_me = None
            continue
        if choose is None:
            r = model_play(tuple(hand), pile, count)
        else:
            other = theirs if my_turn else mine
            r = choose[0 if my_turn else 1](tuple(sorted(hand)), pile, count, tuple(other))
        hand.remove(r)
        count += VALUE[r]
        pile = (*pile, r)
        pts = peg_points(pile, count)
        if my_turn:
            me += pts
        else:
            them += pts
        last_me = my_turn
        if not mine and not theirs:
            if count != 31:
                if my_turn:
                    me += 1
                else:
                    them += 1
            break
        if count == 31:
            count, pile = 0, ()
            nxt_me = not my_turn
            my_turn = nxt_me if (mine if nxt_me else theirs) else not nxt_me
            last_me = None
            continue
        my_turn = not my_turn
    return me, them


_LOW_PENALTY = tuple(0.05 * max(0, 5 - v) for v in VALUE)
"""``standard``'s premium for keeping a low card (docs: :mod:`.pegging`), by rank."""

_NONES: dict[tuple[int, int], list[float]] = {}
_REPLIES: dict[tuple[tuple[int, ...], int], tuple[tuple[int, int], ...]] = {}
_REPLIES_SIZE = 50_000
"""Most piles :func:`_replies` remembers (emptied when full; a process's plays repeat)."""


def _replies(pile: tuple[int, ...], count: int) -> tuple[tuple[int, int], ...]:
    """Every rank that fits on ``pile`` at ``count`` with what it pegs, ``(rank, points)``."""
    key = (pile, count)
    got = _REPLIES.get(key)
    if got is None:
        if len(_REPLIES) >= _REPLIES_SIZE:
            _REPLIES.clear()
        room = 31 - count
        got = tuple((r, peg_points((*pile, r), count + VALUE[r]))
                    for r in range(1, 14) if VALUE[r] <= room)
        _REPLIES[key] = got
    return got


class StandardModel:
    """The ``standard`` player's choice of card (:func:`.pegging.rank_plays`) by ranks,
    as an opponent model for :func:`search`: points now, the chance the next player is
    stuck, less the expected points of its best reply over the cards this model's player
    cannot see, with the same tie-breaks.

    The cards the modelled opponent cannot see are taken as ``base`` (rank counts: the
    cards neither seat has shown, from the searching seat's side, plus its discards and its
    hand at the root of the search), and the next player's hand size as the searching
    seat's at the node: an approximation (the cards it plays in the search stay "unseen"),
    so that positions repeat and are memoised.
    """

    def __init__(self, base: list[int]) -> None:
        self.base = base
        self.unseen = sum(base)
        self.memo: dict = {}
        self.replies: dict = {}

    def _none(self, unseen: int, held: int) -> list[float]:
        """``P(held cards from unseen miss t given cards)`` for t = 0..unseen."""
        key = (unseen, held)
        got = _NONES.get(key)
        if got is None:
            total = comb(unseen, held)
            got = [comb(unseen - t, held) / total for t in range(unseen + 1)]
            _NONES[key] = got
        return got

    def _reply(self, pile: tuple[int, ...], c: int, held: int) -> float:
        """The next player's (``held`` cards) expected best reply less the chance it is
        stuck."""
        key = (pile, c, held)
        got = self.replies.get(key)
        if got is not None:
            return got
        counts = self.base
        none = self._none(self.unseen, held)
        playable = 0
        options = []
        for r, pts in _replies(pile, c):
            k = counts[r]
            if k:
                playable += k
                if pts:
                    options.append((pts, k))
        value = none[playable]
        if options:
            options.sort(reverse=True)
            covered = 0
            before = 1.0
            for pts, k in options:
                covered += k
                now = none[covered]
                value -= pts * (before - now)
                before = now
        self.replies[key] = value
        return value

    def _value(self, hand: tuple[int, ...], pile: tuple[int, ...], count: int, held: int,
               r: int) -> float:
        """The ``standard`` value of laying rank ``r`` (it fits) from ``hand``."""
        c = count + VALUE[r]
        new_pile = (*pile, r)
        pts = peg_points(new_pile, c)
        if c == 31 or not held:
            value = pts + (1.0 if c < 31 else 0.0)
        else:
            value = pts + self._reply(new_pile, c, held)
        if not pile:
            if r == 5:
                value -= 0.5
            if hand.count(r) >= 2:
                value += 0.3
        if pts == 0:
            value -= _LOW_PENALTY[r]
        return value

    def values(self, hand: tuple[int, ...], pile: tuple[int, ...], count: int,
               held: int) -> dict[int, float]:
        """The ``standard`` value of every rank in ``hand`` that fits under 31 (the next
        player holding ``held`` cards; 0: nobody follows), as ``{rank: value}``."""
        room = 31 - count
        return {r: self._value(hand, pile, count, held, r) for r in hand if VALUE[r] <= room}

    def chance(self, hand: tuple[int, ...], pile: tuple[int, ...], count: int, held: int,
               rank: int, near: float, near_eps: float, far_eps: float) -> float:
        """How likely ``standard`` is to lay ``rank`` from ``hand`` (see :meth:`values`):
        among ranks of equal best value it takes the first card of its hand, so each of
        those cards equally (a share by how many it holds of each); a rank within ``near``
        of the best ``near_eps``, any other ``far_eps`` (this model does not see the
        opponent's discards, which move the values a little)."""
        vals = self.values(hand, pile, count, held)
        got = vals.get(rank)
        if got is None:
            return far_eps
        best = max(vals.values())
        if got >= best - 1e-9:
            ties = [r for r, x in vals.items() if x >= best - 1e-9]
            if len(ties) == 1:
                return 1.0
            return hand.count(rank) / sum(hand.count(r) for r in ties)
        return near_eps if got >= best - near else far_eps

    def __call__(self, hand: tuple[int, ...], pile: tuple[int, ...], count: int,
                 mine: tuple[int, ...]) -> int:
        """The rank laid from ``hand`` (sorted) on ``pile`` at ``count``, the searching
        seat holding ``mine``: the best of :meth:`values`, the lowest rank of those tied."""
        key = (hand, pile, count, len(mine))
        got = self.memo.get(key)
        if got is not None:
            return got
        best_rank, best_value = 0, -1e18
        room = 31 - count
        held = len(mine)
        for r in hand:
            v = VALUE[r]
            if v > room or r == best_rank:
                continue
            value = self._value(hand, pile, count, held, r)
            if value > best_value:
                best_value, best_rank = value, r
        self.memo[key] = best_rank
        return best_rank

