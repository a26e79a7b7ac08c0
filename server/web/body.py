"""Reading a request's JSON body within a size limit, the one way every endpoint that takes
a body does it (``POST /api/rooms``, the players', passkeys' and moderation endpoints).

The body is refused by its ``Content-Length`` before anything is read, and a chunked body is
read only up to the limit, so a large body never sits in memory. The callers turn the
errors below into their own answers (``too_large`` is 413 everywhere; what a body that is
not a JSON object is called depends on the endpoint: ``bad_options``, ``bad_request``).
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import ClientDisconnect, Request


class BodyError(ValueError):
    """A body that cannot be used; ``str(error)`` says why, for the answer's message."""


class BodyTooLarge(BodyError):
    """The body is (or says it is) longer than the limit: answered 413 ``too_large``."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is longer than {limit} bytes")
        self.limit = limit


class BodyNotRead(BodyError):
    """The body could not be read: a ``Content-Length`` that is not a number, or a client
    that went away before all of it arrived (``disconnected``)."""

    def __init__(self, message: str, *, disconnected: bool = False) -> None:
        super().__init__(message)
        self.disconnected = disconnected


class BodyNotObject(BodyError):
    """The body is not JSON, nests too deeply, or is JSON but not an object."""


CLOSE = {"Connection": "close"}
"""Headers of a 413 answer: the connection is closed once it is sent, so the server does not
go on reading (and throwing away) the rest of a body it refused, until the request deadline."""


async def read_bytes(request: Request, limit: int) -> bytes:
    """The request's body, at most ``limit`` bytes (``max_body_bytes``).

    Raises:
        BodyTooLarge: a ``Content-Length`` over ``limit`` (nothing is read), or more than
            ``limit`` bytes sent (reading stops there).
        BodyNotRead: a ``Content-Length`` that is not a number; the client went away.
    """
    declared = request.headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            raise BodyNotRead("Content-Length is not a number")
        if int(declared) > limit:
            raise BodyTooLarge(limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise BodyTooLarge(limit)
            chunks.append(chunk)
    except ClientDisconnect:
        raise BodyNotRead("the body did not arrive", disconnected=True) from None
    return b"".join(chunks)


async def read_json_object(request: Request, limit: int) -> dict[str, Any]:
    """The request's body as a JSON object; an empty body is ``{}``.

    Args:
        request: the HTTP request.
        limit: the longest body accepted, in bytes (``max_body_bytes``).

    Raises:
        BodyTooLarge, BodyNotRead: as :func:`read_bytes`.
        BodyNotObject: not JSON (white space alone is not JSON either), nested too deeply
            for the parser, or JSON that is not an object.
    """
    raw = await read_bytes(request, limit)
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BodyNotObject("the body nests too deeply") from None
    except ValueError:
        raise BodyNotObject("the body is not JSON") from None
    if not isinstance(data, dict):
        raise BodyNotObject("the body must be a JSON object")
    return data
