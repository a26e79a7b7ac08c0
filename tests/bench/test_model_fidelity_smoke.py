"""``bench/model_fidelity.py`` run as a user would: the expert's opponent model, given a
``standard`` player's whole hand and discards, names that player's card as one of its best
every time — the premise of weighing holdings by ``StandardModel.chance`` (issue 22). If
``engine/computer/pegging.py`` and ``StandardModel`` drift apart, this fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_model_names_standards_card() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "model_fidelity.py"), "--games", "12"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    report = json.loads(done.stdout)
    full, partial = report["with discards"], report["without discards"]
    assert full["plays"] == partial["plays"] > 300
    assert full["tie allowed"] == 1.0
    assert full["lowest"] < 1.0  # ties do happen: the lowest rank alone is not enough
    assert 0.9 < partial["tie allowed"] < 1.0
