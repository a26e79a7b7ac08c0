"""The ratings' HTTP API on a real server (uvicorn, SQLite and PostgreSQL): the leaderboard
(top, around me, the minimum of games, private players without a name), a player's ratings
with their history and abandonments, and the errors and read budgets, each answer valid
against ``protocol.ratings``' models."""

from __future__ import annotations

import secrets
from typing import Any

import httpx
from crib_wire import ThreadServer
from rating_payloads import add_players, payload, write
from sqlalchemy import update

from protocol.ratings import Leaderboard, PlayerRatings
from server.database.schema import players
from server.ratings.counts import MIN_GAMES
from server.settings import Settings


def _server(database: Any, **values: Any) -> ThreadServer:
    url = database.url.replace("+aiosqlite", "")
    return ThreadServer(Settings(database_url=url, bot_delay_seconds=0.0, **values)).start()


def pid(n: int) -> str:
    return "p" + "abcdefghij"[n // 10] * 14 + "abcdefghij"[n % 10]


async def test_the_leaderboard_and_a_player_s_ratings(database) -> None:
    people = [pid(i) for i in range(6)]
    short = pid(6)  # one game short of the board
    await add_players(database, *people, short)
    async with database.begin() as conn:
        await conn.execute(update(players).where(players.c.id == people[5]).values(private=True))
    # people[0] beats everyone twice; then, against the easy computer, people[0] wins twice
    # more and the others win until they have the board's minimum (MIN_GAMES), people[5]
    # abandoning one of them
    room = "r" + secrets.token_hex(5)
    number = 0
    for opponent in people[1:]:
        for _ in range(2):
            number += 1
            body, entries = payload(room, number, "2", [{"player": people[0]},
                                                        {"player": opponent}], [121, 80],
                                    ended=1e9 + number)
            assert await write(database, room, body, entries)
    extra = [(people[0], 2)] + [(p, MIN_GAMES - 2) for p in people[1:]]
    extra.append((short, MIN_GAMES - 1))
    for who, games in extra:
        for g in range(games):
            number += 1
            leaves = who == people[5] and g == 0
            body, entries = payload(room, number, "2",
                                    [{"player": who, "abandoned": leaves},
                                     {"kind": "computer", "level": "easy"}], [121, 80],
                                    ended=1e9 + number)
            assert await write(database, room, body, entries)
    server = _server(database, leaderboard_reads_per_minute=8,
                     rating_provisional_games=MIN_GAMES + 1)
    try:
        async with httpx.AsyncClient(base_url=server.http, timeout=10) as client:
            board = Leaderboard.model_validate((await client.get("/api/leaderboards/2")).json())
            assert board.min_games == MIN_GAMES == 10 and board.around is None
            assert [e.player for e in board.top][0] == people[0]
            assert {e.player for e in board.top} == set(people)
            assert [e.rank for e in board.top] == list(range(1, 7))
            ratings = [e.rating for e in board.top]
            assert ratings == sorted(ratings, reverse=True)
            hidden = next(e for e in board.top if e.player == people[5])
            assert hidden.private and hidden.name is None
            r = await client.get("/api/leaderboards/2", params={"around": people[3]})
            near = Leaderboard.model_validate(r.json())
            assert near.me is not None and near.me.player == people[3]
            assert [e.player for e in near.around] == [e.player for e in board.top]
            assert near.me.rank == next(e.rank for e in board.top if e.player == people[3])
            off = Leaderboard.model_validate(
                (await client.get("/api/leaderboards/2", params={"around": short})).json())
            assert off.around is None and off.me is not None and off.me.rank is None
            assert (off.me.player, off.me.games) == (short, MIN_GAMES - 1)
            empty = Leaderboard.model_validate(
                (await client.get("/api/leaderboards/3", params={"around": people[0]})).json())
            assert empty.top == [] and empty.around is None and empty.me is None
            bad = await client.get("/api/leaderboards/5")
            assert bad.status_code == 404 and bad.json()["error"]["code"] == "bad_table_kind"
            for wrong in ("", "not a player!", "x" * 33):
                bad = await client.get("/api/leaderboards/2", params={"around": wrong})
                assert bad.status_code == 400, wrong
                assert bad.json()["error"]["code"] == "bad_around_player"
            mine = PlayerRatings.model_validate(
                (await client.get(f"/api/players/{people[0]}/ratings")).json())
            [two] = mine.ratings
            assert two.table_kind == "2" and two.games == 12 and two.wins == 12
            assert not two.provisional and two.rank == 1
            assert len(mine.history) == 12 and mine.abandoned == 0
            assert all(c.after > c.before for c in mine.history)
            assert [c.at for c in mine.history] == sorted((c.at for c in mine.history),
                                                          reverse=True)
            below = PlayerRatings.model_validate(
                (await client.get(f"/api/players/{short}/ratings")).json())
            assert below.ratings[0].games == MIN_GAMES - 1 and below.ratings[0].rank is None
            private = await client.get(f"/api/players/{people[5]}/ratings")
            assert private.status_code == 403
            assert private.json()["error"]["code"] == "profile_private"
            other = PlayerRatings.model_validate(
                (await client.get(f"/api/players/{people[1]}/ratings")).json())
            assert other.ratings[0].provisional and other.ratings[0].games == MIN_GAMES
            assert other.ratings[0].rank == next(e.rank for e in board.top
                                                 if e.player == people[1])
            refused = None
            for _ in range(10):
                refused = await client.get("/api/leaderboards/2x2")
                if refused.status_code == 429:
                    break
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == "too_many_leaderboard_reads"
            assert int(refused.headers["Retry-After"]) >= 1
    finally:
        server.stop()


async def test_abandonments_show_on_the_player_s_ratings(database) -> None:
    await add_players(database, "leaver" + "a" * 10)
    who = "leaver" + "a" * 10
    room = "r" + secrets.token_hex(5)
    body, entries = payload(room, 1, "2", [{"player": who, "abandoned": True},
                                           {"kind": "computer", "level": "standard"}],
                            [121, 100])
    assert await write(database, room, body, entries)
    server = _server(database)
    try:
        async with httpx.AsyncClient(base_url=server.http, timeout=10) as client:
            found = PlayerRatings.model_validate(
                (await client.get(f"/api/players/{who}/ratings")).json())
    finally:
        server.stop()
    assert found.abandoned == 1
    [change] = found.history
    assert change.abandoned and change.rank == 2 and change.after <= change.before + 200
    assert found.ratings[0].wins == 0 and found.ratings[0].rank is None
