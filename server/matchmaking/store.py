"""Where the quick-match queues live: in memory (one process) or in Redis (any number of
processes; the same keys on a Redis Cluster).

Every key shares the hash tag ``{mm}``, so on a cluster all of quick match sits in one slot
and each step below is one atomic script: that is what makes "a player waits in one queue
at a time" and "no player is matched into two rooms" hold without cross-slot work. (The
cost: quick match is one shard's load; at a join, a poll per process every quarter second
and a claim per match it is far below what one shard serves, docs/scaling.md.)

Keys (``<prefix>mm:{mm}:...``):

* ``entries``: hash player -> entry JSON ``{"q": queue, "t": ticket, "n": name,
  "r": rating, "j": joined (s), "o": owner}`` — one field per player, so one queue at a
  time by construction;
* ``counts``: hash queue -> players waiting in it;
* ``owners``: hash owner (a server process's id) -> its last heartbeat (ms);
* ``pending``: hash match id -> plan JSON (recorded, room not ready yet);
* ``matched:<ticket>``: a player's result (JSON; ``{"pending": match id}`` while the room
  is being made), kept 10 minutes or until their process takes it, then
  :data:`TAKEN_KEEP` seconds more marked taken;
* ``placed``: hash player -> the ticket of their last recorded match (a player who queues
  again before their result was taken is given that match, never a second one);
* ``lease``: the owner that may match now (``PX``).

Errors: :class:`server.store.base.StoreUnavailable` / ``OutcomeUnknown`` as the room store
raises them (the Redis store uses the room store's own connections and error handling).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from redis.commands.core import AsyncScript

TAG = "{mm}"
"""The hash tag of every quick-match key."""

TAKEN_KEEP = 30.0
"""Seconds a taken result stays (marked taken): a player who queues again within them (their
connection went as ``matched`` was sent) is given the same match again, not a second."""


@dataclass(frozen=True)
class Entry:
    """A player waiting in a queue.

    Attributes:
        player: public id. queue: the queue's key (``Table.key``). ticket: random id of
        this wait (a new ``queue_join`` makes a new one). name: display name. rating: the
        rating matched on (``matching.match_rating``). joined: Unix seconds. owner: the
        id of the server process holding the player's waiting connections.
    """

    player: str
    queue: str
    ticket: str
    name: str
    rating: float
    joined: float
    owner: str

    def to_json(self) -> str:
        return json.dumps({"q": self.queue, "t": self.ticket, "n": self.name,
                           "r": self.rating, "j": self.joined, "o": self.owner},
                          separators=(",", ":"))

    @classmethod
    def from_json(cls, player: str, text: str) -> Entry:
        d = json.loads(text)
        return cls(player, d["q"], d["t"], d["n"], float(d["r"]), float(d["j"]), d["o"])


@dataclass
class Snapshot:
    """What the matcher reads: every entry, the owners' heartbeats (Unix seconds), and
    the recorded plans not finished yet (match id -> plan)."""

    entries: list[Entry]
    owners: dict[str, float]
    pending: dict[str, dict[str, Any]]


@dataclass
class Poll:
    """One process's poll: ``results`` ticket -> result (taken: gone from the store; or
    ``{"pending": match id}``, left: the match is recorded, its room not ready),
    ``entries`` player -> their current ticket (None: not waiting), ``counts`` queue ->
    players waiting."""

    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    entries: dict[str, str | None] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


class QueueStore(ABC):
    """The queues (see the module docstring). Times are Unix seconds."""

    @abstractmethod
    async def join(self, entry: Entry, now: float) -> tuple[Entry | None, str | None]:
        """Put ``entry`` in its queue, replacing the player's entry anywhere: ``(the
        replaced entry, None)``; or, when a match of the player's was recorded whose
        result no process took yet, nothing is queued: ``(None, that match's ticket)``."""

    @abstractmethod
    async def leave(self, pairs: list[tuple[str, str]]) -> int:
        """Take out each ``(player, ticket)`` still waiting with that ticket; how many."""

    @abstractmethod
    async def poll(self, owner: str, now: float, tickets: list[str], players: list[str],
                   queues: list[str]) -> Poll:
        """Renew ``owner``'s heartbeat; take the results of ``tickets``; read ``players``'
        tickets (the k-th player is the k-th ticket's) and ``queues``' counts."""

    @abstractmethod
    async def snapshot(self) -> Snapshot:
        """Every entry, owner and pending plan."""

    @abstractmethod
    async def lease(self, owner: str, seconds: float) -> bool:
        """Take or renew the matcher's lease for ``seconds``; whether ``owner`` holds it."""

    @abstractmethod
    async def claim(self, owner: str, plans: list[dict[str, Any]],
                    stale: list[tuple[str, str]], forget: list[str],
                    keep: float = 600.0) -> list[str] | None:
        """Under the lease: drop ``stale`` entries, forget ``forget`` owners, and record
        each plan whose entries are all still there (taking them out; each of its tickets
        gets the result ``{"pending": match id}`` for ``keep`` seconds, which a poll
        reports but does not take). The recorded ids, or None when ``owner`` does not hold
        the lease."""

    @abstractmethod
    async def done(self, match_id: str, results: dict[str, dict[str, Any]],
                   keep: float) -> None:
        """A match's room is ready: store each ticket's result (for ``keep`` seconds) and
        forget the plan. Safe to repeat."""

    async def count(self, queue: str) -> int:
        """Players waiting in ``queue``."""
        snap = await self.snapshot()
        return sum(1 for e in snap.entries if e.queue == queue)


class MemoryQueueStore(QueueStore):
    """The queues in this process (the store of a server without Redis)."""

    def __init__(self, clock: Any) -> None:
        self.clock = clock
        self.entries: dict[str, Entry] = {}
        self.owners: dict[str, float] = {}
        self.pending: dict[str, dict[str, Any]] = {}
        self.results: dict[str, tuple[float, dict[str, Any]]] = {}
        self.holder: tuple[str, float] | None = None
        self.placed: dict[str, str] = {}

    async def join(self, entry: Entry, now: float) -> tuple[Entry | None, str | None]:
        placed = self.placed.get(entry.player)
        if placed is not None:
            got = self.results.get(placed)
            if got is not None and got[0] > now and (
                    "taken" not in got[1] or got[1].get("queue") == entry.queue):
                return None, placed
            del self.placed[entry.player]
        self.owners[entry.owner] = now
        old = self.entries.get(entry.player)
        self.entries[entry.player] = entry
        return old, None

    def _drop(self, player: str, ticket: str) -> bool:
        cur = self.entries.get(player)
        if cur is None or cur.ticket != ticket:
            return False
        del self.entries[player]
        return True

    async def leave(self, pairs: list[tuple[str, str]]) -> int:
        return sum(self._drop(p, t) for p, t in pairs)

    async def poll(self, owner: str, now: float, tickets: list[str], players: list[str],
                   queues: list[str]) -> Poll:
        self.owners[owner] = now
        out = Poll()
        for t in tickets:
            got = self.results.get(t)
            if got is not None and got[0] > now:
                out.results[t] = {k: v for k, v in got[1].items() if k != "taken"}
                if "pending" not in got[1] and "taken" not in got[1]:
                    self.results[t] = (now + TAKEN_KEEP, {**got[1], "taken": 1})
        for p in players:
            e = self.entries.get(p)
            out.entries[p] = e.ticket if e is not None else None
        for q in queues:
            out.counts[q] = 0
        for e in self.entries.values():
            if e.queue in out.counts:
                out.counts[e.queue] += 1
        if len(self.results) > 1000:
            self.results = {t: r for t, r in self.results.items() if r[0] > now}
        return out

    async def snapshot(self) -> Snapshot:
        return Snapshot(list(self.entries.values()), dict(self.owners),
                        {k: dict(v) for k, v in self.pending.items()})

    async def lease(self, owner: str, seconds: float) -> bool:
        now = self.clock()
        if self.holder is None or self.holder[0] == owner or self.holder[1] <= now:
            self.holder = (owner, now + seconds)
            return True
        return False

    async def claim(self, owner: str, plans: list[dict[str, Any]],
                    stale: list[tuple[str, str]], forget: list[str],
                    keep: float = 600.0) -> list[str] | None:
        if self.holder is None or self.holder[0] != owner or self.holder[1] <= self.clock():
            return None
        for p, t in stale:
            self._drop(p, t)
        for o in forget:
            self.owners.pop(o, None)
        claimed = []
        for plan in plans:
            if plan["id"] in self.pending:
                continue
            seats = plan["seats"]
            if all((e := self.entries.get(s["player"])) is not None and e.ticket == s["ticket"]
                   for s in seats):
                for s in seats:
                    self._drop(s["player"], s["ticket"])
                    self.results[s["ticket"]] = (self.clock() + keep, {"pending": plan["id"]})
                    self.placed[s["player"]] = s["ticket"]
                self.pending[plan["id"]] = plan
                claimed.append(plan["id"])
        return claimed

    async def done(self, match_id: str, results: dict[str, dict[str, Any]],
                   keep: float) -> None:
        until = self.clock() + keep
        for ticket, result in results.items():
            self.results[ticket] = (until, result)
        self.pending.pop(match_id, None)

    async def count(self, queue: str) -> int:
        return sum(1 for e in self.entries.values() if e.queue == queue)


def _lua(name: str) -> str:
    return resources.files("server.matchmaking").joinpath("lua", name).read_text("utf-8")


class RedisQueueStore(QueueStore):
    """The queues in Redis or a Redis Cluster, through the room store's connections
    (``server.store.redis.RedisStore`` or its cluster subclass: its ``_write`` runs a script
    on the primary of the keys' slot and tells "not sent" from "answer lost", its ``_read``
    turns failures into ``StoreUnavailable``).

    Args:
        store: the process's Redis room store.
        prefix: the ``key_prefix`` setting.
    """

    def __init__(self, store: Any, prefix: str = "") -> None:
        self.store = store
        self.redis = store.redis
        base = f"{prefix}mm:{TAG}:"
        self.k_entries = base + "entries"
        self.k_counts = base + "counts"
        self.k_owners = base + "owners"
        self.k_pending = base + "pending"
        self.k_lease = base + "lease"
        self.k_matched = base + "matched:"
        self.k_placed = base + "placed"
        self._s = {n: AsyncScript(self.redis, _lua(f"{n}.lua"))
                   for n in ("join", "leave", "poll", "lease", "claim", "done")}

    async def join(self, entry: Entry, now: float) -> tuple[Entry | None, str | None]:
        old, placed = await self.store._write(
            self._s["join"],
            [self.k_entries, self.k_counts, self.k_owners, self.k_placed, self.k_matched],
            [entry.player, entry.to_json(), entry.queue, entry.owner, int(now * 1000)])
        return (Entry.from_json(entry.player, old) if old else None), (placed or None)

    async def leave(self, pairs: list[tuple[str, str]]) -> int:
        if not pairs:
            return 0
        args = [x for pair in pairs for x in pair]
        return int(await self.store._write(self._s["leave"], [self.k_entries, self.k_counts],
                                           args))

    async def poll(self, owner: str, now: float, tickets: list[str], players: list[str],
                   queues: list[str]) -> Poll:
        keys = [self.k_owners, self.k_entries, self.k_counts, self.k_placed,
                *(self.k_matched + t for t in tickets)]
        results, entries, counts = await self.store._write(
            self._s["poll"], keys,
            [owner, int(now * 1000), len(players), *players, *queues, int(TAKEN_KEEP * 1000)])
        out = Poll()
        for t, r in zip(tickets, results or [], strict=False):
            if r:
                result = json.loads(r)
                result.pop("taken", None)
                out.results[t] = result
        for p, e in zip(players, entries or [], strict=False):
            out.entries[p] = json.loads(e)["t"] if e else None
        for q, c in zip(queues, counts or [], strict=False):
            out.counts[q] = int(c) if c else 0
        return out

    async def snapshot(self) -> Snapshot:
        entries = await self.store._read(lambda: self.redis.hgetall(self.k_entries))
        owners = await self.store._read(lambda: self.redis.hgetall(self.k_owners))
        pending = await self.store._read(lambda: self.redis.hgetall(self.k_pending))
        return Snapshot(
            [Entry.from_json(p, v) for p, v in (entries or {}).items()],
            {o: int(v) / 1000 for o, v in (owners or {}).items()},
            {k: json.loads(v) for k, v in (pending or {}).items()})

    async def lease(self, owner: str, seconds: float) -> bool:
        got = await self.store._write(self._s["lease"], [self.k_lease],
                                      [owner, max(1, int(seconds * 1000))])
        return int(got) == 1

    async def claim(self, owner: str, plans: list[dict[str, Any]],
                    stale: list[tuple[str, str]], forget: list[str],
                    keep: float = 600.0) -> list[str] | None:
        got = await self.store._write(
            self._s["claim"],
            [self.k_entries, self.k_counts, self.k_pending, self.k_owners, self.k_lease,
             self.k_placed, *(self.k_matched + s["ticket"] for p in plans for s in p["seats"])],
            [owner, max(1, int(keep * 1000)), json.dumps([list(s) for s in stale]),
             json.dumps(forget), *(json.dumps(p, separators=(",", ":")) for p in plans)],
            durable=True)
        if got == -1:
            return None
        return [str(x) for x in got or []]

    async def done(self, match_id: str, results: dict[str, dict[str, Any]],
                   keep: float) -> None:
        tickets = list(results)
        await self.store._write(
            self._s["done"], [self.k_pending, *(self.k_matched + t for t in tickets)],
            [match_id, max(1, int(keep * 1000)),
             *(json.dumps(results[t], separators=(",", ":")) for t in tickets)],
            durable=True)

    async def count(self, queue: str) -> int:
        got = await self.store._read(lambda: self.redis.hget(self.k_counts, queue))
        return int(got) if got else 0


def queue_store(room_store: Any, prefix: str, clock: Any) -> QueueStore:
    """The queue store that goes with a room store: Redis for a Redis (or cluster) room
    store, memory otherwise."""
    if hasattr(room_store, "_write") and hasattr(room_store, "redis"):
        return RedisQueueStore(room_store, prefix)
    return MemoryQueueStore(clock)


