"""The replay file: a finished game as the public saw it, to keep, share and play back.

The web table writes it (``fetchReplay`` in ``server/static/js/replay.js``) from the room's
public ``history`` (docs/protocol.md "history", ``"public": true``) and the ``/replay``
page plays it back. Anyone can hand anyone a file, so the page trusts nothing in it: it
shows a file only when the file passes :func:`check_replay`'s rules, which are

* the JSON Schema of :class:`ReplayFile` (types, closed objects, cards, ranges, sizes), and
* the rules a schema cannot say (:func:`replay_fault`): seats numbered 0..n-1 as the options
  say, display names as clean as the server's own name rules (``protocol.messages``), one
  version after another, every seat and side in an event one of the game's, every score
  within the target, no list in an event longer than :data:`MAX_EVENT_LIST`.

The page holds a copy of the schema (``server/static/js/replay-schema.js``, generated with
``docs/replay.schema.json`` by ``python -m protocol.replay``; ``--check`` fails when either
is stale) and runs the same rules in ``server/static/js/replaycheck.js``; a browser test
feeds crafted files to both and expects the same verdicts. docs/protocol.md "Replay files"
describes the format.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from . import messages
from .generated import write_or_check
from .messages import ROOM_ID_PATTERN, Level
from .schema import named_schemas
from .shapes import Event, GameResult, Options

FORMAT = "cribbage-replay"
"""The file's ``format``."""

FORMAT_VERSION = 1
"""The file's ``format_version``: a file with a higher one was written by a newer table."""

MAX_FILE_BYTES = 4 * 1024 * 1024
"""The largest replay file the page opens, in bytes (a 4-player game to 121 is about
70 KB)."""

MAX_VERSIONS = 5000
"""Most versions (moves) in a file: a long 4-player game has a few hundred."""

MAX_EVENTS = 64
"""Most events in one version (the end of a 4-player play with its whole show is 15)."""

MAX_EVENT_LIST = 32
"""Most items in any list inside an event (cards of a count, score items, cut rounds)."""

MAX_DEAL = 1000
"""The highest deal number (every deal pegs at least one hole: at most 2 x 121)."""

MAX_GAME = 1_000_000
"""The highest game number (a room's rematches)."""

MAX_POINTS = 29
"""The most points one peg, announcement or Muggins call can carry (a 29 hand)."""

SAVED_AT_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)
"""``saved_at``: an ISO 8601 time, as ``Date.toISOString()`` writes it (ASCII digits: the
same pattern in every regular expression engine)."""


def _clean_name(name: str) -> str:
    """A name as the server's name rules allow it (``protocol.messages``, docs/protocol.md
    "Identity and tokens"), and already trimmed."""
    if messages._check_name(name) != name:
        raise ValueError("a name cannot start or end with a space")
    return name


ReplayName = Annotated[
    str,
    Field(min_length=1, max_length=32, description=(
        "A display name under the server's rules (docs/protocol.md \"Identity and tokens\"): "
        "trimmed, at least one visible character, no control or format characters, no "
        "line or paragraph separators.")),
    AfterValidator(_clean_name),
]
"""A seat's name in a replay file."""

SeatNo = Annotated[int, Field(ge=0, le=3)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ReplaySeat(_Model):
    """A seat as the table showed it at game over."""

    seat: SeatNo
    name: ReplayName
    kind: Literal["human", "computer"]
    level: Level | None = Field(description="A computer player's level (or the level of a "
                                "computer standing in for an absent human), else null.")


class ReplayVersion(_Model):
    """One version of the room (one move): its events as a spectator saw them."""

    version: int = Field(ge=1)
    events: list[Event] = Field(max_length=MAX_EVENTS)


class ReplayFile(_Model):
    """A finished game as the public saw it (docs/protocol.md "Replay files")."""

    format: Literal["cribbage-replay"]
    format_version: Literal[1]
    room: str = Field(pattern=ROOM_ID_PATTERN, description="The room's id.")
    game: int = Field(ge=1, le=MAX_GAME, description="The game number in the room.")
    saved_at: str = Field(pattern=SAVED_AT_PATTERN, max_length=40,
                          description="When the file was written (ISO 8601).")
    options: Options
    seats: list[ReplaySeat] = Field(min_length=2, max_length=4,
                                    description="Every seat, in seat order.")
    first: int = Field(ge=1, description="The version that started the game.")
    versions: list[ReplayVersion] = Field(
        min_length=1, max_length=MAX_VERSIONS,
        description="Every version of the game from `first` on, oldest first, with its "
        "events as a spectator saw them (the public `history`).")
    result: GameResult | None = Field(description="The outcome, null if the file was "
                                      "saved before the game was over.")


class ReplayError(ValueError):
    """A file the replay page refuses: ``code`` is ``not_a_replay``, ``bad_version``,
    ``too_large`` or ``damaged``; ``where`` names the first fault (``versions[3].events[0]``)
    when there is one."""

    def __init__(self, code: str, where: str = "") -> None:
        super().__init__(f"{code}: {where}" if where else code)
        self.code = code
        self.where = where


SEAT_FIELDS = ("seat", "dealer", "owner", "caller", "next")
"""Event fields that name a seat (or null)."""

SIDE_FIELDS = ("side", "winner", "reached_by")
"""Event fields that name a side (or null)."""

SCORE_FIELDS = ("score_before", "score_after")
"""Event fields that hold a score, in holes."""

POINT_FIELDS = ("points", "announced", "true_count", "owner_pegs", "caller_pegs")
"""Event fields that hold points."""


def _lists(node: Any, path: str) -> Iterator[tuple[str, list[Any]]]:
    if isinstance(node, list):
        yield path, node
        for i, item in enumerate(node):
            yield from _lists(item, f"{path}[{i}]")
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _lists(value, f"{path}.{key}")


def _result_fault(result: dict[str, Any], n_sides: int, players: int, target: int,
                  path: str) -> str | None:
    scores = result["scores"]
    if len(scores) != n_sides:
        return f"{path}.scores"
    for i, score in enumerate(scores):
        if score > target:
            return f"{path}.scores[{i}]"
    for key in ("winner_seats", "loser_seats"):
        for i, seat in enumerate(result[key]):
            if seat >= players:
                return f"{path}.{key}[{i}]"
    for i, side in enumerate(result["losers"]):
        if side >= n_sides:
            return f"{path}.losers[{i}]"
    for key in result["skunks"]:
        if int(key) >= n_sides:
            return f"{path}.skunks"
    for key in ("winner", "reached_by"):
        if result[key] is not None and result[key] >= n_sides:
            return f"{path}.{key}"
    return None


def replay_fault(data: dict[str, Any]) -> str | None:
    """The first rule a schema-valid replay file (plain data) breaks, as a path into it
    (``seats[1].seat``, ``versions[3].events[0].score_after``), or None. The rules are the
    module's (above); ``server/static/js/replaycheck.js`` has the same, in the same order."""
    options = data["options"]
    players, target = options["players"], options["target"]
    if options["partnerships"] and players != 4:
        return "options.partnerships"
    if options["lowball"] and options["muggins"]:
        return "options.muggins"
    sides = [0, 1, 0, 1] if options["partnerships"] else list(range(players))
    n_sides = len(set(sides))
    if len(data["seats"]) != players:
        return "seats"
    for i, seat in enumerate(data["seats"]):
        if seat["seat"] != i:
            return f"seats[{i}].seat"
        if seat["kind"] == "computer" and seat["level"] is None:
            return f"seats[{i}].level"
    if data["result"] is not None:
        fault = _result_fault(data["result"], n_sides, players, target, "result")
        if fault:
            return fault
    for i, version in enumerate(data["versions"]):
        at = f"versions[{i}]"
        if version["version"] != data["first"] + i:
            return f"{at}.version"
        for j, ev in enumerate(version["events"]):
            fault = _event_fault(ev, data, sides, n_sides, f"{at}.events[{j}]")
            if fault:
                return fault
    return None


def _event_fault(ev: dict[str, Any], data: dict[str, Any], sides: list[int], n_sides: int,
                 at: str) -> str | None:
    options = data["options"]
    players, target = options["players"], options["target"]
    for path, items in _lists(ev, at):
        if len(items) > MAX_EVENT_LIST:
            return path
    for key in SEAT_FIELDS:
        if ev.get(key) is not None and ev[key] >= players:
            return f"{at}.{key}"
    for key in SIDE_FIELDS:
        if ev.get(key) is not None and ev[key] >= n_sides:
            return f"{at}.{key}"
    for key in SCORE_FIELDS:
        if key in ev and ev[key] > target:
            return f"{at}.{key}"
    for key in POINT_FIELDS:
        if ev.get(key) is not None and ev[key] > MAX_POINTS:
            return f"{at}.{key}"
    kind = ev["type"]
    if kind in ("seat_taken", "computer_standin") and ev["name"] is not None:
        try:
            _clean_name(ev["name"])
        except ValueError:
            return f"{at}.name"
    elif kind == "game_start":
        if ev["options"] != options:
            return f"{at}.options"
        if ev["players"] != players:
            return f"{at}.players"
        if ev["sides"] != sides:
            return f"{at}.sides"
        if ev["game_number"] != data["game"]:
            return f"{at}.game_number"
    elif kind == "cut_for_deal":
        for r, cuts in enumerate(ev["cuts"]):
            for c, cut in enumerate(cuts):
                if cut["seat"] >= players:
                    return f"{at}.cuts[{r}][{c}].seat"
    elif kind == "deal" and ev["deal_number"] > MAX_DEAL:
        return f"{at}.deal_number"
    elif kind == "show_hand" and len(ev["cards"]) != 4:
        return f"{at}.cards"
    elif kind == "game_over":
        return _result_fault(ev, n_sides, players, target, at)
    return None


def check_replay(data: Any) -> dict[str, Any]:
    """``data`` (a parsed replay file) if the replay page may show it.

    Raises:
        ReplayError: ``not_a_replay`` (not an object, or its ``format`` is not
            ``cribbage-replay``), ``bad_version`` (a ``format_version`` above this one's),
            ``damaged`` (anything else the schema or :func:`replay_fault` refuses).
    """
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReplayError("not_a_replay")
    version = data.get("format_version")
    if type(version) is int and version > FORMAT_VERSION:
        raise ReplayError("bad_version")
    try:
        ReplayFile.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        raise ReplayError("damaged", _path(first["loc"])) from None
    fault = replay_fault(data)
    if fault:
        raise ReplayError("damaged", fault)
    return data


def check_replay_bytes(raw: bytes) -> dict[str, Any]:
    """:func:`check_replay` of a file's bytes; ``too_large`` past :data:`MAX_FILE_BYTES`,
    ``not_a_replay`` when they are not JSON text (UTF-8, no ``NaN``)."""
    if len(raw) > MAX_FILE_BYTES:
        raise ReplayError("too_large")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_not_json)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ReplayError("not_a_replay") from None
    return check_replay(data)


def _not_json(name: str) -> Any:
    """``NaN``, ``Infinity`` and ``-Infinity`` are not JSON (``JSON.parse`` refuses them)."""
    raise ValueError(f"{name} is not JSON")


def _path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


LIMITS = {
    "max_file_bytes": MAX_FILE_BYTES,
    "max_versions": MAX_VERSIONS,
    "max_events": MAX_EVENTS,
    "max_event_list": MAX_EVENT_LIST,
    "max_deal": MAX_DEAL,
    "max_points": MAX_POINTS,
}
"""The bounds the page's checker needs beyond the schema (written into its module)."""

DOC_PATH = Path(__file__).resolve().parent.parent / "docs" / "replay.schema.json"
"""The replay file's JSON Schema, for other programs."""

PAGE_PATH = (Path(__file__).resolve().parent.parent / "server" / "static" / "js"
             / "replay-schema.js")
"""The same schema as an ES module for the web page, with the name rules' data."""


def build_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of :class:`ReplayFile`, as plain data."""
    defs = named_schemas({"ReplayFile": ReplayFile}, "#/$defs/{model}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://cribbage.invalid/replay.schema.json",
        "title": "cribbage-replay file, format_version 1",
        "description": (
            "Generated by `python -m protocol.replay` from protocol/replay.py; do not edit. "
            "A file valid here must also keep the rules of docs/protocol.md \"Replay files\" "
            "that a schema cannot say."
        ),
        "$ref": "#/$defs/ReplayFile",
        "$defs": defs,
    }


def render_doc() -> str:
    """``docs/replay.schema.json``'s exact text."""
    return json.dumps(build_schema(), indent=2) + "\n"


def render_page() -> str:
    """``server/static/js/replay-schema.js``'s exact text."""
    name_rules = {"invisible_fillers": "".join(sorted(messages.INVISIBLE_FILLERS))}
    return (
        "// Generated by `python -m protocol.replay` from protocol/replay.py; do not edit.\n"
        "// The replay file's JSON Schema (docs/replay.schema.json), the bounds the checker\n"
        "// needs beyond it, and the data of the server's name rules (protocol/messages.py).\n"
        f"export const REPLAY_SCHEMA = {json.dumps(build_schema(), separators=(',', ':'))};\n"
        f"export const REPLAY_LIMITS = {json.dumps(LIMITS)};\n"
        f"export const NAME_RULES = {json.dumps(name_rules)};\n"
    )


def main(argv: list[str] | None = None) -> int:
    """Write both files, or with ``--check`` compare them. Returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    code = 0
    for path, render in ((DOC_PATH, render_doc), (PAGE_PATH, render_page)):
        code |= write_or_check([*args, "--output", str(path)], "the replay file's schema",
                               path, render, "protocol.replay")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
