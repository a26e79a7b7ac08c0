"""A player's seat is theirs from any device (README; docs/protocol.md ``your_seat``):
a player sits at a rated table in one browser, closes it, and opens the room's link in
another browser that knows only the same player (``localStorage["cribbage.player"]``, no
seat token): the page takes the seat back instead of offering to watch — which, in a rated
game, would leave the seat to be abandoned and lost."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import LiveServer
from crib_ui import table

from server.settings import Settings

pytestmark = pytest.mark.browser


def test_a_player_takes_their_seat_back_on_another_device(tmp_path: Path, browser: Any,
                                                          new_page: Any) -> None:
    server = LiveServer(Settings(bot_delay_seconds=0,
                                 database_url=f"sqlite:///{tmp_path / 'seat.sqlite3'}")).start()
    try:
        gry = httpx.post(f"{server.url}/api/players", json={"name": "Gry"}).json()
        made = httpx.post(f"{server.url}/api/rooms", json={
            "options": {"players": 2}, "computers": {"1": "standard"},
            "room": {"rated": True}}).json()
        link = f"{server.url}/r/{made['room']}"
        keep = "(p) => localStorage.setItem('cribbage.player', JSON.stringify(p))"
        player = {"id": gry["id"], "secret": gry["secret"]}

        first = new_page()
        first.goto(f"{server.url}/")
        first.wait_for_function("() => localStorage.getItem('cribbage.player') !== null")
        first.evaluate(keep, player)
        first.goto(link)
        first.fill("#lobby-name", "Gry")
        first.click("button[data-seat='0']")
        first.wait_for_selector("#table[data-conn=open][data-seat='0']")
        summary = f"{server.url}/api/rooms/{made['room']}"
        auth = {"Authorization": f"Player {gry['id']}.{gry['secret']}"}
        assert httpx.get(summary, headers=auth).json()["your_seat"] == 0
        assert httpx.get(summary).json()["your_seat"] is None  # nobody's seat is told
        other_player = httpx.post(f"{server.url}/api/players", json={"name": "Ib"}).json()
        assert httpx.get(summary, headers={
            "Authorization": f"Player {other_player['id']}.{other_player['secret']}"}
        ).json()["your_seat"] is None
        assert httpx.get(summary, headers={"Authorization": "Player x.y"}).json()[
            "your_seat"] is None  # a wrong credential is ignored here
        first.context.close()

        other = new_page(locale="da-DK")  # another device: the player, no seat token
        other.goto(f"{server.url}/")
        other.wait_for_function("() => localStorage.getItem('cribbage.player') !== null")
        other.evaluate(keep, player)
        other.goto(link)
        other.wait_for_selector("#table[data-conn=open][data-seat='0']")
        assert table(other)["seat"] == "0"
        assert other.locator(".hand .card").count() in (5, 6)  # Gry's own cards, the deal's
        other.context.close()  # before the server stops (its socket would retry)
    finally:
        server.stop()
