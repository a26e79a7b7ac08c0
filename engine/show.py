"""The show (docs/rules.md §4.1, §4.2), Back-up 10 (§6) and Muggins (§5).

Without Muggins the whole show is counted inside the call that ends the play, then the next
deal follows. With Muggins the game enters the ``show`` phase: for each hand, then the crib,
the owner announces and the opponents answer; the step is settled by :func:`settle`.
"""

from __future__ import annotations

from .deal import start_deal
from .errors import (
    ALREADY_ANNOUNCED,
    ALREADY_ANSWERED,
    BAD_ACTION,
    BAD_POINTS,
    NOT_AN_OPPONENT,
    NOT_YOUR_TURN,
    NOTHING_TO_ANSWER,
    STALE_ANSWER,
    WRONG_PHASE,
    RulesError,
)
from .pegging import backup, peg
from .scoring import score_hand
from .shapes import AnswerAction, Event, SettledBy
from .state import CARDS, GameState

CALLS = ("accept", "muggins", "overcount")


def answer_actions(ref: int | None) -> list[AnswerAction]:
    """The three ``answer`` actions for a pending announcement (docs/rules.md §5.2), each naming
    the announcement's ``ref`` (absent only for a state stored before answers carried one)."""
    if ref is None:
        return [{"type": "answer", "call": c} for c in CALLS]
    return [{"type": "answer", "call": c, "ref": ref} for c in CALLS]
"""An opponent's answers to an announcement (docs/rules.md §5.2)."""


def show_steps(state: GameState) -> list[dict]:
    """The show's order (docs/rules.md §4.1): each seat from the dealer's left clockwise, the
    dealer's hand last, then the crib: ``[{"seat", "kind": "hand" | "crib"}]``."""
    n, dealer = state.players, state.dealer
    steps = [{"seat": (dealer + k) % n, "kind": "hand"} for k in range(1, n + 1)]
    steps.append({"seat": dealer, "kind": "crib"})
    return steps


def _cards(state: GameState, step: dict) -> list[str]:
    return list(state.crib) if step["kind"] == "crib" else list(state.kept[step["seat"]])


def _count(state: GameState, step: dict):
    cards = [CARDS[c] for c in _cards(state, step)]
    return score_hand(cards, CARDS[state.starter], crib=step["kind"] == "crib")


def _show_event(state: GameState, step: dict, score) -> dict:
    return {
        "type": "show_hand", "seat": step["seat"], "kind": step["kind"],
        "cards": _cards(state, step), "starter": state.starter, "total": score.total,
        "items": [i.to_dict() for i in score.items],
    }


def begin_show(state: GameState, events: list[Event]) -> None:
    """Start the show once the play is over: count it all now (no Muggins), or enter the
    ``show`` phase with every kept hand public (Muggins)."""
    steps = show_steps(state)
    if not state.rules.plays_muggins:
        _auto_show(state, events, steps)
        return
    state.phase = "show"
    state.turn = None
    state.revealed = list(range(state.players))
    state.show_order = steps
    _next_step(state, events)


def _auto_show(state: GameState, events: list[Event], steps: list[dict]) -> None:
    for step in steps:
        seat, kind = step["seat"], step["kind"]
        score = _count(state, step)
        event = _show_event(state, step, score)
        events.append(event)
        if kind == "hand":
            state.revealed.append(seat)
        state.show_counted.append(_counted(event, score.total))
        if peg(state, events, seat, score.total, kind, event["items"]):
            return
        if score.total == 0 and state.options.backup10:
            backup(state, events, seat, kind)
    next_deal(state, events)


def _counted(event: dict, pegged: int, **extra) -> dict:
    entry = {k: v for k, v in event.items() if k != "type"}
    entry["items"] = [dict(i, cards=list(i["cards"])) for i in event["items"]]
    entry["cards"] = list(event["cards"])
    entry["pegged"] = pegged
    entry.update(extra)
    return entry


def next_deal(state: GameState, events: list[Event]) -> None:
    """The deal passes to the left (docs/rules.md §2.2) and the next hand is dealt."""
    state.last_show = state.show_counted
    state.show_counted = []
    state.dealer = (state.dealer + 1) % state.players
    start_deal(state, events)


def _next_step(state: GameState, events: list[Event]) -> None:
    if not state.show_order:
        state.show_pending = None
        next_deal(state, events)
        return
    step = state.show_order.pop(0)
    state.show_pending = {
        "seat": step["seat"], "kind": step["kind"], "cards": _cards(state, step),
        "announced": None, "answers": {}, "awaiting": [],
        "ref": announcement_ref(state),
    }


def announcement_ref(state: GameState) -> int:
    """The identity of the show step about to be pending: ``10 * deal_number + i``, where
    ``i`` is the step's place in this deal's show (0 = the first hand, the crib last).

    Unique within a game; an ``answer`` may carry it as ``ref`` so that an answer meant for
    an announcement already settled is refused (``stale_answer``) instead of landing on the
    next one.
    """
    return 10 * state.deal_number + len(state.show_counted)


def opponents(state: GameState, owner: int) -> list[int]:
    """Seats that may answer ``owner``'s announcement: every seat not on the owner's side,
    clockwise from the owner's left (docs/rules.md §5.2: partners never answer each other)."""
    n, side = state.players, state.side_of(owner)
    seats = [(owner + k) % n for k in range(1, n)]
    return [s for s in seats if state.side_of(s) != side]


def _need_show(state: GameState, what: str) -> dict:
    if state.phase != "show" or state.show_pending is None:
        raise RulesError(WRONG_PHASE, f"cannot {what} in the {state.phase} phase")
    return state.show_pending


def announce(state: GameState, seat: int, action: dict, events: list[Event]) -> None:
    """The owner of the pending hand (the dealer for the crib) announces its count
    (docs/rules.md §5.1).

    Raises:
        RulesError: ``wrong_phase``, ``not_your_turn`` (not the owner), ``already_announced``,
            ``bad_points`` (not a whole number 0..29).
    """
    pending = _need_show(state, "announce")
    if seat != pending["seat"]:
        raise RulesError(NOT_YOUR_TURN, f"seat {pending['seat']} announces this {pending['kind']}")
    if pending["announced"] is not None:
        raise RulesError(ALREADY_ANNOUNCED, "this count has already been announced")
    points = action.get("points")
    if not isinstance(points, int) or isinstance(points, bool) or not 0 <= points <= 29:
        raise RulesError(BAD_POINTS, f"announce a whole number from 0 to 29, not {points!r}")
    pending["announced"] = points
    pending["awaiting"] = opponents(state, seat)
    events.append({"type": "announce", "seat": seat, "kind": pending["kind"], "points": points})


def answer(state: GameState, seat: int, action: dict, events: list[Event]) -> None:
    """An opponent answers the pending announcement: ``accept``, ``muggins`` or
    ``overcount`` (docs/rules.md §5.2). The first ``muggins`` or ``overcount``, or the last
    ``accept``, settles the step.

    An answer may carry ``"ref"``: the ``ref`` of the pending announcement it answers
    (``view["show"]["pending"]["ref"]``). When it names another announcement (or none is
    pending any more), the answer is stale: it was meant for an announcement already
    settled, and is refused instead of landing on the next one.

    Raises:
        RulesError: ``stale_answer`` (``ref`` given and not the pending announcement's),
            ``bad_action`` (``ref`` not a whole number, or an unknown call),
            ``wrong_phase``, ``nothing_to_answer`` (not yet announced),
            ``not_an_opponent`` (the owner or a partner), ``already_answered``.
    """
    ref = action.get("ref")
    if ref is not None:
        if not isinstance(ref, int) or isinstance(ref, bool):
            raise RulesError(BAD_ACTION, f"ref must be a whole number, not {ref!r}")
        current = state.show_pending if state.phase == "show" else None
        if current is None or current.get("ref") != ref:
            raise RulesError(
                STALE_ANSWER, f"announcement {ref} is no longer waiting for answers"
            )
    pending = _need_show(state, "answer")
    if pending["announced"] is None:
        raise RulesError(NOTHING_TO_ANSWER, "the count has not been announced yet")
    if state.side_of(seat) == state.side_of(pending["seat"]):
        raise RulesError(
            NOT_AN_OPPONENT, "the owner and partners never answer (docs/rules.md §5.2)"
        )
    if seat not in pending["awaiting"]:
        raise RulesError(ALREADY_ANSWERED, f"seat {seat} has already answered")
    call = action.get("call")
    if call not in CALLS:
        raise RulesError(BAD_ACTION, f"call must be accept, muggins or overcount, not {call!r}")
    pending["answers"][str(seat)] = call
    pending["awaiting"].remove(seat)
    events.append({"type": "answer", "seat": seat, "call": call})
    if call != "accept":
        settle(state, events, call, seat)
    elif not pending["awaiting"]:
        settle(state, events, "accept", None)


def answer_timeout(state: GameState, events: list[Event]) -> None:
    """The answer window ran out: whoever has not answered accepts (docs/rules.md §5.2).

    Raises:
        RulesError: ``wrong_phase``, ``nothing_to_answer`` (no announcement awaiting answers).
    """
    pending = _need_show(state, "time out")
    if pending["announced"] is None or not pending["awaiting"]:
        raise RulesError(NOTHING_TO_ANSWER, "no announcement is waiting for answers")
    settle(state, events, "timeout", None)


def settle(
    state: GameState, events: list[Event], call: SettledBy, caller: int | None
) -> None:
    """Settle the pending step (docs/rules.md §5.3, §5.4, §6.4).

    With T the true count and N the announced one: the owner pegs N, or T after a correct
    overcount; a correct muggins pegs T-N to the caller's side; a wrong call pegs the owner
    2 (``penalty``) and N stands. Pegs in order owner, penalty, caller, each checked for the
    game's end; then Back-up 10 on the true count. Then the next step (or the next deal).

    Emits ``show_hand``, ``muggins_result``, then the pegs. ``muggins_result``'s
    ``penalty`` and ``caller_pegs``, and the counted entry's ``pegged`` and
    ``caller_pegs``, are what was actually pegged: once a peg of the step ends the game
    (§4.3, §5.4) the later ones are not pegged and count 0.
    """
    pending = state.show_pending
    assert pending is not None
    owner, kind = pending["seat"], pending["kind"]
    step = {"seat": owner, "kind": kind}
    score = _count(state, step)
    t, n = score.total, pending["announced"]
    correct: bool | None = None
    owner_pegs, caller_pegs, penalty = n, 0, 0
    if call == "muggins":
        correct = n < t
        caller_pegs = t - n if correct else 0
    elif call == "overcount":
        correct = n > t
        if correct:
            owner_pegs = t
    if correct is False:
        penalty = 2
    state.show_pending = None
    # Peg first (into a list of their own) to learn what is actually pegged: the game
    # ends on the first peg that reaches the target (§4.3, §5.4) and nothing after it is
    # pegged, so muggins_result and the counted entry report those later pegs as 0.
    pegs: list[Event] = []
    over = peg(state, pegs, owner, owner_pegs, kind,
               [{"kind": "announced", "cards": [], "points": owner_pegs}])
    if penalty:
        if over:
            penalty = 0
        else:
            over = peg(state, pegs, owner, penalty, "penalty",
                       [{"kind": "penalty", "cards": [], "points": penalty}])
    if caller_pegs:
        if over or caller is None:
            caller_pegs = 0
        else:
            over = peg(state, pegs, caller, caller_pegs, "muggins",
                       [{"kind": "muggins", "cards": [], "points": caller_pegs}])
    event = _show_event(state, step, score)
    events.append(event)
    events.append(
        {
            "type": "muggins_result", "owner": owner, "kind": kind, "announced": n,
            "true_count": t, "call": call, "caller": caller, "correct": correct,
            "owner_pegs": owner_pegs, "caller_pegs": caller_pegs, "penalty": penalty,
        }
    )
    state.show_counted.append(
        _counted(event, owner_pegs + penalty, announced=n, call=call, caller=caller,
                 correct=correct, caller_pegs=caller_pegs)
    )
    events.extend(pegs)
    if over:
        return
    if t == 0 and state.options.backup10:
        backup(state, events, owner, kind)
    _next_step(state, events)
