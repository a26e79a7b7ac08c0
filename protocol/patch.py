"""RFC 6902 JSON Patch between two views of a room.

The server sends each connection, with every ``update``, the patch that turns the view it
sent at the previous version into the view at the new one; any JSON Patch library in any
language applies it.

:func:`diff` is a small structural diff written for views: objects are compared key by key,
a list that only grew gets ``add`` operations at its end (``/-``), any other changed list or
value is replaced whole. It is about two orders of magnitude faster than
``jsonpatch.make_patch`` on views (which looks for moves inside lists) and the patches are
still small, since view lists are short. :func:`apply` uses the ``jsonpatch`` library, and
the tests check :func:`diff` against it.

Speed: the server diffs every connection's view on every accepted action, and most of a view
does not change from one version to the next. Equal subtrees are recognised without walking
them in Python: Python's ``==`` (in C) rejects most unequal ones at once, and for plain JSON
data two values are equal *as JSON* when they are ``==`` and have the same ``repr`` (which
tells ``True`` from ``1`` and ``1`` from ``1.0``, the cases where ``==`` is too lenient).
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

import jsonpatch
import typing_extensions as te
from pydantic import ConfigDict, Field, with_config


def _any_value(schema: dict[str, Any]) -> None:
    """Make ``value`` the empty schema ``{}`` (any JSON value: a number, text, a list, an
    object, null …). Pydantic gives it a title, and a schema with a title or a description
    but no type reads as "an object" to code generators (json-schema-to-typescript writes
    an interface); ``{}`` comes out as ``unknown`` / ``Any``."""
    schema["properties"]["value"] = {}


_STRICT = ConfigDict(extra="forbid", strict=True)
_WITH_VALUE = ConfigDict(extra="forbid", strict=True, json_schema_extra=_any_value)


@with_config(_WITH_VALUE)
class AddOperation(te.TypedDict):
    """RFC 6902 ``add``: ``value`` goes at ``path`` (``/-``: the end of a list)."""

    op: Literal["add"]
    path: str
    value: Any


@with_config(_STRICT)
class RemoveOperation(te.TypedDict):
    """RFC 6902 ``remove``: the member at ``path`` goes."""

    op: Literal["remove"]
    path: str


@with_config(_WITH_VALUE)
class ReplaceOperation(te.TypedDict):
    """RFC 6902 ``replace``: ``value`` takes the place of what is at ``path`` (``""``: the
    whole document)."""

    op: Literal["replace"]
    path: str
    value: Any


PatchOperation = Annotated[
    AddOperation | RemoveOperation | ReplaceOperation, Field(discriminator="op")
]
"""One operation of the patches :func:`diff` makes (only these three kinds)."""


def _escape(key: str) -> str:
    if "~" in key or "/" in key:
        return key.replace("~", "~0").replace("/", "~1")
    return key


def _same(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: unlike Python's ==, true is not 1 and 1 is not 1.0.

    For plain JSON data (dicts with text keys, lists, text, numbers, booleans, None) ``repr``
    tells apart every two values that differ as JSON, and ``==`` is true for every two that
    are the same; together they decide in C. (Two equal objects whose keys come in another
    order have different ``repr``: they count as different, which only costs a ``replace``
    that was not needed.) Containers whose items are the very same objects are the same
    without a ``repr``.
    """
    if a is b:
        return True
    if a != b:
        return False
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is list:
        for x, y in zip(a, b, strict=True):
            if x is not y:
                return repr(a) == repr(b)
        return True
    if kind is dict:
        for key, value in a.items():
            if value is not b[key]:
                return repr(a) == repr(b)
        return True
    return True


_SCALARS = (str, int, float, bool, type(None))
"""Types whose equal values of the same type are the same JSON (``_same`` without a call)."""
_MISSING: Any = object()


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    """Append the operations turning ``old`` into ``new`` (known to differ) at ``path``."""
    if type(old) is dict and type(new) is dict:
        if len(old) != len(new) or old.keys() != new.keys():
            for key in old:
                if key not in new:
                    ops.append({"op": "remove", "path": f"{path}/{_escape(str(key))}"})
        for key, value in new.items():
            before = old.get(key, _MISSING)
            if before is value:
                continue
            if before is _MISSING:
                ops.append({"op": "add", "path": f"{path}/{_escape(str(key))}", "value": value})
                continue
            kind = type(value)
            if kind is type(before) and kind in _SCALARS and before == value:
                continue  # an equal scalar of the same type: the same as JSON
            if _same(before, value):
                continue
            _diff(before, value, f"{path}/{_escape(str(key))}", ops)
        return
    if type(old) is list and type(new) is list:
        n = len(old)
        if len(new) > n and _same(old, new[:n]):
            for value in new[n:]:
                ops.append({"op": "add", "path": f"{path}/-", "value": value})
            return
    ops.append({"op": "replace", "path": path, "value": new})


def diff(old: dict[str, Any] | None, new: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The RFC 6902 operations that turn ``old`` into ``new``.

    Args:
        old: the view the client holds (None before the game started).
        new: the view to reach (None is allowed, e.g. a room that has not started).

    Returns:
        A list of operation objects (``{"op": "replace", "path": "/count", "value": 17}``);
        empty when the documents are equal. When either side is not an object the patch
        replaces the whole document (path ``""``). Values in the patch share
        structure with ``new`` (encode the patch before mutating ``new``).
    """
    ops: list[dict[str, Any]] = []
    if not _same(old, new):
        _diff(old, new, "", ops)
    return ops


def apply(doc: Any, patch: list[dict[str, Any]]) -> Any:
    """Apply an RFC 6902 patch to a copy of ``doc`` (with ``jsonpatch``) and return it.

    Raises:
        jsonpatch.JsonPatchException, jsonpointer.JsonPointerException: the patch does not
            apply to ``doc``.
    """
    if not patch:
        return copy.deepcopy(doc)
    return jsonpatch.apply_patch(doc, patch, in_place=False)
