"""Grading a game's decisions against the computer (issue 22 point 4;
``server.archive.grading``), on games built here with the engine and logged as the archive
keeps them: a deliberately bad discard costs points, the grader's own choices cost none,
accuracy stays in 0..100, the computer's moves for a human seat are not counted, and the
grading is the same every time."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import pytest

import engine
from engine import rng
from engine.computer import decide
from server.archive import grading


def seeds_for(name: str, n: int = 40) -> list[str]:
    return [hashlib.sha256(f"{name}:{i}".encode()).hexdigest()[:32] for i in range(n)]


def play(options: engine.GameOptions, seeds: list[str], chooser: Any
         ) -> list[dict[str, Any]]:
    """A whole game from stacked packs, logged like the room's log: the start, then one
    entry per action (``chooser(view, legal, seat, n) -> (action, auto)``)."""
    decks = [rng.shuffled_pack(bytes.fromhex(s)) for s in seeds]
    state, events = engine.new_game(options, "test", first_dealer=0, decks=decks)
    entries: list[dict[str, Any]] = [{"v": 1, "events": events}]
    while state.phase != "game_over":
        moved = False
        for seat in range(options.players):
            legal = engine.legal_actions(state, seat)
            if not legal:
                continue
            action, auto = chooser(engine.view(state, seat), legal, seat, len(entries))
            if action is None:
                continue
            state, events = engine.apply(state, seat, action)
            entry = {"v": len(entries) + 1, "seat": seat, "action": action, "events": events,
                     "id": f"auto-{len(entries)}" if auto else f"a{len(entries)}"}
            entries.append(entry)
            moved = True
            break
        if not moved:
            legal = engine.legal_actions(state, None)
            assert legal, state.phase
            state, events = engine.apply(state, None, legal[0])
            entries.append({"v": len(entries) + 1, "seat": None, "action": legal[0],
                            "events": events})
    return entries


def standard(view, legal, seat, n):  # noqa: ANN001, ANN201
    return decide(view, legal, grading.GRADER_LEVEL), False


def test_the_grader_s_own_choices_cost_nothing() -> None:
    options = engine.GameOptions(players=2, target=61)
    seeds = seeds_for("own")
    graded = grading.grade_game(options.to_dict(), play(options, seeds, standard), seeds)
    assert graded["grader"] == grading.GRADER_LEVEL
    assert graded["moves"] and all(m["cost"] == 0 for m in graded["moves"])
    kinds = {m["kind"] for m in graded["moves"]}
    assert kinds == {"discard", "play"}
    for row in graded["seats"]:
        assert row["decisions"] > 0 and row["exact"] == row["decisions"]
        assert row["accuracy"] == 100.0 and row["cost"] == 0


def test_a_bad_discard_costs_points_and_the_better_one_is_named() -> None:
    """Seat 0 lays away the two cards the grader likes least in every deal; it costs."""
    options = engine.GameOptions(players=2, target=61)
    seeds = seeds_for("bad")

    def worst(view, legal, seat, n):  # noqa: ANN001, ANN202
        if seat == 0 and view["phase"] == "discard":
            least = sorted(grading.ranker(view, legal)[-1]["cards"])
            return next(a for a in legal if sorted(a["cards"]) == least), False
        return decide(view, legal, grading.GRADER_LEVEL), False

    entries = play(options, seeds, worst)
    graded = grading.grade_game(options.to_dict(), entries, seeds, ["human", "human"])
    discards = [m for m in graded["moves"] if m["kind"] == "discard"]
    mine = [m for m in discards if m["seat"] == 0]
    assert mine and all(m["cost"] > 0 for m in mine)
    for m in mine:
        assert m["best"] != m["chosen"]
        if "win_cost" in m:  # near the end: the chance to win it gave up, in points
            assert m["win_cost"] > 0 and m["cost"] >= m["win_cost"]
            continue
        assert m["best_value"] > m["chosen_value"]
        assert m["cost"] == pytest.approx(min(grading.COST_CAP,
                                              m["best_value"] - m["chosen_value"]), abs=2e-3)
        assert m["choices"] == 15 and m["by"] == "player"
    assert all(m["cost"] == 0 for m in discards if m["seat"] == 1)
    seat0, seat1 = graded["seats"]
    assert 0 <= seat0["accuracy"] < seat1["accuracy"] == 100.0
    assert seat0["cost"] >= sum(m["cost"] for m in mine) - 1e-6
    assert seat0["exact"] < seat0["decisions"]
    # deterministic: the same game, the same grading (also through the pool's entry point)
    again = grading.grade_archived(options.to_dict(), entries, seeds, ["human", "human"])
    assert again == graded


@pytest.mark.parametrize("players,partnerships,lowball", [
    (2, False, True), (3, False, False), (4, True, False), (4, False, True)])
def test_accuracy_is_in_range_at_every_table(players: int, partnerships: bool,
                                             lowball: bool) -> None:
    options = engine.GameOptions(players=players, partnerships=partnerships, target=61,
                                 lowball=lowball)
    seeds = seeds_for(f"t{players}{partnerships}{lowball}")
    rnd = random.Random(players)

    def mixed(view, legal, seat, n):  # noqa: ANN001, ANN202
        if seat % 2 and view["phase"] in ("discard", "play"):
            return rnd.choice(legal), seat == 3
        return decide(view, legal, grading.GRADER_LEVEL), False

    entries = play(options, seeds, mixed)
    kinds = ["human"] * players
    graded = grading.grade_game(options.to_dict(), entries, seeds, kinds)
    assert graded == grading.grade_game(options.to_dict(), entries, seeds, kinds)
    for row in graded["seats"]:
        if row["decisions"]:
            assert 0 <= row["accuracy"] <= 100
            assert row["exact"] <= row["decisions"]
    assert graded["seats"][0]["accuracy"] == 100.0  # the grader's own level
    for m in graded["moves"]:
        assert m["cost"] >= 0 and m["choices"] >= 2
        assert (m["cost"] == 0) == (m["best"] == m["chosen"])
    if players == 4 and not partnerships:
        # seat 3's moves were the server's (auto- ids): listed, not counted
        assert graded["seats"][3]["decisions"] == 0
        assert graded["seats"][3]["accuracy"] is None
        assert graded["seats"][3]["computer_moves"] == sum(
            1 for m in graded["moves"] if m["seat"] == 3) > 0
        assert all(m["by"] == "computer" for m in graded["moves"] if m["seat"] == 3)


def test_the_accuracy_mapping() -> None:
    assert grading.accuracy([]) is None
    assert grading.accuracy([0.0, 0.0]) == 100.0
    assert grading.accuracy([1.0]) == 50.0
    assert grading.accuracy([0.0, 3.0]) == 62.5


def test_a_game_that_does_not_replay_is_not_graded() -> None:
    out = grading.grade_archived({"players": 2}, [{"v": 1, "events": []}], [], ["human", "human"])
    assert out["error"] and out["seats"] == [] and out["moves"] == []
    options = engine.GameOptions(players=2, target=61)
    seeds = seeds_for("noseed")
    entries = play(options, seeds, standard)
    out = grading.grade_archived(options.to_dict(), entries, [None, *seeds[1:]], ["human", "human"])
    assert "seed" in out["error"]


def _first_discard(options: engine.GameOptions, name: str) -> tuple[dict, list[dict]]:
    seeds = seeds_for(name)
    decks = [rng.shuffled_pack(bytes.fromhex(s)) for s in seeds]
    state, _ = engine.new_game(options, "test", first_dealer=0, decks=decks)
    return engine.view(state, 1), engine.legal_actions(state, 1)


def test_lowball_grades_in_the_rankings_own_order() -> None:
    """In Lowball (docs/rules.md §7) the fewest points are best: the discard the ranking
    puts last (the most expected points) costs what it gives over the first."""
    view, legal = _first_discard(engine.GameOptions(players=2, target=61, lowball=True), "lo")
    rows = grading.ranker(view, legal)
    assert rows[0]["value"] < rows[-1]["value"]
    last = next(a for a in legal if sorted(a["cards"]) == sorted(rows[-1]["cards"]))
    graded = grading.grade_decision(view, legal, last)
    assert graded["cost"] == pytest.approx(min(grading.COST_CAP,
                                               rows[-1]["value"] - rows[0]["value"]), abs=2e-3)
    first = next(a for a in legal if sorted(a["cards"]) == sorted(rows[0]["cards"]))
    assert grading.grade_decision(view, legal, first)["cost"] == 0


def test_the_ranking_is_a_parameter() -> None:
    """Another ranking (the expert's, later: ``GRADER_LEVEL``) grades through the same
    function; a chance to win, when given, is kept as ``win_cost``."""
    view, legal = _first_discard(engine.GameOptions(players=2, target=121), "param")
    choices = [a for a in legal if a["type"] == "discard"]

    def reversed_rank(view, legal):  # noqa: ANN001, ANN202
        rows = list(reversed(grading.ranker(view, legal)))
        return [{**r, "value": -r["value"], "win": 0.5 - i / 1000} for i, r in enumerate(rows)]

    own = grading.grade_decision(view, legal, choices[0], reversed_rank)
    top = reversed_rank(view, legal)[0]["cards"]
    assert own["best"] == top or own["cost"] == 0
    assert "win_cost" in own and own["win_cost"] >= 0
    chosen = next(a for a in choices if sorted(a["cards"]) == sorted(top))
    assert grading.grade_decision(view, legal, chosen, reversed_rank)["cost"] == 0


def test_near_the_end_the_cost_is_the_chance_to_win_in_points() -> None:
    """Where the ranking goes by the chance to win, ``win_cost`` is the chance given up and
    ``cost`` that chance over what a hole is worth at the decision's scores; under 0.1 % it
    is as good as the best."""
    view, legal = _first_discard(engine.GameOptions(players=2, target=121), "near")
    view = {**view, "scores": [100, 96]}
    choices = [a for a in legal if a["type"] == "discard"]
    wins = [0.6, 0.6 - 0.0005, 0.55]

    def by_chance(view, legal):  # noqa: ANN001, ANN202
        # points that disagree with the chance: only the chance may decide the cost
        return [{"cards": list(a["cards"]), "value": float(i), "win": w}
                for i, (a, w) in enumerate(zip(choices, wins, strict=False))]

    worth = grading.hole_worth(view)
    assert grading.HOLE_FLOOR <= worth < 0.1
    lost = grading.grade_decision(view, legal, choices[2], by_chance)
    assert lost["win_cost"] == pytest.approx(0.05)
    assert lost["cost"] == pytest.approx(0.05 / worth, abs=1e-3)
    assert lost["best"] == choices[0]["cards"]
    close = grading.grade_decision(view, legal, choices[1], by_chance)
    assert close["cost"] == 0 and close["best"] == close["chosen"]
    # A hole is worth more to the chance to win when the scores are level near the end
    # than when one side is far ahead; never less than the floor.
    level = grading.hole_worth({**view, "scores": [100, 100]})
    settled = grading.hole_worth({**view, "scores": [119, 60]})
    assert level > grading.hole_worth({**view, "scores": [110, 80]}) >= settled
    assert settled == grading.HOLE_FLOOR


def test_a_game_graded_by_the_expert_near_its_end() -> None:
    """A whole 2-player game to 61, one side laying a random card: every move the expert
    ranked by the chance to win carries it, and its cost follows it (cost 0 exactly when
    under 0.1 %; otherwise between the chance and the chance at the floor's rate)."""
    options = engine.GameOptions(players=2, target=61)
    seeds = seeds_for("late")
    rnd = random.Random(61)

    def mixed(view, legal, seat, n):  # noqa: ANN001, ANN202
        if seat == 1 and view["phase"] in ("discard", "play"):
            return rnd.choice(legal), False
        return decide(view, legal, "standard"), False

    graded = grading.grade_game(options.to_dict(), play(options, seeds, mixed), seeds)
    late = [m for m in graded["moves"] if "win_cost" in m]
    assert late and {m["kind"] for m in late} == {"discard", "play"}
    for m in late:
        if m["win_cost"] < grading.WIN_EXACT:
            # as good as the best: its own best, with its own value, nothing given up
            assert m["cost"] == 0 and m["best"] == m["chosen"] and m["win_cost"] == 0
            assert m["best_value"] == m["chosen_value"]
        else:
            assert m["win_cost"] - 1e-3 <= m["cost"] <= min(
                grading.COST_CAP, m["win_cost"] / grading.HOLE_FLOOR + 1e-3)
            assert m["best"] != m["chosen"]


def _play_decisions(options: engine.GameOptions, name: str, games: int = 3
                    ) -> list[tuple[dict, list[dict]]]:
    """Every play decision (view, legal) of ``games`` games the grader's level plays against
    itself."""
    seen: list[tuple[dict, list[dict]]] = []

    def record(view, legal, seat, n):  # noqa: ANN001, ANN202
        if view["phase"] == "play":
            seen.append((view, legal))
        return decide(view, legal, grading.GRADER_LEVEL), False

    for game in range(games):
        play(options, seeds_for(f"{name}-{game}"), record)
    return seen


def _rank(card: str) -> int:
    return engine.Card.parse(card).rank


@pytest.mark.parametrize("players,lowball", [(3, False), (2, True), (4, False)])
def test_cards_of_one_rank_are_one_choice_in_the_play(players: int, lowball: bool) -> None:
    """The play never counts a suit (docs/rules.md §3): cards of one rank are one choice, so
    a turn whose cards are all one rank is not graded, ``choices`` counts ranks, and the
    best rank laid in another suit is the best."""
    options = engine.GameOptions(players=players, target=121, lowball=lowball)
    only_one_rank = mixed = 0
    for view, legal in _play_decisions(options, f"ranks{players}{lowball}"):
        cards = [a["card"] for a in legal if a["type"] == "play"]
        ranks = {_rank(c) for c in cards}
        graded = [grading.grade_decision(view, legal, {"type": "play", "card": c})
                  for c in cards]
        if len(ranks) == 1:
            only_one_rank += len(cards) > 1
            assert graded == [None] * len(cards)
            continue
        if len(cards) > len(ranks):
            mixed += 1
        best = grading.ranker(view, legal)[0]["cards"][0]
        for card, g in zip(cards, graded, strict=True):
            assert g is not None and g["choices"] == len(ranks)
            if _rank(card) == _rank(best):
                assert g["cost"] == 0 and g["best"] == [card]
                assert g["best_value"] == g["chosen_value"]
    assert only_one_rank and mixed  # the seeds reach both cases


@pytest.mark.parametrize("players,lowball", [(3, False), (2, True), (4, False)])
def test_a_tie_break_costs_nothing(players: int, lowball: bool) -> None:
    """Where the expert plays as ``standard`` (3 or 4 players, Lowball), a card's cost is
    its points without ``standard``'s tie-breaks (keep low cards, never lead a five, lead
    from a pair; high cards first in Lowball): a card that differs from the computer's
    choice only by a tie-break costs nothing, and the computer's own choice never costs."""
    from engine.computer import suggest
    from engine.computer.pegging import rank_plays

    options = engine.GameOptions(players=players, target=121, lowball=lowball)
    tie_only = 0
    for view, legal in _play_decisions(options, f"ties{players}{lowball}"):
        cards = [a["card"] for a in legal if a["type"] == "play"]
        if len({_rank(c) for c in cards}) < 2:
            continue
        top = suggest(view, legal, grading.GRADER_LEVEL)["best"]["card"]
        with_ties = {r["card"]: r["value"] for r in rank_plays(view, legal)}
        points = {r["card"]: r["value"] for r in rank_plays(view, legal, tiebreaks=False)}
        for card in cards:
            g = grading.grade_decision(view, legal, {"type": "play", "card": card})
            gap = points[top] - points[card]
            if gap < grading.EXACT:
                assert g["cost"] == 0 and g["best"] == [card], (card, top, g)
                if _rank(card) != _rank(top) and with_ties[card] < with_ties[top] - 0.01:
                    tie_only += 1
            else:
                assert g["cost"] == pytest.approx(min(grading.COST_CAP, gap), abs=2e-3)
                assert g["best"] == [top]
    assert tie_only  # the seeds reach a card worse only by a tie-break



def test_a_rematch_is_graded_from_the_views_the_seats_had() -> None:
    """A room's second game (a rematch) is graded from views that name it game 2, as the
    seats' own views and hints did: the expert's search is seeded by the game's number, so
    a replay that called it game 1 sampled other holdings and graded the expert's own plays
    (and a player who followed every hint) as costing points."""
    options = engine.GameOptions(players=2, target=61)
    decks = [rng.shuffled_pack(bytes.fromhex(s)) for s in seeds_for("rematch")]
    state, _ = engine.new_game(options, "test", first_dealer=0, decks=decks[:1])
    while state.phase != "game_over":
        seat = next(s for s in range(2) if engine.legal_actions(state, s))
        state, _ = engine.apply(state, seat, decide(engine.view(state, seat),
                                                    engine.legal_actions(state, seat)))
    events: list[dict[str, Any]] = []
    for seat in range(2):
        if state.phase == "game_over":
            state, events = engine.apply(state, seat, {"type": "rematch"})
    assert state.game_number == 2
    entries: list[dict[str, Any]] = [{"v": 1, "events": events}]
    live: list[dict[str, Any]] = []  # each decision graded from the seat's own live view
    while state.phase != "game_over":
        seat = next((s for s in range(2) if engine.legal_actions(state, s)), None)
        legal = engine.legal_actions(state, seat)
        action = legal[0] if seat is None else decide(engine.view(state, seat), legal,
                                                      grading.GRADER_LEVEL)
        if seat is not None and action["type"] in grading.GRADED_KINDS:
            graded = grading.grade_decision(engine.view(state, seat), legal, action)
            if graded is not None:
                live.append(graded)
        state, new = engine.apply(state, seat, action)
        entries.append({"v": len(entries) + 1, "seat": seat, "action": action,
                        "events": new, "id": f"a{len(entries)}"})
    deals = sorted({e["deal_number"] for entry in entries for e in entry["events"]
                    if e.get("type") == "deal_commitment"})
    deal_seeds = [rng.deal_seed("test", 2, d).hex() for d in deals]
    graded = grading.grade_game(options.to_dict(), entries, deal_seeds)
    moves = [{k: v for k, v in m.items() if k not in ("deal", "seat", "by")}
             for m in graded["moves"]]
    assert len(moves) > 20
    assert moves == live
    assert all(m["cost"] == 0 for m in moves)
    assert [row["accuracy"] for row in graded["seats"]] == [100.0, 100.0]
    # The archive's own number (games.game_number) serves where the log names none.
    bare = [{**entries[0], "events": [e for e in entries[0]["events"]
                                      if e.get("type") != "game_start"]}, *entries[1:]]
    assert grading.grade_game(options.to_dict(), bare, deal_seeds, number=2) == graded
    assert grading.grade_game(options.to_dict(), bare, deal_seeds)["moves"] != graded["moves"]
