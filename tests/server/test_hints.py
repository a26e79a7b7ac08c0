"""Hints on a busy server (issue 22 points 3 and 5; ``server.hints``): the hint for a room
version and seat is made once, and a server process makes at most ``hints_in_flight`` at
once, answering more with ``error busy`` and ``retry_after`` that changes nothing.

The ``expert`` search behind a hint is held on a gate here (``ComputerSeats.advise``
wrapped), so that "being made" lasts as long as the test needs; the hint itself is the
real one. Why the bound: docs/performance.md, "Hints".
"""

from __future__ import annotations

import asyncio
import threading

import pytest
from test_metrics import scrape

from protocol.client import Client, ClientError
from server.computer_seats import ComputerSeats


async def until(condition, timeout: float = 10.0) -> None:  # noqa: ANN001
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


def hints(server, outcome: str) -> float:  # noqa: ANN001
    return scrape(server)[("cribbage_hints_total", (("outcome", outcome),))]


async def seated_against_a_computer(server, name: str) -> Client:  # noqa: ANN001
    client = await Client.connect(server.ws, name=name)
    made = await client.create_room({"players": 2, "target": 61},
                                    computers={"1": "standard"})
    await client.join(made["room"], 0)
    await client.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard")
    return client


def is_answer(frame: dict) -> bool:
    return frame["type"] == "hint" or (frame["type"] == "error" and frame.get("ref") == "hint")


@pytest.fixture
def gated_hints(monkeypatch):
    """``ComputerSeats.advise`` waits for ``gate`` before making the real hint; ``calls``
    lists the seats' views it was asked for."""
    gate = threading.Event()
    calls: list[dict] = []
    real = ComputerSeats.advise

    async def advise(self, view, legal):  # noqa: ANN001, ANN202
        calls.append(view)
        await asyncio.to_thread(gate.wait, 30)
        return await real(self, view, legal)

    monkeypatch.setattr(ComputerSeats, "advise", advise)
    yield gate, calls
    gate.set()


async def test_a_hint_is_made_once_per_version_and_a_bounded_number_at_once(
        make_server, gated_hints) -> None:
    gate, calls = gated_hints
    server = make_server(bot_delay_seconds=0, hints_in_flight=1, computer_processes=0)
    ann = await seated_against_a_computer(server, "Ann")
    bob = await seated_against_a_computer(server, "Bob")
    try:
        # Ann's hint is being made: the process's one.
        asking = asyncio.create_task(ann.request({"type": "hint"}, is_answer, 30))
        await until(lambda: len(calls) == 1)

        # Bob's is refused at once, and nothing of his room changed.
        version = bob.version
        with pytest.raises(ClientError) as refused:
            await bob.request({"type": "hint"}, is_answer, 5, retry=False)
        assert refused.value.code == "busy"
        assert refused.value.retry_after == pytest.approx(0.25)
        error = [f for f in bob.frames if f["type"] == "error"][-1]
        assert error["ref"] == "hint"
        assert len(calls) == 1 and bob.version == version
        assert hints(server, "busy") == 1

        # Asked with the client's retry, it is sent again after retry_after until made.
        retried = asyncio.create_task(bob.request({"type": "hint"}, is_answer, 30))
        await until(lambda: sum(f["type"] == "error" for f in bob.frames) >= 2)
        gate.set()
        first = await asking
        assert first["type"] == "hint" and first["suggestion"]["kind"] == "discard"
        second = await retried
        assert second["type"] == "hint" and second["seat"] == 0
        assert second["room"] == bob.room and second["version"] == bob.version
        assert len(calls) == 2

        # A repeat at the same version is the hint made, at no cost.
        again = await ann.request({"type": "hint"}, is_answer, 5)
        assert again == first and len(calls) == 2
        assert hints(server, "made") == 2
        assert hints(server, "shared") == 1
        assert hints(server, "busy") >= 2
        assert scrape(server)[("cribbage_hints_in_flight", ())] == 0

        # A move makes a new version, and so a new hint.
        assert (await ann.act(first["suggestion"]["best"]))["type"] == "ack"
        await ann.wait_until(lambda c: c.version > first["version"])
        after = await ann.request({"type": "hint"}, is_answer, 5)
        assert after["version"] > first["version"] and len(calls) == 3
    finally:
        gate.set()
        await ann.close()
        await bob.close()


async def test_asking_again_while_a_hint_is_made_waits_for_that_one(
        make_server, gated_hints) -> None:
    gate, calls = gated_hints
    server = make_server(bot_delay_seconds=0, hints_in_flight=1, computer_processes=0)
    ann = await seated_against_a_computer(server, "Ann")
    # A second connection of Ann's, in the same seat (her seat token): the same room
    # version and seat, so the same hint.
    again = await Client.connect(server.ws, name="Ann", token=ann.player_token)
    try:
        await again.join(ann.room, 0, token=ann.seat_token)
        asking = asyncio.create_task(ann.request({"type": "hint"}, is_answer, 30))
        await until(lambda: len(calls) == 1)
        joining = asyncio.create_task(again.request({"type": "hint"}, is_answer, 30))
        await asyncio.sleep(0.2)
        assert not joining.done() and len(calls) == 1  # waiting for Ann's, not refused
        gate.set()
        one, two = await asking, await joining
        assert one == two and one["type"] == "hint" and len(calls) == 1
        assert hints(server, "made") == 1 and hints(server, "shared") == 1
        assert hints(server, "busy") == 0
    finally:
        gate.set()
        await ann.close()
        await again.close()
