"""The starlette application: ``/ws``, the HTTP API, health checks and the web client.

Routes:

* ``GET /ws`` (WebSocket): the ``cribbage.v1`` protocol (``docs/protocol.md``); subprotocol
  ``cribbage.v1.json`` (default) or ``cribbage.v1.msgpack``.
* ``POST /api/rooms``: body ``{"options": {...}, "computers": {"1": "standard"},
  "room": {"hints": true, "answer_window": 15, "takeover_grace": 60, "turn_seconds": 60}}``
  (all optional) -> ``201 {"room", "url", "options", "creator_token", "room_settings",
  "computers"}``.
* ``GET /api/rooms/{id}``: public summary -> ``200 {...}`` or ``404``.
* ``GET /api/games/{id}``: an archived game (``server.archive``) -> ``200``, ``404`` or ``429``.
* ``GET /healthz``: the process is up. ``GET /readyz``: the store (Redis) answers within
  half a second, else 503. ``GET /metrics``: Prometheus metrics (``server.metrics``).
  ``GET /openapi.json``: the OpenAPI document of these routes (``protocol.openapi``).
* ``GET /``, ``GET /r/{room}``, ``GET /rules[/{variant}]``, ``GET /replay``: the web
  client's page, ``server/static/index.html``; ``/static/*``.

The endpoints are module-level functions reading the process's :class:`Services`, which the
lifespan builds and hands to every request as lifespan state (``request.state.services``;
also ``app.state.services`` for tests).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket

from protocol.codec import SUBPROTOCOLS, Codec, encoding_for_subprotocol, validation_text
from protocol.messages import ROOM_ID_PATTERN, CreateRoom
from protocol.openapi import document as openapi_document

from . import frames
from .archive.grader import Grader
from .archive.outbox import game_id
from .archive.reader import ArchiveReader
from .archive.replay import replay_body
from .archive.worker import Archiver
from .broker import Broker, MemoryBroker, RedisBroker, ShardedRedisBroker
from .budgets import Budgets, RedisBudgets
from .chat.http import ROUTES as CHAT_ROUTES
from .chat.mutes import MuteStore
from .chat.service import ChatService
from .computer_seats import ComputerSeats, DecideFn
from .database import Database, database_url
from .fanout import LocalRooms
from .gcpolicy import GcPolicy
from .hints import HintDesk
from .history.http import ROUTES as HISTORY_ROUTES
from .limits import (
    AddressLimits,
    charge_address_read,
    client_address,
    http_protocol,
    retry_after_header,
)
from .lobby.http import ROUTES as LOBBY_ROUTES
from .lobby.index import LobbyIndex, MemoryLobbyIndex
from .lobby.redis_index import RedisLobbyIndex
from .lobby.service import Lobby
from .matchmaking.matcher import Matchmaker
from .matchmaking.ratings import rating_reader
from .matchmaking.store import queue_store
from .metrics import CONTENT_TYPE, Metrics
from .moderation import Moderation, ModerationStore, Sanctions
from .moderation.http import ROUTES as MODERATION_ROUTES
from .origins import OriginPolicy
from .overload import ActionGate
from .passkeys.http import ROUTES as PASSKEY_ROUTES
from .passkeys.store import PasskeyStore
from .players.auth import ApiError, api_error_response, optional_player
from .players.http import ROUTES as PLAYER_ROUTES
from .players.store import PlayerStore
from .presence import Presence
from .proxies import ClientAddressMiddleware
from .ratings.http import ROUTES as RATING_ROUTES
from .rooms import GameFactory, RoomError, RoomService
from .session import Session
from .settings import Settings
from .social.build import build_social
from .social.http import ROUTES as SOCIAL_ROUTES
from .social.service import SocialService
from .store.base import (
    OutcomeUnknown,
    RoomStore,
    StoreError,
    StoreUnavailable,
    takeover_times,
)
from .store.cluster import ClusterKeys, ClusterRedisStore
from .store.memory import MemoryStore
from .store.redis import RedisStore
from .timers import Sweeper
from .tokens import TokenIssuer
from .upkeep import Upkeep
from .views import seat_infos
from .web.body import CLOSE, BodyError, BodyNotRead, BodyTooLarge, read_json_object
from .web.headers import SecurityHeaders
from .wsguard import ws_protocol

log = logging.getLogger(__name__)

STATIC_DIR = Path(__file__).resolve().parent / "static"


@dataclass
class Services:
    """Everything one server process runs, built by the lifespan."""

    settings: Settings
    store: RoomStore
    broker: Broker
    service: RoomService
    rooms: LocalRooms
    presence: Presence
    sweeper: Sweeper
    computers: ComputerSeats
    hints: HintDesk
    """Makes hints once per room version and seat, a bounded number at once."""
    upkeep: Upkeep
    origins: OriginPolicy
    metrics: Metrics | None = None
    limits: AddressLimits | None = None
    actions: ActionGate | None = None
    database: Database | None = None
    archiver: Archiver | None = None
    archive: ArchiveReader | None = None
    grader: Grader | None = None
    """Grades archived games off the event loop (``server.archive.grader``)."""
    players: PlayerStore | None = None
    passkeys: PasskeyStore | None = None
    lobby: Lobby | None = None
    social: SocialService | None = None
    chat: ChatService | None = None
    """Table talk (``server.chat``)."""
    moderation: Moderation | None = None
    """Reports, silences, bans and the moderators' API (``server.moderation``)."""
    matchmaking: Matchmaker | None = None


@dataclass(frozen=True)
class AppConfig:
    """What :func:`create_app` was given (read by the lifespan)."""

    settings: Settings
    game_factory: GameFactory | None = None
    seed_factory: Callable[[], str] | None = None
    decide: DecideFn | None = None


def redis_client(settings: Settings) -> Redis:
    """The process's Redis client: a blocking pool (a command waits up to
    ``redis_pool_timeout`` for a free connection instead of failing at once), short socket
    timeouts (``redis_timeout_seconds``) and no client-side retries (the room service
    decides what to retry, knowing what is safe)."""
    return Redis.from_pool(
        BlockingConnectionPool.from_url(
            settings.redis_url,
            decode_responses=True,
            max_connections=settings.redis_max_connections,
            timeout=settings.redis_pool_timeout,
            socket_timeout=settings.redis_timeout_seconds,
            socket_connect_timeout=settings.redis_timeout_seconds,
            retry=Retry(NoBackoff(), 0),
        )
    )


def redis_cluster_client(settings: Settings) -> RedisCluster:
    """The process's Redis Cluster client (``redis_cluster``): ``redis_url`` names any
    node (the others are discovered); per-node pools of ``redis_max_connections``, the same
    short socket timeouts, and no retries of its own (``MOVED``/``ASK`` are still followed;
    the store and the room service decide what else to retry)."""
    return RedisCluster.from_url(
        settings.redis_url,
        decode_responses=True,
        max_connections=settings.redis_max_connections,
        socket_timeout=settings.redis_timeout_seconds,
        socket_connect_timeout=settings.redis_timeout_seconds,
        retry=Retry(NoBackoff(), 0),
    )


@contextlib.asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[dict[str, Any]]:
    """Build the process's services, start its background loops, and stop them at the end
    (a clean stop also removes this process's presence)."""
    config: AppConfig = app.state.config
    settings = config.settings
    store: RoomStore
    broker: Broker
    budgets: Budgets | None = None
    lobby_index: LobbyIndex
    client: Any = None  # the Redis (or cluster) client, for server.social
    cluster_keys: ClusterKeys | None = None
    if settings.redis_url and settings.redis_cluster:
        cluster = redis_cluster_client(settings)
        budgets = RedisBudgets(cluster, settings.key_prefix)
        lobby_index = RedisLobbyIndex(cluster, settings.key_prefix)
        keys = ClusterKeys(settings.key_prefix, settings.redis_cluster_buckets)
        client, cluster_keys = cluster, keys
        broker = ShardedRedisBroker(cluster, keys.channel, settings.redis_timeout_seconds)
        store = ClusterRedisStore(
            cluster, settings.key_prefix, settings.room_ttl_seconds,
            published=broker.published, buckets=settings.redis_cluster_buckets,
            wait_ms=settings.redis_cluster_wait_ms,
        )
    elif settings.redis_url:
        redis = redis_client(settings)
        client = redis
        budgets = RedisBudgets(redis, settings.key_prefix)
        lobby_index = RedisLobbyIndex(redis, settings.key_prefix)
        broker = RedisBroker(redis, settings.key_prefix)
        store = RedisStore(
            redis, settings.key_prefix, settings.room_ttl_seconds, published=broker.published,
        )
    else:
        broker = MemoryBroker()
        store = MemoryStore(broker, settings.room_ttl_seconds)
        lobby_index = MemoryLobbyIndex()
    await broker.start()
    service = RoomService(
        store, settings, game_factory=config.game_factory, seed_factory=config.seed_factory,
        tokens=TokenIssuer(await _token_secret(settings, store)),
    )
    sweeper = Sweeper(store, service, settings)
    rooms = LocalRooms(broker, service, settings.presence_frame_interval_seconds)
    presence = Presence(store, service, settings)
    service.presence = presence
    gc_policy = GcPolicy(settings.gc_young_interval_seconds) if settings.gc_freeze else None
    services = Services(
        settings=settings, store=store, broker=broker, service=service, rooms=rooms,
        presence=presence, sweeper=sweeper,
        computers=ComputerSeats(service, sweeper, config.decide,
                                processes=settings.computer_processes),
        hints=HintDesk(settings.hints_in_flight),
        upkeep=Upkeep(store, presence, rooms, settings, gc_policy),
        origins=OriginPolicy(settings.allowed_origins, settings.public_url),
    )
    database = Database(database_url(settings.database_url, settings.data_dir))
    services.database = database
    services.archiver = Archiver(service, sweeper, database, settings)
    services.archive = ArchiveReader(database)
    services.grader = Grader(database)
    services.archiver.grader = services.grader
    services.players = PlayerStore(database)
    services.passkeys = PasskeyStore(database)
    services.lobby = Lobby(lobby_index, service, settings, database)
    service.commit_hooks.append(services.lobby.on_commit)
    services.matchmaking = Matchmaker(
        queue_store(store, settings.key_prefix, service.clock), service, settings,
        ratings=rating_reader(database))
    services.metrics = Metrics(services)
    services.limits = AddressLimits(
        settings.max_connections_per_address, settings.rooms_per_minute,
        settings.failed_joins_per_minute, settings.connections_per_minute,
        room_reads_per_minute=settings.room_reads_per_minute,
        hints_per_minute=settings.hints_per_minute,
        shared=budgets, ipv6_prefix=settings.ipv6_prefix_length,
    )
    services.actions = ActionGate(
        settings.max_inflight_actions, settings.action_queue_seconds,
        settings.max_waiting_actions, settings.overload_lag_seconds,
    )
    services.social = build_social(settings, broker, service, services.players, database,
                                   services.limits, client, cluster_keys)
    services.matchmaking.blocks = quick_match_blocks(services.social.blocks)
    services.chat = ChatService(store, settings, service.room_settings, MuteStore(database),
                                services.social.blocks)
    services.chat.archive_hide = services.archive.hide_chat
    moderation_store = ModerationStore(database, settings.reports_per_hour)
    services.moderation = Moderation(
        moderation_store, Sanctions(moderation_store, settings.moderation_refresh_seconds),
        services.chat, service)
    services.chat.sanctions = services.moderation.sanctions
    service.banned = services.moderation.sanctions.player_banned
    services.chat.reports = moderation_store
    app.state.services = services
    if gc_policy is not None:
        gc_policy.start()
    await presence.start()
    services.archiver.start()
    services.grader.start_sweep(settings.grading_sweep_interval_seconds)
    sweeper.start()
    services.upkeep.start()
    services.metrics.start()
    services.actions.start()
    services.social.start()
    services.matchmaking.start()
    services.moderation.sanctions.start()
    try:
        yield {"services": services}
    finally:
        if gc_policy is not None:
            await gc_policy.stop()
        await services.moderation.sanctions.stop()
        await services.social.stop()
        await services.matchmaking.stop()
        await services.actions.stop()
        await services.metrics.stop()
        await services.upkeep.stop()
        await sweeper.stop()
        await services.archiver.stop()
        await services.hints.close()
        await services.computers.close()
        await services.grader.stop()
        await services.lobby.close()
        await database.close()
        await presence.close()
        await rooms.close()
        await broker.close()
        await store.close()


def quick_match_blocks(blocks: Any) -> Any:
    """The quick-match matcher's batch block check (``Matchmaker.blocks``) over the social
    block store: ``async (players) -> {(a, b), ...}`` with both orders of every pair where
    either blocked the other (issue 20: a block means never matched together); answers of
    this process are reused for 5 s (a block made on this process is seen at once)."""

    async def read(players: list[str]) -> set[tuple[str, str]]:
        pairs = await blocks.blocked_between(players, max_age=5.0)
        return {(a, b) for pair in pairs for a in pair for b in pair if a != b}

    return read


def _services(conn: Request | WebSocket) -> Services:
    return conn.state.services


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _too_many(code: str, message: str, retry_after: float | None) -> JSONResponse:
    """``429`` with ``code``, and ``retry_after`` in the body and the ``Retry-After``
    header when known."""
    detail: dict[str, Any] = {"code": code, "message": message}
    headers = None
    if retry_after is not None:
        detail["retry_after"] = round(retry_after, 3)
        headers = {"Retry-After": retry_after_header(retry_after)}
    return JSONResponse({"error": detail}, status_code=429, headers=headers)


def base_url(settings: Settings, url: Any) -> str:
    """The base of share links: ``public_url`` if set, else from the request's URL."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    scheme = {"ws": "http", "wss": "https"}.get(url.scheme, url.scheme)
    return f"{scheme}://{url.netloc}"


async def ws_endpoint(websocket: WebSocket) -> None:
    """``/ws``: check the ``Origin`` (403 at the handshake for a page of an origin
    ``allowed_origins`` does not list), negotiate the subprotocol, then serve one
    :class:`Session`.

    An address (its budget key: an IPv6 client's /64) that already holds
    ``max_connections_per_address`` open connections, or opened ``connections_per_minute``
    in the last minute, is refused at the handshake: ``429 {"error": {"code":
    "too_many_connections"}}``.
    """
    if origin_refused(websocket):
        await websocket.close(code=1008)  # before accept: the handshake gets HTTP 403
        return
    offered = list(websocket.scope.get("subprotocols") or [])
    chosen = next((p for p in offered if p in SUBPROTOCOLS), None)
    if offered and chosen is None:
        await websocket.close(code=1002)
        return
    services = _services(websocket)
    limits = services.limits
    address = client_address(websocket.scope)
    if limits is not None:
        address = limits.key(address)
    sanctions = services.moderation.sanctions if services.moderation else None
    if sanctions is not None and sanctions.address_banned(address):
        refusal = _error(403, "banned", "a moderator banned this address")
        if "websocket.http.response" in websocket.scope.get("extensions", {}):
            await websocket.send_denial_response(refusal)
        else:
            await websocket.close(code=1008)
        return
    if limits is not None and not limits.connect(address):
        limits.refused["too_many_connections"] += 1
        refusal = _too_many(
            "too_many_connections",
            f"this address already holds {limits.max_connections} open connections", None,
        )
        if "websocket.http.response" in websocket.scope.get("extensions", {}):
            await websocket.send_denial_response(refusal)
        else:  # a server without the denial extension: a bare 403
            await websocket.close(code=1008)
        return
    try:
        await websocket.accept(subprotocol=chosen)
        await _serve(websocket, services, chosen, address)
    finally:
        if limits is not None:
            limits.disconnect(address)


async def _serve(
    websocket: WebSocket, services: Services, chosen: str | None, address: str
) -> None:
    session = Session(
        websocket,
        Codec(encoding_for_subprotocol(chosen)),
        services.service,
        services.rooms,
        services.settings,
        base_url(services.settings, websocket.url),
        services.metrics,
        address,
        services.limits,
        services.actions,
        players=services.players,
        lobby=services.lobby,
        social=services.social,
        chat=services.chat,
    )
    session.matchmaking = services.matchmaking
    session.computers = services.computers
    session.hints = services.hints
    sanctions = services.moderation.sanctions if services.moderation else None
    session.sanctions = sanctions
    if sanctions is not None:
        sanctions.register(session)
    services.metrics.connections += 1
    try:
        await session.run()
    finally:
        services.metrics.connections -= 1
        if sanctions is not None:
            sanctions.unregister(session)


def origin_refused(conn: Request | WebSocket) -> bool:
    """Whether the request's ``Origin`` is not allowed (``server.origins``)."""
    policy = _services(conn).origins
    return not policy.allows(conn.headers.get("origin"), conn.headers.get("host"))


async def create_room(request: Request) -> Response:
    """``POST /api/rooms``: 201 with the room (the same room again for a repeated
    ``request_id``); 400 ``bad_options``, ``rated_options``, ``rated_turn_clock`` (a rated
    room that may not be: ``server.room_settings``); 409 ``request_id_reused``; 403
    ``origin_not_allowed`` (a page of an origin ``allowed_origins`` does not list); 413
    ``too_large`` (a body longer than ``max_body_bytes``); 429 ``too_many_rooms`` with
    ``Retry-After`` (the address's ``rooms_per_minute`` is spent)."""
    if origin_refused(request):
        return _error(403, "origin_not_allowed",
                      "pages of this origin may not create rooms here (allowed_origins)")
    limit = _services(request).settings.max_body_bytes
    try:
        data = await read_json_object(request, limit)
    except BodyTooLarge as exc:
        return JSONResponse({"error": {"code": "too_large", "message": str(exc)}},
                            status_code=413, headers=CLOSE)
    except BodyNotRead as exc:
        if exc.disconnected:  # the client went away mid-body: nobody to answer
            return Response(status_code=400)
        return _error(400, "bad_options", str(exc))
    except BodyError as exc:
        return _error(400, "bad_options", str(exc))
    try:
        create = CreateRoom.model_validate({**data, "type": "create_room"})
    except ValidationError as exc:  # (a subclass of ValueError: caught first)
        return _error(400, "bad_options", validation_text(exc))
    except ValueError as exc:
        return _error(400, "bad_options", str(exc))
    services = _services(request)
    limits = services.limits
    ticket = None
    if limits is not None:
        ticket = await limits.take(limits.rooms, limits.key(client_address(request.scope)))
        if not ticket.taken:
            limits.refused["too_many_rooms"] += 1
            return _too_many("too_many_rooms", "this address created too many rooms; retry "
                             "after Retry-After seconds", ticket.wait)
    try:
        record, creator = await services.service.create_room(
            create.options.model_dump(),
            computers=dict(create.computers),
            room=create.room.model_dump(),
            request_id=create.request_id,
        )
    except (RoomError, StoreUnavailable) as exc:
        if ticket is not None:  # nothing was created: the room does not count
            await ticket.refund()
        if isinstance(exc, StoreUnavailable):
            raise
        return _error(409 if exc.code == "request_id_reused" else 400, exc.code, exc.message)
    body_out = frames.room_created(
        record, creator, base_url(services.settings, request.url),
        services.service.room_settings(record),
    )
    del body_out["type"]
    return JSONResponse(body_out, status_code=201)


async def _your_seat(request: Request, record: Any) -> int | None:
    """The seat the request's player (``Authorization: Player <id>.<secret>``) holds in the
    room, or None: no header, a credential that does not authenticate (ignored here), no
    database, or no seat of theirs."""
    if not request.headers.get("authorization"):
        return None
    try:
        player = await optional_player(request)
    except Exception:  # noqa: BLE001 (a wrong credential or the database: not told)
        return None
    if player is None:
        return None
    return next((i for i, s in enumerate(record.seats)
                 if s.kind == "human" and s.player == player.id), None)


async def room_summary(request: Request) -> Response:
    """``GET /api/rooms/{room}``: the room's public summary; 404 ``room_not_found``; 429
    ``too_many_room_reads`` with ``Retry-After`` (the address's ``room_reads_per_minute``
    is spent: every request counts, found or not)."""
    services = _services(request)
    if services.limits is not None:
        limits = services.limits
        ticket = await limits.take(limits.room_reads, limits.key(client_address(request.scope)))
        if not ticket.taken:
            limits.refused["too_many_room_reads"] += 1
            return _too_many("too_many_room_reads", "this address read too many room "
                             "summaries; retry after Retry-After seconds", ticket.wait)
    room_id = request.path_params["room"]
    if not re.fullmatch(ROOM_ID_PATTERN, room_id):
        return _error(404, "room_not_found", "no such room")
    record, _ = await services.store.load(room_id)
    if record is None:
        return _error(404, "room_not_found", "no such room")
    presence = await services.store.presence(room_id)
    takeovers = None
    if record.status == "playing" and any(
        s.kind == "human" and not s.standin and not presence.get(i) for i, s in
        enumerate(record.seats)
    ):
        takeovers = takeover_times(await services.store.deadlines(room_id))
    games = int(record.state.get("game_number", 1)) - 1 if record.state else 0
    return JSONResponse(
        {
            "room": record.id,
            "options": record.options,
            "room_settings": services.service.room_settings(record),
            "status": record.status,
            "version": record.version,
            "seats": seat_infos(record, presence, takeovers),
            "seats_taken": sum(1 for s in record.seats if s.taken),
            "games_played": games,
            "your_seat": await _your_seat(request, record),
            "created": record.created,
            "updated": record.updated,
            # The id the finished (or abandoned) game is archived under, known as it ends.
            "game": (game_id(record.id, record.created, record.game_number)
                     if record.status == "game_over" or record.abandoned else None),
        }
    )


GAME_ID_PATTERN = r"^[a-z2-7]{16}$"
"""An archived game's id (``server.archive.outbox.game_id``)."""


async def archived_game(request: Request) -> Response:
    """``GET /api/games/{game}``: an archived game in the replay file shape, with its seeds
    (``server.archive.replay``); 404 ``game_not_found``; 429 ``too_many_game_reads`` with
    ``Retry-After`` (the address's ``game_reads_per_minute`` is spent: every request counts,
    found or not; a game of 121 holes costs about 10 ms of CPU to read and encode, 20 times
    a room summary); 503 ``database_unavailable``."""
    refused = await charge_address_read(
        request, "game_reads", _services(request).settings.game_reads_per_minute,
        "too_many_game_reads",
        "this address read too many archived games; retry after Retry-After seconds")
    if refused is not None:
        return refused
    game_id = request.path_params["game"]
    if not re.fullmatch(GAME_ID_PATTERN, game_id):
        return _error(404, "game_not_found", "no such game")
    reader = _services(request).archive
    try:
        found = await reader.game(game_id) if reader is not None else None
    except Exception as exc:
        log.warning("archive read failed: %s", exc)
        return _error(503, "database_unavailable", "the database cannot be reached; try again")
    if found is None:
        return _error(404, "game_not_found", "no such game")
    out = replay_body(found)
    out["grading"] = await _grading(request, found)
    return JSONResponse(out)


GRADING_WAIT_SECONDS = 3.0
"""How long ``GET /api/games/{id}`` waits for a grading being made (past it, the answer has
``grading: null`` and the grading is stored for the next read)."""


async def _grading(request: Request, found: Any) -> dict[str, Any] | None:
    """The game's grading (``server.archive.grader``): stored, or graded now on this first
    read; None when it cannot be had now (the database or the pool failed: a later read
    tries again)."""
    grader = _services(request).grader
    if grader is None:
        return None
    try:
        return await grader.grading(found, wait=GRADING_WAIT_SECONDS)
    except Exception as exc:  # noqa: BLE001 (the game is shown without it)
        log.warning("grading of game %s not read: %s", found.game["id"], exc)
        return None


async def healthz(request: Request) -> Response:
    """``GET /healthz``: the process is up."""
    return JSONResponse({"ok": True})


async def readyz(request: Request) -> Response:
    """``GET /readyz``: 200 when the store answers (within half a second), else 503."""
    services = _services(request)
    ok = await services.store.ping()
    backend = "redis" if services.settings.redis_url else "memory"
    return JSONResponse({"ok": ok, "store": backend}, status_code=200 if ok else 503)


async def metrics(request: Request) -> Response:
    """``GET /metrics``: the process's metrics in the Prometheus text format
    (``server.metrics``)."""
    return Response(_services(request).metrics.render(), media_type=CONTENT_TYPE)


async def openapi(request: Request) -> Response:
    """``GET /openapi.json``: the OpenAPI 3.1 document of the HTTP API (the same as
    ``docs/openapi.json``)."""
    return JSONResponse(openapi_document())


async def index(request: Request, status_code: int = 200) -> Response:
    """The web client's page (``/``, ``/r/{room}``, ``/rules``, ``/replay``)."""
    page = STATIC_DIR / "index.html"
    if page.is_file():
        return FileResponse(page, status_code=status_code, media_type="text/html")
    return PlainTextResponse(
        "cribbage-server: no web client installed; connect a client to /ws\n",
        status_code=404,
    )


RULES_PAGES = frozenset({"standard", "backup10", "lowball", "muggins"})
"""The rules pages the web client has (``VARIANTS`` in ``server/static/js/rules.js``)."""


async def rules_page(request: Request) -> Response:
    """``GET /rules/{variant}``: the page; 404 (the page says so, in the reader's language)
    for a variant there are no rules of."""
    known = request.path_params["variant"] in RULES_PAGES
    return await index(request, 200 if known else 404)


ROUTES = [
    WebSocketRoute("/ws", ws_endpoint),
    Route("/api/rooms", create_room, methods=["POST"]),
    Route("/api/rooms/{room}", room_summary, methods=["GET"]),
    Route("/api/games/{game}", archived_game, methods=["GET"]),
    *PASSKEY_ROUTES,
    *PLAYER_ROUTES,
    *SOCIAL_ROUTES,
    *CHAT_ROUTES,
    *MODERATION_ROUTES,
    Route("/healthz", healthz, methods=["GET"]),
    Route("/readyz", readyz, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
    Route("/openapi.json", openapi, methods=["GET"]),
    Route("/", index, methods=["GET"]),
    Route("/r/{room}", index, methods=["GET"]),
    Route("/rules", index, methods=["GET"]),
    Route("/rules/{variant}", rules_page, methods=["GET"]),
    Route("/replay", index, methods=["GET"]),
    *HISTORY_ROUTES,
    *RATING_ROUTES,
    *LOBBY_ROUTES,
    Mount("/static", StaticFiles(directory=STATIC_DIR, check_dir=False), name="static"),
]


NOT_FOUND_CODES = (("/api/rooms/", "room_not_found", "no such room"),
                   ("/api/games/", "game_not_found", "no such game"))
"""A path under these that no route takes (an id with an encoded slash, ``..%2F..``) is
answered as a missing room or game, with its code."""


async def _not_found(request: Request, exc: Exception) -> Response:
    """A 404 no route or handler answered: under :data:`NOT_FOUND_CODES`' paths a JSON
    error with their code, elsewhere the plain text starlette gives. (Starlette looks a
    status code's handler up before an exception class's: an :class:`ApiError` 404 is
    answered as every ApiError is.)"""
    if isinstance(exc, ApiError):
        return await api_error_response(request, exc)
    path = request.url.path
    for prefix, code, message in NOT_FOUND_CODES:
        if path.startswith(prefix):
            return _error(404, code, message)
    headers = getattr(exc, "headers", None)
    return PlainTextResponse("Not Found", status_code=404, headers=headers)


class CribbageApp(Starlette):
    """The starlette app, with :class:`server.web.headers.SecurityHeaders` outermost: around
    starlette's own error middleware, so that even its ``500`` carries the headers."""

    frame_ancestors = "'none'"

    def build_middleware_stack(self) -> Any:
        return SecurityHeaders(super().build_middleware_stack(), self.frame_ancestors)


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
        The starlette app; ``app.state.services`` holds the :class:`Services` once the
        lifespan has started.
    """
    settings = settings or Settings()
    origins = OriginPolicy(settings.allowed_origins, settings.public_url)
    app = CribbageApp(
        routes=ROUTES,
        lifespan=lifespan,
        middleware=[
            Middleware(ClientAddressMiddleware, trusted=settings.forwarded_allow_ips),
            Middleware(CORSMiddleware, **origins.cors_options()),
        ],
        exception_handlers={
            404: _not_found,
            StoreError: _store_down, RedisError: _store_down, ApiError: api_error_response,
            Exception: _internal_error,
        },
    )
    app.frame_ancestors = settings.frame_ancestors
    app.state.config = AppConfig(settings, game_factory, seed_factory, decide)
    return app


async def _token_secret(settings: Settings, store: RoomStore) -> bytes:
    """The secret that signs tokens: the setting, else the store's shared one. If the store
    cannot be reached at start-up, a secret of this process only (logged): its tokens are
    then not recognised by other processes."""
    if settings.token_secret:
        return hashlib.sha256(settings.token_secret.encode()).digest()
    try:
        return await store.token_secret()
    except StoreError as exc:
        log.warning("no shared token secret (%s); using one of this process only", exc)
        return secrets.token_bytes(32)


async def _store_down(request: Request, exc: Exception) -> Response:
    """HTTP requests while the store cannot be reached: ``503`` with ``store_unavailable``,
    or ``outcome_unknown`` when a write may have been applied."""
    if isinstance(exc, OutcomeUnknown):
        return _error(503, "outcome_unknown",
                      "the room store stopped answering mid-change; check before retrying")
    if not isinstance(exc, StoreUnavailable):
        log.warning("store error on %s %s: %s", request.method, request.url.path, exc)
    return _error(503, "store_unavailable", "the room store cannot be reached; try again")


async def _internal_error(request: Request, exc: Exception) -> Response:
    """Any other unexpected error: ``500 {"code": "internal"}`` (the traceback is logged)."""
    log.error("internal error on %s %s", request.method, request.url.path, exc_info=exc)
    return _error(500, "internal", "internal server error")


def uvicorn_kwargs(settings: Settings) -> dict[str, Any]:
    """Options the server runs uvicorn with: the default stack (httptools, websockets)
    with a deadline on each whole request (``request_timeout_seconds``) and a cap on its
    line and headers (``max_header_bytes``, :class:`server.limits.GuardedHttpToolsProtocol`),
    a budget of wire frames and bytes per WebSocket
    (:class:`server.wsguard.GuardedWebSocketProtocol`) and no permessage-deflate.
    uvicorn's own proxy headers middleware is off: the app's
    :class:`server.proxies.ClientAddressMiddleware` takes the client address from
    ``X-Forwarded-For`` of the proxies in ``forwarded_allow_ips`` only (none by default)."""
    return {
        "host": settings.host,
        "port": settings.port,
        "http": http_protocol(settings.request_timeout_seconds, settings.max_header_bytes),
        "ws": ws_protocol(
            settings.wire_frame_rate, settings.wire_frame_burst, settings.wire_bytes_rate,
            settings.wire_bytes_burst, settings.ws_close_timeout_seconds,
        ),
        "ws_per_message_deflate": False,
        "ws_max_size": max(1 << 20, settings.max_frame_bytes * 4),
        "proxy_headers": False,
        "lifespan": "on",
    }
