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

from typing import Any

import httpx
import pytest
from crib_ui import rejects, sit, table, watch_frames
from test_comfort import axe

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
