"""One rule for close codes: the table in docs/protocol.md "Reconnecting", the bot's
``RECONNECT_CLOSE_CODES`` and the JavaScript client's are the same set."""

from __future__ import annotations

import re
from pathlib import Path

from protocol.bot import RECONNECT_CLOSE_CODES

ROOT = Path(__file__).resolve().parents[2]


def documented() -> tuple[set[int], set[int]]:
    """(codes the table says to reconnect after, codes it says to stop after)."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    section = text.split("## Reconnecting", 1)[1].split("\n## ", 1)[0]
    again: set[int] = set()
    stop: set[int] = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not re.match(r"^\d{4}", cells[0]):
            continue
        codes = {int(c) for c in re.findall(r"\b(1\d{3})\b", cells[0])}
        (again if cells[2] == "reconnect" else stop).update(codes)
    return again, stop


def test_the_table_the_bot_and_the_js_client_agree():
    again, stop = documented()
    assert {1006, 1011, 1012, 1013} <= again and {1002, 1008, 1009} <= stop
    assert not again & stop
    assert set(RECONNECT_CLOSE_CODES) == again
    js = (ROOT / "clients" / "js" / "src" / "client.js").read_text(encoding="utf-8")
    listed = re.search(r"RECONNECT_CLOSE_CODES = Object\.freeze\(\[([\d, ]+)\]\)", js)
    assert listed is not None
    assert {int(c) for c in listed.group(1).split(",")} == again
