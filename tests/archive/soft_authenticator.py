"""A software WebAuthn authenticator for the server-side passkey tests, written from the
WebAuthn Level 3 recommendation (https://www.w3.org/TR/webauthn-3/, "Authenticator data",
"Attestation object", "none" attestation, ES256) and not from the server's library: it
makes the JSON a browser's ``PublicKeyCredential.toJSON()`` gives, for options the server
handed out. The browser test uses Chromium's own virtual authenticator instead."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec


def b64(data: bytes) -> str:
    """base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64(text: str) -> bytes:
    """The bytes of base64url text (padding optional)."""
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SoftAuthenticator:
    """One discoverable ES256 credential, made by :meth:`create`, used by :meth:`get`.

    Args:
        origin: the origin it writes into the client data (a browser writes the page's).
    """

    def __init__(self, origin: str) -> None:
        self.origin = origin
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.count = 0
        self.user_handle: str | None = None
        self.rp_id: str | None = None

    def _client_data(self, kind: str, challenge: str) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": self.origin,
                           "crossOrigin": False}).encode()

    def create(self, options: dict[str, Any], *, flags: int = 0x45,
               cose: bytes | None = None) -> dict[str, Any]:
        """``navigator.credentials.create`` for these creation options (flags: UP, UV, AT;
        ``cose``: the credential public key to send instead of this one's, CBOR)."""
        self.rp_id = options["rp"]["id"]
        self.user_handle = options["user"]["id"]
        numbers = self.key.public_key().public_numbers()
        if cose is None:
            cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"),
                                -3: numbers.y.to_bytes(32, "big")})
        auth_data = (hashlib.sha256(self.rp_id.encode()).digest() + bytes([flags])
                     + self.count.to_bytes(4, "big") + bytes(16)
                     + len(self.credential_id).to_bytes(2, "big") + self.credential_id + cose)
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", options["challenge"])
        return {
            "id": b64(self.credential_id), "rawId": b64(self.credential_id),
            "type": "public-key", "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
            "response": {"clientDataJSON": b64(client_data),
                         "attestationObject": b64(attestation), "transports": ["internal"]},
        }

    def get(self, options: dict[str, Any], *, count: int | None = None) -> dict[str, Any]:
        """``navigator.credentials.get`` for these request options; the counter goes up by
        one (or is ``count``)."""
        self.count = self.count + 1 if count is None else count
        rp_id = options.get("rpId", self.rp_id)
        auth_data = (hashlib.sha256(rp_id.encode()).digest() + bytes([0x05])
                     + self.count.to_bytes(4, "big"))
        client_data = self._client_data("webauthn.get", options["challenge"])
        signature = self.key.sign(auth_data + hashlib.sha256(client_data).digest(),
                                  ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64(self.credential_id), "rawId": b64(self.credential_id),
            "type": "public-key", "authenticatorAttachment": "platform",
            "clientExtensionResults": {},
            "response": {"clientDataJSON": b64(client_data),
                         "authenticatorData": b64(auth_data), "signature": b64(signature),
                         "userHandle": self.user_handle},
        }
