"""What a seat (or a spectator) may see: :func:`view` for the state, :func:`redact_event`
for events. One rule for both: other seats' hands before the show, others' discards, the
crib before it is counted (or pending under Muggins), the pack, the 3-player crib card and
the seed are never shown.

Events are redacted by an explicit table, default-deny (:data:`EVENT_REDACTIONS`): each
event type lists the fields every seat sees and the fields only their owner sees; a field
the table does not list is dropped, and an event type it does not know is reduced to its
``type``. ``protocol.events`` adds the server's own event types to the same table form.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .game import legal_actions
from .shapes import Event, View
from .state import GameState, plain_copy


def _turn(state: GameState) -> int | None:
    if state.phase == "play":
        return state.turn
    if state.phase == "show" and state.show_pending and state.show_pending["announced"] is None:
        return state.show_pending["seat"]
    return None


def view(
    state: GameState, seat: int | None, since: tuple[GameState, View] | None = None
) -> View:
    """The state as ``seat`` may see it (``None``: a spectator), as plain data.

    Shape and fields: :class:`engine.shapes.View`, docs/rules.md, "The view". ``legal`` is
    exactly ``legal_actions(state, seat)`` for a seat and ``[]`` for a spectator. ``match``
    (public, :class:`engine.shapes.Match`) is there only when the state has a match. Safe to
    mutate (a fresh copy) when ``since`` is not given.

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
    out: View = {
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
        "legal": legal_actions(state, seat) if mine else [],
    }
    if state.match is not None:
        # The match is replaced, never changed in place (engine.match): same dict, same copy.
        reuse = old is not None and state.match is before.match and "match" in old
        out["match"] = old["match"] if reuse else plain_copy(state.match)
    if old is not None:
        # Parts equal to the earlier view's are that view's very objects, so that a diff of
        # the two skips them by identity (one comparison here instead of one there).
        for key in _REBUILT:
            if out[key] == old[key]:  # type: ignore[literal-required]
                out[key] = old[key]  # type: ignore[literal-required]
        show, old_show = out["show"], old["show"]
        if (show["counted"] is old_show["counted"] and show["pending"] == old_show["pending"]
                and show["hands"] == old_show["hands"]):
            out["show"] = old_show
    return out


_REBUILT = ("scores", "previous_scores", "hand", "kept", "my_discards", "hand_sizes",
            "discarded", "go", "legal")
"""View fields built anew from the state each time (lists of one type of item each, so
``==`` is equality as JSON sees it)."""


def _records(entries: list, before: list, before_copy: list) -> list:
    """``plain_copy(entries)``, reusing ``before_copy`` (the copy of ``before``) when
    ``entries`` starts with the very records of ``before``."""
    n = len(before)
    if len(entries) < n or any(a is not b for a, b in zip(entries, before, strict=False)):
        return plain_copy(entries)
    if len(entries) == n:
        return before_copy
    return before_copy + [plain_copy(e) for e in entries[n:]]


@dataclass(frozen=True)
class EventRedaction:
    """What each seat may see of one event type (a row of :data:`EVENT_REDACTIONS`).

    Attributes:
        public: fields every seat and spectator sees as they are (``type`` included).
        own: fields only the seat named by ``owner`` sees; every other seat and a
            spectator get ``None`` in their place. A dotted path (``"action.cards"``)
            names a field inside an object field; it is hidden only where it is present.
        owner: the field holding the owning seat.
        per_seat: fields holding ``{seat (as text): value}``: each seat keeps only its own
            key, a spectator gets ``{}``.

    A field listed nowhere is dropped for everyone (default-deny).
    """

    public: frozenset[str]
    own: frozenset[str] = frozenset()
    owner: str = "seat"
    per_seat: frozenset[str] = frozenset()
    _fields: frozenset[str] = field(init=False, repr=False, compare=False)
    _own_paths: tuple[tuple[str, ...], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        paths = tuple(tuple(path.split(".")) for path in sorted(self.own))
        names = self.public | self.per_seat | {p[0] for p in paths}
        object.__setattr__(self, "_fields", frozenset(names))
        object.__setattr__(self, "_own_paths", paths)

    def fields(self) -> frozenset[str]:
        """Every top-level field the row lets through (to someone)."""
        return self._fields


def _public(*fields: str) -> EventRedaction:
    return EventRedaction(public=frozenset(("type", *fields)))


EVENT_REDACTIONS: Mapping[str, EventRedaction] = {
    "game_start": _public("options", "players", "sides", "game_number"),
    "game_commitment": _public("game_number", "commitment"),
    "cut_for_deal": _public("cuts", "dealer", "reason"),
    "deal_commitment": _public("game_number", "deal_number", "commitment"),
    "deal": EventRedaction(
        public=frozenset(("type", "deal_number", "dealer", "crib_size")),
        per_seat=frozenset(("hands",)),
    ),
    "discard": EventRedaction(
        public=frozenset(("type", "seat", "count")), own=frozenset(("cards",))
    ),
    "starter": _public("card", "dealer"),
    "peg": _public(
        "seat", "side", "points", "source", "items", "score_before", "score_after"
    ),
    "play": _public("seat", "card", "count", "pile"),
    "go": _public("seat"),
    "count_reset": _public("next"),
    "show_hand": _public("seat", "kind", "cards", "starter", "total", "items"),
    "announce": _public("seat", "kind", "points"),
    "answer": _public("seat", "call"),
    "muggins_result": _public(
        "owner", "kind", "announced", "true_count", "call", "caller", "correct",
        "owner_pegs", "caller_pegs", "penalty",
    ),
    "backup": _public("seat", "side", "kind", "holes", "score_before", "score_after"),
    "game_over": _public(
        "winner", "winner_seats", "draw", "losers", "loser_seats", "skunks", "scores",
        "reason", "reached_by", "lowball",
    ),
    "match_score": _public(
        "best_of", "number", "needed", "games", "wins", "points", "spread", "over",
        "winner", "reason", "forfeited",
    ),
    "match_over": _public("winner", "winner_seats", "wins", "points", "spread", "reason"),
}
"""Per engine event type, what each seat may see (docs/rules.md, "Events"): the deal's
hands and a discard's cards are their owner's only; everything else is public (the
match's events too)."""


def _drop_own(out: dict[str, Any], paths: tuple[tuple[str, ...], ...]) -> dict[str, Any]:
    """``out`` with each owner-only path set to None, copying only the dicts on the way
    (the rest stays shared)."""
    for *parents, last in paths:
        node: Any = out
        chain = [out]
        for name in parents:
            node = node.get(name) if isinstance(node, dict) else None
            chain.append(node)
        if not isinstance(node, dict) or last not in node:
            continue
        # Copy the dicts along the path, deepest first, so nothing shared is changed.
        child: Any = {**node, last: None}
        for parent, name in zip(reversed(chain[:-1]), reversed(parents), strict=True):
            child = {**parent, name: child}
        out = child if parents else {**out, last: None}
    return out


def redact_event(
    event: Event | Mapping[str, Any],
    seat: int | None,
    table: Mapping[str, EventRedaction] = EVENT_REDACTIONS,
    *,
    copy: bool = True,
) -> dict[str, Any]:
    """``event`` as ``seat`` may see it (``None``: a spectator); a fresh copy, unless
    ``copy`` is False: then the result shares every value it does not redact with
    ``event`` (and is ``event`` itself when nothing is redacted), and neither may be
    mutated — what a server that only encodes events wants.

    Default-deny, by ``table`` (:data:`EVENT_REDACTIONS` unless given, e.g. with the
    server's events added by ``protocol.events``): ``deal``: ``hands`` keeps only the
    seat's own hand (``{}`` for a spectator); ``discard``: ``cards`` is ``None`` except for
    the discarder; the other engine events are public. A field the table does not list
    for the event's type is dropped. An event whose ``type`` is not in the table comes
    back as ``{"type": <its type>}`` only: nothing it carries can leak, and a client,
    which must ignore event types it does not know, loses nothing it could use (the
    contract tests fail on such an event, so it never ships unnoticed).
    """
    kind = event.get("type")
    rule = table.get(kind) if isinstance(kind, str) else None
    if rule is None:
        return {"type": kind}
    allowed = rule._fields
    if not copy:
        if not rule.per_seat and not rule.own and allowed.issuperset(event):
            return event  # type: ignore[return-value]
        out = {key: value for key, value in event.items() if key in allowed}
        for key in rule.per_seat:
            values = out.get(key)
            if isinstance(values, dict):
                mine = str(seat) if seat is not None else None
                out[key] = {mine: values[mine]} if mine in values else {}
        if rule.own and (seat is None or event.get(rule.owner) != seat):
            out = _drop_own(out, rule._own_paths)
        return out
    out = {key: plain_copy(value) for key, value in event.items() if key in allowed}
    if rule.per_seat:
        mine = str(seat) if seat is not None else None
        for key in rule.per_seat:
            values = out.get(key)
            if isinstance(values, dict):
                out[key] = {mine: values[mine]} if mine in values else {}
    if rule.own and (seat is None or event.get(rule.owner) != seat):
        for *parents, last in rule._own_paths:
            node: Any = out
            for name in parents:
                node = node.get(name) if isinstance(node, dict) else None
            if isinstance(node, dict) and last in node:
                node[last] = None
    return out
