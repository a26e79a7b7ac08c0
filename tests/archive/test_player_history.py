"""A player's statistics and history (issue 18 point 4), on SQLite and on PostgreSQL.

Real games are played through a real server (uvicorn, the room service, computer seats, the
archiver) on each database; then players are given seats in them (what a seat taken with a
player records: ``game_seats.player_id``), and every figure of ``GET /api/players/{id}`` is
recomputed here from the archived logs alone: each log replayed through the engine
(``server.archive.verify.replay``), its events counted, every hand and crib scored again with
``engine.score_hand`` — and compared with the API's answer. The history pages are walked
with their cursors; a deleted player's seat shows as "a deleted player" in others' history
and in the replay body; private, deleted and unknown players, bad pages and the read budget
answer their codes.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
from crib_wire import ThreadServer
from sqlalchemy import update

import engine
from protocol.http import ArchivedGameBody, PlayerGamesPage, PlayerProfile
from server.archive.outbox import game_id
from server.archive.reader import ArchiveReader
from server.archive.verify import replay
from server.database.schema import game_seats, players
from server.settings import Settings

GAMES = [
    ({"players": 2, "target": 61}, {"0": "standard", "1": "easy"}),
    ({"players": 2, "target": 61, "muggins": True}, {"0": "standard", "1": "standard"}),
    ({"players": 2, "target": 61, "backup10": True}, {"0": "easy", "1": "standard"}),
    ({"players": 3, "target": 61}, {"0": "standard", "1": "easy", "2": "easy"}),
    ({"players": 4, "partnerships": True, "target": 61},
     {"0": "standard", "1": "easy", "2": "standard", "3": "easy"}),
    ({"players": 4, "target": 61, "lowball": True},
     {"0": "easy", "1": "easy", "2": "easy", "3": "easy"}),
    ({"players": 2, "target": 121}, {"0": "standard", "1": "standard"}),
    ({"players": 2, "target": 61}, {"0": "standard", "1": "standard"}),
]
"""The games played: every table kind, every variant, both targets."""

SEATS = {"p1": lambda g, n: 0, "p2": lambda g, n: 1 if n == 2 else None}
"""Which seat of each game a player takes: p1 the first seat of every game, p2 the second
of the 2-player games."""


async def play_games(server: ThreadServer) -> list[str]:
    """Play :data:`GAMES` to their ends through the server; their archived ids."""
    async with httpx.AsyncClient(base_url=server.http, timeout=10) as client:
        ids = []
        for options, computers in GAMES:
            made = (await client.post("/api/rooms", json={"options": options,
                                                          "computers": computers})).json()
            created = (await client.get(f"/api/rooms/{made['room']}")).json()["created"]
            ids.append(game_id(made["room"], created, 1))
        end = time.monotonic() + 120
        for gid in ids:
            while (await client.get(f"/api/games/{gid}")).status_code != 200:
                assert time.monotonic() < end, "a game was not archived in time"
                await asyncio.sleep(0.1)
    return ids


def recount(found: Any, seat: int) -> dict[str, Any]:
    """One game's figures for ``seat``, from its log replayed through the engine."""
    game = found.game
    state, events = replay(game["options"], found.log, [d["seed"] for d in found.deals])
    assert list(state.scores) == game["scores"]
    sides = next(e["sides"] for e in events if e["type"] == "game_start")
    side = sides[seat]
    c = {k: 0 for k in ("deals_dealt", "deals_pone", "dealer_pegging", "dealer_hand",
                        "dealer_crib", "dealer_heels", "pone_pegging", "pone_hand",
                        "hands", "hand_total", "cribs", "crib_total", "backup_moves",
                        "backup_holes", "muggins_taken", "muggins_lost")}
    dealer = None
    over = None
    for e in events:
        kind = e["type"]
        if kind == "deal":
            dealer = e["dealer"]
            c["deals_dealt" if dealer == seat else "deals_pone"] += 1
        elif kind == "peg" and e["seat"] == seat:
            role = "dealer" if dealer == seat else "pone"
            holes = e["score_after"] - e["score_before"]
            where = {"play": "pegging", "go": "pegging", "last_card": "pegging",
                     "hand": "hand", "crib": "crib", "his_heels": "heels"}.get(e["source"])
            if where:
                c[f"{role}_{where}"] += holes
            elif e["source"] == "muggins":
                c["muggins_taken"] += holes
        elif kind == "show_hand" and e["seat"] == seat:
            score = engine.score_hand(e["cards"], e["starter"], crib=e["kind"] == "crib")
            assert score.total == e["total"]
            which = "hand" if e["kind"] == "hand" else "crib"
            c[f"{which}s" if which == "crib" else "hands"] += 1
            c[f"{which}_total"] += score.total
        elif kind == "muggins_result" and e["owner"] == seat:
            c["muggins_lost"] += e["caller_pegs"]
        elif kind == "backup" and e["seat"] == seat:
            c["backup_moves"] += 1
            c["backup_holes"] += e["holes"]
        elif kind == "game_over":
            over = e
    assert over is not None and state.phase == "game_over"
    opts = game["options"]
    c["won"] = over["winner"] == side
    c["drawn"] = over["draw"] and side not in over["losers"]
    c["taken"] = over["skunks"].get(str(side), "none")
    c["given"] = [v for v in over["skunks"].values() if v != "none"] if c["won"] else []
    c["kind"] = "2x2" if opts.get("partnerships") else str(opts["players"])
    c["target"] = str(opts["target"])
    c["variants"] = [v for v in ("muggins", "lowball", "backup10") if opts.get(v)] or [
        "standard"]
    return c


def expected(counts: list[dict[str, Any]]) -> dict[str, Any]:
    """The statistics of a player whose games' figures are ``counts``, oldest first."""
    total = {k: sum(c[k] for c in counts) for k in counts[0] if isinstance(counts[0][k], int)}
    buckets: dict[str, dict[str, dict[str, int]]] = {
        "by_table": {k: {"played": 0, "won": 0} for k in ("2", "3", "4", "2x2")},
        "by_variant": {k: {"played": 0, "won": 0} for k in ("standard", "muggins", "lowball",
                                                            "backup10")},
        "by_target": {k: {"played": 0, "won": 0} for k in ("61", "121")},
    }
    for c in counts:
        for name, keys in (("by_table", [c["kind"]]), ("by_target", [c["target"]]),
                           ("by_variant", c["variants"])):
            for key in keys:
                buckets[name][key]["played"] += 1
                buckets[name][key]["won"] += int(c["won"])
    streak = best = 0
    for c in counts:
        streak = streak + 1 if c["won"] else 0
        best = max(best, streak)
    won = sum(int(c["won"]) for c in counts)
    drawn = sum(int(c["drawn"]) for c in counts)

    def per(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    dealer = {k: total[f"dealer_{k}"] for k in ("pegging", "hand", "crib", "heels")}
    dealer["total"] = sum(dealer.values())
    pone = {k: total[f"pone_{k}"] for k in ("pegging", "hand")}
    pone["total"] = sum(pone.values())
    given = [v for c in counts for v in c["given"]]
    return {
        "games": {"played": len(counts), "won": won, "drawn": drawn,
                  "lost": len(counts) - won - drawn, "abandoned": 0},
        **buckets,
        "skunks": {"given": {"single": given.count("skunk"), "double": given.count("double")},
                   "taken": {"single": sum(c["taken"] == "skunk" for c in counts),
                             "double": sum(c["taken"] == "double" for c in counts)}},
        "dealer": {"deals": total["deals_dealt"], "points": dealer,
                   "per_deal": {k: per(v, total["deals_dealt"]) for k, v in dealer.items()}},
        "pone": {"deals": total["deals_pone"], "points": pone,
                 "per_deal": {k: per(v, total["deals_pone"]) for k, v in pone.items()}},
        "hand": {"counted": total["hands"], "total": total["hand_total"],
                 "average": per(total["hand_total"], total["hands"])},
        "crib": {"counted": total["cribs"], "total": total["crib_total"],
                 "average": per(total["crib_total"], total["cribs"])},
        "backup10": {"moves": total["backup_moves"], "holes": total["backup_holes"]},
        "muggins": {"taken": total["muggins_taken"], "lost": total["muggins_lost"]},
        "streaks": {"current": streak, "best": best},
    }


def _server(database: Any, **values: Any) -> ThreadServer:
    url = database.url.replace("+aiosqlite", "")
    # (the archive is polled ten times a second until each game is in: no read budget,
    # which has its own test in test_archive_http.py)
    values.setdefault("game_reads_per_minute", 0)
    return ThreadServer(Settings(database_url=url, bot_delay_seconds=0.0, **values)).start()


async def _add_players(database: Any, **rows: dict[str, Any]) -> None:
    now = datetime.now(UTC)
    async with database.begin() as conn:
        for pid, extra in rows.items():
            await conn.execute(players.insert().values(id=pid, created_at=now,
                                                       name=pid.upper(), **extra))


async def _seat(database: Any, gid: str, seat: int, pid: str) -> None:
    async with database.begin() as conn:
        await conn.execute(update(game_seats).where(
            game_seats.c.game_id == gid, game_seats.c.seat == seat).values(
            player_id=pid, kind="human", level=None, name=pid.upper()))


async def test_every_figure_of_a_profile_is_recomputed_from_the_logs(database) -> None:
    server = _server(database)
    try:
        ids = await play_games(server)
        await _add_players(database, p1={}, p2={}, gone={})
        reader = ArchiveReader(database)
        found = {gid: await reader.game(gid) for gid in ids}
        order = sorted(ids, key=lambda g: (found[g].game["ended_at"], g))
        seats_of: dict[str, list[tuple[str, int]]] = {"p1": [], "p2": []}
        for gid in ids:
            n = found[gid].game["players"]
            for pid, where in SEATS.items():
                seat = where(gid, n)
                if seat is not None:
                    await _seat(database, gid, seat, pid)
                    seats_of[pid].append((gid, seat))
        two = [g for g in ids if found[g].game["players"] == 3]
        await _seat(database, two[0], 2, "gone")  # a player who will delete themself
        async with httpx.AsyncClient(base_url=server.http, timeout=10) as client:
            for pid, mine in seats_of.items():
                answer = await client.get(f"/api/players/{pid}")
                assert answer.status_code == 200, answer.text
                body = PlayerProfile.model_validate(answer.json()).model_dump()
                mine.sort(key=lambda gs: order.index(gs[0]))
                counts = [recount(found[g], s) for g, s in mine]
                assert body["statistics"] == expected(counts), pid
                assert body["name"] == pid.upper() and body["private"] is False
            stats = (await client.get("/api/players/p1")).json()["statistics"]
            assert stats["games"]["played"] == len(GAMES)
            assert all(stats["by_table"][k]["played"] for k in ("2", "3", "4", "2x2"))
            assert all(stats["by_variant"][k]["played"] for k in stats["by_variant"])
            # the history, a page at a time, newest first, every seat named
            seen: list[str] = []
            cursor = None
            while True:
                params = {"limit": 3, **({"cursor": cursor} if cursor else {})}
                answer = await client.get("/api/players/p1/games", params=params)
                page = PlayerGamesPage.model_validate(answer.json()).model_dump()
                assert len(page["games"]) <= 3
                seen += [g["game"] for g in page["games"]]
                for g in page["games"]:
                    assert g["seat"] == 0 and g["seats"][0]["player"] == "p1"
                    assert len(g["seats"]) == found[g["game"]].game["players"]
                    assert g["scores"] == found[g["game"]].game["scores"]
                    won = found[g["game"]].game["winner_side"] == g["side"]
                    assert (g["result"] == "won") == won
                if page["next"] is None:
                    break
                cursor = page["next"]
                # The same moment with another offset is the same cursor.
                moment, _, after = cursor.partition("~")
                shifted = (datetime.fromisoformat(moment.replace("Z", "+00:00"))
                           .astimezone(timezone(timedelta(hours=5))).isoformat())
                again = await client.get("/api/players/p1/games", params={
                    "limit": 3, "cursor": f"{shifted}~{after}"})
                plain = await client.get("/api/players/p1/games", params={
                    "limit": 3, "cursor": cursor})
                assert again.status_code == 200 and again.json() == plain.json()
            assert seen == list(reversed(order))
            # a deleted player: their profile is gone; in others' games "a deleted player"
            async with database.begin() as conn:
                await conn.execute(update(players).where(players.c.id == "gone").values(
                    deleted_at=datetime.now(UTC), name=None, secret_hash=None))
                await conn.execute(update(game_seats).where(
                    game_seats.c.player_id == "gone").values(name=None))
            gone = await client.get("/api/players/gone")
            assert gone.status_code == 410 and gone.json()["error"]["code"] == "player_deleted"
            pages = (await client.get("/api/players/p1/games", params={"limit": 50})).json()
            game = next(g for g in pages["games"] if g["game"] == two[0])
            assert game["seats"][2] == {"seat": 2, "side": 2, "kind": "human", "level": None,
                                        "name": None, "player": None, "deleted": True}
            body = (await client.get(f"/api/games/{two[0]}")).json()
            ArchivedGameBody.model_validate(body)
            assert body["seats"][2]["deleted"] is True and body["seats"][2]["name"] is None
            assert body["seats"][0]["name"] == "P1" and not body["seats"][0]["deleted"]
            named = [e for v in body["versions"] for e in v["events"]
                     if "name" in e and e.get("seat") == 2]
            assert named and all(e["name"] is None for e in named)
            # a private player: in others' games by name, as at the table, never by id
            p2_games = {g for g, _ in seats_of["p2"]}
            before = (await client.get("/api/players/p1/games", params={"limit": 50})).json()
            shared = [g for g in before["games"] if g["game"] in p2_games]
            assert shared and all(any(s["player"] == "p2" for s in g["seats"]) for g in shared)
            async with database.begin() as conn:
                await conn.execute(update(players).where(players.c.id == "p2").values(
                    private=True))
            after = (await client.get("/api/players/p1/games", params={"limit": 50})).json()
            for game in after["games"]:
                for seat in game["seats"]:
                    assert seat["player"] != "p2", (game["game"], seat)
                if game["game"] in p2_games:
                    assert any(s["name"] == "P2" and s["player"] is None
                               for s in game["seats"])
                assert game["seats"][game["seat"]]["player"] == "p1"
    finally:
        server.stop()


async def test_history_answers_its_errors_and_limits(database, tmp_path) -> None:
    await _add_players(database, open_={})
    server = _server(database, history_reads_per_minute=9, history_max_page_size=10)
    try:
        async with httpx.AsyncClient(base_url=server.http, timeout=10) as client:
            made = (await client.post("/api/players", json={"name": "Shy"})).json()
            shy, secret = made["id"], made["secret"]
            mine = {"Authorization": f"Player {shy}.{secret}"}
            wrong = {"Authorization": f"Player {shy}.{'a' * 32}"}
            assert (await client.patch("/api/players/me", json={"private": True},
                                       headers=mine)).status_code == 200

            async def code(path: str, headers: Any = None, **params: Any) -> tuple:
                r = await client.get(path, params=params, headers=headers)
                return r.status_code, r.json().get("error", {}).get("code")

            assert await code("/api/players/nobody") == (404, "player_not_found")
            assert await code("/api/players/not%20an%20id") == (404, "player_not_found")
            assert await code(f"/api/players/{shy}") == (403, "profile_private")
            assert await code(f"/api/players/{shy}/games") == (403, "profile_private")
            assert await code(f"/api/players/{shy}", wrong) == (401, "bad_player")
            assert await code(f"/api/players/{shy}", mine) == (200, None)
            assert await code("/api/players/open_/games", limit=11) == (400, "bad_page_request")
            assert await code("/api/players/open_/games", limit="x") == (400, "bad_page_request")
            assert await code("/api/players/open_/games", cursor="nope") == (
                400, "bad_page_request")
            ok = await client.get("/api/players/open_/games")
            assert ok.json() == {"games": [], "next": None}
            stats = (await client.get("/api/players/open_")).json()["statistics"]
            assert stats["games"]["played"] == 0 and stats["hand"]["average"] is None
            refused = await client.get("/api/players/open_")
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == "too_many_history_reads"
            assert int(refused.headers["Retry-After"]) >= 1
    finally:
        server.stop()
