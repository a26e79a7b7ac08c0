"""AsyncAPI 3.0 document of the ``/ws`` protocol, generated from the message models.

``python -m protocol.asyncapi`` rewrites ``docs/asyncapi.json``; ``python -m protocol.asyncapi
--check`` exits 1 when that file is out of date (a test does the same check, and validates
the file with the official AsyncAPI parser, ``@asyncapi/parser``).

What the document says, and where it comes from:

* one channel, ``/ws``, whose WebSocket binding and description name the two subprotocols
  (``cribbage.v1.json``: a JSON object per text frame; ``cribbage.v1.msgpack``: a msgpack
  map per binary frame; the same messages in both);
* every client message (:data:`protocol.messages.ClientMessage`) as a ``receive``
  operation (the server receives it) with the messages that answer it as its ``reply``,
  and every server message (:data:`protocol.messages.ServerMessage`) as a ``send``
  operation;
* every payload's schema: the JSON Schema pydantic writes for the models (the same one as
  ``docs/protocol.schema.json``), under ``components.schemas``, written down to the
  AsyncAPI Schema Object (a superset of JSON Schema draft 07): an OpenAPI-style
  ``discriminator`` object becomes the property name, a ``$ref`` with siblings is wrapped
  in ``allOf``; the engine's shared unions (``Event``, ``Action``, ``ClientAction``,
  ``Suggestion``) and the closed sets of codes (``ErrorCode``, ``RejectCode``: each code
  with its meaning) are referenced by name.

The prose here is short on purpose: ``docs/protocol.md`` is the full description.
"""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from . import shapes
from .actions import Action, ClientAction
from .codec import JSON_SUBPROTOCOL, MSGPACK_SUBPROTOCOL
from .codes import ERROR_CODES, MEANINGS, REJECT_CODES, ErrorCode, RejectCode
from .generated import write_or_check
from .messages import PROTOCOL_VERSION, ClientMessage, ServerMessage
from .schema import named_schemas, reference_shared

ASYNCAPI_PATH = Path(__file__).resolve().parent.parent / "docs" / "asyncapi.json"
"""Where the generated document lives in the repository."""

ASYNCAPI_VERSION = "3.0.0"
CHANNEL = "ws"
REF = "#/components/schemas/{model}"

SHARED: dict[str, Any] = {
    "Event": shapes.Event,
    "Action": Action,
    "ClientAction": ClientAction,
    "Suggestion": shapes.Suggestion,
    "ErrorCode": ErrorCode,
    "RejectCode": RejectCode,
}
"""Types inlined by pydantic that the document names once and references."""


def _models(union: Any) -> list[type[BaseModel]]:
    """The message models of a discriminated union, in the union's order."""
    inner = typing.get_args(union)[0]
    return list(typing.get_args(inner))


CLIENT_MODELS = _models(ClientMessage)
SERVER_MODELS = _models(ServerMessage)


def message_type(model: type[BaseModel]) -> str:
    """The ``type`` value of a message model."""
    return typing.get_args(model.model_fields["type"].annotation)[0]


REPLIES: dict[str, tuple[list[str], str]] = {
    "Hello": (["Welcome", "Error"],
              "`welcome`; `error` `already_welcomed` for a second `hello`."),
    "CreateRoom": (
        ["RoomCreated", "Error"],
        "`room_created`; `error` `bad_options` when a value inside `options`, `computers` "
        "or `room` is not allowed, `bad_message` when the message is not of the right "
        "shape (or a store code).",
    ),
    "SetComputer": (
        ["Error"],
        "No answer frame of its own: success shows as the `update` whose `seats` show the "
        "computer (sent to every connection following the room), failure as an `error` "
        "with `ref: \"set_computer\"` (`bad_token`, `seat_taken`, `bad_seat`, "
        "`bad_options`, `room_not_found`, `not_joined`).",
    ),
    "HintRequest": (["Hint", "Error"],
                    "`hint`; `error` `hints_disabled` or `not_seated`, or `busy` with "
                    "`retry_after` (the server makes `hints_in_flight` hints at once: ask "
                    "again after it)."),
    "Join": (
        ["Snapshot", "Error"],
        "`snapshot` (with `seat_token` when a seat was taken or resumed, and `missed` when "
        "the join started the game or named `since`); `error` `room_not_found`, "
        "`bad_seat`, `seat_taken`, `already_seated`, `bad_token` (or a store code). "
        "`seat` null or left out: watch as a spectator.",
    ),
    "Act": (
        ["Ack", "Reject", "Error", "Snapshot"],
        "`ack` (after the `update` the action made, on the same connection) or `reject` "
        "with the `action_id`. When that `update` has not reached the connection within "
        "5 s, a `snapshot` of the room (at its latest version, which includes the action) "
        "is sent in place of the missing updates, and then the `ack`. An `act` that does "
        "not validate is answered `reject` when its `action_id` is a string of 1 to 64 "
        "characters (`bad_card` for a card text that is not a card, `system_only` for "
        "`answer_timeout`, else `bad_action`), otherwise `error` `bad_message` with "
        "`ref: \"act\"`; a valid `act` before `hello` gets `error` `hello_required`, one "
        "without a seat `reject` `not_seated` (docs/protocol.md, \"Fine points\").",
    ),
    "Resync": (
        ["Snapshot", "Error"],
        "`snapshot` (with `missed` after `since`: `[]` when `since` is the room's version, "
        "absent when it is more than 500 versions back or newer than the room's); `error` "
        "`not_joined`.",
    ),
    "HistoryRequest": (["History", "Error"], "`history`; `error` `not_joined`."),
    "Leave": (["Left", "Error"], "`left`; `error` `not_joined`."),
    "Ping": (["Pong", "Error"], "`pong` with the same `nonce` (also before `hello`)."),
    "LobbySubscribe": (
        ["Lobby", "Error"],
        "`lobby` (the public tables waiting for players that pass the filters), then "
        "`lobby_update` frames unasked; `error` `too_many_lobby_subscriptions` or "
        "`too_many_player_lobby_subscriptions` (a limit), or a store code.",
    ),
    "LobbyUnsubscribe": (
        ["Error"],
        "No answer frame of its own: the `lobby_update` frames stop (`error` only "
        "`hello_required` before `hello`).",
    ),
    "ChallengeRequest": (
        ["ChallengeSent", "Error"],
        "`challenge_sent`; `error` `player_required`, `bad_challenge`, `bad_options`, "
        "`player_not_found`, `player_blocked`, `challenge_refused`, `too_many_challenges`, "
        "`too_many_address_challenges`, `too_many_pending_challenges`."),
    "ChallengeAnswer": (
        ["ChallengeAccepted", "ChallengeDeclined", "Error"],
        "`challenge_accepted` or `challenge_declined`; `error` `challenge_not_found`, "
        "`challenge_closed` (then the challenge's frame as it is)."),
    "QueueJoin": (
        ["QueueStatus", "Matched", "Error"],
        "`queue_status` (then more of them every few seconds, and `matched` when the table "
        "is complete); `matched` at once when a match of the player's was made that none "
        "of their connections heard of; `error` `queue_needs_player`, `bad_options`, "
        "`rated_options`, `too_many_queue_joins`, `too_many_address_queue_joins` (or a "
        "store code).",
    ),
    "QueueLeave": (
        ["QueueLeft", "Matched", "Error"],
        "`queue_left` `cancelled`; `matched` when the match was already made.",
    ),
    "QueueAcceptComputer": (
        ["Matched", "Error"],
        "`matched` with `computer` true; `error` `not_queued`, `no_computer_offer`.",
    ),
    "ChatSay": (
        ["Chat", "Error"],
        "the `chat` frame every reader gets (this connection's own included); `error` "
        "`chat_off`, `chat_presets_only`, `bad_chat`, `chat_too_long`, `chat_needs_player`, "
        "`chat_silenced`, `chat_rate_limited`, `room_chat_busy`, `not_joined`.",
    ),
    "ChatMute": (
        ["ChatMuted", "Error"],
        "`chat_muted`; `error` `message_not_found`, `bad_mute`, `too_many_mutes`, "
        "`too_many_blocks`, `chat_needs_player`.",
    ),
    "ChatUnmute": (["ChatMuted", "Error"], "`chat_muted` with `muted` false (unless a "
                   "block stays); `error` `chat_needs_player`."),
    "ChatReport": (
        ["ChatReported", "Error"],
        "`chat_reported`; `error` `message_not_found`, `bad_mute` (one's own message), "
        "`report_limited`, `chat_needs_player`.",
    ),
}
"""Client message model -> (the server messages that answer it, how)."""

SENT: dict[str, str] = {
    "Welcome": "Answers `hello`.",
    "RoomCreated": "Answers `create_room`.",
    "Snapshot": (
        "Answers `join` and `resync`; also sent unasked whenever the server cannot send a "
        "contiguous `update` (a client must accept a snapshot at any time)."
    ),
    "Update": (
        "Unasked: one per accepted change to the followed room, versions in order without "
        "gaps after the last snapshot."
    ),
    "Ack": "Answers an applied `act` (after its `update`).",
    "Reject": "Answers a refused `act`.",
    "Presence": (
        "Unasked: a seat's player connected or disconnected, or a computer's stand-in started "
        "or ended. Not versioned."
    ),
    "Left": "Answers `leave`.",
    "Error": (
        "Answers any message that could not be handled (nothing changed); `ref` names the "
        "type of the message it answers."
    ),
    "Pong": "Answers `ping`.",
    "Hint": "Answers `hint`.",
    "History": "Answers `history`.",
    "Lobby": "Answers `lobby_subscribe`.",
    "LobbyUpdate": (
        "Unasked, to a connection that follows the lobby: the tables added, changed and "
        "removed since the last `lobby` or `lobby_update` (about half a second of changes "
        "in one frame)."
    ),
    "ChallengeSent": "Answers `challenge`; also to a player's new connection, per pending "
    "challenge of theirs.",
    "ChallengeReceived": "Unasked: a challenge to this connection's player (at once, on any "
    "process; to a new connection, per pending one).",
    "ChallengeAccepted": "Answers `challenge_answer` accept; unasked to both players' "
    "connections.",
    "ChallengeDeclined": "Answers `challenge_answer` decline; unasked to both players' "
    "connections (also after a block).",
    "ChallengeExpired": "Unasked: a challenge expired unanswered (to both players).",
    "QueueStatus": "Answers `queue_join`; then unasked every few seconds while waiting.",
    "QueueLeft": (
        "Answers `queue_leave`; also unasked when a wait ends without a table (`replaced`, "
        "`expired`, `failed`)."
    ),
    "Matched": (
        "Unasked while waiting: the table is complete (or answers `queue_accept_computer`)."
    ),
    "Chat": "Answers `chat`; unasked: a message said at the followed table that this "
    "connection may read. Not versioned.",
    "ChatHidden": "Unasked: a moderator hid a message of the followed table.",
    "ChatMuted": "Answers `chat_mute` and `chat_unmute`.",
    "ChatReported": "Answers `chat_report`.",
}
"""Server message model -> when it is sent."""


def _markdown(text: str | None) -> str:
    """A model docstring as Markdown: rst roles and double backticks become code spans."""
    if not text:
        return ""
    text = re.sub(r":(?:data|class|meth|func|mod|attr):`~?([^`]+)`", r"`\1`", text)
    text = text.replace("``", "`")
    return "\n".join(line.strip() for line in text.strip().splitlines())


def _summary(model: type[BaseModel]) -> str:
    return _markdown(model.__doc__).split("\n\n")[0].replace("\n", " ")


def _codes_table(codes: tuple[str, ...]) -> str:
    rows = "\n".join(f"| `{c}` | {MEANINGS[c]} |" for c in codes)
    return "| code | meaning |\n|---|---|\n" + rows


def _to_asyncapi_schema(node: Any) -> Any:
    """Pydantic's JSON Schema written as an AsyncAPI 3.0 Schema Object (JSON Schema draft
    07 plus a few keywords): a ``discriminator`` object becomes its property name (which
    the schema then declares and requires), a ``$ref`` with siblings goes into ``allOf``."""
    if isinstance(node, list):
        return [_to_asyncapi_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _to_asyncapi_schema(v) for k, v in node.items()}
    if isinstance(out.get("discriminator"), dict):
        prop = out["discriminator"]["propertyName"]
        out["discriminator"] = prop
        out.setdefault("properties", {}).setdefault(prop, {"type": "string"})
        if prop not in out.setdefault("required", []):
            out["required"].append(prop)
    if "$ref" in out and len(out) > 1:
        ref = out.pop("$ref")
        out = {"allOf": [{"$ref": ref}], **out}
    return out


def component_schemas() -> dict[str, Any]:
    """``components.schemas``: every message model and all it uses, by name, with the
    shared types referenced (see the module docstring)."""
    named: dict[str, Any] = {m.__name__: m for m in CLIENT_MODELS + SERVER_MODELS}
    named.update(SHARED)
    defs = reference_shared(named_schemas(named, REF), list(SHARED), REF)
    return {name: _to_asyncapi_schema(schema) for name, schema in defs.items()}


def _message(model: type[BaseModel], direction: str) -> dict[str, Any]:
    kind = message_type(model)
    description = _markdown(model.__doc__)
    if model.__name__ == "Error":
        description += "\n\nCodes (`ErrorCode`, a closed set):\n\n" + _codes_table(ERROR_CODES)
    elif model.__name__ == "Reject":
        description += "\n\nCodes (`RejectCode`, a closed set):\n\n" + _codes_table(REJECT_CODES)
    return {
        "name": model.__name__,
        "title": f"{kind} ({direction})",
        "summary": _summary(model),
        "description": description,
        "payload": {"$ref": REF.format(model=model.__name__)},
    }


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/channels/{CHANNEL}/messages/{name}"}


def _operation_id(prefix: str, model: type[BaseModel]) -> str:
    return prefix + model.__name__


def build_document() -> dict[str, Any]:
    """The AsyncAPI 3.0 document as plain data (see the module docstring)."""
    channel_ref = {"$ref": f"#/channels/{CHANNEL}"}
    messages: dict[str, Any] = {}
    for model in CLIENT_MODELS:
        messages[model.__name__] = _message(model, "client to server")
    for model in SERVER_MODELS:
        messages[model.__name__] = _message(model, "server to client")
    operations: dict[str, Any] = {}
    for model in CLIENT_MODELS:
        replies, how = REPLIES[model.__name__]
        operations[_operation_id("receive", model)] = {
            "action": "receive",
            "channel": channel_ref,
            "title": f"Receive {message_type(model)}",
            "summary": _summary(model),
            "description": f"Answered by: {how}",
            "messages": [_ref(model.__name__)],
            "reply": {"channel": channel_ref, "messages": [_ref(r) for r in replies]},
        }
    for model in SERVER_MODELS:
        operations[_operation_id("send", model)] = {
            "action": "send",
            "channel": channel_ref,
            "title": f"Send {message_type(model)}",
            "summary": _summary(model),
            "description": SENT[model.__name__],
            "messages": [_ref(model.__name__)],
        }
    return {
        "asyncapi": ASYNCAPI_VERSION,
        "id": "urn:cribbage-server:protocol:cribbage.v1",
        "info": {
            "title": f"{PROTOCOL_VERSION} WebSocket protocol",
            "version": PROTOCOL_VERSION,
            "description": INFO_DESCRIPTION,
            "license": {"name": "MIT", "url": "https://opensource.org/license/mit"},
        },
        "defaultContentType": "application/json",
        "servers": {
            "local": {
                "host": "localhost:8000",
                "protocol": "ws",
                "description": "`python -m server` on its default port; behind TLS the same "
                "path over `wss`.",
            }
        },
        "channels": {
            CHANNEL: {
                "address": "/ws",
                "title": "The game connection",
                "description": CHANNEL_DESCRIPTION,
                "messages": {
                    name: {"$ref": f"#/components/messages/{name}"} for name in messages
                },
                "bindings": {
                    "ws": {
                        "method": "GET",
                        "headers": {
                            "type": "object",
                            "properties": {
                                "Sec-WebSocket-Protocol": {
                                    "type": "string",
                                    "description": (
                                        f"`{JSON_SUBPROTOCOL}` (JSON text frames) or "
                                        f"`{MSGPACK_SUBPROTOCOL}` (msgpack binary frames). "
                                        "Absent: JSON. Offering only subprotocols the "
                                        "server does not know is refused with HTTP 403."
                                    ),
                                    "examples": [JSON_SUBPROTOCOL, MSGPACK_SUBPROTOCOL],
                                }
                            },
                        },
                        "bindingVersion": "0.1.0",
                    }
                },
                "x-subprotocols": {
                    JSON_SUBPROTOCOL: {
                        "contentType": "application/json",
                        "frames": "text",
                        "description": "One JSON object (UTF-8) per text frame.",
                    },
                    MSGPACK_SUBPROTOCOL: {
                        "contentType": "application/msgpack",
                        "frames": "binary",
                        "description": "One msgpack map per binary frame; the same "
                        "messages, the same payload schemas.",
                    },
                },
            }
        },
        "operations": operations,
        "components": {"messages": messages, "schemas": component_schemas()},
    }


INFO_DESCRIPTION = """\
Generated by `python -m protocol.asyncapi` from the pydantic models in `protocol/messages.py`; \
do not edit. `docs/protocol.md` describes the protocol in full, `docs/protocol.schema.json` \
is the same schemas as one JSON Schema (draft 2020-12) and `docs/rules.md` the engine's data \
(views, events, actions).

The server's side is described: it **receives** the client messages and **sends** the \
server messages. Every message is an object with a `type`. A connection's messages are \
handled one at a time, in order; every request but `set_computer` is answered (see each \
operation's reply) before the next one is read, while `update`, `presence` and unasked \
`snapshot` frames come in between. An `error` names the type of the message it answers in \
`ref`.

Versioning: within `cribbage.v1` fields may be added (optional ones in client messages), \
new event types, server messages and codes may appear; clients ignore what they do not \
know. Anything else needs `cribbage.v2` (docs/protocol.md, "Versioning").
"""

CHANNEL_DESCRIPTION = f"""\
One WebSocket endpoint carries the whole game. The subprotocol chooses the encoding:

| subprotocol | frames | encoding |
|---|---|---|
| `{JSON_SUBPROTOCOL}` (or none) | text | one JSON object per frame |
| `{MSGPACK_SUBPROTOCOL}` | binary | one msgpack map per frame |

Both carry exactly the same messages with the same payload schemas (the message \
`contentType` given is JSON's; under msgpack it is `application/msgpack`). A frame of the \
wrong kind is answered `error` `bad_frame`; a client frame over `max_frame_bytes` (told in \
`welcome`, 16 KiB by default, counted in bytes) `error` `frame_too_large`; over 1 MiB \
closes the connection (1009). A handshake offering only unknown subprotocols, or sent from \
a web page whose `Origin` the server does not allow (`allowed_origins`; a handshake \
without `Origin` is allowed), is refused with HTTP 403 (browsers report 1006).

A session: `hello` -> `welcome`; `create_room` -> `room_created` (optional); `join` -> \
`snapshot`; then `act` -> `update` ... + `ack` (or `reject`), while other players' accepted \
actions arrive as `update`s and connects and disconnects as `presence`.
"""


def render() -> str:
    """The document file's exact text."""
    return json.dumps(build_document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Command line: write the document, or with ``--check`` compare it. Returns exit code."""
    return write_or_check(argv, __doc__.splitlines()[0], ASYNCAPI_PATH, render, "protocol.asyncapi")


if __name__ == "__main__":
    raise SystemExit(main())
