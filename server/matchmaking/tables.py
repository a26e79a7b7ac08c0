"""A quick-match table: what a player asks for in ``queue_join.table``.

A table is the engine options (players, partnerships, target, Muggins, Lowball,
Back-up 10) and the room settings that matter for matching (match length, rated). Players
wait in one queue per distinct table; its key is a short stable string, e.g.
``2-121-r-m1`` (2 players, to 121, rated, a single game) or ``2x2-61-u-m3-l`` (4 in
partnerships, to 61, unrated, best of 3, Lowball).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..archive.rows import table_kind
from ..room_settings import RATED_OPTIONS


class TableError(ValueError):
    """A table that cannot be played; ``code`` is ``bad_options`` or ``rated_options``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Table:
    """A quick-match table (see the module docstring)."""

    players: int = 2
    partnerships: bool = False
    target: int = 121
    muggins: bool = False
    lowball: bool = False
    backup10: bool = False
    match: int = 1
    rated: bool = False

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Table:
        """A table from ``queue_join.table`` (plain data, already typed by the protocol
        model).

        Raises:
            TableError: ``bad_options`` (partnerships without 4 players, a match length
                other than 1, 3, 5, 7), ``rated_options`` (a rated table that is not the
                standard game to 121 without Muggins, Lowball or Back-up 10).
        """
        table = cls(**{k: data[k] for k in asdict(cls()) if k in data and data[k] is not None})
        if table.partnerships and table.players != 4:
            raise TableError("bad_options", "partnerships need 4 players")
        if table.match not in (1, 3, 5, 7):
            raise TableError("bad_options", "a match is best of 1, 3, 5 or 7")
        if table.rated and {**table.options()} != {**table.options(), **RATED_OPTIONS}:
            raise TableError("rated_options", "a rated table is the standard game to 121 "
                             "without Muggins, Lowball or Back-up 10")
        return table

    @property
    def kind(self) -> str:
        """The table kind a rating is kept for: ``2``, ``3``, ``4`` or ``2x2``."""
        return table_kind(self.players, self.partnerships)

    @property
    def key(self) -> str:
        """The queue's key (see the module docstring): letters, digits and ``-`` only."""
        flags = "".join(f for f, on in (("g", self.muggins), ("l", self.lowball),
                                        ("b", self.backup10)) if on)
        parts = [self.kind, str(self.target), "r" if self.rated else "u", f"m{self.match}"]
        if flags:
            parts.append(flags)
        return "-".join(parts)

    @classmethod
    def from_key(cls, key: str) -> Table:
        """The table of a queue key (the inverse of :attr:`key`).

        Raises:
            TableError: not a queue key.
        """
        try:
            parts = key.split("-")
            kind, target, rated, match = parts[:4]
            flags = parts[4] if len(parts) > 4 else ""
            return cls.from_dict({
                "players": 4 if kind == "2x2" else int(kind), "partnerships": kind == "2x2",
                "target": int(target), "rated": rated == "r", "match": int(match[1:]),
                "muggins": "g" in flags, "lowball": "l" in flags, "backup10": "b" in flags})
        except (ValueError, TypeError) as exc:
            raise TableError("bad_options", f"not a queue key: {key!r}") from exc

    def options(self) -> dict[str, Any]:
        """The engine options (``engine.GameOptions`` as plain data)."""
        return {"players": self.players, "partnerships": self.partnerships,
                "target": self.target, "muggins": self.muggins, "lowball": self.lowball,
                "backup10": self.backup10}

    def room(self) -> dict[str, Any]:
        """The room settings of a matched room (``server.room_settings.resolve`` input):
        its talk is preset phrases only (strangers meet there: docs/protocol.md "Chat")."""
        return {"match": self.match, "rated": self.rated, "chat": "presets"}

    def to_dict(self) -> dict[str, Any]:
        """As ``queue_status.table`` / ``matched.table``."""
        return asdict(self)
