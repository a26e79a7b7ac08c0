"""A schemathesis run against a live server: the HTTP API does what ``docs/openapi.json``
says, and nothing else (issue 17).

``schemathesis run`` (its command line, in a subprocess) reads the document the server
serves at ``/openapi.json`` and sends every operation generated requests, valid and
invalid ones, through all its phases (the document's examples, coverage of each schema's
edges, fuzzing, and stateful sequences following the links, e.g. ``POST /api/rooms`` then
``GET /api/rooms/{room}``), with every check it has: no 5xx, documented statuses,
content types, headers and bodies, invalid requests refused (``null`` for ``options`` was
taken, as an outside tester found) and valid ones accepted (partnerships with 2 players, or
a computer in a seat the table does not have, were valid by the document and refused by
the server; the document now says what the server takes).

Bounded: at most ``MAX_EXAMPLES`` cases per operation and phase (a few seconds here; the
server is a real uvicorn on a loopback port, rooms in memory). A failure prints the
schemathesis report with a ``curl`` line that reproduces it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MAX_EXAMPLES = 40
"""Cases per operation and phase; the whole run takes a few seconds."""


def schemathesis_command() -> list[str]:
    """The ``schemathesis`` command line of this interpreter's environment."""
    found = shutil.which("schemathesis") or shutil.which("st")
    if found is None:
        candidate = Path(sys.executable).with_name("schemathesis")
        if candidate.exists():
            found = str(candidate)
    if found is None:
        pytest.fail("schemathesis is not installed (it is in the test extras: "
                    "pip install -e '.[test]')")
    return [found]


NAME_RULES_CONFIG = """
# A player's display name has rules JSON Schema cannot say (docs/protocol.md "Seat names":
# at least one visible character; no control, format, private-use or unassigned
# characters; nothing that reads like the table's own labels). A name the schema takes may
# so be refused, with 400 bad_name and nothing changed, on the two operations that take one.
[[operations]]
include-path = "/api/players"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 403, 404, 409, 429]

[[operations]]
include-path = "/api/players/me"
include-method = "PATCH"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 403, 404, 409, 429]

# A page's cursor is text the server made (the `next` of a page): any other text is 400
# bad_page_request, nothing read.
[[operations]]
include-path = "/api/players/{player}/games"
include-method = "GET"
checks.positive_data_acceptance.expected-statuses = ["2XX", 400, 401, 403, 404, 409, 410, 429]
"""


def test_the_live_server_keeps_its_openapi_document(make_server, tmp_path):
    # Per-address budgets off: the run sends hundreds of requests from one address (their
    # 429 answers are documented and checked in test_openapi_http.py). A relying party id
    # for passkeys: the run reaches the server at 127.0.0.1, which is none. An admin token
    # the run does not know: the moderators' routes are on, and refuse it (401).
    server = make_server(redis=False, rooms_per_minute=0, room_reads_per_minute=0,
                         passkey_attempts_per_minute=0, passkey_rp_id="localhost",
                         players_per_hour=0, code_tries_per_hour=0,
                         admin_token="schemathesis-does-not-know-this-token")
    report = tmp_path / "report.json"
    config = tmp_path / "schemathesis.toml"
    config.write_text(NAME_RULES_CONFIG, encoding="utf-8")
    command = [
        *schemathesis_command(), "--config-file", str(config), "run",
        f"{server.http}/openapi.json",
        "--checks", "all",
        "--max-examples", str(MAX_EXAMPLES),
        "--request-timeout", "10",
        "--workers", "1",
        "--generation-database", "none",
        "--no-color",
        "--report", "json", "--report-json-path", str(report),
    ]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    summary = json.loads(report.read_text(encoding="utf-8"))
    assert summary["exit_code"] == 0 and not summary["failures"] and not summary["errors"]
    # It really ran: every operation of the document (schemathesis leaves out the one
    # serving the document itself), each phase, hundreds of cases.
    operations = summary["operations"]
    assert operations["tested"] == operations["selected"] == operations["total"], operations
    assert operations["total"] >= 5, operations
    assert all(phase["status"] == "success" for phase in summary["phases"].values()), summary
    assert summary["test_cases"]["generated"] > 100, summary["test_cases"]
