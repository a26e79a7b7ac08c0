"""Fixtures and hooks of the whole suite.

The suite runs in worker processes (pytest-xdist, ``-n auto --dist loadgroup`` in
``pyproject.toml``): one per core, at most :data:`MOST_WORKERS`. Each file's tests run in
one worker, in order, as they were written (its module fixtures built once); the browser
and the container tests share one group, since Chromium fails its requests with
``ERR_NETWORK_CHANGED`` when Docker adds or removes a network beside it. Every test
already keeps to its own: Redis keys under a random prefix, a PostgreSQL database of the
run's own per worker, servers and Redis processes on free loopback ports, a data folder
per worker (below), compose projects named per file.

Every server the tests start (in a thread, as a process, or from the Node and browser
suites) keeps its embedded SQLite archive in one temporary folder of this run, never in
the checkout or the home folder: ``CRIBBAGE_DATA_DIR`` is set here for the whole run (and
inherited by the processes it starts), and the folder is removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_OWN = "CRIBBAGE_TESTS_OWN_DATA_DIR"
"""Set (to the folder) when this run made ``CRIBBAGE_DATA_DIR``: a worker process, which
inherits it from the main one, then makes a folder of its own."""

_DATA = None
if (not os.environ.get("CRIBBAGE_DATA_DIR") and not os.environ.get("CRIBBAGE_DATABASE_URL")
        or os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get(_OWN)):
    _DATA = tempfile.mkdtemp(prefix="cribbage-tests-")
    os.environ["CRIBBAGE_DATA_DIR"] = os.environ[_OWN] = _DATA


MOST_WORKERS = 4
"""The most worker processes ``-n auto`` starts (more only makes the timed waits of the
chaos and load tests share the machine with more at once)."""

SHARED_GROUPS = {"browser": "chromium-and-docker", "containers": "chromium-and-docker"}
"""Test folders whose files run in one worker together (see above)."""


def pytest_xdist_auto_num_workers(config) -> int:  # noqa: ANN001 - pytest-xdist's hook
    """One worker per core this process may use, at most :data:`MOST_WORKERS`."""
    return max(1, min(MOST_WORKERS, len(os.sched_getaffinity(0))))


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the groups
def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001 - pytest's hook
    """Each test in the group of its file, or of its folder (:data:`SHARED_GROUPS`)."""
    root = Path(__file__).resolve().parent
    for item in items:
        path = Path(str(item.path)).resolve()
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            continue
        group = SHARED_GROUPS.get(parts[0]) if len(parts) > 1 else None
        item.add_marker(pytest.mark.xdist_group(group or "/".join(parts)))


def pytest_unconfigure(config) -> None:  # noqa: ANN001 - pytest's hook
    """Remove this run's data folder."""
    if _DATA is not None:
        shutil.rmtree(_DATA, ignore_errors=True)


CONTAINER_SKIP_MARK = "CONTAINER TESTS SKIPPED: "
"""How a container test's skip reason begins (``tests/containers/conftest.py``)."""


def skipped_container_reason(terminalreporter: pytest.TerminalReporter) -> str | None:
    """The reason of the first container test reported skipped in this run, or None. Read
    from the reports the terminal shows, so that it is found when the tests ran in worker
    processes (pytest-xdist) as well as in this one."""
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = getattr(report, "longrepr", None)
        message = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else ""
        if CONTAINER_SKIP_MARK in message:
            return message.split(CONTAINER_SKIP_MARK, 1)[1]
    return None


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """A banner at the end of the run when the container tests were skipped: nothing in the
    Dockerfile or the compose files ran (``tests/containers/conftest.py`` says when)."""
    reason = skipped_container_reason(terminalreporter)
    if reason:
        bar = "#" * 78
        terminalreporter.write_line(bar, red=True, bold=True)
        terminalreporter.write_line(
            f"## THE CONTAINER TESTS (tests/containers) WERE SKIPPED: {reason}",
            red=True, bold=True)
        terminalreporter.write_line(
            "## Nothing in the Dockerfile or the compose files was run.", red=True, bold=True)
        terminalreporter.write_line(bar, red=True, bold=True)
