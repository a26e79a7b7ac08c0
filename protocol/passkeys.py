"""Bodies of the passkey routes of the HTTP API (docs/protocol.md, "Passkeys"), as pydantic
models, and their part of the OpenAPI document (:mod:`protocol.openapi` splices
:func:`passkey_paths`, :data:`NAMED` and :data:`ERRORS` in).

A passkey is a WebAuthn credential (https://www.w3.org/TR/webauthn-3/) that brings a
player back where the browser's storage is gone: made once by a player (the two
``/api/players/me/passkeys`` requests, authenticated as that player), then used with no
player at hand (``/api/passkeys/options``, ``/api/passkeys/signin``), which answers a new
device credential of that player. The WebAuthn objects go over the wire in their JSON forms
(WebAuthn Level 3: ``PublicKeyCredentialCreationOptionsJSON`` and
``PublicKeyCredentialRequestOptionsJSON`` in, ``RegistrationResponseJSON`` and
``AuthenticationResponseJSON`` back: binary fields as base64url without padding), which
``PublicKeyCredential.parseCreationOptionsFromJSON`` and ``toJSON()`` read and write in
browsers that have them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

CHALLENGE_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
CREDENTIAL_ID_PATTERN = r"^[A-Za-z0-9_-]{1,1400}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PasskeyOptionsBody(_Model):
    """The options of one passkey ceremony: what ``navigator.credentials.create`` (a new
    passkey) or ``.get`` (a sign-in) is given, and the id to send back with the answer."""

    challenge_id: str = Field(
        pattern=CHALLENGE_ID_PATTERN,
        description="Send it back with the credential: the challenge is single use and "
        "expires after `passkey_challenge_seconds` (300 s by default).",
    )
    options: dict[str, Any] = Field(
        description="`PublicKeyCredentialCreationOptionsJSON` (registration: `rp`, `user`, "
        "`challenge`, `pubKeyCredParams`, `timeout`, `excludeCredentials`, "
        "`authenticatorSelection` with `residentKey` `required` and `userVerification` "
        "`preferred`, `attestation` `none`) or `PublicKeyCredentialRequestOptionsJSON` "
        "(sign-in: `challenge`, `timeout`, `rpId`, `allowCredentials` empty: a "
        "discoverable passkey, `userVerification` `preferred`); binary values in base64url."
    )


B64URL = r"^[A-Za-z0-9_-]*$"
"""base64url without padding (WebAuthn's JSON forms)."""


class _Credential(BaseModel):
    # Browsers may add members to toJSON() in later versions: kept, not refused.
    model_config = ConfigDict(extra="allow", strict=True)

    id: str = Field(pattern=CREDENTIAL_ID_PATTERN, description="The credential id, base64url.")
    rawId: str = Field(pattern=CREDENTIAL_ID_PATTERN, description="The same id, base64url.")  # noqa: N815
    type: Literal["public-key"]
    authenticatorAttachment: str | None = None  # noqa: N815
    clientExtensionResults: dict[str, Any] = Field(default_factory=dict)  # noqa: N815


class _AttestationResponse(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    clientDataJSON: str = Field(pattern=B64URL, min_length=1, max_length=8192)  # noqa: N815
    attestationObject: str = Field(pattern=B64URL, min_length=1, max_length=12000)  # noqa: N815
    transports: list[str] = Field(default_factory=list, max_length=16)


class _AssertionResponse(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    clientDataJSON: str = Field(pattern=B64URL, min_length=1, max_length=8192)  # noqa: N815
    authenticatorData: str = Field(pattern=B64URL, min_length=1, max_length=8192)  # noqa: N815
    signature: str = Field(pattern=B64URL, min_length=1, max_length=2048)
    userHandle: str | None = Field(default=None, pattern=B64URL, max_length=128)  # noqa: N815


class RegistrationCredentialJSON(_Credential):
    """``RegistrationResponseJSON``: what ``navigator.credentials.create`` gives, in its
    JSON form (``toJSON()``)."""

    response: _AttestationResponse


class AuthenticationCredentialJSON(_Credential):
    """``AuthenticationResponseJSON``: what ``navigator.credentials.get`` gives, in its
    JSON form (``toJSON()``)."""

    response: _AssertionResponse


class PasskeyRegistration(_Model):
    """The browser's answer to registration options."""

    challenge_id: str = Field(pattern=CHALLENGE_ID_PATTERN,
                              description="From the options' answer.")
    credential: RegistrationCredentialJSON


class PasskeySignin(_Model):
    """The browser's answer to sign-in options."""

    challenge_id: str = Field(pattern=CHALLENGE_ID_PATTERN,
                              description="From the options' answer.")
    credential: AuthenticationCredentialJSON


class PasskeyInfo(_Model):
    """One passkey of the player, as the player's own list shows it (never the key)."""

    id: str = Field(pattern=CREDENTIAL_ID_PATTERN,
                    description="The credential id, base64url (what DELETE takes).")
    created_at: str = Field(description="ISO 8601, UTC.")
    last_used_at: str | None = Field(description="The last sign-in with it (ISO 8601, "
                                     "UTC), or null: never used.")
    transports: list[str] = Field(description="How the browser reaches it (`internal`, "
                                  "`hybrid`, `usb`, …), as it said.")
    backed_up: bool = Field(description="A synced passkey (on every device of the "
                            "player's password manager).")


class PasskeyList(_Model):
    """``GET /api/players/me/passkeys``: the player's passkeys, oldest first."""

    passkeys: list[PasskeyInfo]


class PasskeySignedIn(_Model):
    """``POST /api/passkeys/signin``: the player the passkey belongs to, with a **new**
    secret for this device (the player's other devices keep theirs). Keep both as the
    web table keeps a new player's (``cribbage.player``) and present them as any player
    credential."""

    id: str = Field(pattern=r"^[a-z2-7]{16}$", description="The player's public id.")
    secret: str = Field(pattern=r"^[a-z2-7]{32}$",
                        description="A new secret of the player, for this device only.")
    name: str | None = Field(description="The player's display name (null: none chosen).")
    language: Literal["en", "da", "sv"] = Field(description="The player's language.")


NAMED: dict[str, Any] = {
    "PasskeyOptionsBody": PasskeyOptionsBody,
    "PasskeyRegistration": PasskeyRegistration,
    "PasskeySignin": PasskeySignin,
    "PasskeyInfo": PasskeyInfo,
    "PasskeyList": PasskeyList,
    "PasskeySignedIn": PasskeySignedIn,
}
"""The models :mod:`protocol.openapi` names in ``components.schemas``."""

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "BadPasskey": (
        "400",
        "The body is not a passkey answer (`bad_passkey`), or it does not verify: another "
        "origin or relying party, a challenge it was not made for, a bad signature, a "
        "signature counter that went back (a cloned authenticator), a passkey the server "
        "does not know (or whose player was deleted) (`bad_passkey`); or no relying party "
        "id (`passkeys_unavailable`, below). Nothing changed, and the challenge is used up "
        "either way.",
        ["bad_passkey", "passkeys_unavailable"],
    ),
    "PasskeyChallengeNotFound": (
        "404",
        "The `challenge_id` names no live challenge: unknown, already used, expired "
        "(`passkey_challenge_seconds`), of the other ceremony or of another player. Ask "
        "for new options; nothing changed.",
        ["passkey_challenge_not_found"],
    ),
    "SigninRefused": (
        "403",
        "The passkey did not sign in: it does not verify (another origin or relying "
        "party, a challenge it was not made for, a bad signature), its signature counter "
        "did not go up (a cloned authenticator), the server does not know it, or its "
        "player was deleted (`bad_passkey`; the challenge is used up); or the request "
        "comes from a web page whose `Origin` the server does not allow "
        "(`origin_not_allowed`).",
        ["bad_passkey", "origin_not_allowed"],
    ),
    "PasskeysUnavailable": (
        "400",
        "No relying party id: the server was reached at an IP address and neither "
        "`passkey_rp_id` nor `public_url` is set (passkeys need a domain name, or "
        "`localhost`).",
        ["passkeys_unavailable"],
    ),
    "PasskeyNotFound": ("404", "The player holds no passkey of that id.",
                        ["passkey_not_found"]),
    "TooManyPasskeys": (
        "409",
        "The player already holds `max_passkeys_per_player` passkeys (10 by default): "
        "delete one first. Nothing changed.",
        ["too_many_passkeys"],
    ),
    "TooManyPasskeyAttempts": (
        "429",
        "This client address made more passkey requests in the last minute than the "
        "server allows (`passkey_attempts_per_minute`, 20 by default: options, sign-ins and "
        "registrations, verified or not): nothing was done. Retry after the seconds in "
        "the `Retry-After` header (`error.retry_after` has them unrounded).",
        ["too_many_passkey_attempts"],
    ),
}
"""Error responses of the passkey routes: name -> (status, description, codes)."""


def passkey_paths(json_body: Any, errors: Any, player_errors: tuple[str, ...]) -> dict:
    """The passkey routes' ``paths`` of the OpenAPI document.

    Args:
        json_body: ``protocol.openapi._json`` (``(schema name, example) -> content``).
        errors: ``protocol.openapi._errors`` (response names -> responses).
        player_errors: the names of the responses of a request authenticated as a player
            (a bad or missing player credential), from the players' part of the document.
    """
    def answer_body(schema: str, response: dict) -> dict:
        return {"required": True, "content": json_body(schema, {
            "challenge_id": "Yc8m1w0cVq5JtXo2bN3p4A",
            "credential": {"id": "AbC1", "rawId": "AbC1", "type": "public-key",
                           "response": response, "clientExtensionResults": {}},
        })}
    common = ("OriginNotAllowed", "TooLarge", "TooManyPasskeyAttempts", "Internal",
              "DatabaseDown")
    options_example = {"challenge_id": "Yc8m1w0cVq5JtXo2bN3p4A", "options": {
        "challenge": "…", "timeout": 300000, "rpId": "cards.example", "allowCredentials": [],
        "userVerification": "preferred"}}
    return {
        "/api/players/me/passkeys/options": {
            "post": {
                "operationId": "passkeyRegistrationOptions",
                "tags": ["passkeys"],
                "summary": "Options to make a passkey of this player",
                "description": "Starts making a passkey: hand `options` to "
                "`navigator.credentials.create({publicKey})` (after decoding the base64url "
                "fields) and send its answer to `POST /api/players/me/passkeys` with the "
                "`challenge_id`. The passkey is discoverable (a resident key, "
                "required) so that it can sign in with no player at hand; the player's "
                "passkeys are excluded (one per authenticator). No body.",
                "responses": {
                    "200": {"description": "The options.",
                            "content": json_body("PasskeyOptionsBody")},
                    **errors(*player_errors, "TooManyPasskeys", "PasskeysUnavailable",
                             *common),
                },
            }
        },
        "/api/players/me/passkeys": {
            "get": {
                "operationId": "listPasskeys",
                "tags": ["passkeys"],
                "summary": "This player's passkeys",
                "responses": {
                    "200": {"description": "The passkeys, oldest first.",
                            "content": json_body("PasskeyList", {"passkeys": []})},
                    **errors(*player_errors, "Internal", "DatabaseDown"),
                },
            },
            "post": {
                "operationId": "addPasskey",
                "tags": ["passkeys"],
                "summary": "Keep a new passkey of this player",
                "description": "The browser's answer to the options of "
                "`POST /api/players/me/passkeys/options`, verified (origin, relying "
                "party, challenge, user presence) and kept.",
                "requestBody": answer_body("PasskeyRegistration", {
                    "clientDataJSON": "eyJ0", "attestationObject": "o2Nm",
                    "transports": ["internal"]}),
                "responses": {
                    "201": {"description": "The passkey kept.",
                            "content": json_body("PasskeyInfo")},
                    **errors(*player_errors, "BadPasskey", "PasskeyChallengeNotFound",
                             "TooManyPasskeys", *common),
                },
            },
        },
        "/api/players/me/passkeys/{passkey}": {
            "delete": {
                "operationId": "deletePasskey",
                "tags": ["passkeys"],
                "summary": "Delete one of this player's passkeys",
                "description": "It signs in no more (the authenticator may still show it: "
                "remove it there too).",
                "parameters": [{
                    "name": "passkey", "in": "path", "required": True,
                    "description": "The passkey's `id` (its credential id, base64url).",
                    "schema": {"type": "string", "pattern": CREDENTIAL_ID_PATTERN},
                }],
                "responses": {
                    "204": {"description": "Deleted."},
                    **errors(*player_errors, "PasskeyNotFound", "OriginNotAllowed",
                             "Internal", "DatabaseDown"),
                },
            }
        },
        "/api/passkeys/options": {
            "post": {
                "operationId": "passkeySigninOptions",
                "tags": ["passkeys"],
                "summary": "Options to sign in with a passkey",
                "description": "For a browser with no player in its storage: hand "
                "`options` to `navigator.credentials.get({publicKey})` and send its answer "
                "to `POST /api/passkeys/signin` with the `challenge_id`. No "
                "`allowCredentials`: the browser offers the passkeys it holds for this "
                "site. No body.",
                "responses": {
                    "200": {"description": "The options.",
                            "content": json_body("PasskeyOptionsBody", options_example)},
                    **errors("PasskeysUnavailable", *common),
                },
            }
        },
        "/api/passkeys/signin": {
            "post": {
                "operationId": "passkeySignin",
                "tags": ["passkeys"],
                "summary": "Sign in with a passkey",
                "description": "Verifies the browser's answer (origin, relying party, "
                "challenge, signature, and that the authenticator's signature counter went "
                "up) and answers the passkey's player with a new secret for this device. "
                "A deleted player's passkeys sign in no more.",
                "requestBody": answer_body("PasskeySignin", {
                    "clientDataJSON": "eyJ0", "authenticatorData": "SZYN",
                    "signature": "MEUC", "userHandle": "azN6cQ"}),
                "responses": {
                    "200": {"description": "The player, with a new secret.",
                            "content": json_body("PasskeySignedIn", {
                                "id": "k3zq6v2fkm4xw7ra",
                                "secret": "q3zq6v2fkm4xw7raq3zq6v2fkm4xw7ra",
                                "name": "Anna", "language": "da"})},
                    **errors("PasskeysUnavailable", "PasskeyChallengeNotFound", *common,
                             "SigninRefused"),
                },
            }
        },
    }
