"""The SQL database of what outlives a room (issue 18): the schema, the engine, migrations.

SQLAlchemy 2 Core (asyncio) with Alembic migrations shipped in ``migrations/``; SQLite
(aiosqlite) is the embedded default, PostgreSQL (asyncpg) is chosen with ``database_url``.
Nothing on a table's action path ever waits for it (docs/architecture.md, "The archive").
"""

from .engine import Database, head_revision, stop_if_cancelling
from .url import database_url, redacted

__all__ = ["Database", "database_url", "head_revision", "redacted", "stop_if_cancelling"]
