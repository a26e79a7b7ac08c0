"""Smoke test of ``bench/history.py``: a tiny archive generated into a fresh PostgreSQL
database, the three reads timed for a few players, the database dropped. It runs the script
as a user would (a subprocess) and checks that it ends well and reports every figure; no
timing is asserted (the figures are docs/performance.md's)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_history_bench_reports_every_query(tmp_path: Path) -> None:
    out = tmp_path / "history.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "history.py"), "--games", "600", "--players",
         "60", "--samples", "15", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["games"] == 600 and figures["players_timed"] == 15
    assert figures["most_games_of_a_player"] > 0 and figures["database"] is None
    for name in ("profile", "first_page", "deep_page"):
        assert 0 < figures[name]["p50_ms"] <= figures[name]["p99_ms"] <= figures[name]["max_ms"]
        assert name in done.stdout
