"""The client of docs/protocol.md, "A client with no rules code", plays whole games.

The Python block after ``<!-- minimal-bot -->`` is extracted as it stands and run as a
program against a real server (uvicorn on a loopback port, in-memory store):

* on a table of its own against a ``standard`` computer (2 players, to 61);
* at seat 1 of a 3-player Muggins room with two computers, through a WebSocket proxy that
  turns its third action into a malformed one, so its ``reject`` handling runs too.

Each game must end (``status`` ``game_over`` in the room summary) with the bot's seat a
human seat named as the bot says.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from protocol.codec import SUBPROTOCOLS

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
BOT_TIMEOUT = 300


def bot_source() -> str:
    """The python block right after ``<!-- minimal-bot -->`` in docs/protocol.md."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"^<!-- minimal-bot -->\n```python\n(.*?)^```$", text,
                      re.MULTILINE | re.DOTALL)
    assert found, "docs/protocol.md has no <!-- minimal-bot --> python block"
    return found.group(1)


@pytest.fixture
def bot(tmp_path) -> Path:
    path = tmp_path / "bot.py"
    path.write_text(bot_source(), encoding="utf-8")
    return path


@pytest.fixture
def fast_server(make_server):
    """An in-memory server whose computers act at once."""
    return make_server(redis=False, bot_delay_seconds=0.0)


async def run_bot(bot: Path, *args: str) -> list[str]:
    """Run the bot to its end; its output lines (it must exit 0)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(bot), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(), BOT_TIMEOUT)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, (out.decode()[-3000:], err.decode()[-3000:])
    return out.decode().splitlines()


def summary(server, room: str) -> dict:
    answer = httpx.get(f"{server.http}/api/rooms/{room}")
    assert answer.status_code == 200
    return answer.json()


async def test_the_minimal_bot_plays_a_whole_game_against_the_computer(fast_server, bot):
    lines = await run_bot(bot, fast_server.ws)
    [room] = [line.split()[1] for line in lines if line.startswith("room ")]
    assert lines[-1].startswith("game over ")
    scores = json.loads(lines[-1][len("game over "):])
    assert len(scores) == 2 and 61 in scores
    info = summary(fast_server, room)
    assert info["status"] == "game_over"
    assert info["seats"][0]["kind"] == "human" and info["seats"][0]["name"] == "Minimal bot"
    assert info["seats"][1]["kind"] == "computer"


class FaultyProxy:
    """A WebSocket proxy in front of the server that replaces the action of the client's
    ``nth`` ``act`` by one that is no action at all, keeping its id (the server answers
    ``reject`` ``bad_action`` in any phase)."""

    def __init__(self, upstream: str, nth: int) -> None:
        self.upstream = upstream
        self.nth = nth
        self.acts = 0
        self.rewritten: list[dict] = []

    def rewrite(self, frame: str | bytes) -> str | bytes:
        if isinstance(frame, bytes):
            return frame
        message = json.loads(frame)
        if message.get("type") != "act":
            return frame
        self.acts += 1
        if self.acts != self.nth:
            return frame
        message["action"] = {"type": "fly"}
        self.rewritten.append(message)
        return json.dumps(message)

    async def handler(self, down: ServerConnection) -> None:
        offered = [down.subprotocol] if down.subprotocol else None
        async with connect(self.upstream, subprotocols=offered) as up:

            async def to_server() -> None:
                async for frame in down:
                    await up.send(self.rewrite(frame))

            async def to_client() -> None:
                async for frame in up:
                    await down.send(frame)

            tasks = [asyncio.create_task(to_server()), asyncio.create_task(to_client())]
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


@pytest.fixture
async def proxy(fast_server) -> AsyncIterator[tuple[FaultyProxy, str]]:
    faulty = FaultyProxy(fast_server.ws, nth=3)
    async with serve(faulty.handler, "127.0.0.1", 0, subprotocols=list(SUBPROTOCOLS)) as srv:
        port = srv.sockets[0].getsockname()[1]
        yield faulty, f"ws://127.0.0.1:{port}/ws"


async def test_the_minimal_bot_survives_a_reject_in_a_muggins_game(fast_server, bot, proxy):
    faulty, url = proxy
    created = httpx.post(f"{fast_server.http}/api/rooms", json={
        "options": {"players": 3, "muggins": True, "target": 121},
        "computers": {"0": "standard", "2": "easy"},
    })
    assert created.status_code == 201
    room = created.json()["room"]
    lines = await run_bot(bot, url, room, "1")
    assert len(faulty.rewritten) == 1
    assert "reject bad_action" in lines
    assert lines[-1].startswith("game over ")
    info = summary(fast_server, room)
    assert info["status"] == "game_over"
    assert info["seats"][1]["kind"] == "human" and info["seats"][1]["name"] == "Minimal bot"
    assert len(json.loads(lines[-1][len("game over "):])) == 3
