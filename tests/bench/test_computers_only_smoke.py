"""Smoke test of ``bench/computers_only.py``: a few moves of a person against an expert
computer, alone and beside five rooms of expert computers, on a real ``python -m server``.
It checks that both phases timed the person's waits, that the crowd played meanwhile and
that the computer processes counted the person's moves urgent and the crowd's not. No
timing is asserted: speed is the bench's business (docs/performance.md, "What expert
players cost the other rooms")."""

from __future__ import annotations

import json
from pathlib import Path

from bench_script import run_bench


def test_computers_only_bench_runs_its_phases(tmp_path: Path) -> None:
    out = tmp_path / "crowd.json"
    stdout = run_bench("computers_only.py", "--rooms", "5", "--turns", "6", "--warmup", "1",
                       "--think", "0.05", "--json", str(out), timeout=300)
    result = json.loads(out.read_text())
    alone, crowd = result["phases"]
    assert (alone["phase"], crowd["phase"]) == ("alone", "crowd")
    for p in (alone, crowd):
        assert p["turns"] >= 3 and p["wait_p50"] > -1 and p["wait_max"] >= p["wait_p50"]
        assert p["jobs"]["urgent"] >= p["turns"]
    assert alone["jobs"]["other"] == 0 and crowd["jobs"]["other"] > 0
    assert crowd["deadlines_per_second"] > alone["deadlines_per_second"]
    assert result["ratio_p50"] > 0 and "÷ alone" in stdout
