"""Security headers on every HTTP answer (docs/protocol.md, "HTTP": "Security headers").

:class:`SecurityHeaders` is a pure ASGI middleware around the whole app (outside
starlette's error middleware, so a ``500`` gets them too) that adds, unless the answer set
them itself:

* on every answer: ``X-Content-Type-Options: nosniff`` (a browser never guesses a type:
  JSON is never run as a script, a text answer never shown as HTML) and
  ``Referrer-Policy: no-referrer`` (a room's link, ``/r/<room>``, is a secret of the
  table's: it never leaves in a ``Referer``);
* on a page (``text/html``): the page's ``Content-Security-Policy`` (:func:`page_policy`:
  scripts, styles, fetches and WebSockets from this server only, no inline script or
  style, no plugins, and ``frame-ancestors`` from the ``frame_ancestors`` setting, by
  default ``'none'``: no other site can frame the table to trick a click) and, for browsers
  without ``frame-ancestors``, ``X-Frame-Options`` (``DENY`` or ``SAMEORIGIN``);
* on any other answer (JSON, text, metrics, scripts, styles): ``Content-Security-Policy:
  default-src 'none'; frame-ancestors 'none'`` (opened in a tab, an API answer runs and
  loads nothing and cannot be framed).

The same goes for the HTTP answer that refuses a WebSocket handshake (``429``). A frame of
the WebSocket protocol carries no headers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Message]],
                    Callable[[Message], Awaitable[None]]], Awaitable[None]]

DEFAULT_FRAME_ANCESTORS = "'none'"
"""Who may frame the pages by default: nobody."""


def page_policy(frame_ancestors: str = DEFAULT_FRAME_ANCESTORS) -> str:
    """The ``Content-Security-Policy`` of the web table's pages (``server/static``).

    What the page needs, and nothing more: its module scripts and style sheet from
    ``/static`` (no inline script or style: the page has none; styles set from scripts go
    through the CSSOM, which the policy allows), fetches of ``/api`` and ``/static/i18n``
    and the WebSocket ``/ws`` of this origin (``connect-src 'self'`` covers ``ws:``/``wss:``
    of the same host), images of this origin and ``data:`` (the icon), no plugins, no
    ``<base>``, forms posted only here.

    Args:
        frame_ancestors: the ``frame-ancestors`` sources (``'none'``, ``'self'``, or
            origins such as ``https://cards.example``).
    """
    return "; ".join([
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "font-src 'self'",
        "connect-src 'self'",
        "media-src 'self'",
        "manifest-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        f"frame-ancestors {frame_ancestors}",
    ])


OTHER_POLICY = "default-src 'none'; frame-ancestors 'none'"
"""The ``Content-Security-Policy`` of every answer that is not a page."""


def frame_options(frame_ancestors: str) -> str | None:
    """``X-Frame-Options`` saying what ``frame_ancestors`` says, where it can: ``DENY``
    for ``'none'``, ``SAMEORIGIN`` for ``'self'``, else None (it cannot name other
    origins; browsers that know ``frame-ancestors`` ignore it anyway)."""
    return {"'none'": "DENY", "'self'": "SAMEORIGIN"}.get(frame_ancestors.strip())


class SecurityHeaders:
    """ASGI middleware adding the security headers (see the module docstring).

    Args:
        app: the ASGI app to wrap.
        frame_ancestors: the pages' ``frame-ancestors`` sources (setting
            ``frame_ancestors``).
    """

    def __init__(self, app: ASGIApp, frame_ancestors: str = DEFAULT_FRAME_ANCESTORS) -> None:
        self.app = app
        common = [(b"x-content-type-options", b"nosniff"),
                  (b"referrer-policy", b"no-referrer")]
        page = [(b"content-security-policy", page_policy(frame_ancestors).encode())]
        framing = frame_options(frame_ancestors)
        if framing is not None:
            page.append((b"x-frame-options", framing.encode()))
        self.page_headers = common + page
        self.other_headers = common + [(b"content-security-policy", OTHER_POLICY.encode())]

    async def __call__(self, scope: Scope, receive: Callable[[], Awaitable[Message]],
                       send: Callable[[Message], Awaitable[None]]) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] in ("http.response.start", "websocket.http.response.start"):
                headers = list(message.get("headers") or [])
                present = {name.lower() for name, _ in headers}
                content_type = next((v for n, v in headers if n.lower() == b"content-type"),
                                    b"")
                extra = (self.page_headers if content_type.startswith(b"text/html")
                         else self.other_headers)
                headers += [(n, v) for n, v in extra if n not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
