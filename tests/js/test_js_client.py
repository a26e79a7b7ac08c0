"""The JavaScript client library (``clients/js``) passes its Node test suite.

The Node suite (``node --test``) starts real servers from this repository (``python -m
server`` with this interpreter: in-memory, on the Redis at 127.0.0.1:6379 under a random key
prefix, and on a redis-server of its own) and plays whole games through the library. This
test installs the library's development packages when they are missing (``npm ci`` from the
committed lockfile) and fails with Node's output when Node fails.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS = ROOT / "clients" / "js"


def _needs_install() -> bool:
    """``node_modules`` is missing, or older than the lockfile (npm keeps its own copy of
    the lockfile it installed from in ``node_modules/.package-lock.json``)."""
    installed = JS / "node_modules" / ".package-lock.json"
    lock = JS / "package-lock.json"
    if not installed.exists():
        return True
    return lock.exists() and lock.stat().st_mtime > installed.stat().st_mtime


def test_js_client_node_suite() -> None:
    node = shutil.which("node")
    npm = shutil.which("npm")
    assert node and npm, "the JavaScript client's tests need Node 20+ and npm on PATH"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    major = int(re.match(r"v(\d+)", version.stdout).group(1))
    assert major >= 20, f"Node 20+ is needed, found {version.stdout.strip()}"
    if _needs_install():
        cmd = [npm, "ci"] if (JS / "package-lock.json").exists() else [npm, "install"]
        done = subprocess.run(cmd, cwd=JS, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    files = sorted(str(p.relative_to(JS)) for p in (JS / "test").glob("*.test.js"))
    assert files, "no Node test files in clients/js/test"
    env = {**os.environ, "PYTHON": sys.executable}
    # --test-force-exit: a test that fails half-way can leave a client reconnecting, and
    # Node would then wait for it for ever; the failure is reported instead. Its own
    # process group, so that on a timeout nothing it started is left running.
    proc = subprocess.Popen(
        [node, "--test", "--test-concurrency=1", "--test-force-exit", *files],
        cwd=JS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        raise AssertionError(
            f"node --test did not end in 600 s:\n{(stdout + stderr)[-30000:]}") from None
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"node --test failed (exit {done.returncode}):\n{output[-30000:]}"
    passed = re.search(r"^# pass (\d+)$", done.stdout, re.MULTILINE)
    failed = re.search(r"^# fail (\d+)$", done.stdout, re.MULTILINE)
    assert passed and int(passed.group(1)) > 0, output[-5000:]
    assert failed and int(failed.group(1)) == 0, output[-30000:]
