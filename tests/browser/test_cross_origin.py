"""A front end on another origin (issue 10, "Origins"): a page served by a tiny static
server on another loopback port creates a room with ``POST /api/rooms`` (a JSON body, so
Chromium sends a CORS preflight first) and plays over ``/ws`` — when the server's
``allowed_origins`` lets that origin in (the default allows loopback), and not otherwise."""

from __future__ import annotations

import functools
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import LiveServer

from server.settings import Settings

pytestmark = pytest.mark.browser

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Another front end</title>
<link rel="icon" href="data:,"></head>
<body><p id="out">working</p>
<script type="module">
const server = new URLSearchParams(location.search).get("server");
const result = {created: false, opened: false, welcomed: false, seat: null, acked: false};
window.result = result;
function next(ws, type) {
  return new Promise((resolve, reject) => {
    const onMessage = (event) => {
      const frame = JSON.parse(event.data);
      if (frame.type === type || frame.type === "error" || frame.type === "reject") {
        ws.removeEventListener("message", onMessage);
        frame.type === type ? resolve(frame) : reject(new Error(frame.code));
      }
    };
    ws.addEventListener("message", onMessage);
    ws.addEventListener("close", () => reject(new Error("closed")));
  });
}
try {
  const answer = await fetch(`http://${server}/api/rooms`, {
    method: "POST",
    headers: {"content-type": "application/json"},
    body: JSON.stringify({options: {players: 2, target: 61}, computers: {"1": "easy"}}),
  });
  result.status = answer.status;
  const created = await answer.json();
  result.created = answer.status === 201;
  result.room = created.room;
  const ws = new WebSocket(`ws://${server}/ws`, "cribbage.v1.json");
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = () => reject(new Error("websocket refused"));
  });
  result.opened = true;
  ws.send(JSON.stringify({type: "hello", name: "Elsewhere"}));
  await next(ws, "welcome");
  result.welcomed = true;
  ws.send(JSON.stringify({type: "join", room: created.room, seat: 0}));
  let snapshot = await next(ws, "snapshot");
  result.seat = snapshot.seat;
  for (let i = 0; i < 20 && !(snapshot.view && snapshot.view.hand &&
                                snapshot.view.hand.length === 6); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    ws.send(JSON.stringify({type: "resync"}));
    snapshot = await next(ws, "snapshot");
  }
  // "busy" means nothing was applied: a client sends the same action again (docs/protocol.md).
  for (let attempt = 0; attempt < 5 && !result.acked; attempt++) {
    ws.send(JSON.stringify({type: "act", action_id: "x1",
                            action: {type: "discard", cards: snapshot.view.hand.slice(0, 2)}}));
    try {
      const ack = await next(ws, "ack");
      result.acked = ack.action_id === "x1";
    } catch (err) {
      if (String(err && err.message) !== "busy") throw err;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
} catch (err) {
  result.error = String(err && err.message || err);
}
result.done = true;
document.getElementById("out").textContent = JSON.stringify(result);
</script></body></html>
"""


class StaticSite:
    """A static file server on another loopback port: another origin."""

    def __init__(self, directory: Path) -> None:
        handler = functools.partial(_QuietHandler, directory=str(directory))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StaticSite:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@pytest.fixture
def site(tmp_path: Path) -> Iterator[StaticSite]:
    (tmp_path / "index.html").write_text(PAGE, encoding="utf-8")
    with StaticSite(tmp_path) as s:
        yield s


def run_page(browser: Any, site: StaticSite, server: LiveServer) -> tuple[dict, list[str]]:
    context = browser.new_context()
    console: list[str] = []
    try:
        page = context.new_page()
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
        page.on("pageerror", lambda e: console.append(f"page error: {e}"))
        page.goto(f"{site.origin}/index.html?server=127.0.0.1:{server.port}")
        page.wait_for_function("window.result && window.result.done", timeout=20_000)
        return page.evaluate("window.result"), console
    finally:
        context.close()


def test_a_page_of_an_allowed_origin_creates_and_plays(browser, site):
    server = LiveServer(Settings(bot_delay_seconds=0)).start()  # default: loopback allowed
    try:
        result, console = run_page(browser, site, server)
    finally:
        server.stop()
    assert result["status"] == 201 and result["created"], (result, console)
    assert result["opened"] and result["welcomed"] and result["seat"] == 0, (result, console)
    assert result["acked"], (result, console)
    assert not [c for c in console if c.startswith(("error", "page error"))], console


def test_a_page_of_another_origin_is_refused(browser, site):
    server = LiveServer(Settings(bot_delay_seconds=0,
                                 allowed_origins="https://play.example")).start()
    try:
        result, console = run_page(browser, site, server)
        # the refused preflight kept the POST from being sent: no room was made
        assert server.server.config.app.state.services.store.room_count == 0
    finally:
        server.stop()
    assert not result["created"] and "status" not in result, result
    assert "CORS" in " ".join(console), console


def test_a_socket_from_another_origin_is_refused(browser, site):
    """The socket alone (the room made without the browser): refused at the handshake."""
    server = LiveServer(Settings(bot_delay_seconds=0,
                                 allowed_origins="https://play.example")).start()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{site.origin}/index.html?server=nowhere.invalid")
        page.wait_for_function("window.result && window.result.done")
        outcome = page.evaluate(
            """(url) => new Promise((resolve) => {
                const ws = new WebSocket(url, "cribbage.v1.json");
                ws.onopen = () => resolve("open");
                ws.onerror = () => resolve("refused");
            })""",
            f"ws://127.0.0.1:{server.port}/ws",
        )
        assert outcome == "refused"
    finally:
        context.close()
        server.stop()
