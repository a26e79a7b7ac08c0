"""Running a script of ``bench/`` as a user would, for the smoke tests beside this file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str, timeout: float) -> str:
    """``python bench/<script> <args>`` from the repository root; its stdout.

    Raises:
        AssertionError: it exited other than 0 (with the end of its output).
        subprocess.TimeoutExpired: it ran over ``timeout`` seconds.
    """
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return done.stdout
