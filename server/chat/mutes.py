"""Mutes in the SQL database (issue 21 point 3): who muted whom (``player_mutes``).

A muted player's messages are no longer delivered to the player who muted them, on any of
that player's connections and devices (remembered for the player, not the connection); the
muted player is not told. A block (``server.social.blocks``) silences both ways as well.

Every method may raise what SQLAlchemy and the driver raise when the database cannot be
reached; callers answer ``database_unavailable`` (or, at ``hello``, hear everyone).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from ..database import Database
from ..database.schema import player_blocks, player_mutes, players


class MuteError(Exception):
    """A mute that cannot be made.

    Attributes:
        code: ``player_not_found`` (no such player, or a deleted one), ``bad_mute`` (a
            player muting themself), ``too_many_mutes`` (``max_mutes`` reached).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class MuteStore:
    """The mutes of one database (migrated on first use)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _ready(self) -> None:
        if not self.db.migrated:
            await self.db.migrate()

    async def mute(self, muter: str, muted: str, max_mutes: int = 0) -> bool:
        """``muter`` mutes ``muted`` (idempotent).

        Returns:
            True when the mute is new, False when it was there already.

        Raises:
            MuteError: ``bad_mute``, ``player_not_found``, ``too_many_mutes``.
        """
        if muter == muted:
            raise MuteError("bad_mute", "a player cannot mute themself")
        await self._ready()
        async with self.db.begin() as conn:
            target = (await conn.execute(select(players.c.deleted_at).where(
                players.c.id == muted))).first()
            if target is None or target[0] is not None:
                raise MuteError("player_not_found", "no such player")
            there = (await conn.execute(select(player_mutes.c.muter_id).where(
                player_mutes.c.muter_id == muter, player_mutes.c.muted_id == muted))).first()
            if there is not None:
                return False
            if max_mutes:
                held = (await conn.execute(select(func.count()).select_from(
                    player_mutes).where(player_mutes.c.muter_id == muter))).scalar()
                if (held or 0) >= max_mutes:
                    raise MuteError("too_many_mutes", f"a player may mute at most "
                                    f"{max_mutes} players; unmute some first")
            try:
                await conn.execute(player_mutes.insert().values(
                    muter_id=muter, muted_id=muted, created_at=datetime.now(UTC)))
            except IntegrityError:  # a concurrent mute of the same pair
                return False
        return True

    async def unmute(self, muter: str, muted: str) -> bool:
        """Remove a mute (idempotent). Returns whether there was one."""
        await self._ready()
        async with self.db.begin() as conn:
            done = await conn.execute(delete(player_mutes).where(
                player_mutes.c.muter_id == muter, player_mutes.c.muted_id == muted))
        return bool(done.rowcount)

    async def muted_by(self, muter: str) -> list[dict[str, Any]]:
        """The players ``muter`` muted, newest first: ``[{"player", "name", "muted_at"}]``
        (``name`` null for a player without one, deleted, or whose profile is private:
        their id is never shown beside their name; ``muted_at`` ISO 8601, UTC)."""
        await self._ready()
        query = (select(player_mutes.c.muted_id, player_mutes.c.created_at, players.c.name,
                        players.c.private)
                 .join(players, players.c.id == player_mutes.c.muted_id)
                 .where(player_mutes.c.muter_id == muter)
                 .order_by(player_mutes.c.created_at.desc(), player_mutes.c.muted_id))
        async with self.db.connect() as conn:
            rows = (await conn.execute(query)).all()
        out = []
        for muted_id, at, name, private in rows:
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)
            out.append({"player": muted_id, "name": None if private else name,
                        "muted_at": at.isoformat()})
        return out

    async def not_heard(self, player: str) -> set[str]:
        """The players whose messages ``player`` does not get: those they muted, those they
        blocked and those who blocked them."""
        await self._ready()
        async with self.db.connect() as conn:
            muted = (await conn.execute(select(player_mutes.c.muted_id).where(
                player_mutes.c.muter_id == player))).scalars().all()
            blocked = (await conn.execute(select(player_blocks.c.blocked_id).where(
                player_blocks.c.blocker_id == player))).scalars().all()
            blockers = (await conn.execute(select(player_blocks.c.blocker_id).where(
                player_blocks.c.blocked_id == player))).scalars().all()
        return {*muted, *blocked, *blockers}
