"""Replaying an archived game's log through the engine (for checks and statistics).

The archive keeps no room seed (it is never published), but every deal's seed: the packs it
shuffles stack a new game (``engine.new_game(decks=...)``) whose first dealer is the archived
cut's, and every logged action applied in order must give back the archived game — its
events and its final scores. Nothing here does I/O.
"""

from __future__ import annotations

from typing import Any

import engine
from engine import rng


def game_number(entries: list[dict[str, Any]]) -> int:
    """The room's number of the archived game (1, then +1 per rematch and per game of a
    match): its first entry's ``game_start`` event; 1 if it names none."""
    for event in (entries[0].get("events") or ()) if entries else ():
        if event.get("type") == "game_start" and isinstance(event.get("game_number"), int):
            return max(1, event["game_number"])
    return 1


def stacked_start(
    options: dict[str, Any], entries: list[dict[str, Any]], deal_seeds: list[str | None],
    seed: str = "replay", *, number: int | None = None,
) -> tuple[engine.GameState, list[dict[str, Any]]]:
    """The archived game's start: a new game stacked from its deals' seeds, first dealt by
    the archived cut's dealer (``entries[0]``'s ``cut_for_deal``), numbered as the room
    numbered it (``number``, e.g. ``games.game_number``; None: :func:`game_number` of the
    log), so that every view of the replay names the game the seats saw (a computer's
    search is seeded by it).

    Returns:
        ``(state, events)`` of ``engine.new_game``.

    Raises:
        ValueError: the log has no game start, or a deal has no seed.
    """
    dealer = None
    for entry in entries[:1]:
        for event in entry.get("events") or ():
            if event.get("type") == "cut_for_deal":
                dealer = event["dealer"]
    if dealer is None:
        raise ValueError("the log's first entry does not start a game")
    if any(s is None for s in deal_seeds):
        raise ValueError("a deal was not shuffled from a seed")
    decks = [rng.shuffled_pack(bytes.fromhex(s)) for s in deal_seeds]  # type: ignore[arg-type]
    state, events = engine.new_game(engine.GameOptions.from_dict(dict(options)), seed,
                                    first_dealer=dealer, decks=decks)
    state.game_number = number if number is not None else game_number(entries)
    return state, events


def replay(
    options: dict[str, Any], entries: list[dict[str, Any]], deal_seeds: list[str | None]
) -> tuple[engine.GameState, list[dict[str, Any]]]:
    """Apply an archived game's logged actions to a game stacked from its deals' seeds.

    Args:
        options: the game's options (``games.options``).
        entries: its log entries, oldest first (``game_logs.entries``).
        deal_seeds: each deal's seed, hex (``game_deals.seed`` in deal order).

    Returns:
        ``(state, events)``: the state after the last action, and every event the engine
        emitted on the way (the start's included).

    Raises:
        ValueError: the log has no game start, or a deal has no seed.
        engine.RulesError: an action the engine refuses (the log does not match its deals).
    """
    state, events = stacked_start(options, entries, deal_seeds)
    out = list(events)
    for entry in entries[1:]:
        action = entry.get("action")
        if action is None or state.phase == "game_over":
            continue
        state, events = engine.apply(state, entry.get("seat"), action)
        out.extend(events)
    return state, out
