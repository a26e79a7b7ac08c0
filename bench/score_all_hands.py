"""Score every (four-card hand, starter) pair through ``engine.scoring.score_hand``.

There are 52 starters x C(51, 4) = 249,900 hands each = 12,994,800 pairs. The script runs the
same enumeration loop twice in one process — once bare (no scoring, only the loop and a tally
increment) and once calling :func:`engine.scoring.score_hand` and reading ``.total`` — then
prints the distribution of counts (0..29), both times and their ratio. Progress goes to
stderr, one update per starter.

Usage (from the repository root)::

    python bench/score_all_hands.py           # count as hands
    python bench/score_all_hands.py --crib    # count as cribs

Results and the machine they were measured on: docs/performance.md, "Scoring every hand".
"""

from __future__ import annotations

import argparse
import sys
import time
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.cards import FULL_DECK  # noqa: E402
from engine.scoring import score_hand  # noqa: E402

TOTAL_PAIRS = 12_994_800
"""52 starters x C(51, 4) hands."""


def _progress(label: str, done: int, started: float) -> None:
    """Overwrite one stderr line with ``label``'s progress (``done`` of 52 starters)."""
    elapsed = time.perf_counter() - started
    sys.stderr.write(f"\r{label}: {done:2d}/52 starters ({done * 100 // 52:3d}%) {elapsed:6.1f} s")
    if done == 52:
        sys.stderr.write("\n")
    sys.stderr.flush()


def bare_loop() -> tuple[list[int], float, float]:
    """The enumeration without scoring: every pair visited, a constant tallied.

    Returns:
        ``(tally, wall, cpu)``: ``tally[0]`` is the number of pairs visited (12,994,800);
        ``wall`` and ``cpu`` are the loop's wall-clock and process CPU time in seconds.
    """
    tally = [0] * 30
    cpu_started = time.process_time()
    started = time.perf_counter()
    # Kept line for line the same as scoring_loop, unused names included.
    for i, starter in enumerate(FULL_DECK):  # noqa: B007
        others = FULL_DECK[:i] + FULL_DECK[i + 1 :]
        for hand in combinations(others, 4):  # noqa: B007
            tally[0] += 1
        _progress("bare loop", i + 1, started)
    return tally, time.perf_counter() - started, time.process_time() - cpu_started


def scoring_loop(crib: bool = False) -> tuple[list[int], float, float]:
    """The same enumeration, scoring each pair with ``score_hand(hand, starter, crib=crib)``.

    Args:
        crib: count every hand as a crib.

    Returns:
        ``(tally, wall, cpu)``: ``tally[n]`` is how many pairs count ``n`` holes (0..29);
        ``wall`` and ``cpu`` are the loop's wall-clock and process CPU time in seconds.
    """
    tally = [0] * 30
    cpu_started = time.process_time()
    started = time.perf_counter()
    for i, starter in enumerate(FULL_DECK):
        others = FULL_DECK[:i] + FULL_DECK[i + 1 :]
        for hand in combinations(others, 4):
            tally[score_hand(hand, starter, crib=crib).total] += 1
        _progress("score_hand", i + 1, started)
    return tally, time.perf_counter() - started, time.process_time() - cpu_started


def main(argv: list[str] | None = None) -> int:
    """Run both loops and print the distribution, the times and the ratio; 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crib", action="store_true", help="count every hand as a crib")
    args = parser.parse_args(argv)

    bare, bare_wall, bare_cpu = bare_loop()
    tally, score_wall, score_cpu = scoring_loop(crib=args.crib)
    if bare[0] != TOTAL_PAIRS or sum(tally) != TOTAL_PAIRS:
        print(f"error: visited {bare[0]:,} / {sum(tally):,} pairs, not {TOTAL_PAIRS:,}")
        return 1

    print(f"Distribution of {'crib' if args.crib else 'hand'} counts over {TOTAL_PAIRS:,} pairs:")
    print(f"{'count':>5}  {'pairs':>10}  {'share':>8}")
    for points, n in enumerate(tally):
        print(f"{points:5d}  {n:10,d}  {n / TOTAL_PAIRS:8.4%}")
    print(f"total  {sum(tally):10,d}")
    print()
    print(f"{'':12}{'wall s':>8}{'cpu s':>8}{'cpu ns/pair':>13}")
    for label, wall, cpu in (
        ("bare loop", bare_wall, bare_cpu),
        ("score_hand", score_wall, score_cpu),
    ):
        print(f"{label:12}{wall:8.2f}{cpu:8.2f}{cpu / TOTAL_PAIRS * 1e9:13.0f}")
    ratio_wall, ratio_cpu = score_wall / bare_wall, score_cpu / bare_cpu
    print(f"{'ratio':12}{ratio_wall:8.2f}{ratio_cpu:8.2f}  (score_hand / bare loop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
