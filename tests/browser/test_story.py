"""The whole story of a game (issue 12): the play-by-play and the last show come back after a
reload, a late joiner (and the last to sit, and anyone playing the computer) sees the cut
for deal, the whole game can be shown deal by deal, and a finished game is downloaded as a
replay file that plays back step by step in the page."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from crib_ui import (
    act_once,
    act_when_ready,
    create_table,
    hand,
    log_lines,
    play_until,
    play_until_game_over,
    rejects,
    sit,
    table,
    watch_frames,
)
from replay_files import replay_steps

from protocol.replay import check_replay

pytestmark = pytest.mark.browser


def scores(page: Any) -> list[str]:
    """The scores beside the board, per side."""
    return page.eval_on_selector_all(".board-legend .legend-score",
                                     "els => els.map(e => e.dataset.score)")


def texts(page: Any, selector: str) -> list[str]:
    return page.eval_on_selector_all(selector, "els => els.map(e => e.innerText)")


def whole_game(page: Any) -> list[str]:
    """Every line of the whole-game view (opened if closed), deal by deal."""
    if page.get_attribute("#whole-game", "aria-expanded") != "true":
        page.click("#whole-game")
    page.wait_for_selector(".whole-game")
    return texts(page, ".whole-game .story-lines li")


def test_a_reload_mid_deal_restores_the_story(live_server: Any, new_page: Any) -> None:
    """Against the computer (so the creator is the last to sit): the cut for deal shows at
    once; in the second deal's play the page is reloaded, and the play-by-play, the whole
    game and the last show (headed with the right deal) are as they were."""
    me = new_page()
    frames = watch_frames(me)
    create_table(me, live_server.url, "Pat", seats={1: "standard"})
    me.wait_for_selector("#table[data-phase=discard]")
    cut = me.wait_for_selector(".cut-for-deal")
    assert "Cut for deal" in cut.inner_text() and me.locator(".cut-for-deal .card").count() >= 2
    assert any(line.startswith("Cut for deal:") for line in log_lines(me))
    play_until(me, lambda: table(me)["phase"] == "play" and table(me)["deal"] == "2"
               and me.locator(".pile li").count() >= 2)
    before_log = log_lines(me)
    before_all = whole_game(me)
    show_heading = me.text_content("#show-h")
    show_before = texts(me, ".show-panel .show-entry")
    assert "deal 1" in show_heading and len(show_before) == 3
    assert any("Deal 2" in line for line in before_all)
    held = sorted(hand(me))

    me.reload()
    me.wait_for_selector("#table[data-conn=open][data-story=complete]")
    me.wait_for_function("n => document.querySelectorAll('.log li:not(.log-presence)').length >= n",
                         arg=len(before_log))
    assert log_lines(me)[:len(before_log)] == before_log
    assert whole_game(me)[:len(before_all)] == before_all
    assert me.text_content("#show-h") == show_heading
    assert texts(me, ".show-panel .show-entry") == show_before
    assert sorted(hand(me)) == held
    # The reload asked the server for the story (history), not the browser's storage.
    history = [f for f in frames if f.get("type") == "history"]
    assert history and history[-1]["first"] >= 1
    # The earlier counts of this deal, from the story, as small cards.
    play_until(me, lambda: me.locator(".earlier").count() > 0 or table(me)["deal"] != "2")
    assert not rejects(frames)


def test_the_last_to_sit_and_a_late_joiner_see_the_cut(live_server: Any, new_page: Any) -> None:
    """Anna creates, Ben sits last (his join starts the game): both see the cut for deal.
    Some moves later Cleo opens the link and watches: she too gets the cut and every line
    so far, and the whole game."""
    anna, ben = new_page(), new_page(phone=True)
    link = create_table(anna, live_server.url, "Anna")
    sit(ben, link, "Ben", seat=1)
    for page in (anna, ben):
        page.wait_for_selector("#table[data-phase=discard]")
        page.wait_for_selector(".cut-for-deal .card")
    # A few moves: both lay away, two cards are played.
    act_when_ready(anna)
    act_when_ready(ben)
    anna.wait_for_selector("#table[data-phase=play]")
    plays = 0
    end = time.monotonic() + 20
    while plays < 2:
        plays += act_once(anna) + act_once(ben)
        assert time.monotonic() < end
    cleo = new_page()
    cleo.goto(link)
    cleo.click("#watch")
    cleo.wait_for_selector("#table[data-conn=open][data-story=complete][data-seat='']")
    cleo.wait_for_selector(".cut-for-deal .card")
    version = table(anna)["version"]
    cleo.wait_for_function("v => document.querySelector('#table').dataset.version === v",
                           arg=version)
    cleo_lines = log_lines(cleo)
    assert "Ben sits at seat 2." in cleo_lines and "The game begins." in cleo_lines
    cut = [line for line in cleo_lines if line.startswith("Cut for deal:")]
    assert len(cut) == 1 and "Anna" in cut[0] and "Ben" in cut[0], cleo_lines
    assert "Deal 1: " in "\n".join(cleo_lines) and "The starter is " in "\n".join(cleo_lines)
    # What the public saw: both discards, without their cards; both cards played.
    discards = [line for line in cleo_lines if "to the crib" in line]
    assert len(discards) == 2 and not any(re.search("[♣♦♥♠]", line) for line in discards)
    anna_plays = [line for line in log_lines(anna) if re.search(r" plays? ", line)]
    cleo_plays = [line for line in cleo_lines if " plays " in line]
    assert len(cleo_plays) == len(anna_plays) >= 2, (cleo_lines, anna_plays)
    assert [p.split(" ", 2)[2] for p in cleo_plays] == [p.split(" ", 2)[2] for p in anna_plays]
    # The whole game holds the same story, deal by deal.
    assert set(whole_game(cleo)) == set(cleo_lines)

def test_a_downloaded_replay_plays_back(live_server: Any, new_page: Any, tmp_path: Path) -> None:
    """A game to 61 against the computer; at game over the replay is downloaded: the public
    story (no hidden cards) with the hands shown. Opened on the replay page it plays back
    step by step to the same result (a file that is not a replay then replaces it with an
    error alone); the table also plays it in the page."""
    me = new_page(accept_downloads=True)
    create_table(me, live_server.url, "Pat", target="61", seats={1: "standard"})
    me.wait_for_selector("#table[data-phase=discard]")
    play_until_game_over([me], timeout=90)
    final = scores(me)
    result_line = me.inner_text(".board-lines .line-over")
    with me.expect_download() as download:
        me.click("#download-replay")
    path = tmp_path / "replay.json"
    download.value.save_as(path)
    assert download.value.suggested_filename.endswith(".json")
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == "cribbage-replay" and data["format_version"] == 1
    versions = [v["version"] for v in data["versions"]]
    assert versions == list(range(data["first"], data["first"] + len(versions)))
    events = [e for v in data["versions"] for e in v["events"]]
    assert events[0]["type"] in ("seat_taken", "game_start") and events[-1]["type"] == "game_over"
    assert [s["name"] for s in data["seats"]][0] == "Pat"
    for e in events:  # as the public saw it: nobody's hidden cards
        if e["type"] == "deal":
            assert e["hands"] == {}
        if e["type"] == "discard":
            assert e["cards"] is None
    shown = [e for e in events if e["type"] == "show_hand"]
    assert len(shown) >= 3 and all(len(e["cards"]) == 4 for e in shown)
    assert data["result"]["scores"] == [int(x) for x in final]
    check_replay(data)  # the file the table writes keeps every rule of protocol.replay
    steps = len(replay_steps(data))  # the end of each deal is laid out in more steps
    assert steps > len(versions)

    viewer = new_page()
    viewer.goto(live_server.url + "/replay")
    viewer.set_input_files("#replay-file", str(path))
    viewer.wait_for_selector(f".replay[data-steps='{steps}'][data-step='0']")
    assert scores(viewer) == ["0", "0"]
    for step in range(1, 6):  # step by step: one move each
        viewer.click("#replay-next")
        viewer.wait_for_selector(f".replay[data-step='{step}']")
    assert viewer.locator(".replay-log li").count() >= 5
    viewer.click("#replay-prev")
    viewer.wait_for_selector(".replay[data-step='4']")
    viewer.click("#replay-last")
    viewer.wait_for_selector(f".replay[data-step='{steps}']")
    assert scores(viewer) == final
    replay_line = viewer.inner_text(".replay .line-over")
    assert replay_line.split(",")[-1] == result_line.split(",")[-1]  # the same final score
    assert replay_line.startswith(("Pat wins", "Computer wins"))
    viewer.click("#replay-first")
    viewer.wait_for_selector(".replay[data-step='0']")
    # A file that is not a replay: the error alone, the old replay gone.
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}', encoding="utf-8")
    viewer.set_input_files("#replay-file", str(bad))
    viewer.wait_for_selector("#replay .error[role=alert]")
    assert viewer.inner_text("#replay .error") == "That file is not a cribbage replay."
    assert viewer.locator("#replay .replay").count() == 0
    viewer.set_input_files("#replay-file", str(path))
    viewer.wait_for_selector(f".replay[data-steps='{steps}'][data-step='0']")
    assert viewer.locator("#replay .error").count() == 0

    # In the page, from the table.
    me.click("#watch-replay")
    me.wait_for_selector(f"#replay .replay[data-steps='{steps}']")
    me.click("#replay-last")
    assert scores(me) == final
    me.click("#back-to-table")
    me.wait_for_selector("#table[data-phase=game_over]")
