"""A TCP proxy to Redis that counts a server's commands and round trips (``bench/latency.py
--count-redis``).

The server under test is pointed at ``redis://127.0.0.1:<proxy port>/<db>``; the proxy parses
every request it forwards (RESP arrays), so it counts that server's top-level commands by
name (an ``EVALSHA`` is named by its script when the script's SHA-1 is known) and its round
trips: the first request written after the previous reply came back, per connection (a
pipeline or a script call is one). Pub/sub pushes from Redis are not requests and are not
counted. Other clients of the same Redis never pass through it, unlike ``INFO`` deltas.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from pathlib import Path


def script_shas(*sources: tuple[str, str]) -> dict[str, str]:
    """SHA-1 (as Redis names a script) → name, for ``(name, source)`` pairs."""
    return {hashlib.sha1(text.encode()).hexdigest(): name for name, text in sources}


def lua_dir_shas(directory: Path) -> dict[str, str]:
    """SHA-1 → file name of every ``*.lua`` file in ``directory``."""
    return script_shas(*((p.name, p.read_text(encoding="utf-8"))
                         for p in sorted(directory.glob("*.lua"))))


class CountingProxy:
    """A TCP proxy to Redis that parses requests (RESP arrays) to count commands by name and
    round trips (the first request written after the previous reply, per connection)."""

    def __init__(self, upstream_host: str, upstream_port: int, scripts: dict[str, str]) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.scripts = scripts  # sha1 -> script name
        self.commands: dict[str, int] = {}
        self.round_trips = 0
        self.connections = 0
        self.server: asyncio.base_events.Server | None = None
        self.tasks: set[asyncio.Task] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    def snapshot(self) -> tuple[int, dict[str, int]]:
        return self.round_trips, dict(self.commands)

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        state = {"waiting": False}
        t1 = asyncio.create_task(self._client_to_redis(reader, up_w, state))
        t2 = asyncio.create_task(self._redis_to_client(up_r, writer, state))
        self.tasks.update((t1, t2))
        try:
            await asyncio.wait({t1, t2}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (t1, t2):
                t.cancel()
                self.tasks.discard(t)
            for w in (writer, up_w):
                with contextlib.suppress(Exception):
                    w.close()

    async def _client_to_redis(self, reader, up_w, state) -> None:
        buf = bytearray()
        while True:
            data = await reader.read(65536)
            if not data:
                return
            if not state["waiting"]:
                state["waiting"] = True
                self.round_trips += 1
            buf += data
            consumed = self._parse(buf)
            if consumed:
                del buf[:consumed]
            up_w.write(data)
            await up_w.drain()

    async def _redis_to_client(self, up_r, writer, state) -> None:
        while True:
            data = await up_r.read(65536)
            if not data:
                return
            state["waiting"] = False
            writer.write(data)
            await writer.drain()

    def _parse(self, buf: bytearray) -> int:
        """Count every complete request in ``buf``; returns the bytes consumed."""
        pos = 0
        n = len(buf)
        while pos < n:
            if buf[pos] != 0x2A:  # '*'; inline commands (not sent by redis-py)
                eol = buf.find(b"\r\n", pos)
                if eol < 0:
                    return pos
                name = bytes(buf[pos:eol]).split(b" ", 1)[0].decode(errors="replace").upper()
                self._count(name, None)
                pos = eol + 2
                continue
            eol = buf.find(b"\r\n", pos)
            if eol < 0:
                return pos
            count = int(buf[pos + 1:eol])
            p = eol + 2
            parts: list[bytes] = []
            complete = True
            for i in range(count):
                eol = buf.find(b"\r\n", p)
                if eol < 0:
                    complete = False
                    break
                length = int(buf[p + 1:eol])
                start = eol + 2
                if start + length + 2 > n:
                    complete = False
                    break
                if i < 2:
                    parts.append(bytes(buf[start:start + length]))
                p = start + length + 2
            if not complete:
                return pos
            name = parts[0].decode(errors="replace").upper() if parts else "?"
            self._count(name, parts[1].decode(errors="replace") if len(parts) > 1 else None)
            pos = p
        return pos

    def _count(self, name: str, arg: str | None) -> None:
        if name == "EVALSHA" and arg is not None:
            name = f"EVALSHA {self.scripts.get(arg.lower(), arg[:8])}"
        self.commands[name] = self.commands.get(name, 0) + 1
