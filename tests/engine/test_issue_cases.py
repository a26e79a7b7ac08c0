"""The cases listed in issue 2 (except the exhaustive count, in test_exhaustive.py)."""

from __future__ import annotations

import pytest
from _engine_helpers import discard_all, of_type, pegs, play_cards, stacked

from engine import score_hand, score_pegging


@pytest.mark.parametrize(
    ("hand", "starter", "crib", "total"),
    [
        ("2D 4C 6H 8D", "JS", False, 0),  # the starter jack is not his nobs
        ("2H 4H 6H 8C", "QH", False, 0),  # three hand cards + starter: no flush
        ("9C TD 2S 4H", "7C", False, 2),  # no two-card runs
        ("QS KS AS 2S", "8D", True, 0),  # a crib needs a five-card flush
        ("QS KS AS 2S", "8D", False, 4),
        ("QS KS AS 2S", "8S", True, 5),
        ("QS KS AS 2S", "8S", False, 5),
        ("6S 5S 4S 3S", "6D", False, 20),
        ("6S 5S 4S 3S", "6D", True, 16),
        ("4S 4H 4D 3C", "3H", False, 12),
        ("8S 8H 6D 6C", "AS", False, 12),
        ("TS JH QD QC", "KS", False, 10),  # not 14
        ("5S 5C 5D JH", "5H", False, 29),
        ("8S 8C 9D TH", "9H", False, 16),
    ],
)
def test_hand_counts(hand: str, starter: str, crib: bool, total: int) -> None:
    """docs/rules.md §4.2 (ACC): the hand and crib cases of issue 2."""
    assert score_hand(hand.split(), starter, crib=crib).total == total


@pytest.mark.parametrize(
    ("pile", "last_scores"),
    [
        (["6S", "5H", "6D", "5C"], [0, 0, 0, 0]),  # pairs only with the card just before
        (["7S", "8H", "JD", "5C"], [0, 2, 0, 0]),  # the 5 at 30 scores 0
        (["KS", "9H", "4D", "5C", "3S"], [0, 0, 0, 0, 5]),  # run 3-4-5 and 31
        (["4S", "6H", "5D"], [0, 0, 5]),  # run and fifteen
    ],
)
def test_play_scores(pile: list[str], last_scores: list[int]) -> None:
    """docs/rules.md §3.5: each card of the play scores only with the cards of its count."""
    got = [score_pegging(pile[: i + 1]).total for i in range(len(pile))]
    assert got == last_scores


def test_dealer_at_119_turns_a_jack_and_wins_on_his_heels() -> None:
    """docs/rules.md §2.5, §4.3 (ACC 6.3b): his heels ends the game before any card is played."""
    state, _ = stacked(dealer=0, deals=[{"starter": "JH"}], scores=[119, 80])
    hand0, hand1 = state.hands
    state, events = discard_all(state, {0: hand0[:2], 1: hand1[:2]})
    assert pegs(events) == [(0, 2, "his_heels")]
    assert state.phase == "game_over"
    assert state.played == [] and state.scores == [121, 80]
    (over,) = of_type(events, "game_over")
    assert over["winner"] == 0 and over["losers"] == [1] and over["skunks"] == {"1": "skunk"}


def go_deal() -> dict:
    """Dealer 0; pone (seat 1) keeps KS QS 9C 8C, dealer keeps 9H 7H 6H 8D."""
    return {
        "hands": {1: ["KS", "QS", "9C", "8C", "2D", "3D"], 0: ["9H", "7H", "6H", "8D", "4C", "AC"]},
        "starter": "KD",
    }


def test_after_a_go_the_other_player_leads_and_the_play_goes_on() -> None:
    """docs/rules.md §3.3, §3.4: 2 players, both hold cards and neither can play at 29: that is a
    go; the one who laid the last card pegs 1 and the other leads; play goes on until all
    cards are played, the last card pegging 1 (§3.6)."""
    state, _ = stacked(dealer=0, deals=[go_deal()])
    state, _ = discard_all(state, {0: ["4C", "AC"], 1: ["2D", "3D"]})
    assert state.turn == 1
    state, events = play_cards(state, ["KS", "9H", "QS"])
    # count 29: dealer (7H 6H 8D) and pone (9C 8C) both still hold cards, neither can play
    assert of_type(events, "go") == [{"type": "go", "seat": 0}]
    assert pegs(events) == [(1, 1, "go")]
    assert of_type(events, "count_reset") == [{"type": "count_reset", "next": 0}]
    assert state.turn == 0 and state.count == 0
    state, events = play_cards(state, ["7H", "8C", "6H", "9C"])
    # count 30; the pone is out of cards, the dealer cannot play the 8D: go to the pone
    assert pegs(events) == [(1, 2, "play"), (0, 3, "play"), (1, 4, "play"), (1, 1, "go")]
    assert state.turn == 0
    state, events = play_cards(state, ["8D"])
    assert pegs(events)[0] == (0, 1, "last_card")
    # the show follows at once (no Muggins), then the next deal by seat 1 (docs/rules.md §2.2)
    assert [e["type"] for e in events][:4] == ["play", "peg", "count_reset", "show_hand"]
    assert of_type(events, "count_reset")[-1]["next"] is None
    assert state.phase == "discard" and state.deal_number == 2 and state.dealer == 1
