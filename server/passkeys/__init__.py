"""Passkeys (issue 18 point 2): WebAuthn credentials that bring a player back when the
browser's storage is gone. No passwords, no e-mail.

* :mod:`server.passkeys.store`: the passkeys and the single-use challenges, in SQL;
* :mod:`server.passkeys.relying_party`: which RP id and origin a request's passkeys are
  bound to;
* :mod:`server.passkeys.http`: the HTTP routes (``ROUTES``; docs/protocol.md "Passkeys").

The WebAuthn work (options, attestation and assertion verification) is the ``webauthn``
library's (py_webauthn).
"""

from .relying_party import RelyingParty, relying_party
from .store import Challenge, Passkey, PasskeyStore

__all__ = ["Challenge", "Passkey", "PasskeyStore", "RelyingParty", "relying_party"]
