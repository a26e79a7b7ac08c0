"""``expert`` against ``standard`` by duplicate deals (issue 22 points 2 and 3).

Every seed is played more than once with the same seeded decks (engine/rng.py: a game's
deals and its cut for first deal come from the room seed alone) and the levels moved round
the seats, so both levels get the same cards in the same seats' turn:

* ``2`` (2 players) and ``2x2`` (partnerships): two games per seed, the expert side in seat
  0 (seats 0 and 2) and then in seat 1 (seats 1 and 3);
* ``3`` and ``4`` (playing alone): one expert and the rest ``standard``, one game per seat
  the expert can take (3 or 4 games per seed).

Deal ``k`` of a seed is the same pack in every game of the seed and is dealt by the same
seat, so for a deal completed in both games of a 2-sided seed the expert held each side's
cards once: its **points per pair of deals** is its side's points less the other side's in
the one game plus the same in the other (completed deals only: the deal that ends a game
is left out). For 3 and 4 alone the margin per deal is the expert's points less the
average of the others', summed over the seed's games, per deal completed in all of them.
Win rates count games. Intervals are 95 %, normal, with the seed as the unit (the games and
deals of one seed are not independent): a ratio estimate's cluster standard error.

The margin is also split by where the points come from (``margin_by_part``: the play —
pegging, go and last card — the hand, the crib, his heels; and the play's margin with the
expert dealing and as pone).

It also times every ``expert`` decision with ``time.process_time`` (the worker's CPU time)
and reports p50 / p99 / max per kind (discard, play). Engine only, no server; two worker
processes; progress on stderr, the report (JSON) on stdout. From the repository root::

    python bench/duplicate.py --kinds 2 --seeds 4000
    python bench/duplicate.py --kinds 3,4,2x2 --seeds 200

Two variants of the expert (``--set NAME=VALUE`` overrides a constant of
``engine.computer.expert``) compare best on the same seeds, paired: a seed's deals are the
same cards in both runs, so most of the luck cancels and the difference's interval is
narrower than either run's own::

    python bench/duplicate.py --base tuneB --per-seed a.json
    python bench/duplicate.py --base tuneB --set TILT=0 --per-seed b.json
    python bench/duplicate.py --compare a.json b.json
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.computer import decide  # noqa: E402

KINDS = {"2": (2, False), "3": (3, False), "4": (4, False), "2x2": (4, True)}

PARTS = ("play", "hand", "crib", "heels")
"""Where a deal's points come from (the play: pegging, go and last card)."""

SOURCES = {"play": "play", "go": "play", "last_card": "play", "hand": "hand", "crib": "crib"}
"""A peg event's ``source`` by part (anything else is his heels)."""


def seatings(kind: str) -> list[list[str]]:
    """The levels by seat of each game of a seed."""
    players, partnerships = KINDS[kind]
    if partnerships:
        return [["expert", "standard"] * 2, ["standard", "expert"] * 2]
    return [["expert" if s == k else "standard" for s in range(players)]
            for k in range(players)]


def play(kind: str, levels: list[str], seed: str, target: int) -> dict[str, Any]:
    """One game: the winner side, points per side of each completed deal, expert CPU times."""
    players, partnerships = KINDS[kind]
    opts = engine.GameOptions(players=players, partnerships=partnerships, target=target)
    state, events = engine.new_game(opts, seed)
    side_of = opts.side_of
    deals: dict[int, list[int]] = {}
    split: dict[int, dict[str, Any]] = {}
    current: list[int] | None = None
    parts: dict[str, Any] = {}
    deal_no = 0
    times: dict[str, list[float]] = defaultdict(list)
    steps = 0
    while True:
        for e in events:
            if e["type"] == "deal":
                if current is not None:
                    deals[deal_no] = current
                    split[deal_no] = parts
                deal_no, current = e["deal_number"], [0] * opts.sides
                parts = {part: [0] * opts.sides for part in PARTS}
                parts["dealer_side"] = side_of(e["dealer"])
            elif e["type"] == "peg" and current is not None:
                current[e["side"]] += int(e["points"])
                parts[SOURCES.get(e.get("source"), "heels")][e["side"]] += int(e["points"])
        if state.phase == "game_over":
            break
        steps += 1
        assert steps < 20_000, "a game that does not end"
        for seat in range(players):
            legal = engine.legal_actions(state, seat)
            if not legal:
                continue
            view = engine.view(state, seat)
            kind_of = legal[0].get("type")
            if levels[seat] == "expert":
                t0 = time.process_time()
                action = decide(view, legal, "expert")
                dt = time.process_time() - t0
                if kind_of in ("discard", "play") and len(legal) > 1:
                    times[kind_of].append(dt)
            else:
                action = decide(view, legal, "standard")
            if action is None:
                continue
            state, events = engine.apply(state, seat, action)
            break
        else:
            state, events = engine.apply(state, None, engine.legal_actions(state, None)[0])
    winner = state.result["winner"]
    expert_sides = {side_of(s) for s in range(players) if levels[s] == "expert"}
    return {"winner": winner, "expert_sides": sorted(expert_sides), "deals": deals,
            "split": split, "times": dict(times)}


def _tune(settings: list[str]) -> None:
    """Set ``engine.computer.expert`` constants (``NAME=VALUE``, for experiments)."""
    from engine.computer import expert

    for item in settings:
        name, value = item.split("=", 1)
        setattr(expert, name, json.loads(value))


def run_seed(task: tuple[str, int, int, str, list[str]]) -> dict[str, Any]:
    """Every game of one seed; the seed's figures."""
    kind, n, target, base, settings = task
    _tune(settings)
    seed = f"{base}:{kind}:{n}"
    games = [play(kind, levels, seed, target) for levels in seatings(kind)]
    common = set.intersection(*(set(g["deals"]) for g in games))
    margin = 0.0
    parts = dict.fromkeys((*PARTS, "play_as_dealer", "play_as_pone"), 0.0)

    def edge(pts: list[int], g: dict[str, Any]) -> float:
        mine = [pts[s] for s in g["expert_sides"]]
        others = [pts[s] for s in range(len(pts)) if s not in g["expert_sides"]]
        return sum(mine) / len(mine) - sum(others) / len(others)

    for k in common:
        for g in games:
            margin += edge(g["deals"][k], g)
            split = g["split"][k]
            for part in PARTS:
                parts[part] += edge(split[part], g)
            role = "dealer" if split["dealer_side"] in g["expert_sides"] else "pone"
            parts[f"play_as_{role}"] += edge(split["play"], g)
    wins = sum(1 for g in games if g["winner"] in g["expert_sides"])
    times: dict[str, list[float]] = defaultdict(list)
    for g in games:
        for key, values in g["times"].items():
            times[key] += values
    return {"seed": n, "margin": margin, "deal_sets": len(common), "wins": wins,
            "games": len(games), "parts": parts, "times": dict(times)}


def ratio_ci(xs: list[float], ns: list[float]) -> tuple[float, float]:
    """A ratio estimate sum(x)/sum(n) and its 95 % half-width (cluster standard error)."""
    g = len(xs)
    total_n = sum(ns)
    m = sum(xs) / total_n
    if g < 2:
        return m, float("nan")
    resid = sum((x - m * n) ** 2 for x, n in zip(xs, ns, strict=True))
    se = math.sqrt(resid * g / (g - 1)) / total_n
    return m, 1.96 * se


def quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default="2")
    parser.add_argument("--seeds", type=int, default=1000, help="seeds per kind")
    parser.add_argument("--target", type=int, default=121)
    parser.add_argument("--base", default="duplicate")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="override a constant of engine.computer.expert (experiments)")
    parser.add_argument("--per-seed", type=Path, metavar="FILE",
                        help="also write every seed's figures (JSON) for --compare")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"),
                        help="no games: B's figures less A's, paired by seed (two "
                             "--per-seed files of the same seeds and kind)")
    args = parser.parse_args()
    if args.compare:
        print(json.dumps(compare(*args.compare), indent=2))
        return
    per_seed: dict[str, list[dict[str, Any]]] = {}
    report: dict[str, Any] = {"seeds": args.seeds, "target": args.target, "set": args.set,
                              "kinds": {}}
    for kind in args.kinds.split(","):
        started = time.perf_counter()
        tasks = [(kind, n, args.target, args.base, args.set) for n in range(args.seeds)]
        results = []
        with mp.Pool(args.workers) as pool:
            for i, r in enumerate(pool.imap_unordered(run_seed, tasks, 4)):
                results.append(r)
                if (i + 1) % 50 == 0 or i + 1 == len(tasks):
                    m, h = ratio_ci([x["margin"] for x in results],
                                    [x["deal_sets"] for x in results])
                    w = sum(x["wins"] for x in results) / sum(x["games"] for x in results)
                    print(f"  {kind}: {i + 1}/{len(tasks)} seeds, margin {m:+.2f} ± {h:.2f}"
                          f" per deal set, wins {w:.1%}, {time.perf_counter() - started:.0f} s",
                          file=sys.stderr, flush=True)
        margin, half = ratio_ci([r["margin"] for r in results], [r["deal_sets"] for r in results])
        win, win_half = ratio_ci([float(r["wins"]) for r in results],
                                 [float(r["games"]) for r in results])
        times: dict[str, list[float]] = defaultdict(list)
        for r in results:
            for key, values in r["times"].items():
                times[key] += values
        deal_sets = sum(r["deal_sets"] for r in results) or 1
        per_seed[kind] = [{k: v for k, v in r.items() if k != "times"} for r in results]
        report["kinds"][kind] = {
            "seeds": len(results),
            "games": sum(r["games"] for r in results),
            "deal_sets": sum(r["deal_sets"] for r in results),
            "margin_per_deal_set": round(margin, 3), "margin_ci95": round(half, 3),
            "margin_by_part": {part: round(sum(r["parts"][part] for r in results)
                                           / deal_sets, 3) for part in results[0]["parts"]},
            "expert_win_rate": round(win, 4), "win_ci95": round(win_half, 4),
            "even_share": 0.5 if KINDS[kind][1] or KINDS[kind][0] == 2 else
            round(1 / KINDS[kind][0], 4),
            "cpu_ms": {key: {"n": len(v), "p50": round(1000 * quantile(v, 0.5), 2),
                             "p99": round(1000 * quantile(v, 0.99), 2),
                             "max": round(1000 * max(v), 2)} for key, v in times.items()},
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(json.dumps({kind: report["kinds"][kind]}), file=sys.stderr, flush=True)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    if args.per_seed:
        args.per_seed.write_text(json.dumps({"base": args.base, "set": args.set,
                                             "kinds": per_seed}) + "\n", encoding="utf-8")


def _level(run: dict[int, dict[str, Any]], seeds: list[int]) -> tuple[float, float]:
    """A run's points per pair of deals and win rate over ``seeds``."""
    pts = sum(run[n]["margin"] for n in seeds) / max(sum(run[n]["deal_sets"] for n in seeds), 1)
    wins = sum(run[n]["wins"] for n in seeds) / sum(run[n]["games"] for n in seeds)
    return round(pts, 3), round(wins, 4)


def compare(a_path: Path, b_path: Path) -> dict[str, Any]:
    """Two runs on the same seeds, paired: per kind, each run's points per pair of deals and
    win rate, and B's less A's with a 95 % interval from the seeds' differences (a seed's
    deals are the same cards in both runs, so the luck of the deal mostly cancels: the
    interval is narrower than either run's own)."""
    a_runs = json.loads(a_path.read_text(encoding="utf-8"))["kinds"]
    b_runs = json.loads(b_path.read_text(encoding="utf-8"))["kinds"]
    out: dict[str, Any] = {}
    for kind in sorted(set(a_runs) & set(b_runs)):
        a = {r["seed"]: r for r in a_runs[kind]}
        b = {r["seed"]: r for r in b_runs[kind]}
        seeds = sorted(set(a) & set(b))
        if len(seeds) < 2:
            continue
        rate = [(b[n]["margin"] / max(b[n]["deal_sets"], 1)
                 - a[n]["margin"] / max(a[n]["deal_sets"], 1),
                 (a[n]["deal_sets"] + b[n]["deal_sets"]) / 2) for n in seeds]
        weight = sum(w for _, w in rate) or 1.0
        mean = sum(d * w for d, w in rate) / weight
        var = (sum((w * (d - mean)) ** 2 for d, w in rate) / weight ** 2
               * len(rate) / (len(rate) - 1))
        wins = [(b[n]["wins"] - a[n]["wins"]) / b[n]["games"] for n in seeds]
        w_mean = sum(wins) / len(wins)
        w_se = math.sqrt(sum((x - w_mean) ** 2 for x in wins) / (len(wins) - 1) / len(wins))
        out[kind] = {"seeds": len(seeds), "a": _level(a, seeds), "b": _level(b, seeds),
                     "margin_diff": round(mean, 3), "margin_diff_ci95": round(
                         1.96 * math.sqrt(var), 3),
                     "win_rate_diff": round(w_mean, 4), "win_rate_diff_ci95": round(
                         1.96 * w_se, 4)}
    return out


if __name__ == "__main__":
    main()
