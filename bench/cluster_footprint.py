"""What rooms cost a Redis Cluster: memory per finished room, commands per room change, and
the idle cost of the sweepers' bucket scans (inputs of docs/scaling.md).

Starts a local cluster (three primaries, a replica each; ``tests/server/crib_cluster.py``)
and one server process in cluster mode, lets it idle (the sweeper and upkeep only), then
plays N rooms of two computer seats to the end, and reads ``INFO`` of the primaries before
and after. Everything it starts is stopped at the end::

    python bench/cluster_footprint.py             # 100 rooms, 10 s idle
    python bench/cluster_footprint.py --rooms 300 --idle 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "server"))

from crib_cluster import LocalCluster  # noqa: E402
from crib_wire import ProcessServer  # noqa: E402

from server.app import redis_cluster_client  # noqa: E402
from server.settings import Settings  # noqa: E402
from server.store.cluster import ClusterRedisStore  # noqa: E402


def info(port: int) -> dict[str, int]:
    """used_memory, total_commands_processed and calls per command of one node."""
    out = subprocess.run(["redis-cli", "-p", str(port), "info", "all"], capture_output=True,
                         text=True, check=True).stdout
    values = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    result = {"memory": int(values["used_memory"]),
              "commands": int(values["total_commands_processed"])}
    for key, value in values.items():
        if key.startswith("cmdstat_"):
            result[key.removeprefix("cmdstat_")] = int(value.split(",")[0].split("=")[1])
    return result


def totals(ports: list[int]) -> dict[str, int]:
    each = [info(p) for p in ports]
    return {k: sum(e.get(k, 0) for e in each) for k in set().union(*each)}


sizes: list[int] = []


async def play(server: ProcessServer, rooms: int, url: str) -> tuple[list[str], int]:
    """Create ``rooms`` rooms of two computer seats; wait until every game is over.
    Returns the room ids and the sum of their final versions (accepted changes)."""
    async with httpx.AsyncClient() as http:
        ids = []
        for _ in range(rooms):
            made = await http.post(f"{server.http}/api/rooms",
                                   json={"computers": {"0": "standard", "1": "standard"}})
            made.raise_for_status()
            ids.append(made.json()["room"])
    store = ClusterRedisStore(redis_cluster_client(Settings(redis_url=url, redis_cluster=True,
                                                            key_prefix="bench:")), "bench:")
    try:
        while True:
            records = [(await store.load(r))[0] for r in ids]
            if all(r is not None and r.status == "game_over" for r in records):
                sizes.extend(len(r.to_json()) for r in records if r is not None)
                return ids, sum(r.version for r in records if r is not None)
            await asyncio.sleep(1)
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=100)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle measured")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cluster = LocalCluster(Path(tmp) / "cluster").start()
        server = ProcessServer(cluster.url, "bench:", Path(tmp) / "server.log",
                               CRIBBAGE_REDIS_CLUSTER="1", CRIBBAGE_BOT_DELAY_SECONDS="0")
        try:
            server.start()
            primaries = list(cluster.primaries())
            time.sleep(2)
            before = totals(primaries)
            time.sleep(args.idle)
            idle = totals(primaries)
            started = time.monotonic()
            ids, changes = asyncio.run(play(server, args.rooms, cluster.url))
            took = time.monotonic() - started
            after = totals(primaries)
        finally:
            server.stop()
            cluster.stop()
    idle_rate = (idle["commands"] - before["commands"]) / args.idle
    game_commands = after["commands"] - idle["commands"] - idle_rate * took
    result = {
        "rooms": len(ids), "room_changes": changes,
        "changes_per_room": round(changes / len(ids), 1),
        "idle_commands_per_s_one_process": round(idle_rate),
        "commands_per_change": round(game_commands / changes, 2),
        "memory_per_finished_room_bytes": round(
            (after["memory"] - idle["memory"]) / len(ids)),
        "games_took_s": round(took, 1),
        "record_json_bytes_at_game_over": round(sum(sizes) / len(sizes)),
        "commands_per_change_by_command": {
            k: round((after.get(k, 0) - idle.get(k, 0)) / changes, 2)
            for k in sorted(after) if k not in ("memory", "commands")
            and (after.get(k, 0) - idle.get(k, 0)) / changes >= 0.01},
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
