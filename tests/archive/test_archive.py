"""Every ended game is archived exactly once, on SQLite and on PostgreSQL, from the
in-memory store and from Redis (issue 18 point 3).

Whole games are played by computer seats through the real room service, sweeper and
archiver (no HTTP); then the database holds each game once, with its seats, deals, seeds
and log, and the log replays through the engine to the archived final scores.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import secrets
import time
from typing import Any

import pytest
from redis.asyncio import Redis
from sqlalchemy import func, select

from engine import rng
from server.archive.outbox import game_id
from server.archive.reader import ArchiveReader
from server.archive.replay import replay_body
from server.archive.rows import game_rows
from server.archive.verify import replay
from server.archive.worker import Archiver
from server.archive.writer import write_game
from server.broker import MemoryBroker
from server.computer_seats import ComputerSeats
from server.database import Database
from server.database.schema import game_deals, game_seats, games
from server.deadline_plan import ARCHIVE
from server.rooms import COMPUTER, RoomError, RoomService
from server.settings import Settings
from server.store.memory import MemoryStore
from server.store.redis import RedisStore
from server.timers import Sweeper

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
SETTINGS = dict(bot_delay_seconds=0.0, sweep_interval_seconds=0.01,
                deadline_lease_seconds=1.0, archive_retry_max_seconds=0.2)


class Table:
    """A room service, sweeper, computer seats and archiver on one store and database."""

    def __init__(self, store: Any, db: Database, clock: Any = time.time, **settings: Any):
        self.settings = Settings(**{**SETTINGS, **settings})
        self.store = store
        self.service = RoomService(store, self.settings, clock=clock)
        self.sweeper = Sweeper(store, self.service, self.settings)
        self.computers = ComputerSeats(self.service, self.sweeper)
        self.archiver = Archiver(self.service, self.sweeper, db, self.settings)
        self.db = db

    async def until(self, done: Any, seconds: float = 60.0) -> None:
        """Sweep until ``done()`` (an async predicate) holds."""
        stop = time.monotonic() + seconds
        while not await done():
            assert time.monotonic() < stop, "not done in time"
            await self.sweeper.sweep_once()
            await asyncio.sleep(0.005)

    async def count(self, table: Any = games) -> int:
        async with self.db.connect() as conn:
            return (await conn.execute(select(func.count()).select_from(table))).scalar()

    async def stop(self) -> None:
        await self.sweeper.stop()
        await self.archiver.stop()


async def _redis_store() -> RedisStore:
    return RedisStore(Redis.from_url(REDIS_URL, decode_responses=True),
                      f"test:{secrets.token_hex(6)}:")


async def _drop(store: Any) -> None:
    if isinstance(store, RedisStore):
        keys = [k async for k in store.redis.scan_iter(match=f"{store.prefix}*", count=1000)]
        if keys:
            await store.redis.delete(*keys)
    await store.close()


@pytest.fixture(params=["memory", "redis"])
async def store(request):
    s = MemoryStore(MemoryBroker()) if request.param == "memory" else await _redis_store()
    yield s
    await _drop(s)


def check_archived(found: Any) -> None:
    """The archived game's seeds match its commitments, and its log replays through the
    engine to its final scores."""
    game = found.game
    seed = bytes.fromhex(game["game_seed"])
    assert hashlib.sha256(seed).hexdigest() == game["game_commitment"]
    for deal in found.deals:
        assert deal["seed"] == rng.deal_seed_of(seed, deal["deal_number"]).hex()
        assert hashlib.sha256(bytes.fromhex(deal["seed"])).hexdigest() == deal["commitment"]
    state, events = replay(game["options"], found.log, [d["seed"] for d in found.deals])
    assert list(state.scores) == game["scores"]
    logged = [e for entry in found.log for e in entry["events"]
              if e["type"] in ("deal", "play", "peg", "show_hand", "game_over")]
    replayed = [e for e in events if e["type"] in ("deal", "play", "peg", "show_hand",
                                                   "game_over")]
    assert replayed == logged
    if game["status"] == "finished":
        assert state.phase == "game_over" and game["result"]["scores"] == game["scores"]


async def test_finished_games_and_a_rematch_are_archived_once(store, database) -> None:
    table = Table(store, database)
    record, _ = await table.service.create_room(
        {"players": 2, "target": 61, "muggins": True, "backup10": True},
        computers={0: "standard", 1: "easy"})
    room = record.id

    async def archived(n: int) -> Any:
        async def done() -> bool:
            return await table.count() >= n and not await table.store.outbox(room, n)
        return done

    try:
        await table.until(await archived(1))
        assert table.archiver.written == 1
        # A rematch in the same room is a game of its own.
        await table.service.act(room, 0, COMPUTER, "again", {"type": "rematch"})
        await table.until(await archived(2))
        await table.until(lambda: _no_archive_deadline(store, room))
    finally:
        await table.stop()
    assert await table.count() == 2
    assert await table.count(game_seats) == 4
    reader = ArchiveReader(database)
    for number in (1, 2):
        found = await reader.game(game_id(room, record.created, number))
        assert found is not None and found.game["game_number"] == number
        assert found.game["status"] == "finished" and found.game["table_kind"] == "2"
        assert found.game["muggins"] and found.game["backup10"]
        assert [s["kind"] for s in found.seats] == ["computer", "computer"]
        assert [s["level"] for s in found.seats] == ["standard", "easy"]
        assert sum(s["won"] for s in found.seats) == 1
        assert found.log[0]["v"] == found.game["first_version"]
        assert found.log[-1]["v"] == found.game["last_version"]
        check_archived(found)
        body = replay_body(found)
        assert body["format"] == "cribbage-replay" and body["game"] == number
        assert len(body["versions"]) == len(found.log)
        assert all("hands" not in e for v in body["versions"] for e in v["events"]
                   if e["type"] == "deal" and e.get("hands"))
    async with database.connect() as conn:
        deals = (await conn.execute(select(func.count()).select_from(game_deals))).scalar()
    assert deals >= 4


async def _no_archive_deadline(store: Any, room: str) -> bool:
    return not [d for d in await store.deadlines(room) if d.kind == ARCHIVE]


async def test_writing_a_game_twice_writes_it_once(database) -> None:
    """The process that died between the SQL commit and completing its claim: the next
    claimer's write finds the game and changes nothing."""
    store = MemoryStore(MemoryBroker())
    table = Table(store, database)
    record, _ = await table.service.create_room({"players": 3, "target": 61},
                                                computers={0: "easy", 1: "easy", 2: "easy"})
    claims: list[Any] = []

    async def hold_back(ref: Any) -> None:  # the archive claim is taken, then "dies"
        claims.append(ref.current)

    table.sweeper.register_own(ARCHIVE, hold_back)
    try:
        await table.until(lambda: _true_if(claims))
        deadline = claims[0].deadline
        entries = await store.outbox(record.id, 1)
        rows = game_rows(record.id, deadline.payload, entries, time.time())
        assert await write_game(database, rows) is True  # the SQL commit ... then -9
        assert await write_game(database, rows) is False
        table.sweeper.register_own(ARCHIVE, table.archiver.archive)
        await table.until(lambda: _no_archive_deadline(store, record.id))  # lease ran out
    finally:
        await table.stop()
    assert await table.count() == 1 and table.archiver.duplicates == 1
    assert await store.outbox(record.id, 1) is None
    found = await ArchiveReader(database).game(deadline.payload["id"])
    assert found.game["table_kind"] == "3" and len(found.seats) == 3
    check_archived(found)


async def _true_if(items: list) -> bool:
    return bool(items)


async def test_a_database_that_is_down_delays_the_archive_not_the_table(database) -> None:
    """The archive retries with a back-off and holds the room; the table plays on."""
    store = MemoryStore(MemoryBroker(), ttl_seconds=30)
    down = Database("postgresql+asyncpg://postgres@127.0.0.1:1/none")
    table = Table(store, down, room_ttl_seconds=30)
    record, _ = await table.service.create_room({"players": 2, "target": 61},
                                                computers={0: "easy", 1: "easy"})
    try:
        await table.until(lambda: _failed(table.archiver, 3))
        assert (await store.load(record.id))[0].status == "game_over"  # the game ended
        pending = [d for d in await store.deadlines(record.id) if d.kind == ARCHIVE]
        assert pending and pending[0].payload["attempts"] >= 3
        assert table.archiver.lag > 0
        expiry = store._rooms[record.id].expires
        assert expiry > time.time() + 30  # held past the room's own expiry
        table.archiver.db = table.db = database  # the database is back
        await table.until(lambda: _no_archive_deadline(store, record.id))
    finally:
        await table.stop()
        await down.close()
    assert table.archiver.written == 1 and await table.count() == 1
    assert table.archiver.lag == 0.0


async def _failed(archiver: Archiver, n: int) -> bool:
    return archiver.failures >= n


async def test_an_idle_game_is_abandoned_and_archived_before_its_room_expires(
    database,
) -> None:
    now = [1_800_000_000.0]
    clock = lambda: now[0]  # noqa: E731
    store = MemoryStore(MemoryBroker(), ttl_seconds=3600, clock=clock)
    table = Table(store, database, clock=clock, room_ttl_seconds=3600,
                  archive_abandon_margin_seconds=600)
    record, _ = await table.service.create_room({"players": 2}, computers={1: "easy"})
    token = table.service.tokens.issue()
    joined = await table.service.join(record.id, 0, token, "Ann")
    assert joined.record.status == "playing"
    try:
        while await table.sweeper.sweep_once(now[0]):  # the computer discards
            pass
        moved, _ = await store.load(record.id)
        now[0] += 2000  # the abandon deadline (3000 s after the start) is not due yet
        await table.sweeper.sweep_once(now[0])
        assert not (await store.load(record.id))[0].abandoned
        now[0] += 999  # due, but the room was written to since the start: put off
        await table.sweeper.sweep_once(now[0])
        assert not (await store.load(record.id))[0].abandoned
        now[0] = moved.updated + 3000  # 3000 s idle (the TTL 3600 less the margin 600)
        await table.sweeper.sweep_once(now[0])
        after, _ = await store.load(record.id)
        assert after.abandoned and table.archiver.abandoned == 1
        assert store._rooms[record.id].expires == pytest.approx(moved.updated + 3600, abs=1)
        with pytest.raises(RoomError) as refused:
            await table.service.act(record.id, 0, token, "late", {"type": "discard",
                                    "cards": after.state["hands"][0][:2]})
        assert refused.value.code == "game_abandoned"

        async def archived() -> bool:
            await asyncio.sleep(0.01)
            return await table.count() == 1
        await table.until(archived)
    finally:
        await table.stop()
    found = await ArchiveReader(database).game(game_id(record.id, record.created, 1))
    assert found.game["status"] == "abandoned" and found.game["result"] is None
    assert found.log[-1]["events"] == [{"type": "game_abandoned", "game_number": 1}]
    assert [s["kind"] for s in found.seats] == ["human", "computer"]
    assert found.seats[0]["name"] == "Ann" and not any(s["won"] for s in found.seats)
    assert len(found.deals) == 1 and found.deals[0]["seed"]
    check_archived(found)


async def test_a_player_s_games_come_a_page_at_a_time(database) -> None:
    """The reader's seam for the players' pages: newest first, keyset cursors."""
    from datetime import UTC, datetime

    from server.database.schema import players

    async with database.begin() as conn:
        await conn.execute(players.insert().values(id="p1", created_at=datetime.now(UTC)))
    store = MemoryStore(MemoryBroker())
    table = Table(store, database)
    record, _ = await table.service.create_room({"players": 2, "target": 61},
                                                computers={0: "easy", 1: "easy"})
    claims: list[Any] = []

    async def keep(ref: Any) -> None:
        claims.append(ref.current)

    table.sweeper.register_own(ARCHIVE, keep)
    try:
        await table.until(lambda: _true_if(claims))
    finally:
        await table.stop()
    deadline = claims[0].deadline
    entries = await store.outbox(record.id, 1)
    for n in range(5):
        payload = {**deadline.payload, "game": n + 1, "ended": 1_800_000_000 + n,
                   "id": game_id(record.id, record.created, n + 1),
                   "seats": [dict(s, player="p1" if s["seat"] == 0 else "nobody")
                             for s in deadline.payload["seats"]]}
        assert await write_game(database, game_rows(record.id, payload, entries, time.time()))
    reader = ArchiveReader(database)
    seen = []
    cursor = None
    while True:
        page = await reader.player_games("p1", limit=2, cursor=cursor)
        seen += [item["game"]["game_number"] for item in page.items]
        assert all(item["seat"]["seat"] == 0 for item in page.items)
        if page.next is None:
            break
        cursor = page.next
    assert seen == [5, 4, 3, 2, 1]
    assert (await reader.player_games("nobody")).items == []  # an unknown player: null


class _StuckMigration:
    """A database whose migration hangs, and whose cancel comes out as another error (as
    asyncpg's does when the advisory unlock runs on a connection still busy)."""

    migrated = False

    def __init__(self) -> None:
        self.tries = 0

    async def migrate(self) -> None:
        self.tries += 1
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise RuntimeError("another operation is in progress") from None


async def test_stopping_ends_a_migration_whose_cancel_turns_into_another_error() -> None:
    """Stopping the archiver returns at once even when the cancel of a running migration
    comes out as another error (it once hung a server's shutdown for good)."""
    store = MemoryStore(MemoryBroker())
    table = Table(store, Database("sqlite+aiosqlite:///:memory:"))
    stuck = _StuckMigration()
    table.archiver.db = stuck
    table.archiver.start()
    await asyncio.sleep(0.05)
    assert stuck.tries == 1
    stopping = asyncio.ensure_future(table.stop())
    done, _ = await asyncio.wait({stopping}, timeout=5.0)
    assert stopping in done, "the archiver did not stop"
    assert stuck.tries == 1  # not tried again after the stop
    await table.db.close()
