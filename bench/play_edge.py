"""How much the expert's play gains over ``standard``'s, and whether the four kept says how
much (issue 22; docs/performance.md, row Z32).

For each seeded deal (the first deal of a game, scores 0-0, far from the end): one seat
keeps a four chosen at random among the expert's three best discards, the other discards
as ``standard``. From that same state the play is played out twice, the keeping seat
playing as ``expert`` and then as ``standard`` (the other seat ``standard`` both times):
the **edge** is the first margin of pegs (play, go, last card) less the second, so the
cards, the crib and the starter are the same and most of the luck cancels.

It reports the mean edge by role with its 95 % interval, and a least-squares fit of the
edge on features of the kept four (the discard table's play margin, distinct ranks,
pairs, cards worth 4 or less, fives, ten-cards, the sum of values): its coefficients with
their standard errors, and how much of the edge it explains on deals it was not fitted to
(the R² of a fit on the first half, tested on the second). Engine and the standard
library only; two worker processes; progress on stderr, the
report (JSON) on stdout. From the repository root::

    python bench/play_edge.py --deals 30000
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import random
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.computer import decide  # noqa: E402
from engine.computer.common import rank_of  # noqa: E402
from engine.computer.expert import rank_discards_expert  # noqa: E402

PLAY_SOURCES = ("play", "go", "last_card")

FEATURES = ("constant", "table", "distinct", "pairs", "low", "fives", "tens", "sum/10")


def features(ranks: list[int], table: float) -> list[float]:
    """The fit's features of a kept four (ranks 1..13) and its table margin (holes)."""
    vals = [min(r, 10) for r in ranks]
    pairs = sum(1 for i in range(4) for j in range(i + 1, 4) if ranks[i] == ranks[j])
    return [1.0, table, float(len(set(ranks))), float(pairs),
            float(sum(1 for v in vals if v <= 4)), float(vals.count(5)),
            float(vals.count(10)), sum(vals) / 10.0]


def _advance(state: Any) -> Any:
    """Play on (both seats ``standard``, the engine's own steps) to the first discard."""
    while state.phase != "discard":
        for seat in range(2):
            legal = engine.legal_actions(state, seat)
            if legal:
                state, _ = engine.apply(state, seat, decide(engine.view(state, seat), legal,
                                                            "standard"))
                break
        else:
            state, _ = engine.apply(state, None, engine.legal_actions(state, None)[0])
    return state


def _play_out(state: Any, me: int, level: str) -> int:
    """The play from ``state`` to its end, seat ``me`` at ``level``: its pegging margin."""
    margin = 0
    while state.phase == "play":
        for seat in range(2):
            legal = engine.legal_actions(state, seat)
            if legal:
                act = decide(engine.view(state, seat), legal,
                             level if seat == me else "standard")
                state, events = engine.apply(state, seat, act)
                break
        else:
            state, events = engine.apply(state, None, engine.legal_actions(state, None)[0])
        for e in events:
            if e["type"] == "peg" and e.get("source") in PLAY_SOURCES:
                margin += int(e["points"]) * (1 if e["side"] == me else -1)
    return margin


def start(n: int) -> tuple[Any, int, dict[str, Any]]:
    """Deal ``n`` once both have discarded: the state, the keeping seat and what it kept
    (``kept``: ranks, ``dealer``: its role, ``table``: the discard table's play margin)."""
    rnd = random.Random(n)
    opts = engine.GameOptions(players=2, partnerships=False, target=121)
    state, _ = engine.new_game(opts, f"play-edge:{n}")
    state = _advance(state)
    me = rnd.randrange(2)
    view = engine.view(state, me)
    rows = rank_discards_expert(view, engine.legal_actions(state, me))
    row = rows[rnd.randrange(min(3, len(rows)))]
    kept = sorted(rank_of(c) for c in view["hand"] if c not in row["cards"])
    state, _ = engine.apply(state, me, row["action"])
    other = 1 - me
    state, _ = engine.apply(state, other, decide(engine.view(state, other),
                                                 engine.legal_actions(state, other),
                                                 "standard"))
    return state, me, {"kept": kept, "dealer": view["dealer"] == me, "table": row["play"]}


def one_deal(n: int) -> dict[str, Any]:
    """Deal ``n``: the kept four, the role, the table margin and both play margins."""
    state, me, deal = start(n)
    return {**deal, "expert": _play_out(state, me, "expert"),
            "standard": _play_out(state, me, "standard")}


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of a small square matrix (Gauss-Jordan with partial pivoting)."""
    n = len(a)
    m = [row[:] + [float(i == j) for j in range(n)] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        p = m[col][col]
        m[col] = [x / p for x in m[col]]
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [row[n:] for row in m]


def least_squares(x: list[list[float]], y: list[float]) -> tuple[list[float], list[float]]:
    """Ordinary least squares: the coefficients and their standard errors."""
    k = len(x[0])
    xtx = [[sum(r[i] * r[j] for r in x) for j in range(k)] for i in range(k)]
    xty = [sum(r[i] * v for r, v in zip(x, y, strict=True)) for i in range(k)]
    inv = _inverse(xtx)
    coef = [sum(inv[i][j] * xty[j] for j in range(k)) for i in range(k)]
    resid = [v - p for v, p in zip(y, _predict(coef, x), strict=True)]
    s2 = sum(e * e for e in resid) / (len(y) - k)
    return coef, [math.sqrt(max(0.0, s2 * inv[i][i])) for i in range(k)]


def _predict(coef: list[float], x: list[list[float]]) -> list[float]:
    return [sum(c * f for c, f in zip(coef, r, strict=True)) for r in x]


def report(deals: list[dict[str, Any]]) -> dict[str, Any]:
    """The mean edge and the fit, by role (see the module doc)."""
    out: dict[str, Any] = {"deals": len(deals)}
    for role in ("dealer", "pone"):
        mine = [d for d in deals if d["dealer"] == (role == "dealer")]
        x = [features(d["kept"], d["table"]) for d in mine]
        y = [float(d["expert"] - d["standard"]) for d in mine]
        n = len(y)
        coef, se = least_squares(x, y)
        half = n // 2
        first, _ = least_squares(x[:half], y[:half])
        mean_first = statistics.fmean(y[:half])
        test = [v - p for v, p in zip(y[half:], _predict(first, x[half:]), strict=True)]
        spread = [v - mean_first for v in y[half:]]
        sd = statistics.stdev(y)
        out[role] = {
            "deals": n,
            "edge_mean": round(statistics.fmean(y), 3),
            "edge_ci95": round(1.96 * sd / math.sqrt(n), 3),
            "edge_sd": round(sd, 2),
            "same_margin_share": round(sum(1 for v in y if v == 0) / n, 3),
            "fit": {name: [round(c, 3), round(s, 3)]
                    for name, c, s in zip(FEATURES, coef, se, strict=True)},
            "holdout_r2": round(1 - sum(e * e for e in test) / sum(e * e for e in spread), 4),
            "fitted_sd": round(statistics.pstdev(_predict(coef, x)), 3),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=30_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    deals = []
    with mp.Pool(args.workers) as pool:
        for i, d in enumerate(pool.imap(one_deal, range(args.deals), chunksize=20), 1):
            deals.append(d)
            if i % 1000 == 0:
                print(f"{i}/{args.deals} deals", file=sys.stderr, flush=True)
    print(json.dumps(report(deals), indent=1))


if __name__ == "__main__":
    main()
