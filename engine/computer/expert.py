"""The ``expert`` computer player (issue 22): the play looked at to its end, the play's value
in the discard, and the chance to win near the end (docs/rules.md §2.3, §3, §4.3).

Like the other levels it sees only ``engine.view(state, seat)`` and the legal actions, is
deterministic (its samples are drawn from a generator seeded by the view) and uses the
standard library only. With two players (Lowball excepted):

**Discards** are ranked by ``hand + w * crib + play`` — the ``standard`` player's exact hand
value (:mod:`.discard`), the crib with the opponent's two cards as ``standard`` throws them
(:func:`crib_value`, a table: :func:`.winprob.crib_ranks`), plus the kept four's average
pegging margin against every four a rational opponent keeps (a table:
:func:`.winprob.play_value`). Near the end (a side within :data:`NEAR` holes of the
target) they are ranked by the chance to win instead: the kept hand's count over every
starter, the play's average pegs, the opponent's show from its measured distribution (the
pone counts first), and the table's chance to win from the scores after the deal
(:func:`.winprob.win_chance`).

**Plays** are chosen by a search of the rest of the play (:func:`.lookahead.search`) in
the opponent holdings consistent with what has been seen — the cards this seat cannot see,
less any the opponent cannot hold because it said go at a count — weighted by what they
would say about the opponent (Bayes, the opponent taken to be ``standard``): the chance
that it would have kept the four they make with the cards it has played
(:data:`KEEP`, :func:`.winprob.keep_chance`), and for each of its plays this deal the
chance that ``standard`` makes it with them (:data:`TIES`,
:meth:`.lookahead.StandardModel.chance`: equal best cards share it, a near miss
:data:`NEAR_EPS`, any other :data:`AGREE_EPS`). With one or two cards held every holding
is weighed exactly (and with two, when there are more than :data:`SAMPLES`, that many
drawn by weight are searched: :data:`RESAMPLE_PAIRS`); with three or four,
:data:`CANDIDATES` are drawn from the exact weights of every rank shape with the keep
chance (:data:`EXACT`) and :data:`SAMPLES` (:data:`SAMPLES_BIG`) of them searched, drawn
in proportion to their weights after the plays. The opponent is modelled as the ``standard`` player
(:class:`.lookahead.StandardModel`: given its whole hand and discards it chooses
standard's rank, a tie allowed, every time; not seeing the discards, 98 %), this seat
takes its best card in each holding to the end of the play. Far from the end the
value is the average pegging margin (a game-ending peg counts for :data:`WIN_BONUS`); near
the end it is the average chance to win once the deal is over (the show counted in order
from the known hands: this seat's exactly, the opponent's from the holding by ranks, the
crib at its average), plus :data:`TILT` per hole of the play's pegging margin.

With three or four players, in partnerships and in Lowball it plays as ``standard``
(:mod:`.discard`, :mod:`.pegging`): measured equal in bench/duplicate.py by construction.

Cost, by design: a discard is 15 table look-ups on top of ``standard``'s (and near the end
a few thousand look-ups); a play is at most :data:`SAMPLES` searches of at most 4 x 4
cards (24 orders of this seat's cards, the opponent's replies fixed by the model,
memoised) — bench/duplicate.py reports the CPU time per decision (play median 7 to 9 ms,
p99 58 to 74 ms with two workers on two cores: over 20 ms, so the server decides in its
computer processes, off the event loop; docs/performance.md, "Computer players");
the weighing is a pass over at most 1,820 rank shapes and at most three model calls per
holding (none for a play without a choice).
"""

from __future__ import annotations

import math
import random
from math import comb

from .common import FIVE_RANKS, rank_of, suit_of, unseen_cards
from .discard import crib_average, crib_suit_part, crib_weight, rank_discards
from .lookahead import VALUE, StandardModel, _after
from .pegging import rank_plays
from .winprob import (
    DEALER_SHOW,
    PONE_SHOW,
    TARGETS,
    crib_ranks,
    keep_chance,
    keep_weights,
    play_value,
    win_chance,
)

NEAR = 45
"""Holes from the target (either side's) within which the expert plays for the win."""

NEAR_DISCARD = 45
"""The same for discards."""

MEAN_CRIB = 4.7
"""The average crib (docs/performance.md, "Computer players"), in the measured dealer's show."""

SAMPLES = 80
"""Opponent holdings searched for a play (drawn by weight from :data:`CANDIDATES`), unless
:data:`SAMPLES_BIG` says otherwise. 80 against 40 measured +0.05 points per pair of deals
(1,000 seeds, within the noise of one run, in every pair of runs compared) for 1.7 times
the CPU: docs/performance.md, rows Z6 and Z10."""

SAMPLES_BIG: dict[int, int] = {}
"""Samples by the cards both seats hold, where fewer than :data:`SAMPLES` are searched (the
CPU budget; empty: none. Until row Z10 of docs/performance.md 28 with seven and 20 with
eight)."""

WIN_BONUS = 200.0
"""Margin-mode value of reaching the target in the play (a sure game beats any points)."""

PLAY_WEIGHT = 1.0
"""Weight of the kept four's pegging margin in a discard's value."""

MODEL = "standard"
"""The opponent model in the search: ``"standard"`` (:class:`.lookahead.StandardModel`) or
``"simple"`` (:func:`.lookahead.model_play`)."""

KEEP = True
"""Weigh each opponent holding by the chance that a rational opponent (``standard``) would
have kept the four it makes with the cards it has played (:func:`.winprob.keep_chance`)."""

AGREE_EPS = 0.03
"""The weight a holding keeps for each of the opponent's plays this deal that the
``standard`` model would not have made with it (1: plays tell nothing; 0: a holding that
disagrees once is impossible — too strict: the model does not see the opponent's discards,
and misses standard's card 2 % of the time for it; 0.005 measured no different)."""

TIES = True
"""Judge a past play as ``standard`` makes it (:meth:`.lookahead.StandardModel.chance`):
ranks of equal best value each as likely as the share of the hand they hold, a rank within
:data:`NEAR_GAP` of the best :data:`NEAR_EPS`, any other :data:`AGREE_EPS`."""

NEAR_GAP = 0.1
"""Value (holes) within which a rank not the model's best is still a likely play."""

NEAR_EPS = 0.2
"""The weight of a play within :data:`NEAR_GAP` of the model's best."""

CANDIDATES = 400
"""Opponent holdings drawn (three or four cards) before the :data:`SAMPLES` searched are
drawn from them in proportion to their weights."""

RESAMPLE_PAIRS = True
"""With two cards held, search :data:`SAMPLES` holdings drawn by weight when there are more
(all of them otherwise; the CPU budget)."""

EXACT = True
"""Draw the :data:`CANDIDATES` from every rank shape's exact weight with the keep chance
(:func:`.winprob.keep_weights`), not uniformly from the unseen cards."""


SEARCH = True
"""Pegging by the search (False: ``standard``'s one-reply pegging; for experiments)."""

TILT = 0.002
"""Near the end a card is worth its chance to win plus this much per hole of pegging
margin (the search's leaf): a tie-break among lines the win table cannot tell apart (its
chances are good to a few tenths of a percent). Measured +0.03 points per pair of deals
and no change in wins beyond the noise; the same on discards measured nothing
(docs/performance.md, rows Z15 and Z20). 0: the chance to win alone."""

CRIB = True
"""Value the crib with the opponent's two cards as ``standard`` throws them
(:func:`crib_value`), not as random cards (:func:`.discard.crib_average`, as ``standard``
does)."""


_JACK = 11


def applies(view: dict) -> bool:
    """Whether the expert's own methods apply: two players, not Lowball, a known target."""
    opts = view.get("options") or {}
    return (view.get("players") == 2 and not opts.get("lowball")
            and opts.get("target", 121) in TARGETS)


def _scores(view: dict) -> tuple[int, int, int]:
    seat = view["seat"]
    sides = view["sides"]
    mine = view["scores"][sides[seat]]
    theirs = view["scores"][sides[1 - seat]]
    return mine, theirs, int((view.get("options") or {}).get("target", 121))


def hole_worth(view: dict) -> float:
    """What one hole is worth to this seat's chance to win at the view's scores: the win
    table's change for one hole more or less (``(W(mine + 1) - W(mine - 1)) / 2``, one
    hole up from 0), averaged over who deals next (:func:`.winprob.win_chance`). A chance
    (0..1) per hole; 0.0 where :func:`applies` does not (no win table)."""
    if not applies(view):
        return 0.0
    mine, theirs, target = _scores(view)
    low = max(0, mine - 1)
    change = sum(win_chance(mine + 1, theirs, i_deal, target)
                 - win_chance(low, theirs, i_deal, target) for i_deal in (False, True)) / 2
    return change / (mine + 1 - low)


def near_end(view: dict, near: int | None = None) -> bool:
    """Whether a side is within ``near`` (:data:`NEAR`) holes of the target (the game can
    end in this deal or the next)."""
    mine, theirs, target = _scores(view)
    return target - max(mine, theirs) <= (NEAR if near is None else near)


# -- discards -----------------------------------------------------------------------------


def crib_value(cards: list[str] | tuple[str, ...], i_deal: bool) -> float:
    """The average crib (holes) that two cards thrown by this seat make with the
    opponent's throw as ``standard`` makes it (:func:`.winprob.crib_ranks`) and a random
    starter; flush and his nobs as :func:`.discard.crib_average` counts them. ``i_deal``:
    the crib is this seat's (it deals)."""
    if not CRIB or len(cards) != 2:
        return crib_average(tuple(sorted(cards)))
    key = tuple(sorted(cards))
    return crib_ranks([rank_of(c) for c in key], i_deal) + crib_suit_part(key)


def _hand_counts(kept: list[str], unseen: list[str]) -> dict[int, float]:
    """The distribution of the kept four's show over every starter in ``unseen``."""
    ranks = [rank_of(c) for c in kept]
    suits = [suit_of(c) for c in kept]
    flush = suits[0] if len(set(suits)) == 1 else None
    nobs = {s for c, s in zip(kept, suits, strict=True) if rank_of(c) == _JACK}
    by_rank = {}
    out: dict[int, float] = {}
    p = 1.0 / len(unseen)
    for c in unseen:
        r = rank_of(c)
        base = by_rank.get(r)
        if base is None:
            base = by_rank[r] = FIVE_RANKS[tuple(sorted((*ranks, r)))]
        s = suit_of(c)
        x = base
        if flush is not None:
            x += 5 if s == flush else 4
        if s in nobs:
            x += 1
        out[x] = out.get(x, 0.0) + p
    return out


def _split(x: float) -> list[tuple[int, float]]:
    """A mean as two whole numbers with weights (``3.3`` -> ``[(3, 0.7), (4, 0.3)]``)."""
    lo = int(x)
    frac = x - lo
    return [(lo, 1.0 - frac), (lo + 1, frac)] if frac > 1e-9 else [(lo, 1.0)]


def _discard_chance(view: dict, hand_dist: dict[int, float], crib: float,
                    pegs: tuple[float, float], memo: dict) -> float:
    """The chance to win with a discard (see the module doc)."""
    mine, theirs, target = _scores(view)
    dealer = view["dealer"] == view["seat"]
    total = 0.0
    # As dealer ``crib`` is this seat's own; as pone it moves the opponent's measured show
    # (which holds an average crib) by its excess over the average.
    if dealer:
        crib_points = _split(crib)
    else:
        lo = math.floor(crib - MEAN_CRIB)
        frac = crib - MEAN_CRIB - lo
        crib_points = [(lo, 1.0 - frac), (lo + 1, frac)]
    for m, pm in _split(pegs[0]):
        for o, po in _split(pegs[1]):
            w = pm * po
            if not w:
                continue
            a, b = mine + m, theirs + o
            if a >= target or b >= target:
                # Both there in the play: call it even (who pegs out first is unknown).
                total += w * (0.5 if a >= target and b >= target else float(a >= target))
                continue
            for h, ph in hand_dist.items():
                for c, pc in crib_points:
                    if dealer:
                        value = _after_show(a, b, h + c, dealer, target, memo)
                    else:
                        value = _after_show(a, b + c, h, dealer, target, memo)
                    total += w * ph * pc * value
    return total


def _after_show(a: int, b: int, mine: int, dealer: bool, target: int, memo: dict) -> float:
    """The chance to win once the play has left ``a`` / ``b`` holes and this seat's show is
    worth ``mine``; the opponent's show from its distribution, the pone counting first."""
    key = (a, b, mine, dealer)
    got = memo.get(key)
    if got is not None:
        return got
    value = 0.0
    if not dealer:
        if a + mine >= target:
            value = 1.0
        else:
            for x, px in enumerate(DEALER_SHOW):
                if px:
                    value += px * win_chance(a + mine, b + x, True, target)
    else:
        for y, py in enumerate(PONE_SHOW):
            if not py:
                continue
            if b + y >= target:
                continue
            value += py * win_chance(a + mine, b + y, False, target)
    memo[key] = value
    return value


def rank_discards_expert(view: dict, legal: list[dict]) -> list[dict]:
    """Every legal discard with its values, best first.

    Args:
        view: the seat's view in the ``discard`` phase (two players).
        legal: the seat's legal actions.

    Returns:
        ``standard``'s rows (:func:`.discard.rank_discards`: ``action``, ``cards``,
        ``hand``, ``crib``) with ``play`` (the kept four's average pegging margin, holes),
        ``expected = hand + w * crib + play``, and near the end ``win`` (the chance to win,
        0..1), by which they are then ranked.
    """
    rows = rank_discards(view, legal)
    if not applies(view):
        return rows
    hand = list(view["hand"])
    dealer = view["dealer"] == view["seat"]
    weight = crib_weight(view)
    near = near_end(view, NEAR_DISCARD)
    unseen = unseen_cards(view) if near else []
    memo: dict = {}
    for row in rows:
        kept = [c for c in hand if c not in row["cards"]]
        if CRIB:
            row["crib"] = round(crib_value(row["cards"], dealer), 3)
        mine, theirs = play_value([rank_of(c) for c in kept], dealer)
        play = PLAY_WEIGHT * (mine - theirs)
        row["play"] = round(play, 3)
        row["_key"] = row["hand"] + weight * row["crib"] + play
        row["expected"] = round(row["_key"], 3)
        if near:
            crib = crib_value(row["cards"], dealer)
            chance = _discard_chance(view, _hand_counts(kept, unseen), crib,
                                     (mine, theirs), memo)
            row["win"] = round(chance, 4)
            row["_key"] = (round(chance, 4), row["_key"])
    rows.sort(key=lambda row: row["_key"], reverse=True)
    for row in rows:
        del row["_key"]
    return rows


# -- the play -----------------------------------------------------------------------------


def _go_floor(view: dict) -> int:
    """The lowest value a card the opponent still holds can have, from the gos it said this
    deal: a seat that cannot play at count c holds only cards worth more than 31 - c
    (docs/rules.md §3.2). Replayed from ``played`` (the count resets at 31 or when the next
    card would pass 31) and the current ``go`` flags."""
    seat = view["seat"]
    opp = 1 - seat
    floor = 1
    count = 0
    prev_seat = None
    opp_played = 0
    for entry in view.get("played") or ():
        v = VALUE[rank_of(entry["card"])]
        if count == 31 or count + v > 31:
            # The count was reset: nobody could play at ``count`` (unless it was 31).
            if count < 31 and opp_played < 4 and prev_seat == seat:
                floor = max(floor, 32 - count)
            count = 0
            prev_seat = None
        if entry["seat"] == seat and prev_seat == seat and opp_played < 4:
            floor = max(floor, 32 - count)  # the opponent said go at this count
        count += v
        prev_seat = entry["seat"]
        if entry["seat"] == opp:
            opp_played += 1
    go = view.get("go") or ()
    if len(go) > opp and go[opp]:
        floor = max(floor, 32 - int(view.get("count") or 0))
    return floor


def _exact_keep(view: dict, counts: list[int], held: int, rnd: random.Random,
                draws: int) -> list[tuple[tuple[int, ...], float]]:
    """Holdings of three or four cards drawn from their exact weights before the plays are
    weighed: every shape of ``held`` ranks the counts allow, weighed by how many ways the
    unseen cards make it times :func:`.winprob.keep_chance` of the four it makes with the
    cards the opponent has laid; ``draws`` of them by systematic resampling, as
    ``(shape, times)``, the keep chance included."""
    opp = 1 - view["seat"]
    played = tuple(rank_of(e["card"]) for e in view.get("played") or () if e["seat"] == opp)
    opp_dealer = view["dealer"] == opp
    if len(played) + held != 4 or len(played) > 1:
        return []
    shapes = keep_weights(counts, played, opp_dealer)
    total = sum(w for _, w in shapes)
    if total <= 0:
        return []
    return _resample(shapes, total, draws, rnd)


def _resample(items: list[tuple[tuple[int, ...], float]], total: float, draws: int,
              rnd: random.Random) -> list[tuple[tuple[int, ...], float]]:
    """``draws`` of ``items`` (``(shape, weight)``, the weights summing to ``total`` > 0)
    in proportion to their weights, by systematic resampling (one number from ``rnd``),
    as sorted ``(shape, times)``."""
    picks: dict[tuple[int, ...], float] = {}
    step = total / draws
    u = rnd.random() * step
    acc = 0.0
    i = 0
    for shape, w in items:
        acc += w
        while u < acc and i < draws:
            picks[shape] = picks.get(shape, 0.0) + 1.0
            u += step
            i += 1
    return sorted(picks.items())


def _holdings(view: dict, held: int, rnd: random.Random,
              samples: int = SAMPLES) -> list[tuple[tuple[int, ...], float]]:
    """The opponent's possible holdings of ``held`` cards, as sorted rank tuples with weights."""
    floor = _go_floor(view)
    counts = [0] * 14
    for c in unseen_cards(view):
        r = rank_of(c)
        if VALUE[r] >= floor:
            counts[r] += 1
    pool = [r for r in range(1, 14) for _ in range(counts[r])]
    if held <= 0:
        return [((), 1.0)]
    if len(pool) < held:
        # The inference went wrong somewhere (it should not): forget the gos.
        counts = [0] * 14
        for c in unseen_cards(view):
            counts[rank_of(c)] += 1
        pool = [r for r in range(1, 14) for _ in range(counts[r])]
        if len(pool) < held:
            return [((), 1.0)]
    if held <= 2:
        out = []
        ranks = [r for r in range(1, 14) if counts[r]]
        shapes = (
            [(r,) for r in ranks] if held == 1
            else [(r, s) for i, r in enumerate(ranks) for s in ranks[i:]]
        )
        for shape in shapes:
            w = 1.0
            for r in set(shape):
                w *= comb(counts[r], shape.count(r))
            if w:
                out.append((shape, w))
        return out
    if EXACT and KEEP:
        got = _exact_keep(view, counts, held, rnd, samples)
        if got:
            return got
    merged: dict[tuple[int, ...], float] = {}
    for _ in range(samples):
        shape = tuple(sorted(rnd.sample(pool, held)))
        merged[shape] = merged.get(shape, 0.0) + 1.0
    return sorted(merged.items())


def _opp_history(view: dict) -> list[tuple[int, tuple[int, ...], int, int, list[int]]]:
    """The opponent's plays this deal, replayed from ``played``: per play ``(rank, the
    pile's ranks before it, the count before it, the cards this seat held then, the
    opponent's ranks played from then on)``. The count is reset where it reached 31 or the
    next card would pass it — exact with two players, since a seat that can lay a card
    must (docs/rules.md §3.2): a card that fits was laid on the same count."""
    seat = view["seat"]
    out = []
    count = 0
    pile: tuple[int, ...] = ()
    mine_held = 4
    entries = view.get("played") or ()
    opp_ranks = [rank_of(e["card"]) for e in entries if e["seat"] != seat]
    k = 0
    last = None
    for e in entries:
        r = rank_of(e["card"])
        v = VALUE[r]
        if count == 31 or count + v > 31:
            count, pile, last = 0, (), None
        if e["seat"] != seat:
            # After this seat's go (the opponent laid the last card too) no one follows.
            follows = 0 if pile and last == e["seat"] else mine_held
            out.append((r, pile, count, follows, opp_ranks[k:]))
            k += 1
        else:
            mine_held -= 1
        count += v
        pile = (*pile, r)
        last = e["seat"]
    return out


def _weigh(view: dict, holdings: list[tuple[tuple[int, ...], float]], held: int,
           rnd: random.Random, samples: int) -> list[tuple[tuple[int, ...], float]]:
    """The opponent's holdings weighted by what they say about it (see the module doc):
    :func:`.winprob.keep_chance` of its four (already in the weights of holdings drawn by
    :func:`_exact_keep`) and, per play of this deal, the chance ``standard`` makes it
    (:data:`TIES`; else :data:`AGREE_EPS` for a play the model would not have made); with
    three or four cards held (or more than ``samples`` holdings of two,
    :data:`RESAMPLE_PAIRS`), ``samples`` of them drawn by weight (systematic resampling
    with ``rnd``), as ``(shape, times)``."""
    seat = view["seat"]
    opp = 1 - seat
    played = tuple(rank_of(e["card"]) for e in view.get("played") or () if e["seat"] == opp)
    opp_dealer = view["dealer"] == opp
    history = _opp_history(view) if AGREE_EPS < 1 else []
    # What the opponent could not see at each of its plays: every card but the starter and
    # the cards laid before it (its own hand is taken out per holding; its discards are
    # unknown here and stay in).
    unseen_then = []
    if history:
        known = [0] + [4] * 13
        if view.get("starter"):
            known[rank_of(view["starter"])] -= 1
        laid = [rank_of(e["card"]) for e in view.get("played") or ()]
        for i, e in enumerate(view.get("played") or ()):
            if e["seat"] == opp:
                counts = list(known)
                for x in laid[:i]:
                    counts[x] -= 1
                unseen_then.append(counts)
    models: dict[tuple[int, tuple[int, ...]], StandardModel] = {}
    weighted = []
    for shape, w in holdings:
        if KEEP and len(played) + len(shape) == 4 and not (EXACT and held >= 3):
            w *= keep_chance((*played, *shape), opp_dealer)
        for j, (r, hpile, hcount, hmine, later) in enumerate(history):
            hand = tuple(sorted((*later, *shape)))
            room = 31 - hcount
            if len({x for x in hand if VALUE[x] <= room}) <= 1:
                continue  # no choice: the play says nothing
            model = models.get((j, hand))
            if model is None:
                counts = list(unseen_then[j])
                for x in hand:
                    counts[x] -= 1
                model = models[j, hand] = StandardModel([max(0, x) for x in counts])
            if TIES:
                w *= model.chance(hand, hpile, hcount, hmine, r, NEAR_GAP, NEAR_EPS,
                                  AGREE_EPS)
            elif model(hand, hpile, hcount, (0,) * hmine) != r:
                w *= AGREE_EPS
        weighted.append((shape, w))
    holdings = weighted
    if held >= 3 or (RESAMPLE_PAIRS and len(holdings) > samples):
        total = sum(w for _, w in holdings)
        if total > 0:
            holdings = _resample(holdings, total, samples, rnd)
    return holdings


def _rng(view: dict) -> random.Random:
    key = "|".join(str(x) for x in (
        "expert", view.get("seat"), view.get("game_number"), view.get("deal_number"),
        view.get("scores"), ",".join(view.get("hand") or ()),
        ",".join(e["card"] for e in view.get("played") or ()),
    ))
    return random.Random(key)


def _show_leaf(view: dict, shape: tuple[int, ...]):
    """The end-of-play value for one opponent holding: the chance to win after the show."""
    mine, theirs, target = _scores(view)
    seat = view["seat"]
    dealer = view["dealer"] == seat
    starter = view.get("starter")
    kept = list(view.get("kept") or ())
    if starter and len(kept) == 4:
        s = rank_of(starter)
        my_show = FIVE_RANKS[tuple(sorted([rank_of(c) for c in kept] + [s]))]
        suits = {suit_of(c) for c in kept}
        if len(suits) == 1:
            my_show += 5 if suit_of(starter) in suits else 4
        my_show += sum(1 for c in kept if rank_of(c) == _JACK and suit_of(c) == suit_of(starter))
        opp_ranks = [rank_of(e["card"]) for e in view.get("played") or () if e["seat"] != seat]
        opp_ranks += list(shape)
        opp_show = (FIVE_RANKS[tuple(sorted([*opp_ranks, s]))] if len(opp_ranks) == 4
                    else 8)
        crib = crib_value(view.get("my_discards") or (), dealer) if len(
            view.get("my_discards") or ()) == 2 else 4.7
    else:
        my_show, opp_show, crib = 8, 8, 4.7
    crib = int(round(crib))
    if dealer:
        my_show += crib
    else:
        opp_show += crib

    tilt = TILT

    def leaf(me: int, them: int) -> float:
        a, b = mine + me + my_show, theirs + them + opp_show
        if not dealer:  # the pone counts first
            chance = (1.0 if a >= target else 0.0 if b >= target
                      else win_chance(a, b, True, target))
        else:
            chance = (0.0 if b >= target else 1.0 if a >= target
                      else win_chance(a, b, False, target))
        return chance + tilt * (me - them)

    return leaf


def rank_plays_expert(view: dict, legal: list[dict], *, near: bool | None = None,
                      ends: bool = True) -> list[dict]:
    """Every legal card to play with its value, best first.

    Args:
        view: the seat's view in the ``play`` phase, its turn (two players).
        legal: the seat's legal actions.
        near: value the cards by the chance to win (True) or the pegging margin (False);
            None: by the chance to win when :func:`near_end`.
        ends: the game ends when a side reaches the target in the play (a margin then
            counts the game won or lost as :data:`WIN_BONUS`); False: the pegging margin
            alone, as if the target were out of reach (with ``near`` False).

    Returns:
        ``standard``'s rows (:func:`.pegging.rank_plays`: ``action``, ``card``, ``points``,
        ``reply``, ``stuck``) with ``value`` replaced by the search's average: the pegging
        margin (holes) from this card to the end of the play, or near the end the chance
        to win (0..1, also as ``win``; with :data:`TILT` per hole of pegging margin, a
        tie-break worth at most about a percent, and kept within 0..1). Ties keep
        ``standard``'s order.
    """
    rows = rank_plays(view, legal)
    if not applies(view) or not rows or not SEARCH:
        return rows
    if near is None:
        near = near_end(view)
    if len(rows) == 1 and not near:
        # One card, far from the end: its points are the whole story. Near the end even a
        # forced card is given its chance to win (a hint's "why"; a computer seat's
        # decide() does not rank a single card at all).
        return rows
    seat = view["seat"]
    opp = 1 - seat
    mine_score, theirs_score, target = _scores(view)
    mine = tuple(sorted(rank_of(c) for c in view.get("hand") or ()))
    held = view["hand_sizes"][opp]
    count = int(view.get("count") or 0)
    pile = tuple(rank_of(e["card"]) for e in view.get("pile") or ())
    samples = SAMPLES_BIG.get(len(mine) + held, SAMPLES)
    rnd = _rng(view)
    weighting = KEEP or AGREE_EPS < 1
    holdings = _holdings(view, held, rnd, CANDIDATES if weighting else samples)
    opp_model = None
    if MODEL == "standard":
        base = [0] * 14
        for c in unseen_cards(view) + list(view.get("my_discards") or ()) + list(
                view.get("hand") or ()):
            base[rank_of(c)] += 1
        opp_model = StandardModel(base)
    if weighting:
        holdings = _weigh(view, holdings, held, rnd, samples)
    total_w = sum(w for _, w in holdings) or 1.0
    memo: dict = {}
    sums: dict[int, float] = {}
    for shape, w in holdings:
        leaf = _show_leaf(view, shape) if near else None
        local = {} if near else memo

        for r in {rank_of(row["card"]) for row in rows}:
            rest = list(mine)
            rest.remove(r)
            v = _after(tuple(rest), shape, count, pile, r, True, 0, 0,
                       target - mine_score if ends else 999,
                       target - theirs_score if ends else 999, leaf, WIN_BONUS, local,
                       opp_model)
            sums[r] = sums.get(r, 0.0) + w * v
    for order, row in enumerate(rows):
        value = sums[rank_of(row["card"])] / total_w
        if near:
            # The chance to win as the search values it (the tie-break included), 0..1.
            row["value"] = row["win"] = round(min(1.0, max(0.0, value)), 4)
        else:
            row["value"] = round(value, 3)
        row["_key"] = (round(value, 6), -order)
    rows.sort(key=lambda row: row["_key"], reverse=True)
    for row in rows:
        del row["_key"]
    return rows


__all__ = ["NEAR", "SAMPLES", "applies", "hole_worth", "near_end", "rank_discards_expert",
           "rank_plays_expert"]
