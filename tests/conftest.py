"""Fixtures of the whole suite.

Every server the tests start (in a thread, as a process, or from the Node and browser
suites) keeps its embedded SQLite archive in one temporary folder of this run, never in
the checkout or the home folder: ``CRIBBAGE_DATA_DIR`` is set here for the whole run (and
inherited by the processes it starts), and the folder is removed at the end.
"""

from __future__ import annotations

import os
import shutil
import tempfile

_DATA = None
if not os.environ.get("CRIBBAGE_DATA_DIR") and not os.environ.get("CRIBBAGE_DATABASE_URL"):
    _DATA = tempfile.mkdtemp(prefix="cribbage-tests-")
    os.environ["CRIBBAGE_DATA_DIR"] = _DATA


def pytest_unconfigure(config) -> None:  # noqa: ANN001 - pytest's hook
    """Remove this run's data folder."""
    if _DATA is not None:
        shutil.rmtree(_DATA, ignore_errors=True)
