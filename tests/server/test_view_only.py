"""Computer seats decide from the seat's view only (issue 4).

The server calls the decision function in one place (``server.computer_seats.ask``). Here it
is replaced by a spy, in a real server on Redis, for whole games whose room seed — the one
secret every hidden card derives from — is a poison marker. The spy checks at the call
boundary that it gets exactly ``(view, legal, level, seed=...)``, that everything reachable
from those arguments is plain data (no state, record, service or store object), and that the
poison is nowhere in them; after the game the room's log is replayed with the engine and
every call's arguments must equal ``engine.view(state, seat)`` and
``engine.legal_actions(state, seat)`` of one version of the game.

(What the spy cannot rule out is Python-level introspection such as walking the caller's
stack frame: the boundary is one of data, as for a human's client, not a sandbox.)
"""

from __future__ import annotations

import ast
import asyncio
import copy
import gc
import json
import secrets
import threading
from pathlib import Path
from typing import Any

import pytest
from crib_wire import ROOT

import engine
from engine.computer import decide as real_decide
from protocol.client import Client

PLAIN = (dict, list, str, int, float, bool, type(None))


def reachable(*roots: Any) -> list[Any]:
    """Every object reachable from ``roots`` through references (gc referents)."""
    seen: dict[int, Any] = {}
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen[id(obj)] = obj
        if isinstance(obj, dict | list):
            stack.extend(gc.get_referents(obj))
    return list(seen.values())


class Spy:
    """Stands in for ``engine.computer.decide``; checks and records every call."""

    def __init__(self, poison: str) -> None:
        self.poison = poison
        self.calls: list[tuple[dict, list, str]] = []
        self.failures: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any] | None:
        try:
            assert len(args) == 3, f"positional arguments: {len(args)}"
            assert set(kwargs) == {"seed"}, f"keyword arguments: {sorted(kwargs)}"
            view, legal, level = args
            assert level in ("easy", "standard")
            assert isinstance(view, dict) and isinstance(legal, list)
            objects = reachable(view, legal, level, kwargs["seed"])
            odd = {type(o).__name__ for o in objects if not isinstance(o, PLAIN)}
            assert not odd, f"non-plain objects reachable: {odd}"
            text = json.dumps([view, legal, level, kwargs["seed"]])
            assert self.poison not in text, "the secret seed reached the decision function"
            assert view["seat"] is not None and view["hand"] is not None
            with self._lock:
                self.calls.append((copy.deepcopy(view), copy.deepcopy(legal), level))
        except AssertionError as exc:
            with self._lock:
                self.failures.append(str(exc))
            raise
        return real_decide(*args, **kwargs)


def replayed_states(server, room: str) -> list[engine.GameState]:
    """Every state the room's game went through, rebuilt from its log and its seed."""
    store = server.app.state.services.store

    async def read():
        record, _ = await store.load(room)
        return record, await store.log(room)

    record, log = asyncio.run_coroutine_threadsafe(read(), server.loop).result(10)
    states: list[engine.GameState] = []
    state = None
    for entry in log:
        if state is None and any(e.get("type") == "game_start" for e in entry.get("events", [])):
            state, _ = engine.new_game(engine.GameOptions.from_dict(record.options), record.seed)
            states.append(state)
        elif "action" in entry:
            state, _ = engine.apply(state, entry["seat"], entry["action"])
            states.append(state)
    return states


@pytest.mark.parametrize("options,levels", [
    ({"players": 2, "target": 61}, ["standard", "easy"]),
    ({"players": 3, "target": 61, "muggins": True}, ["standard", "easy", "standard"]),
], ids=["2p", "3p-muggins"])
async def test_decisions_see_only_the_view(make_server, options, levels):
    poison = f"POISON-{secrets.token_hex(8)}"
    spy = Spy(poison)
    server = make_server(
        bot_delay_seconds=0,
        app_kwargs={"decide": spy, "seed_factory": lambda: poison},
    )
    host = await Client.connect(server.ws, name="watcher")
    try:
        created = await host.request(
            {"type": "create_room", "options": options,
             "computers": {str(i): lv for i, lv in enumerate(levels)}},
            lambda f: f["type"] in ("room_created", "error"),
        )
        await host.join(created["room"], None)
        await host.wait_until(lambda c: c.status == "game_over", 60)
        assert not spy.failures, spy.failures
        assert len(spy.calls) > 30
        # Every call's arguments are exactly a seat's view and legal actions at some
        # version of the game (replayed from the log with the engine).
        states = replayed_states(server, created["room"])
        known: dict[str, list[Any]] = {}
        for state in states:
            for seat in range(options["players"]):
                view = engine.view(state, seat)
                known.setdefault(json.dumps(view, sort_keys=True), []).append(
                    engine.legal_actions(state, seat))
        kinds = set()
        for view, legal, _ in spy.calls:
            key = json.dumps(view, sort_keys=True)
            assert key in known, "a decision was given something that is not a seat's view"
            assert legal in known[key]
            kinds.update(a["type"] for a in legal)
        assert {"discard", "play"} <= kinds
        if options.get("muggins"):
            assert {"announce", "answer"} <= kinds
    finally:
        await host.close()


def test_the_server_calls_decide_in_one_place_only():
    """Static check: in ``server/``, only ``computer_seats.ask`` calls a ``decide``."""
    calls = []
    for path in sorted((ROOT / "server").rglob("*.py")):
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
        for func in ast.walk(tree):
            if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(func):
                if isinstance(node, ast.Call):
                    f = node.func
                    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                    if "decide" in name:
                        calls.append((path.name, func.name, name))
    assert calls == [("computer_seats.py", "ask", "decide")], calls


def test_seat_knowledge_of_a_poisoned_state():
    """``seat_knowledge`` hands over the view and legal actions only, freshly built: no
    card of another seat's hand, the pack or the crib, and not the seed."""
    from server.computer_seats import seat_knowledge

    poison = f"POISON-{secrets.token_hex(8)}"
    state, _ = engine.new_game(engine.GameOptions(players=2), poison)
    data = state.to_dict()
    view, legal = seat_knowledge(data, 0)
    assert view == engine.view(state, 0) and legal == engine.legal_actions(state, 0)
    text = json.dumps([view, legal])
    assert poison not in text
    others = set(state.hands[1]) | set(state.pack) | set(state.crib)
    assert not any(card in text for card in others)
    # Fresh objects: changing them cannot change the stored state.
    view["hand"].clear()
    legal.clear()
    assert data == state.to_dict()
