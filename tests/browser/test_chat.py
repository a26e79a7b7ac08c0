"""Table talk in the browser (issue 21): two players and a spectator at one table, each page
in its own language (Danish, Swedish, English).

* A preset travels as its id and each reader sees it in their own language.
* Hostile names and messages (markup that would run script, a right-to-left name, a
  300-letter word) render as text: no script runs (``window.__pwned`` stays undefined), no
  ``<img>``, ``<svg>`` or link is made in the chat, for the players and the spectator; the
  right-to-left name is isolated (its line keeps its order) and the long word wraps inside
  the panel. A name with a direction override (U+202E) is refused by the server.
* A spectator's message during the game reaches the spectators only, marked as such.
* Mute hides the muted player's messages (Unmute shows them again), a report is confirmed,
  a block hides the blocked player's messages; the new-table form offers the chat setting
  (free text by default, set phrases when rated); axe-core finds nothing serious.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import LiveServer
from test_comfort import axe

from server.settings import Settings

pytestmark = pytest.mark.browser

# Names within the 32 characters a name may have; the messages within chat_max_chars (set
# to 400 below, for the 300-letter word).
IMG_NAME = "<img src=x onerror=__pwned=1>"
SVG_NAME = '"><svg onload=__pwned=1>'
RTL_NAME = "سلام Ali"  # Arabic letters, then Latin: shown isolated from "(seat 2)"
IMG_TEXT = "<img src=x onerror=window.__pwned=1>"
SVG_TEXT = '"><svg onload=window.__pwned=1>'
LINK_TEXT = "www.example.com/free-points"
LONG_WORD = "x" * 300

# Every message the page shows: [id, name, text, audience, preset].
MESSAGES = """() => [...document.querySelectorAll('#chat .chat-list .chat-msg')].map((li) => [
  Number(li.dataset.id), li.querySelector('.chat-name').textContent,
  li.querySelector('.chat-text').textContent, li.dataset.audience, li.dataset.preset || null])"""

# Nothing ran and nothing was made of the words: no script result, no element but the
# page's own in the chat list.
HARMLESS = """() => ({
  pwned: typeof window.__pwned,
  made: document.querySelectorAll(
    '#chat img, #chat svg, #chat a, #chat iframe, #chat script').length,
  wide: document.documentElement.scrollWidth > window.innerWidth + 1,
})"""


def texts(page: Any) -> list[str]:
    return [m[2] for m in page.evaluate(MESSAGES)]


def wait_text(page: Any, text: str, count: int = 1) -> None:
    """Wait until the chat list shows ``text`` ``count`` times."""
    page.wait_for_function(
        """([text, count]) => [...document.querySelectorAll('#chat .chat-list .chat-text')]
             .filter((el) => el.textContent === text).length === count""",
        arg=[text, count])


def person(browser_page: Any, server: LiveServer, player: dict[str, str]) -> Any:
    """A page whose browser already is ``player`` (its localStorage holds it)."""
    keep = {"id": player["id"], "secret": player["secret"]}
    browser_page.context.add_init_script(
        f"try {{ localStorage.setItem('cribbage.player', {json.dumps(json.dumps(keep))}); }}"
        " catch (e) { /* a page without storage (about:blank) */ }")
    return browser_page


def test_players_and_a_spectator_talk_safely_in_their_languages(
        tmp_path: Path, new_page: Any, axe_source: str) -> None:
    # frame_rate=0 and no chat rate limits: the pages click at machine speed.
    server = LiveServer(Settings(
        bot_delay_seconds=0, database_url=f"sqlite:///{tmp_path / 'chat.sqlite3'}",
        frame_rate=0, chat_player_rate=0, chat_room_rate=0, chat_max_chars=400)).start()
    try:
        api = f"{server.url}/api/players"
        # A direction override in a name is refused; Arabic letters are a name like any.
        refused = httpx.post(api, json={"name": "Bo\u202eevil"})
        assert refused.status_code == 400 and refused.json()["error"]["code"] == "bad_name"
        dane = httpx.post(api, json={"name": IMG_NAME}).json()
        swede = httpx.post(api, json={"name": RTL_NAME}).json()
        watcher = httpx.post(api, json={"name": SVG_NAME}).json()

        # The Danish player makes the table: chat is free text unless the table is rated.
        da = person(new_page(locale="da-DK"), server, dane)
        da.goto(server.url + "/")
        assert da.input_value("#chat-mode") == "free"
        da.check("input[name=rated]")
        assert da.input_value("#chat-mode") == "presets"
        da.uncheck("input[name=rated]")
        assert da.input_value("#chat-mode") == "free"
        da.fill("#your-name", IMG_NAME)
        da.click("button[type=submit]")
        da.wait_for_url("**/r/**")
        da.wait_for_selector("#table[data-conn=open][data-seat='0']")
        link = da.input_value("#share-link")

        sv = person(new_page(locale="sv-SE"), server, swede)
        sv.goto(link)
        sv.fill("#lobby-name", RTL_NAME)
        sv.click("button[data-seat='1']")
        sv.wait_for_selector("#table[data-conn=open][data-seat='1'][data-status=playing]")

        en = person(new_page(locale="en-GB"), server, watcher)
        en.goto(link)
        en.click("#watch")
        en.wait_for_selector("#table[data-conn=open][data-status=playing]")
        # A spectator during the game is told whom their words reach.
        en.wait_for_selector("#chat-spectators-note")
        assert da.locator("#chat-spectators-note").count() == 0
        for page in (da, sv, en):
            assert page.get_attribute("#chat", "data-mode") == "free"
            assert page.get_attribute("#chat .chat-list", "role") == "log"
            assert page.get_attribute("#chat .chat-list", "aria-live") == "polite"

        # A preset, in each reader's language.
        da.click("#chat [data-preset=good_game]")
        for page, words in ((da, "Godt spil!"), (sv, "Bra spelat!"), (en, "Good game!")):
            wait_text(page, words)
        sv.click("#chat [data-preset=well_pegged]")
        for page, words in ((da, "Flot spillet med kortene!"), (sv, "Snyggt i spelet med korten!"),
                            (en, "Well pegged!")):
            wait_text(page, words)

        # Hostile words, typed as anyone would.
        for page, words in ((da, IMG_TEXT), (sv, SVG_TEXT), (sv, LONG_WORD), (da, LINK_TEXT)):
            page.fill("#chat-text", words)
            page.press("#chat-text", "Enter")
            wait_text(page, words)
            assert page.input_value("#chat-text") == ""
        for page in (da, sv, en):
            for words in (IMG_TEXT, SVG_TEXT, LONG_WORD, LINK_TEXT):
                wait_text(page, words)
            assert page.evaluate(HARMLESS) == {"pwned": "undefined", "made": 0, "wide": False}, page
            names = {m[1] for m in page.evaluate(MESSAGES)}
            assert names == {IMG_NAME, RTL_NAME}
            # The long word wraps inside the panel.
            box = page.locator("#chat").bounding_box()
            word = page.locator("#chat .chat-text", has_text=LONG_WORD).bounding_box()
            assert word["x"] + word["width"] <= box["x"] + box["width"] + 1
            # The right-to-left name is isolated: "(seat 2)" still follows it on the right.
            line = page.locator("#chat .chat-msg",
                                has=page.locator(".chat-name", has_text=RTL_NAME)).first
            assert line.locator(".chat-name").evaluate("el => el.tagName") == "BDI"
            assert line.locator(".chat-text").get_attribute("dir") == "auto"
            name_box = line.locator(".chat-name").bounding_box()
            tag_box = line.locator(".chat-tag").bounding_box()
            assert name_box["x"] + name_box["width"] <= tag_box["x"] + 1

        # The spectator's words reach the spectators only, marked so.
        en.fill("#chat-text", "Hvem vinder?")
        en.press("#chat-text", "Enter")
        wait_text(en, "Hvem vinder?")
        mine = [m for m in en.evaluate(MESSAGES) if m[2] == "Hvem vinder?"]
        assert mine[0][3] == "spectators"
        assert en.locator("#chat .chat-msg.to-spectators .chat-audience").count() == 1
        da.click("#chat [data-preset=thanks]")  # said after it: when it arrives, so would have
        for page, words in ((da, "Tak!"), (sv, "Tack!"), (en, "Thanks!")):
            wait_text(page, words)
        assert "Hvem vinder?" not in texts(da) and "Hvem vinder?" not in texts(sv)

        axe(da, axe_source, "the table's chat (Danish)")
        axe(en, axe_source, "the table's chat, a spectator (English)")

        # The Swede mutes the Dane: the Dane's messages leave the Swede's page.
        dane_line = sv.locator("#chat .chat-msg", has=sv.locator(".chat-text", has_text="Tack!"))
        dane_id = dane_line.get_attribute("data-id")
        sv.click(f"[data-key=chat-more-{dane_id}]")
        axe(sv, axe_source, "a message's menu (Swedish)")
        sv.click(f"[data-key=chat-mute-{dane_id}]")
        sv.wait_for_selector("#chat-notice")
        assert "Du ser inte längre meddelanden från" in sv.inner_text("#chat-notice")
        sv.wait_for_function("""(name) => [...document.querySelectorAll(
            '#chat .chat-list .chat-name')].every((el) => el.textContent !== name)""",
                             arg=IMG_NAME)
        assert IMG_TEXT not in texts(sv) and SVG_TEXT in texts(sv)
        da.click("#chat [data-preset=sorry]")
        wait_text(en, "Sorry!")  # the spectator hears it; the Swede does not
        sv.click("#chat [data-preset=hello]")
        wait_text(da, "Hej!")
        assert "Förlåt!" not in texts(sv)
        # Unmute: the Dane's messages are heard (and shown) again.
        sv.click(f"#chat .chat-muted [data-player='{dane['id']}'] button")
        sv.wait_for_function("() => document.querySelector('#chat-notice')?.textContent"
                             ".includes('igen')")
        wait_text(sv, IMG_TEXT)

        # The Swede reports the Dane's link text: the report is confirmed.
        link_line = sv.locator("#chat .chat-msg", has=sv.locator(".chat-text", has_text=LINK_TEXT))
        link_id = link_line.get_attribute("data-id")
        sv.click(f"[data-key=chat-more-{link_id}]")
        sv.click(f"[data-key=chat-report-{link_id}]")
        sv.check(f"input[name=report-reason-{link_id}][value=spam]")
        sv.fill(f"#report-note-{link_id}", "reklame")
        sv.click(f"[data-key=chat-report-send-{link_id}]")
        sv.wait_for_selector(f"#chat .chat-msg[data-id='{link_id}'][data-reported=true]")
        assert sv.inner_text("#chat-notice") == "Tack: anmälan har skickats till moderatorerna."

        # The spectator blocks the Swede: the Swede's messages leave the spectator's page.
        rtl_line = en.locator("#chat .chat-msg", has=en.locator(".chat-text", has_text=SVG_TEXT))
        rtl_id = rtl_line.get_attribute("data-id")
        en.click(f"[data-key=chat-more-{rtl_id}]")
        en.click(f"[data-key=chat-block-{rtl_id}]")
        en.wait_for_selector(f"#chat .chat-muted [data-player='{swede['id']}']")
        assert "You blocked" in en.inner_text("#chat-notice")
        shown = en.evaluate(MESSAGES)
        assert all(m[1] != RTL_NAME for m in shown) and any(m[1] == IMG_NAME for m in shown)
        axe(en, axe_source, "the spectator's page after a block")
        for page in (da, sv, en):
            assert page.evaluate(HARMLESS) == {"pwned": "undefined", "made": 0, "wide": False}
            page.context.close()  # before the server stops (its socket would retry)
    finally:
        server.stop()
