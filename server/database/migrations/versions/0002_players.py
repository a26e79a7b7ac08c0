"""Players: an identity without sign-up (issue 18 point 1): the secret's hash, display name,
language, a private profile, deletion.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("secret_hash", sa.String(64), nullable=True,
                                   comment="SHA-256 hex of the player's secret (null once "
                                   "deleted)"))
        batch.add_column(sa.Column("name", sa.String(64), nullable=True,
                                   comment="display name (the seat-name rules); null once "
                                   "deleted"))
        batch.add_column(sa.Column("language", sa.String(8), nullable=True,
                                   comment="en | da | sv"))
        batch.add_column(sa.Column("private", sa.Boolean(), nullable=False,
                                   server_default=sa.false(),
                                   comment="the profile and history are shown to the "
                                   "player only"))
        batch.add_column(sa.Column("updated_at", TZ, nullable=True))
        batch.add_column(sa.Column("deleted_at", TZ, nullable=True,
                                   comment="set when the player deleted themself: identity "
                                   "and names are gone, archived seats show 'a deleted "
                                   "player'"))
    if op.get_bind().dialect.supports_comments:  # PostgreSQL (SQLite keeps none)
        op.create_table_comment(
            "players",
            "a player: an identity without sign-up (issue 18 point 1); credentials of other "
            "devices and passkeys live in tables of their own",
            existing_comment="minimal: extended by the players' own migration (issue 18 "
            "point 1)",
        )


def downgrade() -> None:
    if op.get_bind().dialect.supports_comments:
        op.create_table_comment(
            "players", "minimal: extended by the players' own migration (issue 18 point 1)")
    with op.batch_alter_table("players") as batch:
        for column in ("deleted_at", "updated_at", "private", "language", "name",
                       "secret_hash"):
            batch.drop_column(column)
