"""Smoke test of ``bench/hint_flood.py``: one expert game a phase beside three flooders, on
a real ``python -m server``. It checks that every phase ran and timed its game, that the
flooders were answered, that the server's hint counters moved as the mode says (a
repeat flood is answered with hints already made, a fresh one makes them) and that the
people at other addresses had their hints. No timing is
asserted: speed is the bench's business (docs/performance.md, "Hints")."""

from __future__ import annotations

import json
from pathlib import Path

from bench_script import run_bench


def test_hint_flood_bench_runs_its_phases(tmp_path: Path) -> None:
    out = tmp_path / "hints.json"
    stdout = run_bench("hint_flood.py", "--flooders", "3", "--games", "1", "--warmup", "1",
                       "--people", "2", "--think", "0.2", "--json", str(out), timeout=300)
    result = json.loads(out.read_text())
    phases = {p["mode"]: p for p in result["phases"]}
    assert list(phases) == ["alone", "repeat", "fresh"]
    for mode, p in phases.items():
        assert len(p["games_seconds"]) == 1 and p["median_seconds"] > 0, mode
        assert p["ratio"] > 0, mode
    assert phases["alone"]["ratio"] == 1.0
    assert phases["alone"]["hints_answered_per_second"] == 0
    assert phases["repeat"]["hints_answered_per_second"] > 0
    assert phases["repeat"]["hints"]["shared"] > 0
    assert phases["fresh"]["hints"]["made"] > 0
    # the people at other addresses had hints in every phase, and each one timed
    for mode, p in phases.items():
        person = p["person"]
        assert person["hints"] > 0 and person["failed"] == [], (mode, person)
        assert 0 < person["p50_seconds"] <= person["max_seconds"], (mode, person)
    assert "÷ alone" in stdout
