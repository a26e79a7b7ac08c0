"""docs/rules.md "The shuffle" is exact: a checker written for Node from that text alone
(``shuffle_check.mjs``) derives the seeds, checks the commitments and reshuffles every pack,
and finds exactly the cards the engine's events showed — for every table size, over
rematches; and it notices a card, a seed or a commitment that is wrong."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import engine
from engine import GameOptions, rng

CHECKER = Path(__file__).with_name("shuffle_check.mjs")


def _games(options: GameOptions, room_seed: str, games: int, rnd: random.Random) -> list[dict]:
    """Play ``games`` games of a room with random legal moves; what a checker is given:
    the seeds (as the archive publishes them) and the cards the events showed."""
    out: list[dict[str, Any]] = []
    state, events = engine.new_game(options, room_seed)
    current: dict[str, Any] | None = None
    while True:
        for event in events:
            kind = event["type"]
            if kind == "game_start":
                g = event["game_number"]
                current = {"room_seed": room_seed, "game_number": g,
                           "game_seed": rng.game_seed(room_seed, g).hex(),
                           "cuts": [], "deals": []}
                out.append(current)
            elif kind == "game_commitment":
                current["game_commitment"] = event["commitment"]
            elif kind == "cut_for_deal":
                for r, cut in enumerate(event["cuts"], start=1):
                    current["cuts"].append({
                        "round": r, "cards": [c["card"] for c in cut],
                        "seed": rng.cut_seed(room_seed, current["game_number"], r).hex()})
            elif kind == "deal_commitment":
                d = event["deal_number"]
                current["deals"].append({
                    "deal_number": d, "commitment": event["commitment"],
                    "seed": rng.deal_seed(room_seed, current["game_number"], d).hex()})
            elif kind == "deal":
                deal = current["deals"][-1]
                assert deal["deal_number"] == event["deal_number"]
                deal.update(players=options.players, dealer=event["dealer"],
                            hands=event["hands"], crib_card=state.crib_card)
            elif kind == "starter":
                current["deals"][-1]["starter"] = event["card"]
        if state.phase == "game_over" and len(out) == games:
            break
        moves = [(s, a) for s in [None, *range(options.players)]
                 for a in engine.legal_actions(state, s)]
        state, events = engine.apply(state, *rnd.choice(moves))
    for game in out:  # a deal the game ended in before its starter was cut is not checked
        game["deals"] = [d for d in game["deals"] if "starter" in d]
    return out


def _check(games: list[dict]) -> list[dict]:
    node = shutil.which("node")
    assert node, "the shuffle document's check needs Node on PATH"
    run = subprocess.run([node, str(CHECKER)], input=json.dumps({"games": games}),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)["results"]


def test_node_checker_finds_the_engine_s_cards() -> None:
    rnd = random.Random(18)
    games: list[dict] = []
    for players, partnerships in ((2, False), (3, False), (4, False), (4, True)):
        options = GameOptions(players=players, partnerships=partnerships, target=61)
        games += _games(options, rng_seed(rnd), 2, rnd)
    assert sum(len(g["deals"]) for g in games) > 20
    assert any(len(g["cuts"]) > 1 for g in games) or any(g["cuts"] for g in games)
    results = _check(games)
    assert all(r["ok"] for r in results), results


def test_node_checker_notices_what_is_wrong() -> None:
    rnd = random.Random(5)
    game = _games(GameOptions(target=61), rng_seed(rnd), 1, rnd)[0]
    tampered = []
    a = json.loads(json.dumps(game))
    hand = a["deals"][0]["hands"]["0"]
    hand[0], hand[1] = hand[1], hand[0]
    tampered.append(a)
    b = json.loads(json.dumps(game))
    b["deals"][1]["seed"] = rng.deal_seed("another room", 1, 2).hex()
    tampered.append(b)
    c = json.loads(json.dumps(game))
    c["game_commitment"] = "0" * 64
    tampered.append(c)
    d = json.loads(json.dumps(game))
    d["deals"][0]["starter"] = next(
        x for x in rng.shuffled_pack(b"\0" * 32) if x != d["deals"][0]["starter"]
        and x not in sum(d["deals"][0]["hands"].values(), []))
    tampered.append(d)
    results = _check(tampered)
    assert [r["ok"] for r in results] == [False] * 4, results
    assert "deal 1 hands" in results[0]["problems"]
    assert "deal 2 seed" in results[1]["problems"]
    assert results[2]["problems"] == ["game commitment"]
    assert results[3]["problems"] == ["deal 1 starter"]


def rng_seed(rnd: random.Random) -> str:
    """A room seed as the server makes them (128 bits as hex)."""
    return f"{rnd.getrandbits(128):032x}"
