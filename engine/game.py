"""A game as a state plus actions: :func:`new_game`, :func:`apply`, :func:`legal_actions`.

Everything automatic (the cut, the deal, the starter and his heels, go, the count reset,
last card, the show without Muggins, the next deal) happens inside the call that makes it
due, and each step emits plain-data events (docs/rules.md, "Events").
"""

from __future__ import annotations

from collections.abc import Callable

from . import match as matches
from . import rng
from .deal import check_deck, cut_for_dealer, discard, discard_options, start_deal
from .errors import BAD_ACTION, BAD_SEAT, GAME_OVER, SYSTEM_ONLY, WRONG_PHASE, RulesError
from .options import GameOptions
from .play import play_card, playable
from .shapes import Action, Event
from .show import announce, answer, answer_actions, answer_timeout
from .state import GameState


def _start_game(
    state: GameState, events: list[Event], first_dealer: int | None, reason: str = "given"
) -> None:
    """Reset scores, choose the first dealer (given, or by the cut) and deal."""
    opts = state.options
    state.scores = [0] * opts.sides
    state.previous_scores = [0] * opts.sides
    state.deal_number = 0
    state.result = None
    state.last_show = []
    events.append(
        {
            "type": "game_start", "options": opts.effective().to_dict(),
            "players": opts.players, "sides": [opts.side_of(s) for s in range(opts.players)],
            "game_number": state.game_number,
        }
    )
    events.append(
        {
            "type": "game_commitment", "game_number": state.game_number,
            "commitment": rng.commitment(rng.game_seed(state.seed, state.game_number)),
        }
    )
    if first_dealer is None:
        dealer, rounds = cut_for_dealer(state.seed, state.game_number, list(range(opts.players)))
        reason = "cut"
    else:
        dealer, rounds = first_dealer, []
    state.dealer = dealer
    events.append({"type": "cut_for_deal", "cuts": rounds, "dealer": dealer, "reason": reason})
    start_deal(state, events)


def new_game(
    options: GameOptions,
    seed: str | int,
    *,
    first_dealer: int | None = None,
    decks: list[list[str]] | None = None,
    match: int = 1,
) -> tuple[GameState, list[Event]]:
    """Start a game: the cut for first deal (docs/rules.md §2.1), the first deal, ``discard`` phase.

    Args:
        options: the :class:`GameOptions`.
        seed: the secret seed (str or int; 128 random bits from the server in production).
            Every shuffle and cut derives from it (see :mod:`engine.rng`).
        first_dealer: skip the cut and let this seat deal first (tests, replays).
        decks: stacked packs (each 52 card texts, top first, e.g. from :func:`deck_for`)
            used by the successive deals, in order, instead of the seeded shuffle; deals after
            the list is used up (also in rematches) are shuffled from the seed.
        match: best of 1 (a single game: ``state.match`` is None), 3, 5 or 7 games, scored
            in game points (docs/rules.md §8, :mod:`engine.match`); this is the match's
            first game.

    Returns:
        ``(state, events)``: events ``game_start``, ``cut_for_deal``, ``deal``.

    Raises:
        ValueError: options not a :class:`GameOptions`, a bad seed, a bad ``first_dealer``,
            a stacked deck that is not the 52 cards, or ``match`` not 1, 3, 5 or 7.
    """
    if not isinstance(options, GameOptions):
        raise ValueError("options must be a GameOptions")
    rng.check_seed(seed)
    if first_dealer is not None and (
        isinstance(first_dealer, bool)
        or not isinstance(first_dealer, int)
        or not 0 <= first_dealer < options.players
    ):
        raise ValueError(f"first_dealer must be a seat 0..{options.players - 1}")
    stacked = [check_deck(d) for d in decks or []]
    state = GameState(options=options, seed=seed, decks=stacked,
                      match=matches.new_match(match, options.sides))
    events: list[Event] = []
    _start_game(state, events, first_dealer)
    return state, events


def _rematch(state: GameState, seat: int, action: dict, events: list[Event]) -> None:
    """A new game in the same room: game number +1, same options, seed and seats. First
    dealer (docs/rules.md §2.1): with 2 players or 2 sides the loser of the previous game (in
    Lowball the one who reached the target) — in partnerships the losing side's first seat
    clockwise from the previous dealer's left; with 3 or 4 playing alone, a new cut.

    In a match (docs/rules.md §8.4): while it is not over, the rematch is the match's next
    game, its first dealer as above; once it is over, the rematch starts a new match (its
    number + 1), and the new match's first game is cut for, like a room's first game."""
    if state.phase != "game_over":
        raise RulesError(WRONG_PHASE, "a rematch can only start when the game is over")
    result = state.result or {}
    first: int | None = None
    if state.match is not None and state.match["over"]:
        matches.next_match(state)
    elif state.options.sides == 2:
        loser = result["losers"][0]
        n = state.players
        first = next(
            (state.dealer + k) % n
            for k in range(1, n + 1)
            if state.side_of((state.dealer + k) % n) == loser
        )
    state.game_number += 1
    _start_game(state, events, first, "loser_deals")


def _discard(state: GameState, seat: int, action: dict, events: list[Event]) -> None:
    discard(state, seat, action, events)


def _timeout(
    state: GameState, seat: int | None, action: dict, events: list[Event]
) -> None:
    answer_timeout(state, events)


_HANDLERS: dict[str, Callable] = {
    "discard": _discard,
    "play": play_card,
    "announce": announce,
    "answer": answer,
    "answer_timeout": _timeout,
    "rematch": _rematch,
    "forfeit": matches.forfeit,
}

SYSTEM_ACTIONS = frozenset({"answer_timeout", "forfeit"})
"""Actions applied by the server itself, with seat ``None``."""


def apply(
    state: GameState, seat: int | None, action: Action | dict
) -> tuple[GameState, list[Event]]:
    """Apply one action; the input state is never changed.

    Args:
        state: the current state.
        seat: the acting seat (0..n-1), or ``None`` for the system (only ``answer_timeout``
            and ``forfeit``).
        action: a dict with ``"type"`` (``discard``, ``play``, ``announce``, ``answer``,
            ``answer_timeout``, ``rematch``, ``forfeit``) and its fields (docs/rules.md,
            "Actions").

    Returns:
        ``(new_state, events)``: events are plain dicts, unredacted (pass each through
        :func:`engine.redact_event` before sending it to a seat). In a match, the action
        that ends a game also scores it into the match: ``match_score`` (and, when it is
        decided, ``match_over``) follow ``game_over`` (docs/rules.md §8).

    Raises:
        RulesError: the action is not allowed (``.code`` per docs/rules.md, "Errors");
            ``state`` is unchanged.
    """
    if seat is not None and (
        isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < state.players
    ):
        raise RulesError(BAD_SEAT, f"no seat {seat!r} in a {state.players}-player game")
    if not isinstance(action, dict) or not isinstance(action.get("type"), str):
        raise RulesError(BAD_ACTION, 'an action is a dict with a "type"')
    kind = action["type"]
    handler = _HANDLERS.get(kind)
    if handler is None:
        raise RulesError(BAD_ACTION, f"unknown action type {kind!r}")
    if (seat is None) != (kind in SYSTEM_ACTIONS):
        who = "the system" if seat is None else f"seat {seat}"
        raise RulesError(SYSTEM_ONLY, f"{kind!r} cannot be sent by {who}")
    if state.phase == "game_over" and kind not in ("rematch", "forfeit"):
        raise RulesError(GAME_OVER, "the game is over; only a rematch is accepted")
    new = state.clone()
    events: list[Event] = []
    handler(new, seat, action, events)
    if new.match is not None and new.phase == "game_over" and state.phase != "game_over":
        matches.record_game(new, events)
    return new, events


def legal_actions(state: GameState, seat: int | None) -> list[Action]:
    """Every action ``seat`` may take now (``None``: the system's), ``[]`` if none.

    Discard: every combination of the deal's size; play: every card that fits under 31 on
    the seat's turn; show: ``announce`` 0..29 for the owner, the three calls for each
    opponent still to answer (each carrying the announcement's ``ref``), ``answer_timeout``
    for the system while answers are awaited; game over: ``rematch`` for every seat. The
    system's ``forfeit`` is never listed: it is the server's decision (docs/rules.md §8.5),
    not a move the game asks for.

    Computed once per state and seat (a state is never changed once :func:`apply` has
    returned it; clones start without the cache): the list returned is a fresh list, its
    action dicts are shared and must not be mutated.
    """
    cache = state.__dict__.setdefault("_legal", {})
    found = cache.get(seat)
    if found is None:
        found = cache[seat] = _legal_actions(state, seat)
    return list(found)


def _legal_actions(state: GameState, seat: int | None) -> list[Action]:
    """:func:`legal_actions`, computed."""
    phase = state.phase
    if seat is None:
        pending = state.show_pending
        if phase == "show" and pending and pending["announced"] is not None and pending["awaiting"]:
            return [{"type": "answer_timeout"}]
        return []
    if not 0 <= seat < state.players:
        return []
    if phase == "discard":
        return discard_options(state, seat)
    if phase == "play":
        return [{"type": "play", "card": c} for c in playable(state, seat)]
    if phase == "show":
        pending = state.show_pending
        if pending is None:
            return []
        if pending["announced"] is None:
            if seat == pending["seat"]:
                return [{"type": "announce", "points": p} for p in range(30)]
            return []
        if seat in pending["awaiting"]:
            return answer_actions(pending.get("ref"))
        return []
    if phase == "game_over":
        return [{"type": "rematch"}]
    return []


def has_move(state: GameState, seat: int) -> bool:
    """Whether ``seat`` has something to do now other than ask for a rematch: exactly
    ``any(a["type"] != "rematch" for a in legal_actions(state, seat))``, without building
    the actions (the server asks this of every seat after every change)."""
    cached = state.__dict__.get("_legal", {}).get(seat)
    if cached is not None:
        return any(a["type"] != "rematch" for a in cached)
    if not 0 <= seat < state.players:
        return False
    phase = state.phase
    if phase == "discard":
        return not state.discards[seat]
    if phase == "play":
        return bool(playable(state, seat))
    if phase == "show":
        pending = state.show_pending
        if pending is None:
            return False
        if pending["announced"] is None:
            return seat == pending["seat"]
        return seat in pending["awaiting"]
    return False
