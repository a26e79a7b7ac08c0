"""The committed JSON Schema matches the models; the docs' examples validate."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import jsonschema
import pytest
from pydantic import TypeAdapter, ValidationError

import engine
from protocol import codes, schema, shapes
from protocol.actions import Action
from protocol.http import HttpError, RoomCreatedBody, RoomSummary
from protocol.messages import CLIENT_ADAPTER, CLIENT_TYPES, SERVER_ADAPTER

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_schema_file_is_up_to_date():
    assert schema.SCHEMA_PATH.exists(), "run python -m protocol.schema"
    assert schema.SCHEMA_PATH.read_text(encoding="utf-8") == schema.render(), (
        "docs/protocol.schema.json is out of date: run python -m protocol.schema"
    )
    assert schema.main(["--check"]) == 0


def test_schema_covers_every_message():
    defs = json.loads(schema.render())["$defs"]
    for name in ("Hello", "CreateRoom", "Join", "Act", "Resync", "Leave", "Ping", "Welcome",
                 "RoomCreated", "Snapshot", "Update", "Ack", "Reject", "Presence", "Left",
                 "Error", "Pong", "SetComputer", "HintRequest", "Hint", "RoomSettings",
                 "RoomSettingsModel", "SeatInfo", "View", "Event", "Action", "Suggestion",
                 "Options", "GameResult", "RoomSummary", "RoomCreatedBody", "HttpError",
                 "ErrorCode", "RejectCode", "HttpErrorCode", "PegEvent", "TimedOutEvent",
                 "SeatTakenEvent", "ComputerStandinEvent", "MugginsResultEvent"):
        assert name in defs


MARKER = re.compile(r"^<!--\s*(?:json:\s*(\w+)|(abridged)\b.*?)\s*-->$")

EXAMPLE_TYPES: dict[str, TypeAdapter] = {
    "View": shapes.VIEW_ADAPTER,
    "Event": shapes.EVENT_ADAPTER,
    "Events": TypeAdapter(list[shapes.Event]),
    "Action": TypeAdapter(Action),
    "Suggestion": shapes.SUGGESTION_ADAPTER,
    "Options": shapes.OPTIONS_ADAPTER,
    "RoomSummary": TypeAdapter(RoomSummary),
    "RoomCreatedBody": TypeAdapter(RoomCreatedBody),
    "HttpError": TypeAdapter(HttpError),
}


def json_blocks(name: str) -> list[tuple[int, str | None, str]]:
    """``(line, marker, text)`` of every json code block of ``docs/<name>``: ``marker`` is
    the type named by a ``<!-- json: Type -->`` line right before the block,
    ``"abridged"`` for ``<!-- abridged ... -->``, else None."""
    lines = (DOCS / name).read_text(encoding="utf-8").splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```json":
            start = i
            i += 1
            body = []
            while lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            found = MARKER.match(lines[start - 1].strip()) if start else None
            marker = (found.group(1) or found.group(2)) if found else None
            blocks.append((start + 1, marker, "\n".join(body)))
        i += 1
    return blocks


@cache
def schema_validator(name: str) -> jsonschema.protocols.Validator:
    document = json.loads(schema.render())
    root = {"$schema": document["$schema"], "$ref": f"#/$defs/{name}",
            "$defs": document["$defs"]}
    return jsonschema.validators.validator_for(root)(root)


def validate_named(marker: str, data: object) -> None:
    """``data`` is a valid ``marker`` (a name of :data:`EXAMPLE_TYPES`), for the models
    and for the committed JSON Schema."""
    EXAMPLE_TYPES[marker].validate_python(data)
    if marker == "Events":
        assert isinstance(data, list) and data
        for item in data:
            schema_validator("Event").validate(item)
    else:
        schema_validator(marker).validate(data)


def validate_message(item: dict) -> None:
    # ("hint" is both a client and a server message type.)
    adapters = [(SERVER_ADAPTER, "ServerMessage")]
    if item["type"] in CLIENT_TYPES:
        adapters.insert(0, (CLIENT_ADAPTER, "ClientMessage"))
    for i, (adapter, name) in enumerate(adapters):
        try:
            adapter.validate_python(item)
        except ValidationError:
            if i == len(adapters) - 1:
                raise
            continue
        schema_validator(name).validate(item)
        return


def test_protocol_doc_examples_validate():
    """Every json block of docs/protocol.md is a message (or names its type), valid for
    the models and for the committed JSON Schema. The one block marked abridged (a
    snapshot whose view is cut short) is checked with its view set to null: everything
    else in it must be whole."""
    seen = set()
    skipped = named = 0
    for line, marker, text in json_blocks("protocol.md"):
        data = json.loads(text)
        if marker == "abridged":
            skipped += 1
            assert data["type"] == "snapshot" and data["view"], f"protocol.md:{line}"
            validate_message(dict(data, view=None))
            continue
        if marker is not None:
            validate_named(marker, data)
            named += 1
            continue
        assert isinstance(data, dict) and "type" in data, f"protocol.md:{line}"
        validate_message(data)
        seen.add(data["type"])
    assert CLIENT_TYPES <= seen
    assert {"snapshot", "update", "hint", "reject", "error"} <= seen
    assert skipped == 1  # the first snapshot, whose view is abridged (checked without it)
    assert named == 3  # the room summary, the HTTP error and the clocked view


def test_rules_doc_examples_validate():
    """Every json block of docs/rules.md names its type and validates (models and JSON
    Schema); the annotated view is the one abridged block."""
    checked = skipped = 0
    for line, marker, text in json_blocks("rules.md"):
        assert marker is not None, f"rules.md:{line}: name the block's type or mark it abridged"
        if marker == "abridged":
            skipped += 1
            continue
        validate_named(marker, json.loads(text))
        checked += 1
    assert skipped == 1 and checked >= 4


# -- codes --------------------------------------------------------------------------------
ROOT = DOCS.parent
CODE_PATTERNS = [
    re.compile(r'RoomError\(\s*"(\w+)"'),
    re.compile(r'ProtocolError\(\s*"(\w+)"'),
    re.compile(r'\.error\(\s*"(\w+)"'),
    re.compile(r'"code":\s*"(\w+)"'),
    re.compile(r'_error\(\s*\d+,\s*"(\w+)"'),
]


def test_every_code_the_code_base_sends_is_in_the_closed_set():
    """Scan the server and the codec for codes: each is listed in protocol/codes.py (or
    is one of its server-internal codes)."""
    found: dict[str, str] = {}
    files = sorted((ROOT / "server").rglob("*.py")) + [ROOT / "protocol" / "codec.py"]
    for path in files:
        text = path.read_text(encoding="utf-8")
        for pattern in CODE_PATTERNS:
            for code in pattern.findall(text):
                found.setdefault(code, str(path.relative_to(ROOT)))
    assert {"bad_frame", "room_not_found", "hello_required", "not_started"} <= set(found)
    unknown = {c: f for c, f in found.items()
               if c not in codes.MEANINGS and c not in codes.INTERNAL_MEANINGS}
    assert not unknown, f"codes missing from protocol/codes.py: {unknown}"


def test_codes_are_complete_and_documented():
    assert set(codes.ENGINE_MEANINGS) == set(engine.CODES)
    assert set(codes.ERROR_CODES) <= set(codes.MEANINGS)
    assert set(codes.REJECT_CODES) >= set(engine.CODES)
    assert set(codes.REJECT_CODES) <= set(codes.MEANINGS)
    assert set(codes.HTTP_ERROR_CODES) <= set(codes.MEANINGS)
    every = set(codes.ERROR_CODES) | set(codes.REJECT_CODES) | set(codes.HTTP_ERROR_CODES)
    assert every == set(codes.MEANINGS)
    text = (DOCS / "protocol.md").read_text(encoding="utf-8") + (
        DOCS / "rules.md").read_text(encoding="utf-8")
    missing = sorted(c for c in codes.MEANINGS if f"`{c}`" not in text)
    assert not missing, f"codes not documented in docs/: {missing}"
    for code in ("outcome_unknown", "store_unavailable", "action_id_reused"):
        assert code in codes.REJECT_CODES


def test_error_and_reject_codes_are_closed():
    SERVER_ADAPTER.validate_python({"type": "error", "code": "busy", "message": "m"})
    SERVER_ADAPTER.validate_python({"type": "reject", "action_id": "a", "code":
                                    "action_id_reused", "message": "m"})
    for frame in ({"type": "error", "code": "no_such_code", "message": "m"},
                  {"type": "reject", "action_id": "a", "code": "hello_required",
                   "message": "m"}):
        with pytest.raises(ValidationError):
            SERVER_ADAPTER.validate_python(frame)


def test_transcript_frames_validate():
    """Every frame of the transcript in docs/protocol.md (a real run) is a valid message,
    for the models and for the committed JSON Schema; its views carry ``legal``."""
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    body = text.split("<!-- transcript:start -->", 1)[1].split("<!-- transcript:end -->")[0]
    frames = [line[2:] for line in body.splitlines() if line[:2] in ("→ ", "← ")]
    assert len(frames) > 20
    views = 0
    for frame in frames:
        data = json.loads(frame)
        validate_message(data)
        for op in data.get("patch", []):
            if op["path"] == "":
                views += 1
                assert op["value"]["legal"][0]["type"] == "discard"
    assert views == 1


def test_patch_values_are_any_json_value():
    """A patch's ``value`` is the empty schema (any JSON value), not a titled schema that
    code generators read as an object; the generated TypeScript says ``unknown``."""
    defs = json.loads(schema.render())["$defs"]
    for name in ("AddOperation", "ReplaceOperation"):
        assert defs[name]["properties"]["value"] == {}, name
        validator = schema_validator(name)
        for value in (17, "5H", ["5H"], None, True, {"a": 1}):
            validator.validate({"op": name[:-9].lower(), "path": "/x", "value": value})
    types = (ROOT / "clients" / "js" / "types" / "protocol.d.ts").read_text(encoding="utf-8")
    for name in ("AddOperation", "ReplaceOperation"):
        body = types.split(f"export interface {name} {{", 1)[1].split("}", 1)[0]
        assert "value: unknown;" in body, body


def test_act_takes_client_actions_with_canonical_cards():
    """``act`` takes the actions a seat may send (no ``answer_timeout``) with cards in the
    form views use; the schema says the same."""
    act = schema_validator("ClientMessage")
    ok = {"type": "act", "action_id": "a1", "action": {"type": "play", "card": "TD"}}
    CLIENT_ADAPTER.validate_python(ok)
    act.validate(ok)
    for action in ({"type": "answer_timeout"}, {"type": "play", "card": "10D"},
                   {"type": "play", "card": "td"}, {"type": "discard", "cards": ["5H", "ZZ"]}):
        bad = dict(ok, action=action)
        with pytest.raises(ValidationError):
            CLIENT_ADAPTER.validate_python(bad)
        with pytest.raises(jsonschema.ValidationError):
            act.validate(bad)
    defs = json.loads(schema.render())["$defs"]
    client_action = {k: v for k, v in defs["ClientAction"].items() if k != "title"}
    inline = {k: v for k, v in defs["Act"]["properties"]["action"].items() if k != "title"}
    assert inline == client_action
    assert "answer_timeout" not in client_action["discriminator"]["mapping"]
    card = defs["PlayAction"]["properties"]["card"]
    assert card["pattern"] == engine.shapes.CARD_PATTERN
