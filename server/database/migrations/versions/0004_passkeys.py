"""Passkeys (issue 18 point 2): a player's WebAuthn credentials, and the outstanding
challenges of passkey sign-ins and registrations (``server.passkeys``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "player_passkeys",
        sa.Column("credential_id", sa.String(1400), nullable=False,
                  comment="the WebAuthn credential id, base64url without padding"),
        sa.Column("player_id", sa.String(32), nullable=False),
        sa.Column("public_key", sa.LargeBinary(), nullable=False,
                  comment="the COSE public key"),
        sa.Column("sign_count", sa.BigInteger(), nullable=False,
                  comment="the authenticator's signature counter last seen (0: it keeps "
                  "none)"),
        sa.Column("transports", sa.JSON(), nullable=True,
                  comment="what the browser said, e.g. internal"),
        sa.Column("aaguid", sa.String(36), nullable=False,
                  comment="the authenticator's model"),
        sa.Column("backed_up", sa.Boolean(), nullable=False,
                  comment="a synced (multi-device) passkey"),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("last_used_at", TZ, nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_passkeys_player_id_players"),
        sa.PrimaryKeyConstraint("credential_id", name="pk_player_passkeys"),
        comment="a player's passkeys (issue 18 point 2; server.passkeys)",
    )
    op.create_index("ix_player_passkeys_player", "player_passkeys", ["player_id"])
    op.create_table(
        "passkey_challenges",
        sa.Column("id", sa.String(32), nullable=False, comment="the challenge's public id"),
        sa.Column("purpose", sa.String(16), nullable=False, comment="register | signin"),
        sa.Column("player_id", sa.String(32), nullable=True,
                  comment="the player registering (null for a sign-in)"),
        sa.Column("challenge", sa.String(128), nullable=False,
                  comment="base64url, 32 random bytes"),
        sa.Column("rp_id", sa.String(253), nullable=False,
                  comment="the relying party id it was for"),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_passkey_challenges_player_id_players"),
        sa.PrimaryKeyConstraint("id", name="pk_passkey_challenges"),
        comment="outstanding WebAuthn challenges: single use, short-lived, in SQL so that "
        "every server process sees them (server.passkeys)",
    )
    op.create_index("ix_passkey_challenges_expires_at", "passkey_challenges", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_passkey_challenges_expires_at", table_name="passkey_challenges")
    op.drop_table("passkey_challenges")
    op.drop_index("ix_player_passkeys_player", table_name="player_passkeys")
    op.drop_table("player_passkeys")
