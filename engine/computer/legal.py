"""Legal actions from a seat's view alone (for clients such as ``cribbage-bot``).

A client over the wire holds only its seat's ``view`` (a snapshot plus JSON patches), never
the game state, so it cannot call :func:`engine.legal_actions`. It does not need to: the
view carries them (``view["legal"]``, exactly ``engine.legal_actions(state, seat)``), so
the rules of who may do what live in one place, the engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..shapes import Action
from ..state import plain_copy


def legal_from_view(view: Mapping[str, Any] | None) -> list[Action]:
    """Every action the view's seat may take now: ``view["legal"]``, the same list (same
    order) as ``engine.legal_actions(state, view["seat"])`` for the state the view was made
    from; a fresh copy.

    Args:
        view: ``engine.view(state, seat)`` (or the same document kept up to date by patches);
            ``None`` (game not started) or a spectator's view gives ``[]``.

    Returns:
        Plain action dicts (docs/rules.md, "Actions"); ``[]`` when the seat has nothing to do.

    Raises:
        KeyError: a seat's view without ``legal`` (made by an engine older than the field).
    """
    if not view or view.get("seat") is None:
        return []
    return plain_copy(view["legal"])
