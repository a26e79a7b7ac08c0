"""Moderation over the wire (issue 21 point 4; docs/operations.md "Moderation").

A real server (in memory with SQLite, and two processes on Redis with PostgreSQL): a player
reports a message and the report keeps the talk around it; the reports limit holds; a
moderator with the admin token lists reports, hides the message for everyone, silences the
author everywhere (the other process learns it within ``moderation_refresh_seconds``),
closes the room through the write path, bans the player (their connection on the other
process is closed, a new hello refused) and an address (the handshake and ``POST
/api/players`` refused); every action is in the audit log. Without a token the API is off.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time

import httpx
import pytest
import websockets
from crib_wire import ThreadServer

from protocol.client import Client, ClientError
from server.settings import Settings

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
TOKEN = "moderate-" + secrets.token_hex(12)
ADMIN = {"Authorization": f"Bearer {TOKEN}", "X-Moderator": "Mette"}


def _settings(**values) -> Settings:
    base = {"bot_delay_seconds": 0.0, "frame_rate": 0, "presence_frame_interval_seconds": 0,
            "sweep_interval_seconds": 0.05, "key_prefix": f"test:{secrets.token_hex(6)}:",
            "admin_token": TOKEN, "moderation_refresh_seconds": 0.3, "reports_per_hour": 3}
    return Settings(**{**base, **values})


@pytest.fixture(params=["memory-sqlite", "redis-postgresql"])
def servers(request, tmp_path):
    if request.param == "memory-sqlite":
        one = ThreadServer(_settings(
            database_url=f"sqlite:///{tmp_path / 'mod.sqlite3'}")).start()
        yield [one]
        one.stop()
        return
    settings = _settings(redis_url=REDIS_URL, database_url=request.getfixturevalue("pg_url"))
    both = [ThreadServer(settings).start(), ThreadServer(settings).start()]
    yield both
    for s in both:
        s.stop()


async def new_player(server, name: str) -> dict:
    async with httpx.AsyncClient() as http:
        made = await http.post(f"{server.http}/api/players", json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()


async def until(check, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not await check():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.05)


async def say_refused(client: Client, code: str) -> ClientError:
    with pytest.raises(ClientError) as err:
        await client.say(preset="wow")
    assert err.value.code == code
    return err.value


async def test_without_a_token_the_admin_api_is_off(tmp_path) -> None:
    server = ThreadServer(_settings(admin_token=None,
                                    database_url=f"sqlite:///{tmp_path / 'off.sqlite3'}"))
    server.start()
    try:
        async with httpx.AsyncClient(base_url=server.http) as http:
            for method, path in (("GET", "/api/admin/reports"), ("GET", "/api/admin/log"),
                                 ("POST", "/api/admin/sanctions"),
                                 ("POST", "/api/admin/rooms/abcd1234/close")):
                answer = await http.request(method, path, headers=ADMIN)
                assert answer.status_code == 404, (path, answer.text)
                assert answer.json()["error"]["code"] == "admin_off"
    finally:
        server.stop()


async def test_a_moderator_acts_on_a_report(servers) -> None:
    a, b = servers[0], servers[-1]
    anna = await new_player(a, "Anna")
    bo = await new_player(a, "Bo")
    cy = await new_player(a, "Cy")
    p0 = await Client.connect(a.ws, player=anna)
    p1 = await Client.connect(b.ws, player=bo)
    watcher = await Client.connect(b.ws, player=cy)
    clients = [p0, p1, watcher]
    http = httpx.AsyncClient(base_url=a.http, timeout=10)
    try:
        for wrong in ({}, {"Authorization": "Bearer not-the-token-at-all"},
                      {"Authorization": f"Basic {TOKEN}"}):
            answer = await http.get("/api/admin/reports", headers=wrong)
            assert answer.status_code == 401
            assert answer.json()["error"]["code"] == "bad_admin_token"
        room = (await p0.create_room({"players": 2}))["room"]
        await p0.join(room, 0)
        await p1.join(room, 1)
        await watcher.join(room, None)
        before = await p0.say(preset="good_luck")
        nasty = await p1.say(text="<b>you are bad</b> at this")
        after = await p1.say(preset="sorry")
        await p0.wait_until(lambda c: after["id"] in [m["id"] for m in c.chat])

        # A report keeps the talk around the message, with its author's id.
        reported = await p0.request(
            {"type": "chat_report", "message": nasty["id"], "reason": "abuse",
             "note": "rude"}, lambda f: f["type"] in ("chat_reported", "error"))
        again = await p0.request(
            {"type": "chat_report", "message": nasty["id"], "reason": "abuse"},
            lambda f: f["type"] in ("chat_reported", "error"))
        assert again["report"] == reported["report"]  # the same report, not a second one
        listed = (await http.get("/api/admin/reports", headers=ADMIN)).json()["reports"]
        [report] = [r for r in listed if r["id"] == reported["report"]]
        assert report["reporter"] == anna["id"] and report["author"] == bo["id"]
        assert report["message"]["text"] == nasty["text"] and report["note"] == "rude"
        assert [m["id"] for m in report["context"]] == [before["id"], nasty["id"], after["id"]]
        assert report["status"] == "open"

        # The reports limit: three an hour in this test (reports_per_hour).
        for message in (before, nasty, after):
            filed = await watcher.request(
                {"type": "chat_report", "message": message["id"], "reason": "spam"},
                lambda f: f["type"] in ("chat_reported", "error"))
            assert filed["type"] == "chat_reported"
        fourth = await p0.say(preset="nice_hand")
        await watcher.wait_until(lambda c: fourth["id"] in [m["id"] for m in c.chat])
        with pytest.raises(ClientError) as err:
            await watcher.request(
                {"type": "chat_report", "message": fourth["id"], "reason": "spam"},
                lambda f: f["type"] in ("chat_reported", "error"))
        assert err.value.code == "report_limited" and err.value.retry_after > 3000

        # Hide it: everyone's talk loses it, a joining client never gets it.
        hidden = await http.post(f"/api/admin/rooms/{room}/messages/{nasty['id']}/hide",
                                 headers=ADMIN)
        assert hidden.status_code == 200 and hidden.json()["hidden"] is True
        for c in clients:
            await c.wait_until(lambda c: nasty["id"] not in [m["id"] for m in c.chat])
        late = await Client.connect(a.ws, name="Late")
        clients.append(late)
        await late.join(room, None)
        assert nasty["id"] not in [m["id"] for m in late.chat]
        missing = await http.post(f"/api/admin/rooms/{room}/messages/9999/hide",
                                  headers=ADMIN)
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "message_not_found"

        # Silence Bo for a minute: on his process too, within the refresh.
        made = await http.post("/api/admin/sanctions", headers=ADMIN, json={
            "kind": "silence", "target": bo["id"], "seconds": 60, "reason": "insults"})
        assert made.status_code == 201, made.text
        silence = made.json()
        bad = await http.post("/api/admin/sanctions", headers=ADMIN,
                              json={"kind": "silence", "target": bo["id"]})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_sanction"
        # Text PostgreSQL cannot keep (NUL, a lone surrogate) is the moderator's mistake,
        # refused as such on both databases, never "the database cannot be reached".
        for junk in ({"kind": "silence", "target": bo["id"], "seconds": 60, "reason": "a\u0000b"},
                     {"kind": "silence", "target": bo["id"], "seconds": 60, "reason": "\udfff"},
                     {"kind": "ban_player", "target": bo["id"] + "\u0000"}):
            body = json.dumps(junk).encode()
            refused = await http.post("/api/admin/sanctions", headers=ADMIN, content=body)
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["code"] == "bad_request", refused.text
        # An unknown key named like a field of another body is no name for this one.
        odd = await http.post("/api/admin/sanctions", headers=ADMIN, json={
            "kind": "silence", "target": bo["id"], "seconds": 60, "name": "ok"})
        assert odd.status_code == 400 and odd.json()["error"]["code"] == "bad_request"

        async def bo_silenced() -> bool:
            try:
                await p1.say(preset="wow")
            except ClientError as exc:
                assert exc.code in ("chat_silenced", "chat_rate_limited"), exc.code
                return exc.code == "chat_silenced" and 50 < float(exc.retry_after or 0) <= 60
            return False

        await until(bo_silenced)
        await p0.say(preset="thanks")  # Anna is not silenced
        lifted = await http.delete(f"/api/admin/sanctions/{silence['id']}", headers=ADMIN)
        assert lifted.status_code == 200 and lifted.json()["lifted_at"] is not None

        async def bo_heard() -> bool:
            try:
                await p1.say(preset="well_played")
            except ClientError as exc:
                assert exc.code in ("chat_silenced", "chat_rate_limited"), exc.code
                return False
            return True

        await until(bo_heard)

        # Close the room: the table is told, actions and joins are refused.
        closed = await http.post(f"/api/admin/rooms/{room}/close", headers=ADMIN)
        assert closed.status_code == 200 and closed.json() == {
            "room": room, "closed": True, "already": False}
        for c in (p0, p1, watcher):
            await c.wait_until(lambda c: any(
                e.get("type") == "room_closed" for f in c.frames if f["type"] == "update"
                for e in f.get("events", [])))
        assert p0.view is not None
        hand = p0.view.get("hand") or []
        answer = await p0.act({"type": "discard", "cards": hand[:2]}, retry=False)
        assert answer["type"] == "reject" and answer["code"] == "room_closed"
        await say_refused(p0, "room_closed")  # a closed room carries no more talk
        with pytest.raises(ClientError) as err:
            await late.join(room, 1)
        assert err.value.code == "room_closed"
        twice = await http.post(f"/api/admin/rooms/{room}/close", headers=ADMIN)
        assert twice.json()["already"] is True
        gone = await http.post("/api/admin/rooms/nosuchroom1/close", headers=ADMIN)
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "room_not_found"

        # Ban Bo: his connection on the other process is closed; a new hello refused, his
        # seat not taken back as a guest with its seat token, his credential refused.
        for bad_target in ("nosuchplayerxxxx", "203.0.113.7"):
            refused = await http.post("/api/admin/sanctions", headers=ADMIN, json={
                "kind": "ban_player", "target": bad_target})
            assert refused.status_code == 404, refused.text
        other = (await p0.create_room({"players": 2}))["room"]
        await p0.join(other, 0)
        await p1.join(other, 1)
        seat_token = p1.seat_token
        ban = (await http.post("/api/admin/sanctions", headers=ADMIN, json={
            "kind": "ban_player", "target": bo["id"], "reason": "repeat"})).json()
        assert ban["until"] is None
        await asyncio.wait_for(p1.closed.wait(), 5)
        assert p1.close_code == 1008
        assert any(f["type"] == "error" and f["code"] == "banned" for f in p1.frames)
        with pytest.raises(ClientError) as err:
            await Client.connect(a.ws, player=bo)
        assert err.value.code == "banned"
        guest = await Client.connect(b.ws, name="Bo again")
        clients.append(guest)
        with pytest.raises(ClientError) as err:
            await guest.join(other, 1, token=seat_token)
        assert err.value.code == "banned"
        me = await http.get("/api/players/me", headers={
            "Authorization": f"Player {bo['id']}.{bo['secret']}"})
        assert me.status_code == 401 and me.json()["error"]["code"] == "banned"
        await http.delete(f"/api/admin/sanctions/{ban['id']}", headers=ADMIN)

        # Ban the address every test client comes from, then lift it.
        for bad_target in ("0.0.0.0/0", "127.0.0.1/8", "10.0.0.0/8", "not-an-address"):
            refused = await http.post("/api/admin/sanctions", headers=ADMIN, json={
                "kind": "ban_address", "target": bad_target})
            assert refused.status_code == 400, (bad_target, refused.text)
            assert refused.json()["error"]["code"] == "bad_sanction"
        addr = (await http.post("/api/admin/sanctions", headers=ADMIN, json={
            "kind": "ban_address", "target": "::ffff:127.0.0.1", "seconds": 600})).json()
        assert addr["target"] == "127.0.0.1"  # as the limits count a mapped address
        await asyncio.wait_for(p0.closed.wait(), 5)

        async def refused_everywhere() -> bool:
            for server in servers:
                try:
                    ws = await websockets.connect(server.ws, open_timeout=3)
                except websockets.exceptions.InvalidStatus as exc:
                    assert exc.response.status_code == 403
                    continue
                await ws.close()
                return False
            return True

        await until(refused_everywhere)
        made = await http.post("/api/players", json={"name": "Dan"})
        assert made.status_code == 403 and made.json()["error"]["code"] == "banned"
        await http.delete(f"/api/admin/sanctions/{addr['id']}", headers=ADMIN)
        await until(lambda: _connects(servers))
        in_force = (await http.get("/api/admin/sanctions", headers=ADMIN)).json()
        assert in_force["sanctions"] == []

        # Resolve the report; the audit log has every action, with who did it.
        done = await http.post(f"/api/admin/reports/{reported['report']}/resolve",
                               headers=ADMIN, json={"resolution": "hidden, silenced"})
        assert done.json()["status"] == "resolved" and done.json()["resolved_by"] == "Mette"
        still_open = (await http.get("/api/admin/reports", headers=ADMIN)).json()["reports"]
        assert reported["report"] not in [r["id"] for r in still_open]
        log = (await http.get("/api/admin/log", headers=ADMIN)).json()["entries"]
        actions = [e["action"] for e in reversed(log)]
        assert actions == ["hide", "silence", "unsilence", "close_room", "close_room", "ban",
                           "unban", "ban", "unban", "resolve"], actions
        assert {e["moderator"] for e in log} == {"Mette"}
        page = (await http.get("/api/admin/log", headers=ADMIN,
                               params={"limit": 3, "before": log[2]["id"]})).json()["entries"]
        assert [e["id"] for e in page] == [e["id"] for e in log[3:6]]
        metrics = (await http.get("/metrics")).text
        assert 'cribbage_moderation_actions_total{action="silence"} 1.0' in metrics
    finally:
        await http.aclose()
        for c in clients:
            await c.close()


async def _connects(servers) -> bool:
    for server in servers:
        try:
            ws = await websockets.connect(server.ws, open_timeout=3)
        except websockets.exceptions.InvalidStatus:
            return False
        await ws.close()
    return True


async def test_the_sanctions_loop_stops_when_a_cancel_comes_out_as_another_error() -> None:
    """A cancel that lands inside a database call can come out as another error (a failed
    rollback on the broken connection); the sanctions' refresh, which keeps the last
    sanctions on an error, must still stop, or the server's shutdown waits for ever."""
    from server.moderation.sanctions import Sanctions

    reading = asyncio.Event()
    calls = 0

    class BrokenByTheCancel:
        async def active(self) -> list:
            nonlocal calls
            calls += 1
            if calls > 1:  # a loop that went on after the cancel: ended here, and counted
                raise asyncio.CancelledError
            reading.set()
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                raise ValueError("no active connection") from None
            return []

    sanctions = Sanctions(BrokenByTheCancel(), refresh_seconds=0.01)
    sanctions.start()
    await asyncio.wait_for(reading.wait(), 5)
    await asyncio.wait_for(sanctions.stop(), 5)
    assert (sanctions.failed_refreshes, calls) == (0, 1)
