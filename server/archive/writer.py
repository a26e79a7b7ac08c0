"""The one SQL transaction that archives a game: insert-or-nothing, so it is idempotent.

The game's row is inserted with ``ON CONFLICT DO NOTHING`` on its unique key (room, room
creation, game number; PostgreSQL and SQLite alike). Only when that row was new are its
seats, deals and log inserted, in the same transaction: a game is in the database whole or
not at all, and a second write of the same game (a process that died after the commit and
before completing its claim, a lease that ran out under a slow database) changes nothing.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from protocol import jsontext

from ..database import Database
from ..database.schema import game_chat, game_deals, game_logs, game_seats, games, players
from ..ratings.update import rate_game, upsert_match

_STATEMENTS: dict[str, Any] = {}


def _statements(dialect: str) -> dict[str, Any]:
    """The inserts, built once per dialect (the statement objects are reused, so
    SQLAlchemy's compiled cache is hit without building a statement per game)."""
    found = _STATEMENTS.get(dialect)
    if found is None:
        insert = pg_insert if dialect == "postgresql" else sqlite_insert
        found = _STATEMENTS[dialect] = {
            "game": insert(games).on_conflict_do_nothing(),
            "seats": game_seats.insert(),
            "deals": game_deals.insert(),
            "log": game_logs.insert(),
            "chat": game_chat.insert(),
        }
    return found


async def write_game(db: Database, rows: dict[str, Any]) -> bool:
    """Archive one game (``server.archive.rows.game_rows``) in one transaction.

    A seat's player that is not (or no longer) in ``players`` is written as null. The
    game's match row (``rows["match"]``) is upserted first, and when the game's row is new
    the rating update runs in the same transaction (``server.ratings.update``): a rated
    game or match changes its players' ratings exactly once.

    Returns:
        True if the game was written now, False if it was archived already.

    Raises:
        sqlalchemy.exc.SQLAlchemyError, OSError, TimeoutError: the database failed (nothing
        was written).
    """
    statements = _statements(db.dialect)
    async with db.begin() as conn:
        await upsert_match(conn, db.dialect, rows.get("match"))
        result = await conn.execute(statements["game"], rows["game"])
        if result.rowcount != 1:
            return False
        seats = [dict(s) for s in rows["seats"]]
        wanted = {s["player_id"] for s in seats if s.get("player_id")}
        if wanted:
            known = set((await conn.execute(
                select(players.c.id).where(players.c.id.in_(wanted)))).scalars())
            for s in seats:
                if s.get("player_id") not in known:
                    s["player_id"] = None
        await conn.execute(statements["seats"], seats)
        if rows["deals"]:
            await conn.execute(statements["deals"], rows["deals"])
        await conn.execute(statements["log"], rows["log"])
        if rows.get("chat"):
            await conn.execute(statements["chat"], {
                "game_id": rows["game"]["id"], "messages": jsontext.dumps(rows["chat"])})
        await rate_game(conn, db.dialect, {**rows, "seats": seats})
    return True
