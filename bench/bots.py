"""Computer players measured: win rates, points per deal by source, decision times (issue 4).

Plays whole games to 121 straight through the engine (no server) for each table — 2 players,
3 players, 4 playing alone, 4 in partnerships — in two match-ups:

* ``standard-vs-easy``: one ``standard`` seat (or side, in partnerships) against ``easy``
  seats; the standard seat rotates over the seats from game to game;
* ``standard-vs-standard``: every seat ``standard``; reports how often the first dealer's
  side wins (a check on symmetry and the first-deal edge).

Reports win rates with 95 % Wilson intervals, average points per completed deal by source
(the play — pegging, go and last card —, his heels, the hand, the crib) for the dealer and
for each non-dealer (pone), and the ``standard`` player's time per decision (p50, p99;
discards and plays apart; wall-clock time, and the thread's CPU time, which a busy machine
does not inflate). Every decision is given only ``engine.view(state, seat)`` and
``engine.legal_actions(state, seat)``.

Usage::

    python bench/bots.py                 # 2,000 games per table and match-up (16,000 games)
    python bench/bots.py --games 200     # fewer
    python bench/bots.py --tables 2,4p --workers 2

Progress goes to stderr; the report to stdout.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import engine  # noqa: E402
from engine.computer import decide  # noqa: E402

TABLES = {"2": (2, False), "3": (3, False), "4": (4, False), "4p": (4, True)}
"""Table name -> (players, partnerships)."""

MATCHUPS = ("standard-vs-easy", "standard-vs-standard")
PLAY_SOURCES = {"play": "play", "go": "play", "last_card": "play"}
"""Peg sources grouped as "play"; the others keep their names (his_heels, hand, crib)."""


def _levels(table: str, matchup: str, game: int) -> tuple[list[str], set[int]]:
    """The level of each seat and the standard side(s) for game number ``game``."""
    players, partnerships = TABLES[table]
    if matchup == "standard-vs-standard":
        return ["standard"] * players, set(range(2 if partnerships else players))
    if partnerships:
        side = game % 2
        return ["standard" if s % 2 == side else "easy" for s in range(players)], {side}
    seat = game % players
    return ["standard" if s == seat else "easy" for s in range(players)], {seat}


def play_game(task: tuple[str, str, int, int]) -> dict[str, Any]:
    """Play one game; return its outcome, per-deal points and standard's decision times.

    Args:
        task: ``(table, matchup, game number, base seed)``.

    Returns:
        Plain data: ``winner`` (side), ``standard_sides``, ``first_dealer_side``,
        ``deals`` (completed deals), ``points`` ({(role, source): holes}), ``times``
        ({"discard"|"play"|"other": [seconds, ...]}).
    """
    table, matchup, game, base_seed = task
    players, partnerships = TABLES[table]
    levels, standard_sides = _levels(table, matchup, game)
    opts = engine.GameOptions(players=players, partnerships=partnerships, target=121)
    state, events = engine.new_game(opts, seed=f"{base_seed}:{table}:{matchup}:{game}")
    points: dict[tuple[str, str], int] = defaultdict(int)
    seat_deals: dict[str, int] = defaultdict(int)
    pending: dict[tuple[str, str], int] = defaultdict(int)
    times: dict[str, list[float]] = {"discard": [], "play": [], "other": []}
    cpu: dict[str, list[float]] = {"discard": [], "play": [], "other": []}
    deals = 0
    dealer: int | None = None
    first_dealer: int | None = None
    sides = [s % 2 if partnerships else s for s in range(players)]

    def account(evs: list[dict]) -> None:
        nonlocal deals, dealer, first_dealer
        for ev in evs:
            kind = ev["type"]
            if kind == "deal":
                if dealer is not None:  # the previous deal was completed
                    deals += 1
                    for key, pts in pending.items():
                        points[key] += pts
                    for seat in range(players):
                        role = "dealer" if seat == dealer else "pone"
                        seat_deals[f"{levels[seat]}|{role}"] += 1
                pending.clear()
                dealer = ev["dealer"]
                if first_dealer is None:
                    first_dealer = dealer
            elif kind == "peg" and dealer is not None:
                role = "dealer" if ev["seat"] == dealer else "pone"
                source = PLAY_SOURCES.get(ev["source"], ev["source"])
                pending[(f"{levels[ev['seat']]}|{role}", source)] += ev["points"]

    account(events)
    guard = 0
    while state.phase != "game_over":
        guard += 1
        if guard > 5000:
            raise RuntimeError("game did not end")
        for seat in range(players):
            legal = engine.legal_actions(state, seat)
            if legal:
                break
        else:
            legal = engine.legal_actions(state, None)
            if not legal:
                raise RuntimeError(f"nobody can act in phase {state.phase}")
            state, evs = engine.apply(state, None, legal[0])
            account(evs)
            continue
        view = engine.view(state, seat)
        level = levels[seat]
        c0 = time.thread_time()
        t0 = time.perf_counter()
        action = decide(view, legal, level, seed=game)
        dt = time.perf_counter() - t0
        dc = time.thread_time() - c0
        if level == "standard":
            kind = legal[0]["type"]
            kind = kind if kind in ("discard", "play") else "other"
            times[kind].append(dt)
            cpu[kind].append(dc)
        state, evs = engine.apply(state, seat, action)
        account(evs)
    result = state.result or {}
    return {
        "table": table,
        "matchup": matchup,
        "winner": result.get("winner"),
        "standard_sides": sorted(standard_sides),
        "first_dealer_side": sides[first_dealer] if first_dealer is not None else None,
        "deals": deals,
        "seat_deals": dict(seat_deals),
        "points": {f"{r}|{s}": v for (r, s), v in points.items()},
        "times": times,
        "cpu": cpu,
    }


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float, float]:
    """Share and 95 % Wilson score interval: ``(p, low, high)``."""
    if n == 0:
        return 0.0, 0.0, 0.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return p, centre - half, centre + half


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def report(table: str, matchup: str, results: list[dict], elapsed: float) -> list[str]:
    """Lines of text summarising one table and match-up."""
    players, partnerships = TABLES[table]
    n = len(results)
    lines = [
        f"### {table} ({'partnerships' if partnerships else f'{players} alone'}), "
        f"{matchup}: {n} games in {elapsed:.0f} s"
    ]
    if matchup == "standard-vs-easy":
        wins = sum(1 for r in results if r["winner"] in r["standard_sides"])
        p, lo, hi = wilson(wins, n)
        fair = 1 / (2 if partnerships else players)
        lines.append(
            f"standard wins {wins}/{n} = {p:.1%} (95% CI {lo:.1%}–{hi:.1%}); "
            f"an even share would be {fair:.0%}"
        )
    else:
        wins = sum(1 for r in results if r["winner"] == r["first_dealer_side"])
        p, lo, hi = wilson(wins, n)
        lines.append(f"first dealer's side wins {wins}/{n} = {p:.1%} (95% CI {lo:.1%}–{hi:.1%})")
    deals = sum(r["deals"] for r in results)
    totals: dict[str, int] = defaultdict(int)
    for r in results:
        for key, v in r["points"].items():
            totals[key] += v
    pones = players - 1
    levels = ("standard",) if matchup == "standard-vs-standard" else ("standard", "easy")
    for level, role in [(lv, ro) for lv in levels for ro in ("dealer", "pone")]:
        # How many (completed deal, seat) pairs of this level and role there were.
        seats = sum(r["seat_deals"].get(f"{level}|{role}", 0) for r in results)
        if not seats:
            continue
        parts = {
            s: totals.get(f"{level}|{role}|{s}", 0) / seats
            for s in ("play", "his_heels", "hand", "crib")
        }
        total = sum(parts.values())
        who = "dealer" if role == "dealer" else ("pone" if pones == 1 else "each non-dealer")
        if len(levels) > 1:
            who = f"{level} {who}"
        lines.append(
            f"{who}: {total:.2f} points/deal = play {parts['play']:.2f} + heels "
            f"{parts['his_heels']:.2f} + hand {parts['hand']:.2f} + crib "
            f"{parts['crib']:.2f}  ({seats} seat-deals of {deals} completed deals)"
        )
    for kind in ("discard", "play"):
        ts = [t for r in results for t in r["times"][kind]]
        cs = [t for r in results for t in r["cpu"][kind]]
        if ts:
            lines.append(
                f"standard {kind}: wall p50 {percentile(ts, 0.5) * 1e3:.2f} ms, "
                f"p99 {percentile(ts, 0.99) * 1e3:.2f} ms, max {max(ts) * 1e3:.2f} ms; "
                f"CPU p50 {percentile(cs, 0.5) * 1e3:.2f} ms, p99 "
                f"{percentile(cs, 0.99) * 1e3:.2f} ms; {len(ts)} decisions"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the report to stdout."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per table and match-up")
    parser.add_argument("--tables", default="2,3,4,4p", help="comma list of 2, 3, 4, 4p")
    parser.add_argument("--matchups", default=",".join(MATCHUPS))
    parser.add_argument("--workers", type=int, default=min(2, mp.cpu_count()))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    tables = [t for t in args.tables.split(",") if t]
    matchups = [m for m in args.matchups.split(",") if m]
    for t in tables:
        if t not in TABLES:
            parser.error(f"unknown table {t!r}")
    for m in matchups:
        if m not in MATCHUPS:
            parser.error(f"unknown match-up {m!r}")
    start = time.perf_counter()
    print(
        f"# bench/bots.py --games {args.games} --tables {args.tables} "
        f"--workers {args.workers} --seed {args.seed}"
    )
    with mp.Pool(args.workers) as pool:
        for table in tables:
            for matchup in matchups:
                tasks = [(table, matchup, g, args.seed) for g in range(args.games)]
                t0 = time.perf_counter()
                results = []
                for i, res in enumerate(pool.imap_unordered(play_game, tasks, chunksize=4)):
                    results.append(res)
                    if (i + 1) % max(1, args.games // 50) == 0 or i + 1 == args.games:
                        rate = (i + 1) / (time.perf_counter() - t0)
                        sys.stderr.write(
                            f"\r[{table} {matchup}] {i + 1}/{args.games} games, "
                            f"{rate:.1f} games/s   "
                        )
                        sys.stderr.flush()
                sys.stderr.write("\n")
                print("\n".join(report(table, matchup, results, time.perf_counter() - t0)))
                print(flush=True)
    print(f"total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
