"""The play for 2, 3 and 4 players and partnerships (docs/rules.md §3)."""

from __future__ import annotations

import pytest
from _engine_helpers import discard_all, of_type, pegs, play_cards, stacked

import engine
from engine import GameOptions, RulesError


def three_player_deal() -> dict:
    return {
        "hands": {
            1: ["TS", "9S", "8S", "7S", "4D"],
            2: ["TH", "3H", "AH", "KH", "4H"],
            0: ["5C", "2C", "QC", "JC", "4S"],
        },
        "crib_card": "6D",
        "starter": "9D",
    }


def test_three_players_go_sequence() -> None:
    """docs/rules.md §3.1–3.4, 3 players: after a go everyone still able to play plays in turn;
    31 with a run pegs both; the next seat after the last card's player leads; a seat with
    no cards is skipped; the last card pegs 1."""
    opts = GameOptions(players=3)
    state, _ = stacked(opts, dealer=0, deals=[three_player_deal()])
    assert state.crib == ["6D"]  # the pack card went into the crib (docs/rules.md §2.3)
    state, _ = discard_all(state, {0: ["4S"], 1: ["4D"], 2: ["4H"]})
    assert state.turn == 1 and state.starter == "9D"
    state, events = play_cards(state, ["TS", "TH", "5C"])
    assert pegs(events) == [(2, 2, "play")]
    assert of_type(events, "go") == [{"type": "go", "seat": 1}]  # 25: 9 8 7 cannot go
    assert state.turn == 2 and state.go == [False, True, False]
    state, events = play_cards(state, ["3H", "2C"])
    assert of_type(events, "go") == []  # seat 1 already said go this count
    assert state.turn == 2
    state, events = play_cards(state, ["AH"])  # 31, and A-2-3 is a run
    (peg,) = of_type(events, "peg")
    assert peg["points"] == 5 and {i["kind"] for i in peg["items"]} == {"thirty_one", "run"}
    assert of_type(events, "count_reset") == [{"type": "count_reset", "next": 0}]
    state, events = play_cards(state, ["QC", "9S", "KH"])  # 29; seat 2 is now out of cards
    assert [e["seat"] for e in of_type(events, "go")] == [0, 1]
    assert pegs(events) == [(2, 1, "go")]
    assert state.turn == 0  # next after seat 2 with cards
    state, events = play_cards(state, ["JC", "8S"])
    assert state.turn == 1  # seats 2 and 0 have no cards left
    state, events = play_cards(state, ["7S"])
    assert pegs(events)[0] == (1, 1, "last_card")


def four_player_deal() -> dict:
    return {
        "hands": {
            0: ["KS", "5S", "9S", "8S", "2H"],
            1: ["KH", "5H", "7H", "QH", "3H"],
            2: ["KD", "5D", "QD", "TD", "4H"],
            3: ["AS", "5C", "6C", "JC", "2S"],
        },
        "starter": "9C",
    }

FOUR_PLAY = ["KS", "KH", "KD", "AS", "5S", "5H", "5D", "5C", "9S", "7H", "QD", "6C", "8S",
             "QH", "TD", "JC"]
FOUR_PEGS = [
    (1, 2, "play"), (2, 6, "play"), (3, 2, "play"),  # pair, pair royal, 31
    (1, 2, "play"), (2, 8, "play"), (3, 12, "play"),  # pair, pair royal + 15, double pair royal
    (0, 1, "go"), (0, 2, "play"),  # go at 29; 31
    (3, 3, "play"), (3, 1, "last_card"),  # Q T J run; last card
]


def _four_player_play(opts: GameOptions) -> tuple[engine.GameState, list]:
    state, _ = stacked(opts, dealer=3, deals=[four_player_deal()])
    state, _ = discard_all(state, {0: ["2H"], 1: ["3H"], 2: ["4H"], 3: ["2S"]})
    assert state.turn == 0
    return play_cards(state, FOUR_PLAY)


def test_four_players_alone() -> None:
    """docs/rules.md §3.2–3.6 with 4 seats: go for three seats at once, the last player pegs the
    go and the next seat with cards leads."""
    state, events = _four_player_play(GameOptions(players=4))
    assert pegs(events)[: len(FOUR_PEGS)] == FOUR_PEGS
    resets = [e["next"] for e in of_type(events, "count_reset")]
    assert resets == [0, 1, 1, None]
    assert [e["seat"] for e in of_type(events, "go")] == [1, 2, 3]


def test_partnerships_share_one_score() -> None:
    """docs/rules.md §1.2: seats 0 and 2 peg side 0, seats 1 and 3 side 1."""
    state, events = _four_player_play(GameOptions(players=4, partnerships=True))
    play_pegs = [e for e in of_type(events, "peg") if e["source"] != "hand"
                 and e["source"] != "crib"]
    assert [(e["seat"], e["side"]) for e in play_pegs][:4] == [(1, 1), (2, 0), (3, 1), (1, 1)]
    by_side = [0, 0]
    for e in play_pegs:
        by_side[e["side"]] += e["points"]
    assert by_side == [1 + 2 + 6 + 8, 2 + 2 + 2 + 12 + 3 + 1]
    for e in of_type(events, "peg"):
        assert e["score_after"] == e["score_before"] + e["points"]
    assert len(state.scores) == 2


def test_game_ends_in_the_play() -> None:
    """docs/rules.md §4.3: a go that reaches the target ends the game; nothing more is played."""
    deal = {
        "hands": {1: ["5S", "5C", "5D", "JH", "2C", "3C"],
                  0: ["TS", "TC", "9D", "9H", "4C", "AC"]},
        "starter": "5H",
    }
    state, _ = stacked(dealer=0, deals=[deal], scores=[0, 120])
    state, _ = discard_all(state, {0: ["4C", "AC"], 1: ["2C", "3C"]})
    state, events = play_cards(state, ["5S", "TS", "5C", "TC", "5D", "9D", "JH"])
    assert pegs(events)[-1] == (1, 1, "go")
    assert events[-1]["type"] == "game_over" and events[-1]["winner"] == 1
    assert state.phase == "game_over" and state.hands[0] == ["9H"]
    with pytest.raises(RulesError) as err:
        engine.apply(state, 0, {"type": "play", "card": "9H"})
    assert err.value.code == "game_over"


def test_thirty_one_pegs_two_and_no_go() -> None:
    """docs/rules.md §3.3: a count of exactly 31 pegs 2 and never 1 more for the go."""
    deal = {
        "hands": {1: ["KS", "AC", "2C", "3C", "4D", "6D"],
                  0: ["KH", "TC", "9D", "8H", "7C", "6C"]},
        "starter": "QD",
    }
    state, _ = stacked(dealer=0, deals=[deal])
    state, _ = discard_all(state, {0: ["7C", "6C"], 1: ["4D", "6D"]})
    state, events = play_cards(state, ["KS", "KH", "AC"])  # 10, 20 (pair), 21
    assert pegs(events) == [(0, 2, "play")]
    state, events = play_cards(state, ["TC"])  # 31
    assert pegs(events) == [(0, 2, "play")]
    assert events[1]["items"][0]["kind"] == "thirty_one"
    assert of_type(events, "go") == [] and state.turn == 1


def test_last_card_making_31_pegs_two_only() -> None:
    """docs/rules.md §3.6: the last card pegs 1 unless it makes 31."""
    deal = {
        "hands": {1: ["KS", "QS", "AC", "9C", "4D", "6D"],
                  0: ["KH", "TC", "9D", "AD", "7C", "6C"]},
        "starter": "2D",
    }
    state, _ = stacked(dealer=0, deals=[deal])
    state, _ = discard_all(state, {0: ["7C", "6C"], 1: ["4D", "6D"]})
    # KS KH(pair) AC(21) TC(31): reset; pone QS, dealer 9D (19), pone 9C (28, pair),
    # dealer AD (29): pone has no cards, dealer none -> last card 1
    state, events = play_cards(state, ["KS", "KH", "AC", "TC", "QS", "9D", "9C", "AD"])
    assert [p for p in pegs(events) if p[2] in ("go", "last_card", "play")] == [
        (0, 2, "play"), (0, 2, "play"), (1, 2, "play"), (0, 1, "last_card"),
    ]


@pytest.mark.parametrize(
    ("seat", "action", "code"),
    [
        (0, {"type": "play", "card": "TS"}, "not_your_turn"),
        (1, {"type": "play", "card": "TS"}, "card_not_in_hand"),
        (1, {"type": "play", "card": "ZZ"}, "bad_card"),
        (1, {"type": "play"}, "bad_action"),
        (1, {"type": "discard", "cards": ["5S", "5C"]}, "wrong_phase"),
        (1, {"type": "announce", "points": 3}, "wrong_phase"),
        (1, {"type": "rematch"}, "wrong_phase"),
    ],
)
def test_play_errors(seat: int, action: dict, code: str) -> None:
    """Errors in the play carry their code and leave the state untouched."""
    deal = {
        "hands": {1: ["5S", "5C", "5D", "JH", "2C", "3C"],
                  0: ["TS", "TC", "9D", "9H", "4C", "AC"]},
        "starter": "5H",
    }
    state, _ = stacked(dealer=0, deals=[deal])
    state, _ = discard_all(state, {0: ["4C", "AC"], 1: ["2C", "3C"]})
    before = state.to_dict()
    with pytest.raises(RulesError) as err:
        engine.apply(state, seat, action)
    assert err.value.code == code
    assert state.to_dict() == before


def test_count_over_31() -> None:
    """docs/rules.md §3.2: a card that passes 31 is refused while the seat holds one that fits."""
    deal = {
        "hands": {1: ["KS", "QS", "AC", "9C", "4D", "6D"],
                  0: ["KH", "TC", "9D", "AD", "7C", "6C"]},
        "starter": "2D",
    }
    state, _ = stacked(dealer=0, deals=[deal])
    state, _ = discard_all(state, {0: ["7C", "6C"], 1: ["4D", "6D"]})
    state, _ = play_cards(state, ["KS", "KH", "QS"])  # 30
    assert engine.legal_actions(state, 0) == [{"type": "play", "card": "AD"}]
    with pytest.raises(RulesError) as err:
        engine.apply(state, 0, {"type": "play", "card": "TC"})
    assert err.value.code == "count_over_31"
