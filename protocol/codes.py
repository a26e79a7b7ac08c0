"""Every error and reject code of the ``cribbage.v1`` protocol: a closed set, with meanings.

A code is stable and machine-readable; the ``message`` next to it is for people and may
change. Three families:

* engine codes (:data:`engine.CODES`, raised as ``engine.RulesError``): an action the rules
  refuse; sent in ``reject``;
* codec codes (:class:`protocol.codec.ProtocolError`): a frame that is not a valid message;
  sent in ``error``;
* server codes: room, seat, token, session and store conditions; sent in ``error`` (for a
  message other than ``act``), ``reject`` (for an ``act``) or an HTTP error body.

:data:`ERROR_CODES`, :data:`REJECT_CODES` and :data:`HTTP_ERROR_CODES` are the codes each
kind of answer may carry; :data:`ErrorCode`, :data:`RejectCode` and :data:`HttpErrorCode` are
the same sets as types (the JSON Schema lists every code with its meaning). A test scans
``server/`` and ``protocol/codec.py`` for codes, so a new one cannot ship without being
added here (and documented in docs/protocol.md).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import WithJsonSchema

import engine
from engine.errors import MEANINGS as ENGINE_MEANINGS

CODEC_MEANINGS: dict[str, str] = {
    "bad_frame": (
        "not decodable: not JSON/msgpack, not a map, or the wrong frame kind for the "
        "subprotocol (binary on JSON, text on msgpack)"
    ),
    "frame_too_large": (
        "the frame is longer than max_frame_bytes (told in welcome), counted in bytes (a "
        "text frame's UTF-8 bytes)"
    ),
    "bad_chat": (
        "a chat whose text is not chat text: blank after trimming, or holding a control, "
        "format or direction-override character or a line break (the hygiene of names)"
    ),
    "bad_message": (
        "decodes, but is not a valid client message (unknown type, missing, extra or "
        "malformed fields)"
    ),
    "bad_name": (
        "hello with a name that is not a display name: blank, more than 32 characters, "
        "no visible character (only spaces or invisible fillers such as U+3164), or a "
        "control or format character (a lone zero-width joiner included), or a line or "
        "paragraph separator (U+2028, U+2029); or a join taking a free seat with a name "
        "that reads like one of the table's own labels (You, Du, Computer (standard), "
        "Seat 2, …: docs/protocol.md, \"Seat names\")"
    ),
}
"""Codes of :class:`protocol.codec.ProtocolError`."""

PASSKEY_MEANINGS: dict[str, str] = {
    "bad_passkey": (
        "HTTP only (the passkey routes, 400): the body is not a passkey answer, or it does "
        "not verify (another origin or relying party, a challenge it was not made for, a "
        "bad signature, a signature counter that did not go up, a passkey the server does "
        "not know or whose player was deleted); nothing changed, the challenge is used up"
    ),
    "passkey_challenge_not_found": (
        "HTTP only (the passkey routes, 404): no such challenge: unknown, already used, "
        "expired (passkey_challenge_seconds), of the other ceremony or of another player; "
        "ask for new options"
    ),
    "passkeys_unavailable": (
        "HTTP only (the passkey routes, 400): no relying party id: the server was reached "
        "at an IP address and neither passkey_rp_id nor public_url is set"
    ),
    "passkey_not_found": "HTTP only (404): the player holds no passkey of that id",
    "too_many_passkeys": (
        "HTTP only (409): the player already holds max_passkeys_per_player passkeys; "
        "nothing changed"
    ),
    "too_many_passkey_attempts": (
        "HTTP only (the passkey routes, 429 with Retry-After): this client address made "
        "more passkey requests than passkey_attempts_per_minute allows; nothing was done; "
        "wait retry_after seconds"
    ),
}
"""Codes of the passkey routes (``server.passkeys``)."""

SOCIAL_MEANINGS: dict[str, str] = {
    "bad_challenge": "a challenge to oneself: challenge another player",
    "challenge_refused": (
        "the challenged player blocked you: they take no challenges from you (whether "
        "they are online is not told)"
    ),
    "player_blocked": "you blocked this player: unblock them to challenge them",
    "challenge_not_found": (
        "no such challenge to this connection's player (unknown, not theirs to answer, or "
        "no longer kept)"
    ),
    "challenge_closed": (
        "the challenge was already accepted, declined or has expired; nothing changed "
        "(the frame about it was sent again)"
    ),
    "too_many_challenges": (
        "this player made challenges_per_minute challenges in the last minute; wait "
        "retry_after seconds"
    ),
    "too_many_address_challenges": (
        "this address made address_challenges_per_minute challenges in the last minute; "
        "wait retry_after seconds"
    ),
    "too_many_pending_challenges": (
        "this player has max_pending_challenges challenges waiting for an answer; wait for "
        "one to be answered or to expire"
    ),
    "seat_blocked": (
        "a player at this table blocked you, or you blocked one of them: you may watch "
        "but not sit (a seat you already hold stays yours)"
    ),
    "bad_block": "HTTP only (400): a player cannot block themself",
    "too_many_blocks": "HTTP only (409): the player has blocked max_blocks players already",
}
"""Codes of challenges, blocks and online now (issue 20; ``server.social``)."""

SERVER_MEANINGS: dict[str, str] = {
    "hello_required": "a message other than hello or ping before hello",
    "already_welcomed": "a second hello on the same connection",
    "not_joined": (
        "resync, history, leave, or set_computer without a room, from a connection that "
        "follows no room"
    ),
    "not_seated": "hint or act from a connection without a seat (spectators cannot act)",
    "hints_disabled": "hint in a room whose room_settings.hints is false",
    "room_not_found": "no such room (or it expired after 24 h idle)",
    "bad_seat": "no such seat in this room",
    "seat_taken": "the seat is held by another token",
    "already_seated": (
        "join of a free seat with a token that already holds another seat of the room"
    ),
    "name_taken": (
        "join of a free seat with a name that reads like the name of another seat of the "
        "room (compared after NFKC, case folding, look-alike letters, and without spaces "
        "and punctuation: docs/protocol.md, \"Seat names\"); choose another name"
    ),
    "bad_token": (
        "the token does not hold that seat (or no longer does), was not issued by this "
        "server, or is not the room's creator token (set_computer)"
    ),
    "bad_options": (
        "a create_room of the right shape with a value not allowed inside options, "
        "computers or room (e.g. a target of 100, partnerships without 4 players, an "
        "unknown level or room setting), or a set_computer with an unknown level; over "
        "HTTP, any POST /api/rooms body that is not valid"
    ),
    "player_required": (
        "join of a free human seat of a rated room from a connection whose hello presented "
        "no player (hello.player); nothing changed. Say hello with a player, or watch "
        "(a join without a seat); a seat already held is resumed with its token as ever"
    ),
    "rated_options": (
        "a create_room (or POST /api/rooms, 400) with room.rated true and options other "
        "than the standard game: target 121, no muggins, no lowball, no backup10 "
        "(docs/rules.md §9.2); nothing was created"
    ),
    "rated_turn_clock": (
        "a create_room (or POST /api/rooms, 400) with room.rated true and a turn_seconds "
        "outside 30 to 120 (a rated room always has the turn clock, 60 s by default); "
        "nothing was created"
    ),
    "not_started": "seats are still free; the game has not started",
    "game_not_found": "no archived game has that id (or it is not archived yet)",
    "database_unavailable": (
        "the SQL database (archived games, players) cannot be reached; try again"
    ),
    "game_abandoned": (
        "the room's game was abandoned (the room stayed idle until shortly before its "
        "expiry; it is archived as abandoned): no action is accepted any more"
    ),
    "busy": (
        "nothing changed, retry (same action_id): the room kept changing under a write for "
        "20 attempts, or (reject with retry_after) the server has more actions in hand "
        "than it may work on and wait for (max_inflight_actions, max_waiting_actions, "
        "action_queue_seconds); for a hint (error with retry_after), the server is making "
        "hints_in_flight hints already: ask again after retry_after"
    ),
    "too_many_hints": (
        "error (ref hint, with retry_after): this client address had more hints made in the "
        "last minute than hints_per_minute allows (a repeat of a hint already made is not "
        "counted); nothing was started; ask again after retry_after"
    ),
    "store_unavailable": "the room store could not be reached; nothing changed, retry",
    "outcome_unknown": (
        "the store failed in the middle of a commit: the action may or may not have been "
        "applied; re-send the same action_id to learn the outcome (it is applied at most "
        "once)"
    ),
    "action_id_reused": (
        "an action_id this seat already used in this game, with a different action; "
        "nothing changed"
    ),
    "internal": "a server fault (logged); nothing changed",
    "too_large": (
        "HTTP only: the request body is longer than max_body_bytes (16 KiB by default); "
        "refused by its Content-Length before it is read"
    ),
    "headers_too_large": (
        "HTTP only (431): the request line and headers are longer than max_header_bytes "
        "(64 KiB by default); the connection is closed"
    ),
    "not_player_token": (
        "hello or join with a room's creator token: it only proves the creator "
        "(set_computer) and never holds a seat; use the player token from welcome"
    ),
    "origin_not_allowed": (
        "HTTP only: POST /api/rooms from a web page whose origin the server does not "
        "allow (allowed_origins); the same refusal at /ws is an HTTP 403 handshake answer"
    ),
    "chat_off": "the room's chat is off (room setting chat); nothing was said",
    "chat_presets_only": (
        "the room's chat takes preset phrases only (room setting chat: presets, the "
        "default of rated and quick-match tables); send a preset id instead of text"
    ),
    "chat_too_long": (
        "the chat text is longer than chat_max_chars characters (200 by default); nothing "
        "was said"
    ),
    "chat_needs_player": (
        "only a connection whose hello presented a player (POST /api/players) may chat, "
        "mute or report"
    ),
    "chat_silenced": (
        "a moderator silenced this player until retry_after seconds from now; nothing was "
        "said"
    ),
    "chat_rate_limited": (
        "this player said more than chat_per_player_seconds messages a second (1 by "
        "default, bursts of chat_player_burst); wait retry_after seconds"
    ),
    "room_chat_busy": (
        "the room's talk is at its limit (chat_room_rate messages a second, 10 by "
        "default); wait retry_after seconds"
    ),
    "message_not_found": (
        "chat_mute or chat_report named a message this room no longer keeps (or never "
        "had, or that this connection may not read)"
    ),
    "bad_mute": "chat_mute or chat_report of one's own message, or muting oneself",
    "too_many_mutes": (
        "this player muted as many players as max_mutes allows (500 by default); unmute "
        "some first"
    ),
    "report_limited": (
        "this player filed more reports than reports_per_hour allows (10 by default); "
        "nothing was filed; wait retry_after seconds"
    ),
    "room_closed": (
        "a moderator closed the room: it takes no join and no action any more (a game in "
        "progress was abandoned and archived as such)"
    ),
    "banned": (
        "a moderator banned this player or this client address: the hello (or, over "
        "HTTP, the request) is refused and the connection is closed (1008)"
    ),
    "admin_off": (
        "HTTP only: the admin API is off on this server (admin_token is not set)"
    ),
    "bad_admin_token": (
        "HTTP only: the admin API needs Authorization: Bearer <admin_token>; that was not it"
    ),
    "report_not_found": "HTTP only: no report has that id",
    "sanction_not_found": "HTTP only: no silence or ban has that id",
    "bad_sanction": (
        "HTTP only: a silence or ban request that is not valid (no player, an address that "
        "is not an IP address or a network, seconds out of range)"
    ),
    "rate_limited": (
        "the connection sent frames faster than its limit (frame_rate, frame_burst); the "
        "frame was not handled (an act is answered reject rate_limited with its action_id "
        "and was not applied; any other message error rate_limited with its type in ref); "
        "wait retry_after seconds and send it again. A connection that keeps flooding is "
        "closed (1008)"
    ),
    "too_many_rooms": (
        "this client address created more rooms than rooms_per_minute allows; nothing was "
        "created; wait retry_after seconds (HTTP: 429 with Retry-After)"
    ),
    "too_many_joins": (
        "this client address had more joins refused than failed_joins_per_minute allows; "
        "the join was not tried; wait retry_after seconds"
    ),
    "too_many_spectators": (
        "a join without a seat (to watch) of a room that already has max_spectators_per_room "
        "spectators (200 by default; counted over every server process); nothing changed; "
        "try again later or take a seat"
    ),
    "too_many_connections": (
        "HTTP only (the WebSocket handshake of /ws, 429): this client address already holds "
        "max_connections_per_address open connections"
    ),
    "request_id_reused": (
        "create_room (or POST /api/rooms, 409) with a request_id that already created a "
        "room with other options, computers or room settings; nothing was created"
    ),
    "too_many_room_reads": (
        "HTTP only (GET /api/rooms/{id}, 429 with Retry-After): this client address read "
        "more room summaries than room_reads_per_minute allows; nothing was read; wait "
        "retry_after seconds"
    ),
    "player_not_found": (
        "no player has that id (HTTP 404; on the WebSocket: a challenge to nobody, or to a "
        "deleted player)"
    ),
    "queue_needs_player": (
        "queue_join from a connection without a player: quick match is for players only "
        "(say hello with hello.player); nothing changed"
    ),
    "not_queued": (
        "queue_accept_computer from a connection that is not waiting in a queue"
    ),
    "no_computer_offer": (
        "queue_accept_computer before the computer is offered (queue_status.computer_offer, "
        "after queue_computer_offer_seconds of waiting); the wait goes on"
    ),
    "too_many_queue_joins": (
        "this player joined queues more often than queue_joins_per_minute allows (counted "
        "over every server process); nothing changed; wait retry_after seconds"
    ),
    "too_many_address_queue_joins": (
        "this client address joined queues more often than "
        "queue_joins_per_minute_per_address allows (counted over every server process); "
        "nothing changed; wait retry_after seconds"
    ),
    "player_deleted": (
        "HTTP only (410): the player deleted themself; their profile and history are gone "
        "(their seats in other players' games show as a deleted player)"
    ),
    "profile_private": (
        "HTTP only (403): the player made their profile private; only they see it (send "
        "their Authorization: Player ...)"
    ),
    "bad_page_request": (
        "HTTP only (400, GET /api/players/{id}/games): limit is not a whole number from 1 "
        "to history_max_page_size, or cursor is not one a page gave"
    ),
    "too_many_leaderboard_reads": (
        "HTTP only (GET /api/leaderboards/{kind}, 429 with Retry-After): this client address "
        "read more leaderboards than leaderboard_reads_per_minute allows; nothing was read; "
        "wait retry_after seconds"
    ),
    "bad_around_player": (
        "HTTP only (400, GET /api/leaderboards/{kind}): around is not a player id (1 to 32 "
        "of A-Z, a-z, 0-9, _ and -); nothing was read"
    ),
    "bad_table_kind": (
        "HTTP only (404, GET /api/leaderboards/{kind}): the table kind is not one of 2, 3, "
        "4, 2x2"
    ),
    "too_many_history_reads": (
        "HTTP only (GET /api/players/{id} and /games, 429 with Retry-After): this client "
        "address read more profiles and pages of games than history_reads_per_minute "
        "allows; nothing was read; wait retry_after seconds"
    ),
    "too_many_game_reads": (
        "HTTP only (GET /api/games/{id}, 429 with Retry-After): this client address read "
        "more archived games than game_reads_per_minute allows; nothing was read; wait "
        "retry_after seconds"
    ),
    "bad_player": (
        "a player credential (HTTP: Authorization: Player <id>.<secret>; hello.player) that "
        "is missing where needed, malformed, unknown, wrong, or of a deleted player "
        "(HTTP 401); after hello the connection stays open and may say hello again"
    ),
    "bad_request": (
        "HTTP only (/api/players...): a body that is not a JSON object of the documented "
        "fields and values; nothing changed"
    ),
    "bad_code": (
        "HTTP only (POST /api/players/link): no live one-time code is that (never made, "
        "expired, already used, or a wrong letter); the try counts against the address's "
        "code_tries_per_hour and, when its first half names a live code, that code's tries"
    ),
    "too_many_tries": (
        "HTTP only (POST /api/players/link): that one-time code had link_code_tries wrong "
        "tries and is dead; make a new code on the other device"
    ),
    "too_many_players": (
        "HTTP only (POST /api/players, 429 with Retry-After): this client address made more "
        "players than players_per_hour allows; nothing was made"
    ),
    "too_many_link_codes": (
        "HTTP only (POST /api/players/me/link, 429 with Retry-After): this player made more "
        "one-time codes than link_codes_per_hour allows; nothing was made"
    ),
    "too_many_code_tries": (
        "HTTP only (POST /api/players/link, 429 with Retry-After): this client address "
        "entered more wrong codes than code_tries_per_hour allows; the code was not tried"
    ),
    "too_many_lobby_subscriptions": (
        "lobby_subscribe from a connection of a client address that already has "
        "max_lobby_subscriptions_per_address connections following the lobby on this "
        "server process (20 by default); nothing changed: stop following it on another "
        "connection (lobby_unsubscribe, or close it) and ask again"
    ),
    "too_many_player_lobby_subscriptions": (
        "lobby_subscribe from a connection of a player (hello.player) that already has "
        "max_lobby_subscriptions_per_player connections following the lobby on this server "
        "process (5 by default); nothing changed"
    ),
    "too_many_lobby_reads": (
        "HTTP only (GET /api/lobby, 429 with Retry-After): this client address read the "
        "lobby more often than lobby_reads_per_minute allows; nothing was read; wait "
        "retry_after seconds (or follow it over the WebSocket: lobby_subscribe)"
    ),
    "bad_lobby_filter": (
        "HTTP only (400, GET /api/lobby): a filter that is not one of players=2|3|4, "
        "partnerships=true|false, language=en|da|sv, rated=true|false; nothing was read"
    ),
    **PASSKEY_MEANINGS,
    **SOCIAL_MEANINGS,
}
"""Codes the server itself sends (room service, sessions, HTTP)."""

INTERNAL_MEANINGS: dict[str, str] = {
    "conflict": (
        "never sent: the room moved on under a computer seat's conditional action "
        "(RoomService.act with expected_version); the computer decides again"
    ),
}
"""Codes used between server parts only; listed so the scan of ``server/`` knows them."""

MEANINGS: dict[str, str] = {**ENGINE_MEANINGS, **CODEC_MEANINGS, **SERVER_MEANINGS}
"""Every code a client may receive, with its meaning."""

ENGINE_CODES: frozenset[str] = frozenset(engine.CODES)
CODEC_CODES: frozenset[str] = frozenset(CODEC_MEANINGS)
SERVER_CODES: frozenset[str] = frozenset(SERVER_MEANINGS)

ERROR_CODES: tuple[str, ...] = (
    "bad_frame", "frame_too_large", "bad_message", "bad_name", "hello_required",
    "already_welcomed", "not_joined", "not_seated", "hints_disabled", "room_not_found",
    "bad_seat", "seat_taken", "already_seated", "name_taken", "bad_token", "not_player_token",
    "bad_options", "busy", "store_unavailable", "outcome_unknown", "internal",
    "rate_limited", "too_many_rooms", "too_many_joins", "too_many_spectators", "too_many_hints",
    "request_id_reused", "bad_player", "database_unavailable", "player_required",
    "rated_options", "rated_turn_clock", "too_many_lobby_subscriptions",
    "too_many_player_lobby_subscriptions", "bad_challenge", "challenge_refused",
    "player_blocked", "challenge_not_found", "challenge_closed", "too_many_challenges",
    "too_many_address_challenges", "too_many_pending_challenges", "seat_blocked",
    "player_not_found", "queue_needs_player", "not_queued",
    "no_computer_offer", "too_many_queue_joins", "too_many_address_queue_joins",
    "bad_chat", "chat_off", "chat_presets_only", "chat_too_long", "chat_needs_player",
    "chat_silenced", "chat_rate_limited", "room_chat_busy", "message_not_found",
    "report_limited", "bad_mute", "too_many_mutes", "bad_block", "too_many_blocks",
    "room_closed", "banned",
)
"""Codes of an ``error`` frame: the message was not handled and nothing changed (except
``outcome_unknown``: see its meaning)."""

REJECT_CODES: tuple[str, ...] = (
    *sorted(ENGINE_CODES),
    "not_seated", "bad_token", "not_started", "room_not_found", "busy", "store_unavailable",
    "outcome_unknown", "action_id_reused", "internal", "rate_limited", "game_abandoned",
    "room_closed",
)
"""Codes of a ``reject`` frame: an ``act`` was refused and nothing changed (except
``outcome_unknown``: the outcome is not known yet; re-send the same ``action_id``)."""

HTTP_ERROR_CODES: tuple[str, ...] = (
    "bad_options", "too_large", "headers_too_large", "origin_not_allowed", "room_not_found",
    "store_unavailable", "outcome_unknown", "internal", "too_many_rooms",
    "too_many_connections", "too_many_room_reads", "request_id_reused", "game_not_found",
    "database_unavailable", "bad_player", "bad_request", "bad_name", "bad_code",
    "too_many_tries", "too_many_players", "too_many_link_codes", "too_many_code_tries",
    "player_not_found", "player_deleted", "profile_private", "bad_page_request",
    "too_many_history_reads", "too_many_game_reads", "rated_options", "rated_turn_clock",
    "too_many_leaderboard_reads", "bad_table_kind", "bad_around_player",
    "too_many_lobby_reads", "bad_lobby_filter",
    *PASSKEY_MEANINGS, "bad_block", "too_many_blocks", "bad_mute", "too_many_mutes",
    "banned", "admin_off", "bad_admin_token", "report_not_found", "sanction_not_found",
    "bad_sanction", "room_closed", "message_not_found",
)
"""Codes of an HTTP error body ``{"error": {"code", "message"}}`` (``outcome_unknown``: a
``POST /api/rooms`` whose write the store may or may not have made, 503)."""


def _closed_set(name: str, codes: tuple[str, ...]) -> Any:
    """A ``Literal`` of ``codes`` whose JSON Schema lists each code with its meaning."""
    schema = {
        "title": name,
        "type": "string",
        "oneOf": [{"const": c, "description": MEANINGS[c]} for c in codes],
    }
    return Annotated[Literal[codes], WithJsonSchema(schema)]  # type: ignore[valid-type]


ErrorCode = _closed_set("ErrorCode", ERROR_CODES)
"""The code of an ``error`` frame."""

RejectCode = _closed_set("RejectCode", REJECT_CODES)
"""The code of a ``reject`` frame."""

HttpErrorCode = _closed_set("HttpErrorCode", HTTP_ERROR_CODES)
"""The code of an HTTP error body."""
