"""What a server full of computer players costs the other rooms (issue 22 point 3).

Starts ``python -m server`` (rooms in memory, limits off, under ``bench/probe.py`` for the
event loop's lag) once per phase, creates ``--rooms`` rooms of two computer players of one
level (``POST /api/rooms`` with both seats given to computers: the games start at once and
play at the bot delay, 0.8 s a move by default), and while they play measures, after a
warm-up, for ``--seconds``:

* the event loop's lag (the probe's 10 ms timer: how late it woke), p50 / p99 / max;
* the round trip of a ``ping`` sent every 50 ms by one more connection (what a person at
  another table would wait for any answer), p50 / p99 / max;
* the CPU of the server process and of its computer processes (``computer_processes``),
  shares of one core; and the computer moves made per second (from ``/metrics``).

Phases are ``level:processes`` (``computer_processes``: 0 decides on the event loop).
The ratios are each phase's figures over the first phase's, measured in the same run. From
the repository root::

    python bench/computer_load.py                           # standard:0, expert:1, expert:0
    python bench/computer_load.py --rooms 50 --seconds 10   # shorter
    python bench/computer_load.py --phases standard:0,expert:1 --json /tmp/load.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import websockets

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import probe  # noqa: E402
from latency import LIMITS, free_port, log, proc_cpu  # noqa: E402


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (the computer processes of a server)."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def pct(samples: list[float], p: float) -> float | None:
    if not samples:
        return None
    s = sorted(samples)
    return s[min(len(s) - 1, max(0, int(-(-len(s) * p // 100)) - 1))]


def moves(metrics: str) -> float:
    """Deadlines fired (computer moves are most of them) from a ``/metrics`` text."""
    for line in metrics.splitlines():
        if line.startswith("cribbage_deadlines_fired_total"):
            return float(line.split()[-1])
    return 0.0


async def pinger(url: str, stop: asyncio.Event, rtts: list[float]) -> None:
    async with websockets.connect(url, subprotocols=["cribbage.v1.json"]) as ws:
        await ws.send(json.dumps({"type": "hello", "name": "pinger"}))
        await ws.recv()
        n = 0
        while not stop.is_set():
            n += 1
            t = time.perf_counter()
            await ws.send(json.dumps({"type": "ping", "nonce": n}))
            while True:
                frame = json.loads(await ws.recv())
                if frame.get("type") == "pong" and frame.get("nonce") == n:
                    break
            rtts.append((time.perf_counter() - t) * 1000)
            await asyncio.sleep(0.05)


async def phase(args: argparse.Namespace, level: str, processes: int) -> dict[str, Any]:
    port = free_port()
    data = tempfile.mkdtemp(prefix="bench-computers-")
    probe_file = Path(data) / "probe.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRIBBAGE_")}
    env.update(LIMITS["off"])
    env.update({"CRIBBAGE_DATA_DIR": data, "CRIBBAGE_COMPUTER_PROCESSES": str(processes),
                "PYTHONPATH": str(ROOT)})
    cmd = [sys.executable, str(BENCH / "probe.py"), "--out", str(probe_file), "--", "-m",
           "server", "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}"
    res: dict[str, Any] = {"level": level, "processes": processes, "rooms": args.rooms}
    try:
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            for _ in range(200):
                try:
                    if (await http.get("/healthz")).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(0.1)
            sem = asyncio.Semaphore(16)

            async def room() -> None:
                async with sem:
                    made = await http.post("/api/rooms", json={
                        "options": {"players": 2}, "room": {"match": 7},
                        "computers": {"0": level, "1": level}})
                    made.raise_for_status()

            t = time.monotonic()
            await asyncio.gather(*(room() for _ in range(args.rooms)))
            log(f"  {level}:{processes}: {args.rooms} rooms of computers in "
                f"{time.monotonic() - t:.1f}s")
            await asyncio.sleep(args.warmup)
            stop = asyncio.Event()
            rtts: list[float] = []
            ping = asyncio.ensure_future(pinger(f"ws://127.0.0.1:{port}/ws", stop, rtts))
            await asyncio.sleep(0.5)
            rtts.clear()
            pids = children(proc.pid)
            cpu0 = (proc_cpu(proc.pid) or 0.0, sum(proc_cpu(p) or 0.0 for p in pids))
            m0 = moves((await http.get("/metrics")).text)
            t0 = time.monotonic()
            await asyncio.sleep(args.seconds)
            t1 = time.monotonic()
            m1 = moves((await http.get("/metrics")).text)
            pids = children(proc.pid)
            cpu1 = (proc_cpu(proc.pid) or 0.0, sum(proc_cpu(p) or 0.0 for p in pids))
            stop.set()
            await asyncio.wait_for(ping, 10)
        span = t1 - t0
        res.update({
            "server_cpu": (cpu1[0] - cpu0[0]) / span,
            "computer_processes_cpu": (cpu1[1] - cpu0[1]) / span,
            "moves_per_second": (m1 - m0) / span,
            "ping_ms": {"n": len(rtts), "p50": pct(rtts, 50), "p99": pct(rtts, 99),
                        "max": max(rtts) if rtts else None},
            "_window": (t0, t1),
        })
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    window = res.pop("_window", None)
    if window and probe_file.exists():
        res["loop_lag"] = probe.summarize(json.loads(probe_file.read_text()), *window)["lag"]
    lag = res.get("loop_lag") or {}
    log(f"  {level}:{processes}: loop lag p50 {_f(lag.get('p50_ms'))} p99 "
        f"{_f(lag.get('p99_ms'))} max {_f(lag.get('max_ms'))} ms; ping p50 "
        f"{_f(res['ping_ms']['p50'])} p99 {_f(res['ping_ms']['p99'])} max "
        f"{_f(res['ping_ms']['max'])} ms (n {res['ping_ms']['n']}); server CPU "
        f"{res['server_cpu']:.0%}, computer processes {res['computer_processes_cpu']:.0%}; "
        f"{res['moves_per_second']:.0f} moves/s")
    return res


def _f(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f}"


def _r(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else f"{a / b:.2f}×"


def report(results: list[dict[str, Any]]) -> None:
    print("\n| phase | loop lag p50 / p99 / max (ms) | ping p50 / p99 / max (ms) | server "
          "CPU | computer processes CPU | moves/s |")
    print("|---|---|---|---|---|---|")
    for r in results:
        lag = r.get("loop_lag") or {}
        p = r["ping_ms"]
        print(f"| {r['level']}:{r['processes']} | {_f(lag.get('p50_ms'))} / "
              f"{_f(lag.get('p99_ms'))} / {_f(lag.get('max_ms'))} | {_f(p['p50'])} / "
              f"{_f(p['p99'])} / {_f(p['max'])} | {r['server_cpu']:.0%} | "
              f"{r['computer_processes_cpu']:.0%} | {r['moves_per_second']:.0f} |")
    base = results[0]
    for r in results[1:]:
        lag, blag = r.get("loop_lag") or {}, base.get("loop_lag") or {}
        print(f"{r['level']}:{r['processes']} ÷ {base['level']}:{base['processes']}: loop lag "
              f"p99 {_r(lag.get('p99_ms'), blag.get('p99_ms'))}, max "
              f"{_r(lag.get('max_ms'), blag.get('max_ms'))}; ping p99 "
              f"{_r(r['ping_ms']['p99'], base['ping_ms']['p99'])}; server CPU "
              f"{_r(r['server_cpu'], base['server_cpu'])}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--phases", default="standard:0,expert:1,expert:0")
    p.add_argument("--rooms", type=int, default=200)
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--warmup", type=float, default=5.0)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    phases = [(x.split(":")[0], int(x.split(":")[1]) if ":" in x else 0)
              for x in args.phases.split(",") if x]
    log(f"{len(phases)} phases of {args.rooms} rooms, {args.seconds:g} s each; load average "
        f"{os.getloadavg()}")
    results = [asyncio.run(phase(args, level, n)) for level, n in phases]
    report(results)
    if args.json:
        args.json.write_text(json.dumps({"phases": results, "median_lag": statistics.median(
            [(r.get("loop_lag") or {}).get("p99_ms") or 0 for r in results])}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
