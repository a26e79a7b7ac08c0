"""A player's statistics, computed from their archived seats (issue 18 point 4).

Every figure adds up the ``game_seats`` rows of the player's **finished** games (an abandoned
game counts only as abandoned): each row's summary was computed from the game's events when
it was archived (``server.archive.summary``), so every figure comes from the archived events;
``tests/history/test_statistics.py`` recomputes all of them from the logs with the engine.

* games played, won, lost, drawn, and abandoned; played and won by table kind (``2``, ``3``,
  ``4``, ``2x2`` partnerships), by variant (``standard``: none of the three; a game of
  several variants counts under each) and by target (61, 121);
* skunks given and taken, single and double (docs/rules.md §4.4);
* points per deal as dealer and as pone, split into pegging, hand, crib and his heels (holes
  the score moved, over the deals the player dealt or poned), and the totals;
* the average hand and crib (their true counts, per hand or crib counted);
* Back-up 10 moves (and the holes they moved back: docs/rules.md §6); Muggins points taken
  (as the caller) and lost (taken from the player's counts: §5);
* streaks of wins over finished games in the order they ended: the current one and the best
  (a loss or a draw ends a streak).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Integer, case, cast, func, select

from ..database import Database
from ..database.schema import game_seats

KINDS = ("2", "3", "4", "2x2")
"""Table kinds (``games.table_kind``)."""

VARIANTS = ("standard", "muggins", "lowball", "backup10")
"""Variants, as the profile groups them."""

TARGETS = ("61", "121")

SUMS = (
    "deals_dealt", "deals_pone", "dealer_pegging", "dealer_hand", "dealer_crib",
    "dealer_heels", "pone_pegging", "pone_hand", "hands_counted", "hand_total",
    "cribs_counted", "crib_total", "backup_moves", "backup_holes", "muggins_taken",
    "muggins_lost", "skunks_given", "double_skunks_given",
)
"""The summary columns the profile adds up."""

GROUP = ("table_kind", "target", "muggins", "lowball", "backup10")


def _as_int(value: Any) -> int:
    return int(value or 0)


def _per(total: int, count: int) -> float | None:
    return round(total / count, 3) if count else None


def variants_of(row: Mapping[str, Any]) -> list[str]:
    """The variants a game counts under (``standard`` when it has none of the three)."""
    out = [v for v in ("muggins", "lowball", "backup10") if row[v]]
    return out or ["standard"]


def fold(groups: Iterable[Mapping[str, Any]], wins: Iterable[bool], abandoned: int
         ) -> dict[str, Any]:
    """The statistics (``protocol.http.PlayerStatistics``) from the grouped sums.

    Args:
        groups: one mapping per (table kind, target, muggins, lowball, backup10) of the
            player's finished games: those five keys, ``played``, ``won``, ``drawn``,
            ``skunk_taken``, ``double_taken`` and every column of :data:`SUMS` summed.
        wins: whether each finished game was won, oldest first (for the streaks).
        abandoned: the player's abandoned games.
    """
    total = dict.fromkeys(SUMS, 0)
    count = {"played": 0, "won": 0, "drawn": 0, "skunk_taken": 0, "double_taken": 0}
    by_table = {k: {"played": 0, "won": 0} for k in KINDS}
    by_variant = {k: {"played": 0, "won": 0} for k in VARIANTS}
    by_target = {k: {"played": 0, "won": 0} for k in TARGETS}
    for g in groups:
        played, won = _as_int(g["played"]), _as_int(g["won"])
        for key in count:
            count[key] += _as_int(g[key])
        for key in SUMS:
            total[key] += _as_int(g[key])
        for bucket in (by_table.setdefault(str(g["table_kind"]), {"played": 0, "won": 0}),
                       by_target.setdefault(str(g["target"]), {"played": 0, "won": 0}),
                       *(by_variant[v] for v in variants_of(g))):
            bucket["played"] += played
            bucket["won"] += won
    current = best = 0
    for won in wins:
        current = current + 1 if won else 0
        best = max(best, current)
    t = total
    dealer = {"pegging": t["dealer_pegging"], "hand": t["dealer_hand"],
              "crib": t["dealer_crib"], "heels": t["dealer_heels"]}
    pone = {"pegging": t["pone_pegging"], "hand": t["pone_hand"]}

    def role(deals: int, parts: dict[str, int]) -> dict[str, Any]:
        sums = {**parts, "total": sum(parts.values())}
        return {"deals": deals, "points": sums,
                "per_deal": {k: _per(v, deals) for k, v in sums.items()}}

    return {
        "games": {"played": count["played"], "won": count["won"], "drawn": count["drawn"],
                  "lost": count["played"] - count["won"] - count["drawn"],
                  "abandoned": abandoned},
        "by_table": by_table,
        "by_variant": by_variant,
        "by_target": by_target,
        "skunks": {
            "given": {"single": t["skunks_given"] - t["double_skunks_given"],
                      "double": t["double_skunks_given"]},
            "taken": {"single": count["skunk_taken"], "double": count["double_taken"]},
        },
        "dealer": role(t["deals_dealt"], dealer),
        "pone": role(t["deals_pone"], pone),
        "hand": {"counted": t["hands_counted"], "total": t["hand_total"],
                 "average": _per(t["hand_total"], t["hands_counted"])},
        "crib": {"counted": t["cribs_counted"], "total": t["crib_total"],
                 "average": _per(t["crib_total"], t["cribs_counted"])},
        "backup10": {"moves": t["backup_moves"], "holes": t["backup_holes"]},
        "muggins": {"taken": t["muggins_taken"], "lost": t["muggins_lost"]},
        "streaks": {"current": current, "best": best},
    }


def _flag(expr: Any) -> Any:
    return func.sum(cast(case((expr, 1), else_=0), Integer))


_seat = game_seats.c
_GROUPED = select(
    *(_seat[k] for k in GROUP),
    func.count().label("played"),
    _flag(_seat.won).label("won"),
    _flag(_seat.drawn).label("drawn"),
    _flag(_seat.skunk == "skunk").label("skunk_taken"),
    _flag(_seat.skunk == "double").label("double_taken"),
    *(func.sum(_seat[k]).label(k) for k in SUMS),
).where(_seat.status == "finished").group_by(*(_seat[k] for k in GROUP))
_ABANDONED = select(func.count()).where(_seat.status == "abandoned")
_RESULTS = select(_seat.won).where(_seat.status == "finished").order_by(
    _seat.ended_at, _seat.game_id)


async def player_statistics(db: Database, player_id: str) -> dict[str, Any]:
    """The statistics of ``player_id`` (:func:`fold`), from three indexed reads of its
    ``game_seats`` rows, each an index-only scan of ``ix_game_seats_player_stats`` on
    PostgreSQL.

    Raises:
        sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
    """
    mine = _seat.player_id == player_id
    async with db.connect() as conn:
        groups = [dict(r) for r in (await conn.execute(_GROUPED.where(mine))).mappings()]
        abandoned = _as_int((await conn.execute(_ABANDONED.where(mine))).scalar())
        wins = [bool(w) for w in (await conn.execute(_RESULTS.where(mine))).scalars()]
    return fold(groups, wins, abandoned)
