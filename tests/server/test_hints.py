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
        await next_decision(ann, first)
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


async def connect_from(url: str, address: str, name: str) -> Client:
    """A client whose connection comes from ``address`` (a loopback address: another client
    address to the server)."""
    import websockets

    plain = websockets.connect

    def from_address(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        return plain(*args, local_addr=(address, 0), **kwargs)

    websockets.connect = from_address
    try:
        return await Client.connect(url, name=name)
    finally:
        websockets.connect = plain


async def next_version(client: Client, hint: dict) -> None:
    """Play the hinted move and wait for the room's next version."""
    assert (await client.act(hint["suggestion"]["best"]))["type"] == "ack"
    await client.wait_until(lambda c: c.version > hint["version"])


def deciding(client: Client) -> bool:
    """Whether the client's seat has a discard or a play to make (a hint is a search)."""
    view = client.view
    if view is None:
        return False
    seat = view["seat"]
    if view["phase"] == "discard":
        return not view["discarded"][seat]
    return view["phase"] == "play" and view["turn"] == seat


async def next_decision(client: Client, hint: dict) -> None:
    """Play the hinted move and wait for this seat's next discard or play (the computer
    plays meanwhile)."""
    await next_version(client, hint)
    await client.wait_until(deciding, 10)


async def test_the_hints_made_for_an_address_are_budgeted_on_every_process(
        make_server) -> None:
    """``hints_per_minute`` (docs/protocol.md "Limits"): each new hint made is charged to
    the client address, on every process (Redis); a repeat is not; past the budget the
    answer is ``error too_many_hints`` with ``retry_after`` and nothing is started; another
    address is not held back by it."""
    one = make_server(bot_delay_seconds=0, hints_per_minute=2, computer_processes=0)
    two = make_server(bot_delay_seconds=0, hints_per_minute=2, computer_processes=0)
    ann = await seated_against_a_computer(one, "Ann")
    client = await Client.connect(two.ws, name="Ann")
    made = await client.create_room({"players": 2, "target": 61}, computers={"1": "standard"})
    await client.join(made["room"], 0)
    await client.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard")
    bob = await connect_from(one.ws, "127.0.0.2", "Bob")
    made = await bob.create_room({"players": 2, "target": 61}, computers={"1": "standard"})
    await bob.join(made["room"], 0)
    await bob.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard")
    try:
        first = await ann.request({"type": "hint"}, is_answer, 10, retry=False)
        again = await ann.request({"type": "hint"}, is_answer, 10, retry=False)
        assert first["type"] == "hint" and again == first  # the repeat costs nothing
        # The second of the address's budget, on the other process.
        other = await client.request({"type": "hint"}, is_answer, 10, retry=False)
        assert other["type"] == "hint"
        assert hints(one, "made") == 1 and hints(one, "shared") == 1
        # New versions: new hints, past the address's budget on either process.
        await next_decision(ann, first)
        await next_decision(client, other)
        for who, server in ((ann, one), (client, two)):
            with pytest.raises(ClientError) as refused:
                await who.request({"type": "hint"}, is_answer, 10, retry=False)
            assert refused.value.code == "too_many_hints"
            assert 0 < refused.value.retry_after <= 30  # (2 a minute: one every 30 s)
            error = [f for f in who.frames if f["type"] == "error"][-1]
            assert error["ref"] == "hint"
            limited = scrape(server)[("cribbage_limited_total", (("code", "too_many_hints"),))]
            assert limited == 1
        assert hints(one, "made") == 1 and hints(two, "made") == 1  # nothing was started
        # Another address is not held back.
        theirs = await bob.request({"type": "hint"}, is_answer, 10, retry=False)
        assert theirs["type"] == "hint" and theirs["suggestion"]["kind"] == "discard"
        assert hints(one, "made") == 2
    finally:
        for c in (ann, client, bob):
            await c.close()


async def test_a_hint_past_the_budget_is_asked_again_after_retry_after(make_server) -> None:
    """The Python client sends a hint refused ``too_many_hints`` again after its
    ``retry_after`` (as the JavaScript client does) and gets it once the budget refills."""
    server = make_server(bot_delay_seconds=0, hints_per_minute=30, computer_processes=0)
    ann = await seated_against_a_computer(server, "Ann")
    try:
        limits = server.app.state.services.limits
        key = limits.key("127.0.0.1")

        async def spend() -> None:
            while (await limits.take(limits.hints, key)).taken:
                pass

        asyncio.run_coroutine_threadsafe(spend(), server.loop).result(10)
        started = asyncio.get_running_loop().time()
        answer = await ann.request({"type": "hint"}, is_answer, 10)
        waited = asyncio.get_running_loop().time() - started
        assert answer["type"] == "hint" and answer["suggestion"]["kind"] == "discard"
        refusals = [f for f in ann.frames if f["type"] == "error"]
        assert refusals and all(f["code"] == "too_many_hints" for f in refusals)
        # 30 a minute: one every 2 s; asked again no sooner than the refusal said
        assert 0 < refusals[0]["retry_after"] <= 2
        assert refusals[0]["retry_after"] <= waited <= 8, (waited, refusals)
    finally:
        await ann.close()


async def test_a_hint_that_is_not_made_after_all_is_not_charged(make_server, gated_hints
                                                                ) -> None:
    """On Redis the address's budget is read over the network; a hint whose charge comes
    back after the process reached its bound (or after another request began the same
    hint) is given back: refused ``busy`` or shared, it costs nothing."""
    gate, calls = gated_hints
    server = make_server(bot_delay_seconds=0, hints_in_flight=1, hints_per_minute=2,
                         computer_processes=0)
    limits = server.app.state.services.limits
    take = limits.take
    held: list[bool] = []

    async def slow_take(budget, key):  # noqa: ANN001, ANN202
        if budget.name == "hints" and not held:
            held.append(True)  # the first charge comes back once another hint is made
            while not calls:
                await asyncio.sleep(0.01)
        return await take(budget, key)

    limits.take = slow_take
    ann = await seated_against_a_computer(server, "Ann")
    bob = await seated_against_a_computer(server, "Bob")  # (the same address)
    try:
        refused = asyncio.create_task(ann.request({"type": "hint"}, is_answer, 10, retry=False))
        await until(lambda: held)
        making = asyncio.create_task(bob.request({"type": "hint"}, is_answer, 10))
        with pytest.raises(ClientError) as busy:
            await refused
        assert busy.value.code == "busy" and len(calls) == 1
        gate.set()
        assert (await making)["type"] == "hint"
        # One of the two hints of the budget is spent (Bob's), so Ann's is made now.
        again = await ann.request({"type": "hint"}, is_answer, 10, retry=False)
        assert again["type"] == "hint" and len(calls) == 2
        await next_decision(ann, again)
        with pytest.raises(ClientError) as spent:
            await ann.request({"type": "hint"}, is_answer, 10, retry=False)
        assert spent.value.code == "too_many_hints"
    finally:
        gate.set()
        await ann.close()
        await bob.close()


async def test_a_hint_with_nothing_to_search_is_answered_at_once_and_free(
        make_server, gated_hints) -> None:
    """Not this seat's turn (here: its discard made, the computer's not yet): the answer
    is ``kind: none`` at once, made in no computer process and charged to no budget."""
    gate, calls = gated_hints
    server = make_server(bot_delay_seconds=30, hints_per_minute=1, computer_processes=0)
    gate.set()  # (the fixture only counts the searches here)
    ann = await seated_against_a_computer(server, "Ann")
    try:
        first = await ann.request({"type": "hint"}, is_answer, 10, retry=False)
        assert first["suggestion"]["kind"] == "discard" and len(calls) == 1
        await next_version(ann, first)
        for _ in range(3):
            nothing = await ann.request({"type": "hint"}, is_answer, 10, retry=False)
            assert nothing["suggestion"]["kind"] == "none"
            assert nothing["suggestion"]["best"] is None
        assert len(calls) == 1 and hints(server, "made") == 1
        assert ("cribbage_limited_total", (("code", "too_many_hints"),)) not in scrape(server)
    finally:
        gate.set()
        await ann.close()


async def test_a_hint_refused_does_not_resend_another_request(make_server) -> None:
    """The Python client sends again only the message a refusal names: a hint refused
    ``too_many_hints`` while an act waits for its ack leaves the act alone (it used to be
    sent again after the hint's ``retry_after``, and its ack, come meanwhile, was lost)."""
    server = make_server(bot_delay_seconds=30, hints_per_minute=1, computer_processes=0)
    ann = await seated_against_a_computer(server, "Ann")
    try:
        first = await ann.request({"type": "hint"}, is_answer, 10, retry=False)
        await next_version(ann, first)  # (the discard: a new version)
        other = await seated_against_a_computer(server, "Ann again")  # a fresh decision
        asking = asyncio.create_task(
            other.request({"type": "hint"}, is_answer, 10, retry=False))
        await asyncio.sleep(0)  # (the hint is sent first, the act right after it)
        started = asyncio.get_running_loop().time()
        acting = asyncio.create_task(other.act({"type": "discard",
                                                "cards": other.view["hand"][:2]}, timeout=10))
        with pytest.raises(ClientError) as spent:
            await asking
        assert spent.value.code == "too_many_hints" and spent.value.retry_after > 30
        answer = await acting  # (before the fix: sent again after the hint's 60 s)
        assert answer["type"] == "ack"
        assert asyncio.get_running_loop().time() - started < 5
        # And a refusal that would be asked again past the request's timeout is raised.
        third = await seated_against_a_computer(server, "Ann thrice")
        try:
            with pytest.raises(ClientError) as late:
                await third.request({"type": "hint"}, is_answer, 3)
            assert late.value.code == "too_many_hints" and late.value.retry_after > 3
        finally:
            await third.close()
    finally:
        await ann.close()
        await other.close()


async def test_a_hint_with_nothing_to_search_is_not_refused_busy(make_server, gated_hints
                                                                 ) -> None:
    """While the process makes its ``hints_in_flight`` already, a seat with nothing to
    search (its discard made, the computer's not yet) is still answered at once."""
    gate, calls = gated_hints
    server = make_server(bot_delay_seconds=30, hints_in_flight=1, computer_processes=0)
    ann = await seated_against_a_computer(server, "Ann")
    carl = await seated_against_a_computer(server, "Carl")
    try:
        seen = carl.version
        assert (await carl.act({"type": "discard", "cards": carl.view["hand"][:2]}))[
            "type"] == "ack"
        await carl.wait_until(lambda c: c.version > seen)
        asking = asyncio.create_task(ann.request({"type": "hint"}, is_answer, 30))
        await until(lambda: len(calls) == 1)  # Ann's is being made: the process's one
        nothing = await carl.request({"type": "hint"}, is_answer, 5, retry=False)
        assert nothing["suggestion"]["kind"] == "none" and len(calls) == 1
        gate.set()
        assert (await asking)["suggestion"]["kind"] == "discard"
    finally:
        gate.set()
        await ann.close()
        await carl.close()


async def test_the_python_client_asks_for_a_hint(make_server) -> None:
    """``Client.hint``: the ``hint`` frame for this seat; a room without hints raises
    ``hints_disabled``; past the address's budget, a refusal whose wait ends past the
    timeout raises ``too_many_hints`` with its ``retry_after``."""
    server = make_server(bot_delay_seconds=30, hints_per_minute=1, computer_processes=0)
    ann = await seated_against_a_computer(server, "Ann")
    bob = await Client.connect(server.ws, name="Bob")
    try:
        answer = await ann.hint()
        assert answer["type"] == "hint" and answer["seat"] == 0
        assert answer["suggestion"]["kind"] == "discard" and answer["version"] >= 1
        assert (await ann.hint())["suggestion"] == answer["suggestion"]  # a repeat: free
        made = await bob.create_room({"players": 2, "target": 61}, room={"hints": False},
                                     computers={"1": "standard"})
        await bob.join(made["room"], 0)
        with pytest.raises(ClientError) as off:
            await bob.hint()
        assert off.value.code == "hints_disabled"
        carl = await seated_against_a_computer(server, "Carl")  # a fresh decision
        try:
            with pytest.raises(ClientError) as spent:
                await carl.hint(timeout=1)
        finally:
            await carl.close()
        assert spent.value.code == "too_many_hints" and spent.value.retry_after > 1
    finally:
        await ann.close()
        await bob.close()


async def test_a_room_made_again_with_the_same_id_gets_its_own_hints(make_server) -> None:
    """A room created with a ``request_id`` has an id drawn from it; once the room expired,
    the same ``request_id`` creates a room with that id again, a new deal, from version 1.
    Its hints are its own, not the ones the process kept for the first room at the same
    version (an outside check found the first room's discard offered for other cards)."""
    server = make_server(redis=False, room_ttl_seconds=2, presence_lease_seconds=0.6,
                         purge_interval_seconds=0.2, bot_delay_seconds=30)
    store = server.app.state.services.store
    seen = []
    for attempt in range(2):
        client = await Client.connect(server.ws, name="Ann")
        try:
            made = await client.create_room({"players": 2, "target": 61},
                                            computers={"1": "standard"},
                                            request_id="the-same-request-id-0001")
            await client.join(made["room"], 0)
            await client.wait_until(lambda c: c.view is not None
                                    and c.view["phase"] == "discard")
            answer = await client.hint()
            best = set(answer["suggestion"]["best"]["cards"])
            assert best <= set(client.view["hand"]), (attempt, best, client.view["hand"])
            seen.append((made["room"], answer["version"], tuple(client.view["hand"])))
        finally:
            await client.close()
        if attempt == 0:
            await until(lambda: store.room_count == 0, timeout=30)
    (first, v1, hand1), (second, v2, hand2) = seen
    assert first == second and v1 == v2 and hand1 != hand2
