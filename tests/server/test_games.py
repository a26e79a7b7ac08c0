"""Whole games played to game over by scripted clients over /ws, on Redis, in JSON and
msgpack, for every table and option; each with a spectator and a hidden-information audit
of every frame every seat and the spectator received."""

from __future__ import annotations

import pytest
from crib_wire import audit_frames, events_of, play_game, seat_players

import engine

GAMES = [
    # (id, options, encoding)
    ("2p-json", {"players": 2, "target": 61}, "json"),
    ("2p-msgpack", {"players": 2, "target": 61}, "msgpack"),
    ("3p-msgpack", {"players": 3, "target": 61}, "msgpack"),
    ("4alone-json", {"players": 4, "target": 61}, "json"),
    ("4pairs-msgpack", {"players": 4, "partnerships": True, "target": 61}, "msgpack"),
    ("2p-muggins-json", {"players": 2, "target": 61, "muggins": True}, "json"),
    ("4pairs-muggins-msgpack",
     {"players": 4, "partnerships": True, "target": 61, "muggins": True}, "msgpack"),
    ("3p-lowball-json", {"players": 3, "target": 61, "lowball": True}, "json"),
    ("2p-backup10-msgpack", {"players": 2, "target": 61, "backup10": True}, "msgpack"),
    ("2p-all-options-121-json",
     {"players": 2, "target": 121, "muggins": True, "lowball": True, "backup10": True}, "json"),
]


@pytest.mark.parametrize("options,encoding", [g[1:] for g in GAMES], ids=[g[0] for g in GAMES])
async def test_whole_game(server, options, encoding):
    room, players, watcher = await seat_players(
        server.ws, options, encoding=encoding, spectator=True
    )
    try:
        await play_game(players, seed=len(options), muggins_calls=options.get("muggins", False))
        everyone = players + [watcher]
        await watcher.wait_until(lambda c: c.status == "game_over")
        for c in everyone:
            assert not c.problems, c.problems
            assert c.status == "game_over"
            assert audit_frames(c, players) > 10
        # Every seat and the spectator end on the same public result and scores.
        results = [c.view["result"] for c in everyone]
        assert all(r == results[0] for r in results)
        assert results[0] is not None
        scores = {tuple(c.view["scores"]) for c in everyone}
        assert len(scores) == 1
        assert len(events_of(watcher, "game_over")) == 1
        if options.get("lowball"):
            assert results[0]["lowball"] is True
        if options.get("muggins") and not options.get("lowball"):
            assert events_of(watcher, "muggins_result")
        # The spectator's deal events never hold a hand.
        assert all(e["hands"] == {} for e in events_of(watcher, "deal"))
        # Each seat's own deal events hold exactly its own hand.
        for c in players:
            for e in events_of(c, "deal"):
                assert list(e["hands"]) == [str(c.seat)]
    finally:
        for c in players + [watcher]:
            await c.close()


ZERO_HAND = ["7C", "6H", "QC", "3H", "TC", "4H"]  # every 4 of these with KS count 0


def zero_hand_game(options, seed):
    """Seat 0 deals first; seat 1 is dealt ZERO_HAND and the starter is KS."""
    deck = engine.deck_for(options, 0, hands={1: ZERO_HAND}, starter="KS")
    return engine.new_game(options, seed, first_dealer=0, decks=[deck])


@pytest.mark.parametrize("encoding", ["json", "msgpack"])
async def test_backup10_zero_hand_reaches_every_seat(make_server, encoding):
    """A zero hand goes back (docs/rules.md §6.1) and the backup event (§6.2) reaches every seat
    and the spectator, with the same holes moved."""
    server = make_server(app_kwargs={"game_factory": zero_hand_game})
    opts = {"players": 2, "target": 61, "backup10": True}
    room, players, watcher = await seat_players(
        server.ws, opts, encoding=encoding, spectator=True
    )
    try:
        await play_game(players, seed=3)
        await watcher.wait_until(lambda c: c.status == "game_over")
        everyone = players + [watcher]
        first = []
        for c in everyone:
            assert not c.problems
            backups = events_of(c, "backup")
            assert backups, f"seat {c.seat} got no backup event"
            first.append(backups[0])
            audit_frames(c, players)
        assert all(b == first[0] for b in first)
        b = first[0]
        assert (b["seat"], b["kind"]) == (1, "hand")
        assert b["holes"] == min(10, b["score_before"]) == b["score_before"] - b["score_after"]
    finally:
        for c in players + [watcher]:
            await c.close()


async def test_rematch_same_room_same_seats(server):
    room, players, watcher = await seat_players(server.ws, {"players": 2, "target": 61},
                                                spectator=True)
    try:
        await play_game(players, seed=5)
        answer = await players[1].act({"type": "rematch"})
        assert answer["type"] == "ack"
        for c in players + [watcher]:
            await c.wait_until(lambda c: c.status == "playing" and c.view["games_played"] == 1)
        await play_game(players, seed=6)
        await watcher.wait_until(lambda c: c.status == "game_over" and c.view["games_played"] == 1)
        for c in players + [watcher]:
            assert not c.problems
            assert len(events_of(c, "game_over")) == 2
            audit_frames(c, players)
    finally:
        for c in players + [watcher]:
            await c.close()
