"""A player's games, newest first, a page at a time (issue 18 point 4).

A page is the player's ``game_seats`` rows in ``(ended_at, game_id)`` order, newest first,
from the ``ix_game_seats_player`` index (keyset pagination: a cursor names the last game
shown, so a deep page costs what the first does), then every seat of those games in one
read (their primary key), with each seat's player's deletion: a seat whose player deleted
themself shows no name and ``deleted: true`` ("a deleted player"); the game's final scores
are its seats' (each seat holds its side's).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import or_, select

from ..database import Database
from ..database.schema import game_seats, players

CURSOR_SEPARATOR = "~"


def iso(value: datetime) -> str:
    """A time as ISO 8601 in UTC (``...Z``); SQLite gives UTC back without its zone."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def make_cursor(ended_at: datetime, game_id: str) -> str:
    """The cursor after a game: its end (ISO 8601, UTC) and id."""
    return f"{iso(ended_at)}{CURSOR_SEPARATOR}{game_id}"


def read_cursor(cursor: str) -> tuple[datetime, str]:
    """``(ended_at, game_id)`` of a cursor of :func:`make_cursor`.

    Raises:
        ValueError: not a cursor.
    """
    ended_text, sep, game_id = cursor.partition(CURSOR_SEPARATOR)
    if not sep or not game_id or len(game_id) > 16 or len(ended_text) > 40:
        raise ValueError("not a cursor")
    ended = datetime.fromisoformat(ended_text.replace("Z", "+00:00"))
    if ended.tzinfo is None:
        raise ValueError("not a cursor")
    # The same moment written with another offset is the same cursor (the archive's times
    # are compared in UTC).
    return ended.astimezone(UTC), game_id


def result_of(seat: dict[str, Any], status: str) -> str:
    """``won``, ``lost``, ``drawn`` or ``abandoned``: the game's end for that seat."""
    if status == "abandoned":
        return "abandoned"
    if seat["won"]:
        return "won"
    return "drawn" if seat["drawn"] else "lost"


_PAGE_COLUMNS = (
    game_seats.c.game_id, game_seats.c.seat, game_seats.c.side, game_seats.c.won,
    game_seats.c.drawn, game_seats.c.final_score, game_seats.c.skunk, game_seats.c.status,
    game_seats.c.table_kind, game_seats.c.target, game_seats.c.muggins, game_seats.c.lowball,
    game_seats.c.backup10, game_seats.c.ended_at,
)


def page_query(player_id: str, limit: int, cursor: str | None) -> Any:
    """The statement of a page of the player's seats (``limit + 1`` rows, newest first).

    Raises:
        ValueError: a cursor that is not one.
    """
    seat = game_seats.c
    query = select(*_PAGE_COLUMNS).where(seat.player_id == player_id)
    if cursor:
        ended, last_id = read_cursor(cursor)
        # (the first term bounds the index scan; the OR alone would be a filter that reads
        # every newer row of the player first)
        query = query.where(seat.ended_at <= ended,
                            or_(seat.ended_at < ended, seat.game_id < last_id))
    return query.order_by(seat.ended_at.desc(), seat.game_id.desc()).limit(limit + 1)


def seats_query(ids: list[str]) -> Any:
    """The statement of every seat of games ``ids``, with its player's deletion and
    privacy (and its side's final score: the game's scores without reading ``games``)."""
    seat = game_seats.c
    return select(
        seat.game_id, seat.seat, seat.side, seat.kind, seat.level, seat.name,
        seat.player_id, seat.final_score, players.c.deleted_at, players.c.private,
    ).select_from(game_seats.outerjoin(players, players.c.id == seat.player_id)
                  ).where(seat.game_id.in_(ids)).order_by(seat.game_id, seat.seat)


async def player_games(db: Database, player_id: str, *, limit: int,
                       cursor: str | None = None) -> dict[str, Any]:
    """A page of ``player_id``'s games (``protocol.http.PlayerGamesPage``).

    Args:
        db: the database.
        player_id: the player.
        limit: games on the page (the caller bounds it: ``history_max_page_size``).
        cursor: the previous page's ``next``, or None for the newest games.

    Returns:
        ``{"games": [...], "next": cursor or None}``; each game ``{"game", "ended_at",
        "status", "result", "table_kind", "target", "variants", "seat", "side", "score",
        "scores", "skunk", "seats": [{"seat", "side", "kind", "level", "name", "player",
        "deleted"}]}``; ``player`` is null for a deleted player and for another player
        whose profile is private.

    Raises:
        ValueError: a cursor that is not one. sqlalchemy.exc.SQLAlchemyError, OSError.
    """
    query = page_query(player_id, limit, cursor)
    async with db.connect() as conn:
        rows = [dict(r) for r in (await conn.execute(query)).mappings()]
        mine = rows[:limit]
        ids = [r["game_id"] for r in mine]
        others: dict[str, list[dict[str, Any]]] = {i: [] for i in ids}
        scores: dict[str, dict[int, int]] = {i: {} for i in ids}
        if ids:
            for r in (await conn.execute(seats_query(ids))).mappings():
                scores[r["game_id"]][r["side"]] = r["final_score"]
                deleted = r["deleted_at"] is not None
                # A private player's id is not put beside their name (as on the
                # leaderboard and in chat): the name stays, as at the table.
                hidden = bool(r["private"]) and r["player_id"] != player_id
                others[r["game_id"]].append({
                    "seat": r["seat"], "side": r["side"], "kind": r["kind"],
                    "level": r["level"], "name": None if deleted else r["name"],
                    "player": None if deleted or hidden else r["player_id"],
                    "deleted": deleted,
                })
    items = []
    for r in mine:
        variants = [v for v in ("muggins", "lowball", "backup10") if r[v]]
        items.append({
            "game": r["game_id"], "ended_at": iso(r["ended_at"]), "status": r["status"],
            "result": result_of(r, r["status"]), "table_kind": r["table_kind"],
            "target": r["target"], "variants": variants, "seat": r["seat"],
            "side": r["side"], "score": r["final_score"],
            "scores": [v for _, v in sorted(scores[r["game_id"]].items())],
            "skunk": r["skunk"],
            "seats": others[r["game_id"]],
        })
    nxt = make_cursor(mine[-1]["ended_at"], mine[-1]["game_id"]) if len(rows) > limit else None
    return {"games": items, "next": nxt}
