"""``server.players.store`` on SQLite and a real PostgreSQL: a player and its first secret,
authentication (wrong secrets, other players' secrets, deleted players), device
credentials, link codes (single use, expiry, tries), export and deletion."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select

from server.database.schema import player_credentials, players
from server.players.store import (
    PLAYER_ID_PATTERN,
    SECRET_PATTERN,
    LinkError,
    PlayerStore,
    shown_code,
)


async def test_a_player_authenticates_with_each_of_its_secrets_only(database) -> None:
    store = PlayerStore(database)
    anna, secret = await store.create("Anna", "da")
    bo, bo_secret = await store.create(None, "en")
    import re
    assert re.match(PLAYER_ID_PATTERN, anna.id) and re.match(SECRET_PATTERN, secret)
    assert (await store.authenticate(anna.id, secret)).name == "Anna"
    assert await store.authenticate(anna.id, bo_secret) is None
    assert await store.authenticate(anna.id, "a" * 32) is None
    assert await store.authenticate("a" * 16, secret) is None
    assert await store.authenticate(anna.id, secret.upper()) is None
    second = await store.issue_secret(anna.id, "passkey")
    assert second != secret and (await store.authenticate(anna.id, second)).id == anna.id
    assert (await store.authenticate(bo.id, bo_secret)).language == "en"
    async with database.connect() as conn:
        hows = sorted((await conn.execute(select(player_credentials.c.how).where(
            player_credentials.c.player_id == anna.id))).scalars())
        row = (await conn.execute(select(players).where(players.c.id == anna.id))).one()
    assert hows == ["new", "passkey"] and secret not in str(row) and len(row.secret_hash) == 64
    with pytest.raises(ValueError):
        await store.issue_secret(anna.id, "password")
    with pytest.raises(ValueError):
        await store.create("x", "de")


async def test_a_deleted_player_never_authenticates(database) -> None:
    store = PlayerStore(database)
    anna, secret = await store.create("Anna", "sv")
    other = await store.issue_secret(anna.id, "link")
    assert await store.delete(anna.id) and not await store.delete(anna.id)
    assert await store.authenticate(anna.id, secret) is None
    assert await store.authenticate(anna.id, other) is None
    gone = await store.get(anna.id)
    assert gone.deleted and gone.name is None and gone.language is None
    with pytest.raises(ValueError):
        await store.issue_secret(anna.id, "passkey")
    exported = await store.export(anna.id)
    assert exported["credentials"] == [] and exported["player"]["deleted_at"]


async def test_link_codes_are_single_use_expire_and_die_after_their_tries(database) -> None:
    store = PlayerStore(database)
    anna, _ = await store.create("Anna", "en")
    made = await store.create_link_code(anna.id, 600)
    player, secret = await store.claim_link_code(shown_code(made.code).lower(), 3)
    assert player.id == anna.id and (await store.authenticate(anna.id, secret)) is not None
    with pytest.raises(LinkError) as used:
        await store.claim_link_code(made.code, 3)
    assert used.value.code == "bad_code"
    # wrong second halves count against the code; the third kills it
    made = await store.create_link_code(anna.id, 600)
    wrong = made.code[:4] + ("2222" if made.code[4:] != "2222" else "3333")
    codes = []
    for _ in range(3):
        with pytest.raises(LinkError) as failed:
            await store.claim_link_code(wrong, 3)
        codes.append(failed.value.code)
    assert codes == ["bad_code", "bad_code", "too_many_tries"]
    with pytest.raises(LinkError) as dead:
        await store.claim_link_code(made.code, 3)
    assert dead.value.code == "too_many_tries"
    # expiry
    made = await store.create_link_code(anna.id, 0.2)
    await asyncio.sleep(0.4)
    with pytest.raises(LinkError) as expired:
        await store.claim_link_code(made.code, 3)
    assert expired.value.code == "bad_code"
    # two claims at once: one wins
    made = await store.create_link_code(anna.id, 600)
    results = await asyncio.gather(*(store.claim_link_code(made.code, 3) for _ in range(2)),
                                   return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["LinkError", "tuple"]
