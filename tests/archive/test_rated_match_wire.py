"""Issue 19's "done when", over the wire: two newcomers (``POST /api/players``, nothing
else) play a rated best of 3 on a real server with PostgreSQL, see the match score after
every game, and find their new ratings on the leaderboard and in their ratings — changed
once, for the match, not for each game."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx
import pytest
from crib_wire import ThreadServer, play_seat
from sqlalchemy import func, select

from protocol.client import Client
from protocol.http import ArchivedGameBody
from protocol.ratings import Leaderboard, PlayerRatings
from server.database.schema import rating_board_counts, ratings
from server.ratings import board, counts
from server.ratings import http as ratings_http
from server.settings import Settings


@pytest.mark.parametrize("database", ["postgresql"], indirect=True)
async def test_two_newcomers_play_a_rated_best_of_three(database, monkeypatch) -> None:
    # The scripted seats play at machine speed, over 20 actions a second: past the frame
    # budget a connection has for a person (frame_rate), which is not what is tested here.
    server = ThreadServer(Settings(database_url=database.url, bot_delay_seconds=0.0,
                                   sweep_interval_seconds=0.05, frame_rate=0)).start()
    a = b = None
    try:
        async with httpx.AsyncClient(base_url=server.http, timeout=10) as http:
            anna = (await http.post("/api/players", json={"name": "Anna"})).json()
            bo = (await http.post("/api/players", json={"name": "Bo"})).json()
            a = await Client.connect(server.ws, name="Anna", player=anna)
            b = await Client.connect(server.ws, name="Bo", player=bo)
            made = await a.create_room({"players": 2}, room={"rated": True, "match": 3})
            room = made["room"]
            assert made["room_settings"]["rated"] and made["room_settings"]["match"] == 3
            await a.join(room, 0)
            await b.join(room, 1)

            scores: list[dict[str, Any]] = []
            for game in range(1, 4):
                await a.wait_until(lambda c, g=game: c.view is not None
                                   and c.view["game_number"] == g
                                   and c.view["phase"] != "game_over", 10)
                await asyncio.wait_for(asyncio.gather(
                    play_seat(a, random.Random(10 * game)),
                    play_seat(b, random.Random(10 * game + 1))), 120)
                for c in (a, b):  # both see the match score between games
                    await c.wait_until(lambda c, g=game: len(c.view["match"]["games"]) == g, 5)
                seen = [e for f in a.frames if f["type"] == "update" for e in f["events"]
                        if e["type"] == "match_score"]
                assert len(seen) == game
                scores.append(seen[-1])
                match = a.view["match"]
                assert b.view["match"] == match
                if match["over"]:
                    break
                # Between games: no rating yet — the match is what is rated.
                mine = PlayerRatings.model_validate(
                    (await http.get(f"/api/players/{anna['id']}/ratings")).json())
                assert mine.ratings == [] and mine.history == []
                await a.act({"type": "rematch"})
                await b.act({"type": "rematch"})
            assert match["over"] and max(match["wins"]) == 2
            assert 2 <= len(match["games"]) <= 3 and match["number"] == 1
            over = [e for f in a.frames if f["type"] == "update" for e in f["events"]
                    if e["type"] == "match_over"]
            assert len(over) == 1 and over[0]["winner"] in (0, 1)
            winner, loser = (anna, bo) if over[0]["winner"] == 0 else (bo, anna)

            # The archive rates the match once: one change each, the winner up.
            found: dict[str, PlayerRatings] = {}
            for _ in range(200):
                found = {p["id"]: PlayerRatings.model_validate(
                    (await http.get(f"/api/players/{p['id']}/ratings")).json())
                    for p in (anna, bo)}
                if all(r.ratings for r in found.values()):
                    break
                await asyncio.sleep(0.05)
            for who in (anna, bo):
                [rating] = found[who["id"]].ratings
                assert rating.table_kind == "2" and rating.games == 1
                assert rating.provisional
                assert len(found[who["id"]].history) == 1
            up, down = found[winner["id"]], found[loser["id"]]
            # The archive keeps the match with its games.
            decider = ArchivedGameBody.model_validate(
                (await http.get(f"/api/games/{up.history[0].game}")).json())
            assert decider.match is not None and decider.match.over
            assert decider.match.id == up.history[0].source_id
            assert decider.match.game_in_match == decider.match.games_played == len(
                match["games"])
            assert decider.match.wins == match["wins"] and decider.match.best_of == 3
            assert decider.match.points == match["points"]
            assert up.ratings[0].wins == 1 and down.ratings[0].wins == 0
            assert up.history[0].after > up.history[0].before
            assert down.history[0].after < down.history[0].before
            assert up.ratings[0].rating > down.ratings[0].rating

            # On the leaderboard of two players: each finds their own new rating there, not
            # ranked yet (1 match of the 10 the board needs) ...
            for who, rating in ((winner, up), (loser, down)):
                mine = Leaderboard.model_validate((await http.get(
                    "/api/leaderboards/2", params={"around": who["id"]})).json())
                assert mine.top == [] and mine.around is None and mine.min_games == 10
                assert mine.me is not None and mine.me.rank is None
                assert (mine.me.player, mine.me.rating, mine.me.games) == (
                    who["id"], rating.ratings[0].rating, 1)
            # ... and ranked, the winner first, where one match is enough for the board.
            for module in (board, counts, ratings_http):
                monkeypatch.setattr(module, "MIN_GAMES", 1)
            async with database.begin() as conn:  # the counts as they would be at 1
                await conn.execute(rating_board_counts.delete())
                await conn.execute(rating_board_counts.insert().from_select(
                    ["table_kind", "display", "players"],
                    select(ratings.c.table_kind, ratings.c.display, func.count())
                    .group_by(ratings.c.table_kind, ratings.c.display)))
            places = Leaderboard.model_validate(
                (await http.get("/api/leaderboards/2", params={"around": loser["id"]})).json())
            assert [e.player for e in places.top] == [winner["id"], loser["id"]]
            assert [e.name for e in places.top] == [winner["name"], loser["name"]]
            assert places.me is not None and places.me.rank == 2
            assert [e.rating for e in places.top] == [up.ratings[0].rating,
                                                     down.ratings[0].rating]

            # A rematch after the match starts a new one; nothing is rated again meanwhile.
            await a.act({"type": "rematch"})
            await b.act({"type": "rematch"})
            await a.wait_until(lambda c: c.view["match"]["number"] == 2
                               and not c.view["match"]["games"]
                               and c.view["phase"] != "game_over", 10)
            again = PlayerRatings.model_validate(
                (await http.get(f"/api/players/{anna['id']}/ratings")).json())
            assert again.ratings[0].games == 1 and len(again.history) == 1
            assert found[anna["id"]].abandoned == 0 and found[bo["id"]].abandoned == 0
    finally:
        for c in (a, b):
            if c is not None:
                await c.close()
        server.stop()
