"""Passkeys (``server.passkeys``) on SQLite and a real PostgreSQL: the challenge store
(single use, also under two answers at once; expiry; purposes), and the HTTP routes on a
real server answered by a software authenticator (``soft_authenticator``): the options'
shape, registration, a sign-in that gives back the same player with a new secret, and
what is refused — a used challenge, another origin, a counter that went back, another
player's challenge, a deleted player, an IP address as the relying party, and the
per-address budget of passkey attempts. The browser's side is
``tests/browser/test_passkey_signin.py`` (Chromium's virtual authenticator)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import cbor2
import httpx
import pytest
from conftest import run
from crib_wire import ThreadServer
from soft_authenticator import SoftAuthenticator, b64

from protocol.passkeys import PasskeyInfo, PasskeyOptionsBody, PasskeySignedIn
from server.database import Database
from server.passkeys.store import PasskeyStore
from server.players.store import PlayerStore
from server.settings import Settings


async def test_a_challenge_is_used_once_and_expires(database) -> None:
    now = [datetime(2026, 12, 2, 12, 0, tzinfo=UTC)]
    store = PasskeyStore(database, clock=lambda: now[0])
    cid, challenge = await store.new_challenge("signin", "localhost", 300)
    assert len(challenge) == 32
    assert await store.take_challenge(cid, "register") is None  # the other ceremony: gone
    cid, challenge = await store.new_challenge("signin", "localhost", 300)
    taken = await store.take_challenge(cid, "signin")
    assert taken is not None and taken.challenge == challenge and taken.rp_id == "localhost"
    assert await store.take_challenge(cid, "signin") is None  # single use
    # two answers at once: exactly one gets it
    cid, _ = await store.new_challenge("signin", "localhost", 300)
    both = await asyncio.gather(store.take_challenge(cid, "signin"),
                                store.take_challenge(cid, "signin"))
    assert sum(t is not None for t in both) == 1
    # expiry: not a moment past its time
    cid, _ = await store.new_challenge("signin", "localhost", 300)
    now[0] += timedelta(seconds=300)
    assert await store.take_challenge(cid, "signin") is None
    # expired challenges are swept when a new one is made
    old, _ = await store.new_challenge("signin", "localhost", 10)
    now[0] += timedelta(seconds=11)
    await store.new_challenge("signin", "localhost", 10)
    from sqlalchemy import func, select

    from server.database.schema import passkey_challenges
    async with database.connect() as conn:
        left = (await conn.execute(select(func.count()).select_from(passkey_challenges)
                                   )).scalar()
    assert left == 1


async def test_passkeys_of_a_player(database) -> None:
    players = PlayerStore(database)
    anna, _ = await players.create("Anna", "da")
    store = PasskeyStore(database)
    kept = await store.add(anna.id, "Y3JlZA", b"key", 0, ["internal"], "0" * 36, False)
    assert kept is not None and await store.add(anna.id, "Y3JlZA", b"k", 0, [], "", False) is None
    got = await store.get("Y3JlZA")
    assert got.public_key == b"key" and got.transports == ["internal"] and got.sign_count == 0
    assert await store.used(got, 5) and not await store.used(got, 6)  # compare-and-set
    assert (await store.get("Y3JlZA")).sign_count == 5
    assert [p.credential_id for p in await store.of_player(anna.id)] == ["Y3JlZA"]
    info = PasskeyInfo.model_validate((await store.get("Y3JlZA")).public())
    assert info.last_used_at is not None and info.last_used_at.endswith("Z")
    assert not await store.remove("b" * 16, "Y3JlZA") and await store.count(anna.id) == 1
    assert await store.forget_player(anna.id) == 1 and await store.get("Y3JlZA") is None
    # the player's export holds its passkeys; deleting the player deletes them
    await store.add(anna.id, "a2V5Mg", b"key2", 0, [], "0" * 36, True)
    await store.new_challenge("register", "localhost", 300, player_id=anna.id)
    exported = await players.export(anna.id)
    assert [(p["credential_id"], p["public_key"]) for p in exported["passkeys"]] == [
        ("a2V5Mg", b64(b"key2"))]
    assert await players.delete(anna.id)
    assert await store.get("a2V5Mg") is None and await store.count(anna.id) == 0
    from sqlalchemy import func, select

    from server.database.schema import passkey_challenges
    async with database.connect() as conn:
        assert (await conn.execute(select(func.count()).select_from(passkey_challenges).where(
            passkey_challenges.c.player_id == anna.id))).scalar() == 0


@pytest.fixture(params=["sqlite", "postgresql"])
def site(request, tmp_path):
    """A server on a real database, reached as ``http://localhost:<port>``, and a way to
    make players in its database: ``(client, origin, make_player, settings_overrides)``."""
    if request.param == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'passkeys.sqlite3'}"
    else:
        url = request.getfixturevalue("pg_url")
    servers: list[ThreadServer] = []

    def start(**overrides):
        server = ThreadServer(Settings(database_url=url, **overrides)).start()
        servers.append(server)
        client = httpx.Client(base_url=server.http,
                              headers={"Host": f"localhost:{server.port}"})
        return server, client, f"http://localhost:{server.port}"

    async def make_player(name="Anna"):
        db = Database(url)
        try:
            return await PlayerStore(db).create(name, "en")
        finally:
            await db.close()

    yield start, lambda *a: run(make_player(*a)), url
    for s in servers:
        s.stop()


def _auth(player, secret) -> dict[str, str]:
    return {"Authorization": f"Player {player.id}.{secret}"}


def _register(client, auth, authenticator) -> dict:
    r = client.post("/api/players/me/passkeys/options", headers=auth)
    assert r.status_code == 200, r.text
    body = PasskeyOptionsBody.model_validate(r.json())
    answer = authenticator.create(body.options)
    r = client.post("/api/players/me/passkeys", headers=auth,
                    json={"challenge_id": body.challenge_id, "credential": answer})
    assert r.status_code == 201, r.text
    return r.json()


def _signin_options(client) -> PasskeyOptionsBody:
    r = client.post("/api/passkeys/options")
    assert r.status_code == 200, r.text
    return PasskeyOptionsBody.model_validate(r.json())


def test_a_passkey_brings_the_same_player_back(site) -> None:
    start, make_player, url = site
    server, client, origin = start(passkey_attempts_per_minute=0)  # (many requests here)
    anna, secret = make_player()
    auth = _auth(anna, secret)
    r = client.post("/api/players/me/passkeys/options", headers=auth)
    options = r.json()["options"]
    assert options["rp"] == {"id": "localhost", "name": "Cribbage"}
    assert options["user"]["id"] == b64(anna.id.encode()) and options["user"]["name"] == "Anna"
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["authenticatorSelection"]["userVerification"] == "preferred"
    assert options["attestation"] == "none" and options["excludeCredentials"] == []
    assert {p["alg"] for p in options["pubKeyCredParams"]} >= {-7, -8, -257}
    assert options["timeout"] == 300000 and len(options["challenge"]) >= 43

    phone = SoftAuthenticator(origin)
    kept = _register(client, auth, phone)
    assert kept["id"] == b64(phone.credential_id) and kept["transports"] == ["internal"]
    assert kept["last_used_at"] is None
    listed = client.get("/api/players/me/passkeys", headers=auth).json()["passkeys"]
    assert [p["id"] for p in listed] == [kept["id"]]
    again = client.post("/api/players/me/passkeys/options", headers=auth).json()["options"]
    assert [c["id"] for c in again["excludeCredentials"]] == [kept["id"]]

    # the browser forgot the player: sign in with the passkey
    signin = _signin_options(client)
    assert signin.options["rpId"] == "localhost" and signin.options["allowCredentials"] == []
    assert signin.options["userVerification"] == "preferred"
    answer = phone.get(signin.options)
    r = client.post("/api/passkeys/signin",
                    json={"challenge_id": signin.challenge_id, "credential": answer})
    assert r.status_code == 200, r.text
    back = PasskeySignedIn.model_validate(r.json())
    assert back.id == anna.id and back.secret != secret
    new_auth = {"Authorization": f"Player {back.id}.{back.secret}"}
    assert client.get("/api/players/me/passkeys", headers=new_auth).status_code == 200
    assert client.get("/api/players/me/passkeys", headers=auth).status_code == 200  # kept
    used = client.get("/api/players/me/passkeys", headers=auth).json()["passkeys"][0]
    assert used["last_used_at"] is not None

    # the same answer again: its challenge is used up
    r = client.post("/api/passkeys/signin",
                    json={"challenge_id": signin.challenge_id, "credential": answer})
    assert r.status_code == 404 and r.json()["error"]["code"] == "passkey_challenge_not_found"
    # the old answer with a fresh challenge: signed over another challenge
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin",
                    json={"challenge_id": fresh.challenge_id, "credential": answer})
    assert r.json()["error"]["code"] == "bad_passkey"
    # a counter that went back (a cloned authenticator)
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": fresh.challenge_id, "credential": phone.get(fresh.options, count=1)})
    assert r.status_code == 403 and r.json()["error"]["code"] == "bad_passkey", r.text
    # a page of another origin (its client data says so)
    phone.origin = f"http://evil.localhost:{server.port}"
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": fresh.challenge_id, "credential": phone.get(fresh.options)})
    assert r.json()["error"]["code"] == "bad_passkey" and "origin" in r.text.lower()
    phone.origin = origin
    # a passkey the server does not know
    stranger = SoftAuthenticator(origin)
    stranger.rp_id, stranger.user_handle = "localhost", b64(anna.id.encode())
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": fresh.challenge_id, "credential": stranger.get(fresh.options)})
    assert r.json()["error"]["code"] == "bad_passkey"
    # still good after all that
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": fresh.challenge_id, "credential": phone.get(fresh.options)})
    assert r.status_code == 200 and r.json()["id"] == anna.id

    # another player cannot answer Anna's registration challenge
    bo, bo_secret = make_player("Bo")
    challenge = client.post("/api/players/me/passkeys/options", headers=auth).json()
    r = client.post("/api/players/me/passkeys", headers=_auth(bo, bo_secret), json={
        "challenge_id": challenge["challenge_id"],
        "credential": SoftAuthenticator(origin).create(challenge["options"])})
    assert r.json()["error"]["code"] == "passkey_challenge_not_found"
    # nor without a player at all
    assert client.post("/api/players/me/passkeys/options").status_code == 401

    # a public key that could never verify a sign-in is not kept ("none" attestation signs
    # nothing at registration): a point off the curve, a key of no known algorithm
    for junk in (cbor2.dumps({1: 2, 3: -7, -1: 1, -2: bytes(31) + b"\x01",
                              -3: bytes(31) + b"\x01"}),
                 cbor2.dumps({1: 2, 3: -7, -1: 1, -2: b"\x05", -3: b"\x07"}),
                 cbor2.dumps({1: 9, 3: -7}), b"\xa0"):
        challenge = client.post("/api/players/me/passkeys/options", headers=auth).json()
        r = client.post("/api/players/me/passkeys", headers=auth, json={
            "challenge_id": challenge["challenge_id"],
            "credential": SoftAuthenticator(origin).create(challenge["options"], cose=junk)})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_passkey", r.text
    listed = client.get("/api/players/me/passkeys", headers=auth).json()["passkeys"]
    assert [p["id"] for p in listed] == [kept["id"]]

    # delete it: it signs in no more
    r = client.delete(f"/api/players/me/passkeys/{kept['id']}", headers=auth)
    assert r.status_code == 204
    r = client.delete(f"/api/players/me/passkeys/{kept['id']}", headers=auth)
    assert r.status_code == 404 and r.json()["error"]["code"] == "passkey_not_found"
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": fresh.challenge_id, "credential": phone.get(fresh.options)})
    assert r.json()["error"]["code"] == "bad_passkey"


def test_a_deleted_player_does_not_come_back(site) -> None:
    start, make_player, url = site
    _, client, origin = start()
    anna, secret = make_player()
    key = SoftAuthenticator(origin)
    _register(client, _auth(anna, secret), key)

    async def delete() -> None:
        db = Database(url)
        try:
            assert await PlayerStore(db).delete(anna.id)
        finally:
            await db.close()

    run(delete())
    fresh = _signin_options(client)
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": fresh.challenge_id, "credential": key.get(fresh.options)})
    assert r.status_code == 403 and r.json()["error"]["code"] == "bad_passkey"


def test_what_is_refused_before_any_verification(site) -> None:
    start, make_player, _ = site
    server, client, origin = start(passkey_attempts_per_minute=5)
    anna, secret = make_player()
    # no domain name: an IP address is no relying party id
    r = httpx.post(f"{server.http}/api/passkeys/options")
    assert r.status_code == 400 and r.json()["error"]["code"] == "passkeys_unavailable"
    # not an answer
    r = client.post("/api/passkeys/signin", content=b"{nope")
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_passkey"
    # a page of an origin allowed_origins does not list
    r = client.post("/api/passkeys/options", headers={"Origin": "https://cards.example"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "origin_not_allowed"
    r = client.post("/api/passkeys/signin", json={"challenge_id": "x", "credential": {}})
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_passkey"  # no answer
    stranger = SoftAuthenticator(origin)
    stranger.rp_id = "localhost"
    r = client.post("/api/passkeys/signin", json={
        "challenge_id": "x", "credential": stranger.get({"challenge": "eA"})})
    assert r.status_code == 404 and r.json()["error"]["code"] == "passkey_challenge_not_found"
    # the budget: 5 a minute per address, every passkey request counts
    r = client.post("/api/passkeys/options")
    assert r.status_code == 429 and r.json()["error"]["code"] == "too_many_passkey_attempts"
    assert int(r.headers["Retry-After"]) >= 1 and r.json()["error"]["retry_after"] > 0
    r = client.post("/api/players/me/passkeys/options", headers=_auth(anna, secret))
    assert r.status_code == 429


def test_bodies_are_read_like_every_other_endpoints(site) -> None:
    """The passkey endpoints read a body as the rest of the API does (``server/web/body.py``):
    too deep is said so, a wrong shape gets a short answer (at most three faults, no
    input echoed), and the two endpoints that take no body still refuse one over
    ``max_body_bytes`` (413, and the connection is closed)."""
    start, make_player, _ = site
    server, client, origin = start(passkey_attempts_per_minute=100)
    anna, secret = make_player()
    r = client.post("/api/passkeys/signin", content=b"[" * 10_000)
    assert r.status_code == 400 and r.json()["error"] == {
        "code": "bad_passkey", "message": "the body nests too deeply"}
    r = client.post("/api/passkeys/signin",
                    content=json.dumps({f"k{i}": 1 for i in range(1000)}).encode())
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_passkey"
    assert len(r.content) < 1000, len(r.content)
    big = b" " * (16 * 1024 + 1)
    for path, headers in (("/api/passkeys/options", {}),
                          ("/api/players/me/passkeys/options", _auth(anna, secret))):
        r = client.post(path, content=big, headers=headers)
        assert r.status_code == 413 and r.json()["error"]["code"] == "too_large", r.text
        assert r.headers["connection"] == "close"
        assert client.post(path, headers=headers).status_code == 200  # no body: options


def test_too_many_passkeys(site) -> None:
    start, make_player, _ = site
    _, client, origin = start(max_passkeys_per_player=1)
    anna, secret = make_player()
    _register(client, _auth(anna, secret), SoftAuthenticator(origin))
    r = client.post("/api/players/me/passkeys/options", headers=_auth(anna, secret))
    assert r.status_code == 409 and r.json()["error"]["code"] == "too_many_passkeys"
