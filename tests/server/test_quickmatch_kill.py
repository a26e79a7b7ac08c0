"""2,000 simulated players queue for mixed tables across two server processes on Redis,
and one process is killed with -9 mid-way (issue 20, "Tests and figures"): the players it
held connect to the other process; the matched rejoin their rooms there and find their
game going; the waiting queue again there and are matched by it (a match already recorded
for one of them is given to them, never a second). Every player is matched exactly once,
nobody is in two rooms, every room is complete."""

from __future__ import annotations

from pathlib import Path

from test_quickmatch_crowd import test_2000_players_are_each_matched_once as crowd_test


async def test_2000_players_are_each_matched_once_with_a_process_killed(
        redis_prefix: str, tmp_path: Path) -> None:
    await crowd_test(redis_prefix, tmp_path, kill=True)
