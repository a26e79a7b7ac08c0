"""What a seat (or a spectator) may see: :func:`view` for the state, :func:`redact_event`
for events. One rule for both: other seats' hands before the show, others' discards, the
crib before it is counted (or pending under Muggins), the pack, the 3-player crib card and
the seed are never shown."""

from __future__ import annotations

from .state import GameState, plain_copy


def _turn(state: GameState) -> int | None:
    if state.phase == "play":
        return state.turn
    if state.phase == "show" and state.show_pending and state.show_pending["announced"] is None:
        return state.show_pending["seat"]
    return None


def view(state: GameState, seat: int | None) -> dict:
    """The state as ``seat`` may see it (``None``: a spectator), as plain data.

    Shape and fields: docs/rules.md, "The view". Safe to mutate (a fresh copy).

    Raises:
        ValueError: ``seat`` is not ``None`` nor a seat of this game.
    """
    n = state.players
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                             or not 0 <= seat < n):
        raise ValueError(f"no seat {seat!r} in a {n}-player game")
    mine = seat is not None
    opts = state.options
    return {
        "seat": seat,
        "options": opts.effective().to_dict(),
        "players": n,
        "sides": [opts.side_of(s) for s in range(n)],
        "phase": state.phase,
        "game_number": state.game_number,
        "games_played": state.game_number - 1,
        "deal_number": state.deal_number,
        "dealer": state.dealer,
        "scores": list(state.scores),
        "previous_scores": list(state.previous_scores),
        "target": opts.target,
        "hand": list(state.hands[seat]) if mine else [],
        "kept": list(state.kept[seat]) if mine else [],
        "my_discards": list(state.discards[seat]) if mine else [],
        "hand_sizes": [len(h) for h in state.hands],
        "discarded": [bool(d) for d in state.discards],
        "crib_size": len(state.crib),
        "starter": state.starter,
        "turn": _turn(state),
        "count": state.count,
        "pile": plain_copy(state.pile),
        "played": plain_copy(state.played),
        "go": list(state.go),
        "last_player": state.last_player,
        "show": {
            "counted": plain_copy(state.show_counted),
            "pending": plain_copy(state.show_pending),
            "hands": {str(s): list(state.kept[s]) for s in state.revealed},
        },
        "last_show": plain_copy(state.last_show),
        "result": plain_copy(state.result),
    }


def redact_event(event: dict, seat: int | None) -> dict:
    """``event`` as ``seat`` may see it (``None``: a spectator); a fresh copy.

    ``deal``: ``hands`` keeps only the seat's own hand (``{}`` for a spectator).
    ``discard``: ``cards`` is ``None`` except for the discarder (``count`` stays).
    Every other event is public and returned unchanged (copied).
    """
    out = plain_copy(event)
    kind = event.get("type")
    if kind == "deal":
        key = str(seat)
        out["hands"] = {key: out["hands"][key]} if seat is not None and key in out["hands"] else {}
    elif kind == "discard" and event.get("seat") != seat:
        out["cards"] = None
    return out
