"""Each seat's summary (``server.archive.summary``) adds up to the game: over random whole
games of every table and option, the holes a side's seats pegged, less the holes Back-up 10
moved them back, are the side's final score; every deal is dealt by one seat and poned by the
others; hands and cribs counted match the show's events."""

from __future__ import annotations

import itertools
import random

import pytest

import engine
from engine import GameOptions
from server.archive.summary import summarize

OPTIONS = [
    GameOptions(players=p, partnerships=part, target=t, muggins=m, lowball=lo, backup10=b)
    for (p, part), t, m, lo, b in itertools.product(
        [(2, False), (3, False), (4, False), (4, True)], (61, 121), (False, True),
        (False, True), (False, True))
]


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: str(o.to_dict()))
def test_a_seats_summary_adds_up_to_its_side_s_score(options: GameOptions) -> None:
    rnd = random.Random(str(options.to_dict()))
    state, events = engine.new_game(options, f"{rnd.getrandbits(64):x}")
    log = list(events)
    while state.phase != "game_over":
        moves = [(s, a) for s in (None, *range(options.players))
                 for a in engine.legal_actions(state, s)]
        if state.phase == "show" and rnd.random() < 0.8:
            moves = [m for m in moves if m[0] is not None] or moves
        state, events = engine.apply(state, *rnd.choice(moves))
        log += events
    rows = summarize(options.players, log)
    holes = [0] * options.sides
    for seat, row in enumerate(rows):
        pegged = sum(row[k] for k in ("dealer_pegging", "dealer_hand", "dealer_crib",
                                      "dealer_heels", "pone_pegging", "pone_hand",
                                      "muggins_taken", "penalty_points"))
        holes[options.side_of(seat)] += pegged - row["backup_holes"]
    assert holes == list(state.scores)
    deals = sum(1 for e in log if e["type"] == "deal")
    assert sum(r["deals_dealt"] for r in rows) == deals
    assert all(r["deals_dealt"] + r["deals_pone"] == deals for r in rows)
    shows = [e for e in log if e["type"] == "show_hand"]
    assert sum(r["hands_counted"] for r in rows) == sum(e["kind"] == "hand" for e in shows)
    assert sum(r["crib_total"] for r in rows) == sum(e["total"] for e in shows
                                                     if e["kind"] == "crib")
    lost = sum(e["caller_pegs"] for e in log if e["type"] == "muggins_result")
    assert sum(r["muggins_lost"] for r in rows) == lost
