"""The show, game end, skunks, Lowball and Back-up 10 (docs/rules.md §4, §6, §7)."""

from __future__ import annotations

import pytest
from _engine_helpers import discard_all, of_type, pegs, play_cards, stacked

from engine import GameOptions
from engine.pegging import skunk_level

# Pone (seat 1) keeps 5S 5C 5D JH: 20 with the KS starter. Dealer (seat 0) keeps 2D 4C 6H 8D
# (0) and the crib is 2H 4H 6C 8C (0). The play gives the dealer 3 (run) + 1 (go) + 1 (last).
ZERO_DEAL = {
    "hands": {1: ["5S", "5C", "5D", "JH", "6C", "8C"], 0: ["2D", "4C", "6H", "8D", "2H", "4H"]},
    "starter": "KS",
}
ZERO_DISCARDS = {0: ["2H", "4H"], 1: ["6C", "8C"]}
ZERO_PLAY = ["5S", "2D", "5C", "4C", "5D", "6H", "JH", "8D"]


def zero_deal(options: GameOptions | None = None, scores: list[int] | None = None):
    state, _ = stacked(options, dealer=0, deals=[ZERO_DEAL], scores=scores)
    state, _ = discard_all(state, ZERO_DISCARDS)
    state, events = play_cards(state, ZERO_PLAY[:-1])
    assert pegs(events) == [(0, 3, "play"), (0, 1, "go")]
    return play_cards(state, ZERO_PLAY[-1:])


def test_show_order_and_next_deal() -> None:
    """docs/rules.md §4.1: pone's hand, the dealer's hand, then the crib; then the deal passes."""
    state, events = zero_deal(scores=[10, 10])
    shows = of_type(events, "show_hand")
    assert [(e["seat"], e["kind"], e["total"]) for e in shows] == [
        (1, "hand", 20), (0, "hand", 0), (0, "crib", 0)]
    assert shows[2]["cards"] == ["2H", "4H", "6C", "8C"]
    assert of_type(events, "backup") == []  # option off
    assert state.scores == [10 + 5, 10 + 20]
    assert state.dealer == 1 and state.deal_number == 2 and state.phase == "discard"
    assert [e["kind"] for e in state.last_show] == ["hand", "hand", "crib"]
    assert of_type(events, "deal")[0]["dealer"] == 1


def test_three_player_show_order_and_crib_card() -> None:
    """docs/rules.md §4.1 with 3 players: seats 1, 2, then dealer 0, then the crib (with the pack
    card)."""
    deal = {"hands": {1: ["AS", "2S", "3S", "4S", "5S"], 2: ["AH", "2H", "3H", "4H", "5H"],
                      0: ["AD", "2D", "3D", "4D", "5D"]},
            "crib_card": "KC", "starter": "QC"}
    state, _ = stacked(GameOptions(players=3), dealer=0, deals=[deal])
    state, _ = discard_all(state, {0: ["5D"], 1: ["5S"], 2: ["5H"]})
    state, events = play_cards(state, ["AS", "AH", "AD", "2S", "2H", "2D", "3S", "3H", "3D",
                                       "4S", "4H", "4D"])
    shows = of_type(events, "show_hand")
    assert [(e["seat"], e["kind"]) for e in shows] == [(1, "hand"), (2, "hand"), (0, "hand"),
                                                       (0, "crib")]
    assert sorted(shows[-1]["cards"]) == sorted(["KC", "5D", "5S", "5H"])


def test_game_ends_mid_show() -> None:
    """docs/rules.md §4.3: the pone's hand reaches the target; the dealer's hand and the crib are
    not counted, nothing moves back and no next deal."""
    state, events = zero_deal(GameOptions(backup10=True), scores=[50, 101])
    assert [e["seat"] for e in of_type(events, "show_hand")] == [1]
    assert of_type(events, "backup") == [] and of_type(events, "deal") == []
    assert events[-1]["type"] == "game_over"
    assert events[-1]["winner"] == 1 and events[-1]["skunks"] == {"0": "double"}
    assert state.scores == [55, 121] and state.phase == "game_over"


def test_backup10_hand_then_crib_dealer_loses_twenty() -> None:
    """docs/rules.md §6.1, §6.2: hand and crib with true count 0 each move the dealer back 10, the
    crib after the dealer's own hand."""
    state, events = zero_deal(GameOptions(backup10=True), scores=[50, 0])
    kinds = [(e["type"], e.get("seat"), e.get("kind")) for e in events
             if e["type"] in ("show_hand", "backup")]
    assert kinds == [("show_hand", 1, "hand"), ("show_hand", 0, "hand"), ("backup", 0, "hand"),
                     ("show_hand", 0, "crib"), ("backup", 0, "crib")]
    backups = of_type(events, "backup")
    assert [(b["holes"], b["score_before"], b["score_after"]) for b in backups] == [
        (10, 55, 45), (10, 45, 35)]
    assert state.scores == [35, 20]


def test_backup10_near_zero_moves_only_the_holes_there_are() -> None:
    """docs/rules.md §6.1, §6.2: never below 0; the event gives the holes actually moved."""
    state, events = zero_deal(GameOptions(backup10=True), scores=[0, 0])
    backups = of_type(events, "backup")
    assert [(b["kind"], b["holes"], b["score_after"]) for b in backups] == [
        ("hand", 5, 0), ("crib", 0, 0)]
    assert state.scores == [0, 20]


def test_backup10_lowball() -> None:
    """docs/rules.md §6.5: the same rule in Lowball."""
    _, events = zero_deal(GameOptions(backup10=True, lowball=True), scores=[30, 0])
    assert [b["holes"] for b in of_type(events, "backup")] == [10, 10]


def test_play_and_heels_do_not_save_a_hand() -> None:
    """docs/rules.md §6.1: only the count of the cards decides; the dealer's 5 in the play and
    his heels do not."""
    deal = dict(ZERO_DEAL, starter="JS")  # 2,4,6,8 + J: still 0; crib 0; pone 20 -> 20
    state, _ = stacked(GameOptions(backup10=True), dealer=0, deals=[deal], scores=[20, 0])
    state, events = discard_all(state, ZERO_DISCARDS)
    assert pegs(events) == [(0, 2, "his_heels")]
    state, events = play_cards(state, ZERO_PLAY)
    assert [b["holes"] for b in of_type(events, "backup")] == [10, 10]


@pytest.mark.parametrize(
    ("score", "target", "level"),
    [(91, 121, "none"), (90, 121, "skunk"), (61, 121, "skunk"), (60, 121, "double"),
     (0, 121, "double"), (31, 61, "none"), (30, 61, "skunk"), (0, 61, "skunk")],
)
def test_skunk_levels(score: int, target: int, level: str) -> None:
    """docs/rules.md §4.4."""
    assert skunk_level(score, target) == level


def heels_win(options: GameOptions, scores: list[int], dealer: int = 0):
    """The dealer (at target - 2) turns a jack (docs/rules.md §2.5)."""
    n = options.players
    state, _ = stacked(options, dealer=dealer, deals=[{"starter": "JH"}], scores=scores)
    return discard_all(state, {s: state.hands[s][: options.discard_count] for s in range(n)})


def test_skunks_judged_per_loser() -> None:
    """docs/rules.md §4.4: with 4 playing alone each loser is judged on its own."""
    state, events = heels_win(GameOptions(players=4), [119, 91, 90, 60])
    over = events[-1]
    assert over["type"] == "game_over" and over["winner"] == 0 and over["winner_seats"] == [0]
    assert over["losers"] == [1, 2, 3]
    assert over["skunks"] == {"1": "none", "2": "skunk", "3": "double"}
    assert over["scores"] == [121, 91, 90, 60] and not over["draw"] and not over["lowball"]


def test_partnership_win() -> None:
    state, events = heels_win(GameOptions(players=4, partnerships=True), [119, 30],
                              dealer=2)
    over = events[-1]
    assert over["winner"] == 0 and over["winner_seats"] == [0, 2]
    assert over["loser_seats"] == [1, 3] and over["skunks"] == {"1": "double"}


def test_short_game_skunk() -> None:
    _, events = heels_win(GameOptions(target=61), [59, 30])
    assert events[-1]["skunks"] == {"1": "skunk"}


def test_lowball_two_players_reaching_the_target_loses() -> None:
    """docs/rules.md §7.2, §7.3, §7.4: the dealer's heels take him to the target: he loses."""
    _, events = heels_win(GameOptions(lowball=True), [119, 20])
    over = events[-1]
    assert over["winner"] == 1 and over["losers"] == [0] and over["reached_by"] == 0
    assert over["skunks"] == {"0": "none"} and over["lowball"]


def test_lowball_three_players_fewest_wins() -> None:
    _, events = heels_win(GameOptions(players=3, lowball=True), [119, 40, 50])
    over = events[-1]
    assert over["winner"] == 1 and not over["draw"] and over["losers"] == [0, 2]
    assert over["skunks"] == {"0": "none", "2": "none"}


def test_lowball_shared_fewest_is_a_draw() -> None:
    """docs/rules.md §7.3: with 3 or 4 playing alone a shared fewest is a draw."""
    _, events = heels_win(GameOptions(players=4, lowball=True), [119, 50, 50, 80])
    over = events[-1]
    assert over["draw"] and over["winner"] is None and over["winner_seats"] == []
    assert over["losers"] == [0, 3]


def test_lowball_partnerships() -> None:
    _, events = heels_win(GameOptions(players=4, partnerships=True, lowball=True), [0, 119],
                          dealer=1)
    over = events[-1]
    assert over["reached_by"] == 1 and over["winner"] == 0 and over["winner_seats"] == [0, 2]
