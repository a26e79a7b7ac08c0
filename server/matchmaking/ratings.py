"""A player's rating at a table kind, for matching (read once per ``queue_join``, cached
by the matcher)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy import select

from ..database import Database
from ..database.schema import ratings


def rating_reader(db: Database) -> Callable[[str, str], Awaitable[float | None]]:
    """``async (player, table kind) -> mu`` from the ``ratings`` table (None: no row, a
    newcomer at that kind)."""

    async def read(player: str, kind: str) -> float | None:
        async with db.connect() as conn:
            row = (await conn.execute(select(ratings.c.mu).where(
                ratings.c.player_id == player, ratings.c.table_kind == kind))).first()
        return float(row[0]) if row is not None else None

    return read
