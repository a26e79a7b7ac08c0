"""The archive of finished games, and the minimal players table (issue 18).

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(32), nullable=False, comment="the player's public id"),
        sa.Column("created_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_players"),
        comment="minimal: extended by the players' own migration (issue 18 point 1)",
    )
    op.create_table(
        "games",
        sa.Column("id", sa.String(16), nullable=False,
                  comment="public game id, derived from the unique key "
                  "(server.archive.game_id)"),
        sa.Column("room_id", sa.String(16), nullable=False),
        sa.Column("room_created", sa.Float(), nullable=False,
                  comment="the room's creation, Unix seconds"),
        sa.Column("game_number", sa.Integer(), nullable=False, comment="1, then +1 per rematch"),
        sa.Column("status", sa.String(16), nullable=False, comment="finished | abandoned"),
        sa.Column("players", sa.SmallInteger(), nullable=False),
        sa.Column("table_kind", sa.String(8), nullable=False,
                  comment="2 | 3 | 4 | 2x2 (partnerships)"),
        sa.Column("target", sa.SmallInteger(), nullable=False),
        sa.Column("muggins", sa.Boolean(), nullable=False),
        sa.Column("lowball", sa.Boolean(), nullable=False),
        sa.Column("backup10", sa.Boolean(), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False, comment="the effective engine options"),
        sa.Column("room_settings", sa.JSON(), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("ended_at", TZ, nullable=False),
        sa.Column("archived_at", TZ, nullable=False),
        sa.Column("first_version", sa.Integer(), nullable=False),
        sa.Column("last_version", sa.Integer(), nullable=False),
        sa.Column("deals", sa.SmallInteger(), nullable=False),
        sa.Column("winner_side", sa.SmallInteger(), nullable=True,
                  comment="null: a draw or abandoned"),
        sa.Column("draw", sa.Boolean(), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False, comment="final score per side, holes"),
        sa.Column("result", sa.JSON(), nullable=True,
                  comment="the game_over event; null when abandoned"),
        sa.Column("shuffle", sa.String(16), nullable=False,
                  comment="derivation and shuffle, cribbage/v2"),
        sa.Column("game_seed", sa.String(64), nullable=False),
        sa.Column("game_commitment", sa.String(64), nullable=False),
        sa.Column("cut_seeds", sa.JSON(), nullable=False,
                  comment="hex seed of each round of the cut"),
        sa.PrimaryKeyConstraint("id", name="pk_games"),
        sa.UniqueConstraint("room_id", "room_created", "game_number",
                            name="uq_games_room_game"),
    )
    op.create_index("ix_games_ended_at", "games", ["ended_at"])
    summary = [
        "deals_dealt", "deals_pone", "dealer_pegging", "dealer_hand", "dealer_crib",
        "dealer_heels", "pone_pegging", "pone_hand", "hands_counted", "hand_total",
        "cribs_counted", "crib_total", "backup_moves", "backup_holes", "muggins_taken",
        "muggins_lost", "penalty_points",
    ]
    comments = {
        "hand_total": "true counts of its hands",
        "crib_total": "true counts of its cribs",
        "penalty_points": "pegged to it for opponents' wrong calls",
    }
    op.create_table(
        "game_seats",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("seat", sa.SmallInteger(), nullable=False),
        sa.Column("side", sa.SmallInteger(), nullable=False),
        sa.Column("player_id", sa.String(32), nullable=True,
                  comment="null: a computer, no player, or a deleted player"),
        sa.Column("kind", sa.String(16), nullable=False, comment="human | computer | open"),
        sa.Column("level", sa.String(16), nullable=True, comment="a computer seat's level"),
        sa.Column("name", sa.Text(), nullable=True, comment="the name shown at the table"),
        sa.Column("standin", sa.Boolean(), nullable=False,
                  comment="a computer stood in at the end"),
        sa.Column("final_score", sa.SmallInteger(), nullable=False,
                  comment="its side's, holes"),
        sa.Column("won", sa.Boolean(), nullable=False),
        sa.Column("skunk", sa.String(8), nullable=False,
                  comment="none | skunk | double (taken)"),
        sa.Column("skunks_given", sa.SmallInteger(), nullable=False,
                  comment="losing sides skunked (single or double) when this seat's side won"),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("table_kind", sa.String(8), nullable=False),
        sa.Column("target", sa.SmallInteger(), nullable=False),
        sa.Column("muggins", sa.Boolean(), nullable=False),
        sa.Column("lowball", sa.Boolean(), nullable=False),
        sa.Column("backup10", sa.Boolean(), nullable=False),
        sa.Column("ended_at", TZ, nullable=False),
        *(sa.Column(name, sa.SmallInteger(), nullable=False, comment=comments.get(name))
          for name in summary),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                name="fk_game_seats_game_id_games"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="SET NULL",
                                name="fk_game_seats_player_id_players"),
        sa.PrimaryKeyConstraint("game_id", "seat", name="pk_game_seats"),
    )
    op.create_index("ix_game_seats_player", "game_seats", ["player_id", "ended_at", "game_id"])
    op.create_table(
        "game_deals",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("deal_number", sa.SmallInteger(), nullable=False),
        sa.Column("dealer", sa.SmallInteger(), nullable=False),
        sa.Column("seed", sa.String(64), nullable=True,
                  comment="null for a stacked pack (tests)"),
        sa.Column("commitment", sa.String(64), nullable=True),
        sa.Column("scores_after", sa.JSON(), nullable=False,
                  comment="score per side after the deal"),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                name="fk_game_deals_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", "deal_number", name="pk_game_deals"),
    )
    op.create_table(
        "game_logs",
        sa.Column("game_id", sa.String(16), nullable=False),
        sa.Column("entries", sa.Text(), nullable=False,
                  comment='JSON array of the room log entries [{"v", ...cause, "events"}]'),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"], ondelete="CASCADE",
                                name="fk_game_logs_game_id_games"),
        sa.PrimaryKeyConstraint("game_id", name="pk_game_logs"),
    )


def downgrade() -> None:
    op.drop_table("game_logs")
    op.drop_table("game_deals")
    op.drop_index("ix_game_seats_player", table_name="game_seats")
    op.drop_table("game_seats")
    op.drop_index("ix_games_ended_at", table_name="games")
    op.drop_table("games")
    op.drop_table("players")
