""""Play now" on the web (issue 20 point 4): two newcomers in two browser profiles press
"Play now" for the same table and meet at one table; the waiting screen says how many
wait for that table and lets the player cancel, in English, Danish and Swedish; axe-core
finds nothing serious on the start page's panel or the waiting screen."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import LiveServer
from crib_ui import table
from test_comfort import axe

pytestmark = pytest.mark.browser

CATALOGUES = {lang: json.loads(
    (__import__("pathlib").Path(__file__).resolve().parents[2] / "server" / "static" / "i18n"
     / f"{lang}.json").read_text(encoding="utf-8")) for lang in ("en", "da", "sv")}


def waiting_text(lang: str, n: int) -> str:
    forms = CATALOGUES[lang]["quick.waiting_count"]
    return (forms["one"] if n == 1 else forms["other"]).replace("{n}", str(n))


def test_two_newcomers_press_play_now_and_meet_at_one_table(
        live_server: Any, new_page: Any, axe_source: str) -> None:
    ann = new_page()
    bob = new_page(locale="da-DK")
    ann.goto(live_server.url + "/")
    ann.wait_for_selector("[data-key=play-now]")
    axe(ann, axe_source, "start page with Play now")
    ann.fill("#quick-name", "Ann")
    ann.select_option("#quick-table", "3")
    ann.click("[data-key=play-now]")
    ann.wait_for_selector("[data-key=quick-count]")
    ann.wait_for_function(
        "t => document.querySelector('[data-key=quick-count]').textContent === t",
        arg=waiting_text("en", 1))
    axe(ann, axe_source, "waiting screen")
    # Cancel: back to the start page, out of the queue
    ann.click("[data-key=quick-cancel]")
    ann.wait_for_selector("[data-key=play-now]")
    # Bob (Danish) waits for a 2-player table; Ann then asks for the same and they meet
    bob.goto(live_server.url + "/")
    bob.wait_for_selector("[data-key=play-now]")
    assert bob.text_content("[data-key=play-now]") == CATALOGUES["da"]["quick.play"]
    bob.fill("#quick-name", "Bo")
    bob.click("[data-key=play-now]")
    bob.wait_for_function(
        "t => document.querySelector('[data-key=quick-count]')?.textContent === t",
        arg=waiting_text("da", 1))
    ann.select_option("#quick-table", "2")
    ann.click("[data-key=play-now]")
    for page in (ann, bob):
        page.wait_for_url("**/r/*", timeout=15_000)
        page.wait_for_selector("#table[data-conn=open]")
        page.wait_for_selector("#table[data-phase=discard]")
    assert ann.url == bob.url
    seats = {table(ann)["seat"], table(bob)["seat"]}
    assert seats == {"0", "1"}
    axe(bob, axe_source, "the matched table (Danish)")


def test_the_waiting_screen_in_swedish_offers_the_computer(
        live_server_offer: Any, new_page: Any, axe_source: str) -> None:
    page = new_page(locale="sv-SE")
    page.goto(live_server_offer.url + "/")
    page.wait_for_selector("[data-key=play-now]")
    page.fill("#quick-name", "Sam")
    page.click("[data-key=play-now]")
    page.wait_for_selector("[data-key=quick-computer]", timeout=20_000)
    assert page.text_content("[data-key=quick-computer]") == CATALOGUES["sv"]["quick.play_computer"]
    assert page.text_content("[data-key=quick-cancel]") == CATALOGUES["sv"]["quick.cancel"]
    axe(page, axe_source, "waiting screen with the computer offer (Swedish)")
    page.click("[data-key=quick-computer]")
    page.wait_for_url("**/r/*", timeout=20_000)
    page.wait_for_selector("#table[data-phase=discard]")
    assert table(page)["seat"] == "0"


@pytest.fixture
def live_server_offer():
    from server.settings import Settings

    server = LiveServer(Settings(bot_delay_seconds=0, queue_computer_offer_seconds=1.0,
                                 queue_status_interval_seconds=0.5)).start()
    yield server
    server.stop()
