"""Smoke test of ``bench/spectators.py``: a few seconds of each phase against real servers.

It runs the bench as a user would (a subprocess, real ``python -m server`` processes under
the probe, real Redis, the load client with its spectators) and checks that the three
phases (without, with, and with the spectators chatting) ran, timed the watched room's
and the other rooms' acts, that the spectators watched and were sent frames, and that no
keys were left behind. No timing is asserted: speed is the bench's business
(docs/performance.md, "Spectators").
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import redis
from bench_script import run_bench

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def test_spectator_bench_runs_its_phases(tmp_path: Path) -> None:
    out = tmp_path / "spectators.json"
    stdout = run_bench("spectators.py", "--rounds", "1",
                       "--rooms", "4", "--spectators", "60", "--seconds", "2", "--warmup", "1",
                       "--grace", "2", "--client-procs", "1", "--redis-url", REDIS_URL,
                       "--variants", "without,with,chat",
                       "--max-minutes", "2", "--json", str(out), timeout=150)
    result = json.loads(out.read_text())
    phases = {p["variant"]: p for p in result["phases"]}
    assert sorted(phases) == ["chat", "with", "without"]
    for variant, p in phases.items():
        assert not p.get("failure"), (variant, p.get("failure"))
        assert p["watched"]["n"] > 0 and p["others"]["n"] > 0, variant
        assert p["errors"] == {} and p["unanswered"] == 0, (variant, p["errors"])
        assert p["loop_lag"]["samples"] > 0, variant
    assert phases["with"]["spectators"] == 60 and phases["with"]["spectators_refused"] == {}
    assert phases["with"]["spectator_frames_per_second"] > 0
    assert phases["with"]["spectators_open"] == 60
    assert "with ÷ without" in stdout
    # The chat phase: every spectator a player saying presets; the room took some (each
    # reached every spectator) and refused the rest.
    chat = phases["chat"]
    assert chat["spectators"] == 60 and chat["spectators_refused"] == {}
    assert chat["spectator_said_per_second"] > 0 and chat["spectator_chats_per_second"] > 0
    assert "chat ÷ with" in stdout
    client = redis.Redis.from_url(REDIS_URL)
    try:
        assert list(client.scan_iter(match=f"{result['prefix']}*", count=1000)) == []
    finally:
        client.close()
