"""The players' HTTP API on a real server — in memory with SQLite, and on Redis with
PostgreSQL: make, read, change, export and delete a player; one-time codes for another
device (single use, limited tries); the limits on players made, codes made and codes
tried."""

from __future__ import annotations

import os
import secrets

import httpx
import pytest
from crib_wire import ThreadServer

from protocol.http import LinkCodeBody, PlayerBody, PlayerCreatedBody, PlayerExportBody
from server.settings import Settings

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture(params=["memory-sqlite", "redis-postgresql"])
def settings_values(request, tmp_path) -> dict:
    """Settings of a server of each kind (a key prefix of its own: budgets start full)."""
    values = {"bot_delay_seconds": 0.0, "key_prefix": f"test:{secrets.token_hex(6)}:"}
    if request.param == "memory-sqlite":
        values["database_url"] = f"sqlite:///{tmp_path / 'players.sqlite3'}"
    else:
        values["redis_url"] = REDIS_URL
        values["database_url"] = request.getfixturevalue("pg_url")
    return values


def auth(made: dict) -> dict:
    return {"Authorization": f"Player {made['id']}.{made['secret']}"}


def code_of(answer: httpx.Response) -> str:
    return answer.json()["error"]["code"]


def test_a_player_is_made_read_changed_exported_and_deleted(settings_values) -> None:
    server = ThreadServer(Settings(**settings_values)).start()
    try:
        api = f"{server.http}/api/players"
        made = httpx.post(api, json={"name": "Anna", "language": "da"})
        assert made.status_code == 201
        anna = PlayerCreatedBody.model_validate(made.json()).model_dump()
        assert anna["name"] == "Anna" and anna["language"] == "da"
        bare = httpx.post(api)
        assert bare.status_code == 201 and bare.json()["name"] is None
        me = httpx.get(f"{api}/me", headers=auth(anna))
        assert me.status_code == 200 and PlayerBody.model_validate(me.json()).private is False
        # bad credentials
        for headers in ({}, {"Authorization": "Bearer x"},
                        {"Authorization": f"Player {anna['id']}.{'a' * 32}"},
                        {"Authorization": f"Player {anna['id']}"}):
            answer = httpx.get(f"{api}/me", headers=headers)
            assert answer.status_code == 401 and code_of(answer) == "bad_player"
            assert answer.headers["www-authenticate"] == "Player"
        # scheme case does not matter
        assert httpx.get(f"{api}/me", headers={
            "Authorization": f"PLAYER {anna['id']}.{anna['secret']}"}).status_code == 200
        # changes, and bad ones that change nothing
        changed = httpx.patch(f"{api}/me", headers=auth(anna),
                              json={"name": "Anne", "private": True, "language": "sv"})
        assert changed.status_code == 200
        assert changed.json() | {"created_at": None} == {
            "id": anna["id"], "name": "Anne", "private": True, "language": "sv",
            "created_at": None}
        for body, code in (({"name": "Du"}, "bad_name"), ({"name": "Computer 2"}, "bad_name"),
                           ({"name": " "}, "bad_name"), ({"language": "de"}, "bad_request"),
                           ({"private": "yes"}, "bad_request"), ({"secret": "x"}, "bad_request"),
                           ({"language": None}, "bad_request")):
            answer = httpx.patch(f"{api}/me", headers=auth(anna), json=body)
            assert answer.status_code == 400 and code_of(answer) == code, body
        assert httpx.post(api, json={"name": "Dator 2"}).json()["error"]["code"] == "bad_name"
        assert httpx.post(api, content=b"[1]").json()["error"]["code"] == "bad_request"
        # A body of white space alone is not JSON (RFC 8259: a JSON text holds a value), not an
        # empty body; schemathesis found \x0b, then \t. No body at all makes a player.
        for junk in (b"\x0b", b"\x0c", b" \x0b\n", b"\t", b" \r\n\t"):
            answer = httpx.post(api, content=junk, headers={"content-type": "application/json"})
            assert answer.status_code == 400 and code_of(answer) == "bad_request", junk
        assert httpx.post(api, content=b"").status_code == 201
        again = httpx.get(f"{api}/me", headers=auth(anna)).json()
        assert again["name"] == "Anne" and again["language"] == "sv" and again["private"]
        # export
        exported = httpx.get(f"{api}/me/export", headers=auth(anna))
        assert exported.status_code == 200 and "attachment" in exported.headers[
            "content-disposition"]
        body = PlayerExportBody.model_validate(exported.json())
        assert body.player["id"] == anna["id"] and "secret_hash" not in body.player
        assert [c["how"] for c in body.credentials] == ["new"]
        assert anna["secret"] not in exported.text
        # delete
        assert httpx.delete(f"{api}/me", headers=auth(anna)).status_code == 204
        gone = httpx.get(f"{api}/me", headers=auth(anna))
        assert gone.status_code == 401 and code_of(gone) == "bad_player"
        assert httpx.delete(f"{api}/me", headers=auth(anna)).status_code == 401
    finally:
        server.stop()


def test_a_code_gives_the_player_to_another_device_once(settings_values) -> None:
    server = ThreadServer(Settings(**settings_values, link_code_tries=3)).start()
    try:
        api = f"{server.http}/api/players"
        anna = httpx.post(api, json={"name": "Anna"}).json()
        made = httpx.post(f"{api}/me/link", headers=auth(anna))
        assert made.status_code == 201
        link = LinkCodeBody.model_validate(made.json())
        assert link.url == f"{server.http}/link/{link.code}"
        page = httpx.get(link.url)
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        claimed = httpx.post(f"{api}/link", json={"code": link.code.lower().replace("-", " ")})
        assert claimed.status_code == 200
        device = claimed.json()
        assert device["id"] == anna["id"] and device["secret"] != anna["secret"]
        assert httpx.get(f"{api}/me", headers=auth(device)).json()["name"] == "Anna"
        assert httpx.get(f"{api}/me", headers=auth(anna)).status_code == 200  # both work
        used = httpx.post(f"{api}/link", json={"code": link.code})
        assert used.status_code == 404 and code_of(used) == "bad_code"
        hows = [c["how"] for c in httpx.get(f"{api}/me/export", headers=auth(anna)).json()[
            "credentials"]]
        assert sorted(hows) == ["link", "new"]
        # wrong second halves: the code dies at its third wrong try
        code = httpx.post(f"{api}/me/link", headers=auth(anna)).json()["code"]
        wrong = code[:5] + ("2222" if code[5:] != "2222" else "3333")
        answers = [code_of(httpx.post(f"{api}/link", json={"code": wrong})) for _ in range(3)]
        assert answers == ["bad_code", "bad_code", "too_many_tries"]
        dead = httpx.post(f"{api}/link", json={"code": code})
        assert dead.status_code == 404 and code_of(dead) == "too_many_tries"
        assert code_of(httpx.post(f"{api}/link", json={"code": "nonsense"})) == "bad_code"
        assert code_of(httpx.post(f"{api}/link", json={})) == "bad_request"
        # a key "name" is unknown here, like any other: not a bad name
        assert code_of(httpx.post(f"{api}/link", json={"code": "ABCD-EFGH", "name": "ok"})
                       ) == "bad_request"
        # a deleted player's codes die with it
        code = httpx.post(f"{api}/me/link", headers=auth(anna)).json()["code"]
        assert httpx.delete(f"{api}/me", headers=auth(anna)).status_code == 204
        assert code_of(httpx.post(f"{api}/link", json={"code": code})) == "bad_code"
        assert httpx.get(f"{api}/me", headers=auth(device)).status_code == 401
    finally:
        server.stop()


def test_a_code_expires(tmp_path) -> None:
    import time
    server = ThreadServer(Settings(database_url=f"sqlite:///{tmp_path / 'p.sqlite3'}",
                                   link_code_ttl_seconds=0.3)).start()
    try:
        api = f"{server.http}/api/players"
        anna = httpx.post(api).json()
        code = httpx.post(f"{api}/me/link", headers=auth(anna)).json()["code"]
        time.sleep(0.5)
        assert code_of(httpx.post(f"{api}/link", json={"code": code})) == "bad_code"
    finally:
        server.stop()


def test_the_limits_hold(settings_values) -> None:
    server = ThreadServer(Settings(**settings_values, players_per_hour=3,
                                   link_codes_per_hour=2, code_tries_per_hour=4)).start()
    try:
        api = f"{server.http}/api/players"
        made = [httpx.post(api) for _ in range(4)]
        assert [m.status_code for m in made] == [201, 201, 201, 429]
        assert code_of(made[3]) == "too_many_players"
        assert int(made[3].headers["retry-after"]) >= 1
        assert made[3].json()["error"]["retry_after"] > 0
        anna, bo = made[0].json(), made[1].json()
        codes = [httpx.post(f"{api}/me/link", headers=auth(anna)) for _ in range(3)]
        assert [c.status_code for c in codes] == [201, 201, 429]
        assert code_of(codes[2]) == "too_many_link_codes"
        assert httpx.post(f"{api}/me/link", headers=auth(bo)).status_code == 201  # per player
        # wrong codes per address: 4, then refused without being tried; a right code is free
        good = codes[0].json()["code"]
        first = httpx.post(f"{api}/link", json={"code": good})
        assert first.status_code == 200
        tries = [httpx.post(f"{api}/link", json={"code": "ZZZZ-ZZZZ"}) for _ in range(5)]
        assert [code_of(t) for t in tries] == ["bad_code"] * 4 + ["too_many_code_tries"]
        refused = httpx.post(f"{api}/link", json={"code": codes[1].json()["code"]})
        assert refused.status_code == 429 and code_of(refused) == "too_many_code_tries"
        metrics = httpx.get(f"{server.http}/metrics").text
        assert 'cribbage_limited_total{code="too_many_players"} 1' in metrics
    finally:
        server.stop()
