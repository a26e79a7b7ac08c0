"""Replay files for the replay page's tests, made the way the table makes them.

(Imported by the browser tests as ``replay_files``.) :func:`played_replay` plays a whole
game on a live server over the protocol — a person (``Client``, random legal moves) against
the server's computer — and builds the replay file from the room's public ``history`` with
the same fields as ``fetchReplay`` in ``server/static/js/replay.js`` (the download itself is
covered by ``test_story.py``). Much faster than playing it in the browser.
"""

from __future__ import annotations

import asyncio
import json
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from protocol.client import Client


async def _play(base: str, options: dict[str, Any], name: str, seed: int) -> dict[str, Any]:
    players = options.get("players", 2)
    computers = {str(s): "standard" for s in range(1, players)}
    created = httpx.post(f"{base}/api/rooms", json={"options": options, "computers": computers},
                         timeout=10).json()
    room = created["room"]
    ws = base.replace("http://", "ws://") + "/ws"
    me = await Client.connect(ws, name=name)
    rng = random.Random(seed)
    try:
        await me.join(room, seat=0)
        while me.status != "game_over":
            moves = [a for a in (me.view or {}).get("legal", []) if a["type"] != "rematch"]
            if not moves:
                await me.wait_until(lambda c: c.status == "game_over" or bool(
                    [a for a in (c.view or {}).get("legal", []) if a["type"] != "rematch"]),
                    timeout=20)
                continue
            move = rng.choice(moves)  # under Muggins: any count, right or wrong
            answer = await me.act(move, timeout=10)
            assert answer["type"] in ("ack", "reject"), answer
        history = await me.request({"type": "history", "public": True, "limit": 500},
                                   lambda f: f["type"] == "history", 10)
        assert not history["more"], "a game longer than one page of history"
        return {
            "format": "cribbage-replay",
            "format_version": 1,
            "room": room,
            "game": history["game"],
            "saved_at": "2026-11-30T12:00:00.000Z",
            "options": me.view["options"],
            "seats": [{"seat": s["seat"], "name": s["name"], "kind": s["kind"],
                       "level": s["level"]} for s in me.seats],
            "first": history["first"],
            "versions": history["versions"],
            "result": me.view["result"],
        }
    finally:
        await me.close()


def played_replay(base: str, options: dict[str, Any] | None = None, *, name: str = "Anna",
                  seed: int = 1) -> dict[str, Any]:
    """A finished game's replay file (as plain data): ``name`` in seat 1 against the
    server's ``standard`` computer in every other seat, with ``options`` (default: 2
    players to 61). Raises AssertionError if the game goes wrong. (Played on a thread of
    its own: Playwright's sync API keeps an event loop on the test's thread.)"""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, _play(base, options or {"players": 2, "target": 61},
                                              name, seed)).result(timeout=120)


def write(path: Path, data: Any) -> Path:
    """Write ``data`` as a replay file (JSON) and return its path."""
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def replay_steps(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The replay page's steps (``replaySteps`` in ``server/static/js/replay.js``), to know
    what each step must show: one per version, but the version that ends a deal's play is
    split before each ``show_hand`` and before the next ``deal``."""
    steps: list[dict[str, Any]] = []
    for version in data["versions"]:
        step: dict[str, Any] = {"version": version["version"], "events": []}
        steps.append(step)
        for ev in version["events"]:
            kinds = {e["type"] for e in step["events"]}
            if (ev["type"] == "show_hand" and kinds & {"show_hand", "count_reset"}) or (
                    ev["type"] == "deal" and "show_hand" in kinds):
                step = {"version": version["version"], "events": []}
                steps.append(step)
            step["events"].append(ev)
    return steps


def deal_of(steps: list[dict[str, Any]], n: int) -> int:
    """The deal number the table is at after ``n`` steps (0 before the first deal)."""
    deal = 0
    for step in steps[:n]:
        for ev in step["events"]:
            if ev["type"] == "deal":
                deal = ev["deal_number"]
    return deal
