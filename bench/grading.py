"""What grading a game costs (issue 22 point 4; ``server.archive.grading``), as ratios.

Plays ``--games`` 2-player games to 121 between a ``standard`` and an ``easy`` computer with
the engine (seeded packs, logged as the archive keeps them), then grades each: the CPU the
grading takes against the CPU the two computers took to play the game, per game and per
graded decision; then the first result of a fresh one-worker ``spawn`` pool (what
``server.archive.grader`` starts at a process's first grading) against a warm one. With
``--level`` another grader level can be measured (one ``engine.computer.suggest`` takes).
From the repository root::

    python bench/grading.py --games 20

Figures: docs/performance.md, "Grading".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine import rng  # noqa: E402
from engine.computer import decide  # noqa: E402
from server.archive import grading  # noqa: E402


def play(n: int) -> tuple[dict[str, Any], list[dict[str, Any]], list[str], float]:
    """Game ``n``: (options, log entries, deal seeds, CPU seconds the computers took)."""
    options = engine.GameOptions(players=2, target=121)
    seeds = [hashlib.sha256(f"bench:{n}:{i}".encode()).hexdigest()[:32] for i in range(60)]
    decks = [rng.shuffled_pack(bytes.fromhex(s)) for s in seeds]
    state, events = engine.new_game(options, f"bench{n}", first_dealer=n % 2, decks=decks)
    entries: list[dict[str, Any]] = [{"v": 1, "events": events}]
    levels = ("standard", "easy")
    spent = 0.0
    while state.phase != "game_over":
        for seat in range(2):
            legal = engine.legal_actions(state, seat)
            start = time.process_time()
            action = decide(engine.view(state, seat), legal, levels[seat], seed=len(entries))
            spent += time.process_time() - start
            if action is not None:
                state, events = engine.apply(state, seat, action)
                entries.append({"v": len(entries) + 1, "seat": seat, "action": action,
                                "id": f"auto-{len(entries)}", "events": events})
                break
        else:
            legal = engine.legal_actions(state, None)
            state, events = engine.apply(state, None, legal[0])
            entries.append({"v": len(entries) + 1, "seat": None, "action": legal[0],
                            "events": events})
    return options.to_dict(), entries, seeds, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--level", default=None, help="grader level (default: GRADER_LEVEL)")
    args = parser.parse_args()
    if args.level:
        grading.GRADER_LEVEL = args.level
    games = [play(n) for n in range(args.games)]
    played = sum(g[3] for g in games)
    start = time.process_time()
    results = [grading.grade_archived(o, e, s, ["computer", "computer"])
               for o, e, s, _ in games]
    graded = time.process_time() - start
    decisions = sum(len(r["moves"]) for r in results)
    options, entries, seeds, _ = games[0]
    wall = time.monotonic()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        pool.submit(grading.grade_archived, options, entries, seeds, ["human", "human"]).result()
        first = time.monotonic() - wall
        wall = time.monotonic()
        pool.submit(grading.grade_archived, options, entries, seeds, ["human", "human"]).result()
        warm = time.monotonic() - wall
    print(json.dumps({
        "grader": grading.GRADER_LEVEL, "games": args.games, "decisions_graded": decisions,
        "grading_cpu_per_game_ms": round(1000 * graded / args.games, 1),
        "grading_cpu_per_decision_ms": round(1000 * graded / max(1, decisions), 2),
        "grading_over_playing_cpu": round(graded / played, 2) if played else None,
        "pool_first_over_warm_wall": round(first / warm, 1) if warm else None,
        "pool_first_wall_s": round(first, 2),
    }, indent=1))


if __name__ == "__main__":
    main()
