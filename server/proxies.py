"""The client address of a request, and which proxies may name it (``forwarded_allow_ips``).

A request's client address is the TCP peer's address, unless the peer is a proxy this
deployment trusts: then it is read from the ``X-Forwarded-For`` header, walking from its
right-most entry (written by the nearest proxy) to the left, past every entry that is itself
a trusted proxy, and stopping at the first untrusted one — the client as the last trusted
proxy saw it. An entry that is not an IP address (a forged or broken header: ``"unknown"``,
``"evil"``, a host name) stops the walk: the client is then the last trusted hop, never the
string. So a client address is always an IP address (or ``"unknown"`` where the server has
no peer address, a Unix socket), and no header can invent a budget key
(``server.budgets``).

``forwarded_allow_ips`` is empty by default: no proxy is trusted, and a local process cannot
name any address it likes. ``*`` trusts every peer as a proxy (right when only the proxy can
reach the server, as in the compose files); the entries of the header are then trusted as
further proxies only when listed, so the client is the right-most valid entry.

:class:`ClientAddressMiddleware` applies this to every HTTP request and WebSocket handshake
(``scope["client"]``, and ``scope["scheme"]`` from ``X-Forwarded-Proto`` of a trusted peer);
the server runs uvicorn without its own proxy headers middleware.
"""

from __future__ import annotations

import ipaddress
from typing import Any

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_ip(text: str) -> Address | None:
    """``text`` as an IP address (IPv4-mapped IPv6 as its IPv4 address), or None.

    Accepts a bare address, ``[v6]``, ``[v6]:port`` and ``v4:port`` (proxies may add a
    port); anything else (host names, ``unknown``, junk) is None."""
    text = text.strip()
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or (text[end + 1:] and not text[end + 1:].startswith(":")):
            return None
        text = text[1:end]
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class TrustedProxies:
    """The proxies of ``forwarded_allow_ips``: comma-separated addresses and networks, or
    ``*`` (every peer).

    Raises:
        ValueError: an entry that is neither ``*``, an IP address nor a network.
    """

    def __init__(self, setting: str) -> None:
        self.any_peer = False
        self.networks: list[Network] = []
        for part in (p.strip() for p in setting.split(",")):
            if not part:
                continue
            if part == "*":
                self.any_peer = True
                continue
            try:
                net = ipaddress.ip_network(part, strict=False)
            except ValueError:
                raise ValueError(f"forwarded_allow_ips: {part!r} is not an IP address or "
                                 "network") from None
            if isinstance(net, ipaddress.IPv6Network) and net.prefixlen >= 96:
                mapped = net.network_address.ipv4_mapped
                if mapped is not None:  # ::ffff:a.b.c.d/n: the IPv4 network
                    net = ipaddress.ip_network(f"{mapped}/{net.prefixlen - 96}", strict=False)
            self.networks.append(net)

    @property
    def enabled(self) -> bool:
        """Whether any proxy is trusted at all."""
        return self.any_peer or bool(self.networks)

    def listed(self, ip: Address | None) -> bool:
        """Whether ``ip`` is one of the listed proxies (``*`` lists none)."""
        return ip is not None and any(ip in net for net in self.networks)

    def client(self, peer: str | None, forwarded_for: list[str]) -> str | None:
        """The client address of a request from ``peer`` carrying the ``X-Forwarded-For``
        header values ``forwarded_for`` (in order); None when the peer's own address stands
        (it is not a trusted proxy, or the header names nobody usable)."""
        if peer is None:
            return None
        hop = parse_ip(peer)
        if not (self.any_peer or self.listed(hop)):
            return None
        entries = [e for value in forwarded_for for e in value.split(",")]
        client: Address | None = None
        for entry in reversed(entries):
            if not entry.strip():
                continue
            ip = parse_ip(entry)
            if ip is None:
                break  # junk: the last trusted hop is as far as anything is known
            client = ip
            if not self.listed(ip):
                break
        return str(client) if client is not None else None


class ClientAddressMiddleware:
    """ASGI middleware: the client address (and scheme) of each HTTP request and WebSocket
    handshake from a trusted proxy's ``X-Forwarded-For`` (``X-Forwarded-Proto``); see the
    module docstring. Requests from any other peer pass unchanged."""

    def __init__(self, app: Any, trusted: str = "") -> None:
        self.app = app
        self.trusted = TrustedProxies(trusted)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and self.trusted.enabled:
            scope = self._rewrite(scope)
        await self.app(scope, receive, send)

    def _rewrite(self, scope: dict[str, Any]) -> dict[str, Any]:
        peer = scope.get("client")
        host = peer[0] if peer else None
        if host is None or not (self.trusted.any_peer or self.trusted.listed(parse_ip(host))):
            return scope
        forwarded: list[str] = []
        proto: str | None = None
        for name, value in scope.get("headers") or ():
            if name == b"x-forwarded-for":
                forwarded.append(value.decode("latin-1"))
            elif name == b"x-forwarded-proto":
                proto = value.decode("latin-1").strip().lower()
        scope = dict(scope)
        secure = {"http": False, "ws": False, "https": True, "wss": True}.get(proto or "")
        if secure is not None:
            if scope["type"] == "websocket":
                scope["scheme"] = "wss" if secure else "ws"
            else:
                scope["scheme"] = "https" if secure else "http"
        client = self.trusted.client(host, forwarded)
        if client is not None:
            scope["client"] = (client, 0)
        return scope
