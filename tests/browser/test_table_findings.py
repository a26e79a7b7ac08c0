"""What outside testers and a newcomer found at the web table (issue 17), each in a real
browser: long names never break the layout, names that imitate are refused and computers
are marked, a table left by everyone waits and the felt says who is away and when the
computer takes over, a partnership link shows the teams, the create form and Lowball,
the turn clock by the hand, no glyph that needs a font the device may not have, a missing
rules page in the reader's language."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from crib_ui import act_when_ready, create_table, hand, sit, table, watch_frames

pytestmark = pytest.mark.browser

WIDTHS = (390, 1280, 1440)

LONG_NAMES = [
    ("W" * 32, "Ø" * 32),
    ("Ｗ" * 32, "Ｍ" * 32),  # full-width letters: two columns each
    ("Speciallægepraksisplanlægningsst", "Realisationsvinstbeskattningslag"),
]

LAYOUT = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, w: r.width,
      h: r.height }; };
  const overlap = (a, b) => a.left < b.right - 0.5 && b.left < a.right - 0.5
    && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5;
  const hand = document.querySelector('.hand');
  const hb = box(hand);
  const panels = [...document.querySelectorAll('.player, .board-panel, .show-panel, .log-panel')];
  const covering = panels.filter((p) => overlap(box(p), hb)).map((p) => p.className);
  const hit = (el) => {
    el.scrollIntoView({ block: 'center', inline: 'center' });
    const r = el.getBoundingClientRect();
    const at = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return Boolean(at) && (at === el || el.contains(at));
  };
  const cards = [...hand.querySelectorAll('.card')];
  const unclickable = cards.filter((c) => !hit(c)).map((c) => c.dataset.card);
  const button = document.querySelector('#send-crib');
  // A seat panel's name stays inside its panel.
  const spills = [...document.querySelectorAll('.player')].filter((p) => {
    const outer = box(p);
    return [...p.querySelectorAll('*')].some((e) => { const b = box(e);
      return b.w > 0 && (b.right > outer.right + 1 || b.left < outer.left - 1); });
  }).map((p) => p.dataset.seat);
  return {
    covering, unclickable, cards: cards.length, spills,
    button: button ? hit(button) : null,
    scrollWidth: document.scrollingElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    titles: [...document.querySelectorAll('.player-name')].map((e) => e.getAttribute('title')),
  };
}"""


def check_layout(page: Any, width: int, names: tuple[str, str], *, button: bool) -> None:
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_timeout(50)
    got = page.evaluate(LAYOUT)
    where = f"{width} px, {names[0][:3]}…"
    assert got["cards"] >= 4, (where, got)
    assert not got["covering"], (where, got["covering"])
    assert not got["unclickable"], (where, got["unclickable"])
    assert not got["spills"], (where, got["spills"])
    if button:
        assert got["button"] is True, (where, got)
    if width == 390:
        assert got["scrollWidth"] <= got["clientWidth"], (where, got)
    # The whole name is there for whoever hovers or reads it.
    assert any(names[1] == t for t in got["titles"]), (where, got["titles"])


@pytest.mark.parametrize("names", LONG_NAMES, ids=["latin", "full-width", "long-words"])
def test_long_names_never_break_the_layout(live_server: Any, new_page: Any, screenshot_dir: Path,
                                           names: tuple[str, str]) -> None:
    """Two players with 32-character names (the longest legal) at 390, 1280 and 1440 px: no
    seat panel overlaps the hand, every card of the hand is what is under the pointer at its
    centre, the lay-away button too, no name spills out of its seat panel, and the page
    does not scroll sideways on a phone; in the discard and again in the play."""
    first, second = new_page(), new_page()
    link = create_table(first, live_server.url, names[0])
    sit(second, link, names[1], seat=1)
    for page in (first, second):
        page.wait_for_selector("#table[data-phase=discard]")
    # The discard: two cards chosen, so the lay-away button is live.
    for page, other in ((first, names), (second, names[::-1])):
        for card in hand(page)[:2]:
            page.click(f".hand button.card[data-card='{card}']")
        for width in WIDTHS:
            check_layout(page, width, other, button=True)
    first.set_viewport_size({"width": 390, "height": 844})
    first.screenshot(path=str(screenshot_dir / f"long-names-{names[0][0]}-390.png"),
                     full_page=True)
    for page in (first, second):
        page.set_viewport_size({"width": 1280, "height": 900})
        page.click("#send-crib")
    for page in (first, second):
        page.wait_for_selector("#table[data-phase=play]")
    turn = first if table(first)["turn"] == table(first)["seat"] else second
    turn.wait_for_selector(".hand button.card:not([disabled])")
    for width in WIDTHS:
        check_layout(turn, width, names if turn is first else names[::-1], button=False)
    turn.set_viewport_size({"width": 1440, "height": 900})
    turn.screenshot(path=str(screenshot_dir / f"long-names-{names[0][0]}-1440.png"))
    # Someone opening the link: the lobby lists both names, and a phone does not scroll
    # sideways either.
    visitor = new_page(phone=True)
    visitor.goto(link)
    visitor.wait_for_selector("#lobby-full")
    listed = visitor.eval_on_selector_all(".seat-list .seat-name", "els => els.map(e => e.title)")
    assert listed == list(names)
    assert visitor.evaluate(
        "document.scrollingElement.scrollWidth <= document.documentElement.clientWidth")


def test_a_name_that_imitates_is_refused_and_computers_are_marked(live_server: Any,
                                                                  new_page: Any) -> None:
    """Anna's table has a computer seat and a free one. Someone opening the link as "ANNA"
    is told the name is taken, as "Computer (standard)" or "Du" that it is one of the
    table's own words — each time back in the lobby with the name box ready — and sits as
    "Ben". Every computer seat is marked with a drawn computer (an SVG of real size) next to
    the catalogue's words, in the lobby and at the table."""
    anna = new_page()
    link = create_table(anna, live_server.url, "Anna", players="3", seats={2: "standard"})
    visitor = new_page()
    visitor.goto(link)
    visitor.wait_for_selector("button[data-seat='1']")
    sizes = sizes_of(visitor, ".seat-list [data-computer='2'] svg[data-icon=computer]")
    assert len(sizes) == 1 and sizes[0]["width"] >= 10 and sizes[0]["height"] >= 10, sizes
    for name, says in (("ANNA", "already has that name"), ("Computer (standard)", "table's own"),
                       ("Du", "table's own")):
        visitor.fill("#lobby-name", name)
        # (The page redraws whenever the room's summary comes in; typed over, the name
        # must not become "ANNADu", which would sit at the table.)
        assert visitor.input_value("#lobby-name") == name
        visitor.click("button[data-seat='1']")
        visitor.wait_for_selector(".lobby .message.error")
        assert says in visitor.inner_text(".lobby .message.error"), name
        assert visitor.evaluate("document.activeElement.id") == "lobby-name"
        assert table_is_waiting(anna)
    visitor.fill("#lobby-name", "Ben")
    visitor.click("button[data-seat='1']")
    visitor.wait_for_selector("#table[data-phase=discard]")
    marked = sizes_of(visitor, ".player[data-seat='2'] svg[data-icon=computer]")
    assert len(marked) == 1 and marked[0]["width"] >= 10, marked
    assert "computer" in visitor.inner_text(".player[data-seat='2']")


SIZES = """(selector) => [...document.querySelectorAll(selector)].map((e) => {
  const r = e.getBoundingClientRect();
  return { width: r.width, height: r.height };
})"""


def sizes_of(page: Any, selector: str) -> list[dict[str, float]]:
    """The drawn sizes of what ``selector`` matches, found and measured in one script: the
    page draws itself anew on every frame and answer (a locator's ``count()`` and then
    ``bounding_box()`` can fall either side of a redraw, and the second then measures an
    element no longer in the page: None)."""
    return page.evaluate(SIZES, selector)


def table_is_waiting(page: Any) -> bool:
    return table(page)["status"] == "waiting"


AWAY = """(seat) => {
  const p = document.querySelector(`#away-notice [data-away-seat="${seat}"]`);
  if (!p) return null;
  return { text: p.innerText, left: p.dataset.left === undefined ? null : Number(p.dataset.left) };
}"""


def test_the_felt_says_who_is_away_and_a_table_left_by_everyone_waits(
        slow_takeover_server: Any, new_page: Any, browser: Any) -> None:
    """Ben's tab closes: on Anna's felt a line says Ben is away and counts down to the
    computer taking over (the server's takeover_at). Anna leaves too before that: Carl,
    watching, is told the table waits for its players, and for twice the grace nothing
    happens. Anna comes back: the countdown starts again from the full grace, and then the
    computer plays for Ben, which the felt says too."""
    server = slow_takeover_server
    anna = new_page()
    link = create_table(anna, server.url, "Anna")
    ben_context = browser.new_context(viewport={"width": 1280, "height": 860})
    ben = ben_context.new_page()
    sit(ben, link, "Ben", seat=1)
    anna.wait_for_selector("#table[data-phase=discard]")
    carl = new_page()
    carl.goto(link)
    carl.click("#watch")
    carl.wait_for_selector("#table[data-conn=open][data-phase=discard]")
    ben_context.close()
    anna.wait_for_function(f"() => ({AWAY})(1)?.left > 0")
    first = anna.evaluate(AWAY, 1)
    assert "Ben is away" in first["text"] and "computer plays for them in" in first["text"]
    assert 1 <= first["left"] <= 4, first
    anna.wait_for_function(f"() => ({AWAY})(1)?.left < {first['left']}", timeout=3000)

    anna.goto("about:blank")  # Anna leaves too, before the grace is over
    carl.wait_for_selector("#away-notice [data-away=waiting]")
    assert "waits for its players" in carl.inner_text("#away-notice")
    version = table(carl)["version"]
    time.sleep(8)  # twice the grace
    assert table(carl)["version"] == version, "the game went on with nobody at the table"
    assert carl.locator(".player[data-seat='1'] [data-presence=standin]").count() == 0

    back = time.time()
    anna.goto(link)
    anna.wait_for_selector("#table[data-conn=open]")
    anna.wait_for_function(f"() => ({AWAY})(1)?.left > 0")
    assert anna.evaluate(AWAY, 1)["left"] >= 3  # the full grace again, from her return
    anna.wait_for_function(f"() => ({AWAY})(1)?.text.includes('until they are back')",
                           timeout=8000)
    assert time.time() - back >= 3
    carl.wait_for_selector(".player[data-seat='1'] [data-presence=standin]")


def test_a_partnership_link_shows_the_teams_to_everyone(live_server: Any, new_page: Any) -> None:
    """A friend opening the link of a table in partnerships sees, before choosing a seat,
    which seats are team A and which team B, and that partners sit opposite — in each
    language."""
    creator = new_page()
    link = create_table(creator, live_server.url, "Pat", players="4p")
    for locale, team_a, team_b in (("en-GB", "team A", "team B"), ("da-DK", "hold A", "hold B"),
                                   ("sv-SE", "lag A", "lag B")):
        friend = new_page(locale=locale)
        friend.goto(link)
        friend.wait_for_selector("button[data-seat='1']")
        labels = friend.eval_on_selector_all(".seat-list li .seat-label",
                                             "els => els.map(e => e.innerText)")
        assert len(labels) == 4
        assert team_a in labels[0] and team_a in labels[2], labels
        assert team_b in labels[1] and team_b in labels[3], labels
        assert friend.locator("#teams-note").is_visible()
        assert friend.get_attribute(".seat-list li[data-seat='2']", "data-team") == "A"


def test_lowball_unticks_and_disables_muggins(live_server: Any, new_page: Any) -> None:
    """Choosing Lowball unticks Muggins and disables it, with the reason next to it (the
    game is played without Muggins: docs/rules.md §1.3); without Lowball it can be chosen again.
    The room created says the same."""
    page = new_page()
    sent = watch_frames(page, sent=True)
    page.goto(live_server.url + "/")
    page.fill("#your-name", "Pat")
    page.check("input[name=muggins]")
    page.check("input[name=lowball]")
    muggins = page.locator("input[name=muggins]")
    assert not muggins.is_checked() and muggins.is_disabled()
    reason = page.inner_text("#muggins-off")
    assert "without Muggins" in reason
    assert page.get_attribute("input[name=muggins]", "aria-describedby") == "muggins-off"
    page.uncheck("input[name=lowball]")
    assert muggins.is_enabled() and not muggins.is_checked()
    page.check("input[name=muggins]")
    page.check("input[name=lowball]")
    assert not muggins.is_checked()
    with page.expect_request("**/api/rooms") as request:
        page.click("button[type=submit]")
    body = request.value.post_data_json
    assert body["options"]["lowball"] is True and body["options"]["muggins"] is False
    page.wait_for_selector("#table[data-conn=open]")
    assert "Muggins" not in page.inner_text(".options-desc")
    assert not [f for f in sent if f.get("type") == "error"]


def test_the_turn_clock_is_by_the_hand(live_server: Any, new_page: Any) -> None:
    """With a turn clock, the seconds left for my move are right above my cards, in large
    type with a drawn clock (no ⏱ glyph); they are not a live region that talks every
    second — one status says it once when the time runs short."""
    page = new_page()
    page.goto(live_server.url + "/")
    page.fill("#your-name", "Pat")
    page.select_option("#seat-1", "standard")
    page.select_option("#turn-clock", "30")
    page.click("button[type=submit]")
    # A loaded machine once took more than the default wait (then 10 s) to get here.
    page.wait_for_selector("#table[data-phase=discard] #my-clock", timeout=30_000)
    got = page.evaluate("""() => {
      const clock = document.querySelector('#my-clock');
      const hand = document.querySelector('.hand');
      const c = clock.getBoundingClientRect(), h = hand.getBoundingClientRect();
      const svg = clock.querySelector('svg[data-icon=clock]').getBoundingClientRect();
      return { gap: h.top - c.bottom, left: c.left - h.left,
        font: parseFloat(getComputedStyle(clock).fontSize), text: clock.innerText,
        inArea: Boolean(clock.closest('.my-area')), next: clock.nextElementSibling === hand,
        live: [...clock.querySelectorAll('[aria-live], [role=status]')].map((e) => e.innerText),
        svg: [svg.width, svg.height] };
    }""")
    assert got["inArea"] and got["next"], got
    assert 0 <= got["gap"] <= 24 and abs(got["left"]) <= 8, got
    assert got["font"] >= 20, got
    # The seconds left of the 30 (fewer if the page was slow to come).
    assert re.search(r"\b([1-9]|[12]\d|30) s for your move", got["text"]), got
    assert "⏱" not in got["text"]
    assert got["svg"][0] >= 16 and got["svg"][1] >= 16, got
    assert got["live"] == [""], got  # nothing said while there is time


BANNED = """() => {
  // Code points that need an emoji or symbol font the device may not have: Misc Technical
  // (⏱ ⏮ ⏭), Geometric Shapes (▶ ◀), Misc Symbols other than the card suits, Dingbats (✓),
  // Misc Symbols and Arrows, emoji, the emoji variation selector.
  const bad = (cp) => (cp >= 0x2300 && cp <= 0x23ff) || (cp >= 0x25a0 && cp <= 0x25ff)
    || (cp >= 0x2600 && cp <= 0x26ff && !(cp >= 0x2660 && cp <= 0x2667))
    || (cp >= 0x2700 && cp <= 0x27bf) || (cp >= 0x2b00 && cp <= 0x2bff)
    || (cp >= 0x1f000 && cp <= 0x1faff) || cp === 0xfe0f;
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest('[hidden], script, style')) continue;
    for (const ch of n.textContent) {
      if (bad(ch.codePointAt(0))) found.push(`${ch} in ${el.className || el.tagName}`);
    }
  }
  for (const el of document.querySelectorAll('[title], [aria-label]')) {
    for (const ch of (el.getAttribute('title') || '') + (el.getAttribute('aria-label') || '')) {
      if (bad(ch.codePointAt(0))) found.push(`${ch} in the label of ${el.className || el.tagName}`);
    }
  }
  const icons = [...document.querySelectorAll('svg.icon')].map((s) => {
    const r = s.getBoundingClientRect();
    return [s.dataset.icon, r.width, r.height];
  });
  return { found, icons };
}"""


def test_no_glyph_needs_a_font_the_device_may_not_have(live_server: Any, new_page: Any) -> None:
    """The start page, the lobby, a table mid-deal with a turn clock running and a chip for a
    laid-away crib, and the rules: no visible text or label uses an emoji or symbol code
    point (⏱, ✓, ▶ …: empty boxes here); the icons are inline SVG and drawn at a real size."""
    page = new_page()
    page.goto(live_server.url + "/")
    page.wait_for_selector("#your-name")
    assert page.evaluate(BANNED)["found"] == []
    page.fill("#your-name", "Pat")
    page.select_option("#turn-clock", "30")
    page.click("button[type=submit]")
    page.wait_for_selector("#table[data-conn=open]")
    link = page.input_value("#share-link")
    ben = new_page()
    ben.goto(link)
    ben.wait_for_selector("button[data-seat='1']")
    assert ben.evaluate(BANNED)["found"] == []
    ben.fill("#lobby-name", "Ben")
    ben.click("button[data-seat='1']")
    page.wait_for_selector("#table[data-phase=discard] .chip.clock")
    act_when_ready(ben)  # Ben lays away: a "laid away" chip on Anna's side
    page.wait_for_selector(".player[data-seat='1'] .chip.done")
    for p in (page, ben):
        got = p.evaluate(BANNED)
        assert got["found"] == [], got["found"]
        kinds = {name for name, w, hgt in got["icons"] if w >= 10 and hgt >= 10}
        assert "clock" in kinds, got["icons"]
        assert all(w > 0 and hgt > 0 for _, w, hgt in got["icons"]), got["icons"]
    page.goto(live_server.url + "/rules/backup10")
    page.wait_for_selector(".rules-text h1")
    assert page.evaluate(BANNED)["found"] == []


def test_a_rules_page_that_does_not_exist_says_so_in_the_readers_language(
        live_server: Any, new_page: Any, browser: Any) -> None:
    """/rules/<anything else> answers 404, and the page says there is no such rules page —
    in Danish for a Danish reader, in Swedish for a Swedish one — with a link to every
    rules page there is; the real ones answer 200 with their rules. (Chromium logs the
    document's own 404 on the console; any other console error fails the test.)"""
    for locale, title in (("da-DK", "Den regelside findes ikke"),
                          ("sv-SE", "Den regelsidan finns inte"), ("en-GB", "No such rules page")):
        context = browser.new_context(locale=locale)
        page = context.new_page()
        page.set_default_timeout(20_000)
        problems: list[str] = []
        page.on("pageerror", lambda e, seen=problems: seen.append(str(e)))
        page.on("console", lambda m, seen=problems: seen.append(m.text) if m.type == "error"
                and "status of 404" not in m.text else None)
        response = page.goto(live_server.url + "/rules/nonsense")
        assert response is not None and response.status == 404
        page.wait_for_selector(".rules-text h1")
        assert page.inner_text(".rules-text h1") == title
        assert title in page.title()
        links = page.eval_on_selector_all(".rules-list a",
                                          "els => els.map(e => e.getAttribute('href'))")
        assert links == ["/rules/standard", "/rules/backup10", "/rules/lowball", "/rules/muggins"]
        assert not problems, problems
        context.close()
    ok = new_page(locale="da-DK").goto(live_server.url + "/rules/lowball")
    assert ok is not None and ok.status == 200


@pytest.mark.parametrize("locale", ["en-GB", "da-DK", "sv-SE"])
def test_the_new_parts_are_accessible_in_every_language(live_server: Any, new_page: Any,
                                                        browser: Any, axe_source: str,
                                                        locale: str) -> None:
    """axe-core finds nothing serious in what this issue added, in English, Danish and
    Swedish: the create form with Muggins disabled by Lowball, a partnership lobby with its
    teams, a table with an away player's countdown and the turn clock by the hand, and the
    page of a rules page that does not exist."""
    from test_comfort import axe

    page = new_page(locale=locale)
    page.goto(live_server.url + "/")
    page.wait_for_selector("#your-name")
    page.check("input[name=lowball]")
    axe(page, axe_source, f"{locale} start page, Lowball")
    creator = new_page(locale=locale)
    link = create_table(creator, live_server.url, "Pat", players="4p")
    page.goto(link)
    page.wait_for_selector("#teams-note")
    axe(page, axe_source, f"{locale} partnership lobby")

    created = httpx.post(f"{live_server.url}/api/rooms", json={
        "options": {"players": 2}, "room": {"turn_seconds": 60, "takeover_grace": 60}}).json()
    link = f"{live_server.url}/r/{created['room']}"
    sit(page, link, "Anna", seat=0)
    other = browser.new_context(locale=locale)
    ben = other.new_page()
    sit(ben, link, "Ben", seat=1)
    page.wait_for_selector("#table[data-phase=discard] #my-clock")
    other.close()
    page.wait_for_selector("#away-notice [data-away-seat='1']")
    axe(page, axe_source, f"{locale} table, away player and turn clock")

    context = browser.new_context(locale=locale)
    missing = context.new_page()
    missing.goto(live_server.url + "/rules/nonsense")
    missing.wait_for_selector(".rules-text h1")
    axe(missing, axe_source, f"{locale} missing rules page")
    context.close()
