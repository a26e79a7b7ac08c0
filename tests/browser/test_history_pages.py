"""A player's page and an archived game's replay (issue 18 points 4 and 5), in Chromium:

* a finished game is archived; its first seat is the player's; ``/p/<player>`` shows the
  statistics and lists the game, whose link opens ``/replay/<game>``;
* that page plays the archived game back and checks every deal in the browser (Web Crypto):
  "every deal verified", in English, Danish and Swedish;
* a tampered seed (the API's answer changed on its way, by Playwright's route) is reported
  as the deal that fails;
* the replay shows each seat's accuracy and the choices that cost points (issue 22 point
  4), the profile the average accuracy;
* a private profile is refused to another browser and shown to its player;
* axe-core finds no serious violation on either page, in any of the three languages.
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
from test_comfort import axe

from server.archive.outbox import game_id
from server.settings import Settings

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static" / "i18n"
CATALOGUES = {lang: json.loads((STATIC / f"{lang}.json").read_text(encoding="utf-8"))
              for lang in ("en", "da", "sv")}
LOCALES = {"en": "en-GB", "da": "da-DK", "sv": "sv-SE"}


@pytest.fixture
def archive_server(tmp_path: Path) -> Any:
    """A server with its SQLite archive in the test's folder."""
    db = tmp_path / "games.sqlite3"
    # (the archive is polled ten times a second until a game is in: no read budget, which
    # has its own test in tests/archive/test_archive_http.py)
    server = LiveServer(Settings(bot_delay_seconds=0, database_url=f"sqlite:///{db}",
                                 game_reads_per_minute=0)).start()
    server.db = db
    yield server
    server.stop()


def _finished_game(server: Any, options: dict) -> str:
    """A game of computers played to its end and archived; its id."""
    seats = {str(s): "expert" for s in range(options["players"])}
    made = httpx.post(f"{server.url}/api/rooms", json={"options": options,
                                                        "computers": seats}).json()
    created = httpx.get(f"{server.url}/api/rooms/{made['room']}").json()["created"]
    gid = game_id(made["room"], created, 1)
    end = time.monotonic() + 60
    while httpx.get(f"{server.url}/api/games/{gid}").status_code != 200:
        assert time.monotonic() < end, "not archived in time"
        time.sleep(0.1)
    # The room's summary names the game it is archived under (the web table's link).
    assert httpx.get(f"{server.url}/api/rooms/{made['room']}").json()["game"] == gid
    return gid


def _give_seat(server: Any, gid: str, seat: int, player: str, name: str) -> None:
    """The seat was the player's (what a seat taken with a player records)."""
    with sqlite3.connect(server.db) as conn:
        conn.execute("UPDATE game_seats SET player_id = ?, kind = 'human', level = NULL, "
                     "name = ? WHERE game_id = ? AND seat = ?", (player, name, gid, seat))


def _player(server: Any, name: str) -> dict:
    return httpx.post(f"{server.url}/api/players", json={"name": name}).json()


def _plural(value: Any, n: int) -> str:
    return value if isinstance(value, str) else value["one" if n == 1 else "other"]


def test_a_players_games_link_to_replays_whose_deals_verify(
        archive_server: Any, new_page: Any, axe_source: str) -> None:
    gid = _finished_game(archive_server, {"players": 2, "target": 61})
    three = _finished_game(archive_server, {"players": 3, "target": 61})
    me = _player(archive_server, "Lars")
    _give_seat(archive_server, gid, 0, me["id"], "Lars")
    _give_seat(archive_server, three, 1, me["id"], "Lars")
    deals = len(httpx.get(f"{archive_server.url}/api/games/{gid}").json()["seeds"]["deals"])
    for lang in ("en", "da", "sv"):
        words = CATALOGUES[lang]
        page = new_page(locale=LOCALES[lang])
        page.goto(f"{archive_server.url}/p/{me['id']}")
        page.wait_for_selector(f"#games tr[data-game='{gid}']")
        assert page.locator("#games tbody tr").count() == 2
        # the possessive by each language's rule (a name ending in s: "Lars'" in Danish,
        # "Lars" in Swedish, not "Larss")
        owner = {"en": "Lars's", "da": "Lars'", "sv": "Lars"}[lang]
        assert words["profile.title"].format(owner=owner) == page.text_content("h1")
        played = page.text_content("#stats-games tr[data-key=played] td")
        assert played.strip() == "2"
        assert page.locator("#stats-per-deal tr[data-key=total] td").count() == 2
        page.wait_for_selector("#stats-accuracy tr[data-key=accuracy]")
        assert page.text_content("#stats-accuracy tr[data-key=accuracy_games] td").strip() == "2"
        axe(page, axe_source, f"/p in {lang}")
        page.click(f"#games tr[data-game='{gid}'] a.replay-link")
        page.wait_for_url(f"**/replay/{gid}")
        page.wait_for_selector("#verdict[data-ok=true]")
        assert page.text_content("#verdict").strip() == _plural(
            words["verify.all_ok"], deals).format(n=deals)
        page.wait_for_selector("#replay-next")
        # The arrow keys step the replay at once, with nothing focused yet.
        assert page.evaluate("document.activeElement === document.body")
        page.keyboard.press("ArrowRight")
        page.wait_for_selector(".replay[data-step='1']")
        page.click("#replay-last")
        assert page.locator(".replay-now").count() == 1
        page.wait_for_selector("#grading[data-state=graded]")
        assert page.locator("#grading-seats tbody tr").count() == 2
        # two expert computers: every choice as good as the grader's
        assert page.get_attribute("#grading-seats tr[data-seat='0']", "data-accuracy") == "100"
        assert page.text_content("#grading-moves").strip() == words["grading.none_costly"]
        axe(page, axe_source, f"/replay/<game> in {lang}")
        page.goto(f"{archive_server.url}/replay/{three}")  # a 3-player deal: the crib's card
        page.wait_for_selector("#verdict[data-ok=true]")


def test_a_tampered_seed_is_reported_as_the_deal_that_fails(
        archive_server: Any, new_page: Any, axe_source: str) -> None:
    gid = _finished_game(archive_server, {"players": 2, "target": 61})
    for lang in ("en", "sv"):
        page = new_page(locale=LOCALES[lang])

        def tamper(route: Any) -> None:
            answer = route.fetch()
            body = answer.json()
            body["seeds"]["deals"][1]["seed"] = "0" * 64
            route.fulfill(response=answer, json=body)

        page.route(f"**/api/games/{gid}", tamper)
        page.goto(f"{archive_server.url}/replay/{gid}")
        page.wait_for_selector("#verdict[data-ok=false]")
        failing = page.locator("#verdict li")
        assert failing.count() == 1
        assert failing.get_attribute("data-reason") == "deal_seed"
        assert failing.get_attribute("data-n") == "2"
        assert failing.text_content() == CATALOGUES[lang]["verify.deal_seed"].format(n=2)
        axe(page, axe_source, f"a failed verdict in {lang}")


def test_the_replay_names_the_choices_that_cost_points(
        archive_server: Any, new_page: Any) -> None:
    gid = _finished_game(archive_server, {"players": 2, "target": 61})
    page = new_page(locale="en-GB")

    def costly(route: Any) -> None:
        answer = route.fetch()
        body = answer.json()
        body["grading"]["moves"].insert(0, {
            "deal": 1, "seat": 0, "by": "player", "kind": "discard", "chosen": ["5H", "5D"],
            "best": ["9C", "KD"], "cost": 2.34, "chosen_value": 5.0, "best_value": 7.34,
            "choices": 15})
        # near the end: a play that gave up a chance to win, its cost that chance in points
        body["grading"]["moves"].insert(1, {
            "deal": 4, "seat": 0, "by": "player", "kind": "play", "chosen": ["TS"],
            "best": ["4D"], "cost": 1.6, "chosen_value": 0.192, "best_value": 0.231,
            "win_cost": 0.0388, "choices": 3})
        route.fulfill(response=answer, json=body)

    page.route(f"**/api/games/{gid}", costly)
    page.goto(f"{archive_server.url}/replay/{gid}")
    page.wait_for_selector("#grading[data-state=graded]")
    line = page.locator("#grading-moves li")
    assert line.count() == 2 and line.first.get_attribute("data-cost") == "2.34"
    # Its moves near the end weigh the chance to win (win_cost): the note says how.
    assert CATALOGUES["en"]["grading.note_end"] in page.text_content(".grading-note")
    who = page.text_content("#grading-seats tr[data-seat='0'] th")
    words = CATALOGUES["en"]
    # The cards in the order a hand shows them, whatever order they were sent in.
    assert line.first.text_content() == words["grading.move_discard"].format(
        deal=1, who=who, chosen="5♦ 5♥", best="9♣ K♦", cost="2.3")
    assert line.nth(1).text_content() == " ".join((
        words["grading.move_play"].format(deal=4, who=who, chosen="10♠", best="4♦", cost="1.6"),
        words["grading.win_cost"].format(win="3.9")))


def test_a_private_profile_is_its_players_only(archive_server: Any, new_page: Any,
                                               browser: Any) -> None:
    me = _player(archive_server, "Kim")
    auth = {"Authorization": f"Player {me['id']}.{me['secret']}"}
    assert httpx.patch(f"{archive_server.url}/api/players/me", json={"private": True},
                       headers=auth).status_code == 200
    # (its own context: the refused read is a console error the new_page fixture refuses)
    context = browser.new_context(locale="da-DK")
    try:
        other = context.new_page()
        other.goto(f"{archive_server.url}/p/{me['id']}")
        other.wait_for_selector(".profile-error[data-code=profile_private]")
        assert other.text_content(".profile-error") == CATALOGUES["da"][
            "profile.error_profile_private"]
    finally:
        context.close()
    mine = new_page()
    mine.goto(f"{archive_server.url}/")
    # the start page makes this browser a player of its own first (POST /api/players):
    # wait for it, so that it does not overwrite the one put here
    mine.wait_for_function("() => localStorage.getItem('cribbage.player') !== null")
    mine.evaluate("(me) => localStorage.setItem('cribbage.player', JSON.stringify(me))",
                  {"id": me["id"], "secret": me["secret"]})
    mine.goto(f"{archive_server.url}/p/{me['id']}")
    mine.wait_for_selector("#stats-games")
    assert mine.text_content("h1") == CATALOGUES["en"]["profile.title"].format(owner="Kim's")


def test_an_address_naming_no_game_or_player_says_so(archive_server: Any, new_page: Any) -> None:
    """``/replay/<id>`` and ``/p/<id>`` with an id that is unknown or not even well formed
    show that page's own "not found" in the page's language, never the start page."""
    for lang in ("da", "sv"):
        words = CATALOGUES[lang]
        page = new_page(locale=LOCALES[lang], allow_console=("status of 404",))
        for path, selector, key in (
                ("/replay/nonexistent", ".replay-error", "verify.error_game_not_found"),
                ("/replay/aaaaaaaaaaaaaaaa", ".replay-error", "verify.error_game_not_found"),
                ("/replay/%C3%A6%20x", ".replay-error", "verify.error_game_not_found"),
                ("/replay/" + "a" * 300, ".replay-error", "verify.error_game_not_found"),
                ("/replay/%3Cb%3Ex%3C%2Fb%3E", ".replay-error", "verify.error_game_not_found"),
                ("/replay/a/b/", ".replay-error", "verify.error_game_not_found"),
                ("/p/n%C3%B8", ".profile-error", "profile.error_player_not_found"),
                ("/p/" + "x" * 80, ".profile-error", "profile.error_player_not_found"),
                ("/p/" + "x" * 300, ".profile-error", "profile.error_player_not_found"),
                ("/p/x%2Fy", ".profile-error", "profile.error_player_not_found"),
                ("/p/", ".profile-error", "profile.error_player_not_found")):
            page.goto(f"{archive_server.url}{path}")
            page.wait_for_selector(selector)
            assert page.text_content(selector) == words[key], path
            assert page.locator("#quick-title").count() == 0, path  # not the start page
        # Past the address's game_reads_per_minute the page says that, not "not found".
        busy = new_page(locale=LOCALES[lang], allow_console=("status of 429",))
        busy.route("**/api/games/bbbbbbbbbbbbbbbb", lambda route: route.fulfill(
            status=429, headers={"Retry-After": "1"},
            json={"error": {"code": "too_many_game_reads", "message": "...",
                            "retry_after": 0.9}}))
        busy.goto(f"{archive_server.url}/replay/bbbbbbbbbbbbbbbb")
        busy.wait_for_selector(".replay-error[data-code=too_many_game_reads]")
        assert busy.text_content(".replay-error") == words["verify.error_too_many_game_reads"]
