"""Quick match over the wire (issue 20 point 2), on one in-thread server, in memory and on
Redis: two players press "Play now" and meet at one table; cancel; a closed connection
leaves the queue; players only; the computer offer; the limits per player and address."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from protocol.client import Client


async def new_player(server, name: str) -> dict[str, str]:
    async with httpx.AsyncClient(timeout=10) as http:
        made = await http.post(f"{server.http}/api/players", json={"name": name})
    assert made.status_code == 201, made.text
    return made.json()


def frames_of(c: Client, kind: str) -> list[dict]:
    return [f for f in c.frames if f["type"] == kind]


async def frame(c: Client, kind: str, timeout: float = 10, **fields) -> dict:
    """The first frame of ``kind`` (with ``fields``) received so far, or waited for."""

    def found(c: Client) -> dict | None:
        return next((f for f in c.frames if f["type"] == kind
                     and all(f.get(k) == v for k, v in fields.items())), None)

    await c.wait_until(lambda c: found(c) is not None, timeout)
    return found(c)


async def play_now(c: Client, table: dict | None = None) -> dict:
    """Send ``queue_join``; its answer (``queue_status`` or ``error``)."""
    answer = asyncio.ensure_future(
        c.next_frame(lambda f: f["type"] in ("queue_status", "error")))
    await asyncio.sleep(0)  # the wait is registered before the frame goes
    await c.send({"type": "queue_join", "table": table or {}})
    return await answer


@pytest.mark.parametrize("redis", [False, True], ids=["memory", "redis"])
async def test_two_players_press_play_now_and_meet_at_one_table(make_server, redis) -> None:
    server = make_server(redis=redis)
    made = []
    try:
        ann, bob = await new_player(server, "Ann"), await new_player(server, "Bob")
        a = await Client.connect(server.ws, name="Ann", player=ann)
        b = await Client.connect(server.ws, name="Bob", player=bob)
        made += [a, b]
        first = await play_now(a, {"players": 2, "rated": True})
        assert first["type"] == "queue_status" and first["waiting"] == 1
        assert first["queue"] == "2-121-r-m1" and first["computer_offer"] is False
        await b.send({"type": "queue_join", "table": {"players": 2, "rated": True}})
        ma, mb = await frame(a, "matched"), await frame(b, "matched")
        assert ma["room"] == mb["room"] and {ma["seat"], mb["seat"]} == {0, 1}
        assert sorted(ma["players"]) == ["Ann", "Bob"] and ma["computer"] is False
        assert ma["url"].endswith(f"/r/{ma['room']}")
        # the players join with the ordinary join (their player resumes the seat)
        await a.join(ma["room"], ma["seat"])
        await b.join(mb["room"], mb["seat"], token=mb["seat_token"])
        await a.wait_until(lambda c: c.status == "playing", 5)
        snap = frames_of(a, "snapshot")[-1]
        assert snap["room_settings"]["rated"] is True
        assert a.problems == [] and b.problems == []
    finally:
        for c in made:
            await c.close()


async def test_cancel_disconnect_players_only_and_the_computer_offer(make_server) -> None:
    server = make_server(redis=True, queue_computer_offer_seconds=1.0,
                         queue_status_interval_seconds=0.5)
    made = []
    try:
        ann, bob = await new_player(server, "Ann"), await new_player(server, "Bob")
        # players only
        guest = await Client.connect(server.ws, name="Guest")
        made.append(guest)
        refused = await play_now(guest)
        assert refused["type"] == "error" and refused["code"] == "queue_needs_player"
        # cancel: out of the queue, and a second player does not meet the first
        a = await Client.connect(server.ws, name="Ann", player=ann)
        made.append(a)
        assert (await play_now(a, {"players": 2, "target": 61}))["waiting"] == 1
        await a.send({"type": "queue_leave"})
        left = await a.next_frame(lambda f: f["type"] == "queue_left")
        assert left["reason"] == "cancelled"
        # a connection that closes leaves the queue at once
        b = await Client.connect(server.ws, name="Bob", player=bob)
        assert (await play_now(b, {"players": 2, "target": 61}))["waiting"] == 1
        await b.close()
        await asyncio.sleep(0.3)
        status = await play_now(a, {"players": 2, "target": 61})
        assert status["waiting"] == 1, "Bob's closed connection is out of the queue"
        # the computer offer: too early is refused, then offered and taken
        await a.send({"type": "queue_accept_computer"})
        early = await a.next_frame(lambda f: f["type"] == "error")
        assert early["code"] == "no_computer_offer"
        offer = await frame(a, "queue_status", 5, computer_offer=True)
        assert offer["waited"] >= 1.0
        await a.send({"type": "queue_accept_computer"})
        m = await a.next_frame(lambda f: f["type"] == "matched", 5)
        assert m["computer"] is True and m["seat"] == 0 and m["players"][1] is None
        await a.join(m["room"], 0)
        await a.wait_until(lambda c: c.status == "playing", 5)
        # not waiting any more
        await a.send({"type": "queue_accept_computer"})
        assert (await a.next_frame(lambda f: f["type"] == "error"))["code"] == "not_queued"
    finally:
        for c in made:
            await c.close()


async def test_one_queue_at_a_time(make_server) -> None:
    server = make_server(redis=True)
    made = []
    try:
        ann = await new_player(server, "Ann")
        a1 = await Client.connect(server.ws, name="Ann", player=ann)
        a2 = await Client.connect(server.ws, name="Ann", player=ann)
        made += [a1, a2]
        await play_now(a1, {"players": 3})
        status = await play_now(a2, {"players": 4})
        assert status["queue"] == "4-121-u-m1"
        left = await frame(a1, "queue_left", 5)
        assert left["reason"] == "replaced"
    finally:
        for c in made:
            await c.close()


async def test_queue_joins_are_limited_per_player_and_per_address(make_server) -> None:
    server = make_server(redis=True, queue_joins_per_minute=2,
                         queue_joins_per_minute_per_address=3)
    made = []
    try:
        ann, bob = await new_player(server, "Ann"), await new_player(server, "Bob")
        a = await Client.connect(server.ws, name="Ann", player=ann)
        b = await Client.connect(server.ws, name="Bob", player=bob)
        made += [a, b]
        assert (await play_now(a, {"players": 3}))["type"] == "queue_status"
        assert (await play_now(a, {"players": 3}))["type"] == "queue_status"
        refused = await play_now(a, {"players": 3})
        assert refused["code"] == "too_many_queue_joins" and refused["retry_after"] > 0
        assert (await play_now(b, {"players": 3}))["type"] == "queue_status"
        refused = await play_now(b, {"players": 3})
        assert refused["code"] == "too_many_address_queue_joins"
        bad = await play_now(b, {"players": 2, "rated": True, "lowball": True})
        assert bad["code"] == "rated_options"
    finally:
        for c in made:
            await c.close()


async def test_blocked_players_are_not_matched_together(make_server) -> None:
    server = make_server(redis=True)
    services = server.server.config.app.state.services
    made = []
    try:
        ann, bob, cid = [await new_player(server, n) for n in ("Ann", "Bob", "Cid")]
        blocked = {(ann["id"], bob["id"])}

        async def blocks(players: list[str]) -> set[tuple[str, str]]:
            return {pair for pair in blocked if set(pair) <= set(players)}

        services.matchmaking.blocks = blocks
        a = await Client.connect(server.ws, name="Ann", player=ann)
        b = await Client.connect(server.ws, name="Bob", player=bob)
        made += [a, b]
        await play_now(a)
        await play_now(b)
        await asyncio.sleep(1.5)  # three rounds of matching: Ann blocked Bob
        assert not frames_of(a, "matched") and not frames_of(b, "matched")
        c = await Client.connect(server.ws, name="Cid", player=cid)
        made.append(c)
        await play_now(c)
        mc = await frame(c, "matched")
        partner = await frame(a, "matched")
        assert mc["room"] == partner["room"]
        assert not frames_of(b, "matched")
    finally:
        services.matchmaking.blocks = None
        for cl in made:
            await cl.close()


async def test_players_who_blocked_each_other_are_never_matched(make_server) -> None:
    # The matcher reads the social block store (server.app.quick_match_blocks): Ann blocked
    # Bob, so the two wait; Cy, who comes next, is matched with the one who waited longest.
    server = make_server(redis=True)
    made = []
    try:
        ann, bob, cy = [await new_player(server, n) for n in ("Ann", "Bob", "Cy")]
        async with httpx.AsyncClient(timeout=10) as http:
            blocked = await http.put(
                f"{server.http}/api/players/me/blocks/{bob['id']}",
                headers={"Authorization": f"Player {ann['id']}.{ann['secret']}"})
        assert blocked.status_code in (200, 201, 204), blocked.text
        a = await Client.connect(server.ws, name="Ann", player=ann)
        b = await Client.connect(server.ws, name="Bob", player=bob)
        made += [a, b]
        assert (await play_now(a))["type"] == "queue_status"
        assert (await play_now(b))["type"] == "queue_status"
        with pytest.raises(TimeoutError):  # several matching rounds: no table for them
            await frame(a, "matched", timeout=3)
        assert frames_of(b, "matched") == []
        c = await Client.connect(server.ws, name="Cy", player=cy)
        made.append(c)
        await play_now(c)
        mc, ma = await frame(c, "matched"), await frame(a, "matched")
        assert mc["room"] == ma["room"] and frames_of(b, "matched") == []
    finally:
        for c in made:
            await c.close()


async def test_another_table_after_a_match_and_a_challenge_ends_a_wait(make_server) -> None:
    server = make_server(redis=True)
    made = []
    try:
        ann, bob, cy = [await new_player(server, n) for n in ("Ann", "Bob", "Cy")]
        a = await Client.connect(server.ws, name="Ann", player=ann)
        b = await Client.connect(server.ws, name="Bob", player=bob)
        c = await Client.connect(server.ws, name="Cy", player=cy)
        made += [a, b, c]
        await play_now(a)
        await play_now(b)
        first = await frame(a, "matched")
        # Ann heard of her match and asks for a table of three: she waits for it (the
        # match she heard of is given again only for the same table).
        again = await play_now(a, {"players": 3})
        assert again["type"] == "queue_status" and again["queue"] == "3-121-u-m1", again
        assert len(frames_of(a, "matched")) == 1
        # Cy challenges Ann while she waits; her accept ends the wait.
        await c.send({"type": "challenge", "to": ann["id"], "options": {"players": 2}})
        offer = await frame(a, "challenge_received")
        await a.send({"type": "challenge_answer", "id": offer["challenge"]["id"],
                      "answer": "accept"})
        accepted = await frame(a, "challenge_accepted")
        assert accepted["room"] != first["room"]
        left = await frame(a, "queue_left")
        assert left["reason"] == "cancelled" and left["queue"] == "3-121-u-m1"
    finally:
        for c in made:
            await c.close()
