"""A finished game's grading over the wire (issue 22 point 4), on a real server with SQLite.

A player plays a whole game (random legal choices) against an ``easy`` computer; once the
game is archived, ``GET /api/games/{id}`` carries its grading (graded once, off the event
loop, in the grader's process pool) with the player's accuracy and the moves that cost
points, and the player's profile the average accuracy. A grading lost (its rows deleted:
the process died before it wrote them) is graded again, the same, on the next read — or
by the sweep a process runs after its start; a grading whose process was killed is made
again at once in a new one.
"""

from __future__ import annotations

import asyncio
import os
import random

import httpx
from crib_wire import ThreadServer, kill_pool_worker, play_seat
from sqlalchemy import delete

from protocol.client import Client
from protocol.http import ArchivedGameBody, PlayerProfile
from server.archive import grader as grader_module
from server.archive.grader import Grader
from server.database import Database
from server.database.schema import game_gradings, game_seat_grades
from server.settings import Settings


async def test_a_finished_game_is_graded_and_the_profile_averages_it(tmp_path,
                                                                    monkeypatch) -> None:
    path = tmp_path / "grading.sqlite3"
    server = ThreadServer(Settings(
        database_url=f"sqlite:///{path}", bot_delay_seconds=0.0, frame_rate=0,
        presence_frame_interval_seconds=0, sweep_interval_seconds=0.05)).start()
    db = Database(f"sqlite+aiosqlite:///{path}")
    player = None
    try:
        async with httpx.AsyncClient(base_url=server.http, timeout=30) as http:
            anna = (await http.post("/api/players", json={"name": "Anna"})).json()
            player = await Client.connect(server.ws, player=anna)
            room = (await player.create_room({"players": 2, "target": 61},
                                             computers={"1": "easy"}))["room"]
            await player.join(room, 0)
            await play_seat(player, random.Random(22), timeout=60)
            assert player.view["phase"] == "game_over"
            games: list = []
            for _ in range(100):
                games = (await http.get(f"/api/players/{anna['id']}/games")).json()["games"]
                if games:
                    break
                await asyncio.sleep(0.1)
            game_id = games[0]["game"]
            answer = await http.get(f"/api/games/{game_id}")
            assert answer.status_code == 200
            body = answer.json()
            ArchivedGameBody.model_validate(body)
            grading = body["grading"]
            assert grading is not None and grading["error"] is None
            assert grading["grader"] == "expert"
            mine, computer = grading["seats"]
            assert mine["seat"] == 0 and mine["decisions"] > 0
            assert 0 <= mine["accuracy"] <= 100 and mine["computer_moves"] == 0
            assert computer["decisions"] > 0  # every seat is graded
            by = {m["seat"]: set() for m in grading["moves"]}
            for m in grading["moves"]:
                by[m["seat"]].add(m["by"])
            assert by == {0: {"player"}, 1: {"computer"}}  # the log's auto- ids
            costly = [m for m in grading["moves"] if m["seat"] == 0 and m["cost"] > 0]
            assert costly, "random choices all as good as the computer's"
            assert all(m["best"] != m["chosen"] and m["by"] == "player" for m in costly)
            assert {m["kind"] for m in grading["moves"]} == {"discard", "play"}
            assert mine["exact"] == sum(1 for m in grading["moves"]
                                        if m["seat"] == 0 and m["cost"] == 0)

            metrics = (await http.get("/metrics")).text
            assert "cribbage_gradings_waiting 0.0" in metrics  # graded: nothing waits
            assert "cribbage_gradings_deferred_total 0.0" in metrics

            profile = (await http.get(f"/api/players/{anna['id']}")).json()
            PlayerProfile.model_validate(profile)
            assert profile["accuracy"]["games"] == 1
            assert profile["accuracy"]["average"] == mine["accuracy"]
            assert profile["accuracy"]["decisions"] == mine["decisions"]

            # The grading lost (the process died before writing it): the next read grades
            # the game again, the same.
            async with db.begin() as conn:
                await conn.execute(delete(game_seat_grades))
                await conn.execute(delete(game_gradings))
            lost = (await http.get(f"/api/players/{anna['id']}")).json()
            assert lost["accuracy"]["games"] == 0 and lost["accuracy"]["average"] is None
            again = (await http.get(f"/api/games/{game_id}")).json()["grading"]
            assert again == grading
            assert (await http.get(f"/api/players/{anna['id']}")).json()["accuracy"] == \
                profile["accuracy"]

            # Lost again: the sweep (once after a start) grades what has no grading.
            async with db.begin() as conn:
                await conn.execute(delete(game_seat_grades))
                await conn.execute(delete(game_gradings))
            db.migrated = True
            grader = Grader(db)
            try:
                assert await grader.sweep() == 1
                assert await grader.sweep() == 0
                assert await grader.stored(game_id) == grading
                assert grader.graded == 1

                # Two processes grading it at once (both replicas' sweeps after a restart):
                # written once, and counted once, by the one that wrote it.
                async with db.begin() as conn:
                    await conn.execute(delete(game_seat_grades))
                    await conn.execute(delete(game_gradings))
                other = Grader(db)
                try:
                    archived = await grader.reader.game(game_id)
                    assert archived is not None
                    both = await asyncio.gather(
                        grader.grading(archived, known_missing=True),
                        other.grading(archived, known_missing=True))
                    assert both == [grading, grading]
                    assert grader.graded + other.graded == 2  # 1 before, 1 now
                finally:
                    await other.stop()

                # Lost once more, and the grading process killed (an operator, the OOM
                # killer): the grading is made again at once in a new process.
                async with db.begin() as conn:
                    await conn.execute(delete(game_seat_grades))
                    await conn.execute(delete(game_gradings))
                executor = grader._executor()
                worker = await asyncio.wrap_future(executor.submit(os.getpid))
                await kill_pool_worker(executor, worker)
                assert await asyncio.wait_for(grader.ensure(game_id), 60) == grading
                assert await grader.stored(game_id) == grading
                assert grader.failures == 0
            finally:
                await grader.stop()

            # Lost while every process keeps running (the replica that archived it was
            # killed; nobody reads it): another process's periodic sweep grades it.
            monkeypatch.setattr(grader_module, "SWEEP_GRACE", 0.0)
            sweeping = Grader(db)
            try:
                sweeping.start_sweep(0.2)
                for _ in range(200):
                    if sweeping.sweeps:
                        break
                    await asyncio.sleep(0.05)
                assert sweeping.sweeps >= 1 and sweeping.graded == 0  # nothing was missing
                async with db.begin() as conn:
                    await conn.execute(delete(game_seat_grades))
                    await conn.execute(delete(game_gradings))
                # Not within the grace of a periodic sweep (its archiver may be grading it),
                # nor past its look-back.
                assert await sweeping.sweep(ended=(3600.0, 120.0)) == 0
                assert await sweeping.sweep(ended=(0.0, 0.0)) == 0
                swept = None
                for _ in range(600):
                    swept = await sweeping.stored(game_id)
                    if swept is not None:
                        break
                    await asyncio.sleep(0.05)
                assert swept == grading and sweeping.graded == 1
                assert sweeping.sweeps >= 2
            finally:
                await sweeping.stop()
    finally:
        if player is not None:
            await player.close()
        await db.close()
        server.stop()


async def test_gradings_take_turns_between_owners_and_at_most_max_scheduled_wait(
        monkeypatch) -> None:
    """Games archived faster than the one grading worker grades them: they wait as ids, one
    queue per owner (each game's players; every game without one is one owner), and are
    graded owners in turn, so a flood of games (an outside check: 350 a minute from 10
    rooms, both seats its own; then one game per new room from 8 addresses) delays a
    player's game by one grading per owner waiting, not by its backlog; past
    ``MAX_SCHEDULED`` waiting, the owner with the most waiting gives up its newest, never a
    player's one game."""
    from server.archive import grader as grader_module
    from server.archive.grader import ANONYMOUS

    monkeypatch.setattr(grader_module, "MAX_SCHEDULED", 6)
    grader = Grader(db=None)  # type: ignore[arg-type]  # ensure is replaced below
    gate = asyncio.Event()
    started: list[str] = []

    async def ensure(game_id: str) -> None:
        started.append(game_id)
        await gate.wait()

    monkeypatch.setattr(grader, "ensure", ensure)
    try:
        for i in range(5):
            grader.schedule(f"flood{i}")  # no player: the anonymous owner
        await asyncio.sleep(0.05)
        assert started == ["flood0"]  # one at a time: the pool has one worker
        grader.schedule("anna1", "players:anna")
        grader.schedule("flood5", ANONYMOUS)  # now 6 wait: flood1..5 and anna1
        grader.schedule("bob1", "players:bob")  # full: the flood gives up flood5
        grader.schedule("anna2", "players:anna")  # and then flood4
        assert grader.deferred == 2 and grader.waiting == 6
        grader.schedule("flood6")  # the flood still has the most: the new one gives way
        assert grader.deferred == 3 and grader.waiting == 6
        gate.set()
        for _ in range(200):
            if not grader._tasks:
                break
            await asyncio.sleep(0.01)
        # Owners in turn, each served going to the end of the turns.
        assert started == ["flood0", "flood1", "anna1", "bob1", "flood2", "anna2",
                           "flood3"], started
        assert grader.waiting == 0

        # Every queue one game long (one game per owner) and full: a new player's game
        # still gets in, and the newest of an owner with one gives way.
        gate.clear()
        started.clear()
        for i in range(7):
            grader.schedule(f"p{i}", f"players:p{i}")
        await asyncio.sleep(0.05)
        grader.schedule("carl1", "players:carl")
        assert "carl1" in {g for q in grader._queues.values() for g in q}
        gate.set()
        for _ in range(200):
            if not grader._tasks:
                break
            await asyncio.sleep(0.01)
        assert "carl1" in started and grader.waiting == 0
    finally:
        await grader.stop()


def test_a_game_is_owned_by_its_players_or_else_by_no_one_in_particular() -> None:
    from server.archive.grader import ANONYMOUS, owner_of

    seats = [{"player_id": "p2", "kind": "human"}, {"player_id": None, "kind": "computer"},
             {"player_id": "p1", "kind": "human"}]
    assert owner_of(seats) == "players:p1,p2"
    assert owner_of([{"player_id": None, "kind": "human"}]) == ANONYMOUS


async def test_a_periodic_sweep_takes_games_with_a_player_first(database, monkeypatch) -> None:
    """A periodic sweep looks only at games that ended 2 minutes to 6 hours ago, those
    with a player at a human seat first, then the newest: a flood of games without a player
    (an outside check: one game per new room from 8 addresses, 1,100 of them newer than a
    player's game) does not keep a player's game from its grading; on SQLite and
    PostgreSQL."""
    import time

    from rating_payloads import add_players, payload, write

    from server.archive.grader import SWEEP_GRACE, SWEEP_LOOKBACK

    await add_players(database, "anna")
    now = time.time()
    ids = {}
    for name, ago, player in (("too_new", 10, "anna"), ("anon_new", 200, None),
                              ("anna", 300, "anna"), ("anon_old", 400, None),
                              ("too_old", 8 * 3600, "anna")):
        seats = [{"player": player, "kind": "human"}, {"kind": "computer", "level": "easy"}]
        body, entries = payload(f"room{name}", 1, "2", seats, [121, 90], rated=False,
                                ended=now - ago)
        assert await write(database, f"room{name}", body, entries)
        ids[body["id"]] = name
    grader = Grader(database)
    seen: list[str] = []

    async def ensure(game_id: str) -> None:
        seen.append(ids[game_id])

    monkeypatch.setattr(grader, "ensure", ensure)
    assert await grader.sweep(2, ended=(SWEEP_LOOKBACK, SWEEP_GRACE)) == 2
    assert seen == ["anna", "anon_new"]
    seen.clear()
    assert await grader.sweep(10, ended=(SWEEP_LOOKBACK, SWEEP_GRACE)) == 3
    assert seen == ["anna", "anon_new", "anon_old"]
    seen.clear()
    assert await grader.sweep(10) == 5  # a start's sweep: the newest of all
    assert seen == ["too_new", "anon_new", "anna", "anon_old", "too_old"]
    await grader.stop()
