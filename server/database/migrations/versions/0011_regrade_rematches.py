"""Grade rematches again (issue 22 point 4): no schema change, gradings removed.

Until this revision the grader replayed every archived game as the room's game 1, while a
rematch (and a match's later game) is game 2, 3, ...: the seats' own views named that
number, and the ``expert``'s search is seeded by it, so a rematch's grading sampled other
holdings than the hints and the computer had, and could count a choice that followed the
hint as a cost. The gradings (and seat summaries) of every archived game numbered past 1
are deleted here; the grader makes them again, rightly, on the game's next read or at a
start's sweep (``server.archive.grader``). Games numbered 1 were graded rightly and stay.

Revision ID: 0011
Revises: 0010 (grading)
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_games = sa.table("games", sa.column("id", sa.String(16)), sa.column("game_number", sa.Integer))
_gradings = sa.table("game_gradings", sa.column("game_id", sa.String(16)))
_seat_grades = sa.table("game_seat_grades", sa.column("game_id", sa.String(16)))


def upgrade() -> None:
    rematches = sa.select(_games.c.id).where(_games.c.game_number > 1)
    op.execute(sa.delete(_seat_grades).where(_seat_grades.c.game_id.in_(rematches)))
    op.execute(sa.delete(_gradings).where(_gradings.c.game_id.in_(rematches)))


def downgrade() -> None:
    """Nothing to restore: the gradings removed were wrong, and the grader remakes them."""
