"""Regenerate the transcript section of docs/protocol.md from a real run.

Usage: ``python tests/server/make_transcript.py`` (from the repository root). Starts the
server in-process (memory store, fixed seed), plays one whole 2-player deal with two
scripted clients over /ws in JSON, and writes every frame seat 0's connection sent (→) and
received (←) between the markers in docs/protocol.md.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path[:0] = [str(ROOT), str(HERE)]

from crib_wire import ThreadServer, choose  # noqa: E402

from protocol.client import Client  # noqa: E402
from server.settings import Settings  # noqa: E402

START = "<!-- transcript:start -->"
END = "<!-- transcript:end -->"


async def run() -> list[str]:
    server = ThreadServer(Settings(), seed_factory=lambda: "transcript-seed-1").start()
    lines: list[str] = []
    try:
        a = await Client.connect(server.ws, name="Ann", hello=False)
        sent_a = []
        orig_send = a.send

        async def send(message):  # record what seat 0 sends
            sent_a.append((len(a.frames), message))
            await orig_send(message)

        a.send = send  # type: ignore[method-assign]
        await a.request({"type": "hello", "name": "Ann"}, lambda f: f["type"] == "welcome")
        created = await a.create_room({"players": 2, "target": 121})
        await a.join(created["room"], 0)
        b = await Client.connect(server.ws, name="Bob")
        await b.join(created["room"], 1)
        await a.wait_until(lambda c: c.view is not None)
        rng = random.Random(2)
        players = [a, b]
        while True:
            if a.view["deal_number"] > 1:
                break
            moved = False
            for c in players:
                action = choose(c.view, rng)
                if action is not None:
                    r = await c.act(action)
                    assert r["type"] == "ack", r
                    moved = True
                    break
            if not moved:
                await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        await a.request({"type": "ping", "nonce": 1}, lambda f: f["type"] == "pong")
        events = sorted(
            [(i, "→", m) for i, m in sent_a] + [(i + 0.5, "←", f) for i, f in enumerate(a.frames)],
            key=lambda x: x[0],
        )
        for _, arrow, message in events:
            lines.append(f"{arrow} {json.dumps(message, separators=(',', ':'))}")
        await a.close()
        await b.close()
    finally:
        server.stop()
    return lines


def main() -> None:
    lines = asyncio.run(run())
    doc = ROOT / "docs" / "protocol.md"
    text = doc.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    body = "\n```text\n" + "\n".join(lines) + "\n```\n"
    doc.write_text(head + START + body + END + tail, encoding="utf-8")


if __name__ == "__main__":
    main()
