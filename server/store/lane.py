"""The write lane: connections the Redis store's scripted writes are sent on.

Every room change is one ``EVALSHA`` (``server/lua/commit.lua``), sent on a connection taken
explicitly from the pool so that "never sent" and "sent, answer lost" can be told apart
(:mod:`server.store.redis`). Taking and returning a connection through redis-py's
``BlockingConnectionPool`` costs more than the command itself on this path: a condition, a
lock, a timeout context, a readiness probe of the socket and observability hooks on each
take and each return; and with a ``socket_timeout`` set, each send runs in a task of its own
(``asyncio.wait_for``) and each read under a timeout context of its own. Measured under
load (docs/performance.md, "Third pass: the write lane, views that share, and the
accounting"), those were about a tenth of the server's CPU.

A :class:`WriteLane` keeps up to ``keep`` connections it took from the pool between writes,
takes them back without the pool's machinery, packs each command once in C
(``hiredis.pack_command``) and bounds the send and the read together with one
``asyncio.timeout``. The pool stays the owner: the lane's connections count against
``redis_max_connections``, any connection the lane does not keep goes back to the pool as
it came, and a connection that failed, timed out or was cancelled is closed before it goes
back (a late answer must never be read as the next command's).

A kept connection is checked before each use (still open, no stray bytes: with hiredis a
look at what the event loop has already received, no system call) and connected again if
Redis closed it, so that after a Redis restart a write does not go out on a socket Redis had
already closed. (redis-py 8's own pool skips that check whenever its maintenance
notifications setting is truthy, and its default, ``"auto"``, is.)
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from redis.asyncio.connection import AbstractConnection, ConnectionPool
from redis.exceptions import ConnectionError as RedisConnectionError

try:  # hiredis is a dependency (``redis[hiredis]``); redis-py's packer is the fallback
    from hiredis import pack_command as _pack_in_c
except ImportError:  # pragma: no cover - only without the C extension
    _pack_in_c = None


class WriteLane:
    """Lease connections of ``pool`` for one command each.

    Args:
        pool: the client's connection pool (a ``BlockingConnectionPool``: taking a new
            connection waits up to its ``timeout`` when all are in use).
        keep: how many idle connections the lane holds on to between writes (the rest go
            back to the pool).

    The command timeout is the pool's ``socket_timeout`` (``redis_timeout_seconds``).
    """

    def __init__(self, pool: ConnectionPool, keep: int = 64) -> None:
        self.pool = pool
        self.keep = max(0, int(keep))
        self.timeout: float | None = pool.connection_kwargs.get("socket_timeout")
        self._idle: list[AbstractConnection] = []

    async def take(self) -> AbstractConnection:
        """A connection ready to send on: the most recently used idle one, else one from
        the pool.

        Raises:
            redis.exceptions.ConnectionError, TimeoutError, OSError: no connection could be
                had (nothing was sent).
        """
        if self._idle:
            conn = self._idle.pop()
            try:
                await self._ready(conn)
            except BaseException:
                await self._give_back(conn, close=True)
                raise
            return conn
        conn = await self.pool.get_connection()
        # The lane bounds the send and the read together (see :meth:`call`); without a
        # socket timeout of its own the connection neither spawns a task per send nor
        # opens a timeout context per read.
        conn.socket_timeout = None
        return conn

    async def _ready(self, conn: AbstractConnection) -> None:
        """Make sure a kept connection is open and holds no stray bytes: Redis may have
        closed it while it was idle (a restart), in which case it is connected again —
        with the command timeout back on the connection for the handshake, so that a
        Redis that accepts the connection and then answers nothing (frozen) cannot hold
        the caller. (With hiredis the check reads no socket: it looks at what the loop
        has received.)"""
        try:
            stale = await conn.can_read()
        except (OSError, RedisConnectionError):
            stale = True
        if stale:
            await conn.disconnect()
            conn.socket_timeout = self.timeout
            await conn.connect()
            conn.socket_timeout = None
            if await conn.can_read():
                raise ConnectionError("Redis sent data before any command")

    async def put(self, conn: AbstractConnection, *, close: bool = False) -> None:
        """Return a connection after a command: kept for the next one when it completed
        and the lane holds fewer than ``keep``, else closed (``close``) and given back."""
        if not close and len(self._idle) < self.keep:
            self._idle.append(conn)
            return
        await self._give_back(conn, close=close)

    async def _give_back(self, conn: AbstractConnection, *, close: bool) -> None:
        conn.socket_timeout = self.timeout
        if close:
            with contextlib.suppress(Exception):
                await conn.disconnect()
        await self.pool.release(conn)

    async def call(self, conn: AbstractConnection, *args: Any) -> Any:
        """Send one command on ``conn`` and read its answer within the command timeout.

        Raises:
            TimeoutError: no answer within the timeout (the command may have run).
            redis.exceptions.RedisError, OSError: as redis-py raises them (an error reply
                such as ``NoScriptError`` leaves the connection usable).
        """
        packed = _pack_in_c(args) if _pack_in_c is not None else conn.pack_command(*args)
        async with asyncio.timeout(self.timeout):
            await conn.send_packed_command(packed, check_health=False)
            return await conn.read_response()

    async def drop_idle(self) -> None:
        """Close and give back every idle connection (at the start of an outage: after a
        Redis restart each would otherwise fail once more when next used)."""
        idle, self._idle = self._idle, []
        for conn in idle:
            await self._give_back(conn, close=True)
