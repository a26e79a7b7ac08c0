"""An ended game's outbox entry and log turned into the database's rows (pure: no I/O).

The seeds published with the game (docs/rules.md "The shuffle") derive from the game's seed
in the outbox entry: one per round of the cut the log shows, one per deal that was shuffled
(announced by a ``deal_commitment``; a stacked pack in tests has none).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engine import rng
from protocol import jsontext

from ..ratings.ids import match_id
from .summary import skunks_given, summarize


def when(ts: float) -> datetime:
    """A Unix time (seconds) as an aware UTC datetime."""
    return datetime.fromtimestamp(float(ts), tz=UTC)


def table_kind(players: int, partnerships: bool) -> str:
    """``2``, ``3``, ``4`` or ``2x2`` (four in partnerships)."""
    return "2x2" if players == 4 and partnerships else str(players)


def game_rows(
    room_id: str, payload: dict[str, Any], entries: list[dict[str, Any]], archived_at: float
) -> dict[str, Any]:
    """The rows of one ended game.

    Args:
        room_id: the room.
        payload: the ``archive`` deadline's payload (``server.archive.outbox``).
        entries: the game's log entries, oldest first (``RoomStore.outbox``).
        archived_at: Unix time now.

    Returns:
        ``{"game": row, "seats": [row...], "deals": [row...], "log": {"game_id", "entries"},
        "match": row | None, "match_state": dict | None}`` for the tables of
        ``server.database.schema``; ``match`` is the ``matches`` row as of this game and
        ``match_state`` the payload's ``match`` (``GameState.match``), both None for best
        of 1.
    """
    options = payload["options"]
    players = int(options.get("players", 2))
    partnerships = bool(options.get("partnerships", False))
    events = [e for entry in entries for e in entry.get("events") or ()]
    sides = list(range(players))
    game_commitment = ""
    cut_rounds = 0
    deals: dict[int, dict[str, Any]] = {}
    commitments: dict[int, str] = {}
    scores: list[int] = []
    result: dict[str, Any] | None = None
    current: int | None = None
    for event in events:
        kind = event.get("type")
        if kind == "game_start":
            sides = list(event["sides"])
            scores = [0] * (max(sides) + 1)
        elif kind == "game_commitment":
            game_commitment = event["commitment"]
        elif kind == "cut_for_deal":
            cut_rounds = len(event.get("cuts") or ())
        elif kind == "deal_commitment":
            commitments[event["deal_number"]] = event["commitment"]
        elif kind == "deal":
            if current is not None:
                deals[current]["scores_after"] = list(scores)
            current = event["deal_number"]
            deals[current] = {"deal_number": current, "dealer": event["dealer"]}
        elif kind in ("peg", "backup"):
            scores[event["side"]] = event["score_after"]
        elif kind == "game_over":
            result = {k: v for k, v in event.items() if k != "type"}
    if current is not None:
        deals[current]["scores_after"] = list(scores)
    game_seed = bytes.fromhex(payload["game_seed"])
    gid = payload["id"]
    final = list(result["scores"]) if result else scores
    winner = result.get("winner") if result else None
    skunks = (result or {}).get("skunks") or {}
    ended = when(payload["ended"])
    state = payload.get("match")
    match = _match_row(room_id, payload, state, table_kind(players, partnerships)) \
        if state else None
    game = {
        "id": gid,
        "room_id": room_id,
        "room_created": float(payload["room_created"]),
        "game_number": int(payload["game"]),
        "status": payload["status"],
        "players": players,
        "table_kind": table_kind(players, partnerships),
        "target": int(options.get("target", 121)),
        "muggins": bool(options.get("muggins", False)),
        "lowball": bool(options.get("lowball", False)),
        "backup10": bool(options.get("backup10", False)),
        "options": options,
        "room_settings": payload.get("settings") or {},
        "started_at": when(payload["started"]),
        "ended_at": ended,
        "archived_at": when(archived_at),
        "first_version": int(payload["first"]),
        "last_version": int(payload["last"]),
        "deals": len(deals),
        "winner_side": winner,
        "draw": bool(result and result.get("draw")),
        "scores": final,
        "result": result,
        "shuffle": rng.SHUFFLE_VERSION,
        "game_seed": game_seed.hex(),
        "game_commitment": game_commitment or rng.commitment(game_seed),
        "cut_seeds": [rng.cut_seed_of(game_seed, r).hex() for r in range(1, cut_rounds + 1)],
        "match_id": match["id"] if match else None,
        "match_number": match["games_played"] if match else None,
    }
    summaries = summarize(players, events)
    seats = []
    for info in payload["seats"]:
        seat = int(info["seat"])
        side = sides[seat] if seat < len(sides) else seat
        won = winner is not None and side == winner
        row = {
            "game_id": gid, "seat": seat, "side": side, "player_id": info.get("player"),
            "kind": info.get("kind") or "open", "level": info.get("level"),
            "name": info.get("name"), "standin": bool(info.get("standin")),
            "final_score": int(final[side]) if side < len(final) else 0,
            "won": won,
            "skunk": "none" if won else str(skunks.get(str(side), "none")),
            **skunks_given(skunks, won),
            "drawn": bool(result and result.get("draw")
                          and side not in (result.get("losers") or ())),
            "status": game["status"], "table_kind": game["table_kind"],
            "target": game["target"], "muggins": game["muggins"], "lowball": game["lowball"],
            "backup10": game["backup10"], "ended_at": ended,
            "abandoned": bool(info.get("abandoned")),
        }
        row.update(summaries[seat] if seat < len(summaries) else {})
        seats.append(row)
    deal_rows = []
    for number, deal in sorted(deals.items()):
        seed = rng.deal_seed_of(game_seed, number) if number in commitments else None
        deal_rows.append({
            "game_id": gid, "deal_number": number, "dealer": deal["dealer"],
            "seed": seed.hex() if seed else None, "commitment": commitments.get(number),
            "scores_after": deal.get("scores_after", list(scores)),
        })
    return {
        "game": game, "seats": seats, "deals": deal_rows,
        "log": {"game_id": gid, "entries": jsontext.dumps(entries)},
        "match": match, "match_state": state,
    }


def _match_row(room_id: str, payload: dict[str, Any], state: dict[str, Any], kind: str
               ) -> dict[str, Any]:
    """The ``matches`` row as of this game (the payload's ``match``: ISSUE19.md)."""
    number = int(state.get("number") or 1)
    over = bool(state.get("over"))
    ended = when(payload["ended"])
    return {
        "id": match_id(room_id, float(payload["room_created"]), number),
        "room_id": room_id, "room_created": float(payload["room_created"]),
        "match_number": number, "best_of": int(state["best_of"]), "table_kind": kind,
        "status": "over" if over else "playing", "reason": state.get("reason"),
        "winner_side": state.get("winner"),
        "wins": list(state.get("wins") or []), "points": list(state.get("points") or []),
        "spread": list(state.get("spread") or []),
        "forfeited": list(state.get("forfeited") or []),
        "games_played": len(state.get("games") or ()) or 1,
        "rated": bool((payload.get("settings") or {}).get("rated")),
        "started_at": when(payload["started"]), "ended_at": ended if over else None,
        "updated_at": ended,
    }
