"""The view diff produces RFC 6902 patches that jsonpatch applies exactly."""

from __future__ import annotations

import jsonpatch
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from protocol.patch import apply, diff

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from(["5H", "a/b", "~0", ""]),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.sampled_from(["a", "b", "c/d", "e~f", "0"]), inner, max_size=4),
    max_leaves=15,
)


@settings(max_examples=300)
@given(json_values, json_values)
def test_diff_then_apply_gives_new(old, new):
    p = diff(old, new)
    out = jsonpatch.apply_patch(old, p, in_place=False)
    assert out == new and type(out) is type(new)
    if old == new and type(old) is type(new):
        assert p == [] or all(op["op"] == "replace" for op in p)


def test_bool_and_int_are_distinct():
    assert diff({"a": 1}, {"a": True}) == [{"op": "replace", "path": "/a", "value": True}]


def test_none_to_view_and_back():
    assert diff(None, {"a": 1}) == [{"op": "replace", "path": "", "value": {"a": 1}}]
    assert apply(None, diff(None, {"a": 1})) == {"a": 1}


def test_views_through_a_game():
    """Patch each seat's view along a real game and land on the same views."""
    import random

    opts = engine.GameOptions(players=3, target=61)
    state, _ = engine.new_game(opts, "patch-test")
    rng = random.Random(0)
    held = {s: engine.view(state, s) for s in range(3)}
    for _ in range(400):
        if state.phase == "game_over":
            break
        seat = next(s for s in range(3) if engine.legal_actions(state, s))
        state, _ = engine.apply(state, seat, rng.choice(engine.legal_actions(state, seat)))
        for s in range(3):
            new = engine.view(state, s)
            held[s] = apply(held[s], diff(held[s], new))
            assert held[s] == new
    assert state.phase == "game_over"
