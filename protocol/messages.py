"""Every message of the ``cribbage.v1`` WebSocket protocol, as pydantic v2 models.

Each message is an object with a ``type`` field that names it. Client messages and server
messages are two separate discriminated unions (:data:`ClientMessage`, :data:`ServerMessage`);
:data:`CLIENT_ADAPTER` and :data:`SERVER_ADAPTER` validate plain data (already decoded from
JSON or msgpack, see :mod:`protocol.codec`) into them.

Engine data crosses the protocol unchanged and typed: a view is ``engine.view(state, seat)``
(plus the server's ``turn_clock``), events are the engine's and the server's, redacted for
the seat (:mod:`protocol.events`); their types are built from :mod:`engine.shapes` in
:mod:`protocol.shapes`, the actions are in :mod:`protocol.actions` and the error and reject
codes in :mod:`protocol.codes`. ``docs/protocol.md`` documents every message with an
example; ``docs/rules.md`` the engine's data.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

from .actions import INT64_MAX, ClientAction
from .chat import ChatMode, PresetId
from .codes import ErrorCode, RejectCode
from .patch import PatchOperation
from .shapes import Event, Options, Suggestion, View

PROTOCOL_VERSION = "cribbage.v1"
"""The protocol name and version reported in ``welcome``."""

ROOM_ID_PATTERN = r"^[A-Za-z0-9_-]{4,32}$"
"""What a room id looks like (the server makes ids of 10 letters and digits)."""

TOKEN_PATTERN = r"^[A-Za-z0-9_-]{22,64}$"
"""What a token field accepts: 22 to 64 url-safe base64 characters. The server's tokens are
32 characters (``server.tokens``); a token of this shape that it did not issue is answered
as docs/protocol.md "Identity and tokens" says (a fresh one for ``hello``, ``bad_token``
for ``join``), any other text is ``bad_message``."""

ACTION_ID_PATTERN = r"^[\x21-\x7e]{1,64}$"
"""A client-chosen action id: 1..64 printable ASCII characters, no spaces."""

SERVER_ACTION_ID_PREFIX = "auto-"
"""The prefix of the ids the server gives its own moves in a room's log (a computer
player, a stand-in; ``server.computer_seats``). A client's ``action_id`` may not begin
with it: the grading of a finished game tells the computer's moves from the player's by
it (``server.archive.grading``)."""


def _check_action_id(action_id: str) -> str:
    """A client's action id: not one of the server's own (:data:`SERVER_ACTION_ID_PREFIX`)."""
    if action_id.startswith(SERVER_ACTION_ID_PREFIX):
        raise ValueError(f"an action_id may not begin with {SERVER_ACTION_ID_PREFIX!r}: "
                         "the server names its own moves so")
    return action_id

REQUEST_ID_PATTERN = r"^[\x21-\x7e]{16,64}$"
"""A client-chosen id of a room creation: 16..64 printable ASCII characters, no spaces (a
random one: whoever sends it again gets the room and its creator token)."""

Nonce = Annotated[int, Field(ge=-(2**63), le=INT64_MAX)] | Annotated[str, Field(max_length=64)]
"""A ping nonce: a 64-bit integer or up to 64 characters of text."""


class _Model(BaseModel):
    """Base of all messages: unknown fields are refused and types are strict (no `"0"` for 0,
    no `"yes"` for true), so mistakes surface as errors."""

    model_config = ConfigDict(extra="forbid", strict=True)


# --------------------------------------------------------------------------------------
# Engine options (the actions are in protocol.actions)
# --------------------------------------------------------------------------------------


PARTNERSHIPS_NEED_FOUR: dict[str, Any] = {
    "if": {"properties": {"partnerships": {"const": True}}, "required": ["partnerships"]},
    "then": {"properties": {"players": {"const": 4}}, "required": ["players"]},
}
"""JSON Schema: ``partnerships`` true needs ``"players": 4`` (docs/rules.md §1.2; the
engine refuses it otherwise, ``bad_options``), so the schema takes what the server takes."""


class GameOptionsModel(_Model):
    """Options of a game (``engine.GameOptions`` as plain data).

    ``players`` 2..4; ``partnerships`` needs 4 players; ``target`` 121 or 61. Muggins with
    Lowball is accepted and played without Muggins (docs/rules.md §1.3).
    """

    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra=PARTNERSHIPS_NEED_FOUR)

    players: Literal[2, 3, 4] = 2
    partnerships: bool = False
    target: Literal[61, 121] = 121
    muggins: bool = False
    lowball: bool = False
    backup10: bool = False


# --------------------------------------------------------------------------------------
# Client -> server
# --------------------------------------------------------------------------------------


INVISIBLE_FILLERS = frozenset(
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers (letters that draw nothing)
    "\u2800"  # Braille pattern blank
    "\u034f\u17b4\u17b5\u180e"  # grapheme joiner, Khmer inherent vowels, Mongolian space
    "\U0001d159\U0001d173\U0001d174\U0001d175\U0001d176\U0001d177\U0001d178"
    "\U0001d179\U0001d17a"  # musical symbol null notehead, beam and slur controls
)
"""Characters that take a place but draw nothing: a name needs something else besides."""

ZWJ = "\u200d"


def _visible(ch: str) -> bool:
    """Whether ``ch`` draws something on its own: a letter, digit, punctuation or symbol
    that is not an invisible filler (not a space, mark, control or format character)."""
    return unicodedata.category(ch)[0] in "LNPS" and ch not in INVISIBLE_FILLERS


def _joinable(ch: str) -> bool:
    """Whether ``ch`` may stand next to a zero-width joiner: a visible character or a mark
    (an emoji's variation selector)."""
    return _visible(ch) or unicodedata.category(ch)[0] == "M"


def _check_name(name: str) -> str:
    """A display name: trimmed; at least one visible character (:func:`_visible`); no
    control, format, private-use, unassigned or surrogate characters (NUL, the
    right-to-left override, a lone zero-width joiner …) and no line or paragraph separator
    (U+2028, U+2029: a name is shown on one line). The zero-width joiner is allowed
    only between two visible characters or marks (emoji sequences such as 👩‍💻 and ❤️‍🔥),
    and tag characters only in a subdivision flag."""
    name = name.strip()
    if not name:
        raise ValueError("a name cannot be blank")
    for i, ch in enumerate(name):
        category = unicodedata.category(ch)
        if category in ("Zl", "Zp"):
            raise ValueError(f"a name cannot hold the line break U+{ord(ch):04X}")
        if category[0] != "C":
            continue
        if (
            ch == ZWJ and 0 < i < len(name) - 1
            and _joinable(name[i - 1]) and _joinable(name[i + 1])
        ):
            continue
        if "\U000e0020" <= ch <= "\U000e007f" and i > 0 and (
            name[i - 1] == "\U0001f3f4" or "\U000e0020" <= name[i - 1] <= "\U000e007f"
        ):
            continue  # the tags of a subdivision flag (🏴 + tag letters + cancel tag)
        raise ValueError(f"a name cannot hold the character U+{ord(ch):04X}")
    if not any(_visible(ch) for ch in name):
        raise ValueError("a name needs at least one visible character")
    return name


DisplayName = Annotated[str, Field(min_length=1, max_length=32), AfterValidator(_check_name)]
"""A player's display name, as others see it: 1..32 characters after trimming, at least one
visible, no control or format characters (a client gets ``bad_name`` otherwise)."""


Language = Literal["en", "da", "sv"]
"""A table's language (room setting ``language``): English, Danish or Swedish."""


class HelloPlayer(_Model):
    """A player's credential, as ``hello`` presents it (``POST /api/players`` made it)."""

    id: str = Field(pattern=r"^[a-z2-7]{16}$", description="the player's public id")
    secret: str = Field(pattern=r"^[a-z2-7]{32}$", description="a secret of the player's")


class Hello(_Model):
    """First message of a connection: who is there.

    ``token`` (optional) is a player token from an earlier ``welcome``; giving it back keeps
    the same identity, so ``join`` can resume the seats it holds.
    """

    type: Literal["hello"]
    name: DisplayName
    token: str | None = Field(
        default=None, pattern=TOKEN_PATTERN,
        description="a player token from an earlier `welcome` (the server's are 32 "
        "characters); one the server did not issue is answered with a fresh one",
    )
    client: str | None = Field(default=None, max_length=64, description="free text, for logs")
    player: HelloPlayer | None = Field(
        default=None, description="a player (POST /api/players) to be: its seats belong to "
        "it, and its name, when it has one, is the connection's name (docs/protocol.md, "
        "\"Players\"); a wrong one is error bad_player and the connection may say hello "
        "again",
    )
    language: Language | None = Field(
        default=None, description="the language the client shows (en, da or sv): the "
        "default `room.language` of the rooms this connection creates")


Level = Literal["easy", "standard", "expert"]
"""A computer player's level."""

SeatNumber = Annotated[int, Field(ge=0, le=3)]
"""A seat number, 0..3."""

SeatKey = Annotated[str, Field(pattern=r"^[0-3]$")]
"""A seat number as an object key (JSON keys are text): ``"0"`` .. ``"3"``."""


class RoomSettingsModel(_Model):
    """Room-level settings chosen at creation (shown back as ``room_settings``).

    ``hints``: seated humans may ask for the ``expert`` player's suggestion (default true;
    never in a rated room).
    ``answer_window``: seconds opponents have to answer a Muggins announcement (default: the
    server's, 15). ``takeover_grace``: seconds a human seat may stay disconnected before a
    ``standard`` computer plays it until its owner comes back (default 60).
    ``turn_seconds``: the turn clock, seconds a human seat has to act before the server's
    ``standard`` computer acts for it once (default null: no turn clock; 60 in a rated
    room). ``match``: best of 1 (a single game, the default), 3, 5 or 7 games.
    ``rated``: the room's games count for the players' ratings (default false): standard
    rules to 121 without Muggins, a turn clock of 30–120 s, human seats for players only
    (docs/protocol.md, "Rated rooms").
    """

    hints: bool | None = Field(
        default=None, strict=True,
        description="default true; a rated room has none (false; true there is "
        "`rated_options`)")
    answer_window: float | None = Field(default=None, gt=0, le=86400)
    takeover_grace: float | None = Field(default=None, gt=0, le=86400)
    turn_seconds: float | None = Field(default=None, ge=1, le=86400)
    match: int | None = Field(
        default=None, ge=1, le=7, strict=True,
        description="best of 1, 3, 5 or 7 games (default 1; 2, 4 or 6 is `bad_options`)")
    rated: bool | None = Field(
        default=None, strict=True,
        description="a rated room (default false): `rated_options` unless the options are "
        "the standard game to 121 without Muggins, Lowball or Back-up 10; `rated_turn_clock` "
        "unless turn_seconds is 30 to 120 (default 60)")
    public: bool | None = Field(
        default=None, strict=True,
        description="a public table (default false: private, reached by its share link "
        "only): listed in the lobby while it waits for players (docs/protocol.md, "
        "\"Public tables and the lobby\")")
    language: Language | None = Field(
        default=None, description="the table's language, shown in the lobby (default: the "
        "creator's hello.language over the WebSocket, else en)")
    chat: ChatMode | None = Field(
        default=None, description="table talk: `off`, `presets` (preset phrases only) or "
        "`free` (presets and free text); default `free`, `presets` for a rated table and a "
        "quick-match table (docs/protocol.md, \"Chat\")")


def _players_are(players: list[int]) -> dict[str, Any]:
    return {"properties": {"options": {"properties": {"players": {"enum": players}},
                                       "required": ["players"]}},
            "required": ["options"]}


COMPUTER_SEATS_EXIST: dict[str, Any] = {
    "allOf": [
        {"if": _players_are([3]),
         "then": {"properties": {"computers": {"propertyNames": {"pattern": "^[0-2]$"}}}}},
        {"if": _players_are([3, 4]), "else": {
            "properties": {"computers": {"propertyNames": {"pattern": "^[01]$"}}}}},
    ],
}
"""JSON Schema: a seat given to a computer exists at the table (``options.players``, 2 when
left out): the server refuses any other with ``bad_options``."""


class CreateRoom(_Model):
    """Create a room with these options; the answer is ``room_created``. Does not sit.

    ``computers`` gives seats to computer players at once (``{"1": "standard"}``); when they
    fill every seat the game starts at once. ``room`` holds the room settings. A value
    inside ``options``, ``computers`` or ``room`` that is not allowed (a target of 100, an
    unknown level or setting) is answered ``error`` ``bad_options``, as over HTTP.
    ``request_id`` (optional) makes the creation safe to repeat: the same id gives the
    same room.
    """

    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra=COMPUTER_SEATS_EXIST)

    type: Literal["create_room"]
    options: GameOptionsModel = Field(default_factory=GameOptionsModel)
    computers: dict[SeatKey, Level] = Field(default_factory=dict)
    room: RoomSettingsModel = Field(default_factory=RoomSettingsModel)
    request_id: str | None = Field(
        default=None, pattern=REQUEST_ID_PATTERN,
        description="a random id this client chose for this request (16..64 printable "
        "ASCII characters, e.g. a UUID): the same request sent again with the same id, "
        "from any connection or over HTTP, is answered with the same room and creator "
        "token instead of making a second room (so a creation answered `outcome_unknown`, "
        "or whose answer was lost, can be sent again safely); the same id with other "
        "options, computers or room settings is refused (`request_id_reused`). Keep it "
        "secret like a token",
    )


class SetComputer(_Model):
    """The room's creator gives an empty seat to a computer player.

    ``room`` defaults to the room this connection has joined. Answered by an ``update``
    whose ``seats`` show the computer (to connections following the room) or an ``error``
    (``bad_token``: not the creator's token; ``seat_taken``, ``bad_seat``,
    ``bad_options``: an unknown ``level``; ``room_not_found``, ``not_joined``).
    """

    type: Literal["set_computer"]
    seat: SeatNumber
    level: Level = "standard"
    creator_token: str = Field(pattern=TOKEN_PATTERN)
    room: str | None = Field(default=None, pattern=ROOM_ID_PATTERN)


class HintRequest(_Model):
    """A seated human asks for the ``expert`` player's suggestion (answered by ``hint``,
    or ``error`` ``hints_disabled`` / ``not_seated``, or ``busy`` with ``retry_after``
    when the server makes as many hints as it may at once)."""

    type: Literal["hint"]


class HistoryRequest(_Model):
    """Ask for the events of the current game so far, as this connection may see them
    (answered by ``history``; pages go backwards from ``before``)."""

    type: Literal["history"]
    before: int | None = Field(
        default=None, ge=1, le=INT64_MAX,
        description="only versions older than this (default: up to the room's version)",
    )
    limit: int = Field(default=200, ge=1, le=500, description="most versions in the answer")
    public: bool = Field(
        default=False, strict=True,
        description="redact as for a spectator (what everyone saw: a replay to share), "
        "instead of as this connection's seat",
    )


class Join(_Model):
    """Sit at ``seat`` of ``room`` (or watch, with ``seat`` null or left out).

    A free seat is taken and bound to the token (``token`` here, else the connection's
    player token). A taken seat is resumed only with the token it is bound to. The answer
    is a ``snapshot``; then ``update`` frames follow.
    """

    type: Literal["join"]
    room: str = Field(pattern=ROOM_ID_PATTERN)
    seat: int | None = Field(
        default=None, ge=0, le=3,
        description="the seat to take or resume; null or left out: watch as a spectator",
    )
    token: str | None = Field(default=None, pattern=TOKEN_PATTERN)
    since: int | None = Field(
        default=None, ge=0, le=INT64_MAX,
        description="the last version this client saw of the room (when coming back): the "
        "snapshot's `missed` then holds the events of the versions after it (see `resync`)",
    )


class Act(_Model):
    """Submit an engine action for the joined seat.

    ``action_id`` is chosen by the client and unique per seat; re-sending the same id
    (after a lost ``ack``) is answered again with the first result and never applied twice.
    It may not begin with ``auto-``, the prefix of the server's own moves (``reject``
    ``bad_action``).
    ``action`` is one of the actions a seat may send (not the system's ``answer_timeout``).
    """

    type: Literal["act"]
    action_id: Annotated[str, Field(pattern=ACTION_ID_PATTERN),
                         AfterValidator(_check_action_id)]
    action: ClientAction


class Resync(_Model):
    """Ask for a fresh ``snapshot`` of the joined room."""

    type: Literal["resync"]
    since: int | None = Field(
        default=None, ge=0, le=INT64_MAX,
        description="the last version this client has: the snapshot's `missed` then holds "
        "the events of the versions after it (`[]` when `since` is the room's version; "
        "absent when `since` is more than 500 versions back or newer than the room's "
        "version, which the room does not have: take the snapshot as it is)",
    )


class Leave(_Model):
    """Stop following the joined room (the seat stays yours; resume with ``join``)."""

    type: Literal["leave"]


class LobbySubscribe(_Model):
    """Follow the lobby: the public tables waiting for players. Answered by ``lobby`` (the
    list), then ``lobby_update`` frames as tables come, change and go, until
    ``lobby_unsubscribe`` or the connection ends. Allowed after ``hello`` whether or not the
    connection is at a table. Sending it again replaces the filters (a new ``lobby``
    answers). The filters keep only the tables that match every one given."""

    type: Literal["lobby_subscribe"]
    players: Literal[2, 3, 4] | None = Field(default=None, description="tables of this many")
    partnerships: bool | None = Field(default=None, description="four in partnerships or not")
    language: Language | None = Field(default=None, description="tables of this language")
    rated: bool | None = Field(default=None, description="rated tables, or unrated ones")


class LobbyUnsubscribe(_Model):
    """Stop following the lobby (no answer; no more lobby frames). Nothing to stop is no
    error."""

    type: Literal["lobby_unsubscribe"]


class Ping(_Model):
    """Liveness check; answered by ``pong`` with the same nonce."""

    type: Literal["ping"]
    nonce: Nonce | None = Field(default=None, union_mode="left_to_right")


PlayerId = Annotated[str, Field(pattern=r"^[a-z2-7]{16}$")]
"""A player's public id."""

ChallengeId = Annotated[str, Field(pattern=r"^[a-z2-7]{16}$")]
"""A challenge's id."""


class ChallengeRequest(_Model):
    """Challenge another player to a table of two (docs/protocol.md, "Challenges, blocks
    and online now"); only a connection whose ``hello`` presented a player may. The answer
    is ``challenge_sent``; the challenged player's connections get ``challenge_received``
    at once, and their new connections while it is pending. ``options.players`` must be 2
    (``bad_options``). ``request_id`` (optional) makes it safe to repeat: the same id from
    the same player gives the same challenge."""

    type: Literal["challenge"]
    to: PlayerId = Field(description="the challenged player's id")
    options: GameOptionsModel = Field(default_factory=GameOptionsModel)
    room: RoomSettingsModel = Field(default_factory=RoomSettingsModel)
    request_id: str | None = Field(default=None, pattern=REQUEST_ID_PATTERN)


class ChallengeAnswer(_Model):
    """The challenged player accepts or declines a pending challenge. On ``accept`` the
    server makes the room and both players get ``challenge_accepted`` (then each sits with
    the ordinary ``join``); on ``decline`` both get ``challenge_declined``."""

    type: Literal["challenge_answer"]
    id: ChallengeId
    answer: Literal["accept", "decline"]
class QueueTable(_Model):
    """A quick-match table: the game's options and the room settings matched on. Players
    wait in one queue per distinct table (docs/protocol.md, "Quick match"). A rated table
    is the standard game to 121 without Muggins, Lowball or Back-up 10
    (``rated_options``); partnerships need 4 players (``bad_options``)."""

    model_config = ConfigDict(extra="forbid", strict=True,
                              json_schema_extra=PARTNERSHIPS_NEED_FOUR)

    players: Literal[2, 3, 4] = 2
    partnerships: bool = False
    target: Literal[61, 121] = 121
    muggins: bool = False
    lowball: bool = False
    backup10: bool = False
    match: Literal[1, 3, 5, 7] = Field(default=1, description="best of this many games")
    rated: bool = Field(default=False, description="the table's games are rated")


class QueueJoin(_Model):
    """Wait for a table (quick match): answered by ``queue_status``, then ``matched`` when
    the table is complete. Players only (``queue_needs_player``); one queue at a time: a
    second ``queue_join`` (from any connection of the player) replaces the first."""

    type: Literal["queue_join"]
    table: QueueTable = Field(default_factory=QueueTable)


class QueueLeave(_Model):
    """Stop waiting: answered by ``queue_left`` (``cancelled``), or by ``matched`` when the
    match was already made."""

    type: Literal["queue_leave"]


class QueueAcceptComputer(_Model):
    """Take the computer offer (``queue_status.computer_offer``): out of the queue and into
    a room of the same table against the ``standard`` computer; answered by ``matched``
    with ``computer`` true."""

    type: Literal["queue_accept_computer"]


def _check_chat_text(text: str) -> str:
    """Free chat text: the hygiene of names (:func:`_check_name`: trimmed, something
    visible, no control, format or direction-override characters, one line)."""
    return _check_name(text)


ChatText = Annotated[str, Field(min_length=1, max_length=1000),
                     AfterValidator(_check_chat_text)]
"""Free chat text: 1..1000 characters after trimming with the hygiene of names (one line, no
control or format characters; ``bad_chat`` otherwise); the server's ``chat_max_chars`` (200
by default) is the length it takes (``chat_too_long``)."""

ReportNote = Annotated[str, Field(min_length=1, max_length=200),
                       AfterValidator(_check_chat_text)]
"""A report's note: 1..200 characters with the hygiene of chat text."""

ChatMessageId = Annotated[int, Field(ge=1, le=INT64_MAX)]
"""A chat message's id: 1, 2, 3 … within its room."""


class ChatSay(_Model):
    """Say something at the table this connection follows: exactly one of ``preset`` (an id
    of ``protocol.chat.PRESETS``) and ``text`` (free text, if the room's ``chat`` is
    ``free``). Players only (``chat_needs_player``: the connection's ``hello`` presented no
    player). Answered by the ``chat`` frame every reader gets, or ``error`` (``not_joined``,
    ``chat_off``, ``chat_presets_only``, ``bad_chat``, ``chat_too_long``, ``chat_silenced``,
    ``chat_rate_limited``, ``room_chat_busy``). A seated player's message reaches the whole
    table; a spectator's reaches only the spectators while a game is on, everyone otherwise
    (docs/protocol.md, "Chat")."""

    type: Literal["chat"]
    preset: PresetId | None = None
    text: ChatText | None = None


class ChatMute(_Model):
    """Mute the author of a message of this room (remembered for the player: their messages
    are no longer delivered to any of this player's connections), or with ``block`` true
    block them (the block of ``PUT /api/players/me/blocks/{id}``: no challenges, no quick
    match, no shared table). Answered by ``chat_muted``."""

    type: Literal["chat_mute"]
    message: ChatMessageId
    block: bool = False


class ChatUnmute(_Model):
    """Hear a muted player again (``GET /api/players/me/mutes`` lists them). Answered by
    ``chat_muted`` with ``muted`` false."""

    type: Literal["chat_unmute"]
    player: PlayerId


class ChatReport(_Model):
    """Report a message of this room to the site's moderators; the report keeps the room's
    last messages around it. Answered by ``chat_reported`` (``report_limited`` past the
    reports a player may file)."""

    type: Literal["chat_report"]
    message: ChatMessageId
    reason: Literal["abuse", "spam", "cheating", "other"] = "abuse"
    note: ReportNote | None = Field(
        default=None, description="a few words for the moderator (plain text, one line, the "
        "hygiene of names)")


ClientMessage = Annotated[
    Hello | CreateRoom | Join | Act | Resync | Leave | Ping | SetComputer | HintRequest
    | HistoryRequest | LobbySubscribe | LobbyUnsubscribe | ChallengeRequest | ChallengeAnswer
    | QueueJoin | QueueLeave | QueueAcceptComputer | ChatSay | ChatMute | ChatUnmute
    | ChatReport,
    Field(discriminator="type"),
]
"""Any message a client may send."""


# --------------------------------------------------------------------------------------
# Server -> client
# --------------------------------------------------------------------------------------


class SeatInfo(_Model):
    """Public facts about one seat of a room.

    ``level``: the level the server's computer plays the seat at (a computer seat, or
    ``standard`` for a human seat while ``computer_standin``), else null.
    ``computer_standin``: the human player has been away longer than the room's takeover
    grace and a computer plays for them until they come back.
    ``takeover_at``: for a human seat of a game in progress whose player is away (no
    connection, no stand-in yet), when the server's computer takes it over, in Unix
    milliseconds; else null. While nobody at all is connected to the room the table waits
    for its people and the time does not run (docs/protocol.md, "Presence").
    """

    seat: int
    taken: bool
    name: str | None
    kind: Literal["open", "human", "computer"]
    connected: bool
    level: Level | None
    computer_standin: bool
    takeover_at: int | None = Field(
        default=None, ge=0,
        description="Unix ms at which the computer takes over this away seat, or null",
    )
    abandoned: bool = Field(
        default=False,
        description="a rated room's seat a computer stood in for during this game (its "
        "player was away past the takeover grace, or let the turn clock run out too "
        "often): the game counts as that player's loss even after they come back; false "
        "again when the next game starts",
    )


class RoomSettings(_Model):
    """A room's effective settings (see ``RoomSettingsModel``), all resolved."""

    hints: bool
    answer_window: float
    takeover_grace: float
    turn_seconds: float | None
    match: Literal[1, 3, 5, 7] = Field(default=1, description="best of this many games")
    rated: bool = Field(default=False, description="the room's games are rated")
    public: bool = Field(default=False, description="listed in the lobby while it waits "
                         "for players (false: private, by its share link only)")
    language: Language = Field(default="en", description="the table's language")
    chat: ChatMode = Field(default="free", description="table talk: off, presets or free")


class Welcome(_Model):
    """Answer to ``hello``: the player token to keep (and give back in later ``hello``)."""

    type: Literal["welcome"]
    protocol: Literal["cribbage.v1"]
    encoding: Literal["json", "msgpack"]
    player_token: str
    name: str
    server: str
    max_frame_bytes: int
    player: str | None = Field(
        default=None, description="the id of the player hello presented (authenticated), "
        "or null: no player")
    frame_rate: float = Field(
        default=0.0, ge=0, description="client frames a second this connection may send on "
        "average (0: no limit); beyond it a frame is refused rate_limited, and a connection "
        "with too many refusals is closed (docs/protocol.md \"Limits\")")
    frame_burst: int = Field(
        default=0, ge=0, description="client frames it may send at once (the budget starts "
        "full and refills at frame_rate)")


class RoomCreated(_Model):
    """Answer to ``create_room``: the new room's id, its share link, its options, its
    settings and the seats given to computers (seat as text -> level)."""

    type: Literal["room_created"]
    room: str
    url: str
    options: Options
    creator_token: str
    room_settings: RoomSettings | None = None
    computers: dict[str, Level] = Field(default_factory=dict)


class MissedVersion(_Model):
    """The events of one version a ``snapshot`` catches a connection up on."""

    version: int
    events: list[Event]


class Snapshot(_Model):
    """The whole picture of a room for one connection, at ``version``.

    Sent after ``join`` and ``resync`` (and when the server cannot send an update, e.g.
    after a gap). ``view`` is ``engine.view(state, seat)`` (null until every seat is taken
    and the game starts). ``seat_token`` is present only in the snapshot that answers a
    ``join`` that took or resumed a seat.
    """

    type: Literal["snapshot"]
    room: str
    version: int
    seat: int | None
    status: Literal["waiting", "playing", "game_over"]
    options: Options
    room_settings: RoomSettings | None = None
    seats: list[SeatInfo]
    view: View | None
    seat_token: str | None = None
    history_from: int | None = Field(
        default=None,
        description="the version that started the current game: `history` can give every "
        "version from it on (null before the game starts)",
    )
    missed: list[MissedVersion] | None = Field(
        default=None,
        description="the events of the versions this connection did not get as updates, "
        "oldest first, as this seat may see them: after the `since` of a `join` or "
        "`resync`, after updates the server could not send, and the join that started the "
        "game. Absent when the server does not have them (then use `history`).",
    )
    chat: list[ChatMessage] | None = Field(
        default=None,
        description="in the snapshot that answers a `join`: the room's last messages this "
        "connection may read (muted and blocked authors left out), oldest first (empty "
        "when the room's chat is off); absent in other snapshots",
    )


class Update(_Model):
    """One accepted change to the room, as this connection may see it.

    ``events`` are the engine events (hidden parts removed for this seat) plus server
    events (``seat_taken``); ``patch`` is an RFC 6902 JSON Patch that turns the view this
    connection had at the previous version into the view at ``version``. ``seats`` is
    present when the seats changed.
    """

    type: Literal["update"]
    room: str
    version: int
    status: Literal["waiting", "playing", "game_over"]
    events: list[Event]
    patch: list[PatchOperation]
    seats: list[SeatInfo] | None = None


class Ack(_Model):
    """The action ``action_id`` was applied and made ``version``.

    ``duplicate`` is true when this answers a re-sent id already applied earlier.
    """

    type: Literal["ack"]
    action_id: str
    version: int
    duplicate: bool


class Reject(_Model):
    """The action ``action_id`` was refused; the room did not change.

    ``code`` is an engine ``RulesError`` code (``docs/rules.md`` "Errors") or a server code
    (``not_seated``, ``bad_token``, ``room_not_found``, ``not_started``, ``bad_action``,
    ``busy``, ...): the closed set :data:`protocol.codes.REJECT_CODES`.
    """

    type: Literal["reject"]
    action_id: str
    code: RejectCode
    message: str
    retry_after: float | None = Field(
        default=None, ge=0,
        description="with `rate_limited`, and with `busy` when the server is behind "
        "(admission control): seconds to wait before sending the act again (same "
        "`action_id`)",
    )


class Presence(_Model):
    """A seat's player connected or disconnected, or a computer's stand-in for an absent
    player started or ended (not versioned).

    ``computer_standin``: a ``standard`` computer plays the seat now (the player has been
    disconnected longer than the room's takeover grace); false again once the owner is back.
    ``takeover_at``: when the computer takes over the seat that just went away (Unix ms),
    or null (connected, already taken over, or no takeover: the game is not in progress).
    Sent again with a new time when a person comes back to a table left by everyone.
    ``abandoned``: a rated room's seat the computer stood in for during this game (docs/
    protocol.md, "Rated rooms"); it stays true after the player is back, until the next game.
    """

    type: Literal["presence"]
    room: str
    seat: int
    connected: bool
    name: str | None
    computer_standin: bool
    takeover_at: int | None = Field(
        default=None, ge=0,
        description="Unix ms at which the computer takes over this away seat, or null",
    )
    abandoned: bool = Field(
        default=False,
        description="a rated room's seat a computer stood in for during this game (its "
        "player was away past the takeover grace, or let the turn clock run out too "
        "often): the game counts as that player's loss even after they come back; false "
        "again when the next game starts",
    )


class Hint(_Model):
    """Answer to ``hint``: the ``expert`` player's suggestion for ``seat`` at ``version``
    (``engine.computer.suggest``: ``kind`` ``discard`` (every discard ranked, with expected
    points), ``play``, ``announce``, ``answer`` or ``none``, and ``best``, the action)."""

    type: Literal["hint"]
    room: str
    seat: int
    version: int
    suggestion: Suggestion


class LobbySeat(_Model):
    """One seat of a lobby table: free, or who holds it.

    ``player``: the player's public id for a seat taken by a player, else null;
    ``rating``: that player's rating at the table's kind (the number shown on the
    leaderboard) when they have one, else null; ``level``: a computer seat's level."""

    seat: int
    kind: Literal["open", "human", "computer"]
    name: str | None
    player: str | None = None
    rating: int | None = None
    level: Level | None = None


class LobbyTable(_Model):
    """A public table waiting for players, as the lobby lists it (``lobby``,
    ``lobby_update``, ``GET /api/lobby``). Take a seat with the ordinary ``join``.

    ``options``: the effective game options; ``rated``, ``match`` and ``language``: the
    room settings that matter for choosing; ``seats_free``: how many seats are open;
    ``version``: the room version the entry was made from; ``created``: Unix seconds."""

    room: str
    url: str = Field(description="the table's share link path, /r/<room>")
    options: Options
    rated: bool
    match: Literal[1, 3, 5, 7]
    language: Language
    table_kind: Literal["2", "3", "4", "2x2"]
    seats: list[LobbySeat]
    seats_free: int = Field(ge=1)
    version: int = Field(ge=0)
    created: float


class Lobby(_Model):
    """Answer to ``lobby_subscribe``: every public table waiting for players that matches
    the filters, newest first (at most 200)."""

    type: Literal["lobby"]
    tables: list[LobbyTable]


class LobbyUpdate(_Model):
    """What changed in the lobby since the last ``lobby`` or ``lobby_update`` (changes of
    about half a second come in one frame): tables ``added``, tables ``changed`` (a seat
    taken or freed: the whole entry again) and the room ids of tables ``removed`` (filled,
    started, gone, or no longer matching)."""

    type: Literal["lobby_update"]
    added: list[LobbyTable] = Field(default_factory=list)
    changed: list[LobbyTable] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)


class Left(_Model):
    """Answer to ``leave``: this connection no longer follows ``room``."""

    type: Literal["left"]
    room: str


class Error(_Model):
    """A message could not be handled; nothing changed. ``code``: the closed set
    :data:`protocol.codes.ERROR_CODES` (docs/protocol.md, "Error codes")."""

    type: Literal["error"]
    code: ErrorCode
    message: str
    ref: str | None = Field(default=None, description="type of the offending message, if known")
    retry_after: float | None = Field(
        default=None, ge=0,
        description="with a limit's code (`rate_limited`, `too_many_rooms`, "
        "`too_many_joins`): seconds until the request may succeed (send it again then)",
    )


class Pong(_Model):
    """Answer to ``ping``."""

    type: Literal["pong"]
    nonce: Nonce | None = Field(default=None, union_mode="left_to_right")
    time: float = Field(description="server clock, seconds since the Unix epoch")
    room: str | None = Field(default=None, description="the room this connection follows")
    version: int | None = Field(
        default=None,
        description="that room's latest version the server knows; a client whose own "
        "version is lower (and that has no update on its way) sends `resync`",
    )


class History(_Model):
    """Answer to ``history``: versions of the current game, oldest first, each with its
    events as this connection (or, with ``public``, a spectator) may see them.

    ``game``: the game number; ``first``: the version that started this game (the oldest
    there is); ``more``: older versions of this game exist (ask again with ``before`` set
    to the first version here)."""

    type: Literal["history"]
    room: str
    game: int
    first: int
    versions: list[MissedVersion]
    more: bool
    public: bool = False


class ChallengePlayer(_Model):
    """A side of a challenge."""

    id: str = Field(description="the player's public id")
    name: str | None = Field(description="the player's name then (null: none chosen)")


class ChallengeInfo(_Model):
    """A challenge as the server keeps it (times in Unix seconds)."""

    id: str
    challenger: ChallengePlayer
    challenged: ChallengePlayer
    options: dict[str, Any] = Field(description="the game options asked for")
    room: dict[str, Any] = Field(description="the room settings asked for")
    created: float
    expires: float = Field(description="a pending challenge expires then")
    status: Literal["pending", "accepted", "declined", "expired"]
    room_id: str | None = Field(default=None, description="the room, once accepted")
    answered: float | None = Field(default=None)


class ChallengeSent(_Model):
    """Answer to ``challenge`` (and, to a player's new connections, each challenge of
    theirs still pending)."""

    type: Literal["challenge_sent"]
    challenge: ChallengeInfo


class ChallengeReceived(_Model):
    """A challenge to this connection's player, pending (at once when made; to a new
    connection, each still pending)."""

    type: Literal["challenge_received"]
    challenge: ChallengeInfo


class ChallengeAccepted(_Model):
    """A challenge was accepted: ``room`` is made; this player's seat is ``seat``
    (challenger 0, challenged 1): sit there with ``join``. Sent to both players'
    connections (and again to a new connection while the challenge is kept)."""

    type: Literal["challenge_accepted"]
    challenge: ChallengeInfo
    room: str
    seat: int = Field(ge=0, le=1)


class ChallengeDeclined(_Model):
    """A challenge was declined (sent to both players' connections)."""

    type: Literal["challenge_declined"]
    challenge: ChallengeInfo


class ChallengeExpired(_Model):
    """A challenge expired unanswered (sent to both players' connections)."""

    type: Literal["challenge_expired"]
    challenge: ChallengeInfo
class QueueStatus(_Model):
    """How a wait stands (after ``queue_join``, then every few seconds): ``waiting`` —
    players waiting in this queue now, this one included; ``waited`` — seconds so far;
    ``computer_offer`` — ``queue_accept_computer`` may be sent (after
    ``queue_computer_offer_seconds``)."""

    type: Literal["queue_status"]
    queue: str = Field(description="the queue's key, e.g. `2-121-r-m1`")
    table: QueueTable
    waiting: int = Field(ge=1)
    waited: float = Field(ge=0)
    computer_offer: bool = False


class QueueLeft(_Model):
    """The wait ended without a table: ``cancelled`` (``queue_leave``), ``replaced`` (a
    later ``queue_join`` of the player), ``expired`` (the wait was dropped: this
    connection's server process stopped answering for too long), ``failed`` (the room could
    not be made; join again)."""

    type: Literal["queue_left"]
    queue: str
    reason: Literal["cancelled", "replaced", "expired", "failed"]


class Matched(_Model):
    """The table is complete: the room is made and the player already holds ``seat``;
    ``join`` it (with the connection's player, or with ``seat_token``) to play.
    ``players``: the seats' names (null: a computer)."""

    type: Literal["matched"]
    queue: str
    table: QueueTable
    room: str
    seat: int
    seat_token: str
    url: str
    match: str = Field(description="the match's id (logs)")
    players: list[str | None]
    computer: bool = Field(default=False, description="a table against the computer "
                           "(queue_accept_computer)")


class ChatMessage(_Model):
    """One message of a room's table talk, as readers get it. Show ``text`` as text, never
    as markup or a link; show ``preset`` in the reader's own language."""

    id: int = Field(ge=1, description="1, 2, 3 … within the room")
    at: int = Field(ge=0, description="when it was said, Unix ms")
    name: str | None = Field(description="the author's display name; null only in the "
                             "archive (GET /api/games/{id}), for a player who has deleted "
                             "themself")
    seat: int | None = Field(description="the author's seat, or null: a spectator")
    player: str | None = Field(
        description="the author's player id, or null when their profile is private (in "
        "the archive: private now) or, in the archive, they have deleted themself")
    audience: Literal["table", "spectators"] = Field(
        description="who hears it: the whole table, or the spectators only (a spectator's "
        "message during a game)")
    preset: PresetId | None = Field(description="a preset phrase's id, or null")
    text: str | None = Field(description="free text, or null")
    game: int = Field(ge=0, description="the room's game number when it was said (0 "
                      "before the first game starts)")


class Chat(_Model):
    """A message said at the table this connection follows (its own included), unless its
    author is muted or blocked by this connection's player or it is for the spectators and
    this connection sits at the table."""

    type: Literal["chat"]
    room: str
    message: ChatMessage


class ChatHidden(_Model):
    """A moderator hid a message: remove it from the table's talk."""

    type: Literal["chat_hidden"]
    room: str
    id: int


class ChatMuted(_Model):
    """Answer to ``chat_mute`` and ``chat_unmute``: whose messages this player no longer
    hears (``muted``), and whether they are blocked."""

    type: Literal["chat_muted"]
    player: str
    name: str | None
    muted: bool
    blocked: bool = False


class ChatReported(_Model):
    """Answer to ``chat_report``: the report is filed for the moderators."""

    type: Literal["chat_reported"]
    message: int
    report: str = Field(description="the report's id")


ServerMessage = Annotated[
    Welcome | RoomCreated | Snapshot | Update | Ack | Reject | Presence | Left | Error | Pong
    | Hint | History | Lobby | LobbyUpdate | ChallengeSent | ChallengeReceived
    | ChallengeAccepted | ChallengeDeclined | ChallengeExpired | QueueStatus | QueueLeft
    | Matched | Chat | ChatHidden | ChatMuted | ChatReported,
    Field(discriminator="type"),
]
"""Any message the server may send."""

CLIENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(ClientMessage)
"""Validates plain data into a client message model (``pydantic.ValidationError`` if not)."""

SERVER_ADAPTER: TypeAdapter[Any] = TypeAdapter(ServerMessage)
"""Validates plain data into a server message model (``pydantic.ValidationError`` if not)."""

CLIENT_TYPES = frozenset(
    ["hello", "create_room", "join", "act", "resync", "leave", "ping", "set_computer", "hint",
     "history", "lobby_subscribe", "lobby_unsubscribe", "challenge", "challenge_answer",
     "queue_join", "queue_leave", "queue_accept_computer", "chat", "chat_mute",
     "chat_unmute", "chat_report"]
)
"""The ``type`` values of client messages."""
