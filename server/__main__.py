"""``cribbage-server`` / ``python -m server``: run the server under uvicorn.

Without ``--redis-url`` (or ``CRIBBAGE_REDIS_URL``) rooms live in this process's memory;
with it, rooms live in Redis and any number of processes can serve them; with
``--redis-cluster`` as well, that URL names any node of a Redis Cluster. Finished games go to
the SQL database of ``--database-url`` (``CRIBBAGE_DATABASE_URL``), by default an embedded
SQLite file; ``cribbage-server db upgrade`` migrates it by hand (``server.database.cli``).
"""

from __future__ import annotations

import argparse
import logging
import sys

import uvicorn

from .app import create_app, uvicorn_kwargs
from .limits import raise_open_files_limit
from .settings import Settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command line flags (each overrides its ``CRIBBAGE_*`` environment variable)."""
    parser = argparse.ArgumentParser(prog="cribbage-server", description=__doc__.splitlines()[0])
    parser.add_argument("--host", help="interface to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="TCP port (default 8000)")
    parser.add_argument("--redis-url", help="redis://host:6379/0; unset: in-process store")
    parser.add_argument("--redis-cluster", action="store_true", default=None,
                        help="--redis-url names a node of a Redis Cluster (env "
                        "CRIBBAGE_REDIS_CLUSTER=1)")
    parser.add_argument("--key-prefix", help="prefix for every Redis key and channel")
    parser.add_argument("--database-url", help="the database of finished games: "
                        "postgresql://user@host:5432/db; unset: an embedded SQLite file")
    parser.add_argument("--data-dir", help="folder of the embedded SQLite file (default "
                        "~/.local/share/cribbage-server)")
    parser.add_argument("--answer-window", type=float, dest="answer_window_seconds",
                        help="Muggins answer window in seconds (default 15)")
    parser.add_argument("--bot-delay", type=float, dest="bot_delay_seconds",
                        help="seconds a computer player pauses before acting (default 0.8)")
    parser.add_argument("--log-level", default="info", help="debug, info, warning, error")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``cribbage-server`` console script (``cribbage-server db ...``:
    ``server.database.cli``)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["db"]:
        from .database.cli import main as db_main

        raise SystemExit(db_main(argv[1:]))
    args = parse_args(argv)
    overrides = {
        k: v
        for k, v in {
            "host": args.host,
            "port": args.port,
            "redis_url": args.redis_url,
            "redis_cluster": args.redis_cluster,
            "key_prefix": args.key_prefix,
            "database_url": args.database_url,
            "data_dir": args.data_dir,
            "answer_window_seconds": args.answer_window_seconds,
            "bot_delay_seconds": args.bot_delay_seconds,
        }.items()
        if v is not None
    }
    settings = Settings(**overrides)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    # Each socket is an open file: with the common soft limit of 1024 a few hundred slow
    # sockets could lock new clients out, so take what the hard limit allows.
    files = raise_open_files_limit()
    if files is not None and files[0] != files[1]:
        logging.getLogger("server").info("open files limit raised from %d to %d", *files)
    uvicorn.run(create_app(settings), log_level=args.log_level.lower(), **uvicorn_kwargs(settings))


if __name__ == "__main__":
    main()
