"""Hints that keep Muggins honest, and a table that is accessible and comfortable (issue 12):
axe-core finds no serious or critical violation on the start page, the table, the rules
and the replay, at desktop and phone size and in the dark theme; card names read as they
are seen; the log is reachable by keyboard; the table page has one h1; the dark theme
follows prefers-color-scheme; sounds are made in the page, off by default, with a switch."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from crib_ui import act_once, create_table, play_until, table, watch_frames

pytestmark = pytest.mark.browser

SERIOUS = ("serious", "critical")


def axe(page: Any, source: str, where: str) -> int:
    """Run axe-core (all its default rules, and the experimental check that an accessible
    name contains the visible text); fail on serious or critical violations. Returns how
    many rules passed."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        # Evaluated through the DevTools protocol, which the page's Content-Security-Policy
        # (no inline script) does not govern; a <script> tag would be refused.
        page.evaluate(f"(() => {{ {source}\n}})(); typeof window.axe")
    result = page.evaluate("""async () => {
      const rules = { 'label-content-name-mismatch': { enabled: true } };
      const r = await axe.run(document, { rules });
      return { passes: r.passes.length, violations: r.violations.map((v) => ({ id: v.id,
        impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ') + ' :: '
          + (n.failureSummary || '').slice(0, 200)) })) };
    }""")
    bad = [v for v in result["violations"] if v["impact"] in SERIOUS]
    assert not bad, f"{where}: {bad}"
    return result["passes"]


def test_a_muggins_hint_gives_no_count(live_server: Any, new_page: Any) -> None:
    """At "announce your count", the hint says how to count and what is counted, never the
    count; answering the computer's announcement, it names only the announced number."""
    me = new_page()
    frames = watch_frames(me)
    create_table(me, live_server.url, "Pat", muggins=True, seats={1: "standard"})
    me.wait_for_selector("#table[data-phase=discard]")
    play_until(me, lambda: me.locator("#announce").count() > 0
               or me.locator("#answer-accept").count() > 0, muggins=False)
    asked = {"announce": False, "answer": False}
    end = time.monotonic() + 60
    while not all(asked.values()):
        assert time.monotonic() < end, asked
        kind = "announce" if me.locator("#announce").count() else \
            "answer" if me.locator("#answer-accept").count() else None
        if kind and not asked[kind]:
            pending = me.locator(".pending-cards")
            # The show panel names the deal being counted (not the one before).
            assert me.get_attribute("#show-h", "data-deal") == table(me)["deal"]
            assert f"deal {table(me)['deal']}" in me.text_content("#show-h")
            announced = me.get_attribute(".muggins", "data-announced") if kind == "answer" else None
            me.click("#hint")
            me.wait_for_selector(".hint .hint-muggins")
            text = me.inner_text(".hint")
            digits = set(re.findall(r"\d+", text))
            # Only the rules' own numbers (2 for a fifteen...) and, answering, the number
            # everyone heard; nothing that depends on these cards.
            rule_numbers = {"2", "15", "10", "6", "12", "1", "4", "5"}
            assert digits <= rule_numbers | ({announced} if announced else set()), text
            if kind == "announce":
                assert "never gives the count" in text
            else:
                assert f"{announced} was announced" in text
            hint = [f for f in frames if f.get("type") == "hint"][-1]["suggestion"]
            assert hint["kind"] == kind and hint["best"] is None
            assert "true_count" not in hint and "call" not in hint
            assert hint["counting"] == pending.get_attribute("data-kind")
            asked[kind] = True
        if not act_once(me, muggins=True):
            time.sleep(0.05)
        if table(me)["status"] == "game_over":
            break
    assert all(asked.values()), asked


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_axe_finds_nothing_serious(live_server: Any, new_page: Any, axe_source: str,
                                   phone: bool) -> None:
    """The start page, the rules, the table (discard, the play with a show laid out and the
    whole game open, the show review) and the replay: no serious or critical violation."""
    page = new_page(phone=phone, bypass_csp=True)  # axe is added as an inline script
    page.goto(live_server.url + "/")
    page.wait_for_selector("#your-name")
    passes = axe(page, axe_source, "start page")
    page.goto(live_server.url + "/rules/backup10")
    page.wait_for_selector("#rules h1")
    passes += axe(page, axe_source, "rules page")
    create_table(page, live_server.url, "Pat", muggins=True, seats={1: "standard"})
    page.wait_for_selector("#table[data-phase=discard]")
    passes += axe(page, axe_source, "table, discard")
    # One h1 on the table page; card buttons read what they show, then their name.
    assert page.locator("h1").count() == 1
    for card in page.query_selector_all(".hand button.card"):
        label = card.get_attribute("aria-label")
        shown = re.sub(r"\s+", "", card.inner_text())
        assert label.replace(" ", "").startswith(shown), (label, shown)
    seen: set[str] = set()
    end = time.monotonic() + 90
    while len(seen) < 3:
        assert time.monotonic() < end, seen
        state = table(page)
        stage = None
        if state.get("review") == "show":
            stage = "review"
        elif state["phase"] == "show" and page.locator(".muggins").count():
            stage = "muggins"
        elif state["phase"] == "play" and page.locator(".show-panel .show-entry").count():
            stage = "play"
        if stage and stage not in seen:
            seen.add(stage)
            if stage == "play":
                page.click("#whole-game")
                page.wait_for_selector(".whole-game")
            passes += axe(page, axe_source, f"table, {stage}")
        if not act_once(page, muggins=True):
            time.sleep(0.05)
    # The log can be reached with the keyboard (a focusable scrolling region).
    page.focus("#status")  # start from the table
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('log')"):
            break
    else:
        pytest.fail("the play-by-play is not reachable with Tab")
    assert page.evaluate("document.activeElement.getAttribute('role')") == "log"
    assert page.locator("ol[role=log]").count() == 0
    page.goto(live_server.url + "/replay")
    page.wait_for_selector("#replay-file")
    passes += axe(page, axe_source, "replay page")
    assert passes > 100


def test_dark_theme_and_sounds(live_server: Any, new_page: Any, axe_source: str) -> None:
    """With prefers-color-scheme: dark the page is dark (and axe still finds nothing
    serious: contrast holds). Sounds are off by default; switched on (remembered), laying
    cards and pegging make sounds in the page with WebAudio."""
    page = new_page(color_scheme="dark", bypass_csp=True)  # axe: an inline script
    # Count the sounds the page makes (oscillators and noise buffers started).
    page.add_init_script("""(() => {
      window.__sounds = 0;
      const C = window.AudioContext;
      window.AudioContext = class extends C {
        createOscillator() { const o = super.createOscillator(); const s = o.start.bind(o);
          o.start = (...a) => { window.__sounds += 1; return s(...a); }; return o; }
        createBufferSource() { const o = super.createBufferSource(); const s = o.start.bind(o);
          o.start = (...a) => { window.__sounds += 1; return s(...a); }; return o; }
      };
    })();""")
    create_table(page, live_server.url, "Pat", seats={1: "standard"})
    page.wait_for_selector("#table[data-phase=discard]")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    rgb = [int(x) for x in re.findall(r"\d+", background)[:3]]
    assert sum(rgb) / 3 < 60, background
    axe(page, axe_source, "table, dark")
    other = new_page(phone=True, color_scheme="dark", bypass_csp=True)
    other.goto(live_server.url + "/")
    other.wait_for_selector("#your-name")
    axe(other, axe_source, "start page, dark, phone")
    assert page.get_attribute("#sound", "aria-pressed") == "false"
    play_until(page, lambda: table(page)["phase"] == "play"
               and page.locator(".pile li").count() >= 2)
    assert page.evaluate("window.__sounds") == 0  # off by default: silence
    page.click("#sound")
    assert page.get_attribute("#sound", "aria-pressed") == "true"
    start = table(page)["deal"]
    play_until(page, lambda: table(page)["deal"] != start)
    assert page.evaluate("window.__sounds") > 0
    page.reload()
    page.wait_for_selector("#table[data-conn=open]")
    assert page.get_attribute("#sound", "aria-pressed") == "true"
    page.click("#sound")
    assert page.get_attribute("#sound", "aria-pressed") == "false"


def test_near_the_end_a_hint_gives_the_chance_to_win(live_server: Any, new_page: Any) -> None:
    """A Danish player against the expert in a game to 61 (issue 22 point 5): once a side is
    within reach of the game hole, the hint's discards each say their chance to win (they
    are ranked by it), and the hint for a card to play says its chance to win and never
    calls it points over the rest of the play — also when only one card can be played."""
    da = json.loads((Path(__file__).resolve().parents[2] / "server" / "static" / "i18n"
                     / "da.json").read_text(encoding="utf-8"))
    win_words = da["hint.win"].split("{win}")[0]  # "Chance for at vinde: omkring "
    # "chance for at vinde omkring ": a discard's chance, said before its points
    choice_words = da["hint.choice_win"].split("{win}")[0].split("{cards}: ")[1]
    never_words = da["hint.play_why_none"].split("{points}")[1]  # " point nu, og den næste..."
    # "Resten af spillet igennem ": the margin over the play, worth, even or behind
    value_words = os.path.commonprefix([da["hint.play_value"], da["hint.play_value_even"],
                                        da["hint.play_value_behind"]])
    assert len(value_words) > 10, value_words
    me = new_page(locale="da-DK")
    frames = watch_frames(me)
    create_table(me, live_server.url, "Mette", target="61", seats={1: "expert"})

    def ask() -> dict[str, Any]:
        """Click the hint and wait for its answer (the suggestion) and its text."""
        before = sum(f.get("type") == "hint" for f in frames)
        me.click("#hint")
        until = time.monotonic() + 20
        while sum(f.get("type") == "hint" for f in frames) == before:
            assert time.monotonic() < until, "no hint came"
            me.wait_for_timeout(50)
        me.wait_for_selector(".hint")
        return [f for f in frames if f.get("type") == "hint"][-1]["suggestion"]

    checked: dict[str, Any] = {}
    end = time.monotonic() + 120
    while len(checked) < 2:
        assert time.monotonic() < end, f"not near the end in time: {checked}"
        state = table(me)
        assert state["status"] != "game_over", checked
        mine = state["phase"] == "play" and state["turn"] == state["seat"]
        if ("discard" not in checked and state["phase"] == "discard"
                and me.locator("#send-crib").count() and me.locator("#hint").count()):
            hint = ask()
            if "win" in hint["choices"][0]:
                me.wait_for_selector(".hint-choices li")
                items = me.eval_on_selector_all(".hint-choices li",
                                                "els => els.map(e => e.innerText)")
                assert len(items) == 3 and all(choice_words in i for i in items), items
                # Shown best first, by the chance to win each one names.
                chances = [float(re.search(r"omkring ([\d,]+) %", i).group(1).replace(",", "."))
                           for i in items]
                assert chances == sorted(chances, reverse=True), items
                checked["discard"] = hint
        elif ("play" not in checked and "discard" in checked and mine
              and me.locator(".hand button.card:not([disabled])").count()
              and me.locator("#hint").count()):
            hint = ask()
            assert "win" in hint["choices"][0], hint
            me.wait_for_function("w => document.querySelector('.hint').innerText.includes(w)",
                                 arg=win_words)
            text = me.inner_text(".hint")
            assert value_words not in text and " point værd mod" not in text, text
            # A next player who can never play on it is not given a reply "worth 0".
            never = hint["choices"][0]["stuck"] >= 1
            assert (never_words in text) == never and "100 %" not in text, text
            checked["play"] = hint
        if not act_once(me):
            time.sleep(0.05)
