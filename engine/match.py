"""Match play: best of 3, 5 or 7 games, scored in game points as the ACC does (docs/rules.md §8).

A match is plain data kept in :attr:`engine.GameState.match` (``None`` for a single game,
"best of 1", so a single game's state, view and events are exactly as without matches).
Its shape is :class:`engine.shapes.Match`::

    {"best_of": 3, "number": 1, "needed": 2,
     "games": [{"game_number": 1, "winner": 0, "points": [2, 0], "spread": [14, -14],
                "forfeit": []}],
     "wins": [1, 0], "points": [2, 0], "spread": [14, -14],
     "over": False, "winner": None, "reason": None, "forfeited": []}

All lists are per side (docs/rules.md §1.2). The engine never changes a match dict in
place once a state holds it: every change builds a new one (``GameState.clone`` shares it).

* Game points (ACC rule 12.1, docs/rules.md §8.2): the winner scores 2, or 3 when a loser
  was skunked or double skunked (§4.4); a loser 0. A drawn Lowball game (3 or 4 playing
  alone, §7.3) scores 0 for everyone and is nobody's win.
* Spread (§8.3): the winner ``+|winner - nearest loser|`` holes, each loser
  ``-|winner - that loser|``; a draw 0 for everyone.
* The match is over when a side has won ``needed = best_of // 2 + 1`` games (§8.1).
* Who deals first in the later games of a match: docs/rules.md §8.4 (as a rematch, §2.1).
* ``forfeit`` (system only, §8.5): the server ends the match because sides left it.
"""

from __future__ import annotations

from .errors import BAD_ACTION, WRONG_PHASE, RulesError
from .shapes import Event, GameResult, Match, MatchGame
from .state import GameState

BEST_OF: tuple[int, ...] = (1, 3, 5, 7)
"""The match lengths a room may choose (1: a single game, no match)."""


def check_best_of(best_of: object) -> int:
    """``best_of`` if it is one of :data:`BEST_OF`.

    Raises:
        ValueError: anything else (a bool included).
    """
    if isinstance(best_of, bool) or not isinstance(best_of, int) or best_of not in BEST_OF:
        raise ValueError(f"match must be best of 1, 3, 5 or 7, not {best_of!r}")
    return best_of


def new_match(best_of: int, sides: int, number: int = 1) -> Match | None:
    """A match not yet begun: no games, every total 0 (docs/rules.md §8.1).

    Args:
        best_of: 1, 3, 5 or 7; 1 gives ``None`` (a single game, no match).
        sides: the number of sides (2, 3 or 4; partnerships are 2).
        number: the room's match number (1, then +1 for each new match after one is over).

    Raises:
        ValueError: ``best_of`` not in :data:`BEST_OF`.
    """
    check_best_of(best_of)
    if best_of == 1:
        return None
    return {
        "best_of": best_of, "number": number, "needed": best_of // 2 + 1, "games": [],
        "wins": [0] * sides, "points": [0] * sides, "spread": [0] * sides,
        "over": False, "winner": None, "reason": None, "forfeited": [],
    }


def game_points(result: GameResult, sides: int) -> list[int]:
    """Game points per side for one finished game (ACC rule 12.1, docs/rules.md §8.2): the
    winner 2, or 3 when any loser was skunked or double skunked; every loser 0; a draw 0
    for all."""
    points = [0] * sides
    winner = result["winner"]
    if winner is not None:
        skunked = any(level != "none" for level in result["skunks"].values())
        points[winner] = 3 if skunked else 2
    return points


def game_spread(result: GameResult, sides: int) -> list[int]:
    """Spread per side for one finished game, in holes (docs/rules.md §8.3): the winner
    ``+|winner - nearest loser|``, each loser ``-|winner - that loser|``, a draw 0 for all.
    In Lowball the winner has fewer holes than the losers; the distance counts the same."""
    spread = [0] * sides
    winner = result["winner"]
    if winner is None:
        return spread
    scores = result["scores"]
    gaps = {s: abs(scores[winner] - scores[s]) for s in result["losers"]}
    for side, gap in gaps.items():
        spread[side] = -gap
    spread[winner] = min(gaps.values()) if gaps else 0
    return spread


def _score_event(match: Match) -> Event:
    return {"type": "match_score", **_copy(match)}  # type: ignore[typeddict-item]


def _over_event(state: GameState, match: Match) -> Event:
    winner = match["winner"]
    return {
        "type": "match_over", "winner": winner,
        "winner_seats": state.options.seats_of(winner) if winner is not None else [],
        "wins": list(match["wins"]), "points": list(match["points"]),
        "spread": list(match["spread"]), "reason": match["reason"],
    }


def _copy(match: Match) -> Match:
    out = dict(match)
    out["games"] = [{**g, "points": list(g["points"]), "spread": list(g["spread"]),
                     "forfeit": list(g["forfeit"])} for g in match["games"]]
    for key in ("wins", "points", "spread", "forfeited"):
        out[key] = list(match[key])
    return out  # type: ignore[return-value]


def record_game(state: GameState, events: list[Event]) -> None:
    """Score the game that has just ended into the state's match (docs/rules.md §8).

    Call right after ``game_over`` (``state.result`` set) when ``state.match`` is not None.
    Sets ``state.match`` to a new dict with the game appended and the totals, emits
    ``match_score`` (the whole match) and, when a side now has ``needed`` wins,
    ``match_over`` ``{winner, winner_seats, wins, points, spread, reason: "won"}``.
    """
    match = state.match
    result = state.result
    if match is None or result is None or match["over"]:
        return
    sides = state.options.sides
    points = game_points(result, sides)
    spread = game_spread(result, sides)
    game: MatchGame = {"game_number": state.game_number, "winner": result["winner"],
                       "points": points, "spread": spread, "forfeit": []}
    new = _copy(match)
    new["games"].append(game)
    if result["winner"] is not None:
        new["wins"][result["winner"]] += 1
    new["points"] = [a + b for a, b in zip(new["points"], points, strict=True)]
    new["spread"] = [a + b for a, b in zip(new["spread"], spread, strict=True)]
    decided = [s for s in range(sides) if new["wins"][s] >= new["needed"]]
    if decided:
        new["over"], new["winner"], new["reason"] = True, decided[0], "won"
    state.match = new
    events.append(_score_event(new))
    if new["over"]:
        events.append(_over_event(state, new))


def forfeit(state: GameState, seat: int | None, action: dict, events: list[Event]) -> None:
    """System action ``{"type": "forfeit", "sides": [side, ...]}`` (docs/rules.md §8.5):
    the sides named leave the match and lose it; the match ends at once.

    Accepted only at game over of a match that is not over. The forfeiting sides lose; the
    other sides are ranked by games won, then game points, then spread, and the first wins
    (``winner`` null when the first two are level on all three, or when every side
    forfeits). The last game of ``games`` records the forfeiting sides in its ``forfeit``.
    Emits ``match_score`` and ``match_over`` (``reason: "forfeit"``).

    Raises:
        RulesError: ``wrong_phase`` (the game is not over, or the match already is),
            ``bad_action`` (no match in this room, or ``sides`` not a non-empty list of
            distinct sides of the game).
    """
    match = state.match
    if match is None:
        raise RulesError(BAD_ACTION, "a forfeit needs a match (best of 3, 5 or 7)")
    if state.phase != "game_over":
        raise RulesError(WRONG_PHASE, "a forfeit is only accepted when a game is over")
    if match["over"]:
        raise RulesError(WRONG_PHASE, "the match is already over")
    sides = action.get("sides")
    n = state.options.sides
    if (
        not isinstance(sides, list) or not sides
        or any(isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < n for s in sides)
        or len(set(sides)) != len(sides)
    ):
        raise RulesError(BAD_ACTION, f'a forfeit needs "sides": distinct sides 0..{n - 1}')
    new = _copy(match)
    gone = sorted(sides)
    rest = sorted((s for s in range(n) if s not in gone),
                  key=lambda s: (-new["wins"][s], -new["points"][s], -new["spread"][s], s))
    key = [(new["wins"][s], new["points"][s], new["spread"][s]) for s in rest]
    winner = rest[0] if rest and (len(rest) == 1 or key[0] != key[1]) else None
    if new["games"]:
        last = new["games"][-1]
        last["forfeit"] = sorted(set(last["forfeit"]) | set(gone))
    new["over"], new["winner"], new["reason"], new["forfeited"] = True, winner, "forfeit", gone
    state.match = new
    events.append(_score_event(new))
    events.append(_over_event(state, new))


def next_match(state: GameState) -> None:
    """After a match is over, the room's next ``rematch`` starts a new match: number + 1,
    same length, no games (docs/rules.md §8.4)."""
    match = state.match
    if match is not None and match["over"]:
        state.match = new_match(match["best_of"], state.options.sides, match["number"] + 1)
