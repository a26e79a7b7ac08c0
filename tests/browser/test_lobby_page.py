"""The lobby on the start page (issue 20 points 1 and 4): a player creates a public table
in one browser profile; a Danish browser sees it under "Offentlige borde" as it comes, takes
the free seat with one click (the table page's ordinary join) and the game starts; a Swedish
browser sees the lobby empty again, live. Every page is axe-core clean.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_comfort import axe

pytestmark = pytest.mark.browser


def test_a_public_table_from_the_lobby(live_server: Any, new_page: Any, axe_source: str
                                       ) -> None:
    base = live_server.url
    # The Danish and Swedish start pages are open before the table exists: it comes live.
    dane = new_page(locale="da-DK")
    dane.goto(base + "/")
    dane.wait_for_selector("[data-key=lobby-empty]")
    assert dane.text_content("#lobby-title") == "Offentlige borde"
    assert "Intet offentligt bord venter lige nu" in dane.inner_text("[data-key=lobby-empty]")
    axe(dane, axe_source, "the empty lobby in Danish")
    swede = new_page(locale="sv-SE")
    swede.goto(base + "/")
    swede.wait_for_selector("[data-key=lobby-empty]")
    assert swede.text_content("#lobby-title") == "Offentliga bord"

    host = new_page()
    host.goto(base + "/")
    host.wait_for_selector("[data-key=lobby-empty]")
    assert host.text_content("#lobby-title") == "Public tables"
    host.fill("#your-name", "Ann")
    host.check("input[name=public]")
    host.select_option("#table-language", "da")
    axe(host, axe_source, "the start page with the public switch")
    host.click("button[type=submit]")
    host.wait_for_url("**/r/**")
    host.wait_for_selector("#table[data-conn=open]")
    room = host.url.rstrip("/").split("/r/")[1]

    # The Dane sees the table arrive, with Ann at seat 1 and seat 2 free.
    # (made with both seats free, then Ann sat: wait for the entry with her)
    entry = dane.wait_for_selector(f"li.lobby-table[data-room='{room}']:has-text('Ann')")
    text = entry.inner_text()
    assert "Ann" in text and "1 ledig plads" in text and "på dansk" in text
    assert "2 spillere" in text and "til 121" in text
    swede.wait_for_selector(f"li.lobby-table[data-room='{room}']:has-text('Ann')")
    assert "1 ledig plats" in swede.inner_text(f"li.lobby-table[data-room='{room}']")
    assert "på danska" in swede.inner_text(f"li.lobby-table[data-room='{room}']")
    axe(dane, axe_source, "the lobby with a table in Danish")
    axe(swede, axe_source, "the lobby with a table in Swedish")

    # One click takes the seat: the table page joins it; the game starts.
    dane.fill("#your-name", "Bo")
    dane.click(f"button[data-room='{room}'][data-seat='1']")
    dane.wait_for_url(f"**/r/{room}")
    dane.wait_for_selector("#table[data-conn=open][data-seat='1']")
    dane.wait_for_selector("#table[data-status=playing]")
    host.wait_for_selector("#table[data-status=playing]")
    axe(dane, axe_source, "the table taken from the lobby")

    # The filled table leaves the lobby of the open Swedish page.
    swede.wait_for_selector(f"li.lobby-table[data-room='{room}']", state="detached")
    swede.wait_for_selector("[data-key=lobby-empty]")
    assert "Inget offentligt bord väntar just nu" in swede.inner_text("[data-key=lobby-empty]")
    axe(swede, axe_source, "the empty lobby in Swedish")


def test_a_private_table_is_not_listed(live_server: Any, new_page: Any) -> None:
    """The default is private: the table is made, and the lobby (page and API) stays empty."""
    base = live_server.url
    watcher = new_page()
    watcher.goto(base + "/")
    watcher.wait_for_selector("[data-key=lobby-empty]")
    host = new_page()
    host.goto(base + "/")
    host.fill("#your-name", "Ann")
    assert not host.is_checked("input[name=public]")
    host.click("button[type=submit]")
    host.wait_for_url("**/r/**")
    host.wait_for_selector("#table[data-conn=open]")
    assert host.request.get(base + "/api/lobby").json() == {"tables": []}
    # A public table made after it comes to the open page; the private one never does.
    other = new_page()
    other.goto(base + "/")
    other.fill("#your-name", "Bo")
    other.check("input[name=public]")
    other.click("button[type=submit]")
    other.wait_for_url("**/r/**")
    public = other.url.rstrip("/").split("/r/")[1]
    watcher.wait_for_selector(f"li.lobby-table[data-room='{public}']")
    private = host.url.rstrip("/").split("/r/")[1]
    assert [e.get_attribute("data-room") for e in watcher.query_selector_all("li.lobby-table")
            ] == [public] != [private]
