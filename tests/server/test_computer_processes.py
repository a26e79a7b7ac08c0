"""Computer players deciding in the computer processes, off the event loop (issue 22 point
3; ``server.computer_seats.OFF_LOOP_LEVELS``).

A whole game between two computers on a real server whose ``standard`` level is decided in
a computer process for this test (the level is the expert's in production): the game
reaches its end through the one write path, every move was decided off the loop, and a
game played with the processes off (0) and the same seeds takes the very same moves (the
process sees what the loop would: the seat's view and its legal actions only). A killed
computer process costs no move: the next ones are decided on the loop until a new pool
starts. A room where a person sits is served before rooms of computers only
(``server.workers.priority``), and those still play on.
"""

from __future__ import annotations

import asyncio
import os
import signal

import httpx
import pytest

from protocol.client import Client
from server import computer_seats


def _seeds() -> str:
    return "0" * 64


async def computer_game(make_server, processes: int) -> tuple[list, object]:
    server = make_server(redis=False, bot_delay_seconds=0.0, computer_processes=processes,
                         sweep_interval_seconds=0.02,
                         app_kwargs={"seed_factory": _seeds})
    async with httpx.AsyncClient() as http:
        made = (await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 61},
            "computers": {"0": "standard", "1": "standard"}})).json()
    watcher = await Client.connect(server.ws, name="watcher")
    try:
        await watcher.join(made["room"], None)
        await watcher.wait_until(lambda c: c.status == "game_over", 120)
    finally:
        await watcher.close()
    store = server.app.state.services.store
    log = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
        store.log(made["room"]), server.loop))
    moves = [(e["seat"], e["action"]) for e in log if "action" in e]
    return moves, server.app.state.services.computers


@pytest.fixture
def off_loop_standard(monkeypatch):
    monkeypatch.setattr(computer_seats, "OFF_LOOP_LEVELS", frozenset({"standard"}))


async def test_computers_decide_off_the_loop_as_on_it(make_server, off_loop_standard) -> None:
    off, seats = await computer_game(make_server, 1)
    assert seats.off_loop > 20  # every computer discard and play of the game
    on, inline = await computer_game(make_server, 0)
    assert inline.off_loop == 0
    assert len(off) > 20 and off == on


async def test_a_killed_computer_process_costs_no_move(make_server, off_loop_standard) -> None:
    server = make_server(redis=False, bot_delay_seconds=0.0, computer_processes=1,
                         sweep_interval_seconds=0.02)
    seats = server.app.state.services.computers
    async with httpx.AsyncClient() as http:
        made = (await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 61},
            "computers": {"0": "standard", "1": "standard"}})).json()
    watcher = await Client.connect(server.ws, name="watcher")
    try:
        await watcher.join(made["room"], None)
        await watcher.wait_until(lambda c: seats.off_loop >= 3, 30)
        pool = seats.pool._pool
        assert pool is not None
        for pid in list(pool._processes):  # the workers of this pool
            os.kill(pid, signal.SIGKILL)
        await watcher.wait_until(lambda c: c.status == "game_over", 120)
    finally:
        await watcher.close()


async def test_a_persons_room_is_urgent_and_rooms_of_computers_only_still_play(
        make_server, off_loop_standard) -> None:
    """The computer processes' jobs are counted by urgency on ``/metrics``: the moves of a
    computer facing a person are ``urgent``, those of a room of computers only ``other``;
    both games reach their end."""
    from prometheus_client.parser import text_string_to_metric_families

    server = make_server(redis=False, bot_delay_seconds=0.0, computer_processes=1,
                         sweep_interval_seconds=0.02)
    async with httpx.AsyncClient() as http:
        alone = (await http.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 61},
            "computers": {"0": "standard", "1": "standard"}})).json()
        person = await Client.connect(server.ws, name="Ann")
        watcher = await Client.connect(server.ws, name="watcher")
        try:
            made = await person.create_room({"players": 2, "target": 61},
                                            computers={"1": "standard"})
            await person.join(made["room"], 0)
            await watcher.join(alone["room"], None)
            while person.status != "game_over":
                await person.wait_until(lambda c: c.status == "game_over" or bool(
                    c.view and c.view.get("legal")), 60)
                if person.status == "game_over":
                    break
                ack = await person.act(person.view["legal"][0], timeout=30)
                assert ack["type"] == "ack", ack
            await watcher.wait_until(lambda c: c.status == "game_over", 120)
        finally:
            await person.close()
            await watcher.close()
        text = (await http.get(f"{server.http}/metrics")).text
    jobs = {s.labels["urgency"]: s.value for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == "cribbage_computer_jobs_total"}
    assert jobs["urgent"] >= 10 and jobs["other"] >= 20, jobs
    seats = server.app.state.services.computers
    assert seats.off_loop == jobs["urgent"] + jobs["other"]


async def test_a_room_played_by_the_computer_alone_is_not_urgent(
        make_server, off_loop_standard) -> None:
    """A person's seat played by a stand-in makes no room urgent: with every seat the
    computer's to play (as in a rated room the player left, whose stand-in plays to the end
    with nobody there) the moves wait behind people's like any room of computers only."""
    from prometheus_client.parser import text_string_to_metric_families

    server = make_server(redis=False, bot_delay_seconds=0.0, computer_processes=1,
                         sweep_interval_seconds=0.02)
    person = await Client.connect(server.ws, name="Ann")
    try:
        made = await person.create_room({"players": 2, "target": 61},
                                        computers={"1": "standard"})
        await person.join(made["room"], 0)
        service = server.app.state.services.service
        await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
            service.set_standin(made["room"], 0, True, reason="turn_clock"), server.loop))
        await person.wait_until(lambda c: c.status == "game_over", 120)
    finally:
        await person.close()
    async with httpx.AsyncClient() as http:
        text = (await http.get(f"{server.http}/metrics")).text
    jobs = {s.labels["urgency"]: s.value for f in text_string_to_metric_families(text)
            for s in f.samples if s.name == "cribbage_computer_jobs_total"}
    assert jobs["other"] >= 20 and jobs["urgent"] <= 1, jobs  # (a move asked before it)
