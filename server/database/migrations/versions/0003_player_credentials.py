"""Players' device credentials and one-time link codes (issue 18 points 1-2).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "player_credentials",
        sa.Column("id", sa.String(32), nullable=False, comment="the credential's id (not secret)"),
        sa.Column("player_id", sa.String(32), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False,
                  comment="SHA-256 hex of the secret"),
        sa.Column("how", sa.String(16), nullable=False, comment="new | link | passkey"),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("last_used_at", TZ, nullable=True),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_credentials_player_id_players"),
        sa.PrimaryKeyConstraint("id", name="pk_player_credentials"),
        comment="a player's device credentials: one secret per device (issue 18 points 1-2)",
    )
    op.create_index("ix_player_credentials_player", "player_credentials", ["player_id"])
    op.create_table(
        "player_link_codes",
        sa.Column("handle", sa.String(8), nullable=False,
                  comment="the code's first half: finds the code, is not enough to claim it"),
        sa.Column("code_hash", sa.String(64), nullable=False,
                  comment="SHA-256 hex of the whole code"),
        sa.Column("player_id", sa.String(32), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("expires_at", TZ, nullable=False),
        sa.Column("tries", sa.SmallInteger(), nullable=False, server_default="0",
                  comment="wrong tries of this code so far"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_link_codes_player_id_players"),
        sa.PrimaryKeyConstraint("handle", name="pk_player_link_codes"),
        comment="one-time codes that give a player to another device (issue 18 point 2)",
    )
    op.create_index("ix_player_link_codes_expires_at", "player_link_codes", ["expires_at"])
    op.create_index("ix_player_link_codes_player", "player_link_codes", ["player_id"])


def downgrade() -> None:
    op.drop_index("ix_player_link_codes_player", "player_link_codes")
    op.drop_index("ix_player_link_codes_expires_at", "player_link_codes")
    op.drop_table("player_link_codes")
    op.drop_index("ix_player_credentials_player", "player_credentials")
    op.drop_table("player_credentials")
