"""Profile and history queries at scale: p50/p99 over many players (issue 18 point 4).

Makes a fresh PostgreSQL database (migrated by the server's own migrations, dropped at the
end unless ``--keep``), fills it with ``--games`` archived games — ``games`` and
``game_seats`` rows through ``COPY`` (the tables the queries read; no logs nor deals) — with
realistic distributions: ``--players`` players whose activity falls off as 1/sqrt(rank) (the
busiest play a few thousand games, most a few dozen), 2-, 3-, 4-player and partnership
tables (65/10/10/15 %), a computer opponent at about half the 2-player tables, 121 or 61,
variants, 3 % abandoned, a year of end times, summaries of plausible size. Then it times,
for ``--samples`` players (the ten busiest and a uniform sample of the rest), the server's
own code (``server.history``) as the HTTP routes call it:

* ``profile``: the player's row, then ``player_statistics`` (GET /api/players/{id});
* ``first_page``: the row, then ``player_games`` without a cursor (GET .../games);
* ``deep_page``: the same with the cursor of the player's oldest games (their last page).

Each is timed twice: around the server's own call (what a request waits for, the client
side of the machine included: on a shared machine its tail is the other processes'), and
as PostgreSQL reports executing the same statements (``EXPLAIN ANALYZE``, planning
included), which the load of the machine moves much less.

From the repository root::

    python bench/history.py                     # 20,000 games: a smoke-sized run
    python bench/history.py --games 1000000     # the figure in docs/performance.md

Prints the load time and p50/p99/max per query in ms; ``--json PATH`` writes them too.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import json
import random
import secrets
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
from sqlalchemy import select  # noqa: E402
from sqlalchemy.dialects import postgresql  # noqa: E402

from server.database import Database  # noqa: E402
from server.database.schema import game_seats, players  # noqa: E402
from server.history import stats  # noqa: E402
from server.history.games import (  # noqa: E402
    make_cursor,
    page_query,
    player_games,
    seats_query,
)
from server.history.stats import player_statistics  # noqa: E402

TABLES = [("2", 2, 65), ("3", 3, 10), ("4", 4, 10), ("2x2", 4, 15)]
START = datetime(2026, 1, 1, tzinfo=UTC)
CHUNK = 50_000

GAME_COLUMNS = (
    "id", "room_id", "room_created", "game_number", "status", "players", "table_kind",
    "target", "muggins", "lowball", "backup10", "options", "room_settings", "started_at",
    "ended_at", "archived_at", "first_version", "last_version", "deals", "winner_side",
    "draw", "scores", "result", "shuffle", "game_seed", "game_commitment", "cut_seeds",
)
SEAT_COLUMNS = (
    "game_id", "seat", "side", "player_id", "kind", "level", "name", "standin",
    "final_score", "won", "skunk", "skunks_given", "double_skunks_given", "drawn", "status",
    "table_kind", "target", "muggins", "lowball", "backup10", "ended_at", "deals_dealt",
    "deals_pone", "dealer_pegging", "dealer_hand", "dealer_crib", "dealer_heels",
    "pone_pegging", "pone_hand", "hands_counted", "hand_total", "cribs_counted",
    "crib_total", "backup_moves", "backup_holes", "muggins_taken", "muggins_lost",
    "penalty_points",
)


def player_ids(n: int) -> list[str]:
    """``n`` ids of the players' shape (16 of ``[a-z2-7]``)."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    rnd = random.Random(7)
    return ["".join(rnd.choice(alphabet) for _ in range(16)) for _ in range(n)]


def generate(games: int, ids: list[str], seed: int, first: int = 0, count: int | None = None
             ) -> tuple[list[tuple], list[tuple]]:
    """The ``games`` and ``game_seats`` records (COPY order of :data:`GAME_COLUMNS`,
    :data:`SEAT_COLUMNS`) of games ``first`` .. ``first + count`` of ``games``."""
    rnd = random.Random(seed * 1_000_003 + first)
    cum = list(itertools.accumulate(1 / (r + 1) ** 0.5 for r in range(len(ids))))
    total = cum[-1]
    kinds = [k for k, _, w in TABLES for _ in range(w)]
    seats_of = {k: n for k, n, _ in TABLES}
    span = timedelta(days=365).total_seconds()
    game_rows: list[tuple] = []
    seat_rows: list[tuple] = []
    for g in range(first, first + (games - first if count is None else count)):
        kind = rnd.choice(kinds)
        n = seats_of[kind]
        sides = [0, 1, 0, 1] if kind == "2x2" else list(range(n))
        nsides = max(sides) + 1
        target = 121 if rnd.random() < 0.8 else 61
        muggins, lowball, backup10 = (rnd.random() < 0.1, rnd.random() < 0.05,
                                      rnd.random() < 0.08)
        abandoned = rnd.random() < 0.03
        ended = START + timedelta(seconds=span * g / games + rnd.random())
        started = ended - timedelta(minutes=rnd.randint(5, 30))
        deals = max(1, int(rnd.gauss(9 if target == 121 else 5, 1.5)))
        winner = None if abandoned else rnd.randrange(nsides)
        scores = [target if s == winner else rnd.randint(target // 2, target - 1)
                  for s in range(nsides)]
        gid = f"{g:016x}"[-16:].translate(str.maketrans("01", "yz"))
        status = "abandoned" if abandoned else "finished"
        options = {"players": n, "partnerships": kind == "2x2", "target": target,
                   "muggins": muggins, "lowball": lowball, "backup10": backup10}
        game_rows.append((
            gid, secrets.token_hex(5), ended.timestamp() - 3600, 1, status, n, kind, target,
            muggins, lowball, backup10, json.dumps(options), "{}", started, ended, ended,
            1, 200, deals, winner, False, json.dumps(scores),
            None if abandoned else json.dumps({"winner": winner, "scores": scores}),
            "cribbage/v2", "0" * 64, "0" * 64, "[]",
        ))
        computer_opponent = n == 2 and rnd.random() < 0.5
        chosen: set[int] = set()
        for seat in range(n):
            human = not (computer_opponent and seat == 1) and rnd.random() < 0.97
            pid = None
            if human:
                for _ in range(5):
                    k = bisect.bisect(cum, rnd.random() * total)
                    if k not in chosen:
                        chosen.add(k)
                        pid = ids[min(k, len(ids) - 1)]
                        break
            side = sides[seat]
            won = winner is not None and side == winner
            dealt = deals // n + (1 if seat < deals % n else 0)
            pone = deals - dealt
            skunk = "none" if won or abandoned or rnd.random() > 0.06 else "skunk"
            seat_rows.append((
                gid, seat, side, pid, "human" if pid else "computer",
                None if pid else "standard", f"P{seat}" if pid else "Computer", False,
                scores[side], won, skunk, int(won and rnd.random() < 0.06), 0, False,
                status, kind, target, muggins, lowball, backup10, ended, dealt, pone,
                3 * dealt + rnd.randint(0, 3), 8 * dealt, 4 * dealt, rnd.randint(0, 1),
                3 * pone, 8 * pone, deals, 8 * deals + rnd.randint(-3, 3), dealt, 4 * dealt,
                int(backup10 and rnd.random() < 0.3), 0, int(muggins) * rnd.randint(0, 2),
                int(muggins) * rnd.randint(0, 2), 0,
            ))
    return game_rows, seat_rows


async def load(pg: str, name: str, games: int, n_players: int, seed: int
               ) -> tuple[str, list[str], float]:
    """Make database ``name``, migrate it and fill it; its URL, the ids, seconds taken."""
    admin = await asyncpg.connect(f"{pg}/postgres")
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    url = f"postgresql+asyncpg://{pg.split('://', 1)[1]}/{name}"
    db = Database(url)
    await db.migrate()
    await db.close()
    started = time.perf_counter()
    ids = player_ids(n_players)
    conn = await asyncpg.connect(f"{pg}/{name}")
    try:
        now = datetime.now(UTC)
        await conn.copy_records_to_table(
            "players", records=[(pid, now, f"P-{i}", "en", False) for i, pid in enumerate(ids)],
            columns=("id", "created_at", "name", "language", "private"))
        for first in range(0, games, CHUNK):  # (a chunk at a time: memory stays small)
            game_rows, seat_rows = generate(games, ids, seed, first, min(CHUNK, games - first))
            await conn.copy_records_to_table("games", records=game_rows, columns=GAME_COLUMNS)
            await conn.copy_records_to_table("game_seats", records=seat_rows,
                                             columns=SEAT_COLUMNS)
        # what autovacuum does to a table of this size soon after: the statistics, and the
        # visibility map that lets the profile's read be index-only
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return url, ids, time.perf_counter() - started


async def explained_ms(raw: Any, statement: Any) -> float:
    """What PostgreSQL says executing ``statement`` took (``EXPLAIN ANALYZE``: planning and
    execution, in ms), the statement compiled as the server sends it but with its values
    inline."""
    text = str(statement.compile(dialect=postgresql.dialect(),
                                 compile_kwargs={"literal_binds": True}))
    plan = json.loads(await raw.fetchval(f"EXPLAIN (ANALYZE, FORMAT JSON) {text}"))[0]
    return plan["Planning Time"] + plan["Execution Time"]


async def in_database(raw: Any, pid: str, cursor: str | None) -> dict[str, float]:
    """The database's own time for each read's statements (the player's row included)."""
    row = await explained_ms(raw, select(players.c.id, players.c.name, players.c.private,
                                         players.c.deleted_at).where(players.c.id == pid))
    mine = game_seats.c.player_id == pid
    profile = row
    for statement in (stats._GROUPED.where(mine), stats._ABANDONED.where(mine),
                      stats._RESULTS.where(mine)):
        profile += await explained_ms(raw, statement)
    out = {"profile": profile}
    for name, c in (("first_page", None), ("deep_page", cursor)):
        query = page_query(pid, 20, c)
        text = str(query.compile(dialect=postgresql.dialect(),
                                 compile_kwargs={"literal_binds": True}))
        ids = [r["game_id"] for r in await raw.fetch(text)][:20]
        took = row + await explained_ms(raw, query)
        if ids:
            took += await explained_ms(raw, seats_query(ids))
        out[name] = took
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(url: str, ids: list[str], samples: int, seed: int) -> dict[str, Any]:
    """Time the three reads for the busiest ten and a sample of the others."""
    rnd = random.Random(seed)
    chosen = ids[:10] + rnd.sample(ids[10:], min(samples - 10, len(ids) - 10))
    db = Database(url)
    db.migrated = True
    times: dict[str, list[float]] = {"profile": [], "first_page": [], "deep_page": []}
    server: dict[str, list[float]] = {name: [] for name in times}
    most = 0
    row_query = select(players.c.id, players.c.name, players.c.private, players.c.deleted_at)
    raw = await asyncpg.connect(url.replace("postgresql+asyncpg", "postgresql"))
    try:
        for pid in chosen:  # warm the pool and the caches once
            await player_statistics(db, pid)
            break
        for pid in chosen:
            last = await raw.fetchrow(
                "SELECT ended_at, game_id FROM game_seats "
                "WHERE player_id = $1 ORDER BY ended_at, game_id LIMIT 1 OFFSET 20", pid)
            deep = make_cursor(last["ended_at"], last["game_id"]) if last else None
            for name in times:
                cursor = deep if name == "deep_page" else None
                t0 = time.perf_counter()
                async with db.connect() as conn:
                    await conn.execute(row_query.where(players.c.id == pid))
                if name == "profile":
                    await player_statistics(db, pid)
                else:
                    await player_games(db, pid, limit=20, cursor=cursor)
                times[name].append((time.perf_counter() - t0) * 1000)
            for name, took in (await in_database(raw, pid, deep)).items():
                server[name].append(took)
            games = await raw.fetchval("SELECT count(*) FROM game_seats WHERE player_id = $1",
                                       pid)
            most = max(most, games)
    finally:
        await raw.close()
        await db.close()
    return {
        "players_timed": len(chosen), "most_games_of_a_player": most,
        **{name: {"p50_ms": round(statistics.median(v), 2), "p99_ms": round(pct(v, 0.99), 2),
                  "max_ms": round(max(v), 2)} for name, v in times.items()},
        "in_database": {name: {"p50_ms": round(statistics.median(v), 2),
                               "p99_ms": round(pct(v, 0.99), 2), "max_ms": round(max(v), 2)}
                        for name, v in server.items()},
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    if args.database:  # a database an earlier --keep run filled: time it again
        name, seconds = args.database, 0.0
        url = f"postgresql+asyncpg://{args.postgres.split('://', 1)[1]}/{name}"
        ids = player_ids(args.players)
        args.keep = True
    else:
        name = f"cribbage_bench_{secrets.token_hex(4)}"
        url, ids, seconds = await load(args.postgres, name, args.games, args.players,
                                       args.seed)
    try:
        result = await measure(url, ids, args.samples, args.seed)
    finally:
        if not args.keep:
            admin = await asyncpg.connect(f"{args.postgres}/postgres")
            try:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            finally:
                await admin.close()
    return {"games": args.games, "players": args.players, "load_seconds": round(seconds, 1),
            "database": name if args.keep else None, **result}


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20_000)
    parser.add_argument("--players", type=int, default=20_000)
    parser.add_argument("--samples", type=int, default=500,
                        help="players timed (the ten busiest among them)")
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432",
                        help="the PostgreSQL server (no database name)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument("--database", help="time a database a --keep run filled (no load)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    out = asyncio.run(main_async(args))
    print(f"{out['games']:,} games, {out['players']:,} players: loaded in "
          f"{out['load_seconds']} s; {out['players_timed']} players timed (the busiest "
          f"has {out['most_games_of_a_player']:,} games)")
    for title, figures in (("through server.history (client side)", out),
                           ("in the database (EXPLAIN ANALYZE)", out["in_database"])):
        print(f" {title}:")
        for name in ("profile", "first_page", "deep_page"):
            f = figures[name]
            print(f"  {name:<11} p50 {f['p50_ms']:7.2f} ms   p99 {f['p99_ms']:7.2f} ms   "
                  f"max {f['max_ms']:7.2f} ms")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
