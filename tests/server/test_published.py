"""``PublishedMessages``: a process's own update messages, recognised by their exact text."""

from __future__ import annotations

from server.broker import PublishedMessages


def test_noted_only_for_followed_rooms_and_taken_once() -> None:
    followed = {"room-a"}
    published = PublishedMessages(followed.__contains__, limit=3)
    assert published.add("room-a", '{"t":"u","v":1}', {"v": 1})
    assert not published.add("room-b", '{"t":"u","v":1,"x":0}', {"v": 1})
    assert published.take('{"t":"u","v":1,"x":0}') is None
    assert published.take('{"t":"u","v":1} ') is None  # not byte for byte the same
    assert published.take('{"t":"u","v":1}') == {"v": 1}
    assert published.take('{"t":"u","v":1}') is None


def test_discarded_and_oldest_forgotten() -> None:
    published = PublishedMessages(lambda room: True, limit=2)
    for v in range(4):
        published.add("r", f"m{v}", {"v": v})
    assert published.take("m0") is None and published.take("m1") is None
    published.discard("m2")
    assert published.take("m2") is None
    assert published.take("m3") == {"v": 3}
