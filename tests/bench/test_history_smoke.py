"""Smoke test of ``bench/history.py``: a tiny archive generated into a fresh PostgreSQL
database, the three reads timed for a few players, the database dropped. It runs the script
as a user would (a subprocess) and checks that it ends well and reports every figure; no
timing is asserted (the figures are docs/performance.md's)."""

from __future__ import annotations

import json
from pathlib import Path

from bench_script import run_bench


def test_history_bench_reports_every_query(tmp_path: Path) -> None:
    out = tmp_path / "history.json"
    stdout = run_bench("history.py", "--games", "600", "--players",
                       "60", "--samples", "15", "--json", str(out), timeout=120)
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["games"] == 600 and figures["players_timed"] == 15
    assert figures["most_games_of_a_player"] > 0 and figures["database"] is None
    for name in ("profile", "first_page", "deep_page"):
        assert 0 < figures[name]["p50_ms"] <= figures[name]["p99_ms"] <= figures[name]["max_ms"]
        assert name in stdout
