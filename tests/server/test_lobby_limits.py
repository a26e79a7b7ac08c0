"""The lobby's limits (issue 20 point 5; docs/protocol.md "Limits"): connections following
the lobby per address and per player, the HTTP read budget, and bad input (filters, room
settings) refused with a stable code and nothing changed."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from crib_wire import ThreadServer

from protocol.client import Client, ClientError
from server.settings import Settings


@pytest.fixture
def server():
    s = ThreadServer(Settings(max_lobby_subscriptions_per_address=2,
                              max_lobby_subscriptions_per_player=1,
                              lobby_reads_per_minute=5)).start()
    yield s
    s.stop()


async def test_followers_per_address_and_per_player(server) -> None:
    made: list[Client] = []
    try:
        one = await Client.connect(server.ws, name="One")
        two = await Client.connect(server.ws, name="Two")
        three = await Client.connect(server.ws, name="Three")
        made += [one, two, three]
        await one.lobby_subscribe()
        await one.lobby_subscribe(players=2)  # again: new filters, still one follower
        await two.lobby_subscribe()
        with pytest.raises(ClientError) as refused:
            await three.lobby_subscribe()
        assert refused.value.code == "too_many_lobby_subscriptions"
        assert three.lobby is None  # nothing changed: no lobby frame came
        metrics = httpx.get(f"{server.http}/metrics").text
        assert "\ncribbage_lobby_followers 2.0\n" in metrics
        assert 'cribbage_limited_total{code="too_many_lobby_subscriptions"} 1.0' in metrics
        # One stops following (or closes): the third may.
        await one.lobby_unsubscribe()
        await one.ping()
        await three.lobby_subscribe()
        await two.close()
        await one.lobby_subscribe()  # the closed connection no longer counts
        for c in made:
            await c.close()
        made.clear()

        # Per player: one connection of a player follows; its second is refused.
        player = httpx.post(f"{server.http}/api/players", json={}).json()
        first = await Client.connect(server.ws, name="Ann", player=player)
        second = await Client.connect(server.ws, name="Ann", player=player)
        made += [first, second]
        await first.lobby_subscribe()
        with pytest.raises(ClientError) as refused:
            await second.lobby_subscribe()
        assert refused.value.code == "too_many_player_lobby_subscriptions"
        await first.close()
        await second.ping()
        await second.lobby_subscribe()
        for c in made:
            assert not c.problems, c.problems
    finally:
        for c in made:
            await c.close()


async def test_concurrent_subscriptions_of_one_address(server) -> None:
    """Five connections of one address ask at once; the cap is 2: two follow."""
    made = [await Client.connect(server.ws, name=f"P{i}") for i in range(5)]
    try:
        answers = await asyncio.gather(*(c.lobby_subscribe() for c in made),
                                       return_exceptions=True)
        refused = [a for a in answers if isinstance(a, ClientError)]
        assert len(refused) == 3 and {a.code for a in refused} == {
            "too_many_lobby_subscriptions"}
        assert sum(1 for c in made if c.lobby is not None) == 2
    finally:
        for c in made:
            await c.close()


def test_http_reads_and_bad_filters(server) -> None:
    bad = httpx.get(f"{server.http}/api/lobby", params={"players": "5"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "bad_lobby_filter"
    for query in ({"colour": "red"}, {"rated": "yes"}, {"language": "fr"}):
        assert httpx.get(f"{server.http}/api/lobby", params=query).status_code == 400
    assert httpx.get(f"{server.http}/api/lobby").json() == {"tables": []}
    answer = httpx.get(f"{server.http}/api/lobby")
    assert answer.status_code == 429  # every read counts, refused ones too: 5 spent
    body = answer.json()["error"]
    assert body["code"] == "too_many_lobby_reads" and body["retry_after"] > 0
    assert int(answer.headers["Retry-After"]) >= 1


def test_bad_room_settings_make_nothing(server) -> None:
    for room in ({"public": "yes"}, {"language": "fr"}, {"public": None, "language": 3}):
        answer = httpx.post(f"{server.http}/api/rooms", json={"room": room})
        assert answer.status_code == 400, room
        assert answer.json()["error"]["code"] == "bad_options"
    made = httpx.post(f"{server.http}/api/rooms", json={"room": {"language": "sv"}})
    assert made.status_code == 201
    assert made.json()["room_settings"]["public"] is False
    assert made.json()["room_settings"]["language"] == "sv"
