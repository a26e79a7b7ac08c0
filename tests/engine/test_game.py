"""new_game, options, the seeded shuffle, stacking, rematch, errors and the round trip."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from _engine_helpers import discard_all, of_type, stacked
from test_show import heels_win

import engine
from engine import GameOptions, GameState, RulesError
from engine.deal import cut_for_dealer
from engine.rng import deal_deck


# -- options ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs",
    [{"players": 5}, {"players": 1}, {"players": 3, "partnerships": True},
     {"partnerships": True}, {"target": 100}, {"muggins": 1}, {"players": "2"},
     {"players": True}, {"target": 121.0}],
)
def test_bad_options(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        GameOptions(**kwargs)


def test_options_plain_data() -> None:
    """docs/rules.md §1.3: any combination is accepted; lowball turns muggins off in effect."""
    opts = GameOptions(players=4, partnerships=True, target=61, muggins=True, lowball=True)
    assert GameOptions.from_dict(opts.to_dict()) == opts
    assert opts.effective().to_dict() == dict(opts.to_dict(), muggins=False)
    assert GameOptions(muggins=True).effective().muggins
    assert GameOptions.from_dict({}) == GameOptions()
    with pytest.raises(ValueError, match="unknown option"):
        GameOptions.from_dict({"wild": True})


# -- the shuffle and the cut --------------------------------------------------------------
def test_seeded_shuffle_is_deterministic_and_per_deal() -> None:
    assert deal_deck("s", 1, 1) == deal_deck("s", 1, 1)
    assert sorted(deal_deck("s", 1, 1)) == sorted(str(c) for c in engine.FULL_DECK)
    decks = {tuple(deal_deck(seed, g, d)) for seed in ("s", 7) for g in (1, 2) for d in (1, 2)}
    assert len(decks) == 8
    assert deal_deck(5, 1, 1) != deal_deck("5", 1, 1)
    with pytest.raises(ValueError):
        deal_deck(1.5, 1, 1)  # type: ignore[arg-type]


def test_shuffle_is_roughly_uniform() -> None:
    """The top card over 5,200 deals: each of the 52 about 100 times."""
    tops = Counter(deal_deck(2**127 + 1, 1, d)[0] for d in range(5200))
    assert len(tops) == 52 and min(tops.values()) > 50 and max(tops.values()) < 160


def test_cut_for_first_deal() -> None:
    """docs/rules.md §2.1: lowest rank deals, ties cut again among the tied seats."""
    for seed in range(200):
        dealer, rounds = cut_for_dealer(seed, 1, [0, 1, 2, 3])
        contenders = [0, 1, 2, 3]
        for rnd in rounds:
            assert [c["seat"] for c in rnd] == contenders
            low = min(engine.Card.parse(c["card"]).rank for c in rnd)
            contenders = [c["seat"] for c in rnd if engine.Card.parse(c["card"]).rank == low]
        assert contenders == [dealer]
    state, events = engine.new_game(GameOptions(), "cut me")
    assert [e["type"] for e in events] == [
        "game_start", "game_commitment", "cut_for_deal", "deal_commitment", "deal"]
    assert events[2]["dealer"] == state.dealer and events[2]["reason"] == "cut"
    assert state.phase == "discard" and state.deal_number == 1


def test_ties_recut_happens() -> None:
    """Some seed makes a tie: the next round has only the tied seats."""
    for seed in range(500):
        _, rounds = cut_for_dealer(seed, 1, [0, 1, 2, 3])
        if len(rounds) > 1:
            assert len(rounds[1]) < 4
            return
    pytest.fail("no tie in 500 seeds")


def test_same_seed_same_game() -> None:
    a, ea = engine.new_game(GameOptions(players=3), 12345)
    b, eb = engine.new_game(GameOptions(players=3), 12345)
    assert a == b and ea == eb


# -- stacking -----------------------------------------------------------------------------
def test_deck_for_stacks_every_seat_crib_card_and_starter() -> None:
    opts = GameOptions(players=3)
    deck = engine.deck_for(opts, 1, hands={"2": ["AS", "2S", "3S", "4S", "5S"], 0: ["KH"]},
                           crib_card="QC", starter="JD")
    assert len(set(deck)) == 52
    state, _ = engine.new_game(opts, "x", first_dealer=1, decks=[deck])
    assert state.hands[2] == ["AS", "2S", "3S", "4S", "5S"]
    assert state.hands[0][0] == "KH" and state.crib == ["QC"] and state.crib_card == "QC"
    state, events = discard_all(state, {s: state.hands[s][:1] for s in range(3)})
    assert state.starter == "JD" and events[-1]["source"] == "his_heels"


def test_decks_are_consumed_in_order_then_the_seed_takes_over() -> None:
    opts = GameOptions()
    d1 = engine.deck_for(opts, 0, hands={1: ["AS", "AH", "AD", "AC", "2S", "2H"]})
    d2 = engine.deck_for(opts, 1, hands={0: ["KS", "KH", "KD", "KC", "QS", "QH"]})
    state, _ = engine.new_game(opts, "seed", first_dealer=0, decks=[d1, d2])
    assert state.hands[1] == ["AS", "AH", "AD", "AC", "2S", "2H"]
    state = _finish_deal(state)
    assert state.deal_number == 2 and state.hands[0] == ["KS", "KH", "KD", "KC", "QS", "QH"]
    state = _finish_deal(state)
    assert state.deal_number == 3
    assert state.hands[1] == [deal_deck("seed", 1, 3)[i] for i in range(0, 12, 2)]


def test_bad_new_game_arguments() -> None:
    with pytest.raises(ValueError):
        engine.new_game(GameOptions(), "s", first_dealer=2)
    with pytest.raises(ValueError):
        engine.new_game(GameOptions(), "s", decks=[["AS"] * 52])
    with pytest.raises(ValueError):
        engine.new_game(GameOptions(), None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        engine.deck_for(GameOptions(), 0, crib_card="AS")
    with pytest.raises(ValueError):
        engine.deck_for(GameOptions(), 0, hands={0: ["AS"], 1: ["AS"]})


def _finish_deal(state: GameState) -> GameState:
    """Play the current deal to its end with the first legal action each time."""
    deal = state.deal_number
    while state.deal_number == deal and state.phase != "game_over":
        seat = next(s for s in [None, *range(state.players)] if engine.legal_actions(state, s))
        state, _ = engine.apply(state, seat, engine.legal_actions(state, seat)[0])
    return state


# -- rematch ------------------------------------------------------------------------------
def test_rematch_loser_deals_first() -> None:
    """docs/rules.md §2.1: with 2 players the loser of the previous game deals first."""
    state, _ = heels_win(GameOptions(), [119, 0], dealer=0)
    assert engine.legal_actions(state, 1) == [{"type": "rematch"}]
    state, events = engine.apply(state, 1, {"type": "rematch"})
    assert [e["type"] for e in events] == [
        "game_start", "game_commitment", "cut_for_deal", "deal_commitment", "deal"]
    assert events[2]["reason"] == "loser_deals" and events[2]["dealer"] == 1
    assert state.dealer == 1 and state.game_number == 2 and state.scores == [0, 0]
    assert state.result is None and state.deal_number == 1 and state.phase == "discard"
    assert engine.view(state, 0)["games_played"] == 1


def test_rematch_lowball_loser_reached_the_target() -> None:
    state, _ = heels_win(GameOptions(lowball=True), [119, 0], dealer=0)
    state, _ = engine.apply(state, 1, {"type": "rematch"})
    assert state.dealer == 0


def test_rematch_partnerships() -> None:
    state, _ = heels_win(GameOptions(players=4, partnerships=True), [119, 0], dealer=2)
    state, _ = engine.apply(state, 0, {"type": "rematch"})
    assert state.dealer == 3  # side 1, first clockwise from the last dealer's left


def test_rematch_three_players_cut_again() -> None:
    state, _ = heels_win(GameOptions(players=3), [119, 0, 0], dealer=0)
    state, events = engine.apply(state, 2, {"type": "rematch"})
    cut = events[2]
    assert cut["reason"] == "cut" and cut["cuts"] and state.dealer == cut["dealer"]
    assert (state.dealer, cut["cuts"]) == cut_for_dealer(state.seed, 2, [0, 1, 2])


# -- errors leave the state untouched ---------------------------------------------------------
@pytest.mark.parametrize(
    ("seat", "action", "code"),
    [
        (2, {"type": "discard", "cards": ["AS", "AH"]}, "bad_seat"),
        (-1, {"type": "discard", "cards": ["AS", "AH"]}, "bad_seat"),
        (True, {"type": "discard", "cards": ["AS", "AH"]}, "bad_seat"),
        (1, {"type": "dance"}, "bad_action"),
        (1, "discard", "bad_action"),
        (1, {"cards": []}, "bad_action"),
        (1, {"type": "discard"}, "bad_action"),
        (1, {"type": "discard", "cards": "AS AH"}, "bad_action"),
        (1, {"type": "discard", "cards": ["AS", "XX"]}, "bad_card"),
        (1, {"type": "discard", "cards": ["AS"]}, "wrong_discard_count"),
        (1, {"type": "discard", "cards": ["AS", "AH", "AD"]}, "wrong_discard_count"),
        (1, {"type": "discard", "cards": ["AS", "AS"]}, "card_not_in_hand"),
        (1, {"type": "discard", "cards": ["AS", "KS"]}, "card_not_in_hand"),
        (1, {"type": "play", "card": "AS"}, "wrong_phase"),
        (1, {"type": "answer", "call": "accept"}, "wrong_phase"),
        (None, {"type": "answer_timeout"}, "wrong_phase"),
        (None, {"type": "discard", "cards": ["AS", "AH"]}, "system_only"),
        (1, {"type": "rematch"}, "wrong_phase"),
    ],
)
def test_errors_leave_state_untouched(seat, action, code) -> None:
    opts = GameOptions()
    state, _ = stacked(opts, dealer=0, deals=[{"hands": {1: ["AS", "AH", "AD", "AC", "2S", "2H"]}}])
    before = state.to_dict()
    with pytest.raises(RulesError) as err:
        engine.apply(state, seat, action)
    assert err.value.code == code and err.value.message
    assert state.to_dict() == before


def test_already_discarded_and_lower_case_cards() -> None:
    state, _ = stacked(dealer=0, deals=[{"hands": {1: ["AS", "AH", "AD", "AC", "TS", "2H"]}}])
    state, events = engine.apply(state, 1, {"type": "discard", "cards": ["as", "10s"]})
    assert events[0]["cards"] == ["AS", "TS"] and state.kept[1] == ["AH", "AD", "AC", "2H"]
    assert engine.legal_actions(state, 1) == [] and len(engine.legal_actions(state, 0)) == 15
    with pytest.raises(RulesError) as err:
        engine.apply(state, 1, {"type": "discard", "cards": ["AH", "AD"]})
    assert err.value.code == "already_discarded"


def test_game_over_refuses_everything_but_rematch() -> None:
    state, _ = heels_win(GameOptions(), [119, 0])
    for action in ({"type": "play", "card": "AS"}, {"type": "discard", "cards": []}):
        with pytest.raises(RulesError) as err:
            engine.apply(state, 0, action)
        assert err.value.code == "game_over"


# -- plain data ---------------------------------------------------------------------------
def test_round_trip_through_json() -> None:
    state, _ = engine.new_game(GameOptions(players=4, partnerships=True, muggins=True), 99)
    for _ in range(3):
        data = json.loads(json.dumps(state.to_dict()))
        assert GameState.from_dict(data) == state
        state = _finish_deal(state)
    with pytest.raises(ValueError):
        GameState.from_dict({"phase": "play"})


def test_apply_never_mutates_its_input() -> None:
    state, _ = engine.new_game(GameOptions(), 3)
    before = state.to_dict()
    engine.apply(state, 0, engine.legal_actions(state, 0)[0])
    assert state.to_dict() == before


# -- views and events --------------------------------------------------------------------------
def test_redaction_of_deal_and_discard() -> None:
    state, events = engine.new_game(GameOptions(players=3), "r")
    deal = events[-1]
    assert engine.redact_event(deal, 1)["hands"] == {"1": state.hands[1]}
    assert engine.redact_event(deal, None)["hands"] == {}
    assert len(deal["hands"]) == 3  # the original is not changed
    state, events = engine.apply(state, 2, {"type": "discard", "cards": state.hands[2][:1]})
    assert engine.redact_event(events[0], 2)["cards"] == events[0]["cards"]
    assert engine.redact_event(events[0], 0) == {"type": "discard", "seat": 2, "cards": None,
                                                 "count": 1}
    assert engine.redact_event(events[0], None)["cards"] is None


def test_view_hides_hands_discards_crib_card_pack_and_seed() -> None:
    state, _ = engine.new_game(GameOptions(players=3), "very secret seed")
    state, _ = engine.apply(state, 0, {"type": "discard", "cards": state.hands[0][:1]})
    text = json.dumps(engine.view(state, 1))
    for card in state.hands[0] + state.hands[2] + state.discards[0] + [state.crib_card]:
        assert f'"{card}"' not in text
    for card in state.pack:
        assert f'"{card}"' not in text
    assert "very secret seed" not in text
    spectator = engine.view(state, None)
    assert spectator["hand"] == [] and spectator["seat"] is None
    assert spectator["crib_size"] == 2 and spectator["discarded"] == [True, False, False]


def test_view_during_play() -> None:
    state, _ = heels_win(GameOptions(), [0, 0])
    assert state.phase == "play"
    v = engine.view(state, 0)
    assert v["turn"] == 1 and v["starter"] == "JH" and v["scores"] == [2, 0]
    assert v["hand_sizes"] == [4, 4] and v["kept"] == v["hand"]
    assert v["previous_scores"] == [0, 0]
    assert v["my_discards"] == state.discards[0]
    assert of_type([], "x") == []
