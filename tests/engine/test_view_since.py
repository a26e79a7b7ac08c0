"""``engine.view(state, seat, since)`` equals ``engine.view(state, seat)`` and shares the
unchanged parts with the earlier view; ``to_dict(copy=False)`` equals ``to_dict()``."""

from __future__ import annotations

import json
import random

import pytest

import engine


@pytest.mark.parametrize("players", [2, 3, 4])
def test_view_since_matches_view(players: int) -> None:
    opts = engine.GameOptions(players=players, target=61, muggins=players == 3)
    state, _ = engine.new_game(opts, f"since-{players}")
    rng = random.Random(players)
    seats = [None, *range(players)]
    held = {s: engine.view(state, s) for s in seats}
    before = state
    shared = 0
    for _ in range(600):
        movers = [s for s in range(players) if engine.legal_actions(state, s)]
        if not movers:
            break
        seat = movers[0]
        legal = engine.legal_actions(state, seat)
        state, _ = engine.apply(state, seat, rng.choice(legal))
        for s in seats:
            fresh = engine.view(state, s)
            since = engine.view(state, s, (before, held[s]))
            assert json.dumps(since) == json.dumps(fresh)
            shared += since["last_show"] is held[s]["last_show"]
            held[s] = since
        before = state
        data = state.to_dict(copy=False)
        assert data == state.to_dict()
        assert engine.GameState.from_dict(json.loads(json.dumps(data))) == state
    assert shared > 0


def test_view_since_ignores_a_view_of_another_seat() -> None:
    state, _ = engine.new_game(engine.GameOptions(players=2), "since-seat")
    other = engine.view(state, 1)
    assert engine.view(state, 0, (state, other)) == engine.view(state, 0)
