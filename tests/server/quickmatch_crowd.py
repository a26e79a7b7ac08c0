"""A crowd for quick match over the wire (used by test_quickmatch_crowd.py and
bench/quickmatch.py): players made straight in the servers' shared database, one WebSocket
connection each (the protocol takes one player per connection), queueing for a mix of
tables across server processes, and the checks that every player was matched exactly once
into a complete room."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert

from protocol.client import Client
from server.database import Database
from server.database.schema import player_credentials, players
from server.matchmaking.tables import Table
from server.players.store import new_player_id, new_secret, secret_hash

MIX: list[tuple[dict[str, Any], int]] = [
    ({"players": 2}, 600),
    ({"players": 2, "rated": True}, 400),
    ({"players": 3}, 300),
    ({"players": 4}, 400),
    ({"players": 4, "partnerships": True}, 300),
]
"""Tables and how many players queue for each (2,000 in all; each a multiple of its size)."""

SERVER_ENV = {
    # 2,000 connections from one test address: the per-address limits are for the public,
    # not for this crowd (each limit has its own test).
    "CRIBBAGE_MAX_CONNECTIONS_PER_ADDRESS": "0",
    "CRIBBAGE_CONNECTIONS_PER_MINUTE": "0",
    "CRIBBAGE_QUEUE_JOINS_PER_MINUTE_PER_ADDRESS": "0",
    "CRIBBAGE_FAILED_JOINS_PER_MINUTE": "0",
    "CRIBBAGE_QUEUE_COMPUTER_OFFER_SECONDS": "600",
    "CRIBBAGE_QUEUE_OWNER_LEASE_SECONDS": "2",
    "CRIBBAGE_PRESENCE_LEASE_SECONDS": "3",
}


@dataclass
class Person:
    """One simulated player."""

    index: int
    player: dict[str, str]
    table: dict[str, Any]
    server: int
    client: Client | None = None
    matched: list[dict[str, Any]] = field(default_factory=list)
    queued_at: float = 0.0
    matched_at: float = 0.0

    def collect(self) -> None:
        """Note the ``matched`` frames of the current connection."""
        if self.client is None:
            return
        for f in self.client.frames:
            if f["type"] == "matched" and f not in self.matched:
                self.matched.append(f)
                self.matched_at = self.matched_at or time.monotonic()


async def make_players(db_url: str, n: int) -> list[dict[str, str]]:
    """``n`` players written in one transaction (``{"id", "secret"}`` each). The database
    is migrated first: a server process migrates in the background after it reports ready
    (``/readyz`` is about Redis), so on a slow machine its tables may not be there yet (the
    migration's lock makes migrating beside it safe)."""
    db = Database(db_url)
    now = datetime.now(UTC)
    made = [{"id": new_player_id(), "secret": new_secret()} for _ in range(n)]
    try:
        await db.migrate()
        async with db.begin() as conn:
            await conn.execute(insert(players), [
                {"id": p["id"], "created_at": now, "secret_hash": secret_hash(p["secret"]),
                 "name": f"P{i}", "language": "en", "private": False, "updated_at": now}
                for i, p in enumerate(made)])
            await conn.execute(insert(player_credentials), [
                {"id": secrets.token_hex(8), "player_id": p["id"],
                 "secret_hash": secret_hash(p["secret"]), "how": "new", "created_at": now,
                 "last_used_at": now} for p in made])
    finally:
        await db.close()
    return made


def people_for(made: list[dict[str, str]], servers: int) -> list[Person]:
    """Each player a table of :data:`MIX` and a server (round robin)."""
    tables = [t for t, count in MIX for _ in range(count)]
    assert len(tables) == len(made)
    return [Person(i, p, tables[i], i % servers) for i, p in enumerate(made)]


async def connect(person: Person, url: str, gate: asyncio.Semaphore) -> None:
    async with gate:
        for attempt in range(5):
            try:
                person.client = await Client.connect(url, name=f"P{person.index}",
                                                     player=person.player, timeout=15)
                return
            except Exception:
                if attempt == 4:
                    raise
                await asyncio.sleep(0.2)


RETRY = {"store_unavailable", "outcome_unknown", "busy"}
"""Codes a client answers by sending the same request again (docs/protocol.md)."""


async def queue(person: Person, gate: asyncio.Semaphore | None = None) -> None:
    """``queue_join`` until answered (``queue_status`` or ``matched``), sent again after a
    store outage's codes, as a client does."""
    assert person.client is not None
    person.queued_at = person.queued_at or time.monotonic()
    async with gate or contextlib.nullcontext():
        for _ in range(50):
            try:
                answer = await person.client.request(
                    {"type": "queue_join", "table": person.table},
                    lambda f: f["type"] in ("queue_status", "matched", "error"), 10)
            except Exception as exc:
                if getattr(exc, "code", None) in RETRY:
                    await asyncio.sleep(0.2)
                    continue
                return  # the connection went (its process was killed): rescued later
            if answer["type"] != "error":
                return
        raise AssertionError(f"queue_join of {person.index} never answered")


async def wait_matched(people: list[Person], timeout: float) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for p in people:
            p.collect()
        if all(p.matched for p in people):
            return
        await asyncio.sleep(0.1)
    missing = [p for p in people if not p.matched]
    seen = missing[0].client.frames[-5:] if missing[0].client is not None else None
    raise AssertionError(f"{len(missing)} players not matched, e.g. "
                         f"{[p.index for p in missing[:10]]}; the first's last frames: {seen}")


async def close_all(people: list[Person]) -> None:
    async def close(p: Person) -> None:
        if p.client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(p.client.close(), 5)

    await asyncio.gather(*(close(p) for p in people))


async def check_rooms(people: list[Person], store: Any) -> dict[str, Any]:
    """Every player matched into exactly one room (however many ``matched`` frames their
    connections got, all name that room and seat), every room complete with the players
    told of it, of the table they asked for, and in the store each of its seats held by
    that player — nobody in two rooms."""
    by_room: dict[str, dict[int, str]] = defaultdict(dict)
    for p in people:
        rooms = {(f["room"], f["seat"]) for f in p.matched}
        assert len(rooms) == 1, (p.index, rooms)
        room, seat = rooms.pop()
        f = p.matched[0]
        assert f["table"] == Table.from_dict(p.table).to_dict()
        assert by_room[room].get(seat) is None, (room, seat)
        by_room[room][seat] = p.player["id"]
    placed: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    for room, seats in by_room.items():
        record, _ = await store.load(room)
        assert record is not None, room
        assert len(seats) == len(record.seats), (room, seats)
        for seat, player in seats.items():
            assert record.seats[seat].player == player, (room, seat)
        for s in record.seats:
            assert s.kind == "human" and s.player is not None
            placed[s.player] += 1
        assert record.status == "playing", room
        sizes[str(len(record.seats))] += 1
    assert all(n == 1 for n in placed.values())
    assert len(placed) == len(people)
    return {"rooms": len(by_room), "sizes": dict(sizes)}
