"""Bodies of the HTTP API (docs/protocol.md, "HTTP"), as pydantic models.

* ``POST /api/rooms`` answers ``201`` :class:`RoomCreatedBody`;
* ``GET /api/rooms/{id}`` answers ``200`` :class:`RoomSummary`;
* ``GET /api/games/{id}`` answers ``200`` :class:`ArchivedGameBody`;
* ``GET /api/players/{id}`` answers ``200`` :class:`PlayerProfile`, ``GET
  /api/players/{id}/games`` ``200`` :class:`PlayerGamesPage` (``server.history``);
* an error answers :class:`HttpError` (``400``, ``403``, ``404``, ``410``, ``413``,
  ``429``, ``500``, ``503``);
* ``GET /healthz`` answers :class:`Health`, ``GET /readyz`` :class:`Readiness`.

``docs/openapi.json`` (``protocol.openapi``) describes these routes with these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .codes import HttpErrorCode
from .messages import ChatMessage, DisplayName, Level, RoomSettings, SeatInfo
from .shapes import Options


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class RoomSummary(_Model):
    """``GET /api/rooms/{id}``: the public facts of a room."""

    room: str
    options: Options
    room_settings: RoomSettings
    status: Literal["waiting", "playing", "game_over"]
    version: int = Field(ge=0, description="The room's version (+1 per accepted change).")
    seats: list[SeatInfo]
    seats_taken: int = Field(ge=0, le=4)
    games_played: int = Field(ge=0, description="Rematches so far (0 in the first game).")
    your_seat: int | None = Field(
        default=None, ge=0, le=3,
        description="With `Authorization: Player <id>.<secret>`: the seat that player holds "
        "in this room (they take it back with a plain `join`, from any device), else null. "
        "A credential that does not authenticate is ignored here (null).")
    created: float = Field(description="Unix time, seconds.")
    updated: float = Field(description="Unix time of the last change, seconds.")
    game: str | None = Field(
        default=None, pattern=r"^[a-z2-7]{16}$",
        description="Once the room's current game is over (or abandoned): the id it is "
        "archived under (`GET /api/games/{game}`, the page `/replay/{game}` with its "
        "grading), known the moment it ends, before the archive has it; else null.")


class RoomCreatedBody(_Model):
    """``POST /api/rooms``: the ``room_created`` message without its ``type``."""

    room: str
    url: str
    options: Options
    creator_token: str
    room_settings: RoomSettings
    computers: dict[str, Level] = Field(description="Seat (as text) -> computer level.")


class HttpErrorDetail(_Model):
    """What went wrong: a stable ``code`` and a message for people."""

    code: HttpErrorCode
    message: str
    retry_after: float | None = Field(
        default=None, ge=0,
        description="with 429 (`too_many_rooms`, `too_many_room_reads`): seconds until a "
        "request may succeed "
        "(also in the Retry-After header, rounded up to whole seconds)",
    )


class HttpError(_Model):
    """Any HTTP error answer."""

    error: HttpErrorDetail


class Health(_Model):
    """``GET /healthz``: the process is up (always ``{"ok": true}``)."""

    ok: Literal[True]


class Readiness(_Model):
    """``GET /readyz``: whether the room store answers (``200`` with ``ok`` true, else
    ``503`` with ``ok`` false) and which store the process uses."""

    ok: bool
    store: Literal["redis", "memory"] = Field(
        description="redis: rooms in Redis (CRIBBAGE_REDIS_URL); memory: in this process"
    )


HEX64 = r"^[0-9a-f]{64}$"


class ReplaySeat(_Model):
    """A seat of a replayed game as the public saw it."""

    seat: int = Field(ge=0, le=3)
    name: str | None = Field(description="null for a seat of a deleted player (and an open "
                             "seat)")
    kind: Literal["human", "computer", "open"]
    level: Level | None
    deleted: bool = Field(description="the seat's player deleted themself: the seat shows "
                          "as \"a deleted player\", and its name is null in the events too")


class ReplayVersion(_Model):
    """One version of the game: what one change did."""

    version: int = Field(ge=1)
    events: list[dict] = Field(
        description="The change's events (docs/protocol.schema.json `Event`), redacted as "
        "for a spectator, as the table's history gives them."
    )


class CutSeed(_Model):
    """The seed of one round of the cut for first deal."""

    round: int = Field(ge=1)
    seed: str = Field(pattern=HEX64)


class DealSeed(_Model):
    """One deal of the game with its seed (docs/rules.md "The shuffle")."""

    deal_number: int = Field(ge=1)
    dealer: int = Field(ge=0, le=3)
    seed: str | None = Field(pattern=HEX64, description="null for a stacked pack (tests)")
    commitment: str | None = Field(
        pattern=HEX64, description="SHA-256 of the seed, as the deal_commitment event gave it"
    )
    hands: dict[str, list[str]] = Field(description="The hands dealt, by seat (as text).")
    scores_after: list[int] = Field(description="Each side's score after the deal, holes.")


class GameSeeds(_Model):
    """Everything needed to check the game's shuffles (docs/rules.md "The shuffle")."""

    shuffle: Literal["cribbage/v2"] = Field(description="the derivation and shuffle used")
    game: str = Field(pattern=HEX64, description="the game's seed G")
    game_commitment: str = Field(pattern=HEX64, description="SHA-256 of G (game_commitment)")
    cuts: list[CutSeed]
    deals: list[DealSeed]


class ArchivedMatch(_Model):
    """The match an archived game was part of (docs/rules.md §8), as the archive holds it:
    as of the match's latest archived game (its ``games_played``), so a game that did not
    end the match shows the totals of later games too."""

    id: str = Field(description="The match's id (ratings' `source_id` for a rated match).")
    number: int = Field(ge=1, description="The match's number in its room (1, then +1).")
    best_of: Literal[3, 5, 7]
    game_in_match: int = Field(ge=1, le=7, description="This game's place in the match.")
    table_kind: Literal["2", "3", "4", "2x2"]
    rated: bool
    over: bool
    reason: Literal["won", "forfeit"] | None
    winner_side: int | None = Field(ge=0, le=3)
    wins: list[int] = Field(description="Games won per side.")
    points: list[int] = Field(description="Game points per side (ACC rule 12.1).")
    spread: list[int] = Field(description="Spread per side, holes.")
    forfeited: list[int] = Field(description="Sides that forfeited the match.")
    games_played: int = Field(ge=1, le=7, description="Games of the match archived.")


class GradedMove(_Model):
    """One decision with a choice, graded against a computer level (issue 22 point 4;
    ``server.archive.grading``)."""

    deal: int = Field(ge=0, description="The deal's number in the game.")
    seat: int = Field(ge=0, le=3)
    by: Literal["player", "computer"] = Field(
        description="computer: the server's computer moved for the seat (a computer seat, "
        "a stand-in, a turn clock that ran out)")
    kind: Literal["discard", "play"]
    chosen: list[str] = Field(description="The cards laid away to the crib, or the card "
                              "played.")
    best: list[str] = Field(description="The grader's best choice (the chosen one when it "
                            "was as good).")
    cost: float = Field(ge=0, description="Points the choice cost against the best (0: "
                        "within 0.01; at most 10). With win_cost: that chance in points, "
                        "over what one hole is worth to the chance to win at the score.")
    chosen_value: float = Field(description="The grader's value of the choice: points, "
                                "or near the end a card's chance to win (0..1).")
    best_value: float = Field(description="The grader's value of the best choice: points, "
                              "or near the end a card's chance to win (0..1); the chosen "
                              "value when the choice was as good.")
    choices: int = Field(ge=2, description="Distinct choices the seat had (a play's by "
                         "rank).")
    win_cost: float | None = Field(
        default=None, ge=0, le=1, description="The chance to win it cost (0..1), when the "
        "grader ranks by the chance to win (near the end, two players; 0 below 0.001).")


class SeatGrading(_Model):
    """A seat's grading summary: the decisions its occupant made (at a human seat not the
    computer's moves for it)."""

    seat: int = Field(ge=0, le=3)
    decisions: int = Field(ge=0, description="Decisions with a choice.")
    exact: int = Field(ge=0, description="Of those, as good as the best (cost < 0.01).")
    cost: float = Field(ge=0, description="Their total cost, points.")
    cost_per_decision: float | None = Field(ge=0)
    accuracy: float | None = Field(
        ge=0, le=100, description="100 x the mean of 1 / (1 + cost) over the decisions "
        "(docs/protocol.md \"Grading\"); null: none.")
    computer_moves: int = Field(ge=0, description="Graded moves the computer made for a "
                                "human seat (not counted).")


class GameGrading(_Model):
    """An archived game's decisions graded against a computer level, once (issue 22 point
    4; ``server.archive.grader``)."""

    grader: str = Field(description="The computer level graded against (`expert`).")
    error: str | None = Field(description="Why the game could not be graded (then no seats "
                              "nor moves); null: graded.")
    seats: list[SeatGrading]
    moves: list[GradedMove] = Field(description="Every decision with a choice, in play "
                                    "order.")


class ArchivedGameBody(_Model):
    """``GET /api/games/{id}``: an archived game in the web client's replay file shape
    (``format`` ``cribbage-replay``, version 1: what the table's "download replay" saves),
    with the archive's facts and the seeds."""

    format: Literal["cribbage-replay"]
    format_version: Literal[1]
    room: str = Field(description="The room's name in the archive: derived from its id, the "
                      "same for every game of the room, never its link (a private table "
                      "stays reachable by its link only).")
    game: int = Field(ge=1, description="The game's number in its room.")
    saved_at: str = Field(description="When the game was archived (ISO 8601, UTC).")
    options: Options
    seats: list[ReplaySeat]
    first: int = Field(ge=1, description="The version that started the game.")
    versions: list[ReplayVersion]
    result: dict | None = Field(
        description="The game_over event's outcome, or null for an abandoned game."
    )
    game_id: str = Field(description="The archived game's id.")
    status: Literal["finished", "abandoned"]
    started_at: str = Field(description="ISO 8601, UTC.")
    ended_at: str = Field(description="ISO 8601, UTC.")
    scores: list[int] = Field(description="Final score per side, holes.")
    seeds: GameSeeds
    match: ArchivedMatch | None = Field(
        default=None, description="The match this game was part of, or null for a single "
        "game (best of 1).")
    chat: list[ChatMessage] = Field(
        default_factory=list, description="The table talk said during the game, oldest "
        "first, as its readers got it (what a moderator hid is left out).")
    grading: GameGrading | None = Field(
        default=None, description="The game's decisions graded against a computer level "
        "(issue 22 point 4); null when it cannot be had now (a later read grades it).")


PLAYER_ID_PATTERN = r"^[A-Za-z0-9_-]{1,32}$"
"""A player's public id, as the HTTP paths take it (``players.id``)."""


class PlayedWon(_Model):
    """Finished games played and won."""

    played: int = Field(ge=0)
    won: int = Field(ge=0)


class GameCounts(_Model):
    """The player's games: finished (played = won + lost + drawn) and abandoned."""

    played: int = Field(ge=0, description="finished games")
    won: int = Field(ge=0)
    lost: int = Field(ge=0)
    drawn: int = Field(ge=0, description="a drawn Lowball game the player's side did not lose")
    abandoned: int = Field(ge=0, description="games archived unfinished (not in any figure)")


class SkunkCounts(_Model):
    """Skunks (docs/rules.md §4.4)."""

    single: int = Field(ge=0)
    double: int = Field(ge=0)


class Skunks(_Model):
    """Skunks given (losing sides skunked when the player's side won) and taken."""

    given: SkunkCounts
    taken: SkunkCounts


class DealerPoints(_Model):
    """Holes pegged, by source (``total`` is their sum)."""

    pegging: int | float | None
    hand: int | float | None
    crib: int | float | None
    heels: int | float | None
    total: int | float | None


class PonePoints(_Model):
    """Holes pegged as pone, by source (a pone has no crib nor his heels)."""

    pegging: int | float | None
    hand: int | float | None
    total: int | float | None


class DealerRole(_Model):
    """The deals the player dealt: holes pegged in them, and per deal (null: no deal)."""

    deals: int = Field(ge=0)
    points: DealerPoints
    per_deal: DealerPoints


class PoneRole(_Model):
    """The deals the player was a pone in: holes pegged in them, and per deal."""

    deals: int = Field(ge=0)
    points: PonePoints
    per_deal: PonePoints


class CountAverage(_Model):
    """Hands (or cribs) counted, their true counts' total and average (null: none)."""

    counted: int = Field(ge=0)
    total: int = Field(ge=0)
    average: float | None


class Backup10Moves(_Model):
    """Back-up 10 moves (docs/rules.md §6) and the holes they moved back."""

    moves: int = Field(ge=0)
    holes: int = Field(ge=0)


class MugginsPoints(_Model):
    """Muggins (docs/rules.md §5): points taken as the caller, and lost from own counts."""

    taken: int = Field(ge=0)
    lost: int = Field(ge=0)


class Streaks(_Model):
    """Winning streaks over finished games in the order they ended (a loss or a draw ends
    one)."""

    current: int = Field(ge=0)
    best: int = Field(ge=0)


class PlayerStatistics(_Model):
    """A player's statistics: every figure from the archived events of their finished
    games (``server.history.stats``)."""

    games: GameCounts
    by_table: dict[Literal["2", "3", "4", "2x2"], PlayedWon] = Field(
        description="by table kind: 2, 3 or 4 playing alone, 2x2 partnerships")
    by_variant: dict[Literal["standard", "muggins", "lowball", "backup10"], PlayedWon] = Field(
        description="by variant (standard: none of the three; a game of several variants "
        "counts under each)")
    by_target: dict[Literal["61", "121"], PlayedWon]
    skunks: Skunks
    dealer: DealerRole
    pone: PoneRole
    hand: CountAverage
    crib: CountAverage
    backup10: Backup10Moves
    muggins: MugginsPoints
    streaks: Streaks


class PlayerAccuracy(_Model):
    """A player's average accuracy (docs/protocol.md "Grading") over the finished games
    they played themself (a human seat with at least one graded decision of their own)."""

    games: int = Field(ge=0, description="Games graded.")
    average: float | None = Field(ge=0, le=100, description="Mean of the games' accuracy; "
                                  "null: none graded.")
    decisions: int = Field(ge=0, description="Their decisions with a choice.")
    cost_per_decision: float | None = Field(ge=0, description="Points per decision.")
    grader: str = Field(description="The computer level graded against.")


class PlayerProfile(_Model):
    """``GET /api/players/{id}``: a player's public profile and statistics."""

    player: str = Field(description="the player's public id")
    name: str | None = Field(description="display name (null: none chosen)")
    private: bool = Field(description="only the player sees it (this answer went to them)")
    online: bool | None = Field(
        default=None, description="the player holds a connection to the server now (issue "
        "20: \"online now\"); null when the server cannot tell")
    statistics: PlayerStatistics
    accuracy: PlayerAccuracy | None = Field(
        default=None, description="The average accuracy of the player's graded games "
        "(issue 22 point 4).")


class HistorySeat(_Model):
    """A seat of a game in a player's history."""

    seat: int = Field(ge=0, le=3)
    side: int = Field(ge=0, le=3)
    kind: Literal["human", "computer", "open"]
    level: Level | None
    name: str | None = Field(description="null for a deleted player")
    player: str | None = Field(description="the seat's player (their profile), or null: a "
                               "computer, a seat taken without a player, a deleted player")
    deleted: bool = Field(description="the seat's player deleted themself: \"a deleted "
                          "player\"")


class HistoryGame(_Model):
    """One game of a player's history (``/replay/{game}`` replays it)."""

    game: str = Field(description="the archived game's id (GET /api/games/{id})")
    ended_at: str = Field(description="ISO 8601, UTC")
    status: Literal["finished", "abandoned"]
    result: Literal["won", "lost", "drawn", "abandoned"]
    table_kind: Literal["2", "3", "4", "2x2"]
    target: Literal[61, 121]
    variants: list[Literal["muggins", "lowball", "backup10"]]
    seat: int = Field(ge=0, le=3, description="the player's seat")
    side: int = Field(ge=0, le=3, description="the player's side")
    score: int = Field(ge=0, description="the player's side's final score")
    scores: list[int] = Field(description="every side's final score")
    skunk: Literal["none", "skunk", "double"] = Field(description="skunk taken")
    seats: list[HistorySeat] = Field(description="every seat: the player, partner, opponents")


class PlayerGamesPage(_Model):
    """``GET /api/players/{id}/games``: a page of the player's games, newest first."""

    games: list[HistoryGame]
    next: str | None = Field(description="the cursor of the next (older) page; null: the end")


ROOM_SUMMARY_ADAPTER: TypeAdapter[RoomSummary] = TypeAdapter(RoomSummary)
"""Validates a ``GET /api/rooms/{id}`` body."""


# -- players (issue 18; docs/protocol.md "Players") ------------------------------------------

PLAYER_ID = r"^[a-z2-7]{16}$"
"""A player's public id (``server.players.store.PLAYER_ID_PATTERN``)."""

PLAYER_SECRET = r"^[a-z2-7]{32}$"
"""A player's secret (160 bits)."""

PlayerLanguage = Literal["en", "da", "sv"]


class CreatePlayerBody(_Model):
    """``POST /api/players``: all optional (no name yet; English)."""

    name: DisplayName | None = Field(
        default=None, description="display name (the rules of seat names)")
    language: PlayerLanguage = "en"


class UpdatePlayerBody(_Model):
    """``PATCH /api/players/me``: the fields to change (a field left out is kept; a null
    name clears it)."""

    name: DisplayName | None = Field(
        default=None, description="display name (the rules of seat names); null: none")
    language: PlayerLanguage | None = None
    private: bool | None = Field(
        default=None, description="true: profile and history are shown to the player only")


class PlayerBody(_Model):
    """A player as it sees itself (``GET``/``PATCH /api/players/me``)."""

    id: str = Field(pattern=PLAYER_ID)
    name: str | None
    language: PlayerLanguage
    private: bool
    created_at: str = Field(description="ISO 8601, UTC.")


class PlayerCreatedBody(_Model):
    """``POST /api/players`` (201) and ``POST /api/players/link`` (200): the player and a
    secret of its own for this device, shown this once (present
    ``Authorization: Player <id>.<secret>``, or ``hello.player``)."""

    id: str = Field(pattern=PLAYER_ID)
    secret: str = Field(pattern=PLAYER_SECRET)
    name: str | None
    language: PlayerLanguage


class LinkCodeBody(_Model):
    """``POST /api/players/me/link`` (201): a one-time code for another device."""

    code: str = Field(pattern=r"^[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$",
                      description="8 letters shown as ABCD-EFGH (dashes, spaces and case do "
                      "not matter when it is entered)")
    url: str = Field(description="the link that claims it: <base>/link/<code>")
    expires_at: str = Field(description="ISO 8601, UTC: the code works until then, once")


class ClaimLinkBody(_Model):
    """``POST /api/players/link``: the code another device showed."""

    code: str = Field(min_length=1, max_length=32)


class PlayerExportBody(_Model):
    """``GET /api/players/me/export``: everything the server holds about the player."""

    format: Literal["cribbage-player-export"]
    format_version: Literal[1]
    exported_at: str = Field(description="ISO 8601, UTC.")
    player: dict = Field(description="the players row (no secret hash)")
    credentials: list[dict] = Field(
        description="one per device: id, how (new | link | passkey), created_at, "
        "last_used_at (no hashes)")
    link_codes: list[dict] = Field(description="live one-time codes: handle (first half), "
                                   "created_at, expires_at, tries")
    passkeys: list[dict] = Field(description="the player's passkeys (server.passkeys): "
                                 "credential_id, public_key (base64url), sign_count, "
                                 "transports, aaguid, backed_up, created_at, last_used_at")
    games: list[dict] = Field(description="each archived game the player sat in: "
                              "{game: games row, seat: the player's game_seats row}")
    blocks: list[dict] = Field(default_factory=list, description="the players this player "
                               "blocked (issue 20): blocked_id, created_at")


class BlockedPlayer(_Model):
    """A player this player blocked (issue 20)."""

    player: str = Field(pattern=PLAYER_ID)
    name: str | None = Field(description="their name (null: none chosen, or deleted)")
    blocked_at: str = Field(description="ISO 8601, UTC.")


class BlocksBody(_Model):
    """``GET /api/players/me/blocks``: the players this player blocked, newest first."""

    blocks: list[BlockedPlayer]


class BlockBody(_Model):
    """``PUT /api/players/me/blocks/{player}``: the block is there."""

    player: str = Field(pattern=PLAYER_ID)
    blocked: Literal[True]


class MutedPlayer(_Model):
    """A player this player muted at the table."""

    player: str = Field(pattern=PLAYER_ID)
    name: str | None = Field(description="Their display name; null without one, or deleted.")
    muted_at: str = Field(description="When, ISO 8601, UTC.")


class MutesBody(_Model):
    """``GET /api/players/me/mutes``: the players this player muted, newest first."""

    mutes: list[MutedPlayer]


class MuteBody(_Model):
    """``PUT /api/players/me/mutes/{player}``: the mute is there."""

    player: str = Field(pattern=PLAYER_ID)
    muted: Literal[True]
