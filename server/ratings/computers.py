"""The computer levels' fixed means per table kind (data; ``server.ratings.model``).

From ``python bench/computer_ratings.py --games 300`` (docs/performance.md "Ratings"): the
``standard`` level is the anchor (mu 25); the ``easy`` level's mean is the one for which
openskill's ``predict_win`` expects as many easy sides ahead of standard sides as the 400
calibration games per table kind gave. In partnerships the value is each member's (a
side's mean is the sum of its two).
"""

COMPUTER_MU: dict[str, dict[str, float]] = {
    "2": {"easy": 10.26, "standard": 25.0},  # easy won 3 of 400
    "3": {"easy": 16.17, "standard": 25.0},  # easy ahead of standard in 58 of 800 pairs
    "4": {"easy": 15.5, "standard": 25.0},  # 78 of 1333 pairs
    "2x2": {"easy": 18.61, "standard": 25.0},  # an easy pair won 8 of 400
}
