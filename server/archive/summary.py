"""Each seat's summary of one game, computed from the game's events (issue 18 point 4).

What a player's statistics add up (``game_seats`` rows): deals dealt and as pone; the holes
pegged as dealer and as pone, split into pegging (``play``, ``go``, ``last_card``), hand,
crib and his heels; hands and cribs counted with their true counts; Back-up 10 moves and the
holes moved back; Muggins points taken (as the caller) and lost (taken from the seat's
counts); penalty holes received (an opponent's wrong call); and, from the result, the
skunks the seat's side gave (:func:`skunks_given`: single or double, docs/rules.md §4.4).
Holes are what the score moved (``score_after - score_before``: a peg stops at the
target).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

FIELDS = (
    "deals_dealt", "deals_pone", "dealer_pegging", "dealer_hand", "dealer_crib",
    "dealer_heels", "pone_pegging", "pone_hand", "hands_counted", "hand_total",
    "cribs_counted", "crib_total", "backup_moves", "backup_holes", "muggins_taken",
    "muggins_lost", "penalty_points",
)
"""The summary's columns, in ``game_seats`` order."""

_PEGGING = {"play", "go", "last_card"}
_PLACE = {"hand": "hand", "crib": "crib", "his_heels": "heels"}


def summarize(players: int, events: Iterable[dict[str, Any]]) -> list[dict[str, int]]:
    """The summary of every seat (a list by seat) from one game's events, in order.

    Args:
        players: seats at the table (2, 3 or 4).
        events: the game's full events (its log entries' ``events``, oldest first).
    """
    out = [dict.fromkeys(FIELDS, 0) for _ in range(players)]
    dealer: int | None = None
    for event in events:
        kind = event.get("type")
        if kind == "deal":
            dealer = event["dealer"]
            for seat in range(players):
                out[seat]["deals_dealt" if seat == dealer else "deals_pone"] += 1
        elif kind == "peg":
            seat, source = event["seat"], event["source"]
            holes = event["score_after"] - event["score_before"]
            row = out[seat]
            role = "dealer" if seat == dealer else "pone"
            if source in _PEGGING:
                row[f"{role}_pegging"] += holes
            elif source in _PLACE:
                name = f"{role}_{_PLACE[source]}"
                if name in row:  # (only the dealer has a crib and his heels)
                    row[name] += holes
            elif source == "muggins":
                row["muggins_taken"] += holes
            elif source == "penalty":
                row["penalty_points"] += holes
        elif kind == "show_hand":
            row = out[event["seat"]]
            which = "hand" if event["kind"] == "hand" else "crib"
            row[f"{which}s_counted"] += 1
            row[f"{which}_total"] += event["total"]
        elif kind == "muggins_result":
            out[event["owner"]]["muggins_lost"] += event["caller_pegs"]
        elif kind == "backup":
            out[event["seat"]]["backup_moves"] += 1
            out[event["seat"]]["backup_holes"] += event["holes"]
    return out


def skunks_given(skunks: dict[str, str], won: bool) -> dict[str, int]:
    """The skunks a seat's side gave: ``{"skunks_given": n, "double_skunks_given": d}``.

    Args:
        skunks: the ``game_over`` event's ``skunks`` (each losing side's level, ``none``,
            ``skunk`` or ``double``: docs/rules.md §4.4).
        won: whether the seat's side won (only a winner gives skunks).

    Returns:
        ``skunks_given``: losing sides skunked (single or double); ``double_skunks_given``:
        of those, the double skunks. Both 0 for a seat that did not win.
    """
    if not won:
        return {"skunks_given": 0, "double_skunks_given": 0}
    return {"skunks_given": sum(1 for v in skunks.values() if v != "none"),
            "double_skunks_given": sum(1 for v in skunks.values() if v == "double")}
