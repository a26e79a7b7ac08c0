"""Archive payloads and log entries built by hand for the rating tests (the shape of
``server.archive.outbox.archive_deadline``, with the fields issue 19 adds: the payload's
``match`` and each seat's ``abandoned``; ISSUE19.md contracts)."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from server.archive.outbox import game_id
from server.archive.rows import game_rows
from server.archive.writer import write_game
from server.database.schema import players, rating_history, ratings

KINDS = {"2": (2, False), "3": (3, False), "4": (4, False), "2x2": (4, True)}


def sides_of(kind: str) -> list[int]:
    """Each seat's side."""
    n, partnerships = KINDS[kind]
    return [s % 2 for s in range(n)] if partnerships else list(range(n))


def payload(room: str, number: int, kind: str, seats: list[dict[str, Any]],
            scores: list[int], *, rated: bool = True, status: str = "finished",
            options: dict[str, Any] | None = None, match: dict[str, Any] | None = None,
            ended: float = 1_900_000_000.0) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(payload, log entries)`` of a game of ``kind`` that ended with ``scores`` per side
    (the side with the most won; for ``status`` abandoned there is no ``game_over``).

    ``seats``: per seat ``{"player": id | None, "kind": "human" | "computer", "level",
    "abandoned"}``.
    """
    n, partnerships = KINDS[kind]
    opts = {"players": n, "partnerships": partnerships, "target": 121, "muggins": False,
            "lowball": False, "backup10": False, **(options or {})}
    side = sides_of(kind)
    winner = max(range(len(scores)), key=lambda s: scores[s])
    losers = [s for s in range(len(scores)) if s != winner]
    events: list[dict[str, Any]] = [{"type": "game_start", "sides": side}]
    if status == "finished":
        events.append({
            "type": "game_over", "winner": winner,
            "winner_seats": [s for s in range(n) if side[s] == winner], "draw": False,
            "losers": losers, "loser_seats": [s for s in range(n) if side[s] != winner],
            "skunks": {str(s): "none" for s in losers}, "scores": list(scores),
            "reason": "target_reached", "reached_by": winner, "lowball": False})
    created = 1_800_000_000.0
    body = {
        "game": number, "id": game_id(room, created, number), "status": status,
        "room_created": created, "first": 1, "last": 9, "started": ended - 600,
        "ended": ended, "options": opts,
        "settings": {"hints": True, "turn_seconds": 60.0, "rated": rated,
                     "match": (match or {}).get("best_of", 1)},
        "seats": [{"seat": i, "name": f"S{i}", "kind": s.get("kind", "human"),
                   "level": s.get("level"), "standin": False, "player": s.get("player"),
                   "abandoned": bool(s.get("abandoned"))} for i, s in enumerate(seats)],
        "game_seed": secrets.token_hex(16),
        "match": match,
    }
    return body, [{"v": 1, "events": events}]


def match_state(best_of: int, games: list[tuple[int, list[int]]], sides: int,
                number: int = 1, forfeited: list[int] | None = None) -> dict[str, Any]:
    """``GameState.match`` after ``games`` — each ``(winner side, game points per side)``
    (the engine's shape; spread: 10 holes per game won, for the tests)."""
    needed = best_of // 2 + 1
    wins = [0] * sides
    points = [0] * sides
    spread = [0] * sides
    played = []
    for i, (winner, gp) in enumerate(games):
        wins[winner] += 1
        for s in range(sides):
            points[s] += gp[s]
            spread[s] += 10 if s == winner else -10
        played.append({"game_number": i + 1, "winner": winner, "points": list(gp),
                       "spread": [10 if s == winner else -10 for s in range(sides)],
                       "forfeit": []})
    decided = [s for s in range(sides) if wins[s] >= needed]
    over = bool(decided) or bool(forfeited)
    winner = decided[0] if decided else None
    if forfeited and winner is None:
        rest = [s for s in range(sides) if s not in forfeited]
        winner = max(rest, key=lambda s: (wins[s], points[s], spread[s]))
    return {"best_of": best_of, "number": number, "needed": needed, "games": played,
            "wins": wins, "points": points, "spread": spread, "over": over,
            "winner": winner, "reason": ("forfeit" if forfeited else "won") if over else None,
            "forfeited": list(forfeited or [])}


async def add_players(db: Any, *ids: str) -> None:
    now = datetime.now(UTC)
    async with db.begin() as conn:
        for pid in ids:
            await conn.execute(players.insert().values(id=pid, created_at=now,
                                                       name=pid.upper()))


async def write(db: Any, room: str, body: dict[str, Any], entries: list[dict[str, Any]]
                ) -> bool:
    return await write_game(db, game_rows(room, body, entries, body["ended"] + 1))


async def ratings_of(db: Any) -> dict[tuple[str, str], dict[str, Any]]:
    async with db.connect() as conn:
        rows = (await conn.execute(select(ratings))).mappings().all()
    return {(r["player_id"], r["table_kind"]): dict(r) for r in rows}


async def history_of(db: Any) -> list[dict[str, Any]]:
    async with db.connect() as conn:
        return [dict(r) for r in (await conn.execute(
            select(rating_history).order_by(rating_history.c.at,
                                            rating_history.c.player_id))).mappings()]
