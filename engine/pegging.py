"""Moving pegs: points, Back-up 10 moves and the end of the game.

Every change of a score goes through :func:`peg` or :func:`backup`, which emit the events;
:func:`peg` ends the game the instant a target is reached (docs/rules.md §4.3) and
:func:`finish` settles the outcome (winner, draw, losers, skunks: docs/rules.md §4.4, §7).
"""

from __future__ import annotations

from .shapes import Event, GameResult, PegSource, ScoreItem, ShowKind
from .state import GameState, plain_copy


def peg(
    state: GameState,
    events: list[Event],
    seat: int,
    points: int,
    source: PegSource,
    items: list[ScoreItem],
) -> bool:
    """Peg ``points`` holes to ``seat``'s side and emit a ``peg`` event.

    The score stops at the target, and reaching it ends the game at once (docs/rules.md §4.3):
    the game phase becomes ``game_over`` and a ``game_over`` event follows.

    Args:
        state: the (cloned) state to change.
        events: the event list to append to.
        seat: the seat that scores (its side pegs; docs/rules.md §1.2).
        points: holes, > 0 (a 0 is ignored: nothing is emitted).
        source: ``his_heels | play | go | last_card | hand | crib | muggins | penalty``.
        items: the breakdown, plain dicts ``{"kind", "cards", "points"}``.

    Returns:
        True if the game is over.
    """
    if points <= 0:
        return False
    side = state.side_of(seat)
    before = state.scores[side]
    after = min(before + points, state.options.target)
    state.previous_scores[side] = before
    state.scores[side] = after
    events.append(
        {
            "type": "peg", "seat": seat, "side": side, "points": points, "source": source,
            "items": items, "score_before": before, "score_after": after,
        }
    )
    if after >= state.options.target:
        finish(state, events, side)
        return True
    return False


def backup(state: GameState, events: list[Event], seat: int, kind: ShowKind) -> None:
    """Back-up 10: move ``seat``'s side back 10 holes, never below 0 (docs/rules.md §6.1, §6.2).

    Emits a ``backup`` event with the holes actually moved (0..10). Never ends the game
    (docs/rules.md §6.3).
    """
    side = state.side_of(seat)
    before = state.scores[side]
    after = max(0, before - 10)
    state.previous_scores[side] = before
    state.scores[side] = after
    events.append(
        {
            "type": "backup", "seat": seat, "side": side, "kind": kind,
            "holes": before - after, "score_before": before, "score_after": after,
        }
    )


def skunk_level(score: int, target: int) -> str:
    """A loser's skunk level (docs/rules.md §4.4): to 121, ``"double"`` at 60 or less,
    ``"skunk"`` at 90 or less; to 61, ``"skunk"`` at 30 or less; else ``"none"``."""
    if target == 121:
        if score <= 60:
            return "double"
        return "skunk" if score <= 90 else "none"
    return "skunk" if score <= 30 else "none"


def finish(state: GameState, events: list[Event], reached: int) -> None:
    """End the game: side ``reached`` has just reached the target (docs/rules.md §4.3).

    Normal play: ``reached`` wins; every other side loses and is judged for skunks on its
    own (§4.4). Lowball (§7): ``reached`` loses; the fewest points among the others wins;
    with 3 or 4 playing alone a shared fewest is a draw, and then the losers are the sides
    not sharing it; no skunks (every loser ``"none"``).

    Sets ``state.phase = "game_over"``, ``state.result``, clears the turn, and emits
    ``game_over``.
    """
    opts = state.options
    sides = list(range(opts.sides))
    others = [s for s in sides if s != reached]
    if opts.lowball:
        low = min(state.scores[s] for s in others)
        fewest = [s for s in others if state.scores[s] == low]
        if len(fewest) == 1:
            winner: int | None = fewest[0]
            losers = [s for s in sides if s != winner]
        else:
            winner = None
            losers = [s for s in sides if s not in fewest]
        skunks = {str(s): "none" for s in losers}
    else:
        winner = reached
        losers = others
        skunks = {str(s): skunk_level(state.scores[s], opts.target) for s in losers}
    result: GameResult = {
        "winner": winner,
        "winner_seats": opts.seats_of(winner) if winner is not None else [],
        "draw": winner is None,
        "losers": losers,
        "loser_seats": [seat for s in losers for seat in opts.seats_of(s)],
        "skunks": skunks,
        "scores": list(state.scores),
        "reason": "target_reached",
        "reached_by": reached,
        "lowball": opts.lowball,
    }
    state.phase = "game_over"
    state.turn = None
    state.result = result
    events.append({"type": "game_over", **plain_copy(result)})
