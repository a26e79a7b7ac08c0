"""The per-player message rate of table talk, on this process (a token bucket per player).

A player may say ``rate`` messages a second on average, ``burst`` at once
(``chat_player_rate``, ``chat_player_burst``); more get ``chat_rate_limited`` with
``retry_after``. Two processes each give a player their own bucket (a player with
connections on two processes may say twice as much): the per-room limit, counted by the room
store with each message (``chat_room_rate``), bounds what any room hears.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class PlayerRate:
    """Token buckets of players' messages.

    Args:
        rate: messages a second (0: no limit).
        burst: messages at once.
        clock: monotonic seconds (tests pass their own).
    """

    MAX_TRACKED = 100_000
    """Players tracked at most (full buckets are forgotten first)."""

    def __init__(self, rate: float, burst: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, player: str) -> float:
        """Take one message of ``player``'s bucket.

        Returns:
            0.0 when taken, else the seconds until one is back (nothing taken).
        """
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        tokens, at = self._buckets.get(player, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[player] = (tokens, now)
            return (1.0 - tokens) / self.rate
        self._buckets[player] = (tokens - 1.0, now)
        if len(self._buckets) > self.MAX_TRACKED:
            self._forget_full(now)
        return 0.0

    def _forget_full(self, now: float) -> None:
        full = [p for p, (t, at) in self._buckets.items()
                if t + (now - at) * self.rate >= self.burst]
        for p in full:
            del self._buckets[p]
