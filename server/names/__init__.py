"""Seat names that cannot pass for something else (docs/protocol.md, "Seat names").

A display name is checked by the protocol for what it holds (``protocol.messages``: length,
visible characters, no control or format characters). Here it is checked for what it
*looks like* when a seat is taken with it, so nobody at a table can pass for the server's
own labels or for another player:

* :func:`imitated_label` — a name that reads like one of the labels the web table shows in
  place of a name, in any of its languages (English, Danish, Swedish): "You", "Du",
  "Computer (standard)", "Dator 2", "Seat 3", "team A", "Anna (you)" … The labels are read
  from the table's own catalogues (``server/static/i18n/*.json``, keys
  :data:`EXACT_KEYS`, :data:`NUMBERED_KEYS`, :data:`LEVEL_KEYS`, :data:`TEAM_KEYS`,
  :data:`SUFFIX_KEYS`), so a label changed there is guarded at once.
* :func:`same_name` — two names that read alike.

"Read alike" is :func:`name_key`: NFKC (full-width and compatibility forms fold to plain
letters), case folding, a few Cyrillic and Greek letters that look like Latin ones mapped to
them, then spaces, punctuation, control and format characters dropped ("W A L L Y",
"ｗａｌｌｙ" and "Wally." read as "wally"). A name that is nothing but punctuation is
compared with its spaces and format characters dropped only.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources

LANGUAGES = ("en", "da", "sv")
"""The catalogues read (the web table's languages)."""

EXACT_KEYS = ("name.you", "name.you_object", "name.nobody", "name.computer", "start.seat_you")
"""Catalogue labels a name may not read as, as they are."""

NUMBERED_KEYS = ("name.seat", "seat.n", "name.computer_seat")
"""Catalogue labels with a seat number ``{n}``: refused with any number, or none."""

LEVEL_KEYS = ("lobby.computer_seat", "presence.computer", "start.seat_computer")
"""Catalogue labels of a computer with its ``{level}`` (each level word of the catalogue)."""

TEAM_KEYS = ("team.name",)
"""Catalogue labels of a side, ``{team}`` A or B."""

SUFFIX_KEYS = ("players.you",)
"""Catalogue labels ``{name} (you)``: a name may not end in what follows ``{name}``."""

SERVER_LABELS = ("Computer (standard)", "Computer (easy)")
"""The names the server itself gives computer seats (``SeatInfo.name``)."""

_LOOKALIKES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o",
    "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "і": "i", "ї": "i", "ј": "j",
    "ѕ": "s", "ԁ": "d", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w", "ү": "y",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "ω": "w",
    # Latin look-alikes
    "ı": "i", "ȷ": "j", "ɑ": "a", "ɡ": "g", "ſ": "s",
})


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().translate(_LOOKALIKES)


def name_key(name: str) -> str:
    """What a name reads as: NFKC, case-folded, look-alike letters mapped, and spaces,
    punctuation, control and format characters dropped (an all-punctuation name keeps its
    punctuation). Two names with the same key are the same name at a table."""
    folded = _fold(name)
    return _loose(folded) or _tight(folded)


def _loose(folded: str) -> str:
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "ZPC")


def _tight(folded: str) -> str:
    return "".join(ch for ch in folded if unicodedata.category(ch)[0] not in "ZC")


def same_name(a: str, b: str) -> bool:
    """Whether two display names read alike (:func:`name_key`)."""
    return name_key(a) == name_key(b)


def _catalogue(lang: str) -> dict[str, object]:
    path = resources.files("server").joinpath("static", "i18n", f"{lang}.json")
    return json.loads(path.read_text(encoding="utf-8"))


def _pattern(template: str, fills: dict[str, str]) -> str:
    """A regular expression over name keys for a catalogue template: its literal parts
    read as names do, each ``{field}`` replaced by ``fills[field]`` (a regex)."""
    out = []
    for part in re.split(r"(\{\w+\})", template):
        field = part[1:-1] if part.startswith("{") and part.endswith("}") else None
        if field is not None:
            out.append(fills[field])
        else:
            out.append(re.escape(_loose(_fold(part))))
    return "".join(out)


@lru_cache(maxsize=1)
def _rules() -> tuple[re.Pattern[str], tuple[str, ...]]:
    """``(one regex over name keys, the suffixes over tight keys)`` from the catalogues."""
    alternatives: list[str] = [re.escape(name_key(label)) for label in SERVER_LABELS]
    suffixes: list[str] = []
    for lang in LANGUAGES:
        words = _catalogue(lang)
        levels = "|".join(re.escape(name_key(str(words[k]))) for k in words
                          if k.startswith("level.") and isinstance(words[k], str))
        for key in EXACT_KEYS:
            alternatives.append(re.escape(name_key(str(words[key]))))
        for key in NUMBERED_KEYS:
            alternatives.append(_pattern(str(words[key]), {"n": r"\d*"}))
        for key in LEVEL_KEYS:
            alternatives.append(_pattern(str(words[key]), {"level": f"(?:{levels})"}))
        for key in TEAM_KEYS:
            alternatives.append(_pattern(str(words[key]), {"team": "[ab]?"}))
        for key in SUFFIX_KEYS:
            tail = str(words[key]).split("{name}", 1)[1]
            suffixes.append(_tight(_fold(tail)))
    regex = re.compile("^(?:" + "|".join(sorted(set(alternatives))) + ")$")
    return regex, tuple(sorted(set(s for s in suffixes if s)))


def imitated_label(name: str) -> bool:
    """Whether a display name reads like one of the table's own labels in any of its
    languages (see the module docstring), e.g. "You", "du", "Computer (standard)",
    "Ｃｏｍｐｕｔｅｒ 2", "Plads 3", "team B", "Anna (dig)"."""
    regex, suffixes = _rules()
    if regex.match(name_key(name)):
        return True
    tight = _tight(_fold(name))
    return any(tight.endswith(s) and len(tight) > len(s) for s in suffixes)
