"""``cribbage-server db``: the database by hand (operators; docs/operations.md).

* ``cribbage-server db upgrade``: bring the schema to the newest revision shipped (what every
  server process also does at start-up, one process at a time);
* ``cribbage-server db current``: the revision the database is at, and the newest shipped.

The database is the server's own: ``--database-url`` or ``CRIBBAGE_DATABASE_URL``, else the
embedded SQLite file in ``--data-dir`` / ``CRIBBAGE_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from .engine import Database, head_revision
from .url import database_url, redacted


def main(argv: list[str] | None = None) -> int:
    """Run ``db upgrade`` or ``db current``; returns the exit code (1: the database failed,
    or with ``current`` is not at the newest revision)."""
    parser = argparse.ArgumentParser(prog="cribbage-server db", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["upgrade", "current"])
    parser.add_argument("--database-url", help="postgresql://user@host:5432/db or sqlite:///path")
    parser.add_argument("--data-dir", help="folder of the embedded SQLite file")
    args = parser.parse_args(argv)
    from ..settings import Settings

    overrides = {k: v for k, v in {"database_url": args.database_url,
                                   "data_dir": args.data_dir}.items() if v is not None}
    settings = Settings(**overrides)
    url = database_url(settings.database_url, settings.data_dir)
    logging.basicConfig(level="INFO", format="%(levelname)s %(name)s %(message)s")

    async def run() -> int:
        db = Database(url)
        try:
            if args.command == "upgrade":
                revision = await db.migrate()
                print(f"{redacted(url)}: at revision {revision}")
                return 0
            revision = await db.revision()
            head = head_revision()
            print(f"{redacted(url)}: at revision {revision or 'none'} (newest {head})")
            return 0 if revision == head else 1
        except Exception as exc:
            print(f"{redacted(url)}: {exc}", file=sys.stderr)
            return 1
        finally:
            await db.close()

    return asyncio.run(run())
