"""How often the expert's opponent model picks the card ``standard`` lays (issue 22).

``expert`` weighs the opponent's possible holdings by how likely ``standard`` was to make
each play it made (engine/computer/expert.py, ``TIES``). This plays ``standard`` against
itself through the engine (seeded games) and, at every play with a choice of ranks, asks
:class:`engine.computer.lookahead.StandardModel` — given the player's true hand — which
ranks are its best, two ways:

* ``with discards``: the model's unseen cards are exactly the player's (its own discards
  taken out): the model should then agree every time, ties allowed;
* ``without discards``: as the expert must (it cannot see the opponent's discards).

For each it reports the share of plays where the card laid is the model's best (``tie
allowed``: one of the ranks tied for best; ``lowest``: the model's own single choice, the
lowest tied rank) and, of the misses, the share within ``--near`` holes of the best.
Engine only; progress on stderr, the report (JSON) on stdout. From the repository root::

    python bench/model_fidelity.py --games 60
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.computer import decide  # noqa: E402
from engine.computer.common import rank_of  # noqa: E402
from engine.computer.lookahead import StandardModel  # noqa: E402


def judge(view: dict, card: str, with_discards: bool, near: float, tally: Counter) -> None:
    """Compare ``card`` (what ``standard`` laid from ``view``) with the model's best."""
    seat = view["seat"]
    other = 1 - seat
    hand = tuple(sorted(rank_of(c) for c in view["hand"]))
    pile = tuple(rank_of(e["card"]) for e in view.get("pile") or ())
    count = int(view.get("count") or 0)
    go = view.get("go") or [False, False]
    follows = 0 if go[other] or view["hand_sizes"][other] == 0 else view["hand_sizes"][other]
    unseen = [0] + [4] * 13
    unseen[rank_of(view["starter"])] -= 1
    for e in view.get("played") or ():
        unseen[rank_of(e["card"])] -= 1
    for r in hand:
        unseen[r] -= 1
    if with_discards:
        for c in view.get("my_discards") or ():
            unseen[rank_of(c)] -= 1
    model = StandardModel([max(0, x) for x in unseen])
    values = model.values(hand, pile, count, follows)
    best = max(values.values())
    laid = rank_of(card)
    key = "with discards" if with_discards else "without discards"
    tally[key, "plays"] += 1
    if values[laid] >= best - 1e-9:
        tally[key, "tie allowed"] += 1
    elif values[laid] >= best - near:
        tally[key, "near miss"] += 1
    if model(hand, pile, count, (0,) * follows) == laid:
        tally[key, "lowest"] += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=60)
    parser.add_argument("--near", type=float, default=0.1, help="holes (expert.NEAR_GAP)")
    parser.add_argument("--base", default="fidelity")
    args = parser.parse_args()
    tally: Counter = Counter()
    for g in range(args.games):
        state, _ = engine.new_game(engine.GameOptions(players=2, target=121),
                                   f"{args.base}:{g}")
        while state.phase != "game_over":
            for seat in range(2):
                legal = [a for a in engine.legal_actions(state, seat) if a["type"] != "rematch"]
                if not legal:
                    continue
                view = engine.view(state, seat)
                action = decide(view, legal, "standard")
                if action["type"] == "play" and len({rank_of(a["card"]) for a in legal}) > 1:
                    for with_discards in (True, False):
                        judge(view, action["card"], with_discards, args.near, tally)
                state, _ = engine.apply(state, seat, action)
                break
            else:
                state, _ = engine.apply(state, None, engine.legal_actions(state, None)[0])
        if (g + 1) % 10 == 0:
            print(f"  {g + 1}/{args.games} games", file=sys.stderr, flush=True)
    report = {"games": args.games, "near": args.near}
    for key in ("with discards", "without discards"):
        n = tally[key, "plays"]
        misses = n - tally[key, "tie allowed"]
        report[key] = {
            "plays": n,
            "tie allowed": round(tally[key, "tie allowed"] / n, 4),
            "lowest": round(tally[key, "lowest"] / n, 4),
            "misses within near": round(tally[key, "near miss"] / misses, 4) if misses else None,
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
