"""Cluster mode on a real local Redis Cluster (three primaries, a replica each; issue 13).

* The store: every key of a room and its bucket's deadline index share one slot; rooms
  spread over every shard; commits publish on sharded channels the broker receives from
  every shard; deadlines of every shard are claimed.
* Whole games over two server processes in cluster mode, with rooms on every shard, while
  one primary is killed with -9 and its replica takes over: every game finishes, every
  acknowledged action is in its room's log exactly once (and the log replays to the stored
  state), and spectators on the two processes saw the same view at every version both saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from crib_cluster import LocalCluster
from crib_wire import ProcessServer
from redis.asyncio.cluster import RedisCluster
from sqlalchemy import select
from test_chaos import TOO_LATE, replay

from protocol.client import Client, ClientError
from server.app import redis_cluster_client
from server.archive.outbox import game_id
from server.archive.reader import ArchiveReader
from server.broker import ShardedRedisBroker
from server.database import Database, database_url
from server.database.schema import games as games_table
from server.settings import Settings
from server.store.base import Commit, Deadline, RoomRecord, StoreUnavailable
from server.store.cluster import ClusterKeys, ClusterRedisStore

PREFIX = "cl:"
RETRY = {"outcome_unknown", "store_unavailable", "busy"}


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    """A Redis Cluster of this test's own; every node stopped after."""
    c = LocalCluster(tmp_path / "cluster")
    try:
        c.start()
        yield c
    finally:
        c.stop()


def settings_for(cluster: LocalCluster, **more: Any) -> Settings:
    return Settings(redis_url=cluster.url, redis_cluster=True, key_prefix=PREFIX, **more)


async def settled(call: Callable[[], Awaitable[Any]], timeout: float = 5) -> Any:
    """``call()``, tried again while the store is unavailable (a client that still had the
    failed primary in its slot map learns the new one from its first failure)."""
    end = time.monotonic() + timeout
    while True:
        try:
            return await call()
        except StoreUnavailable:
            if time.monotonic() > end:
                raise
            await asyncio.sleep(0.2)


def primary_of(client: RedisCluster, key: str) -> str:
    return client.nodes_manager.get_node_from_slot(client.keyslot(key)).name


async def test_rooms_spread_over_every_shard_with_one_slot_each(cluster: LocalCluster) -> None:
    settings = settings_for(cluster)
    client = redis_cluster_client(settings)
    keys = ClusterKeys(PREFIX, settings.redis_cluster_buckets)
    broker = ShardedRedisBroker(client, keys.channel)
    # A generous replica wait: on a busy 2-core machine a replica can take more than the
    # default 250 ms to confirm, and this test asserts that every change was confirmed.
    store = ClusterRedisStore(client, PREFIX, published=broker.published, wait_ms=3000)
    await broker.start()
    try:
        await client.initialize()
        got: dict[str, list[dict[str, Any]]] = {}
        rooms = [f"room{i:03d}" for i in range(24)]
        now = time.time()
        for room in rooms:
            slots = {client.keyslot(store.key(room, k)) for k in
                     ("state", "actions", "log", "presence", "deadlines", "deadline_data",
                      "outbox")}
            slots |= {client.keyslot(store.channel(room)), client.keyslot(store._index(room))}
            assert len(slots) == 1, room
            assert await store.create(RoomRecord(room, 0, {}, (), None, "s", "c", now, now))
            await broker.subscribe(room, got.setdefault(room, []).append)
        shards = {primary_of(client, store.key(r, "state")) for r in rooms}
        assert len(shards) == 3  # 24 rooms land on every one of the three primaries
        for room in rooms:
            record, _ = await store.load(room)
            assert record is not None
            result = await store.commit(Commit(
                record.evolve(version=1), 0, "0:a1", {"action": "x"}, [{"type": "x"}],
                deadlines=(Deadline(room, "computer_turn", now - 1, "1"),),
            ))
            assert (result.status, result.version) == ("ok", 1)
            again = await store.commit(Commit(
                record.evolve(version=1), 0, "0:a1", {"action": "x"}, [{"type": "x"}]))
            assert again.status == "duplicate"
        end = time.monotonic() + 5
        while any(not got[r] for r in rooms) and time.monotonic() < end:
            await asyncio.sleep(0.05)
        assert all(len(got[r]) == 1 and got[r][0]["v"] == 1 for r in rooms)
        assert len(broker._shards) == 3
        claims = await store.claim_due(time.time(), time.time() + 5)
        assert sorted(c.deadline.room for c in claims) == rooms
        assert await store.claim_due(time.time(), time.time() + 5) == []
        for claim in claims:
            await store.complete(claim)
        assert [await store.deadlines(r) for r in rooms] == [[]] * len(rooms)
        # The archive's outbox on a cluster: kept by the commit, held, finished atomically.
        record, _ = await store.load(rooms[0])
        ended = await store.commit(Commit(
            record.evolve(version=2), 1, None, {"action": "y"}, [{"type": "game_over"}],
            deadlines=(Deadline(rooms[0], "archive", now - 1, "1"),), outbox=(1, 1)))
        assert ended.status == "ok"
        assert [e["v"] for e in await store.outbox(rooms[0], 1)] == [1, 2]
        assert await store.hold(rooms[0], time.time() + 100_000)
        assert await client.ttl(store.key(rooms[0], "outbox")) > 90_000
        (claim,) = await store.claim_due(time.time(), time.time() + 5)
        assert await store.finish_outbox(claim, 1)
        assert await store.outbox(rooms[0], 1) is None and await store.deadlines(rooms[0]) == []
        assert await store.versions(rooms) == [2] + [1] * (len(rooms) - 1)
        assert store.unreplicated == 0  # every replica confirmed every change (WAIT)
    finally:
        await broker.close()
        await store.close()


class Player:
    """A scripted player that reconnects to any live process and re-sends an unanswered
    action with the same id (as in test_chaos, without the think time)."""

    def __init__(self, servers: list[ProcessServer], room: str, seat: int,
                 rng: random.Random, acked: dict[tuple[str, int, str], int]) -> None:
        self.servers = servers
        self.room = room
        self.seat = seat
        self.rng = rng
        self.acked = acked
        self.token: str | None = None
        self.seat_token: str | None = None
        self.pending: tuple[str, dict[str, Any]] | None = None
        self.sent = 0
        self.done = False
        self.retries = 0
        self.client: Client | None = None

    async def run(self, deadline: float) -> None:
        while not self.done and time.monotonic() < deadline:
            server = self.rng.choice(self.servers)
            try:
                client = await Client.connect(server.ws, name=f"p{self.seat}",
                                              token=self.token, record=False, timeout=3)
            except Exception:
                await asyncio.sleep(0.2)
                continue
            self.client = client
            self.token = client.player_token
            try:
                await client.join(self.room, self.seat, token=self.seat_token, timeout=5)
                self.seat_token = client.seat_token
                await self.play(client, deadline)
            except (ClientError, TimeoutError, OSError):
                self.retries += 1
            with contextlib.suppress(Exception):
                await client.close()
            if not self.done:
                await asyncio.sleep(0.2)

    async def play(self, client: Client, deadline: float) -> None:
        while time.monotonic() < deadline:
            view = client.view
            if view is not None and view["phase"] == "game_over":
                self.done = True
                return
            if self.pending is None:
                legal = [a for a in (view or {}).get("legal", []) if a["type"] != "rematch"]
                if not legal:
                    seen = client.version
                    with contextlib.suppress(TimeoutError):
                        await client.wait_until(
                            lambda c, s=seen: c.version > s or c.closed.is_set(), 3)
                    if client.closed.is_set():
                        return
                    continue
                self.sent += 1
                self.pending = (f"{self.seat}-{self.sent}", self.rng.choice(legal))
            action_id, action = self.pending
            answer = await client.act(action, action_id, timeout=10)
            if answer["type"] == "ack":
                self.acked[(self.room, self.seat, action_id)] = answer["version"]
                self.pending = None
            elif answer["code"] in RETRY:
                self.retries += 1
                await asyncio.sleep(0.2)
            else:
                assert answer["code"] in TOO_LATE, answer
                self.pending = None
                seen = client.version
                with contextlib.suppress(TimeoutError):
                    await client.wait_until(lambda c, s=seen: c.version > s, 1)


async def make_room(server: ProcessServer, options: dict[str, Any],
                    computers: dict[str, str]) -> str:
    client = await Client.connect(server.ws, name="host", record=False)
    try:
        created = await client.request(
            {"type": "create_room", "options": options, "computers": computers,
             "room": {"takeover_grace": 2.0}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        return created["room"]
    finally:
        await client.close()


@pytest.mark.slow
async def test_whole_games_survive_a_primary_failover(cluster: LocalCluster,
                                                      tmp_path: Path) -> None:
    started = time.monotonic()
    archive_url = f"sqlite:///{tmp_path / 'archive.sqlite3'}"
    env = {"CRIBBAGE_REDIS_CLUSTER": "1", "CRIBBAGE_PRESENCE_LEASE_SECONDS": "1.5",
           "CRIBBAGE_BOT_DELAY_SECONDS": "0.05", "CRIBBAGE_CATCHUP_INTERVAL_SECONDS": "1",
           "CRIBBAGE_DATABASE_URL": archive_url}
    servers = [ProcessServer(cluster.url, PREFIX, tmp_path / f"server{i}.log", **env)
               for i in range(2)]
    check = redis_cluster_client(settings_for(cluster))
    keys = ClusterKeys(PREFIX, 256)
    store = ClusterRedisStore(check, PREFIX)
    players: list[Player] = []
    watchers: dict[str, list[Client]] = {}
    acked: dict[tuple[str, int, str], int] = {}
    try:
        for s in servers:
            s.start()
        await check.initialize()
        rng = random.Random(20261313)
        # Rooms until every primary holds at least three of people and two of a computer.
        plans = [({"players": 2, "target": 61}, {}), ({"players": 2, "target": 61},
                                                       {"1": "standard"}),
                 ({"players": 3, "target": 61}, {"2": "easy"})]
        rooms: dict[str, str] = {}
        per_shard: dict[str, int] = {}
        made = 0
        while len(per_shard) < 3 or min(per_shard.values()) < 5 or made < 18:
            options, computers = plans[made % len(plans)]
            room = await make_room(servers[made % 2], options, computers)
            made += 1
            shard = primary_of(check, keys.key(room, "state"))
            per_shard[shard] = per_shard.get(shard, 0) + 1
            rooms[room] = shard
            for seat in range(options["players"]):
                if str(seat) not in computers:
                    players.append(Player(servers, room, seat, random.Random(rng.random()),
                                          acked))
            watchers[room] = []
            for s in servers:  # a spectator on each process: they must agree
                w = await Client.connect(s.ws, name="watcher")
                await w.join(room, None)
                watchers[room].append(w)
            assert made < 60, per_shard
        deadline = time.monotonic() + 40
        games = asyncio.gather(*(p.run(deadline) for p in players))

        # Mid-game: kill -9 the primary holding the most rooms; its replica takes over.
        await asyncio.sleep(1.5)
        victim_name = max(per_shard, key=lambda n: per_shard[n])
        victim = int(victim_name.rsplit(":", 1)[1])
        replica = cluster.replica_of(victim)
        versions_at_kill = await store.versions(list(rooms))
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, cluster.kill, victim)
        killed_at = time.monotonic()
        await loop.run_in_executor(None, cluster.wait_promoted, replica)
        failover_took = time.monotonic() - killed_at
        assert replica in cluster.primaries() and victim not in cluster.primaries()

        await asyncio.wait_for(games, 50)
        stuck = [(p.room, p.seat, p.sent, p.pending) for p in players if not p.done]
        assert not stuck, stuck

        # Every game is over (the computer-only rest finishes by itself).
        end = time.monotonic() + 15
        while True:
            records = {r: (await settled(lambda r=r: store.load(r)))[0] for r in rooms}
            if all(rec.status == "game_over" for rec in records.values()):
                break
            assert time.monotonic() < end, [r for r, rec in records.items()
                                            if rec.status != "game_over"]
            await asyncio.sleep(0.3)
        assert any(v and rooms[r] == victim_name
                   for r, v in zip(rooms, versions_at_kill, strict=True))
        moved_on = [r for r, v in zip(rooms, versions_at_kill, strict=True)
                    if rooms[r] == victim_name and records[r].version > (v or 0)]
        assert moved_on, "no room of the failed shard changed after the failover"

        # Exactly once, and every log replays to the stored state.
        logged = 0
        for room, rec in records.items():
            log = await settled(lambda room=room: store.log(room))
            assert [e["v"] for e in log] == list(range(1, rec.version + 1)), room
            ids = [(e["seat"], e["id"]) for e in log if "id" in e]
            assert len(ids) == len(set(ids)), f"an action applied twice in {room}"
            for (r, seat, action_id), version in acked.items():
                if r == room:
                    hits = [e for e in log if e.get("id") == action_id and e.get("seat") == seat]
                    assert len(hits) == 1 and hits[0]["v"] == version, (room, action_id)
                    logged += 1
            state = replay(rec, log)
            assert state is not None and state.to_dict() == rec.state, room
        assert logged == len(acked) > 0

        # Every game was archived once, from the outboxes on the cluster's shards, with
        # the room's log (the games of the failed shard too).
        db = Database(database_url(archive_url))
        try:
            reader = ArchiveReader(db)
            end = time.monotonic() + 30
            for room, rec in records.items():
                while (found := await reader.game(game_id(room, rec.created, 1))) is None:
                    assert time.monotonic() < end, f"{room} not archived"
                    await asyncio.sleep(0.3)
                log = await settled(lambda room=room: store.log(room))
                assert found.log == [e for e in log if e["v"] >= rec.game_from], room
                assert not await settled(lambda room=room: store.outbox(room, 1))
            async with db.connect() as conn:
                rows = (await conn.execute(select(games_table.c.room_id))).scalars().all()
            assert sorted(rows) == sorted(records)
        finally:
            await db.close()

        # The two processes agree at every version: their spectators' views are equal at
        # every version both saw, and both reached the final one.
        compared = 0
        for room, (a, b) in watchers.items():
            final = records[room].version
            for w in (a, b):
                await w.wait_until(lambda c, f=final: c.version == f, 10)
                assert not w.problems, (room, w.problems[:3])
            both = set(a.views) & set(b.views)
            for v in both:
                assert a.views[v] == b.views[v], (room, v)
            compared += len(both)
        summary = {
            "rooms": len(rooms), "rooms_per_primary": sorted(per_shard.values()),
            "acked_actions": len(acked), "versions_compared": compared,
            "failover_s": round(failover_took, 1),
            "player_retries": sum(p.retries for p in players),
            "took_s": round(time.monotonic() - started, 1),
        }
        print("cluster failover summary:", json.dumps(summary))
        for s in servers:
            text = s.log.read_text()
            assert "Traceback" not in text, text[-3000:]
    finally:
        for p in players:
            if p.client is not None:
                with contextlib.suppress(Exception):
                    await p.client.close()
        for ws in watchers.values():
            for w in ws:
                with contextlib.suppress(Exception):
                    await w.close()
        await store.close()
        for s in servers:
            s.stop()
