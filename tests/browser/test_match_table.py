"""A best of 3 against the computer on the web table, to its end (issue 19 point 1): the
start page offers the match length, the felt shows the match score between games ("Match,
best of 3: You 1 – Computer 0" and the game points), the lines under the board
say who won the match, the rematch button reads "Next game" during the match and "New
match" after it, in English, Danish and Swedish, and axe-core finds nothing serious.

To keep it quick the person plays no card: the room (made over HTTP, as the start page
makes it) has a 1-second turn clock, so after three moves the computer acted for, a
``standard`` computer stands in for the person to the end of the game (docs/protocol.md,
"Turn clock"); the person only presses "Next game" — which, as any action of theirs, ends
the stand-in — and the next game goes the same way.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import LiveServer
from crib_ui import play_until_game_over, rejects, sit, table, watch_frames
from test_comfort import axe
from test_leaderboard_page import CATALOGUES

from server.settings import Settings

pytestmark = pytest.mark.browser


def last_match(frames: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The match of the last ``match_score`` event the page received."""
    found = None
    for frame in frames:
        for event in frame.get("events") or []:
            if event.get("type") == "match_score":
                found = {k: v for k, v in event.items() if k != "type"}
    return found


def test_the_start_page_offers_the_match_length(live_server: Any, new_page: Any) -> None:
    """The start page's "Match" choice is sent as room setting ``match``."""
    page = new_page()
    sent = watch_frames(page, sent=True)
    page.goto(live_server.url + "/")
    page.wait_for_selector("#match")
    assert page.eval_on_selector_all("#match option", "os => os.map(o => o.value)") == [
        "1", "3", "5", "7"]
    assert page.input_value("#match") == "1"
    page.fill("#your-name", "Ann")
    page.select_option("#seat-1", "standard")
    page.select_option("#match", "5")
    with page.expect_request("**/api/rooms") as request:
        page.click("button[type=submit]")
    assert request.value.post_data_json["room"]["match"] == 5
    page.wait_for_selector("#table[data-phase=discard]")
    page.wait_for_selector("#match-score")
    assert page.inner_text("#match-score").startswith("Match, best of 5: You 0")
    assert not [f for f in sent if f.get("type") == "act"]


def test_a_best_of_3_against_the_computer_to_its_end(live_server: Any, new_page: Any,
                                                      axe_source: str) -> None:
    made = httpx.post(f"{live_server.url}/api/rooms", json={
        "options": {"players": 2, "target": 61}, "computers": {"1": "standard"},
        "room": {"match": 3, "turn_seconds": 1}}, timeout=10).json()
    assert made["room_settings"]["match"] == 3
    page = new_page(bypass_csp=True)  # axe is added as an inline script
    frames = watch_frames(page)
    sit(page, made["url"], "Ann", 0)
    page.wait_for_selector("#match-score")
    assert page.inner_text("#match-score").startswith(
        "Match, best of 3: You 0 – Computer 0")
    games = 0
    while True:
        games += 1
        page.wait_for_selector(f"#table[data-status=game_over][data-game='{games}']",
                               timeout=60_000)
        page.wait_for_selector(f"#match-score[data-games='{games}']")
        match = last_match(frames)
        assert match is not None and len(match["games"]) == games
        wins, points = match["wins"], match["points"]
        score = page.inner_text("#match-score")
        assert score == (f"Match, best of 3: You {wins[0]} – Computer {wins[1]}"
                         f" · Game points: {points[0]}–{points[1]}"), score
        lines = page.eval_on_selector_all(".board-lines li.line-match",
                                          "els => els.map(e => e.textContent)")
        assert lines[:2] == [score.split(" · ")[0], score.split(" · ")[1]], lines
        if match["over"]:
            break
        assert len(lines) == 2
        assert page.inner_text("#rematch") == "Next game"
        page.click("#rematch")
        page.wait_for_selector(f"#table[data-game='{games + 1}'][data-status=playing]")
        assert page.inner_text("#match-score").startswith("Match, best of 3:")
    assert games in (2, 3) and max(wins) == 2
    winner = "You win the match" if wins[0] == 2 else "Computer wins the match"
    assert lines[2] == f"{winner}, 2–{min(wins)}.", lines
    assert page.inner_text("#rematch") == "New match"
    assert axe(page, axe_source, "table, the match over") > 10
    # The same in Danish and in Swedish.
    for lang, best_of, new_match in (("da", "Kamp, bedst af 3", "Ny kamp"),
                                     ("sv", "Match, bäst av 3", "Ny match")):
        page.select_option("#lang", lang)
        page.wait_for_function("l => document.documentElement.lang === l", arg=lang)
        assert page.inner_text("#match-score").startswith(best_of)
        assert page.inner_text("#rematch") == new_match
        over = page.eval_on_selector_all(".board-lines li.line-match",
                                         "els => els.map(e => e.textContent)")
        assert len(over) == 3 and "2–" in over[2]
        axe(page, axe_source, f"table, the match over, {lang}")
    # A new match: match 2, no games yet.
    page.click("#rematch")
    page.wait_for_selector(f"#table[data-game='{games + 1}'][data-status=playing]")
    page.wait_for_selector("#match-score[data-games='0'][data-over=false]")
    assert table(page)["game"] == str(games + 1)
    assert not [r for r in rejects(frames) if r.get("type") == "error"]


@pytest.fixture
def rated_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A server (in this process) with its SQLite archive in the test's folder; one rated
    match is enough to be on a leaderboard here (the board's minimum, ``MIN_GAMES``, is 1
    instead of 10 for this test, set before any rating is written so the counts agree)."""
    from server.ratings import board, counts
    from server.ratings import http as ratings_http
    for module in (board, counts, ratings_http):
        monkeypatch.setattr(module, "MIN_GAMES", 1)
    db = tmp_path / "games.sqlite3"
    server = LiveServer(Settings(bot_delay_seconds=0, database_url=f"sqlite:///{db}")).start()
    server.db = db
    yield server
    server.stop()


def _digits(text: str) -> int:
    return int("".join(c for c in text if c.isdigit()))


def test_a_rated_best_of_3_rates_the_player_and_puts_them_on_the_board(
        rated_server: Any, new_page: Any, axe_source: str) -> None:
    """A rated best of 3 against the computer, made on the start page ("Rated game") and
    played by the person to the match's end (game to 121, turn clock on, so nobody stands
    in and no seat is abandoned); the archive rates the match once: the profile /p/<id>
    and /leaderboard?kind=2 show the new rating, in English, Danish and Swedish,
    axe-clean."""
    page = new_page(bypass_csp=True)  # axe is added as an inline script
    frames = watch_frames(page)
    page.goto(rated_server.url + "/")
    page.wait_for_selector("input[name=rated]")
    page.wait_for_function("() => localStorage.getItem('cribbage.player')")
    me = json.loads(page.evaluate("() => localStorage.getItem('cribbage.player')"))["id"]
    page.fill("#your-name", "Ann")
    page.select_option("#seat-1", "standard")
    page.check("input[name=rated]")
    page.select_option("#match", "3")
    with page.expect_request("**/api/rooms") as request:
        page.click("button[type=submit]")
    sent = request.value.post_data_json
    assert sent["room"]["rated"] is True and sent["room"]["match"] == 3
    assert sent["options"]["target"] == 121
    page.wait_for_selector("#match-score")
    games = 0
    while True:
        games += 1
        play_until_game_over([page], timeout=120)
        page.wait_for_selector(f"#match-score[data-games='{games}']")
        match = last_match(frames)
        assert match is not None
        if match["over"]:
            break
        page.click("#rematch")
        page.wait_for_selector(f"#table[data-game='{games + 1}'][data-status=playing]")
    wins = match["wins"]
    assert games in (2, 3) and max(wins) == 2
    assert not any(e.get("type") == "seat_abandoned" for f in frames
                   for e in f.get("events") or [])
    # The archive rates the match once (in the commit that archives it).
    rating = None
    for _ in range(200):
        with sqlite3.connect(rated_server.db) as conn:
            rows = conn.execute("SELECT display, games FROM ratings WHERE player_id = ? "
                                "AND table_kind = '2'", (me,)).fetchall()
            changes = conn.execute("SELECT source FROM rating_history WHERE player_id = ?",
                                   (me,)).fetchall()
        if rows:
            rating = rows[0]
            break
        time.sleep(0.05)
    assert rating is not None, "the match was not rated"
    display, rated_games = rating
    assert rated_games == 1 and changes == [("match",)], (rating, changes)
    for lang in ("en", "da", "sv"):
        words = CATALOGUES[lang]
        page.goto(f"{rated_server.url}/p/{me}")
        page.wait_for_selector("#lang")
        if lang != "en":
            page.select_option("#lang", lang)
            page.wait_for_function("l => document.documentElement.lang === l", arg=lang)
        page.wait_for_selector("#ratings tbody tr[data-kind='2']")
        row = page.locator("#ratings tbody tr[data-kind='2'] td")
        assert _digits(row.nth(0).text_content()) == display
        assert words["ratings.provisional"] in row.nth(0).text_content()
        assert _digits(row.nth(1).text_content()) == 1
        assert page.locator("#rating-history tbody tr").count() == 1
        axe(page, axe_source, f"/p after a rated match, {lang}")
        page.goto(f"{rated_server.url}/leaderboard?kind=2")
        page.wait_for_selector("#board-top tbody tr")
        assert page.text_content("h1") == words["board.page_title"]
        mine = page.locator(f"#board-top tr[data-player='{me}'] td")
        assert _digits(mine.nth(0).text_content()) == 1  # the only rated player: first
        assert _digits(mine.nth(2).text_content()) == display
        assert page.get_attribute("#board-around tr[aria-current=true]",
                                  "data-player") == me
        axe(page, axe_source, f"/leaderboard after a rated match, {lang}")
    assert not [r for r in rejects(frames) if r.get("type") == "error"]
