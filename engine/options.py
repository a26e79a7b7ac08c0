"""Game options (docs/rules.md §1)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .shapes import Options

TARGETS = (121, 61)
"""The two game lengths, in holes (docs/rules.md §1.3)."""


@dataclass(frozen=True)
class GameOptions:
    """The options a game is played with (docs/rules.md §1.2, §1.3).

    Attributes:
        players: 2, 3 or 4 seats.
        partnerships: 4 seats in two sides (0 and 2 against 1 and 3); needs ``players == 4``.
        target: 121 or 61 holes.
        muggins: owners announce their counts and opponents may call (docs/rules.md §5).
        lowball: the first to reach the target loses (docs/rules.md §7).
        backup10: a hand or crib counting 0 moves its owner back 10 holes (docs/rules.md §6).

    Any combination of the three flags is accepted; with ``lowball`` the game is played
    without Muggins (docs/rules.md §1.3), see :meth:`effective`.

    Raises:
        ValueError: a bad value or combination, with a message saying which.
    """

    players: int = 2
    partnerships: bool = False
    target: int = 121
    muggins: bool = False
    lowball: bool = False
    backup10: bool = False

    def __post_init__(self) -> None:
        for name in ("players", "target"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"{name} must be an integer, not {value!r}")
        for name in ("partnerships", "muggins", "lowball", "backup10"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ValueError(f"{name} must be true or false, not {value!r}")
        if self.players not in (2, 3, 4):
            raise ValueError(f"players must be 2, 3 or 4, not {self.players}")
        if self.partnerships and self.players != 4:
            raise ValueError(
                f"partnerships need exactly 4 players, not {self.players} (docs/rules.md §1.2)"
            )
        if self.target not in TARGETS:
            raise ValueError(f"target must be 121 or 61, not {self.target}")

    # -- derived facts used throughout the engine -------------------------------------
    @property
    def sides(self) -> int:
        """Number of scores: 2 in partnerships, else one per seat (docs/rules.md §1.4)."""
        return 2 if self.partnerships else self.players

    @property
    def plays_muggins(self) -> bool:
        """Whether Muggins is actually played: chosen and not Lowball (docs/rules.md §1.3)."""
        return self.muggins and not self.lowball

    @property
    def hand_size(self) -> int:
        """Cards dealt to each seat: 6 with 2 players, else 5 (docs/rules.md §2.3)."""
        return 6 if self.players == 2 else 5

    @property
    def discard_count(self) -> int:
        """Cards each seat lays away to the crib: 2 with 2 players, else 1 (docs/rules.md §2.3)."""
        return 2 if self.players == 2 else 1

    def side_of(self, seat: int) -> int:
        """The side (score index) of ``seat``: ``seat % 2`` in partnerships, else ``seat``."""
        return seat % 2 if self.partnerships else seat

    def seats_of(self, side: int) -> list[int]:
        """The seats of ``side``, in seat order."""
        return [s for s in range(self.players) if self.side_of(s) == side]

    # -- plain data --------------------------------------------------------------------
    def effective(self) -> GameOptions:
        """The options as played: ``muggins`` is off when ``lowball`` is on (docs/rules.md §1.3)."""
        return replace(self, muggins=False) if self.muggins and self.lowball else self

    def to_dict(self) -> Options:
        """Plain data (:class:`engine.shapes.Options`): ``{"players": int,
        "partnerships": bool, "target": int, "muggins": bool, "lowball": bool,
        "backup10": bool}``."""
        return {
            "players": self.players, "partnerships": self.partnerships, "target": self.target,
            "muggins": self.muggins, "lowball": self.lowball, "backup10": self.backup10,
        }

    @classmethod
    def from_dict(cls, data: dict) -> GameOptions:
        """Options from plain data; missing keys take their defaults.

        Raises:
            ValueError: not a dict, an unknown key, or a bad value.
        """
        if not isinstance(data, dict):
            raise ValueError(f"options must be a dict, not {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown option(s): {', '.join(map(str, unknown))}")
        return cls(**data)
