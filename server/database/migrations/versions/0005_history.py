"""History and statistics (issue 18 point 4): double skunks given, a drawn seat, and the
index that serves a player's finished games in order for the profile's streaks.

``game_seats.double_skunks_given`` splits ``skunks_given`` (single or double) so that a
profile tells single and double skunks given apart (``server.archive.summary``); rows
archived before it count none (no such rows exist outside development: the archive came
in the same issue). ``game_seats.drawn``: the seat's side shared the fewest points of a drawn
Lowball game (docs/rules.md §7: nobody won, and it did not lose).

Revision ID: 0005
Revises: 0003 (the players'; rechained onto 0004 when the passkeys' migration lands)
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("game_seats") as batch:
        batch.add_column(sa.Column("double_skunks_given", sa.SmallInteger(), nullable=False,
                                   server_default="0",
                                   comment="of skunks_given, the double skunks"))
        batch.add_column(sa.Column("drawn", sa.Boolean(), nullable=False,
                                   server_default=sa.false(),
                                   comment="a drawn game this seat's side did not lose"))
    op.create_index("ix_game_seats_player_status", "game_seats",
                    ["player_id", "status", "ended_at", "won"])


def downgrade() -> None:
    op.drop_index("ix_game_seats_player_status", table_name="game_seats")
    with op.batch_alter_table("game_seats") as batch:
        batch.drop_column("drawn")
        batch.drop_column("double_skunks_given")
