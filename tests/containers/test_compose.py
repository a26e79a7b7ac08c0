"""docker-compose.yml run for real: Redis, PostgreSQL, two server replicas built from the
project's Dockerfile, and nginx with deploy/nginx.conf on a published port.

* The proxy starts only once both replicas are healthy, so the first requests after
  ``up --wait`` succeed (issue 17: ~2 s of 502 before).
* Whole games are played through nginx with one seat on each replica; every acknowledged
  action is in its room's log exactly once.
* After ``up -d --force-recreate --no-deps server`` the replicas have new addresses and
  nginx follows them at once: no 502, both new replicas serve (issue 17: nginx resolved
  ``server`` once and sent everything to a dead address).
* The two replicas, started while a session holds the servers' migration lock (a
  PostgreSQL advisory lock), both wait for it at once; released, they migrate the empty
  database once (one ``Running upgrade`` per shipped migration in all their logs, the
  database at the newest).
* Every game played to its end is in PostgreSQL exactly once (one ``games`` row, its log
  holding every acknowledged action once; the replicas wrote two between them), and
  ``GET /api/games/{id}`` through nginx is answered by both replicas — and, after the
  replicas were recreated (new containers), by both new ones.
* ``/metrics`` and ``/readyz`` answer through the proxy and on each replica.

Skipped, loudly, where no Docker engine answers (conftest.py); bounded in time (every
docker call has a deadline) and always brought down (``compose down -v``).
"""

from __future__ import annotations

import asyncio
import datetime
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from compose_stack import UP_SECONDS, Stack, docker, exactly_once, parse_metrics
from crib_wire import free_port, play_seat

from protocol.client import Client

NAME = "cribbage-test-single"
SUBNET = "172.30.117"
GAME_SECONDS = 240
"""Bound on playing the games of one test."""


@pytest.fixture(scope="module")
def stack(engine: None, request: pytest.FixtureRequest) -> Iterator[Stack]:
    s = Stack("docker-compose.yml", NAME, SUBNET, free_port())
    failed = request.session.testsfailed
    try:
        s.down()  # what an interrupted run left behind
        s.compose("build", "server", timeout=UP_SECONDS)
        s.compose("up", "--no-start", timeout=120)
        # Two idle containers hold the network's first free addresses while the stack
        # starts; released before the replicas are recreated, they make sure the new
        # replicas get addresses no replica had.
        s.hold_addresses(2)
        # The database first, and a session holding the servers' migration lock: the two
        # replicas then start and both wait for it at once (released in
        # test_the_replicas_started_together_migrate_the_database_once).
        s.up("postgres")
        s.hold_migration_lock()
        s.up_seconds = s.up()
        # At once after `up --wait`: requests and a WebSocket through the proxy.
        s.first_http = [s.get(p).status_code for p in ["/readyz", "/", "/healthz"] * 5]
        s.first_ws = asyncio.run(_hello_and_ping(s.ws))
        # When the proxy started, and the replicas' health checks so far (Docker keeps the
        # last five).
        s.proxy_started = docker("inspect", "-f", "{{.State.StartedAt}}",
                                 s.containers("proxy")[0]).strip()
        s.health = {r: json.loads(docker("inspect", "-f", "{{json .State.Health}}", r))
                    for r in s.containers("server")}
        yield s
    finally:
        try:
            if request.session.testsfailed > failed:
                print(s.logs())
        finally:
            left = s.down()
            assert not left, f"compose down -v left {left}"


async def _hello_and_ping(url: str) -> dict[str, Any]:
    client = await Client.connect(url, name="first")
    try:
        return await client.ping("first")
    finally:
        await client.close()


def started_at(value: str) -> datetime.datetime:
    """Docker's RFC 3339 time with nanoseconds -> datetime."""
    head, _, rest = value.partition(".")
    digits = "".join(ch for ch in rest if ch.isdigit())[:6]
    return datetime.datetime.fromisoformat(f"{head}.{digits or '0'}+00:00")


def test_the_proxy_starts_after_healthy_replicas_and_its_first_requests_succeed(
        stack: Stack) -> None:
    print(f"compose up --wait took {stack.up_seconds:.1f} s")
    assert stack.first_http == [200] * 15, stack.first_http
    assert stack.first_ws["type"] == "pong" and stack.first_ws["nonce"] == "first"
    # The proxy was started after each replica's first passing health check.
    proxy_start = started_at(stack.proxy_started)
    assert len(stack.health) == 2
    for replica, health in stack.health.items():
        passed = [started_at(h["End"]) for h in health["Log"] if h["ExitCode"] == 0]
        assert passed and min(passed) <= proxy_start, (replica, health["Log"], proxy_start)


def test_the_replicas_started_together_migrate_the_database_once(stack: Stack) -> None:
    # Both replicas wait for the migration lock at once, neither has migrated.
    stack.wait_migration_lock(1, 2)
    assert not any(stack.migrated().values())
    stack.release_migration_lock()
    took, ran = stack.check_migrated_once()
    print(f"both replicas waited for the migration lock at once; released, both report the "
          f"database migrated within {took:.1f} s; run once: {ran}")


async def play_games(stack: Stack, games: int, seed: int) -> tuple[list[str], list[Any]]:
    """``games`` two-player games to 61, each with seat 0 on one replica and seat 1 on the
    other, played to the end through the proxy. Returns (rooms, acks)."""
    by_replica = await stack.connect_on_every_replica(games)
    first, second = sorted(by_replica)
    rooms: list[str] = []
    acks: list[tuple[str, int, dict[str, Any]]] = []
    clients = [c for cs in by_replica.values() for c in cs]
    try:
        plays = []
        for g in range(games):
            host, guest = by_replica[first][g], by_replica[second][g]
            room = (await host.create_room({"players": 2, "target": 61}))["room"]
            await host.join(room, 0)
            await guest.join(room, 1)
            rooms.append(room)
            for seat, c in enumerate((host, guest)):
                plays.append((room, seat, play_seat(c, random.Random(seed * 100 + g * 2 + seat))))
        answers = await asyncio.wait_for(asyncio.gather(*(p for _, _, p in plays)),
                                         GAME_SECONDS)
        for (room, seat, _), got in zip(plays, answers, strict=True):
            acks.extend((room, seat, a) for a in got if a["type"] == "ack")
        for c in clients:
            await c.wait_until(lambda c: c.status == "game_over", 20)
            assert not c.problems, c.problems
    finally:
        for c in clients:
            await c.close()
    return rooms, acks


async def test_games_through_the_proxy_on_both_replicas_log_every_ack_once(
        stack: Stack) -> None:
    before = await asyncio.to_thread(stack.accepted)
    rooms, acks = await play_games(stack, 2, seed=1)
    after = await asyncio.to_thread(stack.accepted)
    # Both replicas took actions of both games.
    assert all(after[r] > before.get(r, 0) for r in after), (before, after)
    records = await asyncio.to_thread(stack.rooms, rooms)
    assert all(records[r]["status"] == "game_over" for r in rooms), records
    checked = exactly_once(acks, records)
    print(f"{checked} acknowledged actions in 2 games, each logged once; accepted by "
          f"replica: { {r: after[r] - before.get(r, 0) for r in after} }")
    took, _ = await asyncio.to_thread(stack.check_archived, records, acks)
    # Archived exactly once across the replicas: two games written, none twice.
    written = {r: stack.replica_metrics(r) for r in stack.containers("server")}
    counts = {r: (m.get('cribbage_archive_games_total{outcome="written"}', 0.0),
                  m.get('cribbage_archive_games_total{outcome="duplicate"}', 0.0))
              for r, m in written.items()}
    assert sum(w for w, _ in counts.values()) == 2, counts
    print(f"both games in PostgreSQL once, {took:.1f} s after their end was seen; "
          f"(written, duplicate) by replica: {counts}; each read from both replicas")


async def test_nginx_follows_recreated_replicas(stack: Stack) -> None:
    old = {stack.address(c) for c in stack.containers("server")}
    stack.release_placeholders()
    # (While both replicas are being recreated nothing can serve: the proxy's own health
    # check sees 502 then. What matters is what follows.)
    took = await asyncio.to_thread(stack.up, "--force-recreate", "--no-deps", "server")
    since = docker("info", "-f", "{{json .SystemTime}}").strip().strip('"')
    new = {stack.address(c) for c in stack.containers("server")}
    print(f"recreated in {took:.1f} s: {sorted(old)} -> {sorted(new)}")
    assert len(new) == 2 and not new & old, (old, new)
    # At once: every request reaches a new replica, and both of them serve.
    codes = [(await asyncio.to_thread(stack.get, "/readyz")).status_code for _ in range(30)]
    assert codes == [200] * 30, codes
    rooms, acks = await play_games(stack, 1, seed=2)
    records = await asyncio.to_thread(stack.rooms, rooms)
    exactly_once(acks, records)
    # The new replicas (new containers: nothing of the old ones' file systems) read the
    # games archived before, and archive the new one.
    before = dict(stack.games)
    assert before, "no game was archived before"
    await asyncio.to_thread(stack.check_archived, records, acks)
    await asyncio.to_thread(stack.read_games_from_every_replica, before)
    proxy_log = docker("logs", "--since", since, stack.containers("proxy")[0], stderr=True)
    refused = [line for line in proxy_log.splitlines()
               if "connect() failed" in line or " 502 " in line]
    assert not refused, refused


def test_metrics_and_readyz_through_the_proxy_and_on_each_replica(stack: Stack) -> None:
    ready = stack.get("/readyz")
    assert ready.status_code == 200 and ready.json() == {"ok": True, "store": "redis"}
    metrics = stack.get("/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    figures = parse_metrics(metrics.text)
    assert figures["cribbage_store_up"] == 1.0 and "cribbage_connections" in figures
    for replica in stack.containers("server"):
        own = stack.replica_metrics(replica)
        assert own["cribbage_store_up"] == 1.0
        assert own['cribbage_actions_total{outcome="accepted"}'] > 0, replica
