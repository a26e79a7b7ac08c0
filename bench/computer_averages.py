"""The computer's averages from the archive, to hold against published ones (issue 18).

Plays ``--games`` 2-player games to 121 between two ``standard`` computer players through
the server's own room service, sweeper, computer seats and archiver (no pauses), into a
fresh SQLite archive; gives the two seats of every game to two players (seat 0 to one, seat
1 to the other: what a seat taken with a player records), and reads both profiles with the
server's own statistics (``server.history.stats``): average hand and crib, points per deal
as dealer and as pone. From the repository root::

    python bench/computer_averages.py --games 200

Published figures for good 2-player play: a hand averages about 4.7, a deal brings the
dealer about 16 points and the pone about 10 (docs/performance.md, "History and
statistics").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sqlalchemy import func, select, update  # noqa: E402

from server.archive.worker import Archiver  # noqa: E402
from server.broker import MemoryBroker  # noqa: E402
from server.computer_seats import ComputerSeats  # noqa: E402
from server.database import Database  # noqa: E402
from server.database.schema import game_seats, games, players  # noqa: E402
from server.history.stats import player_statistics  # noqa: E402
from server.rooms import RoomService  # noqa: E402
from server.settings import Settings  # noqa: E402
from server.store.memory import MemoryStore  # noqa: E402
from server.timers import Sweeper  # noqa: E402


async def run(n: int, parallel: int) -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="cribbage-averages-"))
    db = Database(f"sqlite+aiosqlite:///{folder / 'games.sqlite3'}")
    await db.migrate()
    settings = Settings(bot_delay_seconds=0.0, sweep_interval_seconds=0.005,
                        deadline_lease_seconds=5.0)
    store = MemoryStore(MemoryBroker())
    service = RoomService(store, settings)
    sweeper = Sweeper(store, service, settings)
    ComputerSeats(service, sweeper)
    archiver = Archiver(service, sweeper, db, settings)
    started = time.perf_counter()
    made = 0

    async def count() -> int:
        async with db.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(games))).scalar())

    while made < min(parallel, n):
        await service.create_room({"players": 2, "target": 121},
                                  computers={0: "standard", 1: "standard"})
        made += 1
    done = 0
    while done < n:
        await sweeper.sweep_once()
        await asyncio.sleep(0)
        now = await count()
        while made < n and made - now < parallel:
            await service.create_room({"players": 2, "target": 121},
                                      computers={0: "standard", 1: "standard"})
            made += 1
        done = now
    seconds = time.perf_counter() - started
    await sweeper.stop()
    await archiver.stop()
    async with db.begin() as conn:
        for pid in ("seat0", "seat1"):
            await conn.execute(players.insert().values(id=pid, created_at=datetime.now(UTC)))
        for seat in (0, 1):
            await conn.execute(update(game_seats).where(game_seats.c.seat == seat).values(
                player_id=f"seat{seat}"))
    stats = [await player_statistics(db, p) for p in ("seat0", "seat1")]
    await db.close()

    def both(path: tuple[str, ...]) -> float:
        totals = [0, 0]
        for s in stats:
            part = s
            for key in path[:-1]:
                part = part[key]
            totals[0] += part[path[-1]]
            totals[1] += s[path[0]]["deals" if path[0] in ("dealer", "pone") else "counted"]
        return round(totals[0] / totals[1], 2)

    return {
        "games": n, "seconds": round(seconds, 1),
        "hand_average": both(("hand", "total")),
        "crib_average": both(("crib", "total")),
        "dealer_per_deal": both(("dealer", "points", "total")),
        "pone_per_deal": both(("pone", "points", "total")),
        "dealer_split": {k: both(("dealer", "points", k)) for k in ("pegging", "hand", "crib",
                                                                    "heels")},
        "pone_split": {k: both(("pone", "points", k)) for k in ("pegging", "hand")},
        "wins": [s["games"]["won"] for s in stats],
    }


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=20, help="rooms playing at once")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out = asyncio.run(run(args.games, args.parallel))
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
