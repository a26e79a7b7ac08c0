"""Encoding and decoding of protocol frames.

Two encodings carry the same messages, chosen by WebSocket subprotocol:

* ``cribbage.v1.json``: one JSON object per text frame (UTF-8).
* ``cribbage.v1.msgpack``: one msgpack map per binary frame.

Decoding never raises anything but :class:`ProtocolError`, whose ``code`` is stable:

* ``bad_frame``: the frame is not of the connection's kind (text vs binary), does not parse,
  or is not a map/object.
* ``frame_too_large``: the frame is longer than the allowed size, counted in bytes (a text
  frame's UTF-8 bytes, a binary frame's bytes).
* ``bad_message``: it parses, but is not a valid client message (unknown ``type``, missing or
  malformed fields);
* ``bad_chat``: a ``chat`` whose ``text`` is not chat text (blank, a control, format or
  direction-override character, a line break): the hygiene of names.
* ``bad_name``: a ``hello`` whose ``name`` is not a display name (blank, only invisible
  characters, control or format characters; ``protocol.messages.DisplayName``);
* ``bad_options``: a ``create_room`` or ``set_computer`` of the right shape whose only faults
  are values the server does not allow inside ``options``, ``computers`` or ``room``, or in
  ``level`` (see :func:`validate_client`).

An ``act`` that does not validate carries the ``reject`` code it gets when its
``action_id`` can be read (:attr:`ProtocolError.reject_code`): ``bad_card``, ``system_only``
or ``bad_action``.

Whatever a client sends, what the server answers can be encoded: the text of a
:class:`ProtocolError` and its ``ref`` never carry a lone surrogate (a JSON text frame may
escape one, ``"\\udfff"``, which no UTF-8 frame can carry back), and :func:`encode` replaces
any that reach it (:func:`clean_text`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
from pydantic import BaseModel, ValidationError

from . import jsontext
from .actions import SYSTEM_ACTION_TYPES
from .messages import CLIENT_ADAPTER, SERVER_ADAPTER

JSON_SUBPROTOCOL = "cribbage.v1.json"
MSGPACK_SUBPROTOCOL = "cribbage.v1.msgpack"
SUBPROTOCOLS = (JSON_SUBPROTOCOL, MSGPACK_SUBPROTOCOL)
"""Supported subprotocols, in the server's order of preference."""

Encoding = Literal["json", "msgpack"]

_SURROGATE = re.compile("[\ud800-\udfff]")

DEFAULT_MAX_FRAME_BYTES = 16 * 1024
"""Largest client frame accepted by default (a legitimate one is under 300 bytes)."""


class ProtocolError(Exception):
    """A frame that cannot be used.

    Attributes:
        code: ``bad_frame``, ``frame_too_large``, ``bad_message``, ``bad_name`` or
            ``bad_options``.
        message: a human-readable explanation.
        ref: the message ``type`` when it could be read (and encoded), else None.
        raw: the decoded plain data when it decoded (for ``bad_message``), else None.
        reject_code: for an ``act`` that does not validate, the ``reject`` code to answer
            with when its ``action_id`` is usable: ``bad_card`` (the only faults are card
            texts that are not cards), ``system_only`` (a system action such as
            ``answer_timeout``) or ``bad_action`` (any other fault).
    """

    def __init__(
        self, code: str, message: str, *, ref: str | None = None, raw: Any = None,
        reject_code: str = "bad_action",
    ):
        message = clean_text(message)
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.ref = ref if ref is None or is_clean(ref) else None
        self.raw = raw
        self.reject_code = reject_code


def is_clean(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8 (holds no lone surrogate)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_text(text: str) -> str:
    """``text`` with every lone surrogate (which no UTF-8 frame can carry) replaced by
    U+FFFD; the same object when there is none."""
    if is_clean(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def clean(value: Any) -> Any:
    """Plain data with :func:`clean_text` applied to every string in it (keys included)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def encoding_for_subprotocol(subprotocol: str | None) -> Encoding:
    """The encoding of a subprotocol name (None or unknown means JSON)."""
    return "msgpack" if subprotocol == MSGPACK_SUBPROTOCOL else "json"


def subprotocol_for_encoding(encoding: Encoding) -> str:
    """The subprotocol name for an encoding."""
    return MSGPACK_SUBPROTOCOL if encoding == "msgpack" else JSON_SUBPROTOCOL


def _to_plain(message: BaseModel | dict[str, Any]) -> dict[str, Any]:
    if isinstance(message, BaseModel):
        return message.model_dump(mode="json")
    return message


def encode(message: BaseModel | dict[str, Any], encoding: Encoding) -> str | bytes:
    """Encode one message for sending.

    Args:
        message: a message model, or plain data of the same shape (the server's hot path
            builds ``update`` frames as dicts).
        encoding: ``"json"`` (returns ``str``, for a text frame) or ``"msgpack"`` (returns
            ``bytes``, for a binary frame).
    """
    data = _to_plain(message)
    if encoding == "msgpack":
        try:
            return msgpack.packb(data, use_bin_type=True)
        except UnicodeEncodeError:
            # A lone surrogate from a client's JSON escape: never echoed as it is.
            return msgpack.packb(clean(data), use_bin_type=True)
    try:
        return jsontext.dumps(data)
    except jsontext.JSONError:
        # Text orjson refuses (a lone surrogate from a client's JSON escape): replaced, so
        # the frame is valid UTF-8 (a text frame cannot carry a lone surrogate).
        return jsontext.dumps(clean(data))


def frame_bytes(frame: str | bytes, limit: int | None = None) -> int:
    """The size of a frame in bytes: a binary frame's length, a text frame's UTF-8 length.

    With ``limit``, a text frame that is surely within it (at most 4 bytes a character) or
    surely past it (at least 1 byte a character) is not encoded to be measured; the answer
    is then only exact on the right side of the limit.
    """
    if not isinstance(frame, str):
        return len(frame)
    if limit is not None and (len(frame) * 4 <= limit or len(frame) > limit):
        return len(frame)
    return len(frame.encode("utf-8", "surrogatepass"))


def decode_plain(
    frame: str | bytes, encoding: Encoding, *, max_bytes: int | None = None
) -> dict[str, Any]:
    """Decode one frame into plain data without validating it as a message.

    Args:
        frame: the frame payload; ``str`` for a text frame, ``bytes`` for a binary frame.
        encoding: the connection's encoding; JSON needs text frames, msgpack binary ones.
        max_bytes: refuse frames longer than this (None: no limit).

    Returns:
        The decoded map.

    Raises:
        ProtocolError: ``frame_too_large`` or ``bad_frame``.
    """
    if max_bytes is not None and frame_bytes(frame, max_bytes) > max_bytes:
        raise ProtocolError("frame_too_large", f"frame is longer than {max_bytes} bytes")
    if encoding == "json":
        if not isinstance(frame, str):
            raise ProtocolError("bad_frame", "cribbage.v1.json takes text frames")
        try:
            data = json.loads(frame)
        except (ValueError, RecursionError) as exc:
            raise ProtocolError("bad_frame", f"not JSON: {exc}") from None
    else:
        if not isinstance(frame, bytes | bytearray):
            raise ProtocolError("bad_frame", "cribbage.v1.msgpack takes binary frames")
        try:
            data = msgpack.unpackb(frame, raw=False, strict_map_key=True)
        except (ValueError, TypeError, msgpack.ExtraData, msgpack.FormatError,
                msgpack.StackError, RecursionError) as exc:
            raise ProtocolError("bad_frame", f"not msgpack: {exc}") from None
    if not isinstance(data, dict):
        raise ProtocolError("bad_frame", "a message must be a map/object")
    return data


def validation_text(exc: ValidationError) -> str:
    """A short, one-line account of a pydantic validation failure for an error ``message``:
    at most three faults, each ``location: what is wrong`` (no input echoed, no links)."""
    parts = []
    for err in exc.errors()[:3]:
        loc = ".".join(str(p) for p in err.get("loc", ()))
        parts.append(f"{loc}: {err.get('msg')}" if loc else str(err.get("msg")))
    return "; ".join(parts)


_OPTION_VALUES: dict[str, frozenset[str]] = {
    "create_room": frozenset({"options", "computers", "room"}),
    "set_computer": frozenset({"level"}),
}
"""Per message type: the fields whose values are options (a fault there is ``bad_options``).
For an object field (``options``, ``computers``, ``room``) only faults inside it count:
the field itself not being an object is the wrong shape (``bad_message``)."""

_OBJECT_FIELDS = frozenset({"options", "computers", "room"})


def _is_option_fault(kind: str, loc: tuple[Any, ...]) -> bool:
    fields = _OPTION_VALUES.get(kind, frozenset())
    if len(loc) < 2 or loc[0] != kind or loc[1] not in fields:
        return False
    return len(loc) >= 3 or loc[1] not in _OBJECT_FIELDS


def _is_card_fault(loc: tuple[Any, ...], error_type: str) -> bool:
    """A card text that does not match the card pattern, inside an act's action
    (``act.action.play.card`` or ``act.action.discard.cards.<i>``)."""
    if error_type != "string_pattern_mismatch" or loc[:2] != ("act", "action"):
        return False
    return loc[-1] == "card" or (len(loc) >= 2 and loc[-2] == "cards")


def _act_reject_code(data: dict[str, Any], errors: list[Any]) -> str:
    """The ``reject`` code of an ``act`` that did not validate (``system_only``,
    ``bad_card`` or ``bad_action``). ``data`` is whatever the client sent: any field may be
    a list, a map, a number or null, so nothing here assumes a field's type (a list is not
    hashable: it must never reach a set lookup)."""
    action = data.get("action")
    kind = action.get("type") if isinstance(action, dict) else None
    if isinstance(kind, str) and kind in SYSTEM_ACTION_TYPES and all(
        e["loc"][:2] == ("act", "action") for e in errors
    ):
        return "system_only"
    if errors and all(_is_card_fault(e["loc"], e["type"]) for e in errors):
        return "bad_card"
    return "bad_action"


def validate_client(data: dict[str, Any]) -> Any:
    """Validate decoded plain data as a client message.

    The code of the failure says what kind of fault it is:

    * ``bad_options``: a ``create_room`` whose only faults are values inside its
      ``options``, ``computers`` or ``room`` objects (a target of 100, an unknown level,
      an unknown or out-of-range room setting), or a ``set_computer`` whose only fault is
      its ``level`` — the same input ``POST /api/rooms`` answers with ``bad_options``;
    * ``bad_message``: anything else (an unknown ``type``, a missing or unknown field, a
      field of the wrong type, ``options`` that is not an object, …). For an ``act``,
      ``reject_code`` then says what a ``reject`` should carry.

    Returns:
        The message model (one of :data:`protocol.messages.ClientMessage`).

    Raises:
        ProtocolError: ``bad_message``, ``bad_options``, or ``bad_name`` for a ``hello``
            whose ``name`` is a string but not a display name (with ``ref`` and ``raw`` set).
    """
    kind = data.get("type")
    ref = kind if isinstance(kind, str) and len(kind) <= 32 else None
    try:
        return CLIENT_ADAPTER.validate_python(data)
    except ValidationError as exc:
        errors = exc.errors()
        code = "bad_message"
        if isinstance(kind, str) and kind in _OPTION_VALUES and errors and all(
            _is_option_fault(kind, e["loc"]) for e in errors
        ):
            code = "bad_options"
        elif kind == "hello" and isinstance(data.get("name"), str) and any(
            tuple(e.get("loc", ())) == ("hello", "name") for e in errors
        ):
            code = "bad_name"
        elif kind == "chat" and isinstance(data.get("text"), str) and any(
            tuple(e.get("loc", ())) == ("chat", "text") for e in errors
        ):
            code = "bad_chat"
        reject_code = _act_reject_code(data, errors) if kind == "act" else "bad_action"
        text = validation_text(exc)
        if reject_code == "system_only":
            text = f"act.action: {data['action']['type']!r} is applied by the server only"
        raise ProtocolError(code, text, ref=ref, raw=data, reject_code=reject_code) from None


def decode_client(
    frame: str | bytes, encoding: Encoding, *, max_bytes: int | None = DEFAULT_MAX_FRAME_BYTES
) -> Any:
    """Decode and validate one client frame (what the server does with every frame).

    Raises:
        ProtocolError: ``frame_too_large``, ``bad_frame``, ``bad_message`` or ``bad_name``.
    """
    return validate_client(decode_plain(frame, encoding, max_bytes=max_bytes))


def decode_server(frame: str | bytes, encoding: Encoding) -> Any:
    """Decode and validate one server frame (what clients do).

    Raises:
        ProtocolError: ``bad_frame`` or ``bad_message``.
    """
    data = decode_plain(frame, encoding)
    try:
        return SERVER_ADAPTER.validate_python(data)
    except ValidationError as exc:
        raise ProtocolError("bad_message", validation_text(exc), raw=data) from None


@dataclass(frozen=True)
class Codec:
    """Encoder/decoder bound to one connection's encoding."""

    encoding: Encoding

    @property
    def subprotocol(self) -> str:
        """The WebSocket subprotocol name of this encoding."""
        return subprotocol_for_encoding(self.encoding)

    def encode(self, message: BaseModel | dict[str, Any]) -> str | bytes:
        """See :func:`encode`."""
        return encode(message, self.encoding)
