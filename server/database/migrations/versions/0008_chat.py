"""Chat (issue 21): ``player_mutes`` (who muted whom) and ``game_chat`` (a game's messages).

``player_mutes``: the primary key (muter, muted) serves "whom did I mute" and makes a mute
idempotent (``server.chat.mutes``). ``game_chat``: the table talk of an archived game, one
JSON array per game, written in the archive's transaction (``server.archive.writer``); a
moderator's hide rewrites it.

Revision ID: 0008
Revises: 0007 (blocks)
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "player_mutes",
        sa.Column("muter_id", sa.String(32), nullable=False, comment="the player who muted"),
        sa.Column("muted_id", sa.String(32), nullable=False, comment="the player muted"),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["muter_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_mutes_muter_id_players"),
        sa.ForeignKeyConstraint(["muted_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_player_mutes_muted_id_players"),
        sa.PrimaryKeyConstraint("muter_id", "muted_id", name="pk_player_mutes"),
        comment="who muted whom at the table (issue 21 point 3; server.chat.mutes); "
        "migration 0008",
    )
    op.create_table(
        "game_chat",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("messages", sa.Text(), nullable=False,
                  comment="JSON array of the game's chat messages, oldest first"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                name="fk_game_chat_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", name="pk_game_chat"),
        comment="the table talk of an archived game (issue 21 point 1); migration 0008",
    )


def downgrade() -> None:
    op.drop_table("game_chat")
    op.drop_table("player_mutes")
