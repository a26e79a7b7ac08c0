"""The starlette application: ``/ws``, the HTTP API, health checks and the web client.

Routes:

* ``GET /ws`` (WebSocket): the ``cribbage.v1`` protocol (``docs/protocol.md``); subprotocol
  ``cribbage.v1.json`` (default) or ``cribbage.v1.msgpack``.
* ``POST /api/rooms``: body ``{"options": {...}, "computers": {"1": "standard"},
  "room": {"hints": true, "answer_window": 15, "takeover_grace": 60}}`` (all optional) ->
  ``201 {"room", "url", "options", "creator_token", "room_settings", "computers"}``.
* ``GET /api/rooms/{id}``: public summary -> ``200 {...}`` or ``404``.
* ``GET /healthz``: the process is up. ``GET /readyz``: the store (Redis) answers, else 503.
* ``GET /`` and ``GET /r/{room}``: ``server/static/index.html`` when present; ``/static/*``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import re
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from redis.asyncio import BlockingConnectionPool, Redis
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from protocol.codec import SUBPROTOCOLS, Codec, encoding_for_subprotocol
from protocol.messages import ROOM_ID_PATTERN, CreateRoom

from .broker import Broker, MemoryBroker, RedisBroker
from .computer_seats import ComputerSeats, DecideFn
from .rooms import GameFactory, RoomError, RoomService
from .sessions import LocalRooms, Session, room_created, seat_infos
from .settings import Settings
from .store.base import RoomStore
from .store.memory import MemoryStore
from .store.redis import RedisStore
from .timers import Sweeper
from .tokens import TokenIssuer

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"
MAX_BODY_BYTES = 16 * 1024


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _base_url(settings: Settings, url: Any) -> str:
    if settings.public_url:
        return settings.public_url.rstrip("/")
    scheme = {"ws": "http", "wss": "https"}.get(url.scheme, url.scheme)
    return f"{scheme}://{url.netloc}"


def create_app(
    settings: Settings | None = None,
    *,
    game_factory: GameFactory | None = None,
    seed_factory: Callable[[], str] | None = None,
    decide: DecideFn | None = None,
) -> Starlette:
    """Build the application.

    Args:
        settings: configuration (default: ``Settings()`` from the environment). With
            ``redis_url`` rooms live in Redis; without it, in this process.
        game_factory: how games start (tests stack decks); default ``engine.new_game``.
        seed_factory: where seeds come from (default: 128 random bits).
        decide: the computer players' decision function (default
            ``engine.computer.decide``; tests wrap it to inspect what it is given).

    Returns:
        The starlette app. Its ``state`` holds ``settings``, ``store``, ``broker``,
        ``service``, ``rooms``, ``sweeper`` and ``computers`` once the lifespan has started.
    """
    settings = settings or Settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        store: RoomStore
        broker: Broker
        if settings.redis_url:
            # A blocking pool: when every connection is busy a command waits for one
            # (up to redis_pool_timeout seconds) instead of failing at once.
            redis = Redis.from_pool(
                BlockingConnectionPool.from_url(
                    settings.redis_url,
                    decode_responses=True,
                    max_connections=settings.redis_max_connections,
                    timeout=settings.redis_pool_timeout,
                )
            )
            broker = RedisBroker(redis, settings.key_prefix)
            store = RedisStore(
                redis, settings.key_prefix, settings.room_ttl_seconds,
                published=broker.published,
            )
        else:
            broker = MemoryBroker()
            store = MemoryStore(broker, settings.room_ttl_seconds)
        await broker.start()
        service = RoomService(
            store, settings, game_factory=game_factory, seed_factory=seed_factory,
            tokens=TokenIssuer(await _token_secret(settings, store)),
        )
        sweeper = Sweeper(store, service, settings)
        app.state.computers = ComputerSeats(service, sweeper, decide)
        app.state.settings = settings
        app.state.store = store
        app.state.broker = broker
        app.state.service = service
        app.state.rooms = LocalRooms(broker, service)
        app.state.sweeper = sweeper
        sweeper.start()
        try:
            yield
        finally:
            await sweeper.stop()
            await broker.close()
            await store.close()

    async def ws_endpoint(websocket: WebSocket) -> None:
        offered = list(websocket.scope.get("subprotocols") or [])
        chosen = next((p for p in offered if p in SUBPROTOCOLS), None)
        if offered and chosen is None:
            await websocket.close(code=1002)
            return
        await websocket.accept(subprotocol=chosen)
        app = websocket.app
        session = Session(
            websocket,
            Codec(encoding_for_subprotocol(chosen)),
            app.state.service,
            app.state.rooms,
            settings,
            _base_url(settings, websocket.url),
            app.state.computers,
        )
        await session.run()

    async def create_room(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return _error(413, "too_large", "request body too large")
        try:
            data = json.loads(body) if body.strip() else {}
            if not isinstance(data, dict):
                raise ValueError("the body must be a JSON object")
            data = {k: v for k, v in data.items() if v is not None}
            create = CreateRoom.model_validate({**data, "type": "create_room"})
        except (ValueError, ValidationError) as exc:
            return _error(400, "bad_options", str(exc))
        service: RoomService = request.app.state.service
        try:
            record, creator = await service.create_room(
                create.options.model_dump(),
                computers=dict(create.computers),
                room=create.room.model_dump(),
            )
        except RoomError as exc:
            return _error(400, exc.code, exc.message)
        body_out = room_created(
            record, creator, _base_url(settings, request.url), service.room_settings(record)
        )
        del body_out["type"]
        return JSONResponse(body_out, status_code=201)

    async def room_summary(request: Request) -> Response:
        room_id = request.path_params["room"]
        if not re.match(ROOM_ID_PATTERN, room_id):
            return _error(404, "room_not_found", "no such room")
        store: RoomStore = request.app.state.store
        record, _ = await store.load(room_id)
        if record is None:
            return _error(404, "room_not_found", "no such room")
        presence = await store.presence(room_id)
        games = int(record.state.get("game_number", 1)) - 1 if record.state else 0
        return JSONResponse(
            {
                "room": record.id,
                "options": record.options,
                "room_settings": request.app.state.service.room_settings(record),
                "status": record.status,
                "version": record.version,
                "seats": seat_infos(record, presence),
                "seats_taken": sum(1 for s in record.seats if s.taken),
                "games_played": games,
                "created": record.created,
                "updated": record.updated,
            }
        )

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def readyz(request: Request) -> Response:
        ok = await request.app.state.store.ping()
        backend = "redis" if settings.redis_url else "memory"
        return JSONResponse({"ok": ok, "store": backend}, status_code=200 if ok else 503)

    async def index(request: Request) -> Response:
        page = STATIC_DIR / "index.html"
        if page.is_file():
            return FileResponse(page, media_type="text/html")
        return PlainTextResponse(
            "cribbage-server: no web client installed; connect a client to /ws\n",
            status_code=404,
        )

    routes = [
        WebSocketRoute("/ws", ws_endpoint),
        Route("/api/rooms", create_room, methods=["POST"]),
        Route("/api/rooms/{room}", room_summary, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/", index, methods=["GET"]),
        Route("/r/{room}", index, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
    ]
    return Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={RedisError: _store_down, Exception: _internal_error},
    )


async def _token_secret(settings: Settings, store: RoomStore) -> bytes:
    """The secret that signs tokens: the setting, else the store's shared one. If the store
    cannot be reached at start-up, a secret of this process only (logged): its tokens are
    then not recognised by other processes."""
    if settings.token_secret:
        return hashlib.sha256(settings.token_secret.encode()).digest()
    try:
        return await store.token_secret()
    except RedisError as exc:
        log.warning("no shared token secret (%s); using one of this process only", exc)
        return secrets.token_bytes(32)


async def _store_down(request: Request, exc: Exception) -> Response:
    """HTTP requests while Redis cannot be reached: ``503 {"code": "store_unavailable"}``."""
    log.warning("store unavailable for %s %s: %s", request.method, request.url.path, exc)
    return _error(503, "store_unavailable", "the room store cannot be reached; try again")


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Any other unexpected error: ``500 {"code": "internal"}`` (the traceback is logged)."""
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, "internal", "internal server error")


def uvicorn_kwargs(settings: Settings) -> dict[str, Any]:
    """Options the server runs uvicorn with (default stack, no permessage-deflate)."""
    return {
        "host": settings.host,
        "port": settings.port,
        "ws_per_message_deflate": False,
        "ws_max_size": max(1 << 20, settings.max_frame_bytes * 4),
        "lifespan": "on",
    }
