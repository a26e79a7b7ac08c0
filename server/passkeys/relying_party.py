"""Which relying party (RP) a passkey is made for, and the web origin it must come from.

WebAuthn binds a passkey to an **RP id**, a domain (``cards.example``), and a browser makes
or uses it only on a page whose origin's host is that domain or under it, over HTTPS (or
on ``localhost``, a secure context too). The id is:

* the ``passkey_rp_id`` setting, when set;
* else the host of ``public_url``, when set (the address players reach the site at);
* else the host the request was sent to (its ``Host`` header): ``localhost`` in
  development and in the tests.

An IP address is never an RP id (browsers refuse it): a server reached at ``127.0.0.1``
without either setting answers ``passkeys_unavailable``.

The origin the browser's signed client data must name is ``public_url``'s origin when set,
else the request's own (its scheme, after a trusted proxy's ``X-Forwarded-Proto``:
``server.proxies``, and ``Host``).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..origins import DEFAULT_PORTS, normalize, parse_origin


@dataclass(frozen=True)
class RelyingParty:
    """The RP of one request.

    Attributes:
        id: the RP id (a domain, lower case).
        name: the site's name browsers show (``passkey_rp_name``).
        origin: the origin the client data must name (``scheme://host[:port]``).
    """

    id: str
    name: str
    origin: str


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


def relying_party(settings: Any, scheme: str, host_header: str | None) -> RelyingParty | None:
    """The RP of a request (see the module docstring).

    Args:
        settings: ``server.settings.Settings`` (``passkey_rp_id``, ``passkey_rp_name``,
            ``public_url``).
        scheme: the request's scheme (``http`` or ``https``).
        host_header: the request's ``Host`` header.

    Returns:
        The RP, or None when there is none to use: no RP id can be had (an IP address, no
        usable ``Host``).
    """
    origin: str | None = None
    if settings.public_url:
        parts = urlsplit(settings.public_url)
        try:
            origin = normalize(f"{parts.scheme}://{parts.netloc}")
        except ValueError:
            origin = None
    elif host_header:
        scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        try:
            origin = normalize(f"{scheme}://{host_header}")
        except ValueError:
            origin = None
    if origin is None:
        return None
    parsed = parse_origin(origin)
    if parsed is None or parsed[0] not in DEFAULT_PORTS:
        return None
    rp_id = (settings.passkey_rp_id or parsed[1]).strip().lower().rstrip(".")
    if not rp_id or _is_ip(rp_id):
        return None
    return RelyingParty(rp_id, settings.passkey_rp_name, origin)
