"""Where passkeys and their challenges are kept: two SQL tables (``server.database.schema``:
``player_passkeys``, ``passkey_challenges``; migration 0004).

Challenges live in SQL, not in a process's memory or in Redis, so that the options one
process hands out can be answered at any other, in memory mode and with Redis alike. A
challenge is **single use**: :meth:`PasskeyStore.take_challenge` deletes it in the same
transaction that reads it, so of two requests answering it at once exactly one gets it; and
it is **short-lived**: past ``expires_at`` it is gone (expired rows are swept whenever a new
challenge is made, so the table holds no more than the last few minutes' worth).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, insert, select, update
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url

from ..database import Database
from ..database.schema import passkey_challenges, player_passkeys

PURPOSES = ("register", "signin")
"""What a challenge may be answered with: a new passkey of its player, or a sign-in."""


def utc(value: datetime | None) -> datetime | None:
    """An aware UTC datetime (SQLite gives UTC back without its zone)."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def iso(value: datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z`` (None stays None)."""
    value = utc(value)
    return None if value is None else value.isoformat().replace("+00:00", "Z")


@dataclass(frozen=True)
class Challenge:
    """An outstanding challenge, as :meth:`PasskeyStore.take_challenge` hands it back.

    Attributes:
        id: its public id (what the client sends back with its answer).
        purpose: ``register`` or ``signin``.
        player_id: the player registering (None for a sign-in).
        challenge: the random bytes the authenticator signs over.
        rp_id: the relying party id the options named.
    """

    id: str
    purpose: str
    player_id: str | None
    challenge: bytes
    rp_id: str


@dataclass(frozen=True)
class Passkey:
    """One stored passkey.

    Attributes:
        credential_id: the credential id, base64url without padding.
        player_id: whose it is.
        public_key: the COSE public key (bytes).
        sign_count: the authenticator's signature counter last seen (0: it keeps none).
        transports: what the browser said it reaches the authenticator by.
        aaguid: the authenticator's model (all zeros for most passkeys).
        backed_up: whether it is synced between devices.
        created_at, last_used_at: aware UTC datetimes (last_used_at None: never used).
    """

    credential_id: str
    player_id: str
    public_key: bytes
    sign_count: int
    transports: list[str]
    aaguid: str
    backed_up: bool
    created_at: datetime
    last_used_at: datetime | None

    def public(self) -> dict[str, Any]:
        """What the player's own list shows of it (``protocol.passkeys.PasskeyInfo``): never
        the key."""
        return {
            "id": self.credential_id, "created_at": iso(self.created_at),
            "last_used_at": iso(self.last_used_at), "transports": self.transports,
            "backed_up": self.backed_up,
        }


def _passkey(row: Any) -> Passkey:
    return Passkey(
        credential_id=row.credential_id, player_id=row.player_id,
        public_key=bytes(row.public_key), sign_count=int(row.sign_count),
        transports=list(row.transports or []), aaguid=row.aaguid,
        backed_up=bool(row.backed_up), created_at=utc(row.created_at),
        last_used_at=utc(row.last_used_at),
    )


class PasskeyStore:
    """Passkeys and challenges in the database.

    Args:
        database: the process's database (migrated: ``server.database.Database.migrate``).
        clock: the current time as an aware datetime (tests move it).

    Every method may raise ``sqlalchemy.exc.SQLAlchemyError`` or ``OSError`` when the
    database fails; nothing is half done (each is one transaction).
    """

    def __init__(self, database: Database,
                 clock: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self.db = database
        self.clock = clock

    async def _ready(self) -> None:
        """Migrate the database first if this process has not yet (safe concurrently)."""
        if not self.db.migrated:
            await self.db.migrate()

    async def new_challenge(self, purpose: str, rp_id: str, ttl_seconds: float,
                            player_id: str | None = None) -> tuple[str, bytes]:
        """Make a challenge (and sweep the expired ones).

        Args:
            purpose: ``register`` (``player_id`` given) or ``signin``.
            rp_id: the relying party id the options name.
            ttl_seconds: how long it may be answered.
            player_id: the player registering a passkey.

        Returns:
            ``(challenge id, the 32 random bytes)``.

        Raises:
            ValueError: an unknown purpose.
        """
        await self._ready()
        if purpose not in PURPOSES:
            raise ValueError(f"unknown purpose {purpose!r}")
        now = self.clock()
        challenge_id = secrets.token_urlsafe(16)
        challenge = secrets.token_bytes(32)
        async with self.db.begin() as conn:
            await conn.execute(delete(passkey_challenges).where(
                passkey_challenges.c.expires_at <= now))
            await conn.execute(insert(passkey_challenges).values(
                id=challenge_id, purpose=purpose, player_id=player_id,
                challenge=bytes_to_base64url(challenge), rp_id=rp_id, created_at=now,
                expires_at=now + timedelta(seconds=ttl_seconds),
            ))
        return challenge_id, challenge

    async def take_challenge(self, challenge_id: str, purpose: str) -> Challenge | None:
        """The challenge ``challenge_id``, used up: deleted in the same transaction, so it
        is handed out once at most. None when there is no such challenge of that purpose
        (never made, already used, or expired; an expired one is deleted too)."""
        await self._ready()
        now = self.clock()
        async with self.db.begin() as conn:
            row = (await conn.execute(select(passkey_challenges).where(
                passkey_challenges.c.id == challenge_id))).first()
            if row is None:
                return None
            gone = await conn.execute(delete(passkey_challenges).where(
                passkey_challenges.c.id == challenge_id))
            if gone.rowcount != 1:  # another request took it meanwhile
                return None
        if row.purpose != purpose or utc(row.expires_at) <= now:
            return None
        return Challenge(row.id, row.purpose, row.player_id,
                         base64url_to_bytes(row.challenge), row.rp_id)

    async def add(self, player_id: str, credential_id: str, public_key: bytes,
                  sign_count: int, transports: list[str], aaguid: str,
                  backed_up: bool) -> Passkey | None:
        """Store a new passkey of ``player_id``; None (nothing stored) when that credential
        id is stored already (for anyone)."""
        await self._ready()
        now = self.clock()
        async with self.db.begin() as conn:
            taken = (await conn.execute(select(player_passkeys.c.credential_id).where(
                player_passkeys.c.credential_id == credential_id))).first()
            if taken is not None:
                return None
            await conn.execute(insert(player_passkeys).values(
                credential_id=credential_id, player_id=player_id, public_key=public_key,
                sign_count=sign_count, transports=transports, aaguid=aaguid,
                backed_up=backed_up, created_at=now, last_used_at=None,
            ))
        return Passkey(credential_id, player_id, public_key, sign_count, transports, aaguid,
                       backed_up, now, None)

    async def get(self, credential_id: str) -> Passkey | None:
        """The passkey with that credential id, or None."""
        await self._ready()
        async with self.db.connect() as conn:
            row = (await conn.execute(select(player_passkeys).where(
                player_passkeys.c.credential_id == credential_id))).first()
        return None if row is None else _passkey(row)

    async def of_player(self, player_id: str) -> list[Passkey]:
        """The player's passkeys, oldest first."""
        await self._ready()
        async with self.db.connect() as conn:
            rows = (await conn.execute(select(player_passkeys).where(
                player_passkeys.c.player_id == player_id).order_by(
                player_passkeys.c.created_at, player_passkeys.c.credential_id))).all()
        return [_passkey(r) for r in rows]

    async def count(self, player_id: str) -> int:
        """How many passkeys the player holds."""
        await self._ready()
        async with self.db.connect() as conn:
            return int((await conn.execute(select(func.count()).select_from(
                player_passkeys).where(player_passkeys.c.player_id == player_id))).scalar())

    async def used(self, passkey: Passkey, new_sign_count: int) -> bool:
        """Record a sign-in with ``passkey``: its new counter and the time. Compare-and-set
        on the counter it was verified against, so two sign-ins verified against the same
        counter cannot both count. Returns whether this one did."""
        await self._ready()
        async with self.db.begin() as conn:
            done = await conn.execute(update(player_passkeys).where(
                player_passkeys.c.credential_id == passkey.credential_id,
                player_passkeys.c.sign_count == passkey.sign_count,
            ).values(sign_count=new_sign_count, last_used_at=self.clock()))
        return done.rowcount == 1

    async def remove(self, player_id: str, credential_id: str) -> bool:
        """Delete the player's passkey; False when the player holds none of that id."""
        await self._ready()
        async with self.db.begin() as conn:
            done = await conn.execute(delete(player_passkeys).where(
                player_passkeys.c.credential_id == credential_id,
                player_passkeys.c.player_id == player_id))
        return done.rowcount == 1

    async def forget_player(self, player_id: str) -> int:
        """Delete every passkey and challenge of the player (when the player is deleted:
        a deleted player keeps its row, so the foreign keys do not cascade). Returns the
        passkeys deleted."""
        await self._ready()
        async with self.db.begin() as conn:
            await conn.execute(delete(passkey_challenges).where(
                passkey_challenges.c.player_id == player_id))
            done = await conn.execute(delete(player_passkeys).where(
                player_passkeys.c.player_id == player_id))
        return done.rowcount
