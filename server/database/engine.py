"""The database connection: an async SQLAlchemy engine from a URL, and migrations.

:class:`Database` opens the engine lazily (the first use), so a process whose database is
down starts and plays anyway (the archive waits: ``server.archive``). :meth:`Database.migrate`
brings the schema to the newest Alembic revision shipped in ``server/database/migrations``,
safely when several processes start at once: on PostgreSQL under a session advisory lock
(:data:`MIGRATION_LOCK`), on SQLite under an exclusive lock of a file beside the database
(``<file>.lock``), so one process migrates and the others then find nothing left to do.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
from collections.abc import AsyncIterator, Coroutine
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import event, text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from .url import redacted

T = TypeVar("T")

log = logging.getLogger(__name__)
logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)  # a line per plugin

MIGRATION_LOCK = 0x63726962  # "crib"
"""The PostgreSQL advisory lock key migrations run under."""

CONNECT_TIMEOUT_SECONDS = 5.0
"""How long opening a connection may take (a database that does not answer must fail fast:
the archive retries later)."""

STATEMENT_TIMEOUT_SECONDS = 30.0
"""How long one statement may take on PostgreSQL (asyncpg's ``command_timeout``)."""


class Database:
    """One database, by URL (``server.database.url.database_url``).

    Args:
        url: an async SQLAlchemy URL (``postgresql+asyncpg://`` or ``sqlite+aiosqlite://``).
        pool_size: connections kept open (PostgreSQL).
    """

    def __init__(self, url: str, *, pool_size: int = 5) -> None:
        self.url = url
        self.pool_size = pool_size
        self._engine: AsyncEngine | None = None
        self.migrated = False
        """Whether :meth:`migrate` has succeeded in this process."""
        self._revision: str | None = None

    @property
    def dialect(self) -> str:
        """``postgresql`` or ``sqlite`` (from the URL)."""
        return make_url(self.url).get_backend_name()

    @property
    def sqlite_path(self) -> Path | None:
        """The SQLite file, or None (PostgreSQL, or an in-memory SQLite)."""
        if self.dialect != "sqlite":
            return None
        name = make_url(self.url).database
        return Path(name) if name and name != ":memory:" else None

    @property
    def engine(self) -> AsyncEngine:
        """The async engine (made on first use; for SQLite the folder is created)."""
        if self._engine is None:
            self._engine = self._make_engine()
        return self._engine

    def _make_engine(self) -> AsyncEngine:
        # No pre-ping (a round trip per checkout): a connection that died with the
        # database fails its statement, and every caller tries again anyway.
        kwargs: dict[str, Any] = {"pool_pre_ping": False}
        if self.dialect == "postgresql":
            kwargs.update(
                pool_size=self.pool_size, max_overflow=self.pool_size, pool_timeout=5,
                connect_args={"timeout": CONNECT_TIMEOUT_SECONDS,
                              "command_timeout": STATEMENT_TIMEOUT_SECONDS},
            )
        elif self.dialect == "sqlite":
            path = self.sqlite_path
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"timeout": 30}
        engine = create_async_engine(self.url, **kwargs)
        if self.dialect == "sqlite":
            event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        return engine

    @contextlib.asynccontextmanager
    async def begin(self) -> AsyncIterator[AsyncConnection]:
        """A connection in a transaction (committed at the end, rolled back on error)."""
        async with self.engine.begin() as conn:
            yield conn

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[AsyncConnection]:
        """A connection (autobegin; for reads)."""
        async with self.engine.connect() as conn:
            yield conn

    async def ping(self) -> bool:
        """Whether the database answers ``SELECT 1`` within the connect timeout (never
        raises)."""
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_SECONDS):
                async with self.engine.connect() as conn:
                    await conn.execute(text("SELECT 1"))
            return True
        except Exception:
            return False

    async def migrate(self) -> str | None:
        """Upgrade the schema to the newest revision (see the module docstring).

        Returns:
            The revision the database is at afterwards.

        Raises:
            sqlalchemy.exc.SQLAlchemyError, OSError: the database failed. Nothing is half
            done: the migration runs in one transaction, on SQLite too
            (:func:`_upgrade_sqlite`), so a process killed while it migrates leaves the
            database as it found it, and the next start migrates it.
        """
        # Alembic's first import and the reading of the migrations (some 0.2 s of CPU)
        # happen in a thread, not on the event loop that serves the tables.
        await asyncio.to_thread(head_revision)
        async with _file_lock(self.sqlite_path):
            async with self.engine.connect() as conn:
                if self.dialect == "postgresql":
                    await conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
                    await conn.commit()
                try:
                    if self.migrated:
                        # Another caller of this process migrated while this one waited
                        # for the lock (the archive's worker and the first player made
                        # at a first start): nothing to do, nothing more to say.
                        return self._revision
                    upgrade = _upgrade_sqlite if self.dialect == "sqlite" else _upgrade

                    async def upgrade_and_commit() -> str | None:
                        done = await conn.run_sync(upgrade)
                        await conn.commit()
                        return done

                    revision = await _to_its_end(upgrade_and_commit())
                    # (before the lock is let go: a caller waiting for it sees it done)
                    self._revision = revision
                    self.migrated = True
                finally:
                    if self.dialect == "postgresql":
                        await conn.execute(text("SELECT pg_advisory_unlock(:k)"),
                                           {"k": MIGRATION_LOCK})
                        await conn.commit()
        log.info("database %s at revision %s", redacted(self.url), revision)
        return revision

    async def revision(self) -> str | None:
        """The revision the database is at (None: not migrated at all)."""
        async with self.engine.connect() as conn:
            return await conn.run_sync(_current)

    async def close(self) -> None:
        """Close the pool's connections."""
        if self._engine is not None:
            await self._engine.dispose()
            self._engine = None


def alembic_config(connection: Connection | None = None) -> Any:
    """Alembic's configuration for the migrations shipped in this package."""
    from alembic.config import Config

    config = Config()
    config.set_main_option(
        "script_location",
        str(resources.files("server.database").joinpath("migrations")),
    )
    config.attributes["connection"] = connection
    return config


def head_revision() -> str | None:
    """The newest revision shipped."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def _upgrade(connection: Connection) -> str | None:
    from alembic import command

    command.upgrade(alembic_config(connection), "head")
    return _current(connection)


def _upgrade_sqlite(connection: Connection) -> str | None:
    """:func:`_upgrade` in one SQLite transaction. Python's sqlite3 opens a transaction
    only before a write of rows, so each ``CREATE TABLE`` of a migration would otherwise be
    committed on its own: a process killed between two of them left tables without their
    revision, and every later start failed on "table … already exists". Here the driver's
    own transactions are off for the migration and it runs between ``BEGIN IMMEDIATE``
    (the write lock at once) and ``COMMIT``."""
    dbapi = connection.connection.dbapi_connection
    assert dbapi is not None
    saved = dbapi.isolation_level
    dbapi.isolation_level = None
    try:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
        try:
            revision = _upgrade(connection)
        except BaseException:
            # The error that stopped the migration is the one raised: a rollback on a broken
            # connection fails too, and SQLite rolls back an unfinished transaction anyway.
            with contextlib.suppress(Exception):
                connection.exec_driver_sql("ROLLBACK")
            raise
        connection.exec_driver_sql("COMMIT")
        return revision
    finally:
        dbapi.isolation_level = saved


def stop_if_cancelling(exc: BaseException) -> None:
    """Raise :class:`asyncio.CancelledError` (from ``exc``) when the current task is being
    cancelled: a cancel that lands inside a database call can come out as another error
    (a failed rollback, or an advisory unlock, on the broken connection), and a loop that
    carries on after errors must stop all the same. Does nothing otherwise."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from exc


async def _to_its_end(work: Coroutine[Any, Any, T]) -> T:
    """Await ``work`` to its end even if the caller is cancelled meanwhile, then pass the
    cancellation on (:class:`asyncio.CancelledError`; ``work``'s own error, if any, is then
    dropped). A migration once begun is finished or failed as a whole: a cancel inside the
    driver's calls broke the connection half-way, and what the caller heard was the failed
    rollback, not the cancellation — so a loop that keeps going on errors did not stop."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        if not task.cancelled():
            task.exception()  # retrieved: the cancellation is what the caller hears
        raise asyncio.CancelledError
    return task.result()


def _current(connection: Connection) -> str | None:
    from alembic.runtime.migration import MigrationContext

    return MigrationContext.configure(connection).get_current_revision()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """Foreign keys on; write-ahead log (readers never wait for the writer); fsync at
    checkpoints (a crash may lose the last commits of the embedded default, never corrupt
    it)."""
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


@contextlib.asynccontextmanager
async def _file_lock(path: Path | None) -> AsyncIterator[None]:
    """An exclusive lock of ``<path>.lock`` (several processes, or several databases of one
    process, on one SQLite file), waited for without blocking the event loop; or nothing."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{path}.lock", "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
