"""The leaderboard's and a player's ratings' reads (issue 19 point 3; SQL on
``ix_ratings_board`` and ``rating_board_counts``, docs/performance.md "Leaderboard").

A board is a table kind's ``ratings`` rows with at least
:data:`server.ratings.counts.MIN_GAMES` (10) games, ordered by the number shown, highest
first, ties by player id. Every read walks the index ``(table_kind, display DESC,
player_id)`` from a known place: the top 100 from its start; a player's neighbours from the
player's own key, each direction and the ties apart (so each is an index range, never a scan
with a filter). The rank is ``1 + the players showing a higher number`` (a sum over the
kind's ``rating_board_counts`` rows above the player's number: at most a few thousand,
whatever the board's size) ``+ the ties ahead by player id`` (an index range of one number
on ``ix_ratings_board``, ``games`` carried in the index on PostgreSQL).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ..database import Database
from ..database.schema import game_seats, players, rating_board_counts, rating_history, ratings
from ..history.games import iso
from .counts import MIN_GAMES, on_board

TOP = 100
"""Entries of the top of a board."""

NEIGHBOURS = 5
"""Entries shown above and below a player's own ("around me")."""

_ENTRY = (ratings.c.player_id, ratings.c.display, ratings.c.games, ratings.c.wins,
          players.c.name, players.c.private)


def _board(kind: str) -> Any:
    return and_(ratings.c.table_kind == kind, ratings.c.games >= MIN_GAMES)


def _entry(row: Any, rank: int | None) -> dict[str, Any]:
    private = bool(row["private"])
    return {"rank": rank, "player": row["player_id"],
            "name": None if private else row["name"], "private": private,
            "rating": int(row["display"]), "games": int(row["games"]),
            "wins": int(row["wins"])}


def _select(where: Any, order: Any, limit: int) -> Any:
    return select(*_ENTRY).select_from(ratings.join(players, players.c.id == ratings.c.player_id)
                                       ).where(where).order_by(*order).limit(limit)


async def _rank(conn: AsyncConnection, kind: str, display: int, player: str) -> int:
    """1 + the entries of the board above ``(display, player)``: the counts of the higher
    numbers (``rating_board_counts``) + the ties ahead by player id, in one statement (one
    snapshot: a rating update committing meanwhile is seen by both parts or by neither)."""
    counts = rating_board_counts.c
    above = select(func.coalesce(func.sum(counts.players), 0)).where(
        counts.table_kind == kind, counts.display > display).scalar_subquery()
    tied = select(func.count()).select_from(ratings).where(
        _board(kind), ratings.c.display == display,
        ratings.c.player_id < player).scalar_subquery()
    return 1 + int((await conn.execute(select(above + tied))).scalar() or 0)


async def top(db: Database, kind: str) -> list[dict[str, Any]]:
    """The top :data:`TOP` of the board."""
    async with db.connect() as conn:
        rows = (await conn.execute(_select(
            _board(kind), (ratings.c.display.desc(), ratings.c.player_id),
            TOP))).mappings().all()
    return [_entry(r, i + 1) for i, r in enumerate(rows)]


async def around(db: Database, kind: str, player: str
                 ) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    """``(the player's entry, the entries around it)``. A player with a rating at the kind
    who is not on the board yet (fewer than :data:`MIN_GAMES` games) gets ``(their entry
    with rank None, None)``, so a newcomer finds their rating on the leaderboard page; a
    player with no rating there, ``(None, None)``."""
    async with db.connect() as conn:
        mine = (await conn.execute(_select(and_(_board(kind),
                                                ratings.c.player_id == player), (), 1)
                                   )).mappings().first()
        if mine is None:
            off = (await conn.execute(_select(and_(ratings.c.table_kind == kind,
                                                   ratings.c.player_id == player), (), 1)
                                      )).mappings().first()
            return (_entry(off, None) if off is not None else None), None
        d = int(mine["display"])
        rank = await _rank(conn, kind, d, player)
        board = _board(kind)
        n = NEIGHBOURS
        up_ties = (await conn.execute(_select(
            and_(board, ratings.c.display == d, ratings.c.player_id < player),
            (ratings.c.player_id.desc(),), n))).mappings().all()
        up = list(up_ties) + list((await conn.execute(_select(
            and_(board, ratings.c.display > d),
            (ratings.c.display.asc(), ratings.c.player_id.desc()),
            n - len(up_ties)))).mappings().all()) if len(up_ties) < n else list(up_ties)
        down_ties = (await conn.execute(_select(
            and_(board, ratings.c.display == d, ratings.c.player_id > player),
            (ratings.c.player_id.asc(),), n))).mappings().all()
        down = list(down_ties) + list((await conn.execute(_select(
            and_(board, ratings.c.display < d),
            (ratings.c.display.desc(), ratings.c.player_id.asc()),
            n - len(down_ties)))).mappings().all()) if len(down_ties) < n else list(down_ties)
    me = _entry(mine, rank)
    entries = [_entry(r, rank - 1 - i) for i, r in enumerate(up)][::-1]
    entries += [me] + [_entry(r, rank + 1 + i) for i, r in enumerate(down)]
    return me, entries


async def player_ratings(db: Database, player: str, *, provisional: int, history: int
                         ) -> dict[str, Any]:
    """A player's ratings (``protocol.ratings.PlayerRatings`` without ``player``)."""
    async with db.connect() as conn:
        rows = (await conn.execute(select(ratings).where(ratings.c.player_id == player)
                                   .order_by(ratings.c.table_kind))).mappings().all()
        found = []
        for r in rows:
            found.append({
                "table_kind": r["table_kind"], "rating": int(r["display"]),
                "mu": float(r["mu"]), "sigma": float(r["sigma"]), "games": int(r["games"]),
                "wins": int(r["wins"]), "provisional": int(r["games"]) < provisional,
                "rank": await _rank(conn, r["table_kind"], int(r["display"]), player)
                if on_board(r["games"]) else None})
        changes = (await conn.execute(select(rating_history).where(
            rating_history.c.player_id == player).order_by(
            rating_history.c.at.desc(), rating_history.c.source_id.desc()).limit(history)
        )).mappings().all()
        abandoned = (await conn.execute(select(func.count()).select_from(game_seats).where(
            game_seats.c.player_id == player, game_seats.c.abandoned.is_(True)))).scalar()
    return {
        "ratings": found,
        "history": [{"table_kind": h["table_kind"], "source": h["source"],
                     "source_id": h["source_id"], "game": h["game_id"],
                     "at": iso(h["at"]),
                     "rank": int(h["rank"]), "teams": int(h["teams"]),
                     "abandoned": bool(h["abandoned"]), "before": int(h["display_before"]),
                     "after": int(h["display"])} for h in changes],
        "abandoned": int(abandoned or 0),
    }
