"""Player and seat tokens the server can recognise as its own.

A token is 128 random bits followed by a 64-bit tag, an HMAC-SHA-256 of those bits under a
secret shared by every server process of a deployment, all url-safe base64 (32 characters).
A ``hello`` that brings back a token without a valid tag (made up by a client, or issued
under another secret) gets a fresh token instead, so nobody can pick a guessable identity
and bind a seat to it. Rooms store only a SHA-256 of a seat's token (``rooms.hash_token``).

A room's creator token is made the same way but tagged under another name (the HMAC covers
``b"creator:"`` and the random bits), so it is never taken for a player token: ``hello`` or
``join`` naming one is refused (``not_player_token``), and only ``set_computer`` uses it
(against the hash the room keeps).

A token (and any other value) may also be **derived** from a client's request id
(:meth:`TokenIssuer.derive`, :meth:`TokenIssuer.keyed`): the same under the same secret in
every process, unguessable without it. Room creation with a ``request_id`` uses that for
the room's id and its creator token, so a repeated request finds the room it made
(``server.rooms``, ``RoomService.create_room``).

The secret comes from the ``CRIBBAGE_TOKEN_SECRET`` setting, else from the store: with
Redis, one random secret is created once (``SET NX``) and shared by every process; in
memory, each process makes its own.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from typing import Literal

RANDOM_BYTES = 16
"""Random part of a token: 128 bits."""

TAG_BYTES = 8
"""Tag part of a token: 64 bits of HMAC-SHA-256."""

TokenKind = Literal["player", "creator"]
"""What a token is for: a player (and the seats it takes), or proving a room's creator."""

KIND_PREFIX: dict[str, bytes] = {"player": b"", "creator": b"creator:"}
"""What the HMAC of each kind covers before the random bits (player tokens: nothing, as
before creator tokens had their own kind, so tokens already handed out stay valid)."""


class TokenIssuer:
    """Makes tokens and checks that a token was made under the same secret.

    Args:
        secret: the shared secret (any length; 32 random bytes in practice).
    """

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("a token secret needs at least 16 bytes")
        self._secret = secret
        # Derived values use a key of their own, so no derived value is ever a token's tag.
        self._derive_key = hmac.new(secret, b"cribbage derived values v1",
                                    hashlib.sha256).digest()

    def keyed(self, message: bytes) -> bytes:
        """32 bytes that are a function of ``message`` and the secret only: the same in
        every process of the deployment, unpredictable without the secret (HMAC-SHA-256
        under a key derived from the secret, distinct from the one that tags tokens)."""
        return hmac.new(self._derive_key, message, hashlib.sha256).digest()

    def derive(self, context: bytes, kind: TokenKind = "player") -> str:
        """A token of ``kind`` whose random part is :meth:`keyed` of ``context``: a valid
        token (:meth:`is_issued`), always the same for the same ``context`` under the same
        secret, and as hard to guess as ``context`` and the secret together."""
        random_part = self.keyed(b"token:" + kind.encode() + b":" + context)[:RANDOM_BYTES]
        raw = random_part + self._tag(random_part, kind)
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def _tag(self, random_part: bytes, kind: TokenKind) -> bytes:
        message = KIND_PREFIX[kind] + random_part
        return hmac.new(self._secret, message, hashlib.sha256).digest()[:TAG_BYTES]

    def issue(self, kind: TokenKind = "player") -> str:
        """A fresh token: 32 url-safe base64 characters (128 random bits + a 64-bit tag).

        Args:
            kind: ``"player"`` (player and seat tokens) or ``"creator"`` (a room's creator
                token, which is never recognised as a player token).
        """
        random_part = secrets.token_bytes(RANDOM_BYTES)
        raw = random_part + self._tag(random_part, kind)
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def is_issued(self, token: str | None, kind: TokenKind = "player") -> bool:
        """Whether ``token`` is one this issuer (or another process with its secret) made,
        as a token of ``kind``.

        Args:
            token: the text a client sent, or None.
            kind: the kind asked about (a creator token is not an issued player token).

        Returns:
            True only for a well-formed token whose tag for ``kind`` matches (constant-time
            compare).
        """
        if not token or len(token) != 32:
            return False
        try:
            raw = base64.urlsafe_b64decode(token + "==")
        except (ValueError, TypeError):
            return False
        if len(raw) != RANDOM_BYTES + TAG_BYTES:
            return False
        return hmac.compare_digest(raw[RANDOM_BYTES:], self._tag(raw[:RANDOM_BYTES], kind))

    def is_creator(self, token: str | None) -> bool:
        """Whether ``token`` is a room creator token this issuer made."""
        return self.is_issued(token, "creator")
