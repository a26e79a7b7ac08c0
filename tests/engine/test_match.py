"""Match play (docs/rules.md §8, engine.match): game points of every ending (ACC rule 12.1),
the spread, the majority, the first dealer of every game of a match, ``forfeit`` and a new
match after one is over, at every table kind (2, 3, 4 playing alone, 2 partnerships).

Games are ended quickly and for real: every deal is stacked so that the starter is a jack,
and the dealer's side is put two holes short of the target, so his heels ends the game at
the cut (docs/rules.md §2.5, §4.3). ``win_by`` makes a given seat the dealer of that deal
(the seat that deals the last hand of a game is then the one that pegged out), which is a
state the rules reach, so the next game's first dealer follows from it as in play.
"""

from __future__ import annotations

import copy

import pytest
from _engine_helpers import of_type

import engine
from engine import GameOptions, GameState, RulesError
from engine.match import game_points, game_spread, new_match

TABLES = {
    "2": GameOptions(players=2),
    "3": GameOptions(players=3),
    "4": GameOptions(players=4),
    "2x2": GameOptions(players=4, partnerships=True),
}


def jack_deck(options: GameOptions) -> list[str]:
    """A pack whose starter is the jack of hearts (any dealer: the starter's place in the
    pack does not depend on who deals)."""
    return engine.deck_for(options, 0, starter="JH")


def start(options: GameOptions, best_of: int, first_dealer: int | None = 0,
          seed: str = "match") -> tuple[GameState, list[dict]]:
    return engine.new_game(options, seed, first_dealer=first_dealer,
                           decks=[jack_deck(options)], match=best_of)


def win_by(state: GameState, seat: int, others: int | list[int] = 100
           ) -> tuple[GameState, list[dict]]:
    """End the game with ``seat``'s side pegging out on his heels. ``others``: the final
    score of every other side (one number, or a list per side; the winner's entry is
    ignored)."""
    assert state.phase == "discard" and state.pack[0] == "JH"
    opts = state.options
    target = opts.target
    side = opts.side_of(seat)
    scores = [others] * opts.sides if isinstance(others, int) else list(others)
    scores[side] = target - 2
    state = state.clone()
    state.dealer = seat
    state.scores = list(scores)
    state.previous_scores = list(scores)
    return discard_all(state)


def reach_by(state: GameState, seat: int, others: list[int]) -> tuple[GameState, list[dict]]:
    """Lowball: ``seat``'s side reaches the target (and so loses) on his heels."""
    return win_by(state, seat, others)


def discard_all(state: GameState) -> tuple[GameState, list[dict]]:
    events: list[dict] = []
    k = state.options.discard_count
    for seat in range(state.players):
        if state.phase != "discard":
            break
        state, ev = engine.apply(state, seat, {"type": "discard", "cards": state.hands[seat][:k]})
        events += ev
    return state, events


def rematch(state: GameState, seat: int = 0) -> tuple[GameState, list[dict]]:
    state = state.clone()
    state.decks = [jack_deck(state.options)]
    return engine.apply(state, seat, {"type": "rematch"})


def types(events: list[dict]) -> list[str]:
    return [e["type"] for e in events]


# -- game points and spread (ACC 12.1, docs/rules.md §8.2, §8.3) ----------------------------
ENDINGS = [
    # (table, options, winner seat, other sides' scores, points per side, spread per side)
    ("2", {}, 0, [0, 100], [2, 0], [21, -21]),
    ("2", {}, 1, [91, 0], [0, 2], [-30, 30]),
    ("2", {}, 0, [0, 90], [3, 0], [31, -31]),            # skunk
    ("2", {}, 0, [0, 61], [3, 0], [60, -60]),            # skunk, one hole from double
    ("2", {}, 1, [60, 0], [0, 3], [-61, 61]),            # double skunk: still 3
    ("2", {"target": 61}, 0, [0, 31], [2, 0], [30, -30]),
    ("2", {"target": 61}, 0, [0, 30], [3, 0], [31, -31]),  # skunk to 61
    ("3", {}, 0, [0, 100, 95], [2, 0, 0], [21, -21, -26]),
    ("3", {}, 2, [110, 89, 0], [0, 0, 3], [-11, -32, 11]),  # one loser skunked: 3
    ("3", {}, 1, [40, 0, 30], [0, 3, 0], [-81, 81, -91]),   # double skunks
    ("4", {}, 3, [100, 99, 98, 0], [0, 0, 0, 2], [-21, -22, -23, 21]),
    ("4", {}, 0, [0, 120, 50, 91], [3, 0, 0, 0], [1, -1, -71, -30]),
    ("2x2", {}, 1, [105, 0], [0, 2], [-16, 16]),
    ("2x2", {}, 2, [0, 75], [3, 0], [46, -46]),
    ("2x2", {}, 3, [20, 0], [0, 3], [-101, 101]),
]


@pytest.mark.parametrize(("table", "extra", "seat", "others", "points", "spread"), ENDINGS)
def test_game_points_and_spread_of_a_win(table, extra, seat, others, points, spread):
    """A win 2, a win with any loser skunked or double skunked 3, a loss 0 (ACC 12.1); the
    winner's spread is the lead over the nearest loser, each loser's its deficit."""
    opts = GameOptions(**{**TABLES[table].to_dict(), **extra})
    state, _ = start(opts, 3)
    state, events = win_by(state, seat, others)
    assert types(events)[-2:] == ["game_over", "match_score"]
    side = opts.side_of(seat)
    game = state.match["games"][-1]
    assert game == {"game_number": 1, "winner": side, "points": points, "spread": spread,
                    "forfeit": []}
    assert state.match["wins"] == [int(s == side) for s in range(opts.sides)]
    assert state.match["points"] == points and state.match["spread"] == spread
    assert not state.match["over"] and state.match["winner"] is None
    assert game_points(state.result, opts.sides) == points
    assert game_spread(state.result, opts.sides) == spread


@pytest.mark.parametrize(("table", "seat", "others", "winner", "points", "spread"), [
    ("2", 0, [0, 30], 1, [0, 2], [-91, 91]),
    ("2", 1, [10, 0], 0, [2, 0], [111, -111]),       # no skunk in Lowball, however far
    ("3", 0, [0, 50, 40], 2, [0, 0, 2], [-81, -10, 10]),
    ("4", 2, [90, 80, 0, 85], 1, [0, 2, 0, 0], [-10, 5, -41, -5]),
    ("2x2", 3, [7, 0], 0, [2, 0], [114, -114]),
])
def test_game_points_in_lowball(table, seat, others, winner, points, spread):
    """Lowball (docs/rules.md §7): the side that reaches the target loses; the winner (fewest
    holes) scores 2, never 3 (no skunks, §7.4); the spread is the distance in holes."""
    opts = GameOptions(**{**TABLES[table].to_dict(), "lowball": True})
    state, _ = start(opts, 3)
    state, events = reach_by(state, seat, others)
    over = of_type(events, "game_over")[0]
    assert over["winner"] == winner and over["reached_by"] == opts.side_of(seat)
    game = state.match["games"][-1]
    assert game["winner"] == winner and game["points"] == points and game["spread"] == spread
    assert state.match["wins"][winner] == 1


@pytest.mark.parametrize("table", ["3", "4"])
def test_a_drawn_lowball_game_scores_nothing_and_is_nobodys_win(table):
    """3 or 4 playing alone in Lowball, two sharing the fewest holes: a draw (§7.3) — 0
    game points and 0 spread for everyone, no win; the match goes on to its next game."""
    opts = GameOptions(**{**TABLES[table].to_dict(), "lowball": True})
    others = [50] * opts.sides
    state, _ = start(opts, 3)
    state, events = reach_by(state, 0, others)
    assert of_type(events, "game_over")[0]["draw"] is True
    assert state.match["games"] == [{"game_number": 1, "winner": None,
                                     "points": [0] * opts.sides, "spread": [0] * opts.sides,
                                     "forfeit": []}]
    assert state.match["wins"] == [0] * opts.sides and not state.match["over"]
    assert "match_over" not in types(events)
    # Draws never end a match: three draws, then three games won, in a best of 3.
    for _ in range(2):
        state, _ = rematch(state)
        state, _ = reach_by(state, 0, others)
    assert len(state.match["games"]) == 3 and not state.match["over"]
    state, _ = rematch(state)
    state, _ = reach_by(state, 0, [0] + [40] + [60] * (opts.sides - 2))
    state, _ = rematch(state)
    state, events = reach_by(state, 0, [0, 20] + [60] * (opts.sides - 2))
    assert state.match["over"] and state.match["winner"] == 1
    assert state.match["wins"] == [0, 2] + [0] * (opts.sides - 2)
    assert types(events)[-3:] == ["game_over", "match_score", "match_over"]


@pytest.mark.parametrize("table", list(TABLES))
def test_back_up_10_ending_judges_skunks_on_the_score_after_backing_up(table):
    """Back-up 10 (docs/rules.md §6): a loser moved back from 95 to 85 by a scoreless hand
    ends skunked, so the winner scores 3 (ACC 12.1 on the final score)."""
    opts = GameOptions(**{**TABLES[table].to_dict(), "backup10": True})
    n = opts.players
    zero = ["2C", "4D", "6H", "8S", "TC", "QD"][: opts.hand_size]
    hands = {1: zero}
    if n == 4:  # seat 3 (seat 1's partner in partnerships) counts nothing either
        hands[3] = ["2D", "4H", "6S", "8C", "TD"]
    deck = engine.deck_for(opts, 0, hands=hands, starter="KS")
    state, _ = engine.new_game(opts, "bk", first_dealer=0, decks=[deck, jack_deck(opts)],
                               match=3)
    state = state.clone()
    state.scores = [0] * opts.sides
    state.scores[opts.side_of(1)] = 95
    state.previous_scores = list(state.scores)
    k = opts.discard_count
    discards = {1: zero[-k:], 3: ["TD"]} if n == 4 else {1: zero[-k:]}
    for seat in range(n):
        cards = discards.get(seat, state.hands[seat][:k])
        state, _ = engine.apply(state, seat, {"type": "discard", "cards": cards})
    events: list[dict] = []
    while state.phase == "play":
        action = engine.legal_actions(state, state.turn)[0]
        state, ev = engine.apply(state, state.turn, action)
        events += ev
    backups = [e for e in of_type(events, "backup") if e["seat"] == 1 and e["kind"] == "hand"]
    assert backups and backups[0]["score_before"] >= 95
    loser = state.scores[opts.side_of(1)]
    assert loser <= 90, "the scoreless hand must have moved the loser into skunk range"
    assert state.phase == "discard" and state.pack[0] == "JH"
    winner = next(s for s in range(n) if opts.side_of(s) != opts.side_of(1))
    others = list(state.scores)
    state, events = win_by(state, winner, others)
    game = state.match["games"][-1]
    assert game["points"][opts.side_of(winner)] == 3
    assert of_type(events, "game_over")[0]["skunks"][str(opts.side_of(1))] != "none"


# -- the majority, the events, the dealers -------------------------------------------------
@pytest.mark.parametrize("table", list(TABLES))
@pytest.mark.parametrize("best_of", [3, 5, 7])
def test_a_side_that_wins_the_majority_wins_the_match(table, best_of):
    """The match ends when a side has ``best_of // 2 + 1`` wins (§8.1): ``match_over`` after
    ``match_score`` after ``game_over``, in the same apply; the totals are the sums."""
    opts = TABLES[table]
    needed = best_of // 2 + 1
    state, _ = start(opts, best_of)
    assert state.match == new_match(best_of, opts.sides)
    assert state.match["needed"] == needed
    # Side 1 wins one game, then side 0 wins ``needed`` in a row.
    state, events = win_by(state, 1)
    for i in range(needed):
        assert "match_over" not in types(events)
        state, _ = rematch(state)
        assert state.game_number == i + 2
        state, events = win_by(state, 0)
    match = state.match
    assert match["over"] and match["winner"] == 0 and match["reason"] == "won"
    assert len(match["games"]) == needed + 1
    assert [g["game_number"] for g in match["games"]] == list(range(1, needed + 2))
    assert match["wins"][:2] == [needed, 1]
    assert match["points"] == [sum(g["points"][s] for g in match["games"])
                               for s in range(opts.sides)]
    assert match["spread"] == [sum(g["spread"][s] for g in match["games"])
                               for s in range(opts.sides)]
    assert types(events)[-3:] == ["game_over", "match_score", "match_over"]
    score = events[-2]
    assert {k: v for k, v in score.items() if k != "type"} == match
    assert events[-1] == {"type": "match_over", "winner": 0, "winner_seats": opts.seats_of(0),
                          "wins": match["wins"], "points": match["points"],
                          "spread": match["spread"], "reason": "won"}
    # Once the match is over, nothing but a rematch (a new match) or nothing at all.
    with pytest.raises(RulesError) as err:
        engine.apply(state, None, {"type": "forfeit", "sides": [1]})
    assert err.value.code == "wrong_phase"


def dealers_of(events: list[dict]) -> tuple[int, str]:
    cut = of_type(events, "cut_for_deal")[0]
    return cut["dealer"], cut["reason"]


def test_two_players_the_loser_of_each_game_deals_the_next():
    """2 players (§8.4, as §2.1's rematch): the first game is cut for, the loser of each
    game deals first in the next; a new match after one is over is cut for again."""
    opts = TABLES["2"]
    state, events = start(opts, 5, first_dealer=None)
    cut = of_type(events, "cut_for_deal")[0]
    assert cut["reason"] == "cut" and cut["cuts"]
    expected = []
    seen = []
    for winner in (0, 1, 1, 0, 1):
        state, _ = win_by(state, winner)
        if state.match["over"]:
            break
        state, events = rematch(state)
        seen.append(dealers_of(events))
        expected.append((1 - winner, "loser_deals"))
    assert seen == expected
    assert state.match["over"] and state.match["winner"] == 1
    state, events = rematch(state)
    assert dealers_of(events)[1] == "cut" and of_type(events, "cut_for_deal")[0]["cuts"]
    assert state.match["number"] == 2 and state.match["games"] == []


def test_partnerships_the_losing_side_deals_from_the_last_dealers_left():
    """2 partnerships (§8.4, §2.1): the losing side's first seat clockwise from the left of
    the previous game's last dealer deals first."""
    opts = TABLES["2x2"]
    state, _ = start(opts, 7)
    for winner, dealer in [(0, 1), (2, 3), (1, 2), (3, 0), (2, 3)]:
        state, _ = win_by(state, winner)
        state, events = rematch(state)
        assert dealers_of(events) == (dealer, "loser_deals")
        assert state.dealer == dealer


@pytest.mark.parametrize("table", ["3", "4"])
def test_three_or_four_alone_cut_again_before_every_game(table):
    """3 or 4 playing alone (§8.4, §2.1): every later game of a match is cut for, and the
    cut is the game's own (different games, different cuts, all shown)."""
    opts = TABLES[table]
    state, _ = start(opts, 7)
    cuts = []
    for winner in (0, 1, 2, 0, 1, 2):
        state, _ = win_by(state, winner)
        state, events = rematch(state)
        cut = of_type(events, "cut_for_deal")[0]
        assert cut["reason"] == "cut" and cut["cuts"]
        assert cut["dealer"] == state.dealer
        lowest = min(engine.Card.parse(c["card"]).rank for c in cut["cuts"][-1])
        assert engine.Card.parse(next(c["card"] for c in cut["cuts"][-1]
                                      if c["seat"] == cut["dealer"])).rank == lowest
        cuts.append(cut["cuts"])
    assert len({str(c) for c in cuts}) > 1


# -- forfeit (§8.5) ------------------------------------------------------------------------
def test_forfeit_ends_the_match_against_the_forfeiting_side():
    opts = TABLES["2"]
    state, _ = start(opts, 3)
    state, _ = win_by(state, 1)          # the leaver had won the first game
    before = copy.deepcopy(state.to_dict())
    new, events = engine.apply(state, None, {"type": "forfeit", "sides": [1]})
    assert state.to_dict() == before
    assert types(events) == ["match_score", "match_over"]
    match = new.match
    assert match["over"] and match["winner"] == 0 and match["reason"] == "forfeit"
    assert match["forfeited"] == [1] and match["games"][-1]["forfeit"] == [1]
    assert match["wins"] == [0, 1]   # the games stand as played
    assert events[-1]["reason"] == "forfeit" and events[-1]["winner_seats"] == [0]
    assert new.phase == "game_over"
    with pytest.raises(RulesError) as err:
        engine.apply(new, None, {"type": "forfeit", "sides": [0]})
    assert err.value.code == "wrong_phase"
    new, events = rematch(new)
    assert new.match["number"] == 2 and new.match["games"] == [] and not new.match["over"]
    assert dealers_of(events)[1] == "cut"


def test_forfeit_at_three_alone_ranks_the_rest_by_wins_points_spread():
    opts = TABLES["3"]
    state, _ = start(opts, 5)
    state, _ = win_by(state, 0, 100)      # 0: 1 win, 2 points
    state, _ = rematch(state)
    state, _ = win_by(state, 1, 80)       # 1: 1 win, 3 points (skunks)
    new, events = engine.apply(state, None, {"type": "forfeit", "sides": [2]})
    assert new.match["winner"] == 1 and events[-1]["winner_seats"] == [1]
    new, _ = engine.apply(state, None, {"type": "forfeit", "sides": [1]})
    assert new.match["winner"] == 0 and new.match["forfeited"] == [1]
    new, _ = engine.apply(state, None, {"type": "forfeit", "sides": [2, 1]})
    assert new.match["winner"] == 0 and new.match["forfeited"] == [1, 2]
    new, events = engine.apply(state, None, {"type": "forfeit", "sides": [0, 1, 2]})
    assert new.match["winner"] is None and events[-1]["winner_seats"] == []


def test_forfeit_leaving_level_sides_has_no_winner():
    opts = TABLES["4"]
    state, _ = start(opts, 3)
    state, _ = win_by(state, 3, 100)
    new, events = engine.apply(state, None, {"type": "forfeit", "sides": [3]})
    assert new.match["winner"] is None and new.match["over"]
    assert events[-1]["winner"] is None and events[-1]["reason"] == "forfeit"


def test_forfeit_partnerships_names_a_side():
    opts = TABLES["2x2"]
    state, _ = start(opts, 3)
    state, _ = win_by(state, 0)
    new, events = engine.apply(state, None, {"type": "forfeit", "sides": [0]})
    assert new.match["winner"] == 1 and events[-1]["winner_seats"] == [1, 3]


@pytest.mark.parametrize(("sides", "code"), [
    ([], "bad_action"), ([2], "bad_action"), ([0, 0], "bad_action"), ([True], "bad_action"),
    ("0", "bad_action"), (None, "bad_action"), ([-1], "bad_action"),
])
def test_forfeit_refuses_bad_sides(sides, code):
    state, _ = start(TABLES["2"], 3)
    state, _ = win_by(state, 0)
    with pytest.raises(RulesError) as err:
        engine.apply(state, None, {"type": "forfeit", "sides": sides})
    assert err.value.code == code


def test_forfeit_only_by_the_system_at_game_over_of_a_match():
    state, _ = start(TABLES["2"], 3)
    with pytest.raises(RulesError) as err:
        engine.apply(state, None, {"type": "forfeit", "sides": [1]})
    assert err.value.code == "wrong_phase"    # the game is not over
    over, _ = win_by(state, 0)
    with pytest.raises(RulesError) as err:
        engine.apply(over, 1, {"type": "forfeit", "sides": [1]})
    assert err.value.code == "system_only"
    single, _ = engine.new_game(TABLES["2"], "one", first_dealer=0,
                                decks=[jack_deck(TABLES["2"])])
    single, _ = win_by(single, 0)
    with pytest.raises(RulesError) as err:
        engine.apply(single, None, {"type": "forfeit", "sides": [1]})
    assert err.value.code == "bad_action"
    assert {"type": "forfeit", "sides": [1]} not in engine.legal_actions(over, None)
    assert engine.legal_actions(over, None) == []


# -- a new match after match_over, best of 1, plain data ---------------------------------
@pytest.mark.parametrize("table", list(TABLES))
def test_a_rematch_after_the_match_is_over_starts_a_new_match(table):
    opts = TABLES[table]
    state, _ = start(opts, 3)
    for _ in range(2):
        state, _ = win_by(state, 1)
        if not state.match["over"]:
            state, _ = rematch(state)
    assert state.match["over"] and state.match["winner"] == opts.side_of(1)
    state, events = rematch(state, seat=opts.players - 1)
    assert state.game_number == 3 and state.phase == "discard"
    assert state.match == {**new_match(3, opts.sides), "number": 2}
    assert dealers_of(events)[1] == "cut"
    assert "match_score" not in types(events)
    state, events = win_by(state, 0)
    assert state.match["games"][0]["game_number"] == 3 and state.match["wins"][0] == 1


def test_best_of_one_is_a_single_game_as_before():
    opts = TABLES["2"]
    state, events = engine.new_game(opts, "one", first_dealer=0, decks=[jack_deck(opts)],
                                    match=1)
    plain, plain_events = engine.new_game(opts, "one", first_dealer=0, decks=[jack_deck(opts)])
    assert state == plain and events == plain_events and state.match is None
    assert "match" not in engine.view(state, 0) and "match" not in engine.view(state, None)
    state, events = win_by(state, 0)
    assert types(events)[-1] == "game_over"
    state, events = rematch(state)
    assert state.match is None and "match_score" not in types(events)


@pytest.mark.parametrize("bad", [0, 2, 4, 9, True, "3", None, 3.0])
def test_new_game_refuses_a_bad_match_length(bad):
    with pytest.raises(ValueError):
        engine.new_game(TABLES["2"], "x", match=bad)


def test_state_round_trips_and_a_state_stored_before_matches_loads():
    state, _ = start(TABLES["3"], 5)
    state, _ = win_by(state, 2)
    data = state.to_dict()
    assert GameState.from_dict(data) == state
    assert GameState.from_dict(data).match == state.match
    old = {k: v for k, v in data.items() if k != "match"}
    assert GameState.from_dict(old).match is None
    with pytest.raises(ValueError):
        GameState.from_dict({**data, "matches": None})


def test_view_shows_the_match_to_every_seat_and_spectators_alike():
    state, _ = start(TABLES["4"], 3)
    state, events = win_by(state, 1)
    views = [engine.view(state, s) for s in (0, 1, 2, 3, None)]
    assert all(v["match"] == state.match for v in views)
    assert views[0]["match"] is not state.match     # a copy
    for event in events[-1:]:
        for seat in (0, 3, None):
            assert engine.redact_event(event, seat) == event
    before, before_view = state, views[0]
    after, _ = rematch(state)
    since = engine.view(after, 0, since=(before, before_view))
    assert since == engine.view(after, 0)
    assert since["match"] is before_view["match"]   # unchanged: shared by identity


def test_apply_never_changes_the_input_match():
    state, _ = start(TABLES["2"], 3)
    state, _ = win_by(state, 0)
    kept = copy.deepcopy(state.match)
    nxt, _ = rematch(state)
    nxt, _ = win_by(nxt, 0)
    assert state.match == kept and nxt.match["over"]
    nxt2, _ = rematch(nxt)
    assert nxt.match["over"] and nxt2.match["number"] == 2
