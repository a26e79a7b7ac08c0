"""What a flood of hints costs the expert computer players of other rooms (issue 22 points
3 and 5; ``server.hints``).

Starts ``python -m server`` (rooms in memory, one computer process, the bot delay 0, the
per-address limit on new rooms off; the per-connection frame limits stay as they are by
default, as they would for an attacker) and times ``--games`` games of two ``expert``
computers to 61, one after another, watched by a spectator (seconds from the join to game
over): first alone,
then beside ``--flooders`` seated connections (one client address, each in its own room
against a ``standard`` computer) that ask for hints back to back:

* ``repeat``: each asks again as soon as it is answered, moving only in the discard (the
  play's hints then repeat one version);
* ``fresh``: each plays the hinted move after every hint, so that every hint is for a new
  version.

Through every phase ``--people`` people (default 4), each at a client address of its own
(``127.0.0.2`` on), play a game against a ``standard`` computer, ask for a hint at each of
their discards and plays (asked again after ``retry_after`` when refused, up to 20 s, as
the clients do), read it for ``--think`` seconds and play it; their seconds from asking to
the hint are the fairness figure (p50 / p90 / max, and the hints not had).

The figure is each flooded phase's median game time over the alone phase's, in the same
run, with the hints answered a second and, from ``/metrics``, the hints made, shared,
refused ``busy`` and refused ``too_many_hints`` (the flooders' address past its
``hints_per_minute``). ``--pythonpath`` runs the server of another checkout (to measure the
server before ``server.hints``: ``git worktree add /tmp/before <commit>``). From the
repository root::

    python bench/hint_flood.py --games 10           # 25 flooders, 10 games a phase
    python bench/hint_flood.py --pythonpath /tmp/before --json /tmp/before.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from latency import free_port, wait_ready  # noqa: E402

from protocol.client import Client, ClientError  # noqa: E402

PEOPLE_ADDRESSES = "127.0.0.{}"
"""The people's client addresses, from ``127.0.0.2`` (any loopback address reaches the
server on 127.0.0.1; the flooders are ``127.0.0.1``)."""

HINT_TIMEOUT = 20.0
"""Seconds the person waits for a hint, retries included (the JavaScript client's request
timeout)."""


async def _expert_game(http: httpx.AsyncClient, base: str, ws: str) -> float:
    """Seconds from a spectator's join to game over of two expert computers to 61."""
    made = (await http.post(f"{base}/api/rooms", json={
        "options": {"players": 2, "target": 61},
        "computers": {"0": "expert", "1": "expert"}})).json()
    watcher = await Client.connect(ws, name="watcher", record=False, validate=False)
    try:
        started = time.perf_counter()
        await watcher.join(made["room"], None)
        await watcher.wait_until(lambda c: c.status == "game_over", 900)
        return time.perf_counter() - started
    finally:
        await watcher.close()


async def _flooder(ws: str, mode: str, stop: asyncio.Event, counts: dict[str, int]) -> None:
    """One seated connection asking for hints back to back until ``stop`` (see the module
    docstring for ``mode``)."""
    client = await Client.connect(ws, name="flooder", record=False, validate=False)
    try:
        made = await client.create_room({"players": 2, "target": 121},
                                        computers={"1": "standard"})
        await client.join(made["room"], 0)
        while not stop.is_set() and client.status != "game_over":
            frame = await client.request(
                {"type": "hint"},
                lambda f: f["type"] == "hint" or (f["type"] == "error" and f.get("ref") == "hint"),
                120)
            counts["answered"] += 1
            suggestion = frame.get("suggestion") or {}
            best = suggestion.get("best")
            if best and (mode == "fresh" or suggestion.get("kind") == "discard"):
                await client.act(best, timeout=120)
            elif not best:
                await asyncio.sleep(0.01)  # not this seat's turn: the computer's move
    finally:
        await client.close()


def _decision(view: dict[str, Any] | None) -> bool:
    """Whether the seat of ``view`` has a discard or a play to make now."""
    if view is None:
        return False
    seat = view["seat"]
    if view["phase"] == "discard":
        return not view["discarded"][seat]
    return view["phase"] == "play" and view["turn"] == seat and any(
        _value(c) + view["count"] <= 31 for c in view["hand"])


def _value(card: str) -> int:
    rank = card[:-1]
    return {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}.get(rank) or int(rank)


async def _person(ws: str, address: str, think: float, stop: asyncio.Event,
                  waits: list[float], failed: list[str]) -> None:
    """A person at another client ``address``: seated against a ``standard`` computer,
    asks for a hint at each of its discards and plays (sent again after ``retry_after``
    when refused, within :data:`HINT_TIMEOUT` seconds, as the clients do), reads it for
    ``think`` seconds and plays the hinted card. ``waits``: seconds from the ask to the
    hint; ``failed``: the code of each hint not had."""
    import websockets

    plain = websockets.connect

    def from_person(*args: Any, **kwargs: Any) -> Any:
        return plain(*args, local_addr=(address, 0), **kwargs)

    websockets.connect = from_person  # (only this connect runs now: see _run)
    try:
        client = await Client.connect(ws, name="person", record=False, validate=False)
    finally:
        websockets.connect = plain
    try:
        while not stop.is_set():
            made = await client.create_room({"players": 2, "target": 121},
                                            computers={"1": "standard"})
            await client.join(made["room"], 0)
            while not stop.is_set() and client.status != "game_over":
                try:
                    await client.wait_until(
                        lambda c: stop.is_set() or c.status == "game_over"
                        or _decision(c.view), 1)
                except TimeoutError:  # (looked at again each second: stop may be set)
                    continue
                if stop.is_set() or client.status == "game_over":
                    break
                asked = time.perf_counter()
                try:
                    frame = await client.request(
                        {"type": "hint"},
                        lambda f: f["type"] == "hint"
                        or (f["type"] == "error" and f.get("ref") == "hint"),
                        HINT_TIMEOUT)
                except ClientError as exc:
                    if not stop.is_set():
                        failed.append(exc.code)
                    frame = None
                except TimeoutError:
                    failed.append("timeout")
                    frame = None
                if frame is not None:
                    waits.append(time.perf_counter() - asked)
                await asyncio.sleep(think)
                best = ((frame or {}).get("suggestion") or {}).get("best")
                view = client.view
                if not best and view is not None:
                    if view["phase"] == "discard":
                        best = {"type": "discard", "cards": view["hand"][:2]}
                    else:
                        best = {"type": "play", "card": next(
                            c for c in view["hand"] if _value(c) + view["count"] <= 31)}
                answer = await client.act(best, timeout=60)
                if answer["type"] != "ack":  # the view moved on meanwhile: look again
                    await asyncio.sleep(0.05)
    finally:
        await client.close()


def _hint_counts(text: str) -> dict[str, float]:
    """``cribbage_hints_total`` by outcome from a ``/metrics`` page ({} when the server
    has no such counter: a server from before ``server.hints``), and as ``address`` the
    hints refused ``too_many_hints`` (the address's ``hints_per_minute``)."""
    counts = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "cribbage_hints_total":
                counts[sample.labels["outcome"]] = sample.value
            elif (sample.name == "cribbage_limited_total"
                  and sample.labels.get("code") == "too_many_hints"):
                counts["address"] = sample.value
    return counts


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    base, ws = f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws"
    data = tempfile.mkdtemp(prefix="hint-flood-")
    env = {**os.environ, "CRIBBAGE_DATA_DIR": data, "CRIBBAGE_COMPUTER_PROCESSES": "1",
           "CRIBBAGE_BOT_DELAY_SECONDS": "0", "CRIBBAGE_ROOMS_PER_MINUTE": "0"}
    if args.pythonpath:
        env["PYTHONPATH"] = args.pythonpath
    server = subprocess.Popen([sys.executable, "-m", "server", "--port", str(port)],
                              cwd=args.pythonpath or ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    phases: list[dict[str, Any]] = []
    try:
        async with httpx.AsyncClient(timeout=30) as http:
            await wait_ready(http, f"{base}/readyz")
            await _expert_game(http, base, ws)  # warm-up: the computer process starts
            for mode in ["alone", *args.modes]:
                stop = asyncio.Event()
                counts = {"answered": 0}
                waits: list[float] = []
                failed: list[str] = []
                people = []
                for i in range(args.people):  # (each connected before the next connects)
                    people.append(asyncio.create_task(_person(
                        ws, PEOPLE_ADDRESSES.format(2 + i), args.think, stop, waits, failed)))
                    await asyncio.sleep(0.3)
                flooders = [] if mode == "alone" else [
                    asyncio.create_task(_flooder(ws, mode, stop, counts))
                    for _ in range(args.flooders)]
                await asyncio.sleep(0 if mode == "alone" else args.warmup)
                before = _hint_counts((await http.get(f"{base}/metrics")).text)
                answered, started = counts["answered"], time.perf_counter()
                games = []
                for _ in range(args.games):
                    games.append(await _expert_game(http, base, ws))
                    print(f"  {mode}: game {len(games)} in {games[-1]:.1f} s",
                          file=sys.stderr, flush=True)
                seconds = time.perf_counter() - started
                after = _hint_counts((await http.get(f"{base}/metrics")).text)
                stop.set()
                await asyncio.gather(*flooders, *people, return_exceptions=True)
                waits.sort()
                phases.append({
                    "mode": mode, "games_seconds": games,
                    "median_seconds": statistics.median(games),
                    "hints_answered_per_second": (counts["answered"] - answered) / seconds,
                    "hints": {k: after.get(k, 0) - before.get(k, 0) for k in after},
                    "person": {
                        "hints": len(waits), "failed": failed,
                        "p50_seconds": statistics.median(waits) if waits else None,
                        "p90_seconds": waits[int(0.9 * (len(waits) - 1))] if waits else None,
                        "max_seconds": waits[-1] if waits else None},
                })
    finally:
        server.terminate()
        server.wait(30)
    alone = phases[0]["median_seconds"]
    for phase in phases:
        phase["ratio"] = phase["median_seconds"] / alone
    return {"flooders": args.flooders, "games": args.games,
            "pythonpath": args.pythonpath, "phases": phases}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flooders", type=int, default=25)
    parser.add_argument("--games", type=int, default=3, help="expert games timed a phase")
    parser.add_argument("--modes", default="repeat,fresh", help="flooded phases, in order")
    parser.add_argument("--warmup", type=float, default=3.0,
                        help="seconds the flood runs before the games are timed")
    parser.add_argument("--pythonpath", default="",
                        help="another checkout whose server to run (default: this one)")
    parser.add_argument("--people", type=int, default=4,
                        help="people at other addresses asking a hint at each decision")
    parser.add_argument("--think", type=float, default=1.0,
                        help="seconds a person reads a hint before playing it")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    args.modes = [m for m in args.modes.split(",") if m]
    result = asyncio.run(_run(args))
    print(f"{'phase':8} {'median game':>12} {'÷ alone':>8} {'hints/s':>8}  "
          "hints made/shared/busy/address  people's hints: had, not had, p50/p90/max s")
    for p in result["phases"]:
        h, me = p["hints"], p["person"]
        waits = "/".join("-" if me[k] is None else f"{me[k]:.2f}"
                         for k in ("p50_seconds", "p90_seconds", "max_seconds"))
        print(f"{p['mode']:8} {p['median_seconds']:>10.1f} s {p['ratio']:>7.1f}× "
              f"{p['hints_answered_per_second']:>8.0f}  "
              f"{h.get('made', '-')}/{h.get('shared', '-')}/{h.get('busy', '-')}/"
              f"{h.get('address', '-')}  {me['hints']}, {len(me['failed'])}, {waits}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
