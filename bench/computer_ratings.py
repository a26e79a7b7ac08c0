"""Calibrate the computer levels' fixed ratings (issue 19 point 2) by games between them.

Plays ``--games`` games per table kind between the engine's own computer players
(``engine.computer.decide``; no server, no pauses): 2 players (easy against standard), 3
and 4 playing alone (the seats' levels mixed: every game has at least one of each), and
partnerships (an easy pair against a standard pair), standard rules to 121, each game from
a seed of its own. The seats are rotated so that no level always deals first.

From each kind's results it fits the level gap the library's own model predicts, pair by
pair: every easy side against every standard side of a game, easy ahead when it finished
higher (the winner first, then by score: the ranks the rating update uses). With the
``standard`` level held at the library's default mean (``mu`` = 25), the ``easy`` level's
``mu`` is the value for which openskill's 2-team ``predict_win`` summed over the pairs
equals the pairs easy was ahead in (bisection; half a pair if none; both levels with the
fixed ``sigma`` of ``server.ratings.model.COMPUTER_SIGMA``). The figures and the fitted
values are printed as JSON; the values in ``server/ratings/computers.py`` and
docs/performance.md "Ratings" come from a run of this script. From the repository root::

    python bench/computer_ratings.py --games 300
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import engine  # noqa: E402
from engine.computer import decide  # noqa: E402
from server.ratings.model import COMPUTER_SIGMA, MODEL, STANDARD_MU, display  # noqa: E402

KINDS = {"2": (2, False), "3": (3, False), "4": (4, False), "2x2": (4, True)}


def _levels(kind: str, game: int) -> list[str]:
    """The seats' levels of game ``game`` of ``kind``, rotated so each level sits
    everywhere."""
    players, partnerships = KINDS[kind]
    if partnerships:
        base = ["easy", "standard", "easy", "standard"]
    elif players == 2:
        base = ["easy", "standard"]
    else:  # alone: 1..n-1 easy seats, the rest standard
        easy = 1 + game % (players - 1)
        base = ["easy"] * easy + ["standard"] * (players - easy)
    shift = game % players
    return base[shift:] + base[:shift]


def play(kind: str, levels: list[str], seed: str) -> dict[str, Any]:
    """One game to its end between computer seats of ``levels``; its ``game_over``."""
    players, partnerships = KINDS[kind]
    options = engine.GameOptions(players=players, partnerships=partnerships, target=121)
    state, _ = engine.new_game(options, seed)
    steps = 0
    while state.phase != "game_over":
        steps += 1
        assert steps < 10_000, "a game that does not end"
        moved = False
        for seat in range(players):
            legal = engine.legal_actions(state, seat)
            if not legal:
                continue
            action = decide(engine.view(state, seat), legal, levels[seat], seed=f"{seed}:{seat}")
            if action is None:
                continue
            state, _ = engine.apply(state, seat, action)
            moved = True
            break
        if not moved:
            legal = engine.legal_actions(state, None)
            assert legal, f"nobody can move in {state.phase}"
            state, _ = engine.apply(state, None, legal[0])
    return dict(state.result)


def _sides(kind: str) -> list[list[int]]:
    players, partnerships = KINDS[kind]
    return [[0, 2], [1, 3]] if partnerships else [[s] for s in range(players)]


def pairs(kind: str, levels: list[str], result: dict[str, Any]) -> list[tuple[int, bool]]:
    """Every (easy side, standard side) pair of a game: ``(easy seats of the easy side,
    whether it finished ahead)`` — the winner first, then by final score (the ranks the
    rating update uses, ``server.ratings.ranks``)."""
    sides = _sides(kind)
    key = [(side != result["winner"], -result["scores"][side]) for side in range(len(sides))]
    easy = [i for i, seats in enumerate(sides) if levels[seats[0]] == "easy"]
    standard = [i for i, seats in enumerate(sides) if levels[seats[0]] == "standard"]
    return [(len(sides[e]), key[e] < key[s]) for e in easy for s in standard]


def fit(kind: str, found: list[tuple[int, bool]]) -> float:
    """The easy level's mu for which openskill's ``predict_win`` of an easy side against a
    standard side, summed over the pairs, equals the pairs easy finished ahead in."""
    ahead = max(sum(1 for _, won in found if won), 0.5)  # none: half, so it stays finite
    members = found[0][0] if found else 1

    def expected(mu: float) -> float:
        easy = [MODEL.rating(mu=mu, sigma=COMPUTER_SIGMA) for _ in range(members)]
        standard = [MODEL.rating(mu=STANDARD_MU, sigma=COMPUTER_SIGMA)
                    for _ in range(members)]
        return MODEL.predict_win([easy, standard])[0] * len(found)

    low, high = STANDARD_MU - 100.0, STANDARD_MU + 10.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if expected(mid) < ahead else (low, mid)
    return round((low + high) / 2, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300, help="games per table kind")
    parser.add_argument("--kinds", default="2,3,4,2x2")
    args = parser.parse_args()
    report: dict[str, Any] = {"games_per_kind": args.games, "standard_mu": STANDARD_MU,
                              "sigma": COMPUTER_SIGMA, "kinds": {}}
    for kind in args.kinds.split(","):
        started = time.perf_counter()
        players, partnerships = KINDS[kind]
        found: list[tuple[int, bool]] = []
        easy_wins = 0
        for n in range(args.games):
            levels = _levels(kind, n)
            result = play(kind, levels, f"calibrate-{kind}-{n}")
            found += pairs(kind, levels, result)
            easy_wins += levels[_sides(kind)[result["winner"]][0]] == "easy"
        mu = fit(kind, found)
        report["kinds"][kind] = {
            "games": args.games, "easy_wins": easy_wins, "pairs": len(found),
            "easy_ahead": sum(1 for _, won in found if won), "easy_mu": mu,
            "easy_display": display(mu, COMPUTER_SIGMA),
            "standard_display": display(STANDARD_MU, COMPUTER_SIGMA),
            "seconds": round(time.perf_counter() - started, 1),
        }
        print(json.dumps({kind: report["kinds"][kind]}), flush=True)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
