"""``server.hints.HintDesk`` on its own: one hint per key, shared while it is made and
kept after; a bound on how many are made at once; a requester that goes away does not stop
a hint others wait for; a failed hint is not kept; the oldest kept hints are forgotten."""

from __future__ import annotations

import asyncio

import pytest

from server.hints import HintDesk, HintsBusy
from server.hints import desk as desk_module


class Maker:
    """Makes hints ``{"n": k}`` when released; counts how many it started."""

    def __init__(self) -> None:
        self.started = 0
        self.release = asyncio.Event()
        self.fail: Exception | None = None

    async def __call__(self) -> dict:
        self.started += 1
        n = self.started
        await self.release.wait()
        if self.fail is not None:
            raise self.fail
        return {"n": n}


async def test_one_hint_per_key_shared_while_made_and_kept_after() -> None:
    desk, make = HintDesk(limit=2), Maker()
    first = asyncio.create_task(desk.get(("r", 3, 0), make))
    second = asyncio.create_task(desk.get(("r", 3, 0), make))
    await asyncio.sleep(0)
    assert desk.in_flight == 1
    make.release.set()
    assert await first == await second == {"n": 1}
    assert await desk.get(("r", 3, 0), make) == {"n": 1}
    assert (make.started, desk.made, desk.shared, desk.refused) == (1, 1, 2, 0)
    assert desk.in_flight == 0
    # Another version or seat is another hint.
    assert await desk.get(("r", 4, 0), make) == {"n": 2}
    assert await desk.get(("r", 4, 1), make) == {"n": 3}


async def test_past_the_limit_a_new_hint_is_refused_and_nothing_starts() -> None:
    desk, make = HintDesk(limit=2), Maker()
    held = [asyncio.create_task(desk.get(("r", 1, seat), make)) for seat in (0, 1)]
    while make.started < 2:
        await asyncio.sleep(0)
    with pytest.raises(HintsBusy) as busy:
        await desk.get(("r", 1, 2), make)
    assert busy.value.retry_after == desk_module.RETRY_AFTER_SECONDS
    assert make.started == 2 and desk.refused == 1
    # One being made is still shared, not refused.
    shared = asyncio.create_task(desk.get(("r", 1, 0), make))
    make.release.set()
    assert [await t for t in held] == [{"n": 1}, {"n": 2}]
    assert await shared == {"n": 1}
    assert await desk.get(("r", 1, 2), make) == {"n": 3}


async def test_no_limit_with_zero() -> None:
    desk, make = HintDesk(limit=0), Maker()
    tasks = [asyncio.create_task(desk.get(("r", 1, k), make)) for k in range(50)]
    await asyncio.sleep(0)
    assert desk.in_flight == 50
    make.release.set()
    assert len({(await t)["n"] for t in tasks}) == 50


async def test_a_requester_that_goes_away_does_not_stop_the_hint() -> None:
    desk, make = HintDesk(limit=1), Maker()
    gone = asyncio.create_task(desk.get(("r", 1, 0), make))
    waiting = asyncio.create_task(desk.get(("r", 1, 0), make))
    await asyncio.sleep(0)
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    make.release.set()
    assert await waiting == {"n": 1}
    assert await desk.get(("r", 1, 0), make) == {"n": 1} and make.started == 1


async def test_a_failed_hint_is_raised_to_each_requester_and_not_kept() -> None:
    desk, make = HintDesk(limit=1), Maker()
    make.fail = RuntimeError("the computer processes died")
    tasks = [asyncio.create_task(desk.get(("r", 1, 0), make)) for _ in range(2)]
    await asyncio.sleep(0)
    make.release.set()
    for task in tasks:
        with pytest.raises(RuntimeError):
            await task
    assert desk.in_flight == 0
    make.fail = None
    assert await desk.get(("r", 1, 0), make) == {"n": 2}


async def test_the_oldest_kept_hints_are_forgotten(monkeypatch) -> None:
    monkeypatch.setattr(desk_module, "REMEMBERED", 2)
    desk, make = HintDesk(limit=1), Maker()
    make.release.set()
    for version in (1, 2):
        await desk.get(("r", version, 0), make)
    await desk.get(("r", 1, 0), make)  # used again: now the newest
    await desk.get(("r", 3, 0), make)  # forgets version 2
    assert make.started == 3
    assert await desk.get(("r", 1, 0), make) == {"n": 1}
    assert await desk.get(("r", 2, 0), make) == {"n": 4}


async def test_close_cancels_the_hints_being_made() -> None:
    desk, make = HintDesk(limit=1), Maker()
    task = asyncio.create_task(desk.get(("r", 1, 0), make))
    await asyncio.sleep(0)
    await desk.close()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert desk.in_flight == 0
