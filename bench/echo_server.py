"""A bare starlette WebSocket echo under uvicorn: the baseline of ``bench/ws_roundtrip.py``.

``/ws`` sends every frame straight back (text as text, bytes as bytes); ``/healthz`` answers
``{"ok": true}``. It runs under uvicorn with the same options as the cribbage server
(``server.app.uvicorn_kwargs``: the default stack — uvloop, httptools, websockets-sansio —
and no permessage-deflate)::

    python bench/echo_server.py --port 8765
"""

from __future__ import annotations

import argparse

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect


async def echo(websocket: WebSocket) -> None:
    offered = list(websocket.scope.get("subprotocols") or [])
    await websocket.accept(subprotocol=offered[0] if offered else None)
    try:
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("text") is not None:
                await websocket.send_text(message["text"])
            elif message.get("bytes") is not None:
                await websocket.send_bytes(message["bytes"])
    except WebSocketDisconnect:
        return


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"ok": True})


app = Starlette(routes=[WebSocketRoute("/ws", echo), Route("/healthz", healthz)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        ws_per_message_deflate=False,
        ws_max_size=1 << 20,
        log_level=args.log_level,
    )


if __name__ == "__main__":
    main()
