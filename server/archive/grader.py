"""Grading archived games once, off the table's path, and keeping it (issue 22 point 4).

:func:`server.archive.grading.grade_game` is pure CPU (a game of 121 takes some tens of
milliseconds with the ``standard`` ranking, more with a stronger one): it runs in a process
pool of one worker (created at first use, a ``spawn`` process, shut down at
:meth:`Grader.stop`), never on the event loop, and its result is written to
``game_gradings`` and ``game_seat_grades`` in one insert-or-nothing transaction, so grading
a game twice changes nothing.

When a game is graded:

* right after the archiver wrote it (:meth:`Grader.schedule`: one task of this process
  grades the waiting games, owners in turn; the archive's claim does not wait for it);
* on the first read of a game whose grading is missing (:meth:`Grader.grading`, used by
  ``GET /api/games/{id}``): a process that died before grading loses nothing for good;
* by :meth:`Grader.sweep`: once after start-up, the newest games archived without a
  grading, at most :data:`SWEEP_BATCH`; then every ``grading_sweep_interval_seconds``
  (give or take a quarter, so that replicas started together drift apart), the newest
  without one that ended between :data:`SWEEP_LOOKBACK` and :data:`SWEEP_GRACE` seconds ago,
  those with a player first:
  a game whose archiving process died before grading it, or one past
  :data:`MAX_SCHEDULED`, is graded by whichever process sweeps next.

A game that cannot be graded (its log does not replay from its seeds: e.g. a stacked pack
in tests) is written with its ``error`` and no seat rows, and is not tried again. A
worker that dies (killed, out of memory) is replaced and the game graded again at once,
:data:`BROKEN_POOL_RETRIES` times; a database failure, or a worker dying again, writes
nothing: the next read or sweep tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, case, exists, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from protocol import jsontext

from ..database import Database
from ..database.schema import game_gradings, game_seat_grades, game_seats, games
from ..workers import GRADING_NICENESS, process_pool
from . import grading
from .grading import grade_archived
from .reader import ArchivedGame, ArchiveReader

log = logging.getLogger(__name__)

SWEEP_BATCH = 50
"""Games :meth:`Grader.sweep` grades at most, newest first."""

MAX_SCHEDULED = 200
"""Games :meth:`Grader.schedule` keeps waiting at most (ids only, in one queue per owner);
past it the owner with the most waiting gives up its newest (which may be the new one), and
that game is graded on its first read or by a later sweep instead."""

SWEEP_GRACE = 120.0
"""Seconds after a game ended before a periodic sweep grades it (the process that archived
it normally has by then; a sweep that came first would only grade it twice)."""

SWEEP_LOOKBACK = 6 * 3600.0
"""Seconds back a periodic sweep looks (one range of the ``ended_at`` index, however large
the archive; older games without a grading wait for a read or a start's sweep)."""

BROKEN_POOL_RETRIES = 1
"""How many times a grading whose worker process died is run again at once, in a new
process."""


def body(row: dict[str, Any], seats: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``GameGrading`` (``protocol.http``) of a stored grading."""
    return {
        "grader": row["grader"],
        "error": row["error"],
        "seats": sorted(({k: s[k] for k in ("seat", "decisions", "exact", "cost",
                                            "accuracy", "computer_moves")}
                         | {"cost_per_decision": round(s["cost"] / s["decisions"], 3)
                            if s["decisions"] else None}
                         for s in seats), key=lambda s: s["seat"]),
        "moves": jsontext.loads(row["moves"]) if row["moves"] else [],
    }


class Grader:
    """Grades archived games in a one-worker process pool and keeps the result.

    Args:
        db: the database.
        workers: the pool's processes (1).
    """

    def __init__(self, db: Database, workers: int = 1) -> None:
        self.db = db
        self.reader = ArchiveReader(db)
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._running: dict[str, asyncio.Future[dict[str, Any] | None]] = {}
        self._queues: dict[str, deque[str]] = {}
        """Games waiting to be graded, per owner (:meth:`schedule`); the dict's order is the
        turn order (an owner served goes to the end)."""
        self._waiting = 0
        self._consumer: asyncio.Task[Any] | None = None
        self.graded = 0
        """Games this process graded and wrote (a grading another process wrote first is
        not counted: the write is insert-or-nothing)."""
        self.failures = 0
        """Gradings that failed (the pool or the database); tried again later."""
        self.deferred = 0
        """Newly archived games not scheduled because :data:`MAX_SCHEDULED` waited."""
        self.sweeps = 0
        """Sweeps this process has finished (or failed) since :meth:`start_sweep`."""

    def _executor(self) -> ProcessPoolExecutor:
        """The pool, made at first use. Its worker is a fresh interpreter (``spawn``: never
        a fork of this threaded process) that imports the engine and the grading module;
        like every ``spawn`` child it imports the program's main module again, so a script
        that embeds the app needs the usual ``if __name__ == "__main__":`` guard (the
        server's own entry points have it; ``python -m ...`` is not re-run at all)."""
        if self._pool is None:
            self._pool = process_pool(self.workers, GRADING_NICENESS)
        return self._pool

    async def stop(self) -> None:
        """Cancel the pending gradings and shut the pool down."""
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run ``coro`` in a task of the grader's own (:meth:`stop` cancels it)."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def schedule(self, game_id: str, owner: str | None = None) -> None:
        """Grade game ``game_id`` soon, in this process's one grading task (after the
        archive), taking turns between owners: the next game graded is the oldest of the
        owner served longest ago, so that one address archiving games by the hundred (both
        seats its own, at full speed) delays another player's game by at most one grading
        per owner waiting, not by its whole backlog.

        Args:
            game_id: the archived game.
            owner: whose game it is (:func:`owner_of`; None: :data:`ANONYMOUS`).

        With :data:`MAX_SCHEDULED` games waiting, the owner with the most waiting gives up
        its newest (the new game, when its owner would then have the most): counted in
        :attr:`deferred`, graded on its first read or by a later sweep (which takes games
        with a player first).
        """
        owner = owner or ANONYMOUS
        if self._waiting >= MAX_SCHEDULED:
            self.deferred += 1
            longest = max(self._queues, key=lambda o: len(self._queues[o]))
            if len(self._queues.get(owner, ())) + 1 > len(self._queues[longest]):
                return
            self._queues[longest].pop()
            if not self._queues[longest]:
                del self._queues[longest]
            self._waiting -= 1
        self._queues.setdefault(owner, deque()).append(game_id)
        self._waiting += 1
        if self._consumer is None or self._consumer.done():
            self._consumer = self._spawn(self._consume())

    async def _consume(self) -> None:
        """Grade the waiting games one at a time (the pool has one worker), owners in turn."""
        while self._queues:
            owner = next(iter(self._queues))
            queue = self._queues.pop(owner)
            game_id = queue.popleft()
            self._waiting -= 1
            if queue:
                self._queues[owner] = queue  # to the end of the turn order
            await self._quietly(game_id)

    @property
    def waiting(self) -> int:
        """Games :meth:`schedule` keeps waiting now."""
        return self._waiting

    async def _quietly(self, game_id: str) -> None:
        try:
            await self.ensure(game_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 (a read or a sweep tries again)
            log.debug("grading of game %s failed: %s", game_id, exc)

    async def stored(self, game_id: str) -> dict[str, Any] | None:
        """The stored grading of a game (``GameGrading``), or None when it has none.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
        """
        async with self.db.connect() as conn:
            row = (await conn.execute(select(game_gradings).where(
                game_gradings.c.game_id == game_id))).mappings().first()
            if row is None:
                return None
            seats = [dict(s) for s in (await conn.execute(select(game_seat_grades).where(
                game_seat_grades.c.game_id == game_id))).mappings()]
        return body(dict(row), seats)

    async def ensure(self, game_id: str) -> dict[str, Any] | None:
        """The game's grading, graded and stored now if it had none; None for no such game.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
            concurrent.futures.process.BrokenProcessPool: the worker died.
        """
        found = await self.stored(game_id)
        if found is not None:
            return found
        archived = await self.reader.game(game_id)
        if archived is None:
            return None
        return await self.grading(archived, known_missing=True)

    async def grading(self, archived: ArchivedGame, *, known_missing: bool = False,
                      wait: float | None = None) -> dict[str, Any] | None:
        """The grading of an archived game read with its log: the stored one, or graded in
        the pool and stored now (one grading per game at a time in this process, in a task
        of the grader's own: a reader that goes away does not stop it).

        Args:
            archived: the game, read with its log.
            known_missing: the caller found no stored grading just now.
            wait: at most this many seconds for a grading still to be made (None: until it
                is); past it, None (the grading goes on and is stored).

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
            concurrent.futures.process.BrokenProcessPool: the worker died.
        """
        game_id = archived.game["id"]
        if not known_missing:
            found = await self.stored(game_id)
            if found is not None:
                return found
        running = self._running.get(game_id)
        if running is None:
            running = asyncio.create_task(self._grade(archived))
            self._running[game_id] = running
            self._tasks.add(running)
            running.add_done_callback(lambda t, g=game_id: self._done(g, t))
        try:
            return await asyncio.wait_for(asyncio.shield(running), wait)
        except TimeoutError:
            return None

    def _done(self, game_id: str, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if self._running.get(game_id) is task:
            del self._running[game_id]
        if not task.cancelled() and task.exception() is not None:
            self.failures += 1
            log.warning("grading of game %s failed: %s", game_id, task.exception())

    async def _grade(self, archived: ArchivedGame) -> dict[str, Any] | None:
        game = archived.game
        kinds = [s["kind"] for s in archived.seats]
        seeds = [d["seed"] for d in archived.deals]
        loop = asyncio.get_running_loop()
        for attempt in range(1 + BROKEN_POOL_RETRIES):
            try:
                result = await loop.run_in_executor(
                    self._executor(), grade_archived, game["options"], archived.log or [],
                    seeds, kinds, game.get("game_number"))
                break
            except BrokenProcessPool:
                # The worker died (killed, out of memory): a new one grades it again (the
                # grading is pure and written insert-or-nothing), once; past that the next
                # read or sweep tries.
                if self._pool is not None:
                    self._pool.shutdown(wait=False, cancel_futures=True)
                    self._pool = None
                if attempt == BROKEN_POOL_RETRIES:
                    raise
                log.warning("grading of game %s: the grading process died; grading it "
                            "again in a new one", game["id"])
        if await self._write(game["id"], result):
            self.graded += 1
        return await self.stored(game["id"])

    async def _write(self, game_id: str, result: dict[str, Any]) -> bool:
        """Store a grading (insert-or-nothing on the game); whether this call wrote it
        (False: another process, or this one, had already)."""
        if not self.db.migrated:
            await self.db.migrate()
        insert = pg_insert if self.db.dialect == "postgresql" else sqlite_insert
        async with self.db.begin() as conn:
            written = await conn.execute(insert(game_gradings).on_conflict_do_nothing(), {
                "game_id": game_id, "grader": result["grader"],
                "graded_at": datetime.now(UTC),
                "moves": jsontext.dumps(result.get("moves") or []),
                "error": result.get("error")})
            if written.rowcount != 1:
                return False
            if result.get("seats"):
                await conn.execute(game_seat_grades.insert(), [
                    {"game_id": game_id, **{k: s[k] for k in (
                        "seat", "decisions", "exact", "cost", "accuracy", "computer_moves")}}
                    for s in result["seats"]])
        return True

    async def sweep(self, limit: int = SWEEP_BATCH, *, ended: tuple[float, float] | None
                    = None) -> int:
        """Grade the newest archived games that have no grading, at most ``limit``.

        Args:
            limit: games at most.
            ended: only games that ended between ``ended[0]`` and ``ended[1]`` seconds ago,
                those with a player at a human seat first (None: any, the newest first).

        Returns:
            Games found without a grading (each tried in turn: one that fails, its worker
            dying twice or the database, is logged and the next is tried).

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed to list them.
        """
        query = (select(games.c.id).outerjoin(
            game_gradings, game_gradings.c.game_id == games.c.id)
            .where(game_gradings.c.game_id.is_(None)))
        if ended is None:
            query = query.order_by(games.c.ended_at.desc())
        else:
            # Games with a player first (a profile's average waits for them; a flood of
            # games without one must not keep them out), then the newest.
            now = datetime.now(UTC)
            with_player = exists().where(game_seats.c.game_id == games.c.id,
                                         game_seats.c.player_id.is_not(None),
                                         game_seats.c.kind == "human")
            query = query.where(
                games.c.ended_at >= now - timedelta(seconds=ended[0]),
                games.c.ended_at <= now - timedelta(seconds=ended[1])).order_by(
                case((with_player, 0), else_=1), games.c.ended_at.desc())
        query = query.limit(limit)
        async with self.db.connect() as conn:
            ids = list((await conn.execute(query)).scalars())
        for game_id in ids:
            try:
                await self.ensure(game_id)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 (one game's failure stops no other)
                log.warning("grading of game %s failed in a sweep: %s", game_id, exc)
        return len(ids)

    def start_sweep(self, interval: float = 0.0) -> None:
        """Run :meth:`sweep` in a task of this process once the database is migrated: once
        over the whole archive, then every ``interval`` seconds (times a random 0.75 to
        1.25) over the games that ended :data:`SWEEP_LOOKBACK` to :data:`SWEEP_GRACE`
        seconds ago; ``interval`` 0: only the first. A sweep that fails (the database) is
        logged and the next one tries again; :meth:`stop` ends it."""

        async def run() -> None:
            for _ in range(600):
                if self.db.migrated:
                    break
                await asyncio.sleep(1.0)
            else:
                return
            ended = None
            while True:
                try:
                    await self.sweep(ended=ended)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 (reads grade what is missing)
                    log.warning("grading sweep failed: %s", exc)
                self.sweeps += 1
                if interval <= 0:
                    return
                ended = (SWEEP_LOOKBACK, SWEEP_GRACE)
                await asyncio.sleep(interval * random.uniform(0.75, 1.25))

        self._spawn(run())


ANONYMOUS = "anonymous"
"""The one owner of every game without a player at a human seat (:func:`owner_of`)."""


def owner_of(seats: list[dict[str, Any]]) -> str:
    """Whose game an archived game is, for :meth:`Grader.schedule`'s turns: the players at
    its human seats (``game_seats`` rows' ``player_id``), or :data:`ANONYMOUS` for every game
    with none. A grading counts most in a player's profile average; a game without a player
    is graded on its replay's first read anyway, and rooms cost nothing to make, so games
    without a player share one queue: a flood of them, one room each, is one owner."""
    players = sorted({s["player_id"] for s in seats
                      if s.get("player_id") and s.get("kind") == "human"})
    return "players:" + ",".join(players) if players else ANONYMOUS


async def player_accuracy(db: Database, player_id: str) -> dict[str, Any]:
    """A player's average accuracy over the finished games they played themself and that
    were graded (``PlayerAccuracy``): seats of kind ``human`` whose player made at least one
    graded decision (a computer that stood in for the whole game leaves none).

    Raises:
        sqlalchemy.exc.SQLAlchemyError, OSError: the database failed.
    """
    g, s = game_seat_grades.c, game_seats.c
    query = (select(func.count(), func.avg(g.accuracy), func.sum(g.decisions),
                    func.sum(g.cost))
             .select_from(game_seat_grades.join(game_seats, and_(
                 s.game_id == g.game_id, s.seat == g.seat)))
             .where(s.player_id == player_id, s.kind == "human", s.status == "finished",
                    g.accuracy.is_not(None)))
    async with db.connect() as conn:
        count, average, decisions, cost = (await conn.execute(query)).one()
    count, decisions = int(count or 0), int(decisions or 0)
    return {
        "games": count,
        "average": round(float(average), 1) if count else None,
        "decisions": decisions,
        "cost_per_decision": round(float(cost) / decisions, 3) if decisions else None,
        "grader": grading.GRADER_LEVEL,
    }
