"""The container tests run only where a Docker engine answers (and the base images are
there); anywhere else they are reported as skipped, with the reason, in a banner at the end
of the run (``tests/conftest.py``) — never as passed. ``.ci/run`` sets
``CRIBBAGE_CONTAINERS``: ``run`` when it started an engine (then a missing engine fails
these tests instead of skipping them), or ``skip: <reason>`` when no engine can run on the
machine."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# The wire helpers of the server tests (crib_wire) are imported from their directory.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from compose_stack import engine_problem  # noqa: E402

SKIP_MARK = "CONTAINER TESTS SKIPPED: "
"""How a container test's skip reason begins: the banner at the end of the run looks for
it (``tests/conftest.py``, which the main process of a parallel run loads)."""


def container_tests_problem() -> str | None:
    """Why the container tests must be skipped here, or None if they must run.

    Raises:
        pytest.fail.Exception: CI started an engine (``CRIBBAGE_CONTAINERS=run``) and it
            cannot be used.
    """
    mode = os.environ.get("CRIBBAGE_CONTAINERS", "")
    if mode.startswith("skip"):
        return mode.partition(":")[2].strip() or "no container engine can run here"
    problem = engine_problem()
    if problem and mode == "run":
        pytest.fail(f"CI started a container engine but: {problem}", pytrace=False)
    return problem


@pytest.fixture(scope="session")
def engine() -> None:
    """Skip (loudly) unless a Docker engine, compose v2 and the base images are here."""
    problem = container_tests_problem()
    if problem:
        pytest.skip(f"{SKIP_MARK}{problem}")
