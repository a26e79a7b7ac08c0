"""Archive throughput: ended games written into the database per second (issue 18).

Plays ``--distinct`` whole games with the engine (random legal moves, 2 to 4 players,
rematch-free), turns each into the archive's rows exactly as a server does
(``server.archive.rows.game_rows`` from a room log and an outbox payload), then writes
``--games`` of them (fresh room ids, so every write is a new game) through
``server.archive.writer.write_game`` — the server's one transaction per game — with 1 and
with ``--writers`` concurrent writers, into a fresh PostgreSQL database (made and dropped
here) and a fresh SQLite file. From the repository root::

    python bench/archive.py                     # PostgreSQL on 127.0.0.1:5432 and SQLite
    python bench/archive.py --games 2000 --writers 8
    python bench/archive.py --postgres postgresql://postgres@127.0.0.1:5432 --no-sqlite

Prints games/s and the mean bytes of a game's log; ``--json PATH`` writes them too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402

import engine  # noqa: E402
from engine import rng  # noqa: E402
from protocol import jsontext  # noqa: E402
from server.archive.outbox import game_id  # noqa: E402
from server.archive.rows import game_rows  # noqa: E402
from server.archive.writer import write_game  # noqa: E402
from server.database import Database  # noqa: E402

TABLES = [(2, False), (2, False), (3, False), (4, False), (4, True)]


def play(seed: int) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """One whole game: its options, its room log entries and the room seed."""
    rnd = random.Random(seed)
    players, partnerships = rnd.choice(TABLES)
    options = engine.GameOptions(players=players, partnerships=partnerships,
                                 target=rnd.choice((61, 121)), muggins=rnd.random() < 0.3,
                                 backup10=rnd.random() < 0.3)
    room_seed = f"{rnd.getrandbits(128):032x}"
    state, events = engine.new_game(options, room_seed)
    seats = [{"type": "seat_taken", "seat": s, "name": f"P{s}"} for s in range(players)]
    entries = [{"v": 1, "seat": players - 1, "join": "P", "events": seats + events}]
    while state.phase != "game_over":
        moves = [(s, a) for s in [None, *range(players)] for a in engine.legal_actions(state, s)]
        seat, action = rnd.choice(moves)
        state, events = engine.apply(state, seat, action)
        entries.append({"v": len(entries) + 1, "seat": seat, "id": f"a{len(entries)}",
                        "action": action, "events": events})
    return options.effective().to_dict(), entries, room_seed


def rows_for(game: tuple[dict, list, str], n: int) -> dict[str, Any]:
    options, entries, room_seed = game
    room = f"bench{n:09d}"[-10:]
    created = 1_800_000_000.0 + n
    players = options["players"]
    payload = {
        "game": 1, "id": game_id(room, created, 1), "status": "finished",
        "room_created": created, "first": 1, "last": len(entries), "started": created,
        "ended": created + 600, "options": options, "settings": {"hints": True},
        "seats": [{"seat": s, "name": f"P{s}", "kind": "human", "level": None,
                   "standin": False, "player": None} for s in range(players)],
        "game_seed": rng.game_seed(room_seed, 1).hex(),
    }
    return game_rows(room, payload, entries, time.time())


async def measure(db: Database, rows: list[dict[str, Any]], writers: int) -> float:
    """Games per second writing ``rows`` with ``writers`` concurrent writers."""
    queue = list(reversed(rows))

    async def writer() -> None:
        while queue:
            assert await write_game(db, queue.pop())

    started = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    return len(rows) / (time.perf_counter() - started)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    t = time.perf_counter()
    games = [play(args.seed + i) for i in range(args.distinct)]
    print(f"played {len(games)} games in {time.perf_counter() - t:.1f} s", flush=True)
    log_bytes = sum(len(jsontext.dumps(g[1])) for g in games) / len(games)
    out: dict[str, Any] = {"games": args.games, "writers": args.writers,
                           "mean_log_bytes": round(log_bytes)}
    targets: list[tuple[str, str, Any]] = []
    name = f"cribbage_bench_{secrets.token_hex(4)}"
    if args.postgres:
        admin = await asyncpg.connect(f"{args.postgres}/postgres")
        await admin.execute(f'CREATE DATABASE "{name}"')
        targets.append(("postgresql",
                        f"postgresql+asyncpg://{args.postgres.split('://', 1)[1]}/{name}",
                        admin))
    folder = tempfile.TemporaryDirectory()
    if args.sqlite:
        targets.append(("sqlite", f"sqlite+aiosqlite:///{folder.name}/bench.sqlite3", None))
    base = 0
    try:
        for kind, url, _ in targets:
            db = Database(url, pool_size=max(5, args.writers))
            await db.migrate()
            for writers in (1, args.writers):
                batch = [rows_for(games[i % len(games)], base + i) for i in range(args.games)]
                base += args.games
                rate = await measure(db, batch, writers)
                out[f"{kind}_{writers}_writers_games_per_s"] = round(rate, 1)
                print(f"{kind}: {writers} writer(s): {rate:.0f} games/s", flush=True)
            await db.close()
    finally:
        for _kind, _, admin in targets:
            if admin is not None:
                await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                await admin.close()
        folder.cleanup()
    return out


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=1000, help="games written per measurement")
    p.add_argument("--distinct", type=int, default=100, help="distinct games played")
    p.add_argument("--writers", type=int, default=4, help="concurrent writers")
    p.add_argument("--seed", type=int, default=18)
    p.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432",
                   help="a PostgreSQL server (no database name); '' to skip")
    p.add_argument("--no-sqlite", dest="sqlite", action="store_false")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args(argv)
    out = asyncio.run(run(args))
    print(json.dumps(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
