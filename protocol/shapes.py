"""Pydantic types for the engine's data on the wire, built from :mod:`engine.shapes`.

The engine states its shapes once, as standard-library ``TypedDict``s (it may not import
pydantic). This module rebuilds each of them as a ``typing_extensions.TypedDict`` pydantic
can validate — same name, same fields, same required and optional keys, strict types, no
extra fields, the engine's :class:`~engine.shapes.Range` / :class:`~engine.shapes.Pattern`
markers turned into constraints and each field's docstring into its description — so the
message models and the JSON Schema follow the engine by construction:

* :data:`View`: ``engine.view(state, seat)`` plus the server's ``turn_clock``;
* :data:`EngineEvent` (the engine's events) and :data:`Event` (those plus the server's,
  :mod:`protocol.events`), discriminated by ``type``;
* :data:`Suggestion` (discriminated by ``kind``), :data:`Options`, :data:`GameResult`.

The engine's actions are not rebuilt: they map to the models ``act`` takes
(:mod:`protocol.actions`), so a view's ``legal`` entries and a hint's ``best`` have exactly
the schema of an ``act``'s ``action``.

Adapters (:data:`VIEW_ADAPTER`, :data:`EVENT_ADAPTER`, :data:`ENGINE_EVENT_ADAPTER`,
:data:`SUGGESTION_ADAPTER`, :data:`LEGAL_ADAPTER`, :data:`OPTIONS_ADAPTER`) validate plain
data and raise ``pydantic.ValidationError``.
"""

import ast
import inspect
import types
import typing
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typing_extensions as te
from pydantic import ConfigDict, Field, TypeAdapter

from engine import shapes as es

from . import actions
from .events import SERVER_EVENTS

STRICT = ConfigDict(extra="forbid", strict=True)
"""The config of every rebuilt type: unknown fields refused, no type coercion."""

_ACTIONS: dict[Any, Any] = {
    es.DiscardAction: actions.DiscardAction,
    es.PlayAction: actions.PlayAction,
    es.AnnounceAction: actions.AnnounceAction,
    es.AnswerAction: actions.AnswerAction,
    es.RematchAction: actions.RematchAction,
    es.AnswerTimeoutAction: actions.AnswerTimeoutAction,
    es.ForfeitAction: actions.ForfeitAction,
}
"""Engine action shapes -> the protocol's action models (checked equal by a test)."""

_NOT_REQUIRED = {typing.NotRequired, te.NotRequired}
_UNIONS = {Union, types.UnionType}


def _docs_of(module: types.ModuleType) -> dict[str, tuple[list[str], dict[str, str]]]:
    """For each class of ``module``: its base class names and its fields' docstrings (the
    string literal right after a field's annotation)."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):  # pragma: no cover - source not shipped
        return {}
    found: dict[str, tuple[list[str], dict[str, str]]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        docs: dict[str, str] = {}
        body = node.body
        for stmt, after in zip(body, body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[stmt.target.id] = inspect.cleandoc(after.value.value)
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        found[node.name] = (bases, docs)
    return found


_ENGINE_DOCS = _docs_of(es)


def _field_docs(name: str) -> dict[str, str]:
    bases, docs = _ENGINE_DOCS.get(name, ([], {}))
    merged: dict[str, str] = {}
    for base in bases:
        merged.update(_field_docs(base))
    merged.update(docs)
    return merged


def _constraint(marker: Any) -> Any:
    if isinstance(marker, es.Range):
        return Field(ge=marker.lo, le=marker.hi)
    if isinstance(marker, es.Pattern):
        return Field(pattern=marker.regex)
    raise TypeError(f"engine.shapes marker {marker!r} has no translation")


def _tag(members: tuple[Any, ...]) -> str | None:
    """The key (``type`` or ``kind``) whose single literal value tells ``members`` (engine
    typed dicts) apart, if there is one."""
    for key in ("type", "kind"):
        values = []
        for m in members:
            hint = typing.get_type_hints(m).get(key)
            if get_origin(hint) is not Literal or len(get_args(hint)) != 1:
                break
            values.append(get_args(hint)[0])
        else:
            if len(set(values)) == len(values):
                return key
    return None


_built: dict[Any, Any] = {}


def translate(tp: Any) -> Any:
    """The pydantic-ready type for an :mod:`engine.shapes` type (recursively).

    Raises:
        TypeError: a construct this translation does not know (so a new kind of type in
            ``engine.shapes`` cannot slip through unchecked).
    """
    try:
        if tp in _ACTIONS:
            return _ACTIONS[tp]
    except TypeError:  # unhashable
        pass
    if tp == es.Action:
        return actions.Action
    if te.is_typeddict(tp):
        return typed_dict(tp)
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Annotated:
        base, *markers = args
        return Annotated[(translate(base), *(_constraint(m) for m in markers))]
    if origin is Literal:
        return tp
    if origin in _UNIONS:
        members = tuple(translate(a) for a in args)
        union = Union[members]  # noqa: UP007 - built from a tuple
        if len(args) > 1 and all(te.is_typeddict(a) for a in args):
            tag = _tag(args)
            if tag is not None:
                return Annotated[union, Field(discriminator=tag)]
        return union
    if origin is list:
        return list[translate(args[0])]
    if origin is dict:
        return dict[translate(args[0]), translate(args[1])]
    if tp in (int, str, bool, float, type(None), None):
        return tp
    raise TypeError(f"no translation for {tp!r}")


def typed_dict(cls: type, extra: dict[str, Any] | None = None) -> Any:
    """``cls`` (an engine ``TypedDict``) rebuilt for pydantic: same name, fields and
    required keys; strict, no extra fields; field docstrings as descriptions. ``extra``
    adds fields (already pydantic-ready, wrapped in ``NotRequired`` when optional); a
    class rebuilt without ``extra`` is built once and shared."""
    if extra is None and cls in _built:
        return _built[cls]
    docs = _field_docs(cls.__name__)
    fields: dict[str, Any] = {}
    for key, hint in typing.get_type_hints(cls, include_extras=True).items():
        if get_origin(hint) in _NOT_REQUIRED:
            hint = get_args(hint)[0]
        tp = translate(hint)
        if key in docs:
            tp = Annotated[tp, Field(description=docs[key])]
        fields[key] = tp if key in cls.__required_keys__ else te.NotRequired[tp]
    fields.update(extra or {})
    new = te.TypedDict(cls.__name__, fields)  # type: ignore[operator]
    new.__doc__ = inspect.cleandoc(cls.__doc__) if cls.__doc__ else None
    new.__module__ = __name__
    new.__pydantic_config__ = STRICT  # type: ignore[attr-defined]
    if extra is None:
        _built[cls] = new
    return new


TurnClock = Annotated[
    dict[Annotated[str, Field(pattern="^[0-3]$")], Annotated[int, Field(ge=0)]],
    Field(
        description="Seat (as text) -> Unix time in milliseconds of that seat's turn "
        "deadline; {} when the room has no turn clock. Added by the server."
    ),
]
"""The server's turn clock in a view."""

Options = typed_dict(es.Options)
GameResult = typed_dict(es.GameResult)
View = typed_dict(es.View, extra={"turn_clock": TurnClock})
"""The view as sent: ``engine.view(state, seat)`` and ``turn_clock``."""

ENGINE_EVENTS: tuple[Any, ...] = tuple(typed_dict(e) for e in get_args(es.Event))
EngineEvent = translate(es.Event)
"""Any engine event, discriminated by ``type``."""

Event = Annotated[
    Union[(*ENGINE_EVENTS, *SERVER_EVENTS)],  # noqa: UP007 - built from a tuple
    Field(discriminator="type"),
]
"""Any event of an ``update``: the engine's and the server's, discriminated by ``type``."""

EVENT_TYPES: frozenset[str] = frozenset(
    get_args(typing.get_type_hints(e)["type"])[0] for e in (*ENGINE_EVENTS, *SERVER_EVENTS)
)
"""The ``type`` of every event a client may receive."""

Suggestion = translate(es.Suggestion)
"""``engine.computer.suggest``'s answer, discriminated by ``kind``."""

VIEW_ADAPTER: TypeAdapter[Any] = TypeAdapter(View)
EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(Event)
ENGINE_EVENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(EngineEvent)
SUGGESTION_ADAPTER: TypeAdapter[Any] = TypeAdapter(Suggestion)
LEGAL_ADAPTER: TypeAdapter[Any] = TypeAdapter(list[actions.Action])
OPTIONS_ADAPTER: TypeAdapter[Any] = TypeAdapter(Options)
