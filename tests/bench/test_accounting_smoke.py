"""Smoke test of ``bench/accounting.py``: a few actions, one run of each stage.

It runs the script as a user would (a subprocess, real games through the room service, the
product's functions on a stand-in Redis socket) and checks that it ends well, prints one
line per stage of the hot path with a positive figure, and writes the same figures as JSON.
No timing is asserted: the figures are the bench's business (docs/performance.md).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench_script import run_bench

PRODUCT_STAGES = ("decode", "exactly_once", "rules", "prepare", "commit", "dispatch", "views",
                  "events", "diffs", "updates", "ack")
"""The stages of the product's path, in the order the table numbers them."""

OTHER_ROWS = ("commit_json", "commit_pack", "sequence", "whole", "floor_decode",
              "floor_commit", "dispatch_parsed")


def _figure(line: str) -> float:
    """The first number after the label of a table row (µs per action)."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    return float(cells[1])


def test_accounting_prints_every_stage(tmp_path: Path) -> None:
    out = tmp_path / "accounting.json"
    stdout = run_bench("accounting.py", "--actions", "40",
                       "--repeats", "1", "--json", str(out), timeout=120)
    result = json.loads(out.read_text())
    assert result["actions"] == 40
    assert result["mix"].get("play", 0) > 0 and result["mix"].get("discard", 0) > 0
    labels = {s["key"]: s["label"] for s in result["stages"]}
    assert [s["key"] for s in result["stages"] if s["group"] == "product"] == list(
        PRODUCT_STAGES)
    lines = stdout.splitlines()
    for n, key in enumerate(PRODUCT_STAGES, 1):
        row = [ln for ln in lines if re.match(rf"\| {n}\. {re.escape(labels[key])} +\|", ln)]
        assert len(row) == 1, (key, stdout)
        assert _figure(row[0]) > 0, row[0]
        assert result["gc_on"][key] > 0 and result["gc_off"][key] > 0, key
        assert result["in_sequence"][key] >= 0, key
    for key in OTHER_ROWS:
        row = [ln for ln in lines if ln.startswith("|") and labels[key] in ln]
        assert len(row) == 1, (key, stdout)
        assert _figure(row[0]) > 0, row[0]
    total = sum(result["gc_on"][k] for k in PRODUCT_STAGES)
    row = [ln for ln in lines if ln.startswith("| sum of the stages")]
    assert len(row) == 1 and abs(_figure(row[0]) - total) < 0.01, row
    assert re.search(r"^machine: \d+ CPUs", stdout, re.M), stdout
