"""The replay page (issue 17), as outside testers and a newcomer found it:

* a replay file is checked whole before anything of it is shown: crafted files (NaN,
  negative and huge numbers, wrong types, missing fields, unknown events, unclean names,
  10 MB) are refused with a message in the reader's language, by the page and by
  ``protocol.replay`` alike; a name full of HTML shows as text;
* the page is laid out at 390 and 1280 px: no sideways scroll, the felt and the board
  within the width, side by side on a desktop, the felt first on a phone;
* the play-by-play follows the step: it shows the step's deal and highlights its lines;
* the end of a deal is laid out step by step: each hand, then the crib, cards and count
  side by side, in English, Danish and Swedish;
* stepping works by keyboard, the controls need no symbol font, and axe-core finds no
  serious violation in any of the three languages.

The replay files are played over the protocol (``replay_files``): a person against the
server's computer, as the table's download would hold them.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from replay_files import deal_of, played_replay, replay_steps, write
from test_comfort import axe
from test_languages import EnglishCheck

from protocol.replay import MAX_FILE_BYTES, ReplayError, check_replay_bytes

pytestmark = pytest.mark.browser

STATIC = Path(__file__).resolve().parents[2] / "server" / "static" / "i18n"
CATALOGUES = {lang: json.loads((STATIC / f"{lang}.json").read_text(encoding="utf-8"))
              for lang in ("en", "da", "sv")}
LOCALES = {"en": "en-GB", "da": "da-DK", "sv": "sv-SE"}
HOSTILE = "<img src=x onerror=alert(1)>"

VERDICT = """async (text) => {
  const m = await import('/static/js/replaycheck.js');
  try { await m.readReplayFile(new Blob([text])); return 'ok'; }
  catch (e) { return e.code || String(e); }
}"""


def python_verdict(raw: bytes) -> str:
    try:
        check_replay_bytes(raw)
    except ReplayError as err:
        return err.code
    return "ok"


def first(data: dict[str, Any], kind: str) -> dict[str, Any]:
    """The first event of ``kind`` in the file (to change it in place)."""
    return next(e for v in data["versions"] for e in v["events"] if e["type"] == kind)


def crafted(data: dict[str, Any]) -> list[tuple[str, str, bytes]]:
    """(what, expected verdict, the file's bytes) for files made from a good one."""
    cases: list[tuple[str, str, bytes]] = []

    def case(what: str, expected: str, change: Any = None, *, text: str | None = None) -> None:
        d = copy.deepcopy(data)
        if change:
            change(d)
        body = text if text is not None else json.dumps(d, ensure_ascii=False)
        cases.append((what, expected, body.encode("utf-8")))

    def put(kind: str, key: str, value: Any) -> Any:
        return lambda d: first(d, kind).__setitem__(key, value)

    def name(value: str) -> Any:
        return lambda d: d["seats"][0].__setitem__("name", value)

    case("the file as saved", "ok")
    case("a name made of HTML", "ok", name(HOSTILE))
    case("HTML in a seat_taken event", "ok", put("seat_taken", "name", HOSTILE))
    case("an emoji name with a joiner", "ok", name("👩\u200d💻 Ada"))
    case("a flag with tag characters", "ok",
         name("\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f Scot"))
    nan = copy.deepcopy(data)
    first(nan, "peg")["score_after"] = float("nan")
    case("NaN (not JSON)", "not_a_replay", text=json.dumps(nan))
    case("NaN as text", "damaged", put("play", "count", "NaN"))
    case("a negative score", "damaged", put("peg", "score_after", -3))
    case("a score of 10^9", "damaged", put("peg", "score_after", 10**9))
    case("a score past the target", "damaged",
         put("peg", "score_after", data["options"]["target"] + 1))
    case("10^9 points", "damaged", put("peg", "points", 10**9))
    case("deal 10^9", "damaged", put("deal", "deal_number", 10**9))
    case("a result of 10^9", "damaged", lambda d: d["result"]["scores"].__setitem__(0, 10**9))
    case("a seat as text", "damaged", put("play", "seat", "0"))
    case("a score with a fraction", "damaged", put("peg", "score_after", 5.5))
    case("a count that is true", "damaged", put("play", "count", True))
    saved = json.dumps(data)
    case("a seat written 0.0", "damaged", text=saved.replace('"seat": 0,', '"seat": 0.0,', 1))
    case("a game written 1e0", "damaged", text=saved.replace('"game": 1,', '"game": 1e0,', 1))
    case("a card that is not one", "damaged", put("play", "card", "10H"))
    case("a card in lower case", "damaged", put("starter", "card", "5h"))
    case("a seat no one sits in", "damaged", put("play", "seat", 3))
    case("a side no one plays", "damaged", put("peg", "side", 2))
    case("a play without its card", "damaged", lambda d: first(d, "play").pop("card"))
    case("no options", "damaged", lambda d: d.pop("options"))
    case("no versions", "damaged", lambda d: d.__setitem__("versions", []))
    case("an unknown event", "damaged",
         lambda d: d["versions"][3]["events"].append({"type": "explode"}))
    case("a field too many", "damaged", put("play", "html", "<b>x</b>"))
    case("a version missing", "damaged", lambda d: d["versions"].pop(4))
    case("a shown hand of five cards", "damaged",
         lambda d: first(d, "show_hand")["cards"].append(first(d, "starter")["card"]))
    case("a pile of 40 cards", "damaged", put("play", "pile", ["5H"] * 40))
    case("70 events in a version", "damaged",
         lambda d: d["versions"][3]["events"].extend([{"type": "go", "seat": 0}] * 70))
    case("one seat for two players", "damaged", lambda d: d["seats"].pop())
    case("seats out of order", "damaged", lambda d: d["seats"].reverse())
    case("partnerships with two players", "damaged",
         lambda d: d["options"].__setitem__("partnerships", True))
    case("other sides in game_start", "damaged", put("game_start", "sides", [0, 0]))
    case("a name that is too long", "damaged", name("W" * 33))
    case("a name of spaces", "damaged", name("   "))
    case("a name with spaces around it", "damaged", name(" Anna"))
    case("a name with a line break", "damaged", name("An\nna"))
    case("a name with a right-to-left override", "damaged", name("Anna\u202e"))
    case("a name of an invisible filler", "damaged", name("\u3164"))
    case("a lone zero-width joiner", "damaged", name("Anna\u200d"))
    case("an unclean name in seat_taken", "damaged", put("seat_taken", "name", "A\u0000B"))
    case("a newer format_version", "bad_version", lambda d: d.__setitem__("format_version", 2))
    case("format_version as text", "damaged", lambda d: d.__setitem__("format_version", "1"))
    case("another format", "not_a_replay", lambda d: d.__setitem__("format", "chess"))
    case("a list", "not_a_replay", text="[1, 2, 3]")
    case("not JSON", "not_a_replay", text="<html>")
    case("an empty file", "not_a_replay", text="")
    case("a __proto__ key", "damaged",
         text=json.dumps(data)[:-1] + ', "__proto__": {"format": "x"}}')
    return cases


@pytest.fixture
def replay_file(live_server: Any, tmp_path: Path) -> tuple[dict[str, Any], Path]:
    data = played_replay(live_server.url)
    return data, write(tmp_path / "cribbage.json", data)


def open_replay(page: Any, base: str, path: Path) -> None:
    page.goto(base + "/replay")
    page.set_input_files("#replay-file", str(path))
    page.wait_for_selector(".replay[data-step='0']")


def refused(page: Any, path: Path) -> str:
    """Open ``path`` on the replay page (already open) and return the refusal shown."""
    page.set_input_files("#replay-file", str(path))
    page.wait_for_selector("#replay .error[role=alert]")
    assert page.locator("#replay .replay").count() == 0
    text = page.inner_text("main")
    assert "NaN" not in text and "undefined" not in text
    return page.inner_text("#replay .error")


def test_crafted_replay_files_are_refused_by_the_page_and_the_schema(
        live_server: Any, new_page: Any, replay_file: Any, tmp_path: Path) -> None:
    """Every crafted file gets the same verdict from the page's checker and from
    ``protocol.replay``; refused files show only a message in the reader's language (and
    where the fault is), a hostile name shows as text, and a 10 MB file is refused by its
    size."""
    data, path = replay_file
    page = new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(live_server.url + "/replay")
    page.wait_for_selector("#replay-file")
    verdicts = []
    for what, expected, raw in crafted(data):
        browser = page.evaluate(VERDICT, raw.decode("utf-8"))
        verdicts.append((what, expected, python_verdict(raw), browser))
    wrong = [v for v in verdicts if not v[1] == v[2] == v[3]]
    assert not wrong, wrong
    assert sum(v[1] == "damaged" for v in verdicts) >= 30

    en = CATALOGUES["en"]
    cases = {what: raw for what, _, raw in crafted(data)}
    for what, key in (("a negative score", "damaged"), ("NaN (not JSON)", "not_a_replay"),
                      ("a score of 10^9", "damaged"), ("a newer format_version", "bad_version"),
                      ("a name with a right-to-left override", "damaged")):
        bad = tmp_path / "bad.json"
        bad.write_bytes(cases[what])
        message = refused(page, bad)
        assert message.splitlines()[0] == en[f"replay.{key}"], (what, message)
        if key == "damaged":
            assert "The first fault is at " in message, message
    assert "versions[" in message or "seats[" in message
    huge = tmp_path / "huge.json"
    padded = dict(data, padding="x" * (10 * 1024 * 1024))
    huge.write_text(json.dumps(padded), encoding="utf-8")
    assert huge.stat().st_size > MAX_FILE_BYTES
    assert python_verdict(huge.read_bytes()) == "too_large"
    assert refused(page, huge) == en["replay.too_large"]

    # A name made of HTML is a name: shown as text, nothing of it runs.
    hostile = tmp_path / "hostile.json"
    hostile.write_bytes(cases["HTML in a seat_taken event"])
    data_hostile = json.loads(cases["a name made of HTML"])
    data_hostile["versions"] = json.loads(cases["HTML in a seat_taken event"])["versions"]
    write(hostile, data_hostile)
    page.set_input_files("#replay-file", str(hostile))
    page.wait_for_selector(".replay[data-step='0']")
    page.click("#replay-last")
    names = page.eval_on_selector_all(".replay .legend-name", "els => els.map(e => e.textContent)")
    assert HOSTILE in names
    page.click("#replay-first")
    page.click("#replay-next")
    assert HOSTILE in page.inner_text(".replay-lines")
    assert page.locator(".replay img").count() == 0 and not dialogs
    assert "NaN" not in page.inner_text("main")

    # The same refusals in Danish and Swedish.
    bad = tmp_path / "bad.json"
    bad.write_bytes(cases["a negative score"])
    for lang in ("da", "sv"):
        other = new_page(locale=LOCALES[lang])
        other.goto(live_server.url + "/replay")
        other.wait_for_selector("#replay-file")
        message = refused(other, bad)
        assert message.splitlines()[0] == CATALOGUES[lang]["replay.damaged"]
        assert refused(other, huge) == CATALOGUES[lang]["replay.too_large"]


BOXES = """() => {
  const box = (sel) => { const b = document.querySelector(sel).getBoundingClientRect();
    return { x: b.left, y: b.top + scrollY, w: b.width, h: b.height, right: b.right,
             bottom: b.bottom + scrollY }; };
  // Anything whose content is wider than its box (a long name that does not wrap).
  const overflowing = [...document.querySelectorAll('.replay *')].filter((el) =>
    !el.closest('.sr-only') && el.scrollWidth > el.clientWidth + 1
    && getComputedStyle(el).display !== 'inline'
    && getComputedStyle(el).textOverflow !== 'ellipsis')
    .map((el) => `${el.tagName}.${el.className}: ${el.textContent.slice(0, 40)}`);
  return { scrollWidth: document.documentElement.scrollWidth, overflowing,
    controls: box('.replay-controls'), felt: box('.replay-felt'), board: box('.replay-board'),
    log: box('.replay-log'), grid: box('.replay-grid'), panel: box('.replay'),
    svg: box('#board-svg') };
}"""


def go_to(page: Any, step: int) -> None:
    """Jump with the slider (as a drag would), then wait for the step to show."""
    page.eval_on_selector("#replay-step", """(el, n) => { el.value = String(n);
      el.dispatchEvent(new Event('input', { bubbles: true })); }""", step)
    page.wait_for_selector(f".replay[data-step='{step}']")


@pytest.mark.parametrize("phone", [True, False], ids=["phone-390", "desktop-1280"])
def test_the_replay_is_laid_out_on_a_phone_and_a_desktop(
        live_server: Any, new_page: Any, tmp_path: Path, screenshot_dir: Path,
        phone: bool) -> None:
    """With a 32-character name, at the start, in the play, in the show, at the crib and
    at the end: no sideways scroll; the controls, the felt, the board and the log within
    the width; on a desktop the board, the felt and the log side by side in one row, on a
    phone the felt right under the controls, then the board, then the log, each as wide
    as the page's column, with no big empty area between them."""
    data = played_replay(live_server.url, name="W" * 32)
    path = write(tmp_path / "cribbage.json", data)
    steps = replay_steps(data)
    play = next(i + 1 for i, s in enumerate(steps) if any(e["type"] == "play" for e in s["events"]))
    shows = [i + 1 for i, s in enumerate(steps) if s["events"][0]["type"] == "show_hand"]
    page = new_page(phone=phone)
    open_replay(page, live_server.url, path)
    kind = "phone" if phone else "desktop"
    for step in (0, play + 3, shows[0], shows[2], len(steps)):
        go_to(page, step)
        b = page.evaluate(BOXES)
        b["width"] = 390 if phone else 1280
        where = f"{kind} step {step}: {b}"
        assert b["scrollWidth"] <= b["width"] and not b["overflowing"], where
        for part in ("controls", "felt", "board", "log", "panel", "svg"):
            assert b[part]["x"] >= 0 and b[part]["right"] <= b["width"] + 0.5, (part, where)
        assert b["felt"]["y"] - b["controls"]["bottom"] < 90, where
        if phone:
            assert b["felt"]["bottom"] <= b["board"]["y"] <= b["felt"]["bottom"] + 24, where
            assert b["board"]["bottom"] <= b["log"]["y"] <= b["board"]["bottom"] + 24, where
            for part in ("felt", "board", "log"):
                assert abs(b[part]["w"] - b["grid"]["w"]) < 1, (part, where)
        else:
            assert abs(b["felt"]["y"] - b["board"]["y"]) < 1, where
            assert abs(b["log"]["y"] - b["felt"]["y"]) < 1, where
            assert b["board"]["right"] < b["felt"]["x"] < b["felt"]["right"] < b["log"]["x"], where
            assert b["felt"]["w"] >= 0.4 * b["grid"]["w"] and b["svg"]["w"] >= 300, where
        # No big empty area: the panel ends where its tallest column ends.
        tallest = max(b[p]["bottom"] for p in ("felt", "board", "log"))
        assert b["panel"]["bottom"] - tallest < 40, where
        if step == shows[0]:
            page.screenshot(path=str(screenshot_dir / f"replay-long-name-{kind}.png"),
                            full_page=True)
    # Long names wrap or are cut with an ellipsis, never wider than their box.
    assert page.eval_on_selector_all(
        ".replay .legend-name", "els => els.every(e => e.getBoundingClientRect().right"
        " <= e.closest('.replay-board').getBoundingClientRect().right)")


FOLLOW = """(n) => {
  const box = document.querySelector('.replay-lines').getBoundingClientRect();
  const now = [...document.querySelectorAll('.replay-lines li.now')];
  const inside = (li) => { const r = li.getBoundingClientRect();
    return r.top >= box.top - 1 && r.bottom <= box.bottom + 1; };
  return now.length === 0 ? n === 0 : (now.every((li) => li.dataset.step === String(n))
    && inside(now[0]) && inside(now[now.length - 1]));
}"""


SILENT = {"game_commitment", "deal_commitment"}


def test_the_play_by_play_follows_the_step(live_server: Any, new_page: Any,
                                           replay_file: Any) -> None:
    """Stepping on, back, with the slider's keys, to the end and to the middle: the log's
    heading names the step's deal, exactly the step's lines are highlighted (one per
    event), and they are in view — at the last step the game's end, in the last deal."""
    data, path = replay_file
    steps = replay_steps(data)
    page = new_page()
    open_replay(page, live_server.url, path)

    def check(n: int) -> None:
        page.wait_for_selector(f".replay[data-step='{n}']")
        page.wait_for_function(FOLLOW, arg=n)
        now = page.eval_on_selector_all(".replay-lines li.now",
                                        "els => els.map(e => e.dataset.step)")
        # One line per event, but the commitments to the shuffles (docs/rules.md "The
        # shuffle"), which the play-by-play does not tell.
        told = [e for e in steps[n - 1]["events"] if e["type"] not in SILENT] if n else []
        assert len(now) == len(told), (n, now)
        lines = page.eval_on_selector_all(".replay-lines li",
                                          "els => els.map(e => Number(e.dataset.step))")
        assert lines == sorted(lines) and (not lines or lines[-1] == n)
        deal = deal_of(steps, n)
        assert page.get_attribute("#replay-log-h", "data-deal") == str(deal)
        if deal:
            assert page.inner_text("#replay-log-h").endswith(f"deal {deal}".upper()) or \
                page.text_content("#replay-log-h").endswith(f"deal {deal}")
        if n:
            headline = page.inner_text("#replay-now")
            texts = page.eval_on_selector_all(".replay-lines li.now",
                                              "els => els.map(e => e.innerText)")
            assert headline in texts or "counts" in headline or "nineteen" in headline, \
                (headline, texts)

    check(0)
    for n in (1, 2, 3):
        page.click("#replay-next")
        check(n)
    page.click("#replay-prev")
    check(2)
    page.focus("#replay-step")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    check(4)
    page.click("#replay-last")
    check(len(steps))
    assert page.locator(".replay-lines li.now.log-game_over").count() == 1
    middle = len(steps) // 2
    go_to(page, middle)
    check(middle)
    page.click("#replay-first")
    check(0)


@pytest.mark.parametrize("lang", ["en", "da", "sv"])
def test_the_show_is_laid_out_step_by_step(live_server: Any, new_page: Any, tmp_path: Path,
                                           screenshot_dir: Path, lang: str) -> None:
    """The end of the first deal, step by step: the play's last card; then each hand and
    the crib on the felt, one more each step, the one just counted marked, cards and count
    side by side and said in the reader's language ("fifteen two" / "femten to" / "femton
    två"); then the next deal. The page holds no English in Danish or Swedish."""
    data = played_replay(live_server.url, seed=3)
    path = write(tmp_path / "cribbage.json", data)
    steps = replay_steps(data)
    cat = CATALOGUES[lang]
    page = new_page(locale=LOCALES[lang])
    open_replay(page, live_server.url, path)
    start = next(i for i, s in enumerate(steps) if s["events"][0]["type"] == "show_hand")
    go_to(page, start)  # the play's last step: the count, no show yet
    assert page.locator(".replay-show").count() == 0
    shown = 0
    for n in range(start + 1, start + 4):
        page.click("#replay-next")
        page.wait_for_selector(f".replay[data-step='{n}']")
        ev = steps[n - 1]["events"][0]
        assert ev["type"] == "show_hand"
        shown += 1
        entries = page.locator(".replay-felt .replay-show .show-entry")
        assert entries.count() == shown
        current = page.locator(".replay-show .show-entry.current[aria-current=step]")
        assert current.count() == 1
        assert current.get_attribute("data-seat") == str(ev["seat"])
        assert current.get_attribute("data-kind") == ev["kind"]
        assert current.locator(".card").count() == 5  # four cards + the starter
        assert current.locator(".show-total").inner_text().split()[-1] == str(ev["total"])
        say = current.locator(".say").inner_text()
        if ev["total"] == 0:
            assert say == cat["say.nineteen_line"]
        elif any(i["kind"] == "fifteen" for i in ev["items"]):
            two = cat["say.fifteen"].replace("{total}", cat["words.numbers"][2])
            assert say.startswith(two[0].upper() + two[1:]), say
        headline = page.inner_text("#replay-now")
        assert current.locator(".show-who").inner_text() in headline
        assert (str(ev["total"]) if ev["total"] else cat["words.numbers"][19]) in headline.lower()
        # The cards and the words side by side, within the felt.
        cards = current.locator(".show-cards").bounding_box()
        words = current.locator(".show-words").bounding_box()
        felt = page.locator(".replay-felt").bounding_box()
        assert cards["x"] + cards["width"] <= words["x"]
        assert words["x"] + words["width"] <= felt["x"] + felt["width"]
    assert ev["kind"] == "crib"
    if lang == "en":
        page.screenshot(path=str(screenshot_dir / "replay-desktop.png"))
    if lang != "en":
        EnglishCheck(lang, [data["seats"][0]["name"]])(page, "the replay's show")
    page.click("#replay-next")
    page.wait_for_selector(f".replay[data-step='{start + 4}']")
    assert steps[start + 3]["events"][0]["type"] == "deal"
    assert page.locator(".replay-show").count() == 0
    deal_two = cat["replay.deal"]["single"].split("{n}")[0] + "2"
    assert page.inner_text(".replay-deal").startswith(deal_two)
    if lang != "en":
        page.click("#replay-last")
        EnglishCheck(lang, [data["seats"][0]["name"]])(page, "the replay's end")


@pytest.mark.parametrize("lang", ["en", "da", "sv"])
def test_stepping_by_keyboard_and_accessible(live_server: Any, new_page: Any, replay_file: Any,
                                             axe_source: str, screenshot_dir: Path,
                                             lang: str) -> None:
    """The file opened, Next has the focus: Enter and Space step on, the arrow keys step,
    Home and End jump, the slider has its own keys; focus stays in the controls when a
    button it was on is disabled. The step buttons draw their symbols (SVG) and say their
    names in words. axe-core: no serious violation at the start, in the show and at the
    end (and on a phone in English)."""
    data, path = replay_file
    total = len(replay_steps(data))
    page = new_page(locale=LOCALES[lang])
    open_replay(page, live_server.url, path)
    assert page.evaluate("document.activeElement.id") == "replay-next"
    passes = axe(page, axe_source, f"{lang}: the replay at the start")
    page.keyboard.press("Enter")
    page.wait_for_selector(".replay[data-step='1']")
    page.keyboard.press(" ")
    page.wait_for_selector(".replay[data-step='2']")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(".replay[data-step='3']")
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector(".replay[data-step='2']")
    page.keyboard.press("End")
    page.wait_for_selector(f".replay[data-step='{total}']")
    # Next and End are disabled now: the focus stayed among the controls.
    assert page.evaluate("!!document.activeElement.closest('.replay-controls')")
    passes += axe(page, axe_source, f"{lang}: the replay at the end")
    page.keyboard.press("Home")
    page.wait_for_selector(".replay[data-step='0']")
    # With nothing focused (a click on the felt), the keys still step.
    page.click("#replay-now")
    assert page.evaluate("!document.activeElement.closest('.replay')")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector(".replay[data-step='1']")
    page.keyboard.press("Home")
    page.wait_for_selector(".replay[data-step='0']")
    page.focus("#replay-step")
    page.keyboard.press("End")
    page.wait_for_selector(f".replay[data-step='{total}']")
    page.keyboard.press("Home")
    page.wait_for_selector(".replay[data-step='0']")
    steps = replay_steps(data)
    show = next(i + 1 for i, s in enumerate(steps) if s["events"][0]["type"] == "show_hand")
    go_to(page, show)
    passes += axe(page, axe_source, f"{lang}: the replay in the show")
    assert passes > 0
    for button in ("first", "prev", "next", "last"):
        sel = f"#replay-{button}"
        assert page.locator(f"{sel} svg[aria-hidden=true]").count() == 1
        label = page.inner_text(sel).strip()
        assert label == CATALOGUES[lang][f"replay.{button}"], label
        assert re.fullmatch(r"[^\W\d_]+", label), label  # words, no symbols
    if lang == "en":
        phone = new_page(phone=True)
        open_replay(phone, live_server.url, path)
        go_to(phone, show + 2)
        axe(phone, axe_source, "the replay on a phone")
        phone.evaluate("document.querySelector('.replay').scrollIntoView()")
        phone.screenshot(path=str(screenshot_dir / "replay-phone.png"))
