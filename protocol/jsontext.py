"""Fast JSON text for the hot paths (frames, commits, published messages), on ``orjson``.

``orjson`` encodes and decodes several times faster than the standard library, and JSON is
a large share of the server's CPU per action (docs/performance.md). The output is compact
(no spaces) UTF-8, like ``json.dumps(value, separators=(",", ":"), ensure_ascii=False)``.
"""

from __future__ import annotations

from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS

JSONError = (orjson.JSONEncodeError, orjson.JSONDecodeError)
"""What :func:`dumps` (a value that is not JSON: e.g. a string with a lone surrogate) and
:func:`loads` (text that is not JSON) raise; both are ``TypeError`` / ``ValueError``
subclasses."""


def dumps(value: Any) -> str:
    """Compact JSON text of plain data (dict keys that are not text are written as text).

    Raises:
        orjson.JSONEncodeError (a TypeError): a value JSON cannot carry.
    """
    return orjson.dumps(value, option=_OPTIONS).decode()


def dumps_bytes(value: Any) -> bytes:
    """Like :func:`dumps`, as UTF-8 bytes."""
    return orjson.dumps(value, option=_OPTIONS)


def loads(text: str | bytes) -> Any:
    """Plain data from JSON text.

    Raises:
        orjson.JSONDecodeError (a ValueError): not JSON.
    """
    return orjson.loads(text)
