"""Blocks (issue 20 point 3): ``player_blocks``, who blocked whom (``server.social.blocks``).

The primary key (blocker, blocked) serves "whom did I block" and makes a block idempotent;
``ix_player_blocks_blocked`` serves "who blocked me" (a pair is blocked when either blocked
the other).

Revision ID: 0007
Revises: 0006 (matches and ratings)
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "player_blocks",
        sa.Column("blocker_id", sa.String(32), nullable=False, comment="the player who blocked"),
        sa.Column("blocked_id", sa.String(32), nullable=False, comment="the player blocked"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["blocker_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_blocks_blocker_id_players"),
        sa.ForeignKeyConstraint(["blocked_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_blocks_blocked_id_players"),
        sa.PrimaryKeyConstraint("blocker_id", "blocked_id", name="pk_player_blocks"),
        comment="who blocked whom (issue 20 point 3; server.social.blocks); migration 0007",
    )
    op.create_index("ix_player_blocks_blocked", "player_blocks", ["blocked_id", "blocker_id"])


def downgrade() -> None:
    op.drop_index("ix_player_blocks_blocked", table_name="player_blocks")
    op.drop_table("player_blocks")
