"""Computer players: pick an action from a seat's view (issue 4; docs/architecture.md).

Two public functions, both pure (no I/O, no clock, standard library only) and both given
nothing but what a human seat gets — ``engine.view(state, seat)`` and
``engine.legal_actions(state, seat)``:

* :func:`decide` — the action a computer seat takes, at level ``"easy"``, ``"standard"`` or
  ``"expert"``.
* :func:`legal_from_view` — the legal actions from the view alone, for clients that hold
  only a view (``cribbage-bot``).
* :func:`suggest` — a level's advice for a hint (``standard`` unless asked): the discards
  ranked with their expected points, the card to play, or under Muggins what is being
  counted (never the count).

Levels:

``"expert"``
    Two players: discards by hand + crib + the kept four's pegging margin, pegging by a
    search of the rest of the play over the opponent's possible holdings, and near the end
    both by the chance to win from a table (:mod:`.expert`, :mod:`.winprob`,
    :mod:`.lookahead`; issue 22). Three or four players, partnerships and Lowball: as
    ``standard``. Muggins as ``standard``.
``"standard"``
    Discards by expected value over every starter it cannot see, counting the kept cards
    exactly and the crib from a table (:mod:`.discard`); pegs with a one-reply lookahead
    (:mod:`.pegging`); in Lowball (docs/rules.md §7) it plays for the fewest points; under Muggins
    it announces its true count and calls ``muggins`` / ``overcount`` on every wrong
    announcement (docs/rules.md §5, :mod:`.muggins`).
``"easy"``
    Any legal discard or card, at random (seeded). Under Muggins it too announces its true
    count (issue 4), accepts right announcements and overlooks half of the wrong ones on
    purpose (it accepts them).

Rematch: a computer seat never asks for a rematch by itself. :func:`decide` returns
``None`` when the only legal action is ``rematch`` unless the caller passes
``rematch=True``; it also returns ``None`` when ``legal`` is empty.
"""

from __future__ import annotations

import random
from typing import Any

from ..shapes import Action, Suggestion
from . import muggins
from .discard import rank_discards
from .expert import applies as expert_applies
from .expert import near_end, rank_discards_expert, rank_plays_expert
from .legal import legal_from_view
from .pegging import rank_plays

LEVELS = ("easy", "standard", "expert")
"""The computer players' levels."""

EASY_MISS_RATE = 0.5
"""Share of wrong Muggins announcements the ``easy`` player overlooks (accepts)."""

__all__ = ["LEVELS", "EASY_MISS_RATE", "decide", "legal_from_view", "suggest"]


def _kinds(legal: list[dict]) -> set[str]:
    return {a.get("type") for a in legal}


def _rng(view: dict, seed: int | str) -> random.Random:
    """A generator fixed by ``seed`` and the position, so ``seed=0`` still varies by move."""
    pending = (view.get("show") or {}).get("pending") or {}
    key = "|".join(
        str(x)
        for x in (
            seed,
            view.get("seat"),
            view.get("games_played"),
            view.get("deal_number"),
            view.get("phase"),
            ",".join(view.get("hand") or ()),
            len(view.get("played") or ()),
            pending.get("seat"),
            pending.get("kind"),
        )
    )
    return random.Random(key)


def decide(
    view: dict[str, Any],
    legal: list[dict[str, Any]],
    level: str = "standard",
    *,
    seed: int | str = 0,
    rematch: bool = False,
) -> Action | None:
    """The action a computer player takes.

    Args:
        view: ``engine.view(state, seat)`` for the computer's seat — plain data, the only
            knowledge of the game it is given.
        legal: ``engine.legal_actions(state, seat)`` for that seat.
        level: ``"easy"``, ``"standard"`` or ``"expert"``.
        seed: fixes the ``easy`` player's random choices (with the position); the
            ``standard`` and ``expert`` players are deterministic and ignore it (the
            expert's samples are seeded by the view).
        rematch: return the ``rematch`` action when it is the only thing to do (game over);
            by default a computer never asks for one.

    Returns:
        One element of ``legal`` (the very object), or ``None`` when ``legal`` is empty or
        holds only ``rematch`` and ``rematch`` is false.

    Raises:
        ValueError: an unknown level.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    if not legal:
        return None
    kinds = _kinds(legal)
    if kinds == {"rematch"}:
        return legal[0] if rematch else None
    choices = [a for a in legal if a.get("type") != "rematch"]
    if "announce" in kinds:
        return muggins.announce(view, choices)
    if "answer" in kinds:
        miss = level == "easy" and _rng(view, seed).random() < EASY_MISS_RATE
        return muggins.answer(view, choices, miss=miss)
    if level == "easy":
        return _rng(view, seed).choice(choices)
    expert = level == "expert"
    if "discard" in kinds:
        ranked = (rank_discards_expert if expert else rank_discards)(view, choices)
        if ranked:
            return ranked[0]["action"]
    if "play" in kinds:
        if len(choices) == 1:
            return choices[0]  # one card: nothing to weigh
        ranked = (rank_plays_expert if expert else rank_plays)(view, choices)
        if ranked:
            return ranked[0]["action"]
    return choices[0]


def _without_own_count(view: dict[str, Any], legal: list[dict[str, Any]]
                       ) -> list[dict[str, Any]]:
    """Under Muggins, a play hint near the end ranked as far from it, by the pegging margin
    with a game won or lost in the play counted (not by the chance to win, which rests on
    the seat's own show counted exactly: the chance, and even the order it gives, would tell
    the player something of the count Muggins asks them to make; an outside check pinned
    the count from the order alone in 1 % of such hints and narrowed it in 41 %), each card
    valued by its pegging margin alone (a number of holes, never a game won or lost), and
    without ``win`` (docs/rules.md §5, docs/protocol.md "hint"). The suggestion may then
    differ from what the expert computer plays, and from a grading's best."""
    order = rank_plays_expert(view, legal, near=False)
    margin = {row["card"]: row["value"]
              for row in rank_plays_expert(view, legal, near=False, ends=False)}
    return [{k: v for k, v in row.items() if k != "win"} | {"value": margin[row["card"]]}
            for row in order]


def suggest(
    view: dict[str, Any], legal: list[dict[str, Any]], level: str = "standard"
) -> Suggestion:
    """A computer level's advice for a human seat's hint (``standard`` unless asked).

    Args:
        view: ``engine.view(state, seat)`` for the seat asking.
        legal: ``engine.legal_actions(state, seat)`` for that seat.
        level: ``"standard"`` or ``"expert"`` (``"easy"`` advises as ``standard``). The
            expert's discard choices also carry ``play`` (the kept four's average pegging
            margin, included in ``expected``) and near the end ``win`` (the chance to win,
            by which they are ranked); its play choices' ``value`` is the search's average
            pegging margin, or near the end the chance to win (also ``win``, even for a
            card that is the only one that can be played) — except under Muggins, where
            near the end the cards are ranked as far from it and carry the margin and no
            ``win`` (the chance would tell something of the seat's own count).

    Raises:
        ValueError: an unknown level.

    Returns:
        Plain data (:data:`engine.shapes.Suggestion`) with ``kind`` and ``best`` (the
        suggested member of ``legal``, or ``None``), and ``goal`` (``"most"``, or
        ``"fewest"`` in Lowball):

        * ``{"kind": "discard", "choices": [{"cards": [...], "expected": float,
          "hand": float, "crib": float}, ...], "best": action}`` — every discard, best
          first; ``expected`` is the expected points of the choice in holes (kept hand plus
          own crib, or minus an opponent's crib; see :mod:`.discard`);
        * ``{"kind": "play", "choices": [{"card", "points", "reply", "stuck", "value"}, ...],
          "best": action}`` — see :func:`.pegging.rank_plays`;
        * ``{"kind": "announce", "counting": "hand" | "crib", "best": None}`` under
          Muggins: never the count, nor an announcement that would carry it;
        * ``{"kind": "answer", "counting": "hand" | "crib", "announced": int,
          "best": None}`` under Muggins: neither the true count nor the right call;
        * ``{"kind": "none", "best": None}`` when there is nothing to advise (no legal
          action, or only ``rematch``).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    expert = level == "expert"
    lowball = bool((view.get("options") or {}).get("lowball"))
    base: dict[str, Any] = {"goal": "fewest" if lowball else "most"}
    kinds = _kinds(legal)
    choices = [a for a in legal if a.get("type") != "rematch"]
    if "discard" in kinds:
        ranked = (rank_discards_expert if expert else rank_discards)(view, choices)
        return {
            **base,
            "kind": "discard",
            "choices": [{k: v for k, v in row.items() if k != "action"} for row in ranked],
            "best": ranked[0]["action"] if ranked else None,
        }
    if "play" in kinds:
        if (expert and (view.get("options") or {}).get("muggins")
                and expert_applies(view) and near_end(view)):
            ranked = _without_own_count(view, choices)
        else:
            ranked = (rank_plays_expert if expert else rank_plays)(view, choices)
        return {
            **base,
            "kind": "play",
            "choices": [{k: v for k, v in row.items() if k != "action"} for row in ranked],
            "best": ranked[0]["action"] if ranked else None,
        }
    pending = (view.get("show") or {}).get("pending") or {}
    counting = "crib" if pending.get("kind") == "crib" else "hand"
    if "announce" in kinds:
        # Never the count (nor the announcement that would carry it): Muggins rewards
        # counting your own hand (issue 12).
        return {**base, "kind": "announce", "counting": counting, "best": None}
    if "answer" in kinds:
        # Never the true count nor the right call, which would give it away.
        return {
            **base,
            "kind": "answer",
            "counting": counting,
            "announced": pending.get("announced"),
            "best": None,
        }
    return {**base, "kind": "none", "best": None}
