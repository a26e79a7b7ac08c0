"""Every message the server sends, built in one place, as plain data.

Each function returns the plain data of one server message of ``protocol.messages``
(``docs/protocol.md``); the session encodes it for its connection. A test checks every
builder's output against its message model, so the wire cannot drift from the contract.
"""

from __future__ import annotations

from typing import Any

from protocol import messages as m
from protocol.codec import ProtocolError, is_clean

from .chat import rules as chat_rules
from .store.base import RoomRecord

SERVER_NAME = "cribbage-server/0.1"


def welcome(
    encoding: str, player_token: str, name: str, max_frame_bytes: int,
    player: str | None = None, frame_rate: float = 0.0, frame_burst: int = 0,
) -> dict[str, Any]:
    """``welcome``: the answer to ``hello`` (``player``: the authenticated player's id,
    sent only when there is one; ``frame_rate`` (frames a second, 0: no limit) and
    ``frame_burst``: the connection's frame budget, so that a client can keep within it)."""
    frame = {
        "type": "welcome",
        "protocol": m.PROTOCOL_VERSION,
        "encoding": encoding,
        "player_token": player_token,
        "name": name,
        "server": SERVER_NAME,
        "max_frame_bytes": max_frame_bytes,
        "frame_rate": frame_rate,
        "frame_burst": frame_burst,
    }
    if player is not None:
        frame["player"] = player
    return frame


def room_created(
    record: RoomRecord, creator: str, base_url: str, settings: dict[str, Any]
) -> dict[str, Any]:
    """``room_created`` (also the body of ``POST /api/rooms``'s answer, less ``type``):
    ``{"type", "room", "url", "options", "creator_token", "room_settings", "computers"}``
    (``computers``: seat (as text) -> level)."""
    return {
        "type": "room_created",
        "room": record.id,
        "url": f"{base_url.rstrip('/')}/r/{record.id}",
        "options": record.options,
        "creator_token": creator,
        "room_settings": settings,
        "computers": {str(i): s.level for i, s in enumerate(record.seats)
                      if s.kind == "computer"},
    }


def snapshot(
    record: RoomRecord,
    seat: int | None,
    settings: dict[str, Any],
    seats: list[dict[str, Any]],
    view: dict[str, Any] | None,
    *,
    seat_token: str | None = None,
    missed: list[dict[str, Any]] | None = None,
    chat: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``snapshot``: the room at ``record.version`` as ``seat`` sees it.

    Args:
        chat: the room's last messages this connection may read, as readers get them (the
            snapshot that answers a ``join``); omitted otherwise.
        missed: ``[{"version", "events"}]``, the versions the connection did not get as
            updates, with their events as the seat may see them, when the server knows
            them (a join that started the game or came back with ``since``, a catch-up
            after missed updates); omitted otherwise.
    """
    frame: dict[str, Any] = {
        "type": "snapshot",
        "room": record.id,
        "version": record.version,
        "seat": seat,
        "status": record.status,
        "options": record.options,
        "room_settings": settings,
        "seats": seats,
        "view": view,
    }
    if seat_token is not None:
        frame["seat_token"] = seat_token
    if record.game_from:
        frame["history_from"] = record.game_from
    if missed is not None:
        frame["missed"] = missed
    if chat is not None:
        frame["chat"] = chat
    return frame


def update(
    room: str,
    version: int,
    status: str,
    events: list[dict[str, Any]],
    patch: list[dict[str, Any]],
    seats: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``update``: one version's events and the patch from the previous view."""
    frame: dict[str, Any] = {
        "type": "update",
        "room": room,
        "version": version,
        "status": status,
        "events": events,
        "patch": patch,
    }
    if seats is not None:
        frame["seats"] = seats
    return frame


def ack(action_id: str, version: int, duplicate: bool) -> dict[str, Any]:
    """``ack``: an action was applied (now, or earlier for a ``duplicate``)."""
    return {"type": "ack", "action_id": action_id, "version": version, "duplicate": duplicate}


def reject(
    action_id: str, code: str, message: str, retry_after: float | None = None
) -> dict[str, Any]:
    """``reject``: an action was not applied (or, for ``outcome_unknown``, may not be);
    ``retry_after`` (seconds) with ``rate_limited`` and with a ``busy`` from the overload
    gate."""
    frame: dict[str, Any] = {
        "type": "reject", "action_id": action_id, "code": code, "message": message}
    if retry_after is not None:
        frame["retry_after"] = retry_after
    return frame


def error(
    code: str, message: str, ref: str | None = None, retry_after: float | None = None
) -> dict[str, Any]:
    """``error``: a message could not be handled; ``retry_after`` (seconds) with the codes
    of a limit (``rate_limited``, ``too_many_rooms``, ``too_many_joins``)."""
    frame: dict[str, Any] = {"type": "error", "code": code, "message": message, "ref": ref}
    if retry_after is not None:
        frame["retry_after"] = retry_after
    return frame


def protocol_error(exc: ProtocolError) -> dict[str, Any]:
    """The answer to a frame that is not a valid client message: ``reject`` for an ``act``
    whose ``action_id`` is text of 1..64 characters (so the client can match it), with the
    codec's ``reject_code`` (``bad_card``, ``system_only`` or ``bad_action``), else ``error``
    with the codec's code.

    Whatever the client sent, the answer can be encoded: an ``action_id`` holding a lone
    surrogate is never echoed (the answer is then an ``error``), and ``ProtocolError`` keeps
    none in its ``message`` or ``ref`` (``protocol.codec``).
    """
    raw = exc.raw if isinstance(exc.raw, dict) else None
    action_id = raw.get("action_id") if raw else None
    if (
        exc.code == "bad_message"
        and exc.ref == "act"
        and isinstance(action_id, str)
        and 0 < len(action_id) <= 64
        and is_clean(action_id)
    ):
        return reject(action_id, exc.reject_code, exc.message)
    return error(exc.code, exc.message, exc.ref)


def presence(
    room: str, seat: int, connected: bool, name: str | None, standin: bool,
    takeover_at: int | None = None, abandoned: bool = False,
) -> dict[str, Any]:
    """``presence``: a seat's connection state (or a computer's stand-in, or when the
    computer takes over the away seat: ``takeover_at``, Unix ms; or, in a rated room, that
    the seat was abandoned during this game: ``abandoned``) changed."""
    return {
        "type": "presence",
        "room": room,
        "seat": seat,
        "connected": connected,
        "name": name,
        "computer_standin": standin,
        "takeover_at": takeover_at,
        "abandoned": abandoned,
    }


def pong(
    nonce: int | str | None, now: float, room: str | None = None, version: int | None = None
) -> dict[str, Any]:
    """``pong``: the answer to ``ping``, with the room's latest version this server knows
    when the connection is in a room (a client behind it sends ``resync``)."""
    frame: dict[str, Any] = {"type": "pong", "nonce": nonce, "time": now}
    if room is not None:
        frame["room"] = room
        frame["version"] = version
    return frame


def hint(room: str, seat: int, version: int, suggestion: dict[str, Any]) -> dict[str, Any]:
    """``hint``: the ``expert`` player's suggestion for a seat."""
    return {"type": "hint", "room": room, "seat": seat, "version": version,
            "suggestion": suggestion}


def left(room: str) -> dict[str, Any]:
    """``left``: the answer to ``leave``."""
    return {"type": "left", "room": room}


def lobby(tables: list[dict[str, Any]]) -> dict[str, Any]:
    """``lobby``: the answer to ``lobby_subscribe``, the listed tables (``server.lobby``)."""
    return {"type": "lobby", "tables": tables}


def lobby_update(added: list[dict[str, Any]], changed: list[dict[str, Any]],
                 removed: list[str]) -> dict[str, Any]:
    """``lobby_update``: the lobby's tables added, changed (whole entries) and removed (room
    ids) since the follower's last lobby frame."""
    return {"type": "lobby_update", "added": added, "changed": changed, "removed": removed}


def history(
    room: str, game: int, first: int, versions: list[dict[str, Any]], more: bool,
    public: bool,
) -> dict[str, Any]:
    """``history``: versions of the current game with their (redacted) events."""
    return {"type": "history", "room": room, "game": game, "first": first,
            "versions": versions, "more": more, "public": public}


def queue_status(queue: str, table: dict[str, Any], waiting: int, waited: float,
                 computer_offer: bool) -> dict[str, Any]:
    """``queue_status``: how a quick-match wait stands (``server.matchmaking``)."""
    return {"type": "queue_status", "queue": queue, "table": table,
            "waiting": max(1, waiting), "waited": round(max(0.0, waited), 1),
            "computer_offer": computer_offer}


def queue_left(queue: str, reason: str) -> dict[str, Any]:
    """``queue_left``: a wait ended without a table (``cancelled``, ``replaced``,
    ``expired``, ``failed``)."""
    return {"type": "queue_left", "queue": queue, "reason": reason}


def matched(queue: str, table: dict[str, Any], room: str, seat: int, seat_token: str,
            url: str, match: str, players: list[str | None], computer: bool
            ) -> dict[str, Any]:
    """``matched``: a quick-match table is complete; the player holds ``seat``."""
    return {"type": "matched", "queue": queue, "table": table, "room": room, "seat": seat,
            "seat_token": seat_token, "url": url, "match": match, "players": players,
            "computer": computer}



def challenge_sent(info: dict[str, Any]) -> dict[str, Any]:
    """``challenge_sent``: to the challenger, the challenge (``ChallengeInfo``) pending."""
    return {"type": "challenge_sent", "challenge": info}


def challenge_received(info: dict[str, Any]) -> dict[str, Any]:
    """``challenge_received``: to the challenged player, a challenge pending for them."""
    return {"type": "challenge_received", "challenge": info}


def challenge_accepted(info: dict[str, Any], room: str, seat: int) -> dict[str, Any]:
    """``challenge_accepted``: to both players, the ``room`` made and this one's ``seat``
    (the challenger 0, the challenged 1)."""
    return {"type": "challenge_accepted", "challenge": info, "room": room, "seat": seat}


def challenge_declined(info: dict[str, Any]) -> dict[str, Any]:
    """``challenge_declined``: to both players, the challenge declined (or ended by a
    block)."""
    return {"type": "challenge_declined", "challenge": info}


def challenge_expired(info: dict[str, Any]) -> dict[str, Any]:
    """``challenge_expired``: to both players, the challenge expired unanswered."""
    return {"type": "challenge_expired", "challenge": info}


def chat(room: str, entry: dict[str, Any]) -> dict[str, Any]:
    """``chat``: one message of the room's talk, as readers get it (``entry`` is the stored
    entry; its author's player id ``by`` is left out: ``server.chat.rules.public``)."""
    return {"type": "chat", "room": room, "message": chat_rules.public(entry)}


def chat_hidden(room: str, message_id: int) -> dict[str, Any]:
    """``chat_hidden``: a moderator hid message ``message_id`` of ``room``."""
    return {"type": "chat_hidden", "room": room, "id": int(message_id)}


def chat_muted(player: str, name: str | None, muted: bool, blocked: bool) -> dict[str, Any]:
    """``chat_muted``: the answer to ``chat_mute`` / ``chat_unmute``."""
    return {"type": "chat_muted", "player": player, "name": name, "muted": muted,
            "blocked": blocked}


def chat_reported(message_id: int, report: str) -> dict[str, Any]:
    """``chat_reported``: the report of message ``message_id`` is filed as ``report``."""
    return {"type": "chat_reported", "message": int(message_id), "report": report}
