"""Moderation (issue 21 point 4): ``chat_reports``, ``sanctions``, ``moderation_log``.

``chat_reports``: a reported message with the room's kept messages around it, until a
moderator resolves it (``server.moderation.store``); indexed by reporter (the reports limit
counts a player's recent reports) and by status (the moderators' list). ``sanctions``: a
silence or a ban, with its end (null: until lifted); every server process reads the active
ones every few seconds. ``moderation_log``: the audit log, one row per moderator action.

Revision ID: 0009
Revises: 0008 (chat)
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    when = sa.DateTime(timezone=True)
    op.create_table(
        "chat_reports",
        sa.Column("id", sa.String(16), nullable=False, comment="the report's id (random)"),
        sa.Column("created_at", when, nullable=False),
        sa.Column("reporter_id", sa.String(32), nullable=False,
                  comment="the player who reported"),
        sa.Column("room_id", sa.String(32), nullable=False),
        sa.Column("message_id", sa.Integer(), nullable=False,
                  comment="the message's id in its room"),
        sa.Column("author_id", sa.String(32), nullable=True,
                  comment="the reported message's author (a player id), null for a guest"),
        sa.Column("message", sa.Text(), nullable=False,
                  comment="JSON: the reported message as kept"),
        sa.Column("context", sa.Text(), nullable=False,
                  comment="JSON array: the room's kept messages around it, oldest first"),
        sa.Column("reason", sa.String(16), nullable=False,
                  comment="abuse, spam, cheating or other"),
        sa.Column("note", sa.Text(), nullable=True, comment="the reporter's words (at most 200)"),
        sa.Column("status", sa.String(16), nullable=False, comment="open or resolved"),
        sa.Column("resolved_at", when, nullable=True),
        sa.Column("resolved_by", sa.String(64), nullable=True, comment="the moderator"),
        sa.Column("resolution", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_chat_reports"),
        comment="reported chat messages for the moderators (issue 21 points 3-4; "
        "server.moderation.store); migration 0009",
    )
    op.create_index("ix_chat_reports_reporter", "chat_reports", ["reporter_id", "created_at"])
    op.create_index("ix_chat_reports_status", "chat_reports", ["status", "created_at"])
    op.create_table(
        "sanctions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False,
                  comment="silence (a player's chat), ban_player or ban_address"),
        sa.Column("target", sa.String(64), nullable=False,
                  comment="a player id, or an address or network (CIDR)"),
        sa.Column("created_at", when, nullable=False),
        sa.Column("until", when, nullable=True, comment="null: until lifted"),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("moderator", sa.String(64), nullable=False),
        sa.Column("lifted_at", when, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_sanctions"),
        comment="moderators' silences and bans (issue 21 point 4; server.moderation); "
        "migration 0009",
    )
    op.create_index("ix_sanctions_kind_target", "sanctions", ["kind", "target"])
    op.create_table(
        "moderation_log",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", when, nullable=False),
        sa.Column("moderator", sa.String(64), nullable=False, comment="X-Moderator, or admin"),
        sa.Column("action", sa.String(32), nullable=False,
                  comment="hide, silence, unsilence, close_room, ban, unban, resolve"),
        sa.Column("target", sa.String(128), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False, comment="JSON object"),
        sa.PrimaryKeyConstraint("id", name="pk_moderation_log"),
        comment="the audit log: every moderator action (issue 21 point 4); migration 0009",
    )
    op.create_index("ix_moderation_log_at", "moderation_log", ["at"])


def downgrade() -> None:
    op.drop_index("ix_moderation_log_at", table_name="moderation_log")
    op.drop_table("moderation_log")
    op.drop_index("ix_sanctions_kind_target", table_name="sanctions")
    op.drop_table("sanctions")
    op.drop_index("ix_chat_reports_status", table_name="chat_reports")
    op.drop_index("ix_chat_reports_reporter", table_name="chat_reports")
    op.drop_table("chat_reports")
