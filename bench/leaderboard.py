"""The leaderboard and "around me" at 1,000,000 rated players in PostgreSQL (issue 19).

Makes a fresh PostgreSQL database (the server's own migrations; dropped at the end unless
``--keep``), and generates ``--players`` players in SQL (``generate_series``, one statement
per table: no round trip per row), each with a rating at a table kind (2: 55 %, 2x2: 20 %,
3: 15 %, 4: 10 %), mu normal around 25 (sd 4), sigma from 8.3 falling with the games
played (1 to about 1,000, most few), the number shown computed as the server does
(``server.ratings.model.display``); fills the board's counts per shown number
(``rating_board_counts``, ``server.ratings.counts``) with one ``INSERT ... SELECT ... GROUP
BY``; then ``VACUUM ANALYZE`` (what autovacuum does after a load: the board's reads are
index-only scans). It times:

* ``top``: the top 100 of the largest board (``server.ratings.board.top``);
* ``around``: a player's place and neighbours (``server.ratings.board.around``) for
  ``--samples`` players drawn uniformly from the board and its last player (the rank sums
  the counts of the numbers above and counts the ties ahead);

each through the server's own code on its database layer (SQL + SQLAlchemy), then through
the HTTP route of a real server process (``GET /api/leaderboards/2`` and ``?around=``,
uvicorn, its read budget off), p50/p99/max in ms. From the repository root::

    python bench/leaderboard.py --players 1000000

``--json PATH`` writes the figures too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402
import httpx  # noqa: E402

from server.database import Database  # noqa: E402
from server.ratings import board  # noqa: E402
from server.ratings.counts import MIN_GAMES  # noqa: E402
from server.ratings.model import DISPLAY_BASE, DISPLAY_SCALE  # noqa: E402

POSTGRES = os.environ.get("CRIBBAGE_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432")

FILL = f"""
INSERT INTO players (id, created_at, name, language, private)
SELECT 'p' || translate(lpad(g::text, 15, '0'), '0123456789', 'abcdefghij'), now(),
       'P' || g, 'en', g % 50 = 0
FROM generate_series(1, $1::int) AS g;
INSERT INTO ratings (player_id, table_kind, mu, sigma, display, games, wins, updated_at)
SELECT id, kind, mu, sigma,
       greatest(0, round({DISPLAY_BASE} + {DISPLAY_SCALE} * (mu - 3 * sigma)))::int,
       games, (games * 0.4)::int, now()
FROM (
  SELECT 'p' || translate(lpad(g::text, 15, '0'), '0123456789', 'abcdefghij') AS id,
         CASE WHEN r < 0.55 THEN '2' WHEN r < 0.75 THEN '2x2'
              WHEN r < 0.90 THEN '3' ELSE '4' END AS kind,
         25 + 4 * sqrt(-2 * ln(1 - u1)) * cos(2 * pi() * u2) AS mu,
         greatest(0.9, 8.33 / sqrt(1 + games / 4.0)) AS sigma, games
  FROM (SELECT g, random() AS r, random() AS u1, random() AS u2,
               (1 + floor(exp(random() * ln(1000))))::int AS games
        FROM generate_series(1, $1::int) AS g) s
) t;
INSERT INTO rating_board_counts (table_kind, display, players)
SELECT table_kind, display, count(*) FROM ratings WHERE games >= {MIN_GAMES}
GROUP BY table_kind, display;
"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _figures(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {"n": len(times), "p50": round(statistics.median(times), 2),
            "p99": round(times[min(len(times) - 1, int(len(times) * 0.99))], 2),
            "max": round(times[-1], 2)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1_000_000)
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args()
    name = f"cribbage_bench_board_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(f"{POSTGRES}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    url = f"postgresql+asyncpg://{POSTGRES.split('://', 1)[1]}/{name}"
    report: dict[str, Any] = {"players": args.players}
    server = None
    try:
        db = Database(url)
        await db.migrate()
        raw = await asyncpg.connect(f"{POSTGRES}/{name}")
        started = time.perf_counter()
        for statement in FILL.strip().split(";\n"):
            if statement.strip():
                await raw.execute(statement, *([args.players] if "$1" in statement else []))
        await raw.execute("VACUUM ANALYZE players")
        await raw.execute("VACUUM ANALYZE ratings")
        await raw.execute("VACUUM ANALYZE rating_board_counts")
        report["load_seconds"] = round(time.perf_counter() - started, 1)
        least = MIN_GAMES
        report["board_2"] = await raw.fetchval(
            "SELECT count(*) FROM ratings WHERE table_kind = '2' AND games >= $1", least)
        sample = [r["player_id"] for r in await raw.fetch(
            "SELECT player_id FROM ratings TABLESAMPLE BERNOULLI (1) WHERE table_kind = '2' "
            "AND games >= $1 LIMIT $2", least, args.samples)]
        bottom = await raw.fetchval(
            "SELECT player_id FROM ratings WHERE table_kind = '2' AND games >= $1 "
            "ORDER BY display, player_id DESC LIMIT 1", least)
        sample.append(bottom)
        report["counts_rows_2"] = await raw.fetchval(
            "SELECT count(*) FROM rating_board_counts WHERE table_kind = '2'")
        report["counts_exact"] = await raw.fetchval(
            "SELECT NOT EXISTS (SELECT table_kind, display, count(*) FROM ratings WHERE "
            "games >= $1 GROUP BY table_kind, display EXCEPT SELECT table_kind, display, "
            "players FROM rating_board_counts) AND (SELECT count(*) FROM rating_board_counts)"
            " = (SELECT count(DISTINCT (table_kind, display)) FROM ratings WHERE games >= $1)",
            least)
        mine = await raw.fetchval("SELECT display FROM ratings WHERE player_id = $1 AND "
                                  "table_kind = '2'", bottom)
        # the old way (count everyone above) and the new (sum the counts + the ties)
        plan = await raw.fetchval(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM ratings WHERE table_kind = "
            "'2' AND games >= $1 AND display > $2", least, mine)
        report["bottom_rank_scan_ms"] = round(json.loads(plan)[0]["Execution Time"], 2)
        plan = await raw.fetchval(
            "EXPLAIN (ANALYZE, FORMAT JSON) SELECT (SELECT coalesce(sum(players), 0) FROM "
            "rating_board_counts WHERE table_kind = '2' AND display > $2) + (SELECT count(*) "
            "FROM ratings WHERE table_kind = '2' AND games >= $1 AND display = $2 AND "
            "player_id < $3)", least, mine, bottom)
        report["bottom_rank_counts_ms"] = round(json.loads(plan)[0]["Execution Time"], 2)
        await raw.close()
        tops, arounds = [], []
        for _ in range(50):
            t = time.perf_counter()
            await board.top(db, "2")
            tops.append((time.perf_counter() - t) * 1000)
        for player in sample:
            t = time.perf_counter()
            me, _ = await board.around(db, "2", player)
            arounds.append((time.perf_counter() - t) * 1000)
            assert me is not None
        report["sql"] = {"top": _figures(tops), "around": _figures(arounds)}
        await db.close()
        port = _port()
        env = {**os.environ, "PYTHONPATH": str(ROOT),
               "CRIBBAGE_LEADERBOARD_READS_PER_MINUTE": "0",
               "CRIBBAGE_DATABASE_URL": url.replace("+asyncpg", "")}
        server = subprocess.Popen([sys.executable, "-m", "server", "--port", str(port)],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            for _ in range(100):
                try:
                    if (await c.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
            await c.get("/api/leaderboards/2")  # the first request connects to the database
            tops, arounds = [], []
            for _ in range(50):
                t = time.perf_counter()
                r = await c.get("/api/leaderboards/2")
                tops.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200 and len(r.json()["top"]) == 100
            for player in sample:
                t = time.perf_counter()
                r = await c.get("/api/leaderboards/2", params={"around": player})
                arounds.append((time.perf_counter() - t) * 1000)
                assert r.status_code == 200 and r.json()["me"]["player"] == player
        report["http"] = {"top": _figures(tops), "around": _figures(arounds)}
    finally:
        if server is not None:
            server.terminate()
            server.wait(10)
        if not args.keep:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(main())
