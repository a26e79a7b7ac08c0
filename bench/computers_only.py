"""What rooms of computers only cost a person playing an expert computer (issue 22 point 3).

Starts ``python -m server`` (rooms in memory, one computer process, the per-address limits
off) and plays one game as a person against an ``expert`` computer to 121, the person's
moves chosen by the ``standard`` level from its own view after a think of up to
``--think`` seconds (0.5: a bot answering at once would meet the server's 0.1 s sweep at
the same phase every turn). What is timed is **the
person's wait**: from the ack of each of their moves to the next moment they may act (or
game over), less the bot delay for each computer move in between — the time the
computer's decisions and the server took. Phases, in one run of one server:

* ``alone``: the person's game with nothing else on the server;
* ``crowd``: the same after ``--rooms`` rooms of two ``expert`` computers each (``POST
  /api/rooms``, a match of seven: they play on with nobody connected) were made and
  played ``--warmup`` seconds.

The figure is the crowd's wait over the alone wait (median and p90), with the computer
moves the crowd made a second meanwhile (``cribbage_deadlines_fired_total``: they must
still play) and, where the server has them, the computer processes' jobs by urgency.
``--pythonpath`` runs the server of another checkout (``git worktree add /tmp/before
<commit>``), to compare with the server before ``server.workers.priority``. From the
repository root::

    python bench/computers_only.py                     # 150 rooms; about 3 minutes
    python bench/computers_only.py --pythonpath /tmp/before --json /tmp/before.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(BENCH))

from latency import LIMITS, free_port, wait_ready  # noqa: E402

from engine.computer import decide  # noqa: E402
from engine.computer.legal import legal_from_view  # noqa: E402
from protocol.client import Client  # noqa: E402


def _samples(text: str) -> dict[str, float]:
    """The figures of a ``/metrics`` page this bench reads (absent ones left out)."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "cribbage_deadlines_fired_total":
                out["fired"] = s.value
            elif s.name == "cribbage_computer_jobs_total":
                out[f"jobs_{s.labels['urgency']}"] = s.value
    return out


def _pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(len(s) * p / 100))]


async def person_game(ws: str, bot_delay: float, turns: int, think: float) -> list[float]:
    """The person's waits (seconds) over at most ``turns`` of their moves, each move made
    after a think of up to ``think`` seconds (uniform, seeded)."""
    rng = random.Random(7)
    client = await Client.connect(ws, name="person", record=False, validate=False)
    waits: list[float] = []
    try:
        made = await client.create_room({"players": 2, "target": 121},
                                        computers={"1": "expert"})
        await client.join(made["room"], 0)
        await client.wait_until(lambda c: c.view is not None and (
            bool(legal_from_view(c.view)) or c.status == "game_over"), 120)
        while client.status != "game_over" and len(waits) < turns:
            await asyncio.sleep(rng.uniform(0, think))
            legal = legal_from_view(client.view)
            action = decide(client.view, legal, "standard", seed=f"p{client.version}")
            ack = await client.act(action, timeout=120)
            if ack["type"] != "ack":
                raise SystemExit(f"the person's move was refused: {ack}")
            acked, version = time.perf_counter(), client.version
            await client.wait_until(lambda c: c.status == "game_over"
                                    or bool(legal_from_view(c.view)), 300)
            computer_moves = client.version - version
            if computer_moves and client.status != "game_over":
                waits.append(time.perf_counter() - acked - bot_delay * computer_moves)
    finally:
        await client.close()
    return waits


async def _crowd(http: httpx.AsyncClient, rooms: int) -> None:
    """Make ``rooms`` rooms of two expert computers (a match of seven), 16 at a time."""
    sem = asyncio.Semaphore(16)

    async def room() -> None:
        async with sem:
            (await http.post("/api/rooms", json={
                "options": {"players": 2}, "room": {"match": 7},
                "computers": {"0": "expert", "1": "expert"}})).raise_for_status()

    await asyncio.gather(*(room() for _ in range(rooms)))


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    base, ws = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    data = tempfile.mkdtemp(prefix="computers-only-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRIBBAGE_")}
    env.update(LIMITS["off"])
    env.update({"CRIBBAGE_DATA_DIR": data, "CRIBBAGE_COMPUTER_PROCESSES": "1",
                "CRIBBAGE_BOT_DELAY_SECONDS": str(args.bot_delay)})
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    server = subprocess.Popen([sys.executable, "-m", "server", "--port", str(port),
                               "--log-level", "warning"],
                              cwd=args.pythonpath or ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    phases: list[dict[str, Any]] = []
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            await wait_ready(http, "/readyz")
            # The warm-up starts the computer process.
            await person_game(ws, args.bot_delay, 3, args.think)
            for name in ("alone", "crowd"):
                if name == "crowd":
                    await _crowd(http, args.rooms)
                    print(f"  {args.rooms} rooms of computers made", file=sys.stderr,
                          flush=True)
                    await asyncio.sleep(args.warmup)
                m0, t0 = _samples((await http.get("/metrics")).text), time.monotonic()
                waits = await person_game(ws, args.bot_delay, args.turns, args.think)
                m1, t1 = _samples((await http.get("/metrics")).text), time.monotonic()
                span = t1 - t0
                phase = {
                    "phase": name, "turns": len(waits),
                    "wait_p50": statistics.median(waits), "wait_p90": _pct(waits, 90),
                    "wait_max": max(waits),
                    "deadlines_per_second": (m1.get("fired", 0) - m0.get("fired", 0)) / span,
                    "jobs": {k[5:]: m1[k] - m0.get(k, 0) for k in m1 if k.startswith("jobs_")},
                }
                phases.append(phase)
                print(f"  {name}: {len(waits)} waits, median {phase['wait_p50']:.3f} s, "
                      f"p90 {phase['wait_p90']:.3f} s, max {phase['wait_max']:.3f} s; "
                      f"{phase['deadlines_per_second']:.0f} deadlines/s; jobs "
                      f"{phase['jobs'] or '-'}", file=sys.stderr, flush=True)
    finally:
        server.terminate()
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    alone, crowd = phases
    return {"rooms": args.rooms, "pythonpath": args.pythonpath, "phases": phases,
            "ratio_p50": crowd["wait_p50"] / alone["wait_p50"],
            "ratio_p90": crowd["wait_p90"] / alone["wait_p90"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=150)
    parser.add_argument("--turns", type=int, default=40, help="the person's moves timed")
    parser.add_argument("--warmup", type=float, default=10.0,
                        help="seconds the crowd plays before the person's game")
    parser.add_argument("--bot-delay", type=float, default=0.8)
    parser.add_argument("--think", type=float, default=0.5,
                        help="the person thinks up to this long before each move (seconds)")
    parser.add_argument("--pythonpath", default="",
                        help="another checkout whose server to run (default: this one)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    result = asyncio.run(_run(args))
    print(f"the person's wait for the expert, {args.rooms} rooms of computers ÷ alone: "
          f"median {result['ratio_p50']:.1f}×, p90 {result['ratio_p90']:.1f}×")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
