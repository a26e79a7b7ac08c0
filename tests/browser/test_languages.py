"""The table in Danish and Swedish (issue 12): a browser whose language is Danish or Swedish
gets the page in that language, and a whole game — Muggins and Back-up 10 against the
computer, the show, the whole game's story, the replay, the rules — shows no English.

"No English" is checked word by word: every word of the English catalogue that the
language's own catalogue does not use (so "the", "hand", "deal", "count", "wins"... but not
"crib", "go", "nobs" or "Muggins", which Danish and Swedish players use as they are) must
not appear in the page's text, its accessible names (aria-label), its tooltips (title) or
its document title. Text marked as another language (the language switch's "English") is
left out, as a screen reader would read it in that language.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from crib_ui import act_once, create_table, rejects, table, watch_frames

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static" / "i18n"
WORD = re.compile(r"\w+", re.UNICODE)

# Every text a person or a screen reader meets: visible text nodes (and the sr-only ones),
# aria-labels, titles, placeholders and the document title; not text in another language.
PAGE_WORDS = """() => {
  const lang = document.documentElement.lang;
  const out = [document.title];
  const keep = (el) => {
    const marked = el.closest('[lang]');
    return !marked || marked.getAttribute('lang') === lang;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || !n.textContent.trim()) continue;
    if (['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(el.tagName)) continue;
    if (!keep(el) || (el.checkVisibility && !el.checkVisibility())) continue;
    out.push(n.textContent);
  }
  for (const el of document.body.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
    if (!keep(el)) continue;
    for (const a of ['aria-label', 'title', 'placeholder', 'alt']) {
      if (el.hasAttribute(a)) out.push(el.getAttribute(a));
    }
  }
  return out;
}"""


def words_of(value: Any) -> set[str]:
    if isinstance(value, str):
        text = re.sub(r"\{\w+\}", " ", value)
        return {w.lower() for w in WORD.findall(text) if w.isalpha() and len(w) >= 2}
    if isinstance(value, list):
        return set().union(*(words_of(v) for v in value)) if value else set()
    return set().union(*(words_of(v) for v in value.values()))


def english_only(lang: str) -> set[str]:
    """Words of the English catalogue that the other language never uses."""
    en = json.loads((STATIC / "en.json").read_text(encoding="utf-8"))
    other = json.loads((STATIC / f"{lang}.json").read_text(encoding="utf-8"))
    return words_of(en) - words_of(other)


class EnglishCheck:
    """Looks at a page for English words (and for catalogue keys left unfilled: ⟦key⟧)."""

    def __init__(self, lang: str, names: list[str]) -> None:
        self.lang = lang
        self.forbidden = english_only(lang) - {n.lower() for n in names}
        assert {"the", "deal", "wins", "count", "your"} <= self.forbidden
        self.checked = 0

    def __call__(self, page: Any, where: str) -> None:
        # The page loads its catalogue before it draws (main.js): wait for that.
        page.wait_for_function("l => document.documentElement.lang === l"
                               " && document.querySelector('#app').childElementCount > 0",
                               arg=self.lang, timeout=20_000)
        assert page.evaluate("document.documentElement.lang") == self.lang, where
        texts = page.evaluate(PAGE_WORDS)
        found = []
        for text in texts:
            assert "⟦" not in text, f"{where}: a missing catalogue key: {text!r}"
            hits = {w for w in WORD.findall(text) if w.isalpha() and w.lower() in self.forbidden}
            if hits:
                found.append((sorted(hits), text.strip()[:160]))
        assert not found, f"{where}: English on the page: {found[:12]}"
        self.checked += 1


@pytest.mark.parametrize(("locale", "lang", "name"), [("da-DK", "da", "Mette"),
                                                     ("sv-SE", "sv", "Astrid")])
def test_a_whole_game_in_danish_and_swedish(live_server: Any, new_page: Any, screenshot_dir: Path,
                                            locale: str, lang: str, name: str) -> None:
    """A person whose browser speaks Danish (or Swedish) plays a whole game to 61 against
    the expert computer with Muggins and Back-up 10, announcing and answering every
    count; at every stage the page holds no English. Then the whole game's story, the
    replay, the rules pages and the other pages; and the language switch is remembered."""
    me = new_page(locale=locale)
    frames = watch_frames(me)
    check = EnglishCheck(lang, [name])
    me.goto(live_server.url + "/")
    check(me, "start page")
    create_table(me, live_server.url, name, target="61", muggins=True, backup10=True,
                 seats={1: "expert"})  # the form offers the expert in the page's language
    assert me.locator("#table").count() == 1
    me.wait_for_selector("#table[data-phase=discard]")
    me.wait_for_selector(".cut-for-deal")
    check(me, "the first deal, with the cut for deal")
    seen: set[str] = set()
    shots: set[str] = set()
    end = time.monotonic() + 120
    while table(me)["status"] != "game_over":
        assert time.monotonic() < end, "the game did not end in time"
        state = table(me)
        stage = "review" if state.get("review") == "show" else state["phase"]
        if me.locator("#announce").count():
            stage = "announce"
        elif me.locator("#answer-accept").count():
            stage = "answer"
        if stage not in seen:
            seen.add(stage)
            check(me, f"stage {stage}")
        if stage == "play" and int(state["deal"]) >= 2 and "desktop" not in shots \
                and me.locator(".pile li").count() >= 2:
            me.screenshot(path=str(screenshot_dir / f"table-{lang}-desktop.png"), full_page=True)
            shots.add("desktop")
        if not act_once(me, muggins=True):
            time.sleep(0.05)
    assert {"discard", "play", "announce", "review"} <= seen, seen
    # A link to the game in the archive, where its grading is (issue 22 point 4): the id
    # the room's summary gives for the finished game.
    link = me.wait_for_selector("#graded-replay")
    words = json.loads((STATIC / f"{lang}.json").read_text(encoding="utf-8"))
    assert link.inner_text() == words["replay.graded"]
    room = me.url.rsplit("/r/", 1)[1].split("?")[0]
    summary = me.evaluate("async (r) => (await fetch(`/api/rooms/${r}`)).json()", room)
    assert summary["status"] == "game_over" and re.fullmatch(r"[a-z2-7]{16}", summary["game"])
    assert link.get_attribute("href") == f"/replay/{summary['game']}"
    # Someone who comes to watch the finished table is given the same link, also when the
    # first reads of the summary fail (the network, a refusal): the page asks again later.
    watcher = new_page(locale=locale, allow_console=("status of 503",))
    watcher.goto(me.url)
    watcher.wait_for_selector("#watch")
    refused: list[str] = []

    def refuse_twice(route: Any) -> None:
        if len(refused) < 2:
            refused.append(route.request.url)
            route.fulfill(status=503, body="")
        else:
            route.continue_()

    watcher.route(f"**/api/rooms/{room}", refuse_twice)
    watcher.click("#watch")
    seen_link = watcher.wait_for_selector("#graded-replay", timeout=30_000)
    assert len(refused) == 2, refused
    assert seen_link.get_attribute("href") == f"/replay/{summary['game']}"
    assert seen_link.inner_text() == words["replay.graded"]
    watcher.close()
    check(me, "game over")
    # The winner's front peg is in the game hole, on the board.
    inside = me.evaluate("""() => {
      const svg = document.querySelector('#board-svg').getBoundingClientRect();
      const pegs = [...document.querySelectorAll('#board-svg .peg.front')];
      const top = pegs.find((p) => p.dataset.hole === '61');
      if (!top) return null;
      const r = top.getBoundingClientRect();
      return r.left >= svg.left && r.right <= svg.right
        && r.top >= svg.top && r.bottom <= svg.bottom;
    }""")
    assert inside is True
    me.click("#whole-game")
    me.wait_for_selector(".whole-game .story-deal[data-deal='2']")
    check(me, "the whole game")
    me.click("#watch-replay")
    me.wait_for_selector("#replay .replay")
    me.click("#replay-last")
    check(me, "the replay")
    me.click("#back-to-table")
    me.wait_for_selector("#table")
    assert not rejects(frames)

    # The rules of each game, and the replay page.
    for variant in ("standard", "backup10", "lowball", "muggins"):
        me.goto(f"{live_server.url}/rules/{variant}")
        me.wait_for_selector(f"#rules[data-variant={variant}] h1")
        check(me, f"the rules: {variant}")
    me.goto(f"{live_server.url}/replay")
    me.wait_for_selector("#replay-file")
    check(me, "the replay page")
    assert check.checked >= 13

    # Phone-sized, in the same language: the table mid-game, as a picture.
    phone = new_page(phone=True, locale=locale)
    create_table(phone, live_server.url, name, target="121", seats={1: "standard"})
    phone.wait_for_selector("#table[data-phase=discard]")
    end = time.monotonic() + 60
    while not (table(phone)["phase"] == "play" and int(table(phone)["deal"]) >= 2
               and phone.locator(".pile li").count() >= 2):
        assert time.monotonic() < end
        if not act_once(phone):
            time.sleep(0.05)
    check(phone, "the table on a phone")
    phone.evaluate("window.scrollTo(0, 0)")
    phone.screenshot(path=str(screenshot_dir / f"table-{lang}-phone.png"))

    # The language switch: English, remembered across a reload, and back.
    me.goto(live_server.url + "/")
    me.select_option("#lang", "en")
    me.wait_for_function("() => document.documentElement.lang === 'en'")
    assert "Start the table" in me.inner_text("main")
    me.reload()
    me.wait_for_selector("#your-name")
    assert me.evaluate("document.documentElement.lang") == "en"
    me.select_option("#lang", lang)
    me.wait_for_function(f"() => document.documentElement.lang === '{lang}'")
    check(me, "the start page after switching back")
    # The check itself finds English: a sentence planted in the page fails it.
    me.evaluate("""() => { const p = document.createElement('p');
      p.textContent = 'Your turn — the count is 5.'; document.querySelector('main').append(p); }""")
    with pytest.raises(AssertionError, match="English on the page"):
        check(me, "planted English")


def test_the_table_s_own_lines_follow_a_change_of_language(live_server: Any,
                                                           new_page: Any) -> None:
    """The log's lines of the page's own ("You are at seat 1.") are translated when shown,
    so switching the language at the table changes them with the rest: a Danish table
    switched to Swedish has no Danish line left, and back."""
    me = new_page(locale="da-DK")
    create_table(me, live_server.url, "Mette", target="61", seats={1: "standard"})
    me.wait_for_selector("#table[data-phase=discard]")
    words = {lang: json.loads((STATIC / f"{lang}.json").read_text(encoding="utf-8"))
             for lang in ("da", "sv")}
    line = {lang: words[lang]["log.at_seat"].format(n=1) for lang in words}
    log = ".log-panel .log"
    me.wait_for_function("([s, t]) => document.querySelector(s)?.innerText.includes(t)",
                         arg=[log, line["da"]])
    for lang, other in (("sv", "da"), ("da", "sv")):
        me.select_option("#lang", lang)
        me.wait_for_function("l => document.documentElement.lang === l", arg=lang)
        me.wait_for_function("([s, t]) => document.querySelector(s)?.innerText.includes(t)",
                             arg=[log, line[lang]])
        assert line[other] not in me.inner_text(log)
