"""The HTTP API: creating rooms, summaries, health and readiness, the web client route."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from crib_wire import seat_players


def test_create_and_summary(server):
    r = httpx.post(f"{server.http}/api/rooms",
                   json={"options": {"players": 3, "target": 61, "muggins": True}})
    assert r.status_code == 201
    body = r.json()
    room = body["room"]
    assert body["url"].endswith(f"/r/{room}")
    assert body["options"]["players"] == 3 and len(body["creator_token"]) >= 22
    s = httpx.get(f"{server.http}/api/rooms/{room}").json()
    assert s["status"] == "waiting" and s["seats_taken"] == 0 and len(s["seats"]) == 3
    assert s["game"] is None  # no game over yet: nothing archived to name
    assert "seed" not in s and "creator_hash" not in str(s)


def test_create_defaults_and_errors(server):
    r = httpx.post(f"{server.http}/api/rooms")
    assert r.status_code == 201 and r.json()["options"]["players"] == 2
    for bad in ({"options": {"players": 5}}, {"options": {"partnerships": True}},
                {"options": {"target": 100}}, {"options": {"colour": "red"}}, [1, 2]):
        r = httpx.post(f"{server.http}/api/rooms", json=bad)
        assert r.status_code == 400, bad
        assert r.json()["error"]["code"] == "bad_options"
    # null is no value of options, computers or room: the OpenAPI document says so and
    # create_room over the WebSocket refuses it (issue 17: it was taken as "left out")
    for field in ("options", "computers", "room"):
        r = httpx.post(f"{server.http}/api/rooms", json={field: None})
        assert r.status_code == 400, field
        assert r.json()["error"]["code"] == "bad_options", r.json()
    r = httpx.post(f"{server.http}/api/rooms", content=b"{not json")
    assert r.status_code == 400
    # White space alone is not JSON, not an empty body (schemathesis found "\t" accepted).
    for junk in (b"\t", b" \r\n", b"\x0b"):
        r = httpx.post(f"{server.http}/api/rooms", content=junk,
                       headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_options", junk
    assert httpx.get(f"{server.http}/api/rooms/nosuchroom").status_code == 404
    # An id with an encoded slash is no id: 404 with the code, as JSON (an outside check
    # met a bare text "Not Found" for these).
    for path, code in (("rooms/..%2F..", "room_not_found"),
                       ("games/..%2f..%2fetc", "game_not_found"),
                       ("games/a%2Fb", "game_not_found")):
        r = httpx.get(f"{server.http}/api/{path}")
        assert r.status_code == 404 and r.json()["error"]["code"] == code, (path, r.text)


async def test_summary_of_a_game_in_progress(server):
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        s = httpx.get(f"{server.http}/api/rooms/{room}").json()
        assert s["status"] == "playing" and s["seats_taken"] == 2 and s["game"] is None
        assert [x["connected"] for x in s["seats"]] == [True, True]
        assert [x["name"] for x in s["seats"]] == ["host", "p1"]
        assert "token" not in str(s)
    finally:
        for c in players:
            await c.close()


def test_health_and_readiness(make_server):
    redis_server = make_server()
    memory_server = make_server(redis=False)
    assert httpx.get(f"{redis_server.http}/healthz").json() == {"ok": True}
    assert httpx.get(f"{redis_server.http}/readyz").json() == {"ok": True, "store": "redis"}
    assert httpx.get(f"{memory_server.http}/readyz").json() == {"ok": True, "store": "memory"}
    down = make_server(redis_url="redis://127.0.0.1:1/0")
    r = httpx.get(f"{down.http}/readyz")
    assert r.status_code == 503 and r.json()["ok"] is False


def test_index_route(server):
    r = httpx.get(f"{server.http}/r/abcdef")
    # the web client is not part of this package yet: a 404 text, or the page once present
    assert r.status_code in (200, 404)


def test_room_summaries_per_address(make_server):
    """``GET /api/rooms/{id}`` has a per-address budget (``room_reads_per_minute``): found
    or not, every read counts; past it ``429 too_many_room_reads`` with ``Retry-After``, as
    ``docs/openapi.json`` documents (issue 17: it was not throttled at all)."""
    import json

    from test_openapi_http import check

    from protocol import openapi

    document = json.loads(openapi.OPENAPI_PATH.read_text(encoding="utf-8"))
    server = make_server(redis=False, room_reads_per_minute=3)
    room = httpx.post(f"{server.http}/api/rooms", json={}).json()["room"]
    assert httpx.get(f"{server.http}/api/rooms/{room}").status_code == 200
    assert httpx.get(f"{server.http}/api/rooms/NoSuchRoom").status_code == 404
    assert httpx.get(f"{server.http}/api/rooms/bad.id").status_code == 404
    refused = httpx.get(f"{server.http}/api/rooms/{room}")
    assert refused.status_code == 429
    check(document, "get", "/api/rooms/{room}", refused)
    error = refused.json()["error"]
    assert error["code"] == "too_many_room_reads" and 0 < error["retry_after"] <= 20
    assert int(refused.headers["retry-after"]) == max(1, -(-error["retry_after"] // 1))
    # Its own budget: creating rooms is still allowed, and the refusal is counted.
    assert httpx.post(f"{server.http}/api/rooms", json={}).status_code == 201
    metrics = httpx.get(f"{server.http}/metrics").text
    assert 'cribbage_limited_total{code="too_many_room_reads"} 1.0' in metrics
    # 0 turns it off
    unlimited = make_server(redis=False, room_reads_per_minute=0)
    for _ in range(10):
        assert httpx.get(f"{unlimited.http}/api/rooms/NoSuchRoom").status_code == 404


def test_security_headers_on_every_answer(make_server):
    """Pages get their Content-Security-Policy (no inline script, ``frame-ancestors
    'none'``) and ``X-Frame-Options``; every answer — pages, the API and its errors,
    static files, metrics, a refused WebSocket handshake — gets ``nosniff``, a referrer
    policy and a CSP (issue 17: none had any)."""
    import websockets.sync.client as wsclient
    from websockets.exceptions import InvalidStatus

    server = make_server(redis=False, max_connections_per_address=1)
    base = server.http
    page = httpx.get(f"{base}/r/abcdef")
    assert page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["frame-ancestors"] == "'none'"
    assert directives["default-src"] == "'none'" and directives["object-src"] == "'none'"
    assert "unsafe" not in policy
    assert page.headers["x-frame-options"] == "DENY"
    answers = [
        page,
        httpx.get(f"{base}/"),
        httpx.post(f"{base}/api/rooms", json={}),
        httpx.post(f"{base}/api/rooms", json={"options": None}),
        httpx.get(f"{base}/api/rooms/NoSuchRoom"),
        httpx.get(f"{base}/healthz"),
        httpx.get(f"{base}/metrics"),
        httpx.get(f"{base}/openapi.json"),
        httpx.get(f"{base}/static/app.css"),
        httpx.get(f"{base}/static/nothing-here.js"),
    ]
    for answer in answers:
        assert answer.headers["x-content-type-options"] == "nosniff", answer.url
        assert answer.headers["referrer-policy"] == "no-referrer", answer.url
        assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    api = answers[2]
    assert api.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    # The HTTP answer refusing a WebSocket handshake carries them too.
    with wsclient.connect(server.ws):
        with pytest.raises(InvalidStatus) as refused:
            wsclient.connect(server.ws)
    assert refused.value.response.status_code == 429
    assert refused.value.response.headers["x-content-type-options"] == "nosniff"


def test_rules_pages_and_an_unknown_one(server):
    """Each rules page the web client has answers 200 with the page; any other
    ``/rules/<name>`` answers 404 — still the page, which says so in the reader's language
    (tests/browser/test_table_details.py)."""
    from server.app import RULES_PAGES

    script = (Path(__file__).resolve().parents[2] / "server" / "static" / "js" / "rules.js")
    listed = script.read_text(encoding="utf-8").split("VARIANTS = [", 1)[1].split("]", 1)[0]
    assert {v.strip().strip('"') for v in listed.split(",")} == RULES_PAGES
    for path in ("/rules", *(f"/rules/{v}" for v in sorted(RULES_PAGES))):
        r = httpx.get(server.http + path)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), path
    for path in ("/rules/nonsense", "/rules/Muggins", "/rules/back-up-10"):
        r = httpx.get(server.http + path)
        assert r.status_code == 404, path
        assert r.headers["content-type"].startswith("text/html") and "/static/js/main.js" in r.text
