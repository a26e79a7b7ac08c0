"""Computer seats over real WebSockets on Redis (issue 4): whole games between computer
players for every table and option, a human against the computer, ``set_computer`` by the
room's creator, and hints only where the room allows them."""

from __future__ import annotations

import asyncio
import random

import httpx
import pytest
from crib_wire import audit_frames, events_of, play_seat, replay_room

from protocol.client import Client, ClientError

TABLES = [
    # (id, options, computers' levels by seat)
    ("2p", {"players": 2, "target": 61}, ["standard", "easy"]),
    ("3p", {"players": 3, "target": 61}, ["standard", "easy", "standard"]),
    ("4alone", {"players": 4, "target": 61}, ["easy", "standard", "easy", "standard"]),
    ("4pairs", {"players": 4, "partnerships": True, "target": 61},
     ["standard", "easy", "standard", "easy"]),
    ("2p-muggins", {"players": 2, "target": 61, "muggins": True}, ["standard", "easy"]),
    ("4pairs-muggins", {"players": 4, "partnerships": True, "target": 61, "muggins": True},
     ["easy", "standard", "standard", "easy"]),
    ("3p-muggins", {"players": 3, "target": 61, "muggins": True}, ["easy", "easy", "standard"]),
    ("3p-lowball", {"players": 3, "target": 61, "lowball": True}, ["standard", "easy", "easy"]),
    ("2p-lowball", {"players": 2, "target": 61, "lowball": True}, ["standard", "standard"]),
    ("2p-backup10", {"players": 2, "target": 61, "backup10": True}, ["standard", "easy"]),
    ("4alone-backup10-muggins",
     {"players": 4, "target": 61, "backup10": True, "muggins": True},
     ["standard", "easy", "standard", "easy"]),
]


async def watch_computer_game(server, options, levels, encoding):
    """Create a room with computers at every seat but the last (POST /api/rooms), watch it
    as a spectator over /ws, give the last seat to a computer with ``set_computer`` (which
    starts the game) and follow it to game over. Returns the spectator client."""
    async with httpx.AsyncClient() as http:
        answer = await http.post(
            f"{server.http}/api/rooms",
            json={"options": options,
                  "computers": {str(i): lv for i, lv in enumerate(levels[:-1])}},
        )
    assert answer.status_code == 201, answer.text
    created = answer.json()
    assert created["computers"] == {str(i): lv for i, lv in enumerate(levels[:-1])}
    watcher = await Client.connect(server.ws, name="watcher", encoding=encoding)
    snap = await watcher.join(created["room"], None)
    assert snap["status"] == "waiting"
    assert [s["kind"] for s in snap["seats"]] == ["computer"] * (len(levels) - 1) + ["open"]
    assert [s["level"] for s in snap["seats"][:-1]] == levels[:-1]
    frame = await watcher.request(
        {"type": "set_computer", "seat": len(levels) - 1, "level": levels[-1],
         "creator_token": created["creator_token"]},
        lambda f: f["type"] in ("update", "error"),
    )
    assert frame["type"] == "update" and frame["seats"][-1]["kind"] == "computer"
    await watcher.wait_until(lambda c: c.status == "game_over", 60)
    return watcher


async def test_whole_games_between_computers(make_server):
    """Every table and option at once, several rooms in parallel, bot delay 0."""
    server = make_server(bot_delay_seconds=0)
    watchers = await asyncio.gather(*(
        watch_computer_game(server, opts, levels, "msgpack" if i % 2 else "json")
        for i, (_, opts, levels) in enumerate(TABLES)
    ))
    try:
        for (name, opts, _), w in zip(TABLES, watchers, strict=True):
            assert not w.problems, (name, w.problems)
            result = w.view["result"]
            assert result is not None, name
            assert len(events_of(w, "game_over")) == 1, name
            # A spectator never sees a hand, nor anyone's discards.
            assert all(e["hands"] == {} for e in events_of(w, "deal")), name
            assert all(e["cards"] is None for e in events_of(w, "discard")), name
            views = [v for v in w.views.values() if v is not None]
            assert len(views) > 20
            assert all(v["hand"] == v["kept"] == v["my_discards"] == [] for v in views)
            if opts.get("lowball"):
                assert result["lowball"] is True
            if opts.get("muggins") and not opts.get("lowball"):
                announces = events_of(w, "announce")
                results = events_of(w, "muggins_result")
                assert announces and results, name
                # Computers announce their true count (issue 4).
                assert all(r["announced"] == r["true_count"] for r in results), name
                # Nobody waited for the 15 s answer window: computers answered.
                assert all(r["call"] != "timeout" for r in results), name
            if opts.get("backup10"):
                for b in events_of(w, "backup"):
                    assert 0 <= b["holes"] <= 10
        # Every accepted action came from a computer seat through the room service.
        store = server.app.state.services.store
        for w in watchers:
            log = await asyncio.wrap_future(
                asyncio.run_coroutine_threadsafe(store.log(w.room), server.loop)
            )
            acts = [e for e in log if "action" in e]
            assert acts and all(str(e["id"]).startswith("auto-") for e in acts)
            assert all(e["seat"] is not None for e in acts)
    finally:
        for w in watchers:
            await w.close()


@pytest.mark.parametrize("options", [
    {"players": 2, "target": 61},
    {"players": 2, "target": 61, "muggins": True, "backup10": True},
], ids=["2p", "2p-muggins-backup10"])
async def test_human_against_the_computer(make_server, options):
    """A scripted human (deciding from its own view) plays a whole game against a
    ``standard`` computer created with the room (``create_room`` over /ws)."""
    server = make_server(bot_delay_seconds=0)
    human = await Client.connect(server.ws, name="Ann")
    try:
        created = await human.request(
            {"type": "create_room", "options": options, "computers": {"1": "standard"}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        assert created["type"] == "room_created"
        assert created["room_settings"]["hints"] is True
        snap = await human.join(created["room"], 0)
        assert snap["seats"][1]["kind"] == "computer"
        answers = await asyncio.wait_for(
            play_seat(human, random.Random(4), muggins_calls=True), 90
        )
        assert all(a["type"] == "ack" or a["code"] in ("nothing_to_answer", "stale_answer")
                   for a in answers)
        await human.wait_until(lambda c: c.status == "game_over")
        assert not human.problems
        assert human.view["result"] is not None
        seats = replay_room(server, created["room"])
        assert seats[0].views[human.version] == {
            k: v for k, v in human.view.items() if k != "turn_clock"}
        assert audit_frames(human, seats) > 20
        plays = [e for e in events_of(human, "play") if e["seat"] == 1]
        assert plays, "the computer never played"
        if options.get("muggins"):
            owners = {r["owner"] for r in events_of(human, "muggins_result")}
            assert owners == {0, 1}
    finally:
        await human.close()


async def test_set_computer_needs_the_creator_token(make_server):
    server = make_server(bot_delay_seconds=0)
    host = await Client.connect(server.ws, name="host")
    other = await Client.connect(server.ws, name="other")
    try:
        created = await host.create_room({"players": 3, "target": 61})
        await host.join(created["room"], 0)
        await other.join(created["room"], 1)
        # Someone else's token: refused, nothing changes.
        with pytest.raises(ClientError) as err:
            await other.request(
                {"type": "set_computer", "seat": 2, "level": "easy",
                 "creator_token": other.player_token},
                lambda f: f["type"] in ("update", "error"),
            )
        assert err.value.code == "bad_token"
        # A taken seat: refused.
        with pytest.raises(ClientError) as err:
            await host.request(
                {"type": "set_computer", "seat": 1, "creator_token": created["creator_token"]},
                lambda f: f["type"] in ("update", "error"),
            )
        assert err.value.code == "seat_taken"
        summary = httpx.get(f"{server.http}/api/rooms/{created['room']}").json()
        assert summary["seats"][2]["kind"] == "open" and summary["status"] == "waiting"
        # The creator's token: the seat becomes a computer and the game starts.
        frame = await host.request(
            {"type": "set_computer", "seat": 2, "level": "easy",
             "creator_token": created["creator_token"]},
            lambda f: f["type"] in ("update", "error"),
        )
        assert frame["type"] == "update"
        assert frame["seats"][2] == {
            "seat": 2, "taken": True, "name": "Computer (easy)", "kind": "computer",
            "connected": False, "level": "easy", "computer_standin": False, "takeover_at": None,
            "abandoned": False,
        }
        assert frame["events"][0] == {"type": "seat_taken", "seat": 2, "name": "Computer (easy)",
                                      "kind": "computer", "level": "easy"}
        await other.wait_until(lambda c: c.status == "playing")
        summary = httpx.get(f"{server.http}/api/rooms/{created['room']}").json()
        assert summary["seats"][2]["level"] == "easy" and summary["status"] == "playing"
        assert not host.problems and not other.problems
    finally:
        await host.close()
        await other.close()


async def test_hints_only_where_the_room_allows_them(make_server):
    server = make_server(bot_delay_seconds=0)
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    watcher = await Client.connect(server.ws, name="watcher")
    try:
        # A room without hints: the snapshot says so, and asking is refused.
        created = await ann.request(
            {"type": "create_room", "options": {"players": 2},
             "computers": {"1": "standard"}, "room": {"hints": False}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        assert created["room_settings"]["hints"] is False
        snap = await ann.join(created["room"], 0)
        assert snap["room_settings"] == {"hints": False, "answer_window": 15.0,
                                         "takeover_grace": 60.0, "turn_seconds": None,
                                         "match": 1, "rated": False, "public": False,
                                         "language": "en", "chat": "free"}
        with pytest.raises(ClientError) as err:
            await ann.request({"type": "hint"}, lambda f: f["type"] in ("hint", "error"))
        assert err.value.code == "hints_disabled"
        assert not any(f["type"] == "hint" for f in ann.frames)
        summary = httpx.get(f"{server.http}/api/rooms/{created['room']}").json()
        assert summary["room_settings"]["hints"] is False

        # A room with hints (the default): the standard player's ranked discards.
        async with httpx.AsyncClient() as http:
            answer = await http.post(f"{server.http}/api/rooms", json={
                "options": {"players": 2}, "room": {"answer_window": 9, "takeover_grace": 30}})
        room = answer.json()["room"]
        assert answer.json()["room_settings"] == {"hints": True, "answer_window": 9.0,
                                                  "takeover_grace": 30.0,
                                                  "turn_seconds": None, "match": 1,
                                                  "rated": False, "public": False,
                                                  "language": "en", "chat": "free"}
        await bob.join(room, 0)
        await watcher.join(room, None)
        with pytest.raises(ClientError) as err:
            await watcher.request({"type": "hint"}, lambda f: f["type"] in ("hint", "error"))
        assert err.value.code == "not_seated"
        frame = await bob.request({"type": "hint"}, lambda f: f["type"] in ("hint", "error"))
        assert frame["suggestion"] == {"kind": "none", "best": None}  # not started yet
        snap = await ann.join(room, 1)
        assert snap["room_settings"]["hints"] is True
        frame = await bob.request({"type": "hint"}, lambda f: f["type"] in ("hint", "error"))
        suggestion = frame["suggestion"]
        assert frame["seat"] == 0 and frame["room"] == room
        assert suggestion["kind"] == "discard" and len(suggestion["choices"]) == 15
        assert suggestion["best"]["type"] == "discard"
        assert set(suggestion["best"]["cards"]) <= set(bob.view["hand"])
        expected = [c["expected"] for c in suggestion["choices"]]
        assert expected == sorted(expected, reverse=True)
        # The suggestion is legal: taking it is accepted.
        assert (await bob.act(suggestion["best"]))["type"] == "ack"
        assert not bob.problems
    finally:
        for c in (ann, bob, watcher):
            await c.close()


async def test_bad_computer_requests(make_server):
    server = make_server()
    async with httpx.AsyncClient() as http:
        for body in (
            {"options": {"players": 2}, "computers": {"2": "standard"}},
            {"options": {"players": 2}, "computers": {"1": "grandmaster"}},
            {"options": {"players": 2}, "room": {"takeover_grace": 0}},
            {"options": {"players": 2}, "room": {"hints": "yes"}},
        ):
            answer = await http.post(f"{server.http}/api/rooms", json=body)
            assert answer.status_code == 400, body
            assert answer.json()["error"]["code"] == "bad_options"


async def test_computer_game_in_the_in_process_store(make_server):
    """The same deadlines in the memory store's heap: a whole game without Redis."""
    server = make_server(redis=False, bot_delay_seconds=0)
    watcher = await watch_computer_game(
        server, {"players": 3, "target": 61, "muggins": True}, ["standard", "easy", "easy"],
        "json",
    )
    try:
        assert not watcher.problems and watcher.view["result"] is not None
    finally:
        await watcher.close()
