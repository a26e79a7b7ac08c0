"""Rated rooms' settings over the wire (issue 19): what a rated room must be, refused with
stable codes over ``POST /api/rooms`` and ``create_room`` alike, and nothing made; and the
room service's rated rules at a game's start and end (docs/rules.md §9)."""

from __future__ import annotations

import httpx
import pytest

import engine
from protocol.client import Client, ClientError
from server import rooms as rooms_module
from server.rooms import Change, Room, RoomService
from server.settings import Settings
from server.store.base import RoomRecord, SeatRecord

REFUSED = [
    ({"target": 61}, {}, "rated_options"),
    ({"lowball": True}, {}, "rated_options"),
    ({"backup10": True}, {}, "rated_options"),
    ({"muggins": True}, {}, "rated_options"),
    ({}, {"turn_seconds": 29}, "rated_turn_clock"),
    ({}, {"turn_seconds": 121}, "rated_turn_clock"),
    ({}, {"match": 2}, "bad_options"),
    ({}, {"match": 9}, "bad_options"),
    ({}, {"hints": True}, "rated_options"),  # no computer's help in a rated game
]


async def test_a_rated_room_is_the_standard_game_with_a_turn_clock(server) -> None:
    async with httpx.AsyncClient() as http:
        for options, room, code in REFUSED:
            answer = await http.post(f"{server.http}/api/rooms", json={
                "options": {"players": 2, **options}, "room": {"rated": True, **room}})
            assert answer.status_code == 400, (options, room, answer.text)
            assert answer.json()["error"]["code"] == code, (options, room)
        # unrated, the same options are fine, and a match is any table's
        answer = await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 61, "lowball": True}, "room": {"match": 5}})
        assert answer.status_code == 201
        assert answer.json()["room_settings"]["rated"] is False
        assert answer.json()["room_settings"]["match"] == 5
        # rated: the turn clock is on (60 s) unless chosen, 30 and 120 allowed
        answer = await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 4, "partnerships": True}, "room": {"rated": True}})
        assert answer.status_code == 201
        made = answer.json()
        assert made["room_settings"]["rated"] is True
        assert made["room_settings"]["turn_seconds"] == 60.0
        assert made["room_settings"]["match"] == 1
        assert made["room_settings"]["hints"] is False
        summary = (await http.get(f"{server.http}/api/rooms/{made['room']}")).json()
        assert summary["room_settings"] == made["room_settings"]
        for turn in (30, 120):
            answer = await http.post(f"{server.http}/api/rooms", json={
                "room": {"rated": True, "turn_seconds": turn, "match": 3}})
            assert answer.status_code == 201
            assert answer.json()["room_settings"]["turn_seconds"] == float(turn)
            assert answer.json()["room_settings"]["match"] == 3

    c = await Client.connect(server.ws, name="Ann")
    try:
        for options, room, code in REFUSED:
            with pytest.raises(ClientError) as err:
                await c.create_room({"players": 3, **options}, room={"rated": True, **room})
            assert err.value.code == code, (options, room)
        made = await c.create_room({"players": 2}, computers={"1": "easy"},
                                   room={"rated": True, "match": 7, "turn_seconds": 45})
        assert made["room_settings"] == {
            "hints": False, "answer_window": 15.0, "takeover_grace": 60.0,
            "turn_seconds": 45.0, "match": 7, "rated": True, "public": False,
            "language": "en", "chat": "presets"}
        assert made["computers"] == {"1": "easy"}  # computer seats are allowed
    finally:
        await c.close()


async def test_the_rated_turn_clock_bounds_are_settings(make_server) -> None:
    server = make_server(rated_turn_seconds=5, rated_turn_seconds_min=2,
                         rated_turn_seconds_max=10)
    async with httpx.AsyncClient() as http:
        made = await http.post(f"{server.http}/api/rooms", json={"room": {"rated": True}})
        assert made.json()["room_settings"]["turn_seconds"] == 5.0
        refused = await http.post(f"{server.http}/api/rooms",
                                  json={"room": {"rated": True, "turn_seconds": 30}})
        assert refused.json()["error"]["code"] == "rated_turn_clock"


# -- the room service's rated rules (server.rooms.RoomService._rated_rules) -----------------

class _MatchState:
    """Stands for the engine's game state at a game's end with a match (``state.match``)."""

    def __init__(self, match: dict | None) -> None:
        self.match = match


def _room(seats: list[SeatRecord], players: int = 4, partnerships: bool = True) -> Room:
    options = engine.GameOptions(players=players, partnerships=partnerships).to_dict()
    record = RoomRecord(id="r1", version=40, options=options, seats=tuple(seats),
                        state={"phase": "show"}, seed="s", creator_hash="c", created=1.0,
                        updated=1.0, settings={"rated": True, "match": 3})
    return Room(record)


def test_the_match_is_forfeited_in_the_commit_that_ends_the_game(monkeypatch) -> None:
    service = RoomService(None, Settings())  # type: ignore[arg-type]  # (pure methods only)
    applied = []

    def fake_apply(state, seat, action):
        applied.append((state, seat, action))
        return _MatchState({"over": True}), [{"type": "match_over", "reason": "forfeit"}]

    monkeypatch.setattr(rooms_module.engine, "apply", fake_apply)
    human = SeatRecord(name="A", token_hash="h", kind="human", player="p" * 16)
    seats = [human, SeatRecord(name="B", kind="human", abandoned=True), human,
             SeatRecord(name="D", kind="human", abandoned=True)]
    room = _room(seats)
    ended = _MatchState({"over": False})
    change = Change([{"type": "game_over"}, {"type": "match_score"}], {"seat": 0, "id": "x"},
                    state=ended)
    service._rated_rules(room, change)
    # partners 1 and 3 left: their side (1) forfeits, once, as the system
    assert applied == [(ended, None, {"type": "forfeit", "sides": [1]})]
    assert [e["type"] for e in change.events] == ["game_over", "match_score", "match_over"]
    assert change.state.match == {"over": True}
    assert change.cause["forfeit"] == [1]

    # a game that decided the match, a single game, no game end, no abandoned seat: nothing
    for match, events, seat_list in (
        ({"over": True}, [{"type": "game_over"}], seats),
        (None, [{"type": "game_over"}], seats),
        ({"over": False}, [{"type": "peg"}], seats),
        ({"over": False}, [{"type": "game_over"}], [human] * 4),
    ):
        applied.clear()
        change = Change(list(events), {}, state=_MatchState(match))
        service._rated_rules(_room(seat_list), change)
        assert not applied and change.events == events

    # the next game's start clears every mark
    change = Change([{"type": "game_start"}], {})
    service._rated_rules(room, change)
    assert change.seats is not None and not any(s.abandoned for s in change.seats)
    assert not applied


def test_a_stand_in_marks_a_seat_abandoned_only_in_a_rated_game() -> None:
    service = RoomService(None, Settings())  # type: ignore[arg-type]  # (pure methods only)
    seats = (SeatRecord(name="A", token_hash="h", kind="human", player="p" * 16),
             SeatRecord(name="B", token_hash="i", kind="human", player="q" * 16))
    base = RoomRecord(id="r1", version=9, options=engine.GameOptions().to_dict(), seats=seats,
                      state={"phase": "play"}, seed="s", creator_hash="c", created=1.0,
                      updated=1.0, settings={"rated": True})
    on = service._standin_change(base, 1, True, reason="turn_clock")
    assert on.seats[1].abandoned and on.seats[1].standin
    assert on.events[1] == {"type": "seat_abandoned", "seat": 1, "name": "B",
                            "reason": "turn_clock"}
    back = service._standin_change(base.evolve(seats=on.seats), 1, False)
    assert back.seats[1].abandoned and not back.seats[1].standin  # the mark stays
    assert [e["type"] for e in back.events] == ["computer_standin"]
    unrated = service._standin_change(base.evolve(settings={}), 1, True, reason="away")
    assert not unrated.seats[1].abandoned and len(unrated.events) == 1
    over = service._standin_change(base.evolve(state={"phase": "game_over"}), 1, True)
    assert not over.seats[1].abandoned
    # stored and read back
    stored = RoomRecord.from_json(base.evolve(seats=on.seats).to_json())
    assert stored.seats[1].abandoned and not stored.seats[0].abandoned
    assert "abandoned" not in base.to_dict()["seats"][0]
