"""The ratings' HTTP models (issue 19; ``server.ratings.http``; docs/protocol.md
"Ratings and leaderboards") and their part of the OpenAPI document (:func:`paths`).

* ``GET /api/leaderboards/{kind}?around=<player>`` answers :class:`Leaderboard`;
* ``GET /api/players/{player}/ratings`` answers :class:`PlayerRatings`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .http import PLAYER_ID_PATTERN

TableKind = Literal["2", "3", "4", "2x2"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class LeaderboardEntry(_Model):
    """A player's place on a leaderboard."""

    rank: int | None = Field(ge=1, description="1 = the highest rating (ties by player id); "
                             "null only in `me` for a player not on the board yet")
    player: str = Field(description="the player's id (null name: a private profile)")
    name: str | None = Field(description="display name; null for a private profile or none")
    private: bool = Field(description="the profile is private (no link to it)")
    rating: int = Field(ge=0, description="the number shown: 1000 + 50 x (mu - 3 sigma)")
    games: int = Field(ge=0, description="rated games and matches at this table kind")
    wins: int = Field(ge=0, description="of them, ranked first")


class Leaderboard(_Model):
    """``GET /api/leaderboards/{kind}``: the top and, with ``around``, a player's place."""

    table_kind: TableKind
    min_games: int = Field(ge=1, description="rated games or matches a player needs at "
                           "the table kind to appear (10, fixed: not a setting)")
    top: list[LeaderboardEntry] = Field(description="the top 100, best first")
    around: list[LeaderboardEntry] | None = Field(
        description="with `around`: the player and up to 5 above and 5 below; null without "
        "it, or when the player is not on this board (too few games, or none)")
    me: LeaderboardEntry | None = Field(
        description="with `around`: the player's own entry — with rank null when they have "
        "a rating at this table kind but fewer than `min_games` games (not ranked yet); "
        "null when they have no rating here")


class Rating(_Model):
    """A player's rating at one table kind."""

    table_kind: TableKind
    rating: int = Field(ge=0, description="the number shown: 1000 + 50 x (mu - 3 sigma)")
    mu: float = Field(description="openskill's mean")
    sigma: float = Field(description="openskill's deviation")
    games: int = Field(ge=0)
    wins: int = Field(ge=0)
    provisional: bool = Field(description="fewer than `rating_provisional_games` games")
    rank: int | None = Field(description="place on the leaderboard; null when not on it")


class RatingChange(_Model):
    """One rated game or match of a player."""

    table_kind: TableKind
    source: Literal["game", "match"]
    source_id: str = Field(description="the game's id (best of 1) or the match's id")
    game: str = Field(description="the game that decided it (GET /api/games/{id})")
    at: str = Field(description="when the game ended, ISO 8601, UTC")
    rank: int = Field(ge=1, description="the player's side's place, 1 = first")
    teams: int = Field(ge=2, le=4, description="sides in the result")
    abandoned: bool = Field(description="ranked last for leaving the game")
    before: int = Field(ge=0, description="the rating shown before")
    after: int = Field(ge=0, description="the rating shown after")


class PlayerRatings(_Model):
    """``GET /api/players/{id}/ratings``: ratings per table kind, newest changes first,
    abandonments."""

    player: str
    ratings: list[Rating]
    history: list[RatingChange] = Field(description="newest first, at most "
                                        "`rating_history_size`")
    abandoned: int = Field(ge=0, description="rated games the player left past the "
                           "takeover grace (each a loss)")


NAMED: dict[str, Any] = {
    "Leaderboard": Leaderboard, "LeaderboardEntry": LeaderboardEntry, "Rating": Rating,
    "RatingChange": RatingChange, "PlayerRatings": PlayerRatings,
}

ERRORS: dict[str, tuple[str, str, list[str]]] = {
    "BadAroundPlayer": ("400", "`around` is not a player id (1 to 32 of `A-Z`, `a-z`, "
                        "`0-9`, `_` and `-`): nothing was read.", ["bad_around_player"]),
    "BadTableKind": ("404", "The table kind is not one of `2`, `3`, `4`, `2x2`.",
                     ["bad_table_kind"]),
    "TooManyLeaderboardReads": (
        "429",
        "This client address read more leaderboards in the last minute than the server "
        "allows (`leaderboard_reads_per_minute`, 60 by default): nothing was read. Retry "
        "after the seconds in the `Retry-After` header (`error.retry_after` has them "
        "unrounded).",
        ["too_many_leaderboard_reads"],
    ),
}


def paths(json: Any, errors: Any, player: dict[str, Any]) -> dict[str, Any]:
    """The ratings' paths of the OpenAPI document (``json(model)``, ``errors(*names)`` and
    the ``player`` path parameter from :mod:`protocol.openapi`)."""
    return {
        "/api/leaderboards/{kind}": {
            "get": {
                "operationId": "getLeaderboard",
                "tags": ["ratings"],
                "summary": "A table kind's leaderboard",
                "description": (
                    "The top 100 players of a table kind by rating (games to 121 in rated "
                    "rooms; docs/rules.md \"Ratings\"), players with at least 10 rated "
                    "games or matches there (`min_games`); with `around`, "
                    "that player's place and their neighbours."
                ),
                "parameters": [
                    {"name": "kind", "in": "path", "required": True,
                     "description": "`2`, `3`, `4` (playing alone) or `2x2` (partnerships).",
                     "schema": {"type": "string", "enum": ["2", "3", "4", "2x2"]}},
                    {"name": "around", "in": "query", "required": False,
                     "description": "A player id: also answer that player's place.",
                     "schema": {"type": "string", "pattern": PLAYER_ID_PATTERN}},
                ],
                "responses": {
                    "200": {"description": "The leaderboard.", "content": json("Leaderboard")},
                    **errors("BadAroundPlayer", "BadTableKind", "TooManyLeaderboardReads",
                             "Internal", "DatabaseDown"),
                },
            }
        },
        "/api/players/{player}/ratings": {
            "get": {
                "operationId": "getPlayerRatings",
                "tags": ["ratings"],
                "summary": "A player's ratings and their history",
                "description": (
                    "The player's rating at each table kind they played rated (provisional "
                    "for the first `rating_provisional_games`), their place on each "
                    "leaderboard, the newest changes and the rated games they abandoned. "
                    "A private profile answers only its player (`Authorization: Player "
                    "...`); it shares the profile's read budget."
                ),
                "parameters": [player],
                "responses": {
                    "200": {"description": "The ratings.", "content": json("PlayerRatings")},
                    **errors("BadPlayer", "PlayerNotFound", "PlayerDeleted",
                             "ProfilePrivate", "TooManyHistoryReads", "Internal",
                             "DatabaseDown"),
                },
            }
        },
    }
