"""The cribbage board (issue 12): an SVG board with 121 holes (61 for short games) in streets,
each side its colour, front and back pegs in holes, the skunk line(s) and the game hole —
drawn right at 0, mid-game, at the skunk line and at 121 (and 61), and fitting a phone.

The board module is drawn in the real page (the start page loads the modules and the
catalogue) from views made for each case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

DRAW = """async ([view, names]) => {
  const { board } = await import('/static/js/board.js');
  const { makeNames } = await import('/static/js/describe.js');
  const seats = names.map((name, seat) => ({ seat, name, kind: 'human', taken: true }));
  let host = document.querySelector('#board-host');
  if (!host) {
    host = document.createElement('div');
    host.id = 'board-host';
    host.style.maxWidth = '100%';
    // outside #app: the start page draws itself again when its lobby of public tables
    // changes, which would take a board drawn inside it away
    document.body.prepend(host);
  }
  host.replaceChildren(board(view, makeNames(seats, view, null), { lowball: false }));
  const svg = document.querySelector('#board-svg');
  const box = svg.getBoundingClientRect();
  const least = (els, size) => Math.min(...[...els].map(size));
  const width = (e) => e.getBoundingClientRect().width;
  const font = (e) => parseFloat(getComputedStyle(e).fontSize);
  const at = (sel) => [...svg.querySelectorAll(sel)].map((c) => ({
    hole: Number(c.dataset.hole),
    side: c.dataset.side === undefined ? null : Number(c.dataset.side),
    x: Number(c.getAttribute('cx')), y: Number(c.getAttribute('cy')),
    inside: (() => { const r = c.getBoundingClientRect();
      return r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.top >= box.top - 0.5
        && r.bottom <= box.bottom + 0.5; })(),
  }));
  return {
    holes: at('.lane .hole[data-hole]'), game: at('.game-hole'), front: at('.peg.front'),
    back: at('.peg.back'), skunk: [...svg.querySelectorAll('.skunk-line')].map((l) => ({
      after: Number(l.dataset.after), kind: l.dataset.kind, x: Number(l.getAttribute('x1')),
      y1: Number(l.getAttribute('y1')), y2: Number(l.getAttribute('y2')) })),
    width: box.width, page: document.documentElement.clientWidth, per: Number(svg.dataset.perRow),
    holePx: least(svg.querySelectorAll('.lane .hole[data-hole]'), width),
    pegPx: least(svg.querySelectorAll('.peg.front'), width),
    backPx: least(svg.querySelectorAll('.peg.back'), width),
    scorePx: least(document.querySelectorAll('#board-host .legend-score strong'), font),
    namePx: least(document.querySelectorAll('#board-host .legend-name'), font),
    colours: [...svg.querySelectorAll('.peg.front')].map((p) => getComputedStyle(p).fill),
  };
}"""


def view(target: int, scores: list[int], previous: list[int], game: int) -> dict[str, Any]:
    sides = list(range(len(scores)))
    return {"target": target, "scores": scores, "previous_scores": previous, "sides": sides,
            "dealer": 0, "game_number": game}


def hole(drawn: dict[str, Any], side: int, n: int) -> tuple[float, float]:
    """The centre of hole ``n`` of ``side``'s lane (lanes are drawn in side order)."""
    per = [h for h in drawn["holes"] if h["hole"] == n]
    return per[side]["x"], per[side]["y"]


def draw(page: Any, v: dict[str, Any], names: list[str]) -> dict[str, Any]:
    return page.evaluate(DRAW, [v, names])


@pytest.mark.parametrize("phone", [False, True], ids=["desktop", "phone"])
def test_the_board_at_0_mid_game_the_skunk_line_and_121(live_server: Any, new_page: Any,
                                                        screenshot_dir: Path,
                                                        phone: bool) -> None:
    page = new_page(phone=phone)
    page.goto(live_server.url + "/")
    page.wait_for_selector("main")
    names = ["Anna", "Ben"]

    # At 0: every lane has 120 holes numbered 1..120 (and a start hole), one shared game
    # hole 121; both pegs of each side sit in the start holes.
    d = draw(page, view(121, [0, 0], [0, 0], 1), names)
    numbers = sorted(h["hole"] for h in d["holes"])
    assert numbers == sorted(list(range(0, 121)) * 2)
    assert [g["hole"] for g in d["game"]] == [121]
    assert [p["hole"] for p in d["front"]] == [0, 0] and [p["hole"] for p in d["back"]] == [0, 0]
    for p in d["front"]:
        assert (p["x"], p["y"]) == hole(d, p["side"], 0)
    assert all(p["inside"] for p in d["front"] + d["back"] + d["game"])
    # Each side its colour.
    assert len(set(d["colours"])) == 2
    # It fits the page (a phone too).
    assert d["width"] <= d["page"]
    # Skunk lines: after 90 (skunk) and after 60 (double skunk), each across its street's
    # end, beyond the last hole of that street.
    skunk = {s["kind"]: s for s in d["skunk"]}
    assert skunk["skunk"]["after"] == 90 and skunk["double"]["after"] == 60
    x90, y90 = hole(d, 0, 90)
    x89, _ = hole(d, 0, 89)
    assert skunk["skunk"]["x"] > x90 > x89  # street 3 runs left to right and ends at 90
    assert skunk["skunk"]["y1"] < y90 < skunk["skunk"]["y2"]
    x60, _ = hole(d, 0, 60)
    x59, _ = hole(d, 0, 59)
    if (60 - 1) // d["per"] % 2:  # desktop: street 2 runs back, right to left
        assert skunk["double"]["x"] < x60 < x59
    else:  # phone, rows of 20: the third row runs left to right and ends at 60
        assert skunk["double"]["x"] > x60 > x59

    # Mid-game: front pegs in the holes of the scores, back pegs where they were.
    d = draw(page, view(121, [47, 33], [40, 29], 2), names)
    front = {p["side"]: p for p in d["front"]}
    back = {p["side"]: p for p in d["back"]}
    assert (front[0]["x"], front[0]["y"]) == hole(d, 0, 47) and front[0]["hole"] == 47
    assert (back[0]["x"], back[0]["y"]) == hole(d, 0, 40) and back[0]["hole"] == 40
    assert (front[1]["x"], front[1]["y"]) == hole(d, 1, 33)
    assert (back[1]["x"], back[1]["y"]) == hole(d, 1, 29)
    # Hole by hole: five holes to a block, a wider gap between blocks.
    xs = [hole(d, 0, n)[0] for n in range(1, 12)]
    steps = [round(b - a, 3) for a, b in zip(xs, xs[1:], strict=False)]
    assert steps[:4] == [steps[0]] * 4 and steps[4] > steps[0]

    # At the skunk line: 90 is the last hole before it, 91 the first past it.
    d = draw(page, view(121, [90, 91], [85, 80], 3), names)
    front = {p["side"]: p for p in d["front"]}
    skunk = next(s for s in d["skunk"] if s["kind"] == "skunk")
    assert front[0]["x"] < skunk["x"] and front[0]["hole"] == 90
    assert front[1]["hole"] == 91 and (front[1]["x"], front[1]["y"]) == hole(d, 1, 91)

    # At 121: the winner's front peg in the game hole, on the board (not past its end).
    d = draw(page, view(121, [121, 95], [117, 90], 4), names)
    front = {p["side"]: p for p in d["front"]}
    game = d["game"][0]
    assert front[0]["hole"] == 121 and (front[0]["x"], front[0]["y"]) == (game["x"], game["y"])
    assert all(p["inside"] for p in d["front"] + d["back"])
    if not phone:
        page.locator("#board-host .board").screenshot(path=str(screenshot_dir / "board.png"))

    # A short game: 60 holes a lane, the game hole 61, one skunk line after 30; four sides.
    d = draw(page, view(61, [61, 30, 31, 0], [55, 28, 25, 0], 5), ["A", "B", "C", "D"])
    numbers = sorted(h["hole"] for h in d["holes"])
    assert numbers == sorted(list(range(0, 61)) * 4)
    assert [g["hole"] for g in d["game"]] == [61]
    assert [(s["after"], s["kind"]) for s in d["skunk"]] == [(30, "skunk")]
    front = {p["side"]: p for p in d["front"]}
    assert (front[0]["x"], front[0]["y"]) == (d["game"][0]["x"], d["game"][0]["y"])
    if d["per"] == 30:
        # 30 ends the first street, before the line; 31 starts the second, back past it.
        assert front[1]["y"] < d["skunk"][0]["y2"] < front[2]["y"]
        assert front[1]["x"] < d["skunk"][0]["x"] and front[2]["x"] < d["skunk"][0]["x"]
    else:
        # Rows of 20: 30 and 31 share the second row (it runs back), the line between them.
        assert front[2]["x"] < d["skunk"][0]["x"] < front[1]["x"]
    assert len(set(d["colours"])) == 4
    assert all(p["inside"] for p in d["front"] + d["back"])

    # A move: the front peg steps from hole to hole and ends in the new score's hole (the
    # back peg jumps to where the front peg stood).
    draw(page, view(121, [10, 0], [0, 0], 6), names)
    d = draw(page, view(121, [18, 0], [10, 0], 6), names)
    target_xy = hole(d, 0, 18)
    page.wait_for_function(
        "([x, y]) => { const p = document.querySelector('#board-svg [data-peg=\"front-0\"]');"
        " return Number(p.getAttribute('cx')) === x && Number(p.getAttribute('cy')) === y; }",
        arg=list(target_xy))
    back = {p["side"]: p for p in d["back"]}
    assert (back[0]["x"], back[0]["y"]) == hole(d, 0, 10)


def test_the_back_peg_never_stands_ahead_of_the_front_peg(live_server: Any,
                                                          new_page: Any) -> None:
    """Back-up 10 moves a side back: 4 → 0 and 35 → 25. The back peg (where the score came
    from) would stand ahead of the front peg; it stands just behind it instead — in the
    second start hole at 0 — and a forward move still leaves it where the score came from."""
    page = new_page()
    page.goto(live_server.url + "/")
    page.wait_for_selector("main")
    d = draw(page, view(121, [0, 25], [4, 35], 1), ["Anna", "Ben"])
    front = {p["side"]: p for p in d["front"]}
    back = {p["side"]: p for p in d["back"]}
    assert front[0]["hole"] == 0 and back[0]["hole"] == 0  # both at the start
    assert (back[0]["x"], back[0]["y"]) != (front[0]["x"], front[0]["y"])
    assert front[1]["hole"] == 25 and back[1]["hole"] == 24
    assert (back[1]["x"], back[1]["y"]) == hole(d, 1, 24)
    for side in (0, 1):
        assert back[side]["hole"] <= front[side]["hole"]
    d = draw(page, view(121, [31, 30], [25, 22], 2), ["Anna", "Ben"])
    back = {p["side"]: p for p in d["back"]}
    assert back[0]["hole"] == 25 and back[1]["hole"] == 22


def test_the_board_is_legible_on_a_phone(live_server: Any, new_page: Any,
                                         screenshot_dir: Path) -> None:
    """At 390 px the board is drawn in rows of 20 holes: a hole at least 5 px across, a
    front peg at least 9 px, the scores beside it in text of 16 px or more, and nothing
    past the page's edge (the picture is kept: board-phone.png). On a desktop the streets
    keep their 30 holes."""
    page = new_page(phone=True)
    page.goto(live_server.url + "/")
    page.wait_for_selector("main")
    d = draw(page, view(121, [47, 33], [40, 29], 1), ["Anna", "Ben"])
    assert d["per"] == 20
    assert d["holePx"] >= 5, d["holePx"]
    assert d["pegPx"] >= 9 and d["backPx"] >= 7, (d["pegPx"], d["backPx"])
    assert d["scorePx"] >= 16 and d["namePx"] >= 16, (d["scorePx"], d["namePx"])
    assert d["width"] <= d["page"]
    assert all(p["inside"] for p in d["front"] + d["back"] + d["game"])
    numbers = sorted(h["hole"] for h in d["holes"])
    assert numbers == sorted(list(range(0, 121)) * 2)
    page.locator("#board-host .board").screenshot(path=str(screenshot_dir / "board-phone.png"))
    desktop = new_page()
    desktop.goto(live_server.url + "/")
    desktop.wait_for_selector("main")
    assert draw(desktop, view(121, [47, 33], [40, 29], 1), ["Anna", "Ben"])["per"] == 30
