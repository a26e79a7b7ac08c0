"""The replay page's deal checker (``server/static/js/dealcheck.js``, Web Crypto) shuffles
and derives exactly as the engine does (``engine.rng``) on the same seeds; its whole-game
verdict on real archived games is in ``tests/archive/test_archive_http.py`` (next to the
independent ``shuffle_check.mjs``) and the browser test of ``/replay/<game>``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from engine import rng

RUNNER = Path(__file__).with_name("dealcheck_run.mjs")


def run_dealcheck(job: dict) -> dict:
    """Run the page's checker in Node on ``job`` (see ``dealcheck_run.mjs``)."""
    node = shutil.which("node")
    assert node, "the check needs Node"
    run = subprocess.run([node, str(RUNNER)], capture_output=True, text=True, timeout=60,
                         input=json.dumps(job))
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_page_shuffles_and_derives_as_the_engine_does() -> None:
    seeds = [os.urandom(32) for _ in range(30)] + [bytes(32), b"\xff" * 32]
    derive = [{"key": s.hex(), "message": f"{kind}/{n}"} for s in seeds[:10]
              for kind, n in (("deal", 1), ("deal", 17), ("cut", 2))]
    out = run_dealcheck({"packs": [s.hex() for s in seeds], "derive": derive})
    assert out["packs"] == [rng.shuffled_pack(s) for s in seeds]
    want = [(rng.deal_seed_of if d["message"].startswith("deal") else rng.cut_seed_of)(
        bytes.fromhex(d["key"]), int(d["message"].split("/")[1])).hex() for d in derive]
    assert out["derive"] == want
