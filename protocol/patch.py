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
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _same(a: Any, b: Any) -> bool:
    """Equality as JSON sees it: unlike Python's ==, true is not 1 and 1 is not 1.0."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(str(key))}"})
        for key, value in new.items():
            sub = f"{path}/{_escape(str(key))}"
            if key not in old:
                ops.append({"op": "add", "path": sub, "value": value})
            elif not _same(old[key], value):
                _diff(old[key], value, sub, ops)
        return
    if isinstance(old, list) and isinstance(new, list):
        n = len(old)
        if len(new) > n and all(_same(a, b) for a, b in zip(old, new[:n], strict=True)):
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
