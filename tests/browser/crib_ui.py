"""Driving the web client like a person: create a table, sit, pick cards, play.

(Imported by the browser tests as ``crib_ui``; pytest puts this directory on ``sys.path``.)
Every decision is made from what the page shows: the cards in the hand, which card buttons
are enabled. The page's root carries ``data-*`` attributes (phase, status, version, seat)
that only help the test wait for the next change.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from typing import Any

import engine

ALL_CARDS = [r + s for r in "A23456789TJQK" for s in "CDHS"]


def watch_frames(page: Any, *, sent: bool = False) -> list[dict[str, Any]]:
    """Record every JSON frame the page receives (or, with ``sent``, sends) on its
    WebSockets but the challenges connection every page holds (``social.js``,
    ``/ws?for=challenges``): to check for rejects, or what the page asked for."""
    frames: list[dict[str, Any]] = []

    def on_ws(ws: Any) -> None:
        if "for=challenges" in ws.url:
            return
        def on_frame(payload: Any) -> None:
            try:
                frames.append(json.loads(payload))
            except (TypeError, ValueError):
                pass

        ws.on("framesent" if sent else "framereceived", on_frame)

    page.on("websocket", on_ws)
    return frames


def create_table(page: Any, base: str, name: str, *, players: str = "2", target: str = "121",
                 muggins: bool = False, lowball: bool = False, backup10: bool = False,
                 hints: bool = True, seats: dict[int, str] | None = None) -> str:
    """Fill the start page and create a table; the creator lands on /r/<room> in seat 1.
    ``seats`` gives seats (0-based) to computers (``"standard"``/``"easy"``); with
    ``hints=False`` the room forbids hints. Returns the share link shown on the page (in
    the waiting room, or beside the board once the game has started)."""
    page.goto(base + "/")
    page.fill("#your-name", name)
    page.check(f"input[name=layout][value='{players}']")
    page.check(f"input[name=target][value='{target}']")
    for key, on in (("muggins", muggins), ("lowball", lowball), ("backup10", backup10),
                    ("hints", hints)):
        page.set_checked(f"input[name={key}]", on)
    for seat, choice in (seats or {}).items():
        page.select_option(f"#seat-{seat}", choice)
    page.click("button[type=submit]")
    page.wait_for_url("**/r/**")
    page.wait_for_selector("#table[data-conn=open]")
    page.wait_for_selector("#share-link")  # visible: a person can find and copy it
    return page.input_value("#share-link")


def sit(page: Any, link: str, name: str, seat: int) -> None:
    """Open a share link, type a name and take ``seat``."""
    page.goto(link)
    page.fill("#lobby-name", name)
    page.click(f"button[data-seat='{seat}']")
    page.wait_for_selector("#table[data-conn=open]")


def table(page: Any) -> dict[str, str]:
    """The table's data attributes (phase, status, version, seat, turn, game, deal)."""
    return page.eval_on_selector(
        "#table", "el => Object.fromEntries(Object.entries(el.dataset))")


def hand(page: Any) -> list[str]:
    """The cards in the hand, as shown."""
    return page.eval_on_selector_all(".hand .card", "els => els.map(e => e.dataset.card)")


def wait_for_change(page: Any, version: str, timeout: float = 20.0) -> None:
    """Wait until the room version shown by the page moves past ``version``."""
    page.wait_for_function(
        "v => { const t = document.querySelector('#table');"
        " return t && t.dataset.version !== v; }",
        arg=version, timeout=timeout * 1000)


def first_two(cards: list[str]) -> list[str]:
    """A simple discard: the first two cards shown."""
    return cards[:2]


def weakest_hand_discard(cards: list[str]) -> list[str]:
    """The discard that leaves the hand with the lowest average count over the starters
    this player cannot rule out — a person playing for zero hands (Back-up 10 test)."""
    best, best_avg = None, None
    unseen = [c for c in ALL_CARDS if c not in cards]
    for away in itertools.combinations(cards, 2):
        kept = [c for c in cards if c not in away]
        avg = sum(engine.score_hand(kept, s).total for s in unseen) / len(unseen)
        if best_avg is None or avg < best_avg:
            best, best_avg = list(away), avg
    assert best is not None
    return best


def act_once(page: Any, choose_discard: Callable[[list[str]], list[str]] = first_two, *,
             muggins: bool = False, undercount: bool = False) -> bool:
    """Do this person's next move if there is one: discard (pick the cards, then "lay
    away"), play the first card the page lets them play, or (``muggins``) announce and
    answer in the show. Returns whether it acted."""
    state = table(page)
    if state.get("review") == "show":
        # The last deal's show stays up until this player goes on to the next deal.
        page.click("#next-deal")
        page.wait_for_function("() => document.querySelector('#table').dataset.review !== 'show'")
        return True
    if state["phase"] == "discard" and page.locator("#send-crib").count():
        cards = hand(page)
        for card in choose_discard(cards):
            page.click(f".hand button.card[data-card='{card}']")
        page.click("#send-crib")
        wait_for_change(page, state["version"])
        return True
    if state["phase"] == "play" and state["turn"] == state["seat"]:
        playable = page.locator(".hand button.card:not([disabled])")
        if playable.count():
            card = playable.first.get_attribute("data-card")
            # Only legal cards are enabled: the count stays at 31 or under.
            count = int(page.inner_text("#count"))
            assert count + engine.Card.parse(card).value <= 31
            playable.first.click()
            wait_for_change(page, state["version"])
            return True
    if state["phase"] == "show" and muggins:
        return muggins_step(page, state, undercount=undercount)
    return False


READY_TO_ACT = """() => {
  const t = document.querySelector('#table');
  if (!t) return false;
  if (t.dataset.phase === 'discard') return document.querySelector('#send-crib') !== null;
  return t.dataset.phase === 'play' && t.dataset.turn === t.dataset.seat
    && document.querySelector('.hand button.card:not([disabled])') !== null;
}"""


def act_when_ready(page: Any, choose_discard: Callable[[list[str]], list[str]] = first_two,
                   *, timeout: float = 30.0) -> None:
    """Wait until this person's own page offers a move (the "lay away" button, or a card
    to play on their turn), then make it. For a move the test knows is due: another page
    may show the new deal before this one does, and ``act_once`` alone would then find
    nothing to do and return ``False``."""
    page.wait_for_function(READY_TO_ACT, timeout=timeout * 1000)
    assert act_once(page, choose_discard), table(page)


def muggins_step(page: Any, state: dict[str, str], *, undercount: bool) -> bool:
    """Under Muggins: announce the count of the pending hand you own (its true count, or
    one less with ``undercount``), or answer an opponent's announcement with the right call.
    The true count is worked out from the cards the page shows."""
    pending = page.locator(".pending-cards")
    if not pending.count():
        return False
    cards = pending.get_attribute("data-cards").split()
    starter = pending.get_attribute("data-starter")
    crib = pending.get_attribute("data-kind") == "crib"
    true = engine.score_hand(cards, starter, crib=crib).total
    if page.locator("#announce").count():
        page.fill("#announce", str(max(0, true - 1) if undercount else true))
        page.click("#announce-send")
        wait_for_change(page, state["version"])
        return True
    if page.locator("#answer-accept").count():
        announced = int(page.get_attribute(".muggins", "data-announced"))
        call = "muggins" if announced < true else "overcount" if announced > true else "accept"
        page.click(f"#answer-{call}")
        wait_for_change(page, state["version"])
        return True
    return False


def play_until_game_over(pages: list[Any], *, timeout: float = 90.0,
                         choose_discard: Callable[[list[str]], list[str]] = first_two,
                         on_step: Callable[[], None] | None = None) -> None:
    """Let every page act in turn until each shows game over."""
    end = time.monotonic() + timeout
    while True:
        if all(table(p)["status"] == "game_over" for p in pages):
            return
        acted = False
        for p in pages:
            acted = act_once(p, choose_discard) or acted
        if on_step:
            on_step()
        if not acted:
            time.sleep(0.05)
        assert time.monotonic() < end, "the game did not end in time"


def rejects(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rejected actions and errors among received frames."""
    return [f for f in frames if f.get("type") in ("reject", "error")]


def play_until(page: Any, done: Callable[[], bool], *, timeout: float = 60.0,
               choose_discard: Callable[[list[str]], list[str]] = first_two,
               muggins: bool = False) -> None:
    """One person (against computers) acts until ``done()``; the game must not end first
    unless ``done`` says so."""
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "did not get there in time"
        if not act_once(page, choose_discard, muggins=muggins):
            if table(page)["status"] == "game_over":
                assert done(), "the game ended first"
            time.sleep(0.05)


def log_lines(page: Any, *, story_only: bool = True) -> list[str]:
    """The play-by-play's lines; ``story_only`` leaves out the page's own (presence)."""
    selector = ".log li:not(.log-presence)" if story_only else ".log li"
    return page.eval_on_selector_all(selector, "els => els.map(e => e.innerText)")
