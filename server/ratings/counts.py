"""The leaderboard's counts per shown number (``rating_board_counts``; docs/performance.md
"Leaderboard").

A board (``server.ratings.board``) is a table kind's ``ratings`` rows with at least
:data:`MIN_GAMES` games. ``rating_board_counts`` holds, per ``(table kind, shown number)``,
how many players of the board show that number, so a player's rank is ``1 + the counts of
the higher numbers + the ties ahead by player id`` — a sum over at most a few thousand rows
and one index range, whatever the board's size.

The counts are kept in step in the transaction that changes a rating row: the rating update
(``server.ratings.update.rate_game``: the player's old entry out if it was on the board, the
new one in if it is) and a player's deletion (``server.players.store.PlayerStore.delete``:
its entries out). Every writer locks the players' rating rows first (sorted by player, then
table kind) and the count rows after them in ``(table kind, shown number)`` order
(:func:`shift`), so two transactions on PostgreSQL never wait on each other in a cycle;
SQLite has one writer at a time. A row whose count falls to 0 is deleted, so the table equals
``SELECT table_kind, display, count(*) FROM ratings WHERE games >= MIN_GAMES GROUP BY
table_kind, display`` at every commit (:data:`REBUILD` writes exactly that).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import and_, delete, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from ..database.schema import rating_board_counts, ratings

MIN_GAMES = 10
"""Rated games (or matches) a player needs at a table kind to appear on its leaderboard.
A constant of the code, not a setting: ``rating_board_counts`` counts the players at or
over it, so changing it means rebuilding the counts (:data:`REBUILD`) in a migration."""

Entry = tuple[str, int]
"""``(table kind, shown number)``: a board entry's place in ``rating_board_counts``."""


def on_board(games: int) -> bool:
    """Whether a rating with ``games`` rated games or matches is on its kind's board."""
    return int(games) >= MIN_GAMES


def moves(before: Iterable[Mapping[str, Any]], after: Iterable[Mapping[str, Any]]
          ) -> Counter[Entry]:
    """The change of the counts when rating rows ``before`` become ``after``.

    Args:
        before: the rows as they were (``table_kind``, ``display``, ``games``), or none for
            a row that is new.
        after: the rows as they are now; none for deleted rows.

    Returns:
        ``{(kind, shown): +n | -n}``, entries that cancel out left out.
    """
    change: Counter[Entry] = Counter()
    for row in before:
        if on_board(row["games"]):
            change[(row["table_kind"], int(row["display"]))] -= 1
    for row in after:
        if on_board(row["games"]):
            change[(row["table_kind"], int(row["display"]))] += 1
    return Counter({k: n for k, n in change.items() if n})


async def shift(conn: AsyncConnection, dialect: str, change: Mapping[Entry, int]) -> None:
    """Add ``change`` to the counts, one row at a time in ``(kind, shown)`` order (the lock
    order of the module docstring), deleting a row that reaches 0.

    Call it after the changed rating rows are locked (updated, deleted or ``FOR UPDATE``),
    in the same transaction.

    Args:
        conn: the transaction that changed the rating rows.
        dialect: ``postgresql`` or ``sqlite``.
        change: ``{(kind, shown): players added (negative: removed)}`` (:func:`moves`).
    """
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    c = rating_board_counts.c
    for (kind, shown), n in sorted(change.items()):
        if not n:
            continue
        statement = insert(rating_board_counts).values(table_kind=kind, display=shown,
                                                       players=n)
        await conn.execute(statement.on_conflict_do_update(
            index_elements=[c.table_kind, c.display],
            set_={"players": c.players + statement.excluded.players}))
        if n < 0:
            await conn.execute(delete(rating_board_counts).where(and_(
                c.table_kind == kind, c.display == shown, c.players == 0)))


REBUILD = rating_board_counts.insert().from_select(
    ["table_kind", "display", "players"],
    select(ratings.c.table_kind, ratings.c.display, func.count())
    .where(ratings.c.games >= MIN_GAMES)
    .group_by(ratings.c.table_kind, ratings.c.display))
"""The counts from scratch (into an empty ``rating_board_counts``): one ``INSERT ... SELECT
... GROUP BY`` (what ``bench/leaderboard.py`` runs after generating its ratings)."""
