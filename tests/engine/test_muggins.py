"""Muggins (docs/rules.md §5), with Back-up 10 (§6.4) and Lowball (§1.3)."""

from __future__ import annotations

import pytest
from _engine_helpers import discard_all, of_type, pegs, play_cards, stacked
from test_show import ZERO_DEAL, ZERO_DISCARDS, ZERO_PLAY

import engine
from engine import GameOptions, RulesError

MUGGINS = GameOptions(muggins=True)


def to_show(options: GameOptions = MUGGINS, scores: list[int] | None = None):
    """The ZERO deal up to the show: pone's hand (true 20) is pending; dealer's hand and the
    crib count 0. The dealer has pegged 5 in the play."""
    state, _ = stacked(options, dealer=0, deals=[ZERO_DEAL], scores=scores)
    state, _ = discard_all(state, ZERO_DISCARDS)
    state, events = play_cards(state, ZERO_PLAY)
    assert state.phase == "show" and of_type(events, "show_hand") == []
    return state


def announce(state, seat, points):
    return engine.apply(state, seat, {"type": "announce", "points": points})


def answer(state, seat, call):
    return engine.apply(state, seat, {"type": "answer", "call": call})


def test_show_begins_with_all_kept_hands_public_but_not_the_crib() -> None:
    """docs/rules.md §5.1, the brief: every kept hand is visible once the show begins."""
    state = to_show()
    assert state.show_pending["seat"] == 1 and state.show_pending["kind"] == "hand"
    for seat in (0, 1, None):
        v = engine.view(state, seat)
        assert v["show"]["hands"] == {"0": ["2D", "4C", "6H", "8D"], "1": ["5S", "5C", "5D", "JH"]}
        assert v["turn"] == 1 and v["show"]["pending"]["announced"] is None
        assert "2H" not in str(v) or seat == 0  # the dealer's own discard only
    assert engine.legal_actions(state, 1)[0] == {"type": "announce", "points": 0}
    assert len(engine.legal_actions(state, 1)) == 30
    assert engine.legal_actions(state, 0) == [] and engine.legal_actions(state, None) == []


@pytest.mark.parametrize(
    ("announced", "call", "pone_pegs", "dealer_pegs", "correct"),
    [
        (20, "accept", [(1, 20, "hand")], [], None),
        (16, "muggins", [(1, 16, "hand")], [(0, 4, "muggins")], True),
        (20, "muggins", [(1, 20, "hand"), (1, 2, "penalty")], [], False),
        (24, "overcount", [(1, 20, "hand")], [], True),
        (20, "overcount", [(1, 20, "hand"), (1, 2, "penalty")], [], False),
        (18, "overcount", [(1, 18, "hand"), (1, 2, "penalty")], [], False),
        (29, "timeout", [(1, 29, "hand")], [], None),
        (0, "accept", [], [], None),
    ],
)
def test_each_call(announced, call, pone_pegs, dealer_pegs, correct) -> None:
    """docs/rules.md §5.2, §5.3: the owner pegs N (T after a correct overcount); a correct
    muggins pegs T-N to the caller; a wrong call pegs 2 to the owner and N stands."""
    state = to_show(scores=[0, 0])
    state, events = announce(state, 1, announced)
    assert events == [{"type": "announce", "seat": 1, "kind": "hand", "points": announced}]
    ref = state.show_pending["ref"]
    assert engine.legal_actions(state, 0) == [
        {"type": "answer", "call": c, "ref": ref} for c in ("accept", "muggins", "overcount")]
    assert engine.legal_actions(state, None) == [{"type": "answer_timeout"}]
    if call == "timeout":
        state, events = engine.apply(state, None, {"type": "answer_timeout"})
    else:
        state, events = answer(state, 0, call)
    (show,) = of_type(events, "show_hand")
    assert show["total"] == 20 and show["seat"] == 1
    (result,) = of_type(events, "muggins_result")
    assert result["announced"] == announced and result["true_count"] == 20
    assert result["call"] == call and result["correct"] is correct
    assert result["caller"] == (0 if call in ("muggins", "overcount") else None)
    assert pegs(events) == pone_pegs + dealer_pegs
    assert state.scores == [5 + sum(p for _, p, _ in dealer_pegs),
                            sum(p for _, p, _ in pone_pegs)]
    # next: the dealer's hand is pending
    assert state.show_pending["seat"] == 0 and state.show_pending["kind"] == "hand"
    assert state.show_counted[0]["announced"] == announced


def test_zero_hand_moves_back_after_its_announced_points() -> None:
    """docs/rules.md §6.4: true count 0 moves back even when points were announced, after they
    are pegged; a correct overcount leaves nothing to peg."""
    state = to_show(GameOptions(muggins=True, backup10=True), scores=[30, 0])
    state, _ = announce(state, 1, 20)
    state, _ = answer(state, 0, "accept")
    state, events = announce(state, 0, 3)  # the dealer's hand: true 0
    state, events = answer(state, 1, "accept")
    assert pegs(events) == [(0, 3, "hand")]
    (backup,) = of_type(events, "backup")
    assert (backup["kind"], backup["holes"], backup["score_before"]) == ("hand", 10, 38)
    assert state.show_pending["kind"] == "crib"
    assert engine.view(state, 1)["show"]["pending"]["cards"] == ["2H", "4H", "6C", "8C"]
    state, _ = announce(state, 0, 2)
    state, events = answer(state, 1, "overcount")
    assert pegs(events) == []
    (backup,) = of_type(events, "backup")
    assert (backup["kind"], backup["holes"], backup["score_after"]) == ("crib", 10, 18)
    assert of_type(events, "deal") and state.phase == "discard"
    assert [e["kind"] for e in state.last_show] == ["hand", "hand", "crib"]


def test_scoring_hand_announced_zero_does_not_move_back() -> None:
    """docs/rules.md §6.4: a hand with true count above 0 never moves back."""
    state = to_show(GameOptions(muggins=True, backup10=True), scores=[0, 15])
    state, _ = announce(state, 1, 0)
    state, events = answer(state, 0, "accept")
    assert of_type(events, "backup") == [] and pegs(events) == []
    assert state.scores[1] == 15


def test_game_end_order_owner_first() -> None:
    """docs/rules.md §5.4: the owner's points are pegged first; if they reach the target the
    muggins caller pegs nothing."""
    state = to_show(scores=[110, 105])
    state, _ = announce(state, 1, 16)
    state, events = answer(state, 0, "muggins")
    assert pegs(events) == [(1, 16, "hand")]
    assert events[-1]["type"] == "game_over" and events[-1]["winner"] == 1
    assert state.scores == [115, 121]


def test_muggins_caller_can_win() -> None:
    state = to_show(scores=[112, 0])  # 117 after the play
    state, _ = announce(state, 1, 16)
    state, events = answer(state, 0, "muggins")
    assert pegs(events) == [(1, 16, "hand"), (0, 4, "muggins")]
    assert events[-1]["type"] == "game_over" and events[-1]["winner"] == 0


def test_penalty_can_win() -> None:
    state = to_show(scores=[0, 100])
    state, _ = announce(state, 1, 19)
    state, events = answer(state, 0, "overcount")
    assert pegs(events) == [(1, 19, "hand"), (1, 2, "penalty")]
    assert events[-1]["type"] == "game_over"


@pytest.mark.parametrize(
    ("seat", "action", "code"),
    [
        (0, {"type": "announce", "points": 3}, "not_your_turn"),
        (1, {"type": "announce", "points": 30}, "bad_points"),
        (1, {"type": "announce", "points": -1}, "bad_points"),
        (1, {"type": "announce", "points": "5"}, "bad_points"),
        (1, {"type": "announce", "points": True}, "bad_points"),
        (0, {"type": "answer", "call": "accept"}, "nothing_to_answer"),
        (None, {"type": "answer_timeout"}, "nothing_to_answer"),
        (0, {"type": "answer_timeout"}, "system_only"),
        (None, {"type": "announce", "points": 3}, "system_only"),
        (1, {"type": "play", "card": "5S"}, "wrong_phase"),
    ],
)
def test_show_errors_before_the_announcement(seat, action, code) -> None:
    state = to_show()
    before = state.to_dict()
    with pytest.raises(RulesError) as err:
        engine.apply(state, seat, action)
    assert err.value.code == code
    assert state.to_dict() == before


@pytest.mark.parametrize(
    ("seat", "action", "code"),
    [
        (1, {"type": "announce", "points": 3}, "already_announced"),
        (1, {"type": "answer", "call": "accept"}, "not_an_opponent"),
        (0, {"type": "answer", "call": "maybe"}, "bad_action"),
    ],
)
def test_show_errors_after_the_announcement(seat, action, code) -> None:
    state = to_show()
    state, _ = announce(state, 1, 12)
    before = state.to_dict()
    with pytest.raises(RulesError) as err:
        engine.apply(state, seat, action)
    assert err.value.code == code
    assert state.to_dict() == before


def partnership_show():
    """4 in partnerships, Muggins: play every card, reach the show."""
    opts = GameOptions(players=4, partnerships=True, muggins=True)
    state, _ = stacked(opts, dealer=3, deals=[{"starter": "KD"}])
    state, _ = discard_all(state, {s: state.hands[s][:1] for s in range(4)})
    while state.phase == "play":
        state, _ = engine.apply(state, state.turn, engine.legal_actions(state, state.turn)[0])
    assert state.phase == "show"
    return state


def test_partners_never_answer() -> None:
    """docs/rules.md §5.2: partners never answer each other; every opponent must answer (or the
    window runs out) before an all-accept settles."""
    state = partnership_show()
    assert state.show_pending["seat"] == 0
    state, _ = announce(state, 0, 0)
    assert state.show_pending["awaiting"] == [1, 3]
    assert engine.legal_actions(state, 2) == []
    for seat in (0, 2):
        with pytest.raises(RulesError) as err:
            answer(state, seat, "accept")
        assert err.value.code == "not_an_opponent"
    state, events = answer(state, 3, "accept")
    assert of_type(events, "muggins_result") == []
    with pytest.raises(RulesError) as err:
        answer(state, 3, "muggins")
    assert err.value.code == "already_answered"
    assert engine.view(state, None)["show"]["pending"]["answers"] == {"3": "accept"}
    state, events = engine.apply(state, None, {"type": "answer_timeout"})
    assert of_type(events, "muggins_result")[0]["call"] == "timeout"
    assert state.show_pending["seat"] == 1


def test_three_players_first_call_settles() -> None:
    """docs/rules.md §5.2: the step ends on the first muggins or overcount call."""
    opts = GameOptions(players=3, muggins=True)
    state, _ = stacked(opts, dealer=0, deals=[{"starter": "KD"}])
    state, _ = discard_all(state, {s: state.hands[s][:1] for s in range(3)})
    while state.phase == "play":
        state, _ = engine.apply(state, state.turn, engine.legal_actions(state, state.turn)[0])
    state, _ = announce(state, 1, 29)
    assert state.show_pending["awaiting"] == [2, 0]
    state, events = answer(state, 0, "overcount")
    assert of_type(events, "muggins_result")[0]["correct"] is True
    assert state.show_pending["seat"] == 2


def test_lowball_with_muggins_plays_without_muggins() -> None:
    """docs/rules.md §1.3: lowball + muggins is played without Muggins; the view says so."""
    opts = GameOptions(muggins=True, lowball=True)
    assert opts.effective().muggins is False
    state, events = zero_deal_lowball(opts)
    assert of_type(events, "show_hand") and state.phase == "discard"
    assert engine.view(state, 0)["options"]["muggins"] is False
    assert state.options.muggins is True  # the room's choice is kept


def zero_deal_lowball(opts):
    state, _ = stacked(opts, dealer=0, deals=[ZERO_DEAL])
    state, _ = discard_all(state, ZERO_DISCARDS)
    return play_cards(state, ZERO_PLAY)


def test_each_announcement_has_its_own_ref() -> None:
    """Every show step gets a ``ref`` (10 x deal number + its place in the show), shown in
    every view; the refs of one deal's steps differ."""
    state = to_show()
    refs = []
    while state.phase == "show":
        pending = state.show_pending
        ref = pending["ref"]
        assert ref == 10 * state.deal_number + len(state.show_counted)
        for seat in (0, 1, None):
            assert engine.view(state, seat)["show"]["pending"]["ref"] == ref
        refs.append(ref)
        owner = pending["seat"]
        state, _ = announce(state, owner, 0)
        if state.phase == "show" and state.show_pending and state.show_pending["awaiting"]:
            state, _ = answer(state, 1 - owner, "accept")
    assert len(refs) == 3 and len(set(refs)) == 3


def test_stale_answer_is_refused_not_applied_to_the_next_announcement() -> None:
    """An answer naming an announcement already settled gets ``stale_answer`` and changes
    nothing, even though the next announcement is waiting for that same seat's answer."""
    state = to_show()
    state, _ = announce(state, 1, 20)
    first = state.show_pending["ref"]
    state, _ = answer(state, 0, "accept")  # settles pone's hand; the dealer's is next
    assert state.show_pending["seat"] == 0
    state, _ = announce(state, 0, 0)
    # Seat 1 answers the dealer's hand with the ref of its own, already settled hand:
    before = state.to_dict()
    with pytest.raises(RulesError) as err:
        engine.apply(state, 1, {"type": "answer", "call": "muggins", "ref": first})
    assert err.value.code == "stale_answer"
    assert state.to_dict() == before
    # The right ref lands; no ref at all still lands (the field is optional).
    ok, events = engine.apply(
        state, 1, {"type": "answer", "call": "accept", "ref": state.show_pending["ref"]}
    )
    assert of_type(events, "muggins_result")[0]["call"] == "accept"
    ok2, _ = answer(state, 1, "accept")
    assert ok2.to_dict() == ok.to_dict()


@pytest.mark.parametrize("ref", ["12", 1.5, True])
def test_answer_ref_must_be_a_whole_number(ref) -> None:
    state = to_show()
    state, _ = announce(state, 1, 12)
    with pytest.raises(RulesError) as err:
        engine.apply(state, 0, {"type": "answer", "call": "accept", "ref": ref})
    assert err.value.code == "bad_action"


def test_stale_answer_after_the_show_is_over() -> None:
    """A ref'd answer arriving after the whole show settled (the next deal is dealt) is
    ``stale_answer``, not ``wrong_phase``."""
    state = to_show()
    ref = state.show_pending["ref"]
    while state.phase == "show":
        owner = state.show_pending["seat"]
        state, _ = announce(state, owner, 0)
        if state.phase == "show" and state.show_pending and state.show_pending["awaiting"]:
            state, _ = engine.apply(state, None, {"type": "answer_timeout"})
    assert state.phase == "discard"
    with pytest.raises(RulesError) as err:
        engine.apply(state, 0, {"type": "answer", "call": "accept", "ref": ref})
    assert err.value.code == "stale_answer"


@pytest.mark.parametrize(
    ("scores", "announced", "call", "pegs_expected", "penalty", "caller_pegs", "over"),
    [
        # The owner's points reach the target: the wrong call's penalty is never pegged.
        ([0, 105], 20, "muggins", [(1, 20, "hand")], 0, 0, True),
        ([0, 105], 18, "overcount", [(1, 18, "hand")], 0, 0, True),
        ([0, 101], 20, "overcount", [(1, 20, "hand")], 0, 0, True),
        # ... nor the correct muggins caller's points (docs/rules.md §5.4: owner first).
        ([0, 110], 16, "muggins", [(1, 16, "hand")], 0, 0, True),
        # The penalty itself reaches the target: it was pegged, and counts.
        ([0, 100], 19, "overcount", [(1, 19, "hand"), (1, 2, "penalty")], 2, 0, True),
        # The caller's points reach the target: pegged, and count.
        ([112, 0], 16, "muggins", [(1, 16, "hand"), (0, 4, "muggins")], 0, 4, True),
        # Nobody reaches the target: everything is pegged.
        ([0, 0], 20, "muggins", [(1, 20, "hand"), (1, 2, "penalty")], 2, 0, False),
        ([0, 0], 16, "muggins", [(1, 16, "hand"), (0, 4, "muggins")], 0, 4, False),
    ],
)
def test_result_and_counted_report_what_was_actually_pegged(
    scores, announced, call, pegs_expected, penalty, caller_pegs, over
) -> None:
    """Issue 11: docs/rules.md §4.3, §5.3, §5.4 — once a peg of the step ends the game nothing
    after it is pegged; ``muggins_result.penalty`` / ``caller_pegs`` and the view's
    ``show.counted[].pegged`` / ``caller_pegs`` say what was pegged, as the pegs do."""
    state = to_show(scores=scores)
    state, _ = announce(state, 1, announced)
    state, events = answer(state, 0, call)
    assert pegs(events) == pegs_expected
    assert (state.phase == "game_over") is over
    (result,) = of_type(events, "muggins_result")
    owner_pegged = sum(p for seat, p, _ in pegs(events) if seat == 1)
    caller_pegged = sum(p for seat, p, _ in pegs(events) if seat == 0)
    assert result["owner_pegs"] == announced
    assert result["penalty"] == penalty
    assert result["caller_pegs"] == caller_pegs == caller_pegged
    assert result["owner_pegs"] + result["penalty"] == owner_pegged
    for seat in (0, 1, None):
        (counted,) = engine.view(state, seat)["show"]["counted"]
        assert counted["pegged"] == owner_pegged
        assert counted["caller_pegs"] == caller_pegged
        assert counted["announced"] == announced and counted["call"] == call
