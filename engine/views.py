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


def view(
    state: GameState, seat: int | None, since: tuple[GameState, dict] | None = None
) -> dict:
    """The state as ``seat`` may see it (``None``: a spectator), as plain data.

    Shape and fields: docs/rules.md, "The view". Safe to mutate (a fresh copy) when
    ``since`` is not given.

    Args:
        state: the game.
        seat: the seat looking, or None for a spectator.
        since: optionally ``(before, before_view)``: an earlier state of this game and
            ``view(before, seat)``, left unmutated. The result is equal to
            ``view(state, seat)`` but reuses the parts of ``before_view`` that come from
            records ``state`` still shares with ``before`` (``GameState.clone`` shares the
            options, ``last_show``, ``result`` and the ``pile``/``played``/``show_counted``
            entries, which the engine only ever replaces). This saves copying them and
            lets a diff of the two views skip them by identity; the two views then share
            objects, so neither may be mutated.

    Raises:
        ValueError: ``seat`` is not ``None`` nor a seat of this game.
    """
    n = state.players
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                             or not 0 <= seat < n):
        raise ValueError(f"no seat {seat!r} in a {n}-player game")
    mine = seat is not None
    opts = state.options
    before, old = since if since is not None else (None, None)
    if before is None or old is None or old.get("seat", -1) != seat:
        before = old = None
    if old is not None and opts is before.options:
        options, sides = old["options"], old["sides"]
    else:
        options, sides = opts.effective().to_dict(), [opts.side_of(s) for s in range(n)]
    if old is None:
        pile, played = plain_copy(state.pile), plain_copy(state.played)
        counted = plain_copy(state.show_counted)
        last_show, result = plain_copy(state.last_show), plain_copy(state.result)
    else:
        pile = _records(state.pile, before.pile, old["pile"])
        played = _records(state.played, before.played, old["played"])
        counted = _records(state.show_counted, before.show_counted, old["show"]["counted"])
        last_show = (old["last_show"] if state.last_show is before.last_show
                     else plain_copy(state.last_show))
        result = old["result"] if state.result is before.result else plain_copy(state.result)
    return {
        "seat": seat,
        "options": options,
        "players": n,
        "sides": sides,
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
        "pile": pile,
        "played": played,
        "go": list(state.go),
        "last_player": state.last_player,
        "show": {
            "counted": counted,
            "pending": plain_copy(state.show_pending),
            "hands": {str(s): list(state.kept[s]) for s in state.revealed},
        },
        "last_show": last_show,
        "result": result,
    }


def _records(entries: list, before: list, before_copy: list) -> list:
    """``plain_copy(entries)``, reusing ``before_copy`` (the copy of ``before``) when
    ``entries`` starts with the very records of ``before``."""
    n = len(before)
    if len(entries) < n or any(a is not b for a, b in zip(entries, before, strict=False)):
        return plain_copy(entries)
    if len(entries) == n:
        return before_copy
    return before_copy + [plain_copy(e) for e in entries[n:]]


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
