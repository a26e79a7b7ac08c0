"""Fixtures of the archive tests: a database of each kind, both real.

* SQLite: a file in the test's temporary folder.
* PostgreSQL: the machine's server on 127.0.0.1:5432 (user postgres, trust; override with
  ``CRIBBAGE_TEST_POSTGRES_URL``): this run makes a database of its own
  (``cribbage_test_<random>``), migrates it once, empties its tables before each test, and
  drops it at the end, so runs never see each other's rows.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import secrets
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import text

from server.database import Database

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))  # crib_wire

POSTGRES = os.environ.get("CRIBBAGE_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432")
"""The PostgreSQL server the tests make their databases on (no database name)."""


async def create_pg_database(name: str) -> None:
    """Create database ``name`` on :data:`POSTGRES`."""
    conn = await asyncpg.connect(f"{POSTGRES}/postgres")
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


async def drop_pg_database(name: str) -> None:
    """Drop database ``name`` (closing its connections)."""
    conn = await asyncpg.connect(f"{POSTGRES}/postgres")
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def run(coro) -> object:  # noqa: ANN001
    """Run a coroutine to its end on a loop of its own (also from inside a running loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """The URL of this run's own PostgreSQL database (migrated once)."""
    name = f"cribbage_test_{secrets.token_hex(4)}"
    run(create_pg_database(name))
    url = f"postgresql+asyncpg://{POSTGRES.split('://', 1)[1]}/{name}"

    async def migrate() -> None:
        db = Database(url)
        await db.migrate()
        await db.close()

    run(migrate())
    yield url
    run(drop_pg_database(name))


@pytest.fixture(params=["sqlite", "postgresql"])
async def database(request: pytest.FixtureRequest, tmp_path) -> AsyncIterator[Database]:
    """A migrated, empty database of each kind."""
    if request.param == "sqlite":
        db = Database(f"sqlite+aiosqlite:///{tmp_path / 'archive.sqlite3'}")
        await db.migrate()
    else:
        db = Database(request.getfixturevalue("pg_url"))
        async with db.begin() as conn:
            await conn.execute(text(
                "TRUNCATE rating_board_counts, rating_history, ratings, matches, game_logs, "
                "game_deals, game_seats, games, players CASCADE"))
        db.migrated = True
    yield db
    await db.close()
