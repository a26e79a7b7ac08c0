"""The ``cribbage.v1`` WebSocket protocol: message models, codecs, JSON Patch of views,
JSON Schema export and a small asyncio client.

``protocol`` may import ``engine``; it never imports ``server``.
"""

from .codec import (
    JSON_SUBPROTOCOL,
    MSGPACK_SUBPROTOCOL,
    SUBPROTOCOLS,
    Codec,
    ProtocolError,
    decode_client,
    decode_server,
    encode,
)
from .messages import CLIENT_ADAPTER, PROTOCOL_VERSION, SERVER_ADAPTER

__all__ = [
    "CLIENT_ADAPTER",
    "JSON_SUBPROTOCOL",
    "MSGPACK_SUBPROTOCOL",
    "PROTOCOL_VERSION",
    "SERVER_ADAPTER",
    "SUBPROTOCOLS",
    "Codec",
    "ProtocolError",
    "decode_client",
    "decode_server",
    "encode",
]
