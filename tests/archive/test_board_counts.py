"""The leaderboard's counts per shown number (``rating_board_counts``,
``server.ratings.counts``), on SQLite and on PostgreSQL: after any sequence of rated games
(every table kind, players and computer seats, ties in the result) and deleted players,
starting from ratings near the board's minimum (``MIN_GAMES``) with the counts rebuilt by
``counts.REBUILD``, every count equals a fresh ``GROUP BY`` of the board and every player's
rank (``board.around``, ``board.player_ratings``) equals its position in the whole ordered
board; and games written concurrently for the same players (PostgreSQL's row locks) leave
the counts exact, without a deadlock.
"""

from __future__ import annotations

import asyncio
import secrets
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from rating_payloads import KINDS, add_players, payload, sides_of, write
from sqlalchemy import delete, func, select

from server.database.schema import rating_board_counts, ratings
from server.players.store import PlayerStore
from server.ratings import board, counts, model

POOL = 6
"""Players of one example."""


def _ids() -> list[str]:
    tag = "".join(secrets.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
    return [f"p{tag}{'abcdefg'[i]}" for i in range(POOL)]


async def _seed(db: Any, people: list[str], start: list[tuple[str, int, int]]) -> None:
    """The players, a rating row per ``(kind, games, sigma step)`` of ``start`` (player i
    gets ``start[i]``, if any), and the counts rebuilt from scratch."""
    await add_players(db, *people)
    now = datetime.now(UTC)
    async with db.begin() as conn:
        for pid, (kind, games, step) in zip(people, start, strict=False):
            sigma = 2.0 + step  # few distinct numbers: ties on the board
            await conn.execute(ratings.insert().values(
                player_id=pid, table_kind=kind, mu=25.0, sigma=sigma,
                display=model.display(25.0, sigma), games=games, wins=games // 2,
                updated_at=now))
        await conn.execute(delete(rating_board_counts))
        await conn.execute(counts.REBUILD)


async def _check(db: Any, people: list[str]) -> None:
    """The counts equal a fresh GROUP BY; each of ``people``'s ranks equals its place in the
    board ordered in Python (number descending, then player id)."""
    async with db.connect() as conn:
        kept = {(r[0], r[1]): r[2] for r in await conn.execute(select(
            rating_board_counts.c.table_kind, rating_board_counts.c.display,
            rating_board_counts.c.players))}
        fresh = {(r[0], r[1]): r[2] for r in await conn.execute(
            select(ratings.c.table_kind, ratings.c.display, func.count())
            .where(ratings.c.games >= counts.MIN_GAMES)
            .group_by(ratings.c.table_kind, ratings.c.display))}
        rows = (await conn.execute(select(ratings))).mappings().all()
    assert kept == fresh
    for kind in KINDS:
        ordered = sorted((r for r in rows if r["table_kind"] == kind
                          and r["games"] >= counts.MIN_GAMES),
                         key=lambda r: (-r["display"], r["player_id"]))
        place = {r["player_id"]: i + 1 for i, r in enumerate(ordered)}
        for pid in people:
            me, near = await board.around(db, kind, pid)
            if pid not in place:  # off the board: their own entry, not ranked, if rated
                rated = any(r["player_id"] == pid and r["table_kind"] == kind for r in rows)
                assert near is None
                assert (me is None) if not rated else (me["rank"] is None
                                                       and me["player"] == pid)
                continue
            assert me is not None and me["rank"] == place[pid]
            assert near is not None
            for entry in near:
                assert entry["rank"] == place[entry["player"]]
            mine = await board.player_ratings(db, pid, provisional=10, history=1)
            [found] = [r for r in mine["ratings"] if r["table_kind"] == kind]
            assert found["rank"] == place[pid]


GAME = st.fixed_dictionaries({
    "kind": st.sampled_from(list(KINDS)),
    "order": st.permutations(range(POOL)),
    "computers": st.lists(st.booleans(), min_size=4, max_size=4),
    "scores": st.lists(st.sampled_from([100, 90, 60]), min_size=4, max_size=4),
    "winner": st.integers(min_value=0, max_value=3),
})
STEP = st.one_of(GAME, st.fixed_dictionaries({"delete": st.integers(0, POOL - 1)}))
START = st.lists(st.tuples(st.sampled_from(list(KINDS)),
                           st.integers(counts.MIN_GAMES - 2, counts.MIN_GAMES + 1),
                           st.integers(0, 2)), max_size=POOL)


@hsettings(max_examples=25, deadline=None,
           suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(start=START, steps=st.lists(STEP, min_size=1, max_size=8))
async def test_the_counts_and_ranks_stay_exact(database, start, steps) -> None:
    """Property: whatever rated games end and whoever is deleted, the counts equal the
    board's GROUP BY and every rank is the player's place in the ordered board."""
    people = _ids()
    await _seed(database, people, start)
    await _check(database, people)
    room = "r" + secrets.token_hex(5)
    number = 0
    for step in steps:
        if "delete" in step:
            await PlayerStore(database).delete(people[step["delete"]])
        else:
            kind = step["kind"]
            n = KINDS[kind][0]
            sides = len(set(sides_of(kind)))
            seats = [{"kind": "computer", "level": "standard"} if step["computers"][s]
                     else {"player": people[step["order"][s]]} for s in range(n)]
            scores = [121 if s == step["winner"] % sides else step["scores"][s]
                      for s in range(sides)]
            number += 1
            body, entries = payload(room, number, kind, seats, scores, ended=1e9 + number)
            assert await write(database, room, body, entries)
        await _check(database, people)


async def test_concurrent_games_of_the_same_players_keep_the_counts(database) -> None:
    """Eight games among four players, each at the board's minimum less one, written at
    once (on PostgreSQL each transaction locks its rating rows, then its count rows, in one
    order; a deadlock would fail a write): all count, and the counts stay exact."""
    people = _ids()[:4]
    await _seed(database, people, [("2", counts.MIN_GAMES - 1, i % 2) for i in range(4)])
    writes = []
    for g in range(8):
        room = "r" + secrets.token_hex(5)
        a, b = people[g % 4], people[(g + 1 + g // 4) % 4]
        writes.append(write(database, room, *payload(
            room, 1, "2", [{"player": a}, {"player": b}], [121, 100], ended=1e9 + g)))
    assert await asyncio.gather(*writes) == [True] * 8
    async with database.connect() as conn:
        played = dict((await conn.execute(select(ratings.c.player_id, ratings.c.games))).all())
    assert played == {p: counts.MIN_GAMES - 1 + 4 for p in people}
    await _check(database, people)
