"""Deterministic shuffles from a seed.

SHA-256 in counter mode is the random stream; Fisher–Yates with rejection sampling (no
modulo bias) turns it into a permutation. Given a secret seed of 128 bits or more, the
shuffles are as unpredictable as SHA-256 is; given the same seed, they are reproducible.

Each deal has its own shuffle, derived from ``(seed, game number, deal number)``; each round
of the cut for first deal (docs/rules.md §2.1) from ``(seed, game number, round)``.
"""

from __future__ import annotations

import hashlib

from .cards import FULL_DECK

_DECK_TEXT = [str(c) for c in FULL_DECK]


def check_seed(seed: object) -> str | int:
    """Return ``seed`` if it is a str or an int (not a bool); else raise ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, str | int):
        raise ValueError(f"a seed must be a str or an int, not {type(seed).__name__}")
    return seed


def _key(seed: str | int, purpose: str, *numbers: int) -> bytes:
    kind = "int" if isinstance(seed, int) else "str"
    head = f"cribbage/v1/{purpose}/" + "/".join(str(n) for n in numbers)
    return head.encode() + b"\x00" + kind.encode() + b":" + str(seed).encode("utf-8")


class _Stream:
    """Unsigned 64-bit integers from SHA-256(key || counter), counter = 0, 1, 2, ..."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._counter = 0
        self._buffer: list[int] = []

    def next_u64(self) -> int:
        if not self._buffer:
            digest = hashlib.sha256(self._key + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._buffer = [
                int.from_bytes(digest[i : i + 8], "big") for i in range(24, -1, -8)
            ]
        return self._buffer.pop()

    def below(self, n: int) -> int:
        """A uniform integer in ``0 .. n-1`` (rejection sampling, no modulo bias)."""
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


def shuffle(items: list, key: bytes) -> list:
    """A Fisher–Yates shuffle of a copy of ``items`` driven by SHA-256(key || counter)."""
    out = list(items)
    stream = _Stream(key)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def deal_deck(seed: str | int, game_number: int, deal_number: int) -> list[str]:
    """The shuffled pack for one deal: 52 card texts, top first.

    Args:
        seed: the game's secret seed (str or int).
        game_number: 1 for the first game in a room, +1 per rematch.
        deal_number: 1 for the first deal of that game.
    """
    return shuffle(_DECK_TEXT, _key(check_seed(seed), "deal", game_number, deal_number))


def cut_cards(seed: str | int, game_number: int, cut_round: int, count: int) -> list[str]:
    """``count`` distinct cards cut from a pack shuffled for one round of the cut for
    first deal (docs/rules.md §2.1); ``cut_round`` is 1, then 2, ... for re-cuts after ties."""
    deck = shuffle(_DECK_TEXT, _key(check_seed(seed), "cut", game_number, cut_round))
    return deck[:count]
