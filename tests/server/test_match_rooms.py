"""Rooms that play a match (issue 19 point 1, docs/rules.md §8): the room setting ``match``
starts the engine's match, a table of computers only plays the match to its end by itself,
a person's table waits for a person's ``rematch`` ("Next game"), and each game's archive
payload carries the match as that game left it.

Through the real room service, sweeper and computer seats on the in-memory store (no HTTP:
the wire's shapes are checked by tests/protocol; the web table by tests/browser)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

import engine
from server.broker import MemoryBroker
from server.computer_seats import ComputerSeats
from server.deadline_plan import ARCHIVE, computers_play_on
from server.rooms import COMPUTER, RoomError, RoomService
from server.settings import Settings
from server.store.base import Deadline
from server.store.memory import MemoryStore
from server.timers import Sweeper

SETTINGS = dict(bot_delay_seconds=0.0, sweep_interval_seconds=0.01,
                deadline_lease_seconds=1.0)


class Table:
    """Room service, sweeper and computer seats; archive deadlines are kept, not written."""

    def __init__(self) -> None:
        self.settings = Settings(**SETTINGS)
        self.store = MemoryStore(MemoryBroker())
        self.service = RoomService(self.store, self.settings)
        self.sweeper = Sweeper(self.store, self.service, self.settings)
        self.computers = ComputerSeats(self.service, self.sweeper)
        self.archived: list[dict[str, Any]] = []
        self.sweeper.register(ARCHIVE, self._archive)

    async def _archive(self, deadline: Deadline) -> None:
        self.archived.append(deadline.payload)

    async def until(self, done: Any, seconds: float = 60.0) -> None:
        stop = time.monotonic() + seconds
        while not await done():
            assert time.monotonic() < stop, "not done in time"
            await self.sweeper.sweep_once()
            await asyncio.sleep(0.002)

    async def state(self, room: str) -> engine.GameState:
        record = await self.service.load(room)
        return engine.GameState.from_dict(record.state)


async def test_a_table_of_computers_plays_its_best_of_3_to_the_end():
    table = Table()
    record, _ = await table.service.create_room(
        {"players": 2, "target": 61}, computers={0: "standard", 1: "easy"},
        room={"match": 3})
    room = record.id
    assert table.service.room_settings(record)["match"] == 3

    async def over() -> bool:
        state = await table.state(room)
        return state.match["over"] and state.phase == "game_over" and len(table.archived) == \
            len(state.match["games"])

    await table.until(over)
    state = await table.state(room)
    match = state.match
    games = len(match["games"])
    assert 2 <= games <= 3 and max(match["wins"]) == 2 and match["reason"] == "won"
    assert state.game_number == games
    # Each game's archive payload: the match as that game left it (this game scored in).
    assert [p["game"] for p in table.archived] == list(range(1, games + 1))
    for i, payload in enumerate(table.archived):
        assert payload["match"]["games"] == match["games"][: i + 1]
        assert payload["match"]["over"] == (i + 1 == games)
        assert payload["settings"]["match"] == 3
    # Once the match is over, the computers stop (a new match waits for someone to ask).
    record = await table.service.load(room)
    assert not computers_play_on(record, state)
    version = record.version
    for _ in range(20):
        await table.sweeper.sweep_once()
    assert (await table.service.load(room)).version == version
    log = await table.store.log(room)
    rematches = [e for e in log if e.get("action", {}).get("type") == "rematch"]
    assert len(rematches) == games - 1 and all(e["seat"] == 0 for e in rematches)
    # A rematch now starts match 2, cut for.
    await table.service.act(room, 0, COMPUTER, "again", {"type": "rematch"})
    state = await table.state(room)
    assert state.match["number"] == 2 and state.match["games"] == []


async def test_a_persons_table_waits_for_the_next_game_and_best_of_1_is_as_before():
    table = Table()
    record, _ = await table.service.create_room(
        {"players": 2, "target": 61}, computers={1: "standard"}, room={"match": 5})
    room = record.id
    await table.service.join(room, 0, "tok-ann", "Ann")
    token = "tok-ann"
    # The person plays (the first legal move each time) until the game is over.
    moves = 0

    async def game_over() -> bool:
        nonlocal moves
        state = await table.state(room)
        if state.phase == "game_over":
            return True
        if engine.has_move(state, 0):
            action = engine.legal_actions(state, 0)[0]
            moves += 1
            await table.service.act(room, 0, token, f"m{moves}", action)
        return False

    await table.until(game_over)
    state = await table.state(room)
    assert len(state.match["games"]) == 1 and not state.match["over"]
    record = await table.service.load(room)
    assert not computers_play_on(record, state)
    version = record.version
    for _ in range(20):
        await table.sweeper.sweep_once()
    assert (await table.service.load(room)).version == version
    await table.service.act(room, 0, token, "next", {"type": "rematch"})
    state = await table.state(room)
    assert state.game_number == 2 and state.phase == "discard"
    assert len(state.match["games"]) == 1

    single, _ = await table.service.create_room({"players": 2}, computers={1: "easy"})
    await table.service.join(single.id, 0, "tok-bo", "Bo")
    assert (await table.state(single.id)).match is None
    assert table.service.room_settings(single)["match"] == 1


@pytest.mark.parametrize("bad", [2, 0, 9, "3", True, 3.5])
async def test_a_bad_match_length_is_refused(bad):
    table = Table()
    with pytest.raises(RoomError) as err:
        await table.service.create_room({"players": 2}, room={"match": bad})
    assert err.value.code == "bad_options"
