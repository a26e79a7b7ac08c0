"""``GET /api/games/{id}`` on a real server: a game played by computer seats is archived,
served in the replay file shape with its seeds, and an independent checker written from
docs/rules.md alone (``tests/js/shuffle_check.mjs``) verifies every deal from that answer —
on the in-memory store with SQLite, and on Redis with PostgreSQL."""

from __future__ import annotations

import copy
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import redis
from crib_wire import ThreadServer

from protocol.http import ArchivedGameBody
from server.archive.outbox import game_id
from server.archive.replay import room_alias
from server.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "js"))
from test_dealcheck import run_dealcheck  # noqa: E402

REDIS_URL = os.environ.get("CRIBBAGE_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
CHECKER = Path(__file__).resolve().parents[1] / "js" / "shuffle_check.mjs"


def checker_input(body: dict) -> dict:
    """What the Node checker needs, taken from the API's answer only."""
    seeds = body["seeds"]
    events = [e for v in body["versions"] for e in v["events"]]
    cuts = next(e["cuts"] for e in events if e["type"] == "cut_for_deal")
    starters = {}
    deal = None
    for e in events:
        if e["type"] == "deal":
            deal = e["deal_number"]
        elif e["type"] == "starter":
            starters[deal] = e["card"]
    return {
        "game_number": body["game"], "game_seed": seeds["game"],
        "game_commitment": seeds["game_commitment"],
        "cuts": [{"round": c["round"], "seed": c["seed"],
                  "cards": [x["card"] for x in cuts[c["round"] - 1]]} for c in seeds["cuts"]],
        "deals": [{"deal_number": d["deal_number"], "seed": d["seed"],
                   "commitment": d["commitment"], "players": body["options"]["players"],
                   "dealer": d["dealer"], "hands": d["hands"], "crib_card": None,
                   "starter": starters[d["deal_number"]]}
                  for d in seeds["deals"] if d["deal_number"] in starters],
    }


@pytest.mark.parametrize("kind", ["memory-sqlite", "redis-postgresql"])
def test_an_archived_game_is_served_with_seeds_that_check_out(kind, tmp_path, request) -> None:
    prefix = f"test:{secrets.token_hex(6)}:"
    values = {"bot_delay_seconds": 0.0, "key_prefix": prefix}
    if kind == "memory-sqlite":
        values["database_url"] = f"sqlite:///{tmp_path / 'games.sqlite3'}"
    else:
        values["redis_url"] = REDIS_URL
        values["database_url"] = request.getfixturevalue("pg_url")
    server = ThreadServer(Settings(**values)).start()
    try:
        made = httpx.post(f"{server.http}/api/rooms", json={
            "options": {"players": 2, "target": 61},
            "computers": {"0": "standard", "1": "easy"}}).json()
        room = made["room"]
        created = httpx.get(f"{server.http}/api/rooms/{room}").json()["created"]
        gid = game_id(room, created, 1)
        end = time.monotonic() + 30  # (the start-up migration runs in the background)
        while not server.app.state.services.database.migrated:
            assert time.monotonic() < end, "the database was not migrated"
            time.sleep(0.05)
        assert httpx.get(f"{server.http}/api/games/{'a' * 16}").status_code == 404
        assert httpx.get(f"{server.http}/api/games/NOT-AN-ID").json()["error"]["code"] == (
            "game_not_found")
        end = time.monotonic() + 60
        while True:
            answer = httpx.get(f"{server.http}/api/games/{gid}")
            if answer.status_code == 200:
                break
            assert answer.status_code in (404, 429) and time.monotonic() < end
            time.sleep(0.1)
        body = answer.json()
        ArchivedGameBody.model_validate(body)
        assert body["game_id"] == gid and body["status"] == "finished"
        # The room by its archive name, never its id: the id is the table's link.
        assert body["room"] == room_alias(room) and room not in answer.text
        assert re.fullmatch(r"[a-z2-7]{16}", body["room"])
        assert httpx.get(f"{server.http}/api/rooms/{body['room']}").status_code == 404
        assert body["result"]["scores"] == body["scores"] and max(body["scores"]) == 61
        assert [s["kind"] for s in body["seats"]] == ["computer", "computer"]
        assert body["versions"][0]["version"] == body["first"]
        for version in body["versions"]:  # redacted as for a spectator
            for event in version["events"]:
                if event["type"] == "deal":
                    assert event["hands"] == {}
        metrics = httpx.get(f"{server.http}/metrics").text
        assert 'cribbage_archive_games_total{outcome="written"} 1.0' in metrics
        assert "cribbage_archive_lag_seconds 0.0" in metrics
    finally:
        server.stop()
        if kind != "memory-sqlite":
            client = redis.Redis.from_url(REDIS_URL)
            keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
            if keys:
                client.delete(*keys)
            client.close()
    node = shutil.which("node")
    assert node, "the check needs Node"
    run = subprocess.run([node, str(CHECKER)], capture_output=True, text=True, timeout=60,
                         input=json.dumps({"games": [checker_input(body)]}))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["results"] == [{"ok": True, "problems": []}]
    # the replay page's own checker (Web Crypto, server/static/js/dealcheck.js) agrees, and
    # finds a seed, a starter and a dealt hand that are not the ones the table was promised
    seed_changed = copy.deepcopy(body)
    seed_changed["seeds"]["deals"][1]["seed"] = "0" * 64
    starter_changed = copy.deepcopy(body)
    starter = next(e for v in starter_changed["versions"] for e in v["events"]
                   if e["type"] == "starter")
    starter["card"] = "KS" if starter["card"] != "KS" else "KH"
    hand_changed = copy.deepcopy(body)
    hands = hand_changed["seeds"]["deals"][0]["hands"]
    hands["0"], hands["1"] = hands["1"], hands["0"]
    verdicts = run_dealcheck({"bodies": [body, seed_changed, starter_changed, hand_changed]})
    deals = len([d for d in body["seeds"]["deals"]])
    assert verdicts["bodies"] == [
        {"ok": True, "deals": deals, "problems": []},
        {"ok": False, "deals": deals, "problems": [
            {"scope": "deal", "n": 2, "reason": "deal_seed"}]},
        {"ok": False, "deals": deals, "problems": [
            {"scope": "deal", "n": 1, "reason": "deal_starter"}]},
        {"ok": False, "deals": deals, "problems": [
            {"scope": "deal", "n": 1, "reason": "deal_hands"}]},
    ]


async def test_no_frame_of_a_game_holds_anything_of_its_seeds(tmp_path) -> None:
    """Two people and a spectator play a whole game over the wire; then its seeds are
    published by the archive — and none of them (the game's, the cut's, any deal's), nor
    the room's secret seed, was in any frame anyone received, nor anything derived from
    them but the commitments. (Cards are checked by ``audit_frames``.)"""
    from crib_wire import audit_frames, play_game, seat_players

    from engine import rng

    server = ThreadServer(Settings(database_url=f"sqlite:///{tmp_path / 'g.sqlite3'}")).start()
    try:
        room, players, watcher = await seat_players(server.ws, {"players": 2, "target": 61},
                                                    spectator=True)
        try:
            await play_game(players, seed=4)
            await watcher.wait_until(lambda c: c.status == "game_over")
            for c in [*players, watcher]:
                audit_frames(c, players)
            record, _ = await server.app.state.services.store.load(room)
        finally:
            for c in [*players, watcher]:
                await c.close()
        gid = game_id(room, record.created, 1)
        end = time.monotonic() + 30
        while (answer := httpx.get(f"{server.http}/api/games/{gid}")).status_code != 200:
            assert time.monotonic() < end
            time.sleep(0.1)
    finally:
        server.stop()
    seeds = answer.json()["seeds"]
    secrets_ = {record.seed, seeds["game"], *(c["seed"] for c in seeds["cuts"]),
                *(d["seed"] for d in seeds["deals"])}
    assert seeds["game"] == rng.game_seed(record.seed, 1).hex()
    commitments = {seeds["game_commitment"], *(d["commitment"] for d in seeds["deals"])}
    for c in [*players, watcher]:
        text = json.dumps(c.frames)
        assert not [s for s in secrets_ if s in text], "a seed was sent before the archive"
        seen = set()
        for frame in c.frames:
            for event in [*(frame.get("events") or ()),
                          *(e for m in frame.get("missed") or () for e in m["events"])]:
                if event["type"] in ("game_commitment", "deal_commitment"):
                    seen.add(event["commitment"])
        assert seen == commitments  # every seat and the spectator got them all


@pytest.mark.parametrize("kind", ["memory", "redis"])
def test_game_reads_are_budgeted_per_address(kind, tmp_path, request) -> None:
    """``game_reads_per_minute``: every ``GET /api/games/{id}`` counts, found or not; past
    the budget the answer is ``429 too_many_game_reads`` with ``Retry-After`` and nothing
    is read; with Redis the budget is shared by every process; other reads are not
    charged to it (docs/protocol.md "Limits")."""
    prefix = f"test:{secrets.token_hex(6)}:"
    values = {"bot_delay_seconds": 0.0, "key_prefix": prefix, "game_reads_per_minute": 4}
    if kind == "redis":
        values["redis_url"] = REDIS_URL
        values["database_url"] = request.getfixturevalue("pg_url")
    else:
        values["database_url"] = f"sqlite:///{tmp_path / 'games.sqlite3'}"
    servers = [ThreadServer(Settings(**values)).start()
               for _ in range(2 if kind == "redis" else 1)]
    try:
        end = time.monotonic() + 30  # (the start-up migration runs in the background)
        while not all(s.app.state.services.database.migrated for s in servers):
            assert time.monotonic() < end, "the database was not migrated"
            time.sleep(0.05)
        bases = [s.http for s in servers]
        unknown = "a" * 16
        codes = [httpx.get(f"{bases[i % len(bases)]}/api/games/{unknown}").status_code
                 for i in range(4)]
        assert codes == [404] * 4, codes
        refused = httpx.get(f"{bases[0]}/api/games/{unknown}")
        assert refused.status_code == 429, refused.text
        error = refused.json()["error"]
        assert error["code"] == "too_many_game_reads" and 0 < error["retry_after"] <= 15
        assert 1 <= int(refused.headers["Retry-After"]) <= 15
        # A malformed id is charged too (guessing costs the same), and so is the other
        # process's read with Redis.
        assert httpx.get(f"{bases[-1]}/api/games/NOT-AN-ID").status_code == 429
        # Room summaries have their own budget.
        assert httpx.get(f"{bases[0]}/api/rooms/{'b' * 10}").status_code == 404
        metrics = httpx.get(f"{bases[0]}/metrics").text
        line = 'cribbage_limited_total{code="too_many_game_reads"}'
        counted = [float(x.split()[-1]) for x in metrics.splitlines() if x.startswith(line)]
        assert counted and counted[0] >= 1.0, counted
    finally:
        for s in servers:
            s.stop()
        if kind == "redis":
            r = redis.Redis.from_url(REDIS_URL)
            keys = list(r.scan_iter(f"{prefix}*"))
            if keys:
                r.delete(*keys)
