"""A real server's HTTP answers are what ``docs/openapi.json`` says.

* every HTTP route of ``server.app`` is in the document with its methods, and nothing else
  is (the web client's pages and ``/ws`` aside);
* ``GET /openapi.json`` serves the committed document;
* each answer a real server gives — ``201``, ``400``, ``403``, ``413``, ``200``, ``404``
  and, with its Redis killed, ``503`` — has a status the document lists for that operation, the
  documented content type, and a body that validates against the documented schema
  (JSON Schema 2020-12, with ``jsonschema``).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import jsonschema
import pytest
from starlette.routing import Mount, Route, WebSocketRoute

from protocol import openapi
from server.app import ROUTES

NOT_API = {"/", "/r/{room}", "/rules", "/rules/{variant}", "/replay", "/link/{code}",
           "/p/{player:path}", "/replay/{game:path}", "/you", "/leaderboard"}
"""The web client's pages: not part of the HTTP API."""


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return json.loads(openapi.OPENAPI_PATH.read_text(encoding="utf-8"))


def check(document: dict[str, Any], method: str, path: str, response: httpx.Response) -> None:
    """``response`` (to ``method`` on the documented ``path``) is one the document lists:
    its status, content type and body."""
    op = document["paths"][path][method]
    status = str(response.status_code)
    assert status in op["responses"], (method, path, status, response.text[:300])
    documented = op["responses"][status]
    if "$ref" in documented:
        documented = document["components"]["responses"][documented["$ref"].split("/")[-1]]
    [(media, content)] = documented["content"].items()
    assert response.headers["content-type"] == media, (path, response.headers)
    body: Any = response.json() if media == "application/json" else response.text
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema",
            **content["schema"], "components": document["components"]}
    jsonschema.Draft202012Validator(root).validate(body)


def test_every_route_is_documented(document):
    routes: set[tuple[str, str]] = set()
    for route in ROUTES:
        if isinstance(route, (WebSocketRoute, Mount)) or route.path in NOT_API:
            continue
        assert isinstance(route, Route)
        routes |= {(m.lower(), route.path) for m in route.methods if m != "HEAD"}
    documented = {(method, path) for path, item in document["paths"].items()
                  for method in item}
    assert routes == documented


def test_answers_match_the_document(make_server, document):
    server = make_server(redis=False)
    base = server.http
    served = httpx.get(f"{base}/openapi.json")
    check(document, "get", "/openapi.json", served)
    assert served.json() == document

    created = httpx.post(f"{base}/api/rooms", json={"options": {"players": 2, "target": 61},
                                                    "computers": {"1": "standard"}})
    assert created.status_code == 201
    check(document, "post", "/api/rooms", created)
    empty = httpx.post(f"{base}/api/rooms", content=b"")
    assert empty.status_code == 201
    check(document, "post", "/api/rooms", empty)
    for bad in ({"options": {"players": 5}}, {"nope": 1}, [1, 2]):
        answer = httpx.post(f"{base}/api/rooms", json=bad)
        assert answer.status_code == 400
        check(document, "post", "/api/rooms", answer)
    too_large = httpx.post(f"{base}/api/rooms", content=b" " * (17 * 1024))
    assert too_large.status_code == 413
    check(document, "post", "/api/rooms", too_large)
    cross_site = httpx.post(f"{base}/api/rooms", content=b"{}",
                            headers={"Origin": "https://evil.example",
                                     "Content-Type": "text/plain"})
    assert cross_site.status_code == 403
    check(document, "post", "/api/rooms", cross_site)

    room = created.json()["room"]
    summary = httpx.get(f"{base}/api/rooms/{room}")
    assert summary.status_code == 200
    check(document, "get", "/api/rooms/{room}", summary)
    for missing in ("nosuchroom", "bad.id"):
        answer = httpx.get(f"{base}/api/rooms/{missing}")
        assert answer.status_code == 404
        check(document, "get", "/api/rooms/{room}", answer)

    for path in ("/healthz", "/readyz", "/metrics"):
        answer = httpx.get(f"{base}{path}")
        assert answer.status_code == 200
        check(document, "get", path, answer)
    assert httpx.get(f"{base}/readyz").json() == {"ok": True, "store": "memory"}


def test_store_outage_answers_match_the_document(make_server, own_redis, document):
    server = make_server(redis=False, redis_url=own_redis.url)
    base = server.http
    created = httpx.post(f"{base}/api/rooms", json={})
    check(document, "post", "/api/rooms", created)
    ready = httpx.get(f"{base}/readyz")
    assert ready.json() == {"ok": True, "store": "redis"}
    own_redis.kill()
    answer = httpx.post(f"{base}/api/rooms", json={}, timeout=30)
    assert answer.status_code == 503
    check(document, "post", "/api/rooms", answer)
    answer = httpx.get(f"{base}/api/rooms/{created.json()['room']}", timeout=30)
    assert answer.status_code == 503
    check(document, "get", "/api/rooms/{room}", answer)
    answer = httpx.get(f"{base}/readyz", timeout=30)
    assert answer.status_code == 503
    check(document, "get", "/readyz", answer)
    assert answer.json() == {"ok": False, "store": "redis"}
    check(document, "get", "/healthz", httpx.get(f"{base}/healthz"))
