"""Grading a finished game's decisions against a computer player (issue 22 point 4; pure).

What a player learns after the game: every discard (docs/rules.md §2.3) and every card
played (§3) that had a choice, compared with what the grader — a computer level's ranking of
the same choices, seen from the same seat's view — thought best: the points the choice cost
and the better choice. Nothing here does I/O; ``server.archive.grader`` runs it off the event
loop and keeps the result in the archive.

How a game is graded (:func:`grade_game`): the archived log is replayed like
``server.archive.verify.replay`` does (packs stacked from the deals' seeds, entries applied
in order, the state carrying the game's own number in the room: a rematch is game 2, and the
``expert``'s search is seeded by it). Before each logged ``discard`` or ``play`` of a seat,
the seat's ``engine.view(state, seat)`` and ``engine.legal_actions(state, seat)`` go to the
ranking (:func:`ranker`); a decision with more than one distinct choice (discards as sets of
cards, plays as ranks: a card's suit never counts in the play, docs/rules.md §3, and the
hand it leaves is already fixed, so two cards of one rank are one choice) is recorded with
its cost:

* the **value** of a choice is the ranking's own figure in points: a discard's
  ``expected`` (kept hand plus or minus the crib, with two players plus the kept four's
  pegging margin: ``engine.computer.expert``), a play's ``value`` (with two players the
  search's pegging margin over the rest of the play, and near the end its chance to win;
  with more, and in Lowball, where the ``expert`` plays as ``standard``, points now and the
  go less the next player's best reply, without ``standard``'s tie-breaks — keep low
  cards, never lead a five, lead from a pair, high cards first in Lowball — which are its
  habits, not points: ``engine.computer.pegging``). The best is still the level's own
  choice, so its own choices cost nothing, and a card that differs from it only by a
  tie-break costs nothing either;
* the **cost** is how much worse the chosen value is than the best's, in the ranking's own
  order (most points; fewest in Lowball, docs/rules.md §7): ``max(0, ±(best - chosen))``,
  0 below :data:`EXACT` (as good as the best), and at most :data:`COST_CAP` (the standard
  player adds a 1000-point bonus to a card that reaches the target; passing it by counts
  :data:`COST_CAP` points, not 1000);
* near the end, where the ranking goes by the chance to win (the ``expert``, two players),
  the chance the choice gave up is ``win_cost`` (0..1) and the cost is that chance in
  points: ``win_cost`` over what one hole is worth to the seat's chance to win at the
  decision's scores (:func:`hole_worth`), 0 below :data:`WIN_EXACT`, at most
  :data:`COST_CAP`. A play's value there is its chance to win, so only the chance can say
  what it cost, and one scale keeps the accuracy comparable across a game.

A seat's summary (:func:`summarize`) counts the decisions its occupant made: at a human seat
the moves a computer made for it (a stand-in's, a turn clock's: the log's ``auto-`` action
ids and ``timed_out`` causes) are listed with ``"by": "computer"`` but not counted.

**Accuracy** (0..100): ``100 × mean over the counted decisions of 1 / (1 + cost)``: a
decision as good as the best scores 1, one that cost 1 point ½, 3 points ¼. It measures how
close the choices came to the grader's, whatever the cards: a hand with nothing in it still
has a best discard, and the luck of the cut or of the deal moves no cost (every value is an
expectation over the cards the seat could not see). Null when the seat made no decision with
a choice.
"""

from __future__ import annotations

from typing import Any

import engine
from engine.computer import suggest
from engine.computer.expert import applies as expert_applies
from engine.computer.expert import hole_worth as expert_hole_worth
from engine.computer.pegging import rank_plays
from protocol.messages import SERVER_ACTION_ID_PREFIX

from .verify import stacked_start

GRADER_LEVEL = "expert"
"""The computer level the grading compares with (issue 22: the strongest, ``expert``);
:func:`ranker` passes it on. Each grading records it (``grader``)."""

EXACT = 0.01
"""A choice within this many points of the best is as good as the best (cost 0)."""

COST_CAP = 10.0
"""The most one decision can cost, in points (see the module docstring)."""

GRADED_KINDS = ("discard", "play")
"""The actions graded."""

WIN_EXACT = 0.001
"""Near the end, a choice that gives up less than this chance to win (0.1 %) is as good as
the best (cost 0)."""

HOLE_FLOOR = 0.005
"""The least one hole is taken to be worth in the chance to win (0.5 %) when a chance is
turned into points: where the scores all but settle the game a hole moves the chance very
little, and a small chance must not then cost many points."""


def hole_worth(view: dict[str, Any]) -> float:
    """What one hole is worth to the seat's chance to win at the view's scores (two players:
    :func:`engine.computer.expert.hole_worth`, from the win table), at least
    :data:`HOLE_FLOOR`. A chance (0..1) per hole."""
    return max(HOLE_FLOOR, expert_hole_worth(view))


def ranker(view: dict[str, Any], legal: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The grader's ranking of a seat's choices: :data:`GRADER_LEVEL`'s suggestion.

    Args:
        view: ``engine.view(state, seat)`` of the seat to move (``discard`` or ``play``
            phase).
        legal: ``engine.legal_actions(state, seat)``.

    Returns:
        The choices best first, in the level's own order, each ``{"cards": [card texts] (a
        discard's cards, or the one card played), "value": float (points, see the module
        docstring), "score": float (what the level ranks by: ``value`` with its
        tie-breaks), "win": float | None (a chance to win, when the level ranks by it)}``;
        empty when nothing is to be ranked.
    """
    advice = suggest(view, legal, level=GRADER_LEVEL)
    kind = advice.get("kind")
    points: dict[str, float] = {}
    if kind == "play" and not expert_applies(view):
        # The expert plays as ``standard`` here: its ranking's value carries standard's
        # tie-breaks, which are habits, not points; the cost is weighed without them.
        choices = [a for a in legal if a.get("type") == "play"]
        points = {row["card"]: row["value"]
                  for row in rank_plays(view, choices, tiebreaks=False)}
    rows = []
    for choice in advice.get("choices") or ():
        if kind == "discard":
            cards, score = list(choice["cards"]), choice["expected"]
        elif kind == "play":
            cards, score = [choice["card"]], choice["value"]
        else:
            continue
        win = choice.get("win")
        rows.append({"cards": cards, "value": float(points.get(cards[0], score)),
                     "score": float(score),
                     "win": float(win) if isinstance(win, int | float) else None})
    return rows


def _key(kind: str, cards: list[str]) -> tuple[str | int, ...]:
    """What tells two choices apart: a discard's cards (a suit can make a flush or his
    nobs), a play's rank (docs/rules.md §3: the play never counts a suit)."""
    if kind == "play":
        return tuple(engine.Card.parse(c).rank for c in cards)
    return tuple(sorted(str(engine.Card.parse(c)) for c in cards))


def _chosen(action: dict[str, Any]) -> list[str]:
    return list(action["cards"]) if action.get("type") == "discard" else [action["card"]]


def grade_decision(
    view: dict[str, Any], legal: list[dict[str, Any]], action: dict[str, Any],
    rank: Any = None,
) -> dict[str, Any] | None:
    """One decision graded, or None when it had no choice (or is not graded).

    Args:
        view, legal: the seat's view and legal actions before it acted.
        action: the action it took (``{"type": "discard", "cards"}`` or ``{"type":
            "play", "card"}``).
        rank: the ranking (``(view, legal) -> rows``, default :func:`ranker`).

    Returns:
        ``{"kind", "chosen": [cards], "best": [cards], "cost": float >= 0 (points),
        "chosen_value", "best_value": float (the ranking's values: points to 3 places, or
        near the end a play's chance to win, to 4; a choice as good as the best is its own
        best, with its own value and ``win_cost`` 0), "choices": int (distinct choices: a
        play's by rank)}`` plus ``"win_cost"`` (0..1, the chance to win it gave up; then
        ``cost`` is that chance in points) when the ranking gave chances to win.
    """
    kind = action.get("type")
    if kind not in GRADED_KINDS:
        return None
    options = {_key(kind, _chosen(a)) for a in legal if a.get("type") == kind}
    if len(options) < 2:
        return None
    rows = (rank or ranker)(view, legal)
    if len(rows) < 2:
        return None
    by_key = {}
    for row in rows:
        by_key.setdefault(_key(kind, row["cards"]), row)
    chosen = by_key.get(_key(kind, _chosen(action)))
    if chosen is None:
        return None
    best = rows[0]
    first, last = (r.get("score", r["value"]) for r in (rows[0], rows[-1]))
    direction = 1.0 if first >= last else -1.0
    cost = max(0.0, direction * (best["value"] - chosen["value"]))
    # Chances to win to 4 places, as the hint gives them; points to 3.
    places = 4 if chosen.get("win") is not None else 3
    out: dict[str, Any] = {
        "kind": kind, "chosen": _chosen(action), "best": list(best["cards"]),
        "chosen_value": round(chosen["value"], places),
        "best_value": round(best["value"], places),
        "choices": len(options),
    }
    exact = cost < EXACT
    if best.get("win") is not None and chosen.get("win") is not None:
        # Near the end: the chance to win it gave up, in points at this score.
        win_cost = max(0.0, best["win"] - chosen["win"])
        out["win_cost"] = round(win_cost, 4)
        exact = win_cost < WIN_EXACT
        cost = win_cost / hole_worth(view)
    # Not as good as the best: at least EXACT, so that "exact" means cost 0 everywhere.
    out["cost"] = 0.0 if exact else max(EXACT, round(min(cost, COST_CAP), 3))
    if exact:
        out["best"] = list(out["chosen"])
        out["best_value"] = out["chosen_value"]
        if "win_cost" in out:
            out["win_cost"] = 0.0
    return out


def _automated(entry: dict[str, Any]) -> bool:
    """Whether the server's computer made this logged action (a computer seat, a
    stand-in, a turn clock that ran out): a client's ``action_id`` never begins with
    ``auto-`` (``protocol.messages.Act`` refuses it)."""
    return (bool(entry.get("timed_out"))
            or str(entry.get("id") or "").startswith(SERVER_ACTION_ID_PREFIX))


def grade_game(
    options: dict[str, Any], entries: list[dict[str, Any]], deal_seeds: list[str | None],
    kinds: list[str] | None = None, rank: Any = None, number: int | None = None,
) -> dict[str, Any]:
    """Every decision of an archived game graded, and each seat's summary.

    Args:
        options: the game's options (``games.options``).
        entries: its log entries, oldest first (``game_logs.entries``).
        deal_seeds: each deal's seed, hex (``game_deals.seed`` in deal order).
        kinds: each seat's kind (``game_seats.kind``: ``human``, ``computer``, ``open``);
            at a ``human`` seat the computer's moves are not counted. None: all counted.
        rank: the ranking (default :func:`ranker`).
        number: the game's number in its room (``games.game_number``; None: read from the
            log's ``game_start``, :func:`.verify.game_number`).

    Returns:
        ``{"grader": level, "moves": [{"deal": int, "seat": int, "by": "player" |
        "computer", ...grade_decision}], "seats": [summarize rows]}``, moves in the order
        played. Deterministic: the same game gives the same grading.

    Raises:
        ValueError: the log has no game start, or a deal has no seed.
        engine.RulesError: the log does not match its deals.
    """
    # The seat's view names the room's game (a rematch is game 2, 3, ...) and the
    # computers' searches are seeded by it: stacked_start gives the replay that number, or
    # the grader would sample other holdings than the hint and the computer did.
    state, _ = stacked_start(options, entries, deal_seeds, "grading", number=number)
    players = state.players
    moves = []
    for entry in entries[1:]:
        action = entry.get("action")
        if action is None or state.phase == "game_over":
            continue
        seat = entry.get("seat")
        if isinstance(seat, int) and action.get("type") in GRADED_KINDS:
            view = engine.view(state, seat)
            graded = grade_decision(view, engine.legal_actions(state, seat), action, rank)
            if graded is not None:
                moves.append({"deal": int(view.get("deal_number") or 0), "seat": seat,
                              "by": "computer" if _automated(entry) else "player", **graded})
        state, _ = engine.apply(state, seat, action)
    return {"grader": GRADER_LEVEL, "moves": moves,
            "seats": summarize(players, moves, kinds)}


def accuracy(costs: list[float]) -> float | None:
    """The accuracy of decisions that cost ``costs`` points: ``100 × mean(1 / (1 + cost))``
    rounded to 0.1, or None for no decision (see the module docstring)."""
    if not costs:
        return None
    return round(100.0 * sum(1.0 / (1.0 + c) for c in costs) / len(costs), 1)


def summarize(
    players: int, moves: list[dict[str, Any]], kinds: list[str] | None = None
) -> list[dict[str, Any]]:
    """Each seat's summary of the graded moves.

    Args:
        players: seats at the table.
        moves: :func:`grade_game`'s moves.
        kinds: each seat's kind (a ``human`` seat counts only its player's own moves).

    Returns:
        One row per seat: ``{"seat", "decisions": int (counted decisions with a choice),
        "exact": int (of those, as good as the best), "cost": float (their total cost,
        points), "cost_per_decision": float | None, "accuracy": float | None (0..100),
        "computer_moves": int (graded moves the computer made for a human seat, not
        counted)}``.
    """
    out = []
    for seat in range(players):
        human = kinds is not None and seat < len(kinds) and kinds[seat] == "human"
        mine = [m for m in moves if m["seat"] == seat]
        counted = [m for m in mine if not (human and m["by"] == "computer")]
        costs = [float(m["cost"]) for m in counted]
        total = round(sum(costs), 3)
        out.append({
            "seat": seat, "decisions": len(counted),
            "exact": sum(1 for c in costs if c == 0),
            "cost": total,
            "cost_per_decision": round(total / len(costs), 3) if costs else None,
            "accuracy": accuracy(costs),
            "computer_moves": len(mine) - len(counted),
        })
    return out


def grade_archived(
    options: dict[str, Any], entries: list[dict[str, Any]], seeds: list[str | None],
    kinds: list[str], number: int | None = None,
) -> dict[str, Any]:
    """:func:`grade_game`, or ``{"grader", "error": why, "moves": [], "seats": []}`` when the
    game cannot be graded: what the grader's process pool runs (plain data in and out,
    never raising for a log that does not replay; this module imports only the engine, so
    the worker starts quickly)."""
    try:
        return grade_game(options, entries, seeds, kinds, number=number)
    except (ValueError, KeyError, TypeError, engine.RulesError) as exc:
        return {"grader": GRADER_LEVEL, "error": f"{type(exc).__name__}: {exc}",
                "moves": [], "seats": []}
