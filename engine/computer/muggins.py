"""Announcing and answering counts under Muggins (issue 4; docs/rules.md §5).

Everything needed is public in the seat's view while a hand is pending: the pending hand's
four cards (``view["show"]["pending"]["cards"]``), whether it is the crib, and the starter.
The true count is :func:`engine.scoring.score_hand` of those.
"""

from __future__ import annotations

from ..scoring import score_hand


def pending_true_count(view: dict) -> int | None:
    """The true count of the hand or crib pending in the Muggins show, or ``None``.

    Args:
        view: a seat's view in the ``show`` phase.

    Returns:
        0..29 (docs/rules.md §4.2; a crib scores a flush only with the starter), or ``None`` when
        no hand is pending or the starter is unknown.
    """
    pending = (view.get("show") or {}).get("pending")
    starter = view.get("starter")
    if not pending or not starter or len(pending.get("cards") or ()) != 4:
        return None
    return score_hand(pending["cards"], starter, crib=pending.get("kind") == "crib").total


def announce(view: dict, legal: list[dict]) -> dict | None:
    """The legal announcement of the true count (docs/rules.md §5.1), or ``None`` if none is legal.

    If the exact count were somehow not offered, the closest offered number is taken.
    """
    offers = [a for a in legal if a.get("type") == "announce"]
    if not offers:
        return None
    true = pending_true_count(view)
    if true is None:
        return offers[0]
    return min(offers, key=lambda a: abs(int(a["points"]) - true))


def correct_call(view: dict) -> str | None:
    """The right answer to the pending announcement (docs/rules.md §5.2–5.3).

    Returns:
        ``"muggins"`` when the announced count N is below the true count T, ``"overcount"``
        when it is above, ``"accept"`` when equal; ``None`` when nothing is announced.
    """
    pending = (view.get("show") or {}).get("pending")
    true = pending_true_count(view)
    if not pending or pending.get("announced") is None or true is None:
        return None
    announced = int(pending["announced"])
    if announced < true:
        return "muggins"
    if announced > true:
        return "overcount"
    return "accept"


def answer(view: dict, legal: list[dict], *, miss: bool = False) -> dict | None:
    """The legal answer to pick: the correct call, or ``accept`` when ``miss`` is set.

    Args:
        view: the seat's view with an announcement pending.
        legal: the seat's legal actions (``{"type": "answer", "call": ...}``).
        miss: the ``easy`` player overlooks a wrong count on purpose (it accepts instead).

    Returns:
        A member of ``legal``, or ``None`` if no answer is legal.
    """
    offers = {a.get("call"): a for a in legal if a.get("type") == "answer"}
    if not offers:
        return None
    call = correct_call(view) or "accept"
    if miss:
        call = "accept"
    return offers.get(call) or offers.get("accept") or next(iter(offers.values()))
