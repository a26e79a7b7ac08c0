"""The committed JSON Schema matches the models; the docs' examples validate."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from protocol import schema
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
                 "RoomSettingsModel", "SeatInfo"):
        assert name in defs


def test_protocol_doc_examples_validate():
    """Every ```json block of docs/protocol.md that is a message validates."""
    text = (DOCS / "protocol.md").read_text(encoding="utf-8")
    seen = set()
    for block in re.findall(r"```json\n(.*?)```", text, re.S):
        try:
            data = json.loads(block)
        except ValueError:
            continue
        items = data if isinstance(data, list) else [data]
        for item in items:
            if not isinstance(item, dict) or "type" not in item:
                continue
            # ("hint" is both a client and a server message type.)
            adapters = [SERVER_ADAPTER]
            if item["type"] in CLIENT_TYPES:
                adapters.insert(0, CLIENT_ADAPTER)
            for i, adapter in enumerate(adapters):
                try:
                    adapter.validate_python(item)
                    break
                except ValidationError:
                    if i == len(adapters) - 1:
                        raise
            seen.add(item["type"])
    assert CLIENT_TYPES <= seen
