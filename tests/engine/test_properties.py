"""Property tests: random legal games across every option combination and player count.

Invariants checked after every action (issue 2): the 52 cards are all accounted for and
distinct; every score stays in 0..target; scores move only by the pegs and back-ups the
events report (so they go down only by Back-up 10, docs/rules.md §6); the game ends exactly when
a target is reached (docs/rules.md §4.3); no view leaks what its seat may not know; every state
survives the plain-data (and JSON) round trip; events are plain data.
"""

from __future__ import annotations

import itertools
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import GameOptions, GameState

TABLES = [(2, False), (3, False), (4, False), (4, True)]
ALL_OPTIONS = [
    GameOptions(players=p, partnerships=part, target=t, muggins=m, lowball=lo, backup10=b)
    for (p, part), t, m, lo, b in itertools.product(
        TABLES, (121, 61), (False, True), (False, True), (False, True)
    )
]
ALL_CARDS = {str(c) for c in engine.FULL_DECK}


def card_strings(data, out: set[str]) -> set[str]:
    """Every string in ``data`` that is a card's canonical text."""
    if isinstance(data, str):
        if data in ALL_CARDS:
            out.add(data)
    elif isinstance(data, list):
        for v in data:
            card_strings(v, out)
    elif isinstance(data, dict):
        for v in data.values():
            card_strings(v, out)
    return out


def check_cards(state: GameState) -> None:
    """52 distinct cards: held + played this deal + crib + starter + pack."""
    cards = [c for h in state.hands for c in h]
    cards += [p["card"] for p in state.played] + state.crib + state.pack
    if state.starter is not None:
        cards.append(state.starter)
    assert len(cards) == 52 and set(cards) == ALL_CARDS
    for seat in range(state.players):
        if state.discards[seat]:
            assert len(state.kept[seat]) == 4
            mine = [p["card"] for p in state.played if p["seat"] == seat]
            assert sorted(mine + state.hands[seat]) == sorted(state.kept[seat])


class Knowledge:
    """What each seat (and a spectator) may know in the current deal, built from the rules,
    not from the view: its own cards, cards laid in the play, the starter, hands and crib
    shown in the show, every kept hand once a Muggins show has begun, a pending crib."""

    def __init__(self) -> None:
        self.shown: set[str] = set()
        self.muggins_show = False

    def update(self, state: GameState, events: list[dict]) -> None:
        for e in events:
            if e["type"] == "deal":
                self.shown = set()
                self.muggins_show = False
            elif e["type"] == "show_hand":
                self.shown.update(e["cards"])
        if state.phase == "show":
            self.muggins_show = True
            self.shown.update(state.show_pending["cards"])

    def allowed(self, state: GameState, seat: int | None) -> set[str]:
        ok = set(self.shown) | {p["card"] for p in state.played}
        if state.starter:
            ok.add(state.starter)
        if self.muggins_show:
            ok.update(c for k in state.kept for c in k)
        if seat is not None:
            ok.update(state.hands[seat], state.kept[seat], state.discards[seat])
        return ok


def check_views(
    state: GameState, events: list[dict], know: Knowledge, seats: list[int | None]
) -> None:
    seed_text = str(state.seed)
    for seat in seats:
        v = engine.view(state, seat)
        text = json.dumps(v)
        assert seed_text not in text
        assert json.loads(text) == v
        public = {k: val for k, val in v.items() if k != "last_show"}
        leaked = card_strings(public, set()) - know.allowed(state, seat)
        assert not leaked, (seat, leaked)
        assert v["hand"] == (state.hands[seat] if seat is not None else [])
        for e in events:
            r = engine.redact_event(e, seat)
            if e["type"] == "deal":
                assert set(r["hands"]) <= ({str(seat)} if seat is not None else set())
            if e["type"] == "discard" and e["seat"] != seat:
                assert r["cards"] is None


def check_scores(before: GameState, after: GameState, events: list[dict]) -> None:
    """Scores move only by the reported pegs and back-ups, and stay in 0..target."""
    target = after.options.target
    running = list(before.scores)
    for e in events:
        if e["type"] == "game_start":
            running = [0] * after.options.sides
        elif e["type"] == "peg":
            assert e["points"] > 0 and e["score_before"] == running[e["side"]]
            assert e["side"] == after.side_of(e["seat"])
            assert e["score_after"] == min(target, e["score_before"] + e["points"])
            running[e["side"]] = e["score_after"]
        elif e["type"] == "backup":
            assert e["side"] == after.side_of(e["seat"])
            assert e["score_before"] == running[e["side"]]
            assert e["holes"] == min(10, e["score_before"])
            assert e["score_after"] == e["score_before"] - e["holes"]
            assert after.options.backup10
            running[e["side"]] = e["score_after"]
    assert running == after.scores
    assert all(0 <= s <= target for s in after.scores)
    reached = [s for s in range(after.options.sides) if after.scores[s] >= target]
    assert (after.phase == "game_over") == bool(reached)
    if after.phase == "game_over" and before.phase != "game_over":
        assert events[-1]["type"] == "game_over" and len(reached) == 1
        assert events[-1]["reached_by"] == reached[0]
        if not after.options.lowball:
            assert events[-1]["winner"] == reached[0]
        else:
            assert reached[0] in events[-1]["losers"]


def check_turn(state: GameState) -> None:
    """In the play only the seat to play has actions, and it always has one (§3.2)."""
    if state.phase == "play":
        for seat in range(state.players):
            legal = engine.legal_actions(state, seat)
            assert bool(legal) == (seat == state.turn)


def play_random_game(
    options: GameOptions, seed: int, rnd: random.Random, *, thorough: bool, rematch: bool
) -> None:
    state, events = engine.new_game(options, seed)
    know = Knowledge()
    know.update(state, events)
    check_cards(state)
    games = 0
    for _ in range(5000):
        if state.phase == "game_over":
            games += 1
            if not rematch or games == 2:
                return
        actors = [None, *range(state.players)]
        candidates = [(s, a) for s in actors for a in engine.legal_actions(state, s)]
        assert candidates
        if state.phase == "show" and rnd.random() < 0.8:
            # answer_timeout should be rare, and most announcements near the truth
            candidates = [(s, a) for s, a in candidates if s is not None] or candidates
        seat, action = rnd.choice(candidates)
        before = state
        state, events = engine.apply(state, seat, action)
        if thorough:
            assert json.loads(json.dumps(events)) == events
        check_scores(before, state, events)
        check_cards(state)
        know.update(state, events)
        if thorough:
            data = json.loads(json.dumps(state.to_dict()))
            assert GameState.from_dict(data) == state
            # a spectator and one seat each step: over a game every seat is checked many times
            check_views(state, events, know, [None, rnd.randrange(state.players)])
            check_turn(state)
        if action["type"] == "rematch":
            assert state.game_number == before.game_number + 1
            assert engine.view(state, None)["games_played"] == games
    raise AssertionError("game did not end in 5000 actions")


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.sampled_from(ALL_OPTIONS),
    seed=st.integers(min_value=2**64, max_value=2**128),
    choices=st.integers(min_value=0, max_value=2**32),
)
def test_random_games_thorough(options: GameOptions, seed: int, choices: int) -> None:
    """Every invariant after every action, including views, redaction and the JSON round
    trip; then a rematch and a second game."""
    play_random_game(options, seed, random.Random(choices), thorough=True, rematch=True)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.sampled_from(ALL_OPTIONS),
    seed=st.integers(min_value=0, max_value=2**128),
    choices=st.integers(min_value=0, max_value=2**32),
)
def test_random_games_many(options: GameOptions, seed: int, choices: int) -> None:
    """Cards, scores and game end after every action, over many more games.

    (The random choices come from a ``random.Random`` seeded by hypothesis rather than
    ``st.randoms()``: a game makes hundreds of choices, which would swamp hypothesis's
    buffer; a failure still reproduces from the printed example.)"""
    play_random_game(options, seed, random.Random(choices), thorough=False, rematch=False)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32), st.sampled_from([2, 3, 4]), st.booleans())
def test_has_move_is_legal_actions_without_rematch(seed: int, players: int, muggins: bool):
    """``has_move`` answers exactly what ``legal_actions`` implies, at every step of a
    random game (and before and after the cache is filled)."""
    rng = random.Random(seed)
    state, _ = engine.new_game(engine.GameOptions(players=players, muggins=muggins), seed)
    for _ in range(400):
        for seat in range(players):
            fresh = engine.has_move(state, seat)
            legal = engine.legal_actions(state, seat)
            assert fresh == engine.has_move(state, seat) == any(
                a["type"] != "rematch" for a in legal)
        if state.phase == "game_over":
            return
        movers = [(s, a) for s in [None, *range(players)]
                  for a in engine.legal_actions(state, s)]
        seat, action = rng.choice(movers)
        state, _ = engine.apply(state, seat, action)
