"""A flooding client in a process of its own (test_limits): ``python flood_client.py URL
SECONDS`` says hello, then sends ``ping`` frames as fast as it can for SECONDS while reading
every answer, and prints ``{"sent", "pong", "rate_limited", "other", "close_code"}`` as
JSON."""

from __future__ import annotations

import asyncio
import json
import sys

import websockets


async def main(url: str, seconds: float) -> dict[str, int | None]:
    counts: dict[str, int | None] = {"sent": 0, "pong": 0, "rate_limited": 0, "other": 0,
                                     "close_code": None}
    async with websockets.connect(url, compression=None, max_queue=None,
                                  close_timeout=1) as ws:
        await ws.send(json.dumps({"type": "hello", "name": "flooder"}))
        assert json.loads(await ws.recv())["type"] == "welcome"
        print("ready", file=sys.stderr, flush=True)

        async def read() -> None:
            try:
                async for raw in ws:
                    if '"pong"' in raw:
                        counts["pong"] += 1  # type: ignore[operator]
                    elif '"rate_limited"' in raw:
                        counts["rate_limited"] += 1  # type: ignore[operator]
                    else:
                        counts["other"] += 1  # type: ignore[operator]
            except websockets.exceptions.ConnectionClosed:
                pass

        reader = asyncio.create_task(read())
        frame = json.dumps({"type": "ping", "nonce": 1})
        end = asyncio.get_running_loop().time() + seconds
        loop = asyncio.get_running_loop()
        try:
            while loop.time() < end:
                # send() waits while the server reads nothing (TCP pushes back).
                await asyncio.wait_for(ws.send(frame), max(end - loop.time(), 0.001))
                counts["sent"] += 1  # type: ignore[operator]
                if counts["sent"] % 10 == 0:  # type: ignore[operator]
                    await asyncio.sleep(0)
        except (websockets.exceptions.ConnectionClosed, TimeoutError):
            pass
        await asyncio.sleep(0.5)
        counts["close_code"] = ws.close_code
        reader.cancel()
    return counts


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], float(sys.argv[2])))))
