"""``bench/duplicate.py`` run as a user would (issue 22): two seeds of expert against
standard, the margin split by where the points come from, and the paired comparison of
two runs on the same seeds. Strength is the bench's to measure, not this test's."""

from __future__ import annotations

import json

from bench_script import run_bench


def run(*args: str) -> dict:
    stdout = run_bench("duplicate.py", *args, timeout=300)
    return json.loads(stdout)


def test_duplicate_deals_split_and_paired(tmp_path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    report = run("--kinds", "2", "--seeds", "2", "--workers", "1", "--base", "smoke",
                 "--per-seed", str(a))
    two = report["kinds"]["2"]
    assert two["games"] == 4 and two["deal_sets"] > 0
    parts = two["margin_by_part"]
    assert set(parts) == {"play", "hand", "crib", "heels", "play_as_dealer", "play_as_pone"}
    whole = parts["play"] + parts["hand"] + parts["crib"] + parts["heels"]
    assert abs(whole - two["margin_per_deal_set"]) < 0.01
    assert abs(parts["play_as_dealer"] + parts["play_as_pone"] - parts["play"]) < 0.01
    assert two["cpu_ms"]["play"]["n"] > 0
    # The same seeds again with the win play off: paired seed by seed.
    run("--kinds", "2", "--seeds", "2", "--workers", "1", "--base", "smoke",
        "--set", "NEAR=0", "--set", "NEAR_DISCARD=0", "--per-seed", str(b))
    same = run("--compare", str(a), str(a))["2"]
    assert same["seeds"] == 2 and same["margin_diff"] == 0 and same["win_rate_diff"] == 0
    paired = run("--compare", str(a), str(b))["2"]
    assert paired["a"][0] == two["margin_per_deal_set"]
    assert paired["margin_diff_ci95"] >= 0
