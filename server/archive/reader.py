"""Reading the archive: a game by id with its log, a player's games a page at a time.

The seam the players' pages, statistics and the ``/replay/<game>`` page build on
(``GET /api/games/{id}``: ``server.archive.replay``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import and_, or_, select

from protocol import jsontext

from ..database import Database
from ..database.schema import (
    game_chat,
    game_deals,
    game_logs,
    game_seats,
    games,
    matches,
    players,
)


@dataclass(frozen=True)
class ArchivedGame:
    """One archived game.

    Attributes:
        game: its ``games`` row (a dict).
        seats: its ``game_seats`` rows, by seat, each with ``player_deleted``: whether the
            seat's player has deleted themself (the seat then shows "a deleted player").
        deals: its ``game_deals`` rows, by deal number.
        log: the room's log entries of the game, oldest first (``{"v", ...cause,
            "events"}``, events unredacted), or None when not asked for.
        match: the ``matches`` row of the game's match (as of its latest archived game),
            or None for a single game (best of 1).
    """

    game: dict[str, Any]
    seats: list[dict[str, Any]]
    deals: list[dict[str, Any]]
    log: list[dict[str, Any]] | None
    match: dict[str, Any] | None = None
    chat: list[dict[str, Any]] = field(default_factory=list)
    """The table talk of the game as stored (``game_chat``: entries with their author's
    ``by`` and, once a moderator hid them, ``"hidden": true``)."""
    authors: dict[str, str] = field(default_factory=dict)
    """What the talk's authors are now, by player id (their ``by``): ``"deleted"`` (they
    deleted themself) or ``"private"`` (their profile is private); a public player is not
    listed. Read with the game, so that a change since the talk reaches it."""


@dataclass(frozen=True)
class GamesPage:
    """A page of a player's games, newest first.

    Attributes:
        items: each ``{"game": games row, "seat": the player's game_seats row}``.
        next: the cursor of the next (older) page, or None at the end.
    """

    items: list[dict[str, Any]]
    next: str | None


class ArchiveReader:
    """Reads archived games.

    Args:
        db: the database.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    async def game(self, game_id: str, *, with_log: bool = True) -> ArchivedGame | None:
        """The game with id ``game_id`` (and its log), or None.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
        """
        async with self.db.connect() as conn:
            row = (await conn.execute(select(games).where(games.c.id == game_id))).first()
            if row is None:
                return None
            seats = (await conn.execute(
                select(game_seats, players.c.deleted_at.is_not(None).label("player_deleted"))
                .select_from(game_seats.outerjoin(
                    players, players.c.id == game_seats.c.player_id))
                .where(game_seats.c.game_id == game_id).order_by(game_seats.c.seat))
            ).mappings()
            seat_rows = [dict(s) for s in seats]
            deals = (await conn.execute(select(game_deals).where(
                game_deals.c.game_id == game_id).order_by(game_deals.c.deal_number))).mappings()
            deal_rows = [dict(d) for d in deals]
            log = None
            if with_log:
                text = (await conn.execute(select(game_logs.c.entries).where(
                    game_logs.c.game_id == game_id))).scalar()
                log = jsontext.loads(text) if text else []
            match = None
            if row._mapping["match_id"] is not None:
                found = (await conn.execute(select(matches).where(
                    matches.c.id == row._mapping["match_id"]))).mappings().first()
                match = dict(found) if found is not None else None
            talk = (await conn.execute(select(game_chat.c.messages).where(
                game_chat.c.game_id == game_id))).scalar()
            chat = jsontext.loads(talk) if talk else []
            authors: dict[str, str] = {}
            ids = sorted({str(e["by"]) for e in chat if e.get("by")})
            if ids:
                for pid, private, deleted in (await conn.execute(
                        select(players.c.id, players.c.private, players.c.deleted_at)
                        .where(players.c.id.in_(ids)))).all():
                    if deleted is not None:
                        authors[pid] = "deleted"
                    elif private:
                        authors[pid] = "private"
        return ArchivedGame(dict(row._mapping), seat_rows, deal_rows, log, match, chat,
                            authors)

    async def hide_chat(self, room_id: str, message_id: int) -> bool:
        """Mark message ``message_id`` of room ``room_id`` hidden in every archived game of
        that room that holds it (a moderator's hide; ``GET /api/games/{id}`` leaves it out).

        Returns:
            Whether an archived game held it.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
        """
        if not self.db.migrated:
            await self.db.migrate()
        found = False
        async with self.db.begin() as conn:
            rows = (await conn.execute(
                select(game_chat.c.game_id, game_chat.c.messages)
                .join(games, games.c.id == game_chat.c.game_id)
                .where(games.c.room_id == room_id))).all()
            for game_id, text in rows:
                talk = jsontext.loads(text)
                hit = False
                for entry in talk:
                    if entry.get("id") == message_id and not entry.get("hidden"):
                        entry["hidden"] = True
                        hit = True
                if hit:
                    found = True
                    await conn.execute(game_chat.update().where(
                        game_chat.c.game_id == game_id).values(
                        messages=jsontext.dumps(talk)))
        return found

    async def player_games(
        self, player_id: str, *, limit: int = 20, cursor: str | None = None
    ) -> GamesPage:
        """A player's archived games, newest first, ``limit`` at a time (keyset pagination
        on ``(ended_at, game id)``, the ``ix_game_seats_player`` index).

        Args:
            player_id: the player.
            limit: games per page (1..100).
            cursor: ``GamesPage.next`` of the previous page, or None for the newest.

        Raises:
            ValueError: a cursor that is not one. sqlalchemy.exc.SQLAlchemyError, OSError.
        """
        limit = max(1, min(100, int(limit)))
        seat = game_seats
        query = select(seat, games).join(games, games.c.id == seat.c.game_id).where(
            seat.c.player_id == player_id)
        if cursor:
            ended_text, _, last_id = cursor.partition("~")
            try:
                ended = datetime.fromisoformat(ended_text)
            except ValueError:
                raise ValueError("not a cursor") from None
            query = query.where(or_(seat.c.ended_at < ended,
                                    and_(seat.c.ended_at == ended, seat.c.game_id < last_id)))
        query = query.order_by(seat.c.ended_at.desc(), seat.c.game_id.desc()).limit(limit + 1)
        async with self.db.connect() as conn:
            rows = (await conn.execute(query)).all()
        items = []
        seat_names = set(seat.c.keys())
        for row in rows[:limit]:
            mapping = row._mapping
            items.append({
                "seat": {k: mapping[seat.c[k]] for k in seat_names},
                "game": {k: mapping[games.c[k]] for k in games.c.keys()},
            })
        nxt = None
        if len(rows) > limit:
            last = items[-1]["seat"]
            nxt = f"{last['ended_at'].isoformat()}~{last['game_id']}"
        return GamesPage(items, nxt)
