"""The room service's one transaction loop, with a fake clock and a store that misbehaves on
purpose: conflicts, lost answers, an unreachable store. No real sleeps, no network."""

from __future__ import annotations

from typing import Any

import pytest

import engine
from server.broker import MemoryBroker
from server.deadline_plan import TURN_CLOCK, plan
from server.rooms import Change, NoChange, Room, RoomError, RoomService
from server.settings import Settings
from server.store.base import Commit, CommitResult, OutcomeUnknown, StoreUnavailable
from server.store.memory import MemoryStore


class FakeClock:
    """Unix time that moves only when told."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class FlakyStore(MemoryStore):
    """A memory store whose commits can be made to fail in scripted ways.

    ``script`` is a list of what the next commits do, one item each:
    ``"conflict"`` (someone else wrote first: the version is bumped under the commit),
    ``"unavailable"`` (nothing sent), ``"lost"`` (applied, but the answer is lost),
    ``"unknown"`` (not applied, and the answer is lost). Loads fail while ``down``.
    """

    def __init__(self, clock: FakeClock) -> None:
        super().__init__(MemoryBroker(), clock=clock)
        self.script: list[str] = []
        self.down = False
        self.commits = 0

    async def load(self, room_id: str, action_key: str | None = None):  # noqa: ANN201
        if self.down:
            raise StoreUnavailable("down")
        return await super().load(room_id, action_key)

    async def commit(self, commit: Commit) -> CommitResult:
        self.commits += 1
        step = self.script.pop(0) if self.script else "ok"
        if step == "unavailable":
            raise StoreUnavailable("no connection")
        if step == "unknown":
            raise OutcomeUnknown("timed out")
        if step == "conflict":
            # Another process's change landed first (here: the same record, one version on).
            room = self._rooms[commit.record.id]
            room.version += 1
            room.record = room.record.evolve(version=room.version)
        result = await super().commit(commit)
        if step == "lost":
            raise OutcomeUnknown("answer lost")
        return result


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> FlakyStore:
    return FlakyStore(clock)


async def started(store: FlakyStore, clock: FakeClock, **settings: Any
                  ) -> tuple[RoomService, str, list[str]]:
    """A 2-player room with both seats taken (the game has started)."""
    service = RoomService(store, Settings(**settings), clock=clock)
    record, _ = await service.create_room({"players": 2})
    tokens = [service.tokens.issue(), service.tokens.issue()]
    for seat, token in enumerate(tokens):
        await service.join(record.id, seat, token, f"p{seat}")
    return service, record.id, tokens


def hand(store: FlakyStore, room_id: str, seat: int) -> list[str]:
    return list(engine.GameState.from_dict(store_record(store, room_id).state).hands[seat])


def store_record(store: FlakyStore, room_id: str):  # noqa: ANN201
    return store._rooms[room_id].record


def discard(store: FlakyStore, room_id: str, seat: int) -> dict[str, Any]:
    return {"type": "discard", "cards": hand(store, room_id, seat)[:2]}


async def test_an_action_is_applied_once_and_a_reused_id_is_refused(store, clock):
    service, room, tokens = await started(store, clock)
    action = discard(store, room, 0)
    first = await service.act(room, 0, tokens[0], "a1", action)
    assert not first.duplicate and first.version == 3
    again = await service.act(room, 0, tokens[0], "a1", action)
    assert again.duplicate and again.version == first.version
    other = {"type": "discard", "cards": hand(store, room, 1)[:2]}
    with pytest.raises(RoomError) as err:
        await service.act(room, 0, tokens[0], "a1", other)
    assert err.value.code == "action_id_reused"
    assert store_record(store, room).version == 3


async def test_a_conflict_is_retried_from_a_fresh_read(store, clock):
    service, room, tokens = await started(store, clock)
    store.script = ["conflict", "conflict"]
    result = await service.act(room, 0, tokens[0], "a1", discard(store, room, 0))
    assert not result.duplicate
    assert store.commits >= 3
    assert service.conflicts == 2
    log = await store.log(room)
    assert [e.get("id") for e in log if "action" in e] == ["a1"]


async def test_busy_after_too_many_conflicts_and_nothing_changes(store, clock):
    service, room, tokens = await started(store, clock)
    store.script = ["conflict"] * 50
    before = len(await store.log(room))
    with pytest.raises(RoomError) as err:
        await service.act(room, 0, tokens[0], "a1", discard(store, room, 0))
    assert err.value.code == "busy"
    assert not [e for e in (await store.log(room))[before:] if "action" in e]


async def test_a_lost_answer_is_resolved_by_the_retry_exactly_once(store, clock):
    """The commit went through but its answer was lost: the retry from a fresh read finds
    the action id recorded and answers it as a duplicate — applied once."""
    service, room, tokens = await started(store, clock)
    store.script = ["lost"]
    result = await service.act(room, 0, tokens[0], "a1", discard(store, room, 0))
    assert result.duplicate and result.version == 3
    assert [e.get("id") for e in await store.log(room) if "action" in e] == ["a1"]


async def test_an_unknown_outcome_twice_is_passed_on_and_the_resend_settles_it(store, clock):
    service, room, tokens = await started(store, clock)
    action = discard(store, room, 0)
    store.script = ["unknown", "lost"]
    with pytest.raises(OutcomeUnknown):
        await service.act(room, 0, tokens[0], "a1", action)
    # The client re-sends the same id once the store answers: applied exactly once.
    result = await service.act(room, 0, tokens[0], "a1", action)
    assert result.duplicate
    assert [e.get("id") for e in await store.log(room) if "action" in e] == ["a1"]


async def test_an_unreachable_store_changes_nothing(store, clock):
    service, room, tokens = await started(store, clock)
    store.script = ["unavailable", "unavailable"]
    with pytest.raises(StoreUnavailable):
        await service.act(room, 0, tokens[0], "a1", discard(store, room, 0))
    assert store_record(store, room).version == 2
    store.down = True
    with pytest.raises(StoreUnavailable):
        await service.act(room, 0, tokens[0], "a2", discard(store, room, 0))
    store.down = False
    ok = await service.act(room, 0, tokens[0], "a2", discard(store, room, 0))
    assert not ok.duplicate and ok.version == 3


async def test_a_refusal_from_a_stale_cache_is_decided_again_fresh(store, clock):
    service, room, tokens = await started(store, clock)
    service.cache.follow(room)
    service.cache.put(store_record(store, room))
    # Seat 0 discards through another process (this one's cache does not see it).
    other = RoomService(store, Settings(), clock=clock, tokens=service.tokens)
    await other.act(room, 0, tokens[0], "x", discard(store, room, 0))
    stale = service.cache.get(room)
    assert stale is not None and stale[0].version == 2
    # Seat 1's discard from the stale record conflicts; decided again on the fresh one.
    result = await service.act(room, 1, tokens[1], "y", discard(store, room, 1))
    assert result.version == 4 and result.record is not None
    assert result.record.status == "playing"


async def test_ids_are_scoped_per_game_and_a_resent_rematch_is_recognised(store, clock):
    service, room, tokens = await started(store, clock, bot_delay_seconds=0)
    record = store_record(store, room)
    # Play the game to its end by the engine's first legal action (ids "g1-<n>").
    n = 0
    while record.status == "playing":
        state = engine.GameState.from_dict(record.state)
        for seat in (0, 1):
            legal = engine.legal_actions(state, seat)
            if legal:
                n += 1
                await service.act(room, seat, tokens[seat], f"id-{n}", legal[0])
                break
        record = store_record(store, room)
    assert record.status == "game_over" and record.game_number == 1
    rematch = await service.act(room, 0, tokens[0], "again", {"type": "rematch"})
    assert not rematch.duplicate
    resent = await service.act(room, 0, tokens[0], "again", {"type": "rematch"})
    assert resent.duplicate and resent.version == rematch.version
    # In game 2 the ids of game 1 are free again, even with other actions.
    state = engine.GameState.from_dict(store_record(store, room).state)
    assert state.game_number == 2
    legal = engine.legal_actions(state, 1)[0]
    reused = await service.act(room, 1, tokens[1], "id-1", legal)
    assert not reused.duplicate


async def test_change_functions_are_pure_and_see_the_injected_clock(store, clock):
    service, room, _ = await started(store, clock)
    seen: list[float] = []

    def look(r: Room, now: float) -> NoChange:
        seen.append(now)
        return NoChange(r.record.version)

    clock.now += 12.5
    outcome = await service.transact(room, look)
    assert outcome is not None and not outcome.changed and outcome.result == 2
    assert seen == [clock.now]

    def mark(r: Room, now: float) -> Change:
        return Change([{"type": "seat_taken", "seat": 0, "name": "x"}], {"note": "test"})

    outcome = await service.transact(room, mark)
    assert outcome is not None and outcome.changed and outcome.version == 3
    assert store_record(store, room).updated == clock.now
    assert (await store.log(room))[-1] == {"v": 3, "note": "test", "events": [
        {"type": "seat_taken", "seat": 0, "name": "x"}]}


async def test_a_missing_room(store, clock):
    service = RoomService(store, Settings(), clock=clock)
    with pytest.raises(RoomError) as err:
        await service.transact("nope", lambda r, now: NoChange())
    assert err.value.code == "room_not_found"
    assert await service.transact("nope", lambda r, now: NoChange(), missing_ok=True) is None


async def test_turn_clock_planned_from_the_fake_clock(store, clock):
    service, room, tokens = await started(store, clock)
    # A room with a turn clock: create one and seat both.
    record, _ = await service.create_room({"players": 2}, room={"turn_seconds": 30})
    for seat, token in enumerate(tokens):
        await service.join(record.id, seat, token, f"p{seat}")
    started_at = clock.now
    rec = store_record(store, record.id)
    assert rec.clock == {"0": started_at + 30, "1": started_at + 30}
    kinds = {(d.kind, d.key, d.due) for d in await store.deadlines(record.id)}
    assert (TURN_CLOCK, "0", started_at + 30) in kinds
    # Seat 0 discards 10 s later: its clock is done; seat 1's keeps running.
    clock.now += 10
    await service.act(record.id, 0, tokens[0], "d0", discard(store, record.id, 0))
    rec = store_record(store, record.id)
    assert rec.clock == {"1": started_at + 30}
    assert not [d for d in await store.deadlines(record.id)
                if d.kind == TURN_CLOCK and d.key == "0"]


def test_plan_keeps_a_running_clock_and_restarts_it_for_a_new_task():
    options = engine.GameOptions(players=2)
    state, _ = engine.new_game(options, "ab" * 16)
    from server.store.base import RoomRecord, SeatRecord

    seats = (SeatRecord("a", "h", "human"), SeatRecord("b", "h2", "human"))
    record = RoomRecord("r1", 3, options.to_dict(), seats, state.to_dict(), "s", "c", 0, 0,
                        {"turn_seconds": 30}, {"0": 100.0, "1": 100.0})
    # Seat 1 discards: seat 0's discard clock keeps running (same task, had work before).
    after, _ = engine.apply(state, 1, {"type": "discard", "cards": state.hands[1][:2]})
    p = plan(record, after, [], now=110.0, answer_window=15, bot_delay=1,
             turn_seconds=30, before=state, actor=1)
    assert p.clock == {"0": 100.0}
    assert f"{TURN_CLOCK}|1" in p.clear
    # Seat 0 discards too: the play starts and the pone's clock starts now.
    played, _ = engine.apply(after, 0, {"type": "discard", "cards": after.hands[0][:2]})
    record2 = record.evolve(clock=p.clock)
    p2 = plan(record2, played, [], now=120.0, answer_window=15, bot_delay=1,
              turn_seconds=30, before=after, actor=0)
    assert p2.clock == {str(played.turn): 150.0}
