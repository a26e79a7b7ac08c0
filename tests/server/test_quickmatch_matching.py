"""The pure matching function of quick match (server.matchmaking.matching): the gap that
widens with the wait, the grouping into tables, blocks, and the seats."""

from __future__ import annotations

import random

from server.matchmaking.matching import GAP_MAX, Waiting, gap, group, match_rating, seat
from server.matchmaking.tables import Table, TableError


def w(player: str, rating: float, joined: float = 0.0) -> Waiting:
    return Waiting(player, rating, joined)


def test_the_gap_widens_with_the_wait_up_to_its_cap() -> None:
    assert gap(0) == 100
    assert gap(10) == 300
    assert gap(20) == 500
    assert gap(35) == GAP_MAX == gap(3600)
    assert gap(-5) == 100
    assert match_rating(None) == 1000
    assert match_rating(27) == 1100


def test_nearest_ratings_sit_together_and_far_ones_wait() -> None:
    now = 0.0
    players = [w("a", 1000), w("b", 1500), w("c", 1050), w("d", 1530)]
    tables = group(players, 2, now)
    assert sorted(sorted(p.player for p in t) for t in tables) == [["a", "c"], ["b", "d"]]
    # 400 apart: not at once, yes after 15 s of waiting (gap 400) for both
    far = [w("a", 1000, 0.0), w("b", 1400, 0.0)]
    assert group(far, 2, 0.0) == []
    assert group(far, 2, 14.0) == []
    assert [p.player for p in group(far, 2, 15.0)[0]] == ["b", "a"]
    # the newcomer's narrow gap protects them: one waited long, the other just came
    assert group([w("a", 1000, 0.0), w("b", 1400, 100.0)], 2, 100.0) == []


def test_every_player_is_at_one_table_at_most() -> None:
    rng = random.Random(7)
    players = [w(f"p{i}", rng.gauss(1000, 200), rng.uniform(0, 30)) for i in range(2000)]
    for size in (2, 3, 4):
        tables = group(players, size, 30.0)
        seated = [p.player for t in tables for p in t]
        assert len(seated) == len(set(seated))
        assert all(len(t) == size for t in tables)
        for t in tables:
            span = max(p.rating for p in t) - min(p.rating for p in t)
            assert all(span <= gap(30.0 - p.joined) for p in t)
        assert len(seated) > 0.9 * len(players)


def test_blocked_players_never_sit_together() -> None:
    blocks = {("a", "b"), ("c", "a")}

    def blocked(x: str, y: str) -> bool:
        return (x, y) in blocks

    players = [w("a", 1000, 0.0), w("b", 1001, 1.0), w("c", 1002, 2.0), w("d", 1003, 3.0)]
    tables = group(players, 2, 5.0, blocked)
    pairs = [{p.player for p in t} for t in tables]
    assert {"a", "b"} not in pairs and {"a", "c"} not in pairs
    assert {"a", "d"} in pairs and {"b", "c"} in pairs
    # a table of 3 where a blocks b: only one of them is seated
    tables = group(players, 3, 5.0, blocked)
    assert len(tables) == 1
    names = {p.player for p in tables[0]}
    assert not ({"a", "b"} <= names or {"a", "c"} <= names)
    # nobody else: the blocked pair waits
    assert group(players[:2], 2, 60.0, blocked) == []


def test_seats_are_deterministic_and_partnerships_even() -> None:
    four = [w("a", 1000), w("b", 1300), w("c", 1100), w("d", 1200)]
    seated = [p.player for p in seat(four, 4)]
    # strongest and weakest partners (seats 0 and 2), the middle two the other side
    assert seated == ["b", "d", "a", "c"]
    assert [p.player for p in seat(list(reversed(four)), 4)] == seated
    assert [p.player for p in seat([w("x", 900), w("y", 1100)], 2)] == ["y", "x"]


def test_tables_and_their_queue_keys() -> None:
    t = Table.from_dict({"players": 4, "partnerships": True, "rated": True})
    assert t.key == "2x2-121-r-m1" and t.kind == "2x2"
    assert Table.from_key(t.key) == t
    u = Table.from_dict({"players": 3, "target": 61, "lowball": True, "muggins": True,
                         "match": 3})
    assert u.key == "3-61-u-m3-gl"
    assert Table.from_key(u.key) == u
    for bad, code in (({"players": 2, "partnerships": True}, "bad_options"),
                      ({"rated": True, "target": 61}, "rated_options"),
                      ({"rated": True, "lowball": True}, "rated_options")):
        try:
            Table.from_dict(bad)
        except TableError as exc:
            assert exc.code == code
        else:
            raise AssertionError(bad)
