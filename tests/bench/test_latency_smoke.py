"""Smoke test of ``bench/latency.py``: a few seconds at 1 room against real servers.

It runs the harness as a user would (a subprocess, real ``python -m server`` processes, the
floor of ``bench/floor.py``, real Redis, the lean load client) and checks that every phase
ran, counted accepted actions and timed plays, measured the servers' CPU, and left no keys
behind. No timing is asserted: speed targets are the bench's business (docs/performance.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import redis
from bench_script import run_bench

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
VARIANTS = ("product", "floor", "product-memory", "floor-memory")


def test_latency_bench_runs_product_and_floor(tmp_path: Path) -> None:
    out = tmp_path / "latency.json"
    stdout = run_bench(
        "latency.py", "--closed", "1", "--paced", "", "--rounds", "1", "--seconds", "1.5",
        "--warmup", "0.5", "--grace", "2", "--client-procs", "1",
        "--variants", ",".join(VARIANTS), "--redis-url", REDIS_URL, "--busy-retries", "0",
        "--max-minutes", "2", "--json", str(out), timeout=150)
    result = json.loads(out.read_text())
    phases = {p["variant"]: p for p in result["phases"]}
    assert sorted(phases) == sorted(VARIANTS)
    for variant, p in phases.items():
        assert not p.get("failure"), (variant, p.get("failure"))
        assert p["accepted"] > 0, variant
        assert p["plays_timed"] > 0, variant
        assert p["errors"] == {} and p["rejects"] == {}, (variant, p["errors"], p["rejects"])
        assert p["p50_ms"] > 0 and p["p99_ms"] >= p["p50_ms"], variant
        assert p["server_cpu_us_per_action"] > 0, variant
    # The product played real games: discards and plays, so more actions than plays.
    assert phases["product"]["accepted"] > phases["product"]["accepted_plays"]
    assert result["stacks"]["product"] == ["uvloop", "httptools"]
    assert result["stacks"]["floor"] == ["uvloop", "httptools"]
    ratios = result["summary"][0]["ratios"]
    assert ratios["product/floor"]["cpu_per_action"] > 0
    assert ratios["product-memory/floor-memory"]["p99"] > 0
    assert "product/floor" in stdout  # the printed table
    client = redis.Redis.from_url(REDIS_URL)
    try:
        assert list(client.scan_iter(match=f"{result['prefix']}*", count=1000)) == []
    finally:
        client.close()
