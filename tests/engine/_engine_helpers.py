"""Shared helpers for the engine tests: stacked games and quick ways to move them along."""

from __future__ import annotations

import engine
from engine import GameOptions, GameState


def stacked(
    options: GameOptions | None = None,
    dealer: int = 0,
    deals: list[dict] | None = None,
    scores: list[int] | None = None,
    seed: str | int = "test",
) -> tuple[GameState, list[dict]]:
    """A new game whose deals are stacked with :func:`engine.deck_for`.

    Each entry of ``deals`` is ``deck_for``'s keyword arguments (``hands``, ``crib_card``,
    ``starter``); the dealer of deal ``i`` is ``dealer + i`` (the deal passes left).
    ``scores`` overrides the starting scores (per side).
    """
    options = options or GameOptions()
    decks = [
        engine.deck_for(options, (dealer + i) % options.players, **d)
        for i, d in enumerate(deals or [])
    ]
    state, events = engine.new_game(options, seed, first_dealer=dealer, decks=decks)
    if scores is not None:
        state.scores = list(scores)
        state.previous_scores = list(scores)
    return state, events


def discard_all(state: GameState, discards: dict[int, list[str]]) -> tuple[GameState, list]:
    """Every seat lays away its cards, in seat order; returns the state and all events."""
    events: list = []
    for seat in sorted(discards):
        state, ev = engine.apply(state, seat, {"type": "discard", "cards": discards[seat]})
        events += ev
    return state, events


def play_cards(state: GameState, cards: list[str]) -> tuple[GameState, list]:
    """Lay ``cards`` in order, each by the seat whose turn it is."""
    events: list = []
    for card in cards:
        assert state.phase == "play", (state.phase, card)
        state, ev = engine.apply(state, state.turn, {"type": "play", "card": card})
        events += ev
    return state, events


def of_type(events: list[dict], kind: str) -> list[dict]:
    """The events of one type."""
    return [e for e in events if e["type"] == kind]


def pegs(events: list[dict]) -> list[tuple[int, int, str]]:
    """``(seat, points, source)`` of every peg event."""
    return [(e["seat"], e["points"], e["source"]) for e in events if e["type"] == "peg"]
