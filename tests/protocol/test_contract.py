"""The typed contract cannot drift from the engine (issue 11).

Random games of every table and option combination; after every action:

* every view (each seat and a spectator) validates as :data:`protocol.shapes.View`, also
  with the server's ``turn_clock``, and its ``legal`` is exactly ``engine.legal_actions``;
* every legal action list (each seat and the system's) validates as a list of ``act``
  actions;
* every event validates as an engine event, and redacted for each seat and a spectator as
  a wire event, with the same fields (the redaction table matches the shapes);
* no redacted event (engine or server) shows a seat a card it may not know — what a seat
  may know is worked out here from the rules, event by event, not from the redaction table;
* the hint (``engine.computer.suggest``) of the seat about to act, and of another seat,
  validates as a suggestion;
* server events (``seat_taken``, ``timed_out`` for the action taken, ``computer_standin``,
  ``seat_abandoned``, ``game_abandoned``, ``room_closed``) validate and are redacted as
  the table says.

A sample of the same data is also checked against the committed JSON Schema
(``docs/protocol.schema.json``) with ``jsonschema``, the document other languages use.
"""

from __future__ import annotations

import itertools
import json
import random
import zlib
from functools import cache
from typing import Any

import jsonschema
import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from engine import GameOptions
from engine.computer import suggest
from protocol import shapes
from protocol.events import REDACTIONS, SERVER_EVENT_REDACTIONS, redact
from protocol.schema import SCHEMA_PATH

TABLES = [(2, False), (3, False), (4, False), (4, True)]
ALL_OPTIONS = [
    GameOptions(players=p, partnerships=part, target=t, muggins=m, lowball=lo, backup10=b)
    for (p, part), t, m, lo, b in itertools.product(
        TABLES, (121, 61), (False, True), (False, True), (False, True)
    )
]
ALL_CARDS = frozenset(str(c) for c in engine.FULL_DECK)


def cards_in(data: Any, out: set[str] | None = None) -> set[str]:
    """Every string in ``data`` that is a card's canonical text."""
    out = set() if out is None else out
    if isinstance(data, str):
        if data in ALL_CARDS:
            out.add(data)
    elif isinstance(data, list):
        for v in data:
            cards_in(v, out)
    elif isinstance(data, dict):
        for v in data.values():
            cards_in(v, out)
    return out


class Knowledge:
    """The cards each seat (and a spectator, ``None``) may know in the current deal, by the
    rules (docs/rules.md §2.4, docs/rules.md "Events"), learnt from the unredacted events."""

    def __init__(self, players: int) -> None:
        self.seats: list[int | None] = [None, *range(players)]
        self.known: dict[int | None, set[str]] = {s: set() for s in self.seats}

    def _all(self, cards: Any) -> None:
        for s in self.seats:
            self.known[s] |= cards_in(cards)

    def learn(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "deal":
            for s in self.seats:
                self.known[s] = set(event["hands"][str(s)]) if s is not None else set()
        elif kind == "cut_for_deal":
            self._all(event["cuts"])
        elif kind == "discard":
            self.known[event["seat"]] |= set(event["cards"])
        elif kind == "starter":
            self._all(event["card"])
        elif kind == "play":
            self._all(event["card"])
        elif kind == "show_hand":
            self._all([event["cards"], event["starter"]])
        elif kind == "timed_out":
            action = event["action"]
            if action["type"] == "play":
                self._all(action["card"])
            elif action["type"] == "discard":
                self.known[event["seat"]] |= set(action["cards"])


class Stats:
    """What a run covered (so a test can insist it covered everything)."""

    def __init__(self) -> None:
        self.event_types: set[str] = set()
        self.suggestion_kinds: set[str] = set()
        self.phases: set[str] = set()
        self.redacted_hidden = 0
        self.steps = 0
        self.games = 0


def check_events(
    events: list[dict[str, Any]], know: Knowledge, stats: Stats, *, engine_events: bool = True
) -> None:
    """Validate ``events`` raw and redacted for every seat; the leak check."""
    for event in events:
        kind = event["type"]
        stats.event_types.add(kind)
        if engine_events:
            shapes.ENGINE_EVENT_ADAPTER.validate_python(event)
            assert kind in engine.EVENT_REDACTIONS, kind
        else:
            assert kind in SERVER_EVENT_REDACTIONS, kind
        shapes.EVENT_ADAPTER.validate_python(event)
        assert set(event) <= REDACTIONS[kind].fields(), kind
        know.learn(event)
        for seat in know.seats:
            seen = redact(event, seat)
            shapes.EVENT_ADAPTER.validate_python(seen)
            assert set(seen) == set(event), (kind, seat)
            leaked = cards_in(seen) - know.known[seat]
            assert not leaked, (kind, seat, leaked)
            hidden = cards_in(event) - know.known[seat]
            stats.redacted_hidden += bool(hidden)
            if event.get("seat") == seat and kind != "deal":
                assert seen == event, (kind, seat)


def check_views(state: engine.GameState, stats: Stats) -> dict[int | None, dict[str, Any]]:
    views = {}
    for seat in [None, *range(state.players)]:
        view = engine.view(state, seat)
        with pytest.raises(pydantic.ValidationError):  # the wire view has the turn clock
            shapes.VIEW_ADAPTER.validate_python(view)
        view = dict(view, turn_clock={})
        shapes.VIEW_ADAPTER.validate_python(view)
        legal = engine.legal_actions(state, seat) if seat is not None else []
        assert view["legal"] == legal
        shapes.LEGAL_ADAPTER.validate_python(legal)
        views[seat] = view
    clocked = dict(views[0], turn_clock={"0": 1_795_000_000_000})
    shapes.VIEW_ADAPTER.validate_python(clocked)
    shapes.LEGAL_ADAPTER.validate_python(engine.legal_actions(state, None))
    stats.phases.add(state.phase)
    return views


def check_suggestion(view: dict[str, Any], stats: Stats) -> None:
    suggestion = suggest(view, view["legal"])
    shapes.SUGGESTION_ADAPTER.validate_python(suggestion)
    stats.suggestion_kinds.add(suggestion["kind"])
    if suggestion["best"] is not None:
        assert suggestion["best"] in view["legal"]


def play_game(options: GameOptions, seed: int, rnd: random.Random, stats: Stats,
              *, rematch: bool = False, sink: list | None = None, match: int = 1,
              games_wanted: int | None = None) -> None:
    """One random game (and with ``rematch`` a second; ``games_wanted`` games if given),
    every check after every action; ``match``: best of 1, 3, 5 or 7 (docs/rules.md §8).
    ``sink`` collects views, events and suggestions for the JSON Schema check."""
    limit = games_wanted or (2 if rematch else 1)
    state, events = engine.new_game(options, seed, match=match)
    know = Knowledge(options.players)
    check_events([{"type": "seat_taken", "seat": 0, "name": "Ann"},
                  {"type": "seat_taken", "seat": 1, "name": "Computer (easy)",
                   "kind": "computer", "level": "easy"}], know, stats, engine_events=False)
    check_events(events, know, stats)
    games = 0
    for _ in range(6000 * limit):
        views = check_views(state, stats)
        if state.phase == "game_over":
            games += 1
            stats.games += 1
            if games == limit:
                return
        candidates = [(s, a) for s in [None, *range(state.players)]
                      for a in engine.legal_actions(state, s)]
        if state.phase == "show" and rnd.random() < 0.8:
            candidates = [(s, a) for s, a in candidates if s is not None] or candidates
        if state.phase == "game_over" and state.match and not state.match["over"]:
            # The server's forfeit (docs/rules.md §8.5) is no legal action: offer it here.
            sides = rnd.sample(range(state.options.sides), rnd.randint(1, state.options.sides))
            candidates.append((None, {"type": "forfeit", "sides": sides}))
        seat, action = rnd.choice(candidates)
        if seat is not None:
            check_suggestion(views[seat], stats)
            other = rnd.randrange(state.players)
            if other != seat and rnd.random() < 0.3:
                check_suggestion(views[other], stats)
        state, events = engine.apply(state, seat, action)
        stats.steps += 1
        server: list[dict[str, Any]] = []
        if seat is not None and action["type"] != "rematch" and rnd.random() < 0.2:
            server.append({"type": "timed_out", "seat": seat, "action": action})
        if rnd.random() < 0.02:
            server.append({"type": "computer_standin", "seat": rnd.randrange(state.players),
                           "name": "Bob", "active": rnd.random() < 0.5})
            server.append({"type": "seat_abandoned", "seat": rnd.randrange(state.players),
                           "name": "Bob", "reason": rnd.choice(("away", "turn_clock"))})
            server.append({"type": "game_abandoned", "game_number": state.game_number})
            server.append({"type": "room_closed", "reason": "moderator"})
        check_events(server, know, stats, engine_events=False)
        check_events(events, know, stats)
        if sink is not None and rnd.random() < 0.1:
            sink.append(("View", views[rnd.choice(list(views))]))
            sink.extend(("Event", redact(e, rnd.choice(know.seats))) for e in events + server)
            if seat is not None:
                sink.append(("Suggestion", suggest(views[seat], views[seat]["legal"])))
    raise AssertionError("game did not end in 6000 actions")


@cache
def schema_validator(name: str) -> jsonschema.protocols.Validator:
    """A validator of the committed schema's ``$defs[name]``."""
    document = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema = {"$schema": document["$schema"], "$ref": f"#/$defs/{name}",
              "$defs": document["$defs"]}
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


# -- every table and option combination ---------------------------------------------------
@pytest.mark.parametrize("options", ALL_OPTIONS, ids=lambda o: json.dumps(o.to_dict()))
def test_every_combination(options: GameOptions) -> None:
    """Two whole games (a game and its rematch) of each of the 64 combinations, every
    check after every action; a sample through the committed JSON Schema too."""
    seed = zlib.crc32(json.dumps(options.to_dict()).encode())
    stats, sink = Stats(), []
    match = (1, 3)[seed % 2]  # half of them as the first two games of a best of 3
    play_game(options, seed, random.Random(seed), stats, rematch=True, sink=sink, match=match)
    assert stats.games == 2
    expected = {"game_start", "game_commitment", "cut_for_deal", "deal_commitment", "deal",
                "discard", "starter", "play", "count_reset", "show_hand", "peg", "game_over",
                "seat_taken"}
    if options.effective().plays_muggins:
        expected |= {"announce", "answer", "muggins_result"}
    if match > 1:
        expected |= {"match_score"}
    assert expected <= stats.event_types
    assert stats.redacted_hidden > 0  # the leak check had secrets to keep
    for name, data in sink:
        schema_validator(name).validate(json.loads(json.dumps(data)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.sampled_from(ALL_OPTIONS),
    seed=st.integers(min_value=0, max_value=2**128),
    choices=st.integers(min_value=0, max_value=2**32),
)
def test_random_games(options: GameOptions, seed: int, choices: int) -> None:
    """Many more random games, every check after every action (a third of them as the first
    game of a match)."""
    play_game(options, seed, random.Random(choices), Stats(), match=(1, 1, 5)[choices % 3])


@pytest.mark.slow
# 150 games with rematches (each game and its rematch, every check after every action;
# with test_every_combination and test_random_games about 580 checked games in all):
# 1,000 took 273 s of the suite's 15 minutes on this machine.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.sampled_from(ALL_OPTIONS),
    seed=st.integers(min_value=0, max_value=2**128),
    choices=st.integers(min_value=0, max_value=2**32),
)
def test_random_games_many(options: GameOptions, seed: int, choices: int) -> None:
    """Hundreds of random games with rematches, every check after every action (slow)."""
    play_game(options, seed, random.Random(choices), Stats(), rematch=True)


def test_the_runs_cover_every_type() -> None:
    """Across a few games, every event type, suggestion kind and phase is met (so the
    checks above were exercised on each), and the leak check can fail."""
    stats = Stats()
    for i, options in enumerate(ALL_OPTIONS):
        if options.effective().plays_muggins or options.backup10:
            play_game(options, i, random.Random(i), stats)
    # A best of 3 to its end and a game into the next match: match_score and match_over.
    play_game(GameOptions(target=61), 7, random.Random(7), stats, match=3, games_wanted=4)
    assert stats.event_types == shapes.EVENT_TYPES
    assert stats.suggestion_kinds == {"discard", "play", "announce", "answer", "none"}
    assert stats.phases == set(engine.PHASES)


# -- the redaction table and the shapes -----------------------------------------------------
def test_redaction_table_matches_the_event_shapes() -> None:
    import typing

    by_type = {
        typing.get_args(typing.get_type_hints(e)["type"])[0]: e
        for e in (*shapes.ENGINE_EVENTS, *shapes.SERVER_EVENTS)
    }
    assert set(by_type) == set(REDACTIONS) == shapes.EVENT_TYPES
    for kind, shape in by_type.items():
        assert REDACTIONS[kind].fields() == set(typing.get_type_hints(shape)), kind


def test_an_unknown_event_type_shows_nothing_but_its_type() -> None:
    secret = {"type": "new_thing", "seat": 1, "hand": ["5H", "TD"]}
    for seat in (None, 0, 1):
        assert engine.redact_event(secret, seat) == {"type": "new_thing"}
        assert redact(secret, seat) == {"type": "new_thing"}
    assert engine.redact_event({"seat": 1}, 1) == {"type": None}
    # A server event is unknown to the engine's own table.
    assert engine.redact_event({"type": "seat_taken", "seat": 0, "name": "A"}, 0) == {
        "type": "seat_taken"}


def test_a_field_not_in_the_table_is_dropped() -> None:
    event = {"type": "discard", "seat": 0, "cards": ["5H", "TD"], "count": 2, "kept": ["AS"]}
    assert engine.redact_event(event, 0) == {"type": "discard", "seat": 0,
                                             "cards": ["5H", "TD"], "count": 2}
    assert engine.redact_event(event, 1) == {"type": "discard", "seat": 0, "cards": None,
                                             "count": 2}


def test_timed_out_discard_cards_are_the_seat_s_own() -> None:
    event = {"type": "timed_out", "seat": 2,
             "action": {"type": "discard", "cards": ["5H"]}}
    assert redact(event, 2) == event
    hidden = {"type": "timed_out", "seat": 2, "action": {"type": "discard", "cards": None}}
    for seat in (None, 0, 1, 3):
        assert redact(event, seat) == hidden
        shapes.EVENT_ADAPTER.validate_python(hidden)
    played = {"type": "timed_out", "seat": 2, "action": {"type": "play", "card": "5H"}}
    assert redact(played, 0) == played
    assert event["action"]["cards"] == ["5H"]  # the input is never changed


def test_engine_actions_are_the_act_models() -> None:
    """The engine's action shapes and the models ``act`` takes have the same fields, the
    same required keys and the same ``type``."""
    import typing

    from engine import shapes as es
    from protocol import actions

    pairs = [(es.DiscardAction, actions.DiscardAction), (es.PlayAction, actions.PlayAction),
             (es.AnnounceAction, actions.AnnounceAction), (es.AnswerAction, actions.AnswerAction),
             (es.RematchAction, actions.RematchAction),
             (es.AnswerTimeoutAction, actions.AnswerTimeoutAction),
             (es.ForfeitAction, actions.ForfeitAction)]
    assert {e for e, _ in pairs} == set(typing.get_args(es.Action))
    for shape, model in pairs:
        assert set(typing.get_type_hints(shape)) == set(model.model_fields)
        required = {k for k, f in model.model_fields.items() if f.is_required()}
        assert required == set(shape.__required_keys__), shape
        assert typing.get_type_hints(shape)["type"] == model.model_fields["type"].annotation


def test_phases_are_the_closed_set() -> None:
    import typing

    from engine import shapes as es

    assert engine.PHASES == typing.get_args(es.Phase)
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))["$defs"]["View"]
    assert schema["properties"]["phase"]["enum"] == list(engine.PHASES)


def test_schema_refuses_what_the_models_refuse() -> None:
    """The committed schema is not "any object": a view with a stray field, an event of an
    unknown type, a bad card and an unknown code all fail."""
    state, _ = engine.new_game(GameOptions(players=2), 3)
    view = json.loads(json.dumps(dict(engine.view(state, 0), turn_clock={})))
    schema_validator("View").validate(view)
    for bad in (dict(view, extra=1), dict(view, phase="cut"), dict(view, hand=["5X"]),
                dict(view, legal=[{"type": "discard"}]),
                dict(view, show=dict(view["show"], hands={"7": []}))):
        with pytest.raises(jsonschema.ValidationError):
            schema_validator("View").validate(bad)
    with pytest.raises(jsonschema.ValidationError):
        schema_validator("Event").validate({"type": "new_thing"})
    with pytest.raises(jsonschema.ValidationError):
        schema_validator("ErrorCode").validate("no_such_code")
    schema_validator("RejectCode").validate("action_id_reused")
