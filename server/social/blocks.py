"""Blocks in the SQL database (issue 20 point 3): who blocked whom (``player_blocks``).

A pair of players is *blocked* when either blocked the other: then neither may challenge
the other (``server.social.challenges``), the quick-match matcher never pairs them
(:meth:`BlockStore.blocked_between`), and neither may take a seat at a table where the
other sits (``server.social.service.SocialService.check_seat``).

Every method may raise what SQLAlchemy and the driver raise when the database cannot be
reached (``sqlalchemy.exc.SQLAlchemyError``, ``OSError``); callers answer
``database_unavailable``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select
from sqlalchemy.exc import IntegrityError

from ..database import Database
from ..database.schema import player_blocks, players


class BlockError(Exception):
    """A block that cannot be made.

    Attributes:
        code: ``player_not_found`` (no such player, or a deleted one), ``bad_block`` (a
            player blocking themself), ``too_many_blocks`` (``max_blocks`` reached).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class BlockStore:
    """The blocks of one database.

    Args:
        db: the database (migrated on first use).
        cache_seconds: how long :meth:`blocked_between` answers may be reused by callers
            that ask for it (``max_age``); a block made on this process clears the cache.
    """

    def __init__(self, db: Database, cache_seconds: float = 5.0) -> None:
        self.db = db
        self.cache_seconds = cache_seconds
        self._cache: dict[frozenset[str], tuple[float, set[frozenset[str]]]] = {}

    async def _ready(self) -> None:
        if not self.db.migrated:
            await self.db.migrate()

    async def block(self, blocker: str, blocked: str, max_blocks: int = 0) -> bool:
        """``blocker`` blocks ``blocked`` (idempotent).

        Returns:
            True when the block is new, False when it was there already.

        Raises:
            BlockError: ``bad_block``, ``player_not_found``, ``too_many_blocks``.
        """
        if blocker == blocked:
            raise BlockError("bad_block", "a player cannot block themself")
        await self._ready()
        self._cache.clear()
        async with self.db.begin() as conn:
            target = (await conn.execute(select(players.c.deleted_at).where(
                players.c.id == blocked))).first()
            if target is None or target[0] is not None:
                raise BlockError("player_not_found", "no such player")
            there = (await conn.execute(select(player_blocks.c.blocker_id).where(
                player_blocks.c.blocker_id == blocker,
                player_blocks.c.blocked_id == blocked))).first()
            if there is not None:
                return False
            if max_blocks:
                held = (await conn.execute(select(func.count()).select_from(
                    player_blocks).where(player_blocks.c.blocker_id == blocker))).scalar()
                if (held or 0) >= max_blocks:
                    raise BlockError("too_many_blocks", f"a player may block at most "
                                     f"{max_blocks} players; unblock some first")
            try:
                await conn.execute(player_blocks.insert().values(
                    blocker_id=blocker, blocked_id=blocked, created_at=datetime.now(UTC)))
            except IntegrityError:  # a concurrent block of the same pair
                return False
        return True

    async def unblock(self, blocker: str, blocked: str) -> bool:
        """Remove a block (idempotent). Returns whether there was one."""
        await self._ready()
        self._cache.clear()
        async with self.db.begin() as conn:
            done = await conn.execute(delete(player_blocks).where(
                player_blocks.c.blocker_id == blocker, player_blocks.c.blocked_id == blocked))
        return bool(done.rowcount)

    async def blocked_by(self, blocker: str) -> list[dict[str, Any]]:
        """The players ``blocker`` blocked, newest first: ``[{"player", "name",
        "blocked_at"}]`` (``name`` null for a player without one, deleted, or whose profile
        is private: their id is never shown beside their name; ``blocked_at`` ISO 8601,
        UTC)."""
        await self._ready()
        query = (select(player_blocks.c.blocked_id, player_blocks.c.created_at, players.c.name,
                        players.c.private)
                 .join(players, players.c.id == player_blocks.c.blocked_id)
                 .where(player_blocks.c.blocker_id == blocker)
                 .order_by(player_blocks.c.created_at.desc(), player_blocks.c.blocked_id))
        async with self.db.connect() as conn:
            rows = (await conn.execute(query)).all()
        out = []
        for blocked_id, at, name, private in rows:
            if at.tzinfo is None:
                at = at.replace(tzinfo=UTC)
            out.append({"player": blocked_id, "name": None if private else name,
                        "blocked_at": at.isoformat()})
        return out

    async def either_blocked(self, a: str, b: str) -> tuple[bool, bool]:
        """``(a blocked b, b blocked a)``."""
        await self._ready()
        query = select(player_blocks.c.blocker_id).where(or_(
            and_(player_blocks.c.blocker_id == a, player_blocks.c.blocked_id == b),
            and_(player_blocks.c.blocker_id == b, player_blocks.c.blocked_id == a)))
        async with self.db.connect() as conn:
            who = {r[0] for r in (await conn.execute(query)).all()}
        return a in who, b in who

    async def blocked_between(self, player_ids: Any, max_age: float = 0.0
                              ) -> set[frozenset[str]]:
        """The pairs among ``player_ids`` where either blocked the other.

        Args:
            player_ids: player ids (any iterable; duplicates and None are ignored).
            max_age: seconds an answer of this process for the same set may be reused
                (0: always asks the database; the quick-match matcher may pass
                ``cache_seconds``). A block or unblock made on this process clears the
                cache; one made on another process is seen after at most ``max_age``.

        Returns:
            A set of ``frozenset({a, b})`` pairs (empty with fewer than two players).
        """
        ids = frozenset(p for p in player_ids if p)
        if len(ids) < 2:
            return set()
        now = time.monotonic()
        if max_age > 0:
            hit = self._cache.get(ids)
            if hit is not None and now - hit[0] <= max_age:
                return set(hit[1])
        await self._ready()
        query = select(player_blocks.c.blocker_id, player_blocks.c.blocked_id).where(
            player_blocks.c.blocker_id.in_(sorted(ids)),
            player_blocks.c.blocked_id.in_(sorted(ids)))
        async with self.db.connect() as conn:
            pairs = {frozenset(r) for r in (await conn.execute(query)).all()}
        if max_age > 0:
            if len(self._cache) > 1000:
                self._cache.clear()
            self._cache[ids] = (now, pairs)
        return set(pairs)

    async def forget_player(self, player_id: str) -> None:
        """Remove every block made by or of the player (when it deletes itself)."""
        await self._ready()
        self._cache.clear()
        async with self.db.begin() as conn:
            await conn.execute(delete(player_blocks).where(or_(
                player_blocks.c.blocker_id == player_id,
                player_blocks.c.blocked_id == player_id)))
