"""Grading (issue 22 point 4): ``game_gradings``, ``game_seat_grades``.

``game_gradings``: an archived game graded once against a computer level
(``server.archive.grader``): the graded moves as one JSON array, or why the game could not
be graded. ``game_seat_grades``: each seat's summary (decisions with a choice, exact, total
cost, accuracy); the profile's average joins it with ``game_seats`` by (game, seat).

Revision ID: 0010
Revises: 0009 (moderation)
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_gradings",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("grader", sa.String(16), nullable=False,
                  comment="the computer level graded against"),
        sa.Column("graded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("moves", sa.Text(), nullable=False,
                  comment="JSON array of the graded moves (server.archive.grading), "
                  "in play order"),
        sa.Column("error", sa.Text(), nullable=True,
                  comment="why the game could not be graded (no seats rows then); "
                  "null: graded"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                name="fk_game_gradings_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", name="pk_game_gradings"),
        comment="an archived game graded once (issue 22 point 4; server.archive.grader); "
        "migration 0010",
    )
    op.create_table(
        "game_seat_grades",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("seat", sa.SmallInteger(), nullable=False),
        sa.Column("decisions", sa.SmallInteger(), nullable=False,
                  comment="decisions with a choice the seat's occupant made"),
        sa.Column("exact", sa.SmallInteger(), nullable=False,
                  comment="of those, as good as the best"),
        sa.Column("cost", sa.Float(), nullable=False, comment="their total cost, points"),
        sa.Column("accuracy", sa.Float(), nullable=True, comment="0..100; null: no decision"),
        sa.Column("computer_moves", sa.SmallInteger(), nullable=False,
                  comment="graded moves a computer made for a human seat (not counted)"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                name="fk_game_seat_grades_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", "seat", name="pk_game_seat_grades"),
        comment="each seat's grading summary (issue 22 point 4); migration 0010",
    )


def downgrade() -> None:
    op.drop_table("game_seat_grades")
    op.drop_table("game_gradings")
