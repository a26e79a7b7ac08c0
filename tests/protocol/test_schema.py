"""The committed JSON Schema matches the models; the docs' examples validate."""

from __future__ import annotations

import json
import re
from pathlib import Path

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
                 "Error", "Pong"):
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
            adapter = CLIENT_ADAPTER if item["type"] in CLIENT_TYPES else SERVER_ADAPTER
            adapter.validate_python(item)
            seen.add(item["type"])
    assert CLIENT_TYPES <= seen
