"""``bench/model_fidelity.py`` run as a user would: the expert's opponent model, given a
``standard`` player's whole hand and discards, names that player's card as one of its best
every time — the premise of weighing holdings by ``StandardModel.chance`` (issue 22). If
``engine/computer/pegging.py`` and ``StandardModel`` drift apart, this fails."""

from __future__ import annotations

import json

from bench_script import run_bench


def test_model_names_standards_card() -> None:
    stdout = run_bench("model_fidelity.py", "--games", "12", timeout=120)
    report = json.loads(stdout)
    full, partial = report["with discards"], report["without discards"]
    assert full["plays"] == partial["plays"] > 300
    assert full["tie allowed"] == 1.0
    assert full["lowest"] < 1.0  # ties do happen: the lowest rank alone is not enough
    assert 0.9 < partial["tie allowed"] < 1.0
