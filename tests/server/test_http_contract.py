"""The HTTP bodies of a real server validate against their models in ``protocol.http``
(issue 11: the room summary of ``GET /api/rooms/{id}`` is typed)."""

from __future__ import annotations

import httpx
from crib_wire import seat_players

from protocol.http import HttpError, RoomCreatedBody, RoomSummary


async def test_http_bodies_validate(server):
    r = httpx.post(f"{server.http}/api/rooms",
                   json={"options": {"players": 2, "muggins": True, "lowball": True},
                         "computers": {"1": "easy"}})
    assert r.status_code == 201
    created = RoomCreatedBody.model_validate(r.json())
    assert created.options["muggins"] is False  # played without Muggins (docs/rules.md §1.3)
    waiting = RoomSummary.model_validate(
        httpx.get(f"{server.http}/api/rooms/{created.room}").json())
    assert waiting.status == "waiting" and waiting.seats_taken == 1
    room, players, _ = await seat_players(server.ws, {"players": 2, "target": 61})
    try:
        playing = RoomSummary.model_validate(
            httpx.get(f"{server.http}/api/rooms/{room}").json())
        assert playing.status == "playing" and playing.version >= 2
    finally:
        for c in players:
            await c.close()
    missing = httpx.get(f"{server.http}/api/rooms/nosuchroom")
    assert missing.status_code == 404
    assert HttpError.model_validate(missing.json()).error.code == "room_not_found"
    bad = httpx.post(f"{server.http}/api/rooms", json={"options": {"players": 5}})
    assert HttpError.model_validate(bad.json()).error.code == "bad_options"
