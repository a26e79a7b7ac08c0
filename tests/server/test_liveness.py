"""Every game moves on: a killed server process, a restarted or frozen Redis, an idle
player. Real server processes on a Redis of the test's own."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from crib_wire import ProcessServer, RedisServer, choose, events_of, start_all

from protocol.client import Client


@pytest.fixture
def servers(own_redis: RedisServer, tmp_path: Path) -> Iterator[list[ProcessServer]]:
    """Two server processes on the test's own Redis, with short leases."""
    env = {"CRIBBAGE_PRESENCE_LEASE_SECONDS": "1.5", "CRIBBAGE_BOT_DELAY_SECONDS": "0.05",
           "CRIBBAGE_CATCHUP_INTERVAL_SECONDS": "1"}
    made = [ProcessServer(own_redis.url, "live:", tmp_path / f"server{i}.log", **env)
            for i in range(2)]
    start_all(made)
    yield made
    for s in made:
        s.stop()


def seat_state(client: Client, seat: int) -> tuple[bool, bool]:
    """``(connected, computer_standin)`` of ``seat`` as the client knows it now: from its
    snapshot, updates' ``seats`` and presence frames (which are coalesced and sent only
    when the connection does not know it yet; docs/protocol.md "presence")."""
    info = client.seats[seat]
    return info["connected"], info["computer_standin"]


async def play_until(client: Client, rng: random.Random, done, timeout: float = 60) -> None:
    """Play the client's seat (legal moves from its view) until ``done(client)``."""
    end = time.monotonic() + timeout
    while not done(client):
        assert time.monotonic() < end, "the game did not move on"
        action = choose(client.view, rng)
        if action is None:
            seen = client.version
            with contextlib.suppress(TimeoutError):
                await client.wait_until(lambda c, s=seen: c.version > s or done(c), 2)
            continue
        answer = await client.act(action)
        if answer["type"] == "reject":
            await asyncio.sleep(0.05)


async def test_a_killed_process_loses_its_seats_and_the_game_goes_on(servers):
    """kill -9 of the process holding Bob's connection: within a few seconds everyone sees
    Bob's seat go away (the dead process's presence is reaped), the takeover grace runs and
    a computer plays for him, and Ann finishes the game."""
    alive, doomed = servers
    ann = await Client.connect(alive.ws, name="Ann")
    bob = await Client.connect(doomed.ws, name="Bob")
    try:
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2, "target": 61},
             "room": {"takeover_grace": 1}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        room = created["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: seat_state(c, 1) == (True, False), 5)
        killed = time.monotonic()
        doomed.kill()
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, False), 10)
        gone_after = time.monotonic() - killed
        assert gone_after < 6, gone_after
        await ann.wait_until(lambda c: seat_state(c, 1) == (False, True), 10)
        await play_until(ann, random.Random(1), lambda c: c.status == "game_over", 90)
        summary = httpx.get(f"{alive.http}/api/rooms/{room}").json()
        assert summary["status"] == "game_over"
        assert [s["connected"] for s in summary["seats"]] == [True, False]
        assert not ann.problems
    finally:
        await ann.close()
        await bob.close()


async def test_a_table_whose_process_died_waits_for_its_people(servers):
    """Ann and Bob are both on the process that is killed: once its presence is reaped the
    table has nobody, and it waits — no takeover, no move, for several times the grace.
    Bob comes back on the other process: Ann's seat is taken over a grace later (told in
    ``takeover_at``), and Bob plays the game to its end."""
    alive, doomed = servers
    ann = await Client.connect(doomed.ws, name="Ann")
    bob = await Client.connect(doomed.ws, name="Bob")
    bob_again = None
    try:
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2, "target": 61},
             "room": {"takeover_grace": 1}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        room = created["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: c.status == "playing", 5)
        doomed.kill()

        def summary() -> dict:
            return httpx.get(f"{alive.http}/api/rooms/{room}").json()

        end = time.monotonic() + 10
        while any(s["connected"] for s in summary()["seats"]):
            assert time.monotonic() < end, "the dead process's presence was not reaped"
            await asyncio.sleep(0.2)
        version = summary()["version"]
        await asyncio.sleep(4)  # four times the grace
        seen = summary()
        assert seen["version"] == version, "the game went on with nobody at the table"
        assert not any(s["computer_standin"] for s in seen["seats"])
        bob_again = await Client.connect(alive.ws, name="Bob", token=bob.player_token)
        back = time.time()
        await bob_again.join(room, 1)
        await bob_again.wait_until(lambda c: any(
            f["type"] == "presence" and f["seat"] == 0 and f.get("takeover_at")
            for f in c.frames) or bool(c.seats[0].get("takeover_at")), 5)
        await bob_again.wait_until(lambda c: seat_state(c, 0) == (False, True), 10)
        assert time.time() - back >= 0.9
        await play_until(bob_again, random.Random(5), lambda c: c.status == "game_over", 90)
        assert not bob_again.problems
    finally:
        for c in (ann, bob, bob_again):
            if c is not None:
                await c.close()


async def test_after_a_redis_restart_every_process_catches_up(servers, own_redis):
    """Redis restarts (down 0.1 s). Bob acts on the other process as soon as it can: Ann's
    process had lost its subscription meanwhile, yet Ann gets the change within seconds,
    with no further action from anyone."""
    a_server, b_server = servers
    ann = await Client.connect(a_server.ws, name="Ann")
    bob = await Client.connect(b_server.ws, name="Bob")
    try:
        created = await ann.create_room({"players": 2})
        room = created["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: c.status == "playing")
        own_redis.restart(0.1)
        hand = bob.view["hand"]
        end = time.monotonic() + 15
        answer = None
        while time.monotonic() < end:
            answer = await bob.act({"type": "discard", "cards": hand[:2]}, action_id="b-d1")
            if answer["type"] == "ack":
                break
            assert answer["code"] in ("store_unavailable", "outcome_unknown"), answer
            await asyncio.sleep(0.2)
        assert answer is not None and answer["type"] == "ack"
        acked = time.monotonic()
        await ann.wait_until(lambda c: c.view["discarded"][1], 8)
        assert time.monotonic() - acked < 8
        assert not ann.problems, ann.problems
        # The event itself reached Ann (in an update, or a snapshot that carries it).
        got = events_of(ann, "discard") + [
            e for f in ann.frames if f["type"] == "snapshot" for m in f.get("missed") or []
            for e in m["events"] if e["type"] == "discard"]
        assert any(e["seat"] == 1 for e in got)
    finally:
        await ann.close()
        await bob.close()


async def test_a_frozen_redis_gets_honest_quick_answers(servers, own_redis):
    """Redis frozen (SIGSTOP): an act is answered within seconds with a reject that carries
    its action_id (outcome_unknown or store_unavailable, never internal); /readyz answers
    503 at once; after the thaw, re-sending the same id settles it — applied exactly once;
    each process logs one line for the outage, not a traceback per request."""
    a_server, b_server = servers
    ann = await Client.connect(a_server.ws, name="Ann")
    bob = await Client.connect(b_server.ws, name="Bob")
    try:
        created = await ann.create_room({"players": 2})
        room = created["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: c.status == "playing")
        hand = ann.view["hand"]
        action = {"type": "discard", "cards": hand[:2]}
        own_redis.freeze()
        try:
            started = time.monotonic()
            answers = []
            for _ in range(3):
                answers.append(await ann.act(action, action_id="a-d1", timeout=10))
            took = time.monotonic() - started
            started = time.monotonic()
            ready = httpx.get(f"{a_server.http}/readyz", timeout=5)
            ready_took = time.monotonic() - started
        finally:
            own_redis.thaw()
        assert all(a["type"] == "reject" and a["action_id"] == "a-d1" for a in answers)
        assert {a["code"] for a in answers} <= {"outcome_unknown", "store_unavailable"}
        assert took < 3 * 3.5, took
        assert ready.status_code == 503 and ready_took < 2, ready_took
        end = time.monotonic() + 10
        while True:
            answer = await ann.act(action, action_id="a-d1")
            if answer["type"] == "ack" or time.monotonic() > end:
                break
            await asyncio.sleep(0.2)
        assert answer["type"] == "ack", answer
        await ann.wait_until(lambda c: c.view["discarded"][0], 5)
        assert httpx.get(f"{a_server.http}/readyz").status_code == 200
        log = a_server.log.read_text()
        assert log.count("store unavailable") == 1, log
        assert "Traceback" not in log, log
    finally:
        await ann.close()
        await bob.close()


async def test_the_turn_clock_plays_for_an_idle_player(servers):
    """A room with a 1-second turn clock: Bob never acts. Each time his clock runs out the
    standard computer acts for him once (a timed_out event; his discard's cards hidden from
    Ann); after three timeouts in a row a computer stands in for him."""
    a_server, b_server = servers
    ann = await Client.connect(a_server.ws, name="Ann")
    bob = await Client.connect(b_server.ws, name="Bob")
    try:
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2},
             "room": {"turn_seconds": 1}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        assert created["room_settings"]["turn_seconds"] == 1
        room = created["room"]
        await ann.join(room, 0)
        snap = await bob.join(room, 1)
        clock = snap["view"]["turn_clock"]
        assert set(clock) == {"0", "1"} and clock["1"] > time.time() * 1000
        await ann.wait_until(lambda c: any(e["seat"] == 1 for e in events_of(c, "timed_out")),
                             5)
        timed = [e for e in events_of(ann, "timed_out") if e["seat"] == 1][0]
        assert timed["action"]["type"] == "discard" and timed["action"]["cards"] is None
        await bob.wait_until(lambda c: any(e["seat"] == 1 for e in events_of(c, "timed_out")))
        mine = [e for e in events_of(bob, "timed_out") if e["seat"] == 1][0]
        assert len(mine["action"]["cards"]) == 2
        await play_until(ann, random.Random(3), lambda c: seat_state(c, 1)[1], 60)
        standin = [f for f in ann.frames if f["type"] == "update" and any(
            e["type"] == "computer_standin" for e in f["events"])]
        assert standin and standin[0]["seats"][1]["computer_standin"]
        assert len([e for e in events_of(ann, "timed_out") if e["seat"] == 1]) == 3
        # Bob comes back to life: acting (or joining again) ends the stand-in.
        await bob.join(room, 1)
        await ann.wait_until(lambda c: not c.seats[1]["computer_standin"], 5)
    finally:
        await ann.close()
        await bob.close()


def test_the_bot_comes_back_after_a_restart_and_a_crash(own_redis, tmp_path):
    """cribbage-bot plays against a computer seat; its server is restarted gracefully (the
    bot sees close code 1012) and later killed with -9 (1006) and started again: the bot
    reconnects each time, resumes its seat and plays to game over (exit status 0)."""
    import json as _json
    import subprocess
    import sys

    from crib_wire import ROOT

    server = ProcessServer(own_redis.url, "bot:", tmp_path / "server.log",
                           CRIBBAGE_BOT_DELAY_SECONDS="0.05")
    server.start()
    bot = None
    try:
        created = httpx.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 121}, "computers": {"0": "standard"}}).json()
        room = created["room"]
        bot = subprocess.Popen(
            [sys.executable, "-m", "protocol.bot", server.ws, room, "1", "--level", "easy",
             "--log-level", "info"],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

        def version() -> int:
            return httpx.get(f"{server.http}/api/rooms/{room}").json()["version"]

        for stop in (server.stop, server.kill):
            seen = version()
            end = time.monotonic() + 30
            while version() < seen + 8:
                assert time.monotonic() < end
                time.sleep(0.1)
            stop()
            time.sleep(0.3)
            server.start()
        out, err = bot.communicate(timeout=120)
        assert bot.returncode == 0, err
        summary = _json.loads(out.strip().splitlines()[-1])
        assert summary["games"] == 1 and summary["reconnects"] >= 2, summary
        assert "(1012)" in err and "(1006)" in err, err
        info = httpx.get(f"{server.http}/api/rooms/{room}").json()
        assert info["status"] == "game_over"
    finally:
        if bot is not None and bot.poll() is None:
            bot.kill()
        server.stop()
