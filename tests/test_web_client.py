"""The web client's files (``server/static``), checked without a browser:

* the client library it runs on is served from ``server/static/vendor/cribbage-client``, a
  copy of ``clients/js/src`` kept byte for byte (the server installs ``server/`` only, as
  package data, so the page cannot reach ``clients/js``; copy again after changing the
  library: ``cp clients/js/src/*.js server/static/vendor/cribbage-client/``);
* the three catalogues (English, Danish, Swedish) have the same keys, the same kinds of
  value, the plural forms each language needs, the same placeholders, no empty text;
* every key the code looks up exists, and every error and reject code the server may send
  (``protocol.codes``) has a text in every language;
* the old transport (``net.js``, ``patch.js``) is gone: the table imports the library.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from protocol.chat import CHAT_MODES, PRESETS
from protocol.codes import MEANINGS

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "server" / "static"
VENDOR = STATIC / "vendor" / "cribbage-client"
LIBRARY = ROOT / "clients" / "js" / "src"
LANGS = ("en", "da", "sv")
# Intl.PluralRules categories for cardinal numbers (CLDR): all three languages use these.
PLURALS = {"en": {"one", "other"}, "da": {"one", "other"}, "sv": {"one", "other"}}
FORMS = {"you", "single", "group"}
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def catalogue(lang: str) -> dict[str, Any]:
    return json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"))


def texts(value: Any) -> list[str]:
    """Every string inside a catalogue value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [t for v in value for t in texts(v)]
    return [t for v in value.values() for t in texts(v)]


def shape(value: Any, lang: str) -> Any:
    """What must agree between languages: the kind of value and its forms; plural objects
    must have exactly the categories the language needs."""
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return ("list", len(value))
    keys = set(value)
    if keys <= FORMS:
        return ("forms", frozenset(keys), tuple(shape(value[k], lang) for k in sorted(keys)))
    needed = sorted(PLURALS[lang])
    assert keys == PLURALS[lang], f"plural categories {sorted(keys)} (needs {needed})"
    return "plural"


def test_the_vendored_library_is_the_library() -> None:
    library = sorted(p.name for p in LIBRARY.glob("*.js"))
    vendored = sorted(p.name for p in VENDOR.glob("*.js"))
    assert library and vendored == library, (vendored, library)
    for name in library:
        assert (VENDOR / name).read_bytes() == (LIBRARY / name).read_bytes(), (
            f"server/static/vendor/cribbage-client/{name} differs from clients/js/src/{name}: "
            "cp clients/js/src/*.js server/static/vendor/cribbage-client/")


def test_the_table_runs_on_the_library() -> None:
    assert not (STATIC / "js" / "net.js").exists() and not (STATIC / "js" / "patch.js").exists()
    room = (STATIC / "js" / "room.js").read_text(encoding="utf-8")
    assert 'from "../vendor/cribbage-client/index.js"' in room
    assert "legalActions()" in room
    # No rules of its own: no card values, no count arithmetic against 31.
    assert "cardValue" not in room and "<= 31" not in room


@pytest.mark.parametrize("lang", LANGS[1:])
def test_every_catalogue_has_every_key_and_form(lang: str) -> None:
    en, other = catalogue("en"), catalogue(lang)
    missing = sorted(set(en) - set(other))
    extra = sorted(set(other) - set(en))
    assert not missing and not extra, f"{lang}: missing {missing}, extra {extra}"
    for key, value in en.items():
        assert shape(other[key], lang) == shape(value, "en"), key
        # The same placeholders (a translation may leave one out only where the language
        # does not need it: plural forms such as Danish "{n} kort").
        en_names = {n for t in texts(value) for n in PLACEHOLDER.findall(t)}
        names = {n for t in texts(other[key]) for n in PLACEHOLDER.findall(t)}
        assert names <= en_names, f"{lang} {key}: unknown placeholders {names - en_names}"
        assert names == en_names or key in {"waiting.text"}, f"{lang} {key}: {names} != {en_names}"


@pytest.mark.parametrize("lang", LANGS)
def test_no_key_is_given_twice(lang: str) -> None:
    """A key given twice in a catalogue silently loses its first text (JSON keeps the last):
    two pages' words under one name (the lobby's "Public tables" once headed every table's
    page)."""
    twice: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict:
        seen: dict = {}
        for key, value in items:
            if key in seen:
                twice.append(key)
            seen[key] = value
        return seen

    json.loads((STATIC / "i18n" / f"{lang}.json").read_text(encoding="utf-8"),
               object_pairs_hook=pairs)
    assert not twice, f"{lang}: keys given twice: {twice}"


@pytest.mark.parametrize("lang", LANGS)
def test_no_empty_text_and_plural_forms(lang: str) -> None:
    cat = catalogue(lang)
    for key, value in cat.items():
        shape(value, lang)
        for text in texts(value):
            assert text.strip(), f"{lang} {key} is empty"
            assert "⟦" not in text
    assert len(cat["words.numbers"]) == 32  # 0..31, said in the show and the play


def test_every_key_the_code_uses_exists() -> None:
    en = catalogue("en")
    used: set[str] = set()
    for path in (STATIC / "js").glob("*.js"):
        source = path.read_text(encoding="utf-8")
        used |= set(re.findall(r'\bt\("([a-z0-9_.]+)"', source))
        used |= set(re.findall(
            r'"((?:replay|say|why|log|status|muggins|show|hint)\.[a-z_]+)"', source))
    missing = sorted(k for k in used if k not in en)
    assert not missing, missing
    # Keys made from data: card names, levels, calls, kinds, phases of the connection.
    made = [f"card.{part}.{x}" for part in ("rank", "index") for x in "A23456789TJQK"]
    made += [f"card.suit.{s}" for s in "CDHS"]
    made += [f"level.{x}" for x in ("standard", "easy")]
    made += [f"{p}_{k}" for p in ("log.announce", "status.announce", "status.counting",
                                  "status.answer", "muggins.announced", "muggins.waiting",
                                  "hint.announce") for k in ("hand", "crib")]
    made += [f"log.answer_{c}" for c in ("accept", "muggins", "overcount")]
    made += [f"muggins.call_{c}" for c in ("accept", "muggins", "overcount")]
    made += [f"call.{c}" for c in ("muggins", "overcount")]
    made += [f"conn.{s}" for s in ("idle", "connecting", "open", "retrying", "closed")]
    made += [f"whose.{k}" for k in ("hand", "crib", "time")]
    made += [f"say.{k}" for k in ("pair", "pair_royal", "double_pair_royal", "run", "run_again")]
    made += [f"why.{k}" for k in ("pair", "pair_royal", "double_pair_royal")]
    made += [f"rules.{v}.{part}" for v in ("standard", "backup10", "lowball", "muggins")
             for part in ("title", "lede", "sections")]
    # Table talk (chat.js): every preset of the protocol, the report reasons, the modes.
    made += [f"chat.preset.{p}" for p in PRESETS]
    made += [f"chat.reason.{r}" for r in ("abuse", "spam", "cheating", "other")]
    made += [f"settings.chat_{m}" for m in CHAT_MODES]
    missing = sorted(k for k in made if k not in en)
    assert not missing, missing


def test_the_chat_offers_every_preset_and_inserts_text_only() -> None:
    """The page offers exactly the protocol's presets (protocol/chat.py), in its order; and
    the chat code never writes markup: no innerHTML, insertAdjacentHTML or document.write,
    no link made of a message (other people's words go in as text nodes, dom.js)."""
    source = (STATIC / "js" / "chat.js").read_text(encoding="utf-8")
    listed = re.search(r"export const PRESETS = \[(.*?)\];", source, re.DOTALL)
    assert listed, "chat.js: no PRESETS"
    assert re.findall(r'"(\w+)"', listed.group(1)) == list(PRESETS)
    modes = re.search(r"export const CHAT_MODES = \[(.*?)\];", source, re.DOTALL)
    assert modes and re.findall(r'"(\w+)"', modes.group(1)) == list(CHAT_MODES)
    for bad in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", 'h("a"'):
        assert bad not in source, bad


def test_every_server_code_has_a_text() -> None:
    en = catalogue("en")
    missing = sorted(code for code in MEANINGS if f"code.{code}" not in en)
    assert not missing, f"codes without a text in server/static/i18n/*.json: {missing}"
    # And the client library's own codes (clients/js/src/errors.js).
    errors = (LIBRARY / "errors.js").read_text(encoding="utf-8")
    library = {code for line in re.findall(r"^ \* - (.*?):", errors, re.MULTILINE)
               for code in re.findall(r"`(\w+)`", line)}
    assert library, "no codes found in errors.js"
    missing = sorted(code for code in library if f"code.{code}" not in en)
    assert not missing, missing


def test_danish_and_swedish_read_as_players_write_them() -> None:
    """Danish writes the definite crib "cribben", as the Danish variant pages write "crib"
    (never "crib'en"); the end of the play is said as players say it, not translated word
    for word ("Spillet med kortene er slut"); and no text of the table needs an emoji or
    symbol font (⏱, ✓: empty boxes on a device without one). (The replay page's words are
    its own, ``replay.*``.)"""
    da, sv = catalogue("da"), catalogue("sv")
    danish = " ".join(t for v in da.values() for t in texts(v))
    assert "crib'en" not in danish and "cribben" in danish
    assert "Spillet med kortene er slut" not in danish
    assert da["log.play_over"] == "Alle kort er spillet."
    swedish = " ".join(t for v in sv.values() for t in texts(v))
    assert "Spelet med korten är slut" not in swedish
    assert sv["log.play_over"] == "Alla kort är spelade."
    symbol = re.compile("[\u2300-\u23ff\u25a0-\u25ff\u2700-\u27bf\u2b00-\u2bff"
                        "\U0001f000-\U0001faff\ufe0f]")
    for lang in LANGS:
        for key, value in catalogue(lang).items():
            if key.startswith("replay."):
                continue
            for text in texts(value):
                assert not symbol.search(text), (lang, key, text)
