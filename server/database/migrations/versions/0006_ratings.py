"""Matches and ratings (issue 19): the ``matches`` table, a game's match
(``games.match_id``, ``games.match_number``), an abandoned seat (``game_seats.abandoned``),
a player's rating per table kind (``ratings``) and one row per player per rated game or
match (``rating_history``, keyed by player, table kind and the game's or match's id, so a
rating changes exactly once).

``games.match_id`` is not a foreign key: the match row is written in the same transaction
as the game (``server.archive.writer``), and adding a foreign key to an existing table would
make SQLite copy ``games`` whole. ``ix_ratings_board`` serves the leaderboard and "around
me": the board of a table kind in order, the games (for the minimum to appear) carried in the
index on PostgreSQL (``INCLUDE``). ``rating_board_counts`` counts the board's players per
(table kind, shown number) (``server.ratings.counts``), so a rank is a sum over its rows plus
the ties ahead; it starts empty, as ``ratings`` does.

Revision ID: 0006
Revises: 0005 (history and statistics)
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "matches",
        sa.Column("id", sa.String(16), nullable=False,
                  comment="public match id, derived from room, room creation and match "
                  "number (server.ratings.match_id)"),
        sa.Column("room_id", sa.String(16), nullable=False),
        sa.Column("room_created", sa.Float(), nullable=False,
                  comment="the room's creation, Unix seconds"),
        sa.Column("match_number", sa.Integer(), nullable=False,
                  comment="1, then +1 per new match"),
        sa.Column("best_of", sa.SmallInteger(), nullable=False, comment="3 | 5 | 7"),
        sa.Column("table_kind", sa.String(8), nullable=False, comment="2 | 3 | 4 | 2x2"),
        sa.Column("status", sa.String(16), nullable=False, comment="playing | over"),
        sa.Column("reason", sa.String(16), nullable=True, comment="won | forfeit, once over"),
        sa.Column("winner_side", sa.SmallInteger(), nullable=True),
        sa.Column("wins", sa.JSON(), nullable=False, comment="games won per side"),
        sa.Column("points", sa.JSON(), nullable=False,
                  comment="game points per side (ACC rule 12.1)"),
        sa.Column("spread", sa.JSON(), nullable=False, comment="spread per side, holes"),
        sa.Column("forfeited", sa.JSON(), nullable=False,
                  comment="sides that forfeited the match"),
        sa.Column("games_played", sa.SmallInteger(), nullable=False,
                  comment="games of the match archived as of this row (a later one wins)"),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("ended_at", TZ, nullable=True, comment="null until over"),
        sa.Column("updated_at", TZ, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_matches"),
        sa.UniqueConstraint("room_id", "room_created", "match_number",
                            name="uq_matches_room_match"),
        comment="a match of best of 3, 5 or 7 games (issue 19 point 1), as of its latest "
        "archived game",
    )
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column(
            "match_id", sa.String(16), nullable=True,
            comment="the game's match (matches.id; null for best of 1); migration 0006"))
        batch.add_column(sa.Column("match_number", sa.SmallInteger(), nullable=True,
                                   comment="the game's place in its match, 1..best_of"))
    op.create_index("ix_games_match", "games", ["match_id"])
    with op.batch_alter_table("game_seats") as batch:
        batch.add_column(sa.Column(
            "abandoned", sa.Boolean(), nullable=False, server_default=sa.false(),
            comment="a rated game's seat its player left past the takeover grace (a loss); "
            "migration 0006"))
    op.create_table(
        "ratings",
        sa.Column("player_id", sa.String(32), nullable=False),
        sa.Column("table_kind", sa.String(8), nullable=False, comment="2 | 3 | 4 | 2x2"),
        sa.Column("mu", sa.Float(), nullable=False, comment="openskill's mean"),
        sa.Column("sigma", sa.Float(), nullable=False, comment="openskill's deviation"),
        sa.Column("display", sa.Integer(), nullable=False,
                  comment="the number shown (server.ratings.model.display)"),
        sa.Column("games", sa.Integer(), nullable=False,
                  comment="rated games and matches counted"),
        sa.Column("wins", sa.Integer(), nullable=False, comment="of them, ranked first"),
        sa.Column("updated_at", TZ, nullable=False),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_ratings_player_id_players"),
        sa.PrimaryKeyConstraint("player_id", "table_kind", name="pk_ratings"),
        comment="a player's rating per table kind (issue 19 point 2; server.ratings)",
    )
    op.create_index("ix_ratings_board", "ratings",
                    ["table_kind", sa.text("display DESC"), "player_id"],
                    postgresql_include=["games"])
    op.create_table(
        "rating_history",
        sa.Column("player_id", sa.String(32), nullable=False),
        sa.Column("table_kind", sa.String(8), nullable=False),
        sa.Column("source_id", sa.String(16), nullable=False,
                  comment="the rated game's id (best of 1) or match's id (best of N): the "
                  "key makes a rating change exactly once per game or match"),
        sa.Column("source", sa.String(8), nullable=False, comment="game | match"),
        sa.Column("game_id", sa.String(16), nullable=False,
                  comment="the game that decided it"),
        sa.Column("rank", sa.SmallInteger(), nullable=False, comment="1 = first"),
        sa.Column("teams", sa.SmallInteger(), nullable=False, comment="sides in the result"),
        sa.Column("abandoned", sa.Boolean(), nullable=False,
                  comment="ranked last for leaving"),
        sa.Column("mu_before", sa.Float(), nullable=False),
        sa.Column("sigma_before", sa.Float(), nullable=False),
        sa.Column("display_before", sa.Integer(), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("display", sa.Integer(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False,
                  comment="the rating's games after this one"),
        sa.Column("at", TZ, nullable=False, comment="when the game ended"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], ondelete="CASCADE",
                                name="fk_rating_history_player_id_players"),
        sa.PrimaryKeyConstraint("player_id", "table_kind", "source_id",
                                name="pk_rating_history"),
        comment="one row per player per rated game or match: a rating changes exactly once",
    )
    op.create_index("ix_rating_history_player", "rating_history",
                    ["player_id", "at", "source_id"])
    op.create_table(
        "rating_board_counts",
        sa.Column("table_kind", sa.String(8), nullable=False, comment="2 | 3 | 4 | 2x2"),
        sa.Column("display", sa.Integer(), nullable=False,
                  comment="a shown number (ratings.display)"),
        sa.Column("players", sa.Integer(), nullable=False,
                  comment="players of the kind's board (games >= "
                  "server.ratings.counts.MIN_GAMES) showing it; a row at 0 is deleted"),
        sa.PrimaryKeyConstraint("table_kind", "display", name="pk_rating_board_counts"),
        comment="the leaderboards' players per shown number, kept in step with ratings in "
        "the same transaction, so a rank is a sum over these rows (server.ratings.counts)",
    )


def downgrade() -> None:
    op.drop_table("rating_board_counts")
    op.drop_index("ix_rating_history_player", table_name="rating_history")
    op.drop_table("rating_history")
    op.drop_index("ix_ratings_board", table_name="ratings")
    op.drop_table("ratings")
    with op.batch_alter_table("game_seats") as batch:
        batch.drop_column("abandoned")
    op.drop_index("ix_games_match", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("match_number")
        batch.drop_column("match_id")
    op.drop_table("matches")
