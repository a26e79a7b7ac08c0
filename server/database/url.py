"""Which database: the URL from the settings, or the embedded SQLite file by default."""

from __future__ import annotations

import os
from pathlib import Path

SQLITE_FILE = "cribbage.sqlite3"
"""The embedded database's file name, in the data folder."""


def data_dir(setting: str | None = None) -> Path:
    """The folder the embedded database lives in: ``setting`` (``data_dir``,
    ``CRIBBAGE_DATA_DIR``) if given, else ``$XDG_DATA_HOME/cribbage-server``, else
    ``~/.local/share/cribbage-server``."""
    if setting:
        return Path(setting).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "cribbage-server"


def database_url(url: str | None, data: str | None = None) -> str:
    """The SQLAlchemy URL to connect with.

    Args:
        url: the ``database_url`` setting: ``postgresql://user@host:5432/db`` (the asyncpg
            driver is chosen), ``sqlite:///path`` (aiosqlite), or any SQLAlchemy async URL;
            None for the embedded SQLite file.
        data: the ``data_dir`` setting (where the embedded file goes).

    Returns:
        An async URL: ``postgresql+asyncpg://...`` or ``sqlite+aiosqlite:///...``.
    """
    if not url:
        return f"sqlite+aiosqlite:///{data_dir(data) / SQLITE_FILE}"
    for plain, driver in (("postgresql://", "postgresql+asyncpg://"),
                          ("postgres://", "postgresql+asyncpg://"),
                          ("sqlite://", "sqlite+aiosqlite://")):
        if url.startswith(plain):
            return driver + url[len(plain):]
    return url


def redacted(url: str) -> str:
    """The URL without its password (for logs)."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
