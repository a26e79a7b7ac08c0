"""The passkey routes of the HTTP API (docs/protocol.md, "Passkeys"; bodies in
``protocol.passkeys``); ``server.app`` splices :data:`ROUTES` in.

Making a passkey (a player who holds a secret, ``Authorization: Player <id>.<secret>``):

* ``POST /api/players/me/passkeys/options`` -> ``200 {"challenge_id", "options"}``: the
  options of ``navigator.credentials.create`` (a discoverable credential, user
  verification preferred, the player's passkeys excluded);
* ``POST /api/players/me/passkeys`` ``{"challenge_id", "credential"}`` -> ``201`` the
  passkey kept; ``GET /api/players/me/passkeys`` lists them; ``DELETE
  /api/players/me/passkeys/{id}`` -> ``204``.

Signing in with one (no player at hand: the browser forgot it):

* ``POST /api/passkeys/options`` -> ``200 {"challenge_id", "options"}`` (no
  ``allowCredentials``: the browser offers the passkeys it holds for the site);
* ``POST /api/passkeys/signin`` ``{"challenge_id", "credential"}`` -> ``200 {"id",
  "secret", "name", "language"}``: the passkey's player with a new device credential
  (``PlayerStore.issue_secret(player, "passkey")``).

Every ``POST`` here costs one event of the address's ``passkey_attempts_per_minute``
budget (taken before anything else; verified or not), is refused for a page of an origin
``allowed_origins`` does not list (``403 origin_not_allowed``) and for a body over
``max_body_bytes`` (``413 too_large``). A challenge is used up by the first answer sent
with it, whether that answer verifies or not. The verification is the ``webauthn``
library's (``verify_registration_response``, ``verify_authentication_response``): the
client data's type, challenge and origin (:mod:`server.passkeys.relying_party`), the RP id
hash, user presence, the signature, and for a sign-in that the signature counter went up
(unless the authenticator keeps none).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import (
    base64url_to_bytes,
    bytes_to_base64url,
    decode_credential_public_key,
    decoded_public_key_to_cryptography,
    parse_authentication_credential_json,
    parse_registration_credential_json,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from protocol.codec import validation_text
from protocol.passkeys import CREDENTIAL_ID_PATTERN, PasskeyRegistration, PasskeySignin

from ..budgets import Budget
from ..limits import client_address, retry_after_header
from ..players.auth import (
    ApiError,
    database_unavailable,
    player_from_request,
    player_store,
    too_large,
)
from ..players.store import Player
from ..web.body import BodyError, BodyTooLarge, read_bytes, read_json_object
from .relying_party import RelyingParty, relying_party
from .store import PasskeyStore

log = logging.getLogger(__name__)

MAX_CREDENTIAL_ID_BYTES = 1023
"""The longest credential id WebAuthn allows (https://www.w3.org/TR/webauthn-3/#credential-id)."""

_budgets: dict[int, Budget] = {}


def attempts_budget(per_minute: int) -> Budget:
    """The per-address budget of passkey requests (``passkey_attempts_per_minute``; the
    bucket holds the whole minute's worth)."""
    budget = _budgets.get(per_minute)
    if budget is None:
        budget = _budgets[per_minute] = Budget("passkey_attempts", per_minute)
    return budget


def _services(request: Request) -> Any:
    return request.state.services


def passkey_store(request: Request) -> PasskeyStore:
    """The process's passkey store (made on first use over ``services.database``).

    Raises:
        ApiError: 503 ``database_unavailable`` when the process has no database.
    """
    services = _services(request)
    store = getattr(services, "passkeys", None)
    if store is None:
        if services.database is None:
            raise database_unavailable()
        store = services.passkeys = PasskeyStore(services.database)  # (tests' services)
    return store


def _error(status: int, code: str, message: str) -> ApiError:
    return ApiError(status, code, message)


def bad_passkey(message: str) -> ApiError:
    """400 ``bad_passkey``: the body is no passkey answer, or a new passkey does not
    verify."""
    return _error(400, "bad_passkey", message)


def refused(message: str) -> ApiError:
    """403 ``bad_passkey``: a sign-in's passkey does not sign in (does not verify, unknown,
    a counter that did not go up, a deleted player)."""
    return _error(403, "bad_passkey", message)


async def _guard(request: Request) -> None:
    """What every passkey ``POST`` passes first: the address's budget (every request
    counts, refused or not), then the origin.

    Raises:
        ApiError: 429 ``too_many_passkey_attempts`` with ``Retry-After``; 403
            ``origin_not_allowed``.
    """
    services = _services(request)
    limits = services.limits
    if limits is not None:
        await _charge(services, limits, request)
    if not services.origins.allows(request.headers.get("origin"), request.headers.get("host")):
        raise _error(403, "origin_not_allowed",
                     "pages of this origin may not use passkeys here (allowed_origins)")


async def _charge(services: Any, limits: Any, request: Request) -> None:
    budget = attempts_budget(services.settings.passkey_attempts_per_minute)
    ticket = await limits.take(budget, limits.key(client_address(request.scope)))
    if not ticket.taken:
        limits.refused["too_many_passkey_attempts"] += 1
        raise ApiError(429, "too_many_passkey_attempts",
                       "this address made too many passkey requests; retry after "
                       "Retry-After seconds",
                       {"Retry-After": retry_after_header(ticket.wait)},
                       retry_after=round(ticket.wait, 3))


def _relying_party(request: Request) -> RelyingParty:
    rp = relying_party(_services(request).settings, request.url.scheme,
                       request.headers.get("host"))
    if rp is None:
        raise _error(400, "passkeys_unavailable",
                     "passkeys need a domain name: reach the server by name (localhost in "
                     "development) or set passkey_rp_id / public_url")
    return rp


async def _answer(request: Request, model: Any) -> Any:
    """The body ``{"challenge_id", "credential"}`` as ``model`` (``PasskeyRegistration`` or
    ``PasskeySignin``).

    Raises:
        ApiError: 413 ``too_large``; 400 ``bad_passkey`` (not JSON, not that shape).
    """
    try:
        data = await read_json_object(request, _services(request).settings.max_body_bytes)
    except BodyTooLarge as exc:
        raise too_large(exc) from None
    except BodyError as exc:
        raise bad_passkey(str(exc)) from None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise bad_passkey("the body must be {\"challenge_id\", \"credential\"}: "
                          + validation_text(exc)) from None


async def _no_body(request: Request) -> None:
    """Read (and drop) the body of a request that takes none, within ``max_body_bytes``.

    Raises:
        ApiError: 413 ``too_large``.
    """
    try:
        await read_bytes(request, _services(request).settings.max_body_bytes)
    except BodyTooLarge as exc:
        raise too_large(exc) from None
    except BodyError:
        pass  # nothing of it is used


async def _db(call: Any) -> Any:
    """Await a store call; a database failure becomes 503 ``database_unavailable``."""
    try:
        return await call
    except ApiError:
        raise
    except Exception as exc:
        log.warning("passkey store failed: %s", exc)
        raise database_unavailable() from exc


def _options_body(challenge_id: str, options: Any) -> JSONResponse:
    return JSONResponse({"challenge_id": challenge_id,
                         "options": json.loads(options_to_json(options))})


async def registration_options(request: Request) -> Response:
    """``POST /api/players/me/passkeys/options``: the options of a new passkey of the
    request's player (docs/protocol.md, "Passkeys").

    Errors: 401 ``bad_player``; 403 ``origin_not_allowed``; 409 ``too_many_passkeys``;
    400 ``passkeys_unavailable``; 429 ``too_many_passkey_attempts``; 503
    ``database_unavailable``.
    """
    await _guard(request)
    await _no_body(request)
    player = await player_from_request(request)
    rp = _relying_party(request)
    settings = _services(request).settings
    store = passkey_store(request)
    held = await _db(store.of_player(player.id))
    if len(held) >= settings.max_passkeys_per_player:
        raise _error(409, "too_many_passkeys",
                     f"this player already holds {len(held)} passkeys; delete one first")
    challenge_id, challenge = await _db(store.new_challenge(
        "register", rp.id, settings.passkey_challenge_seconds, player_id=player.id))
    label = player.name or f"player {player.id}"
    options = generate_registration_options(
        rp_id=rp.id, rp_name=rp.name, user_id=player.id.encode("ascii"), user_name=label,
        user_display_name=label, challenge=challenge,
        timeout=int(settings.passkey_challenge_seconds * 1000),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED,
            user_verification=UserVerificationRequirement.PREFERRED,
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(p.credential_id))
            for p in held
        ],
    )
    return _options_body(challenge_id, options)


def usable_public_key(cose: bytes) -> bool:
    """Whether ``cose`` (a COSE_Key, CBOR bytes) decodes to a public key of an algorithm
    the library verifies with, its point on its curve (EC2, OKP) or its numbers valid (RSA).
    No error: False for anything else."""
    try:
        decoded_public_key_to_cryptography(decode_credential_public_key(cose))
    except Exception:  # noqa: BLE001 - any failure means "not usable", and nothing else
        return False
    return True


async def add_passkey(request: Request) -> Response:
    """``POST /api/players/me/passkeys``: verify the browser's answer to the player's
    registration options and keep the passkey -> ``201`` its public facts.

    Errors: 400 ``bad_passkey`` / ``passkeys_unavailable``; 401 ``bad_player``; 403; 404
    ``passkey_challenge_not_found``; 409 ``too_many_passkeys``; 413; 429; 503.
    """
    await _guard(request)
    player = await player_from_request(request)
    body = await _answer(request, PasskeyRegistration)
    rp = _relying_party(request)
    settings = _services(request).settings
    store = passkey_store(request)
    challenge = await _db(store.take_challenge(body.challenge_id, "register"))
    if challenge is None or challenge.player_id != player.id or challenge.rp_id != rp.id:
        raise _error(404, "passkey_challenge_not_found",
                     "no such registration challenge of this player (unknown, used or "
                     "expired): ask for new options")
    try:
        credential = parse_registration_credential_json(body.credential.model_dump())
        verified = verify_registration_response(
            credential=credential, expected_challenge=challenge.challenge,
            expected_rp_id=rp.id, expected_origin=rp.origin,
            require_user_verification=False,
        )
    except (WebAuthnException, ValueError, TypeError, KeyError, IndexError) as exc:
        raise bad_passkey(f"the passkey did not verify: {exc}") from None
    if not usable_public_key(verified.credential_public_key):
        # With "none" attestation nothing is signed at registration, so a key that can
        # never verify a sign-in would otherwise be kept (and use up a slot).
        raise bad_passkey("the passkey's public key is not a key that can verify a sign-in")
    if len(verified.credential_id) > MAX_CREDENTIAL_ID_BYTES:
        raise bad_passkey("the credential id is longer than WebAuthn allows")
    if await _db(store.count(player.id)) >= settings.max_passkeys_per_player:
        raise _error(409, "too_many_passkeys", "this player holds too many passkeys")
    transports = [str(getattr(t, "value", t)) for t in (credential.response.transports or [])]
    kept = await _db(store.add(
        player.id, bytes_to_base64url(verified.credential_id), verified.credential_public_key,
        verified.sign_count, transports[:8], verified.aaguid, verified.credential_backed_up,
    ))
    if kept is None:
        raise bad_passkey("that passkey is kept already")
    return JSONResponse(kept.public(), status_code=201)


async def list_passkeys(request: Request) -> Response:
    """``GET /api/players/me/passkeys``: ``{"passkeys": [PasskeyInfo]}``, oldest first.

    Errors: 401 ``bad_player``; 503 ``database_unavailable``.
    """
    player = await player_from_request(request)
    held = await _db(passkey_store(request).of_player(player.id))
    return JSONResponse({"passkeys": [p.public() for p in held]})


async def delete_passkey(request: Request) -> Response:
    """``DELETE /api/players/me/passkeys/{passkey}``: ``204``; 404 ``passkey_not_found``.

    Errors: 401 ``bad_player``; 403 ``origin_not_allowed``; 503.
    """
    services = _services(request)
    if not services.origins.allows(request.headers.get("origin"), request.headers.get("host")):
        raise _error(403, "origin_not_allowed",
                     "pages of this origin may not use passkeys here (allowed_origins)")
    player = await player_from_request(request)
    credential_id = request.path_params["passkey"]
    if not re.fullmatch(CREDENTIAL_ID_PATTERN, credential_id) or not await _db(
            passkey_store(request).remove(player.id, credential_id)):
        raise _error(404, "passkey_not_found", "this player holds no passkey of that id")
    return Response(status_code=204)


async def passkeys_of_player(request: Request) -> Response:
    """``/api/players/me/passkeys``: ``GET`` :func:`list_passkeys`, ``POST``
    :func:`add_passkey` (one route, so a ``405`` names both methods in ``Allow``)."""
    if request.method == "POST":
        return await add_passkey(request)
    return await list_passkeys(request)


async def signin_options(request: Request) -> Response:
    """``POST /api/passkeys/options``: the options of a passkey sign-in (no
    ``allowCredentials``: a discoverable credential).

    Errors: 400 ``passkeys_unavailable``; 403; 429 ``too_many_passkey_attempts``; 503.
    """
    await _guard(request)
    await _no_body(request)
    rp = _relying_party(request)
    settings = _services(request).settings
    challenge_id, challenge = await _db(passkey_store(request).new_challenge(
        "signin", rp.id, settings.passkey_challenge_seconds))
    options = generate_authentication_options(
        rp_id=rp.id, challenge=challenge,
        timeout=int(settings.passkey_challenge_seconds * 1000),
        user_verification=UserVerificationRequirement.PREFERRED,
    )
    return _options_body(challenge_id, options)


async def signin(request: Request) -> Response:
    """``POST /api/passkeys/signin``: verify the answer to sign-in options -> ``200 {"id",
    "secret", "name", "language"}``: the passkey's player and a new device credential of it.

    Errors: 400 ``bad_passkey`` (not a passkey answer) / ``passkeys_unavailable``; 403
    ``bad_passkey`` (does not verify, an unknown passkey, a deleted player, a signature
    counter that did not go up) / ``origin_not_allowed``; 404
    ``passkey_challenge_not_found``; 413; 429; 503.
    """
    await _guard(request)
    body = await _answer(request, PasskeySignin)
    rp = _relying_party(request)
    store = passkey_store(request)
    challenge = await _db(store.take_challenge(body.challenge_id, "signin"))
    if challenge is None or challenge.rp_id != rp.id:
        raise _error(404, "passkey_challenge_not_found",
                     "no such sign-in challenge (unknown, used or expired): ask for new "
                     "options")
    try:
        credential = parse_authentication_credential_json(body.credential.model_dump())
    except (WebAuthnException, ValueError, TypeError, KeyError, IndexError) as exc:
        raise refused(f"not a passkey answer: {exc}") from None
    passkey = None
    if len(credential.raw_id) <= MAX_CREDENTIAL_ID_BYTES:
        passkey = await _db(store.get(bytes_to_base64url(credential.raw_id)))
    if passkey is None:
        raise refused("this server knows no such passkey (deleted, or of another site)")
    handle = credential.response.user_handle
    if handle is not None and handle != passkey.player_id.encode("ascii"):
        raise refused("the passkey names another player")
    try:
        verified = verify_authentication_response(
            credential=credential, expected_challenge=challenge.challenge,
            expected_rp_id=rp.id, expected_origin=rp.origin,
            credential_public_key=passkey.public_key,
            credential_current_sign_count=passkey.sign_count,
            require_user_verification=False,
        )
    except (WebAuthnException, ValueError, TypeError, KeyError, IndexError) as exc:
        raise refused(f"the passkey did not verify: {exc}") from None
    player: Player | None = await _db(player_store(request).get(passkey.player_id))
    if player is None or player.deleted:
        raise refused("the passkey's player was deleted")
    if not await _db(store.used(passkey, verified.new_sign_count)):
        raise refused("the passkey was used at the same moment elsewhere; try again")
    try:
        secret = await _db(player_store(request).issue_secret(player.id, "passkey"))
    except ValueError:  # deleted between the two steps
        raise refused("the passkey's player was deleted") from None
    return JSONResponse({"id": player.id, "secret": secret, "name": player.name,
                         "language": player.language})


ROUTES = [
    Route("/api/players/me/passkeys/options", registration_options, methods=["POST"]),
    Route("/api/players/me/passkeys", passkeys_of_player, methods=["GET", "POST"]),
    Route("/api/players/me/passkeys/{passkey}", delete_passkey, methods=["DELETE"]),
    Route("/api/passkeys/options", signin_options, methods=["POST"]),
    Route("/api/passkeys/signin", signin, methods=["POST"]),
]
"""The passkey routes (``server.app`` adds them to its own)."""
