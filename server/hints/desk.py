"""Where a server process makes hints (issue 22 point 5), so that asking for them costs the
other rooms nothing they would notice.

A hint is an ``expert`` search: a few milliseconds for a discard, up to about 80 ms of CPU
for a play (docs/performance.md). It runs in the computer processes, beside the moves of
the expert computer players of every room. Without a bound, one address with a few dozen
seated connections asking for hints back to back kept those processes busy and slowed
every expert computer's game 40 to 60 times (docs/performance.md, "Hints"). So:

* **One hint per room version and seat.** The answer depends only on what the seat sees
  at that version, so a repeat is answered from what was made (the last
  :data:`REMEMBERED` answers are kept), and a request while the same hint is being made
  waits for it. Asking again costs nothing; a new hint needs a move in the game.
* **At most ``hints_in_flight`` hints made at once** by a server process (setting; 0: no
  bound). A request beyond it is refused at once with :class:`HintsBusy` (the session
  answers ``error busy`` with ``retry_after``), so the computer players' moves never queue
  behind more than that many hints.
* **At most ``hints_per_minute`` hints made for one client address** (the session charges
  the address's budget when a request would make one — neither :meth:`HintDesk.knows` it
  nor :meth:`HintDesk.at_bound` — and gives the charge back when :meth:`HintDesk.costs`,
  read just before :meth:`HintDesk.get`, says it will not; beyond it ``error
  too_many_hints`` with ``retry_after``): without it one address's flood took
  the one hint being made from everyone else, and a person's hint waited up to 8 s
  (docs/performance.md, "Hints").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

HintKey = tuple[str, float, int, int]
"""``(room id, room created, room version, seat)``: what a hint is the answer for. The
creation time tells apart two rooms that had one id at different times (a room created
again with the same ``request_id`` after the first expired starts again at version 1)."""

SEARCHED = frozenset({"discard", "play"})
"""The legal actions whose hint is an ``expert`` search, made by the desk and charged to the
address; any other hint (not the seat's turn, the show, a rematch) is answered at once,
free."""

REMEMBERED = 512
"""How many made hints a process keeps to answer repeats (a discard table is about 2 KB)."""

RETRY_AFTER_SECONDS = 0.25
"""The ``retry_after`` of a hint refused because the process is making its bound already."""


class HintsBusy(Exception):
    """The process is making ``hints_in_flight`` hints already; nothing was started.

    Attributes:
        retry_after: seconds after which asking again may succeed.
    """

    def __init__(self, retry_after: float) -> None:
        super().__init__("the server is making as many hints as it may at once")
        self.retry_after = retry_after


class HintDesk:
    """Makes hints for a server process: once per :data:`HintKey`, at most ``limit`` at
    once.

    Args:
        limit: hints being made at once (0: no bound).

    Attributes (counters since start, read by ``/metrics``): ``made`` (hints made),
    ``shared`` (answered with a hint made or being made for the same key), ``refused``
    (refused with :class:`HintsBusy`).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.made = 0
        self.shared = 0
        self.refused = 0
        self._done: OrderedDict[HintKey, dict[str, Any]] = OrderedDict()
        self._making: dict[HintKey, asyncio.Task[dict[str, Any]]] = {}

    @property
    def in_flight(self) -> int:
        """Hints being made now."""
        return len(self._making)

    def knows(self, key: HintKey) -> bool:
        """Whether a hint for ``key`` is kept or being made (:meth:`get` shares it)."""
        return key in self._done or key in self._making

    def at_bound(self) -> bool:
        """Whether ``limit`` hints are being made (:meth:`get` refuses a new one,
        :class:`HintsBusy`)."""
        return bool(self.limit) and len(self._making) >= self.limit

    def costs(self, key: HintKey) -> bool:
        """Whether :meth:`get` would make a new hint for ``key`` now (neither known nor at
        the bound): what the per-address budget charges (``hints_per_minute``, charged by
        the session before :meth:`get`; nothing may be awaited between this answer and
        :meth:`get` for it to hold)."""
        return not self.knows(key) and not self.at_bound()

    async def get(self, key: HintKey, make: Callable[[], Awaitable[dict[str, Any]]]
                  ) -> dict[str, Any]:
        """The hint for ``key``: one made before, the one being made, or a new one from
        ``make()`` (run as a task of its own: a requester that goes away does not stop it,
        and the others asking for it still get it).

        Returns:
            The suggestion (shared between the requesters: not to be changed).

        Raises:
            HintsBusy: ``limit`` hints are being made and none of them is this one.
            Whatever ``make()`` raised (nothing is kept then; the next request tries again).
        """
        done = self._done.get(key)
        if done is not None:
            self._done.move_to_end(key)
            self.shared += 1
            return done
        task = self._making.get(key)
        if task is not None:
            self.shared += 1
            return await asyncio.shield(task)
        if self.limit and len(self._making) >= self.limit:
            self.refused += 1
            raise HintsBusy(RETRY_AFTER_SECONDS)
        task = asyncio.ensure_future(make())
        self._making[key] = task
        self.made += 1
        task.add_done_callback(lambda t: self._finished(key, t))
        return await asyncio.shield(task)

    def _finished(self, key: HintKey, task: asyncio.Task[dict[str, Any]]) -> None:
        self._making.pop(key, None)
        if task.cancelled():
            return
        if task.exception() is not None:  # retrieved here, raised to each requester
            return
        self._done[key] = task.result()
        while len(self._done) > REMEMBERED:
            self._done.popitem(last=False)

    async def close(self) -> None:
        """Cancel the hints being made (at the end of the app's lifespan)."""
        tasks = list(self._making.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
