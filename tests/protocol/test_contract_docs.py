"""The AsyncAPI and OpenAPI documents are current, valid and say what the models say.

* ``docs/asyncapi.json`` and ``docs/openapi.json`` are exactly what ``python -m
  protocol.asyncapi`` and ``python -m protocol.openapi`` write;
* real validators accept them, run with Node from ``tests/contract_tools`` (installed with
  ``npm ci`` from the committed lockfile when missing): the official AsyncAPI parser
  (``@asyncapi/parser``: the AsyncAPI 3.0 JSON Schema, its rulesets and every payload
  schema) and ``@readme/openapi-parser`` (OpenAPI 3.1), and the same validators refuse a
  broken copy, so these tests can fail;
* what the parsed AsyncAPI document holds is checked against the models: one ``receive``
  operation per client message with its replies, one ``send`` operation per server
  message, one channel with the WebSocket binding;
* the AsyncAPI payload schemas (rewritten for JSON Schema draft 07) accept every message
  example of ``docs/protocol.md`` and refuse a frame the models refuse; the OpenAPI schemas
  are valid JSON Schema 2020-12 and accept the docs' HTTP examples.

(That the server's real HTTP answers match the OpenAPI document is checked in
``tests/server/test_openapi_http.py``.)
"""

from __future__ import annotations

import concurrent.futures
import copy
import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from test_schema import json_blocks

from protocol import asyncapi, openapi
from protocol.messages import CLIENT_ADAPTER, SERVER_ADAPTER

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tests" / "contract_tools"


def _needs_install() -> bool:
    installed = TOOLS / "node_modules" / ".package-lock.json"
    if not installed.exists():
        return True
    return (TOOLS / "package-lock.json").stat().st_mtime > installed.stat().st_mtime


@cache
def _node() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node and npm, "validating the contract documents needs Node 20+ and npm on PATH"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True)
    assert int(re.match(r"v(\d+)", version.stdout).group(1)) >= 20, version.stdout
    if _needs_install():
        done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=TOOLS,
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"npm ci failed:\n{done.stdout}\n{done.stderr}"
    return node


def validate(kind: str, path: Path) -> dict[str, Any]:
    """Run ``tests/contract_tools/validate.mjs``; its JSON report."""
    done = subprocess.run([_node(), "validate.mjs", kind, str(path)], cwd=TOOLS,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr[-5000:]
    return json.loads(done.stdout)


def validate_data_all(kind: str, documents: list[dict[str, Any]], tmp_path: Path
                      ) -> list[dict[str, Any]]:
    """:func:`validate` of each document (written to ``tmp_path``), the validators running
    side by side: each is seconds of one core in Node, most of it parsing, and two cores
    check two at once."""
    _node()  # npm ci, if needed, once before they start
    paths = []
    for i, document in enumerate(documents):
        path = tmp_path / f"{kind}-{i}.json"
        path.write_text(json.dumps(document), encoding="utf-8")
        paths.append(path)
    with concurrent.futures.ThreadPoolExecutor(len(paths)) as pool:
        return list(pool.map(lambda path: validate(kind, path), paths))


# -- AsyncAPI -------------------------------------------------------------------------------


def test_asyncapi_file_is_up_to_date():
    assert asyncapi.ASYNCAPI_PATH.read_text(encoding="utf-8") == asyncapi.render(), (
        "docs/asyncapi.json is out of date: run python -m protocol.asyncapi"
    )
    assert asyncapi.main(["--check"]) == 0


@cache
def asyncapi_report() -> dict[str, Any]:
    return validate("asyncapi", asyncapi.ASYNCAPI_PATH)


def test_asyncapi_document_validates():
    report = asyncapi_report()
    assert report["validator"] == "@asyncapi/parser"
    assert report["parsed"], report["diagnostics"]
    assert report["asyncapi"] == "3.0.0"
    # Severity 0 is an error, 1 a warning; 2 (information) and 3 (hint) are advice, such
    # as "AsyncAPI 3.1.0 exists".
    serious = [d for d in report["diagnostics"] if d["severity"] <= 1]
    assert not serious, json.dumps(serious, indent=1)[:5000]
    advice = {d["code"] for d in report["diagnostics"]}
    assert advice <= {"asyncapi-latest-version"}, report["diagnostics"]


def test_asyncapi_operations_cover_every_message():
    report = asyncapi_report()
    ops = {op["id"]: op for op in report["operations"]}
    client = [m.__name__ for m in asyncapi.CLIENT_MODELS]
    server = [m.__name__ for m in asyncapi.SERVER_MODELS]
    assert len(client) == len(CLIENT_ADAPTER.json_schema()["oneOf"]) == 21
    assert len(server) == len(SERVER_ADAPTER.json_schema()["oneOf"]) == 26
    assert len(ops) == len(client) + len(server)
    for name in client:
        op = ops[f"receive{name}"]
        assert (op["action"], op["channels"], op["messages"]) == ("receive", ["/ws"], [name])
        assert op["reply"] == asyncapi.REPLIES[name][0]
    for name in server:
        op = ops[f"send{name}"]
        assert (op["action"], op["channels"], op["messages"], op["reply"]) == (
            "send", ["/ws"], [name], None)
    replies = {name: ops[f"receive{name}"]["reply"] for name in client}
    assert replies["Join"] == ["Snapshot", "Error"]
    assert replies["Act"][:2] == ["Ack", "Reject"]
    assert replies["SetComputer"] == ["Error"]  # success is the update to the room
    every_reply = {r for rs in replies.values() for r in rs}
    # the only unasked ones
    assert set(server) - every_reply == {"Update", "Presence", "LobbyUpdate",
                                         "ChallengeReceived", "ChallengeExpired",
                                         "ChatHidden"}
    [channel] = report["channels"]
    assert channel["address"] == "/ws" and channel["bindings"] == ["ws"]
    assert channel["messages"] == client + server
    assert report["payloadsWithSchema"] == client + server


def test_asyncapi_channel_names_both_subprotocols():
    channel = json.loads(asyncapi.render())["channels"]["ws"]
    assert set(channel["x-subprotocols"]) == {"cribbage.v1.json", "cribbage.v1.msgpack"}
    header = channel["bindings"]["ws"]["headers"]["properties"]["Sec-WebSocket-Protocol"]
    assert header["examples"] == ["cribbage.v1.json", "cribbage.v1.msgpack"]
    for name in ("cribbage.v1.json", "cribbage.v1.msgpack"):
        assert name in channel["description"]


def test_asyncapi_validator_refuses_a_broken_document(tmp_path):
    document = json.loads(asyncapi.render())
    # pydantic's own discriminator objects are not AsyncAPI schema: the generator rewrites
    # them, and the parser must notice if it did not.
    discriminator = copy.deepcopy(document)
    discriminator["components"]["schemas"]["Event"]["discriminator"] = {"propertyName": "type"}
    # a reply naming a message the channel does not carry
    bad_reply = copy.deepcopy(document)
    bad_reply["operations"]["receiveAct"]["reply"]["messages"].append(
        {"$ref": "#/channels/ws/messages/Nope"})
    # an operation whose message is not taken from its channel
    foreign = copy.deepcopy(document)
    foreign["operations"]["receiveAct"]["messages"] = [{"$ref": "#/components/messages/Act"}]
    reports = validate_data_all("asyncapi", [discriminator, bad_reply, foreign], tmp_path)
    report = reports[0]
    assert not report["parsed"]
    assert any(d["severity"] == 0 and "discriminator" in d["message"]
               for d in report["diagnostics"])
    report = reports[1]
    assert not report["parsed"]
    assert any(d["code"] == "invalid-ref" for d in report["diagnostics"])
    report = reports[2]
    assert not report["parsed"]
    assert any(d["code"] == "asyncapi3-operation-messages-from-referred-channel"
               for d in report["diagnostics"])


@cache
def asyncapi_validator(name: str) -> jsonschema.protocols.Validator:
    """A draft 07 validator of ``components.schemas[name]`` of the AsyncAPI document."""
    components = json.loads(asyncapi.render())["components"]
    root = {"$schema": "http://json-schema.org/draft-07/schema#",
            "$ref": f"#/components/schemas/{name}", "components": components}
    jsonschema.Draft7Validator.check_schema(root)
    return jsonschema.Draft7Validator(root)


def _message_examples() -> list[tuple[str, dict[str, Any]]]:
    """``(model name, frame)`` of every whole message example of docs/protocol.md."""
    out = []
    for line, marker, text in json_blocks("protocol.md"):
        if marker is not None:
            continue
        frame = json.loads(text)
        for adapter in (CLIENT_ADAPTER, SERVER_ADAPTER):
            try:
                out.append((type(adapter.validate_python(frame)).__name__, frame))
                break
            except Exception:
                continue
        else:
            raise AssertionError(f"docs/protocol.md:{line} is not a message")
    return out


def test_asyncapi_payload_schemas_accept_the_docs_examples():
    examples = _message_examples()
    names = {name for name, _ in examples}
    assert len(examples) >= 25 and len(names) >= 18, names
    for name, frame in examples:
        asyncapi_validator(name).validate(frame)
    # and refuse what the models refuse
    with pytest.raises(jsonschema.ValidationError):
        asyncapi_validator("Error").validate(
            {"type": "error", "code": "no_such_code", "message": "x", "ref": None})
    with pytest.raises(jsonschema.ValidationError):
        asyncapi_validator("Reject").validate(
            {"type": "reject", "action_id": "a", "code": "bad_frame", "message": "x"})
    with pytest.raises(jsonschema.ValidationError):
        asyncapi_validator("Act").validate(
            {"type": "act", "action_id": "a", "action": {"type": "fly"}})


# -- OpenAPI --------------------------------------------------------------------------------


def test_openapi_file_is_up_to_date():
    assert openapi.OPENAPI_PATH.read_text(encoding="utf-8") == openapi.render(), (
        "docs/openapi.json is out of date: run python -m protocol.openapi"
    )
    assert openapi.main(["--check"]) == 0


def test_openapi_document_validates():
    report = validate("openapi", openapi.OPENAPI_PATH)
    assert report["validator"] == "@readme/openapi-parser"
    assert report["valid"], report["errors"]
    assert not report["warnings"], report["warnings"]
    assert report["openapi"] == "3.1.0"
    got = {(op["method"], op["path"]): op["responses"] for op in report["operations"]}
    assert got == {
        ("post", "/api/rooms"): ["201", "400", "403", "409", "413", "429", "500", "503"],
        ("get", "/api/rooms/{room}"): ["200", "404", "429", "500", "503"],
        ("get", "/api/games/{game}"): ["200", "404", "429", "500", "503"],
        ("post", "/api/players"): ["201", "400", "403", "413", "429", "500", "503"],
        ("get", "/api/players/me"): ["200", "401", "500", "503"],
        ("patch", "/api/players/me"): ["200", "400", "401", "413", "500", "503"],
        ("delete", "/api/players/me"): ["204", "401", "500", "503"],
        ("get", "/api/players/me/export"): ["200", "401", "500", "503"],
        ("get", "/api/players/me/blocks"): ["200", "401", "500", "503"],
        ("put", "/api/players/me/blocks/{player}"): ["200", "400", "401", "404", "409", "500",
                                                     "503"],
        ("delete", "/api/players/me/blocks/{player}"): ["204", "401", "500", "503"],
        ("get", "/api/players/me/mutes"): ["200", "401", "500", "503"],
        ("get", "/api/admin/reports"): ["200", "400", "401", "404", "500", "503"],
        ("get", "/api/admin/reports/{report}"): ["200", "401", "404", "500", "503"],
        ("post", "/api/admin/reports/{report}/resolve"): ["200", "400", "401", "404", "413",
                                                          "500", "503"],
        ("get", "/api/admin/rooms/{room}/chat"): ["200", "401", "404", "500", "503"],
        ("post", "/api/admin/rooms/{room}/messages/{message}/hide"): ["200", "401", "404",
                                                                      "500", "503"],
        ("post", "/api/admin/rooms/{room}/close"): ["200", "401", "404", "500", "503"],
        ("get", "/api/admin/sanctions"): ["200", "401", "404", "500", "503"],
        ("post", "/api/admin/sanctions"): ["201", "400", "401", "404", "413", "500", "503"],
        ("delete", "/api/admin/sanctions/{sanction}"): ["200", "401", "404", "500", "503"],
        ("get", "/api/admin/log"): ["200", "400", "401", "404", "500", "503"],
        ("put", "/api/players/me/mutes/{player}"): ["200", "400", "401", "404", "409", "500",
                                                    "503"],
        ("delete", "/api/players/me/mutes/{player}"): ["204", "401", "500", "503"],
        ("post", "/api/players/me/link"): ["201", "401", "429", "500", "503"],
        ("post", "/api/players/link"): ["200", "400", "403", "404", "413", "429", "500", "503"],
        ("get", "/api/players/{player}"): ["200", "401", "403", "404", "410", "429", "500",
                                           "503"],
        ("get", "/api/players/{player}/games"): ["200", "400", "401", "403", "404", "410",
                                                 "429", "500", "503"],
        ("get", "/api/leaderboards/{kind}"): ["200", "400", "404", "429", "500", "503"],
        ("get", "/api/lobby"): ["200", "400", "429", "500", "503"],
        ("get", "/api/players/{player}/ratings"): ["200", "401", "403", "404", "410", "429",
                                                   "500", "503"],
        ("get", "/healthz"): ["200"],
        ("get", "/readyz"): ["200", "503"],
        ("get", "/metrics"): ["200"],
        ("get", "/openapi.json"): ["200"],
        ("post", "/api/players/me/passkeys/options"): ["200", "400", "401", "403", "409",
                                                       "413", "429", "500", "503"],
        ("get", "/api/players/me/passkeys"): ["200", "401", "500", "503"],
        ("post", "/api/players/me/passkeys"): ["201", "400", "401", "403", "404", "409",
                                               "413", "429", "500", "503"],
        ("delete", "/api/players/me/passkeys/{passkey}"): ["204", "401", "403", "404", "500",
                                                           "503"],
        ("post", "/api/passkeys/options"): ["200", "400", "403", "413", "429", "500", "503"],
        ("post", "/api/passkeys/signin"): ["200", "400", "403", "404", "413", "429", "500",
                                           "503"],
    }
    # The OpenAPI 3.1 schema does not look inside Schema Objects: check them as JSON
    # Schema 2020-12 (OpenAPI 3.1's dialect).
    for schema in json.loads(openapi.render())["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_openapi_validator_refuses_a_broken_document(tmp_path):
    document = json.loads(openapi.render())
    no_parameters = copy.deepcopy(document)
    no_parameters["paths"]["/api/rooms/{room}"]["get"]["parameters"] = []
    bad_ref = copy.deepcopy(document)
    bad_ref["paths"]["/healthz"]["get"]["responses"]["200"]["content"]["application/json"][
        "schema"]["$ref"] = "#/components/schemas/Nope"
    for report in validate_data_all("openapi", [no_parameters, bad_ref], tmp_path):
        assert not report["valid"] and report["errors"]
    broken = copy.deepcopy(document)
    broken["components"]["schemas"]["Health"]["properties"]["ok"]["type"] = 5
    with pytest.raises(jsonschema.SchemaError):
        jsonschema.Draft202012Validator.check_schema(broken["components"]["schemas"]["Health"])


def openapi_validator(name: str, document: dict[str, Any] | None = None
                      ) -> jsonschema.protocols.Validator:
    """A JSON Schema 2020-12 validator of ``components.schemas[name]`` of the OpenAPI
    document (``document``, default the generated one)."""
    components = (document or json.loads(openapi.render()))["components"]
    root = {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$ref": f"#/components/schemas/{name}", "components": components}
    return jsonschema.Draft202012Validator(root)


def test_openapi_schemas_accept_the_docs_http_examples():
    seen = 0
    for _, marker, text in json_blocks("protocol.md"):
        if marker in ("RoomSummary", "RoomCreatedBody", "HttpError"):
            openapi_validator(marker).validate(json.loads(text))
            seen += 1
    assert seen >= 2
    document = json.loads(openapi.render())
    for path in document["paths"].values():
        for op in path.values():
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                model = body["schema"]["$ref"].rsplit("/", 1)[1]
                openapi_validator(model).validate(body["example"])
    for response in document["components"]["responses"].values():
        media = response["content"]["application/json"]
        openapi_validator("HttpError").validate(media["example"])
    with pytest.raises(jsonschema.ValidationError):
        openapi_validator("CreateRoomBody").validate({"type": "create_room"})
    with pytest.raises(jsonschema.ValidationError):
        openapi_validator("HttpError").validate({"error": {"code": "bad_frame", "message": ""}})
