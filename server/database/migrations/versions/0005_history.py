"""History and statistics (issue 18 point 4): double skunks given, a drawn seat, and the
indexes a player's profile and pages are read from, carrying what they read.

``game_seats.double_skunks_given`` splits ``skunks_given`` (single or double) so that a
profile tells single and double skunks given apart (``server.archive.summary``); rows
archived before it count none (no such rows exist outside development: the archive came
in the same issue). ``game_seats.drawn``: the seat's side shared the fewest points of a drawn
Lowball game (docs/rules.md §7: nobody won, and it did not lose).

Revision ID: 0005
Revises: 0004 (the passkeys')
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

STATS_INCLUDE = (
    "won", "drawn", "skunk", "table_kind", "target", "muggins", "lowball", "backup10",
    "deals_dealt", "deals_pone", "dealer_pegging", "dealer_hand", "dealer_crib",
    "dealer_heels", "pone_pegging", "pone_hand", "hands_counted", "hand_total",
    "cribs_counted", "crib_total", "backup_moves", "backup_holes", "muggins_taken",
    "muggins_lost", "skunks_given", "double_skunks_given",
)
"""What the profile reads, carried in the index (PostgreSQL's ``INCLUDE``) so that a
profile is an index-only scan of the player's rows, which lie together in the index (in the
table they are scattered over the years the games ended). SQLite has no ``INCLUDE``: there
the index is the four keys."""

PAGE_INCLUDE = (
    "seat", "side", "won", "drawn", "final_score", "skunk", "status", "table_kind",
    "target", "muggins", "lowball", "backup10",
)
"""What a page of the player's games reads of their own seats, carried in
``ix_game_seats_player`` (made again here with them) for the same reason."""

revision = "0005"
down_revision = "0004"
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
    op.drop_index("ix_game_seats_player", table_name="game_seats")
    op.create_index("ix_game_seats_player", "game_seats", ["player_id", "ended_at", "game_id"],
                    postgresql_include=list(PAGE_INCLUDE))
    op.create_index("ix_game_seats_player_stats", "game_seats",
                    ["player_id", "status", "ended_at", "game_id"],
                    postgresql_include=list(STATS_INCLUDE))


def downgrade() -> None:
    op.drop_index("ix_game_seats_player_stats", table_name="game_seats")
    op.drop_index("ix_game_seats_player", table_name="game_seats")
    op.create_index("ix_game_seats_player", "game_seats", ["player_id", "ended_at", "game_id"])
    with op.batch_alter_table("game_seats") as batch:
        batch.drop_column("drawn")
        batch.drop_column("double_skunks_given")
