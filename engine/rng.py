"""Deterministic, verifiable shuffles from a seed (docs/rules.md, "The shuffle").

Every pack the engine shuffles has a *seed of its own*: 32 bytes derived one-way from the
room's secret seed, so that publishing the seeds of one game (when it is over) reveals
nothing about any other deal or game of the room (a rematch shares the room's seed):

* the game's seed: ``HMAC-SHA256(key = room seed, message = "cribbage/v2/game/<game number>")``;
* a deal's seed: ``HMAC-SHA256(key = game seed, message = "deal/<deal number>")``;
* a round of the cut for first deal: ``HMAC-SHA256(key = game seed, message = "cut/<round>")``.

The room seed as an HMAC key is the UTF-8 text of a str seed prefixed ``str:``, or the
decimal text of an int seed prefixed ``int:`` (numbers are decimal ASCII, no leading zeros).

A pack is shuffled from a 32-byte seed ``s`` by Fisher–Yates driven by the stream of
unsigned 64-bit big-endian words of ``SHA-256(s || counter)`` (counter a 64-bit big-endian
integer 0, 1, 2, ...; each digest gives four words, first bytes first), with rejection
sampling (no modulo bias). The commitment to a seed is ``SHA-256(seed)``, sent to the table
before the seed is used (``game_commitment``, ``deal_commitment`` events).
"""

from __future__ import annotations

import hashlib
import hmac

from .cards import FULL_DECK

_DECK_TEXT = [str(c) for c in FULL_DECK]

SHUFFLE_VERSION = "cribbage/v2"
"""Names the derivation and shuffle documented above (kept with archived games)."""


def check_seed(seed: object) -> str | int:
    """Return ``seed`` if it is a str or an int (not a bool); else raise ``ValueError``."""
    if isinstance(seed, bool) or not isinstance(seed, str | int):
        raise ValueError(f"a seed must be a str or an int, not {type(seed).__name__}")
    return seed


def _room_key(seed: str | int) -> bytes:
    kind = "int" if isinstance(seed, int) else "str"
    return f"{kind}:{seed}".encode()


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("ascii"), hashlib.sha256).digest()


def game_seed(seed: str | int, game_number: int) -> bytes:
    """The 32-byte seed of one game of a room (``game_number`` 1, then +1 per rematch)."""
    return _hmac(_room_key(check_seed(seed)), f"{SHUFFLE_VERSION}/game/{int(game_number)}")


def deal_seed_of(game: bytes, deal_number: int) -> bytes:
    """The 32-byte seed of a deal, from its game's seed (``deal_number`` 1, 2, ...)."""
    return _hmac(game, f"deal/{int(deal_number)}")


def cut_seed_of(game: bytes, cut_round: int) -> bytes:
    """The 32-byte seed of a round of the cut for first deal (``cut_round`` 1, 2, ...)."""
    return _hmac(game, f"cut/{int(cut_round)}")


def deal_seed(seed: str | int, game_number: int, deal_number: int) -> bytes:
    """The 32-byte seed of a deal, from the room's seed."""
    return deal_seed_of(game_seed(seed, game_number), deal_number)


def cut_seed(seed: str | int, game_number: int, cut_round: int) -> bytes:
    """The 32-byte seed of a round of the cut for first deal, from the room's seed."""
    return cut_seed_of(game_seed(seed, game_number), cut_round)


def commitment(seed: bytes) -> str:
    """The commitment to a seed: SHA-256 of its 32 bytes, as 64 lowercase hex digits."""
    return hashlib.sha256(seed).hexdigest()


class _Stream:
    """Unsigned 64-bit integers from SHA-256(seed || counter), counter = 0, 1, 2, ..."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buffer: list[int] = []

    def next_u64(self) -> int:
        if not self._buffer:
            digest = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
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


def shuffle(items: list, seed: bytes) -> list:
    """A Fisher–Yates shuffle of a copy of ``items`` driven by SHA-256(seed || counter):
    for i = n-1 down to 1, swap items i and j, j uniform in 0..i."""
    out = list(items)
    stream = _Stream(seed)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def shuffled_pack(seed: bytes) -> list[str]:
    """The pack shuffled from a 32-byte seed: 52 card texts, top first (the unshuffled
    pack is ``AC 2C .. KC AD .. KD AH .. KH AS .. KS``)."""
    return shuffle(_DECK_TEXT, seed)


def deal_deck(seed: str | int, game_number: int, deal_number: int) -> list[str]:
    """The shuffled pack for one deal: 52 card texts, top first.

    Args:
        seed: the room's secret seed (str or int).
        game_number: 1 for the first game in a room, +1 per rematch.
        deal_number: 1 for the first deal of that game.
    """
    return shuffled_pack(deal_seed(seed, game_number, deal_number))


def cut_cards(seed: str | int, game_number: int, cut_round: int, count: int) -> list[str]:
    """``count`` distinct cards cut from a pack shuffled for one round of the cut for
    first deal (docs/rules.md §2.1): the top ``count`` cards, in seat order of the
    contenders; ``cut_round`` is 1, then 2, ... for re-cuts after ties."""
    return shuffled_pack(cut_seed(seed, game_number, cut_round))[:count]
