"""The replay file's contract (``protocol.replay``): the generated schema and the page's copy
are up to date, the schema uses only what the page's checker understands, the example in
docs/protocol.md "Replay files" is a file the page shows, and the rules refuse what they
say they refuse. (The page and these rules agree on crafted files: a browser test,
``tests/browser/test_replay.py``.)"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from protocol import replay

ROOT = Path(__file__).resolve().parents[2]

# The keywords server/static/js/replaycheck.js validates, and those that only annotate.
CHECKED = {"$ref", "anyOf", "oneOf", "discriminator", "const", "enum", "type", "pattern",
           "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
           "exclusiveMaximum", "items", "minItems", "maxItems", "properties", "required",
           "additionalProperties", "patternProperties"}
ANNOTATIONS = {"title", "description", "default", "examples", "$schema", "$id", "$defs",
               "mapping", "propertyName"}


def example() -> dict[str, Any]:
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- replay-file -->\n```jsonc\n(.*?)\n```", text, re.S)
    assert block, "docs/protocol.md has no replay file example"
    return json.loads(block.group(1))


def test_the_generated_files_are_up_to_date() -> None:
    assert replay.DOC_PATH.read_text(encoding="utf-8") == replay.render_doc(), \
        "run python -m protocol.replay"
    assert replay.PAGE_PATH.read_text(encoding="utf-8") == replay.render_page(), \
        "run python -m protocol.replay"
    assert replay.main(["--check"]) == 0


def test_the_schema_uses_only_what_the_page_checks() -> None:
    used: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                used.add(key)
                if key in ("properties", "$defs", "patternProperties", "mapping"):
                    for sub in value.values():
                        walk(sub)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(replay.build_schema())
    assert used - ANNOTATIONS <= CHECKED, used - ANNOTATIONS - CHECKED
    page = (ROOT / "server" / "static" / "js" / "replaycheck.js").read_text(encoding="utf-8")
    for keyword in CHECKED - {"$ref", "mapping"}:
        assert f"schema.{keyword}" in page or f'"{keyword}"' in page \
            or f"schema.{keyword.lstrip('$')}" in page, keyword


def test_the_documented_example_is_a_replay() -> None:
    data = example()
    assert replay.check_replay(data) is data
    validator = jsonschema.Draft202012Validator(replay.build_schema())
    validator.validate(data)


@pytest.mark.parametrize(("change", "where"), [
    (lambda d: d["seats"].pop(), "seats"),
    (lambda d: d["seats"][0].__setitem__("name", "Ann\u202e"), "seats[0].name"),
    (lambda d: d["versions"][0].__setitem__("version", 3), "versions[0].version"),
    (lambda d: d["versions"][0]["events"][0].__setitem__("name", " Ann"),
     "versions[0].events[0].name"),
    (lambda d: d["versions"][0]["events"][2].__setitem__("dealer", 2),
     "versions[0].events[2].dealer"),
    (lambda d: d["versions"][0]["events"][1].__setitem__("sides", [0, 0]),
     "versions[0].events[1].sides"),
    (lambda d: d["versions"][0]["events"][3].__setitem__("deal_number", 10**9),
     "versions[0].events[3].deal_number"),
    (lambda d: d["options"].update(lowball=True, muggins=True), "options.muggins"),
])
def test_the_rules_beyond_the_schema(change: Any, where: str) -> None:
    """Files the schema takes (the rules a schema cannot say) are refused, at the fault."""
    bad = copy.deepcopy(example())
    change(bad)
    with pytest.raises(replay.ReplayError) as err:
        replay.check_replay(bad)
    assert err.value.code == "damaged" and err.value.where.startswith(where), err.value.where


def test_sizes_and_versions() -> None:
    raw = json.dumps(example()).encode()
    assert replay.check_replay_bytes(raw)["format"] == "cribbage-replay"
    with pytest.raises(replay.ReplayError, match="too_large"):
        replay.check_replay_bytes(raw + b" " * replay.MAX_FILE_BYTES)
    with pytest.raises(replay.ReplayError, match="not_a_replay"):
        replay.check_replay_bytes(raw.replace(b'"game": 1', b'"game": NaN'))
    newer = dict(example(), format_version=2)
    with pytest.raises(replay.ReplayError, match="bad_version"):
        replay.check_replay(newer)
