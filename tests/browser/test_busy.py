"""The web table when the server refuses moves for now (admission control,
docs/protocol.md "Limits"): while the JavaScript client sends a refused move again, the
player is told so; when it gives up, the message says the table is busy, not that the move
broke a rule; nothing was applied."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import LiveServer
from crib_ui import create_table, hand, table, watch_frames

from server.settings import Settings


@pytest.fixture
def shut_server() -> Iterator[LiveServer]:
    """A server whose admission gate never opens for a client's move: a probe timer is
    always later than 10 µs (the turn clock and computers are never refused). On asyncio's
    own loop, whose clock is exact (it woke 100 to 450 µs late here): uvloop's clock counts
    whole milliseconds, so a probe on time there reads 0 late, and ten of them in a row
    opened the gate (the move was then accepted: 2 runs in 8 failed so)."""
    server = LiveServer(Settings(bot_delay_seconds=0, overload_lag_seconds=0.00001),
                        loop="asyncio").start()
    yield server
    server.stop()


def test_a_refused_move_says_busy_not_forbidden(shut_server: Any, new_page: Any) -> None:
    me = new_page()
    frames = watch_frames(me)
    create_table(me, shut_server.url, "Pat", seats={1: "standard"})
    me.wait_for_selector("#table[data-phase=discard]")
    cards = hand(me)
    for card in cards[:2]:
        me.click(f".hand button.card[data-card='{card}']")
    started = time.monotonic()
    me.click("#send-crib")
    # While the library sends the move again, the player sees why nothing happens.
    me.wait_for_selector(".message.info:has-text('sending your move again')", timeout=5000)
    # After its retries (about 12 s with backoff), the library hands the refusal over.
    me.wait_for_selector(".message.error", timeout=30_000)
    text = me.inner_text(".message.error")
    assert "busy" in text and "Not allowed" not in text, text
    busy = [f for f in frames if f.get("type") == "reject"]
    assert len(busy) == 7 and all(f["code"] == "busy" and f["retry_after"] == 0.5
                                  for f in busy), busy
    assert len({f["action_id"] for f in busy}) == 1  # one move, sent again with its id
    assert time.monotonic() - started >= 6 * 0.5  # never sooner than retry_after
    assert hand(me) == cards  # nothing applied: both cards are still in the hand
    assert table(me)["phase"] == "discard"
