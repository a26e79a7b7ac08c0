"""An archived game as the web client's replay file (``GET /api/games/{id}``).

The same shape the table's "download replay" saves (``server/static/js/replay.js``:
``format`` ``cribbage-replay``, ``format_version`` 1): the options, the seats' public names,
every version of the game redacted as for a spectator, the result — and what only the
archive has: the game's id and status, its times and final scores, and the seeds of every
shuffle with each deal's hands (docs/rules.md "The shuffle"), published now that the game is
over.

A seat whose player deleted themself (issue 18 point 6) shows no name and ``deleted: true``
("a deleted player"), and its name is scrubbed from the events too (``seat_taken``,
``computer_standin``: ``name`` null) and from the table talk (``name`` and ``player`` null);
the talk of a player whose profile is private now has ``player`` null.
"""

from __future__ import annotations

import base64
import hashlib
from datetime import UTC, datetime
from typing import Any

from protocol.events import redact

from ..chat import rules as chat_rules
from .reader import ArchivedGame


def _iso(value: datetime) -> str:
    if value.tzinfo is None:  # SQLite gives UTC back without its zone
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def room_alias(room_id: str) -> str:
    """The name the archive gives a game's room: 16 characters of ``[a-z2-7]`` derived from
    its id by SHA-256, the same for every game of the room, and no way to reach it. A
    room's id is its link, and a private table must stay reachable by its link only (the
    archive is read by anyone who knows a game's id, from a public player's history)."""
    digest = hashlib.sha256(b"cribbage/archive-room/" + room_id.encode()).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:16]


def replay_body(archived: ArchivedGame) -> dict[str, Any]:
    """The ``ArchivedGameBody`` (``protocol.http``) of an archived game read with its log."""
    game = archived.game
    log = archived.log or []
    hands: dict[int, dict[str, list[str]]] = {}
    for entry in log:
        for event in entry.get("events") or ():
            if event.get("type") == "deal":
                hands[event["deal_number"]] = event["hands"]
    deleted = {s["seat"] for s in archived.seats if s.get("player_deleted")}

    def public(event: dict[str, Any]) -> dict[str, Any]:
        out = redact(event, None)
        if deleted and "name" in out and out.get("seat") in deleted:
            out = {**out, "name": None}
        return out

    versions = [
        {"version": entry["v"], "events": [public(e) for e in entry.get("events") or ()]}
        for entry in log
    ]
    cuts = [{"round": i, "seed": seed} for i, seed in enumerate(game["cut_seeds"], start=1)]
    return {
        "format": "cribbage-replay",
        "format_version": 1,
        "room": room_alias(game["room_id"]),
        "game": game["game_number"],
        "saved_at": _iso(game["archived_at"]),
        "options": game["options"],
        "seats": [{"seat": s["seat"], "name": None if s["seat"] in deleted else s["name"],
                   "kind": s["kind"], "level": s["level"], "deleted": s["seat"] in deleted}
                  for s in archived.seats],
        "first": game["first_version"],
        "versions": versions,
        "result": game["result"],
        "game_id": game["id"],
        "status": game["status"],
        "started_at": _iso(game["started_at"]),
        "ended_at": _iso(game["ended_at"]),
        "scores": game["scores"],
        "seeds": {
            "shuffle": game["shuffle"],
            "game": game["game_seed"],
            "game_commitment": game["game_commitment"],
            "cuts": cuts,
            "deals": [
                {"deal_number": d["deal_number"], "dealer": d["dealer"], "seed": d["seed"],
                 "commitment": d["commitment"], "hands": hands.get(d["deal_number"], {}),
                 "scores_after": d["scores_after"]}
                for d in archived.deals
            ],
        },
        "match": _match(archived),
        "chat": [_talk(e, archived.authors) for e in archived.chat if not e.get("hidden")],
    }


def _talk(entry: dict[str, Any], authors: dict[str, str]) -> dict[str, Any]:
    """A chat entry as readers get it (``chat.rules.public``), its author as they are now:
    a player who deleted themself has ``name`` and ``player`` null ("a deleted player"), a
    player whose profile is private ``player`` null, so that their id is never shown
    beside their name (as at the table)."""
    out = chat_rules.public(entry)
    now = authors.get(str(entry.get("by") or ""))
    if now == "deleted":
        out["name"] = None
        out["player"] = None
    elif now == "private":
        out["player"] = None
    return out


def _match(archived: ArchivedGame) -> dict[str, Any] | None:
    """The game's match as the archive holds it (``ArchivedMatch``), or None (best of 1)."""
    m = archived.match
    if m is None:
        return None
    return {
        "id": m["id"], "number": int(m["match_number"]), "best_of": int(m["best_of"]),
        "game_in_match": int(archived.game["match_number"] or 0),
        "table_kind": m["table_kind"], "rated": bool(m["rated"]),
        "over": m["status"] == "over", "reason": m["reason"], "winner_side": m["winner_side"],
        "wins": list(m["wins"]), "points": list(m["points"]), "spread": list(m["spread"]),
        "forfeited": list(m["forfeited"]), "games_played": int(m["games_played"]),
    }
