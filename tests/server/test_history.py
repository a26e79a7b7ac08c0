"""The whole story, kept by the server: ``history`` gives the current game's events as the
connection saw them live (or as the public did), page by page; snapshots say where the game
starts; a seat coming back with ``since`` gets what it missed."""

from __future__ import annotations

import random

from crib_wire import events_of, play_seat, seat_players

from protocol.client import Client


async def test_history_is_what_was_seen_live_and_pages_back(server, clients) -> None:
    room, players, watcher = await seat_players(server.ws, {"players": 2, "target": 61},
                                                spectator=True)
    clients.extend(players + [watcher])
    ann, bob = players
    await play_seat_until(ann, bob, 30)
    snap = await ann.request({"type": "resync"}, lambda f: f["type"] == "snapshot")
    first = snap["history_from"]
    assert first == 2  # v1: seat 0 taken; the last seat's join (v2) started the game
    # Everything at once: the versions Ann saw in updates, with the same events.
    whole = await ann.request({"type": "history", "limit": 500},
                              lambda f: f["type"] == "history")
    assert whole["first"] == first and not whole["more"] and whole["game"] == 1
    live = {f["version"]: f["events"] for f in ann.frames if f["type"] == "update"}
    got = {v["version"]: v["events"] for v in whole["versions"]}
    assert got[first][0]["type"] == "seat_taken"
    assert [e["type"] for e in got[first]][1:] == [
        "game_start", "game_commitment", "cut_for_deal", "deal_commitment", "deal"]
    for version, events in got.items():
        if version in live:
            assert events == live[version], version
    assert sorted(got) == list(range(first, snap["version"] + 1))
    # Pages of 7, going back.
    pages, before = [], None
    while True:
        msg = {"type": "history", "limit": 7}
        if before is not None:
            msg["before"] = before
        page = await ann.request(msg, lambda f: f["type"] == "history")
        pages.insert(0, page["versions"])
        if not page["more"]:
            break
        before = page["versions"][0]["version"]
    assert [v for page in pages for v in page] == whole["versions"]
    # Public: what a spectator saw — no hand of Ann's in the deal.
    public = await ann.request({"type": "history", "public": True, "limit": 500},
                               lambda f: f["type"] == "history")
    deal = next(e for v in public["versions"] for e in v["events"] if e["type"] == "deal")
    assert deal["hands"] == {}
    seen = {f["version"]: f["events"] for f in watcher.frames if f["type"] == "update"}
    for v in public["versions"]:
        if v["version"] in seen:
            assert v["events"] == seen[v["version"]]


async def test_the_last_to_sit_and_a_seat_coming_back_get_the_story(server, clients) -> None:
    room, players, _ = await seat_players(server.ws, {"players": 2})
    clients.extend(players)
    ann, bob = players
    # Bob sat last: his join's snapshot carries the start of the game, cut for deal included.
    snap = next(f for f in bob.frames if f["type"] == "snapshot" and f["view"] is not None)
    missed = snap["missed"]
    assert [m["version"] for m in missed] == [snap["version"]]
    assert "cut_for_deal" in [e["type"] for e in missed[0]["events"]]
    # Bob drops after a few actions; Ann plays on; Bob comes back with `since`.
    await play_seat_until(ann, bob, 6)
    seen = bob.version
    token, seat_token = bob.player_token, bob.seat_token
    await bob.close()
    rng = random.Random(5)
    from crib_wire import choose
    for _ in range(3):
        action = choose(ann.view, rng)
        if action is None:
            break
        await ann.act(action)
    back = await Client.connect(server.ws, name="Bob", token=token)
    clients.append(back)
    again = await back.request({"type": "join", "room": room, "seat": 1, "token": seat_token,
                                "since": seen}, lambda f: f["type"] == "snapshot")
    versions = [m["version"] for m in again["missed"]]
    assert versions == list(range(seen + 1, again["version"] + 1))
    assert again["history_from"] == 2


async def play_seat_until(a: Client, b: Client, versions: int) -> None:
    """Both seats play legal moves until the room is ``versions`` versions further on."""
    import asyncio

    target = a.version + versions
    rngs = [random.Random(1), random.Random(2)]
    from crib_wire import choose

    while a.version < target and a.view["phase"] != "game_over":
        moved = False
        for client, rng in zip((a, b), rngs, strict=True):
            action = choose(client.view, rng)
            if action is not None:
                await client.act(action)
                moved = True
        if not moved:
            await asyncio.sleep(0.01)
    await b.wait_until(lambda c: c.version >= a.version)
    assert not events_of(a, "unknown") and play_seat  # keep the helpers imported
