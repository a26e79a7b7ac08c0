"""The leaderboard page (/leaderboard) and the ratings on a player's page (/p/<id>), in
Chromium, in English, Danish and Swedish, axe-core clean (issue 19 point 3):

* the top bar links to the leaderboard; the top 100 of the 2-player board lists the rated
  players in order, a private one without a name; this browser's player sees their place
  and neighbours ("around me"); another table kind says nobody is on it yet;
* the player's page shows their rating per table kind (provisional marked), the changes
  and the rated games they abandoned.

The ratings are written to the server's SQLite database directly (the rows the archive's
rating update writes: server.ratings.update; the update itself is tested in
tests/archive/test_ratings.py).
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer
from test_comfort import axe

from server.ratings.counts import MIN_GAMES
from server.ratings.model import display
from server.settings import Settings

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static" / "i18n"
CATALOGUES = {lang: json.loads((STATIC / f"{lang}.json").read_text(encoding="utf-8"))
              for lang in ("en", "da", "sv")}
LOCALES = {"en": "en-GB", "da": "da-DK", "sv": "sv-SE"}


@pytest.fixture
def board_server(tmp_path: Path) -> Any:
    db = tmp_path / "games.sqlite3"
    server = LiveServer(Settings(bot_delay_seconds=0, database_url=f"sqlite:///{db}",
                                 rating_provisional_games=12)).start()
    server.db = db
    yield server
    server.stop()


def _rate(db: Path, me: str) -> list[str]:
    """Twelve rated players at 2 (the browser's own among them, 8th by rating), one of them
    private; the browser's player has two changes, one of them an abandoned game."""
    now = datetime.now(UTC).isoformat(sep=" ")
    others = [f"p{'abcdefghijkl'[i]}" + "q" * 15 for i in range(11)]
    with sqlite3.connect(db) as conn:
        for i, pid in enumerate(others):
            conn.execute("INSERT INTO players (id, created_at, name, language, private) "
                         "VALUES (?, ?, ?, 'en', ?)", (pid, now, f"Rival {i}", i == 2))
        board = [(pid, 30.0 - i, 2.0) for i, pid in enumerate(others[:7])]
        board += [(me, 22.5, 2.0)] + [(pid, 21.0 - i, 2.0) for i, pid in enumerate(others[7:])]
        for pid, mu, sigma in board:
            conn.execute("INSERT INTO ratings (player_id, table_kind, mu, sigma, display, "
                         "games, wins, updated_at) VALUES (?, '2', ?, ?, ?, 20, 9, ?)",
                         (pid, mu, sigma, display(mu, sigma), now))
        # on the board (MIN_GAMES, 10) and still provisional (12)
        conn.execute("UPDATE ratings SET games = 11 WHERE player_id = ?", (me,))
        # and one game at 3: a rating, not on that board yet
        conn.execute("INSERT INTO ratings (player_id, table_kind, mu, sigma, display, "
                     "games, wins, updated_at) VALUES (?, '3', 27, 7, ?, 1, 1, ?)",
                     (me, display(27, 7), now))
        # the boards' counts per shown number, as the rating update keeps them
        conn.execute("DELETE FROM rating_board_counts")
        conn.execute("INSERT INTO rating_board_counts (table_kind, display, players) "
                     "SELECT table_kind, display, count(*) FROM ratings WHERE games >= ? "
                     "GROUP BY table_kind, display", (MIN_GAMES,))
        for n, (before, after, abandoned) in enumerate(((1000, 1400, False),
                                                        (1400, 1575, True))):
            conn.execute(
                "INSERT INTO rating_history (player_id, table_kind, source_id, source, "
                "game_id, rank, teams, abandoned, mu_before, sigma_before, display_before, "
                "mu, sigma, display, games, at) VALUES (?, '2', ?, 'game', ?, ?, 2, ?, 25, "
                "8, ?, 22, 2, ?, ?, ?)",
                (me, f"g{n}" + "a" * 14, f"g{n}" + "a" * 14, 2 if abandoned else 1,
                 abandoned, before, after, n + 4, now))
    return [pid for pid, _, _ in board]


def test_the_leaderboard_and_the_ratings_on_a_profile(
        board_server: Any, new_page: Any, axe_source: str) -> None:
    order = None
    for lang in ("en", "da", "sv"):
        words = CATALOGUES[lang]
        page = new_page(locale=LOCALES[lang])
        page.goto(f"{board_server.url}/")
        page.wait_for_selector("a.board-link")
        stored = None
        for _ in range(100):  # the page makes its player on the first visit
            stored = page.evaluate("() => localStorage.getItem('cribbage.player')")
            if stored:
                break
            page.wait_for_timeout(50)
        me = json.loads(stored)["id"]
        order = _rate(board_server.db, me) if order is None else order
        if me not in order:  # each language's browser is a player of its own: rate it too
            with sqlite3.connect(board_server.db) as conn:
                conn.execute("UPDATE ratings SET player_id = ? WHERE player_id = ?",
                             (me, order[7]))
                conn.execute("UPDATE rating_history SET player_id = ? WHERE player_id = ?",
                             (me, order[7]))
            order[7] = me
        page.click("a.board-link")
        page.wait_for_url("**/leaderboard")
        page.wait_for_selector("#board-top tbody tr")
        assert page.text_content("h1") == words["board.page_title"]
        rows = page.locator("#board-top tbody tr")
        assert rows.count() == 12
        assert [rows.nth(i).get_attribute("data-player") for i in range(12)] == order
        private = page.locator(f"#board-top tr[data-player='{order[2]}'] td").nth(1)
        assert private.text_content() == words["board.private_player"]
        assert page.locator(f"#board-top tr[data-player='{order[2]}'] a").count() == 0
        mine = page.locator("#board-around tr[aria-current=true]")
        assert mine.get_attribute("data-player") == me and mine.get_attribute("data-rank") == "8"
        assert page.locator("#board-around tbody tr").count() == 10  # 5 above, the 4 below
        axe(page, axe_source, f"/leaderboard in {lang}")
        page.click("button[data-kind='3']")
        page.wait_for_selector("#board-empty")
        assert page.locator("#board-off").count() == 1  # my rating there, not ranked yet
        assert words["board.yours_off"].split("{")[0] in page.text_content("#board-off")
        assert "kind=3" in page.url
        page.goto(f"{board_server.url}/p/{me}")
        page.wait_for_selector("#ratings tbody tr[data-kind='2']")
        row = page.locator("#ratings tbody tr[data-kind='2']")
        assert row.get_attribute("data-provisional") == "true"
        assert words["ratings.provisional"] in row.text_content()
        assert page.locator("#rating-history tbody tr").count() == 2
        # the count is of archived seats marked abandoned (none archived here; counted in
        # tests/archive/test_ratings_http.py); the change shows the abandoned game
        assert page.text_content("#ratings-abandoned").strip() == words[
            "ratings.abandoned"].format(n=0)
        assert words["ratings.abandoned_place"] in page.text_content("#rating-history")
        axe(page, axe_source, f"/p ratings in {lang}")
