"""Build the ``expert`` computer's tables (issue 22): ``engine/computer/expert_data.py``.

Three tables, all for two players:

1. **The chance to win** from every (pone's score, dealer's score), to 121 and to 61, by
   dynamic programming over deals measured with the engine: ``--games`` games of
   ``standard`` against ``standard`` (engine only, no server) give the sequence of pegs of
   every completed deal, in order and by role (his heels, each peg of the play, the pone's
   hand, the dealer's hand, the crib). ``W[p][d]``, the pone's chance, is the average over
   those deals of: 1 if the pone reaches the target first in the deal, 0 if the dealer
   does, else ``1 - W[d + D][p + P]`` (roles swap; every deal pegs at least the last card,
   so the scores grow and the recursion ends). Also the distributions of the pone's show
   (hand) and the dealer's (hand + crib) points.
2. **The play's margin of a kept four**: for each of the 1,820 rank shapes of four cards,
   as pone and as dealer, the average pegs of this seat and of the opponent over every
   four the opponent may keep (each weighed by the ways the rest of the pack makes it
   times the chance ``standard`` keeps it in its role: table 3), both seats playing as
   ``standard`` does (:class:`engine.computer.lookahead.StandardModel`, each seeing the
   other's cards as unseen). Exact, not sampled: about 6.6 million plays.
3. **What a rational opponent keeps**: for each of the 1,820 rank shapes of four cards, as
   pone and as dealer, the chance that ``standard`` keeps a four of that shape when it is
   among the six cards dealt (``--keep-hands`` random six-card hands per role, standard's
   own discard of each: of the 15 fours in a hand, which it keeps). The ``expert`` weighs
   the opponent holdings it searches by it (Bayes: the holding's prior times the chance
   that the opponent would have kept it).
4. **The crib with a rational opponent's throw**: for each of the 91 rank pairs a seat
   may throw, to its own crib and to the opponent's, the average rank count of the crib
   when the opponent's two cards are what ``standard`` throws in its role (counted over
   the same hands as table 3) and the starter is any other card.

The games are seeded, so a rebuild gives the same tables. From the repository root (about
five minutes on the two cores of the development machine)::

    python bench/expert_tables.py --games 6000 --keep-hands 100000

numpy is used here (a bench tool) for the dynamic programme; the engine reads the result
with the standard library only.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import math
import multiprocessing as mp
import random
import struct
import sys
import time
from itertools import combinations_with_replacement
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import engine  # noqa: E402
from engine.computer import decide  # noqa: E402
from engine.computer.common import ALL_CARDS, FIVE_RANKS, rank_of  # noqa: E402
from engine.computer.discard import rank_discards  # noqa: E402
from engine.computer.lookahead import StandardModel, model_playout  # noqa: E402

OUT = ROOT / "engine" / "computer" / "expert_data.py"


def deals_of_game(n: int) -> list[list[tuple[int, int]]]:
    """The completed deals of one standard-vs-standard game: per deal the pegs in order,
    ``(role, points)`` with role 0 the pone, 1 the dealer, plus show markers."""
    opts = engine.GameOptions(players=2, target=121)
    state, _ = engine.new_game(opts, seed=f"expert-tables-{n}")
    deals: list[list[tuple[int, int]]] = []
    current: list[tuple[int, int]] | None = None
    dealer = None
    while state.phase != "game_over":
        for seat in range(2):
            legal = engine.legal_actions(state, seat)
            if not legal:
                continue
            action = decide(engine.view(state, seat), legal, "standard")
            if action is None:
                continue
            state, events = engine.apply(state, seat, action)
            break
        else:
            state, events = engine.apply(state, None, engine.legal_actions(state, None)[0])
        for e in events:
            if e["type"] == "deal":
                if current is not None:
                    deals.append(current)
                current, dealer = [], e["dealer"]
            elif e["type"] == "peg" and current is not None:
                role = 1 if e["seat"] == dealer else 0
                current.append((role, int(e["points"]), e.get("source", "")))
    return deals  # the last (game-ending) deal is left out


def _deals(games: int) -> list[list[tuple[int, int, str]]]:
    with mp.Pool(2) as pool:
        out = []
        for i, got in enumerate(pool.imap_unordered(deals_of_game, range(games), 50)):
            out += got
            if i % 500 == 0:
                print(f"  games {i}/{games}, deals {len(out)}", file=sys.stderr, flush=True)
    return out


def win_table(deals: list, target: int) -> np.ndarray:
    """``W[p, d]``: the pone's chance to win with ``p`` and ``d`` holes (see the module doc)."""
    s = len(deals)
    big = 10_000
    cross = np.full((2, s, target + 1), big, dtype=np.int32)  # first event index reaching x
    totals = np.zeros((2, s), dtype=np.int32)
    for i, deal in enumerate(deals):
        cum = [0, 0]
        for k, (role, pts, _src) in enumerate(deal):
            before = cum[role]
            cum[role] += pts
            hi = min(cum[role], target)
            if hi > before:
                cross[role, i, before + 1 : hi + 1] = k
        totals[:, i] = cum
    cross[:, :, 0] = -1
    w = np.zeros((target, target))
    for total in range(2 * target - 2, -1, -1):
        for p in range(max(0, total - target + 1), min(target - 1, total) + 1):
            d = total - p
            tp = cross[0, :, target - p]
            td = cross[1, :, target - d]
            pone_first = tp < td
            dealer_first = td < tp
            neither = (tp >= big) & (td >= big)
            nd = np.minimum(d + totals[1], target - 1)
            np_ = np.minimum(p + totals[0], target - 1)
            later = 1.0 - w[nd, np_]
            w[p, d] = (pone_first.sum() + (later * neither).sum()) / s
            del dealer_first
    return w


def distribution(deals: list, role: int, sources: tuple[str, ...]) -> list[float]:
    """The distribution of one role's points from some sources over the deals."""
    counts: dict[int, int] = {}
    for deal in deals:
        x = sum(p for r, p, src in deal if r == role and src in sources)
        counts[x] = counts.get(x, 0) + 1
    top = max(counts)
    return [round(counts.get(x, 0) / len(deals), 5) for x in range(top + 1)]


_SHAPES = list(combinations_with_replacement(range(1, 14), 4))
"""The 1,820 rank shapes of four cards, in the tables' order."""


def _unseen(keep: tuple[int, ...]) -> list[int]:
    base = [0] + [4] * 13
    for r in keep:
        base[r] -= 1
    return base


def _ways(avail: list[int], shape: tuple[int, ...]) -> int:
    """How many ways ``avail`` (cards left by rank, index 1..13) make the ranks ``shape``."""
    w = 1
    for r in set(shape):
        w *= math.comb(avail[r], shape.count(r))
        if not w:
            break
    return w


_KEEPS: list[float] = []
_OPP_MODELS: dict[tuple[int, ...], StandardModel] = {}


def _peg_init(keeps: list[float]) -> None:
    _KEEPS[:] = keeps


def _peg_row(keep: tuple[int, ...]) -> tuple[float, float, float, float]:
    """The average pegs ``(pone: mine, theirs, dealer: mine, theirs)`` of a kept four of
    ranks ``keep`` against every four the opponent may keep, each weighed by the ways the
    rest of the pack makes it times the chance ``standard`` keeps it in the opponent's role
    (the keep table); both seats play as ``standard`` does."""
    left = _unseen(keep)
    me = StandardModel(left)
    out = []
    for lead in (True, False):  # as pone this seat leads; the opponent is the dealer
        off = 1 if lead else 0  # the opponent's role in the keep table: dealer when we lead
        total = my_pegs = their_pegs = 0.0
        for i, other in enumerate(_SHAPES):
            w = _ways(left, other)
            if not w:
                continue
            w *= _KEEPS[2 * i + off]
            model = _OPP_MODELS.get(other)
            if model is None:
                model = _OPP_MODELS[other] = StandardModel(_unseen(other))
            a, b = model_playout(keep, other, lead, (me, model))
            total += w
            my_pegs += w * a
            their_pegs += w * b
        out += [my_pegs / total, their_pegs / total]
    return tuple(out)  # pone: mine, theirs; dealer: mine, theirs


def peg_table(keeps: list[float]) -> list[tuple[float, float, float, float]]:
    """The play's pegs of every kept four by role, exactly over the opponent's keeps
    (``keeps``: :func:`keep_table`'s chances); about 6.6 million plays, a few minutes."""
    with mp.Pool(2, initializer=_peg_init, initargs=(keeps,)) as pool:
        out = []
        for i, row in enumerate(pool.imap(_peg_row, _SHAPES, 10)):
            out.append(row)
            if i % 200 == 0:
                print(f"  peg table {i}/{len(_SHAPES)}", file=sys.stderr, flush=True)
        return out


def _keep_counts(args: tuple[bool, int, str]) -> tuple[bool, dict, dict, dict]:
    """Of ``n`` random six-card hands (seeded), how often each rank shape of four appears
    among a hand's 15 fours and how often ``standard`` keeps it, as dealer or as pone; and
    how often it throws each rank pair to the crib."""
    dealer, n, seed = args
    rnd = random.Random(seed)
    appear: dict[tuple[int, ...], int] = {}
    kept: dict[tuple[int, ...], int] = {}
    thrown: dict[tuple[int, ...], int] = {}
    for _ in range(n):
        hand = rnd.sample(ALL_CARDS, 6)
        view = {"hand": hand, "seat": 0, "dealer": 0 if dealer else 1, "sides": [0, 1],
                "players": 2, "options": {}}
        legal = [{"type": "discard", "cards": list(p)} for p in itertools.combinations(hand, 2)]
        for i, row in enumerate(rank_discards(view, legal)):
            shape = tuple(sorted(rank_of(c) for c in hand if c not in row["cards"]))
            appear[shape] = appear.get(shape, 0) + 1
            if i == 0:
                kept[shape] = kept.get(shape, 0) + 1
                pair = tuple(sorted(rank_of(c) for c in row["cards"]))
                thrown[pair] = thrown.get(pair, 0) + 1
    return dealer, appear, kept, thrown


def keep_table(hands: int) -> tuple[list[float], dict[bool, dict[tuple[int, ...], int]]]:
    """Per rank shape of four (in ``combinations_with_replacement`` order), the chance that
    ``standard`` keeps it as pone and as dealer, interleaved: ``[pone, dealer, ...]``
    (Laplace-smoothed: a shape never seen kept still has a small chance); and, by role
    (True: as dealer), how many times it threw each rank pair."""
    chunk = 10_000
    tasks = [(dealer, min(chunk, hands - i), f"keep-{dealer}-{i}")
             for dealer in (False, True) for i in range(0, hands, chunk)]
    appear: dict[tuple[bool, tuple[int, ...]], int] = {}
    kept: dict[tuple[bool, tuple[int, ...]], int] = {}
    thrown: dict[bool, dict[tuple[int, ...], int]] = {False: {}, True: {}}
    with mp.Pool(2) as pool:
        for dealer, a, k, t in pool.imap_unordered(_keep_counts, tasks):
            for pair, v in t.items():
                thrown[dealer][pair] = thrown[dealer].get(pair, 0) + v
            for shape, v in a.items():
                appear[dealer, shape] = appear.get((dealer, shape), 0) + v
            for shape, v in k.items():
                kept[dealer, shape] = kept.get((dealer, shape), 0) + v
    out = []
    for shape in combinations_with_replacement(range(1, 14), 4):
        for dealer in (False, True):
            out.append((kept.get((dealer, shape), 0) + 0.5)
                       / (appear.get((dealer, shape), 0) + 1.0))
    return out, thrown


FULL = [0] + [4] * 13
"""A whole pack by rank (index 1..13)."""


def crib_table(thrown: dict[bool, dict[tuple[int, ...], int]]) -> list[float]:
    """Per rank pair a seat throws (in ``combinations_with_replacement`` order), the
    average rank count of the crib (pairs, fifteens, runs: no flush or nobs) when the
    opponent's two cards are what ``standard`` throws (``thrown``: the pairs it threw, by
    role) and the starter is any other card: ``[the opponent's crib, this seat's crib,
    ...]``. The opponent's pair is weighed by how often it throws it times the chance the
    pack still holds it once this seat's pair is out."""
    out = []
    for pair in combinations_with_replacement(range(1, 14), 2):
        avail = [0] + [4] * 13
        for r in pair:
            avail[r] -= 1
        for i_deal in (False, True):
            # My crib holds the pone's throw; the dealer's holds its own.
            total = weight = 0.0
            for other, n in thrown[not i_deal].items():
                w = n * _ways(avail, other) / _ways(FULL, other)
                if not w:
                    continue
                left = list(avail)
                for r in other:
                    left[r] -= 1
                cards = sum(left)
                count = sum(left[s] * FIVE_RANKS[tuple(sorted((*pair, *other, s)))]
                            for s in range(1, 14) if left[s])
                total += w * count / cards
                weight += w
            out.append(total / weight)
    return out


def _pack16(values: list[float], scale: float, offset: float = 0.0) -> str:
    raw = struct.pack(f">{len(values)}H", *(
        max(0, min(65535, round((v + offset) * scale))) for v in values))
    text = base64.b64encode(raw).decode()
    return "\n".join(text[i : i + 88] for i in range(0, len(text), 88))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=6000)
    parser.add_argument("--keep-hands", type=int, default=100_000,
                        help="random six-card hands per role for the keep table")
    args = parser.parse_args()
    started = time.process_time()
    wall = time.perf_counter()
    deals = _deals(args.games)
    print(f"{len(deals)} deals in {time.perf_counter() - wall:.0f} s", file=sys.stderr)
    tables = {t: win_table(deals, t) for t in (121, 61)}
    print(f"win tables at {time.perf_counter() - wall:.0f} s", file=sys.stderr)
    pone_show = distribution(deals, 0, ("hand",))
    dealer_show = distribution(deals, 1, ("hand", "crib"))
    keeps, thrown = keep_table(args.keep_hands)
    cribs = crib_table(thrown)
    print(f"keep table at {time.perf_counter() - wall:.0f} s", file=sys.stderr)
    pegs = peg_table(keeps)
    print(f"peg table at {time.perf_counter() - wall:.0f} s", file=sys.stderr)
    lines = [
        '"""Tables of the ``expert`` computer player (issue 22), made by bench/expert_tables.py:',
        "",
        f"    python bench/expert_tables.py --games {args.games}"
        f" --keep-hands {args.keep_hands}",
        "",
        f"from {len(deals)} completed deals of standard against standard (2 players). Do not",
        "edit by hand. Decoded by :mod:`engine.computer.winprob` (standard library only).",
        '"""',
        "",
        f"DEALS = {len(deals)}",
        f"KEEP_HANDS = {args.keep_hands}",
        "",
    ]
    for t, w in tables.items():
        flat = [float(x) for x in w.reshape(-1)]
        lines += [f'WIN_{t} = """', _pack16(flat, 65535.0), '"""', ""]
    lines += [f"PONE_SHOW = {pone_show!r}", "", f"DEALER_SHOW = {dealer_show!r}", ""]
    flat = [x for row in pegs for x in row]
    lines += ['PEG = """', _pack16(flat, 1000.0), '"""', ""]
    lines += ['KEEP = """', _pack16(keeps, 65535.0), '"""', ""]
    lines += ['CRIB = """', _pack16(cribs, 1000.0), '"""', ""]
    body = "\n".join(lines)
    # Keep the long literal lists within the line length.
    out = []
    for line in body.split("\n"):
        while len(line) > 99 and ", " in line[:99]:
            cut = line[:99].rfind(", ") + 1
            out.append(line[:cut])
            line = "    " + line[cut:].lstrip()
        out.append(line)
    OUT.write_text("\n".join(out), encoding="utf-8")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes); CPU {time.process_time() - started:.0f} s"
          f", wall {time.perf_counter() - wall:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
