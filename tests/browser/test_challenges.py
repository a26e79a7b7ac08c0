"""Challenges and blocks on the web table (issue 20 point 3), two browser profiles: Anna
opens Bo's page, sees him online now and challenges him to a game to 61; Bo, on the start
page, gets the banner at once and accepts; both pages go to the same table and the game
starts. Then Bo blocks Anna on her page: her next challenge is refused, and she cannot sit
at Bo's table (she may watch). The pages are axe-clean, in English and in Danish."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from conftest import LiveServer
from crib_ui import create_table
from test_comfort import axe

from server.settings import Settings

pytestmark = pytest.mark.browser


@pytest.fixture
def server(tmp_path: Any) -> Any:
    live = LiveServer(Settings(bot_delay_seconds=0, data_dir=str(tmp_path))).start()
    yield live
    live.stop()


def person(new_page: Any, base: str, name: str, **context: Any) -> tuple[Any, dict[str, str]]:
    """A browser profile whose player (made by the API) is called ``name``, on the start
    page (which holds its challenges connection)."""
    made = httpx.post(f"{base}/api/players", json={"name": name}).json()
    player = {"id": made["id"], "secret": made["secret"]}
    page = new_page(**context)
    # The origin's storage first, on a page that runs none of the site's scripts (the
    # start page would make a player of its own meanwhile).
    page.goto(base + "/healthz")
    page.evaluate("([p, n]) => { localStorage.setItem('cribbage.player', p); "
                  "localStorage.setItem('cribbage.name', n); }",
                  [json.dumps(player), json.dumps(name)])
    page.goto(base + "/")
    page.wait_for_selector("#your-name")
    end = time.monotonic() + 15
    # (paced: the profile is a history read, 60 a minute per address)
    while httpx.get(f"{base}/api/players/{player['id']}").json().get("online") is not True:
        assert time.monotonic() < end, "the page's challenges connection did not come"
        time.sleep(0.3)
    return page, player


def test_a_challenge_accepted_and_a_block_honoured(server: Any, new_page: Any,
                                                   axe_source: str) -> None:
    base = server.url
    bo, bo_p = person(new_page, base, "Bo", locale="da-DK")
    anna, anna_p = person(new_page, base, "Anna")

    # Anna on Bo's page: online now; she challenges him to a game to 61.
    anna.goto(f"{base}/p/{bo_p['id']}")
    anna.wait_for_selector("#online[data-online=true]")
    assert anna.inner_text("#online") == "Online now"
    axe(anna, axe_source, "a player's page with the challenge form")
    anna.select_option("#challenge-target", "61")
    anna.click("#challenge-send")
    anna.locator("#challenge-status").filter(has_text="Challenge sent").wait_for()
    anna.wait_for_selector("#challenges [data-kind=sent]")

    # Bo (a Danish page) sees it at once, and accepts.
    banner = bo.locator("#challenges [data-kind=received]")
    banner.wait_for()
    assert "Anna udfordrer dig" in banner.inner_text() and "til 61" in banner.inner_text()
    axe(bo, axe_source, "the start page with a challenge (Danish)")
    banner.get_by_role("button", name="Tag imod").click()

    # Both go to the same table, each in their seat, and the game starts.
    for page in (anna, bo):
        page.wait_for_url("**/r/**")
        page.wait_for_selector("#table[data-status=playing]", timeout=15_000)
    assert anna.evaluate("location.pathname") == bo.evaluate("location.pathname")
    seats = {anna.eval_on_selector("#table", "el => el.dataset.seat"),
             bo.eval_on_selector("#table", "el => el.dataset.seat")}
    assert seats == {"0", "1"}

    # Bo blocks Anna on her page.
    bo.goto(f"{base}/p/{anna_p['id']}")
    bo.click("#block")
    bo.wait_for_selector("#unblock")
    axe(bo, axe_source, "a blocked player's page (Danish)")
    blocks = httpx.get(f"{base}/api/players/me/blocks",
                       headers={"Authorization": f"Player {bo_p['id']}.{bo_p['secret']}"}).json()
    assert [b["player"] for b in blocks["blocks"]] == [anna_p["id"]]

    # Her challenge is refused...
    anna.goto(f"{base}/p/{bo_p['id']}")
    anna.click("#challenge-send")
    anna.locator("#challenge-status").filter(
        has_text="This player takes no challenges from you.").wait_for()
    # ...and she cannot sit at his table, though she may watch.
    link = create_table(bo, base, "Bo")
    anna.goto(link)
    anna.fill("#lobby-name", "Anna")
    anna.click("button[data-seat='1']")
    anna.get_by_text("You cannot sit at this table").wait_for()
    axe(anna, axe_source, "the lobby after a refused seat")


def test_the_challenge_form_in_swedish_on_a_phone(server: Any, new_page: Any,
                                                  axe_source: str) -> None:
    base = server.url
    made = httpx.post(f"{base}/api/players", json={"name": "Britt"}).json()
    page, _ = person(new_page, base, "Kalle", phone=True, locale="sv-SE")
    page.goto(f"{base}/p/{made['id']}")
    page.wait_for_selector("#online[data-online=false]")
    text = page.text_content("main") or ""
    for word in ("Spela eller blockera", "Inte online nu", "Parti till", "Rankat", "Utmana",
                 "Blockera"):
        assert word in text, (word, text)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    axe(page, axe_source, "a player's page in Swedish, phone")
    page.click("#block")
    page.get_by_text("Blockerad.").wait_for()
    page.click("#unblock")
    page.get_by_text("Blockeringen är hävd.").wait_for()
