"""Creating a room at most once (issue 17): a client-chosen ``request_id`` on
``create_room`` and ``POST /api/rooms``.

A creation answered ``outcome_unknown`` (or whose answer was lost) could not be retried
safely: it carried no id, so the client never learned whether its room existed, and sending
it again made a second one. Now the same request with the same id is answered with the same
room and creator token — over ``/ws`` and HTTP, from any server process, in memory, on
Redis (here) and on a Redis Cluster (``test_cluster.py``) — and the same id with another
request is refused (``request_id_reused``).
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
import redis
from crib_wire import REDIS_URL

from protocol.client import Client, ClientError


def state_keys(url: str, prefix: str) -> list[str]:
    """The rooms under ``prefix`` in the Redis at ``url`` (their state keys)."""
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        return sorted(client.scan_iter(match=f"{prefix}room:*:state", count=1000))
    finally:
        client.close()


async def test_the_same_request_id_gives_the_same_room(make_server, clients):
    server = make_server(redis=False)
    rooms = server.app.state.services.store._rooms
    request_id = str(uuid.uuid4())
    ann = await Client.connect(server.ws, name="Ann")
    other = await Client.connect(server.ws, name="Bob")  # another connection, same id
    clients += [ann, other]
    first = await ann.create_room({"players": 2, "target": 61}, computers={"1": "easy"},
                                  request_id=request_id)
    again = await other.create_room({"players": 2, "target": 61}, computers={"1": "easy"},
                                    request_id=request_id)
    assert again["room"] == first["room"]
    assert again["creator_token"] == first["creator_token"]
    assert again["computers"] == first["computers"] == {"1": "easy"}
    over_http = httpx.post(f"{server.http}/api/rooms", json={
        "options": {"players": 2, "target": 61}, "computers": {"1": "easy"},
        "request_id": request_id})
    assert over_http.status_code == 201
    assert over_http.json()["room"] == first["room"]
    assert over_http.json()["creator_token"] == first["creator_token"]
    assert len(rooms) == 1
    # The room is the one asked for: one computer seated once, the creator token works.
    record = rooms[first["room"]].record
    assert record.version == 1 and [s.kind for s in record.seats] == ["open", "computer"]
    await ann.join(first["room"], 0)
    assert ann.status == "playing"

    # The same id with something else: refused, nothing made.
    with pytest.raises(ClientError) as refused:
        await other.create_room({"players": 3}, request_id=request_id)
    assert refused.value.code == "request_id_reused"
    answer = httpx.post(f"{server.http}/api/rooms",
                        json={"options": {"players": 2, "target": 61}, "request_id": request_id})
    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "request_id_reused"
    assert len(rooms) == 1

    # Other ids (or none) make other rooms; an id of the wrong shape is refused.
    made = {(await ann.create_room({"players": 2}))["room"] for _ in range(2)}
    made.add((await ann.create_room({"players": 2}, request_id="x" * 16))["room"])
    assert len(made) == 3 and first["room"] not in made and len(rooms) == 4
    for bad in ("short", "has a space in it!!", "x" * 65, 12345678901234567890):
        with pytest.raises(ClientError) as caught:
            await ann.create_room({"players": 2}, request_id=bad)  # type: ignore[arg-type]
        assert caught.value.code == "bad_message", bad
        answer = httpx.post(f"{server.http}/api/rooms", json={"request_id": bad})
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "bad_options"
    assert len(rooms) == 4


async def test_across_processes_on_redis(process_servers, redis_prefix, clients):
    """Two ``python -m server`` processes on one Redis: an HTTP creation on one, repeated
    over ``/ws`` on the other, is one room."""
    a, b = process_servers(2)
    request_id = "retry-" + uuid.uuid4().hex
    body = {"options": {"players": 3, "target": 61}, "computers": {"2": "standard"},
            "room": {"hints": False}, "request_id": request_id}
    made = httpx.post(f"{a.http}/api/rooms", json=body)
    assert made.status_code == 201
    bob = await Client.connect(b.ws, name="Bob")
    clients.append(bob)
    again = await bob.create_room(body["options"], computers=body["computers"],
                                  room=body["room"], request_id=request_id)
    assert (again["room"], again["creator_token"]) == (made.json()["room"],
                                                        made.json()["creator_token"])
    assert again["room_settings"]["hints"] is False
    assert state_keys(REDIS_URL, redis_prefix) == [
        f"{redis_prefix}room:{{{again['room']}}}:state"]


async def test_a_creation_whose_answer_was_lost_is_retried_into_one_room(
        make_server, own_redis, redis_prefix, clients):
    """Redis frozen (SIGSTOP): the room's creation is sent on a kept connection and its
    answer does not come within the server's Redis timeout: ``outcome_unknown``. Thawed,
    Redis reads what was sent and makes the room. Sending the same request again gives
    that very room — with its computer seated, which the first attempt never got to — and
    the store holds exactly one room (without the request id it would hold two)."""
    # No per-address room budget: its Redis call would come first, find Redis frozen and
    # start the outage (dropping the idle connections) before the creation is sent.
    server = make_server(redis=False, redis_url=own_redis.url, rooms_per_minute=0)
    ann = await Client.connect(server.ws, name="Ann")
    clients.append(ann)
    # The write lane keeps this creation's connection. The next creation must go out on a
    # connection already open: if a background call found Redis frozen first, the outage
    # dropped the idle connections, the creation needed a new one whose handshake timed
    # out and nothing was sent (store_unavailable: no room). Then thaw and try again.
    made = [(await ann.create_room({"players": 2}))["room"]]
    for _ in range(5):
        await ann.ping()
        own_redis.freeze()
        request_id = str(uuid.uuid4())
        try:
            with pytest.raises(ClientError) as failed:
                await ann.create_room({"players": 2}, computers={"1": "standard"},
                                      request_id=request_id, retries=0)
        finally:
            own_redis.thaw()
        if failed.value.code != "store_unavailable":
            break
        await asyncio.sleep(1.0)
        assert len(state_keys(own_redis.url, redis_prefix)) == len(made)  # nothing made
        made.append((await ann.create_room({"players": 2}))["room"])  # the lane reconnects
    assert failed.value.code == "outcome_unknown"
    end = asyncio.get_running_loop().time() + 10
    while len(state_keys(own_redis.url, redis_prefix)) < len(made) + 1:  # the lost write
        assert asyncio.get_running_loop().time() < end, "the sent creation never landed"
        await asyncio.sleep(0.1)
    created = await ann.create_room({"players": 2}, computers={"1": "standard"},
                                    request_id=request_id)
    keys = state_keys(own_redis.url, redis_prefix)
    assert keys == sorted(f"{redis_prefix}room:{{{r}}}:state"
                          for r in (*made, created["room"])), keys
    assert created["computers"] == {"1": "standard"}
    await ann.join(created["room"], 0)
    assert ann.status == "playing" and ann.seats[1]["kind"] == "computer"


class LostAnswers:
    """A memory store whose writes can lose their answers: ``lose_create`` creates are
    made and then reported ``OutcomeUnknown``; ``lose_commit`` commits are reported
    ``OutcomeUnknown`` and made only if ``commits_land``."""

    def __init__(self, commits_land: bool = False) -> None:
        from server.broker import MemoryBroker
        from server.store.memory import MemoryStore

        class Store(MemoryStore):
            lose_create = 0
            lose_commit = 0

            async def create(self, record):  # noqa: ANN001, ANN202
                made = await super().create(record)
                if self.lose_create:
                    self.lose_create -= 1
                    raise OutcomeUnknown("the answer was lost")
                return made

            async def commit(self, commit):  # noqa: ANN001, ANN202
                if self.lose_commit:
                    self.lose_commit -= 1
                    if commits_land:
                        await super().commit(commit)
                    raise OutcomeUnknown("the answer was lost")
                return await super().commit(commit)

        self.store = Store(MemoryBroker())


from server.store.base import OutcomeUnknown  # noqa: E402


@pytest.mark.parametrize("lost", ["create", "computers"])
async def test_a_lost_answer_is_found_again(lost):
    """The room was made and its answer lost, or the room was made and its computer's
    seat not (the first attempt failed between the two): the same request finds that
    room, seats what is missing, and makes nothing else."""
    from server.rooms import RoomService
    from server.settings import Settings

    store = LostAnswers().store
    service = RoomService(store, Settings())
    if lost == "create":
        store.lose_create = 1
    else:
        store.lose_commit = 2  # once, and once more on the room service's own retry
    request = dict(options={"players": 2}, computers={1: "easy"}, room=None,
                   request_id="lost-answer-0123456789")
    with pytest.raises(OutcomeUnknown):
        await service.create_room(**request)
    assert len(store._rooms) == 1
    record, creator = await service.create_room(**request)
    again, creator_again = await service.create_room(**request)
    assert len(store._rooms) == 1 and record.id == again.id and creator == creator_again
    assert [s.kind for s in again.seats] == ["open", "computer"]
    assert again.version == 1  # the computer sat down once
    assert [e["v"] for e in await store.log(record.id)] == [1]


@pytest.mark.parametrize("request_id", [None, "landed-answer-0123456789"])
async def test_a_computer_seated_by_a_lost_commit_is_no_failure(request_id):
    """The computers' commit is made and its answer lost: the room service's retry finds
    the seat taken — by this very creation — and the creation succeeds (before, it
    answered ``seat_taken`` for a room it had made)."""
    from server.rooms import RoomService
    from server.settings import Settings

    store = LostAnswers(commits_land=True).store
    service = RoomService(store, Settings())
    store.lose_commit = 1
    record, _ = await service.create_room({"players": 2}, computers={1: "easy"},
                                          request_id=request_id)
    assert [s.kind for s in record.seats] == ["open", "computer"] and record.version == 1
    assert len(store._rooms) == 1
