"""Alembic's environment for the server's database (run by ``server.database.migrate``).

The migration runs on a connection the caller opens and locks (``config.attributes
["connection"]``, a synchronous facade of the async connection); nothing here reads an
alembic.ini or the environment.
"""

from __future__ import annotations

from alembic import context

from server.database.schema import metadata

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    transaction_per_migration=False,
)
with context.begin_transaction():
    context.run_migrations()
