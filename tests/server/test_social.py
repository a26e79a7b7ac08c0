"""Challenges, blocks and online now (issue 20 point 3) over the wire: two ``python -m
server`` processes on one Redis and one SQLite file, real WebSocket clients, and one
in-memory server (no Redis) for the single-process mode and the limits."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from crib_wire import REDIS_URL, ProcessServer, start_all

from protocol.client import Client, ClientError
from server.database import Database, database_url
from server.social.blocks import BlockStore


async def new_player(http: str, name: str) -> dict[str, str]:
    async with httpx.AsyncClient() as client:
        made = (await client.post(f"{http}/api/players", json={"name": name})).json()
    return {"id": made["id"], "secret": made["secret"]}


def auth(player: dict[str, str]) -> dict[str, str]:
    return {"Authorization": f"Player {player['id']}.{player['secret']}"}


async def online(http: str, player: dict[str, str]) -> bool | None:
    async with httpx.AsyncClient() as client:
        answer = await client.get(f"{http}/api/players/{player['id']}")
    assert answer.status_code == 200, answer.text
    return answer.json()["online"]


async def online_becomes(http: str, player: dict[str, str], value: bool,
                         within: float = 15.0) -> None:
    """Poll the profile until ``online`` is ``value`` (fails after ``within`` seconds)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while await online(http, player) is not value:
        assert loop.time() < end, f"online did not become {value}"
        await asyncio.sleep(0.2)


def of_type(kind: str, challenge_id: str | None = None, ref: str | None = None) -> Any:
    """Frames of ``kind`` (about ``challenge_id``), or ``error`` frames of message ``ref``."""
    return lambda f: (f["type"] == "error" and ref is not None and f.get("ref") == ref) or (
        f["type"] == kind and (challenge_id is None or f["challenge"]["id"] == challenge_id))


def expect(client: Client, until: Any, timeout: float = 15.0) -> Any:
    """The next frame of ``client`` matching ``until``, watched for from this call on
    (``Client.next_frame`` starts watching only when awaited); await the result."""
    return asyncio.wait_for(client._expect(until), timeout)


async def challenge(client: Client, to: dict[str, str], **extra: Any) -> dict[str, Any]:
    return await client.request({"type": "challenge", "to": to["id"], **extra},
                                of_type("challenge_sent", ref="challenge"))


async def answer(client: Client, challenge_id: str, what: str) -> dict[str, Any]:
    kind = "challenge_accepted" if what == "accept" else "challenge_declined"
    return await client.request(
        {"type": "challenge_answer", "id": challenge_id, "answer": what},
        of_type(kind, challenge_id, ref="challenge_answer"))


@pytest.fixture
def two_processes(redis_prefix: str, tmp_path: Any) -> Any:
    env = {"CRIBBAGE_DATA_DIR": str(tmp_path), "CRIBBAGE_PRESENCE_LEASE_SECONDS": "1.5",
           "CRIBBAGE_CHALLENGE_SECONDS": "5"}
    servers = [ProcessServer(REDIS_URL, redis_prefix, tmp_path / f"server{i}.log", **env)
               for i in range(2)]
    start_all(servers)
    yield servers
    for s in servers:
        s.stop()


async def test_challenges_across_two_processes(two_processes: list[ProcessServer]) -> None:
    a, b = two_processes
    ann_p = await new_player(a.http, "Ann")
    bob_p = await new_player(b.http, "Bob")
    ann = await Client.connect(a.ws, name="Ann", player=ann_p)
    bob = await Client.connect(b.ws, name="Bob", player=bob_p)
    try:
        assert await online(a.http, bob_p) is True  # Bob is on process B; asked on A

        # A challenge from Ann on A reaches Bob on B at once; he accepts; both sit.
        received = expect(bob, of_type("challenge_received"))
        sent = await challenge(ann, bob_p, options={"players": 2, "target": 61})
        challenge_id = sent["challenge"]["id"]
        got = await received
        assert got["challenge"]["id"] == challenge_id
        assert got["challenge"]["challenger"] == {"id": ann_p["id"], "name": "Ann"}
        ann_told = expect(ann, of_type("challenge_accepted", challenge_id))
        accepted = await answer(bob, challenge_id, "accept")
        assert accepted["seat"] == 1
        told = await ann_told
        assert told["room"] == accepted["room"] and told["seat"] == 0
        await ann.join(told["room"], told["seat"])
        await bob.join(accepted["room"], accepted["seat"])
        await ann.wait_until(lambda c: c.status == "playing")
        await bob.wait_until(lambda c: c.status == "playing")
        assert ann.view is not None and bob.view is not None
        # Accepting again is refused; the same room is told again.
        with pytest.raises(ClientError) as err:
            await answer(bob, challenge_id, "accept")
        assert err.value.code == "challenge_closed"

        # Bob challenges Ann; she declines; Bob is told.
        sent = await challenge(bob, ann_p)
        bob_told = expect(bob, of_type("challenge_declined", sent["challenge"]["id"]))
        await ann.wait_until(lambda c: any(
            f["type"] == "challenge_received" and f["challenge"]["id"] == sent["challenge"]["id"]
            for f in c.frames))
        await answer(ann, sent["challenge"]["id"], "decline")
        assert (await bob_told)["challenge"]["status"] == "declined"

        # Unanswered, a challenge expires (5 s) and both are told.
        sent = await challenge(ann, bob_p)
        cid = sent["challenge"]["id"]
        expired = await asyncio.gather(
            expect(ann, of_type("challenge_expired", cid)),
            expect(bob, of_type("challenge_expired", cid)))
        assert {e["challenge"]["status"] for e in expired} == {"expired"}
        with pytest.raises(ClientError) as err:
            await answer(bob, cid, "accept")
        assert err.value.code == "challenge_closed"

        # Bob blocks Ann: neither may challenge the other, and she cannot sit at his table.
        async with httpx.AsyncClient() as http:
            put = await http.put(f"{b.http}/api/players/me/blocks/{ann_p['id']}",
                                 headers=auth(bob_p))
            assert put.status_code == 200 and put.json() == {"player": ann_p["id"],
                                                             "blocked": True}
            listed = (await http.get(f"{a.http}/api/players/me/blocks",
                                     headers=auth(bob_p))).json()
            assert [x["player"] for x in listed["blocks"]] == [ann_p["id"]]
        with pytest.raises(ClientError) as err:
            await challenge(ann, bob_p)
        assert err.value.code == "challenge_refused"
        with pytest.raises(ClientError) as err:
            await challenge(bob, ann_p)
        assert err.value.code == "player_blocked"
        room = (await bob.create_room({"players": 2}))["room"]
        await bob.join(room, 0)
        with pytest.raises(ClientError) as err:
            await ann.join(room, 1)
        assert err.value.code == "seat_blocked"
        snap = await ann.join(room, None)  # watching is allowed
        assert snap["seat"] is None
        async with httpx.AsyncClient() as http:
            gone = await http.delete(f"{a.http}/api/players/me/blocks/{ann_p['id']}",
                                     headers=auth(bob_p))
            assert gone.status_code == 204
        snap = await ann.join(room, 1)
        assert snap["seat"] == 1

        # A challenge made while Bob is away reaches his next connection.
        await bob.close()
        await online_becomes(a.http, bob_p, False)
        sent = await challenge(ann, bob_p)
        bob = await Client.connect(b.ws, name="Bob", player=bob_p)
        await bob.wait_until(lambda c: any(
            f["type"] == "challenge_received" and f["challenge"]["id"] == sent["challenge"]["id"]
            for f in c.frames))
        await online_becomes(a.http, bob_p, True)

        # Process B dies (kill -9): Bob stops counting as online once its lease runs out.
        b.kill()
        await online_becomes(a.http, bob_p, False)
        assert await online(a.http, ann_p) is True
    finally:
        await ann.close()
        await bob.close()


async def test_memory_mode_and_the_limits(make_server: Any, tmp_path: Any) -> None:
    server = make_server(redis=False, data_dir=str(tmp_path), max_pending_challenges=1,
                         challenges_per_minute=2, address_challenges_per_minute=0,
                         frame_rate=0)
    ann_p = await new_player(server.http, "Ann")
    bob_p = await new_player(server.http, "Bob")
    cy_p = await new_player(server.http, "Cy")
    ann = await Client.connect(server.ws, name="Ann", player=ann_p)
    bob = await Client.connect(server.ws, name="Bob", player=bob_p)
    guest = await Client.connect(server.ws, name="Guest")
    try:
        assert await online(server.http, bob_p) is True
        assert await online(server.http, cy_p) is False
        with pytest.raises(ClientError) as err:
            await challenge(guest, bob_p)
        assert err.value.code == "player_required"
        with pytest.raises(ClientError) as err:
            await challenge(ann, ann_p)
        assert err.value.code == "bad_challenge"
        with pytest.raises(ClientError) as err:
            await challenge(ann, bob_p, options={"players": 3})
        assert err.value.code == "bad_options"
        with pytest.raises(ClientError) as err:
            await challenge(ann, {"id": "a" * 16})
        assert err.value.code == "player_not_found"

        # The same request_id gives the same challenge.
        first = await challenge(ann, bob_p, request_id="r" * 16)
        again = await challenge(ann, bob_p, request_id="r" * 16)
        assert first["challenge"]["id"] == again["challenge"]["id"]
        # One pending challenge at most (max_pending_challenges=1).
        with pytest.raises(ClientError) as err:
            await challenge(ann, cy_p)
        assert err.value.code == "too_many_pending_challenges"
        await bob.wait_until(lambda c: any(f["type"] == "challenge_received" for f in c.frames))
        accepted = await answer(bob, first["challenge"]["id"], "accept")
        # Two challenges a minute (challenges_per_minute=2): the third is refused.
        second = await challenge(ann, bob_p)
        await answer(bob, second["challenge"]["id"], "decline")
        with pytest.raises(ClientError) as err:
            await challenge(ann, bob_p)
        assert err.value.code == "too_many_challenges"
        assert accepted["room"]
        # Someone else cannot answer Bob's challenge.
        with pytest.raises(ClientError) as err:
            await answer(ann, second["challenge"]["id"], "decline")
        assert err.value.code == "challenge_not_found"

        async with httpx.AsyncClient() as http:
            url = f"{server.http}/api/players/me/blocks"
            assert (await http.get(url)).status_code == 401
            assert (await http.put(f"{url}/{ann_p['id']}", headers=auth(ann_p))
                    ).status_code == 400
            missing = await http.put(f"{url}/{'b' * 16}", headers=auth(ann_p))
            assert missing.status_code == 404
            assert missing.json()["error"]["code"] == "player_not_found"
            # Cy's pending challenge to Ann is declined when she blocks him.
            cy = await Client.connect(server.ws, name="Cy", player=cy_p)
            try:
                pending = await challenge(cy, ann_p)
                declined = expect(cy, of_type("challenge_declined", pending["challenge"]["id"]))
                for _ in range(2):  # idempotent
                    assert (await http.put(f"{url}/{cy_p['id']}", headers=auth(ann_p))
                            ).status_code == 200
                assert (await declined)["challenge"]["status"] == "declined"
            finally:
                await cy.close()
            assert len((await http.get(url, headers=auth(ann_p))).json()["blocks"]) == 1
            export = (await http.get(f"{server.http}/api/players/me/export",
                                     headers=auth(ann_p))).json()
            assert [b["blocked_id"] for b in export["blocks"]] == [cy_p["id"]]
        db = Database(database_url(None, str(tmp_path)))
        try:  # the API the quick-match matcher asks (a store of the test's own)
            pairs = await BlockStore(db).blocked_between([ann_p["id"], bob_p["id"],
                                                          cy_p["id"]], max_age=5)
        finally:
            await db.close()
        assert pairs == {frozenset({ann_p["id"], cy_p["id"]})}
        await bob.close()
        await online_becomes(server.http, bob_p, False, within=5)
    finally:
        await ann.close()
        await bob.close()
        await guest.close()


async def test_challenges_and_online_on_a_redis_cluster(tmp_path: Any) -> None:
    """The same on a Redis Cluster of the test's own (every key and script on one slot;
    sharded pub/sub): a challenge from process A reaches B at once and is accepted; a
    decline; online comes and goes."""
    from crib_cluster import LocalCluster

    cluster = LocalCluster(tmp_path / "cluster")
    env = {"CRIBBAGE_REDIS_CLUSTER": "1", "CRIBBAGE_DATA_DIR": str(tmp_path),
           "CRIBBAGE_PRESENCE_LEASE_SECONDS": "1.5"}
    servers: list[ProcessServer] = []
    try:
        cluster.start()
        servers = [ProcessServer(cluster.url, "social:", tmp_path / f"server{i}.log", **env)
                   for i in range(2)]
        start_all(servers)
        a, b = servers
        ann_p = await new_player(a.http, "Ann")
        bob_p = await new_player(b.http, "Bob")
        ann = await Client.connect(a.ws, name="Ann", player=ann_p)
        bob = await Client.connect(b.ws, name="Bob", player=bob_p)
        try:
            assert await online(a.http, bob_p) is True
            received = expect(bob, of_type("challenge_received"))
            sent = await challenge(ann, bob_p)
            assert (await received)["challenge"]["id"] == sent["challenge"]["id"]
            ann_told = expect(ann, of_type("challenge_accepted", sent["challenge"]["id"]))
            accepted = await answer(bob, sent["challenge"]["id"], "accept")
            assert (await ann_told)["room"] == accepted["room"]
            await ann.join(accepted["room"], 0)
            await bob.join(accepted["room"], 1)
            await bob.wait_until(lambda c: c.status == "playing")
            sent = await challenge(bob, ann_p)
            told = expect(bob, of_type("challenge_declined", sent["challenge"]["id"]))
            await ann.wait_until(lambda c: any(
                f["type"] == "challenge_received"
                and f["challenge"]["id"] == sent["challenge"]["id"] for f in c.frames))
            await answer(ann, sent["challenge"]["id"], "decline")
            await told
            await bob.close()
            await online_becomes(a.http, bob_p, False)
        finally:
            await ann.close()
            await bob.close()
    finally:
        for s in servers:
            s.stop()
        cluster.stop()


async def test_challenges_per_address(make_server: Any, tmp_path: Any) -> None:
    server = make_server(redis=False, data_dir=str(tmp_path), address_challenges_per_minute=1,
                         challenges_per_minute=0, max_pending_challenges=0)
    ann_p, bob_p, cy_p = [await new_player(server.http, n) for n in ("Ann", "Bob", "Cy")]
    ann = await Client.connect(server.ws, name="Ann", player=ann_p)
    cy = await Client.connect(server.ws, name="Cy", player=cy_p)
    try:
        await challenge(ann, bob_p)
        # another player, the same address (127.0.0.1): the address's budget is spent
        with pytest.raises(ClientError) as err:
            await challenge(cy, bob_p)
        assert err.value.code == "too_many_address_challenges"
        frame = [f for f in cy.frames if f["type"] == "error"][-1]
        assert frame["ref"] == "challenge" and frame["retry_after"] > 0
    finally:
        await ann.close()
        await cy.close()


async def test_a_private_player_is_never_named_beside_their_id(make_server: Any,
                                                              tmp_path: Any) -> None:
    """A player whose profile is private, known only by id (the leaderboard shows ids
    without names), is not named by the lists of mutes and blocks nor by a challenge to
    that id; a public player is."""
    server = make_server(redis=False, data_dir=str(tmp_path), frame_rate=0)
    ann_p = await new_player(server.http, "Ann")
    bob_p = await new_player(server.http, "Bob")
    zed_p = await new_player(server.http, "Zed Secret")
    async with httpx.AsyncClient() as http:
        made_private = await http.patch(f"{server.http}/api/players/me",
                                        json={"private": True}, headers=auth(zed_p))
        assert made_private.status_code == 200
        for kind in ("mutes", "blocks"):
            url = f"{server.http}/api/players/me/{kind}"
            for who in (bob_p, zed_p):
                assert (await http.put(f"{url}/{who['id']}", headers=auth(ann_p))
                        ).status_code == 200
            listed = (await http.get(url, headers=auth(ann_p))).json()[kind]
            names = {row["player"]: row["name"] for row in listed}
            assert names == {bob_p["id"]: "Bob", zed_p["id"]: None}, kind
            for who in (bob_p, zed_p):
                await http.delete(f"{url}/{who['id']}", headers=auth(ann_p))
    ann = await Client.connect(server.ws, name="Ann", player=ann_p)
    try:
        sent = await challenge(ann, zed_p)
        assert sent["challenge"]["challenged"] == {"id": zed_p["id"], "name": None}
        sent = await challenge(ann, bob_p)
        assert sent["challenge"]["challenged"] == {"id": bob_p["id"], "name": "Bob"}
    finally:
        await ann.close()
