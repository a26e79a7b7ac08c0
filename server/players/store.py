"""Players in the SQL database: made without sign-up, their device credentials, one-time
link codes, export and deletion (issue 18 points 1, 2 and 6).

Formats (docs/protocol.md, "Players"):

* A player's id: 16 characters of ``[a-z2-7]`` (80 random bits, base32), public: it is in
  URLs (``/p/<id>``) and in the archive's seats. :data:`PLAYER_ID_PATTERN`.
* A secret: 32 characters of ``[a-z2-7]`` (160 random bits). The server keeps only its
  SHA-256 (hex) in ``player_credentials`` — one row per device credential, ``how`` ``new``
  (the first), ``link`` (a one-time code) or ``passkey``. Secrets are never shown twice.
  A client presents ``<id>.<secret>`` (``Authorization: Player <id>.<secret>`` over HTTP,
  ``hello.player`` on the WebSocket).
* A link code: 8 characters of :data:`CODE_ALPHABET` (no 0/O, 1/I/L), shown as
  ``ABCD-EFGH``; the first 4 (the *handle*) find the code, the whole code (hashed) claims
  it. A wrong second half counts as a try of that code; after ``max_tries`` the code is
  dead (``too_many_tries``). Codes live ``ttl`` seconds and are used once.

The store reaches the database through :class:`server.database.Database` and migrates it
first if this process has not yet (``Database.migrate`` is safe to run concurrently). Every
method may raise what SQLAlchemy and the driver raise when the database cannot be reached
(``sqlalchemy.exc.SQLAlchemyError``, ``OSError``); the HTTP layer answers 503
``database_unavailable``.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from webauthn.helpers import bytes_to_base64url

from ..database import Database
from ..database.schema import (
    game_seats,
    games,
    passkey_challenges,
    player_blocks,
    player_credentials,
    player_link_codes,
    player_passkeys,
    players,
    rating_history,
    ratings,
)
from ..ratings import counts

PLAYER_ID_PATTERN = r"^[a-z2-7]{16}$"
"""A player's public id."""

SECRET_PATTERN = r"^[a-z2-7]{32}$"
"""A player's secret (160 bits)."""

CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
"""The letters of link codes: digits and capitals without 0, 1, I, L, O (31 letters)."""

CODE_LENGTH = 8
"""Letters in a link code (about 39.6 bits); the first half is its handle."""

HANDLE_LENGTH = 4

LANGUAGES = ("en", "da", "sv")
"""A player's language."""

HOWS = ("new", "link", "passkey")
"""How a credential was made."""

LAST_USED_RESOLUTION = timedelta(minutes=10)
"""``last_used_at`` is written at most this often per credential (not on every request)."""

_BASE32 = "abcdefghijklmnopqrstuvwxyz234567"


def _token(chars: int) -> str:
    return "".join(secrets.choice(_BASE32) for _ in range(chars))


def new_player_id() -> str:
    """A new player id (:data:`PLAYER_ID_PATTERN`, 80 random bits)."""
    return _token(16)


def new_secret() -> str:
    """A new secret (:data:`SECRET_PATTERN`, 160 random bits)."""
    return _token(32)


def secret_hash(secret: str) -> str:
    """SHA-256 hex of a secret (secrets are random, 160 bits: no salt or stretching
    needed)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def normalise_code(text: str) -> str | None:
    """A code as typed (any case, spaces and dashes anywhere; letters people confuse read
    as the alphabet's: ``O``→``0``… are not in it, so they are refused) -> the 8 letters, or
    None when it cannot be a code."""
    letters = re.sub(r"[\s-]", "", text).upper()
    if len(letters) != CODE_LENGTH or any(ch not in CODE_ALPHABET for ch in letters):
        return None
    return letters


def shown_code(code: str) -> str:
    """``ABCDEFGH`` -> ``ABCD-EFGH`` (how codes are shown)."""
    return f"{code[:HANDLE_LENGTH]}-{code[HANDLE_LENGTH:]}"


def _now() -> datetime:
    return datetime.now(UTC)


def _aware(value: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes (they were stored as UTC)."""
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


@dataclass(frozen=True)
class Player:
    """A player (a ``players`` row).

    Attributes:
        id: public id (:data:`PLAYER_ID_PATTERN`).
        created_at: when it was made (UTC).
        name: display name, or None (none chosen yet, or deleted).
        language: ``en`` | ``da`` | ``sv`` (None once deleted).
        private: whether the profile and history are shown to the player only.
        updated_at: the last change (UTC) or None.
        deleted_at: when the player deleted themself (UTC) or None.
    """

    id: str
    created_at: datetime
    name: str | None
    language: str | None
    private: bool
    updated_at: datetime | None = None
    deleted_at: datetime | None = None

    @property
    def deleted(self) -> bool:
        """Whether the player deleted themself."""
        return self.deleted_at is not None

    def public(self) -> dict[str, Any]:
        """The JSON the player is shown (``GET /api/players/me``)."""
        return {
            "id": self.id, "name": self.name, "language": self.language,
            "private": self.private, "created_at": self.created_at.isoformat(),
        }

    @classmethod
    def from_row(cls, row: Any) -> Player:
        """From a ``players`` row (a SQLAlchemy Row or mapping)."""
        m = row._mapping if hasattr(row, "_mapping") else row
        return cls(
            id=m["id"], created_at=_aware(m["created_at"]), name=m["name"],
            language=m["language"], private=bool(m["private"]),
            updated_at=_aware(m["updated_at"]), deleted_at=_aware(m["deleted_at"]),
        )


@dataclass(frozen=True)
class LinkCode:
    """A one-time code just made (:meth:`PlayerStore.create_link_code`).

    Attributes:
        code: the 8 letters (show with :func:`shown_code`).
        expires_at: when it stops working (UTC).
    """

    code: str
    expires_at: datetime


class LinkError(Exception):
    """A code that gives no player.

    Attributes:
        code: ``bad_code`` (no such code, expired, used, or wrong) or ``too_many_tries``
            (the code had ``max_tries`` wrong tries: it is dead).
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class PlayerStore:
    """The players of one database.

    Args:
        db: the database (migrated on first use when this process has not yet).
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    async def _ready(self) -> None:
        if not self.db.migrated:
            await self.db.migrate()

    async def create(self, name: str | None, language: str) -> tuple[Player, str]:
        """Make a player and its first secret (a credential ``how`` = ``new``).

        Args:
            name: its display name, already checked (``server.names``), or None.
            language: one of :data:`LANGUAGES`.

        Returns:
            ``(player, secret)``; the secret is not kept (only its hash).

        Raises:
            ValueError: a language not in :data:`LANGUAGES`.
        """
        if language not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
        await self._ready()
        now = _now()
        player_id, secret = new_player_id(), new_secret()
        digest = secret_hash(secret)
        async with self.db.begin() as conn:
            await conn.execute(insert(players).values(
                id=player_id, created_at=now, secret_hash=digest, name=name,
                language=language, private=False, updated_at=now,
            ))
            await conn.execute(insert(player_credentials).values(
                id=_token(16), player_id=player_id, secret_hash=digest, how="new",
                created_at=now, last_used_at=now,
            ))
        return Player(player_id, now, name, language, False, now, None), secret

    async def get(self, player_id: str) -> Player | None:
        """The player of that id (deleted ones too: :attr:`Player.deleted`), or None."""
        if not re.fullmatch(PLAYER_ID_PATTERN, player_id or ""):
            return None
        await self._ready()
        async with self.db.connect() as conn:
            row = (await conn.execute(
                select(players).where(players.c.id == player_id))).first()
        return Player.from_row(row) if row is not None else None

    async def authenticate(self, player_id: str, secret: str) -> Player | None:
        """The player whose credential ``secret`` is, or None (no such player, a deleted
        one, or a wrong secret). Hashes are compared in constant time
        (``hmac.compare_digest``) against each of the player's credentials; the matching
        credential's ``last_used_at`` is brought up to date (at most every
        :data:`LAST_USED_RESOLUTION`)."""
        if not re.fullmatch(PLAYER_ID_PATTERN, player_id or "") or not re.fullmatch(
                SECRET_PATTERN, secret or ""):
            return None
        await self._ready()
        digest = secret_hash(secret)
        async with self.db.connect() as conn:
            row = (await conn.execute(
                select(players).where(players.c.id == player_id))).first()
            if row is None or row._mapping["deleted_at"] is not None:
                return None
            creds = (await conn.execute(
                select(player_credentials.c.id, player_credentials.c.secret_hash,
                       player_credentials.c.last_used_at)
                .where(player_credentials.c.player_id == player_id))).all()
        match = None
        for cred in creds:  # every one compared: no early exit on the first match
            if hmac.compare_digest(cred.secret_hash, digest) and match is None:
                match = cred
        if match is None:
            return None
        now = _now()
        used = _aware(match.last_used_at)
        if used is None or now - used > LAST_USED_RESOLUTION:
            async with self.db.begin() as conn:
                await conn.execute(update(player_credentials)
                                   .where(player_credentials.c.id == match.id)
                                   .values(last_used_at=now))
        return Player.from_row(row)

    async def issue_secret(self, player_id: str, how: str) -> str:
        """A new device credential of the player (``how``: ``link`` or ``passkey``; ``new``
        is :meth:`create`'s).

        Returns:
            The new secret (present it as ``<player_id>.<secret>``).

        Raises:
            ValueError: ``how`` not in :data:`HOWS`, or no such (living) player.
        """
        if how not in HOWS:
            raise ValueError(f"how must be one of {', '.join(HOWS)}")
        await self._ready()
        async with self.db.begin() as conn:
            return await self._issue(conn, player_id, how)

    async def _issue(self, conn: Any, player_id: str, how: str) -> str:
        alive = (await conn.execute(select(players.c.id).where(
            players.c.id == player_id, players.c.deleted_at.is_(None)))).first()
        if alive is None:
            raise ValueError("no such player")
        secret = new_secret()
        now = _now()
        await conn.execute(insert(player_credentials).values(
            id=_token(16), player_id=player_id, secret_hash=secret_hash(secret), how=how,
            created_at=now, last_used_at=now,
        ))
        return secret

    async def update(self, player_id: str, **changes: Any) -> Player | None:
        """Change ``name`` (checked already; None clears it), ``language`` and/or
        ``private`` of a living player.

        Returns:
            The player afterwards, or None (no such living player).

        Raises:
            ValueError: an unknown field, or a language not in :data:`LANGUAGES`.
        """
        unknown = set(changes) - {"name", "language", "private"}
        if unknown:
            raise ValueError(f"cannot change {', '.join(sorted(unknown))}")
        if "language" in changes and changes["language"] not in LANGUAGES:
            raise ValueError(f"language must be one of {', '.join(LANGUAGES)}")
        await self._ready()
        async with self.db.begin() as conn:
            if changes:
                await conn.execute(update(players).where(
                    players.c.id == player_id, players.c.deleted_at.is_(None))
                    .values(**changes, updated_at=_now()))
            row = (await conn.execute(select(players).where(
                players.c.id == player_id, players.c.deleted_at.is_(None)))).first()
        return Player.from_row(row) if row is not None else None

    async def delete(self, player_id: str) -> bool:
        """Delete the player's identity (issue 18 point 6): the row is kept, emptied
        (``secret_hash``, ``name``, ``language`` null, ``private`` true, ``deleted_at``
        set), its credentials and link codes are deleted, its ratings and their history are
        deleted, and the names of its archived seats are set to null (``player_id`` kept,
        so pages show "a deleted player").

        Returns:
            Whether a living player was deleted (False: none, or already deleted).
        """
        await self._ready()
        now = _now()
        async with self.db.begin() as conn:
            done = await conn.execute(update(players).where(
                players.c.id == player_id, players.c.deleted_at.is_(None)).values(
                    secret_hash=None, name=None, language=None, private=True,
                    updated_at=now, deleted_at=now))
            if done.rowcount != 1:
                return False
            await conn.execute(delete(player_credentials).where(
                player_credentials.c.player_id == player_id))
            await conn.execute(delete(player_link_codes).where(
                player_link_codes.c.player_id == player_id))
            # its passkeys (server.passkeys) and their challenges go too: the row is kept,
            # so the foreign keys' cascade does not
            await conn.execute(delete(player_passkeys).where(
                player_passkeys.c.player_id == player_id))
            await conn.execute(delete(passkey_challenges).where(
                passkey_challenges.c.player_id == player_id))
            await conn.execute(update(game_seats).where(
                game_seats.c.player_id == player_id).values(name=None))
            # its blocks, made by it or of it (issue 20): the row is kept, so no cascade
            await conn.execute(delete(player_blocks).where(
                (player_blocks.c.blocker_id == player_id)
                | (player_blocks.c.blocked_id == player_id)))
            # its ratings and their history (issue 19): off the leaderboards with the name,
            # and out of the boards' counts (server.ratings.counts: the rating rows are
            # locked first, in table kind order, then the count rows)
            await conn.execute(delete(rating_history).where(
                rating_history.c.player_id == player_id))
            gone = (await conn.execute(delete(ratings).where(
                ratings.c.player_id == player_id).returning(
                ratings.c.table_kind, ratings.c.display, ratings.c.games))).mappings().all()
            await counts.shift(conn, self.db.dialect, counts.moves(gone, []))
        return True

    async def export(self, player_id: str) -> dict[str, Any] | None:
        """Everything the database holds about the player (issue 18 point 6): its row
        (without the secret's hash), its credentials (without hashes), its live link
        codes (handles only), and each archived game it sat in with that seat's row and
        the game's row.

        Returns:
            ``{"player", "credentials", "link_codes", "passkeys", "games", "blocks"}``
            (a passkey's
            public key in base64url) (datetimes as ISO 8601
            text), or None (no such player).
        """
        await self._ready()
        async with self.db.connect() as conn:
            row = (await conn.execute(
                select(players).where(players.c.id == player_id))).first()
            if row is None:
                return None
            creds = (await conn.execute(
                select(player_credentials.c.id, player_credentials.c.how,
                       player_credentials.c.created_at, player_credentials.c.last_used_at)
                .where(player_credentials.c.player_id == player_id)
                .order_by(player_credentials.c.created_at))).all()
            codes = (await conn.execute(
                select(player_link_codes.c.handle, player_link_codes.c.created_at,
                       player_link_codes.c.expires_at, player_link_codes.c.tries)
                .where(player_link_codes.c.player_id == player_id))).all()
            passkeys = (await conn.execute(
                select(player_passkeys).where(player_passkeys.c.player_id == player_id)
                .order_by(player_passkeys.c.created_at))).all()
            blocks = (await conn.execute(
                select(player_blocks.c.blocked_id, player_blocks.c.created_at)
                .where(player_blocks.c.blocker_id == player_id)
                .order_by(player_blocks.c.created_at))).all()
            seats = (await conn.execute(
                select(game_seats).where(game_seats.c.player_id == player_id)
                .order_by(game_seats.c.ended_at, game_seats.c.game_id))).all()
            ids = sorted({s._mapping["game_id"] for s in seats})
            game_rows = {}
            if ids:
                game_rows = {g._mapping["id"]: g for g in (await conn.execute(
                    select(games).where(games.c.id.in_(ids)))).all()}
        player = {k: v for k, v in row._mapping.items() if k != "secret_hash"}
        return {
            "player": _jsonable(player),
            "credentials": [_jsonable(dict(c._mapping)) for c in creds],
            "link_codes": [_jsonable(dict(c._mapping)) for c in codes],
            "passkeys": [_jsonable({**p._mapping, "public_key": bytes_to_base64url(
                bytes(p._mapping["public_key"]))}) for p in passkeys],
            "games": [
                {"game": _jsonable(dict(game_rows[s._mapping["game_id"]]._mapping)),
                 "seat": _jsonable(dict(s._mapping))}
                for s in seats if s._mapping["game_id"] in game_rows
            ],
            "blocks": [_jsonable(dict(b._mapping)) for b in blocks],
        }

    # -- one-time link codes -----------------------------------------------------------
    async def create_link_code(self, player_id: str, ttl: float) -> LinkCode:
        """A new one-time code of a living player, good for ``ttl`` seconds (expired codes
        of every player are removed on the way).

        Raises:
            ValueError: no such living player.
        """
        await self._ready()
        now = _now()
        expires = now + timedelta(seconds=ttl)
        async with self.db.begin() as conn:
            alive = (await conn.execute(select(players.c.id).where(
                players.c.id == player_id, players.c.deleted_at.is_(None)))).first()
            if alive is None:
                raise ValueError("no such player")
            await conn.execute(delete(player_link_codes).where(
                player_link_codes.c.expires_at <= now))
        for _ in range(8):  # a handle in use by a live code: another one
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            try:
                async with self.db.begin() as conn:
                    await conn.execute(insert(player_link_codes).values(
                        handle=code[:HANDLE_LENGTH], code_hash=secret_hash(code),
                        player_id=player_id, created_at=now, expires_at=expires, tries=0))
                return LinkCode(code, expires)
            except IntegrityError:
                continue
        raise RuntimeError("no free link-code handle (too many live codes)")

    async def claim_link_code(self, text: str, max_tries: int) -> tuple[Player, str]:
        """Use a one-time code: a new device credential (``how`` = ``link``) of its
        player, and the code is gone.

        Args:
            text: the code as typed (:func:`normalise_code`).
            max_tries: wrong tries a code survives (its ``max_tries``-th kills it).

        Returns:
            ``(player, secret)``.

        Raises:
            LinkError: ``bad_code`` (not a code, none such, expired, used, or wrong) or
                ``too_many_tries`` (this code has had ``max_tries`` wrong tries).
        """
        code = normalise_code(text)
        if code is None:
            raise LinkError("bad_code", "that is not a code")
        await self._ready()
        now = _now()
        handle, digest = code[:HANDLE_LENGTH], secret_hash(code)
        async with self.db.begin() as conn:
            row = (await conn.execute(select(player_link_codes).where(
                player_link_codes.c.handle == handle,
                player_link_codes.c.expires_at > now))).first()
            if row is None:
                raise LinkError("bad_code", "no such code, or it expired or was used")
            if row.tries >= max_tries:
                raise LinkError("too_many_tries", "this code was tried too often; make a "
                                "new one")
            if not hmac.compare_digest(row.code_hash, digest):
                await conn.execute(update(player_link_codes).where(
                    player_link_codes.c.handle == handle)
                    .values(tries=player_link_codes.c.tries + 1))
                wrong = LinkError("bad_code", "no such code, or it expired or was used")
                if row.tries + 1 >= max_tries:
                    wrong = LinkError("too_many_tries", "this code was tried too often; "
                                      "make a new one")
                # committed: the try counts (the transaction ends normally below)
                failure: LinkError | None = wrong
            else:
                used = await conn.execute(delete(player_link_codes).where(and_(
                    player_link_codes.c.handle == handle,
                    player_link_codes.c.code_hash == digest)))
                if used.rowcount != 1:  # another request used it first
                    failure = LinkError("bad_code", "no such code, or it expired or was "
                                        "used")
                else:
                    failure = None
                    player_id = row.player_id
                    secret = await self._issue(conn, player_id, "link")
                    player_row = (await conn.execute(
                        select(players).where(players.c.id == player_id))).first()
        if failure is not None:
            raise failure
        return Player.from_row(player_row), secret


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for key, value in row.items():
        if isinstance(value, datetime):
            value = _aware(value).isoformat()
        out[key] = value
    return out
