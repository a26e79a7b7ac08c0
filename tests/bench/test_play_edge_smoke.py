"""``bench/play_edge.py`` run as a user would (docs/performance.md, row Z32): the expert's
edge in the play over ``standard``'s, measured by playing one deal's play twice from the
same state. Its premise is checked too: played twice at the same level the play is the
same, so the edge is the levels' difference and nothing else."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import play_edge  # noqa: E402
from bench_script import run_bench  # noqa: E402


def test_the_report_by_role() -> None:
    stdout = run_bench("play_edge.py", "--deals", "200", timeout=300)
    report = json.loads(stdout)
    assert report["deals"] == 200
    assert report["dealer"]["deals"] + report["pone"]["deals"] == 200
    for role in ("dealer", "pone"):
        r = report[role]
        assert 0.0 < r["same_margin_share"] < 1.0
        assert set(r["fit"]) == set(play_edge.FEATURES)
        assert r["edge_ci95"] > 0 and r["holdout_r2"] <= 1.0


def test_the_same_level_twice_is_the_same_play() -> None:
    for n in range(6):
        deal = play_edge.one_deal(n)
        assert len(deal["kept"]) == 4
        state, me, kept = play_edge.start(n)
        assert kept["kept"] == deal["kept"]
        assert play_edge._play_out(state, me, "standard") == deal["standard"]
        assert play_edge._play_out(state, me, "expert") == deal["expert"]
