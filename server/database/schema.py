"""The SQL schema (SQLAlchemy 2 Core), for everything that outlives a room.

Issue 18's tables. The archive (``server.archive``) writes ``games`` and its children once per
game, in one transaction, keyed by (room, room creation, game number); the players' pages and
statistics read them. Migrations (``migrations/versions``) create exactly these tables; a test
compares the two.

* ``players``: a player (issue 18 point 1): the public id the archive's seats point at, the
  hash of its secret, display name, language, whether the profile is private, and when it
  was deleted (a deleted player keeps its row, emptied, so archived seats still point at
  something; pages show "a deleted player"). ``secret_hash`` is the hash of the player's
  first secret (kept in step with its ``player_credentials`` row, ``how`` = ``new``);
  authentication reads ``player_credentials``.
* ``player_credentials``: one row per device credential of a player (``server.players``):
  the SHA-256 hex of its secret and how it was made: ``new`` (the player's first),
  ``link`` (a one-time code from another device), ``passkey`` (a passkey sign-in). Deleted
  with the player's identity.
* ``player_link_codes``: the one-time codes that give a player to another device
  (``server.players.store``): a short lookup part (``handle``, the code's first half), the
  SHA-256 hex of the whole code, its expiry, and the wrong tries it has had.
* ``games``: one row per archived game: the room, its creation time and the game number (the
  unique key that makes archiving idempotent), ``finished`` or ``abandoned``, the options
  (whole, and the columns statistics group by), the room's settings, the result and final
  scores, the times, the room log's versions, and the shuffle's seeds (docs/rules.md "The
  shuffle": the game's seed and each round of the cut's; each deal's is in ``game_deals``).
* ``game_seats``: one row per seat of a game: the player (null for a computer, a seat taken
  without a player, or a deleted player), the computer's level, the name shown, the side's
  final score, won / skunk, and a summary computed from the events at archive time
  (``server.archive.summary``), with the game's kind, variant, status and end copied in, so
  a player's history and statistics read one indexed table (at a million games).
* ``game_deals``: one row per deal: dealer, seed, commitment, the scores after it.
* ``player_passkeys``, ``passkey_challenges``: a player's passkeys (WebAuthn credentials:
  id, public key, signature counter) and the outstanding challenges of passkey sign-ins and
  registrations, single use and short-lived (``server.passkeys``; migration 0004).
* ``matches``, ``ratings``, ``rating_history``, ``rating_board_counts`` (issue 19; migration
  0006): a match of best of N as of its latest archived game (``games.match_id`` points at
  it), a player's rating per table kind, one row per player per rated game or match, and the
  leaderboards' players per shown number (``server.ratings``; ``server.ratings.counts``).
* ``player_blocks`` (issue 20; migration 0007): who blocked whom (``server.social.blocks``):
  a blocked player cannot challenge the blocker, is never matched with them and cannot sit
  at a table where they sit.
* ``player_mutes``, ``game_chat`` (issue 21; migration 0008): who muted whom at the table
  (``server.chat.mutes``: the muted player's messages are not delivered to the muter) and
  the chat messages of an archived game, one JSON array per game.
* ``chat_reports``, ``sanctions``, ``moderation_log`` (issue 21 point 4; migration 0009):
  reported messages with the talk around them, moderators' silences and bans, and the
  audit log of every moderator action (``server.moderation``).
* ``game_gradings``, ``game_seat_grades`` (issue 22 point 4; migration 0010): a finished
  game graded against a computer level once (``server.archive.grader``): the graded moves
  of the game as one JSON array, and each seat's summary (decisions, exact, cost, accuracy)
  for the players' profiles; a game that cannot be graded keeps its reason. Migration 0011
  changes no table: it deletes the gradings of rematches made before the grader replayed a
  game with its own number, to be made again.
* ``game_logs``: the room's log of the game, every entry in order (what caused each version
  and all its events, unredacted), as one JSON array: ``[{"v", ...cause, "events"}, ...]``.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    SmallInteger,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING)

players = Table(
    "players",
    metadata,
    Column("id", String(32), primary_key=True, comment="the player's public id"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("secret_hash", String(64), nullable=True,
           comment="SHA-256 hex of the player's secret (null once deleted)"),
    Column("name", String(64), nullable=True,
           comment="display name (the seat-name rules); null once deleted"),
    Column("language", String(8), nullable=True, comment="en | da | sv"),
    Column("private", Boolean, nullable=False, server_default=false(),
           comment="the profile and history are shown to the player only"),
    Column("updated_at", DateTime(timezone=True), nullable=True),
    Column("deleted_at", DateTime(timezone=True), nullable=True,
           comment="set when the player deleted themself: identity and names are gone, "
           "archived seats show 'a deleted player'"),
    comment="a player: an identity without sign-up (issue 18 point 1); credentials of "
    "other devices and passkeys live in tables of their own",
)

player_credentials = Table(
    "player_credentials",
    metadata,
    Column("id", String(32), primary_key=True, comment="the credential's id (not secret)"),
    Column("player_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           nullable=False),
    Column("secret_hash", String(64), nullable=False, comment="SHA-256 hex of the secret"),
    Column("how", String(16), nullable=False, comment="new | link | passkey"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_used_at", DateTime(timezone=True), nullable=True),
    comment="a player's device credentials: one secret per device (issue 18 points 1-2)",
)
Index("ix_player_credentials_player", player_credentials.c.player_id)

player_link_codes = Table(
    "player_link_codes",
    metadata,
    Column("handle", String(8), primary_key=True,
           comment="the code's first half: finds the code, is not enough to claim it"),
    Column("code_hash", String(64), nullable=False, comment="SHA-256 hex of the whole code"),
    Column("player_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    Column("tries", SmallInteger, nullable=False, server_default="0",
           comment="wrong tries of this code so far"),
    comment="one-time codes that give a player to another device (issue 18 point 2)",
)
Index("ix_player_link_codes_expires_at", player_link_codes.c.expires_at)
Index("ix_player_link_codes_player", player_link_codes.c.player_id)

games = Table(
    "games",
    metadata,
    Column("id", String(16), primary_key=True,
           comment="public game id, derived from the unique key (server.archive.game_id)"),
    Column("room_id", String(16), nullable=False),
    Column("room_created", Float, nullable=False, comment="the room's creation, Unix seconds"),
    Column("game_number", Integer, nullable=False, comment="1, then +1 per rematch"),
    Column("status", String(16), nullable=False, comment="finished | abandoned"),
    Column("players", SmallInteger, nullable=False),
    Column("table_kind", String(8), nullable=False, comment="2 | 3 | 4 | 2x2 (partnerships)"),
    Column("target", SmallInteger, nullable=False),
    Column("muggins", Boolean, nullable=False),
    Column("lowball", Boolean, nullable=False),
    Column("backup10", Boolean, nullable=False),
    Column("options", JSON, nullable=False, comment="the effective engine options"),
    Column("room_settings", JSON, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=False),
    Column("archived_at", DateTime(timezone=True), nullable=False),
    Column("first_version", Integer, nullable=False),
    Column("last_version", Integer, nullable=False),
    Column("deals", SmallInteger, nullable=False),
    Column("winner_side", SmallInteger, nullable=True, comment="null: a draw or abandoned"),
    Column("draw", Boolean, nullable=False),
    Column("scores", JSON, nullable=False, comment="final score per side, holes"),
    Column("result", JSON, nullable=True, comment="the game_over event; null when abandoned"),
    Column("shuffle", String(16), nullable=False, comment="derivation and shuffle, cribbage/v2"),
    Column("game_seed", String(64), nullable=False),
    Column("game_commitment", String(64), nullable=False),
    Column("cut_seeds", JSON, nullable=False, comment="hex seed of each round of the cut"),
    Column("match_id", String(16), nullable=True,
           comment="the game's match (matches.id; null for best of 1); migration 0006"),
    Column("match_number", SmallInteger, nullable=True,
           comment="the game's place in its match, 1..best_of"),
    UniqueConstraint("room_id", "room_created", "game_number", name="uq_games_room_game"),
)
Index("ix_games_ended_at", games.c.ended_at)
Index("ix_games_match", games.c.match_id)

game_seats = Table(
    "game_seats",
    metadata,
    Column("game_id", String(16), ForeignKey("games.id", ondelete="CASCADE"),
           primary_key=True),
    Column("seat", SmallInteger, primary_key=True),
    Column("side", SmallInteger, nullable=False),
    Column("player_id", String(32), ForeignKey("players.id", ondelete="SET NULL"),
           nullable=True, comment="null: a computer, no player, or a deleted player"),
    Column("kind", String(16), nullable=False, comment="human | computer | open"),
    Column("level", String(16), nullable=True, comment="a computer seat's level"),
    Column("name", Text, nullable=True, comment="the name shown at the table"),
    Column("standin", Boolean, nullable=False, comment="a computer stood in at the end"),
    Column("final_score", SmallInteger, nullable=False, comment="its side's, holes"),
    Column("won", Boolean, nullable=False),
    Column("skunk", String(8), nullable=False, comment="none | skunk | double (taken)"),
    Column("skunks_given", SmallInteger, nullable=False,
           comment="losing sides skunked (single or double) when this seat's side won"),
    Column("double_skunks_given", SmallInteger, nullable=False, server_default="0",
           comment="of skunks_given, the double skunks"),
    Column("drawn", Boolean, nullable=False, server_default=false(),
           comment="a drawn game this seat's side did not lose"),
    # copied from the game, so a player's history and statistics read this table alone
    Column("status", String(16), nullable=False),
    Column("table_kind", String(8), nullable=False),
    Column("target", SmallInteger, nullable=False),
    Column("muggins", Boolean, nullable=False),
    Column("lowball", Boolean, nullable=False),
    Column("backup10", Boolean, nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=False),
    # the summary of the seat's game (server.archive.summary), holes unless said
    Column("deals_dealt", SmallInteger, nullable=False),
    Column("deals_pone", SmallInteger, nullable=False),
    Column("dealer_pegging", SmallInteger, nullable=False),
    Column("dealer_hand", SmallInteger, nullable=False),
    Column("dealer_crib", SmallInteger, nullable=False),
    Column("dealer_heels", SmallInteger, nullable=False),
    Column("pone_pegging", SmallInteger, nullable=False),
    Column("pone_hand", SmallInteger, nullable=False),
    Column("hands_counted", SmallInteger, nullable=False),
    Column("hand_total", SmallInteger, nullable=False, comment="true counts of its hands"),
    Column("cribs_counted", SmallInteger, nullable=False),
    Column("crib_total", SmallInteger, nullable=False, comment="true counts of its cribs"),
    Column("backup_moves", SmallInteger, nullable=False),
    Column("backup_holes", SmallInteger, nullable=False),
    Column("muggins_taken", SmallInteger, nullable=False),
    Column("muggins_lost", SmallInteger, nullable=False),
    Column("penalty_points", SmallInteger, nullable=False,
           comment="pegged to it for opponents' wrong calls"),
    Column("abandoned", Boolean, nullable=False, server_default=false(),
           comment="a rated game's seat its player left past the takeover grace (a loss); "
           "migration 0006"),
)
Index("ix_game_seats_player", game_seats.c.player_id, game_seats.c.ended_at,
      game_seats.c.game_id,
      postgresql_include=[  # a page of the player's games reads the index (migration 0005)
          "seat", "side", "won", "drawn", "final_score", "skunk", "status", "table_kind",
          "target", "muggins", "lowball", "backup10",
      ])
Index("ix_game_seats_player_stats", game_seats.c.player_id, game_seats.c.status,
      game_seats.c.ended_at, game_seats.c.game_id,
      postgresql_include=[  # a profile is an index-only scan (migration 0005)
          "won", "drawn", "skunk", "table_kind", "target", "muggins", "lowball", "backup10",
          "deals_dealt", "deals_pone", "dealer_pegging", "dealer_hand", "dealer_crib",
          "dealer_heels", "pone_pegging", "pone_hand", "hands_counted", "hand_total",
          "cribs_counted", "crib_total", "backup_moves", "backup_holes", "muggins_taken",
          "muggins_lost", "skunks_given", "double_skunks_given",
      ])

game_deals = Table(
    "game_deals",
    metadata,
    Column("game_id", String(16), ForeignKey("games.id", ondelete="CASCADE"),
           primary_key=True),
    Column("deal_number", SmallInteger, primary_key=True),
    Column("dealer", SmallInteger, nullable=False),
    Column("seed", String(64), nullable=True, comment="null for a stacked pack (tests)"),
    Column("commitment", String(64), nullable=True),
    Column("scores_after", JSON, nullable=False, comment="score per side after the deal"),
)

game_logs = Table(
    "game_logs",
    metadata,
    Column("game_id", String(16), ForeignKey("games.id", ondelete="CASCADE"),
           primary_key=True),
    Column("entries", Text, nullable=False,
           comment='JSON array of the room log entries [{"v", ...cause, "events"}]'),
)

player_passkeys = Table(
    "player_passkeys",
    metadata,
    Column("credential_id", String(1400), primary_key=True,
           comment="the WebAuthn credential id, base64url without padding"),
    Column("player_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           nullable=False),
    Column("public_key", LargeBinary, nullable=False, comment="the COSE public key"),
    Column("sign_count", BigInteger, nullable=False,
           comment="the authenticator's signature counter last seen (0: it keeps none)"),
    Column("transports", JSON, nullable=True, comment="what the browser said, e.g. internal"),
    Column("aaguid", String(36), nullable=False, comment="the authenticator's model"),
    Column("backed_up", Boolean, nullable=False, comment="a synced (multi-device) passkey"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("last_used_at", DateTime(timezone=True), nullable=True),
    comment="a player's passkeys (issue 18 point 2; server.passkeys)",
)
Index("ix_player_passkeys_player", player_passkeys.c.player_id)

passkey_challenges = Table(
    "passkey_challenges",
    metadata,
    Column("id", String(32), primary_key=True, comment="the challenge's public id"),
    Column("purpose", String(16), nullable=False, comment="register | signin"),
    Column("player_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           nullable=True, comment="the player registering (null for a sign-in)"),
    Column("challenge", String(128), nullable=False, comment="base64url, 32 random bytes"),
    Column("rp_id", String(253), nullable=False, comment="the relying party id it was for"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("expires_at", DateTime(timezone=True), nullable=False),
    comment="outstanding WebAuthn challenges: single use, short-lived, in SQL so that every "
    "server process sees them (server.passkeys)",
)
Index("ix_passkey_challenges_expires_at", passkey_challenges.c.expires_at)

matches = Table(
    "matches",
    metadata,
    Column("id", String(16), primary_key=True,
           comment="public match id, derived from room, room creation and match number "
           "(server.ratings.match_id)"),
    Column("room_id", String(16), nullable=False),
    Column("room_created", Float, nullable=False, comment="the room's creation, Unix seconds"),
    Column("match_number", Integer, nullable=False, comment="1, then +1 per new match"),
    Column("best_of", SmallInteger, nullable=False, comment="3 | 5 | 7"),
    Column("table_kind", String(8), nullable=False, comment="2 | 3 | 4 | 2x2"),
    Column("status", String(16), nullable=False, comment="playing | over"),
    Column("reason", String(16), nullable=True, comment="won | forfeit, once over"),
    Column("winner_side", SmallInteger, nullable=True),
    Column("wins", JSON, nullable=False, comment="games won per side"),
    Column("points", JSON, nullable=False, comment="game points per side (ACC rule 12.1)"),
    Column("spread", JSON, nullable=False, comment="spread per side, holes"),
    Column("forfeited", JSON, nullable=False, comment="sides that forfeited the match"),
    Column("games_played", SmallInteger, nullable=False,
           comment="games of the match archived as of this row (a later one wins)"),
    Column("rated", Boolean, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("ended_at", DateTime(timezone=True), nullable=True, comment="null until over"),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    UniqueConstraint("room_id", "room_created", "match_number", name="uq_matches_room_match"),
    comment="a match of best of 3, 5 or 7 games (issue 19 point 1), as of its latest "
    "archived game",
)

ratings = Table(
    "ratings",
    metadata,
    Column("player_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           primary_key=True),
    Column("table_kind", String(8), primary_key=True, comment="2 | 3 | 4 | 2x2"),
    Column("mu", Float, nullable=False, comment="openskill's mean"),
    Column("sigma", Float, nullable=False, comment="openskill's deviation"),
    Column("display", Integer, nullable=False,
           comment="the number shown (server.ratings.model.display)"),
    Column("games", Integer, nullable=False, comment="rated games and matches counted"),
    Column("wins", Integer, nullable=False, comment="of them, ranked first"),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    comment="a player's rating per table kind (issue 19 point 2; server.ratings)",
)
Index("ix_ratings_board", ratings.c.table_kind, ratings.c.display.desc(), ratings.c.player_id,
      postgresql_include=["games"])  # the leaderboard and "around me" (migration 0006)

rating_history = Table(
    "rating_history",
    metadata,
    Column("player_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           primary_key=True),
    Column("table_kind", String(8), primary_key=True),
    Column("source_id", String(16), primary_key=True,
           comment="the rated game's id (best of 1) or match's id (best of N): the key "
           "makes a rating change exactly once per game or match"),
    Column("source", String(8), nullable=False, comment="game | match"),
    Column("game_id", String(16), nullable=False, comment="the game that decided it"),
    Column("rank", SmallInteger, nullable=False, comment="1 = first"),
    Column("teams", SmallInteger, nullable=False, comment="sides in the result"),
    Column("abandoned", Boolean, nullable=False, comment="ranked last for leaving"),
    Column("mu_before", Float, nullable=False),
    Column("sigma_before", Float, nullable=False),
    Column("display_before", Integer, nullable=False),
    Column("mu", Float, nullable=False),
    Column("sigma", Float, nullable=False),
    Column("display", Integer, nullable=False),
    Column("games", Integer, nullable=False, comment="the rating's games after this one"),
    Column("at", DateTime(timezone=True), nullable=False, comment="when the game ended"),
    comment="one row per player per rated game or match: a rating changes exactly once",
)
Index("ix_rating_history_player", rating_history.c.player_id, rating_history.c.at,
      rating_history.c.source_id)

rating_board_counts = Table(
    "rating_board_counts",
    metadata,
    Column("table_kind", String(8), primary_key=True, comment="2 | 3 | 4 | 2x2"),
    Column("display", Integer, primary_key=True, comment="a shown number (ratings.display)"),
    Column("players", Integer, nullable=False,
           comment="players of the kind's board (games >= server.ratings.counts.MIN_GAMES) "
           "showing it; a row at 0 is deleted"),
    comment="the leaderboards' players per shown number, kept in step with ratings in the "
    "same transaction, so a rank is a sum over these rows (server.ratings.counts)",
)

player_blocks = Table(
    "player_blocks",
    metadata,
    Column("blocker_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           primary_key=True, comment="the player who blocked"),
    Column("blocked_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           primary_key=True, comment="the player blocked"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    comment="who blocked whom (issue 20 point 3; server.social.blocks); migration 0007",
)
Index("ix_player_blocks_blocked", player_blocks.c.blocked_id, player_blocks.c.blocker_id)

player_mutes = Table(
    "player_mutes",
    metadata,
    Column("muter_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           primary_key=True, comment="the player who muted"),
    Column("muted_id", String(32), ForeignKey("players.id", ondelete="CASCADE"),
           primary_key=True, comment="the player muted"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    comment="who muted whom at the table (issue 21 point 3; server.chat.mutes); "
    "migration 0008",
)

game_chat = Table(
    "game_chat",
    metadata,
    Column("game_id", String(16), ForeignKey("games.id", ondelete="CASCADE"),
           primary_key=True),
    Column("messages", Text, nullable=False,
           comment="JSON array of the game's chat messages, oldest first"),
    comment="the table talk of an archived game (issue 21 point 1); migration 0008",
)

chat_reports = Table(
    "chat_reports",
    metadata,
    Column("id", String(16), primary_key=True, comment="the report's id (random)"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("reporter_id", String(32), nullable=False, comment="the player who reported"),
    Column("room_id", String(32), nullable=False),
    Column("message_id", Integer, nullable=False, comment="the message's id in its room"),
    Column("author_id", String(32), nullable=True,
           comment="the reported message's author (a player id), null for a guest"),
    Column("message", Text, nullable=False, comment="JSON: the reported message as kept"),
    Column("context", Text, nullable=False,
           comment="JSON array: the room's kept messages around it, oldest first"),
    Column("reason", String(16), nullable=False, comment="abuse, spam, cheating or other"),
    Column("note", Text, nullable=True, comment="the reporter's words (at most 200)"),
    Column("status", String(16), nullable=False, comment="open or resolved"),
    Column("resolved_at", DateTime(timezone=True), nullable=True),
    Column("resolved_by", String(64), nullable=True, comment="the moderator"),
    Column("resolution", Text, nullable=True),
    comment="reported chat messages for the moderators (issue 21 points 3-4; "
    "server.moderation.store); migration 0009",
)
Index("ix_chat_reports_reporter", chat_reports.c.reporter_id, chat_reports.c.created_at)
Index("ix_chat_reports_status", chat_reports.c.status, chat_reports.c.created_at)

sanctions = Table(
    "sanctions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", String(16), nullable=False,
           comment="silence (a player's chat), ban_player or ban_address"),
    Column("target", String(64), nullable=False,
           comment="a player id, or an address or network (CIDR)"),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("until", DateTime(timezone=True), nullable=True, comment="null: until lifted"),
    Column("reason", Text, nullable=True),
    Column("moderator", String(64), nullable=False),
    Column("lifted_at", DateTime(timezone=True), nullable=True),
    comment="moderators' silences and bans (issue 21 point 4; server.moderation); "
    "migration 0009",
)
Index("ix_sanctions_kind_target", sanctions.c.kind, sanctions.c.target)

moderation_log = Table(
    "moderation_log",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("moderator", String(64), nullable=False, comment="X-Moderator, or admin"),
    Column("action", String(32), nullable=False,
           comment="hide, silence, unsilence, close_room, ban, unban, resolve"),
    Column("target", String(128), nullable=False),
    Column("detail", Text, nullable=False, comment="JSON object"),
    comment="the audit log: every moderator action (issue 21 point 4); migration 0009",
)
Index("ix_moderation_log_at", moderation_log.c.at)

game_gradings = Table(
    "game_gradings",
    metadata,
    Column("game_id", String(16), ForeignKey("games.id", ondelete="CASCADE"),
           primary_key=True),
    Column("grader", String(16), nullable=False, comment="the computer level graded against"),
    Column("graded_at", DateTime(timezone=True), nullable=False),
    Column("moves", Text, nullable=False,
           comment="JSON array of the graded moves (server.archive.grading), in play order"),
    Column("error", Text, nullable=True,
           comment="why the game could not be graded (no seats rows then); null: graded"),
    comment="an archived game graded once (issue 22 point 4; server.archive.grader); "
    "migration 0010",
)

game_seat_grades = Table(
    "game_seat_grades",
    metadata,
    Column("game_id", String(16), ForeignKey("games.id", ondelete="CASCADE"),
           primary_key=True),
    Column("seat", SmallInteger, primary_key=True),
    Column("decisions", SmallInteger, nullable=False,
           comment="decisions with a choice the seat's occupant made"),
    Column("exact", SmallInteger, nullable=False, comment="of those, as good as the best"),
    Column("cost", Float, nullable=False, comment="their total cost, points"),
    Column("accuracy", Float, nullable=True, comment="0..100; null: no decision"),
    Column("computer_moves", SmallInteger, nullable=False,
           comment="graded moves a computer made for a human seat (not counted)"),
    comment="each seat's grading summary (issue 22 point 4); migration 0010",
)

TABLES = (players, player_credentials, player_link_codes, games, game_seats, game_deals,
          game_logs, player_passkeys, passkey_challenges, matches, ratings, rating_history,
          rating_board_counts, player_blocks, player_mutes, game_chat,
          chat_reports, sanctions, moderation_log, game_gradings, game_seat_grades)
