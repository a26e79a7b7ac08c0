"""The play (docs/rules.md §3): laying cards, go, 31, the count reset and last card."""

from __future__ import annotations

from .errors import (
    BAD_ACTION,
    BAD_CARD,
    CARD_NOT_IN_HAND,
    COUNT_OVER_31,
    NOT_YOUR_TURN,
    WRONG_PHASE,
    RulesError,
)
from .pegging import peg
from .scoring import score_pegging
from .shapes import Event
from .show import begin_show
from .state import CARDS, VALUES, GameState, canonical


def can_play(state: GameState, seat: int) -> bool:
    """Whether ``seat`` holds a card that keeps the count at 31 or under (docs/rules.md §3.2)."""
    room = 31 - state.count
    return any(VALUES[c] <= room for c in state.hands[seat])


def playable(state: GameState, seat: int) -> list[str]:
    """The cards ``seat`` may lay now: its turn in the play, count stays <= 31."""
    if state.phase != "play" or state.turn != seat:
        return []
    room = 31 - state.count
    return [c for c in state.hands[seat] if VALUES[c] <= room]


def play_card(state: GameState, seat: int, action: dict, events: list[Event]) -> None:
    """``seat`` lays ``action["card"]``; pegs what it makes (docs/rules.md §3.5), then moves the
    play on: go, 31, the count reset, last card, and the show when all cards are played.

    Raises:
        RulesError: ``wrong_phase``, ``not_your_turn``, ``bad_action`` (no card text),
            ``bad_card``, ``card_not_in_hand``, ``count_over_31``.
    """
    if state.phase != "play":
        raise RulesError(WRONG_PHASE, f"cannot play a card in the {state.phase} phase")
    if state.turn != seat:
        raise RulesError(NOT_YOUR_TURN, f"it is seat {state.turn}'s turn to play")
    raw = action.get("card")
    if not isinstance(raw, str):
        raise RulesError(BAD_ACTION, 'a play needs "card": a card text')
    try:
        card = canonical(raw)
    except ValueError as exc:
        raise RulesError(BAD_CARD, str(exc)) from None
    hand = state.hands[seat]
    if card not in hand:
        raise RulesError(CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
    if state.count + VALUES[card] > 31:
        raise RulesError(
            COUNT_OVER_31, f"{card} would take the count from {state.count} past 31"
        )
    hand.remove(card)
    entry = {"seat": seat, "card": card}
    state.pile.append(entry)
    state.played.append(dict(entry))
    state.count += VALUES[card]
    state.last_player = seat
    events.append(
        {
            "type": "play", "seat": seat, "card": card, "count": state.count,
            "pile": [e["card"] for e in state.pile],
        }
    )
    score = score_pegging([CARDS[e["card"]] for e in state.pile])
    if score.total and peg(
        state, events, seat, score.total, "play", [i.to_dict() for i in score.items]
    ):
        return
    advance(state, events)


def _holding(state: GameState) -> list[int]:
    return [s for s in range(state.players) if state.hands[s]]


def advance(state: GameState, events: list[Event]) -> None:
    """After a card: find who plays next, declaring go for every seat that holds cards but
    cannot play (docs/rules.md §3.2, §3.3); when nobody can play, peg the go (1) to the player
    who laid the last card unless the count is 31 (already pegged 2), reset the count, and
    let the next seat clockwise with cards lead (§3.4). The last card of the play pegs 1
    unless it made 31 (§3.6); then the show begins."""
    n = state.players
    last = state.last_player
    assert last is not None
    if not _holding(state):
        if state.count != 31:
            card = state.pile[-1]["card"]
            item = {"kind": "last_card", "cards": [card], "points": 1}
            if peg(state, events, last, 1, "last_card", [item]):
                return
        _reset(state, events, None)
        begin_show(state, events)
        return
    if state.count < 31:
        for k in range(1, n + 1):
            seat = (last + k) % n
            if not state.hands[seat]:
                continue
            if can_play(state, seat):
                state.turn = seat
                return
            if not state.go[seat] and seat != last:
                state.go[seat] = True
                events.append({"type": "go", "seat": seat})
        # Nobody can play: the last player pegs 1 for the go (docs/rules.md §3.3).
        item = {"kind": "go", "cards": [], "points": 1}
        if peg(state, events, last, 1, "go", [item]):
            return
    holders = set(_holding(state))
    leader = next((last + k) % n for k in range(1, n + 1) if (last + k) % n in holders)
    _reset(state, events, leader)


def _reset(state: GameState, events: list[Event], leader: int | None) -> None:
    state.pile = []
    state.count = 0
    state.go = [False] * state.players
    state.turn = leader
    events.append({"type": "count_reset", "next": leader})
