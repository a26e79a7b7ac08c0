"""Choosing a card in the play (issue 4; docs/rules.md §3).

The ``standard`` player scores every playable card with a one-reply lookahead:

``value = points now + P(next player is stuck) * 1 - E[best reply's points] + small tie-breaks``

* **points now**: fifteen, 31, pair / pair royal / double pair royal, runs (docs/rules.md §3.5),
  plus a large bonus when they reach the target (the game ends at once, docs/rules.md §4.3);
* **best reply**: the next seat to play holds a random subset (its hand size) of the cards
  this seat cannot see; the expected value of its best-scoring reply is computed exactly from
  the hypergeometric chances of it holding each rank. That one number covers leaving a
  count of 5 or 21 (a ten-card makes 15 or 31), a pair-royal chance after pairing, a run to
  extend, and so on. A partner's reply (partnerships) counts for us, at 0.7 weight;
* **play for the go**: the chance that the next player holds nothing that fits under 31,
  worth about one hole (the go) to us;
* tie-breaks: keep low cards for the end of a count (they win gos), lead from a pair (the
  pair-royal trap), never lead a five.

In Lowball (docs/rules.md §7) the player minimises its own points: it takes the card with the
fewest points now and the smallest chance of being left with the go, and does not mind
what it offers the next player (who also wants to score little).
"""

from __future__ import annotations

from .common import pegging_points, prob_holds_none, rank_counts, rank_of, unseen_cards, value_of

_WIN_BONUS = 1000.0
_PARTNER_WEIGHT = 0.7


def _next_player(view: dict) -> int | None:
    """The seat that plays after this one in the current count, or ``None`` if nobody can.

    docs/rules.md §3.1/§3.3: clockwise, skipping seats with no cards and seats that said go.
    """
    n = view["players"]
    seat = view["seat"]
    sizes = view["hand_sizes"]
    go = view.get("go") or [False] * n
    for step in range(1, n):
        other = (seat + step) % n
        if sizes[other] > 0 and not go[other]:
            return other
    return None


def _expected_best_reply(
    pile_ranks: list[int], count: int, counts: list[int], unseen: int, held: int
) -> tuple[float, float]:
    """Expected points of the next player's best reply, and the chance it cannot play.

    Args:
        pile_ranks: ranks of the current count after our card, oldest first.
        count: the count after our card.
        counts: unseen cards per rank (index 1..13).
        unseen: how many cards are unseen in all.
        held: the next player's hand size.

    Returns:
        ``(expected points, probability of holding no card that fits)``.
    """
    room = 31 - count
    options: list[tuple[int, int]] = []  # (points, how many unseen cards of that rank)
    playable = 0
    for r in range(1, 14):
        if counts[r] and value_of(r) <= room:
            playable += counts[r]
            pts = pegging_points([*pile_ranks, r], count + value_of(r))
            if pts:
                options.append((pts, counts[r]))
    stuck = prob_holds_none(unseen, playable, held)
    if not options:
        return 0.0, stuck
    options.sort(reverse=True)
    expected = 0.0
    covered = 0
    p_none_before = 1.0
    for pts, k in options:
        covered += k
        p_none_now = prob_holds_none(unseen, covered, held)
        expected += pts * (p_none_before - p_none_now)
        p_none_before = p_none_now
    return expected, stuck


def rank_plays(view: dict, legal: list[dict], *, tiebreaks: bool = True) -> list[dict]:
    """Every legal card to play with its value, best first.

    Args:
        view: the seat's view in the ``play`` phase (its turn).
        legal: the seat's legal actions (``{"type": "play", "card": "5H"}``).
        tiebreaks: add the tie-breaks (keep low cards, lead from a pair, never lead a five;
            in Lowball high cards first) to ``value``. False: ``value`` is the expected
            points alone (points now, the go, the reply, the target's bonus), what a
            grading weighs (``server.archive.grading``): the tie-breaks are this player's
            habits, not points.

    Returns:
        One dict per legal play, best first: ``{"action": <legal action>, "card": str,
        "points": int (pegged at once, go and last card excepted), "reply": float (expected
        points of the next player's best reply), "stuck": float (chance it cannot play),
        "value": float}``.
    """
    seat = view["seat"]
    sides = view["sides"]
    my_side = sides[seat]
    lowball = bool((view.get("options") or {}).get("lowball"))
    target = (view.get("options") or {}).get("target", 121)
    my_score = view["scores"][my_side]
    pile = [rank_of(e["card"]) for e in view.get("pile") or ()]
    count = int(view.get("count") or 0)
    hand = list(view.get("hand") or ())
    unseen = unseen_cards(view)
    counts = rank_counts(unseen)
    nxt = _next_player(view)
    held = view["hand_sizes"][nxt] if nxt is not None else 0
    partner = nxt is not None and sides[nxt] == my_side
    hand_ranks = [rank_of(c) for c in hand]

    rows = []
    for action in legal:
        if action.get("type") != "play":
            continue
        card = action["card"]
        r = rank_of(card)
        new_count = count + value_of(r)
        new_pile = [*pile, r]
        points = pegging_points(new_pile, new_count)
        if new_count == 31 or nxt is None:
            reply, stuck = 0.0, (1.0 if new_count < 31 else 0.0)
        else:
            reply, stuck = _expected_best_reply(new_pile, new_count, counts, len(unseen), held)
        rest = list(hand_ranks)
        rest.remove(r)
        can_follow = any(new_count + value_of(x) <= 31 for x in rest)
        if lowball:
            value = -points - stuck * (0.5 if can_follow else 1.0)
            if my_score + points >= target:
                value -= _WIN_BONUS
            if tiebreaks:
                # High cards first, low ones kept: high cards left late tend to be forced
                # into 31s and gos.
                value += 0.01 * value_of(r)
        else:
            value = points
            if my_score + points >= target:
                value += _WIN_BONUS
            value += stuck * 1.0
            value += _PARTNER_WEIGHT * reply if partner else -reply
            if tiebreaks and not pile:
                if r == 5:
                    value -= 0.5
                if hand_ranks.count(r) >= 2:
                    value += 0.3
            # Keep low cards for later: they win gos and 31s at high counts.
            if tiebreaks and points == 0:
                value -= 0.05 * max(0, 5 - value_of(r))
        rows.append(
            {
                "action": action,
                "card": card,
                "points": points,
                "reply": round(reply, 3),
                "stuck": round(stuck, 3),
                "value": round(value, 3),
                "_key": value,
            }
        )
    rows.sort(key=lambda row: row["_key"], reverse=True)
    for row in rows:
        del row["_key"]
    return rows
