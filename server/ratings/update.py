"""The rating update, inside the archive's transaction (issue 19 point 2).

``server.archive.writer.write_game`` calls :func:`upsert_match` and then, only when the
game's row was new (so a game written twice changes nothing), :func:`rate_game` on the same
connection: the rating changes in the transaction that archives the game, exactly once.
``rating_history``'s key (player, table kind, game or match id) is the second guard: if a
row for the source is there already, nothing is changed.

A game is rated (:func:`rated_source`) when the room's settings say ``rated`` (true, not
merely truthy), the game ``finished`` (not abandoned by idleness), it was played to the
standard rules to 121 (no Lowball, no Back-up 10: ISSUE19.md point 2), and at least one seat
is a player's. Best of 1 rates the game; best of N rates the match when the game that
decided it is archived (``match.over``), never before. Ranks: ``server.ratings.ranks``.
Computer seats carry their level's fixed rating and are never written; a seat that is no
player's (open, or a human seat without a player) counts as a newcomer's rating and is not
written either.

On PostgreSQL the players' rating rows are made if missing (``ON CONFLICT DO NOTHING``)
and then locked ``FOR UPDATE`` in player order, so two games ending at once for the same
player apply one after the other (each reads the other's result) and never deadlock; SQLite
has one writer at a time. The leaderboard's counts (``server.ratings.counts``) change in the
same transaction, after the rating rows: each player's old entry out if it was on the board,
the new one in if it is, the count rows locked in ``(table kind, shown number)`` order.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import and_, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection

from ..database.schema import matches, rating_history, ratings
from . import counts, model
from .ranks import game_ranks, match_ranks

COMPUTER = "computer"


def _insert(dialect: str) -> Any:
    return pg_insert if dialect == "postgresql" else sqlite_insert


async def upsert_match(conn: AsyncConnection, dialect: str, row: dict[str, Any] | None
                       ) -> None:
    """Write the ``matches`` row as of this game: inserted, or updated only when this game
    is later in the match than the row (a match as of game N never overwrites a later
    one; the start kept the earliest)."""
    if row is None:
        return
    statement = _insert(dialect)(matches).values(**row)
    least = func.least if dialect == "postgresql" else func.min
    excluded = statement.excluded
    keep = {c: excluded[c] for c in (
        "status", "reason", "winner_side", "wins", "points", "spread", "forfeited",
        "games_played", "rated", "ended_at", "updated_at", "best_of", "table_kind")}
    keep["started_at"] = least(matches.c.started_at, excluded.started_at)
    await conn.execute(statement.on_conflict_do_update(
        index_elements=[matches.c.id], set_=keep,
        where=matches.c.games_played < excluded.games_played))


def rated_source(rows: dict[str, Any]) -> tuple[str, str] | None:
    """``(source, source id)`` — ``("game", game id)`` or ``("match", match id)`` — when
    this archived game changes ratings, else None (see the module docstring)."""
    game = rows["game"]
    settings = game.get("room_settings") or {}
    if settings.get("rated") is not True or game["status"] != "finished":
        return None
    if game["lowball"] or game["backup10"] or game["target"] != 121 or not game["result"]:
        return None
    if game["table_kind"] not in model.TABLE_KINDS:
        return None
    if not any(s.get("player_id") and s.get("kind") != COMPUTER for s in rows["seats"]):
        return None
    state = rows.get("match_state")
    best_of = int(state["best_of"]) if state else 1
    wanted = settings.get("match", 1)
    if isinstance(wanted, int) and not isinstance(wanted, bool) and wanted != best_of:
        return None  # the settings and the engine disagree: do not guess
    if best_of == 1:
        return "game", game["id"]
    if not state.get("over") or rows.get("match") is None:
        return None
    return "match", rows["match"]["id"]


def outcome(rows: dict[str, Any]) -> tuple[list[list[dict[str, Any]]], list[int]]:
    """The teams (per side, its seats' rows, by seat) and ranks of a rated game or match."""
    seats = sorted(rows["seats"], key=lambda s: s["seat"])
    sides = max(s["side"] for s in seats) + 1
    teams: list[list[dict[str, Any]]] = [[] for _ in range(sides)]
    for s in seats:
        teams[s["side"]].append(s)
    abandoned = {s["side"] for s in seats if s.get("abandoned")}
    state = rows.get("match_state")
    if state and int(state.get("best_of") or 1) > 1:
        ranks = match_ranks(state, sides, abandoned)
    else:
        ranks = game_ranks(rows["game"]["result"], sides, abandoned)
    return teams, ranks


async def rate_game(conn: AsyncConnection, dialect: str, rows: dict[str, Any]) -> int:
    """Apply the rating update of a newly archived game (call only when its row was new).

    Args:
        conn: the archive's transaction.
        dialect: ``postgresql`` or ``sqlite``.
        rows: ``server.archive.rows.game_rows`` (seats' unknown players already null).

    Returns:
        The number of player ratings changed (0: not rated, or rated already).
    """
    source = rated_source(rows)
    if source is None:
        return 0
    kind = rows["game"]["table_kind"]
    teams, ranks = outcome(rows)
    people = [s["player_id"] for team in teams for s in team
              if s.get("player_id") and s.get("kind") != COMPUTER]
    if len(set(people)) != len(people):
        return 0  # one player at two seats: not a result to rate
    players = sorted(people)
    now = rows["game"]["ended_at"]
    insert = _insert(dialect)
    await conn.execute(insert(ratings).values([
        {"player_id": p, "table_kind": kind, "mu": model.MU, "sigma": model.SIGMA,
         "display": model.display(model.MU, model.SIGMA), "games": 0, "wins": 0,
         "updated_at": now} for p in players]).on_conflict_do_nothing())
    query = select(ratings).where(and_(ratings.c.table_kind == kind,
                                       ratings.c.player_id.in_(players))
                                  ).order_by(ratings.c.player_id)
    if dialect == "postgresql":
        query = query.with_for_update()
    current = {r["player_id"]: dict(r) for r in (await conn.execute(query)).mappings()}
    done = (await conn.execute(select(func.count()).select_from(rating_history).where(and_(
        rating_history.c.player_id.in_(players), rating_history.c.table_kind == kind,
        rating_history.c.source_id == source[1])))).scalar()
    if done:
        return 0

    def before(seat: dict[str, Any]) -> tuple[float, float]:
        if seat.get("kind") == COMPUTER:
            return model.computer_rating(kind, seat.get("level"))
        player = seat.get("player_id")
        if player:
            return current[player]["mu"], current[player]["sigma"]
        return model.MU, model.SIGMA

    after = model.rate([[before(s) for s in team] for team in teams], ranks)
    history = []
    moved = []
    for side, team in enumerate(teams):
        for index, seat in enumerate(team):
            player = seat.get("player_id")
            if not player or seat.get("kind") == COMPUTER:
                continue
            old = current[player]
            mu, sigma = after[side][index]
            shown = model.display(mu, sigma)
            games = int(old["games"]) + 1
            await conn.execute(ratings.update().where(and_(
                ratings.c.player_id == player, ratings.c.table_kind == kind)).values(
                mu=mu, sigma=sigma, display=shown, games=games,
                wins=int(old["wins"]) + (ranks[side] == 1), updated_at=now))
            history.append({
                "player_id": player, "table_kind": kind, "source_id": source[1],
                "source": source[0], "game_id": rows["game"]["id"], "rank": ranks[side],
                "teams": len(teams), "abandoned": any(s.get("abandoned") for s in team),
                "mu_before": old["mu"], "sigma_before": old["sigma"],
                "display_before": int(old["display"]), "mu": mu, "sigma": sigma,
                "display": shown, "games": games, "at": now})
            moved.append({"table_kind": kind, "display": shown, "games": games})
    await counts.shift(conn, dialect, counts.moves(
        [current[h["player_id"]] for h in history], moved))
    if history:
        await conn.execute(rating_history.insert(), history)
    return len(history)
