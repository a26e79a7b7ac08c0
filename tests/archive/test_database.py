"""The database layer: migrations from an empty database on SQLite and PostgreSQL give
exactly the schema of ``server/database/schema.py``; several processes starting at once
migrate one at a time; the ``cribbage-server db`` command; the default SQLite place."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from conftest import POSTGRES, create_pg_database, drop_pg_database
from sqlalchemy import func, insert, select

from server.database import Database, database_url, head_revision
from server.database.engine import alembic_config
from server.database.schema import game_gradings, game_seat_grades, games, metadata

ROOT = Path(__file__).resolve().parents[2]


def _differences(connection) -> list:  # noqa: ANN001
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return compare_metadata(context, metadata)


@pytest.fixture(params=["sqlite", "postgresql"])
async def empty_url(request, tmp_path):
    """The URL of a database nobody has touched."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'fresh' / 'archive.sqlite3'}"
        return
    name = f"cribbage_test_fresh_{secrets.token_hex(4)}"
    await create_pg_database(name)
    yield f"postgresql+asyncpg://{POSTGRES.split('://', 1)[1]}/{name}"
    await drop_pg_database(name)


async def test_migrations_from_an_empty_database_make_the_schema(empty_url, caplog) -> None:
    dbs = [Database(empty_url) for _ in range(3)]  # three processes starting at once
    try:
        assert await dbs[0].revision() is None
        caplog.set_level("INFO", logger="server.database.engine")
        # three processes, the first of them with two callers at once (a first start: the
        # archive's worker and the first player made)
        revisions = await asyncio.gather(dbs[0].migrate(), *(db.migrate() for db in dbs))
        assert revisions == [head_revision()] * 4 and head_revision() == "0011"
        said = [r.getMessage() for r in caplog.records if "at revision" in r.getMessage()]
        assert len(said) == 3, said  # once a process
        async with dbs[0].connect() as conn:
            assert await conn.run_sync(_differences) == []
        assert await dbs[1].migrate() == head_revision()  # nothing left to do
        assert await dbs[2].ping()
    finally:
        for db in dbs:
            await db.close()



def _archived_game(game_id: str, number: int) -> dict:
    when = datetime(2026, 12, 7, tzinfo=UTC)
    return {"id": game_id, "room_id": "room", "room_created": 1.0, "game_number": number,
            "status": "finished", "players": 2, "table_kind": "2", "target": 61,
            "muggins": False, "lowball": False, "backup10": False, "options": {},
            "room_settings": {}, "started_at": when, "ended_at": when, "archived_at": when,
            "first_version": 1, "last_version": 2, "deals": 1, "winner_side": 0,
            "draw": False, "scores": [61, 40], "result": None, "shuffle": "cribbage/v2",
            "game_seed": "00", "game_commitment": "00", "cut_seeds": []}


async def test_revision_0011_removes_the_gradings_of_rematches_only(empty_url) -> None:
    """A database graded before revision 0011 keeps its games' gradings numbered 1 and
    loses those of rematches (graded as game 1 until then), to be graded again."""
    from alembic import command

    db = Database(empty_url)
    try:
        async with db.connect() as conn:
            await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0010"))
            for game_id, number in (("first", 1), ("rematch", 2), ("third", 3)):
                await conn.execute(insert(games), _archived_game(game_id, number))
                await conn.execute(insert(game_gradings), {
                    "game_id": game_id, "grader": "expert", "moves": "[]",
                    "graded_at": datetime(2026, 12, 7, tzinfo=UTC)})
                await conn.execute(insert(game_seat_grades), [
                    {"game_id": game_id, "seat": seat, "decisions": 0, "exact": 0,
                     "cost": 0.0, "accuracy": None, "computer_moves": 0}
                    for seat in (0, 1)])
            await conn.commit()
        assert await db.migrate() == "0011"
        async with db.connect() as conn:
            graded = (await conn.execute(select(game_gradings.c.game_id))).scalars().all()
            seats = (await conn.execute(select(game_seat_grades.c.game_id))).scalars().all()
            kept = (await conn.execute(select(func.count()).select_from(games))).scalar()
        assert graded == ["first"] and seats == ["first", "first"] and kept == 3
    finally:
        await db.close()


KILLED_MIGRATION = """
import asyncio, sys, time
from alembic.operations import Operations
from server.database import Database

create = Operations.create_table
def paused(self, name, *columns, **kw):
    table = create(self, name, *columns, **kw)
    if name == "matches":  # migration 0006: five revisions and some of its tables in
        print("paused", flush=True)
        time.sleep(60)
    return table
Operations.create_table = paused
asyncio.run(Database(sys.argv[1]).migrate())
"""


async def test_a_process_killed_while_it_migrates_leaves_nothing_half_done(
        empty_url) -> None:
    """The first start of a server migrates its database; killed (-9) in the middle of it
    (here inside migration 0006), it leaves the database as it found it, and the next
    start migrates it to the newest revision. On SQLite each table of a migration used to
    be committed on its own: a kill left tables without their revision, and every later
    start failed on "table matches already exists"."""
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MIGRATION, empty_url], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    try:
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 60)
        assert line.strip() == "paused", line
    finally:
        proc.kill()
        proc.wait(timeout=30)
        proc.stdout.close()
    db = Database(empty_url)
    try:
        assert await db.revision() is None  # nothing of the killed migration was kept
        assert await db.migrate() == head_revision()
        async with db.connect() as conn:
            assert await conn.run_sync(_differences) == []
    finally:
        await db.close()


async def test_a_migration_cancelled_half_way_ends_whole_and_says_cancelled(
        empty_url, monkeypatch) -> None:
    """A process stopped while it migrates (its loops are cancelled at shutdown) finishes
    the migration it began, then hears the cancellation as such. It used to hear another
    error: the cancel broke the connection inside the migration, the rollback then failed
    on it, and a loop that keeps going on errors (the sanctions' refresh) kept going, so a
    server stopped in its first second never stopped."""
    import server.database.engine as engine

    upgrade = engine._upgrade
    db = Database(empty_url)
    task: asyncio.Task | None = None

    def cancelled_at_once(connection):  # noqa: ANN001, ANN202
        assert task is not None
        asyncio.get_running_loop().call_soon(task.cancel)  # lands inside the migration
        return upgrade(connection)

    monkeypatch.setattr(engine, "_upgrade", cancelled_at_once)
    try:
        task = asyncio.ensure_future(db.migrate())
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(asyncio.shield(task), 30)
        assert task.cancelled()
        monkeypatch.setattr(engine, "_upgrade", upgrade)
        assert await db.revision() == head_revision()  # whole: begun, so finished
        assert await db.migrate() == head_revision()
        async with db.connect() as conn:
            assert await conn.run_sync(_differences) == []
    finally:
        await db.close()


async def test_a_database_that_does_not_answer_fails_fast() -> None:
    db = Database("postgresql+asyncpg://postgres@127.0.0.1:1/none")
    try:
        assert not await db.ping()
        with pytest.raises(OSError):
            await db.migrate()
    finally:
        await db.close()


def test_the_db_command(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'ops.sqlite3'}"
    run = [sys.executable, "-m", "server", "db"]
    before = subprocess.run([*run, "current", "--database-url", url], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert before.returncode == 1 and "at revision none" in before.stdout
    upgrade = subprocess.run([*run, "upgrade", "--database-url", url], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
    assert upgrade.returncode == 0, upgrade.stderr
    after = subprocess.run([*run, "current", "--database-url", url], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    head = head_revision()
    assert after.returncode == 0 and f"at revision {head} (newest {head})" in after.stdout


def test_the_embedded_database_s_place(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert database_url(None) == (
        f"sqlite+aiosqlite:///{tmp_path / 'xdg' / 'cribbage-server' / 'cribbage.sqlite3'}")
    assert database_url(None, str(tmp_path)) == (
        f"sqlite+aiosqlite:///{tmp_path / 'cribbage.sqlite3'}")
    assert database_url("postgresql://u@h:5432/d") == "postgresql+asyncpg://u@h:5432/d"
    assert database_url("sqlite:///x.db") == "sqlite+aiosqlite:///x.db"
