"""``engine.computer.legal_from_view`` agrees with ``engine.legal_actions`` at every step of
random games of every table and option (what ``cribbage-bot`` relies on)."""

from __future__ import annotations

import json
import random

import pytest

import engine
from engine import GameOptions
from engine.computer import legal_from_view

TABLES = [
    GameOptions(players=2, target=61),
    GameOptions(players=2, target=61, muggins=True, backup10=True),
    GameOptions(players=3, target=61, muggins=True),
    GameOptions(players=3, target=61, lowball=True),
    GameOptions(players=4, target=61),
    GameOptions(players=4, partnerships=True, target=61, muggins=True),
]


@pytest.mark.parametrize("options", TABLES, ids=lambda o: json.dumps(o.to_dict()))
def test_legal_from_view_matches_the_engine(options: GameOptions) -> None:
    rng = random.Random(str(options.to_dict()))
    state, _ = engine.new_game(options, seed=rng.randrange(1 << 30))
    steps = 0
    while state.phase != "game_over" and steps < 3000:
        movers = []
        for seat in range(options.players):
            # The view goes through JSON, as it would over the wire.
            view = json.loads(json.dumps(engine.view(state, seat)))
            expected = engine.legal_actions(state, seat)
            assert legal_from_view(view) == expected, (seat, view["phase"])
            if expected:
                movers.append((seat, expected))
        assert legal_from_view(engine.view(state, None)) == []
        if not movers:
            state, _ = engine.apply(state, None, {"type": "answer_timeout"})
            continue
        seat, legal = rng.choice(movers)
        state, _ = engine.apply(state, seat, rng.choice(legal))
        steps += 1
    assert state.phase == "game_over"
    for seat in range(options.players):
        assert legal_from_view(engine.view(state, seat)) == [{"type": "rematch"}]


def test_nothing_before_the_game() -> None:
    assert legal_from_view(None) == []
