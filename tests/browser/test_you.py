"""The player of the web table, as a newcomer meets it (issue 18 points 1, 2 and 6): the
first visit makes a player (kept in ``localStorage["cribbage.player"]``) and plays a game
against the computer as it; the "You" page, reached from the table, links "My games" to
``/p/<id>`` and shows a one-time code; a second browser profile opens the code's link,
says yes to "Use this device as <name>?" and is the same player; a name changed on one
shows on the other; Danish and Swedish pages say it in their words on a 390 px phone;
deleting the player forgets it and the next visit is a new player. axe-core finds nothing
serious on the pages."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest
from crib_ui import create_table, play_until_game_over
from test_comfort import axe

pytestmark = pytest.mark.browser


def kept_player(page: Any) -> dict[str, str]:
    """The player the page's browser keeps (waits until there is one)."""
    page.wait_for_function("() => localStorage.getItem('cribbage.player') !== null")
    player = json.loads(page.evaluate("localStorage.getItem('cribbage.player')"))
    assert set(player) == {"id", "secret"}
    return player


def test_a_newcomer_plays_and_takes_the_player_to_another_device(
        live_server: Any, new_page: Any, axe_source: str) -> None:
    base = live_server.url
    anna = new_page()
    anna.goto(base + "/")
    me = kept_player(anna)
    assert re.fullmatch(r"[a-z2-7]{16}", me["id"])

    # a game against the computer, to its end, as this player
    create_table(anna, base, "Anna", target="61", seats={1: "standard"})
    play_until_game_over([anna], timeout=60)

    # "You", from the table (and back to it)
    table_path = anna.evaluate("location.pathname")
    anna.click("[data-key=you-link]")
    anna.wait_for_url("**/you?from=**")
    assert anna.get_attribute("[data-key=back-to-table]", "href") == table_path
    assert anna.get_attribute("[data-key=my-games]", "href") == f"/p/{me['id']}"
    assert anna.input_value("#you-name") == "Anna"  # the name typed on the start page
    assert anna.get_attribute("[data-key=you-who]", "data-player") == me["id"]

    anna.click("[data-key=make-code]")
    code = anna.inner_text("[data-key=link-code]")
    assert re.fullmatch(r"[2-9A-Z]{4}-[2-9A-Z]{4}", code), code
    url = anna.get_attribute("[data-key=link-url]", "href")
    assert url == f"{base}/link/{code}"
    axe(anna, axe_source, "the You page with a code")

    # a second browser profile (its own, empty storage) opens the code's link
    other = new_page()
    other.goto(url)
    other.get_by_text("Use this device as Anna?").wait_for()
    axe(other, axe_source, "the code's link")
    other.click("[data-key=link-yes]")
    other.wait_for_url("**/you")
    assert kept_player(other)["id"] == me["id"]
    other.fill("#you-name", "Anna B")
    other.click("[data-key=you-name-save]")
    other.locator("[data-key=you-name-status]").filter(has_text="Saved").wait_for()

    anna.reload()
    anna.wait_for_selector("#you-name")
    assert anna.input_value("#you-name") == "Anna B"
    assert kept_player(anna) == me  # this device keeps its own credential

    # the language switch is the player's language too
    anna.select_option("#lang", "sv")
    anna.get_by_role("button", name="Skapa en kod").wait_for(state="attached")
    auth = {"Authorization": f"Player {me['id']}.{me['secret']}"}
    end = time.monotonic() + 10
    while httpx.get(f"{base}/api/players/me", headers=auth).json()["language"] != "sv":
        assert time.monotonic() < end, "the language did not reach the player"
        time.sleep(0.05)


@pytest.mark.parametrize("locale,words", [
    ("da-DK", ["Dig", "Brug på en anden enhed", "Lav en kode", "Hent mine data",
               "Slet min spiller"]),
    ("sv-SE", ["Du", "Använd på en annan enhet", "Skapa en kod", "Ladda ner mina data",
               "Radera min spelare"]),
])
def test_the_you_page_in_danish_and_swedish_on_a_phone(
        live_server: Any, new_page: Any, axe_source: str, locale: str, words: list[str]) -> None:
    page = new_page(phone=True, locale=locale)
    page.goto(live_server.url + "/you")
    page.wait_for_selector("#you-name")
    first = kept_player(page)
    text = page.text_content("main") or ""
    for word in words:
        assert word in text, (word, text)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.click("[data-key=make-code]")
    page.wait_for_selector("[data-key=link-code]")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    axe(page, axe_source, f"the You page ({locale}, phone)")

    # delete the player: asked first, then forgotten; the next visit is a new player
    page.click("[data-key=delete-player]")
    page.click("[data-key=delete-yes]")
    page.wait_for_selector("[data-key=deleted]")
    assert page.evaluate("localStorage.getItem('cribbage.player')") is None
    page.goto(live_server.url + "/you")
    page.wait_for_selector("#you-name")
    assert kept_player(page)["id"] != first["id"]
