"""The ``expert`` computer level (issue 22): legal, deterministic, view-only; its tables;
near-end choices; its hints never give a Muggins count away. No timed assertions (its
strength and CPU time are measured by bench/duplicate.py)."""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest
from _engine_helpers import discard_all, play_cards, stacked

import engine
from engine import GameOptions
from engine.computer import LEVELS, decide, expert, suggest
from engine.computer.expert import _go_floor, _opp_history, _weigh
from engine.computer.lookahead import StandardModel, model_playout, search
from engine.computer.winprob import (
    crib_ranks,
    keep_chance,
    keep_weights,
    play_value,
    pone_chance,
    win_chance,
)


def plain(view: dict) -> dict:
    return json.loads(json.dumps(view))


def play_game(opts: GameOptions, levels: list[str], seed: str, check=None) -> engine.GameState:
    state, _ = engine.new_game(opts, seed=seed)
    for _ in range(5000):
        if state.phase == "game_over":
            return state
        for seat in range(opts.players):
            legal = engine.legal_actions(state, seat)
            if legal:
                break
        else:
            state, _ = engine.apply(state, None, engine.legal_actions(state, None)[0])
            continue
        view = plain(engine.view(state, seat))
        action = decide(view, legal, levels[seat])
        assert action is not None
        assert action in legal
        if check is not None:
            check(view, legal, action, seat)
        state, _ = engine.apply(state, seat, action)
    raise AssertionError("game did not end")


def test_expert_is_a_level() -> None:
    assert "expert" in LEVELS


@pytest.mark.parametrize(
    "players,partnerships,target",
    [(2, False, 121), (2, False, 61), (3, False, 121), (4, False, 61), (4, True, 61)],
)
def test_expert_plays_legal_and_deterministic(players, partnerships, target) -> None:
    opts = GameOptions(players=players, partnerships=partnerships, target=target)
    levels = ["expert", "standard"] * 2

    def again(view, legal, action, seat):
        if levels[seat] == "expert":
            assert decide(json.loads(json.dumps(view)), legal, "expert") == action

    state = play_game(opts, levels[:players], f"expert-legal-{players}-{target}", again)
    assert state.phase == "game_over"


def test_expert_with_muggins_and_lowball() -> None:
    for flags in ({"muggins": True}, {"lowball": True}, {"backup10": True}):
        opts = GameOptions(players=2, target=61, **flags)
        assert play_game(opts, ["expert", "expert"], f"expert-flags-{flags}").phase == (
            "game_over")


def _two_worlds():
    """Two games whose seat 0 sees the same thing while seat 1's hand differs."""
    mine = ["5H", "6D", "7C", "8S", "KH", "QC"]
    worlds = []
    for theirs in (["AC", "2C", "3C", "4C", "9D", "TD"], ["JD", "JH", "9S", "3D", "2H", "AS"]):
        state, _ = stacked(GameOptions(), dealer=1,
                           deals=[{"hands": {0: mine, 1: theirs}, "starter": "4H"}])
        worlds.append(state)
    return worlds


def test_expert_sees_only_the_view() -> None:
    a, b = _two_worlds()
    assert engine.view(a, 0) == engine.view(b, 0)
    legal = engine.legal_actions(a, 0)
    assert decide(engine.view(a, 0), legal, "expert") == decide(
        engine.view(b, 0), engine.legal_actions(b, 0), "expert")
    # In the play too: the opponent's different cards stay hidden.
    a, _ = discard_all(a, {0: ["KH", "QC"], 1: ["9D", "TD"]})
    b, _ = discard_all(b, {0: ["KH", "QC"], 1: ["9S", "3D"]})
    assert a.turn == b.turn == 0
    assert engine.view(a, 0) == engine.view(b, 0)
    assert decide(engine.view(a, 0), engine.legal_actions(a, 0), "expert") == decide(
        engine.view(b, 0), engine.legal_actions(b, 0), "expert")


@pytest.mark.parametrize("target", [121, 61])
def test_win_table_is_sane(target) -> None:
    for d in range(0, target, 7):
        row = [pone_chance(p, d, target) for p in range(target)]
        assert all(y >= x - 0.01 for x, y in zip(row, row[1:], strict=False)), d
    for p in range(0, target, 7):
        col = [pone_chance(p, d, target) for d in range(target)]
        assert all(y <= x + 0.01 for x, y in zip(col, col[1:], strict=False)), p
    assert pone_chance(target, 0, target) == 1.0
    assert pone_chance(0, target, target) == 0.0
    assert win_chance(target, target - 1, False, target) == 1.0
    assert win_chance(target - 1, target, True, target) == 0.0
    assert 0.35 < pone_chance(0, 0, target) < 0.5  # the first dealer has the edge
    assert pone_chance(target - 1, 0, target) > 0.99
    for s in range(0, target):
        assert 0.0 <= pone_chance(s, s, target) <= 1.0


def test_keep_table_is_a_rational_opponents() -> None:
    """standard keeps 5-5-J-10 (12 holes and more) far likelier than K-9-4-2 (nothing), in
    either role, and four of a kind nearly always."""
    for dealer in (False, True):
        assert keep_chance((5, 5, 11, 10), dealer) > 10 * keep_chance((13, 9, 4, 2), dealer)
        assert keep_chance((13, 9, 4, 2), dealer) < 0.05
        assert keep_chance((1, 1, 1, 1), dealer) > 0.8
        assert keep_chance((5, 5, 13, 12), dealer) > 10 * keep_chance((13, 12, 9, 1), dealer)


@pytest.mark.parametrize("keep", [(1, 2, 3, 4), (5, 5, 10, 11), (7, 8, 8, 13)])
def test_play_table_is_every_rational_keep_played_out(keep) -> None:
    """The discard's play table is exact: this four's pegs against every four the opponent
    may keep, weighed by the ways the rest of the pack makes it times the chance that
    ``standard`` keeps it (its role's), both seats playing as ``standard`` (bench/
    expert_tables.py); the shipped figures are rounded to 1/1000 of a hole."""
    mine = [keep.count(r) for r in range(14)]

    def unseen(four):
        return [0] + [4 - four.count(r) for r in range(1, 14)]

    me = StandardModel(unseen(keep))
    for dealer in (False, True):
        total = my_pegs = their_pegs = 0.0
        for other in itertools.combinations_with_replacement(range(1, 14), 4):
            w = math.prod(math.comb(4 - mine[r], other.count(r)) for r in set(other))
            if not w:
                continue
            w *= keep_chance(other, not dealer)
            a, b = model_playout(keep, other, not dealer,
                                 (me, StandardModel(unseen(other))))
            total += w
            my_pegs += w * a
            their_pegs += w * b
        got = play_value(keep, dealer)
        assert got[0] == pytest.approx(my_pegs / total, abs=0.0006)
        assert got[1] == pytest.approx(their_pegs / total, abs=0.0006)


def test_crib_table_is_a_rational_opponents_throw() -> None:
    """The pone throws the dealer little, the dealer throws its own crib much: the same two
    cards make a smaller crib as the dealer's own (with the pone's throw) than given to
    the opponent's (with its own); fives and pairs make cribs, a king and a queen little."""
    pairs = list(itertools.combinations_with_replacement(range(1, 14), 2))
    smaller = sum(crib_ranks(p, True) < crib_ranks(p, False) for p in pairs)
    assert smaller >= 0.9 * len(pairs)
    for i_deal in (False, True):
        assert crib_ranks((5, 5), i_deal) > crib_ranks((5, 10), i_deal) > crib_ranks(
            (12, 13), i_deal)
        assert crib_ranks((12, 13), i_deal) < 4.5
    # The expert's discard rows carry it, flush and nobs added as standard counts them.
    a, _ = _two_worlds()
    view = engine.view(a, 0)
    rows = expert.rank_discards_expert(view, engine.legal_actions(a, 0))
    for row in rows:
        assert row["crib"] == pytest.approx(
            expert.crib_value(row["cards"], view["dealer"] == 0), abs=0.001)


def test_opp_history_replays_the_counts() -> None:
    """The opponent's plays with the pile and count before each, resets where the next card
    would pass 31 or the count was 31, and the cards that could follow each (none after a
    go)."""
    view = {"seat": 0, "played": [
        {"seat": 1, "card": "TH"}, {"seat": 0, "card": "KD"}, {"seat": 1, "card": "9C"},
        {"seat": 0, "card": "2C"},  # 31: a reset
        {"seat": 1, "card": "5S"}, {"seat": 0, "card": "QD"}, {"seat": 1, "card": "8H"},
        {"seat": 1, "card": "7H"},  # 23 + 7 = 30, same count (seat 0 said go)
    ]}
    hist = _opp_history(view)
    assert [(r, pile, count, mine) for r, pile, count, mine, _ in hist] == [
        (10, (), 0, 4), (9, (10, 13), 20, 3), (5, (), 0, 2), (8, (5, 12), 15, 1),
        (7, (5, 12, 8), 23, 0)]  # after seat 0's go nobody follows the seven
    assert [later for *_, later in hist] == [[10, 9, 5, 8, 7], [9, 5, 8, 7], [5, 8, 7],
                                             [8, 7], [7]]


def test_holdings_that_contradict_the_opponents_play_weigh_less(monkeypatch) -> None:
    """On a count of 11 the opponent laid a king and made nothing: a holding with a four
    (fifteen for 2, which standard takes) is far less likely than kings only."""
    monkeypatch.setattr(expert, "KEEP", False)
    view = {"seat": 0, "dealer": 0, "hand": ["2C", "3C", "4D"], "kept": [],
            "my_discards": ["QC", "QH"], "starter": "AS", "sides": [0, 1],
            "played": [{"seat": 1, "card": "TD"}, {"seat": 0, "card": "AC"},
                       {"seat": 1, "card": "KS"}]}
    weighed = dict(_weigh(view, [((4, 13), 1.0), ((13, 13), 1.0)], 2, random.Random(1), 30))
    # (Both may disagree with the lead of the ten: the model would lead from a pair.)
    assert weighed[(4, 13)] == pytest.approx(expert.AGREE_EPS * weighed[(13, 13)])


def test_tied_plays_by_share(monkeypatch) -> None:
    """I led a five; the opponent laid a king for fifteen. With a queen as well it had two
    equal best cards (standard lays whichever its hand lists first): half the weight of a
    hand whose only fifteen was the king; a hand whose queen was clearly better (two
    queens: fewer left to pair it) is a far mismatch (AGREE_EPS)."""
    monkeypatch.setattr(expert, "KEEP", False)
    view = {"seat": 0, "dealer": 1, "hand": ["2C", "3C", "4D"], "kept": [],
            "my_discards": ["9C", "9H"], "starter": "AS", "sides": [0, 1],
            "played": [{"seat": 0, "card": "5C"}, {"seat": 1, "card": "KS"}]}
    shapes = [(2, 7, 12), (2, 7, 13), (7, 12, 12), (3, 6, 7)]
    weighed = dict(_weigh(view, [(s, 1.0) for s in shapes], 2, random.Random(1), 30))
    assert weighed[(2, 7, 13)] == 1.0 and weighed[(3, 6, 7)] == 1.0
    assert weighed[(2, 7, 12)] == pytest.approx(0.5)
    assert weighed[(7, 12, 12)] == pytest.approx(expert.AGREE_EPS)
    monkeypatch.setattr(expert, "TIES", False)  # the old rule: the model's one card
    weighed = dict(_weigh(view, [(s, 1.0) for s in shapes], 2, random.Random(1), 30))
    # The model's one card is the lower tied rank, the queen: the tie counted as a miss.
    assert weighed[(2, 7, 12)] == pytest.approx(expert.AGREE_EPS)


def test_many_pairs_are_drawn_by_weight(monkeypatch) -> None:
    """Two cards held and more holdings than samples: that many drawn by weight (times
    summing to the samples), the heaviest drawn most; fewer holdings are kept as they are."""
    monkeypatch.setattr(expert, "KEEP", False)
    view = {"seat": 0, "dealer": 1, "hand": ["2C", "3C"], "kept": [], "my_discards": [],
            "starter": "AS", "sides": [0, 1], "played": []}
    shapes = [(a, b) for a in range(1, 14) for b in range(a, 14)][:60]
    holdings = [(s, 10.0 if s == (1, 2) else 1.0) for s in shapes]
    drawn = dict(_weigh(view, holdings, 2, random.Random(3), 20))
    assert sum(drawn.values()) == 20 and len(drawn) < 20
    assert drawn[(1, 2)] == max(drawn.values()) >= 2
    kept = dict(_weigh(view, holdings[:15], 2, random.Random(3), 20))
    assert kept == dict(holdings[:15])


def test_model_chance_and_choice() -> None:
    """StandardModel.chance: tied best ranks by their share of the hand (summing to 1),
    near misses NEAR_EPS, others AGREE_EPS; the model's own choice is the lowest tied."""
    base = [0] + [3] * 13
    model = StandardModel(base)
    hand = (11, 11, 12)  # on a three: jack and queen both make 13, the same replies
    vals = model.values(hand, (3,), 3, 2)
    assert vals[11] == pytest.approx(vals[12])
    assert model.chance(hand, (3,), 3, 2, 11, 0.1, 0.2, 0.03) == pytest.approx(2 / 3)
    assert model.chance(hand, (3,), 3, 2, 12, 0.1, 0.2, 0.03) == pytest.approx(1 / 3)
    assert model.chance(hand, (3,), 3, 2, 5, 0.1, 0.2, 0.03) == 0.03  # not in the hand
    assert model(hand, (3,), 3, (0, 0)) == 11
    # On a count of 27 only the ace fits: one choice, certain.
    assert model.chance((1, 12), (10, 10, 7), 27, 2, 1, 0.1, 0.2, 0.03) == 1.0


def test_keep_weights_enumerate_every_shape() -> None:
    """keep_weights: every shape the counts allow, weighed by its ways times the keep
    chance, exactly as enumerating cards would; none for a shape the counts forbid."""
    rnd = random.Random(7)
    for _ in range(5):
        counts = [0] + [rnd.randint(0, 4) for _ in range(13)]
        for played in ((), (rnd.randint(1, 13),)):
            for dealer in (False, True):
                got = dict(keep_weights(counts, played, dealer))
                want = {}
                for shape in itertools.combinations_with_replacement(range(1, 14),
                                                                     4 - len(played)):
                    ways = 1
                    for r in set(shape):
                        ways *= math.comb(counts[r], shape.count(r))
                    w = ways * keep_chance((*played, *shape), dealer)
                    if w:
                        want[shape] = w
                assert got.keys() == want.keys()
                for shape, w in want.items():
                    assert got[shape] == pytest.approx(w)
    with pytest.raises(ValueError):
        keep_weights([0] + [4] * 13, (1, 2), False)


def test_search_counts_the_play() -> None:
    # One card each on a count of 10: my five makes fifteen (2), their ten 25 and the last
    # card (1).
    assert search((5,), (10,), 10, (10,), True, False) == 2 - 1
    mine, theirs = model_playout((5, 5, 10, 10), (5, 10, 10, 10), True)
    assert mine + theirs > 0


def test_go_floor_from_the_play() -> None:
    view = {"seat": 0, "played": [{"seat": 0, "card": "TH"}, {"seat": 1, "card": "KD"},
                                  {"seat": 0, "card": "9C"}, {"seat": 0, "card": "2C"}],
            "go": [False, True], "count": 31}
    # The opponent said go at 29: it holds nothing under 3.
    assert _go_floor(view) == 3


def _deal_at(scores: list[int]) -> engine.GameState:
    """A deal at these scores, seat 0 dealing, both discards made (starter 3C)."""
    state, _ = stacked(GameOptions(), dealer=0, scores=scores, deals=[{
        "hands": {1: ["5C", "4D", "4H", "KC", "QS", "JS"],
                  0: ["KD", "9D", "8C", "2S", "AH", "AD"]},
        "starter": "3C"}])
    state, _ = discard_all(state, {0: ["AH", "AD"], 1: ["QS", "JS"]})
    return state


def test_expert_takes_the_game_ending_peg() -> None:
    # Both sides at 119: seat 1 (pone) leads a king, seat 0 pairs it for the game.
    state = _deal_at([119, 119])
    state, _ = play_cards(state, ["KC"])
    assert state.turn == 0
    view = engine.view(state, 0)
    legal = engine.legal_actions(state, 0)
    best = decide(view, legal, "expert")
    assert best["card"] == "KD"  # a pair: 2 holes, the game
    # Its hint agrees and gives the chance to win near the end.
    hint = suggest(view, legal, "expert")
    assert hint["best"] == best
    assert hint["choices"][0]["win"] == 1.0


def test_near_end_discard_plays_for_the_game() -> None:
    # Pone at 115 needs 6 before the dealer's count: the expert keeps the surer hand.
    cards = ["KH", "4S", "6S", "JC", "JS", "8D"]
    state, _ = stacked(GameOptions(), dealer=1, scores=[115, 100], deals=[{
        "hands": {0: cards, 1: ["AC", "2C", "3C", "7D", "9H", "TS"]}}])
    view = engine.view(state, 0)
    legal = engine.legal_actions(state, 0)
    expert = suggest(view, legal, "expert")
    standard = suggest(view, legal, "standard")
    assert expert["kind"] == "discard"
    rows = {tuple(c["cards"]): c for c in expert["choices"]}
    chosen = rows[tuple(expert["best"]["cards"])]
    assert all(chosen["win"] >= r["win"] for r in rows.values())
    assert chosen["win"] >= rows[tuple(standard["best"]["cards"])]["win"]
    for row in expert["choices"]:
        assert set(row) == {"cards", "expected", "hand", "crib", "play", "win"}


def test_expert_hint_shapes_far_from_the_end() -> None:
    a, _ = _two_worlds()
    hint = suggest(engine.view(a, 0), engine.legal_actions(a, 0), "expert")
    assert hint["kind"] == "discard" and len(hint["choices"]) == 15
    assert set(hint["choices"][0]) == {"cards", "expected", "hand", "crib", "play"}
    a, _ = discard_all(a, {0: ["KH", "QC"], 1: ["9D", "TD"]})
    hint = suggest(engine.view(a, 0), engine.legal_actions(a, 0), "expert")
    assert hint["kind"] == "play"
    assert set(hint["choices"][0]) == {"card", "points", "reply", "stuck", "value"}
    assert hint["best"] in engine.legal_actions(a, 0)


def test_expert_hint_never_gives_a_muggins_count() -> None:
    opts = GameOptions(players=2, muggins=True, target=61)
    seen = set()

    def check(view, legal, action, seat):
        hint = suggest(view, legal, "expert")
        seen.add(hint["kind"])
        if hint["kind"] == "announce":
            assert set(hint) == {"goal", "kind", "counting", "best"} and hint["best"] is None
        if hint["kind"] == "answer":
            assert set(hint) == {"goal", "kind", "counting", "announced", "best"}
            assert hint["best"] is None

    play_game(opts, ["expert", "standard"], "expert-muggins", check)
    assert {"announce", "answer"} <= seen


def test_expert_hints_fit_the_suggestion_schema() -> None:
    # The wire's own model of a suggestion (protocol is part of this repository: no skip).
    from protocol import shapes

    opts = GameOptions(players=2, target=61, muggins=True)
    kinds = set()

    def check(view, legal, action, seat):
        hint = suggest(view, legal, "expert")
        shapes.SUGGESTION_ADAPTER.validate_python(hint)
        kinds.add(hint["kind"])

    play_game(opts, ["expert", "expert"], "expert-schema", check)
    near, _ = stacked(GameOptions(), dealer=1, scores=[115, 100], deals=[{
        "hands": {0: ["KH", "4S", "6S", "JC", "JS", "8D"]}}])
    shapes.SUGGESTION_ADAPTER.validate_python(
        suggest(engine.view(near, 0), engine.legal_actions(near, 0), "expert"))
    assert {"discard", "play", "announce", "answer"} <= kinds


def test_near_end_play_breaks_ties_by_the_margin(monkeypatch) -> None:
    """Near the end a line of play is worth its chance to win plus expert.TILT per hole of
    pegging margin (a tie-break), and a hint's chance stays within 0..1."""
    state = _deal_at([100, 96])
    view = engine.view(state, 1)
    assert expert.near_end(view) and expert.TILT > 0
    tilted = expert._show_leaf(view, (13, 9, 8, 2))
    monkeypatch.setattr(expert, "TILT", 0.0)
    plain_leaf = expert._show_leaf(view, (13, 9, 8, 2))
    for me, them in [(0, 0), (4, 1), (1, 6), (9, 2)]:
        assert 0.0 <= plain_leaf(me, them) <= 1.0
        assert tilted(me, them) == pytest.approx(plain_leaf(me, them) + 0.002 * (me - them))
    monkeypatch.undo()
    for row in suggest(view, engine.legal_actions(state, 1), "expert")["choices"]:
        assert 0.0 <= row["win"] <= 1.0


def test_a_forced_card_near_the_end_gets_its_chance_to_win() -> None:
    """Near the end even a play without a choice is given its chance to win in a hint (the
    hint says a chance there, never points); a computer seat just plays it."""
    state = _deal_at([100, 96])
    state, _ = play_cards(state, ["KC", "KD", "5C"])  # 25: of 9D 8C 2S only 2S fits
    assert state.turn == 0
    view = engine.view(state, 0)
    legal = engine.legal_actions(state, 0)
    assert [a["card"] for a in legal] == ["2S"]
    assert expert.near_end(view)
    hint = suggest(view, legal, "expert")
    (row,) = hint["choices"]
    assert 0.0 < row["win"] < 1.0 and row["value"] == row["win"]
    assert decide(view, legal, "expert") is legal[0]
    # Far from the end a forced card keeps standard's points (nothing to search).
    far = _deal_at([10, 6])
    far, _ = play_cards(far, ["KC", "KD", "5C"])
    (row,) = suggest(engine.view(far, 0), engine.legal_actions(far, 0), "expert")["choices"]
    assert "win" not in row


def test_under_muggins_a_play_hint_near_the_end_tells_no_chance_to_win(monkeypatch) -> None:
    """Near the end the expert plays for the chance to win, which rests on the seat's own
    show counted exactly: under Muggins, where counting it is the player's task, the hint
    is ranked as far from the end, says the pegging margin and no chance (an outside check
    read the count back from the chance in 189 of 272 late hints, and from the chance's
    order alone narrowed it in 41 % of them): the seat's own show is never looked at."""
    def position(muggins: bool) -> tuple[dict, list]:
        state, _ = stacked(GameOptions(muggins=muggins), dealer=0, scores=[100, 96], deals=[{
            "hands": {1: ["5C", "4D", "4H", "KC", "QS", "JS"],
                      0: ["KD", "9D", "8C", "2S", "AH", "AD"]},
            "starter": "3C"}])
        state, _ = discard_all(state, {0: ["AH", "AD"], 1: ["QS", "JS"]})
        return engine.view(state, 1), engine.legal_actions(state, 1)

    plain = suggest(*position(False), "expert")
    assert all("win" in row for row in plain["choices"])
    view, legal = position(True)
    assert expert.near_end(view)

    def no_show(*_args: object) -> None:
        raise AssertionError("the seat's own show was valued")

    monkeypatch.setattr(expert, "_show_leaf", no_show)
    hidden = suggest(view, legal, "expert")
    assert not any("win" in row for row in hidden["choices"])
    far = expert.rank_plays_expert(view, legal, near=False)
    assert [r["card"] for r in hidden["choices"]] == [r["card"] for r in far]
    assert hidden["best"] == far[0]["action"]
    # Each card's value is the search's pegging margin alone.
    margins = {r["card"]: r["value"] for r in expert.rank_plays_expert(
        view, legal, near=False, ends=False)}
    assert {r["card"]: r["value"] for r in hidden["choices"]} == margins
    assert any(abs(v) > 0.05 for v in margins.values())
    monkeypatch.undo()
    # Where a side can reach the target in the play, the values stay a number of holes
    # (the margin with the game's end left out counted a game won or lost as 200 holes,
    # and a hint said a card "costs about 29 points": an outside check).
    for scores in ([117, 118], [119, 119], [115, 119]):
        state, _ = stacked(GameOptions(muggins=True), dealer=0, scores=scores, deals=[{
            "hands": {1: ["5C", "4D", "4H", "KC", "QS", "JS"],
                      0: ["KD", "9D", "8C", "2S", "AH", "AD"]},
            "starter": "3C"}])
        state, _ = discard_all(state, {0: ["AH", "AD"], 1: ["QS", "JS"]})
        rows = suggest(engine.view(state, 1), engine.legal_actions(state, 1), "expert")
        assert all(abs(r["value"]) < 31 and "win" not in r for r in rows["choices"]), rows
