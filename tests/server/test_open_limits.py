"""Limits for a server on the open internet (issue 10, part B), each against a real server:
the body of ``POST /api/rooms``, web origins (``/ws`` handshakes, CORS, cross-site posts),
display names, creator tokens, and bounded memory (the in-memory store's expiry, the
process's record cache)."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import time

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from protocol.client import Client, ClientError
from server.origins import OriginPolicy

# -- the body of POST /api/rooms ------------------------------------------------------------


def rss_bytes() -> int:
    """This process's resident set size (the in-thread server runs in it)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def status_of(sock: socket.socket) -> tuple[int, dict]:
    """Read an HTTP response from ``sock``: ``(status, JSON body)``."""
    sock.settimeout(5)
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body) if body.strip() else {}


def closed_after_answer(sock: socket.socket) -> bool:
    """Whether the server closes ``sock`` within 3 s of its answer (read by
    :func:`status_of`): nothing more arrives but the end (or a reset)."""
    sock.settimeout(3)
    try:
        return sock.recv(65536) == b""
    except ConnectionResetError:
        return True


BODY = 64 * 1024 * 1024


def test_a_large_declared_body_is_refused_before_it_is_read(server):
    """A 64 MiB ``Content-Length`` is answered 413 at once: the server does not wait for
    (or read) the body, and the process does not grow."""
    before = rss_bytes()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\n"
                     + f"Content-Length: {BODY}\r\n\r\n".encode() + b"{" * 65536)
        status, body = status_of(sock)
        # ... and closes the connection: it does not go on reading the refused body until
        # the request deadline (10 s).
        assert closed_after_answer(sock)
    assert status == 413 and body["error"]["code"] == "too_large"
    assert rss_bytes() - before < 8 * 1024 * 1024


def test_a_large_chunked_body_is_read_only_up_to_the_limit(server):
    """A chunked body (no ``Content-Length``) of up to 64 MiB: the server reads at most
    ``max_body_bytes`` of it, answers 413, and its memory does not grow by the body."""
    before = rss_bytes()
    chunk = b"{" * 65536
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        sock.settimeout(5)
        try:
            while sent < BODY:
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    break  # the answer came before the whole body was sent
                sock.sendall(framed)
                sent += len(chunk)
            else:
                sock.sendall(b"0\r\n\r\n")
        except OSError:
            pass  # the server stopped reading and closed: what the test wants
        status, body = status_of(sock)
    assert status == 413 and body["error"]["code"] == "too_large"
    assert sent < BODY, "the server let the whole 64 MiB be sent before answering"
    assert rss_bytes() - before < 16 * 1024 * 1024


def test_a_request_head_over_the_limit_is_refused_as_it_arrives(make_server):
    """A request whose line and headers pass ``max_header_bytes`` is answered ``431
    headers_too_large`` while its head is still arriving, and the connection is closed:
    httptools would otherwise keep an endless header in memory until the request deadline.
    A head under the limit is served as before."""
    limit = 16 * 1024
    srv = make_server(redis=False, max_header_bytes=limit)

    def head(size: int, *, close: bool = True) -> bytes:
        """A request whose line and headers are exactly ``size`` bytes."""
        start = b"GET /api/rooms/nosuchroom HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        end = (b"Connection: close\r\n" if close else b"") + b"\r\n"
        pad = size - len(start) - len(end) - len(b"X-Pad: \r\n")
        return start + b"X-Pad: " + b"a" * pad + b"\r\n" + end

    # Up to the byte: the limit itself is served, one more is not.
    for size, expected in ((limit, 404), (limit + 1, 431)):
        with socket.create_connection(("127.0.0.1", srv.port)) as sock:
            sock.sendall(head(size))
            assert status_of(sock)[0] == expected, size
    # Whole in a later read: a head that passes the limit only with its last read.
    with socket.create_connection(("127.0.0.1", srv.port)) as sock:
        whole = head(2 * limit)
        sock.sendall(whole[:limit - 100])
        time.sleep(0.3)
        sock.sendall(whole[limit - 100:])
        status, body = status_of(sock)
    assert status == 431 and body["error"]["code"] == "headers_too_large", body
    # Two requests in one write, each under the limit: both served.
    with socket.create_connection(("127.0.0.1", srv.port)) as sock:
        sock.sendall(head(limit - 1000, close=False) + head(limit - 1000))
        sock.settimeout(5)
        data = b""
        while data.count(b"HTTP/1.1 ") < 2:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    assert data.count(b"HTTP/1.1 404") == 2, data[:200]
    sent = 0
    before = rss_bytes()
    with socket.create_connection(("127.0.0.1", srv.port)) as sock:
        sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ")
        try:
            while sent < BODY:
                if select.select([sock], [], [], 0)[0]:
                    break  # answered before the head ended
                sock.sendall(b"a" * 4096)
                sent += 4096
        except OSError:
            pass  # closed while sending: the answer was written first
        status, body = status_of(sock)
        closed = closed_after_answer(sock)
    assert status == 431 and body["error"]["code"] == "headers_too_large", body
    assert closed
    # (What was sent includes what the loopback's socket buffers took: megabytes.)
    assert sent < BODY, "the server let a 64 MiB header be sent before answering"
    assert rss_bytes() - before < 16 * 1024 * 1024


def test_a_request_that_is_not_http_gets_the_apis_error_body(make_server):
    """A request httptools cannot parse (a Content-Length that is not a number) is answered
    400 with the API's JSON error body (``bad_request``), and the connection is closed."""
    srv = make_server(redis=False)
    with socket.create_connection(("127.0.0.1", srv.port)) as sock:
        sock.sendall(b"POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Length: abc\r\n\r\n{}")
        status, body = status_of(sock)
    assert status == 400 and body["error"]["code"] == "bad_request", body


def test_body_limit_is_a_setting(make_server):
    srv = make_server(redis=False, max_body_bytes=2048)
    padding = {"options": {"players": 2}, "computers": {}, "room": {"hints": True}}
    small = json.dumps(padding).encode() + b" " * 1500
    assert httpx.post(f"{srv.http}/api/rooms", content=small).status_code == 201
    r = httpx.post(f"{srv.http}/api/rooms", content=small + b" " * 1000)
    assert r.status_code == 413 and r.json()["error"]["code"] == "too_large"


# -- origins -----------------------------------------------------------------------------------


def test_origin_policy_rules():
    policy = OriginPolicy(["loopback"])
    assert policy.allows(None, "cards.example")  # not a browser
    assert policy.allows("https://cards.example", "cards.example")  # its own origin
    assert policy.allows("http://cards.example:8000", "cards.example:8000")
    assert not policy.allows("http://cards.example:9000", "cards.example:8000")
    assert not policy.allows("https://evil.example", "cards.example")
    assert policy.allows("http://127.0.0.1:5173", "cards.example")
    assert policy.allows("http://localhost:3000", "cards.example")
    assert policy.allows("http://[::1]:3000", "cards.example")
    assert not policy.allows("http://localhost.evil.example", "cards.example")
    assert not policy.allows("null", "cards.example")
    exact = OriginPolicy(["https://play.example"], public_url="https://cards.example/")
    assert exact.allows("https://play.example", "internal:8000")
    assert exact.allows("https://play.example:443", "internal:8000")
    assert exact.allows("https://cards.example", "internal:8000")  # public_url
    assert not exact.allows("http://127.0.0.1:5173", "internal:8000")
    assert OriginPolicy(["*"]).allows("https://anyone.example", "cards.example")


async def ws_status(url: str, origin: str | None) -> int:
    """101 when the handshake is accepted, else the HTTP status it was refused with."""
    headers = {"Origin": origin} if origin else None
    try:
        async with websockets.connect(url, additional_headers=headers, open_timeout=5):
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


async def test_ws_refuses_other_origins_at_the_handshake(make_server):
    srv = make_server(redis=False)
    own = f"http://127.0.0.1:{srv.port}"
    assert await ws_status(srv.ws, None) == 101  # bots and other non-browser clients
    assert await ws_status(srv.ws, own) == 101
    assert await ws_status(srv.ws, "http://localhost:5173") == 101  # loopback
    assert await ws_status(srv.ws, "https://evil.example") == 403
    assert await ws_status(srv.ws, "null") == 403
    strict = make_server(redis=False, allowed_origins="https://play.example")
    assert await ws_status(strict.ws, "https://play.example") == 101
    assert await ws_status(strict.ws, f"http://127.0.0.1:{strict.port}") == 101  # own
    assert await ws_status(strict.ws, "http://localhost:5173") == 403
    assert await ws_status(strict.ws, None) == 101  # still: clients that are not browsers
    everyone = make_server(redis=False, allowed_origins="*")
    assert await ws_status(everyone.ws, "https://evil.example") == 101


def test_http_api_answers_cors_for_allowed_origins(make_server):
    srv = make_server(redis=False, allowed_origins="loopback,https://play.example")
    url = f"{srv.http}/api/rooms"
    preflight = {"Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"}
    r = httpx.options(url, headers={"Origin": "https://play.example", **preflight})
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "https://play.example"
    assert "POST" in r.headers["access-control-allow-methods"]
    assert "content-type" in r.headers["access-control-allow-headers"].lower()
    r = httpx.options(url, headers={"Origin": "http://127.0.0.1:5173", **preflight})
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == "http://127.0.0.1:5173"
    r = httpx.options(url, headers={"Origin": "https://evil.example", **preflight})
    assert r.status_code == 400 and "access-control-allow-origin" not in r.headers
    r = httpx.post(url, json={}, headers={"Origin": "https://play.example"})
    assert r.status_code == 201
    assert r.headers["access-control-allow-origin"] == "https://play.example"
    r = httpx.get(f"{srv.http}/api/rooms/{r.json()['room']}",
                  headers={"Origin": "https://play.example"})
    assert r.headers["access-control-allow-origin"] == "https://play.example"


def test_a_cross_site_text_plain_post_is_refused(make_server):
    """What a form or ``fetch(..., {mode: "no-cors"})`` of another site can send without a
    preflight: refused, and no room is made."""
    srv = make_server(redis=False)
    r = httpx.post(f"{srv.http}/api/rooms", content=b'{"options": {"players": 2}}',
                   headers={"Origin": "https://evil.example", "Content-Type": "text/plain"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "origin_not_allowed"
    assert srv.app.state.services.store.room_count == 0
    # the same body from the server's own page, and from a client with no Origin, works
    own = {"Origin": f"http://127.0.0.1:{srv.port}", "Content-Type": "text/plain"}
    assert httpx.post(f"{srv.http}/api/rooms", content=b"{}", headers=own).status_code == 201
    assert httpx.post(f"{srv.http}/api/rooms", content=b"{}").status_code == 201


# -- names and tokens ---------------------------------------------------------------------------

INVISIBLE_NAMES = ["\u3164", "\u2800\u2800", "\u115f\u1160", "\uffa0", "\u200d", " \u200d ",
                   "\u3000", "\u200b", "a\u200b", "a\u0000b", "\u202eevil", "\u00a0\u3164",
                   "\u0301", "Ann\u2028Bob", "Ann\u2029Bob"]


@pytest.mark.parametrize("name", INVISIBLE_NAMES)
async def test_invisible_and_control_names_are_refused(server, name):
    with pytest.raises(ClientError) as err:
        await Client.connect(server.ws, name=name)
    assert err.value.code == "bad_name"


@pytest.mark.parametrize("name", ["Ann", "Åsa Öberg", "Søren", "👩\u200d💻", "❤️\u200d🔥",
                                  "李", "\u3164Bo"])
async def test_visible_names_are_taken(server, name):
    c = await Client.connect(server.ws, name=name)
    await c.close()


async def set_computer(client: Client, room: str, token: str) -> dict:
    return await client.request(
        {"type": "set_computer", "room": room, "seat": 1, "level": "easy",
         "creator_token": token},
        lambda f: f["type"] in ("update", "error"),
    )


async def test_the_creator_token_is_not_a_player_token(server):
    ann = await Client.connect(server.ws, name="Ann")
    try:
        created = await ann.create_room({"players": 2})
        creator = created["creator_token"]
        assert server.app.state.services.service.tokens.is_creator(creator)
        with pytest.raises(ClientError) as err:
            await ann.join(created["room"], 0, token=creator)
        assert err.value.code == "not_player_token"
        with pytest.raises(ClientError) as err:
            await Client.connect(server.ws, name="Mallory", token=creator)
        assert err.value.code == "not_player_token"
        # it still does what it is for
        await ann.join(created["room"], 0)
        await set_computer(ann, created["room"], creator)
        await ann.wait_until(lambda c: c.status == "playing")
        # and a player token is not a creator token
        other = (await ann.create_room({"players": 2}))["room"]
        with pytest.raises(ClientError) as err:
            await set_computer(ann, other, ann.player_token)
        assert err.value.code == "bad_token"
    finally:
        await ann.close()


# -- bounded memory -------------------------------------------------------------------------------


def run_on(srv, coro):
    """Run a coroutine on the server's event loop (its own services, in its thread)."""
    return asyncio.run_coroutine_threadsafe(coro, srv.loop).result(60)


async def test_memory_store_expires_rooms_in_the_background(make_server):
    """20,000 rooms with a computer seat, nobody reading them again: the upkeep beat drops
    them all after the room TTL, with their deadlines; the record cache holds none (no local
    session) throughout."""
    srv = make_server(redis=False, room_ttl_seconds=2, presence_lease_seconds=0.6,
                      purge_interval_seconds=0.2)
    services = srv.app.state.services

    async def create(n: int) -> None:
        for _ in range(n):
            await services.service.create_room({"players": 2}, computers={1: "standard"})

    started = time.monotonic()
    run_on(srv, create(20_000))
    made = time.monotonic() - started
    store = services.store
    assert 0 < store.room_count <= 20_000
    assert len(services.service.cache) == 0 and services.service.cache.followed == 0
    # one more, by HTTP, so the path a client takes is covered too
    assert httpx.post(f"{srv.http}/api/rooms", json={"computers": {"1": "easy"}}).status_code \
        == 201
    deadline = time.monotonic() + made + 15
    while store.room_count and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert store.room_count == 0, store.room_count
    assert len(store._expiry) == 0 and not store._deadlines


async def test_record_cache_is_bounded_and_dropped_without_local_sessions(make_server):
    srv = make_server(redis=False, record_cache_rooms=5)
    services = srv.app.state.services
    host = await Client.connect(srv.ws, name="host")
    watchers = []
    try:
        rooms = [(await host.create_room({"players": 2}))["room"] for _ in range(12)]
        for room in rooms:
            w = await Client.connect(srv.ws, name="watcher")
            await w.join(room, None)
            watchers.append(w)
        cache = services.service.cache
        assert cache.followed == 12
        assert len(cache) <= 5
        for w in watchers:
            await w.close()
        end = time.monotonic() + 5
        while (cache.followed or len(cache)) and time.monotonic() < end:
            await asyncio.sleep(0.05)
        assert cache.followed == 0 and len(cache) == 0
    finally:
        await host.close()
