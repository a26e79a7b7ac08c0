"""Which web origins may use the server: ``/ws`` handshakes, ``POST /api/rooms`` and CORS.

A browser says where a page came from in the ``Origin`` header of a WebSocket handshake and
of a cross-site ``POST``; without a check, any web site could open sockets to the server
or create rooms in its visitors' names. The ``allowed_origins`` setting lists who may:

* the server's own origin, always (the host the request was sent to, from its ``Host``
  header, and the origin of ``public_url`` when set);
* ``loopback`` (the default): any ``http``/``https`` origin on ``localhost``,
  ``127.0.0.0/8`` or ``[::1]``, on any port (a front end being developed next to the
  server);
* exact origins such as ``https://cards.example`` (scheme, host, and port when not the
  scheme's default);
* ``*``: every origin (only when set explicitly).

A request with **no** ``Origin`` header is allowed: browsers always send one on the requests
checked here, and clients that are not browsers (``cribbage-bot``, ``protocol.client``,
mobile apps) usually send none. The opaque origin ``null`` (a sandboxed frame, a ``file:``
page) is allowed only by ``*`` or by listing ``null``.

Refusals: a ``/ws`` handshake gets HTTP 403 before it is accepted; ``POST /api/rooms``
gets ``403 {"error": {"code": "origin_not_allowed"}}``. CORS answers (starlette's
``CORSMiddleware``, :func:`cors_options`) are given for the allowed origins, so a page on
another allowed origin can call the HTTP API, preflight ``OPTIONS`` included.
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

LOOPBACK_REGEX = r"https?://(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d{1,5})?"
"""Origins on a loopback host (starlette's ``allow_origin_regex`` is matched in full)."""


def _split_host(hostport: str) -> tuple[str, int | None] | None:
    """``("host", port or None)`` of ``host[:port]`` / ``[v6][:port]``; None if malformed."""
    hostport = hostport.strip().lower()
    if not hostport:
        return None
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            return None
        host, rest = hostport[: end + 1], hostport[end + 1:]
    else:
        host, sep, port = hostport.partition(":")
        rest = f":{port}" if sep else ""
    if not rest:
        return host, None
    if not rest.startswith(":") or not rest[1:].isdigit():
        return None
    return host, int(rest[1:])


def parse_origin(origin: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an origin such as ``https://cards.example:8443``, lower
    case, with the scheme's default port filled in; None if it is not an http(s) origin."""
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or parts.path not in ("", "/") or parts.query:
        return None
    split = _split_host(parts.netloc)
    if split is None or "@" in parts.netloc:
        return None
    host, port = split
    return scheme, host, port if port is not None else DEFAULT_PORTS[scheme]


def normalize(origin: str) -> str:
    """An origin in the form browsers send it: ``scheme://host[:port]``, lower case, the
    default port left out (``*``, ``null`` and ``loopback`` are returned as they are)."""
    if origin.strip() in ("*", "null", "loopback"):
        return origin.strip()
    parsed = parse_origin(origin)
    if parsed is None:
        raise ValueError(f"not an origin: {origin!r} (expected scheme://host[:port])")
    scheme, host, port = parsed
    return f"{scheme}://{host}" + ("" if port == DEFAULT_PORTS[scheme] else f":{port}")


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` (as in a URL, IPv6 in brackets) names this machine's loopback."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class OriginPolicy:
    """The ``allowed_origins`` setting, applied.

    Args:
        allowed: entries of the setting: ``*``, ``loopback``, ``null`` or origins.
        public_url: the ``public_url`` setting (its origin is the server's own).

    Raises:
        ValueError: an entry is not an origin.
    """

    def __init__(self, allowed: list[str], public_url: str | None = None) -> None:
        entries = [normalize(a) for a in allowed if a.strip()]
        self.any = "*" in entries
        self.loopback = "loopback" in entries
        self.exact = frozenset(e for e in entries if e not in ("*", "loopback"))
        own = parse_origin(public_url) if public_url else None
        self.public = own

    def allows(self, origin: str | None, host: str | None) -> bool:
        """Whether a request with this ``Origin`` header, sent to this ``Host``, may go on.

        Args:
            origin: the ``Origin`` header, or None when there is none (not a browser).
            host: the ``Host`` header of the request (the server's own origin).
        """
        if origin is None or self.any:
            return True
        origin = origin.strip()
        if origin.lower() == "null":
            return "null" in self.exact
        parsed = parse_origin(origin)
        if parsed is None:
            return False
        scheme, o_host, o_port = parsed
        if self.public is not None and parsed == self.public:
            return True
        if host:
            split = _split_host(host)
            if split is not None and split[0] == o_host and (
                split[1] == o_port or (split[1] is None and o_port == DEFAULT_PORTS[scheme])
            ):
                return True
        if self.loopback and is_loopback_host(o_host):
            return True
        return normalize(origin) in self.exact

    def cors_options(self) -> dict[str, Any]:
        """Keyword arguments of starlette's ``CORSMiddleware`` for these origins (the
        server's own origin needs no CORS)."""
        options: dict[str, Any] = {
            "allow_origins": ["*"] if self.any else sorted(self.exact),
            "allow_methods": ["GET", "POST"],
            "allow_headers": ["content-type"],
            "max_age": 600,
        }
        if self.loopback and not self.any:
            options["allow_origin_regex"] = LOOPBACK_REGEX
        return options


def origin_of(headers: Any) -> str | None:
    """The ``Origin`` header of a request or handshake (None when absent)."""
    return headers.get("origin")

