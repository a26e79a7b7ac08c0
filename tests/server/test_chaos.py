"""Chaos: two server processes on a Redis of the test's own (AOF, fsync always) and a
PostgreSQL of the test's own (the archive), a few dozen rooms of scripted and computer
seats, one process killed with -9 and restarted again and again while games end, Redis
restarted once, PostgreSQL stopped for 10 s, players who vanish for good and players who
leave cleanly, and rated rooms of players (issue 19: best of 1 between two players, best of
3 against a computer) whose games end during the kills.

Then: every game reaches game over within a bound — except at the tables both players left
for good, which wait for their people (no takeover, no move) through the kills and the
restart; every acknowledged action is in its room's log exactly once (and no action id
twice); each log replays through the engine to the room's stored state; presence matches
the connections actually open; and every game that ended is in the database exactly once,
its archived log the room's, replaying through the engine (from the archived deal seeds) to
its archived final score; and every rated player's rating changed exactly once — one
``rating_history`` row (for the game, or for the match), ``ratings.games`` 1, the rating the
row's result — while nobody else has a rating.

Bounded in time (about a minute; 150 s at most for the games) and stops everything it
started. A summary line (rooms, kills, acked actions, longest pause) is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from crib_wire import PostgresServer, ProcessServer, RedisServer
from redis.asyncio import Redis
from sqlalchemy import select

import engine
from engine import rng as shuffle
from protocol.client import Client, ClientError
from server.archive.outbox import game_id
from server.archive.reader import ArchiveReader
from server.archive.verify import replay as replay_archived
from server.database import Database, database_url
from server.database.schema import games, rating_history, ratings
from server.store.redis import RedisStore

pytestmark = pytest.mark.slow

PREFIX = "chaos:"
GAMES_BOUND_SECONDS = 150
TOO_LATE = {"nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent",
            "game_over", "stale_answer", "not_your_turn", "already_discarded",
            "card_not_in_hand", "already_announced", "count_over_31"}
RETRY = {"outcome_unknown", "store_unavailable", "busy"}


@dataclass
class Stats:
    acked: dict[tuple[str, int, str], int] = field(default_factory=dict)
    versions: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    reconnects: int = 0
    outcome_unknown: int = 0
    store_unavailable: int = 0


class Player:
    """A scripted player: plays legal moves from its own view, reconnects to any live
    process with backoff, re-sends an unanswered action with the same id.

    ``leave``: after ``after`` actions it vanishes for good — ``"abort"`` (the connection
    just dies) or ``"clean"`` (``leave`` then a clean close); None plays to the end.
    ``player``: the ``{"id", "secret"}`` it says hello with (a rated room's seat);
    ``think``: the seconds it thinks before a move (from, to). In a match it asks for the
    next game after each one until the match is over.
    """

    def __init__(self, servers: list[ProcessServer], room: str, seat: int, stats: Stats,
                 rng: random.Random, leave: str | None = None, after: int = 0,
                 player: dict[str, str] | None = None,
                 think: tuple[float, float] = (0.05, 0.25)) -> None:
        self.servers = servers
        self.room = room
        self.seat = seat
        self.stats = stats
        self.rng = rng
        self.leave = leave
        self.after = after
        self.player = player
        self.think = think
        self.token: str | None = None
        self.seat_token: str | None = None
        self.client: Client | None = None
        self.pending: tuple[str, dict[str, Any]] | None = None
        self.sent = 0
        self.done = False
        self.gone = False
        self.last_error: str | None = None
        self.history: list[tuple[float, str]] = []

    async def run(self, deadline: float) -> None:
        failures = 0
        while not self.done and time.monotonic() < deadline:
            server = self.rng.choice(self.servers)
            try:
                client = await Client.connect(server.ws, name=f"p{self.seat}", token=self.token,
                                              player=self.player, record=False, timeout=3)
            except Exception as exc:
                self.last_error = f"connect: {exc!r}"
                self.history.append((time.monotonic(), f"connect {server.port}: {exc!r}"))
                failures += 1
                await asyncio.sleep(min(2.0, 0.05 * 2 ** failures) * self.rng.random())
                continue
            self.client = client
            self.history.append((time.monotonic(), f"connected {server.port}"))
            self.token = client.player_token
            try:
                await client.join(self.room, self.seat, token=self.seat_token, timeout=5)
                self.seat_token = client.seat_token
                failures = 0
                await self.play(client, deadline)
            except (ClientError, TimeoutError, OSError) as exc:
                self.last_error = f"play: {exc!r}"
                self.history.append((time.monotonic(), f"play: {exc!r} v{client.version}"))
            if self.done or self.gone:
                return
            self.stats.reconnects += 1
            with contextlib.suppress(Exception):
                await client.close()
            failures += 1
            await asyncio.sleep(min(2.0, 0.05 * 2 ** failures) * self.rng.random())

    def note(self, client: Client) -> None:
        self.stats.versions.setdefault(self.room, []).append((time.monotonic(), client.version))

    async def play(self, client: Client, deadline: float) -> None:
        while time.monotonic() < deadline:
            view = client.view
            self.note(client)
            next_game = False
            if view is not None and view["phase"] == "game_over":
                match = view.get("match")
                if match is None or match["over"]:
                    self.done = True
                    return
                next_game = True  # the match's next game (a rematch from any seat)
            if self.leave and self.sent >= self.after and self.pending is None:
                self.gone = True
                if self.leave == "abort":
                    await client.abort()
                else:
                    with contextlib.suppress(Exception):
                        await client.request({"type": "leave"}, lambda f: f["type"] == "left")
                    await client.close()
                return
            if self.pending is None:
                legal = [a for a in (view or {}).get("legal", [])
                         if a["type"] != "rematch" or next_game]
                if not legal:
                    seen = client.version
                    with contextlib.suppress(TimeoutError):
                        await client.wait_until(
                            lambda c, s=seen: c.version > s or c.closed.is_set(), 3)
                    if client.closed.is_set():
                        return
                    continue
                await asyncio.sleep(self.rng.uniform(*self.think))  # a person thinks
                if client.view is not view:
                    continue  # the view moved meanwhile: decide again
                self.sent += 1
                self.pending = (f"{self.seat}-{self.sent}", self.rng.choice(legal))
            action_id, action = self.pending
            answer = await client.act(action, action_id, timeout=10)
            if answer["type"] == "ack":
                self.stats.acked[(self.room, self.seat, action_id)] = answer["version"]
                self.pending = None
            elif answer["code"] in RETRY:
                if answer["code"] == "outcome_unknown":
                    self.stats.outcome_unknown += 1
                else:
                    self.stats.store_unavailable += 1
                await asyncio.sleep(0.2)
            else:
                assert answer["code"] in TOO_LATE, answer
                self.pending = None
                seen = client.version
                with contextlib.suppress(TimeoutError):
                    await client.wait_until(lambda c, s=seen: c.version > s, 1)


async def make_room(server: ProcessServer, options: dict[str, Any],
                    computers: dict[str, str], room: dict[str, Any] | None = None) -> str:
    client = await Client.connect(server.ws, name="host", record=False)
    try:
        created = await client.request(
            {"type": "create_room", "options": options, "computers": computers,
             "room": {"takeover_grace": 1.0, **(room or {})}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        return created["room"]
    finally:
        await client.close()


def replay(record: Any, log: list[dict[str, Any]]) -> engine.GameState | None:
    """The room's game state rebuilt from its log alone, through the engine."""
    state = None
    for entry in log:
        if any(e.get("type") == "game_start" for e in entry.get("events") or []) \
                and "action" not in entry:
            state, _ = engine.new_game(engine.GameOptions.from_dict(record.options),
                                       record.seed, match=(record.settings or {}).get("match", 1))
        elif "action" in entry:
            state, _ = engine.apply(state, entry["seat"], entry["action"])
        if "forfeit" in entry:  # a rated match forfeited in the same commit (rules §9.3)
            state, _ = engine.apply(state, None, {"type": "forfeit", "sides": entry["forfeit"]})
    return state


async def database_outage(pg: PostgresServer, counts: dict[str, int]) -> None:
    """Stop the test's PostgreSQL for 10 s, while games end."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(4)
    await loop.run_in_executor(None, pg.stop)
    counts["database_stops"] += 1
    await asyncio.sleep(10)
    await loop.run_in_executor(None, pg.start)


async def chaos(servers: list[ProcessServer], redis: RedisServer, stats: Stats,
                pg: PostgresServer) -> dict[str, int]:
    """Kill -9 one process at a time and restart it, six times whether or not the games
    have ended by then (on a loaded machine a restart is slow, and the games could end
    first); restart Redis once; stop PostgreSQL for 10 s meanwhile."""
    counts: dict[str, Any] = {"kills": 0, "redis_restarts": 0, "database_stops": 0}
    outage = asyncio.create_task(database_outage(pg, counts))
    await asyncio.sleep(2)
    loop = asyncio.get_running_loop()
    for round_ in range(6):
        victim = servers[round_ % 2]
        await loop.run_in_executor(None, victim.kill)
        counts["kills"] += 1
        await asyncio.sleep(0.7)
        await loop.run_in_executor(None, victim.start)
        if round_ == 2:
            await loop.run_in_executor(None, redis.restart, 0.2)
            counts["redis_restarts"] += 1
        await asyncio.sleep(1.5)
    counts["kills_until"] = time.time()
    await outage
    return counts


async def test_games_survive_kills_and_a_redis_restart(own_redis: RedisServer,
                                                       tmp_path: Path) -> None:
    pg = PostgresServer().start()
    env = {"CRIBBAGE_PRESENCE_LEASE_SECONDS": "1.5", "CRIBBAGE_BOT_DELAY_SECONDS": "0.05",
           "CRIBBAGE_CATCHUP_INTERVAL_SECONDS": "1", "CRIBBAGE_DATABASE_URL": pg.url,
           "CRIBBAGE_ARCHIVE_RETRY_MAX_SECONDS": "2",
           # 40 rooms from one address in a minute: more than the rooms budget, which the
           # processes share on Redis (docs/protocol.md "Limits").
           "CRIBBAGE_ROOMS_PER_MINUTE": "0"}
    servers = [ProcessServer(own_redis.url, PREFIX, tmp_path / f"server{i}.log", **env)
               for i in range(2)]
    try:
        for s in servers:
            s.start()
        await _chaos_run(servers, own_redis, pg, tmp_path)
    finally:
        for s in servers:
            s.stop()
        pg.remove()


async def _chaos_run(servers: list[ProcessServer], own_redis: RedisServer,
                     pg: PostgresServer, tmp_path: Path) -> None:
    rng = random.Random(20261201)
    stats = Stats()
    players: list[Player] = []
    rooms: list[str] = []
    started = time.monotonic()
    try:
        # 34 rooms: 8 of two people, 8 of a person and a computer, 4 of three (one a
        # computer), 3 where a player vanishes for good, 3 where one leaves cleanly, and 2
        # that both players leave for good (those wait for their people); 4 rated rooms of
        # two players and 2 rated best-of-3 matches of a player against a computer, whose
        # players think fast so that their games end during the kills.
        plans: list[tuple[dict[str, Any], dict[str, str], list[str | None]]] = []
        plans += [({"players": 2}, {}, [None, None])] * 8
        plans += [({"players": 2, "muggins": True}, {"1": "standard"}, [None])] * 4
        plans += [({"players": 2, "backup10": True}, {"0": "easy"}, [None])] * 4
        plans += [({"players": 3}, {"2": "standard"}, [None, None])] * 4
        plans += [({"players": 2}, {}, [None, "abort"])] * 3
        plans += [({"players": 2}, {}, [None, "clean"])] * 3
        plans += [({"players": 2}, {}, ["abort", "clean"])] * 2
        # 6 of computers alone: their games end early, during the kills and the outage.
        plans += [({"players": 2, "target": 61}, {"0": "standard", "1": "easy"}, [])] * 6
        rated_plans = [({"players": 2}, {}, {"rated": True})] * 4
        rated_plans += [({"players": 2}, {"1": "standard"}, {"rated": True, "match": 3})] * 2
        for options, computers, behaviours in plans:
            room = await make_room(rng.choice(servers), options, computers)
            rooms.append(room)
            human_seats = [s for s in range(options["players"]) if str(s) not in computers]
            for seat, leave in zip(human_seats, behaviours, strict=True):
                players.append(Player(servers, room, seat, stats, random.Random(rng.random()),
                                      leave, rng.randint(3, 25)))
        rated: dict[str, dict[str, Any]] = {}  # player id -> {"room", "match"}
        for options, computers, settings in rated_plans:
            room = await make_room(rng.choice(servers), options, computers, settings)
            rooms.append(room)
            for seat in (s for s in range(options["players"]) if str(s) not in computers):
                player = await new_player(rng.choice(servers), f"R{len(rated)}")
                rated[player["id"]] = {"room": room, "match": settings.get("match", 1)}
                players.append(Player(servers, room, seat, stats, random.Random(rng.random()),
                                      player=player, think=(0.02, 0.08)))
        deadline = started + GAMES_BOUND_SECONDS
        chaos_task = asyncio.create_task(chaos(servers, own_redis, stats, pg))
        await asyncio.wait_for(asyncio.gather(*(p.run(deadline) for p in players)),
                               GAMES_BOUND_SECONDS + 10)
        games_took = time.monotonic() - started
        counts = await chaos_task

        # Every game is over: the players who stayed saw it; the stand-ins finished the rest.
        store = RedisStore(Redis.from_url(own_redis.url, decode_responses=True), PREFIX)
        try:
            left = {p.room for p in players if p.leave} - {p.room for p in players if not p.leave}
            end = time.monotonic() + 30
            while True:
                records = [(await store.load(r))[0] for r in rooms]
                if all(rec.status == "game_over" for rec in records if rec.id not in left) \
                        or time.monotonic() > end:
                    break
                await asyncio.sleep(0.5)
            unfinished = [rec.id for rec in records
                          if rec.status != "game_over" and rec.id not in left]
            assert not unfinished, f"games that did not finish: {unfinished}"
            # The tables everyone left wait: still playing, and nothing moves there.
            waiting = [rec for rec in records if rec.id in left]
            assert len(waiting) == 2 and all(rec.status == "playing" for rec in waiting), [
                (rec.id, rec.status) for rec in waiting]
            await asyncio.sleep(3)  # three times the grace
            for rec in waiting:
                again, _ = await store.load(rec.id)
                # (A stand-in may have started while one of them was still there: it
                # makes no move now.)
                assert again.version == rec.version, f"{rec.id} went on with nobody there"
            stuck = [(p.room, p.seat, p.sent, p.pending, p.client and p.client.closed.is_set(),
                      p.client and p.client.version,
                      p.client and p.client.view and p.client.view["phase"], p.last_error)
                     for p in players if not (p.done or p.gone)]
            for p in players:
                if not (p.done or p.gone):
                    print("STUCK", p.room, p.seat, [(round(t - started, 2), e)
                                                    for t, e in p.history[-10:]])
            assert not stuck, "\n".join(map(str, stuck))

            # Exactly once: every acked id is in its room's log once; no id twice.
            logged = 0
            for rec in records:
                log = await store.log(rec.id)
                ids = [(e["seat"], e["id"]) for e in log if "id" in e]
                assert len(ids) == len(set(ids)), f"an action applied twice in {rec.id}"
                for (room, seat, action_id), version in stats.acked.items():
                    if room == rec.id:
                        hits = [e for e in log if e.get("id") == action_id
                                and e.get("seat") == seat]
                        assert len(hits) == 1 and hits[0]["v"] == version, (room, action_id)
                        logged += 1
                # The log replays through the engine to the stored state.
                assert log[0]["v"] == 1 and [e["v"] for e in log] == list(
                    range(1, rec.version + 1))
                state = replay(rec, log)
                assert state is not None and state.to_dict() == rec.state, rec.id
            assert logged == len(stats.acked)

            # Presence matches the connections actually open (dead processes reaped).
            def open_seats(room: str) -> dict[int, int]:
                out: dict[int, int] = {}
                for p in players:
                    if p.room == room and p.done and p.client and not p.client.closed.is_set():
                        out[p.seat] = out.get(p.seat, 0) + 1
                return out

            end = time.monotonic() + 15
            while True:
                mismatched = [r for r in rooms if await store.presence(r) != open_seats(r)]
                if not mismatched or time.monotonic() > end:
                    break
                await asyncio.sleep(0.5)
            assert not mismatched, {r: (await store.presence(r), open_seats(r))
                                    for r in mismatched}

            # The tables left by everyone wait: their games have not ended, so they are not
            # in the archive (they would be, as abandoned, shortly before the room expires).
            archive = await check_archive(store, [r for r in records if r.id not in left], pg)
            archive.update(await check_ratings(rated, pg, counts["kills_until"]))
        finally:
            await store.close()

        pauses = []
        for seen in stats.versions.values():
            seen.sort()
            last_t, last_v = seen[0]
            longest = 0.0
            for t, v in seen[1:]:
                if v > last_v:
                    longest = max(longest, t - last_t)
                    last_t, last_v = t, v
            pauses.append(longest)
        summary = {
            "rooms": len(rooms), "players": len(players),
            **{k: v for k, v in counts.items() if k != "kills_until"},
            "acked_actions": len(stats.acked), "lost": 0, "duplicated": 0,
            "client_reconnects": stats.reconnects, "outcome_unknown": stats.outcome_unknown,
            "store_unavailable": stats.store_unavailable,
            "longest_pause_s": round(max(pauses), 2), "games_took_s": round(games_took, 1),
            **archive,
        }
        print("chaos summary:", json.dumps(summary))
        (tmp_path / "summary.json").write_text(json.dumps(summary))
        assert counts["kills"] == 6 and counts["redis_restarts"] == 1
        assert counts["database_stops"] == 1
        assert archive["archived_after_5s"] >= 1, "no game ended during the outage"
        assert archive["rated_ended_during_kills"] >= 1, "no rated game ended during the kills"
        assert max(pauses) < 30, summary
        for s in servers:
            assert "Traceback" not in s.log.read_text(), s.log.read_text()[-3000:]
    finally:
        for p in players:
            if p.client is not None:
                with contextlib.suppress(Exception):
                    await p.client.close()


async def new_player(server: ProcessServer, name: str) -> dict[str, str]:
    """A new player (``POST /api/players``): ``{"id", "secret", ...}``."""
    async with httpx.AsyncClient(timeout=10) as http:
        made = await http.post(f"{server.http}/api/players", json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()


async def check_ratings(rated: dict[str, dict[str, Any]], pg: PostgresServer,
                        kills_until: float) -> dict[str, Any]:
    """Every rated player's rating changed exactly once: one ``rating_history`` row (the
    game's for best of 1, the match's for best of 3), ``ratings.games`` 1 and the rating
    that row gave; no other rating rows at all (the other rooms are not rated)."""
    db = Database(database_url(pg.url))
    try:
        end = time.monotonic() + 30  # the match's deciding game may still be archiving
        while True:
            async with db.connect() as conn:
                history = (await conn.execute(select(rating_history))).mappings().all()
                rows = (await conn.execute(select(ratings))).mappings().all()
            if len(history) >= len(rated) or time.monotonic() > end:
                break
            await asyncio.sleep(0.5)
    finally:
        await db.close()
    by_player: dict[str, list[Any]] = {}
    for h in history:
        by_player.setdefault(h["player_id"], []).append(h)
    assert sorted(by_player) == sorted(rated), "a rating for a game that is not rated"
    assert {r["player_id"] for r in rows} == set(rated)
    for row in rows:
        [change] = by_player[row["player_id"]]  # exactly once
        wanted = rated[row["player_id"]]
        assert change["source"] == ("match" if wanted["match"] > 1 else "game"), change
        assert row["table_kind"] == change["table_kind"] == "2"
        assert row["games"] == change["games"] == 1
        assert (row["mu"], row["sigma"], row["display"]) == (
            change["mu"], change["sigma"], change["display"])
    # The two players of a room share one source, ranked apart.
    by_room: dict[str, list[Any]] = {}
    for player, wanted in rated.items():
        by_room.setdefault(wanted["room"], []).append(by_player[player][0])
    for changes in by_room.values():
        assert len({c["source_id"] for c in changes}) == 1
        assert sorted(c["rank"] for c in changes) == list(range(1, len(changes) + 1)) or \
            len(changes) == 1
    during = {h["source_id"] for h in history if h["at"].timestamp() <= kills_until}
    return {"rated_players": len(rated), "rating_changes": len(history),
            "rated_abandoned": sum(1 for h in history if h["abandoned"]),
            "rated_ended_during_kills": len(during)}


async def check_archive(store: RedisStore, records: list[Any], pg: PostgresServer
                        ) -> dict[str, Any]:
    """Every game is in the database exactly once (its archive may still be catching up
    after the outage: bounded wait), its archived log is the room's, and it replays through
    the engine from its archived deal seeds to its archived final score — every game of a
    match."""
    db = Database(database_url(pg.url))
    wanted = {game_id(rec.id, rec.created, n): (rec, n) for rec in records
              for n in range(1, rec.game_number + 1)}
    try:
        end = time.monotonic() + 60
        while True:
            async with db.connect() as conn:
                rows = (await conn.execute(select(games.c.id, games.c.room_id,
                                                  games.c.game_number, games.c.ended_at,
                                                  games.c.archived_at))).all()
            if {r.id for r in rows} >= set(wanted) or time.monotonic() > end:
                break
            await asyncio.sleep(0.5)
        assert sorted(r.id for r in rows) == sorted(wanted), "not archived exactly once"
        assert len({(r.room_id, r.game_number) for r in rows}) == len(rows)
        reader = ArchiveReader(db)
        for gid, (rec, number) in wanted.items():
            found = await reader.game(gid)
            game = found.game
            assert game["status"] == "finished" and game["room_id"] == rec.id
            # The game's versions; after its end the room may log more (a player back at a
            # finished table releases the computer that stood in: computer_standin).
            room_log = [e for e in await store.log(rec.id, game["first_version"] - 1)
                        if e["v"] <= game["last_version"]]
            assert found.log == room_log, f"archived log of {rec.id} is not the room's"
            seed = bytes.fromhex(game["game_seed"])
            assert seed == shuffle.game_seed(rec.seed, number)
            for deal in found.deals:
                assert deal["commitment"] == shuffle.commitment(bytes.fromhex(deal["seed"]))
            state, _ = replay_archived(game["options"], found.log,
                                       [d["seed"] for d in found.deals])
            assert state.phase == "game_over" and list(state.scores) == game["scores"]
            if number == rec.game_number:
                assert state.to_dict()["scores"] == rec.state["scores"]
            assert not await store.outbox(rec.id, number)
        delays = sorted((r.archived_at - r.ended_at).total_seconds() for r in rows)
    finally:
        await db.close()
    return {"archived_games": len(rows), "archive_delay_max_s": round(delays[-1], 1),
            "archived_after_5s": sum(1 for d in delays if d > 5)}
